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

            /// The canonical NumPy / ml_dtypes name, e.g. `"float8_e4m3fn"`
            /// (`numpy.dtype(t).name`).
            ///
            /// # Examples
            ///
            /// ```
            /// use mldtypes::dtype::DType;
            /// assert_eq!(DType::Float8E4M3FN.name(), "float8_e4m3fn");
            /// assert_eq!(DType::BFloat16.name(), "bfloat16");
            /// assert_eq!(DType::Int4.name(), "int4");
            /// assert_eq!(DType::Bool.name(), "bool");
            /// ```
            pub const fn name(self) -> &'static str {
                match self { $(DType::$var => $name,)* }
            }

            /// Number of significant bits of one element (4 for `int4`, 6 for
            /// `float6_e2m3fn`, 1 for `bool`'s value… `bool` reports 8 as NumPy does).
            /// For the ml_dtypes types this is `finfo(t).bits` / `iinfo(t).bits`.
            ///
            /// # Examples
            ///
            /// ```
            /// use mldtypes::dtype::DType;
            /// // ml_dtypes 0.6.0: iinfo(int4).bits == 4, finfo(float6_e2m3fn).bits == 6
            /// assert_eq!(DType::Int4.bits(), 4);
            /// assert_eq!(DType::Float6E2M3FN.bits(), 6);
            /// assert_eq!(DType::Bool.bits(), 8);
            /// assert_eq!(DType::Complex64.bits(), 64);
            /// ```
            pub const fn bits(self) -> u32 {
                match self { $(DType::$var => $bits,)* }
            }

            /// The kind (bool, signed, unsigned, float, complex).
            ///
            /// # Examples
            ///
            /// ```
            /// use mldtypes::dtype::{DType, Kind};
            /// assert_eq!(DType::Int2.kind(), Kind::Signed);
            /// assert_eq!(DType::UInt4.kind(), Kind::Unsigned);
            /// // NumPy reports kind 'V' for ml_dtypes' floats; here they are floats.
            /// assert_eq!(DType::Float8E5M2.kind(), Kind::Float);
            /// assert_eq!(DType::BComplex32.kind(), Kind::Complex);
            /// ```
            pub const fn kind(self) -> Kind {
                match self { $(DType::$var => Kind::$kind,)* }
            }

            /// The floating-point format descriptor of a real float dtype, or of
            /// the component of a complex one; `None` for bool and integers.
            ///
            /// # Examples
            ///
            /// ```
            /// use mldtypes::dtype::DType;
            /// use mldtypes::format::{BFLOAT16, FLOAT8_E4M3FN};
            /// assert_eq!(DType::Float8E4M3FN.format(), Some(FLOAT8_E4M3FN));
            /// assert_eq!(DType::BComplex32.format(), Some(BFLOAT16)); // two bfloat16
            /// assert_eq!(DType::Int8.format(), None);
            /// assert_eq!(DType::Float8E4M3FN.format().unwrap().max_finite(), 448.0);
            /// ```
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
    /// in ml_dtypes and NumPy (`numpy.dtype(t).itemsize`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// // ml_dtypes 0.6.0: numpy.dtype(int4).itemsize == 1, numpy.dtype(float6_e2m3fn).itemsize == 1
    /// assert_eq!(DType::Int4.itemsize(), 1);
    /// assert_eq!(DType::Float6E2M3FN.itemsize(), 1);
    /// assert_eq!(DType::BFloat16.itemsize(), 2);
    /// assert_eq!(DType::Complex64.itemsize(), 8);
    /// assert_eq!(DType::Complex128.itemsize(), 16);
    /// ```
    pub const fn itemsize(self) -> usize {
        let b = self.bits();
        if b < 8 {
            1
        } else {
            (b / 8) as usize
        }
    }

    /// Whether this is a real floating-point dtype.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert!(DType::Float8E8M0FNU.is_float());
    /// assert!(DType::Float32.is_float());
    /// assert!(!DType::Complex64.is_float()); // complex, not real
    /// assert!(!DType::Int4.is_float());
    /// ```
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }

    /// Whether this is a (signed or unsigned) integer dtype.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert!(DType::Int4.is_integer());
    /// assert!(DType::UInt1.is_integer());
    /// assert!(!DType::Bool.is_integer());
    /// assert!(!DType::Float16.is_integer());
    /// ```
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Signed | Kind::Unsigned)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which family of short dtype codes to read or print.
///
/// The seed documents use three incompatible short namings; the same string can
/// mean different dtypes in each (`c8` is complex64 in NumPy's byte naming but
/// complex128 in the 2020 JAX table; `u8` is uint64 in bytes but uint8 in bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Naming {
    /// NumPy kind + itemsize in bytes, and the current JAX promotion page's table
    /// (`b1 u1 u2 u4 u8 i1 … bf f2 f4 f8 c8 c16`); `c8` = complex64.
    Bytes,
    /// The JEP 9407 appendix tables: kind + width in bits
    /// (`b u8 u16 … i64 bf16 f16 f32 f64 c64 c128`).
    Bits,
    /// The October 2020 JAX table: complex sized by component bytes and signed
    /// integers written `s` (`s2` = int16, `c4` = complex64, `c8` = complex128).
    Legacy2020,
}

