//! JAX's type promotion (jax 0.10.2 `jax.numpy` semantics): the standard and
//! strict lattices as edge-list literals, weak types, `promote_types`,
//! `result_type`, `canonicalize_dtype`, and JAX's error texts.
//!
//! The lattice nodes ([`JaxType`]) are the 32 dtypes JAX promotes (every
//! [`DType`] except `complex32` and `bcomplex32`) plus the three weak types
//! `i*`, `f*`, `c*` (Python `int`, `float`, `complex` and weakly typed values).
//!
//! The IEEE P3109 members are promoted as JAX promotes its float8 types:
//! each is a sink directly above `f*` (a weakly typed value of any kind
//! below `f*` joins into it, and in the standard lattice so do `bool` and
//! every integer), and no two different float types join; the error text
//! names their width as JAX's does for float8 (`8-bit floats do not
//! support implicit promotion …`, and `K-bit floats` for the other widths).
//!
//! # Examples
//!
//! ```
//! use mldtypes::dtype::DType;
//! use mldtypes::promote::jax::{Operand, PromotionConfig, PromotionMode, PyScalar};
//!
//! let cfg = PromotionConfig { mode: PromotionMode::Standard, x64: false };
//! // jnp.int8(1) + 1 -> int8 (the Python int is weakly typed)
//! let ops = [Operand::Strong(DType::Int8), Operand::Scalar(PyScalar::Int)];
//! assert_eq!(cfg.result_type(&ops), Ok((DType::Int8, false)));
//! // bfloat16 + float16 -> float32
//! let ops = [Operand::Strong(DType::BFloat16), Operand::Strong(DType::Float16)];
//! assert_eq!(cfg.result_type(&ops), Ok((DType::Float32, false)));
//! ```

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use super::lattice::{Explanation, Lattice};
use crate::dtype::{DType, Kind};

/// A node of JAX's promotion lattice: a strongly typed dtype or one of the
/// three weak types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JaxType {
    /// A strongly typed dtype (`complex32` / `bcomplex32` are not lattice nodes).
    Strong(DType),
    /// `i*`: Python `int` or a weakly typed integer.
    WeakInt,
    /// `f*`: Python `float` or a weakly typed float.
    WeakFloat,
    /// `c*`: Python `complex` or a weakly typed complex.
    WeakComplex,
}

impl JaxType {
    /// Whether this is one of the weak types `i*`, `f*`, `c*`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::jax::JaxType;
    /// assert!(JaxType::WeakFloat.is_weak());
    /// ```
    pub const fn is_weak(self) -> bool {
        !matches!(self, JaxType::Strong(_))
    }

    /// The dtype `np.dtype(node)` gives: the dtype itself, or for a weak type the
    /// 64-bit default of its Python class (`int` → int64, `float` → float64,
    /// `complex` → complex128), as `jax.numpy.promote_types` returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::JaxType;
    /// assert_eq!(JaxType::WeakInt.numpy_dtype(), DType::Int64);
    /// ```
    pub const fn numpy_dtype(self) -> DType {
        match self {
            JaxType::Strong(d) => d,
            JaxType::WeakInt => DType::Int64,
            JaxType::WeakFloat => DType::Float64,
            JaxType::WeakComplex => DType::Complex128,
        }
    }

    /// The node's short code in a seed naming: `i*`, `f*`, `c*`, or the
    /// dtype's [`DType::code`] (for printing tables as the seeds do).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, Naming};
    /// use mldtypes::promote::jax::JaxType;
    /// assert_eq!(JaxType::Strong(DType::Complex64).code(Naming::Bits), "c64");
    /// assert_eq!(JaxType::WeakComplex.code(Naming::Bytes), "c*");
    /// ```
    pub fn code(self, naming: crate::dtype::Naming) -> &'static str {
        match self {
            JaxType::Strong(d) => d.code(naming),
            JaxType::WeakInt => "i*",
            JaxType::WeakFloat => "f*",
            JaxType::WeakComplex => "c*",
        }
    }

    /// The node's text inside JAX's error messages (`str(node)` in Python):
    /// a dtype's name, or `<class 'int'>` / `<class 'float'>` / `<class 'complex'>`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::jax::JaxType;
    /// assert_eq!(JaxType::WeakInt.python_str(), "<class 'int'>");
    /// ```
    pub const fn python_str(self) -> &'static str {
        match self {
            JaxType::Strong(d) => d.name(),
            JaxType::WeakInt => "<class 'int'>",
            JaxType::WeakFloat => "<class 'float'>",
            JaxType::WeakComplex => "<class 'complex'>",
        }
    }

    /// The weak type a weakly typed value of dtype `d` takes in the lattice
    /// (JAX's `_jax_type(d, weak_type=True)`): `bool` stays strong `bool`;
    /// integers (sub-byte ones too) → `i*`; floats (every ml_dtypes float) →
    /// `f*`; complex → `c*`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::JaxType;
    /// assert_eq!(JaxType::weak_of(DType::UInt4), JaxType::WeakInt);
    /// assert_eq!(JaxType::weak_of(DType::Bool), JaxType::Strong(DType::Bool));
    /// ```
    pub const fn weak_of(d: DType) -> JaxType {
        match d.kind() {
            Kind::Bool => JaxType::Strong(d),
            Kind::Signed | Kind::Unsigned => JaxType::WeakInt,
            Kind::Float => JaxType::WeakFloat,
            Kind::Complex => JaxType::WeakComplex,
        }
    }
}

impl From<DType> for JaxType {
    fn from(d: DType) -> Self {
        JaxType::Strong(d)
    }
}

impl fmt::Display for JaxType {
    /// The seed tables' spelling: dtype names and `i*`, `f*`, `c*`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JaxType::Strong(d) => d.name(),
            JaxType::WeakInt => "i*",
            JaxType::WeakFloat => "f*",
            JaxType::WeakComplex => "c*",
        })
    }
}

impl std::str::FromStr for JaxType {
    type Err = crate::dtype::ParseDTypeError;

    /// Parses `i*`, `f*`, `c*` (also `int`, `float`… are *dtypes*, not weak
    /// types), otherwise any dtype spelling [`DType`] accepts.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "i*" => Ok(JaxType::WeakInt),
            "f*" => Ok(JaxType::WeakFloat),
            "c*" => Ok(JaxType::WeakComplex),
            other => other.parse::<DType>().map(JaxType::Strong),
        }
    }
}

