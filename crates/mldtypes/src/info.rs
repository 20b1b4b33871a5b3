//! `finfo` / `iinfo`: machine limits of every float format and integer dtype,
//! field for field as `ml_dtypes.finfo` / `ml_dtypes.iinfo` (and NumPy's
//! `finfo` / `iinfo` for the IEEE types) report them.
//!
//! [`Finfo`] is derived from a [`Format`] descriptor ([`Finfo::of`]); the
//! IEEE float32 and float64 limits are [`Finfo::FLOAT32`] and
//! [`Finfo::FLOAT64`]. [`Iinfo`] covers every integer dtype, sub-byte ones
//! included. [`DType::finfo`] and [`DType::iinfo`] look them up by dtype.
//!
//! Two fields follow ml_dtypes' conventions rather than a formula of the
//! format: `precision` (the number of decimal digits, NumPy's
//! `⌊−log10(eps)⌋`) is at least 1 for every 8-bit format, and `resolution`
//! is `10^-precision` rounded into the format.
//!
//! Source: ml_dtypes 0.6.0 `finfo`/`iinfo` (values checked against
//! `tests/vectors/formats/finfo.json` and `iinfo.json`), NumPy `finfo`.
//!
//! # Examples
//!
//! ```
//! use mldtypes::dtype::DType;
//! use mldtypes::format::FLOAT8_E4M3FN;
//! use mldtypes::info::Finfo;
//! let fi = Finfo::of(&FLOAT8_E4M3FN);
//! assert_eq!((fi.max, fi.eps, fi.maxexp, fi.precision), (448.0, 0.125, 9, 1));
//! assert_eq!(DType::Int4.iinfo().map(|i| (i.min, i.max)), Some((-8, 7)));
//! assert_eq!(DType::BFloat16.finfo().unwrap().resolution, 0.010009765625);
//! ```

use crate::dtype::{DType, Kind};
use crate::float::core::{decode_f64, encode_f64};
use crate::float::MiniFloat;
use crate::format::{Format, Overflow};
use crate::int::SubByteInt;

/// Machine limits of a floating-point format: every field of
/// `ml_dtypes.finfo` (NumPy `finfo`), floats as exact `f64` values.
///
/// The IEEE P3109 formats with 12 to 16 exponent bits reach beyond float64:
/// their `max`/`min` are ±inf and their `tiny`/`smallest_*` are 0 here
/// (rounded to float64); [`crate::float::core::value_parts`] of
/// [`Format::max_code`] and of the smallest codes gives them exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finfo {
    /// The dtype name (`"float8_e4m3fn"`).
    pub dtype: &'static str,
    /// Number of bits of a value (`bits`): 4 for float4_e2m1fn.
    pub bits: u32,
    /// `eps`: the gap between 1.0 and the next larger value, `2^-nmant`.
    pub eps: f64,
    /// `epsneg`: the gap between 1.0 and the next smaller value.
    pub epsneg: f64,
    /// `max`: the largest finite value.
    pub max: f64,
    /// `min`: the most negative finite value, `-max`; for unsigned formats
    /// the smallest value: 0 (the IEEE P3109 `u` formats, as gfloat's
    /// `FormatInfo.min`), or the smallest positive value without a zero
    /// (float8_e8m0fnu).
    pub min: f64,
    /// `tiny`: the smallest positive normal value (same as `smallest_normal`).
    pub tiny: f64,
    /// `smallest_normal`: the smallest positive normal value, `2^minexp`.
    pub smallest_normal: f64,
    /// `smallest_subnormal`: the smallest positive value (the smallest normal
    /// when the format has no subnormals).
    pub smallest_subnormal: f64,
    /// `resolution`: `10^-precision` rounded into the format.
    pub resolution: f64,
    /// `machep`: the exponent of `eps` (`eps == 2^machep`).
    pub machep: i32,
    /// `negep`: the exponent of `epsneg` (`epsneg == 2^negep`).
    pub negep: i32,
    /// `minexp`: the exponent of the smallest normal value.
    pub minexp: i32,
    /// `maxexp`: the smallest power of two that overflows, as an exponent
    /// (one more than the exponent of `max`).
    pub maxexp: i32,
    /// `nexp`: number of exponent bits.
    pub nexp: i32,
    /// `nmant`: number of stored mantissa bits.
    pub nmant: i32,
    /// `iexp`: number of exponent bits (NumPy's integer-exponent width; equal to `nexp`).
    pub iexp: i32,
    /// `precision`: approximate number of significant decimal digits.
    pub precision: i32,
}

