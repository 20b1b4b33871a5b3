//! Format descriptors: the handful of primary facts that define a binary
//! floating-point format, in the manner of LLVM's `fltSemantics` and
//! rustc_apfloat's `Semantics`.
//!
//! A [`Format`] states the exponent and mantissa widths, the exponent bias,
//! how the format treats non-finite values ([`NonFinite`]), where its NaN
//! lives ([`NanEncoding`]), whether it has a sign bit and whether it has a
//! zero. Everything else — masks, the largest finite code, the smallest
//! normal and subnormal magnitudes, epsilon — is derived by `const fn`s, so
//! every named format of ml_dtypes is one documented line below.
//!
//! | format | E | M | bias | non-finite | NaN | notes |
//! |---|---|---|---|---|---|---|
//! | [`BFLOAT16`] | 8 | 7 | 127 | IEEE | IEEE | |
//! | [`FLOAT16`] | 5 | 10 | 15 | IEEE | IEEE | IEEE binary16 |
//! | [`FLOAT8_E3M4`] | 3 | 4 | 3 | IEEE | IEEE | |
//! | [`FLOAT8_E4M3`] | 4 | 3 | 7 | IEEE | IEEE | |
//! | [`FLOAT8_E4M3FN`] | 4 | 3 | 7 | NaN only | all ones | OCP FP8 E4M3 |
//! | [`FLOAT8_E4M3FNUZ`] | 4 | 3 | 8 | NaN only | negative zero | |
//! | [`FLOAT8_E4M3B11FNUZ`] | 4 | 3 | 11 | NaN only | negative zero | |
//! | [`FLOAT8_E5M2`] | 5 | 2 | 15 | IEEE | IEEE | OCP FP8 E5M2 |
//! | [`FLOAT8_E5M2FNUZ`] | 5 | 2 | 16 | NaN only | negative zero | |
//! | [`FLOAT8_E8M0FNU`] | 8 | 0 | 127 | NaN only | all ones | unsigned, no zero (OCP MX scale) |
//! | [`FLOAT6_E2M3FN`] | 2 | 3 | 1 | finite only | — | OCP MX FP6 |
//! | [`FLOAT6_E3M2FN`] | 3 | 2 | 3 | finite only | — | OCP MX FP6 |
//! | [`FLOAT4_E2M1FN`] | 2 | 1 | 1 | finite only | — | OCP MX FP4 |
//!
//! The IEEE P3109 family (510 members, widths 2 to 16 bits) is data as
//! well: [`Format::p3109`] builds any member's descriptor at run time
//! (see [`P3109`]), with the fourth non-finite behaviour
//! [`NonFinite::InfAtMax`] (±inf at the largest codes) and exponent fields
//! of up to 16 bits; its names (`p3109_k8p3se`) come from a table built at
//! compile time.
//!
//! Sources: the ml_dtypes README (seed 001), the OCP Microscaling Formats
//! (MX) v1.0 specification, LLVM `APFloat.cpp`, the IEEE P3109 interim
//! report v3.1 and gfloat 0.5.2.
//!
//! # Examples
//!
//! ```
//! use mldtypes::format::FLOAT8_E4M3FN;
//! assert_eq!(FLOAT8_E4M3FN.max_finite(), 448.0);
//! assert_eq!(FLOAT8_E4M3FN.min_positive_normal(), 2f64.powi(-6));
//! assert_eq!(FLOAT8_E4M3FN.min_positive_subnormal(), 2f64.powi(-9));
//! assert_eq!(FLOAT8_E4M3FN.nan_code(), Some(0x7f));
//! assert_eq!(FLOAT8_E4M3FN.max_code(), 0x7e);
//! ```

mod p3109;
pub use p3109::P3109;

/// How a format represents values that are not finite numbers.
///
/// The three cases of LLVM's `fltNonfiniteBehavior`, and the IEEE P3109
/// extended domain ([`NonFinite::InfAtMax`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NonFinite {
    /// IEEE 754: the all-ones exponent encodes ±infinity (zero mantissa)
    /// and NaN (non-zero mantissa).
    Ieee,
    /// No infinities; NaN is encoded as described by [`NanEncoding`]; every
    /// other code, including the all-ones exponent, is a finite number
    /// ("fn" and "fnuz" formats, float8_e8m0fnu).
    NanOnly,
    /// Every code is a finite number: no infinity, no NaN (the MX float6 and
    /// float4 formats).
    FiniteOnly,
    /// IEEE P3109's extended domain: the largest-magnitude code of each sign
    /// that is not the NaN is ±infinity (`0x7F`/`0xFF` of a signed 8-bit
    /// format, whose NaN is the would-be negative zero `0x80`; `0xFE` of an
    /// unsigned one, whose NaN is the all-ones `0xFF`); every other code is
    /// a finite number, so the exponent field has no reserved value.
    InfAtMax,
}

/// Where a format's NaN lives (LLVM's `fltNanEncoding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanEncoding {
    /// IEEE 754: all-ones exponent and a non-zero mantissa, either sign.
    Ieee,
    /// Only the all-ones exponent with the all-ones mantissa is NaN, either
    /// sign (`0bS111_1111` for float8_e4m3fn, `0xFF` for float8_e8m0fnu).
    AllOnes,
    /// The single code that would be negative zero (`0b1000_0000`) is NaN;
    /// the format has a single, unsigned zero ("uz").
    NegativeZero,
    /// The format has no NaN at all (only with [`NonFinite::FiniteOnly`]).
    None,
}

/// A binary floating-point format, stated by its primary facts.
///
/// Bit layout of a code (stored in the low bits of a `u8`/`u16`):
/// `[sign (1 bit if signed)][exponent (exp_bits)][mantissa (man_bits)]`.
/// The value of a code with biased exponent `e` and mantissa `m` is
/// `(-1)^s × 2^(e − bias) × (1 + m / 2^man_bits)` for normal codes, and
/// `(-1)^s × 2^(1 − bias) × (m / 2^man_bits)` for subnormal codes
/// (`e == 0`, only in formats with a zero). In formats without a zero
/// (float8_e8m0fnu) the code with `e == 0` is the normal number
/// `2^(−bias)`.
///
/// Every other property is derived by the `const fn` methods.
///
/// The struct is `#[non_exhaustive]`: outside this crate a descriptor comes
/// from the named constants, from [`Format::p3109`] or from the checked
/// constructor [`Format::new`],
/// which refuses descriptors the generic core cannot convert exactly (see
/// [`FormatError`]). A descriptor whose public fields were changed after
/// construction can be re-checked with [`Format::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Format {
    /// The ml_dtypes name of the format, e.g. `"float8_e4m3fn"`.
    pub name: &'static str,
    /// Width of the exponent field in bits.
    pub exp_bits: u32,
    /// Width of the stored mantissa (trailing significand) field in bits.
    pub man_bits: u32,
    /// Exponent bias: a normal code with biased exponent `e` has unbiased
    /// exponent `e - bias`.
    pub bias: i32,
    /// How infinities and NaNs are represented.
    pub non_finite: NonFinite,
    /// Where the NaN code is, if any.
    pub nan_encoding: NanEncoding,
    /// Whether the format has a sign bit.
    pub signed: bool,
    /// Whether the format can represent zero.
    pub has_zero: bool,
}