// Short names for the edge-list literals below.
const BOOL: JaxType = JaxType::Strong(DType::Bool);
const UINT1: JaxType = JaxType::Strong(DType::UInt1);
const UINT2: JaxType = JaxType::Strong(DType::UInt2);
const UINT4: JaxType = JaxType::Strong(DType::UInt4);
const UINT8: JaxType = JaxType::Strong(DType::UInt8);
const UINT16: JaxType = JaxType::Strong(DType::UInt16);
const UINT32: JaxType = JaxType::Strong(DType::UInt32);
const UINT64: JaxType = JaxType::Strong(DType::UInt64);
const INT1: JaxType = JaxType::Strong(DType::Int1);
const INT2: JaxType = JaxType::Strong(DType::Int2);
const INT4: JaxType = JaxType::Strong(DType::Int4);
const INT8: JaxType = JaxType::Strong(DType::Int8);
const INT16: JaxType = JaxType::Strong(DType::Int16);
const INT32: JaxType = JaxType::Strong(DType::Int32);
const INT64: JaxType = JaxType::Strong(DType::Int64);
const F4_E2M1FN: JaxType = JaxType::Strong(DType::Float4E2M1FN);
const F6_E2M3FN: JaxType = JaxType::Strong(DType::Float6E2M3FN);
const F6_E3M2FN: JaxType = JaxType::Strong(DType::Float6E3M2FN);
const F8_E3M4: JaxType = JaxType::Strong(DType::Float8E3M4);
const F8_E4M3: JaxType = JaxType::Strong(DType::Float8E4M3);
const F8_E8M0FNU: JaxType = JaxType::Strong(DType::Float8E8M0FNU);
const F8_E4M3B11FNUZ: JaxType = JaxType::Strong(DType::Float8E4M3B11FNUZ);
const F8_E4M3FN: JaxType = JaxType::Strong(DType::Float8E4M3FN);
const F8_E4M3FNUZ: JaxType = JaxType::Strong(DType::Float8E4M3FNUZ);
const F8_E5M2: JaxType = JaxType::Strong(DType::Float8E5M2);
const F8_E5M2FNUZ: JaxType = JaxType::Strong(DType::Float8E5M2FNUZ);
const BFLOAT16: JaxType = JaxType::Strong(DType::BFloat16);
const FLOAT16: JaxType = JaxType::Strong(DType::Float16);
const FLOAT32: JaxType = JaxType::Strong(DType::Float32);
const FLOAT64: JaxType = JaxType::Strong(DType::Float64);
const COMPLEX64: JaxType = JaxType::Strong(DType::Complex64);
const COMPLEX128: JaxType = JaxType::Strong(DType::Complex128);
const I_STAR: JaxType = JaxType::WeakInt;
const F_STAR: JaxType = JaxType::WeakFloat;
const C_STAR: JaxType = JaxType::WeakComplex;

/// The 35 lattice nodes, in JAX's enumeration order (bool, unsigned, signed,
/// floats, complex) followed by `i*`, `f*`, `c*`.
pub const NODES: [JaxType; 35] = [
    BOOL,
    UINT1,
    UINT2,
    UINT4,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    INT1,
    INT2,
    INT4,
    INT8,
    INT16,
    INT32,
    INT64,
    F4_E2M1FN,
    F6_E2M3FN,
    F6_E3M2FN,
    F8_E3M4,
    F8_E4M3,
    F8_E8M0FNU,
    F8_E4M3B11FNUZ,
    F8_E4M3FN,
    F8_E4M3FNUZ,
    F8_E5M2,
    F8_E5M2FNUZ,
    BFLOAT16,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    COMPLEX64,
    COMPLEX128,
    I_STAR,
    F_STAR,
    C_STAR,
];

/// JAX's standard lattice with x64 enabled, as "immediately higher" edges
/// (seed 002's picture, extended with the sub-byte integers and small floats,
/// which are sinks). Nodes not listed as keys are sinks.
#[rustfmt::skip]
pub const STANDARD_X64_EDGES: &[(JaxType, &[JaxType])] = &[
    (BOOL,      &[I_STAR]),
    (I_STAR,    &[UINT8, UINT2, UINT4, UINT1, INT8, INT2, INT4, INT1]),
    (UINT8,     &[INT16, UINT16]),
    (UINT16,    &[INT32, UINT32]),
    (UINT32,    &[INT64, UINT64]),
    (UINT64,    &[F_STAR]),
    (INT8,      &[INT16]),
    (INT16,     &[INT32]),
    (INT32,     &[INT64]),
    (INT64,     &[F_STAR]),
    (F_STAR,    &[F4_E2M1FN, F6_E2M3FN, F6_E3M2FN, F8_E3M4, F8_E4M3, F8_E8M0FNU, F8_E4M3B11FNUZ,
                  F8_E4M3FN, F8_E4M3FNUZ, F8_E5M2, F8_E5M2FNUZ, BFLOAT16, FLOAT16, C_STAR]),
    (BFLOAT16,  &[FLOAT32]),
    (FLOAT16,   &[FLOAT32]),
    (FLOAT32,   &[FLOAT64, COMPLEX64]),
    (FLOAT64,   &[COMPLEX128]),
    (C_STAR,    &[COMPLEX64]),
    (COMPLEX64, &[COMPLEX128]),
];

/// JAX's standard lattice with x64 disabled: identical to
/// [`STANDARD_X64_EDGES`] except `uint32 → {int32, uint64}` (instead of
/// `int64`), so that uint32 ∨ int32 = int32 and no 64-bit type forms from
/// 32-bit inputs.
#[rustfmt::skip]
pub const STANDARD_X32_EDGES: &[(JaxType, &[JaxType])] = &[
    (BOOL,      &[I_STAR]),
    (I_STAR,    &[UINT8, UINT2, UINT4, UINT1, INT8, INT2, INT4, INT1]),
    (UINT8,     &[INT16, UINT16]),
    (UINT16,    &[INT32, UINT32]),
    (UINT32,    &[INT32, UINT64]),
    (UINT64,    &[F_STAR]),
    (INT8,      &[INT16]),
    (INT16,     &[INT32]),
    (INT32,     &[INT64]),
    (INT64,     &[F_STAR]),
    (F_STAR,    &[F4_E2M1FN, F6_E2M3FN, F6_E3M2FN, F8_E3M4, F8_E4M3, F8_E8M0FNU, F8_E4M3B11FNUZ,
                  F8_E4M3FN, F8_E4M3FNUZ, F8_E5M2, F8_E5M2FNUZ, BFLOAT16, FLOAT16, C_STAR]),
    (BFLOAT16,  &[FLOAT32]),
    (FLOAT16,   &[FLOAT32]),
    (FLOAT32,   &[FLOAT64, COMPLEX64]),
    (FLOAT64,   &[COMPLEX128]),
    (C_STAR,    &[COMPLEX64]),
    (COMPLEX64, &[COMPLEX128]),
];