/// Error returned when a string names no known dtype.
///
/// Carries the closest valid spellings (by edit distance) as suggestions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDTypeError {
    /// The string that failed to parse.
    pub input: String,
    /// Up to three valid names closest to `input` (by Levenshtein distance).
    pub suggestions: Vec<&'static str>,
}

impl std::fmt::Display for ParseDTypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown dtype {:?}", self.input)?;
        match self.suggestions.as_slice() {
            [] => Ok(()),
            [one] => write!(f, "; did you mean {one:?}?"),
            many => {
                let quoted: Vec<String> = many.iter().map(|s| format!("{s:?}")).collect();
                write!(f, "; did you mean one of {}?", quoted.join(", "))
            }
        }
    }
}

impl std::error::Error for ParseDTypeError {}

/// Common aliases accepted by [`DType::from_str`](std::str::FromStr) besides the
/// canonical names and NumPy codes (NumPy's own aliases such as `float` = float64,
/// `half`, `double`, and the ML shorthands `bf16`, `fp16`, `fp32`, …).
const ALIASES: &[(&str, DType)] = &[
    ("bool_", DType::Bool),
    ("bf16", DType::BFloat16),
    ("fp16", DType::Float16),
    ("half", DType::Float16),
    ("fp32", DType::Float32),
    ("single", DType::Float32),
    ("float", DType::Float64),
    ("double", DType::Float64),
    ("fp64", DType::Float64),
    ("byte", DType::Int8),
    ("ubyte", DType::UInt8),
    ("short", DType::Int16),
    ("ushort", DType::UInt16),
    ("intc", DType::Int32),
    ("uintc", DType::UInt32),
    ("int", DType::Int64),
    ("int_", DType::Int64),
    ("long", DType::Int64),
    ("longlong", DType::Int64),
    ("uint", DType::UInt64),
    ("ulong", DType::UInt64),
    ("ulonglong", DType::UInt64),
    ("csingle", DType::Complex64),
    ("complex", DType::Complex128),
    ("cdouble", DType::Complex128),
    ("e4m3", DType::Float8E4M3FN),
    ("e5m2", DType::Float8E5M2),
    ("fp8_e4m3", DType::Float8E4M3FN),
    ("fp8_e5m2", DType::Float8E5M2),
    ("fp4", DType::Float4E2M1FN),
];

/// NumPy's one-character type codes (`np.dtype('f').name == 'float32'`).
const NUMPY_CHARS: &[(char, DType)] = &[
    ('?', DType::Bool),
    ('b', DType::Int8),
    ('B', DType::UInt8),
    ('h', DType::Int16),
    ('H', DType::UInt16),
    ('i', DType::Int32),
    ('I', DType::UInt32),
    ('l', DType::Int64),
    ('q', DType::Int64),
    ('L', DType::UInt64),
    ('Q', DType::UInt64),
    ('e', DType::Float16),
    ('f', DType::Float32),
    ('d', DType::Float64),
    ('F', DType::Complex64),
    ('D', DType::Complex128),
];