/// Declares the named formats, one documented line each; each goes through
/// [`Format::new`] at compile time, so an invalid line fails the build.
macro_rules! formats {
    ($( $(#[$doc:meta])* $id:ident = $name:literal ($e:literal : $m:literal, bias $b:literal, $nf:ident, $nan:ident $(, $flag:ident)*); )*) => {
        $(
            $(#[$doc])*
            pub const $id: Format = match Format::new(
                $name,
                $e,
                $m,
                $b,
                NonFinite::$nf,
                NanEncoding::$nan,
                !formats!(@has unsigned $($flag)*),
                !formats!(@has no_zero $($flag)*),
            ) {
                Ok(f) => f,
                Err(_) => panic!(concat!("invalid format descriptor ", $name)),
            };
        )*
        /// Every named format of this module, in ml_dtypes' documentation order
        /// after bfloat16 and IEEE float16.
        pub const ALL: &[Format] = &[$($id),*];
    };
    (@has unsigned unsigned $($rest:ident)*) => { true };
    (@has no_zero no_zero $($rest:ident)*) => { true };
    (@has $want:ident $other:ident $($rest:ident)*) => { formats!(@has $want $($rest)*) };
    (@has $want:ident) => { false };
}

/// Why [`Format::new`] (or [`Format::p3109`]) refuses a descriptor.
///
/// The limits keep every code inside 16 bits and every exponent inside the
/// generic core's integer arithmetic (±2^17). Values need not fit float32
/// or float64: conversions to those round correctly (see
/// [`Format::fits_f32`], [`Format::fits_f64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatError {
    /// `exp_bits` is outside `1..=16`.
    ExponentBits(u32),
    /// Sign + exponent + mantissa is outside `2..=16` bits.
    Width(u32),
    /// The bias puts the exponent range beyond ±2^17 (2^131072).
    Bias(i32),
    /// `non_finite` and `nan_encoding` do not go together (IEEE needs
    /// [`NanEncoding::Ieee`] and a mantissa bit; NaN-only and
    /// infinity-at-max need [`NanEncoding::AllOnes`] or
    /// [`NanEncoding::NegativeZero`] and codes to spare for them; finite-only
    /// needs [`NanEncoding::None`]).
    NonFinite,
    /// [`NanEncoding::NegativeZero`] needs a sign bit and a zero; IEEE and
    /// infinity-at-max formats need a zero.
    Zero,
    /// An IEEE P3109 width and precision outside the family: `2 <= k <= 16`,
    /// `1 <= p <= k - 1` for signed formats and `1 <= p <= k` for unsigned
    /// ones ([`Format::p3109`]).
    P3109 {
        /// The width K in bits.
        k: u32,
        /// The precision P in bits (counting the implicit bit).
        p: u32,
        /// Whether a signed format was asked for.
        signed: bool,
    },
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::ExponentBits(e) => write!(f, "{e} exponent bits (expected 1 to 16)"),
            FormatError::Width(w) => write!(f, "{w} bits in a code (expected 2 to 16)"),
            FormatError::Bias(b) => write!(
                f,
                "bias {b} puts the exponent range beyond 2^-131072 .. 2^131072"
            ),
            FormatError::NonFinite => {
                f.write_str("the non-finite behaviour and the NaN encoding do not match")
            }
            FormatError::Zero => f.write_str("the NaN encoding or non-finite behaviour needs a zero (and a sign bit for negative-zero NaN)"),
            FormatError::P3109 { k, p, signed } => {
                let (s, top) = if *signed { ("signed", "k - 1") } else { ("unsigned", "k") };
                write!(
                    f,
                    "no IEEE P3109 {s} format with k={k}, p={p} (the family has 2 <= k <= 16 and \
                     1 <= p <= {top})"
                )
            }
        }
    }
}

impl std::error::Error for FormatError {}

