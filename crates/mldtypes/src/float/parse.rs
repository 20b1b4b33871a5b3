//! Correctly rounded parsing of decimal and hexadecimal text into any
//! [`Format`], with no double rounding.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::BigUint;

use super::core::{encode_exact, encode_f64};
use crate::format::{Format, Overflow};

/// Why a string could not be parsed as a float of some format.
///
/// # Examples
///
/// ```
/// use mldtypes::float::{ParseError, ParseErrorKind};
/// use mldtypes::float8_e4m3fn;
/// let err = "1.2.3".parse::<float8_e4m3fn>().unwrap_err();
/// assert_eq!(err.kind(), ParseErrorKind::Invalid);
/// assert_eq!(err.to_string(), "invalid float8_e4m3fn literal");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParseError {
    kind: ParseErrorKind,
    format: &'static str,
}

/// The kind of a [`ParseError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// The string was empty.
    Empty,
    /// The string was not a decimal number, hexadecimal float
    /// (`0x1.8p3`), infinity (`inf`, `infinity`) or `nan`, with an optional
    /// sign.
    Invalid,
}

impl ParseError {
    /// What went wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{bfloat16, float::ParseErrorKind};
    /// assert_eq!("".parse::<bfloat16>().unwrap_err().kind(), ParseErrorKind::Empty);
    /// ```
    pub fn kind(&self) -> ParseErrorKind {
        self.kind
    }

