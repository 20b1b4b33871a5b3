//! The scalar path: one element at a time through the reference conversions
//! (the descriptor-driven definitions of [`crate::float::core`], computed from
//! the format's fields at run time).

use crate::format::{Format, Overflow};

/// The position in [`crate::format::ALL`] of the named format `f` states
/// (every field but the name equal), so that kernel selection stays cheap.
/// Called only for descriptors that state a named format.
pub(crate) fn fmt_id(f: &Format) -> usize {
    match super::codec::named_id(f) {
        Some(i) => i,
        None => unreachable!("not a named format: {}", f.name),
    }
}

macro_rules! with_marker {
    ($fmt:expr, |$M:ident| $body:expr) => {{
        use super::kernels::*;
        match super::scalar::fmt_id(&$fmt) {
            0 => {
                type $M = BF16;
                $body
            }
            1 => {
                type $M = F16;
                $body
            }
            2 => {
                type $M = E3M4;
                $body
            }
            3 => {
                type $M = E4M3;
                $body
            }
            4 => {
                type $M = E4M3FN;
                $body
            }
            5 => {
                type $M = E4M3FNUZ;
                $body
            }
            6 => {
                type $M = E4M3B11FNUZ;
                $body
            }
            7 => {
                type $M = E5M2;
                $body
            }
            8 => {
                type $M = E5M2FNUZ;
                $body
            }
            9 => {
                type $M = E8M0FNU;
                $body
            }
            10 => {
                type $M = F6E2M3;
                $body
            }
            11 => {
                type $M = F6E3M2;
                $body
            }
            12 => {
                type $M = F4E2M1;
                $body
            }
            _ => unreachable!(),
        }
    }};
}
pub(crate) use with_marker;

use crate::float::core;

/// float32 → code of `fmt`.
pub(crate) fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> u32 {
    core::encode_f32_generic(fmt, x, ov)
}

/// float64 → code of `fmt`.
pub(crate) fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> u32 {
    core::encode_f64_generic(fmt, x, ov)
}

/// Code of `fmt` → float32.
pub(crate) fn decode_f32(fmt: &Format, code: u32) -> f32 {
    core::decode_f32_generic(fmt, code)
}

/// Code of `fmt` → float64.
pub(crate) fn decode_f64(fmt: &Format, code: u32) -> f64 {
    core::decode_f64_generic(fmt, code)
}

/// Code of `from` → code of `to`, correctly rounded.
pub(crate) fn convert(from: &Format, to: &Format, code: u32, ov: Overflow) -> u32 {
    core::convert_generic(from, to, code, ov)
}

#[cfg(test)]
mod tests {
    #[test]
    fn format_ids_are_positions_in_all() {
        for (i, f) in crate::format::ALL.iter().enumerate() {
            assert_eq!(super::fmt_id(f), i, "{}", f.name);
        }
    }
}