impl Format {
    /// A checked descriptor: the fields as documented on [`Format`].
    ///
    /// # Errors
    ///
    /// [`FormatError`] for descriptors outside what the generic core
    /// converts: exponent width 1–16, code width (sign + exponent + mantissa)
    /// 2–16, exponents within ±2^17, a consistent non-finite behaviour and
    /// NaN encoding.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{Format, FormatError, NanEncoding, NonFinite, FLOAT8_E4M3FN};
    /// let f = Format::new("float8_e4m3fn", 4, 3, 7, NonFinite::NanOnly, NanEncoding::AllOnes, true, true);
    /// assert_eq!(f, Ok(FLOAT8_E4M3FN));
    /// // A 34-bit format is refused.
    /// let wide = Format::new("wide", 8, 25, 127, NonFinite::Ieee, NanEncoding::Ieee, true, true);
    /// assert_eq!(wide, Err(FormatError::Width(34)));
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        name: &'static str,
        exp_bits: u32,
        man_bits: u32,
        bias: i32,
        non_finite: NonFinite,
        nan_encoding: NanEncoding,
        signed: bool,
        has_zero: bool,
    ) -> Result<Format, FormatError> {
        let f = Format {
            name,
            exp_bits,
            man_bits,
            bias,
            non_finite,
            nan_encoding,
            signed,
            has_zero,
        };
        match f.validate() {
            Ok(()) => Ok(f),
            Err(e) => Err(e),
        }
    }

    /// Checks the descriptor as [`Format::new`] does.
    ///
    /// # Errors
    ///
    /// The [`FormatError`] [`Format::new`] would return.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FormatError, BFLOAT16};
    /// assert_eq!(BFLOAT16.validate(), Ok(()));
    /// let mut f = BFLOAT16;
    /// f.man_bits = 25;
    /// assert_eq!(f.validate(), Err(FormatError::Width(34)));
    /// ```
    pub const fn validate(&self) -> Result<(), FormatError> {
        if self.exp_bits < 1 || self.exp_bits > 16 {
            return Err(FormatError::ExponentBits(self.exp_bits));
        }
        // man_bits is bounded before any arithmetic on it.
        if self.man_bits > 15 {
            return Err(FormatError::Width(
                self.man_bits.saturating_add(self.exp_bits + 1),
            ));
        }
        let width = self.signed as u32 + self.exp_bits + self.man_bits;
        if width < 2 || width > 16 {
            return Err(FormatError::Width(width));
        }
        let all = (1u32 << (self.exp_bits + self.man_bits)) - 1;
        let ok = match (self.non_finite, self.nan_encoding) {
            (NonFinite::Ieee, NanEncoding::Ieee) => self.man_bits >= 1,
            (NonFinite::NanOnly, NanEncoding::AllOnes | NanEncoding::NegativeZero) => true,
            // The infinity needs a code of its own below an all-ones NaN.
            (NonFinite::InfAtMax, NanEncoding::AllOnes) => all >= 2,
            (NonFinite::InfAtMax, NanEncoding::NegativeZero) => true,
            (NonFinite::FiniteOnly, NanEncoding::None) => true,
            _ => false,
        };
        if !ok {
            return Err(FormatError::NonFinite);
        }
        if matches!(self.nan_encoding, NanEncoding::NegativeZero) && !(self.signed && self.has_zero)
            || matches!(self.non_finite, NonFinite::Ieee | NonFinite::InfAtMax) && !self.has_zero
        {
            return Err(FormatError::Zero);
        }
        // Exponent range: the top biased exponent (2^E − 1) minus the bias,
        // and the smallest subnormal's exponent 1 − bias − man_bits, within
        // ±2^17, where the core's i32 exponent arithmetic has room to spare.
        let top = (1i64 << self.exp_bits) - 1 - self.bias as i64;
        let bottom = 1 - self.bias as i64 - self.man_bits as i64;
        if top > EXP_LIMIT || bottom < -EXP_LIMIT {
            return Err(FormatError::Bias(self.bias));
        }
        Ok(())
    }

    /// Whether every value of the format is exactly a float32 (largest
    /// finite value below 2^128, smallest positive value at least 2^−149):
    /// true for every named format and for the IEEE P3109 formats with at
    /// most 8 exponent bits. Conversions of other formats to float32 round
    /// to nearest, ties to even (overflow to ±inf, gradual underflow).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{Format, BFLOAT16};
    /// assert!(BFLOAT16.fits_f32());
    /// assert!(Format::p3109(8, 3, true, true).unwrap().fits_f32());
    /// assert!(!Format::p3109(16, 7, true, true).unwrap().fits_f32()); // 9 exponent bits
    /// ```
    pub const fn fits_f32(&self) -> bool {
        self.fits(127, -149)
    }

    /// Whether every value of the format is exactly a float64: the named
    /// formats and the IEEE P3109 formats with at most 11 exponent bits.
    /// Formats with 12 to 16 exponent bits (`p3109_k16p1se`, …) reach
    /// beyond float64: their conversions to float64 round to nearest, ties
    /// to even (overflow to ±inf, gradual underflow to subnormals and ±0),
    /// and no float64 overflows or underflows in them.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::Format;
    /// assert!(Format::p3109(16, 5, true, true).unwrap().fits_f64()); // 11 exponent bits
    /// assert!(!Format::p3109(16, 4, true, true).unwrap().fits_f64()); // 12
    /// ```
    pub const fn fits_f64(&self) -> bool {
        self.fits(1023, -1074)
    }

    /// Largest value below `2^(emax + 1)` and smallest positive value at
    /// least `2^emin_sub`.
    const fn fits(&self, emax: i32, emin_sub: i32) -> bool {
        let bottom = if self.has_zero {
            self.min_exp() - self.man_bits as i32
        } else {
            self.min_exp()
        };
        self.max_exp() <= emax && bottom >= emin_sub
    }
}

/// Bound of the exponent range of a valid descriptor (see [`Format::validate`]).
const EXP_LIMIT: i64 = 1 << 17;

formats! {
    /// bfloat16: float32 truncated to 16 bits; 1 sign, 8 exponent, 7 mantissa bits, IEEE.
    BFLOAT16 = "bfloat16" (8:7, bias 127, Ieee, Ieee);
    /// IEEE 754 binary16 (`half::f16`); 1 sign, 5 exponent, 10 mantissa bits.
    FLOAT16 = "float16" (5:10, bias 15, Ieee, Ieee);
    /// float8_e3m4: 1 sign, 3 exponent, 4 mantissa bits, bias 3, IEEE (max 15.5).
    FLOAT8_E3M4 = "float8_e3m4" (3:4, bias 3, Ieee, Ieee);
    /// float8_e4m3: 1 sign, 4 exponent, 3 mantissa bits, bias 7, IEEE (max 240).
    FLOAT8_E4M3 = "float8_e4m3" (4:3, bias 7, Ieee, Ieee);
    /// float8_e4m3fn (OCP FP8 E4M3): bias 7, no inf, NaN `0bS111_1111` (max 448).
    FLOAT8_E4M3FN = "float8_e4m3fn" (4:3, bias 7, NanOnly, AllOnes);
    /// float8_e4m3fnuz: bias 8, no inf, no −0, NaN `0b1000_0000` (max 240).
    FLOAT8_E4M3FNUZ = "float8_e4m3fnuz" (4:3, bias 8, NanOnly, NegativeZero);
    /// float8_e4m3b11fnuz: bias 11, no inf, no −0, NaN `0b1000_0000` (max 30).
    FLOAT8_E4M3B11FNUZ = "float8_e4m3b11fnuz" (4:3, bias 11, NanOnly, NegativeZero);
    /// float8_e5m2 (OCP FP8 E5M2): 1 sign, 5 exponent, 2 mantissa bits, bias 15, IEEE (max 57344).
    FLOAT8_E5M2 = "float8_e5m2" (5:2, bias 15, Ieee, Ieee);
    /// float8_e5m2fnuz: bias 16, no inf, no −0, NaN `0b1000_0000` (max 57344).
    FLOAT8_E5M2FNUZ = "float8_e5m2fnuz" (5:2, bias 16, NanOnly, NegativeZero);
    /// float8_e8m0fnu (OCP MX E8M0 scale): unsigned, 8 exponent bits, no mantissa, no zero,
    /// no inf, NaN `0xFF`; values 2^−127 … 2^127.
    FLOAT8_E8M0FNU = "float8_e8m0fnu" (8:0, bias 127, NanOnly, AllOnes, unsigned, no_zero);
    /// float6_e2m3fn (OCP MX FP6 E2M3): `0bSEEMMM`, bias 1, finite only (max 7.5).
    FLOAT6_E2M3FN = "float6_e2m3fn" (2:3, bias 1, FiniteOnly, None);
    /// float6_e3m2fn (OCP MX FP6 E3M2): `0bSEEEMM`, bias 3, finite only (max 28).
    FLOAT6_E3M2FN = "float6_e3m2fn" (3:2, bias 3, FiniteOnly, None);
    /// float4_e2m1fn (OCP MX FP4 E2M1): `0bSEEM`, bias 1, finite only (max 6).
    FLOAT4_E2M1FN = "float4_e2m1fn" (2:1, bias 1, FiniteOnly, None);
}

