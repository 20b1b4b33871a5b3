//! Hand-written x86-64 kernels for the float32 ↔ float16 / bfloat16 pairs,
//! bit-identical to the element conversions of [`super::kernels`], the
//! seeded numbers of stochastic rounding, and the non-temporal copy of
//! large outputs. float32 ↔ float16 run on the CPU's
//! own conversion instructions (F16C, and their AVX-512 forms), with fix-ups.
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
//! - float32 → bfloat16: the integer round-to-nearest-even of the element
//!   conversion written out with explicit narrowing, NaN lanes re-encoded
//!   by the element conversion. (`VCVTNEPS2BF16` of AVX-512 BF16 treats
//!   float32 subnormals as zero and keeps NaN payloads, so it is not used.)
//!
//! - the seeded random numbers of stochastic rounding: Philox4x32-10
//!   (see `philox_fill_avx2` and `philox_fill_avx512`),
//!   the numbers of `crate::round::fill_seeded` bit for bit.
//!
//! NaN lanes are rare: each step checks its lanes for them at once and
//! re-encodes the whole step element by element when there are any.
//! Remainders shorter than a step go through the element conversions.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::kernels::{self, F16};

/// Lanes per step of every kernel here.
const STEP: usize = 64;

/// The loop of every kernel: `step(s, d)` converts the [`STEP`] lanes
/// from `s` into `d` (pointers into `src` and `dst`, called for every whole
/// step) and tells whether any of them is rare (a NaN that the instructions
/// convert otherwise than the element conversion does); `element` converts
/// one lane, and is applied to every lane of such a step and to the
/// remainder shorter than a step.
#[inline(always)]
fn by_steps<S: Copy, D>(
    src: &[S],
    dst: &mut [D],
    element: impl Fn(S) -> D,
    mut step: impl FnMut(*const S, *mut D) -> bool,
) {
    let n = src.len().min(dst.len());
    let body = n - n % STEP;
    let mut i = 0;
    while i < body {
        if step(src[i..].as_ptr(), dst[i..].as_mut_ptr()) {
            for j in i..i + STEP {
                dst[j] = element(src[j]);
            }
        }
        i += STEP;
    }
    for j in body..n {
        dst[j] = element(src[j]);
    }
}

/// The element conversions, on the types the kernels store.
fn enc_bf16(x: f32) -> u16 {
    kernels::enc_bf16::<false>(x.to_bits()) as u16
}
fn enc_f16(x: f32) -> u16 {
    kernels::enc_f32::<F16, false>(x.to_bits()) as u16
}
fn dec_f16(c: u16) -> f32 {
    f32::from_bits(kernels::dec_f32::<F16>(c as u32))
}

/// float32 → float16 (non-saturating), 64 lanes per step on F16C.
///
/// # Safety
///
/// The CPU must support AVX2 and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f32_to_f16_avx2(src: &[f32], dst: &mut [u16]) {
    let mag = _mm256_set1_epi16(0x7fff);
    let inf = _mm256_set1_epi16(0x7c00);
    by_steps(src, dst, enc_f16, |s, d| {
        // Four pairs of vectors; NaN outputs (exactly the NaN inputs) are
        // looked for among all 64 lanes at once.
        let mut nan = _mm256_setzero_si256();
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let (x0, x1) = unsafe {
                (
                    _mm256_loadu_ps(s.add(16 * k)),
                    _mm256_loadu_ps(s.add(16 * k + 8)),
                )
            };
            let lo = _mm256_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(x0);
            let hi = _mm256_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(x1);
            let h = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            unsafe { _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, h) };
            nan = _mm256_or_si256(nan, _mm256_cmpgt_epi16(_mm256_and_si256(h, mag), inf));
        }
        _mm256_testz_si256(nan, nan) == 0
    })
}

