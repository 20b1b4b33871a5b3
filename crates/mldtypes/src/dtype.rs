//! The [`DType`] enum: every dtype that JAX and ml_dtypes know, with its
//! canonical name, width, and kind.
//!
//! Canonical names are NumPy's and ml_dtypes' (`bool`, `int8`, `bfloat16`,
//! `float8_e4m3fn`, `complex64`, …).
//!
//! # Examples
//!
//! ```
//! use mldtypes::dtype::{DType, Kind};
//! assert_eq!(DType::Float8E4M3FN.name(), "float8_e4m3fn");
//! assert_eq!(DType::BFloat16.bits(), 16);
//! assert_eq!(DType::Int4.itemsize(), 1);
//! assert_eq!(DType::Complex64.kind(), Kind::Complex);
//! ```

use crate::format::{self, Format};

/// The kind of a dtype, as NumPy's `dtype.kind` groups them
/// (`b`, `i`, `u`, `f`, `c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `bool` (NumPy kind `b`).
    Bool,
    /// Signed integers (kind `i`).
    Signed,
    /// Unsigned integers (kind `u`).
    Unsigned,
    /// Real floating point (kind `f`, and ml_dtypes' floats, whose NumPy kind is `V`).
    Float,
    /// Complex floating point (kind `c`).
    Complex,
}