/// JAX's strict lattice (`jax_numpy_dtype_promotion='strict'`, both x64
/// settings): weak types promote to their own or a higher category, strong
/// types are all sinks (only equal dtypes combine; bool combines with nothing).
#[rustfmt::skip]
pub const STRICT_EDGES: &[(JaxType, &[JaxType])] = &[
    (I_STAR, &[F_STAR, UINT1, UINT2, UINT4, UINT8, UINT16, UINT32, UINT64,
               INT1, INT2, INT4, INT8, INT16, INT32, INT64]),
    (F_STAR, &[C_STAR, F4_E2M1FN, F6_E2M3FN, F6_E3M2FN, F8_E3M4, F8_E4M3, F8_E8M0FNU,
               F8_E4M3B11FNUZ, F8_E4M3FN, F8_E4M3FNUZ, F8_E5M2, F8_E5M2FNUZ, BFLOAT16,
               FLOAT16, FLOAT32, FLOAT64]),
    (C_STAR, &[COMPLEX64, COMPLEX128]),
];

/// `jax_numpy_dtype_promotion`: which lattice implicit promotion uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PromotionMode {
    /// The standard lattice (JAX's default).
    #[default]
    Standard,
    /// The strict lattice: only weakly typed values promote implicitly.
    Strict,
}

/// A promotion configuration: the equivalent of JAX's
/// `jax_numpy_dtype_promotion` and `jax_enable_x64` flags.
///
/// The default is JAX's: standard mode, x64 disabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PromotionConfig {
    /// Standard or strict lattice.
    pub mode: PromotionMode,
    /// Whether 64-bit types are enabled (`jax_enable_x64`). When off, inputs
    /// and weak defaults are canonicalized to 32 bits.
    pub x64: bool,
}

/// A Python scalar operand (`True`, `1`, `1.0`, `1j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PyScalar {
    /// Python `bool`: strongly typed `bool` (never weak).
    Bool,
    /// Python `int`: weakly typed default integer.
    Int,
    /// Python `float`: weakly typed default float.
    Float,
    /// Python `complex`: weakly typed default complex.
    Complex,
}

/// One argument of [`PromotionConfig::result_type`].
///
/// Parses from text (for command lines): `True`, `3`, `1.5`, `1j`, `i*`,
/// `weak:<dtype>`, or a dtype.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{Operand, PyScalar};
/// assert_eq!("2.5".parse::<Operand>(), Ok(Operand::Scalar(PyScalar::Float)));
/// assert_eq!("weak:int8".parse::<Operand>(), Ok(Operand::Weak(DType::Int8)));
/// assert_eq!("<f4".parse::<Operand>(), Ok(Operand::Strong(DType::Float32)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A strongly typed array or dtype.
    Strong(DType),
    /// A weakly typed array of the given dtype (`weak_type=True`).
    Weak(DType),
    /// A Python scalar.
    Scalar(PyScalar),
}

impl Operand {
    /// Parses a command-line operand as [`Operand::from_str`](std::str::FromStr)
    /// does, reading dtypes with [`DType::parse_name`] (the command line's
    /// vocabulary, where `i8` is refused as ambiguous) instead of NumPy's
    /// `numpy.dtype` reading.
    ///
    /// # Errors
    ///
    /// [`crate::dtype::ParseDTypeError`] for an unknown or ambiguous dtype.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{Operand, PyScalar};
    /// assert_eq!(Operand::parse_name("weak:f16"), Ok(Operand::Weak(DType::Float16)));
    /// assert_eq!(Operand::parse_name("1.5"), Ok(Operand::Scalar(PyScalar::Float)));
    /// assert!(Operand::parse_name("i8").is_err());
    /// ```
    pub fn parse_name(s: &str) -> Result<Self, crate::dtype::ParseDTypeError> {
        parse_operand(s, DType::parse_name)
    }
}

fn parse_operand(
    s: &str,
    dtype: impl Fn(&str) -> Result<DType, crate::dtype::ParseDTypeError>,
) -> Result<Operand, crate::dtype::ParseDTypeError> {
    let t = s.trim();
    match t {
        "True" | "False" => return Ok(Operand::Scalar(PyScalar::Bool)),
        "i*" => return Ok(Operand::Scalar(PyScalar::Int)),
        "f*" => return Ok(Operand::Scalar(PyScalar::Float)),
        "c*" => return Ok(Operand::Scalar(PyScalar::Complex)),
        _ => {}
    }
    if let Some(d) = t.strip_prefix("weak:") {
        return dtype(d).map(Operand::Weak);
    }
    let numeric = |x: &str| {
        x.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.')
            && x.parse::<f64>().is_ok()
    };
    if t.parse::<i128>().is_ok() {
        return Ok(Operand::Scalar(PyScalar::Int));
    }
    if numeric(t) {
        return Ok(Operand::Scalar(PyScalar::Float));
    }
    if let Some(body) = t.strip_suffix('j') {
        let body = body.trim_start_matches('(');
        if body.is_empty()
            || numeric(body)
            || body.contains(['+', '-'])
                && body.split(['+', '-']).all(|p| p.is_empty() || numeric(p))
        {
            return Ok(Operand::Scalar(PyScalar::Complex));
        }
    }
    dtype(t).map(Operand::Strong)
}

impl std::str::FromStr for Operand {
    type Err = crate::dtype::ParseDTypeError;

    /// Parses a command-line operand: `True`/`False` (Python bool), an integer
    /// literal such as `1` or `-3` (Python int), a float literal such as `1.0`
    /// or `2e3` (Python float), a complex literal ending in `j` such as `1j`
    /// (Python complex), `i*`/`f*`/`c*` (the Python scalar types),
    /// `weak:<dtype>` (a weakly typed array), otherwise a dtype (strong), read
    /// as `numpy.dtype` reads strings ([`DType::from_str`](std::str::FromStr)).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_operand(s, |d| d.parse())
    }
}