/// What a narrowing conversion does with a finite value beyond the largest
/// finite number of the target format.
///
/// Source: ml_dtypes 0.6.0 (`NonSaturating`), NVIDIA `cvt.satfinite` and the
/// OCP MX specification's recommendation (`Saturating`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Overflow {
    /// ml_dtypes' behaviour: ±infinity in IEEE formats, NaN in NaN-only
    /// formats, ±max in finite-only formats (float6, float4).
    #[default]
    NonSaturating,
    /// Clamp to ±max finite; NaN stays NaN where the format has one, and
    /// ±infinity becomes ±max.
    Saturating,
}

/// `2^k` as an `f64` in a `const` context: exact for `-1074 <= k <= 1023`,
/// +infinity above, zero below.
const fn pow2(k: i32) -> f64 {
    if k > 1023 {
        f64::INFINITY
    } else if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else if k >= -1074 {
        f64::from_bits(1u64 << (k + 1074))
    } else {
        0.0
    }
}

impl Format {
    /// Total number of significant bits in a code: sign (if any) + exponent +
    /// mantissa (ml_dtypes' `finfo(...).bits`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT6_E2M3FN, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: finfo(float6_e2m3fn).bits == 6, finfo(float8_e8m0fnu).bits == 8
    /// assert_eq!(FLOAT6_E2M3FN.bits(), 6);
    /// assert_eq!(FLOAT8_E8M0FNU.bits(), 8); // unsigned: 8 exponent bits, no sign
    /// assert_eq!(BFLOAT16.bits(), 16);
    /// ```
    pub const fn bits(&self) -> u32 {
        self.signed as u32 + self.exp_bits + self.man_bits
    }

    /// Precision in bits, counting the implicit leading bit (`man_bits + 1`),
    /// as LLVM's `fltSemantics::precision` (ml_dtypes' `finfo(...).nmant + 1`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT8_E4M3FN, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: finfo(float8_e4m3fn).nmant == 3, finfo(bfloat16).nmant == 7
    /// assert_eq!(FLOAT8_E4M3FN.precision(), 4);
    /// assert_eq!(BFLOAT16.precision(), 8);
    /// assert_eq!(FLOAT8_E8M0FNU.precision(), 1); // no stored mantissa (OCP MX E8M0)
    /// ```
    pub const fn precision(&self) -> u32 {
        self.man_bits + 1
    }

    /// Mask of all code bits: `(1 << bits()) - 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT4_E2M1FN, FLOAT6_E3M2FN};
    /// assert_eq!(FLOAT4_E2M1FN.code_mask(), 0xf); // 4-bit OCP MX FP4 code
    /// assert_eq!(FLOAT6_E3M2FN.code_mask(), 0x3f);
    /// assert_eq!(BFLOAT16.code_mask(), 0xffff);
    /// ```
    pub const fn code_mask(&self) -> u32 {
        (1u32 << self.bits()) - 1
    }

    /// The sign bit of a code (`0` for unsigned formats), the top bit of the
    /// layout in the ml_dtypes README (seed 001).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT6_E2M3FN, FLOAT8_E4M3FN, FLOAT8_E8M0FNU};
    /// assert_eq!(FLOAT8_E4M3FN.sign_mask(), 0x80);
    /// assert_eq!(FLOAT6_E2M3FN.sign_mask(), 0x20); // 0bSEEMMM (OCP MX FP6)
    /// assert_eq!(FLOAT8_E8M0FNU.sign_mask(), 0); // unsigned (OCP MX E8M0)
    /// ```
    pub const fn sign_mask(&self) -> u32 {
        if self.signed {
            1 << (self.exp_bits + self.man_bits)
        } else {
            0
        }
    }

    /// Mask of the exponent field, in place.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT8_E4M3FN, FLOAT8_E5M2};
    /// assert_eq!(FLOAT8_E4M3FN.exp_mask(), 0x78); // 0bS_EEEE_MMM
    /// assert_eq!(FLOAT8_E5M2.exp_mask(), 0x7c); // 0bS_EEEEE_MM
    /// assert_eq!(BFLOAT16.exp_mask(), 0x7f80);
    /// ```
    pub const fn exp_mask(&self) -> u32 {
        ((1u32 << self.exp_bits) - 1) << self.man_bits
    }

    /// Mask of the mantissa field.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT8_E8M0FNU};
    /// assert_eq!(FLOAT8_E4M3FN.man_mask(), 0x7);
    /// assert_eq!(FLOAT8_E5M2.man_mask(), 0x3);
    /// assert_eq!(FLOAT8_E8M0FNU.man_mask(), 0); // no mantissa bits (OCP MX E8M0)
    /// ```
    pub const fn man_mask(&self) -> u32 {
        (1u32 << self.man_bits) - 1
    }

    /// Largest biased exponent field value (all ones).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E5M2};
    /// assert_eq!(FLOAT8_E4M3FN.max_biased_exp(), 15);
    /// assert_eq!(FLOAT8_E5M2.max_biased_exp(), 31);
    /// assert_eq!(FLOAT4_E2M1FN.max_biased_exp(), 3);
    /// ```
    pub const fn max_biased_exp(&self) -> u32 {
        (1u32 << self.exp_bits) - 1
    }

    /// The largest code (sign clear) that encodes a finite number: the bit
    /// pattern of ml_dtypes' `finfo(...).max`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: finfo(t).max viewed as uint8
    /// assert_eq!(FLOAT8_E4M3FN.max_code(), 0x7e); // 448; 0x7f is NaN
    /// assert_eq!(FLOAT8_E5M2.max_code(), 0x7b); // 57344; 0x7c is +inf
    /// assert_eq!(FLOAT8_E4M3FNUZ.max_code(), 0x7f); // 240
    /// assert_eq!(FLOAT8_E8M0FNU.max_code(), 0xfe); // 2^127; 0xff is NaN
    /// assert_eq!(FLOAT4_E2M1FN.max_code(), 0x7); // 6.0
    /// ```
    pub const fn max_code(&self) -> u32 {
        let all = self.exp_mask() | self.man_mask();
        match self.non_finite {
            NonFinite::Ieee => all - self.man_mask() - 1,
            NonFinite::NanOnly => match self.nan_encoding {
                NanEncoding::AllOnes => all - 1,
                _ => all,
            },
            // The infinity is the code below the NaN, or the top one.
            NonFinite::InfAtMax => self.inf_mag() - 1,
            NonFinite::FiniteOnly => all,
        }
    }

