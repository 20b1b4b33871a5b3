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

use crate::format::{self, Format, P3109};

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
        /// A dtype: every scalar type of NumPy, ml_dtypes and JAX, and the
        /// IEEE P3109 family.
        ///
        /// Sub-byte types occupy one byte each when unpacked (`itemsize() == 1`),
        /// as in ml_dtypes; P3109 members of 9 to 16 bits occupy two.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DType {
            $( $(#[$doc])* $var, )*
            /// An IEEE P3109 format (`p3109_k8p3se`, …; see [`P3109`]): a
            /// real float, stored in the low bits of one byte (K ≤ 8) or of
            /// two (K ≤ 16).
            P3109(P3109),
        }

        impl DType {
            /// Every named dtype, in declaration order (bool, signed, unsigned,
            /// floats, complex); the IEEE P3109 members are listed by
            /// [`DType::every`].
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
                match self { $(DType::$var => $name,)* DType::P3109(p) => p.name() }
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
                match self { $(DType::$var => $bits,)* DType::P3109(p) => p.k() }
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
                match self { $(DType::$var => Kind::$kind,)* DType::P3109(_) => Kind::Float }
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
                match self { $(DType::$var => $fmt,)* DType::P3109(p) => Some(p.format()) }
            }

            /// A dense index of every dtype: the position in [`DType::ALL`]
            /// for the named ones, `ALL.len() + P3109::index` for the
            /// family (`0..DType::COUNT`), for tables indexed by dtype.
            ///
            /// # Examples
            ///
            /// ```
            /// use mldtypes::dtype::DType;
            /// assert_eq!(DType::Bool.ordinal(), 0);
            /// for (i, d) in DType::every().enumerate() {
            ///     assert_eq!(d.ordinal(), i);
            ///     assert_eq!(DType::from_ordinal(i), Some(d));
            /// }
            /// ```
            pub const fn ordinal(self) -> usize {
                let mut i = 0;
                $(
                    if matches!(self, DType::$var) {
                        return i;
                    }
                    i += 1;
                )*
                match self {
                    DType::P3109(p) => i + p.index(),
                    _ => unreachable!(),
                }
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
    /// Number of dtypes: the named ones and the 510 IEEE P3109 members.
    pub const COUNT: usize = DType::ALL.len() + P3109::COUNT;

    /// The dtype of [`DType::ordinal`] `i`, `None` past [`DType::COUNT`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::from_ordinal(DType::ALL.len()).unwrap().name(), "p3109_k2p1se");
    /// assert_eq!(DType::from_ordinal(DType::COUNT), None);
    /// ```
    pub const fn from_ordinal(i: usize) -> Option<DType> {
        if i < DType::ALL.len() {
            return Some(DType::ALL[i]);
        }
        match P3109::from_index(i - DType::ALL.len()) {
            Some(p) => Some(DType::P3109(p)),
            None => None,
        }
    }

    /// Every dtype: the named ones ([`DType::ALL`]) then every IEEE P3109
    /// member in [`P3109::index`] order — the registry a binding
    /// enumerates.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::every().count(), DType::COUNT);
    /// assert_eq!(DType::every().filter(|d| d.is_p3109()).count(), 510);
    /// ```
    pub fn every() -> impl ExactSizeIterator<Item = DType> + Clone {
        DType::ALL
            .iter()
            .copied()
            .chain(P3109::all().map(DType::P3109))
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// The IEEE P3109 member of width `k`, precision `p`, signedness and
    /// domain, as a dtype.
    ///
    /// # Errors
    ///
    /// [`crate::format::FormatError::P3109`] outside the family.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::p3109(8, 3, true, true).unwrap().name(), "p3109_k8p3se");
    /// assert_eq!(DType::p3109(16, 7, false, false).unwrap().itemsize(), 2);
    /// ```
    pub const fn p3109(
        k: u32,
        p: u32,
        signed: bool,
        extended: bool,
    ) -> Result<DType, crate::format::FormatError> {
        match P3109::new(k, p, signed, extended) {
            Ok(m) => Ok(DType::P3109(m)),
            Err(e) => Err(e),
        }
    }

    /// Whether every value of the real float dtype `self` is a value of `to`
    /// ([`Format::fits_in`] for two formats; float32 and float64 hold every
    /// format that [fits](Format::fits_f32) them): the value rule by which a
    /// cast is "safe" in NumPy for the IEEE P3109 types. `None` when either
    /// dtype is not a real float.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// let k8p3se = DType::p3109(8, 3, true, true).unwrap();
    /// assert_eq!(k8p3se.is_safe_cast_to(DType::Float16), Some(true));
    /// assert_eq!(k8p3se.is_safe_cast_to(DType::Float8E5M2), Some(false)); // max 49152 is not there
    /// assert_eq!(DType::p3109(16, 1, true, true).unwrap().is_safe_cast_to(DType::Float64), Some(false));
    /// assert_eq!(DType::Float32.is_safe_cast_to(DType::Float64), Some(true));
    /// assert_eq!(DType::Int8.is_safe_cast_to(DType::Float32), None);
    /// ```
    pub fn is_safe_cast_to(self, to: DType) -> Option<bool> {
        if !self.is_float() || !to.is_float() {
            return None;
        }
        Some(match (self, to) {
            (a, b) if a == b => true,
            (DType::Float32, DType::Float64) => true,
            (DType::Float32 | DType::Float64, _) => false,
            (a, DType::Float64) => a.format().is_some_and(|f| f.fits_f64()),
            (a, DType::Float32) => a.format().is_some_and(|f| f.fits_f32()),
            (a, b) => match (a.format(), b.format()) {
                (Some(f), Some(g)) => f.fits_in(&g),
                _ => false,
            },
        })
    }

    /// Whether this is an IEEE P3109 member.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert!("binary8p3se".parse::<DType>().unwrap().is_p3109());
    /// assert!(!DType::Float8E5M2.is_p3109());
    /// ```
    pub const fn is_p3109(self) -> bool {
        matches!(self, DType::P3109(_))
    }

    /// Bytes one element occupies unpacked: sub-byte types take one byte, as
    /// in ml_dtypes and NumPy (`numpy.dtype(t).itemsize`); IEEE P3109
    /// members of 9 to 16 bits take two.
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
        self.bits().div_ceil(8) as usize
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

impl DType {
    /// The 20 types ml_dtypes 0.6.0 registers with NumPy, in its
    /// registration order (which fixes their NumPy type numbers): the 12
    /// float formats, the 6 sub-byte integers, the 2 complex types. The
    /// Python package registers exactly these, in this order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::ML_DTYPES[0], DType::BFloat16);
    /// assert_eq!(DType::ML_DTYPES.len(), 20);
    /// assert!(DType::ML_DTYPES.iter().all(|d| d.itemsize() <= 4));
    /// ```
    pub const ML_DTYPES: [DType; 20] = [
        DType::BFloat16,
        DType::Float8E3M4,
        DType::Float8E4M3,
        DType::Float8E4M3B11FNUZ,
        DType::Float8E4M3FN,
        DType::Float8E4M3FNUZ,
        DType::Float8E5M2,
        DType::Float8E5M2FNUZ,
        DType::Float6E2M3FN,
        DType::Float6E3M2FN,
        DType::Float4E2M1FN,
        DType::Float8E8M0FNU,
        DType::Int1,
        DType::UInt1,
        DType::Int2,
        DType::UInt2,
        DType::Int4,
        DType::UInt4,
        DType::BComplex32,
        DType::Complex32,
    ];
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// serde (feature `serde`): a dtype is its canonical name, a string
/// (`"bfloat16"`, `"float8_e4m3fn"`, `"int4"`). Deserialization reads
/// every spelling [`DType::from_str`](std::str::FromStr) reads (NumPy codes
/// such as `"<f4"`, aliases such as `"bf16"`), and fails with the
/// [`ParseDTypeError`] text for anything else (a big-endian `">f4"`
/// included).
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// assert_eq!(serde_json::to_string(&DType::Float8E4M3FN).unwrap(), "\"float8_e4m3fn\"");
/// let d: Vec<DType> = serde_json::from_str(r#"["bfloat16", "bf16", "<f4"]"#).unwrap();
/// assert_eq!(d, [DType::BFloat16, DType::BFloat16, DType::Float32]);
/// let e = serde_json::from_str::<DType>(r#"">f4""#).unwrap_err();
/// assert!(e.to_string().contains("big-endian float32"));
/// ```
#[cfg(feature = "serde")]
impl serde::Serialize for DType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// See the [`Serialize`](serde::Serialize) implementation.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for DType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = DType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a dtype name such as \"bfloat16\" or \"<f4\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DType, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Name)
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
/// Carries the closest valid spellings (by edit distance) as suggestions, and,
/// for a seed table's short code read outside its table, every meaning that
/// code has (see [`DType::parse_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDTypeError {
    /// The string that failed to parse.
    pub input: String,
    /// Up to three valid names closest to `input` (by Levenshtein distance);
    /// empty for inputs longer than [`MAX_SUGGESTION_INPUT`] characters.
    pub suggestions: Vec<&'static str>,
    /// For a short code whose meaning depends on the table (`i8`, `c8`, …):
    /// each naming that has it and the dtype it means there.
    pub readings: Vec<(Naming, DType)>,
    /// For a NumPy type code of a multi-byte dtype with a big-endian byte
    /// order (`">f4"`, or `"=f4"` on a big-endian host): the dtype it names.
    /// mldtypes reads and writes little-endian bytes only, so such a code is
    /// refused rather than read as its little-endian twin.
    pub big_endian: Option<DType>,
}

/// Inputs longer than this many characters get no "did you mean" suggestions
/// (the edit-distance search is skipped), so an error costs time linear in the
/// input however long it is.
pub const MAX_SUGGESTION_INPUT: usize = 64;

/// Error messages quote at most this many characters of an input.
pub const MAX_ECHO: usize = 48;

/// `s` quoted for an error message (`{:?}`), cut to [`MAX_ECHO`] characters
/// with the total length noted when it is longer.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::echo;
/// assert_eq!(echo("int9"), "\"int9\"");
/// assert!(echo(&"9".repeat(100_000)).ends_with("… (100000 characters)"));
/// ```
pub fn echo(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_ECHO {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(MAX_ECHO).collect();
        format!("{head:?}… ({n} characters)")
    }
}

impl std::fmt::Display for ParseDTypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(d) = self.big_endian {
            return write!(
                f,
                "{} is big-endian {d}; mldtypes reads and writes little-endian bytes only: \
                 write {:?} or {:?}",
                echo(&self.input),
                format!("<{}", d.short_code()),
                d.name()
            );
        }
        if !self.readings.is_empty() {
            let meanings: Vec<String> = self
                .readings
                .iter()
                .map(|(n, d)| format!("{d} in {}", n.description()))
                .collect();
            let mut names: Vec<&str> = Vec::new();
            for (_, d) in &self.readings {
                if !names.contains(&d.name()) {
                    names.push(d.name());
                }
            }
            return write!(
                f,
                "{} is a seed-table short code, read only by `table --types` of its own \
                 table: {}; write the dtype's name ({}); `mldtypes dtypes` lists every name",
                echo(&self.input),
                meanings.join(", "),
                names.join(" or ")
            );
        }
        write!(f, "unknown dtype {}", echo(&self.input))?;
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
    /// Every naming.
    pub const ALL: [Naming; 3] = [Naming::Bytes, Naming::Bits, Naming::Legacy2020];

    /// The naming's short codes and the dtypes they mean, in the seed
    /// tables' order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, Naming};
    /// assert_eq!(Naming::Bits.codes()[0], ("b", DType::Bool));
    /// assert_eq!(Naming::Bytes.codes().len(), 15);
    /// ```
    pub const fn codes(self) -> &'static [(&'static str, DType)] {
        match self {
            Naming::Bytes => BYTE_CODES,
            Naming::Bits => BIT_CODES,
            Naming::Legacy2020 => LEGACY_2020_CODES,
        }
    }

    /// A short identifier for output: `numpy-bytes`, `jep9407-bits`, `jax-2020`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::Naming;
    /// assert_eq!(Naming::Bits.id(), "jep9407-bits");
    /// ```
    pub const fn id(self) -> &'static str {
        match self {
            Naming::Bytes => "numpy-bytes",
            Naming::Bits => "jep9407-bits",
            Naming::Legacy2020 => "jax-2020",
        }
    }

    /// Which tables use the naming, for messages and table headers.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::Naming;
    /// assert!(Naming::Legacy2020.description().contains("2020"));
    /// ```
    pub const fn description(self) -> &'static str {
        match self {
            Naming::Bytes => "NumPy's kind + bytes codes, as the current JAX page prints them",
            Naming::Bits => "the kind + bits codes of the JEP 9407 appendix tables",
            Naming::Legacy2020 => "the codes of the October 2020 JAX table",
        }
    }
}