/// Which of JAX's "no promotion path" texts applies (JAX checks them in this
/// order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoPathReason {
    /// Strict mode is active.
    Strict,
    /// An input is an 8-bit float.
    Float8,
    /// An input is a 6-bit float.
    Float6,
    /// An input is a 4-bit float.
    Float4,
    /// An input is an IEEE P3109 float of a width other than 4, 6 and 8
    /// bits (those take the float4/6/8 texts).
    NarrowFloat(u32),
    /// An input is a 1-, 2- or 4-bit integer.
    SubByteInt,
    /// None of the above.
    Generic,
}

/// A JAX type-promotion failure; `Display` gives jax 0.10.2's message text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypePromotionError {
    /// The inputs have no common upper bound in the lattice
    /// (JAX's `TypePromotionError`). `inputs` lists the lattice nodes as JAX
    /// does; for operand lists JAX uses Python set order, which varies between
    /// processes, and we use first-occurrence order.
    NoPromotionPath {
        /// The lattice nodes that were joined.
        inputs: Vec<JaxType>,
        /// Which message applies.
        reason: NoPathReason,
    },
    /// A dtype outside the lattice (`complex32`, `bcomplex32`) reached the
    /// join (JAX raises `ValueError` with this text from `promote_types`).
    InvalidDType(DType),
    /// A dtype JAX arrays cannot have was given as an operand (JAX raises
    /// `TypeError` with this text from `result_type`).
    NotAJaxType(DType),
    /// `result_type` was called with no operands.
    NoOperands,
}

/// Python's `repr()` of a `str`: single quotes unless the text contains a
/// single quote and no double quote.
fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// Python's `repr()` of a tuple of strings.
fn py_tuple(items: &[JaxType]) -> String {
    let parts: Vec<String> = items.iter().map(|t| py_repr(t.python_str())).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// `repr(np.dtype(d))`: NumPy's own dtypes print their name quoted,
/// ml_dtypes' (sub-byte integers, small floats, bfloat16, complex32,
/// bcomplex32) unquoted.
fn dtype_repr(d: DType) -> String {
    use DType::*;
    let numpy_native = matches!(
        d,
        Bool | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Complex64
            | Complex128
    );
    if numpy_native {
        format!("dtype('{}')", d.name())
    } else {
        format!("dtype({})", d.name())
    }
}

impl TypePromotionError {
    /// The Python exception class JAX raises for this error
    /// (`TypePromotionError`, `ValueError` or `TypeError`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::TypePromotionError;
    /// assert_eq!(TypePromotionError::InvalidDType(DType::Complex32).python_exception(), "ValueError");
    /// ```
    pub fn python_exception(&self) -> &'static str {
        match self {
            TypePromotionError::NoPromotionPath { .. } => "TypePromotionError",
            TypePromotionError::InvalidDType(_) | TypePromotionError::NoOperands => "ValueError",
            TypePromotionError::NotAJaxType(_) => "TypeError",
        }
    }
}

impl fmt::Display for TypePromotionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ASTYPE: &str = "do not support implicit promotion. If you'd like your inputs to be \
                              promoted to another type, you can do so explicitly using e.g. x.astype";
        match self {
            TypePromotionError::NoPromotionPath { inputs, reason } => {
                write!(
                    f,
                    "Input dtypes {} have no available implicit dtype promotion path",
                    py_tuple(inputs)
                )?;
                match reason {
                    NoPathReason::Strict => f.write_str(
                        " when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to \
                         the desired output type, or set jax_numpy_dtype_promotion=standard.",
                    ),
                    NoPathReason::Float8 => {
                        write!(f, ". To avoid unintended promotion, 8-bit floats {ASTYPE}('float32')")
                    }
                    NoPathReason::Float6 => {
                        write!(f, ". To avoid unintended promotion, 6-bit floats {ASTYPE}('float32')")
                    }
                    NoPathReason::Float4 => {
                        write!(f, ". To avoid unintended promotion, 4-bit floats {ASTYPE}('float32')")
                    }
                    NoPathReason::NarrowFloat(k) => {
                        write!(f, ". To avoid unintended promotion, {k}-bit floats {ASTYPE}('float32')")
                    }
                    NoPathReason::SubByteInt => write!(
                        f,
                        ". To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers {ASTYPE}('int32')"
                    ),
                    NoPathReason::Generic => {
                        f.write_str(". Try explicitly casting inputs to the desired output type.")
                    }
                }
            }
            TypePromotionError::InvalidDType(d) => {
                write!(
                    f,
                    "dtype={} is not a valid dtype for JAX type promotion.",
                    dtype_repr(*d)
                )
            }
            TypePromotionError::NotAJaxType(d) => write!(
                f,
                "Value '{0}' with dtype {0} is not a valid JAX array type. Only arrays of numeric \
                 types are supported by JAX.",
                d.name()
            ),
            TypePromotionError::NoOperands => {
                f.write_str("at least one array or dtype is required")
            }
        }
    }
}

impl std::error::Error for TypePromotionError {}

/// [`DType::ordinal`] → index in [`NODES`] (`u8::MAX`: not a lattice node).
const NODE_OF_DTYPE: [u8; DType::ALL.len()] = {
    let mut t = [u8::MAX; DType::ALL.len()];
    let mut i = 0;
    while i < NODES.len() {
        if let JaxType::Strong(d) = NODES[i] {
            t[d.ordinal()] = i as u8;
        }
        i += 1;
    }
    t
};

/// The index of a node in [`NODES`] (and in every JAX lattice), or `None`
/// for complex32 / bcomplex32 and the IEEE P3109 members (which are joined
/// outside the lattice tables, see [`PromotionConfig::least_upper_bound`]).
#[inline]
const fn node_index(t: JaxType) -> Option<usize> {
    match t {
        JaxType::Strong(DType::P3109(_)) => None,
        JaxType::Strong(d) => match NODE_OF_DTYPE[d.ordinal()] {
            u8::MAX => None,
            i => Some(i as usize),
        },
        JaxType::WeakInt => Some(32),
        JaxType::WeakFloat => Some(33),
        JaxType::WeakComplex => Some(34),
    }
}

