//! The command line's interface to the `mldtypes` library's number formats:
//! dtype parsing, the scalar core and finfo/iinfo (checkpoint conversion is
//! the library's `mldtypes::checkpoint`).

use mldtypes::dtype::DType;
use mldtypes::float::core;
use mldtypes::format::{Format, Overflow};

use crate::error::{usage, CliError, Result};

// ---------------------------------------------------------------------------
// DType names
// ---------------------------------------------------------------------------

/// Parses a dtype in the command line's vocabulary ([`DType::parse_name`]):
/// canonical names, aliases, bit-width shorthands, NumPy codes with a
/// byte-order prefix.
pub fn parse_dtype(s: &str) -> Result<DType> {
    DType::parse_name(s).map_err(|e| CliError::Usage(e.to_string()))
}

// ---------------------------------------------------------------------------
// Scalar codec
// ---------------------------------------------------------------------------

/// The format descriptor of a real float dtype narrower than float32.
pub fn small_float_format(d: DType) -> Option<Format> {
    if d.is_float() {
        d.format()
    } else {
        None
    }
}

/// Decodes one code of `fmt` exactly to `f64` (rounded where the value
/// lies beyond float64: see [`exact_text`]).
pub fn decode_f64(fmt: &Format, code: u32) -> f64 {
    core::decode_f64(fmt, code)
}

/// The exact value of a code as hexadecimal-float text (`0x1.8p+16001`)
/// when it is not a float64 (the IEEE P3109 formats with 12 to 16 exponent
/// bits), `None` when [`decode_f64`] gives it exactly.
pub fn exact_text(fmt: &Format, code: u32) -> Option<String> {
    if fmt.fits_f64() {
        return None;
    }
    let v = core::value_parts(fmt, code);
    match v {
        core::CodeValue::Finite {
            significand,
            exponent,
            ..
        } if significand != 0 => {
            let lead = exponent + 63 - significand.leading_zeros() as i32;
            // Exact in float64: leading bit within its range and no bit
            // below its smallest subnormal.
            (!(-1022..=1023).contains(&lead) || exponent < -1074).then(|| v.to_string())
        }
        _ => None,
    }
}

/// The IEEE class of a code: zero, subnormal, normal, infinite or NaN.
pub fn classify(fmt: &Format, code: u32) -> std::num::FpCategory {
    core::classify(fmt, code)
}

/// Rounds `x` to the nearest code of `fmt` (round-to-nearest-even).
pub fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    core::encode_f64(fmt, x, ov)
}

/// Rounds the float32 `x` to the nearest code of `fmt`.
pub fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    core::encode_f32(fmt, x, ov)
}

// ---------------------------------------------------------------------------
// finfo / iinfo
// ---------------------------------------------------------------------------

/// One field of finfo/iinfo: its ml_dtypes name and value.
#[derive(Clone, Debug, PartialEq)]
pub enum InfoValue {
    /// An integer field (`bits`, `nmant`, `min` of iinfo, …).
    Int(i128),
    /// A float field (`eps`, `max`, …), exact in f64.
    Float(f64),
    /// A text field (`dtype`, `kind`).
    Text(String),
}

/// finfo (floats) or iinfo (integers) of `d`, every field in ml_dtypes'
/// names, in `mldtypes::info`'s order.
pub fn info(d: DType) -> Result<Vec<(&'static str, InfoValue)>> {
    use InfoValue::*;
    if let Some(i) = d.iinfo() {
        return Ok(vec![
            ("dtype", Text(i.dtype.into())),
            ("kind", Text(if i.min < 0 { "i" } else { "u" }.into())),
            ("bits", Int(i.bits as i128)),
            ("min", Int(i.min)),
            ("max", Int(i.max)),
        ]);
    }
    let f = d
        .finfo()
        .ok_or_else(|| usage!("{d} has neither finfo nor iinfo"))?;
    // Beyond float64 (IEEE P3109 formats with 12 to 16 exponent bits): the
    // limits as exact hexadecimal-float text.
    let exact = |x: f64, code: Option<u32>| match (d.format(), code) {
        (Some(fmt), Some(c)) => exact_text(&fmt, c).map_or(Float(x), Text),
        _ => Float(x),
    };
    let fmt = d.format().filter(|_| d.is_float());
    let (max, min, normal, sub) = match fmt {
        Some(g) => (
            Some(g.max_code()),
            Some(if g.signed {
                g.max_code() | g.sign_mask()
            } else {
                0
            }),
            Some(if g.has_zero { 1 << g.man_bits } else { 0 }),
            Some(if g.has_zero { 1 } else { 0 }),
        ),
        None => (None, None, None, None),
    };
    Ok(vec![
        ("dtype", Text(f.dtype.into())),
        ("bits", Int(f.bits as i128)),
        ("eps", Float(f.eps)),
        ("epsneg", Float(f.epsneg)),
        ("max", exact(f.max, max)),
        ("min", exact(f.min, min)),
        ("tiny", exact(f.tiny, normal)),
        ("smallest_normal", exact(f.smallest_normal, normal)),
        ("smallest_subnormal", exact(f.smallest_subnormal, sub)),
        ("resolution", Float(f.resolution)),
        ("machep", Int(f.machep as i128)),
        ("negep", Int(f.negep as i128)),
        ("minexp", Int(f.minexp as i128)),
        ("maxexp", Int(f.maxexp as i128)),
        ("nexp", Int(f.nexp as i128)),
        ("nmant", Int(f.nmant as i128)),
        ("iexp", Int(f.iexp as i128)),
        ("precision", Int(f.precision as i128)),
    ])
}
