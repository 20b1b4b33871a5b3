//! float32 ↔ float16 on the CPU's own conversion instructions (x86-64 F16C,
//! and their AVX-512 forms), with the fix-ups that make them bit-identical
//! to the element conversions of [`super::kernels`].
//!
//! - float32 → float16: `VCVTPS2PH` with the rounding immediate set to
//!   round-to-nearest-even (independent of MXCSR) rounds finite values and
//!   infinities exactly as IEEE 754 and NumPy do (overflow from 65520 up
//!   gives ±inf, subnormals are produced). A NaN comes out quieted
//!   (`0x7e00 | payload`), whereas NumPy keeps the payload as it is and
//!   turns a payload that truncates to zero into 1: lanes holding a NaN are
//!   replaced by that result. Only the non-saturating conversion runs here.
//! - float16 → float32: `VCVTPH2PS` is exact for every number; a signalling
//!   NaN comes out quieted, whereas NumPy widens NaNs bit by bit: the quiet
//!   bit of every NaN lane is set back to the input's.
//!
//! Remainders shorter than a vector go through the element conversions.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::kernels::{self, F16};

/// float16 NaN of NumPy for a float32 NaN with bits `u`: sign, top ten
/// payload bits as they are, 1 if they are all zero.
#[inline(always)]
fn f16_nan(u: u32) -> u16 {
    (((u >> 16) & 0x8000) | 0x7c00 | ((u & 0x7f_ffff) >> 13).max(1)) as u16
}

/// float32 → float16 (non-saturating), 8 lanes at a time on F16C.
///
/// # Safety
///
/// The CPU must support AVX2 and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f32_to_f16_avx2(src: &[f32], dst: &mut [u16]) {
    let n = src.len().min(dst.len());
    let body = n - n % 8;
    let mut i = 0;
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let inf = _mm256_set1_epi32(0x7f80_0000);
    while i < body {
        // SAFETY: i + 8 <= n for both slices; unaligned loads and stores.
        let x = _mm256_loadu_ps(src.as_ptr().add(i));
        let h = _mm256_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(x);
        _mm_storeu_si128(dst.as_mut_ptr().add(i) as *mut __m128i, h);
        let a = _mm256_and_si256(_mm256_castps_si256(x), abs);
        let nan = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(a, inf)));
        if nan != 0 {
            for l in 0..8 {
                if nan & (1 << l) != 0 {
                    dst[i + l] = f16_nan(src[i + l].to_bits());
                }
            }
        }
        i += 8;
    }
    for j in body..n {
        dst[j] = kernels::enc_f32::<F16, false>(src[j].to_bits()) as u16;
    }
}

/// float16 → float32, 8 lanes at a time on F16C.
///
/// # Safety
///
/// The CPU must support AVX2 and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f16_to_f32_avx2(src: &[u16], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    let body = n - n % 8;
    let mut i = 0;
    let mag = _mm256_set1_epi32(0x7fff);
    let inf = _mm256_set1_epi32(0x7c00);
    let quiet = _mm256_set1_epi32(0x0040_0000);
    while i < body {
        // SAFETY: i + 8 <= n for both slices; unaligned loads and stores.
        let c = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
        let v = _mm256_castps_si256(_mm256_cvtph_ps(c));
        let w = _mm256_cvtepu16_epi32(c);
        let nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, mag), inf);
        // The input's quiet bit (bit 9) in float32's quiet-bit position.
        let q = _mm256_and_si256(_mm256_slli_epi32::<13>(w), quiet);
        let fixed = _mm256_or_si256(_mm256_andnot_si256(quiet, v), q);
        let r = _mm256_blendv_epi8(v, fixed, nan);
        _mm256_storeu_si256(dst.as_mut_ptr().add(i) as *mut __m256i, r);
        i += 8;
    }
    for j in body..n {
        dst[j] = f32::from_bits(kernels::dec_f32::<F16>(src[j] as u32));
    }
}

/// float32 → float16 (non-saturating), 16 lanes at a time on AVX-512.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
pub(crate) unsafe fn f32_to_f16_avx512(src: &[f32], dst: &mut [u16]) {
    let n = src.len().min(dst.len());
    let body = n - n % 64;
    let mut i = 0;
    let abs = _mm512_set1_epi32(0x7fff_ffff);
    let inf = _mm512_set1_epi32(0x7f80_0000);
    while i < body {
        // Four vectors per step; then one check for NaNs among all 64 lanes.
        let mut nan = 0u64;
        for k in 0..4 {
            // SAFETY: i + 64 <= n for both slices; unaligned loads and stores.
            let x = _mm512_loadu_ps(src.as_ptr().add(i + 16 * k));
            let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
            _mm256_storeu_si256(dst.as_mut_ptr().add(i + 16 * k) as *mut __m256i, h);
            let a = _mm512_and_si512(_mm512_castps_si512(x), abs);
            nan |= (_mm512_cmpgt_epi32_mask(a, inf) as u64) << (16 * k);
        }
        if nan != 0 {
            for l in 0..64 {
                if nan & (1 << l) != 0 {
                    dst[i + l] = f16_nan(src[i + l].to_bits());
                }
            }
        }
        i += 64;
    }
    for j in body..n {
        dst[j] = kernels::enc_f32::<F16, false>(src[j].to_bits()) as u16;
    }
}

/// float16 → float32, 16 lanes at a time on AVX-512.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
pub(crate) unsafe fn f16_to_f32_avx512(src: &[u16], dst: &mut [f32]) {
    let n = src.len().min(dst.len());
    let body = n - n % 64;
    let mut i = 0;
    let mag = _mm256_set1_epi16(0x7fff);
    let inf = _mm256_set1_epi16(0x7c00);
    let quiet16 = _mm256_set1_epi16(0x0200);
    let quiet = _mm512_set1_epi32(0x0040_0000);
    while i < body {
        for k in 0..4 {
            let j = i + 16 * k;
            // SAFETY: j + 16 <= n for both slices; unaligned loads and stores.
            let c = _mm256_loadu_si256(src.as_ptr().add(j) as *const __m256i);
            let v = _mm512_castps_si512(_mm512_cvtph_ps(c));
            // Signalling NaNs (quiet bit 9 clear), found on the 16-bit codes:
            // the conversion set float32's quiet bit, which is cleared again.
            let nan = _mm256_cmpgt_epi16_mask(_mm256_and_si256(c, mag), inf);
            let snan = nan & !_mm256_test_epi16_mask(c, quiet16);
            let r = _mm512_mask_xor_epi32(v, snan, v, quiet);
            _mm512_storeu_si512(dst.as_mut_ptr().add(j) as *mut __m512i, r);
        }
        i += 64;
    }
    for j in body..n {
        dst[j] = f32::from_bits(kernels::dec_f32::<F16>(src[j] as u32));
    }
}
