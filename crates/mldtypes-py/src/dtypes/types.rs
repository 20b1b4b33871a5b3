//! The library's scalar types as one trait: what the generic scalar, array
//! and ufunc code compiled per type needs to know about it (the sub-byte
//! integers and complex types, whose NumPy face is compiled per type, and
//! the float formats' library types, which the ufunc loops use; the float
//! dtypes themselves are data: [`crate::dtypes::float`]).
//!
//! `with_fixed!` maps a registry entry of the integer and complex
//! families to its Rust type.

use std::ffi::CStr;
use std::str::FromStr;

use mldtypes::dtype::DType;
use mldtypes::float::MiniFloat;
use mldtypes::int::SubByteInt;

/// The three families of scalar types; each has its own Python scalar
/// protocol (ml_dtypes' `custom_float.h`, `intn_numpy.h`, `custom_complex.h`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Family {
    Float,
    Int,
    Complex,
}

/// One of our scalar types, stored in NumPy arrays as its `Pod` bytes.
pub(crate) trait MlType: bytemuck::Pod + Send + Sync + 'static {
    /// The dtype (name, itemsize, format) in the Rust library.
    const DTYPE: DType;
    const FAMILY: Family;
    /// `tp_name`: `mldtypes.<name>`.
    const QUALNAME: &'static CStr;
    /// The scalar type's docstring.
    const DOC: &'static CStr;

    /// The exact value as `f64` (the real part for complex types).
    fn to_f64(self) -> f64;
    /// Real and imaginary parts (imaginary 0 for real types).
    fn to_pair(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
    /// `x` rounded once into the type (floats: round to nearest even, ml_dtypes'
    /// overflow; integers: NumPy's cast, truncation then wrapping).
    fn from_f64(x: f64) -> Self;
    /// From a pair (the imaginary part is dropped by real types).
    fn from_pair(re: f64, im: f64) -> Self {
        let _ = im;
        Self::from_f64(re)
    }
    /// Whether the value (either part) is NaN.
    fn is_nan(self) -> bool {
        let (a, b) = self.to_pair();
        a.is_nan() || b.is_nan()
    }
    /// The value as float32 bits (real, imaginary) with NaN payloads kept,
    /// for the float types and bcomplex32; `None` for the others.
    fn f32_bits(self) -> Option<(u32, u32)> {
        None
    }
    /// Whether the value is non-zero (NaN counts as non-zero).
    fn is_nonzero(self) -> bool {
        let (a, b) = self.to_pair();
        a != 0.0 || b != 0.0
    }
}

/// A sub-byte integer type of the library.
pub(crate) trait IntType: MlType + SubByteInt + FromStr {}
/// A complex type of the library: two 16-bit floats, real part first.
pub(crate) trait ComplexType: MlType {
    /// The scalar type of one component (bfloat16 for bcomplex32; `None`
    /// for complex32, whose parts are NumPy float16).
    const PART: Option<DType>;
}

macro_rules! float_type {
    ($t:ident) => {
        impl MlType for mldtypes::$t {
            const DTYPE: DType = <mldtypes::$t as mldtypes::cast::Element>::DTYPE;
            const FAMILY: Family = Family::Float;
            const QUALNAME: &'static CStr = const_cstr(concat!("mldtypes.", stringify!($t), "\0"));
            const DOC: &'static CStr = const_cstr(concat!(
                stringify!($t),
                " floating-point values (ml_dtypes-compatible; see mldtypes.finfo for its limits)\0"
            ));
            fn to_f64(self) -> f64 {
                MiniFloat::to_f64(self)
            }
            fn from_f64(x: f64) -> Self {
                MiniFloat::from_f64(x)
            }
            fn is_nan(self) -> bool {
                MiniFloat::to_f32(self).is_nan()
            }
            fn f32_bits(self) -> Option<(u32, u32)> {
                Some((MiniFloat::to_f32(self).to_bits(), 0))
            }
        }
    };
}

macro_rules! int_type {
    ($t:ident) => {
        impl MlType for mldtypes::$t {
            const DTYPE: DType = <mldtypes::$t as mldtypes::cast::Element>::DTYPE;
            const FAMILY: Family = Family::Int;
            const QUALNAME: &'static CStr = const_cstr(concat!("mldtypes.", stringify!($t), "\0"));
            const DOC: &'static CStr = const_cstr(concat!(
                stringify!($t),
                " integer values (ml_dtypes-compatible)\0"
            ));
            fn to_f64(self) -> f64 {
                SubByteInt::to_i32(self) as f64
            }
            fn from_f64(x: f64) -> Self {
                SubByteInt::from_f64_numpy(x)
            }
            fn is_nan(self) -> bool {
                false
            }
        }
        impl IntType for mldtypes::$t {}
    };
}

