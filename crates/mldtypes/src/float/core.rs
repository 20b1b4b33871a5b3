//! The generic scalar core: encoding and decoding of any [`Format`], driven
//! only by its descriptor. Every rounding in the crate goes through here.
//!
//! Codes are passed as `u32` holding the format's bits in the low
//! [`Format::bits`] bits; bits above them are ignored on input and are zero
//! on output.
//!
//! # Speed
//!
//! The public functions take the descriptor by reference, but a descriptor
//! that states one of the named formats (every scalar type passes its
//! constant `FORMAT`) selects that format's compile-time instance, so the
//! call compiles to straight-line bit arithmetic with the format's
//! parameters as literals: the same element conversions the slice kernels
//! of [`crate::cast`] run. Formats of at most 8 bits decode through a
//! 256-entry table built at compile time and encode float32 (non-saturating)
//! through a 64 KiB table built on first use. Any other descriptor takes
//! the fully generic path, which also serves as the reference the fast
//! paths are tested against (and the scalar path of [`crate::cast`]).
//!
//! # Rounding
//!
//! Finite inputs are rounded to nearest, ties to even (IEEE 754
//! `roundTiesToEven`), with subnormal inputs and outputs handled exactly.
//! Formats without mantissa bits (float8_e8m0fnu) round ties away from zero
//! ("round half up"), as ml_dtypes does. What happens to values that do not
//! fit, to NaN, to infinities, and to zero depends on the format's
//! non-finite behaviour and is described on [`encode_f32`].
//!
//! # Examples
//!
//! ```
//! use mldtypes::float::core::{decode_f32, encode_f32, encode_f64};
//! use mldtypes::format::{Overflow, FLOAT8_E4M3FN};
//! let c = encode_f32(&FLOAT8_E4M3FN, 464.0, Overflow::NonSaturating);
//! assert_eq!(c, 0x7e); // a tie between 448 and 480 rounds to the even 448
//! assert_eq!(decode_f32(&FLOAT8_E4M3FN, c), 448.0);
//! assert_eq!(encode_f64(&FLOAT8_E4M3FN, 464.01, Overflow::NonSaturating), 0x7f); // NaN
//! ```

use super::kernels::{self, Fmt};
use crate::format::{self, Format, NanEncoding, NonFinite, Overflow, FLOAT16};

/// Whether two descriptors state the same format (every field but the name).
#[inline(always)]
const fn same(a: &Format, b: &Format) -> bool {
    a.exp_bits == b.exp_bits
        && a.man_bits == b.man_bits
        && a.bias == b.bias
        && a.non_finite as u8 == b.non_finite as u8
        && a.nan_encoding as u8 == b.nan_encoding as u8
        && a.signed == b.signed
        && a.has_zero == b.has_zero
}

/// Evaluates `$body` with `$M` the compile-time marker
/// ([`kernels::Fmt`]) of the named format that `$fmt` states, or `$other`
/// if it states none. With a constant `$fmt` (every scalar type's
/// `FORMAT`) the comparisons fold away and only the one instance remains:
/// straight-line bit arithmetic with the format's parameters as literals.
macro_rules! with_named {
    (@arm $f:ident, $M:ident, $body:expr, $other:expr, ) => { $other };
    (@arm $f:ident, $M:ident, $body:expr, $other:expr, $mk:ident = $fmt:ident, $($rest:tt)*) => {
        if same($f, &format::$fmt) {
            type $M = kernels::$mk;
            $body
        } else {
            with_named!(@arm $f, $M, $body, $other, $($rest)*)
        }
    };
    ($fmt:expr, |$M:ident| $body:expr, $other:expr) => {{
        let f: &Format = $fmt;
        with_named!(@arm f, $M, $body, $other,
            BF16 = BFLOAT16, F16 = FLOAT16, E3M4 = FLOAT8_E3M4, E4M3 = FLOAT8_E4M3,
            E4M3FN = FLOAT8_E4M3FN, E4M3FNUZ = FLOAT8_E4M3FNUZ,
            E4M3B11FNUZ = FLOAT8_E4M3B11FNUZ, E5M2 = FLOAT8_E5M2,
            E5M2FNUZ = FLOAT8_E5M2FNUZ, E8M0FNU = FLOAT8_E8M0FNU,
            F6E2M3 = FLOAT6_E2M3FN, F6E3M2 = FLOAT6_E3M2FN, F4E2M1 = FLOAT4_E2M1FN,
        )
    }};
}

/// The position of the named format `f` in [`format::ALL`].
const fn slot(f: &Format) -> usize {
    let mut i = 0;
    while i < format::ALL.len() {
        if same(f, &format::ALL[i]) {
            return i;
        }
        i += 1;
    }
    panic!("not a named format")
}