/// A built JAX lattice, its nodes in [`NODES`] order.
struct JaxLattice {
    lattice: Lattice<JaxType>,
}

impl JaxLattice {
    fn build(edges: &[(JaxType, &[JaxType])]) -> JaxLattice {
        // The literals above are fixed data checked by the tests; failure to
        // build them is a bug in this file, not a user error.
        let lattice =
            Lattice::with_nodes(&NODES, edges).expect("JAX lattice literal is a valid lattice");
        JaxLattice { lattice }
    }

    #[inline]
    fn index(&self, t: JaxType) -> Option<usize> {
        node_index(t)
    }
}

/// The three JAX lattices (standard x64, standard x32, strict), built once.
static LATTICES: OnceLock<[JaxLattice; 3]> = OnceLock::new();

#[inline]
fn jax_lattice(mode: PromotionMode, x64: bool) -> &'static JaxLattice {
    let all = LATTICES.get_or_init(|| {
        [
            JaxLattice::build(STANDARD_X64_EDGES),
            JaxLattice::build(STANDARD_X32_EDGES),
            JaxLattice::build(STRICT_EDGES),
        ]
    });
    match (mode, x64) {
        (PromotionMode::Standard, true) => &all[0],
        (PromotionMode::Standard, false) => &all[1],
        (PromotionMode::Strict, _) => &all[2],
    }
}

thread_local! {
    static CURRENT: Cell<PromotionConfig> = const {
        Cell::new(PromotionConfig { mode: PromotionMode::Standard, x64: false })
    };
}

/// Restores the previous thread-local [`PromotionConfig`] when dropped
/// (returned by [`PromotionConfig::set_scoped`], [`numpy_dtype_promotion`],
/// [`enable_x64`]). Not `Send`: it belongs to the thread whose default it changed.
#[must_use = "the configuration is restored as soon as the guard is dropped"]
pub struct ConfigGuard {
    previous: PromotionConfig,
    _not_send: PhantomData<*const ()>,
}

impl Drop for ConfigGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// Sets this thread's promotion mode until the guard drops, keeping x64: the
/// equivalent of `with jax.numpy_dtype_promotion('strict'):`.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{numpy_dtype_promotion, promote_types, PromotionMode};
/// {
///     let _strict = numpy_dtype_promotion(PromotionMode::Strict);
///     assert!(promote_types(DType::Float32.into(), DType::Int32.into()).is_err());
/// }
/// assert_eq!(promote_types(DType::Float32.into(), DType::Int32.into()), Ok(DType::Float32));
/// ```
pub fn numpy_dtype_promotion(mode: PromotionMode) -> ConfigGuard {
    PromotionConfig {
        mode,
        ..PromotionConfig::current()
    }
    .set_scoped()
}

/// Sets this thread's x64 flag until the guard drops, keeping the mode: the
/// equivalent of `jax.experimental.enable_x64()` / `jax_enable_x64`.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{canonicalize_dtype, enable_x64};
/// assert_eq!(canonicalize_dtype(DType::Float64), DType::Float32);
/// let _x64 = enable_x64(true);
/// assert_eq!(canonicalize_dtype(DType::Float64), DType::Float64);
/// ```
pub fn enable_x64(on: bool) -> ConfigGuard {
    PromotionConfig {
        x64: on,
        ..PromotionConfig::current()
    }
    .set_scoped()
}

impl PromotionConfig {
    /// JAX's defaults: standard promotion, x64 disabled.
    pub const DEFAULT: PromotionConfig = PromotionConfig {
        mode: PromotionMode::Standard,
        x64: false,
    };

    /// This thread's current default configuration (initially [`Self::DEFAULT`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::jax::PromotionConfig;
    /// assert_eq!(PromotionConfig::current(), PromotionConfig::DEFAULT);
    /// ```
    pub fn current() -> PromotionConfig {
        CURRENT.with(|c| c.get())
    }

    /// Makes `self` this thread's default until the returned guard is dropped,
    /// which restores the previous default (guards nest).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::jax::{PromotionConfig, PromotionMode};
    /// let strict = PromotionConfig { mode: PromotionMode::Strict, x64: true };
    /// {
    ///     let _g = strict.set_scoped();
    ///     assert_eq!(PromotionConfig::current(), strict);
    /// }
    /// assert_eq!(PromotionConfig::current(), PromotionConfig::DEFAULT);
    /// ```
    pub fn set_scoped(self) -> ConfigGuard {
        let previous = CURRENT.with(|c| c.replace(self));
        ConfigGuard {
            previous,
            _not_send: PhantomData,
        }
    }

