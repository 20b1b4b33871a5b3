//! The scalar path: one element at a time through the reference conversions.

use crate::format::{Format, Overflow};

use super::kernels::{self, Fmt};

macro_rules! with_marker {
    ($fmt:expr, |$M:ident| $body:expr) => {{
        use super::kernels::*;
        match $fmt.name {
            "bfloat16" => {
                type $M = BF16;
                $body
            }
            "float16" => {
                type $M = F16;
                $body
            }
            "float8_e3m4" => {
                type $M = E3M4;
                $body
            }
            "float8_e4m3" => {
                type $M = E4M3;
                $body
            }
            "float8_e4m3fn" => {
                type $M = E4M3FN;
                $body
            }
            "float8_e4m3fnuz" => {
                type $M = E4M3FNUZ;
                $body
            }
            "float8_e4m3b11fnuz" => {
                type $M = E4M3B11FNUZ;
                $body
            }
            "float8_e5m2" => {
                type $M = E5M2;
                $body
            }
            "float8_e5m2fnuz" => {
                type $M = E5M2FNUZ;
                $body
            }
            "float8_e8m0fnu" => {
                type $M = E8M0FNU;
                $body
            }
            "float6_e2m3fn" => {
                type $M = F6E2M3;
                $body
            }
            "float6_e3m2fn" => {
                type $M = F6E3M2;
                $body
            }
            "float4_e2m1fn" => {
                type $M = F4E2M1;
                $body
            }
            _ => unreachable!("unknown format {}", $fmt.name),
        }
    }};
}
pub(crate) use with_marker;

#[inline(never)]
fn enc32<F: Fmt>(x: f32, ov: Overflow) -> u32 {
    match ov {
        Overflow::NonSaturating => kernels::enc_f32::<F, false>(x.to_bits()),
        Overflow::Saturating => kernels::enc_f32::<F, true>(x.to_bits()),
    }
}

#[inline(never)]
fn enc64<F: Fmt>(x: f64, ov: Overflow) -> u32 {
    match ov {
        Overflow::NonSaturating => kernels::enc_f64::<F, false>(x.to_bits()),
        Overflow::Saturating => kernels::enc_f64::<F, true>(x.to_bits()),
    }
}

/// float32 → code of `fmt`.
pub(crate) fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    with_marker!(fmt, |M| enc32::<M>(x, ov))
}

/// float64 → code of `fmt`.
pub(crate) fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    with_marker!(fmt, |M| enc64::<M>(x, ov))
}

/// Code of `fmt` → float32.
pub(crate) fn decode_f32(fmt: &Format, code: u32) -> f32 {
    with_marker!(fmt, |M| f32::from_bits(kernels::dec_f32::<M>(code)))
}

/// Code of `fmt` → float64.
pub(crate) fn decode_f64(fmt: &Format, code: u32) -> f64 {
    with_marker!(fmt, |M| f64::from_bits(kernels::dec_f64::<M>(code)))
}

/// Code of `from` → code of `to`, correctly rounded.
pub(crate) fn convert(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    encode_f32(to, decode_f32(from, code), ov)
}
