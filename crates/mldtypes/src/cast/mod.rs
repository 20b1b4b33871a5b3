//! Bulk slice conversion kernels with runtime CPU dispatch.
//!
//! - [`convert_slice`] / [`convert_slice_with`]: typed conversion between any
//!   two [`Element`] types (f32, f64, `half::f16`, every ml_dtypes float
//!   format, the sub-byte integers, the standard integers).
//! - [`cast_bytes`]: the same over raw little-endian bytes described by
//!   [`DType`]s, one element per `itemsize` (unpacked).
//! - [`pack`]: packed sub-byte storage (two float4/int4 per byte, four int2
//!   per byte, four float6 in three bytes) in the safetensors bit order.
//! - [`reduce`]: `sum`, `dot`, `mean` accumulating in float32 (pairwise) and
//!   rounding once at the end; `argmax` / `argmin` of codes.
//! - [`matmul`]: matrix products accumulated in float32 through a GEMM
//!   kernel, rounded once.
//! - [`Codec`]: a run-time codec for any format descriptor (the IEEE P3109
//!   members among them): scalar and slice conversions to and from float32,
//!   float64 and other formats' codes.
//!
//! Every result is bit-identical to the scalar conversions of
//! [`crate::float`] (round-to-nearest-even, ml_dtypes' non-saturating
//! overflow by default, [`Overflow::Saturating`] on request), whichever
//! [`Path`] runs: the fastest one this CPU supports is detected once at run
//! time; [`set_path`] or the `*_on` functions force one.
//!
//! NaN: float32/float64 → float16 keeps the payload as NumPy does (sign and
//! top 10 payload bits, no quiet bit forced, a payload truncating to zero
//! becomes 1: `0x7f800001` → `0x7c01`); between formats NaN payloads are
//! dropped (bfloat16 `0x7f81` → float16 `0x7e00`, as ml_dtypes). Every
//! ml_dtypes format gets its canonical NaN.
//!
//! float8_e8m0fnu from float32 and bfloat16 subnormals follows ml_dtypes
//! 0.6.0 and PyTorch 2.15: every value in (2^-127, 2^-126) becomes `0x01`
//! (2^-126), although (2^-127, 1.5·2^-127) lies nearer `0x00`; from float64
//! those values round to nearest (see [`crate::float::core::encode_f32`]).
//!
//! Pairs: every pair among float32, float64, float16, bfloat16 and the
//! float8 / float6 / float4 formats; any integer dtype (bool, int1…int64,
//! uint1…uint64) to any other (wrapping, as NumPy's `astype`); and the
//! sub-byte integers and bool to and from every float (NumPy's cast:
//! truncation toward zero, NaN / ±inf / values outside int32 give 0, then
//! wrapping). Complex dtypes are not supported.
//!
//! Threads: [`convert_slice`], [`convert_slice_with`] and
//! [`convert_slice_on`] always run on the calling thread.
//! [`convert_slice_par`] and [`convert_slice_par_with`] (feature `rayon`, on
//! by default) split inputs of at least 262,144 elements across rayon's
//! thread pool (shorter inputs run on the calling thread, where handing
//! them out costs more than it saves). [`cast_bytes`] splits large inputs
//! with rayon when the feature is on; [`cast_bytes_on`] runs on the calling
//! thread only. The results are the same bits either way.
//!
//! # Examples
//!
//! ```
//! use mldtypes::{cast, float8_e4m3fn};
//! let x = [1.0f32, 464.0, 465.0];
//! let mut y = [float8_e4m3fn::from_bits(0); 3];
//! cast::convert_slice(&x, &mut y).unwrap();
//! assert_eq!(y.map(|v| v.to_bits()), [0x38, 0x7e, 0x7f]); // 464 ties to 448; 465 is NaN
//!
//! let x = [1.0f32, 0.3, 464.0, -1e-3];
//! let mut y = [half::f16::ZERO; 4];
//! cast::convert_slice(&x, &mut y).unwrap();
//! assert_eq!(y[0], half::f16::ONE);
//! ```