    /// The lattice this configuration promotes on.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::jax::{JaxType, PromotionConfig};
    /// let l = PromotionConfig::DEFAULT.lattice();
    /// assert_eq!(l.nodes().len(), 35);
    /// assert!(l.le(&JaxType::WeakInt, &JaxType::WeakFloat));
    /// ```
    pub fn lattice(&self) -> &'static Lattice<JaxType> {
        &jax_lattice(self.mode, self.x64).lattice
    }

    /// `jax.dtypes.canonicalize_dtype`: with x64 off, int64 → int32,
    /// uint64 → uint32, float64 → float32, complex128 → complex64; otherwise
    /// the dtype itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::PromotionConfig;
    /// assert_eq!(PromotionConfig::DEFAULT.canonicalize_dtype(DType::UInt64), DType::UInt32);
    /// ```
    pub const fn canonicalize_dtype(&self, d: DType) -> DType {
        if self.x64 {
            return d;
        }
        match d {
            DType::Int64 => DType::Int32,
            DType::UInt64 => DType::UInt32,
            DType::Float64 => DType::Float32,
            DType::Complex128 => DType::Complex64,
            other => other,
        }
    }

    fn no_path(&self, inputs: Vec<JaxType>) -> TypePromotionError {
        let any = |f: &dyn Fn(DType) -> bool| {
            inputs
                .iter()
                .any(|t| matches!(t, JaxType::Strong(d) if f(*d)))
        };
        let reason = if self.mode == PromotionMode::Strict {
            NoPathReason::Strict
        } else if any(&|d| d.is_float() && d.bits() == 8) {
            NoPathReason::Float8
        } else if any(&|d| d.is_float() && d.bits() == 6) {
            NoPathReason::Float6
        } else if any(&|d| d.is_float() && d.bits() == 4) {
            NoPathReason::Float4
        } else if let Some(k) = inputs.iter().find_map(|t| match t {
            JaxType::Strong(DType::P3109(p)) => Some(p.k()),
            _ => None,
        }) {
            NoPathReason::NarrowFloat(k)
        } else if any(&|d| d.is_integer() && d.bits() < 8) {
            NoPathReason::SubByteInt
        } else {
            NoPathReason::Generic
        };
        TypePromotionError::NoPromotionPath { inputs, reason }
    }

    /// Binary join: index lookups and one join-table lookup; the general path
    /// only runs to build an error.
    #[inline]
    fn join2(&self, a: JaxType, b: JaxType) -> Result<JaxType, TypePromotionError> {
        let l = jax_lattice(self.mode, self.x64);
        if let (Some(i), Some(j)) = (l.index(a), l.index(b)) {
            if let Some(k) = l.lattice.join_index(i, j) {
                return Ok(NODES[k]);
            }
        }
        self.join2_error(a, b)
    }

    #[cold]
    #[inline(never)]
    fn join2_error(&self, a: JaxType, b: JaxType) -> Result<JaxType, TypePromotionError> {
        self.least_upper_bound(&[a, b])
    }

    /// The least upper bound of `nodes` on this configuration's lattice
    /// (JAX's `_least_upper_bound`), listing `nodes` in the error as given.
    ///
    /// An IEEE P3109 member is a sink right above `f*`, as JAX's float8
    /// types are: the join of nodes with one member is that member when
    /// every other node is at most `f*`, and undefined otherwise.
    fn least_upper_bound(&self, nodes: &[JaxType]) -> Result<JaxType, TypePromotionError> {
        let mut member = None;
        for t in nodes {
            if let JaxType::Strong(d @ DType::P3109(_)) = *t {
                match member {
                    Some(m) if m != d => return Err(self.no_path(nodes.to_vec())),
                    _ => member = Some(d),
                }
            }
        }
        if let Some(m) = member {
            let others: Vec<JaxType> = nodes
                .iter()
                .copied()
                .filter(|t| *t != JaxType::Strong(m))
                .chain([JaxType::WeakFloat])
                .collect();
            return match self.least_upper_bound(&others) {
                Ok(JaxType::WeakFloat) => Ok(JaxType::Strong(m)),
                Err(e @ TypePromotionError::InvalidDType(_)) => Err(e),
                _ => Err(self.no_path(nodes.to_vec())),
            };
        }
        let l = jax_lattice(self.mode, self.x64);
        let mut acc: Option<usize> = None;
        let mut ok = true;
        for &t in nodes {
            let i = match l.index(t) {
                Some(i) => i,
                None => {
                    let JaxType::Strong(d) = t else {
                        unreachable!("weak types are nodes")
                    };
                    return Err(TypePromotionError::InvalidDType(d));
                }
            };
            acc = match acc {
                None => Some(i),
                Some(a) if ok => {
                    let j = l.lattice.join_index(a, i);
                    ok = j.is_some();
                    j.or(Some(a))
                }
                keep => keep,
            };
        }
        match acc {
            Some(i) if ok => Ok(l.lattice.nodes()[i]),
            Some(_) => Err(self.no_path(nodes.to_vec())),
            None => Err(TypePromotionError::NoOperands),
        }
    }

    /// The lattice node an operand takes part in the join as (JAX's
    /// `_jax_type` after canonicalization): a strong dtype canonicalized for
    /// x64; a weakly typed value or Python int/float/complex → `i*`/`f*`/`c*`;
    /// Python bool and weak bool → `bool`.
    ///
    /// # Errors
    ///
    /// [`TypePromotionError::NotAJaxType`] for complex32 / bcomplex32.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{JaxType, Operand, PromotionConfig, PyScalar};
    /// let c = PromotionConfig::DEFAULT;
    /// assert_eq!(c.lattice_node(Operand::Strong(DType::Int64)), Ok(JaxType::Strong(DType::Int32)));
    /// assert_eq!(c.lattice_node(Operand::Weak(DType::BFloat16)), Ok(JaxType::WeakFloat));
    /// assert_eq!(c.lattice_node(Operand::Scalar(PyScalar::Bool)), Ok(JaxType::Strong(DType::Bool)));
    /// ```
    pub fn lattice_node(&self, op: Operand) -> Result<JaxType, TypePromotionError> {
        Ok(match op {
            Operand::Strong(d) | Operand::Weak(d)
                if node_index(JaxType::Strong(d)).is_none() && !d.is_p3109() =>
            {
                return Err(TypePromotionError::NotAJaxType(d))
            }
            Operand::Strong(d) => JaxType::Strong(self.canonicalize_dtype(d)),
            Operand::Weak(d) => JaxType::weak_of(d),
            Operand::Scalar(PyScalar::Bool) => JaxType::Strong(DType::Bool),
            Operand::Scalar(PyScalar::Int) => JaxType::WeakInt,
            Operand::Scalar(PyScalar::Float) => JaxType::WeakFloat,
            Operand::Scalar(PyScalar::Complex) => JaxType::WeakComplex,
        })
    }

    /// The raw lattice join `a ∨ b` (a seed-table cell: weak results stay
    /// weak types).
    ///
    /// # Errors
    ///
    /// [`TypePromotionError::NoPromotionPath`] if the join is undefined;
    /// [`TypePromotionError::InvalidDType`] for complex32 / bcomplex32.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{JaxType, PromotionConfig};
    /// let c = PromotionConfig { x64: true, ..PromotionConfig::DEFAULT };
    /// assert_eq!(c.join(DType::UInt64.into(), DType::Int8.into()), Ok(JaxType::WeakFloat));
    /// ```
    pub fn join(&self, a: JaxType, b: JaxType) -> Result<JaxType, TypePromotionError> {
        self.join2(a, b)
    }

    /// Explains the join of `nodes`: for each input, the path of lattice edges
    /// up to the result (for `promote --explain`).
    ///
    /// # Errors
    ///
    /// As [`PromotionConfig::join`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{JaxType, PromotionConfig};
    /// let e = PromotionConfig::DEFAULT
    ///     .explain(&[DType::BFloat16.into(), DType::Float16.into()])
    ///     .unwrap();
    /// assert_eq!(e.join, JaxType::Strong(DType::Float32));
    /// assert_eq!(e.paths[0], vec![DType::BFloat16.into(), DType::Float32.into()]);
    /// ```
    pub fn explain(&self, nodes: &[JaxType]) -> Result<Explanation<JaxType>, TypePromotionError> {
        let join = self.least_upper_bound(nodes)?;
        if let JaxType::Strong(DType::P3109(_)) = join {
            // Each input's path up to `f*`, then the edge to the member.
            let mut paths = Vec::with_capacity(nodes.len());
            for &t in nodes {
                if t == join {
                    paths.push(vec![t]);
                    continue;
                }
                let mut p = self
                    .lattice()
                    .explain(&[t, JaxType::WeakFloat])
                    .map(|e| e.paths[0].clone())
                    .ok_or_else(|| self.no_path(nodes.to_vec()))?;
                p.push(join);
                paths.push(p);
            }
            return Ok(Explanation { join, paths });
        }
        self.lattice()
            .explain(nodes)
            .ok_or_else(|| self.no_path(nodes.to_vec()))
    }

    /// `jax.numpy.promote_types(a, b)`: the lattice join of two dtype
    /// specifiers (weak types stand for Python's `int`, `float`, `complex`),
    /// as a dtype. Inputs are not canonicalized, and a weak result becomes its
    /// 64-bit NumPy dtype whatever the x64 setting, exactly as JAX does.
    ///
    /// # Errors
    ///
    /// [`TypePromotionError::NoPromotionPath`] (inputs listed as `(a, b)`),
    /// [`TypePromotionError::InvalidDType`] for complex32 / bcomplex32.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{JaxType, PromotionConfig};
    /// let c = PromotionConfig::DEFAULT;
    /// assert_eq!(c.promote_types(DType::UInt8.into(), JaxType::WeakInt), Ok(DType::UInt8));
    /// assert_eq!(c.promote_types(JaxType::WeakInt, JaxType::WeakFloat), Ok(DType::Float64));
    /// let e = c.promote_types(DType::Float8E4M3FN.into(), DType::Float32.into()).unwrap_err();
    /// assert!(e.to_string().contains("8-bit floats do not support implicit promotion"));
    /// ```
    pub fn promote_types(&self, a: JaxType, b: JaxType) -> Result<DType, TypePromotionError> {
        Ok(self.join2(a, b)?.numpy_dtype())
    }

    /// The default dtype of a weak result of kind `d` (JAX's `default_types`):
    /// int → int64/int32, uint → uint64/uint32, every real float (ml_dtypes'
    /// too) → float64/float32, complex → complex128/complex64.
    ///
    /// Deviation: JAX 0.10.2 raises `KeyError: 'V'` for a weak sub-byte
    /// integer result (its NumPy kind is `V`); we map int1/int2/int4 to the
    /// default int and uint1/uint2/uint4 to the default uint.
    fn weak_default(&self, d: DType) -> DType {
        let d64 = match d.kind() {
            Kind::Bool => DType::Bool,
            Kind::Signed => DType::Int64,
            Kind::Unsigned => DType::UInt64,
            Kind::Float => DType::Float64,
            Kind::Complex => DType::Complex128,
        };
        self.canonicalize_dtype(d64)
    }

    /// `jax.dtypes.lattice_result_type(*args)`: the promoted dtype and weak
    /// flag, before weak results are replaced by default dtypes.
    ///
    /// Operands are canonicalized first (x64 off: 64-bit → 32-bit). A single
    /// operand is returned as is; equal dtypes not all weak give that dtype,
    /// strong; all-weak operands (standard mode) join their dtypes and stay
    /// weak; otherwise weakly typed operands join as `i*`/`f*`/`c*`. `bool` is
    /// never weak.
    ///
    /// # Errors
    ///
    /// [`TypePromotionError`] (no path, invalid dtype, or no operands).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{Operand, PromotionConfig, PyScalar};
    /// let c = PromotionConfig::DEFAULT;
    /// // weakly typed uint8 stays uint8 here; result_type turns it into uint32.
    /// assert_eq!(c.lattice_result_type(&[Operand::Weak(DType::UInt8)]), Ok((DType::UInt8, true)));
    /// assert_eq!(
    ///     c.lattice_result_type(&[Operand::Scalar(PyScalar::Int), Operand::Scalar(PyScalar::Float)]),
    ///     Ok((DType::Float32, true))
    /// );
    /// ```
    pub fn lattice_result_type(
        &self,
        ops: &[Operand],
    ) -> Result<(DType, bool), TypePromotionError> {
        let mut typed: Vec<(DType, bool)> = Vec::with_capacity(ops.len());
        for op in ops {
            typed.push(match *op {
                Operand::Strong(d) | Operand::Weak(d)
                    if matches!(d, DType::Complex32 | DType::BComplex32) =>
                {
                    return Err(TypePromotionError::NotAJaxType(d))
                }
                Operand::Strong(d) => (self.canonicalize_dtype(d), false),
                Operand::Weak(d) => (self.canonicalize_dtype(d), true),
                Operand::Scalar(PyScalar::Bool) => (DType::Bool, false),
                Operand::Scalar(PyScalar::Int) => (self.canonicalize_dtype(DType::Int64), true),
                Operand::Scalar(PyScalar::Float) => (self.canonicalize_dtype(DType::Float64), true),
                Operand::Scalar(PyScalar::Complex) => {
                    (self.canonicalize_dtype(DType::Complex128), true)
                }
            });
        }
        let (first, _) = *typed.first().ok_or(TypePromotionError::NoOperands)?;
        let all_weak = typed.iter().all(|&(_, w)| w);
        let (out, weak) = if typed.len() == 1 {
            typed[0]
        } else if typed.iter().all(|&(d, _)| d == first) && !all_weak {
            (first, false)
        } else if all_weak && self.mode != PromotionMode::Strict {
            let nodes = dedup(typed.iter().map(|&(d, _)| JaxType::Strong(d)));
            let lub = self.least_upper_bound(&nodes)?;
            (self.canonicalize_dtype(lub.numpy_dtype()), true)
        } else {
            let nodes = dedup(typed.iter().map(|&(d, w)| {
                if w {
                    JaxType::weak_of(d)
                } else {
                    JaxType::Strong(d)
                }
            }));
            let lub = self.least_upper_bound(&nodes)?;
            (self.canonicalize_dtype(lub.numpy_dtype()), lub.is_weak())
        };
        Ok((out, weak && out != DType::Bool))
    }

    /// `jax.dtypes.result_type(*args, return_weak_type_flag=True)`: the dtype
    /// a JAX operation on `ops` produces and whether it is weakly typed. A weak
    /// result takes the default dtype of its kind for the x64 setting (int32 /
    /// float32 / complex64 with x64 off).
    ///
    /// # Errors
    ///
    /// [`TypePromotionError`] with JAX's message text.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::promote::jax::{Operand, PromotionConfig, PromotionMode, PyScalar};
    /// let c = PromotionConfig::DEFAULT;
    /// assert_eq!(c.result_type(&[Operand::Weak(DType::UInt8)]), Ok((DType::UInt32, true)));
    /// let strict = PromotionConfig { mode: PromotionMode::Strict, x64: false };
    /// let ops = [Operand::Strong(DType::Float32), Operand::Strong(DType::Int32)];
    /// assert_eq!(
    ///     strict.result_type(&ops).unwrap_err().to_string(),
    ///     "Input dtypes ('float32', 'int32') have no available implicit dtype promotion path when \
    ///      jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output \
    ///      type, or set jax_numpy_dtype_promotion=standard."
    /// );
    /// ```
    pub fn result_type(&self, ops: &[Operand]) -> Result<(DType, bool), TypePromotionError> {
        let (d, weak) = self.lattice_result_type(ops)?;
        Ok(if weak {
            (self.weak_default(d), true)
        } else {
            (d, false)
        })
    }
}

