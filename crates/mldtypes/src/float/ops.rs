//! Code-level classification, sign manipulation, stepping and ordering for
//! any [`Format`]: what the float types' methods delegate to.

use std::cmp::Ordering;
use std::num::FpCategory;

use crate::format::{Format, NanEncoding};

/// The code of `2^k`, for `k` within the format's range (compile-time use).
pub(crate) const fn pow2_code(fmt: &Format, k: i32) -> u32 {
    let min_exp = fmt.min_exp();
    if k >= min_exp {
        (((k + fmt.bias) as u32) << fmt.man_bits) & fmt.code_mask()
    } else {
        1 << (k - min_exp + fmt.man_bits as i32)
    }
}

/// The smallest finite value's code (most negative, or the smallest
/// positive value for unsigned formats).
pub(crate) const fn min_code(fmt: &Format) -> u32 {
    if fmt.signed {
        fmt.max_code() | fmt.sign_mask()
    } else {
        0
    }
}

/// The code of the smallest positive normal number.
pub(crate) const fn min_positive_code(fmt: &Format) -> u32 {
    pow2_code(fmt, fmt.min_exp())
}

/// The code of the smallest positive number (subnormal if the format has any).
pub(crate) const fn min_subnormal_code(fmt: &Format) -> u32 {
    if fmt.has_zero {
        1
    } else {
        0
    }
}

#[inline]
fn mag(fmt: &Format, code: u32) -> u32 {
    code & fmt.code_mask() & !fmt.sign_mask()
}

#[inline]
fn nan_or(fmt: &Format, code: u32) -> u32 {
    fmt.nan_code().unwrap_or(code)
}

/// Whether `code` is ±infinity.
#[inline]
pub(crate) fn is_infinite(fmt: &Format, code: u32) -> bool {
    match fmt.inf_code() {
        Some(inf) => mag(fmt, code) == inf,
        None => false,
    }
}

/// Whether `code` is a zero.
#[inline]
pub(crate) fn is_zero(fmt: &Format, code: u32) -> bool {
    fmt.has_zero && mag(fmt, code) == 0 && !fmt.is_nan_code(code)
}

/// The IEEE class of `code`.
pub(crate) fn classify(fmt: &Format, code: u32) -> FpCategory {
    if fmt.is_nan_code(code) {
        FpCategory::Nan
    } else if is_infinite(fmt, code) {
        FpCategory::Infinite
    } else if is_zero(fmt, code) {
        FpCategory::Zero
    } else if fmt.has_zero && mag(fmt, code) >> fmt.man_bits == 0 {
        FpCategory::Subnormal
    } else {
        FpCategory::Normal
    }
}

/// Whether the sign bit is set (the fnuz NaN `0x80` counts as negative, as
/// its `f32` value is the negative NaN).
#[inline]
pub(crate) fn sign_negative(fmt: &Format, code: u32) -> bool {
    code & fmt.sign_mask() != 0
}

/// Negation as ml_dtypes does it: flip the sign bit, except that a fnuz
/// format's zero and NaN are their own negation and every value of an
/// unsigned format negates to NaN (0 < x, so −x is negative).
#[inline]
pub(crate) fn neg(fmt: &Format, code: u32) -> u32 {
    let code = code & fmt.code_mask();
    if !fmt.signed {
        return nan_or(fmt, code);
    }
    if fmt.nan_encoding == NanEncoding::NegativeZero && mag(fmt, code) == 0 {
        return code;
    }
    code ^ fmt.sign_mask()
}

/// Absolute value: clears the sign bit (NaN payloads kept, as ml_dtypes
/// does); the fnuz NaN stays NaN.
#[inline]
pub(crate) fn abs(fmt: &Format, code: u32) -> u32 {
    let code = code & fmt.code_mask();
    if fmt.nan_encoding == NanEncoding::NegativeZero && fmt.is_nan_code(code) {
        return code;
    }
    code & !fmt.sign_mask()
}

/// The magnitude of `code` with the sign of `sign`. In fnuz formats zero and
/// NaN keep their only encoding (ml_dtypes' `np.copysign` turns a fnuz zero
/// into NaN there; this is a value-level copysign).
#[inline]
pub(crate) fn copysign(fmt: &Format, code: u32, sign: u32) -> u32 {
    let code = code & fmt.code_mask();
    if fmt.nan_encoding == NanEncoding::NegativeZero && mag(fmt, code) == 0 {
        return code;
    }
    (code & !fmt.sign_mask()) | (sign & fmt.sign_mask())
}

