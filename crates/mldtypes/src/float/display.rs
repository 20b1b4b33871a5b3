//! Shortest round-trip decimal output for any [`Format`]: the text of
//! [`Shortest`] (`x.shortest()`). The float types' own `Display`, `Debug`,
//! `LowerExp` and `UpperExp` print the value's `f32` text instead, as
//! `half` does.
//!
//! The digits printed for a value are the shortest decimal that
//! [`super::parse::parse_code`] reads back as the same code in *that*
//! format (so `bfloat16` 0.1 prints as `0.1`, not as the float32 digits
//! `0.100097656`), choosing the candidate nearest to the exact value when
//! several have the same length. The layout follows Rust's `f32`:
//! `Display` never uses an exponent and omits `.0`, `Debug` adds `.0` and
//! switches to exponent form below 1e-4 and from 1e16 on, `LowerExp` and
//! `UpperExp` always use it. An explicit precision prints the exact value
//! rounded to that many digits, like `f32` does.

use std::fmt;

use super::core::decode_f64;
use super::parse::parse_code;
use super::MiniFloat;
use crate::format::Format;

/// A float value printed as the shortest decimal that reads back (with
/// `str::parse`) as the same value in its own format, e.g. bfloat16 0.1 as
/// `0.1` where its `Display` prints the stored value's `f32` text
/// `0.100097656`. Made by the float types' `shortest` method.
///
/// `{}` never uses an exponent and omits `.0`; `{:?}` adds `.0` and uses
/// exponent form below 1e-4 and from 1e16 on; `{:e}` and `{:E}` always use
/// it. An explicit precision prints the exact value rounded to that many
/// digits. NaN prints as `NaN`, infinities as `inf` and `-inf`.
///
/// # Examples
///
/// ```
/// use mldtypes::{bfloat16, float8_e4m3fn};
/// let x = float8_e4m3fn::MAX;
/// assert_eq!(x.to_string(), "448");
/// assert_eq!(x.shortest().to_string(), "450"); // 450 reads back as 448
/// assert_eq!(format!("{:?}", bfloat16::from_f32(1e-5).shortest()), "1e-5");
/// assert_eq!(format!("{:e}", bfloat16::from_f32(1500.0).shortest()), "1.5e3");
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct Shortest<T>(pub(crate) T);

impl<T: MiniFloat> Shortest<T> {
    /// The value printed.
    ///
    /// # Examples
    ///
    /// ```
    /// let x = mldtypes::bfloat16::ONE;
    /// assert_eq!(x.shortest().value(), x);
    /// ```
    pub fn value(self) -> T {
        self.0
    }
}

impl<T: MiniFloat> fmt::Display for Shortest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_code(&T::FORMAT, self.0.code(), Style::Display, f)
    }
}

impl<T: MiniFloat> fmt::Debug for Shortest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_code(&T::FORMAT, self.0.code(), Style::Debug, f)
    }
}

impl<T: MiniFloat> fmt::LowerExp for Shortest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_code(&T::FORMAT, self.0.code(), Style::Exp('e'), f)
    }
}

impl<T: MiniFloat> fmt::UpperExp for Shortest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_code(&T::FORMAT, self.0.code(), Style::Exp('E'), f)
    }
}

/// Shortest digits `d1 d2 … dn` (no trailing zeros) and exponent `e` with
/// `|value| = d1.d2…dn × 10^e`, for a finite non-zero code.
fn shortest(fmt: &Format, mag_code: u32, v: f64) -> (String, i32) {
    for n in 1..=17usize {
        let s = format!("{:.*e}", n - 1, v);
        let (m, e) = s.split_once('e').expect("exponent form");
        let e: i32 = e.parse().expect("exponent");
        let d: u64 = m.replace('.', "").parse().expect("digits");
        let lo = 10u64.pow(n as u32 - 1);
        let hi = lo * 10;
        // The nearest n-digit decimal first, then its neighbours (the
        // nearest one may fall outside an asymmetric rounding interval).
        let scale = 10f64.powi(e - (n as i32 - 1));
        let mut cands = vec![d];
        let (below, above) = (d.wrapping_sub(1), d + 1);
        if (below as f64 * scale - v).abs() <= (above as f64 * scale - v).abs() {
            cands.extend([below, above]);
        } else {
            cands.extend([above, below]);
        }
        for c in cands {
            if c < lo || c >= hi {
                continue;
            }
            let text = format!("{c}e{}", e - (n as i32 - 1));
            if parse_code(fmt, &text).ok() == Some(mag_code) {
                let mut digits = c.to_string();
                while digits.len() > 1 && digits.ends_with('0') {
                    digits.pop();
                }
                return (digits, e);
            }
        }
    }
    // Unreachable for formats whose values are f64s: 17 digits always
    // identify an f64, hence a code.
    let s = format!("{v:e}");
    let (m, e) = s.split_once('e').expect("exponent form");
    (m.replace('.', ""), e.parse().expect("exponent"))
}

/// How a value is laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `Display`: plain decimal, no `.0`.
    Display,
    /// `Debug`: plain decimal with `.0`, exponent form when tiny or huge.
    Debug,
    /// `LowerExp` (`e`) or `UpperExp` (`E`).
    Exp(char),
}

fn plain(digits: &str, e: i32, debug: bool) -> String {
    let n = digits.len() as i32;
    if e >= 0 {
        if n <= e + 1 {
            let mut s = digits.to_string();
            s.push_str(&"0".repeat((e + 1 - n) as usize));
            if debug {
                s.push_str(".0");
            }
            s
        } else {
            format!(
                "{}.{}",
                &digits[..(e + 1) as usize],
                &digits[(e + 1) as usize..]
            )
        }
    } else {
        format!("0.{}{}", "0".repeat((-e - 1) as usize), digits)
    }
}

fn exp_form(digits: &str, e: i32, c: char) -> String {
    if digits.len() == 1 {
        format!("{digits}{c}{e}")
    } else {
        format!("{}.{}{c}{e}", &digits[..1], &digits[1..])
    }
}

/// Formats `code` of `fmt` in the given style, honouring the formatter's
/// precision, sign, width and fill.
pub(crate) fn fmt_code(
    fmt: &Format,
    code: u32,
    style: Style,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let v = decode_f64(fmt, code);
    if v.is_nan() {
        return f.pad_integral(true, "", "NaN");
    }
    let neg = v.is_sign_negative();
    let a = v.abs();
    let body = if a.is_infinite() {
        "inf".to_string()
    } else if let Some(p) = f.precision() {
        match style {
            Style::Exp('E') => format!("{a:.p$E}"),
            Style::Exp(_) => format!("{a:.p$e}"),
            _ => format!("{a:.p$}"),
        }
    } else if a == 0.0 {
        match style {
            Style::Display => "0".to_string(),
            Style::Debug => "0.0".to_string(),
            Style::Exp(c) => format!("0{c}0"),
        }
    } else {
        let mag_code = code & !fmt.sign_mask() & fmt.code_mask();
        let (digits, e) = shortest(fmt, mag_code, a);
        match style {
            Style::Display => plain(&digits, e, false),
            Style::Debug if !(-4..16).contains(&e) => exp_form(&digits, e, 'e'),
            Style::Debug => plain(&digits, e, true),
            Style::Exp(c) => exp_form(&digits, e, c),
        }
    };
    // `pad_integral` handles sign, width, fill and zero padding, and (unlike
    // `pad`) does not treat the precision as a maximum width.
    f.pad_integral(!neg, "", &body)
}