macro_rules! complex_type {
    ($t:ident, $dt:ident, $part:expr, $doc:literal) => {
        impl MlType for mldtypes::$t {
            const DTYPE: DType = DType::$dt;
            const FAMILY: Family = Family::Complex;
            const QUALNAME: &'static CStr = const_cstr(concat!("mldtypes.", stringify!($t), "\0"));
            const DOC: &'static CStr = const_cstr(concat!($doc, "\0"));
            fn to_f64(self) -> f64 {
                self.to_f32_pair().0 as f64
            }
            fn to_pair(self) -> (f64, f64) {
                let (a, b) = self.to_f32_pair();
                (a as f64, b as f64)
            }
            fn from_f64(x: f64) -> Self {
                Self::from_pair(x, 0.0)
            }
            fn from_pair(re: f64, im: f64) -> Self {
                complex_from_f64::<Self>(re, im)
            }
        }
        impl ComplexType for mldtypes::$t {
            const PART: Option<DType> = $part;
        }
    };
}

/// Rounds each part of `(re, im)` once into the component format.
fn complex_from_f64<C: ComplexParts>(re: f64, im: f64) -> C {
    C::from_parts_f64(re, im)
}

/// Access to the components' rounding from `f64`.
pub(crate) trait ComplexParts {
    fn from_parts_f64(re: f64, im: f64) -> Self;
}

impl ComplexParts for mldtypes::complex32 {
    fn from_parts_f64(re: f64, im: f64) -> Self {
        let mut out = [half::f16::ZERO; 2];
        // float64 → float16 through the library's kernel: rounds once.
        let _ = mldtypes::cast::convert_slice(&[re, im], &mut out);
        // NaN parts become float16's canonical quiet NaN (sign kept), as
        // ml_dtypes' float → half conversion gives.
        let canon = |x: f64, h: half::f16| {
            if x.is_nan() {
                half::f16::from_bits(if x.is_sign_negative() { 0xfe00 } else { 0x7e00 })
            } else {
                h
            }
        };
        mldtypes::complex32::new(canon(re, out[0]), canon(im, out[1]))
    }
}

impl ComplexParts for mldtypes::bcomplex32 {
    fn from_parts_f64(re: f64, im: f64) -> Self {
        mldtypes::bcomplex32::new(MiniFloat::from_f64(re), MiniFloat::from_f64(im))
    }
}

/// `CStr` from a literal ending in NUL, at compile time.
const fn const_cstr(s: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("missing NUL"),
    }
}

float_type!(bfloat16);
float_type!(float8_e3m4);
float_type!(float8_e4m3);
float_type!(float8_e4m3b11fnuz);
float_type!(float8_e4m3fn);
float_type!(float8_e4m3fnuz);
float_type!(float8_e5m2);
float_type!(float8_e5m2fnuz);
float_type!(float6_e2m3fn);
float_type!(float6_e3m2fn);
float_type!(float4_e2m1fn);
float_type!(float8_e8m0fnu);
int_type!(int1);
int_type!(uint1);
int_type!(int2);
int_type!(uint2);
int_type!(int4);
int_type!(uint4);
complex_type!(
    bcomplex32,
    BComplex32,
    Some(DType::BFloat16),
    "complex bfloat16 floating-point values: two bfloat16, real part first (ml_dtypes-compatible)"
);
complex_type!(
    complex32,
    Complex32,
    None,
    "complex half floating-point values: two IEEE float16, real part first (ml_dtypes-compatible)"
);

/// Evaluates `$body` with `$T` the library type of the sub-byte integer or
/// complex dtype `$dt` (the families whose NumPy face is compiled per
/// type), or `$other` for any other dtype.
#[macro_export]
macro_rules! with_fixed {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {{
        use mldtypes::dtype::DType as D;
        match $dt {
            D::Int1 => {
                type $T = mldtypes::int1;
                $body
            }
            D::UInt1 => {
                type $T = mldtypes::uint1;
                $body
            }
            D::Int2 => {
                type $T = mldtypes::int2;
                $body
            }
            D::UInt2 => {
                type $T = mldtypes::uint2;
                $body
            }
            D::Int4 => {
                type $T = mldtypes::int4;
                $body
            }
            D::UInt4 => {
                type $T = mldtypes::uint4;
                $body
            }
            D::BComplex32 => {
                type $T = mldtypes::bcomplex32;
                $body
            }
            D::Complex32 => {
                type $T = mldtypes::complex32;
                $body
            }
            _ => $other,
        }
    }};
}