/// The short codes of each [`Naming`], as the seed tables print them.
const BYTE_CODES: &[(&str, DType)] = &[
    ("b1", DType::Bool),
    ("u1", DType::UInt8),
    ("u2", DType::UInt16),
    ("u4", DType::UInt32),
    ("u8", DType::UInt64),
    ("i1", DType::Int8),
    ("i2", DType::Int16),
    ("i4", DType::Int32),
    ("i8", DType::Int64),
    ("bf", DType::BFloat16),
    ("f2", DType::Float16),
    ("f4", DType::Float32),
    ("f8", DType::Float64),
    ("c8", DType::Complex64),
    ("c16", DType::Complex128),
];
const BIT_CODES: &[(&str, DType)] = &[
    ("b", DType::Bool),
    ("u8", DType::UInt8),
    ("u16", DType::UInt16),
    ("u32", DType::UInt32),
    ("u64", DType::UInt64),
    ("i8", DType::Int8),
    ("i16", DType::Int16),
    ("i32", DType::Int32),
    ("i64", DType::Int64),
    ("bf16", DType::BFloat16),
    ("f16", DType::Float16),
    ("f32", DType::Float32),
    ("f64", DType::Float64),
    ("c64", DType::Complex64),
    ("c128", DType::Complex128),
];
const LEGACY_2020_CODES: &[(&str, DType)] = &[
    ("b1", DType::Bool),
    ("u1", DType::UInt8),
    ("u2", DType::UInt16),
    ("u4", DType::UInt32),
    ("u8", DType::UInt64),
    ("i1", DType::Int8),
    ("i2", DType::Int16),
    ("s2", DType::Int16),
    ("i4", DType::Int32),
    ("i8", DType::Int64),
    ("bf", DType::BFloat16),
    ("f2", DType::Float16),
    ("f4", DType::Float32),
    ("f8", DType::Float64),
    ("c4", DType::Complex64),
    ("c8", DType::Complex128),
];

impl Naming {
    fn codes(self) -> &'static [(&'static str, DType)] {
        match self {
            Naming::Bytes => BYTE_CODES,
            Naming::Bits => BIT_CODES,
            Naming::Legacy2020 => LEGACY_2020_CODES,
        }
    }
}

/// Levenshtein edit distance between two strings (by `char`).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