    /// The ml_dtypes name of the format that was being parsed.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::bfloat16;
    /// assert_eq!("x".parse::<bfloat16>().unwrap_err().format_name(), "bfloat16");
    /// ```
    pub fn format_name(&self) -> &'static str {
        self.format
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParseErrorKind::Empty => write!(f, "cannot parse {} from an empty string", self.format),
            ParseErrorKind::Invalid => write!(f, "invalid {} literal", self.format),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses `s` into a code of `fmt`, correctly rounded from the exact value
/// of the text (round to nearest, ties to even, non-saturating overflow as
/// in [`super::core::encode_f64`]).
///
/// Accepted: an optional `+`/`-` sign, then a decimal number (`12`, `1.5`,
/// `.5`, `2.`, `1e-3`, `1E+3`), a hexadecimal float (`0x1.8p3`, `0X1P-2`,
/// `0xA`; the binary exponent is optional), `inf`, `infinity` or `nan`
/// (any case). Text naming a value the format cannot hold is converted like
/// the corresponding `f64`: `"inf"` saturates in float6/float4, `"nan"` is
/// −0 there as in ml_dtypes' conversions.
///
/// Deliberate deviations from ml_dtypes 0.6.0, whose scalar constructors
/// accept strings: they parse the text to a double and round that again,
/// so `float8_e4m3fn("464.0000000000000000001")` is 448 there (NaN here)
/// and `bfloat16("1.00390625000000000001")` is 1 (1.0078125 here); and on
/// text that is not a number (`bfloat16("abc")`) they crash the Python
/// process (segmentation fault). Here such text gives a [`ParseError`].
///
/// # Errors
///
/// [`ParseErrorKind::Empty`] for `""`, [`ParseErrorKind::Invalid`] for
/// anything else that is not a number (whitespace included).
///
/// # Examples
///
/// ```
/// use mldtypes::float::parse::parse_code;
/// use mldtypes::format::FLOAT8_E4M3FN;
/// assert_eq!(parse_code(&FLOAT8_E4M3FN, "464"), Ok(0x7e)); // tie → 448
/// assert_eq!(parse_code(&FLOAT8_E4M3FN, "464.0000000000000000001"), Ok(0x7f)); // NaN
/// assert_eq!(parse_code(&FLOAT8_E4M3FN, "-0x1.8p1"), Ok(0xc4)); // −3
/// assert!(parse_code(&FLOAT8_E4M3FN, "1,5").is_err());
/// // Beyond float64 (IEEE P3109 with 12 or more exponent bits): from the
/// // exact decimal value. 10^400 lies nearer 2^1329 than 2^1328.
/// let wide = mldtypes::format::Format::p3109(16, 1, true, true).unwrap();
/// assert_eq!(parse_code(&wide, "1e400"), Ok(0x4000 + 1329));
/// assert_eq!(parse_code(&wide, "-1e-4000"), Ok(0x8000 | (0x4000 - 13288)));
/// ```
pub fn parse_code(fmt: &Format, s: &str) -> Result<u32, ParseError> {
    let err = |kind| ParseError {
        kind,
        format: fmt.name,
    };
    if s.is_empty() {
        return Err(err(ParseErrorKind::Empty));
    }
    let (neg, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.len() > 2 && (body.starts_with("0x") || body.starts_with("0X")) {
        return parse_hex(fmt, neg, &body[2..]).ok_or(err(ParseErrorKind::Invalid));
    }
    // Rust's f64 parser is correctly rounded and validates the grammar.
    let f: f64 = s.parse().map_err(|_| err(ParseErrorKind::Invalid))?;
    let ov = Overflow::NonSaturating;
    if !fmt.fits_f64() && (f.is_finite() || !body.to_ascii_lowercase().contains("inf")) {
        // Beyond float64 (IEEE P3109 formats with 12 or more exponent
        // bits): round the exact decimal value itself.
        return Ok(decimal_exact(fmt, neg, body, f));
    }
    if !f.is_finite() {
        return Ok(encode_f64(fmt, f, ov));
    }
    let a = f.abs();
    let below = if a == 0.0 {
        0.0
    } else {
        f64::from_bits(a.to_bits() - 1)
    };
    let above = f64::from_bits(a.to_bits() + 1);
    let sgn = |x: f64| if neg { -x } else { x };
    let here = encode_f64(fmt, sgn(a), ov);
    let lo = encode_f64(fmt, sgn(below), ov);
    let hi = encode_f64(fmt, sgn(above), ov);
    if lo == here && here == hi {
        // The exact value lies strictly between `below` and `above`, where
        // no rounding boundary of the format is.
        return Ok(here);
    }
    // `a` is itself a rounding boundary (format boundaries are f64 values):
    // decide on which side the exact decimal lies.
    let (digits, exp10) = decimal_parts(body);
    let ord = if digits.is_empty() {
        Ordering::Equal // exact zero
    } else if a == 0.0 {
        Ordering::Greater
    } else {
        compare_decimal(&digits, exp10, a)
    };
    Ok(match ord {
        Ordering::Less => lo,
        Ordering::Equal => here,
        Ordering::Greater => hi,
    })
}

/// The code of the decimal text `body` (validated, no sign; `f` its float64
/// value), rounded once from its exact value: for formats whose range
/// reaches beyond float64.
fn decimal_exact(fmt: &Format, neg: bool, body: &str, f: f64) -> u32 {
    if f.is_nan() {
        return encode_f64(
            fmt,
            if neg { -f64::NAN } else { f64::NAN },
            Overflow::NonSaturating,
        );
    }
    let (digits, exp10) = decimal_parts(body);
    if digits.is_empty() {
        return encode_f64(fmt, if neg { -0.0 } else { 0.0 }, Overflow::NonSaturating);
    }
    let n = BigUint::parse_bytes(&digits, 10).unwrap_or_default();
    let magnitude = digits.len() as i64 + exp10; // the value is below 10^magnitude
                                                 // Every format's range lies within 2^±(2^17): 10^±40000 decides.
    let (sig, exp2, sticky) = if magnitude > 40_000 {
        (1u64, 1i64 << 20, false)
    } else if magnitude < -40_000 {
        (1u64, -(1i64 << 20), false)
    } else if exp10 >= 0 {
        let v = n * BigUint::from(10u32).pow(exp10 as u32);
        top_bits(&v, 0, false)
    } else {
        let d = BigUint::from(10u32).pow((-exp10) as u32);
        // At least 64 significant bits in the quotient.
        let s = (64 + d.bits() as i64 - n.bits() as i64 + 1).max(0);
        let num = n << s as u64;
        let q = &num / &d;
        let r_nonzero = &q * &d != num;
        top_bits(&q, -s, r_nonzero)
    };
    encode_exact(fmt, neg, sig, exp2, sticky, Overflow::NonSaturating)
}

/// The top 64 bits of `v · 2^exp2` as (significand, exponent, sticky).
fn top_bits(v: &BigUint, exp2: i64, sticky: bool) -> (u64, i64, bool) {
    let bits = v.bits() as i64;
    if bits <= 64 {
        return (v.iter_u64_digits().next().unwrap_or(0), exp2, sticky);
    }
    let shift = (bits - 64) as u64;
    let top: BigUint = v >> shift;
    let dropped = &(top.clone() << shift) != v;
    (
        top.iter_u64_digits().next().unwrap_or(0),
        exp2 + shift as i64,
        sticky || dropped,
    )
}

/// The significant digits (no leading or trailing zeros; empty for zero)
/// and the power of ten of the last one, for text already validated by
/// Rust's float parser (no sign).
fn decimal_parts(body: &str) -> (Vec<u8>, i64) {
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, "0"),
    };
    let mut exp10: i64 = 0;
    let (eneg, edigits) = match exp.as_bytes().first() {
        Some(b'-') => (true, &exp[1..]),
        Some(b'+') => (false, &exp[1..]),
        _ => (false, exp),
    };
    for b in edigits.bytes() {
        // Saturate: such exponents only arise when the f64 is 0 or inf.
        exp10 = (exp10 * 10 + (b - b'0') as i64).min(1 << 40);
    }
    if eneg {
        exp10 = -exp10;
    }
    let mut digits = Vec::with_capacity(mant.len());
    for b in mant.bytes() {
        match b {
            b'.' => {}
            _ => {
                if !(digits.is_empty() && b == b'0') {
                    digits.push(b);
                }
            }
        }
    }
    let frac_len = mant.find('.').map_or(0, |i| mant.len() - i - 1) as i64;
    exp10 -= frac_len;
    while digits.last() == Some(&b'0') {
        digits.pop();
        exp10 += 1;
    }
    (digits, exp10)
}