/// float16 → float32, 64 lanes per step on F16C.
///
/// # Safety
///
/// The CPU must support AVX2 and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f16_to_f32_avx2(src: &[u16], dst: &mut [f32]) {
    let exp_quiet = _mm256_set1_epi16(0x7e00);
    let inf = _mm256_set1_epi16(0x7c00);
    let quiet_hi = _mm256_set1_epi16(0x0040);
    let zero = _mm256_setzero_si256();
    by_steps(src, dst, dec_f16, |s, d| {
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let (c, c0, c1) = unsafe {
                (
                    _mm256_loadu_si256(s.add(16 * k) as *const __m256i),
                    _mm_loadu_si128(s.add(16 * k) as *const __m128i),
                    _mm_loadu_si128(s.add(16 * k + 8) as *const __m128i),
                )
            };
            let lo = _mm256_castps_si256(_mm256_cvtph_ps(c0));
            let hi = _mm256_castps_si256(_mm256_cvtph_ps(c1));
            // Signalling NaNs (exponent all ones, quiet bit clear): the
            // conversion set their quiet bit (bit 22, bit 6 of the high
            // half), which is cleared again; infinities match the same test
            // and have it clear already. The 16-bit masks are widened by
            // interleaving with zeros, on codes ordered [0-3, 8-11, 4-7,
            // 12-15] so that the halves come out in element order.
            let t = _mm256_and_si256(_mm256_permute4x64_epi64::<0b11_01_10_00>(c), exp_quiet);
            let f = _mm256_and_si256(_mm256_cmpeq_epi16(t, inf), quiet_hi);
            let lo = _mm256_andnot_si256(_mm256_unpacklo_epi16(zero, f), lo);
            let hi = _mm256_andnot_si256(_mm256_unpackhi_epi16(zero, f), hi);
            unsafe {
                _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, lo);
                _mm256_storeu_si256(d.add(16 * k + 8) as *mut __m256i, hi);
            }
        }
        false
    })
}

/// float32 → bfloat16 (non-saturating), round to nearest even on the
/// integer bits, 64 lanes per step on AVX2; NaN lanes (rare) are
/// re-encoded by the element conversion (`0x7fc0` with the input's sign).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn f32_to_bf16_avx2(src: &[f32], dst: &mut [u16]) {
    let half = _mm256_set1_epi32(0x7fff);
    let one = _mm256_set1_epi32(1);
    let round = |u: __m256i| {
        let lsb = _mm256_and_si256(_mm256_srli_epi32::<16>(u), one);
        _mm256_srli_epi32::<16>(_mm256_add_epi32(_mm256_add_epi32(u, half), lsb))
    };
    let unordered = |u: __m256i| {
        let x = _mm256_castsi256_ps(u);
        _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x)
    };
    by_steps(src, dst, enc_bf16, |s, d| {
        let mut nan = _mm256_setzero_ps();
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let (u0, u1) = unsafe {
                (
                    _mm256_loadu_si256(s.add(16 * k) as *const __m256i),
                    _mm256_loadu_si256(s.add(16 * k + 8) as *const __m256i),
                )
            };
            // Both halves hold values below 2^16: the unsigned saturating
            // pack is exact; it interleaves 128-bit lanes, which the
            // permute undoes.
            let p = _mm256_packus_epi32(round(u0), round(u1));
            let p = _mm256_permute4x64_epi64::<0b11_01_10_00>(p);
            unsafe { _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, p) };
            nan = _mm256_or_ps(nan, _mm256_or_ps(unordered(u0), unordered(u1)));
        }
        _mm256_testz_ps(nan, nan) == 0
    })
}

/// float32 → float16 (non-saturating), 64 lanes per step on AVX-512.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
pub(crate) unsafe fn f32_to_f16_avx512(src: &[f32], dst: &mut [u16]) {
    by_steps(src, dst, enc_f16, |s, d| {
        // Four vectors; then one check for NaNs among all 64 lanes.
        let mut nan = 0u64;
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let x = unsafe { _mm512_loadu_ps(s.add(16 * k)) };
            let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
            unsafe { _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, h) };
            nan |= (_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x) as u64) << (16 * k);
        }
        nan != 0
    })
}

/// float16 → float32, 64 lanes per step on AVX-512.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL and F16C (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
pub(crate) unsafe fn f16_to_f32_avx512(src: &[u16], dst: &mut [f32]) {
    let mag = _mm256_set1_epi16(0x7fff);
    let inf = _mm256_set1_epi16(0x7c00);
    let quiet16 = _mm256_set1_epi16(0x0200);
    let quiet = _mm512_set1_epi32(0x0040_0000);
    by_steps(src, dst, dec_f16, |s, d| {
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let c = unsafe { _mm256_loadu_si256(s.add(16 * k) as *const __m256i) };
            let v = _mm512_castps_si512(_mm512_cvtph_ps(c));
            // Signalling NaNs (quiet bit 9 clear), found on the 16-bit codes:
            // the conversion set float32's quiet bit, which is cleared again.
            let nan = _mm256_cmpgt_epi16_mask(_mm256_and_si256(c, mag), inf);
            let snan = nan & !_mm256_test_epi16_mask(c, quiet16);
            let r = _mm512_mask_xor_epi32(v, snan, v, quiet);
            unsafe { _mm512_storeu_si512(d.add(16 * k) as *mut __m512i, r) };
        }
        false
    })
}