mod codec;
mod dispatch;
mod engine;
#[cfg(target_arch = "x86_64")]
mod hw;
pub(crate) mod kernels;
mod round;
mod scalar;

pub mod matmul;
pub mod pack;
pub mod reduce;
pub mod slice;

pub use codec::{CodeWord, Codec, Strategy};
pub use dispatch::{
    available_paths, cpu_is_intel, fpu_forms, gather_tables, path, set_fpu_forms,
    set_gather_tables, set_path, Path,
};

use crate::dtype::DType;
pub use crate::format::Overflow;
use crate::round::{Rounding, RoundingError};

/// Why a conversion was refused. Nothing is written to the destination when
/// an error is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastError {
    /// Source and destination hold different numbers of elements.
    LengthMismatch {
        /// Elements in the source.
        src: usize,
        /// Elements the destination holds.
        dst: usize,
    },
    /// The conversion between these dtypes is not supported (complex dtypes,
    /// or a standard integer wider than a sub-byte one to or from a float).
    UnsupportedPair {
        /// Source dtype.
        from: DType,
        /// Destination dtype.
        to: DType,
    },
    /// A byte buffer's length is not a whole number of elements of its dtype
    /// (or, packed, of whole packing groups).
    PartialElement {
        /// The dtype of the buffer.
        dtype: DType,
        /// Its length in bytes.
        len: usize,
    },
    /// A dtype cannot be stored packed (only float4_e2m1fn, float6_e2m3fn,
    /// float6_e3m2fn, int4, uint4, int2, uint2 can).
    NotPackable(DType),
    /// A forced [`Path`] needs instructions this CPU lacks.
    PathUnavailable(Path),
    /// A [`Codec`] slice's code word is narrower than the format (a `u8`
    /// for a format of more than 8 bits).
    CodeWord {
        /// The format's name.
        format: &'static str,
        /// The format's width in bits.
        bits: u32,
        /// The width of the word given.
        word_bits: u32,
    },
    /// The [`Rounding`] of a rounding conversion was refused.
    Rounding(RoundingError),
}

impl std::fmt::Display for CastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CastError::LengthMismatch { src, dst } => write!(
                f,
                "length mismatch: the source has {src} elements but the destination holds {dst}"
            ),
            CastError::UnsupportedPair { from, to } => {
                write!(f, "conversion from {from} to {to} is not supported")
            }
            CastError::PartialElement { dtype, len } => write!(
                f,
                "a buffer of {len} bytes is not a whole number of {dtype} elements"
            ),
            CastError::NotPackable(d) => write!(f, "{d} has no packed storage"),
            CastError::PathUnavailable(p) => {
                write!(f, "the {p} kernels need CPU features this machine lacks")
            }
            CastError::CodeWord {
                format,
                bits,
                word_bits,
            } => write!(
                f,
                "{format} codes have {bits} bits and do not fit {word_bits}-bit words; use u16"
            ),
            CastError::Rounding(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CastError {}

mod sealed {
    pub trait Sealed {}
}

/// An element type the conversion kernels accept: a plain-old-data scalar
/// whose bytes (little-endian) are one element of [`Element::DTYPE`].
///
/// Implemented for `f32`, `f64`, `half::f16`, `half::bf16`, the standard
/// integers, every float type of [`crate::float`] (`bfloat16`, `float16`, the float8,
/// float6 and float4 formats) and the sub-byte integers of [`crate::int`].
/// Sealed; every implementor is `Sync` (slices of it are read from several
/// threads).
pub trait Element: bytemuck::Pod + Sync + sealed::Sealed {
    /// The dtype of this type.
    const DTYPE: DType;
}

macro_rules! elements {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(
            impl sealed::Sealed for $t {}
            impl Element for $t {
                const DTYPE: DType = DType::$d;
            }
        )*
    };
}

