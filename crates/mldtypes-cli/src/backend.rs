//! The one place where the command line talks to the `mldtypes` library's
//! number-format and conversion APIs.
//!
//! Every subcommand calls the functions of this module for scalar and bulk
//! conversion, finfo/iinfo and benchmarks, so the rest of the crate is written
//! against stable internal names. Items marked `TEMPORARY` stand in for
//! library APIs that are not available yet and are replaced by the real calls
//! as they appear.

use mldtypes::dtype::{DType, Kind};
use mldtypes::float::core;
use mldtypes::format::{Format, Overflow};

use crate::error::{usage, CliError, Result};

// ---------------------------------------------------------------------------
// DType names
// ---------------------------------------------------------------------------

/// Parses a dtype name, NumPy code or alias (`DType: FromStr`).
pub fn parse_dtype(s: &str) -> Result<DType> {
    s.parse::<DType>()
        .map_err(|e| CliError::Usage(e.to_string()))
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

/// Decodes one code of `fmt` exactly to `f64`.
pub fn decode_f64(fmt: &Format, code: u32) -> f64 {
    core::decode_f64(fmt, code)
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
// Bulk conversion
// ---------------------------------------------------------------------------

/// Number of bytes `n` elements of `d` occupy in safetensors storage
/// (bit-packed for 4- and 6-bit floats), or `None` if `n` elements cannot be
/// packed into whole bytes.
pub fn storage_bytes(d: DType, n: usize) -> Option<usize> {
    match d.bits() {
        4 if d.is_float() => (n % 2 == 0).then_some(n / 2),
        6 if d.is_float() => (n % 4 == 0).then_some(n / 4 * 3),
        _ => Some(n * d.itemsize()),
    }
}

/// Whether tensors of `from` can be converted to `to`: any pair of real
/// floating-point dtypes.
pub fn can_cast(from: DType, to: DType) -> bool {
    from.is_float() && to.is_float()
}

/// One element in transit: a float32, a float64, or a code of a narrower format.
#[derive(Clone, Copy)]
enum Elem {
    F32(f32),
    F64(f64),
    Code(u32),
}

/// TEMPORARY: reads element `i` of safetensors storage of `d` (bit-packed
/// little-endian for 4/6-bit formats: element `i` occupies bits
/// `[i*w, (i+1)*w)` of the byte stream).
fn read_elem(src: &[u8], d: DType, i: usize) -> Elem {
    match d {
        DType::Float32 => Elem::F32(f32::from_le_bytes(
            src[i * 4..i * 4 + 4].try_into().expect("4 bytes"),
        )),
        DType::Float64 => Elem::F64(f64::from_le_bytes(
            src[i * 8..i * 8 + 8].try_into().expect("8 bytes"),
        )),
        _ => Elem::Code(match d.bits() {
            16 => u16::from_le_bytes([src[2 * i], src[2 * i + 1]]) as u32,
            8 => src[i] as u32,
            w => {
                let bit = i * w as usize;
                let word =
                    src[bit / 8] as u32 | (src.get(bit / 8 + 1).copied().unwrap_or(0) as u32) << 8;
                (word >> (bit % 8)) & ((1 << w) - 1)
            }
        }),
    }
}

/// TEMPORARY: writes element `i` (see [`read_elem`]); `dst` must start zeroed
/// for the bit-packed formats.
fn write_elem(dst: &mut [u8], d: DType, i: usize, e: Elem) {
    match e {
        Elem::F32(x) => dst[i * 4..i * 4 + 4].copy_from_slice(&x.to_le_bytes()),
        Elem::F64(x) => dst[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes()),
        Elem::Code(c) => match d.bits() {
            16 => dst[2 * i..2 * i + 2].copy_from_slice(&(c as u16).to_le_bytes()),
            8 => dst[i] = c as u8,
            w => {
                let bit = i * w as usize;
                let word = c << (bit % 8);
                dst[bit / 8] |= word as u8;
                if word >> 8 != 0 {
                    dst[bit / 8 + 1] |= (word >> 8) as u8;
                }
            }
        },
    }
}

/// TEMPORARY: one element conversion through the scalar core.
fn convert_elem(e: Elem, from: DType, to: DType, ov: Overflow) -> Elem {
    let sat32 = |x: f64| {
        let y = x as f32;
        if ov == Overflow::Saturating && x.is_finite() && y.is_infinite() {
            f32::MAX.copysign(y)
        } else {
            y
        }
    };
    match (e, to.format()) {
        (Elem::F32(x), Some(f)) => Elem::Code(core::encode_f32(&f, x, ov)),
        (Elem::F64(x), Some(f)) => Elem::Code(core::encode_f64(&f, x, ov)),
        (Elem::Code(c), Some(f)) => {
            Elem::Code(core::convert(&from.format().expect("float"), &f, c, ov))
        }
        (Elem::F32(x), None) if to == DType::Float32 => Elem::F32(x),
        (Elem::F32(x), None) => Elem::F64(x as f64),
        (Elem::F64(x), None) if to == DType::Float32 => Elem::F32(sat32(x)),
        (Elem::F64(x), None) => Elem::F64(x),
        (Elem::Code(c), None) => {
            let fmt = from.format().expect("float");
            if to == DType::Float32 {
                Elem::F32(core::decode_f32(&fmt, c))
            } else {
                Elem::F64(core::decode_f64(&fmt, c))
            }
        }
    }
}

/// Converts `src` (elements of `from`, in safetensors storage) into `dst`
/// (elements of `to`, in safetensors storage, bit-packed where the tag is).
///
/// TEMPORARY: element by element through the scalar core until
/// `cast::cast_bytes` and the packing functions land.
pub fn cast_storage(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
) -> Result<()> {
    if !can_cast(from, to) {
        return Err(usage!("cannot convert {from} to {to}"));
    }
    let n = src.len() * 8 / from.bits() as usize;
    if storage_bytes(to, n) != Some(dst.len()) {
        return Err(usage!(
            "{n} elements of {to} do not fill {} bytes",
            dst.len()
        ));
    }
    dst.fill(0);
    for i in 0..n {
        let e = convert_elem(read_elem(src, from, i), from, to, ov);
        write_elem(dst, to, i, e);
    }
    Ok(())
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

/// finfo (floats) or iinfo (integers, bool excluded) of `d`, as ordered fields.
///
/// TEMPORARY: derived from the format descriptor until `mldtypes::info` lands.
pub fn info(d: DType) -> Result<Vec<(&'static str, InfoValue)>> {
    use InfoValue::*;
    match d.kind() {
        Kind::Signed | Kind::Unsigned => {
            let bits = d.bits();
            let (min, max) = if d.kind() == Kind::Signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            Ok(vec![
                ("dtype", Text(d.name().into())),
                ("kind", Text(if min < 0 { "i" } else { "u" }.into())),
                ("bits", Int(bits as i128)),
                ("min", Int(min)),
                ("max", Int(max)),
            ])
        }
        Kind::Float => {
            let fmt = match d {
                DType::Float32 => {
                    return Err(usage!("finfo(float32) is not available in this build"))
                }
                DType::Float64 => {
                    return Err(usage!("finfo(float64) is not available in this build"))
                }
                _ => d.format().unwrap(),
            };
            Ok(vec![
                ("dtype", Text(d.name().into())),
                ("bits", Int(fmt.bits() as i128)),
                ("eps", Float(fmt.epsilon())),
                ("max", Float(fmt.max_finite())),
                (
                    "min",
                    Float(if fmt.signed {
                        -fmt.max_finite()
                    } else {
                        fmt.min_positive_normal()
                    }),
                ),
                ("smallest_normal", Float(fmt.min_positive_normal())),
                ("smallest_subnormal", Float(fmt.min_positive_subnormal())),
                ("nmant", Int(fmt.man_bits as i128)),
                ("nexp", Int(fmt.exp_bits as i128)),
                ("maxexp", Int(fmt.max_exp() as i128 + 1)),
                ("minexp", Int(fmt.min_exp() as i128)),
            ])
        }
        _ => Err(usage!("{d} has neither finfo nor iinfo")),
    }
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

/// ns per element for each benchmarked conversion.
///
/// TEMPORARY: times [`cast_storage`] for the conversions it supports until
/// `cast::bench::run` lands.
pub fn bench(n: usize) -> Result<Vec<(DType, DType, f64)>> {
    let mut v = Vec::new();
    for to in [DType::BFloat16, DType::Float16] {
        v.push((
            DType::Float32,
            to,
            crate::bench::time_cast(DType::Float32, to, n)?,
        ));
    }
    Ok(v)
}
