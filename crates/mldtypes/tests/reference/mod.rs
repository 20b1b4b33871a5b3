//! The reference the kernel tests compare with, and a deterministic generator.
#![allow(dead_code)]

use mldtypes::cast::{cast_bytes_on, Overflow, Path};
use mldtypes::dtype::DType;

/// Converts with the scalar reference conversions, one element at a time.
pub fn ref_convert_bytes(src: &[u8], from: DType, dst: &mut [u8], to: DType, ov: Overflow) {
    cast_bytes_on(Path::Scalar, src, from, dst, to, ov).unwrap();
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