/// float32 → code of a format of at most 8 bits with at most 5 mantissa
/// bits, non-saturating, in one table look-up.
///
/// The table is indexed by the top 16 bits of the float32 (sign, exponent,
/// 7 mantissa bits) with the lowest index bit forced to 1 when any of the
/// 16 bits below it is set. Every rounding boundary of such a format
/// (a midpoint between neighbouring values, the overflow threshold, and
/// float8_e8m0fnu's 2^-127 subnormal threshold) is a multiple of 2^17 in
/// float32 bit space, so all inputs that share an index round alike, and
/// entry `i` is the element conversion of the float32 with bits `i << 16`.
/// The 64 KiB table of a format is built on first use.
#[inline(always)]
fn encode_by_table<M: Fmt>(b: u32) -> u32 {
    if M::F.bits() > 8 || M::F.man_bits > 5 {
        // Not such a format (folds away for those that are).
        return kernels::enc_f32::<M, false>(b);
    }
    type Table = Box<[u8; 1 << 16]>;
    static TABLES: [std::sync::OnceLock<Table>; format::ALL.len()] =
        [const { std::sync::OnceLock::new() }; format::ALL.len()];
    let table = TABLES[const { slot(&M::F) }].get_or_init(|| {
        let mut t: Table = Box::new([0; 1 << 16]);
        for (i, e) in t.iter_mut().enumerate() {
            *e = kernels::enc_f32::<M, false>((i as u32) << 16) as u8;
        }
        t
    });
    let i = (b >> 16) | ((b & 0xffff) != 0) as u32;
    table[i as usize] as u32
}

/// How the magnitude of an inexact value is rounded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Round {
    /// Nearest, ties to even.
    TiesEven,
    /// Nearest, ties away from zero.
    TiesAway,
}

/// The round-to-nearest rule of a format: ties away from zero for
/// float8_e8m0fnu (no mantissa bits and no zero), as ml_dtypes does; ties
/// to the even code otherwise (for the IEEE P3109 formats without mantissa
/// bits that is the even biased exponent, as gfloat rounds them).
const fn nearest_rule(fmt: &Format) -> Round {
    if fmt.man_bits == 0 && !fmt.has_zero {
        Round::TiesAway
    } else {
        Round::TiesEven
    }
}

/// Whether `fmt` is IEEE binary16 (whatever its name), whose NaN payloads
/// follow NumPy's conversions.
#[inline(always)]
const fn is_binary16(fmt: &Format) -> bool {
    same(fmt, &FLOAT16)
}

/// `2^k` as an `f64`, for `-1074 <= k <= 1023`.
#[inline]
const fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// `sig · 2^exp` rounded once to the nearest `f64` (ties to even; overflow
/// to +inf, gradual underflow), for `sig < 2^53` and any `exp`: the first
/// factor keeps the product exact and normal, the second rounds it.
const fn scale_f64(sig: u64, exp: i32) -> f64 {
    let s1 = if exp < -1000 {
        -1000
    } else if exp > 1000 {
        1000
    } else {
        exp
    };
    let rest = exp - s1;
    let s2 = if rest < -1000 {
        -1000
    } else if rest > 1000 {
        1000
    } else {
        rest
    };
    sig as f64 * pow2(s1) * pow2(s2)
}

/// The sign bit of `fmt` if `neg`, else 0.
#[inline]
fn sign_bit(fmt: &Format, neg: bool) -> u32 {
    if neg {
        fmt.sign_mask()
    } else {
        0
    }
}

/// The code a NaN input of the given sign becomes.
///
/// IEEE formats and signed all-ones formats keep the sign on the canonical
/// quiet NaN; negative-zero-NaN and unsigned formats have a single NaN.
/// Formats without a NaN (float6, float4) follow ml_dtypes: +NaN becomes
/// −0 and −NaN becomes +0.
#[inline]
fn nan_result(fmt: &Format, neg: bool) -> u32 {
    match fmt.nan_code() {
        Some(nan) => match fmt.nan_encoding {
            NanEncoding::NegativeZero => nan,
            _ => nan | sign_bit(fmt, neg),
        },
        None => sign_bit(fmt, !neg),
    }
}

/// The float16 code NumPy gives a NaN input of sign `neg` whose mantissa
/// (without the exponent) is `payload`, `bits` bits wide: sign kept, the
/// top 10 payload bits kept as they are (no quiet bit forced), and a
/// payload that truncates to zero becomes 1 so that the result stays a NaN.
#[inline]
fn float16_nan(neg: bool, payload: u64, bits: u32) -> u32 {
    let p = (payload >> (bits - 10)) as u32;
    ((neg as u32) << 15) | 0x7c00 | p.max(1)
}

/// The code of a finite value too large for the format.
#[inline]
fn overflow_result(fmt: &Format, neg: bool, ov: Overflow) -> u32 {
    match (ov, fmt.non_finite) {
        (Overflow::NonSaturating, NonFinite::Ieee | NonFinite::InfAtMax) => {
            fmt.inf_code().unwrap_or(0) | sign_bit(fmt, neg)
        }
        (Overflow::NonSaturating, NonFinite::NanOnly) => nan_result(fmt, neg),
        // A largest value of zero (p3109_k2p1se) takes the zero's sign rule.
        _ if fmt.max_code() == 0 => zero_result(fmt, neg),
        _ => fmt.max_code() | sign_bit(fmt, neg),
    }
}

/// The code of an infinite input.
#[inline]
fn inf_result(fmt: &Format, neg: bool, ov: Overflow) -> u32 {
    if neg && !fmt.signed {
        return nan_result(fmt, neg);
    }
    match (ov, fmt.non_finite) {
        (Overflow::NonSaturating, NonFinite::Ieee | NonFinite::InfAtMax) => {
            fmt.inf_code().unwrap_or(0) | sign_bit(fmt, neg)
        }
        _ => overflow_result(fmt, neg, ov),
    }
}