elements! {
    f32 => Float32, f64 => Float64, half::f16 => Float16, half::bf16 => BFloat16,
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64,
    crate::bfloat16 => BFloat16,
    crate::float16 => Float16,
    crate::float8_e3m4 => Float8E3M4,
    crate::float8_e4m3 => Float8E4M3,
    crate::float8_e4m3fn => Float8E4M3FN,
    crate::float8_e4m3fnuz => Float8E4M3FNUZ,
    crate::float8_e4m3b11fnuz => Float8E4M3B11FNUZ,
    crate::float8_e5m2 => Float8E5M2,
    crate::float8_e5m2fnuz => Float8E5M2FNUZ,
    crate::float8_e8m0fnu => Float8E8M0FNU,
    crate::float6_e2m3fn => Float6E2M3FN,
    crate::float6_e3m2fn => Float6E3M2FN,
    crate::float4_e2m1fn => Float4E2M1FN,
    crate::int1 => Int1, crate::int2 => Int2, crate::int4 => Int4,
    crate::uint1 => UInt1, crate::uint2 => UInt2, crate::uint4 => UInt4,
}

/// Converts `src` into `dst` element by element with ml_dtypes' rounding
/// (round-to-nearest-even, non-saturating overflow), on the calling thread
/// (see [`convert_slice_par`] for a multi-threaded conversion).
///
/// # Errors
///
/// [`CastError::LengthMismatch`] if the lengths differ,
/// [`CastError::UnsupportedPair`] for pairs outside the list in the
/// [module documentation](self).
///
/// # Examples
///
/// ```
/// let x = [0.1f64, 1e10];
/// let mut y = [0f32; 2];
/// mldtypes::cast::convert_slice(&x, &mut y).unwrap();
/// assert_eq!(y, [0.1f32, 1e10]);
/// ```
pub fn convert_slice<A: Element, B: Element>(src: &[A], dst: &mut [B]) -> Result<(), CastError> {
    convert_slice_with(src, dst, Overflow::NonSaturating)
}

/// [`convert_slice`] with an explicit overflow mode, on the calling thread.
///
/// # Errors
///
/// As [`convert_slice`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{convert_slice_with, Overflow};
/// let x = [1e6f32];
/// let mut y = [half::f16::ZERO];
/// convert_slice_with(&x, &mut y, Overflow::Saturating).unwrap();
/// assert_eq!(y[0], half::f16::MAX);
/// ```
pub fn convert_slice_with<A: Element, B: Element>(
    src: &[A],
    dst: &mut [B],
    ov: Overflow,
) -> Result<(), CastError> {
    convert_slice_on(path(), src, dst, ov)
}

/// [`convert_slice`] split across rayon's thread pool: inputs of at least
/// 262,144 elements are converted in chunks of 65,536 elements in parallel,
/// shorter ones on the calling thread. Bit-identical to [`convert_slice`].
///
/// # Errors
///
/// As [`convert_slice`].
///
/// # Examples
///
/// ```
/// use mldtypes::bfloat16;
/// let x: Vec<f32> = (0..1_000_000).map(|i| i as f32 * 0.001).collect();
/// let mut y = vec![bfloat16::from_bits(0); x.len()];
/// mldtypes::cast::convert_slice_par(&x, &mut y).unwrap();
/// assert_eq!(y[1000].to_f32(), 1.0);
/// ```
#[cfg(feature = "rayon")]
pub fn convert_slice_par<A: Element, B: Element>(
    src: &[A],
    dst: &mut [B],
) -> Result<(), CastError> {
    convert_slice_par_with(src, dst, Overflow::NonSaturating)
}

/// [`convert_slice_par`] with an explicit overflow mode.
///
/// # Errors
///
/// As [`convert_slice`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{convert_slice_par_with, Overflow};
/// use mldtypes::float8_e4m3fn;
/// let x = vec![1e6f32; 300_000];
/// let mut y = vec![float8_e4m3fn::from_bits(0); x.len()];
/// convert_slice_par_with(&x, &mut y, Overflow::Saturating).unwrap();
/// assert!(y.iter().all(|v| v.to_f32() == 448.0));
/// ```
#[cfg(feature = "rayon")]
pub fn convert_slice_par_with<A: Element, B: Element>(
    src: &[A],
    dst: &mut [B],
    ov: Overflow,
) -> Result<(), CastError> {
    check_lengths(src.len(), dst.len())?;
    engine::convert_bytes(
        bytemuck::cast_slice(src),
        A::DTYPE,
        bytemuck::cast_slice_mut(dst),
        B::DTYPE,
        ov,
        path(),
        true,
    )
}