    /// The magnitude of the infinity code of an [`NonFinite::InfAtMax`]
    /// format (the all-ones magnitude, or the one below an all-ones NaN);
    /// the IEEE infinity otherwise.
    const fn inf_mag(&self) -> u32 {
        let all = self.exp_mask() | self.man_mask();
        match (self.non_finite, self.nan_encoding) {
            (NonFinite::InfAtMax, NanEncoding::AllOnes) => all - 1,
            (NonFinite::InfAtMax, _) => all,
            _ => self.exp_mask(),
        }
    }

    /// Largest unbiased exponent of a finite number (LLVM's `maxExponent`;
    /// ml_dtypes' `finfo(...).maxexp` is one more, as in NumPy).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT8_E4M3FN, FLOAT8_E4M3B11FNUZ, FLOAT8_E5M2, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: finfo(t).maxexp - 1
    /// assert_eq!(FLOAT8_E4M3FN.max_exp(), 8); // maxexp 9
    /// assert_eq!(FLOAT8_E5M2.max_exp(), 15); // maxexp 16
    /// assert_eq!(FLOAT8_E4M3B11FNUZ.max_exp(), 4); // maxexp 5
    /// assert_eq!(FLOAT8_E8M0FNU.max_exp(), 127); // maxexp 128
    /// ```
    ///
    /// In the degenerate formats whose largest finite value is subnormal or
    /// zero (`p3109_k2p1se` has only 0, ±inf and NaN), this is the exponent
    /// of that value's leading bit (for zero, one below the smallest
    /// subnormal's exponent).
    pub const fn max_exp(&self) -> i32 {
        let top = self.max_code();
        let e = top >> self.man_bits;
        if e == 0 && self.has_zero {
            let m = top & self.man_mask();
            let quantum = self.min_exp() - self.man_bits as i32;
            return if m == 0 {
                quantum - 1
            } else {
                quantum + (31 - m.leading_zeros()) as i32
            };
        }
        (e as i32) - self.bias
    }

    /// Smallest unbiased exponent of a normal number (LLVM's `minExponent`;
    /// ml_dtypes' `finfo(...).minexp`): `1 - bias`, or `-bias` for formats
    /// without a zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: finfo(t).minexp
    /// assert_eq!(FLOAT8_E4M3FN.min_exp(), -6);
    /// assert_eq!(FLOAT8_E4M3FNUZ.min_exp(), -7);
    /// assert_eq!(FLOAT8_E8M0FNU.min_exp(), -127); // no zero: code 0x00 is 2^-127
    /// assert_eq!(FLOAT4_E2M1FN.min_exp(), 0);
    /// ```
    pub const fn min_exp(&self) -> i32 {
        if self.has_zero {
            1 - self.bias
        } else {
            -self.bias
        }
    }

    /// Largest finite value (ml_dtypes' `finfo(...).max`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT6_E3M2FN, FLOAT8_E4M3FN, FLOAT8_E4M3B11FNUZ, FLOAT8_E5M2};
    /// // ml_dtypes 0.6.0: float(finfo(t).max)
    /// assert_eq!(FLOAT8_E4M3FN.max_finite(), 448.0);
    /// assert_eq!(FLOAT8_E5M2.max_finite(), 57344.0);
    /// assert_eq!(FLOAT8_E4M3B11FNUZ.max_finite(), 30.0);
    /// assert_eq!(FLOAT6_E3M2FN.max_finite(), 28.0);
    /// assert_eq!(FLOAT4_E2M1FN.max_finite(), 6.0);
    /// ```
    ///
    /// Exact when the format [fits float64](Format::fits_f64); +infinity
    /// for the wider IEEE P3109 formats (their largest value is beyond
    /// float64's; [`crate::float::core::value_parts`] gives it exactly).
    pub const fn max_finite(&self) -> f64 {
        let top = self.max_code();
        let m = top & self.man_mask();
        if top >> self.man_bits == 0 && self.has_zero {
            // Subnormal (or zero) largest value.
            return m as f64 * pow2(self.min_exp() - self.man_bits as i32);
        }
        let frac = (((1u64 << self.man_bits) + m as u64) as f64) / (1u64 << self.man_bits) as f64;
        frac * pow2(self.max_exp())
    }

    /// Smallest positive normal value (`2^min_exp()`): ml_dtypes'
    /// `finfo(...).smallest_normal` (`tiny`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT6_E2M3FN, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: float(finfo(t).smallest_normal)
    /// assert_eq!(FLOAT8_E4M3FN.min_positive_normal(), 0.015625);
    /// assert_eq!(FLOAT8_E4M3FNUZ.min_positive_normal(), 0.0078125);
    /// assert_eq!(FLOAT8_E8M0FNU.min_positive_normal(), 2f64.powi(-127));
    /// assert_eq!(FLOAT6_E2M3FN.min_positive_normal(), 1.0);
    /// ```
    ///
    /// Zero for the IEEE P3109 formats whose values reach below float64's
    /// (see [`Format::fits_f64`]).
    pub const fn min_positive_normal(&self) -> f64 {
        pow2(self.min_exp())
    }

    /// Smallest positive subnormal value, `2^(min_exp() - man_bits)`; equal
    /// to [`Format::min_positive_normal`] when the format has no subnormals
    /// (no zero or no mantissa bits). ml_dtypes' `finfo(...).smallest_subnormal`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: float(finfo(t).smallest_subnormal)
    /// assert_eq!(FLOAT8_E4M3FN.min_positive_subnormal(), 0.001953125); // 2^-9
    /// assert_eq!(FLOAT8_E5M2.min_positive_subnormal(), 1.52587890625e-05); // 2^-16
    /// assert_eq!(FLOAT4_E2M1FN.min_positive_subnormal(), 0.5);
    /// assert_eq!(FLOAT8_E8M0FNU.min_positive_subnormal(), 2f64.powi(-127)); // no subnormals
    /// ```
    pub const fn min_positive_subnormal(&self) -> f64 {
        if self.has_zero {
            pow2(self.min_exp() - self.man_bits as i32)
        } else {
            pow2(self.min_exp())
        }
    }