/// The code of an exact zero input (or a value that rounded to zero).
#[inline]
fn zero_result(fmt: &Format, neg: bool) -> u32 {
    if !fmt.has_zero {
        nan_result(fmt, neg)
    } else if fmt.has_signed_zero() {
        sign_bit(fmt, neg)
    } else {
        0
    }
}

/// Rounds the non-zero finite value `(-1)^neg × sig × 2^exp` into `fmt`.
///
/// Unsigned formats: without a zero (float8_e8m0fnu) every negative value
/// is NaN; with one (the IEEE P3109 `u` formats) a negative value whose
/// magnitude rounds to zero gives +0 and any other gives NaN.
#[inline]
fn round_finite(fmt: &Format, neg: bool, sig: u64, exp: i32, mode: Round, ov: Overflow) -> u32 {
    debug_assert!(sig != 0);
    if neg && !fmt.signed && !fmt.has_zero {
        return nan_result(fmt, neg);
    }
    let man_bits = fmt.man_bits as i32;
    let top = 63 - sig.leading_zeros() as i32;
    // Exponent of the unit in the last place of the result.
    let mut q = (exp + top).max(fmt.min_exp()) - man_bits;
    let shift = q - exp;
    let mut m = if shift <= 0 {
        sig << (-shift)
    } else {
        let (m, rem, half) = if shift >= 64 {
            // sig < 2^64 <= 2^(shift-1) ... so the value is below half an ulp.
            (0, sig, u64::MAX)
        } else {
            (
                sig >> shift,
                sig & ((1u64 << shift) - 1),
                1u64 << (shift - 1),
            )
        };
        // The parity of the code `m` stands for: its last mantissa bit, or
        // without mantissa bits its biased exponent (0 is the even zero).
        let odd = if man_bits > 0 {
            m & 1 == 1
        } else {
            m == 1 && (q + fmt.bias) & 1 == 1
        };
        let up = match mode {
            Round::TiesEven => rem > half || (rem == half && odd),
            Round::TiesAway => rem >= half,
        };
        m + up as u64
    };
    if m >> (man_bits + 1) != 0 {
        m >>= 1;
        q += 1;
    }
    if m == 0 {
        // Rounded to zero; formats without a zero stop at their smallest value.
        return if fmt.has_zero {
            zero_result(fmt, neg)
        } else {
            0
        };
    }
    if neg && !fmt.signed {
        return nan_result(fmt, neg);
    }
    let implicit = 1u64 << man_bits;
    let code = if m >= implicit {
        let biased = (q + man_bits + fmt.bias) as i64;
        debug_assert!(biased >= 0);
        ((biased as u64) << man_bits) | (m - implicit)
    } else {
        m
    };
    if code > fmt.max_code() as u64 {
        return overflow_result(fmt, neg, ov);
    }
    code as u32 | sign_bit(fmt, neg)
}

/// Encodes an `f32` into `fmt`, rounding to nearest, ties to even, as
/// ml_dtypes 0.6.0 converts `float32` (NumPy `astype`), except for the one
/// deviation below.
///
/// - Overflow ([`Overflow::NonSaturating`], ml_dtypes): ±infinity in IEEE
///   formats; NaN in NaN-only formats (signed NaN `0bS111_1111` for
///   float8_e4m3fn, `0x80` for fnuz formats, `0xFF` for float8_e8m0fnu);
///   ±max in finite-only formats (float6, float4). With
///   [`Overflow::Saturating`], ±max finite (and ±infinity becomes ±max).
/// - NaN: the canonical quiet NaN with the input's sign (IEEE ml_dtypes
///   formats and float8_e4m3fn), the single NaN of fnuz and
///   float8_e8m0fnu; formats without NaN map +NaN to −0 and −NaN to +0
///   (ml_dtypes' behaviour). float16 (NumPy's IEEE binary16) keeps the
///   payload bit for bit as NumPy does: sign and the top 10 mantissa bits,
///   no quiet bit forced, a payload truncating to zero becomes 1
///   (`0x7f800001` → `0x7c01`, `0xffa00000` → `0xfd00`, `0x7fc00000` →
///   `0x7e00`).
/// - Zero: fnuz formats have only +0 (−0 becomes +0); float8_e8m0fnu has no
///   zero: zero, negative values and NaN become its NaN `0xFF`, positive
///   values below 2^-127 become `0x00` (2^-127), ties round away from zero.
/// - float32 subnormals in a format without mantissa bits
///   (float8_e8m0fnu): every subnormal above 2^-127, i.e. all of
///   (2^-127, 2^-126), becomes 2^-126 (`0x01`), as ml_dtypes 0.6.0 and
///   PyTorch 2.15 both convert them (they round the subnormal's mantissa
///   field as if it were a normal one), although (2^-127, 1.5·2^-127) lies
///   nearer 2^-127; 2^-127 itself and smaller positive subnormals give
///   `0x00`. [`encode_f64`] rounds those values to nearest, so for the
///   2,097,151 float32 bit patterns `0x00400001`–`0x005fffff` (and only
///   those) `encode_f32(fmt, x, ov) != encode_f64(fmt, x as f64, ov)`.
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::encode_f32;
/// use mldtypes::format::{Overflow::*, BFLOAT16, FLOAT16, FLOAT4_E2M1FN, FLOAT8_E5M2, FLOAT8_E8M0FNU};
/// assert_eq!(encode_f32(&BFLOAT16, 1.0, NonSaturating), 0x3f80);
/// assert_eq!(encode_f32(&FLOAT8_E5M2, 1e6, NonSaturating), 0x7c); // +inf
/// assert_eq!(encode_f32(&FLOAT8_E5M2, 1e6, Saturating), 0x7b); // 57344
/// assert_eq!(encode_f32(&FLOAT4_E2M1FN, f32::NAN, NonSaturating), 0x8); // −0
/// // Subnormal 2^-127·(1 + 2^-22) becomes 2^-126, as in ml_dtypes and PyTorch.
/// assert_eq!(encode_f32(&FLOAT8_E8M0FNU, f32::from_bits(0x0040_0001), NonSaturating), 0x01);
/// assert_eq!(encode_f32(&FLOAT8_E8M0FNU, f32::from_bits(0x0040_0000), NonSaturating), 0x00);
/// // float16 keeps NaN payloads as NumPy does.
/// assert_eq!(encode_f32(&FLOAT16, f32::from_bits(0x7f80_0001), NonSaturating), 0x7c01);
/// assert_eq!(encode_f32(&FLOAT16, f32::from_bits(0xffa0_0000), NonSaturating), 0xfd00);
/// ```
#[inline(always)]
pub fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    with_named!(
        fmt,
        |M| match ov {
            Overflow::NonSaturating if M::F.bits() <= 8 => encode_by_table::<M>(x.to_bits()),
            Overflow::NonSaturating => kernels::enc_f32::<M, false>(x.to_bits()),
            Overflow::Saturating => kernels::enc_f32::<M, true>(x.to_bits()),
        },
        encode_f32_generic(fmt, x, ov)
    )
}