/// Bit-width shorthands (Rust's and PyTorch's style) read by
/// [`DType::parse_name`]; each means the same dtype in every seed naming that
/// has it, and none is a NumPy type string.
const WIDTH_ALIASES: &[(&str, DType)] = &[
    ("i16", DType::Int16),
    ("i32", DType::Int32),
    ("i64", DType::Int64),
    ("u16", DType::UInt16),
    ("u32", DType::UInt32),
    ("u64", DType::UInt64),
    ("f16", DType::Float16),
    ("f32", DType::Float32),
    ("f64", DType::Float64),
    ("c64", DType::Complex64),
    ("c128", DType::Complex128),
];

/// Where a spelling accepted by [`DType::parse_name`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpellingKind {
    /// The canonical NumPy / ml_dtypes name (`float8_e4m3fn`).
    Name,
    /// A NumPy word alias or an ML shorthand (`half`, `double`, `bf16`, `fp8_e4m3`).
    Alias,
    /// A bit-width shorthand (`f32`, `i64`, `c128`).
    Width,
    /// A NumPy type string with a byte-order prefix (`<f4`, `=i8`, `|b1`),
    /// read as `numpy.dtype` reads it; every NumPy code takes one.
    NumPy,
}

/// One spelling of the command line's dtype vocabulary ([`DType::vocabulary`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Spelling {
    /// The text.
    pub text: &'static str,
    /// The dtype it means.
    pub dtype: DType,
    /// Where it comes from.
    pub kind: SpellingKind,
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
        if let Some(p) = P3109::from_name(t).filter(|p| p.name() == t) {
            return Ok(DType::P3109(p));
        }
        let mut candidates: Vec<&'static str> = naming.codes().iter().map(|(c, _)| *c).collect();
        candidates.extend(DType::ALL.iter().map(|d| d.name()));
        Err(suggest(t, &with_p3109_names(t, candidates)))
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
        v.extend(P3109::all().map(P3109::name));
        v.extend(P3109::all().map(P3109::alias));
        v
    }
}