fn dedup(it: impl Iterator<Item = JaxType>) -> Vec<JaxType> {
    let mut v: Vec<JaxType> = Vec::new();
    for t in it {
        if !v.contains(&t) {
            v.push(t);
        }
    }
    v
}

/// [`PromotionConfig::promote_types`] under this thread's current configuration.
///
/// # Errors
///
/// As [`PromotionConfig::promote_types`].
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::promote_types;
/// assert_eq!(promote_types(DType::BFloat16.into(), DType::Float16.into()), Ok(DType::Float32));
/// ```
pub fn promote_types(a: JaxType, b: JaxType) -> Result<DType, TypePromotionError> {
    PromotionConfig::current().promote_types(a, b)
}

/// [`PromotionConfig::result_type`] under this thread's current configuration.
///
/// # Errors
///
/// As [`PromotionConfig::result_type`].
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{result_type, Operand, PyScalar};
/// let ops = [Operand::Strong(DType::Int16), Operand::Scalar(PyScalar::Float)];
/// assert_eq!(result_type(&ops), Ok((DType::Float32, true)));
/// ```
pub fn result_type(ops: &[Operand]) -> Result<(DType, bool), TypePromotionError> {
    PromotionConfig::current().result_type(ops)
}

/// [`PromotionConfig::lattice_result_type`] under this thread's current
/// configuration.
///
/// # Errors
///
/// As [`PromotionConfig::lattice_result_type`].
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{lattice_result_type, Operand};
/// assert_eq!(lattice_result_type(&[Operand::Weak(DType::Int8)]), Ok((DType::Int8, true)));
/// ```
pub fn lattice_result_type(ops: &[Operand]) -> Result<(DType, bool), TypePromotionError> {
    PromotionConfig::current().lattice_result_type(ops)
}