impl DType {
    /// The short code of the current JAX promotion page and of NumPy's
    /// `kind + itemsize` ([`Naming::Bytes`]): `b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4
    /// f8 c8 c16`. Dtypes without a short code in the seeds (sub-byte integers,
    /// the float8/6/4 formats, complex32, bcomplex32) return their canonical name.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::Complex64.short_code(), "c8");
    /// assert_eq!(DType::BFloat16.short_code(), "bf");
    /// assert_eq!(DType::Int4.short_code(), "int4");
    /// ```
    pub fn short_code(self) -> &'static str {
        self.code(Naming::Bytes)
    }

    /// The short code of this dtype in the given [`Naming`], or the canonical
    /// name when that naming has no code for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, Naming};
    /// assert_eq!(DType::Int16.code(Naming::Bits), "i16");
    /// assert_eq!(DType::Int16.code(Naming::Legacy2020), "i2");
    /// assert_eq!(DType::Complex128.code(Naming::Legacy2020), "c8");
    /// ```
    pub fn code(self, naming: Naming) -> &'static str {
        naming
            .codes()
            .iter()
            .find(|(_, d)| *d == self)
            .map_or(self.name(), |(c, _)| c)
    }

    /// Parses a short code of one [`Naming`] (exactly as the seed tables print
    /// them), falling back to canonical names.
    ///
    /// # Errors
    ///
    /// [`ParseDTypeError`] with suggestions when `s` is neither a code of that
    /// naming nor a canonical name.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, Naming};
    /// assert_eq!(DType::parse_code("c8", Naming::Legacy2020), Ok(DType::Complex128));
    /// assert_eq!(DType::parse_code("c8", Naming::Bytes), Ok(DType::Complex64));
    /// assert_eq!(DType::parse_code("u8", Naming::Bits), Ok(DType::UInt8));
    /// assert!(DType::parse_code("s2", Naming::Bytes).is_err());
    /// ```
    pub fn parse_code(s: &str, naming: Naming) -> Result<DType, ParseDTypeError> {
        let t = s.trim();
        if let Some((_, d)) = naming.codes().iter().find(|(c, _)| *c == t) {
            return Ok(*d);
        }
        if let Some(d) = DType::ALL.iter().find(|d| d.name() == t) {
            return Ok(*d);
        }
        let mut candidates: Vec<&'static str> = naming.codes().iter().map(|(c, _)| *c).collect();
        candidates.extend(DType::ALL.iter().map(|d| d.name()));
        Err(suggest(t, &candidates))
    }

    /// Parses the naming of the October 2020 JAX promotion table, where
    /// `s2` = int16, `c4` = complex64 and `c8` = complex128; canonical names are
    /// accepted too. Shorthand for [`DType::parse_code`] with
    /// [`Naming::Legacy2020`].
    ///
    /// # Errors
    ///
    /// [`ParseDTypeError`] for anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::parse_legacy_2020("s2"), Ok(DType::Int16));
    /// assert_eq!(DType::parse_legacy_2020("c4"), Ok(DType::Complex64));
    /// assert_eq!(DType::parse_legacy_2020("c8"), Ok(DType::Complex128));
    /// ```
    pub fn parse_legacy_2020(s: &str) -> Result<DType, ParseDTypeError> {
        DType::parse_code(s, Naming::Legacy2020)
    }

    /// Every spelling [`DType::from_str`](std::str::FromStr) accepts without a
    /// byte-order prefix: canonical names, aliases, NumPy codes.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert!(DType::accepted_names().contains(&"bf16"));
    /// ```
    pub fn accepted_names() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = DType::ALL.iter().map(|d| d.name()).collect();
        v.extend(ALIASES.iter().map(|(a, _)| *a));
        v.extend(BYTE_CODES.iter().map(|(c, _)| *c));
        v.extend([
            "bool8", "?", "b", "B", "h", "H", "i", "I", "l", "q", "L", "Q", "e", "f",
        ]);
        v.extend(["d", "F", "D"]);
        v
    }
}

fn suggest(input: &str, candidates: &[&'static str]) -> ParseDTypeError {
    let lower = input.to_ascii_lowercase();
    let mut scored: Vec<(usize, &'static str)> = candidates
        .iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), *c))
        .collect();
    scored.sort_by_key(|&(d, c)| (d, c.len(), c));
    scored.dedup_by_key(|(_, c)| *c);
    let limit = (input.chars().count() / 2).max(2);
    let suggestions = scored
        .iter()
        .filter(|(d, _)| *d <= limit)
        .take(3)
        .map(|(_, c)| *c)
        .collect();
    ParseDTypeError {
        input: input.to_string(),
        suggestions,
    }
}

impl std::str::FromStr for DType {
    type Err = ParseDTypeError;