/// What stepping past the largest finite value gives: +infinity is handled
/// by the caller; NaN in NaN formats, the value itself in finite-only ones.
#[inline]
fn beyond_max(fmt: &Format, code: u32) -> u32 {
    nan_or(fmt, code)
}

/// The least value greater than `code` (IEEE `nextUp`).
///
/// NaN gives NaN; +infinity gives itself; the largest finite value gives
/// +infinity, or NaN in formats without infinity (ml_dtypes'
/// `nextafter(max, inf)` does the same, +inf being NaN there), or itself in
/// finite-only formats (float6, float4). Zero of either sign gives the
/// smallest positive value.
pub(crate) fn next_up(fmt: &Format, code: u32) -> u32 {
    let code = code & fmt.code_mask();
    if fmt.is_nan_code(code) {
        return code;
    }
    let m = mag(fmt, code);
    let negative = sign_negative(fmt, code);
    if is_infinite(fmt, code) {
        return if negative {
            fmt.max_code() | fmt.sign_mask()
        } else {
            code
        };
    }
    if is_zero(fmt, code) {
        return min_subnormal_code(fmt);
    }
    if !negative {
        return if m == fmt.max_code() {
            match fmt.inf_code() {
                Some(inf) => inf,
                None => beyond_max(fmt, code),
            }
        } else {
            m + 1
        };
    }
    let m = m - 1;
    if m == 0 {
        // Towards zero from the smallest negative subnormal: −0 (as IEEE),
        // or the only zero in fnuz formats.
        if fmt.has_signed_zero() {
            fmt.sign_mask()
        } else {
            0
        }
    } else {
        m | fmt.sign_mask()
    }
}

/// The greatest value less than `code` (IEEE `nextDown`).
///
/// Mirror image of [`next_up`]; in float8_e8m0fnu, which has nothing below
/// its smallest value 2^-127, that value steps to NaN.
pub(crate) fn next_down(fmt: &Format, code: u32) -> u32 {
    let code = code & fmt.code_mask();
    if fmt.is_nan_code(code) {
        return code;
    }
    let m = mag(fmt, code);
    let negative = sign_negative(fmt, code);
    if is_infinite(fmt, code) {
        return if negative { code } else { fmt.max_code() };
    }
    if is_zero(fmt, code) {
        return if fmt.signed {
            1 | fmt.sign_mask()
        } else {
            nan_or(fmt, code)
        };
    }
    if negative {
        return if m == fmt.max_code() {
            match fmt.inf_code() {
                Some(inf) => inf | fmt.sign_mask(),
                None => beyond_max(fmt, code),
            }
        } else {
            (m + 1) | fmt.sign_mask()
        };
    }
    if m == 0 {
        // Only in formats without a zero (float8_e8m0fnu): nothing below.
        return nan_or(fmt, code);
    }
    m - 1
}

/// A key whose integer order is IEEE 754 `totalOrder` on codes:
/// −NaN < −inf < … < −0 < +0 < … < +inf < +NaN. The fnuz NaN, whose `f32`
/// value is the negative NaN, sorts first.
#[inline]
pub(crate) fn total_key(fmt: &Format, code: u32) -> i32 {
    let code = code & fmt.code_mask();
    if fmt.nan_encoding == NanEncoding::NegativeZero && fmt.is_nan_code(code) {
        return i32::MIN;
    }
    let m = mag(fmt, code) as i32;
    if sign_negative(fmt, code) {
        -m - 1
    } else {
        m
    }
}

/// [`total_key`] comparison.
#[inline]
pub(crate) fn total_cmp(fmt: &Format, a: u32, b: u32) -> Ordering {
    total_key(fmt, a).cmp(&total_key(fmt, b))
}

/// A code that is equal for equal values (−0 and +0 both give 0), for
/// hashing consistently with `PartialEq`.
#[inline]
pub(crate) fn hash_code(fmt: &Format, code: u32) -> u32 {
    let code = code & fmt.code_mask();
    if is_zero(fmt, code) {
        0
    } else {
        code
    }
}