/// [`encode_f32`] computed from the descriptor's fields at run time, one
/// rounding step written out in full: the definition the compile-time
/// paths of the named formats are tested against, and the path for any
/// other [`Format`].
#[inline(never)]
pub(crate) fn encode_f32_generic(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    let b = x.to_bits();
    let neg = b >> 31 != 0;
    let e = (b >> 23) & 0xff;
    let m = b & 0x7f_ffff;
    if e == 0xff {
        return if m != 0 && is_binary16(fmt) {
            float16_nan(neg, m as u64, 23)
        } else if m != 0 {
            nan_result(fmt, neg)
        } else {
            inf_result(fmt, neg, ov)
        };
    }
    if e == 0 {
        if m == 0 {
            return zero_result(fmt, neg);
        }
        if fmt.man_bits == 0 && !fmt.has_zero && m > 0x40_0000 {
            // ml_dtypes 0.6.0 and PyTorch: above 2^-127, 2^-126 (see above).
            return round_finite(fmt, neg, 1, -126, nearest_rule(fmt), ov);
        }
        return round_finite(fmt, neg, m as u64, -149, nearest_rule(fmt), ov);
    }
    round_finite(
        fmt,
        neg,
        (m | 0x80_0000) as u64,
        e as i32 - 150,
        nearest_rule(fmt),
        ov,
    )
}

/// Encodes an `f64` into `fmt`, correctly rounded in one step from the
/// `f64` value (never through `f32`).
///
/// Special values, overflow and zero are treated as in [`encode_f32`];
/// float16 NaNs keep the top 10 bits of the `f64` payload as NumPy's
/// `float64` → `float16` cast does (`0x7ff0000000000001` → `0x7c01`).
///
/// Deliberate deviation from ml_dtypes 0.6.0: NumPy casts from `float64`
/// to the ml_dtypes formats round to `float32` first and then to the
/// target, so a value just above a tie of the target format can round the
/// wrong way there. This function rounds once, to nearest: float8_e8m0fnu
/// values in (2^-127, 1.5·2^-127) give `0x00`, where ml_dtypes' float64
/// route (and [`encode_f32`] for float32 subnormals, following it) gives
/// `0x01`. ml_dtypes' float8_e8m0fnu scalar
/// constructor (`float8_e8m0fnu(x)` for a Python float) returns `0x00`
/// (2^-127) for doubles in [1.5·2^128, 2^129), which overflow; this
/// function gives NaN (`0xFF`) there, as for every other overflow.
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::encode_f64;
/// use mldtypes::format::{Overflow::NonSaturating, FLOAT8_E4M3FN};
/// // 1 + 2^-4 + 2^-30 is above the tie between 1 and 1.125; a float32
/// // route would lose the 2^-30 and round the tie to even (1.0).
/// let x = 1.0 + 2f64.powi(-4) + 2f64.powi(-30);
/// assert_eq!(encode_f64(&FLOAT8_E4M3FN, x, NonSaturating), 0x39); // 1.125
/// ```
#[inline(always)]
pub fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    with_named!(
        fmt,
        |M| match ov {
            Overflow::NonSaturating => kernels::enc_f64::<M, false>(x.to_bits()),
            Overflow::Saturating => kernels::enc_f64::<M, true>(x.to_bits()),
        },
        encode_f64_generic(fmt, x, ov)
    )
}