/// Compares the exact decimal `digits × 10^exp10` with the positive finite `a`.
fn compare_decimal(digits: &[u8], exp10: i64, a: f64) -> Ordering {
    let bits = a.to_bits();
    let e = (bits >> 52) as i64;
    let (m, e2) = if e == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), e - 1075)
    };
    let mut lhs = BigUint::parse_bytes(digits, 10).unwrap_or_default();
    let mut rhs = BigUint::from(m);
    let ten = BigUint::from(10u32);
    if exp10 >= 0 {
        lhs *= ten.pow(exp10 as u32);
    } else {
        rhs *= ten.pow((-exp10) as u32);
    }
    if e2 >= 0 {
        rhs <<= e2 as u64;
    } else {
        lhs <<= (-e2) as u64;
    }
    lhs.cmp(&rhs)
}

/// Parses the part of a hexadecimal float after `0x`: hex digits with an
/// optional point and an optional `p`/`P` binary exponent.
fn parse_hex(fmt: &Format, neg: bool, s: &str) -> Option<u32> {
    let (mant, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut sig: u64 = 0;
    let mut exp2: i64 = 0;
    let mut sticky = false;
    let mut seen_point = false;
    let mut any_digit = false;
    for c in mant.chars() {
        if c == '.' {
            if seen_point {
                return None;
            }
            seen_point = true;
            continue;
        }
        let d = c.to_digit(16)? as u64;
        any_digit = true;
        if sig >> 58 == 0 {
            sig = (sig << 4) | d;
            if seen_point {
                exp2 -= 4;
            }
        } else {
            sticky |= d != 0;
            if !seen_point {
                exp2 += 4;
            }
        }
    }
    if !any_digit {
        return None;
    }
    if let Some(exp) = exp {
        let (eneg, ed) = match exp.as_bytes().first() {
            Some(b'-') => (true, &exp[1..]),
            Some(b'+') => (false, &exp[1..]),
            _ => (false, exp),
        };
        if ed.is_empty() || !ed.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut e: i64 = 0;
        for b in ed.bytes() {
            e = (e * 10 + (b - b'0') as i64).min(1 << 40);
        }
        exp2 += if eneg { -e } else { e };
    }
    Some(encode_exact(
        fmt,
        neg,
        sig,
        exp2,
        sticky,
        Overflow::NonSaturating,
    ))
}
