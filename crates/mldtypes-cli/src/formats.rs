//! `info`, `values` and `cast`: facts about one number format.

use std::io::BufRead;

use clap::{Args, ValueEnum};
use mldtypes::dtype::DType;
use mldtypes::format::{Format, Overflow};
use mldtypes::round::{RoundMode, Rounding};
use serde_json::{json, Map, Value};

use crate::backend::{self, InfoValue};
use crate::error::{usage, Result};
use crate::output;

/// A float as a JSON value: a number, or `"nan"`, `"inf"`, `"-inf"`.
pub fn json_f64(x: f64) -> Value {
    if x.is_nan() {
        json!("nan")
    } else if x == f64::INFINITY {
        json!("inf")
    } else if x == f64::NEG_INFINITY {
        json!("-inf")
    } else {
        json!(x)
    }
}

/// A float as text: the shortest decimal that parses back to the same `f64`.
pub fn text_f64(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else if x != 0.0 && (x.abs() >= 1e16 || x.abs() < 1e-5) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `mldtypes info`.
pub fn info(name: &str, json: bool) -> Result<()> {
    let d = backend::parse_dtype(name)?;
    let fields = backend::info(d)?;
    if json {
        let mut m = Map::new();
        for (k, v) in fields {
            m.insert(
                k.to_string(),
                match v {
                    InfoValue::Int(i) => match i64::try_from(i) {
                        Ok(i) => json!(i),
                        Err(_) => json!(u64::try_from(i).unwrap_or(u64::MAX)),
                    },
                    InfoValue::Float(f) => json_f64(f),
                    InfoValue::Text(t) => json!(t),
                },
            );
        }
        output::print_json(&Value::Object(m))
    } else {
        use std::fmt::Write;
        let w = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (k, v) in fields {
            let v = match v {
                InfoValue::Int(i) => i.to_string(),
                InfoValue::Float(f) => text_f64(f),
                InfoValue::Text(t) => t,
            };
            let _ = writeln!(out, "{k:<w$}  {v}");
        }
        output::print(&out)
    }
}

/// The class of a code point: `zero`, `subnormal`, `normal`, `inf` or `nan`.
pub fn class_of(fmt: &Format, code: u32) -> &'static str {
    use std::num::FpCategory::*;
    match backend::classify(fmt, code) {
        Nan => "nan",
        Infinite => "inf",
        Zero => "zero",
        Subnormal => "subnormal",
        Normal => "normal",
    }
}

/// A code's value as JSON: a number, `"nan"`, `"inf"`, `"-inf"`, or exact
/// hexadecimal-float text where the value is not a float64.
fn value_json(fmt: &Format, code: u32) -> Value {
    match backend::exact_text(fmt, code) {
        Some(t) => json!(t),
        None => json_f64(backend::decode_f64(fmt, code)),
    }
}

/// A code's value as text ([`text_f64`], or exact hexadecimal-float text
/// where the value is not a float64).
fn value_text(fmt: &Format, code: u32) -> String {
    backend::exact_text(fmt, code).unwrap_or_else(|| text_f64(backend::decode_f64(fmt, code)))
}

fn narrow_format(name: &str) -> Result<(DType, Format)> {
    let d = backend::parse_dtype(name)?;
    match backend::small_float_format(d) {
        Some(f) => Ok((d, f)),
        None => Err(usage!(
            "{d} is not a floating-point format of at most 16 bits (try bfloat16, float16, float8_e4m3fn, …)"
        )),
    }
}

/// `mldtypes values`.
pub fn values(name: &str, json: bool) -> Result<()> {
    let (_, fmt) = narrow_format(name)?;
    let digits = fmt.bits().div_ceil(4) as usize;
    let mut out = String::new();
    if json {
        let arr: Vec<Value> = (0..fmt.code_count())
            .map(|c| json!({"bits": c, "value": value_json(&fmt, c), "class": class_of(&fmt, c)}))
            .collect();
        return output::print_json(&Value::Array(arr));
    } else {
        use std::fmt::Write;
        for c in 0..fmt.code_count() {
            let _ = writeln!(
                out,
                "0x{c:0digits$x}  {:>14}  {}",
                value_text(&fmt, c),
                class_of(&fmt, c)
            );
        }
    }
    output::print(&out)
}

/// The type a `cast` input is first parsed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FromType {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