    /// Parses a dtype the way `np.dtype(...)` / `jnp.dtype(...)` would read a
    /// string: canonical names (`"float8_e4m3fn"`), NumPy one-character codes
    /// (`"?"`, `"f"`, `"D"`), NumPy kind + itemsize codes with an optional byte
    /// order (`"b1"`, `"<f4"`, `"=i8"`, `"c16"`; `c8` = complex64), the seed
    /// tables' `bf`, and aliases (`"bf16"`, `"fp16"`, `"half"`, `"float"` =
    /// float64, `"double"`). Canonical names and aliases are matched
    /// case-insensitively.
    ///
    /// # Errors
    ///
    /// [`ParseDTypeError`], carrying the closest valid names.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!("<f4".parse::<DType>(), Ok(DType::Float32));
    /// assert_eq!("c8".parse::<DType>(), Ok(DType::Complex64));
    /// assert_eq!("bf16".parse::<DType>(), Ok(DType::BFloat16));
    /// assert_eq!("?".parse::<DType>(), Ok(DType::Bool));
    /// let err = "flaot32".parse::<DType>().unwrap_err();
    /// assert_eq!(err.suggestions[0], "float32");
    /// ```
    fn from_str(s: &str) -> Result<DType, ParseDTypeError> {
        let t = s.trim();
        if let Some(d) = DType::ALL.iter().find(|d| d.name() == t) {
            return Ok(*d);
        }
        // NumPy byte-order prefix: only meaningful before a type code.
        let code = t.strip_prefix(['<', '>', '=', '|']).unwrap_or(t);
        let mut chars = code.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if let Some((_, d)) = NUMPY_CHARS.iter().find(|(k, _)| *k == c) {
                return Ok(*d);
            }
        }
        if let Some((_, d)) = BYTE_CODES.iter().find(|(k, _)| *k == code) {
            return Ok(*d);
        }
        if code == "bool8" {
            return Ok(DType::Bool);
        }
        let lower = t.to_ascii_lowercase();
        if let Some(d) = DType::ALL.iter().find(|d| d.name() == lower) {
            return Ok(*d);
        }
        if let Some((_, d)) = ALIASES.iter().find(|(a, _)| *a == lower) {
            return Ok(*d);
        }
        Err(suggest(t, &DType::accepted_names()))
    }
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn canonical_names_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.name().parse::<DType>(), Ok(*d));
            assert_eq!(d.name().to_uppercase().parse::<DType>(), Ok(*d));
        }
    }

    #[test]
    fn numpy_codes() {
        let cases = [
            ("?", DType::Bool),
            ("b1", DType::Bool),
            ("|b1", DType::Bool),
            ("i1", DType::Int8),
            ("u2", DType::UInt16),
            ("<f4", DType::Float32),
            (">f8", DType::Float64),
            ("=i8", DType::Int64),
            ("f8", DType::Float64),
            ("c8", DType::Complex64),
            ("c16", DType::Complex128),
            ("<c16", DType::Complex128),
            ("e", DType::Float16),
            ("D", DType::Complex128),
            ("bf", DType::BFloat16),
            ("f2", DType::Float16),
            ("float", DType::Float64),
            ("double", DType::Float64),
            ("half", DType::Float16),
            ("fp16", DType::Float16),
            ("int", DType::Int64),
            ("complex", DType::Complex128),
            ("bf16", DType::BFloat16),
            ("BFloat16", DType::BFloat16),
        ];
        for (s, d) in cases {
            assert_eq!(s.parse::<DType>(), Ok(d), "{s}");
        }
        for bad in ["s2", "c4", "f16", "<bf16x", "", "<"] {
            assert!(bad.parse::<DType>().is_err(), "{bad}");
        }
    }

    #[test]
    fn codes_round_trip_in_every_naming() {
        for naming in [Naming::Bytes, Naming::Bits, Naming::Legacy2020] {
            for d in DType::ALL {
                assert_eq!(DType::parse_code(d.code(naming), naming), Ok(*d));
            }
        }
        for (_, d) in BYTE_CODES {
            assert_eq!(d.short_code().parse::<DType>(), Ok(*d));
        }
    }

    #[test]
    fn suggestions_are_closest_names() {
        let e = "bfloat15".parse::<DType>().unwrap_err();
        assert_eq!(e.suggestions[0], "bfloat16");
        let e = "float8_e4m3fx".parse::<DType>().unwrap_err();
        assert_eq!(e.suggestions[0], "float8_e4m3fn");
        assert!(e.to_string().contains("did you mean"));
        let e = "zzzzzzzzzzzzzzzzzz".parse::<DType>().unwrap_err();
        assert!(e.suggestions.is_empty());
        assert_eq!(e.to_string(), "unknown dtype \"zzzzzzzzzzzzzzzzzz\"");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