/// [`encode_f64`] computed from the descriptor's fields at run time (see
/// [`encode_f32_generic`]).
#[inline(never)]
pub(crate) fn encode_f64_generic(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7ff) as i32;
    let m = b & ((1u64 << 52) - 1);
    if e == 0x7ff {
        return if m != 0 && is_binary16(fmt) {
            float16_nan(neg, m, 52)
        } else if m != 0 {
            nan_result(fmt, neg)
        } else {
            inf_result(fmt, neg, ov)
        };
    }
    if e == 0 {
        if m == 0 {
            return zero_result(fmt, neg);
        }
        return round_finite(fmt, neg, m, -1074, nearest_rule(fmt), ov);
    }
    round_finite(fmt, neg, m | (1u64 << 52), e - 1075, nearest_rule(fmt), ov)
}

/// The `f32` NaN bit pattern ml_dtypes produces for a NaN code.
///
/// 16-bit formats (bfloat16, float16) keep sign and payload, left-aligned in
/// the `f32` mantissa (bfloat16 is a truncated `f32`; NumPy widens float16
/// this way). The float8 formats give the canonical quiet NaN with the
/// code's sign; the fnuz NaN `0x80` gives the *negative* quiet NaN.
#[inline]
const fn nan_bits_f32(fmt: &Format, code: u32) -> u32 {
    let neg = code & fmt.sign_mask() != 0;
    let sign = (neg as u32) << 31;
    if fmt.bits() >= 16 && matches!(fmt.nan_encoding, NanEncoding::Ieee) {
        sign | 0x7f80_0000 | ((code & fmt.man_mask()) << (23 - fmt.man_bits))
    } else {
        sign | 0x7fc0_0000
    }
}

/// The exact value of a code of some format: what [`value_parts`] returns.
///
/// A finite value is `(-1)^negative × significand × 2^exponent` exactly
/// (the significand has at most 16 bits; zero has significand 0), which
/// holds the values of every format, also those of the IEEE P3109 formats
/// beyond float64's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeValue {
    /// A NaN code.
    Nan,
    /// ±infinity.
    Infinity {
        /// −infinity.
        negative: bool,
    },
    /// A finite value (zero included).
    Finite {
        /// The sign bit is set (−0 included).
        negative: bool,
        /// The integer significand.
        significand: u64,
        /// The power of two it is scaled by.
        exponent: i32,
    },
}

/// The exact value of `code` (low [`Format::bits`] bits) of `fmt`, as an
/// integer significand and a power of two.
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::{value_parts, CodeValue};
/// use mldtypes::format::{Format, FLOAT8_E4M3FN};
/// assert_eq!(
///     value_parts(&FLOAT8_E4M3FN, 0x7e), // 448 = 14 × 2^5
///     CodeValue::Finite { negative: false, significand: 14, exponent: 5 }
/// );
/// assert_eq!(value_parts(&FLOAT8_E4M3FN, 0xff), CodeValue::Nan);
/// // p3109_k16p1se's largest value is 2^16382, beyond float64.
/// let wide = Format::p3109(16, 1, true, true).unwrap();
/// assert_eq!(
///     value_parts(&wide, 0x7ffe),
///     CodeValue::Finite { negative: false, significand: 1, exponent: 16382 }
/// );
/// assert_eq!(value_parts(&wide, 0xffff), CodeValue::Infinity { negative: true });
/// ```
pub const fn value_parts(fmt: &Format, code: u32) -> CodeValue {
    let code = code & fmt.code_mask();
    if fmt.is_nan_code(code) {
        return CodeValue::Nan;
    }
    let negative = code & fmt.sign_mask() != 0;
    let mag = code & !fmt.sign_mask();
    if let Some(inf) = fmt.inf_code() {
        if mag == inf {
            return CodeValue::Infinity { negative };
        }
    }
    let e = mag >> fmt.man_bits;
    let f = mag & fmt.man_mask();
    let man_bits = fmt.man_bits as i32;
    let (significand, exponent) = if e == 0 && fmt.has_zero {
        (f as u64, fmt.min_exp() - man_bits)
    } else {
        (
            ((1u64 << man_bits) | f as u64),
            e as i32 - fmt.bias - man_bits,
        )
    };
    CodeValue::Finite {
        negative,
        significand,
        exponent,
    }
}

