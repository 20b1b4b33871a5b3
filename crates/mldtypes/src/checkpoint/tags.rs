//! `DType` ↔ `safetensors::Dtype`.

use crate::dtype::DType;
use safetensors::Dtype;

/// A dtype without a counterpart in the other vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCounterpart(pub String);

impl std::fmt::Display for NoCounterpart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} has no safetensors dtype tag counterpart", self.0)
    }
}

impl std::error::Error for NoCounterpart {}

/// The pairs, one line each. safetensors' `F8_E4M3` is `float8_e4m3fn`
/// (OCP FP8 E4M3: no infinities, max 448), `F8_E8M0` is `float8_e8m0fnu`,
/// `F4` / `F6_*` are the bit-packed MX element formats, `C64` is `complex64`.
const PAIRS: [(DType, Dtype); 22] = [
    (DType::Bool, Dtype::BOOL),
    (DType::Int8, Dtype::I8),
    (DType::Int16, Dtype::I16),
    (DType::Int32, Dtype::I32),
    (DType::Int64, Dtype::I64),
    (DType::UInt8, Dtype::U8),
    (DType::UInt16, Dtype::U16),
    (DType::UInt32, Dtype::U32),
    (DType::UInt64, Dtype::U64),
    (DType::Float4E2M1FN, Dtype::F4),
    (DType::Float6E2M3FN, Dtype::F6_E2M3),
    (DType::Float6E3M2FN, Dtype::F6_E3M2),
    (DType::Float8E4M3FN, Dtype::F8_E4M3),
    (DType::Float8E5M2, Dtype::F8_E5M2),
    (DType::Float8E4M3FNUZ, Dtype::F8_E4M3FNUZ),
    (DType::Float8E5M2FNUZ, Dtype::F8_E5M2FNUZ),
    (DType::Float8E8M0FNU, Dtype::F8_E8M0),
    (DType::BFloat16, Dtype::BF16),
    (DType::Float16, Dtype::F16),
    (DType::Float32, Dtype::F32),
    (DType::Float64, Dtype::F64),
    (DType::Complex64, Dtype::C64),
];

/// The safetensors tag storing a dtype.
///
/// # Errors
///
/// [`NoCounterpart`] for dtypes safetensors cannot store (`float8_e3m4`,
/// `float8_e4m3`, `float8_e4m3b11fnuz`, the sub-byte integers, `complex128`,
/// `complex32`, `bcomplex32`).
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use safetensors::Dtype;
/// assert_eq!(Dtype::try_from(DType::Float8E4M3FN), Ok(Dtype::F8_E4M3));
/// assert!(Dtype::try_from(DType::Float8E4M3).is_err()); // IEEE-style E4M3: no tag
/// ```
impl TryFrom<DType> for Dtype {
    type Error = NoCounterpart;
    fn try_from(d: DType) -> Result<Dtype, NoCounterpart> {
        PAIRS
            .iter()
            .find(|p| p.0 == d)
            .map(|p| p.1)
            .ok_or_else(|| NoCounterpart(d.name().to_string()))
    }
}

/// The dtype a safetensors tag stores.
///
/// # Errors
///
/// [`NoCounterpart`] for tags added to safetensors after 0.8.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use safetensors::Dtype;
/// assert_eq!(DType::try_from(Dtype::F8_E8M0), Ok(DType::Float8E8M0FNU));
/// assert_eq!(DType::try_from(Dtype::F4), Ok(DType::Float4E2M1FN));
/// ```
impl TryFrom<Dtype> for DType {
    type Error = NoCounterpart;
    fn try_from(t: Dtype) -> Result<DType, NoCounterpart> {
        PAIRS
            .iter()
            .find(|p| p.1 == t)
            .map(|p| p.0)
            .ok_or_else(|| NoCounterpart(t.to_string()))
    }
}

/// Bytes `n` elements of `tag` occupy (bit-packed for `F4` / `F6_*`), or
/// `None` when they do not fill whole bytes or overflow.
pub fn storage_bytes(tag: Dtype, n: usize) -> Option<usize> {
    let bits = n.checked_mul(tag.bitsize())?;
    bits.is_multiple_of(8).then_some(bits / 8)
}