fn check_lengths(src: usize, dst: usize) -> Result<(), CastError> {
    if src != dst {
        return Err(CastError::LengthMismatch { src, dst });
    }
    Ok(())
}

/// [`convert_slice_with`] on a given [`Path`] (for tests and benchmarks),
/// on the calling thread.
///
/// # Errors
///
/// As [`convert_slice`], and [`CastError::PathUnavailable`] if the CPU
/// cannot run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{convert_slice_on, Overflow, Path};
/// let x = [1.5f32];
/// let mut y = [0f64];
/// convert_slice_on(Path::Scalar, &x, &mut y, Overflow::NonSaturating).unwrap();
/// assert_eq!(y[0], 1.5);
/// ```
pub fn convert_slice_on<A: Element, B: Element>(
    path: Path,
    src: &[A],
    dst: &mut [B],
    ov: Overflow,
) -> Result<(), CastError> {
    check_lengths(src.len(), dst.len())?;
    engine::convert_bytes(
        bytemuck::cast_slice(src),
        A::DTYPE,
        bytemuck::cast_slice_mut(dst),
        B::DTYPE,
        ov,
        path,
        false,
    )
}

/// Converts unpacked elements stored as little-endian bytes: `src` holds
/// `src.len() / from.itemsize()` elements of `from`, `dst` receives as many
/// elements of `to`. Sub-byte dtypes take one byte per element, value in the
/// low bits (ml_dtypes' layout); use [`pack`] for packed storage. The
/// buffers need no particular alignment.
///
/// # Errors
///
/// [`CastError::PartialElement`] if a length is not a multiple of the
/// itemsize, [`CastError::LengthMismatch`] if the element counts differ,
/// [`CastError::UnsupportedPair`] for unsupported pairs.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{cast_bytes, Overflow};
/// use mldtypes::dtype::DType;
/// let src: Vec<u8> = [448.0f32, 464.0, 465.0].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut dst = [0u8; 3];
/// cast_bytes(&src, DType::Float32, &mut dst, DType::Float8E4M3FN, Overflow::NonSaturating).unwrap();
/// assert_eq!(dst, [0x7e, 0x7e, 0x7f]); // 464 ties to 448; beyond it is NaN
/// ```
pub fn cast_bytes(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
) -> Result<(), CastError> {
    engine::convert_bytes(src, from, dst, to, ov, path(), true)
}

/// [`cast_bytes`] on a given [`Path`], on the calling thread only.
///
/// # Errors
///
/// As [`cast_bytes`], and [`CastError::PathUnavailable`] if the CPU cannot
/// run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{cast_bytes_on, Overflow, Path};
/// use mldtypes::dtype::DType;
/// let mut dst = [0u8; 4];
/// cast_bytes_on(Path::Portable, &[0x3c], DType::Float8E4M3FN, &mut dst, DType::Float32,
///               Overflow::NonSaturating).unwrap();
/// assert_eq!(f32::from_le_bytes(dst), 1.5);
/// ```
pub fn cast_bytes_on(
    path: Path,
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
) -> Result<(), CastError> {
    engine::convert_bytes(src, from, dst, to, ov, path, false)
}

/// Whether `cast_bytes(_, from, _, to, _)` is supported.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// assert!(mldtypes::cast::is_supported(DType::Float32, DType::Float4E2M1FN));
/// assert!(!mldtypes::cast::is_supported(DType::Complex64, DType::Float32));
/// ```
pub fn is_supported(from: DType, to: DType) -> bool {
    engine::check_pair(from, to).is_ok()
}