    /// Machine epsilon: the gap between 1.0 and the next larger value,
    /// `2^-man_bits` (ml_dtypes' `finfo(...).eps`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E8M0FNU};
    /// // ml_dtypes 0.6.0: float(finfo(t).eps)
    /// assert_eq!(FLOAT8_E4M3FN.epsilon(), 0.125);
    /// assert_eq!(BFLOAT16.epsilon(), 0.0078125);
    /// assert_eq!(FLOAT4_E2M1FN.epsilon(), 0.5);
    /// assert_eq!(FLOAT8_E8M0FNU.epsilon(), 1.0);
    /// ```
    pub const fn epsilon(&self) -> f64 {
        pow2(-(self.man_bits as i32))
    }

    /// Whether the format encodes ±infinity (only the IEEE-like formats; the
    /// "fn", "fnuz" and MX formats have none, per the ml_dtypes README, seed 001),
    /// and the IEEE P3109 formats of the extended domain.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3, FLOAT8_E4M3FN, FLOAT8_E5M2};
    /// assert!(FLOAT8_E5M2.has_infinity());
    /// assert!(FLOAT8_E4M3.has_infinity());
    /// assert!(!FLOAT8_E4M3FN.has_infinity());
    /// assert!(!FLOAT4_E2M1FN.has_infinity());
    /// // IEEE P3109 extended formats: ±inf at the largest codes.
    /// assert!(mldtypes::format::Format::p3109(8, 3, true, true).unwrap().has_infinity());
    /// ```
    pub const fn has_infinity(&self) -> bool {
        matches!(self.non_finite, NonFinite::Ieee | NonFinite::InfAtMax)
    }

    /// Whether the format has a NaN (all but the finite-only OCP MX float6 and
    /// float4 formats; seed 001).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT6_E3M2FN, FLOAT8_E4M3FN, FLOAT8_E8M0FNU};
    /// assert!(FLOAT8_E4M3FN.has_nan());
    /// assert!(FLOAT8_E8M0FNU.has_nan()); // 0xff (OCP MX E8M0)
    /// assert!(!FLOAT6_E3M2FN.has_nan());
    /// assert!(!FLOAT4_E2M1FN.has_nan());
    /// ```
    pub const fn has_nan(&self) -> bool {
        !matches!(self.non_finite, NonFinite::FiniteOnly)
    }

    /// Whether zero carries a sign (−0 exists); false for the "fnuz" formats,
    /// whose would-be −0 code is NaN, and for float8_e8m0fnu, which has no zero
    /// (seed 001).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU};
    /// assert!(FLOAT8_E4M3FN.has_signed_zero()); // 0x80 is -0.0
    /// assert!(!FLOAT8_E4M3FNUZ.has_signed_zero()); // 0x80 is NaN
    /// assert!(!FLOAT8_E5M2FNUZ.has_signed_zero());
    /// assert!(!FLOAT8_E8M0FNU.has_signed_zero());
    /// ```
    pub const fn has_signed_zero(&self) -> bool {
        self.signed && self.has_zero && !matches!(self.nan_encoding, NanEncoding::NegativeZero)
    }

    /// The code of +infinity, if the format has infinities.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT8_E3M4, FLOAT8_E4M3FN, FLOAT8_E5M2};
    /// // ml_dtypes 0.6.0: array(inf).astype(t).view(uint8/uint16)
    /// assert_eq!(FLOAT8_E5M2.inf_code(), Some(0x7c));
    /// assert_eq!(FLOAT8_E3M4.inf_code(), Some(0x70));
    /// assert_eq!(BFLOAT16.inf_code(), Some(0x7f80));
    /// assert_eq!(FLOAT8_E4M3FN.inf_code(), None); // inf casts to NaN there
    /// use mldtypes::format::Format;
    /// assert_eq!(Format::p3109(8, 3, true, true).unwrap().inf_code(), Some(0x7f));
    /// assert_eq!(Format::p3109(8, 3, false, true).unwrap().inf_code(), Some(0xfe));
    /// ```
    pub const fn inf_code(&self) -> Option<u32> {
        if self.has_infinity() {
            Some(self.inf_mag())
        } else {
            None
        }
    }