impl std::fmt::Display for CodeValue {
    /// Exact hexadecimal-float text, as C's `%a` (and Rust's hex-float
    /// parsers) read it: `0x1.8p+16001`, `-0x1p-16383`, `0x0p+0`, `inf`,
    /// `-inf`, `nan`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float::core::value_parts;
    /// use mldtypes::format::{Format, FLOAT8_E4M3FN};
    /// assert_eq!(value_parts(&FLOAT8_E4M3FN, 0x7e).to_string(), "0x1.cp+8"); // 448
    /// assert_eq!(value_parts(&FLOAT8_E4M3FN, 0x80).to_string(), "-0x0p+0");
    /// let wide = Format::p3109(16, 2, true, true).unwrap();
    /// assert_eq!(value_parts(&wide, 0x7ffe).to_string(), "0x1p+8191"); // the largest value
    /// assert_eq!(value_parts(&wide, 0x7ffd).to_string(), "0x1.8p+8190");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            CodeValue::Nan => f.write_str("nan"),
            CodeValue::Infinity { negative } => f.write_str(if negative { "-inf" } else { "inf" }),
            CodeValue::Finite {
                negative,
                significand,
                exponent,
            } => {
                let sign = if negative { "-" } else { "" };
                if significand == 0 {
                    return write!(f, "{sign}0x0p+0");
                }
                let lead = 63 - significand.leading_zeros() as i32;
                // Fraction bits below the leading one, padded to whole
                // hexadecimal digits, trailing zero digits dropped.
                let frac = significand & ((1u64 << lead) - 1);
                let digits = (lead as u32).div_ceil(4);
                let mut text = String::new();
                if digits > 0 {
                    let v = frac << (digits * 4 - lead as u32);
                    text = format!("{v:0width$x}", width = digits as usize);
                    while text.ends_with('0') {
                        text.pop();
                    }
                }
                let e = exponent + lead;
                let dot = if text.is_empty() { "" } else { "." };
                write!(f, "{sign}0x1{dot}{text}p{e:+}")
            }
        }
    }
}

/// The IEEE class of `code` of `fmt` (zero, subnormal, normal, infinite,
/// NaN), from the code's fields: exact also where the value reaches beyond
/// float64.
///
/// # Examples
///
/// ```
/// use std::num::FpCategory;
/// use mldtypes::float::core::classify;
/// use mldtypes::format::Format;
/// let f = Format::p3109(16, 1, true, true).unwrap();
/// assert_eq!(classify(&f, 0x0001), FpCategory::Normal); // 2^-16383, which float64 flushes to 0
/// assert_eq!(classify(&f, 0x7fff), FpCategory::Infinite);
/// assert_eq!(classify(&f, 0x8000), FpCategory::Nan);
/// ```
pub fn classify(fmt: &Format, code: u32) -> std::num::FpCategory {
    super::ops::classify(fmt, code)
}

/// Decodes `code` of `fmt` to its `f64` value (rounded to nearest even
/// where the format reaches beyond float64), `None` for NaN codes.
#[inline]
const fn finite_or_inf(fmt: &Format, code: u32) -> Option<f64> {
    let (neg, v) = match value_parts(fmt, code) {
        CodeValue::Nan => return None,
        CodeValue::Infinity { negative } => (negative, f64::INFINITY),
        CodeValue::Finite {
            negative,
            significand,
            exponent,
        } => (negative, scale_f64(significand, exponent)),
    };
    Some(if neg { -v } else { v })
}

/// Decodes `code` of `fmt` to `f32`: exact for every named format and every
/// format that [fits float32](Format::fits_f32); the IEEE P3109 formats with
/// more than 8 exponent bits round to nearest even (overflow to ±inf,
/// gradual underflow to subnormals and ±0).
///
/// NaN codes give the NaN bit pattern ml_dtypes gives: bfloat16 (and
/// float16) keep sign and payload; float8 IEEE formats and float8_e4m3fn
/// give the canonical quiet NaN with the code's sign; the fnuz NaN gives
/// the negative quiet NaN `0xffc00000`; float8_e8m0fnu `0xFF` gives
/// `0x7fc00000`.
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::decode_f32;
/// use mldtypes::format::{FLOAT8_E4M3FNUZ, FLOAT8_E8M0FNU, FLOAT8_E5M2};
/// assert_eq!(decode_f32(&FLOAT8_E5M2, 0x3c), 1.0);
/// assert_eq!(decode_f32(&FLOAT8_E5M2, 0xfc), f32::NEG_INFINITY);
/// assert_eq!(decode_f32(&FLOAT8_E8M0FNU, 0x00), 2f32.powi(-127));
/// assert_eq!(decode_f32(&FLOAT8_E4M3FNUZ, 0x80).to_bits(), 0xffc0_0000);
/// ```
#[inline(always)]
pub fn decode_f32(fmt: &Format, code: u32) -> f32 {
    with_named!(
        fmt,
        |M| if M::F.bits() <= 8 {
            // One load from a table built at compile time by the generic
            // decoder below.
            let table: &'static [u32; 256] = const { &decode_table(&M::F) };
            f32::from_bits(table[(code & 0xff) as usize])
        } else {
            f32::from_bits(kernels::dec_f32::<M>(code))
        },
        f32::from_bits(decode_f32_bits(fmt, code))
    )
}

/// The `f32` bit pattern of `code`, from the descriptor's fields alone
/// (the definition behind [`decode_f32`] and its tables). Where the value
/// is not a float64 (beyond its range) the float32 result is ±0 or ±inf
/// either way, so rounding through the float64 rounds once.
#[inline(never)]
pub(crate) const fn decode_f32_bits(fmt: &Format, code: u32) -> u32 {
    match finite_or_inf(fmt, code) {
        Some(v) => (v as f32).to_bits(),
        None => nan_bits_f32(fmt, code),
    }
}

/// [`decode_f32`] from the descriptor's fields alone.
pub(crate) fn decode_f32_generic(fmt: &Format, code: u32) -> f32 {
    f32::from_bits(decode_f32_bits(fmt, code))
}