/// [`PromotionConfig::canonicalize_dtype`] under this thread's current
/// configuration.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::canonicalize_dtype;
/// assert_eq!(canonicalize_dtype(DType::Complex128), DType::Complex64);
/// ```
pub fn canonicalize_dtype(d: DType) -> DType {
    PromotionConfig::current().canonicalize_dtype(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_jax_lattices_build_and_are_lattices() {
        for (mode, x64) in [
            (PromotionMode::Standard, true),
            (PromotionMode::Standard, false),
            (PromotionMode::Strict, true),
        ] {
            let t = PromotionConfig { mode, x64 }.lattice().table();
            assert!(t.non_commutative_pairs().is_empty());
            assert!(t.non_idempotent().is_empty());
            assert!(t.non_associative_triples().is_empty());
        }
    }

    #[test]
    fn node_indices_match_nodes() {
        for (i, t) in NODES.iter().enumerate() {
            assert_eq!(node_index(*t), Some(i));
        }
        assert_eq!(node_index(JaxType::Strong(DType::Complex32)), None);
        assert_eq!(node_index(JaxType::Strong(DType::BComplex32)), None);
    }

    #[test]
    fn operands_parse() {
        let cases = [
            ("True", Operand::Scalar(PyScalar::Bool)),
            ("3", Operand::Scalar(PyScalar::Int)),
            ("-3", Operand::Scalar(PyScalar::Int)),
            ("1.5", Operand::Scalar(PyScalar::Float)),
            ("2e3", Operand::Scalar(PyScalar::Float)),
            ("1j", Operand::Scalar(PyScalar::Complex)),
            ("1+2j", Operand::Scalar(PyScalar::Complex)),
            ("f*", Operand::Scalar(PyScalar::Float)),
            ("weak:int8", Operand::Weak(DType::Int8)),
            ("bf16", Operand::Strong(DType::BFloat16)),
            ("f8", Operand::Strong(DType::Float64)),
            ("inf", Operand::Strong(DType::Int8)),
        ];
        for (s, want) in cases.iter().take(cases.len() - 1) {
            assert_eq!(s.parse::<Operand>(), Ok(*want), "{s}");
        }
        assert!("inf".parse::<Operand>().is_err());
        assert!("weak:nope".parse::<Operand>().is_err());
    }

    #[test]
    fn python_repr_quoting() {
        assert_eq!(
            py_tuple(&[JaxType::WeakFloat, INT32]),
            "(\"<class 'float'>\", 'int32')"
        );
        assert_eq!(py_tuple(&[INT32]), "('int32',)");
        assert_eq!(dtype_repr(DType::Complex32), "dtype(complex32)");
        assert_eq!(dtype_repr(DType::Int8), "dtype('int8')");
    }

    #[test]
    fn guards_nest_and_restore() {
        let _a = enable_x64(true);
        {
            let _b = numpy_dtype_promotion(PromotionMode::Strict);
            assert_eq!(
                PromotionConfig::current(),
                PromotionConfig {
                    mode: PromotionMode::Strict,
                    x64: true
                }
            );
        }
        assert_eq!(
            PromotionConfig::current(),
            PromotionConfig {
                mode: PromotionMode::Standard,
                x64: true
            }
        );
    }
}