    /// The canonical (positive, quiet) NaN code, if the format has a NaN:
    /// the quiet NaN `exp_mask | top mantissa bit` for IEEE formats, the
    /// all-ones code for [`NanEncoding::AllOnes`], and the would-be negative
    /// zero for [`NanEncoding::NegativeZero`]. These are the codes ml_dtypes
    /// 0.6.0 produces for `array(nan).astype(t)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{
    ///     BFLOAT16, FLOAT6_E2M3FN, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E8M0FNU,
    /// };
    /// assert_eq!(FLOAT8_E5M2.nan_code(), Some(0x7e));
    /// assert_eq!(BFLOAT16.nan_code(), Some(0x7fc0));
    /// assert_eq!(FLOAT8_E4M3FN.nan_code(), Some(0x7f));
    /// assert_eq!(FLOAT8_E4M3FNUZ.nan_code(), Some(0x80));
    /// assert_eq!(FLOAT8_E8M0FNU.nan_code(), Some(0xff));
    /// assert_eq!(FLOAT6_E2M3FN.nan_code(), None); // finite only (OCP MX FP6)
    /// ```
    pub const fn nan_code(&self) -> Option<u32> {
        match (self.non_finite, self.nan_encoding) {
            (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => None,
            (_, NanEncoding::Ieee) => Some(self.exp_mask() | (1 << (self.man_bits - 1))),
            (_, NanEncoding::AllOnes) => Some(self.exp_mask() | self.man_mask()),
            (_, NanEncoding::NegativeZero) => Some(self.sign_mask()),
        }
    }

    /// Whether `code` (only the low [`Format::bits`] bits are looked at) is a
    /// NaN, as ml_dtypes 0.6.0's `isnan` on the bit pattern viewed as `t`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FLOAT4_E2M1FN, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2};
    /// assert!(FLOAT8_E4M3FN.is_nan_code(0x7f));
    /// assert!(FLOAT8_E4M3FN.is_nan_code(0xff)); // either sign
    /// assert!(!FLOAT8_E4M3FN.is_nan_code(0x7e)); // 448
    /// assert!(FLOAT8_E5M2.is_nan_code(0x7d)); // signalling NaN
    /// assert!(!FLOAT8_E5M2.is_nan_code(0x7c)); // +inf
    /// assert!(FLOAT8_E4M3FNUZ.is_nan_code(0x80));
    /// assert!(!FLOAT4_E2M1FN.is_nan_code(0x8)); // -0.0
    /// ```
    pub const fn is_nan_code(&self, code: u32) -> bool {
        let code = code & self.code_mask();
        let mag = code & !self.sign_mask();
        match (self.non_finite, self.nan_encoding) {
            (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => false,
            (_, NanEncoding::Ieee) => {
                (mag & self.exp_mask()) == self.exp_mask() && (mag & self.man_mask()) != 0
            }
            (_, NanEncoding::AllOnes) => mag == self.exp_mask() | self.man_mask(),
            (_, NanEncoding::NegativeZero) => code == self.sign_mask(),
        }
    }

    /// Number of distinct codes, `2^bits()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{BFLOAT16, FLOAT4_E2M1FN, FLOAT6_E2M3FN, FLOAT8_E5M2};
    /// assert_eq!(FLOAT4_E2M1FN.code_count(), 16);
    /// assert_eq!(FLOAT6_E2M3FN.code_count(), 64);
    /// assert_eq!(FLOAT8_E5M2.code_count(), 256);
    /// assert_eq!(BFLOAT16.code_count(), 65536);
    /// ```
    pub const fn code_count(&self) -> u32 {
        1 << self.bits()
    }
}

impl Format {
    /// Whether every integer in `lo..=hi` is a value of the format: the rule
    /// by which a cast from an integer type (NumPy's `bool`, `uint8`, `int8`,
    /// …; the sub-byte integers) into an IEEE P3109 format is "safe". Every
    /// integer up to `n` is a value exactly when `n` is at most
    /// `2^precision` and the largest finite value, `1` is a value, and zero
    /// and negative values are where the range needs them.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{Format, FLOAT8_E4M3FN, FLOAT8_E8M0FNU, BFLOAT16};
    /// assert!(FLOAT8_E4M3FN.holds_integers(-16, 16)); // 4 significant bits: up to 2^4
    /// assert!(!FLOAT8_E4M3FN.holds_integers(0, 17));
    /// assert!(BFLOAT16.holds_integers(-128, 127)); // int8
    /// assert!(!FLOAT8_E8M0FNU.holds_integers(0, 1)); // no zero
    /// let u = Format::p3109(8, 8, false, false).unwrap(); // unsigned, 8 significant bits
    /// assert!(u.holds_integers(0, 1) && !u.holds_integers(-1, 1));
    /// ```
    pub fn holds_integers(&self, lo: i64, hi: i64) -> bool {
        if lo > hi {
            return true;
        }
        if lo <= 0 && 0 <= hi && !self.has_zero || lo < 0 && !self.signed {
            return false;
        }
        let n = lo.unsigned_abs().max(hi.unsigned_abs());
        if n == 0 {
            return true;
        }
        let mb = self.man_bits as i32;
        // 1 is a value, and every binade below it has integer spacing.
        let one = if self.has_zero {
            self.min_exp() - mb <= 0
        } else {
            self.min_exp() <= 0
        };
        one && u128::from(n) <= 1u128 << (mb + 1) && n as f64 <= self.max_finite()
    }

    /// Whether every value of `self` is a value of `to`: every finite value
    /// exactly, ±infinity and −0 where `self` has them, a NaN where `self`
    /// has one. This is the rule by which a cast between these formats is
    /// "safe" for NumPy (`numpy.can_cast(a, b, "safe")`, from which
    /// `numpy.promote_types` follows) for the IEEE P3109 formats. (ml_dtypes
    /// 0.6.0 registers its own types' safe casts by a table that is not this
    /// rule: float8_e4m3fn → float4_e2m1fn is "safe" there, float8_e4m3fn →
    /// bfloat16 is not.)
    ///
    /// Computed from the descriptors, binade by binade (no code is
    /// converted); the tests compare it with a conversion of every code.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{Format, BFLOAT16, FLOAT16, FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT8_E4M3FNUZ};
    /// assert!(FLOAT8_E4M3FN.fits_in(&BFLOAT16));
    /// assert!(FLOAT8_E5M2.fits_in(&FLOAT16));
    /// assert!(!FLOAT8_E4M3FN.fits_in(&FLOAT8_E5M2)); // 3 mantissa bits into 2
    /// assert!(!FLOAT8_E4M3FN.fits_in(&FLOAT8_E4M3FNUZ)); // −0 and 448 are not there
    /// // p3109_k8p4sf has float8_e4m3fnuz's values, p3109_k8p4se has ±inf.
    /// let sf = Format::p3109(8, 4, true, false).unwrap();
    /// assert!(sf.fits_in(&FLOAT8_E4M3FNUZ) && FLOAT8_E4M3FNUZ.fits_in(&sf));
    /// assert!(!Format::p3109(8, 4, true, true).unwrap().fits_in(&FLOAT8_E4M3FNUZ));
    /// ```
    pub fn fits_in(&self, to: &Format) -> bool {
        let (a, b) = (self, to);
        if a.has_nan() && !b.has_nan()
            || a.has_infinity() && !b.has_infinity()
            || a.has_zero && !b.has_zero
            || a.has_signed_zero() && !b.has_signed_zero()
            || a.signed && (a.max_code() > 0 || a.has_infinity()) && !b.signed
        {
            return false;
        }
        let top = a.max_code();
        if top == 0 {
            return true; // zero only (and specials)
        }
        if exact_cmp(a.parts(top), b.parts(b.max_code())) == std::cmp::Ordering::Greater {
            return false;
        }
        // Whether b holds a positive value with leading bit 2^lead and
        // lowest set bit 2^low (at most b's largest value, checked above).
        let holds = |lead: i64, low: i64| -> bool {
            let bt = b.man_bits as i64;
            let bmin = b.min_exp() as i64;
            if !b.has_zero {
                // No subnormals: powers of two 2^bmin .. only when bt == 0,
                // else normal values only.
                return lead >= bmin && low >= lead - bt;
            }
            low >= lead.max(bmin) - bt
        };
        let t = a.man_bits as i64;
        let mask = a.man_mask();
        for e in 0..=(top >> a.man_bits) {
            let lo = e << a.man_bits;
            let f_hi = (top - lo).min(mask) as i64;
            if e == 0 && a.has_zero {
                // Subnormals f · 2^(emin − t), f = 1 ..= f_hi.
                let q = a.min_exp() as i64 - t;
                for j in 0..=(63 - (f_hi as u64).leading_zeros() as i64).max(0) {
                    if f_hi < 1 << j {
                        break;
                    }
                    // f = 2^j (lowest bit j) and 2^j + 1 (lowest bit 0).
                    if !holds(q + j, q + j) {
                        return false;
                    }
                    if j >= 1 && f_hi > 1 << j && !holds(q + j, q) {
                        return false;
                    }
                }
                continue;
            }
            // Normal binade: (2^t + f) · 2^(lead − t).
            let lead = e as i64 - a.bias as i64;
            if !holds(lead, lead) || (f_hi >= 1 && !holds(lead, lead - t)) {
                return false;
            }
        }
        true
    }

    /// The exact finite value of a magnitude code: (significand, exponent).
    const fn parts(&self, mag: u32) -> (u64, i64) {
        let e = mag >> self.man_bits;
        let f = (mag & self.man_mask()) as u64;
        let m = self.man_bits as i64;
        if e == 0 && self.has_zero {
            (f, self.min_exp() as i64 - m)
        } else {
            ((1 << self.man_bits) | f, e as i64 - self.bias as i64 - m)
        }
    }
}

/// Compares two exact values `sig · 2^exp` (significands below 2^17).
fn exact_cmp(a: (u64, i64), b: (u64, i64)) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.0 == 0, b.0 == 0) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    let lead = |(s, e): (u64, i64)| e + 63 - s.leading_zeros() as i64;
    match lead(a).cmp(&lead(b)) {
        Ordering::Equal => {}
        o => return o,
    }
    // Same leading exponent: align the significands (exponents differ by
    // at most the significand widths).
    let e = a.1.min(b.1);
    ((a.0 as u128) << (a.1 - e)).cmp(&((b.0 as u128) << (b.1 - e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_facts_match_the_seed() {
        let cases: &[(Format, f64, f64, f64)] = &[
            // (format, max, smallest normal, smallest subnormal)
            (
                BFLOAT16,
                3.3895313892515355e38,
                2f64.powi(-126),
                2f64.powi(-133),
            ),
            (FLOAT16, 65504.0, 2f64.powi(-14), 2f64.powi(-24)),
            (FLOAT8_E3M4, 15.5, 0.25, 2f64.powi(-6)),
            (FLOAT8_E4M3, 240.0, 2f64.powi(-6), 2f64.powi(-9)),
            (FLOAT8_E4M3FN, 448.0, 2f64.powi(-6), 2f64.powi(-9)),
            (FLOAT8_E4M3FNUZ, 240.0, 2f64.powi(-7), 2f64.powi(-10)),
            (FLOAT8_E4M3B11FNUZ, 30.0, 2f64.powi(-10), 2f64.powi(-13)),
            (FLOAT8_E5M2, 57344.0, 2f64.powi(-14), 2f64.powi(-16)),
            (FLOAT8_E5M2FNUZ, 57344.0, 2f64.powi(-15), 2f64.powi(-17)),
            (
                FLOAT8_E8M0FNU,
                2f64.powi(127),
                2f64.powi(-127),
                2f64.powi(-127),
            ),
            (FLOAT6_E2M3FN, 7.5, 1.0, 0.125),
            (FLOAT6_E3M2FN, 28.0, 0.25, 0.0625),
            (FLOAT4_E2M1FN, 6.0, 1.0, 0.5),
        ];
        for &(f, max, tiny, sub) in cases {
            assert_eq!(f.max_finite(), max, "{}", f.name);
            assert_eq!(f.min_positive_normal(), tiny, "{}", f.name);
            assert_eq!(f.min_positive_subnormal(), sub, "{}", f.name);
        }
        assert_eq!(ALL.len(), 13);
    }

    #[test]
    fn nan_codes() {
        assert_eq!(FLOAT8_E4M3FNUZ.nan_code(), Some(0x80));
        assert!(FLOAT8_E4M3FN.is_nan_code(0xff));
        assert!(!FLOAT8_E4M3FN.is_nan_code(0xfe));
        assert_eq!(FLOAT8_E8M0FNU.nan_code(), Some(0xff));
        assert_eq!(FLOAT8_E5M2.nan_code(), Some(0x7e));
        assert_eq!(FLOAT8_E5M2.inf_code(), Some(0x7c));
        assert_eq!(BFLOAT16.nan_code(), Some(0x7fc0));
        assert_eq!(FLOAT4_E2M1FN.nan_code(), None);
        assert_eq!(FLOAT6_E2M3FN.bits(), 6);
        assert_eq!(FLOAT8_E8M0FNU.bits(), 8);
    }
}

#[cfg(test)]
mod validation_tests {
    use super::*;

    #[test]
    fn named_formats_validate_and_bad_descriptors_are_refused() {
        for f in ALL {
            assert_eq!(f.validate(), Ok(()), "{}", f.name);
        }
        let new = |e, m, b, nf, nan, signed, zero| Format::new("x", e, m, b, nf, nan, signed, zero);
        use NanEncoding as N;
        use NonFinite as F;
        assert_eq!(
            new(0, 3, 7, F::Ieee, N::Ieee, true, true),
            Err(FormatError::ExponentBits(0))
        );
        assert_eq!(
            new(17, 3, 7, F::Ieee, N::Ieee, true, true),
            Err(FormatError::ExponentBits(17))
        );
        assert_eq!(
            new(8, 25, 127, F::Ieee, N::Ieee, true, true),
            Err(FormatError::Width(34))
        );
        assert_eq!(
            new(8, u32::MAX, 127, F::Ieee, N::Ieee, true, true),
            Err(FormatError::Width(u32::MAX))
        );
        assert_eq!(
            new(1, 0, 0, F::FiniteOnly, N::None, false, true),
            Err(FormatError::Width(1))
        );
        assert_eq!(
            new(5, 2, -200_000, F::Ieee, N::Ieee, true, true),
            Err(FormatError::Bias(-200_000))
        );
        assert_eq!(
            new(5, 2, 200_000, F::Ieee, N::Ieee, true, true),
            Err(FormatError::Bias(200_000))
        );
        // Exponent fields beyond float32's and float64's are descriptors too.
        assert!(new(9, 3, 7, F::Ieee, N::Ieee, true, true).is_ok());
        assert!(new(5, 2, 200, F::Ieee, N::Ieee, true, true).is_ok());
        assert_eq!(
            new(1, 0, 0, F::InfAtMax, N::AllOnes, true, true),
            Err(FormatError::NonFinite)
        );
        assert_eq!(
            new(4, 3, 8, F::InfAtMax, N::NegativeZero, true, false),
            Err(FormatError::Zero)
        );
        assert_eq!(
            new(5, 2, 15, F::Ieee, N::AllOnes, true, true),
            Err(FormatError::NonFinite)
        );
        assert_eq!(
            new(5, 0, 15, F::Ieee, N::Ieee, true, true),
            Err(FormatError::NonFinite)
        );
        assert_eq!(
            new(4, 3, 8, F::NanOnly, N::NegativeZero, false, true),
            Err(FormatError::Zero)
        );
        assert!(new(4, 3, 8, F::NanOnly, N::NegativeZero, true, true).is_ok());
    }
}