macro_rules! dtypes {
    ($( $(#[$doc:meta])* $var:ident = $name:literal, $bits:literal, $kind:ident, $fmt:expr; )*) => {
        /// A dtype: every scalar type of NumPy, ml_dtypes and JAX.
        ///
        /// Sub-byte types occupy one byte each when unpacked (`itemsize() == 1`),
        /// as in ml_dtypes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DType {
            $( $(#[$doc])* $var, )*
        }

        impl DType {
            /// Every dtype, in declaration order (bool, signed, unsigned, floats, complex).
            pub const ALL: &'static [DType] = &[$(DType::$var),*];

            /// The canonical NumPy / ml_dtypes name, e.g. `"float8_e4m3fn"`.
            pub const fn name(self) -> &'static str {
                match self { $(DType::$var => $name,)* }
            }

            /// Number of significant bits of one element (4 for `int4`, 6 for
            /// `float6_e2m3fn`, 1 for `bool`'s value… `bool` reports 8 as NumPy does).
            pub const fn bits(self) -> u32 {
                match self { $(DType::$var => $bits,)* }
            }

            /// The kind (bool, signed, unsigned, float, complex).
            pub const fn kind(self) -> Kind {
                match self { $(DType::$var => Kind::$kind,)* }
            }

            /// The floating-point format descriptor of a real float dtype, or of
            /// the component of a complex one; `None` for bool and integers.
            pub const fn format(self) -> Option<Format> {
                match self { $(DType::$var => $fmt,)* }
            }
        }
    };
}

dtypes! {
    /// `bool`: one byte, `0` or `1`.
    Bool = "bool", 8, Bool, None;
    /// `int1`: 1-bit two's-complement integer, values −1 … 0 (ml_dtypes).
    Int1 = "int1", 1, Signed, None;
    /// `int2`: 2-bit two's-complement integer, −2 … 1 (ml_dtypes).
    Int2 = "int2", 2, Signed, None;
    /// `int4`: 4-bit two's-complement integer, −8 … 7 (ml_dtypes).
    Int4 = "int4", 4, Signed, None;
    /// `int8`.
    Int8 = "int8", 8, Signed, None;
    /// `int16`.
    Int16 = "int16", 16, Signed, None;
    /// `int32`.
    Int32 = "int32", 32, Signed, None;
    /// `int64`.
    Int64 = "int64", 64, Signed, None;
    /// `uint1`: 1-bit unsigned integer, 0 … 1 (ml_dtypes).
    UInt1 = "uint1", 1, Unsigned, None;
    /// `uint2`: 2-bit unsigned integer, 0 … 3 (ml_dtypes).
    UInt2 = "uint2", 2, Unsigned, None;
    /// `uint4`: 4-bit unsigned integer, 0 … 15 (ml_dtypes).
    UInt4 = "uint4", 4, Unsigned, None;
    /// `uint8`.
    UInt8 = "uint8", 8, Unsigned, None;
    /// `uint16`.
    UInt16 = "uint16", 16, Unsigned, None;
    /// `uint32`.
    UInt32 = "uint32", 32, Unsigned, None;
    /// `uint64`.
    UInt64 = "uint64", 64, Unsigned, None;
    /// `float4_e2m1fn` (OCP MX FP4).
    Float4E2M1FN = "float4_e2m1fn", 4, Float, Some(format::FLOAT4_E2M1FN);
    /// `float6_e2m3fn` (OCP MX FP6).
    Float6E2M3FN = "float6_e2m3fn", 6, Float, Some(format::FLOAT6_E2M3FN);
    /// `float6_e3m2fn` (OCP MX FP6).
    Float6E3M2FN = "float6_e3m2fn", 6, Float, Some(format::FLOAT6_E3M2FN);
    /// `float8_e3m4`.
    Float8E3M4 = "float8_e3m4", 8, Float, Some(format::FLOAT8_E3M4);
    /// `float8_e4m3`.
    Float8E4M3 = "float8_e4m3", 8, Float, Some(format::FLOAT8_E4M3);
    /// `float8_e8m0fnu` (OCP MX scale).
    Float8E8M0FNU = "float8_e8m0fnu", 8, Float, Some(format::FLOAT8_E8M0FNU);
    /// `float8_e4m3b11fnuz`.
    Float8E4M3B11FNUZ = "float8_e4m3b11fnuz", 8, Float, Some(format::FLOAT8_E4M3B11FNUZ);
    /// `float8_e4m3fn` (OCP FP8 E4M3).
    Float8E4M3FN = "float8_e4m3fn", 8, Float, Some(format::FLOAT8_E4M3FN);
    /// `float8_e4m3fnuz`.
    Float8E4M3FNUZ = "float8_e4m3fnuz", 8, Float, Some(format::FLOAT8_E4M3FNUZ);
    /// `float8_e5m2` (OCP FP8 E5M2).
    Float8E5M2 = "float8_e5m2", 8, Float, Some(format::FLOAT8_E5M2);
    /// `float8_e5m2fnuz`.
    Float8E5M2FNUZ = "float8_e5m2fnuz", 8, Float, Some(format::FLOAT8_E5M2FNUZ);
    /// `bfloat16`.
    BFloat16 = "bfloat16", 16, Float, Some(format::BFLOAT16);
    /// `float16` (IEEE binary16).
    Float16 = "float16", 16, Float, Some(format::FLOAT16);
    /// `float32` (IEEE binary32).
    Float32 = "float32", 32, Float, None;
    /// `float64` (IEEE binary64).
    Float64 = "float64", 64, Float, None;
    /// `complex32`: two IEEE float16 (real, imaginary); ml_dtypes-compatible layout.
    Complex32 = "complex32", 32, Complex, Some(format::FLOAT16);
    /// `bcomplex32`: two bfloat16 (real, imaginary).
    BComplex32 = "bcomplex32", 32, Complex, Some(format::BFLOAT16);
    /// `complex64`: two float32.
    Complex64 = "complex64", 64, Complex, None;
    /// `complex128`: two float64.
    Complex128 = "complex128", 128, Complex, None;
}

impl DType {
    /// Bytes one element occupies unpacked: sub-byte types take one byte, as
    /// in ml_dtypes and NumPy.
    pub const fn itemsize(self) -> usize {
        let b = self.bits();
        if b < 8 {
            1
        } else {
            (b / 8) as usize
        }
    }

    /// Whether this is a real floating-point dtype.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }

    /// Whether this is a (signed or unsigned) integer dtype.
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Signed | Kind::Unsigned)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
