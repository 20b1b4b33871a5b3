//! The scalar path: one element at a time through the reference conversions.

use crate::format::{Format, Overflow};

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

use crate::float::core;

/// float32 → code of `fmt`.
pub(crate) fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    core::encode_f32(fmt, x, ov)
}

/// float64 → code of `fmt`.
pub(crate) fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    core::encode_f64(fmt, x, ov)
}

/// Code of `fmt` → float32.
pub(crate) fn decode_f32(fmt: &Format, code: u32) -> f32 {
    core::decode_f32(fmt, code)
}

/// Code of `fmt` → float64.
pub(crate) fn decode_f64(fmt: &Format, code: u32) -> f64 {
    core::decode_f64(fmt, code)
}

/// Code of `from` → code of `to`, correctly rounded.
pub(crate) fn convert(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    core::convert(from, to, code, ov)
}