/// The `f32` bit patterns of codes `0..256` of a format of at most 8 bits
/// (bits above the format's width ignored), evaluated at compile time.
const fn decode_table(fmt: &Format) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = decode_f32_bits(fmt, c as u32 & fmt.code_mask());
        c += 1;
    }
    t
}

/// Decodes `code` of `fmt` to its exact `f64` value (rounded to nearest
/// even for the IEEE P3109 formats that reach beyond float64, see
/// [`Format::fits_f64`]; [`value_parts`] gives their exact values).
///
/// NaN codes give the `f32` NaN of [`decode_f32`] widened as hardware does
/// (sign and payload kept, quiet bit set), which is what NumPy's
/// `astype(float64)` yields for the ml_dtypes types; float16 NaNs are
/// widened bit by bit without setting the quiet bit, as NumPy does.
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::decode_f64;
/// use mldtypes::format::{BFLOAT16, FLOAT6_E3M2FN};
/// assert_eq!(decode_f64(&FLOAT6_E3M2FN, 0x1f), 28.0);
/// assert_eq!(decode_f64(&FLOAT6_E3M2FN, 0x20).to_bits(), (-0.0f64).to_bits());
/// assert_eq!(decode_f64(&BFLOAT16, 0x0001), 2f64.powi(-133));
/// ```
#[inline(always)]
pub fn decode_f64(fmt: &Format, code: u32) -> f64 {
    if !fmt.fits_f32() {
        return decode_f64_generic(fmt, code);
    }
    let x = decode_f32(fmt, code);
    if x.is_nan() {
        decode_f64_generic(fmt, code)
    } else {
        // The format's values are `f32`s: widening is exact.
        x as f64
    }
}

/// [`decode_f64`] from the descriptor's fields alone.
#[inline(never)]
pub(crate) fn decode_f64_generic(fmt: &Format, code: u32) -> f64 {
    match finite_or_inf(fmt, code) {
        Some(v) => v,
        None => {
            let b = nan_bits_f32(fmt, code) as u64;
            // NumPy widens float16 bit by bit (signalling NaNs stay
            // signalling); the ml_dtypes formats go through a hardware
            // float32 → float64 conversion, which sets the quiet bit.
            let quiet = if is_binary16(fmt) {
                0
            } else {
                0x0008_0000_0000_0000
            };
            f64::from_bits(
                ((b >> 31) << 63) | 0x7ff0_0000_0000_0000 | quiet | ((b & 0x7f_ffff) << 29),
            )
        }
    }
}

/// Converts `code` of format `from` directly to format `to`, correctly
/// rounded (one rounding), equal to ml_dtypes 0.6.0's array casts
/// (`a.astype(to)`).
///
/// Where every value of `from` is exactly an `f32` (every named format),
/// this is `encode_f32(to, decode_f32(from, code), ov)`; other sources are
/// rounded from their exact value. Two refinements, which
/// ml_dtypes makes as well: converting a format to itself returns the code
/// unchanged (NaN payloads included; with [`Overflow::Saturating`]
/// infinities still become ±max), and NaN payloads are never carried into
/// another format (the target's canonical NaN with the source's sign;
/// for float16 `0x7e00`/`0xfe00`, unlike a float32 NaN narrowed by
/// [`encode_f32`]). ml_dtypes refuses casts between float8_e8m0fnu and the
/// float8/6/4 formats; this function defines them by the same rule.
///
/// bfloat16 subnormals above 2^-127 (codes `0x0041`–`0x007f`) become
/// float8_e8m0fnu `0x01` (2^-126), as ml_dtypes' float32 route gives them
/// (the float32 subnormal rule described at [`encode_f32`]).
///
/// # Examples
///
/// ```
/// use mldtypes::float::core::convert;
/// use mldtypes::format::{Overflow::NonSaturating, BFLOAT16, FLOAT16, FLOAT8_E4M3FN, FLOAT8_E5M2};
/// assert_eq!(convert(&FLOAT8_E5M2, &FLOAT8_E4M3FN, 0x5e, NonSaturating), 0x7c); // 384
/// assert_eq!(convert(&FLOAT8_E5M2, &FLOAT8_E4M3FN, 0x60, NonSaturating), 0x7f); // 512 → NaN
/// assert_eq!(convert(&BFLOAT16, &FLOAT16, 0x7f81, NonSaturating), 0x7e00); // NaN payload dropped
/// ```
#[inline]
pub fn convert(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    let code = code & from.code_mask();
    if from == to && (ov == Overflow::NonSaturating || !from.has_infinity()) {
        return code;
    }
    if !from.fits_f32() {
        return convert_exact(from, to, code, ov);
    }
    encode_f32(to, drop_payload(decode_f32(from, code)), ov)
}

/// [`convert`] through the descriptor-driven [`decode_f32_generic`] and
/// [`encode_f32_generic`].
pub(crate) fn convert_generic(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    let code = code & from.code_mask();
    if from == to && (ov == Overflow::NonSaturating || !from.has_infinity()) {
        return code;
    }
    if !from.fits_f32() {
        return convert_exact(from, to, code, ov);
    }
    encode_f32_generic(to, drop_payload(decode_f32_generic(from, code)), ov)
}