/// float32 → bfloat16 (non-saturating), as [`f32_to_bf16_avx2`], 64 lanes
/// per step on AVX-512.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn f32_to_bf16_avx512(src: &[f32], dst: &mut [u16]) {
    let half = _mm512_set1_epi32(0x7fff);
    let one = _mm512_set1_epi32(1);
    by_steps(src, dst, enc_bf16, |s, d| {
        let mut nan = 0u64;
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let u = unsafe { _mm512_loadu_si512(s.add(16 * k) as *const __m512i) };
            let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(u), one);
            let r = _mm512_srli_epi32::<16>(_mm512_add_epi32(_mm512_add_epi32(u, half), lsb));
            unsafe { _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, _mm512_cvtepi32_epi16(r)) };
            let x = _mm512_castsi512_ps(u);
            nan |= (_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x) as u64) << (16 * k);
        }
        nan != 0
    })
}

/// Copies `src` into `dst` (same length, `dst` 64-byte aligned) with
/// non-temporal stores, 64 bytes at a time; a tail shorter than that is
/// copied plainly. The caller issues [`store_fence`] before the data is
/// published to other threads.
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`); `dst` must be
/// 32-byte aligned.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn stream_copy_avx2(src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let body = n - n % 64;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 64 <= n for both slices; `dst + i` is 32-byte aligned
        // (the caller aligned `dst`, and i is a multiple of 64).
        let a = _mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i);
        let b = _mm256_loadu_si256(src.as_ptr().add(i + 32) as *const __m256i);
        _mm256_stream_si256(dst.as_mut_ptr().add(i) as *mut __m256i, a);
        _mm256_stream_si256(dst.as_mut_ptr().add(i + 32) as *mut __m256i, b);
        i += 64;
    }
    dst[body..n].copy_from_slice(&src[body..n]);
}

/// [`stream_copy_avx2`] with 64-byte AVX-512 stores.
///
/// # Safety
///
/// The CPU must support AVX-512 F (checked by `cast::dispatch`); `dst` must
/// be 64-byte aligned.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn stream_copy_avx512(src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    let body = n - n % 64;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 64 <= n for both slices; `dst + i` is 64-byte aligned.
        let a = _mm512_loadu_si512(src.as_ptr().add(i) as *const __m512i);
        _mm512_stream_si512(dst.as_mut_ptr().add(i) as *mut __m512i, a);
        i += 64;
    }
    dst[body..n].copy_from_slice(&src[body..n]);
}

/// Orders the non-temporal stores issued before it ahead of every later
/// store (`SFENCE`), so that the converted data is visible to whoever is
/// told about it next.
#[cfg(target_arch = "x86_64")]
pub(crate) fn store_fence() {
    // SAFETY: SFENCE is part of SSE, in the x86-64 baseline.
    unsafe { _mm_sfence() }
}

// Philox4x32-10 (`crate::round::philox4x32_10`) for the seeded random
// numbers, several generator calls per register (AVX2 here; AVX-512 keeps
// the state word by word, see `philox_fill_avx512`): each 128-bit lane holds
// one call's state `[c0, c1, c2, c3]`, which is also the order of the four
// numbers it gives (element `4b + w` takes word `w` of block `b`), so the
// results are stored as they are. A round is one `pmuludq` (it multiplies
// the even 32-bit lanes: `c0 · M0` and `c2 · M1` as 64-bit products), two
// shuffles and two XORs:
//
//   [c0, c1, c2, c3] → [hi(c2·M1) ^ c1 ^ k0, lo(c2·M1), hi(c0·M0) ^ c3 ^ k1, lo(c0·M0)].
//
// Four registers are in flight at once to cover the multiplier's latency.

/// Philox's multipliers and Weyl constants.
#[cfg(target_arch = "x86_64")]
const PHILOX_M: (u32, u32, u32, u32) = (0xD251_1F53, 0xCD9E_8D57, 0x9E37_79B9, 0xBB67_AE85);

/// The numbers of the elements `first`, `first + 1`, … from `seed`, as
/// `crate::round::fill_seeded` gives them (`sr_bits` from 1 to 32).
///
/// Unlike the AVX2 form, the state is held word by word: register `w` of
/// a group holds word `w` of eight generator calls, one per 64-bit lane,
/// its low half significant (the multiplier reads only that half, and the
/// XORs keep the upper halves' garbage there). A round of eight calls is
/// then two `vpmuludq` (full 64-bit products), two dword swaps giving the
/// high halves, and two three-way XORs, without the AVX2 form's shuffles of
/// the state; four groups are in flight to cover the multiplier's latency,
/// and the words are interleaved into element order once, at the end.
///
/// # Safety
///
/// The CPU must support AVX-512 F (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
pub(crate) unsafe fn philox_fill_avx512(seed: u64, first: u64, sr_bits: u32, dst: &mut [u32]) {
    const CALLS: usize = 8; // per register
    const GROUPS: usize = 4;
    const STEP: usize = 4 * CALLS * GROUPS; // numbers per iteration
    let (m0, m1, w0, w1) = PHILOX_M;
    let head = (first.wrapping_neg() % 4) as usize;
    if dst.len() < head + STEP {
        return crate::round::fill_seeded(seed, first, sr_bits, dst);
    }
    crate::round::fill_seeded(seed, first, sr_bits, &mut dst[..head]);
    let block0 = first.wrapping_add(head as u64) / 4;
    let (mul0, mul1) = (_mm512_set1_epi64(m0 as i64), _mm512_set1_epi64(m1 as i64));
    let (k0, k1) = (seed as u32, (seed >> 32) as u32);
    let keys: [(__m512i, __m512i); 10] = std::array::from_fn(|r| {
        let r = r as u32;
        (
            _mm512_set1_epi64(k0.wrapping_add(w0.wrapping_mul(r)) as i64),
            _mm512_set1_epi64(k1.wrapping_add(w1.wrapping_mul(r)) as i64),
        )
    });
    // Block numbers wrap at 2^62 (element numbers at 2^64).
    let wrap = _mm512_set1_epi64((u64::MAX >> 2) as i64);
    let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let low = _mm512_set1_epi64(0xffff_ffff);
    let (first_half, second_half) = (
        _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11),
        _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15),
    );
    let zero = _mm512_setzero_si512();
    let drop = _mm_cvtsi32_si128((32 - sr_bits.clamp(1, 32)) as i32);
    let groups = (dst.len() - head) / STEP;
    let out = dst[head..].as_mut_ptr();
    for g in 0..groups {
        // Counters `[lo32(b), hi32(b), 0, 0]`.
        let mut x: [[__m512i; 4]; GROUPS] = std::array::from_fn(|j| {
            let b0 = block0.wrapping_add((g * GROUPS * CALLS + j * CALLS) as u64);
            let b = _mm512_and_si512(_mm512_add_epi64(_mm512_set1_epi64(b0 as i64), lanes), wrap);
            [b, _mm512_srli_epi64::<32>(b), zero, zero]
        });
        for (ka, kb) in &keys {
            for w in x.iter_mut() {
                let p0 = _mm512_mul_epu32(w[0], mul0);
                let p1 = _mm512_mul_epu32(w[2], mul1);
                // The high halves of the products, in the low halves.
                let h0 = _mm512_shuffle_epi32::<0b10_11_00_01>(p0);
                let h1 = _mm512_shuffle_epi32::<0b10_11_00_01>(p1);
                *w = [
                    _mm512_ternarylogic_epi64::<0x96>(h1, w[1], *ka),
                    p1,
                    _mm512_ternarylogic_epi64::<0x96>(h0, w[3], *kb),
                    p0,
                ];
            }
        }
        for (j, w) in x.iter().enumerate() {
            // Words 0 and 1 (2 and 3) of each call in one 64-bit lane,
            // then the lanes of the two in element order.
            let w01 = _mm512_ternarylogic_epi64::<0xea>(w[0], low, _mm512_slli_epi64::<32>(w[1]));
            let w23 = _mm512_ternarylogic_epi64::<0xea>(w[2], low, _mm512_slli_epi64::<32>(w[3]));
            let a = _mm512_permutex2var_epi64(w01, first_half, w23);
            let b = _mm512_permutex2var_epi64(w01, second_half, w23);
            let at = out.add(g * STEP + 4 * CALLS * j);
            // SAFETY: `groups` whole steps fit in `dst[head..]`.
            unsafe {
                _mm512_storeu_si512(at as *mut _, _mm512_srl_epi32(a, drop));
                _mm512_storeu_si512(at.add(16) as *mut _, _mm512_srl_epi32(b, drop));
            }
        }
    }
    let done = head + groups * STEP;
    crate::round::fill_seeded(
        seed,
        first.wrapping_add(done as u64),
        sr_bits,
        &mut dst[done..],
    );
}

/// [`philox_fill_avx512`] on AVX2: two generator calls per register.
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn philox_fill_avx2(seed: u64, first: u64, sr_bits: u32, dst: &mut [u32]) {
    const CALLS: usize = 2;
    const REGS: usize = 4;
    const STEP: usize = 4 * CALLS * REGS;
    let (m0, m1, w0, w1) = PHILOX_M;
    let head = (first.wrapping_neg() % 4) as usize;
    if dst.len() < head + STEP {
        return crate::round::fill_seeded(seed, first, sr_bits, dst);
    }
    crate::round::fill_seeded(seed, first, sr_bits, &mut dst[..head]);
    let block0 = first.wrapping_add(head as u64) / 4;
    let mul = _mm256_setr_epi32(m0 as i32, 0, m1 as i32, 0, m0 as i32, 0, m1 as i32, 0);
    let (k0, k1) = (seed as u32, (seed >> 32) as u32);
    let keys: [__m256i; 10] = std::array::from_fn(|r| {
        let r = r as u32;
        let (a, b) = (
            k0.wrapping_add(w0.wrapping_mul(r)) as i32,
            k1.wrapping_add(w1.wrapping_mul(r)) as i32,
        );
        _mm256_setr_epi32(a, 0, b, 0, a, 0, b, 0)
    });
    let wrap = _mm256_setr_epi64x((u64::MAX >> 2) as i64, 0, (u64::MAX >> 2) as i64, 0);
    let step = _mm256_setr_epi64x((CALLS * REGS) as i64, 0, (CALLS * REGS) as i64, 0);
    let drop = _mm_cvtsi32_si128((32 - sr_bits.clamp(1, 32)) as i32);
    let mut ctr: [__m256i; REGS] = std::array::from_fn(|j| {
        let b = |c: usize| block0.wrapping_add((j * CALLS + c) as u64) as i64;
        _mm256_and_si256(_mm256_setr_epi64x(b(0), 0, b(1), 0), wrap)
    });
    let groups = (dst.len() - head) / STEP;
    let out = dst[head..].as_mut_ptr();
    for g in 0..groups {
        let mut x = ctr;
        for key in &keys {
            for v in x.iter_mut() {
                let p = _mm256_mul_epu32(*v, mul);
                let p = _mm256_shuffle_epi32::<0b00_01_10_11>(p);
                let c = _mm256_shuffle_epi32::<0b11_11_01_01>(*v);
                let t = _mm256_blend_epi32::<0b0101_0101>(*key, _mm256_xor_si256(c, *key));
                *v = _mm256_xor_si256(p, t);
            }
        }
        for (j, v) in x.iter().enumerate() {
            // SAFETY: `groups` whole steps fit in `dst[head..]`.
            unsafe {
                _mm256_storeu_si256(
                    out.add(g * STEP + 8 * j) as *mut __m256i,
                    _mm256_srl_epi32(*v, drop),
                )
            };
        }
        for c in ctr.iter_mut() {
            *c = _mm256_and_si256(_mm256_add_epi64(*c, step), wrap);
        }
    }
    let done = head + groups * STEP;
    crate::round::fill_seeded(
        seed,
        first.wrapping_add(done as u64),
        sr_bits,
        &mut dst[done..],
    );
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::dispatch::Path;

    /// Both vector generators give `fill_seeded`'s numbers for every
    /// alignment of the first element, lengths around whole steps, every
    /// width, and element numbers wrapping at 2^64.
    #[test]
    fn vector_philox_matches_the_scalar_generator() {
        let firsts = [
            0u64,
            1,
            2,
            3,
            5,
            1000,
            (1 << 62) - 3,
            u64::MAX - 130,
            u64::MAX,
        ];
        let lens = [
            0usize, 1, 3, 4, 31, 32, 33, 127, 128, 129, 131, 256, 511, 1000,
        ];
        for seed in [0u64, 7, 0xdead_beef_0123_4567, u64::MAX] {
            for &first in &firsts {
                for &n in &lens {
                    for sr_bits in [1u32, 13, 16, 31, 32] {
                        let mut want = vec![0u32; n];
                        crate::round::fill_seeded(seed, first, sr_bits, &mut want);
                        if Path::Avx512.is_available() {
                            let mut got = vec![1u32; n];
                            // SAFETY: checked just above.
                            unsafe { super::philox_fill_avx512(seed, first, sr_bits, &mut got) };
                            assert_eq!(got, want, "avx512 {seed} {first} {n} {sr_bits}");
                        }
                        if Path::Avx2.is_available() {
                            let mut got = vec![1u32; n];
                            // SAFETY: as above.
                            unsafe { super::philox_fill_avx2(seed, first, sr_bits, &mut got) };
                            assert_eq!(got, want, "avx2 {seed} {first} {n} {sr_bits}");
                        }
                    }
                }
            }
        }
    }
}
