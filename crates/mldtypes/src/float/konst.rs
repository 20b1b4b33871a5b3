//! Compile-time rounding for `from_f32_const` / `from_f64_const`.
//!
//! The same rules as [`super::core::encode_f32`] and
//! [`super::core::encode_f64`] with [`Overflow::NonSaturating`] (round to
//! nearest, ties to even, ties away from zero without mantissa bits;
//! ml_dtypes' overflow, NaN and zero rules; float8_e8m0fnu from float32
//! subnormals as ml_dtypes and PyTorch), written with `const` operations
//! only, so that constants of every format can be written as decimal
//! literals. The integration tests compare both against the core on every
//! format.
//!
//! [`Overflow::NonSaturating`]: crate::format::Overflow::NonSaturating

use crate::format::{Format, NanEncoding, NonFinite};

const fn sign(fmt: &Format, neg: bool) -> u32 {
    if neg {
        fmt.sign_mask()
    } else {
        0
    }
}

const fn nan(fmt: &Format, neg: bool) -> u32 {
    match fmt.nan_code() {
        Some(c) => {
            if matches!(fmt.nan_encoding, NanEncoding::NegativeZero) {
                c
            } else {
                c | sign(fmt, neg)
            }
        }
        // float6/float4 (ml_dtypes): +NaN becomes −0, −NaN becomes +0.
        None => sign(fmt, !neg),
    }
}

const fn overflow(fmt: &Format, neg: bool) -> u32 {
    match fmt.non_finite {
        NonFinite::Ieee | NonFinite::InfAtMax => match fmt.inf_code() {
            Some(c) => c | sign(fmt, neg),
            None => 0,
        },
        NonFinite::NanOnly => nan(fmt, neg),
        NonFinite::FiniteOnly => fmt.max_code() | sign(fmt, neg),
    }
}

const fn zero(fmt: &Format, neg: bool) -> u32 {
    if !fmt.has_zero {
        nan(fmt, neg)
    } else if fmt.has_signed_zero() {
        sign(fmt, neg)
    } else {
        0
    }
}

/// Rounds the non-zero value `(-1)^neg × sig × 2^exp` (`sig < 2^53`).
const fn round(fmt: &Format, neg: bool, sig: u64, exp: i32) -> u32 {
    if neg && !fmt.signed && !fmt.has_zero {
        return nan(fmt, neg);
    }
    let man_bits = fmt.man_bits as i32;
    let top = 63 - sig.leading_zeros() as i32;
    let lead = if exp + top > fmt.min_exp() {
        exp + top
    } else {
        fmt.min_exp()
    };
    let mut q = lead - man_bits;
    let shift = q - exp;
    let mut m = if shift <= 0 {
        sig << (-shift)
    } else if shift >= 64 {
        0 // below half an ulp: sig < 2^53
    } else {
        let kept = sig >> shift;
        let rem = sig & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        let odd = if man_bits > 0 {
            kept & 1 == 1
        } else {
            kept == 1 && (q + fmt.bias) & 1 == 1
        };
        let up = if man_bits == 0 && !fmt.has_zero {
            rem >= half
        } else {
            rem > half || (rem == half && odd)
        };
        kept + up as u64
    };
    if m >> (man_bits + 1) != 0 {
        m >>= 1;
        q += 1;
    }
    if m == 0 {
        return if fmt.has_zero { zero(fmt, neg) } else { 0 };
    }
    if neg && !fmt.signed {
        return nan(fmt, neg);
    }
    let implicit = 1u64 << man_bits;
    let code = if m >= implicit {
        (((q + man_bits + fmt.bias) as u64) << man_bits) | (m - implicit)
    } else {
        m
    };
    if code > fmt.max_code() as u64 {
        return overflow(fmt, neg);
    }
    code as u32 | sign(fmt, neg)
}

/// The code of `x` in `fmt` (non-saturating). `from_f32` states that `x`
/// is a widened `f32`, which selects ml_dtypes' rule for float32
/// subnormals in formats without mantissa bits.
pub(crate) const fn encode(fmt: &Format, x: f64, from_f32: bool) -> u32 {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7ff) as i32;
    let m = b & ((1u64 << 52) - 1);
    if e == 0x7ff {
        if m != 0 {
            return nan(fmt, neg);
        }
        if neg && !fmt.signed {
            return nan(fmt, neg);
        }
        return overflow(fmt, neg);
    }
    if e == 0 && m == 0 {
        return zero(fmt, neg);
    }
    // float32 subnormals above 2^-127 (biased f64 exponent 896 with a
    // non-zero fraction): 2^-126, as ml_dtypes and PyTorch.
    if from_f32 && fmt.man_bits == 0 && !fmt.has_zero && e == 896 && m != 0 {
        return round(fmt, neg, 1, -126);
    }
    if e == 0 {
        round(fmt, neg, m, -1074)
    } else {
        round(fmt, neg, m | (1u64 << 52), e - 1075)
    }
}