/// [`convert`] from the exact value of the source code: NaN gives the
/// target's NaN with the sign the source's NaN has as an `f32` (as the
/// `f32` route does), infinities and finite values round once.
fn convert_exact(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    match value_parts(from, code) {
        CodeValue::Nan => nan_result(to, nan_bits_f32(from, code) >> 31 != 0),
        CodeValue::Infinity { negative } => inf_result(to, negative, ov),
        CodeValue::Finite {
            negative,
            significand: 0,
            ..
        } => zero_result(to, negative),
        CodeValue::Finite {
            negative,
            significand,
            exponent,
        } => round_finite(to, negative, significand, exponent, nearest_rule(to), ov),
    }
}

/// A NaN becomes the quiet NaN with its sign (payload dropped); other
/// values are returned as they are.
#[inline(always)]
fn drop_payload(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits((x.to_bits() & 0x8000_0000) | 0x7fc0_0000)
    } else {
        x
    }
}

/// Rounds the exact value `(-1)^neg × (sig + sticky·ε) × 2^exp` into `fmt`
/// (nearest, ties to even; ties away for formats without mantissa bits),
/// where `sticky` stands for non-zero bits below `sig` that were dropped.
/// Used for integers and hexadecimal text, which never round twice.
pub(crate) fn encode_exact(
    fmt: &Format,
    neg: bool,
    sig: u64,
    exp: i64,
    sticky: bool,
    ov: Overflow,
) -> u32 {
    if sig == 0 {
        // `sticky` without `sig` cannot happen: callers keep the top bits.
        return zero_result(fmt, neg);
    }
    // Make room for a sticky bit below the rounding position: every format
    // has at most 24 significant bits, far fewer than the 62 kept here.
    let lz = sig.leading_zeros() as i64;
    let dropped = lz == 0 && sig & 1 != 0;
    let (mut sig, exp) = if lz >= 1 {
        (sig << (lz - 1), exp - (lz - 1))
    } else {
        (sig >> 1, exp + 1)
    };
    if sticky || dropped {
        sig |= 1;
    }
    // Far outside every format's range (exponents stay within ±2^17):
    // clamp, keeping the rounding result.
    let exp = exp.clamp(-(1 << 20), 1 << 20);
    round_finite(fmt, neg, sig, exp as i32, nearest_rule(fmt), ov)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// float32 inputs: every sign/exponent with a spread of mantissas
    /// (ties, values just beside ties, payloads), and a strided sample.
    fn probes() -> Vec<u32> {
        let mut v = Vec::new();
        for se in 0..512u32 {
            for m in [
                0u32, 1, 2, 0x1fff, 0x2000, 0x2001, 0x3fff, 0x4000, 0x7fff, 0x8000, 0x8001,
                0x0f_ffff, 0x10_0000, 0x10_0001, 0x20_0000, 0x3f_ffff, 0x40_0000, 0x40_0001,
                0x5f_ffff, 0x60_0000, 0x7f_fffe, 0x7f_ffff,
            ] {
                v.push((se << 23) | m);
            }
        }
        v.extend((0..(1u64 << 32)).step_by(4099).map(|b| b as u32));
        v
    }

    #[test]
    fn named_formats_match_the_descriptor_path() {
        let probes = probes();
        for fmt in format::ALL {
            for ov in [Overflow::NonSaturating, Overflow::Saturating] {
                for &b in &probes {
                    let x = f32::from_bits(b);
                    assert_eq!(
                        encode_f32(fmt, x, ov),
                        encode_f32_generic(fmt, x, ov),
                        "{} {ov:?} encode_f32 {b:#010x}",
                        fmt.name
                    );
                    let y = x as f64;
                    assert_eq!(
                        encode_f64(fmt, y, ov),
                        encode_f64_generic(fmt, y, ov),
                        "{} {ov:?} encode_f64 {b:#010x}",
                        fmt.name
                    );
                }
            }
            for code in 0..fmt.code_count() {
                assert_eq!(
                    decode_f32(fmt, code).to_bits(),
                    decode_f32_generic(fmt, code).to_bits(),
                    "{} decode_f32 {code:#x}",
                    fmt.name
                );
                assert_eq!(
                    decode_f64(fmt, code).to_bits(),
                    decode_f64_generic(fmt, code).to_bits(),
                    "{} decode_f64 {code:#x}",
                    fmt.name
                );
                for to in format::ALL {
                    if to.bits() <= 8 || code % 61 == 0 {
                        let ov = Overflow::NonSaturating;
                        assert_eq!(
                            convert(fmt, to, code, ov),
                            convert_generic(fmt, to, code, ov),
                            "{} -> {} {code:#x}",
                            fmt.name,
                            to.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn formats_that_are_not_named_take_the_descriptor_path() {
        // float8_e4m3fn's fields with an IEEE NaN: not a named format.
        let odd = Format {
            name: "odd",
            nan_encoding: NanEncoding::Ieee,
            ..format::FLOAT8_E4M3FN
        };
        assert_eq!(encode_f32(&odd, 1.0, Overflow::NonSaturating), 0x38);
        assert_eq!(decode_f32(&odd, 0x38), 1.0);
    }
}