/// Rounds `src` into `dst` under `r` (any mode of [`crate::round`],
/// saturation, explicit or seeded random numbers), on the calling thread.
///
/// Sources: `f32` and `f64` (the stochastic "fast" modes compare in the
/// float64 precision, as gfloat does), and every other float type through
/// its exact value, as a float64 would round. Targets: every float type of
/// the crate, `half::f16` / `half::bf16`, and `f32` (from `f64`; from `f32`
/// only saturation changes anything). `f64` and integer types are no
/// targets. [`Codec::round_f32_slice`] rounds into any format descriptor
/// (the IEEE P3109 family).
///
/// `RoundMode::NearestEven` without saturation or random numbers gives the
/// bits of [`convert_slice`] (for float8_e8m0fnu see [`crate::round`]).
///
/// # Errors
///
/// [`CastError::LengthMismatch`] if the lengths differ,
/// [`CastError::UnsupportedPair`] for other types,
/// [`CastError::Rounding`] for a rounding [`Rounding::validate`] refuses
/// (stochastic without random numbers, numbers not one per element or not
/// below `2^sr_bits`, …). Nothing is written then.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::round_slice;
/// use mldtypes::round::{RandomBits, RoundMode, Rounding};
/// use mldtypes::bfloat16;
/// let x = [1.0f32 + 2f32.powi(-9); 4]; // a quarter of a bfloat16 ulp above 1
/// let mut y = [bfloat16::ZERO; 4];
/// round_slice(&x, &mut y, &Rounding::new(RoundMode::TowardPositive)).unwrap();
/// assert_eq!(y[0].to_bits(), 0x3f81);
/// // Stochastic: up when the 8-bit number is at least 3/4 of 256.
/// let bits = [0u8, 191, 192, 255];
/// let r = Rounding::new(RoundMode::Stochastic).with_bits(RandomBits::U8(&bits), 8);
/// round_slice(&x, &mut y, &r).unwrap();
/// assert_eq!(y.map(|v| v.to_bits()), [0x3f80, 0x3f80, 0x3f81, 0x3f81]);
/// ```
pub fn round_slice<A: Element, B: Element>(
    src: &[A],
    dst: &mut [B],
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    round_slice_on(path(), src, dst, r)
}

/// [`round_slice`] on a given [`Path`], on the calling thread.
///
/// # Errors
///
/// As [`round_slice`], and [`CastError::PathUnavailable`] if the CPU cannot
/// run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{round_slice_on, Path};
/// use mldtypes::round::{RoundMode, Rounding};
/// let mut y = [0f32];
/// round_slice_on(Path::Scalar, &[1e300f64], &mut y, &Rounding::new(RoundMode::TowardZero)).unwrap();
/// assert_eq!(y[0], f32::MAX);
/// ```
pub fn round_slice_on<A: Element, B: Element>(
    path: Path,
    src: &[A],
    dst: &mut [B],
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    check_lengths(src.len(), dst.len())?;
    round::round_bytes(
        bytemuck::cast_slice(src),
        A::DTYPE,
        bytemuck::cast_slice_mut(dst),
        B::DTYPE,
        r,
        path,
        false,
        false,
    )
}

/// [`round_slice`] split across rayon's thread pool (inputs of at least
/// 262,144 elements, in chunks of 65,536): bit-identical to [`round_slice`],
/// seeded random numbers included (each element's number depends on its
/// index only).
///
/// # Errors
///
/// As [`round_slice`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{round_slice, round_slice_par};
/// use mldtypes::round::{RoundMode, Rounding};
/// use mldtypes::float8_e5m2;
/// let x: Vec<f32> = (0..300_000).map(|i| (i as f32).sin()).collect();
/// let r = Rounding::new(RoundMode::Stochastic).with_seed(3, 16);
/// let mut a = vec![float8_e5m2::ZERO; x.len()];
/// let mut b = a.clone();
/// round_slice(&x, &mut a, &r).unwrap();
/// round_slice_par(&x, &mut b, &r).unwrap();
/// assert_eq!(a, b);
/// ```
#[cfg(feature = "rayon")]
pub fn round_slice_par<A: Element, B: Element>(
    src: &[A],
    dst: &mut [B],
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    check_lengths(src.len(), dst.len())?;
    round::round_bytes(
        bytemuck::cast_slice(src),
        A::DTYPE,
        bytemuck::cast_slice_mut(dst),
        B::DTYPE,
        r,
        path(),
        true,
        false,
    )
}