/// Arguments of `mldtypes cast`.
#[derive(Args, Debug)]
pub struct CastArgs {
    /// The target dtype (a floating-point format).
    #[arg(long)]
    to: String,
    /// Parse inputs as this type first.
    #[arg(long, value_enum, default_value = "f64")]
    from: FromType,
    /// Saturate: every finite value beyond the largest finite number
    /// becomes ±max, and so do +inf and -inf (gfloat's `sat=True`); NaN
    /// stays NaN. Without it an overflow gives ±inf, or NaN in formats
    /// without infinities (ml_dtypes' astype), and ±inf stay ±inf (NaN where
    /// the format has no infinities); the directed --rounding modes never
    /// round a finite value past ±max. float4/float6 formats always saturate.
    #[arg(long)]
    saturate: bool,
    /// Rounding mode (gfloat 0.5.2's RoundMode): nearest_even (ml_dtypes'
    /// astype), nearest_away, toward_zero, toward_negative, toward_positive,
    /// stochastic, stochastic_odd, stochastic_fast, stochastic_fastest. The
    /// stochastic modes need --seed.
    #[arg(long, value_name = "MODE", default_value = "nearest_even", value_parser = parse_mode)]
    rounding: RoundMode,
    /// Random bits per value for the stochastic modes, 1 to 32 (default 32).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    sr_bits: Option<u32>,
    /// Seed of the stochastic modes' random bits: Philox4x32-10 keyed by the
    /// seed, value i (its position in the input, from 0) taking the top bits
    /// of word i of the seed's stream, or with --sr-bits 16 or less of half
    /// i mod 2 of word i / 2 (the library's `mldtypes::round::seeded_bits`).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Print a JSON array with one `{"input", "bits", "value", "error"}` object per value.
    #[arg(long)]
    json: bool,
    /// Read whitespace-separated values from standard input.
    #[arg(long, conflicts_with = "values")]
    stdin: bool,
    /// Decimal or hex-float values (`464`, `0x1.cp+8`, `inf`, `-inf`, `nan`).
    #[arg(
        value_name = "VALUE",
        required_unless_present = "stdin",
        allow_negative_numbers = true
    )]
    values: Vec<String>,
}

/// Parses a rounding mode name; the error lists the modes.
pub(crate) fn parse_mode(s: &str) -> std::result::Result<RoundMode, String> {
    s.parse::<RoundMode>().map_err(|e| e.to_string())
}

/// Parses decimal or hex-float text (`0x1.cp+8`), `inf`, `-inf`, `nan` as
/// `from`, returning the parsed value widened exactly to `f64`.
pub fn parse_value(s: &str, from: FromType) -> Result<f64> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let bad = |why: String| {
        usage!(
            "cannot parse {} as a number: {why}",
            mldtypes::dtype::echo(s)
        )
    };
    let v = if lower.starts_with("0x") {
        let text = if lower.contains('p') {
            lower.clone()
        } else {
            format!("{lower}p0")
        };
        match from {
            FromType::F64 => {
                hexf_parse::parse_hexf64(&text, false).map_err(|e| bad(e.to_string()))?
            }
            FromType::F32 => {
                hexf_parse::parse_hexf32(&text, false).map_err(|e| bad(e.to_string()))? as f64
            }
        }
    } else if lower == "nan" {
        f64::NAN
    } else if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else {
        if body.is_empty() || body.starts_with(['+', '-']) {
            return Err(bad("not a decimal or hex-float number".into()));
        }
        match from {
            FromType::F64 => body.parse::<f64>().map_err(|e| bad(e.to_string()))?,
            FromType::F32 => body.parse::<f32>().map_err(|e| bad(e.to_string()))? as f64,
        }
    };
    Ok(if neg { -v } else { v })
}

/// One converted value: result code, value, and the exact value's text
/// where it is not a float64.
fn convert_one(
    to: DType,
    x: f64,
    from: FromType,
    ov: Overflow,
) -> Result<(u64, f64, Option<String>)> {
    match to {
        DType::Float64 => Ok((x.to_bits(), x, None)),
        DType::Float32 => {
            let mut y = x as f32;
            if ov == Overflow::Saturating && x.is_finite() && y.is_infinite() {
                y = f32::MAX.copysign(y);
            }
            Ok((y.to_bits() as u64, y as f64, None))
        }
        _ => {
            let fmt = backend::small_float_format(to)
                .ok_or_else(|| usage!("cast --to needs a floating-point dtype, not {to}"))?;
            let code = match from {
                FromType::F32 => backend::encode_f32(&fmt, x as f32, ov),
                FromType::F64 => backend::encode_f64(&fmt, x, ov),
            };
            Ok((
                code as u64,
                backend::decode_f64(&fmt, code),
                backend::exact_text(&fmt, code),
            ))
        }
    }
}