impl DType {
    /// Parses the command line's dtype vocabulary, in which a string means the
    /// same dtype wherever it is read: canonical names and [`SpellingKind::Alias`]
    /// aliases (case-insensitive; the IEEE P3109 names `p3109_k8p3se` and
    /// aliases `binary8p3se` among them), bit-width shorthands (`f32`, `i64`, `c128`),
    /// and NumPy type strings with a byte-order prefix (`<f4`, `=i8`, `|b1`,
    /// `=f`), read as `numpy.dtype` reads them.
    ///
    /// The seed tables' bare short codes (`i8`, `u8`, `c8`, `f4`, `bf`, `s2`,
    /// …) are refused: several mean different dtypes in different tables (`i8`
    /// is int64 in NumPy's byte codes but int8 in the JEP 9407 bit codes; `c8`
    /// is complex64 in NumPy's but complex128 in the 2020 JAX table). The error
    /// lists every reading. [`DType::parse_code`] reads a given table's codes;
    /// [`DType::from_str`](std::str::FromStr) reads strings as `numpy.dtype` does.
    ///
    /// # Errors
    ///
    /// [`ParseDTypeError`] with the code's readings for a bare seed-table code,
    /// with [`ParseDTypeError::big_endian`] set for a big-endian NumPy code of
    /// a multi-byte dtype (`">f4"`), otherwise with suggestions (none for
    /// inputs longer than [`MAX_SUGGESTION_INPUT`] characters).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, Naming};
    /// assert_eq!(DType::parse_name("bfloat16"), Ok(DType::BFloat16));
    /// assert_eq!(DType::parse_name("f32"), Ok(DType::Float32));
    /// assert_eq!(DType::parse_name("<i8"), Ok(DType::Int64));
    /// // Bytes are little-endian everywhere: a big-endian code is refused.
    /// let e = DType::parse_name(">f4").unwrap_err();
    /// assert_eq!(e.big_endian, Some(DType::Float32));
    /// assert_eq!(e.to_string(), "\">f4\" is big-endian float32; mldtypes reads and writes \
    ///     little-endian bytes only: write \"<f4\" or \"float32\"");
    /// assert_eq!(DType::parse_name(">i1"), Ok(DType::Int8)); // one byte: no byte order
    /// assert_eq!(DType::parse_name("Half"), Ok(DType::Float16));
    /// let e = DType::parse_name("i8").unwrap_err();
    /// assert_eq!(e.readings, vec![(Naming::Bytes, DType::Int64), (Naming::Bits, DType::Int8), (Naming::Legacy2020, DType::Int64)]);
    /// assert_eq!(DType::parse_name("f33").unwrap_err().suggestions[0], "f32");
    /// ```
    pub fn parse_name(s: &str) -> Result<DType, ParseDTypeError> {
        let t = s.trim();
        if let Some(sp) = vocabulary_word(t) {
            return Ok(sp.dtype);
        }
        if let Some(r) = prefixed_code(t, numpy_code) {
            return r;
        }
        let readings: Vec<(Naming, DType)> = Naming::ALL
            .iter()
            .filter_map(|n| {
                n.codes()
                    .iter()
                    .find(|(c, _)| *c == t)
                    .map(|(_, d)| (*n, *d))
            })
            .collect();
        if !readings.is_empty() {
            return Err(ParseDTypeError {
                input: t.to_string(),
                suggestions: Vec::new(),
                readings,
                big_endian: None,
            });
        }
        let words: Vec<&'static str> = DType::vocabulary()
            .iter()
            .filter(|sp| sp.kind != SpellingKind::NumPy && !sp.dtype.is_p3109())
            .map(|sp| sp.text)
            .collect();
        Err(suggest(t, &with_p3109_names(t, words)))
    }