/// Largest `p` with `10^p <= 2^m` (NumPy's `int(-log10(eps))` for `eps = 2^-m`).
const fn decimal_digits(m: u32) -> i32 {
    let mut p = 0;
    let mut pow10: u128 = 10;
    while pow10 <= (1u128 << m) {
        p += 1;
        pow10 *= 10;
    }
    p
}

impl Finfo {
    /// The limits of a format described by `fmt` (any descriptor of
    /// [`crate::format`], up to 16 bits), derived from its primary facts.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E8M0FNU};
    /// use mldtypes::info::Finfo;
    /// let fi = Finfo::of(&FLOAT4_E2M1FN);
    /// assert_eq!((fi.max, fi.min, fi.epsneg, fi.smallest_subnormal), (6.0, -6.0, 0.5, 0.5));
    /// let e8 = Finfo::of(&FLOAT8_E8M0FNU);
    /// assert_eq!((e8.min, e8.eps, e8.resolution), (2f64.powi(-127), 1.0, 0.125));
    /// ```
    pub fn of(fmt: &Format) -> Finfo {
        let m = fmt.man_bits as i32;
        // the value just below 1.0 is subnormal (spacing 2^(minexp - m)) when
        // 1.0 is the smallest normal value, else 1 - 2^-(m+1)
        let negep = if fmt.has_zero && fmt.min_exp() == 0 {
            -m
        } else {
            -m - 1
        };
        let mut precision = decimal_digits(fmt.man_bits);
        if fmt.bits() == 8 {
            // ml_dtypes reports one decimal digit for every float8 format
            precision = precision.max(1);
        }
        let resolution = {
            let r = 10f64.powi(-precision);
            decode_f64(fmt, encode_f64(fmt, r, Overflow::NonSaturating))
        };
        let smallest_normal = fmt.min_positive_normal();
        Finfo {
            dtype: fmt.name,
            bits: fmt.bits(),
            eps: fmt.epsilon(),
            epsneg: 2f64.powi(negep),
            max: fmt.max_finite(),
            min: if fmt.signed {
                -fmt.max_finite()
            } else if fmt.has_zero {
                0.0
            } else {
                fmt.min_positive_subnormal()
            },
            tiny: smallest_normal,
            smallest_normal,
            smallest_subnormal: fmt.min_positive_subnormal(),
            resolution,
            machep: -m,
            negep,
            minexp: fmt.min_exp(),
            maxexp: fmt.max_exp() + 1,
            nexp: fmt.exp_bits as i32,
            nmant: m,
            iexp: fmt.exp_bits as i32,
            precision,
        }
    }

    /// IEEE binary32 (`float32`), as NumPy's `finfo(float32)`.
    pub const FLOAT32: Finfo = Finfo {
        dtype: "float32",
        bits: 32,
        eps: f32::EPSILON as f64,
        epsneg: f32::EPSILON as f64 / 2.0,
        max: f32::MAX as f64,
        min: f32::MIN as f64,
        tiny: f32::MIN_POSITIVE as f64,
        smallest_normal: f32::MIN_POSITIVE as f64,
        smallest_subnormal: 1.401298464324817e-45,
        // float32(1e-6)
        resolution: 9.999999974752427e-07,
        machep: -23,
        negep: -24,
        minexp: -126,
        maxexp: 128,
        nexp: 8,
        nmant: 23,
        iexp: 8,
        precision: 6,
    };