/// [`round_slice`] over unpacked little-endian bytes described by
/// [`DType`]s (as [`cast_bytes`]): `from` any float dtype (the IEEE P3109
/// members included), `to` float32 or any float format. Large inputs are
/// split across rayon's pool when the feature is on (same bits).
///
/// # Errors
///
/// [`CastError::PartialElement`] if a length is not a multiple of the
/// itemsize, [`CastError::LengthMismatch`], [`CastError::UnsupportedPair`]
/// (float64, integer and complex targets; integer and complex sources),
/// [`CastError::Rounding`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::round_bytes;
/// use mldtypes::dtype::DType;
/// use mldtypes::round::{RoundMode, Rounding};
/// let src: Vec<u8> = [500.0f32, -500.0].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut dst = [0u8; 2];
/// let r = Rounding::new(RoundMode::TowardNegative);
/// round_bytes(&src, DType::Float32, &mut dst, DType::Float8E4M3FN, &r).unwrap();
/// assert_eq!(dst, [0x7e, 0xff]); // 448, and NaN (−500 rounds down, past −448)
/// ```
pub fn round_bytes(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    round::round_bytes(src, from, dst, to, r, path(), true, false)
}

/// [`round_bytes`] into a destination the caller drops when an error is
/// returned (a buffer made for the result): explicit random numbers are
/// checked as the conversion reads them instead of in a pass of their own
/// before anything is written, which saves reading them twice (the numbers
/// are as large as the input: a fifth of a float32 → float8 conversion's
/// memory traffic). Same bits and same errors as [`round_bytes`], the first
/// offending index included; only on
/// [`RoundingError::BitsTooLarge`] may `dst` hold part of a result.
///
/// # Errors
///
/// As [`round_bytes`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::round_bytes_fresh;
/// use mldtypes::dtype::DType;
/// use mldtypes::round::{RandomBits, RoundMode, Rounding, RoundingError};
/// use mldtypes::cast::CastError;
/// let src: Vec<u8> = [1.0f32, 1.0625].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut dst = [0u8; 2];
/// let bits = [0u8, 7];
/// let r = Rounding::new(RoundMode::Stochastic).with_bits(RandomBits::U8(&bits), 3);
/// round_bytes_fresh(&src, DType::Float32, &mut dst, DType::Float8E4M3FN, &r).unwrap();
/// assert_eq!(dst, [0x38, 0x39]); // 1, and 1.0625 rounded up to 1.125 (7 ≥ 8 − 4)
/// let bad = [0u8, 8];
/// let r = Rounding::new(RoundMode::Stochastic).with_bits(RandomBits::U8(&bad), 3);
/// assert_eq!(
///     round_bytes_fresh(&src, DType::Float32, &mut dst, DType::Float8E4M3FN, &r),
///     Err(CastError::Rounding(RoundingError::BitsTooLarge { index: 1, value: 8, sr_bits: 3 }))
/// );
/// ```
pub fn round_bytes_fresh(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    round::round_bytes(src, from, dst, to, r, path(), true, true)
}

/// [`round_bytes`] on a given [`Path`], on the calling thread only.
///
/// # Errors
///
/// As [`round_bytes`], and [`CastError::PathUnavailable`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{round_bytes_on, Path};
/// use mldtypes::dtype::DType;
/// use mldtypes::round::{RoundMode, Rounding};
/// let src = 1.4f64.to_le_bytes();
/// let mut dst = [0u8; 1];
/// let r = Rounding::new(RoundMode::NearestEven).saturating(true);
/// round_bytes_on(Path::Portable, &src, DType::Float64, &mut dst, DType::Float4E2M1FN, &r).unwrap();
/// assert_eq!(dst, [0x3]); // 1.5
/// ```
pub fn round_bytes_on(
    path: Path,
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    r: &Rounding<'_>,
) -> Result<(), CastError> {
    round::round_bytes(src, from, dst, to, r, path, false, false)
}