    /// Every spelling [`DType::parse_name`] accepts: canonical names, aliases,
    /// bit-width shorthands, and NumPy codes (listed without the byte-order
    /// prefix they need), for `mldtypes dtypes`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::{DType, SpellingKind};
    /// let v = DType::vocabulary();
    /// assert!(v.iter().any(|s| s.text == "fp16" && s.dtype == DType::Float16 && s.kind == SpellingKind::Alias));
    /// assert!(v.iter().any(|s| s.text == "i8" && s.dtype == DType::Int64 && s.kind == SpellingKind::NumPy));
    /// ```
    pub fn vocabulary() -> Vec<Spelling> {
        let mut v: Vec<Spelling> = DType::ALL
            .iter()
            .map(|d| Spelling {
                text: d.name(),
                dtype: *d,
                kind: SpellingKind::Name,
            })
            .collect();
        let mut push = |list: &[(&'static str, DType)], kind| {
            v.extend(
                list.iter()
                    .map(|&(text, dtype)| Spelling { text, dtype, kind }),
            );
        };
        push(ALIASES, SpellingKind::Alias);
        push(&[("bool8", DType::Bool)], SpellingKind::Alias);
        push(WIDTH_ALIASES, SpellingKind::Width);
        push(&BYTE_CODES[..9], SpellingKind::NumPy);
        push(&BYTE_CODES[10..], SpellingKind::NumPy);
        for &(c, d) in NUMPY_CHARS {
            let text: &'static str = NUMPY_CHAR_TEXT
                .iter()
                .find(|(k, _)| *k == c)
                .map_or("?", |(_, t)| t);
            v.push(Spelling {
                text,
                dtype: d,
                kind: SpellingKind::NumPy,
            });
        }
        // The IEEE P3109 family: each name and its interim-report alias.
        for p in P3109::all() {
            let dtype = DType::P3109(p);
            v.push(Spelling {
                text: p.name(),
                dtype,
                kind: SpellingKind::Name,
            });
            v.push(Spelling {
                text: p.alias(),
                dtype,
                kind: SpellingKind::Alias,
            });
        }
        v
    }
}

/// The one-character NumPy codes as strings (for [`DType::vocabulary`]).
const NUMPY_CHAR_TEXT: &[(char, &str)] = &[
    ('?', "?"),
    ('b', "b"),
    ('B', "B"),
    ('h', "h"),
    ('H', "H"),
    ('i', "i"),
    ('I', "I"),
    ('l', "l"),
    ('q', "q"),
    ('L', "L"),
    ('Q', "Q"),
    ('e', "e"),
    ('f', "f"),
    ('d', "d"),
    ('F', "F"),
    ('D', "D"),
];

/// A canonical name, alias or bit-width shorthand (case-insensitive).
fn vocabulary_word(t: &str) -> Option<Spelling> {
    if t.len() > 32 {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let find = |list: &[(&'static str, DType)], kind| {
        list.iter()
            .find(|(a, _)| *a == lower)
            .map(|&(text, dtype)| Spelling { text, dtype, kind })
    };
    DType::ALL
        .iter()
        .find(|d| d.name() == lower)
        .map(|d| Spelling {
            text: d.name(),
            dtype: *d,
            kind: SpellingKind::Name,
        })
        .or_else(|| find(ALIASES, SpellingKind::Alias))
        .or_else(|| find(&[("bool8", DType::Bool)], SpellingKind::Alias))
        .or_else(|| find(WIDTH_ALIASES, SpellingKind::Width))
        .or_else(|| p3109_word(&lower))
}

/// An IEEE P3109 name (`p3109_k8p3se`) or interim-report alias
/// (`binary8p3se`), already lowercase.
fn p3109_word(lower: &str) -> Option<Spelling> {
    let p = P3109::from_name(lower)?;
    let dtype = DType::P3109(p);
    Some(if lower == p.name() {
        Spelling {
            text: p.name(),
            dtype,
            kind: SpellingKind::Name,
        }
    } else {
        Spelling {
            text: p.alias(),
            dtype,
            kind: SpellingKind::Alias,
        }
    })
}

/// The spellings suggestions are drawn from: `words`, and the IEEE P3109
/// names when the input looks like one.
fn with_p3109_names(input: &str, mut words: Vec<&'static str>) -> Vec<&'static str> {
    let lower = input.to_ascii_lowercase();
    if lower.starts_with("p3109") || lower.starts_with("binary") {
        words.extend(P3109::all().map(P3109::name));
        words.extend(P3109::all().map(P3109::alias));
    }
    words
}

/// A NumPy type code after its byte-order prefix: a one-character code or a
/// kind + bytes code (not the seed tables' `bf`).
fn numpy_code(code: &str) -> Option<DType> {
    let mut chars = code.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if let Some((_, d)) = NUMPY_CHARS.iter().find(|(k, _)| *k == c) {
            return Some(*d);
        }
    }
    BYTE_CODES
        .iter()
        .find(|(k, _)| *k == code && *k != "bf")
        .map(|(_, d)| *d)
}

/// A NumPy type code after a byte-order prefix (`<f4`, `|b1`, `=i2`,
/// `>f8`), looked up by `code_of`: `None` if `t` has no prefix or the rest is
/// no code; an error for a multi-byte dtype in big-endian order (`>`, or `=`
/// on a big-endian host), since every byte buffer here is little-endian.
/// One-byte dtypes have no byte order and are accepted with any prefix.
fn prefixed_code(
    t: &str,
    code_of: impl Fn(&str) -> Option<DType>,
) -> Option<Result<DType, ParseDTypeError>> {
    let order = t.chars().next()?;
    if !matches!(order, '<' | '>' | '=' | '|') {
        return None;
    }
    let d = code_of(&t[1..])?;
    let big = order == '>' || (order == '=' && cfg!(target_endian = "big"));
    Some(if big && d.itemsize() > 1 {
        Err(ParseDTypeError {
            input: t.to_string(),
            suggestions: Vec::new(),
            readings: Vec::new(),
            big_endian: Some(d),
        })
    } else {
        Ok(d)
    })
}

fn suggest(input: &str, candidates: &[&'static str]) -> ParseDTypeError {
    let n = input.chars().count();
    let suggestions = if n > MAX_SUGGESTION_INPUT {
        Vec::new()
    } else {
        let lower = input.to_ascii_lowercase();
        let mut scored: Vec<(usize, &'static str)> = candidates
            .iter()
            .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), *c))
            .collect();
        scored.sort_by_key(|&(d, c)| (d, c.len(), c));
        scored.dedup_by_key(|(_, c)| *c);
        let limit = (n / 2).max(2);
        scored
            .iter()
            .filter(|(d, _)| *d <= limit)
            .take(3)
            .map(|(_, c)| *c)
            .collect()
    };
    ParseDTypeError {
        input: input.to_string(),
        suggestions,
        readings: Vec::new(),
        big_endian: None,
    }
}

impl std::str::FromStr for DType {
    type Err = ParseDTypeError;

    /// Parses a dtype the way `np.dtype(...)` / `jnp.dtype(...)` would read a
    /// string: canonical names (`"float8_e4m3fn"`, `"p3109_k8p3se"`; the IEEE
    /// P3109 interim report's `"binary8p3se"` too), NumPy one-character codes
    /// (`"?"`, `"f"`, `"D"`), NumPy kind + itemsize codes with an optional byte
    /// order (`"b1"`, `"<f4"`, `"=i8"`, `"c16"`; `c8` = complex64), the seed
    /// tables' `bf`, and aliases (`"bf16"`, `"fp16"`, `"half"`, `"float"` =
    /// float64, `"double"`). Canonical names and aliases are matched
    /// case-insensitively.
    ///
    /// # Errors
    ///
    /// [`ParseDTypeError`], carrying the closest valid names, or
    /// [`ParseDTypeError::big_endian`] for a big-endian NumPy code of a
    /// multi-byte dtype (`">f4"`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!("<f4".parse::<DType>(), Ok(DType::Float32));
    /// assert_eq!(">f4".parse::<DType>().unwrap_err().big_endian, Some(DType::Float32));
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
        let code_of = |code: &str| {
            let mut chars = code.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                if let Some((_, d)) = NUMPY_CHARS.iter().find(|(k, _)| *k == c) {
                    return Some(*d);
                }
            }
            if code == "bool8" {
                return Some(DType::Bool);
            }
            BYTE_CODES.iter().find(|(k, _)| *k == code).map(|(_, d)| *d)
        };
        // NumPy byte-order prefix: only meaningful before a type code.
        if let Some(r) = prefixed_code(t, code_of) {
            return r;
        }
        if let Some(d) = code_of(t) {
            return Ok(d);
        }
        let lower = t.to_ascii_lowercase();
        if let Some(d) = DType::ALL.iter().find(|d| d.name() == lower) {
            return Ok(*d);
        }
        if let Some((_, d)) = ALIASES.iter().find(|(a, _)| *a == lower) {
            return Ok(*d);
        }
        if let Some(p) = P3109::from_name(t) {
            return Ok(DType::P3109(p));
        }
        let mut words: Vec<&'static str> = DType::ALL.iter().map(|d| d.name()).collect();
        words.extend(ALIASES.iter().map(|(a, _)| *a));
        Err(suggest(t, &with_p3109_names(t, words)))
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
    fn p3109_names_and_aliases() {
        for d in DType::every().filter(|d| d.is_p3109()) {
            let DType::P3109(p) = d else { unreachable!() };
            for text in [p.name(), p.alias()] {
                assert_eq!(text.parse::<DType>(), Ok(d), "{text}");
                assert_eq!(text.to_uppercase().parse::<DType>(), Ok(d), "{text}");
                assert_eq!(DType::parse_name(text), Ok(d), "{text}");
            }
            assert_eq!(DType::parse_code(p.name(), Naming::Bits), Ok(d));
            assert_eq!(d.kind(), Kind::Float);
            assert_eq!(d.bits(), p.k());
            assert_eq!(d.itemsize(), if p.k() <= 8 { 1 } else { 2 });
            assert_eq!(d.format(), Some(p.format()));
        }
        let e = "p3109_k8p3sx".parse::<DType>().unwrap_err();
        assert_eq!(e.suggestions[0], "p3109_k8p3se");
        let e = DType::parse_name("binary8p8se").unwrap_err(); // signed: P <= K - 1
        assert_eq!(e.suggestions, ["binary8p1se", "binary8p2se", "binary8p3se"]);
        // Other typos are not drowned in the family's names.
        assert_eq!(
            "flaot32".parse::<DType>().unwrap_err().suggestions[0],
            "float32"
        );
        assert_eq!(DType::COUNT, 34 + 510);
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
            (">i1", DType::Int8),
            (">b1", DType::Bool),
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
        // Multi-byte dtypes in big-endian order are refused by both parsers.
        for (s, d) in [
            (">f8", DType::Float64),
            (">f4", DType::Float32),
            (">i2", DType::Int16),
        ] {
            let e = s.parse::<DType>().unwrap_err();
            assert_eq!(e.big_endian, Some(d), "{s}");
            assert_eq!(
                DType::parse_name(s).map_err(|e| e.big_endian),
                Err(Some(d)),
                "{s}"
            );
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

    #[test]
    fn one_vocabulary() {
        for (s, d) in [
            ("int8", DType::Int8),
            ("INT8", DType::Int8),
            ("f16", DType::Float16),
            ("f32", DType::Float32),
            ("f64", DType::Float64),
            ("bf16", DType::BFloat16),
            ("c128", DType::Complex128),
            ("<i8", DType::Int64),
            ("|b1", DType::Bool),
            ("=f", DType::Float32),
            ("half", DType::Float16),
            ("float", DType::Float64),
        ] {
            assert_eq!(DType::parse_name(s), Ok(d), "{s}");
        }
        // Every seed-table code is refused bare, with its readings.
        for n in Naming::ALL {
            for (c, d) in n.codes() {
                if WIDTH_ALIASES.iter().any(|(a, _)| a == c) || *c == "bf16" {
                    continue;
                }
                let e = DType::parse_name(c).unwrap_err();
                assert!(e.readings.contains(&(n, *d)), "{c}");
            }
        }
        let e = DType::parse_name("c8").unwrap_err();
        assert_eq!(
            e.readings,
            vec![
                (Naming::Bytes, DType::Complex64),
                (Naming::Legacy2020, DType::Complex128)
            ]
        );
        assert!(e.to_string().contains("complex64 or complex128"));
        // Suggestions point to the name meant.
        assert_eq!(DType::parse_name("f33").unwrap_err().suggestions[0], "f32");
        assert_eq!(DType::parse_name("f65").unwrap_err().suggestions[0], "f64");
        assert_eq!(
            DType::parse_name("bfloat15").unwrap_err().suggestions[0],
            "bfloat16"
        );
        // Every listed spelling parses (NumPy codes with a prefix).
        for sp in DType::vocabulary() {
            let text = if sp.kind == SpellingKind::NumPy {
                format!("={}", sp.text)
            } else {
                sp.text.to_string()
            };
            assert_eq!(DType::parse_name(&text), Ok(sp.dtype), "{text}");
        }
    }

    #[test]
    fn huge_inputs_get_no_suggestions_and_short_echoes() {
        let long = "int".repeat(1_000_000);
        for e in [
            DType::parse_name(&long).unwrap_err(),
            long.parse::<DType>().unwrap_err(),
        ] {
            assert!(e.suggestions.is_empty());
            let m = e.to_string();
            assert!(m.len() < 120, "{m}");
            assert!(m.ends_with("… (3000000 characters)"), "{m}");
        }
        let edge = "z".repeat(MAX_SUGGESTION_INPUT);
        assert_eq!(suggest(&edge, &["zz"]).suggestions.len(), 0); // too far
        assert_eq!(echo(&"a".repeat(MAX_ECHO)).len(), MAX_ECHO + 2);
    }
}