/// The values rounded by `--rounding` (with `--saturate`, `--seed`,
/// `--sr-bits`) through the library's `mldtypes::cast::round_bytes`, or
/// `None` for the default rounding (nearest even without a seed: the codec
/// of `astype`).
#[allow(clippy::type_complexity)]
fn round_all(
    a: &CastArgs,
    to: DType,
    parsed: &[f64],
) -> Result<Option<Vec<(u64, f64, Option<String>)>>> {
    if a.sr_bits.is_some() && a.seed.is_none() {
        return Err(usage!(
            "--sr-bits needs --seed (the stochastic modes' random bits)"
        ));
    }
    if a.rounding == RoundMode::NearestEven && a.seed.is_none() {
        return Ok(None);
    }
    let mut r = Rounding::new(a.rounding).saturating(a.saturate);
    if let Some(seed) = a.seed {
        r = r.with_seed(seed, a.sr_bits.unwrap_or(32));
    }
    r.validate(parsed.len()).map_err(|e| {
        usage!(
            "{e}{}",
            if a.rounding.is_stochastic() {
                " (--seed S)"
            } else {
                ""
            }
        )
    })?;
    if to == DType::Float64 {
        return Err(usage!(
            "--rounding {} needs a narrower target than float64 (it holds every input)",
            a.rounding
        ));
    }
    let (src, from): (Vec<u8>, DType) = match a.from {
        FromType::F32 => (
            parsed
                .iter()
                .flat_map(|x| (*x as f32).to_le_bytes())
                .collect(),
            DType::Float32,
        ),
        FromType::F64 => (
            parsed.iter().flat_map(|x| x.to_le_bytes()).collect(),
            DType::Float64,
        ),
    };
    let w = to.itemsize();
    let mut dst = vec![0u8; parsed.len() * w];
    mldtypes::cast::round_bytes(&src, from, &mut dst, to, &r)
        .map_err(|e| usage!("cast --to {to}: {e}"))?;
    let fmt = backend::small_float_format(to);
    Ok(Some(
        dst.chunks(w)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..w].copy_from_slice(c);
                let code = u32::from_le_bytes(b);
                match &fmt {
                    Some(f) => (
                        code as u64,
                        backend::decode_f64(f, code),
                        backend::exact_text(f, code),
                    ),
                    None => (code as u64, f32::from_bits(code) as f64, None),
                }
            })
            .collect(),
    ))
}

/// `mldtypes cast`.
pub fn cast(a: CastArgs) -> Result<()> {
    let to = backend::parse_dtype(&a.to)?;
    let ov = if a.saturate {
        Overflow::Saturating
    } else {
        Overflow::NonSaturating
    };
    let inputs: Vec<String> = if a.stdin {
        let mut v = Vec::new();
        for line in std::io::stdin().lock().lines() {
            let line = line.map_err(|e| usage!("cannot read standard input: {e}"))?;
            v.extend(line.split_whitespace().map(String::from));
        }
        v
    } else {
        a.values.clone()
    };
    let digits = to.bits().div_ceil(4) as usize;
    // Validate every input before printing anything.
    let parsed: Vec<f64> = inputs
        .iter()
        .map(|s| parse_value(s, a.from))
        .collect::<Result<_>>()?;
    let rounded = round_all(&a, to, &parsed)?;
    let mut rows = Vec::new();
    for (i, (s, &x)) in inputs.iter().zip(&parsed).enumerate() {
        let (bits, value, exact) = match &rounded {
            Some(r) => r[i].clone(),
            None => convert_one(to, x, a.from, ov)?,
        };
        let err = if value == x || (value.is_nan() && x.is_nan()) {
            0.0
        } else {
            value - x
        };
        rows.push((s, bits, value, err, exact));
    }
    if a.json {
        let arr: Vec<Value> = rows
            .into_iter()
            .map(|(s, bits, value, err, exact)| {
                let value = exact.map_or_else(|| json_f64(value), |t| json!(t));
                json!({"input": s, "bits": bits, "value": value, "error": json_f64(err)})
            })
            .collect();
        return output::print_json(&Value::Array(arr));
    }
    // Inputs are echoed in the first column, long ones cut short (the full
    // text is in the JSON output).
    use std::fmt::Write;
    let shown: Vec<String> = rows.iter().map(|r| short_input(r.0)).collect();
    let w = shown
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<w$}  {:<bw$}  {:>14}  {:>14}",
        "input",
        "bits",
        to.name(),
        "error",
        bw = digits + 2
    );
    for ((_, bits, value, err, exact), s) in rows.into_iter().zip(&shown) {
        let _ = writeln!(
            out,
            "{s:<w$}  0x{bits:0digits$x}  {:>14}  {:>14}",
            exact.unwrap_or_else(|| text_f64(value)),
            text_f64(err)
        );
    }
    output::print(&out)
}

/// An input as shown in `cast`'s text table: at most 40 characters.
fn short_input(s: &str) -> String {
    const MAX: usize = 40;
    let n = s.chars().count();
    if n <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX - 12).collect();
        format!("{head}…({n} chars)")
    }
}