    /// IEEE binary64 (`float64`), as NumPy's `finfo(float64)`.
    pub const FLOAT64: Finfo = Finfo {
        dtype: "float64",
        bits: 64,
        eps: f64::EPSILON,
        epsneg: f64::EPSILON / 2.0,
        max: f64::MAX,
        min: f64::MIN,
        tiny: f64::MIN_POSITIVE,
        smallest_normal: f64::MIN_POSITIVE,
        smallest_subnormal: 5e-324,
        resolution: 1e-15,
        machep: -52,
        negep: -53,
        minexp: -1022,
        maxexp: 1024,
        nexp: 11,
        nmant: 52,
        iexp: 11,
        precision: 15,
    };
}

/// The [`Finfo`] of a float type of this crate.
///
/// # Examples
///
/// ```
/// use mldtypes::info::finfo;
/// use mldtypes::bfloat16;
/// assert_eq!(finfo::<bfloat16>().maxexp, 128);
/// ```
pub fn finfo<T: MiniFloat>() -> Finfo {
    Finfo::of(&T::FORMAT)
}

/// Limits of an integer dtype: `ml_dtypes.iinfo` / NumPy `iinfo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Iinfo {
    /// The dtype name (`"int4"`).
    pub dtype: &'static str,
    /// Number of value bits.
    pub bits: u32,
    /// Smallest value.
    pub min: i128,
    /// Largest value.
    pub max: i128,
}

impl Iinfo {
    /// The limits of an integer dtype; `None` for bool, float and complex dtypes.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// use mldtypes::info::Iinfo;
    /// assert_eq!(Iinfo::of(DType::UInt2).map(|i| i.max), Some(3));
    /// assert_eq!(Iinfo::of(DType::UInt64).map(|i| i.max), Some(u64::MAX as i128));
    /// assert_eq!(Iinfo::of(DType::Float32), None);
    /// ```
    pub const fn of(dtype: DType) -> Option<Iinfo> {
        let bits = dtype.bits();
        let (min, max) = match dtype.kind() {
            Kind::Signed => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            Kind::Unsigned => (0, (1i128 << bits) - 1),
            _ => return None,
        };
        Some(Iinfo {
            dtype: dtype.name(),
            bits,
            min,
            max,
        })
    }
}

/// The [`Iinfo`] of a sub-byte integer type.
///
/// # Examples
///
/// ```
/// use mldtypes::info::iinfo;
/// use mldtypes::int1;
/// assert_eq!((iinfo::<int1>().min, iinfo::<int1>().max), (-1, 0));
/// ```
pub fn iinfo<T: SubByteInt>() -> Iinfo {
    Iinfo {
        dtype: T::NAME,
        bits: T::BITS,
        min: T::MIN as i128,
        max: T::MAX as i128,
    }
}

impl DType {
    /// `finfo` of a real float dtype, or of the component type of a complex
    /// one (as NumPy's `finfo(complex64)` is `finfo(float32)`); `None` for
    /// bool and integers.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::Float8E5M2.finfo().map(|f| f.max), Some(57344.0));
    /// assert_eq!(DType::Complex64.finfo().map(|f| f.dtype), Some("float32"));
    /// assert_eq!(DType::Int8.finfo(), None);
    /// ```
    pub fn finfo(self) -> Option<Finfo> {
        match self {
            DType::Float32 | DType::Complex64 => Some(Finfo::FLOAT32),
            DType::Float64 | DType::Complex128 => Some(Finfo::FLOAT64),
            _ => self.format().map(|f| Finfo::of(&f)),
        }
    }

    /// `iinfo` of an integer dtype (sub-byte ones included); `None` otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::DType;
    /// assert_eq!(DType::Int1.iinfo().map(|i| (i.min, i.max)), Some((-1, 0)));
    /// assert_eq!(DType::Bool.iinfo(), None);
    /// ```
    pub const fn iinfo(self) -> Option<Iinfo> {
        Iinfo::of(self)
    }
}
