//! The reference the kernel tests compare with — the scalar conversions of
//! `mldtypes::float::core`, one element at a time — and a deterministic
//! generator.
#![allow(dead_code)]

pub mod p3109_oracle;

use mldtypes::cast::Overflow;
use mldtypes::dtype::DType;
use mldtypes::float::core;
use mldtypes::int::SubByteInt;
use mldtypes::{int1, int2, int4, uint1, uint2, uint4};

fn read(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(x)
}

/// Converts float dtypes element by element with the scalar core
/// (`encode_f32`, `encode_f64`, `decode_f32`, `decode_f64`, `convert`);
/// float32 ↔ float64 with Rust's `as` (IEEE conversion).
pub fn ref_convert_bytes(src: &[u8], from: DType, dst: &mut [u8], to: DType, ov: Overflow) {
    let (a, b) = (from.itemsize(), to.itemsize());
    assert_eq!(src.len() / a, dst.len() / b);
    for (x, y) in src.chunks_exact(a).zip(dst.chunks_exact_mut(b)) {
        let raw = read(x);
        if let Some(out) = sub_byte_int(raw, from, to, ov) {
            y.copy_from_slice(&out.to_le_bytes()[..b]);
            continue;
        }
        let out: u64 = match (from, to, from.format(), to.format()) {
            (DType::Float32, DType::Float32, ..) | (DType::Float64, DType::Float64, ..) => raw,
            (DType::Float32, DType::Float64, ..) => (f32::from_bits(raw as u32) as f64).to_bits(),
            (DType::Float64, DType::Float32, ..) => (f64::from_bits(raw) as f32).to_bits() as u64,
            (DType::Float32, _, _, Some(g)) => {
                core::encode_f32(&g, f32::from_bits(raw as u32), ov) as u64
            }
            (DType::Float64, _, _, Some(g)) => core::encode_f64(&g, f64::from_bits(raw), ov) as u64,
            (_, DType::Float32, Some(f), _) => core::decode_f32(&f, raw as u32).to_bits() as u64,
            (_, DType::Float64, Some(f), _) => core::decode_f64(&f, raw as u32).to_bits(),
            (_, _, Some(f), Some(g)) => core::convert(&f, &g, raw as u32, ov) as u64,
            _ => panic!("reference has no {from} -> {to}"),
        };
        y.copy_from_slice(&out.to_le_bytes()[..b]);
    }
}

/// Float ↔ sub-byte integer through the crate's scalar `SubByteInt`
/// conversions (`from_f64_numpy`: NumPy's cast rule; `to_i32`).
fn sub_byte_int(raw: u64, from: DType, to: DType, ov: Overflow) -> Option<u64> {
    fn to_code<T: SubByteInt>(x: f64) -> u64 {
        T::from_f64_numpy(x).to_bits() as u64
    }
    fn value<T: SubByteInt>(raw: u64) -> i32 {
        T::from_bits(raw as u8).to_i32()
    }
    let enc: Option<fn(f64) -> u64> = match to {
        DType::Int1 => Some(to_code::<int1>),
        DType::Int2 => Some(to_code::<int2>),
        DType::Int4 => Some(to_code::<int4>),
        DType::UInt1 => Some(to_code::<uint1>),
        DType::UInt2 => Some(to_code::<uint2>),
        DType::UInt4 => Some(to_code::<uint4>),
        _ => None,
    };
    if let Some(enc) = enc {
        let x = match from {
            DType::Float32 => f32::from_bits(raw as u32) as f64,
            DType::Float64 => f64::from_bits(raw),
            d => core::decode_f64(&d.format()?, raw as u32),
        };
        return Some(enc(x));
    }
    let v = match from {
        DType::Int1 => value::<int1>(raw),
        DType::Int2 => value::<int2>(raw),
        DType::Int4 => value::<int4>(raw),
        DType::UInt1 => value::<uint1>(raw),
        DType::UInt2 => value::<uint2>(raw),
        DType::UInt4 => value::<uint4>(raw),
        _ => return None,
    };
    Some(match to {
        DType::Float32 => (v as f32).to_bits() as u64,
        DType::Float64 => (v as f64).to_bits(),
        d => core::encode_f64(&d.format()?, v as f64, ov) as u64,
    })
}

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 random bits (every value exact in float32).
    pub fn uniform_f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}
