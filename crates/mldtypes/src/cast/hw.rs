//! Hand-written x86-64 kernels for the float32 ↔ float16 / bfloat16 pairs,
//! bit-identical to the element conversions of [`super::kernels`], the
//! seeded numbers of stochastic rounding, AVX2 forms of rounding-mode
//! conversions, and the non-temporal copy of large outputs. float32 ↔
//! float16 run on the CPU's own conversion instructions (F16C, and their
//! AVX-512 forms), with fix-ups.
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
//!   the words of `crate::round::fill_words` bit for bit.
//!
//! - on AVX2, the rounding modes' conversions whose element code LLVM
//!   leaves slower than `astype` there: float32 → one-byte codes through
//!   tables of the top bits, with gathers (`table_enc32_avx2`, and
//!   `sr_table_avx2` for the stochastic modes), and float32 → bfloat16
//!   under a deterministic mode (`f32_to_bf16_det_avx2`, on AVX-512 too).
//!
//! - on AVX-512, float32 → one-byte codes of the signed formats under
//!   every mode in 16 lanes without a table (`det8_avx512`,
//!   `sr8_avx512`: subnormal targets rounded by an addition with the
//!   mode's rounding embedded); on AVX2 where gathers are slow, in 8 lanes
//!   with the FPU's float → integer conversions where MXCSR is the
//!   default's (`det8_cvt_avx2`, `sr8_fpu_avx2`), else in integer forms
//!   (`det8_fpu_avx2`, `sr8_avx2`).
//!
//! NaN lanes are rare: each step checks its lanes for them at once and
//! re-encodes the whole step element by element when there are any (the
//! one-byte kernels `det8_*` / `sr8_*` only the lanes themselves, through
//! `redo_lanes`). Remainders shorter than a step go through the element
//! conversions.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::kernels::{self, F16};
use crate::round::Cut;

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

/// Stores the low bytes of the 16 lanes of `v` at `d` (16 bytes): the
/// narrowing in a register (`VPMOVDB`), then a plain store. LLVM would fold
/// the two into `VPMOVDB` to memory, on which a profile of AMD's Zen 4
/// placed a fifth of `sr8_avx512`'s samples (the pair measured a few per
/// cent faster there); the empty `asm!` hides the register from that fold
/// and emits nothing.
///
/// # Safety
///
/// The CPU must support AVX-512 F; `d` addresses 16 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
#[inline]
pub(crate) unsafe fn store_narrow8(d: *mut u8, v: __m512i) {
    let mut b = _mm512_cvtepi32_epi8(v);
    // SAFETY: an empty template: the register passes through unchanged.
    unsafe {
        std::arch::asm!("/* {0} */", inout(xmm_reg) b, options(pure, nomem, nostack, preserves_flags))
    };
    // SAFETY: the caller's guarantee.
    unsafe { _mm_storeu_si128(d as *mut __m128i, b) };
}

/// [`store_narrow8`] for the low halves of the 16 lanes (`VPMOVDW`), 32
/// bytes at `d`.
///
/// # Safety
///
/// The CPU must support AVX-512 F; `d` addresses 32 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
#[inline]
pub(crate) unsafe fn store_narrow16(d: *mut u16, v: __m512i) {
    let mut h = _mm512_cvtepi32_epi16(v);
    // SAFETY: as in `store_narrow8`.
    unsafe {
        std::arch::asm!("/* {0} */", inout(ymm_reg) h, options(pure, nomem, nostack, preserves_flags))
    };
    // SAFETY: the caller's guarantee.
    unsafe { _mm256_storeu_si256(d as *mut __m256i, h) };
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

/// float32 → bfloat16 (or any two-byte IEEE format with float32's
/// exponent, `Params::flat32`, whose codes keep `s` bits fewer) under a
/// deterministic rounding mode: `enc32_det`'s increment for the sign
/// (`inc`: positive, negative; `parity`: 1 to add the kept bits' parity,
/// ties to even) added to the magnitude's bits before the dropped ones are
/// cut. Steps where a lane is a NaN, an infinity or rounds up to the
/// infinity's code (the mode's overflow rules and saturation) go through
/// `element`, the kernels' element conversion.
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn f32_to_bf16_det_avx2(
    s: u32,
    inc: [u32; 2],
    parity: u32,
    src: &[f32],
    dst: &mut [u16],
    element: impl Fn(f32) -> u16,
) {
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let (top, par) = (splat(0x8000_0000), splat(parity));
    let (pos, neg) = (splat(inc[0]), splat(inc[1]));
    let inf = splat(0x7f80_0000);
    let shift = _mm_cvtsi32_si128(s as i32);
    let round = |u: __m256i| {
        let a = _mm256_andnot_si256(top, u);
        let lsb = _mm256_and_si256(_mm256_srl_epi32(a, shift), par);
        let i = _mm256_blendv_epi8(pos, neg, _mm256_srai_epi32::<31>(u));
        let t = _mm256_add_epi32(a, _mm256_add_epi32(i, lsb));
        let code = _mm256_srl_epi32(_mm256_or_si256(t, _mm256_and_si256(u, top)), shift);
        // Rare: t at or above the infinity's bits (unsigned: a NaN's may
        // pass 2^31).
        (code, _mm256_cmpeq_epi32(_mm256_max_epu32(t, inf), t))
    };
    by_steps(src, dst, element, |sp, d| {
        let mut rare = _mm256_setzero_si256();
        for k in 0..4 {
            // SAFETY: `by_steps` passes pointers to 64 lanes of both
            // slices; unaligned loads and stores.
            let (u0, u1) = unsafe {
                (
                    _mm256_loadu_si256(sp.add(16 * k) as *const __m256i),
                    _mm256_loadu_si256(sp.add(16 * k + 8) as *const __m256i),
                )
            };
            let ((c0, r0), (c1, r1)) = (round(u0), round(u1));
            // Codes below 2^16: the unsigned saturating pack is exact (see
            // `f32_to_bf16_avx2`).
            let p = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(c0, c1));
            unsafe { _mm256_storeu_si256(d.add(16 * k) as *mut __m256i, p) };
            rare = _mm256_or_si256(rare, _mm256_or_si256(r0, r1));
        }
        _mm256_testz_si256(rare, rare) == 0
    })
}

/// float32 → bfloat16 (or any two-byte IEEE format with float32's
/// exponent, `Params::flat32`, whose codes keep `s` bits fewer) under a
/// stochastic mode with at most 31 random bits: every finite input drops
/// its low `s` bits, so the fraction is `F = u · 2^(32 − s)` (32 bits) and
/// the decision that of [`sr_table_avx2`] (`fast`: `stochastic_fast` /
/// `stochastic_fastest`, otherwise `stochastic` / `stochastic_odd`, with
/// the parameters of `mp`); a magnitude rounding up adds 1 to the code.
/// Steps where a lane is a NaN, an infinity or may round up to the
/// infinity's code (the overflow rules and saturation) go through
/// `element`, the kernels' element conversion, as does the remainder.
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn f32_to_bf16_sr_avx2<W: Word>(
    s: u32,
    fast: bool,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u16],
    element: impl Fn(f32, u32) -> u16,
) {
    let [n, _, odd, half] = mp.stochastic32();
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let (top, one, inf) = (splat(0x8000_0000), splat(1), splat(0x7f80_0000));
    let dropped = splat((1 << s) - 1);
    // `!A` as in `sr_table_avx2`.
    let not_a = splat(!if fast {
        half << (31 - n)
    } else {
        (1u32 << (31 - n)) - 1
    });
    // The parity and the odd flag take no part in the fast modes' `A`.
    let (oddv, pmask, cut) = (
        splat(if fast { 0 } else { odd }),
        splat(!fast as u32),
        _mm_cvtsi32_si128(32 - n as i32),
    );
    let (left, right) = (
        _mm_cvtsi32_si128(32 - s as i32),
        _mm_cvtsi32_si128(s as i32),
    );
    let round = |u: __m256i, r: __m256i| {
        let f = _mm256_sll_epi32(u, left);
        let parity = _mm256_and_si256(_mm256_srl_epi32(f, cut), pmask);
        let not_a = _mm256_sub_epi32(not_a, _mm256_xor_si256(parity, oddv));
        let not_t = _mm256_sub_epi32(not_a, _mm256_sll_epi32(r, cut));
        // All ones where the value stays down: the code plus 1 plus that.
        let stay = _mm256_cmpeq_epi32(_mm256_max_epu32(f, not_t), not_t);
        let code = _mm256_add_epi32(_mm256_add_epi32(_mm256_srl_epi32(u, right), one), stay);
        // Rare: the magnitude with every dropped bit set at or above the
        // infinity's bits.
        let t = _mm256_add_epi32(_mm256_andnot_si256(top, u), dropped);
        (code, _mm256_cmpeq_epi32(_mm256_max_epu32(t, inf), t))
    };
    let len = src.len().min(dst.len()).min(rnd.len());
    let body = len - len % 32;
    let mut i = 0;
    while i < body {
        let mut rare = _mm256_setzero_si256();
        for k in 0..2 {
            let at = i + 16 * k;
            // SAFETY: at + 16 <= len for the three slices; unaligned loads
            // and store.
            let (s, r) = (src.as_ptr().add(at) as *const __m256i, rnd.as_ptr().add(at));
            let (c0, r0) = round(_mm256_loadu_si256(s), W::load8(r));
            let (c1, r1) = round(_mm256_loadu_si256(s.add(1)), W::load8(r.add(8)));
            // Codes below 2^16: the unsigned saturating pack is exact (see
            // `f32_to_bf16_avx2`).
            let p = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(c0, c1));
            _mm256_storeu_si256(dst.as_mut_ptr().add(at) as *mut __m256i, p);
            rare = _mm256_or_si256(rare, _mm256_or_si256(r0, r1));
        }
        if _mm256_testz_si256(rare, rare) == 0 {
            for j in i..i + 32 {
                dst[j] = element(src[j], rnd[j].into());
            }
        }
        i += 32;
    }
    for j in body..len {
        dst[j] = element(src[j], rnd[j].into());
    }
}

/// [`f32_to_bf16_sr_avx2`] on AVX-512: 16 lanes per register, the
/// decisions and the rare lanes in mask registers.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn f32_to_bf16_sr_avx512<W: Word>(
    s: u32,
    fast: bool,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u16],
    element: impl Fn(f32, u32) -> u16,
) {
    let [n, _, odd, half] = mp.stochastic32();
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let (top, one, inf) = (splat(0x8000_0000), splat(1), splat(0x7f80_0000));
    let dropped = splat((1 << s) - 1);
    let not_a = splat(!if fast {
        half << (31 - n)
    } else {
        (1u32 << (31 - n)) - 1
    });
    // The parity and the odd flag take no part in the fast modes' `A`.
    let (oddv, pmask, cut) = (
        splat(if fast { 0 } else { odd }),
        splat(!fast as u32),
        _mm_cvtsi32_si128(32 - n as i32),
    );
    let (left, right) = (
        _mm_cvtsi32_si128(32 - s as i32),
        _mm_cvtsi32_si128(s as i32),
    );
    let round = |u: __m512i, r: __m512i| {
        let f = _mm512_sll_epi32(u, left);
        let parity = _mm512_and_si512(_mm512_srl_epi32(f, cut), pmask);
        let not_a = _mm512_sub_epi32(not_a, _mm512_xor_si512(parity, oddv));
        let not_t = _mm512_sub_epi32(not_a, _mm512_sll_epi32(r, cut));
        let code = _mm512_srl_epi32(u, right);
        let code = _mm512_mask_add_epi32(code, _mm512_cmpgt_epu32_mask(f, not_t), code, one);
        let t = _mm512_add_epi32(_mm512_andnot_si512(top, u), dropped);
        (code, _mm512_cmpge_epu32_mask(t, inf))
    };
    let len = src.len().min(dst.len()).min(rnd.len());
    let body = len - len % 32;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= len for the three slices; unaligned loads and
        // stores.
        let (s, r) = (src.as_ptr().add(i), rnd.as_ptr().add(i));
        let (c0, r0) = round(_mm512_loadu_si512(s.cast()), W::load16(r));
        let (c1, r1) = round(_mm512_loadu_si512(s.add(16).cast()), W::load16(r.add(16)));
        let d = dst.as_mut_ptr().add(i);
        store_narrow16(d, c0);
        store_narrow16(d.add(16), c1);
        if r0 | r1 != 0 {
            for j in i..i + 32 {
                dst[j] = element(src[j], rnd[j].into());
            }
        }
        i += 32;
    }
    for j in body..len {
        dst[j] = element(src[j], rnd[j].into());
    }
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
            unsafe { store_narrow16(d.add(16 * k), r) };
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

/// float32 → one-byte codes through a 64 Ki-entry table indexed by the top
/// 16 bits of each input with its low 16 bits' "any set" in the lowest
/// index bit (the kernels' `table_enc32`), with AVX2 gathers: LLVM looks
/// byte tables up one lane at a time, which leaves this pair slower than
/// the arithmetic kernels. Each lane gathers the aligned 32-bit word
/// holding its entry (never reading outside the table) and shifts its byte
/// down; 32 lanes per step.
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn table_enc32_avx2(table: &[u8; 1 << 16], src: &[f32], dst: &mut [u8]) {
    let element = |x: f32| {
        let b = x.to_bits();
        table[((b >> 16) | ((b & 0xffff) != 0) as u32) as usize]
    };
    let low = _mm256_set1_epi32(0xffff);
    let one = _mm256_set1_epi32(1);
    let three = _mm256_set1_epi32(3);
    let byte = _mm256_set1_epi32(0xff);
    let words = table.as_ptr() as *const i32;
    let look = |u: __m256i| {
        let sticky = _mm256_andnot_si256(
            _mm256_cmpeq_epi32(_mm256_and_si256(u, low), _mm256_setzero_si256()),
            one,
        );
        let i = _mm256_or_si256(_mm256_srli_epi32::<16>(u), sticky);
        // SAFETY: `i >> 2` is below 2^14, the table's number of words.
        let w = unsafe { _mm256_i32gather_epi32::<4>(words, _mm256_srli_epi32::<2>(i)) };
        let at = _mm256_slli_epi32::<3>(_mm256_and_si256(i, three));
        _mm256_and_si256(_mm256_srlv_epi32(w, at), byte)
    };
    let n = src.len().min(dst.len());
    let body = n - n % 32;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for both slices; unaligned loads and store.
        let s = src.as_ptr().add(i) as *const __m256i;
        let codes = [0, 1, 2, 3].map(|k| look(_mm256_loadu_si256(s.add(k))));
        // Entries below 2^8.
        store_codes8_avx2(dst.as_mut_ptr().add(i), codes);
        i += 32;
    }
    for j in body..n {
        dst[j] = element(src[j]);
    }
}

/// float32 → one-byte codes under a stochastic mode through a table of
/// `float::kernels`' `enc32_sr` (32 Ki entries indexed by the top 15 bits
/// of each input, the lowest of them set when any bit below is), the
/// entries gathered (AVX2 gathers, which LLVM does not emit there), 32
/// lanes per step packed into bytes. `fast` selects `stochastic_fast` /
/// `stochastic_fastest`, otherwise `stochastic` / `stochastic_odd`, with
/// the parameters of `mp` (at most 31 random bits).
///
/// The decision in fraction form: with `s ≤ 32` dropped bits `d`, the
/// fraction `F = d · 2^(32 − s)` (exact in 32 bits) rounded to the `n`
/// bits of the random numbers is `⌊(F + A) / 2^(32 − n)⌋`, where `A` is
/// `2^(31 − n) − 1` plus the parity of the bit above (ties to even, or to
/// odd) for `StochRn::away32`, and half a random step or nothing for
/// `StochFast::away32`: both equal theirs (`F`'s scale is a power of two
/// at least the one they round at, and every addend a multiple of it or
/// below it). The value rounds up when that plus the random number `r`
/// reaches `2^n`, that is when `F + A + r · 2^(32 − n) ≥ 2^32` (the floor
/// commutes with adding a multiple of the divisor); the last two terms
/// stay below 2^32 together, so the test is one unsigned comparison of `F`
/// with their complement. Beyond 32 dropped bits `F` is 0, which gives the
/// code down; the entries whose code can then round up are marked rare,
/// and a step holding one goes through the element conversion `enc32_sr`,
/// as does the remainder. The vector look-up indexes by the top 15 bits
/// alone, without the table's sticky bit: that bit only tells a NaN from
/// an infinity of the same top bits, and the infinities' entries are
/// marked rare too. Gives `enc32_sr`'s bits (checked against the scalar
/// path in
/// `tests/round_paths.rs`).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sr_table_avx2<W: Word>(
    table: &[u32; 1 << 15],
    fast: bool,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
) {
    use kernels::sr_entry;
    let element = |x: f32, r: u32| sr_element(table, fast, mp, x, r);
    let [n, _, odd, half] = mp.stochastic32();
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let byte = splat(0xff);
    let (man, implicit) = (splat(0x7f_ffff), splat(sr_entry::IMPLICIT));
    let shifts = splat(63);
    // `!A`: A is StochFast's half step, or StochRn's 2^(31 − n) − 1 (its
    // parity bit added per lane).
    let not_a = splat(!if fast {
        half << (31 - n)
    } else {
        (1u32 << (31 - n)) - 1
    });
    // The parity and the odd flag take no part in the fast modes' `A`.
    let (oddv, pmask, cut) = (
        splat(if fast { 0 } else { odd }),
        splat(!fast as u32),
        _mm_cvtsi32_si128(32 - n as i32),
    );
    let words = table.as_ptr() as *const i32;
    let codes = |u: __m256i, r: __m256i| {
        // (Bit 17 stands for itself: only an infinity's entry differs
        // from its neighbour's, and it is marked rare.)
        // SAFETY: the indices are below 2^15, the table's length.
        let e = unsafe { _mm256_i32gather_epi32::<4>(words, _mm256_srli_epi32::<17>(u)) };
        let shift = _mm256_and_si256(_mm256_srli_epi32::<{ sr_entry::SHIFT as i32 }>(e), shifts);
        let sig = _mm256_or_si256(_mm256_and_si256(u, man), _mm256_and_si256(e, implicit));
        let f = _mm256_sllv_epi32(sig, shift);
        let parity = _mm256_and_si256(_mm256_srl_epi32(f, cut), pmask);
        let not_a = _mm256_sub_epi32(not_a, _mm256_xor_si256(parity, oddv));
        // `!T` for T = A + r · 2^(32 − n) (below 2^32); the value stays
        // down where F ≤ !T, that is F + T < 2^32.
        let not_t = _mm256_sub_epi32(not_a, _mm256_sll_epi32(r, cut));
        let stay = _mm256_cmpeq_epi32(_mm256_max_epu32(f, not_t), not_t);
        let up = _mm256_srli_epi32::<{ sr_entry::UP as i32 }>(e);
        (_mm256_and_si256(_mm256_blendv_epi8(up, e, stay), byte), e)
    };
    let len = src.len().min(dst.len()).min(rnd.len());
    let body = len - len % 32;
    let rare_bit = splat(sr_entry::RARE);
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= len for the three slices; unaligned loads and store.
        let s = src.as_ptr().add(i) as *const __m256i;
        let r = rnd.as_ptr().add(i);
        let [(a, ea), (b, eb), (c, ec), (d, ed)] =
            [0, 1, 2, 3].map(|k| codes(_mm256_loadu_si256(s.add(k)), W::load8(r.add(8 * k))));
        // Codes below 2^8.
        store_codes8_avx2(dst.as_mut_ptr().add(i), [a, b, c, d]);
        let entries = _mm256_or_si256(_mm256_or_si256(ea, eb), _mm256_or_si256(ec, ed));
        if _mm256_testz_si256(entries, rare_bit) == 0 {
            for j in i..i + 32 {
                dst[j] = element(src[j], rnd[j].into());
            }
        }
        i += 32;
    }
    for j in body..len {
        dst[j] = element(src[j], rnd[j].into());
    }
}

/// The parameters of [`det8_avx512`] and [`sr8_avx512`]: one format of
/// `codec::table_eligible` with a sign, under one mode and saturation.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params8 {
    /// `kernels::Params` of the format: the bits a normal target drops
    /// (`23 − m`), the rebias, the float32 magnitude below which targets
    /// are subnormal, the magic addend `2^(emin − m + 23)` (its ulp is the
    /// subnormals' quantum), the parity of the rebias (formats without
    /// significand bits), the largest finite magnitude and the sign bit.
    pub(crate) s: u32,
    pub(crate) rebias: u32,
    pub(crate) sub: u32,
    pub(crate) magic: u32,
    pub(crate) parity: u32,
    pub(crate) max_code: u32,
    pub(crate) sign: u32,
    /// Whether a zero magnitude keeps a negative sign (false where `−0`'s
    /// code is a NaN).
    pub(crate) zero_sign: bool,
    /// The codes of a positive and of a negative finite overflow (±max,
    /// ±inf or NaN by the mode and saturation).
    pub(crate) over: [u32; 2],
}

/// [`Params8`] in registers, with the constants both kernels use.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Regs8 {
    abs: __m512i,
    inf: __m512i,
    normal: __m512i,
    sub: __m512i,
    rebias: __m512i,
    magic: __m512i,
    max: __m512i,
    sign: __m512i,
    over: [__m512i; 2],
    cut: __m128i,
}

#[cfg(target_arch = "x86_64")]
impl Regs8 {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    fn of(k: &Params8) -> Regs8 {
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        Regs8 {
            abs: splat(0x7fff_ffff),
            inf: splat(0x7f80_0000),
            normal: splat(0x0080_0000),
            sub: splat(k.sub),
            rebias: splat(k.rebias),
            magic: splat(k.magic),
            max: splat(k.max_code),
            sign: splat(k.sign),
            over: k.over.map(splat),
            cut: _mm_cvtsi32_si128(k.s as i32),
        }
    }

    /// The lanes of `a` (magnitudes) the kernels leave to the element
    /// conversion: infinities, NaN and float32 subnormals (which a CPU set
    /// to flush subnormal inputs would read as zero).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    fn odd(&self, a: __m512i) -> __mmask16 {
        _mm512_cmpge_epu32_mask(a, self.inf)
            | (_mm512_cmplt_epu32_mask(a, self.normal) & _mm512_test_epi32_mask(a, a))
    }

    /// The code of a subnormal target from `t`, the input plus the signed
    /// magic addend.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    fn sub_code(&self, t: __m512) -> __m512i {
        _mm512_sub_epi32(
            _mm512_and_si512(_mm512_castps_si512(t), self.abs),
            self.magic,
        )
    }

    /// The codes of the magnitudes `mag` of the inputs signed by `neg`: the
    /// overflow code of the sign above the largest magnitude, else the
    /// sign set (not on a zero unless `ZERO_SIGN`), stored as 16 bytes at
    /// `d`.
    ///
    /// # Safety
    ///
    /// `d` addresses 16 writable bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    unsafe fn store<const ZERO_SIGN: bool>(&self, mag: __m512i, neg: __mmask16, d: *mut u8) {
        let signed = if ZERO_SIGN {
            neg
        } else {
            neg & _mm512_test_epi32_mask(mag, mag)
        };
        let code = _mm512_mask_or_epi32(mag, signed, mag, self.sign);
        let over = _mm512_mask_blend_epi32(neg, self.over[0], self.over[1]);
        let code = _mm512_mask_blend_epi32(_mm512_cmpgt_epu32_mask(mag, self.max), code, over);
        // SAFETY: the caller's guarantee.
        unsafe { store_narrow8(d, code) };
    }

    /// [`store`](Regs8::store) in the form `FORM` of [`Params8::form`]: 2
    /// caps the magnitude at the overflow code and sets the sign (two
    /// instructions where the general form takes four), 1 and 0 are the
    /// general form with and without the sign on zeros.
    ///
    /// # Safety
    ///
    /// `d` addresses 16 writable bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    unsafe fn store_as<const FORM: u8>(&self, mag: __m512i, neg: __mmask16, d: *mut u8) {
        // SAFETY (all): the caller's guarantee.
        match FORM {
            2 => {
                let m = _mm512_min_epu32(mag, self.over[0]);
                unsafe { store_narrow8(d, _mm512_mask_or_epi32(m, neg, m, self.sign)) }
            }
            1 => unsafe { self.store::<true>(mag, neg, d) },
            _ => unsafe { self.store::<false>(mag, neg, d) },
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Params8 {
    /// The form of [`Regs8::store_as`] for these parameters: 2 where `−0`
    /// exists and a magnitude above the largest gives the code of
    /// `over[0]` (the largest or the next) signed, as under the stochastic
    /// modes into the formats with a negative zero; else 1 or 0 by
    /// `zero_sign`.
    pub(crate) fn form(&self) -> u8 {
        if self.zero_sign && self.caps().is_some_and(|[p, n]| p == n) {
            2
        } else {
            self.zero_sign as u8
        }
    }

    /// The magnitudes at which a positive and a negative value's code is
    /// capped, where `−0` exists and each sign's overflow code is the
    /// largest magnitude or the next with that sign (then every code is
    /// the magnitude capped there, signed); None otherwise.
    pub(crate) fn caps(&self) -> Option<[u32; 2]> {
        let [pos, neg] = self.over;
        let near = |m: u32| (self.max_code..=self.max_code + 1).contains(&m);
        let caps = [pos, neg & !self.sign];
        (self.zero_sign
            && neg & self.sign != 0
            && pos & self.sign == 0
            && caps.iter().all(|&m| near(m)))
        .then_some(caps)
    }
}

/// Runs `steps(i)` (steps of `step` lanes from `i`, returning where they
/// stopped: `body`, or a step whose codes they stored but whose lanes of
/// the mask returned need the element conversion), `lanes(i, mask)` on
/// each such step and `element` on the rest of `n` elements; `body` is `n`
/// rounded down to `step`. The steps run without a call between them, which
/// would leave the kernels' constants spilled.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn steps_then_elements(
    n: usize,
    step: usize,
    mut steps: impl FnMut(usize) -> (usize, u32),
    mut lanes: impl FnMut(usize, u32),
    element: impl FnOnce(std::ops::Range<usize>),
) {
    let body = n - n % step;
    let mut i = 0;
    while i < body {
        let mask;
        (i, mask) = steps(i);
        if i < body {
            lanes(i, mask);
            i += step;
        }
    }
    if body < n {
        element(body..n);
    }
}

/// Converts again, through `element`, the lanes of `mask` (bit `j`:
/// element `i + j`; at most 32 lanes) of a step whose vector codes are
/// stored at `d`: their inputs `x` and random numbers `r` (none: `r`
/// empty) packed into buffers, each code written back to its lane. The
/// lanes a vector step cannot round (infinities, NaN, and the values whose
/// fraction does not fit its arithmetic) are few; the rest of their step
/// keeps the vector codes.
///
/// # Safety
///
/// `d` addresses the step's writable bytes; `x` (and `r` unless empty)
/// hold the step's elements.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
unsafe fn redo_lanes<W: Copy + Default>(
    i: usize,
    mut mask: u32,
    x: &[f32],
    r: &[W],
    d: *mut u8,
    element: impl Fn(&[f32], &[W], &mut [u8]),
) {
    let (mut xs, mut rs, mut at) = ([0f32; 32], [W::default(); 32], [0usize; 32]);
    let mut m = 0;
    while mask != 0 {
        let j = i + mask.trailing_zeros() as usize;
        mask &= mask - 1;
        (at[m], xs[m]) = (j, x[j]);
        if !r.is_empty() {
            rs[m] = r[j];
        }
        m += 1;
    }
    let mut out = [0u8; 32];
    element(
        &xs[..m],
        &rs[..if r.is_empty() { 0 } else { m }],
        &mut out[..m],
    );
    for (&j, &code) in at[..m].iter().zip(&out) {
        // SAFETY: the caller's guarantee; `j` is a lane of the step.
        unsafe { *d.add(j) = code };
    }
}

/// float32 → one-byte codes of a signed format under a deterministic mode
/// (`MODE`: 0 `nearest_even`, 1 `nearest_away`, 2 `toward_zero`, 3
/// `toward_negative`, 4 `toward_positive`) in 16-lane AVX-512 steps,
/// `enc32_det`'s bits (checked against the scalar path in
/// `tests/round_paths.rs`):
/// - normal targets: the mode's increment (by the sign where it depends on
///   it) added to the magnitude's bits before the `s` dropped ones are cut,
///   then rebiased, as `enc32_det` does;
/// - subnormal targets: the signed input plus the signed magic addend,
///   rounded by the addition itself in the mode (AVX-512's embedded
///   rounding: down and up act on the signed value, which is what the
///   directed modes ask; no exception flags), leaves the code over the
///   magic's bits; ties away from zero add half a quantum toward zero
///   first, then cut toward zero (both exact where it matters: the sum's
///   own ulp is far below the quantum);
/// - a magnitude above the largest gives the overflow code of its sign,
///   otherwise the sign is set (not on a zero where `−0` is a NaN).
///
/// A step holding an infinity, a NaN or a float32 subnormal (which a CPU
/// set to flush subnormal inputs would read as zero), and the rest of the
/// slice, go through `element`.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL/DQ (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
pub(crate) unsafe fn det8_avx512<const MODE: u8>(
    k: &Params8,
    src: &[f32],
    dst: &mut [u8],
    element: impl Fn(&[f32], &mut [u8]),
) {
    let n = src.len().min(dst.len());
    let (body, d) = (n - n % 16, dst.as_mut_ptr());
    // The steps without a call between them (which would leave the
    // constants spilled), up to the first with lanes that need the element
    // conversion.
    steps_then_elements(
        n,
        16,
        // SAFETY: the caller's guarantee; `i ≤ body`.
        |i| unsafe {
            if k.zero_sign {
                det8_steps::<MODE, true>(k, src, d, i, body)
            } else {
                det8_steps::<MODE, false>(k, src, d, i, body)
            }
        },
        // SAFETY: a step within `body`.
        |i, mask| unsafe { redo_lanes::<u32>(i, mask, src, &[], d, |x, _, o| element(x, o)) },
        // SAFETY: the range lies within `n` (`dst` is not otherwise
        // borrowed meanwhile).
        |r| {
            element(&src[r.clone()], unsafe {
                std::slice::from_raw_parts_mut(d.add(r.start), r.len())
            })
        },
    )
}

/// The 16-lane steps of [`det8_avx512`] from element `i` to `body` (a
/// multiple of 16), the codes written at `d`, `ZERO_SIGN` being
/// `k.zero_sign`; returns where it stopped: `body`, or the first step
/// holding an infinity, a NaN or a float32 subnormal, written, with the
/// mask of those lanes.
///
/// # Safety
///
/// As [`det8_avx512`]; `body ≤ src.len()` and `d` addresses `body`
/// writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[inline]
unsafe fn det8_steps<const MODE: u8, const ZERO_SIGN: bool>(
    k: &Params8,
    src: &[f32],
    d: *mut u8,
    mut i: usize,
    body: usize,
) -> (usize, u32) {
    const NEAR: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const ZERO: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const UP: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
    let c = Regs8::of(k);
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let h = 1u32 << (k.s - 1);
    // Half the quantum: the magic's exponent less 24.
    let half_q = splat(k.magic - (24 << 23));
    let (parity, one, all_up, near_inc) =
        (splat(k.parity), splat(1), splat(2 * h - 1), splat(h - 1));
    let s = src.as_ptr();
    while i < body {
        // SAFETY: i + 16 <= body for both slices; unaligned loads and store.
        let u = unsafe { _mm512_loadu_si512(s.add(i) as *const _) };
        let a = _mm512_and_si512(u, c.abs);
        let rare = c.odd(a);
        let neg = _mm512_movepi32_mask(u);
        let inc = match MODE {
            0 => {
                let lsb =
                    _mm512_and_si512(_mm512_xor_si512(_mm512_srl_epi32(a, c.cut), parity), one);
                _mm512_add_epi32(near_inc, lsb)
            }
            1 => splat(h),
            2 => _mm512_setzero_si512(),
            3 => _mm512_maskz_mov_epi32(neg, all_up),
            _ => _mm512_maskz_mov_epi32(!neg, all_up),
        };
        let normal_code =
            _mm512_sub_epi32(_mm512_srl_epi32(_mm512_add_epi32(a, inc), c.cut), c.rebias);
        let sgn = _mm512_andnot_si512(c.abs, u);
        let (x, m) = (
            _mm512_castsi512_ps(u),
            _mm512_castsi512_ps(_mm512_or_si512(c.magic, sgn)),
        );
        let t = match MODE {
            0 => _mm512_add_round_ps::<NEAR>(x, m),
            1 => {
                let hq = _mm512_castsi512_ps(_mm512_or_si512(half_q, sgn));
                _mm512_add_round_ps::<ZERO>(_mm512_add_round_ps::<ZERO>(x, hq), m)
            }
            2 => _mm512_add_round_ps::<ZERO>(x, m),
            3 => _mm512_add_round_ps::<DOWN>(x, m),
            _ => _mm512_add_round_ps::<UP>(x, m),
        };
        let sub_lane = _mm512_cmplt_epu32_mask(a, c.sub);
        let mag = _mm512_mask_blend_epi32(sub_lane, normal_code, c.sub_code(t));
        // SAFETY: i + 16 <= body.
        unsafe { c.store::<ZERO_SIGN>(mag, neg, d.add(i)) };
        if rare != 0 {
            return (i, rare.into());
        }
        i += 16;
    }
    (body, 0)
}

/// float32 → one-byte codes of a signed format under a stochastic mode in
/// 16-lane AVX-512 steps, `enc32_sr`'s bits (checked against the scalar
/// path in `tests/round_paths.rs`): the code toward zero is
/// [`det8_avx512`]'s (`toward_zero`), the code up the next magnitude, and
/// between them the one comparison of [`sr_table_avx2`] decides, the
/// fraction `F` of the dropped bits made from the input (its `s32` low
/// bits for normal targets, its significand shifted by the exponent for
/// subnormal ones) rather than read from a table. `sub_shift` is
/// `kernels::Params::sub_shift32`, `mp` holds the mode's parameters (at
/// most 31 random bits), `fast` as in [`sr_table_avx2`].
///
/// Zeros take the ordinary steps. A step holding a value more than 32 bits
/// below the quantum (float32 subnormals among them), whose fraction the
/// ordinary steps do not make, is converted again by [`sr8_exact_step`],
/// which makes it; lanes holding an infinity or a NaN, and with 31 random
/// bits the values it leaves, go through `element`, as does the rest of
/// the slice.
///
/// Returns the OR of every random number it read: the caller checking
/// numbers as they are read needs no pass of its own (a number of
/// `sr_bits` bits or more gives codes the caller then discards).
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL/DQ (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sr8_avx512<W: Word>(
    k: &Params8,
    fast: bool,
    sub_shift: u32,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
    element: impl Fn(&[f32], &[W], &mut [u8]),
) -> u32 {
    let regs = RegsSr8::of(k, fast, sub_shift, mp);
    // SAFETY: the caller's guarantee.
    unsafe {
        sr8_frame512(
            k,
            src,
            rnd,
            dst,
            // The constants copied into the closure, kept in registers.
            move |u, rv| regs.vec::<false>(u, rv),
            // A step whose vector codes are stored, converted again with
            // the exact fraction.
            |i, _, d| {
                let rest = if k.zero_sign {
                    sr8_exact_step::<1, W>(&regs, src, rnd, d, i)
                } else {
                    sr8_exact_step::<0, W>(&regs, src, rnd, d, i)
                };
                if rest != 0 {
                    redo_lanes(i, rest, src, rnd, d, &element)
                }
            },
            &element,
        )
    }
}

/// The frame of AVX-512's one-byte stochastic kernels ([`sr8_avx512`],
/// [`sr8_fpu_avx512`]) for the parameters `k`: their steps ([`sr8_steps`],
/// `vec` making each step's codes), `lanes(i, mask, d)` on each step with
/// rare lanes (`d` the output's start), `element` on the rest of the
/// slice; returns the OR of the random numbers read.
///
/// # Safety
///
/// As [`sr8_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[inline]
unsafe fn sr8_frame512<W: Word>(
    k: &Params8,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
    vec: impl Fn(__m512i, __m512i) -> (__m512i, __mmask16, __mmask16) + Copy,
    mut lanes: impl FnMut(usize, u32, *mut u8),
    element: &impl Fn(&[f32], &[W], &mut [u8]),
) -> u32 {
    let n = src.len().min(dst.len()).min(rnd.len());
    let (body, d) = (n - n % 16, dst.as_mut_ptr());
    let mut seen = _mm512_setzero_si512();
    let form = k.form();
    let c = Regs8::of(k);
    // As in `det8_avx512`: the steps without calls, up to the first with
    // lanes that need more.
    steps_then_elements(
        n,
        16,
        // SAFETY: the caller's guarantee; `i ≤ body`.
        |i| unsafe {
            match form {
                2 => sr8_steps::<2, W>(&c, src, rnd, d, i, body, &mut seen, vec),
                1 => sr8_steps::<1, W>(&c, src, rnd, d, i, body, &mut seen, vec),
                _ => sr8_steps::<0, W>(&c, src, rnd, d, i, body, &mut seen, vec),
            }
        },
        |i, mask| lanes(i, mask, d),
        // SAFETY: the range lies within `n` (`dst` is not otherwise
        // borrowed meanwhile).
        |r| {
            let out = unsafe { std::slice::from_raw_parts_mut(d.add(r.start), r.len()) };
            element(&src[r.clone()], &rnd[r], out)
        },
    );
    let tail = rnd[body..n].iter().fold(0, |m, &v| m | v.into());
    _mm512_reduce_or_epi32(seen) as u32 | tail
}

/// The constants of [`sr8_avx512`]'s steps in registers.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct RegsSr8 {
    c: Regs8,
    man: __m512i,
    one: __m512i,
    /// The fraction's shift for normal targets, `32 − s32`.
    normal_shift: __m512i,
    /// `sub_shift − 32`: the fraction's shift for subnormal ones is the
    /// exponent less this (negative: more than 32 dropped bits).
    sub_base: __m512i,
    /// `(sub_shift − 32) · 2^23 − 1`: a magnitude less one below this is a
    /// nonzero value more than 32 bits below the quantum.
    tiny: __m512i,
    not_a: __m512i,
    oddv: __m512i,
    pmask: __m512i,
    rcut: __m128i,
    /// All lanes where the random numbers fill 31 bits: there the exact
    /// step leaves the values more than 32 bits below the quantum (its
    /// sticky bit would stand on the rounding's half bit).
    wide: __mmask16,
}

#[cfg(target_arch = "x86_64")]
impl RegsSr8 {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    fn of(k: &Params8, fast: bool, sub_shift: u32, mp: &kernels::ModeParams) -> RegsSr8 {
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        let [nbits, _, odd, half] = mp.stochastic32();
        let sub_base = sub_shift.wrapping_sub(32);
        RegsSr8 {
            c: Regs8::of(k),
            man: splat(0x7f_ffff),
            one: splat(1),
            normal_shift: splat(32 - k.s),
            sub_base: splat(sub_base),
            tiny: splat((sub_base << 23).wrapping_sub(1)),
            not_a: splat(!if fast {
                half << (31 - nbits)
            } else {
                (1u32 << (31 - nbits)) - 1
            }),
            // The parity and the odd flag take no part in the fast modes' `A`.
            oddv: splat(if fast { 0 } else { odd }),
            pmask: splat(!fast as u32),
            rcut: _mm_cvtsi32_si128(32 - nbits as i32),
            wide: if nbits >= 31 { 0xffff } else { 0 },
        }
    }

    /// The magnitudes' codes of the inputs `u` with random numbers `rv`,
    /// the mask of the negative lanes, and that of the lanes left to
    /// others: ordinary steps (not `EXACT`) leave infinities, NaN and
    /// nonzero values more than 32 bits below the quantum (those have no
    /// fraction here); exact ones make that fraction (below) and leave
    /// infinities, NaN and, with 31 random bits, those values.
    ///
    /// The fraction of a value `s > 32` bits below the quantum: its top 32
    /// bits, the lowest of them ORed with whether any bit below is set
    /// (sticky). Every decision compares the fraction with a threshold
    /// that, like the random step and half of it, lies on a multiple of
    /// `2^(32 − n)` or half of that (`n` random bits), so with `n ≤ 30`
    /// the sticky bit stands where it decides exactly as the whole
    /// fraction does.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
    #[inline]
    fn vec<const EXACT: bool>(&self, u: __m512i, rv: __m512i) -> (__m512i, __mmask16, __mmask16) {
        const ZERO: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
        let c = &self.c;
        let a = _mm512_and_si512(u, c.abs);
        let sub_lane = _mm512_cmplt_epu32_mask(a, c.sub);
        let e = _mm512_srli_epi32::<23>(a);
        // Nonzero lanes more than 32 bits below the quantum (`a − 1`: a
        // zero wraps to the top).
        let tiny = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, self.one), self.tiny);
        let special = _mm512_cmpge_epu32_mask(a, c.inf);
        let (rare, sig, e) = if EXACT {
            // float32 subnormals: no implicit bit, the exponent of 1.
            let implicit = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(e, e), c.normal);
            (
                special | (tiny & self.wide),
                _mm512_or_si512(_mm512_and_si512(a, self.man), implicit),
                _mm512_max_epi32(e, self.one),
            )
        } else {
            (
                special | tiny,
                _mm512_or_si512(_mm512_and_si512(a, self.man), c.normal),
                e,
            )
        };
        let sub_shift_v = _mm512_sub_epi32(e, self.sub_base);
        let neg = _mm512_movepi32_mask(u);
        // The code toward zero.
        let normal_code = _mm512_sub_epi32(_mm512_srl_epi32(a, c.cut), c.rebias);
        let m = _mm512_castsi512_ps(_mm512_or_si512(c.magic, _mm512_andnot_si512(c.abs, u)));
        let t = _mm512_add_round_ps::<ZERO>(_mm512_castsi512_ps(u), m);
        let down = _mm512_mask_blend_epi32(sub_lane, normal_code, c.sub_code(t));
        // The fraction and the decision (see `sr_table_avx2`); a shift of
        // 32 or more, or a negative one, gives 0.
        let shift = _mm512_mask_blend_epi32(sub_lane, self.normal_shift, sub_shift_v);
        let mut f = _mm512_sllv_epi32(sig, shift);
        if EXACT {
            let zero = _mm512_setzero_si512();
            let deep = _mm512_cmplt_epi32_mask(shift, zero);
            // `sig < 2^24`: a cut of 31 bits drops all of it.
            let cut = _mm512_min_epi32(_mm512_sub_epi32(zero, shift), _mm512_set1_epi32(31));
            let top = _mm512_srlv_epi32(sig, cut);
            let sticky = deep & _mm512_cmpneq_epu32_mask(_mm512_sllv_epi32(top, cut), sig);
            f = _mm512_mask_blend_epi32(deep, f, top);
            f = _mm512_mask_or_epi32(f, sticky, f, self.one);
        }
        let parity = _mm512_and_si512(_mm512_srl_epi32(f, self.rcut), self.pmask);
        let not_a = _mm512_sub_epi32(self.not_a, _mm512_xor_si512(parity, self.oddv));
        let not_t = _mm512_sub_epi32(not_a, _mm512_sll_epi32(rv, self.rcut));
        let up = _mm512_cmpgt_epu32_mask(f, not_t);
        let mag = _mm512_mask_add_epi32(down, up, down, self.one);
        (mag, neg, rare)
    }
}

/// The 16-lane steps of [`sr8_avx512`] and [`sr8_fpu_avx512`] from
/// element `i` to `body`, as [`det8_steps`] (`FORM` as in
/// [`Regs8::store_as`]): `vec` gives each step's magnitudes' codes, the
/// mask of its negative lanes and that of its rare ones from the inputs
/// and the random numbers, which are ORed into `seen`.
///
/// # Safety
///
/// As [`sr8_avx512`]; `body ≤ src.len(), rnd.len()` and `d` addresses
/// `body` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn sr8_steps<const FORM: u8, W: Word>(
    c: &Regs8,
    src: &[f32],
    rnd: &[W],
    d: *mut u8,
    mut i: usize,
    body: usize,
    seen: &mut __m512i,
    vec: impl Fn(__m512i, __m512i) -> (__m512i, __mmask16, __mmask16),
) -> (usize, u32) {
    let c = *c;
    let mut all = *seen;
    while i < body {
        // SAFETY: i + 16 <= body for the three slices.
        let (u, rv) = unsafe { sr8_load(src, rnd, i) };
        all = _mm512_or_si512(all, rv);
        let (mag, neg, rare) = vec(u, rv);
        // SAFETY: i + 16 <= body.
        unsafe { c.store_as::<FORM>(mag, neg, d.add(i)) };
        if rare != 0 {
            *seen = all;
            return (i, rare.into());
        }
        i += 16;
    }
    *seen = all;
    (body, 0)
}

/// The inputs and the random numbers of the 16-lane step at element `i`
/// (unaligned loads).
///
/// # Safety
///
/// `i + 16 ≤ src.len(), rnd.len()`; the CPU supports AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn sr8_load<W: Word>(src: &[f32], rnd: &[W], i: usize) -> (__m512i, __m512i) {
    // SAFETY: the caller's guarantee.
    unsafe {
        (
            _mm512_loadu_si512(src.as_ptr().add(i) as *const _),
            W::load16(rnd.as_ptr().add(i)),
        )
    }
}

/// One step of [`sr8_avx512`] at element `i`, converted with the fraction
/// of values more than 32 bits below the quantum ([`RegsSr8::vec`]); the
/// mask of the lanes it leaves to the element conversion (infinities,
/// NaN; with 31 random bits, those values).
///
/// # Safety
///
/// As [`sr8_steps`]; `i + 16 ≤ src.len(), rnd.len()` and `d` addresses
/// `i + 16` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[inline(never)]
unsafe fn sr8_exact_step<const FORM: u8, W: Word>(
    regs: &RegsSr8,
    src: &[f32],
    rnd: &[W],
    d: *mut u8,
    i: usize,
) -> u32 {
    // SAFETY: the caller's guarantee.
    let (u, rv) = unsafe { sr8_load(src, rnd, i) };
    let (mag, neg, rare) = regs.vec::<true>(u, rv);
    // SAFETY: the caller's guarantee.
    unsafe { regs.c.store_as::<FORM>(mag, neg, d.add(i)) };
    rare.into()
}

/// The shared part of [`sr8_avx2`] and [`sr8_exact_step_avx2`] for eight
/// float32 lanes `u`: `(neg, down, f, rare)`, where `neg` is all ones on
/// negative lanes, `down` the magnitude's code toward zero, `f` the
/// dropped part of the magnitude as a 32-bit fraction of one quantum and
/// `rare` all ones on the lanes the kernels leave to others: infinities
/// and NaN, and, unless `EXACT`, nonzero values more than 32 bits below
/// the quantum (float32 subnormals among them), whose fraction does not
/// fit; `EXACT` makes that fraction (see `RegsSr8::vec`) and leaves those
/// values only with 31 random bits (`Regs8Avx2::wide`).
///
/// One form serves normal and subnormal targets, integer only: with `e`
/// the biased float32 exponent and `e_min` that of the format's smallest
/// normal, the significand (its implicit bit set from `e = 1` on) drops
/// `s + max(e_min − e, 0)` bits (variable shifts), and the code toward zero
/// is what it keeps plus `max(e − e_min, 0)` binades of `2^m` codes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn split8_avx2<const EXACT: bool>(
    c: &Regs8Avx2,
    u: __m256i,
) -> (__m256i, __m256i, __m256i, __m256i) {
    let zero = _mm256_setzero_si256();
    let a = _mm256_and_si256(u, c.abs);
    let e = _mm256_srli_epi32::<23>(a);
    let (e, implicit) = if EXACT {
        // float32 subnormals: the exponent of 1, no implicit bit.
        (
            _mm256_max_epi32(e, _mm256_set1_epi32(1)),
            _mm256_and_si256(_mm256_cmpgt_epi32(a, c.man), c.normal),
        )
    } else {
        (e, c.normal)
    };
    let below = _mm256_max_epi32(_mm256_sub_epi32(c.e_min, e), zero);
    let dropped = _mm256_add_epi32(c.s, below);
    let sig = _mm256_or_si256(_mm256_and_si256(a, c.man), implicit);
    let binades = _mm256_sll_epi32(_mm256_max_epi32(_mm256_sub_epi32(e, c.e_min), zero), c.m);
    // A shift of 32 or more gives 0.
    let down = _mm256_add_epi32(_mm256_srlv_epi32(sig, dropped), binades);
    let mut f = _mm256_sllv_epi32(sig, _mm256_sub_epi32(c.c32, dropped));
    let special = _mm256_cmpgt_epi32(a, c.finite);
    let beyond = _mm256_cmpgt_epi32(dropped, c.c32);
    let rare = if EXACT {
        // More than 32 dropped bits: the fraction's top 32 bits, the
        // lowest ORed with whether any bit below is set (see
        // `RegsSr8::vec`); a cut of 32 or more leaves 0.
        let cut = _mm256_sub_epi32(dropped, c.c32);
        let top = _mm256_and_si256(_mm256_srlv_epi32(sig, cut), beyond);
        let lost = _mm256_xor_si256(_mm256_sllv_epi32(top, cut), sig);
        let sticky = _mm256_andnot_si256(_mm256_cmpeq_epi32(lost, zero), beyond);
        f = _mm256_or_si256(_mm256_or_si256(f, top), _mm256_srli_epi32::<31>(sticky));
        // With 31 random bits the sticky bit would stand on the half bit.
        _mm256_or_si256(special, _mm256_and_si256(beyond, c.wide))
    } else {
        let beyond = _mm256_andnot_si256(_mm256_cmpeq_epi32(a, zero), beyond);
        _mm256_or_si256(special, beyond)
    };
    (_mm256_srai_epi32::<31>(u), down, f, rare)
}

/// [`Params8`] in AVX2 registers.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Regs8Avx2 {
    abs: __m256i,
    man: __m256i,
    normal: __m256i,
    finite: __m256i,
    e_min: __m256i,
    s: __m256i,
    c32: __m256i,
    max: __m256i,
    sign: __m256i,
    over: [__m256i; 2],
    m: __m128i,
    zero_sign: bool,
    /// [`Params8::caps`] (zero where there are none).
    caps: [__m256i; 2],
    /// All ones where a stochastic mode's random numbers fill 31 bits or
    /// more: the exact form of [`split8_avx2`] then leaves the values more
    /// than 32 bits below the quantum to the element conversion.
    wide: __m256i,
}

#[cfg(target_arch = "x86_64")]
impl Regs8Avx2 {
    #[target_feature(enable = "avx2")]
    #[inline]
    fn of(k: &Params8) -> Regs8Avx2 {
        let splat = |v: u32| _mm256_set1_epi32(v as i32);
        Regs8Avx2 {
            abs: splat(0x7fff_ffff),
            man: splat(0x7f_ffff),
            normal: splat(0x80_0000),
            finite: splat(0x7f7f_ffff),
            e_min: splat(k.sub >> 23),
            s: splat(k.s),
            c32: splat(32),
            max: splat(k.max_code),
            sign: splat(k.sign),
            over: k.over.map(splat),
            m: _mm_cvtsi32_si128(23 - k.s as i32),
            zero_sign: k.zero_sign,
            caps: k.caps().unwrap_or_default().map(splat),
            wide: _mm256_setzero_si256(),
        }
    }

    /// The codes of the magnitudes `mag` signed by `neg` (all ones on
    /// negative lanes): the overflow code of the sign above the largest
    /// magnitude, else the sign set (not on a zero unless `zero_sign`).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn code(&self, mag: __m256i, neg: __m256i) -> __m256i {
        let signed = if self.zero_sign {
            neg
        } else {
            _mm256_andnot_si256(_mm256_cmpeq_epi32(mag, _mm256_setzero_si256()), neg)
        };
        let code = _mm256_or_si256(mag, _mm256_and_si256(signed, self.sign));
        let over = _mm256_blendv_epi8(self.over[0], self.over[1], neg);
        _mm256_blendv_epi8(code, over, _mm256_cmpgt_epi32(mag, self.max))
    }

    /// [`code`](Regs8Avx2::code), or with `CAP` (where [`Params8::caps`]
    /// gives caps) the magnitude capped by its sign and signed: four
    /// instructions where the general form takes five or six.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn code_as<const CAP: bool>(&self, mag: __m256i, neg: __m256i) -> __m256i {
        if CAP {
            let cap = _mm256_blendv_epi8(self.caps[0], self.caps[1], neg);
            _mm256_or_si256(_mm256_min_epu32(mag, cap), _mm256_and_si256(neg, self.sign))
        } else {
            self.code(mag, neg)
        }
    }
}

/// Four vectors of codes below 256 (32-bit lanes) stored as 32 bytes in
/// lane order at `d` (the saturating packs are exact on such codes).
///
/// # Safety
///
/// The CPU must support AVX2; `d` addresses 32 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store_codes8_avx2(d: *mut u8, c: [__m256i; 4]) {
    // SAFETY: the caller's guarantee.
    unsafe {
        store_pairs8_avx2(
            d,
            _mm256_packus_epi32(c[0], c[1]),
            _mm256_packus_epi32(c[2], c[3]),
        )
    }
}

/// [`store_codes8_avx2`] of codes already packed in pairs (`p01` of the
/// first two vectors, `p23` of the last two, by `_mm256_packus_epi32`).
///
/// # Safety
///
/// The CPU must support AVX2; `d` addresses 32 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store_pairs8_avx2(d: *mut u8, p01: __m256i, p23: __m256i) {
    // The packs interleave the 128-bit halves: dwords [c0 lo, c1 lo, c2 lo,
    // c3 lo | c0 hi, c1 hi, c2 hi, c3 hi], which the permute puts in order.
    let b = _mm256_packus_epi16(p01, p23);
    let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    // SAFETY: the caller's guarantee.
    unsafe { _mm256_storeu_si256(d as *mut __m256i, b) };
}

/// One 32-lane step of the one-byte AVX2 kernels at `d`: `lanes(j)` gives
/// the codes (below 256, in 32-bit lanes) of the eight lanes from `8 j` and
/// the mask of those a kernel leaves to others (all ones or zero per
/// lane); the codes are packed as they come (two vectors live rather than
/// eight, so that the kernels' constants stay in registers) and stored as
/// 32 bytes in lane order. Returns the lanes left (bit `8 j + l`).
///
/// # Safety
///
/// The CPU must support AVX2; `d` addresses 32 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn step32_avx2(d: *mut u8, mut lanes: impl FnMut(usize) -> (__m256i, __m256i)) -> u32 {
    let bits = |m: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(m)) as u32;
    let mut pair = |j: usize| {
        let (c0, r0) = lanes(j);
        let (c1, r1) = lanes(j + 1);
        (_mm256_packus_epi32(c0, c1), bits(r0) | bits(r1) << 8)
    };
    let (p01, m01) = pair(0);
    let (p23, m23) = pair(2);
    // SAFETY: the caller's guarantee.
    unsafe { store_pairs8_avx2(d, p01, p23) };
    m01 | m23 << 16
}

/// [`step32_avx2`] telling only whether any lane is left to others (the
/// masks ORed, one test): the FPU kernels' steps, whose rare steps are
/// converted again by [`step32_avx2`] for the lanes' mask, keep fewer
/// vectors live this way.
///
/// # Safety
///
/// The CPU must support AVX2; `d` addresses 32 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn step32_any_avx2(d: *mut u8, mut lanes: impl FnMut(usize) -> (__m256i, __m256i)) -> bool {
    let mut any = _mm256_setzero_si256();
    let mut pair = |j: usize| {
        let (c0, r0) = lanes(j);
        let (c1, r1) = lanes(j + 1);
        any = _mm256_or_si256(any, _mm256_or_si256(r0, r1));
        _mm256_packus_epi32(c0, c1)
    };
    let (p01, p23) = (pair(0), pair(2));
    // SAFETY: the caller's guarantee.
    unsafe { store_pairs8_avx2(d, p01, p23) };
    _mm256_testz_si256(any, any) == 0
}

/// float32 → one-byte codes of a signed format under a deterministic mode
/// (`MODE` as in [`det8_avx512`]) in 32-lane AVX2 steps, [`det8_fpu_avx2`]
/// where MXCSR rounds to nearest with DAZ clear ([`fpu_rounds_to_nearest`]):
/// normal targets as there (the mode's increment, then the cut); a
/// subnormal target's magnitude scaled by `2^−qe` (quantum `2^qe`; exact,
/// below `2^m`) is converted to its code by the FPU: rounded to nearest
/// even, truncated toward zero, truncated after `1/2 − 2^−25` is added
/// (ties away from zero, exact: see the code), or truncated after its
/// ceiling is taken on the lanes whose magnitude rounds up. `CAP` as in
/// [`sr8_fpu_avx2`]. Lanes holding an infinity or a NaN, and the rest of
/// the slice, go through `element` (checked against the scalar path in
/// `tests/round_paths.rs`).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn det8_cvt_avx2<const MODE: u8, const CAP: bool>(
    k: &Params8,
    src: &[f32],
    dst: &mut [u8],
    element: impl Fn(&[f32], &mut [u8]),
) {
    let c = Regs8Avx2::of(k);
    // The subnormal quantum's exponent: the magic addend is 2^(qe + 23).
    let qe = (k.magic >> 23) as i32 - 150;
    let f = CvtAvx2 {
        det: DetAvx2::of::<MODE>(k),
        scale: _mm256_castsi256_ps(_mm256_set1_epi32((127 - qe) << 23)),
    };
    // SAFETY: the caller's guarantee.
    unsafe {
        det8_steps_avx2(src, dst, element, |u| {
            det8_cvt_vec_avx2::<MODE, CAP>(&c, &f, u)
        })
    }
}

/// The 32-lane steps of the deterministic one-byte AVX2 kernels: `vec`
/// gives the codes and the rare lanes (infinities, NaN) of eight inputs,
/// whose lanes then go through `element`, as does the rest of the slice.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn det8_steps_avx2(
    src: &[f32],
    dst: &mut [u8],
    element: impl Fn(&[f32], &mut [u8]),
    vec: impl Fn(__m256i) -> (__m256i, __m256i),
) {
    let n = src.len().min(dst.len());
    let body = n - n % 32;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n; unaligned loads.
        let mask = unsafe {
            step32_avx2(dst.as_mut_ptr().add(i), |j| {
                vec(_mm256_loadu_si256(
                    src.as_ptr().add(i + 8 * j) as *const __m256i
                ))
            })
        };
        if mask != 0 {
            let out = dst.as_mut_ptr();
            // SAFETY: the step's 32 bytes.
            unsafe { redo_lanes::<u32>(i, mask, src, &[], out, |x, _, o| element(x, o)) };
        }
        i += 32;
    }
    if body < n {
        element(&src[body..n], &mut dst[body..n]);
    }
}

/// The constants of [`det8_cvt_avx2`] beyond [`Regs8Avx2`]'s: those of
/// every deterministic AVX2 kernel and the subnormal targets' scale
/// `2^−qe`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct CvtAvx2 {
    det: DetAvx2,
    scale: __m256,
}

/// The constants of the deterministic one-byte AVX2 kernels under the
/// mode `MODE` beyond [`Regs8Avx2`]'s: the normal targets' increment where
/// the magnitude rounds up (or half the quantum to nearest; see
/// [`det8_up_avx2`]), the parity flip, the rebias and the smallest normal
/// target.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct DetAvx2 {
    inc: __m256i,
    parity: __m256i,
    rebias: __m256i,
    sub: __m256i,
}

#[cfg(target_arch = "x86_64")]
impl DetAvx2 {
    #[target_feature(enable = "avx2")]
    #[inline]
    fn of<const MODE: u8>(k: &Params8) -> DetAvx2 {
        let splat = |v: u32| _mm256_set1_epi32(v as i32);
        let h = 1u32 << (k.s - 1);
        DetAvx2 {
            inc: splat(match MODE {
                0 => h - 1,
                1 => h,
                _ => 2 * h - 1,
            }),
            parity: splat(k.parity),
            rebias: splat(k.rebias),
            sub: splat(k.sub),
        }
    }
}

/// The increment of a normal target's magnitude `a` under the
/// deterministic mode `MODE` (see [`det8_fpu_avx2`]), `neg` all ones on
/// negative lanes, added before the dropped bits are cut.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn det8_up_avx2<const MODE: u8>(
    c: &Regs8Avx2,
    inc: __m256i,
    parity: __m256i,
    a: __m256i,
    neg: __m256i,
) -> __m256i {
    match MODE {
        0 => {
            // Ties to even: the kept bits' parity (`parity` flips it for
            // formats without significand bits) added as well.
            let kept = _mm256_xor_si256(_mm256_srlv_epi32(a, c.s), parity);
            let lsb = _mm256_and_si256(kept, _mm256_set1_epi32(1));
            _mm256_add_epi32(_mm256_add_epi32(a, inc), lsb)
        }
        1 => _mm256_add_epi32(a, inc),
        2 => a,
        3 => _mm256_add_epi32(a, _mm256_and_si256(neg, inc)),
        _ => _mm256_add_epi32(a, _mm256_andnot_si256(neg, inc)),
    }
}

/// The codes of eight lanes of [`det8_cvt_avx2`], and its rare lanes
/// (infinities and NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn det8_cvt_vec_avx2<const MODE: u8, const CAP: bool>(
    c: &Regs8Avx2,
    f: &CvtAvx2,
    u: __m256i,
) -> (__m256i, __m256i) {
    let a = _mm256_and_si256(u, c.abs);
    let neg = _mm256_srai_epi32::<31>(u);
    let up = det8_up_avx2::<MODE>(c, f.det.inc, f.det.parity, a, neg);
    let cn = _mm256_sub_epi32(_mm256_srlv_epi32(up, c.s), f.det.rebias);
    // The magnitude (the smallest normal's in the other lanes, so that no
    // conversion is invalid) in quanta.
    let x = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_min_epi32(a, f.det.sub)), f.scale);
    const CEIL: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
    let sign = _mm256_castsi256_ps(u);
    let cs = if MODE == 0 {
        _mm256_cvtps_epi32(x)
    } else {
        _mm256_cvttps_epi32(match MODE {
            // Ties away: ⌊x + 1/2⌋ as ⌊fl(x + c)⌋, `c` = 1/2 − 2^−25 the
            // float below 1/2, exact for x below 2^23: a tie lands on the
            // integer above (at 1, by ties to even), and a sum below an
            // integer stays below it (it lies at least an ulp of `x` plus
            // 2^−25 under it, more than half an ulp of the sum).
            1 => _mm256_add_ps(x, _mm256_set1_ps(f32::from_bits(0x3eff_ffff))),
            2 => x,
            // Directed: the magnitude up (a ceiling) on the lanes of one sign.
            3 => _mm256_blendv_ps(x, _mm256_round_ps::<CEIL>(x), sign),
            _ => _mm256_blendv_ps(_mm256_round_ps::<CEIL>(x), x, sign),
        })
    };
    let mag = _mm256_blendv_epi8(cn, cs, _mm256_cmpgt_epi32(f.det.sub, a));
    (c.code_as::<CAP>(mag, neg), _mm256_cmpgt_epi32(a, c.finite))
}

/// float32 → one-byte codes of a signed format under a deterministic mode
/// (`MODE` as in [`det8_avx512`]: 0 `nearest_even`, 1 `nearest_away`, 2
/// `toward_zero`, 3 `toward_negative`, 4 `toward_positive`) in 32-lane
/// AVX2 steps of `kernels::enc32_det`'s form, `astype`'s kernel with the
/// mode's increment: normal targets add the increment (half the quantum,
/// or all the dropped bits on the lanes whose magnitude rounds up) before
/// the dropped bits are cut; subnormal targets let the FPU round the
/// magnitude to the quantum (the magic addend, to nearest even) and
/// correct that by one code from the exact remainder (the input's bits
/// against the rounded value's: a directed mode moves a magnitude rounded
/// the wrong way, ties away from zero lift a tie rounded down), so a CPU
/// flushing subnormal inputs still gives the right code. Steps holding an
/// infinity or a NaN, and the rest of the slice, go through `element`
/// (checked against the scalar path in `tests/round_paths.rs`). Where
/// gathers are slow (AMD) and MXCSR is not as [`det8_cvt_avx2`] needs
/// (flush-to-zero of inputs, another rounding), this replaces the table of
/// [`table_enc32_avx2`] (an integer form of [`sr8_avx2`]'s kind took a
/// quarter more instructions and time).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn det8_fpu_avx2<const MODE: u8>(
    k: &Params8,
    src: &[f32],
    dst: &mut [u8],
    element: impl Fn(&[f32], &mut [u8]),
) {
    let c = Regs8Avx2::of(k);
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let f = FpuAvx2 {
        det: DetAvx2::of::<MODE>(k),
        magic: splat(k.magic),
        // Half the quantum: the magic's exponent less 24.
        half_q: splat(k.magic - (24 << 23)),
    };
    // SAFETY: the caller's guarantee.
    unsafe { det8_steps_avx2(src, dst, element, |u| det8_fpu_vec_avx2::<MODE>(&c, &f, u)) }
}

/// The constants of [`det8_fpu_avx2`] beyond [`Regs8Avx2`]'s: those of
/// every deterministic AVX2 kernel, the magic addend and half the
/// subnormal quantum (both as float32 bits).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct FpuAvx2 {
    det: DetAvx2,
    magic: __m256i,
    half_q: __m256i,
}

/// The codes of eight lanes of [`det8_fpu_avx2`], and its rare lanes
/// (infinities and NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn det8_fpu_vec_avx2<const MODE: u8>(c: &Regs8Avx2, f: &FpuAvx2, u: __m256i) -> (__m256i, __m256i) {
    let a = _mm256_and_si256(u, c.abs);
    let neg = _mm256_srai_epi32::<31>(u);
    // Normal targets: the increment, then the cut.
    let up = det8_up_avx2::<MODE>(c, f.det.inc, f.det.parity, a, neg);
    let cn = _mm256_sub_epi32(_mm256_srlv_epi32(up, c.s), f.det.rebias);
    // Subnormal targets: to nearest even by the FPU, then corrected.
    let (af, m) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(f.magic));
    let t = _mm256_add_ps(af, m);
    let q = _mm256_sub_ps(t, m);
    let qi = _mm256_castps_si256(q);
    let cs = _mm256_sub_epi32(_mm256_castps_si256(t), f.magic);
    // All ones where the magnitude was rounded down (up): subtracting
    // (adding) the mask adds (takes) one code.
    let below = || _mm256_cmpgt_epi32(a, qi);
    let cs = match MODE {
        0 => cs,
        1 => {
            let tie =
                _mm256_cmp_ps::<_CMP_EQ_OQ>(_mm256_sub_ps(af, q), _mm256_castsi256_ps(f.half_q));
            _mm256_sub_epi32(cs, _mm256_and_si256(below(), _mm256_castps_si256(tie)))
        }
        2 => _mm256_add_epi32(cs, _mm256_cmpgt_epi32(qi, a)),
        3 => {
            let above = _mm256_cmpgt_epi32(qi, a);
            let cs = _mm256_sub_epi32(cs, _mm256_and_si256(neg, below()));
            _mm256_add_epi32(cs, _mm256_andnot_si256(neg, above))
        }
        _ => {
            let above = _mm256_cmpgt_epi32(qi, a);
            let cs = _mm256_sub_epi32(cs, _mm256_andnot_si256(neg, below()));
            _mm256_add_epi32(cs, _mm256_and_si256(neg, above))
        }
    };
    let mag = _mm256_blendv_epi8(cn, cs, _mm256_cmpgt_epi32(f.det.sub, a));
    (c.code(mag, neg), _mm256_cmpgt_epi32(a, c.finite))
}

/// float32 → one-byte codes of a signed format under a stochastic mode in
/// 32-lane AVX2 steps of integer arithmetic, [`sr8_avx512`]'s decision on
/// [`split8_avx2`]'s code toward zero and fraction, `enc32_sr`'s bits
/// (checked against the scalar path in `tests/round_paths.rs`); rare steps
/// and the rest go through `element`. Where gathers are slow (AMD) this
/// replaces the table of [`sr_table_avx2`] when [`sr8_fpu_avx2`] does not
/// apply (as many random bits as a normal target drops or more, or MXCSR
/// not as it needs).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sr8_avx2<W: Word>(
    k: &Params8,
    fast: bool,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
    element: impl Fn(&[f32], &[W], &mut [u8]),
) {
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let [nbits, _, odd, half] = mp.stochastic32();
    let c = Regs8Avx2 {
        wide: splat(if nbits >= 31 { u32::MAX } else { 0 }),
        ..Regs8Avx2::of(k)
    };
    let sr = SrAvx2 {
        not_a: splat(!if fast {
            half << (31 - nbits)
        } else {
            (1u32 << (31 - nbits)) - 1
        }),
        parity: splat(!fast as u32),
        odd: splat(if fast { 0 } else { odd }),
        cut: _mm_cvtsi32_si128(32 - nbits as i32),
    };
    let n = src.len().min(dst.len()).min(rnd.len());
    let body = n - n % 32;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for the three slices; unaligned loads.
        let rare = unsafe {
            step32_avx2(dst.as_mut_ptr().add(i), |j| {
                let (u, rv) = sr8_load_avx2(src, rnd, i + 8 * j);
                sr8_vec_avx2::<false>(&c, &sr, u, rv)
            })
        };
        if rare != 0 {
            // SAFETY: the step lies within the three slices.
            let mask = unsafe { sr8_exact_step_avx2(&c, &sr, src, rnd, dst.as_mut_ptr(), i) };
            if mask != 0 {
                // SAFETY: the step's 32 bytes.
                unsafe { redo_lanes(i, mask, src, rnd, dst.as_mut_ptr(), &element) };
            }
        }
        i += 32;
    }
    if body < n {
        element(&src[body..n], &rnd[body..n], &mut dst[body..n]);
    }
}

/// A step of [`sr8_avx2`] at element `i` converted again with the fraction
/// of values more than 32 bits below the quantum (float32 subnormals among
/// them; the exact form of [`split8_avx2`]): the mask of the lanes it
/// leaves to the element conversion (infinities, NaN; with 31 random bits,
/// those values), 0 for none.
///
/// # Safety
///
/// The CPU must support AVX2; `i + 32` elements lie within `src` and
/// `rnd`, and `d` addresses `i + 32` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn sr8_exact_step_avx2<W: Word>(
    c: &Regs8Avx2,
    sr: &SrAvx2,
    src: &[f32],
    rnd: &[W],
    d: *mut u8,
    i: usize,
) -> u32 {
    // SAFETY: the caller's guarantee.
    unsafe {
        step32_avx2(d.add(i), |j| {
            let (u, rv) = sr8_load_avx2(src, rnd, i + 8 * j);
            sr8_vec_avx2::<true>(c, sr, u, rv)
        })
    }
}

/// The inputs and the random numbers of the eight lanes at element `i`
/// (unaligned loads).
///
/// # Safety
///
/// `i + 8 ≤ src.len(), rnd.len()`; the CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sr8_load_avx2<W: Word>(src: &[f32], rnd: &[W], i: usize) -> (__m256i, __m256i) {
    // SAFETY: the caller's guarantee.
    unsafe {
        (
            _mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i),
            W::load8(rnd.as_ptr().add(i)),
        )
    }
}

/// The stochastic modes' parameters of [`sr8_avx2`] in registers: `!A`
/// and the odd flag as in [`sr_table_avx2`], the mask of the parity bit
/// (0 for `stochastic_fast` / `stochastic_fastest`, whose `A` does not
/// depend on it, with the odd flag 0 too), and the shift between a random
/// number and the fraction.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct SrAvx2 {
    not_a: __m256i,
    parity: __m256i,
    odd: __m256i,
    cut: __m128i,
}

/// The codes of eight lanes of [`sr8_avx2`] from their random numbers
/// `rv`, and its rare lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sr8_vec_avx2<const EXACT: bool>(
    c: &Regs8Avx2,
    sr: &SrAvx2,
    u: __m256i,
    rv: __m256i,
) -> (__m256i, __m256i) {
    let top = _mm256_set1_epi32(i32::MIN);
    let (neg, down, f, rare) = split8_avx2::<EXACT>(c, u);
    let parity = _mm256_and_si256(_mm256_srl_epi32(f, sr.cut), sr.parity);
    let not_a = _mm256_sub_epi32(sr.not_a, _mm256_xor_si256(parity, sr.odd));
    let not_t = _mm256_sub_epi32(not_a, _mm256_sll_epi32(rv, sr.cut));
    // f > not_t, unsigned: both with the sign flipped, signed.
    let up = _mm256_cmpgt_epi32(_mm256_xor_si256(f, top), _mm256_xor_si256(not_t, top));
    (c.code(_mm256_sub_epi32(down, up), neg), rare)
}

/// Whether this thread's MXCSR rounds to nearest even and reads subnormal
/// inputs as they are (DAZ clear), as [`sr8_fpu_avx2`] needs: its
/// conversions take the rounding from MXCSR, and a subnormal input read as
/// zero would lose its random rounding. Code that changed MXCSR (an
/// extension setting flush-to-zero, `fesetround`) gets the integer kernel.
#[cfg(target_arch = "x86_64")]
pub(crate) fn fpu_rounds_to_nearest() -> bool {
    let mut csr = 0u32;
    // SAFETY: `stmxcsr` stores the 32-bit MXCSR at the address given, a
    // local of that size; every x86-64 CPU has it.
    unsafe {
        std::arch::asm!(
            "stmxcsr [{}]",
            in(reg) &mut csr as *mut u32,
            options(nostack, preserves_flags)
        )
    };
    // RC (bits 13–14) to nearest, DAZ (bit 6) clear.
    csr & 0x6040 == 0
}

/// float32 → one-byte codes of a signed format under a stochastic mode with
/// `n < s` random bits (`s` the bits a normal target drops) in 32-lane
/// AVX2 steps, `enc32_sr`'s bits in two forms that need no variable
/// fraction (checked against the scalar path in `tests/round_paths.rs`):
/// - normal targets: the input's `s` low bits are the fraction; with
///   `k = s − n`, `stochastic` / `stochastic_odd` round its `k` lowest bits
///   off to nearest (ties to the even / odd `n`-bit fraction) and carry out
///   when the random number is added: the increment
///   `r · 2^k + 2^(k−1) − 1 + tie` added to the magnitude's bits before
///   the `s` dropped ones are cut, as `astype`'s kernel adds its own;
///   `stochastic_fast` / `stochastic_fastest` add `(2r + h) · 2^(k−1)`
///   (`h` = 1 / 0: gfloat's half step);
/// - subnormal targets (quantum `2^qe`): the magnitude scaled by `2^(n − qe)`
///   is exact (below `2^(m + n)`), and the FPU rounds it to the `n`-bit
///   fraction as the mode does (the conversion to nearest even; ties to
///   odd by one addition of [`ODD_MAGIC`]), so the code is `(D + r) >> n`;
///   the fast modes truncate at `n + 1` bits and take
///   `(T + 2r + h) >> (n + 1)`. Values far below the quantum and float32
///   subnormals need nothing more (the conversion sees all their bits).
///
/// MXCSR must round to nearest with DAZ clear ([`fpu_rounds_to_nearest`]).
/// `FAM`: 0 `stochastic`, 1 `stochastic_odd`, 2 the fast modes; `CAP`:
/// the codes are formed by [`Regs8Avx2::code_as`]. Lanes holding an
/// infinity or a NaN, and the rest of the slice, go through `element`.
/// Returns the OR of the random numbers it read (as [`sr8_avx512`]).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`); `mp` has fewer
/// random bits than `k.s`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sr8_fpu_avx2<W: Word, const FAM: u8, const CAP: bool>(
    k: &Params8,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
    element: impl Fn(&[f32], &[W], &mut [u8]),
) -> u32 {
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let v = SrFpu::of::<FAM>(k, mp);
    let c = Regs8Avx2::of(k);
    let f = SrFpuAvx2 {
        rshift: splat(v.rshift),
        inc: splat(v.inc),
        half: splat(v.half),
        bits: splat(v.bits),
        scale: _mm256_set1_ps(v.scale),
        sub: splat(k.sub),
        rebias: splat(k.rebias),
    };
    let n_all = src.len().min(dst.len()).min(rnd.len());
    let (body, d) = (n_all - n_all % 32, dst.as_mut_ptr());
    let mut seen = _mm256_setzero_si256();
    steps_then_elements(
        n_all,
        32,
        // SAFETY: `i ≤ body`, within the three slices.
        |i| unsafe { sr8_fpu_steps::<W, FAM, CAP>(&c, &f, src, rnd, d, i, body, &mut seen) },
        // SAFETY: a step within `body`.
        |i, _| unsafe {
            let mask = step32_avx2(d.add(i), |j| {
                let (u, rv) = sr8_load_avx2(src, rnd, i + 8 * j);
                sr8_fpu_vec_avx2::<FAM, CAP>(&c, &f, u, rv)
            });
            redo_lanes(i, mask, src, rnd, d, &element)
        },
        // SAFETY: the range lies within `n_all` (`dst` is not otherwise
        // borrowed meanwhile).
        |r| {
            let out = unsafe { std::slice::from_raw_parts_mut(d.add(r.start), r.len()) };
            element(&src[r.clone()], &rnd[r], out)
        },
    );
    let tail = rnd[body..n_all].iter().fold(0, |m, &v| m | v.into());
    // SAFETY: eight 32-bit lanes.
    let lanes: [u32; 8] = unsafe { std::mem::transmute(seen) };
    lanes.iter().fold(tail, |m, &v| m | v)
}

/// The 32-lane steps of [`sr8_fpu_avx2`] from element `i` to `body`, as
/// [`sr8_steps`] but for the mask (a step with lanes left to others stops
/// them; its mask is made again), the random numbers they read ORed into
/// `seen`.
///
/// # Safety
///
/// As [`sr8_fpu_avx2`]; `body ≤ src.len(), rnd.len()` and `d` addresses
/// `body` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn sr8_fpu_steps<W: Word, const FAM: u8, const CAP: bool>(
    c: &Regs8Avx2,
    f: &SrFpuAvx2,
    src: &[f32],
    rnd: &[W],
    d: *mut u8,
    mut i: usize,
    body: usize,
    seen: &mut __m256i,
) -> (usize, u32) {
    let (c, f) = (*c, *f);
    let mut all = *seen;
    while i < body {
        // SAFETY: i + 32 <= body for the three slices; unaligned loads.
        let rare = unsafe {
            step32_any_avx2(d.add(i), |j| {
                let (u, rv) = sr8_load_avx2(src, rnd, i + 8 * j);
                all = _mm256_or_si256(all, rv);
                sr8_fpu_vec_avx2::<FAM, CAP>(&c, &f, u, rv)
            })
        };
        if rare {
            *seen = all;
            return (i, 0);
        }
        i += 32;
    }
    *seen = all;
    (body, 0)
}

/// The constants of the FPU forms of the one-byte stochastic kernels
/// ([`sr8_fpu_avx2`], [`sr8_fpu_avx512`]) for the parameters `k` and `n`
/// random bits (`FAM` as there): the shift of a random number into a normal
/// target's dropped bits (`k = s − n`, or `k − 1` for the fast modes'
/// `2r + h`), the rest of a normal target's increment (the rebias taken
/// off, so that the cut leaves the code), gfloat's half step `h` (fast
/// modes), the fraction's bits of subnormal targets (`n`, or `n + 1`) and
/// their scale `2^(bits − qe)` (quantum `2^qe`).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct SrFpu {
    rshift: u32,
    inc: u32,
    half: u32,
    bits: u32,
    scale: f32,
}

#[cfg(target_arch = "x86_64")]
impl SrFpu {
    fn of<const FAM: u8>(k: &Params8, mp: &kernels::ModeParams) -> SrFpu {
        let [n, _, _, half] = mp.stochastic32();
        debug_assert!(n >= 1 && n < k.s);
        let kk = k.s - n;
        // The subnormal quantum's exponent: the magic addend is 2^(qe + 23).
        let qe = (k.magic >> 23) as i32 - 150;
        let fast = FAM == 2;
        let bits = if fast { n + 1 } else { n };
        SrFpu {
            rshift: if fast { kk - 1 } else { kk },
            inc: match FAM {
                0 => ((1u32 << (kk - 1)) - 1).wrapping_sub(k.rebias << k.s),
                // The numbers arrive less `ODD_MAGIC`'s bits (see
                // `sr8_fpu_vec_avx2`): added back here.
                1 => (1u32 << (kk - 1))
                    .wrapping_add(ODD_MAGIC.to_bits() << kk)
                    .wrapping_sub(k.rebias << k.s),
                _ => 0,
            },
            half,
            bits,
            scale: f32::from_bits(((bits as i32 - qe + 127) as u32) << 23),
        }
    }
}

/// [`sr8_fpu_avx2`] in 16-lane AVX-512 steps (the same arithmetic; the
/// scaling, the conversions and the ties-to-odd addition round to nearest
/// by AVX-512's embedded rounding, without exception flags), `enc32_sr`'s
/// bits (checked against the scalar path in `tests/round_paths.rs`). The
/// caller takes it where [`fpu_rounds_to_nearest`] holds, as on AVX2 (a CPU
/// set to read subnormal inputs as zero would not change these codes, but
/// one condition serves both paths). `FAM` as there; the codes are formed
/// by [`Regs8::store_as`] in [`Params8::form`]. Lanes holding an infinity
/// or a NaN, and the rest of the slice, go through `element`. Returns the
/// OR of the random numbers it read (as [`sr8_avx512`]).
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL/DQ (checked by `cast::dispatch`);
/// `mp` has fewer random bits than `k.s`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
pub(crate) unsafe fn sr8_fpu_avx512<W: Word, const FAM: u8>(
    k: &Params8,
    mp: &kernels::ModeParams,
    src: &[f32],
    rnd: &[W],
    dst: &mut [u8],
    element: impl Fn(&[f32], &[W], &mut [u8]),
) -> u32 {
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let v = SrFpu::of::<FAM>(k, mp);
    let c = Regs8::of(k);
    let f = SrFpu512 {
        rshift: _mm_cvtsi32_si128(v.rshift as i32),
        inc: splat(v.inc),
        half: splat(v.half),
        bits: _mm_cvtsi32_si128(v.bits as i32),
        scale: _mm512_set1_ps(v.scale),
        one: splat(1),
        odd: splat(ODD_MAGIC.to_bits()),
    };
    // SAFETY: the caller's guarantee; `redo_lanes` on a step whose
    // vector codes are stored.
    unsafe {
        sr8_frame512(
            k,
            src,
            rnd,
            dst,
            move |u, rv| sr8_fpu_vec512::<FAM>(&c, &f, u, rv),
            |i, mask, d| redo_lanes(i, mask, src, rnd, d, &element),
            &element,
        )
    }
}

/// [`SrFpu`] in AVX-512 registers (the uniform shifts as counts), with the
/// constants of the ties-to-odd form.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct SrFpu512 {
    rshift: __m128i,
    inc: __m512i,
    half: __m512i,
    bits: __m128i,
    scale: __m512,
    one: __m512i,
    odd: __m512i,
}

/// The magnitudes' codes of sixteen lanes of [`sr8_fpu_avx512`] from their
/// random numbers `rv` (the arithmetic of [`sr8_fpu_vec_avx2`]), the mask
/// of the negative lanes and that of the rare ones (infinities and NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
#[inline]
fn sr8_fpu_vec512<const FAM: u8>(
    c: &Regs8,
    f: &SrFpu512,
    u: __m512i,
    rv: __m512i,
) -> (__m512i, __mmask16, __mmask16) {
    const NEAR: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    let a = _mm512_and_si512(u, c.abs);
    let (w, r2) = if FAM == 2 {
        let r2 = _mm512_add_epi32(_mm512_slli_epi32::<1>(rv), f.half);
        (_mm512_add_epi32(a, _mm512_sll_epi32(r2, f.rshift)), r2)
    } else {
        let tie = _mm512_and_si512(_mm512_srl_epi32(a, f.rshift), f.one);
        let r2 = if FAM == 1 {
            _mm512_sub_epi32(rv, f.odd)
        } else {
            rv
        };
        let w = _mm512_add_epi32(a, _mm512_add_epi32(_mm512_sll_epi32(r2, f.rshift), f.inc));
        let w = if FAM == 0 {
            _mm512_add_epi32(w, tie)
        } else {
            _mm512_sub_epi32(w, tie)
        };
        (w, r2)
    };
    let cn = _mm512_srl_epi32(w, c.cut);
    let cn = if FAM == 2 {
        _mm512_sub_epi32(cn, c.rebias)
    } else {
        cn
    };
    let x = _mm512_mul_round_ps::<NEAR>(_mm512_castsi512_ps(_mm512_min_epi32(a, c.sub)), f.scale);
    let d = match FAM {
        0 => _mm512_cvt_roundps_epi32::<NEAR>(x),
        1 => _mm512_castps_si512(_mm512_add_round_ps::<NEAR>(x, _mm512_castsi512_ps(f.odd))),
        _ => _mm512_cvtt_roundps_epi32::<{ _MM_FROUND_NO_EXC }>(x),
    };
    let cs = _mm512_srl_epi32(_mm512_add_epi32(d, r2), f.bits);
    let mag = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(a, c.sub), cn, cs);
    (
        mag,
        _mm512_movepi32_mask(u),
        _mm512_cmpge_epu32_mask(a, c.inf),
    )
}

/// [`SrFpu`] in AVX2 registers, with the smallest normal target and the
/// rebias.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct SrFpuAvx2 {
    rshift: __m256i,
    inc: __m256i,
    half: __m256i,
    bits: __m256i,
    scale: __m256,
    sub: __m256i,
    rebias: __m256i,
}

/// `2^23 + 1`: added to a nonnegative float `x` below `2^22`, the sum
/// rounded once to an integer is `2^23 + RNE(x + 1)`, whose bits less its
/// own are `x` rounded to nearest with ties to odd (see
/// `sr8_fpu_vec_avx2`).
#[cfg(target_arch = "x86_64")]
const ODD_MAGIC: f32 = 8_388_609.0;

/// The codes of eight lanes of [`sr8_fpu_avx2`] from their random numbers
/// `rv`, and its rare lanes (infinities and NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sr8_fpu_vec_avx2<const FAM: u8, const CAP: bool>(
    c: &Regs8Avx2,
    f: &SrFpuAvx2,
    u: __m256i,
    rv: __m256i,
) -> (__m256i, __m256i) {
    let a = _mm256_and_si256(u, c.abs);
    // Normal targets: the increment, then the cut.
    let (w, r2) = if FAM == 2 {
        let r2 = _mm256_add_epi32(_mm256_slli_epi32::<1>(rv), f.half);
        (_mm256_add_epi32(a, _mm256_sllv_epi32(r2, f.rshift)), r2)
    } else {
        let tie = _mm256_and_si256(_mm256_srlv_epi32(a, f.rshift), _mm256_set1_epi32(1));
        // `stochastic_odd` takes `r − B`, `B` the bits of `2^23 + 1` (those
        // of 2^23 plus one), which its subnormal targets add (`inc` puts
        // `B · 2^k` back).
        let r2 = if FAM == 1 {
            _mm256_sub_epi32(rv, _mm256_set1_epi32(ODD_MAGIC.to_bits() as i32))
        } else {
            rv
        };
        let inc = _mm256_add_epi32(_mm256_sllv_epi32(r2, f.rshift), f.inc);
        let w = _mm256_add_epi32(a, inc);
        // `inc` holds 2^(k−1) for ties to odd: an odd fraction takes one off.
        let w = if FAM == 0 {
            _mm256_add_epi32(w, tie)
        } else {
            _mm256_sub_epi32(w, tie)
        };
        (w, r2)
    };
    let cn = if FAM == 2 {
        _mm256_sub_epi32(_mm256_srlv_epi32(w, c.s), f.rebias)
    } else {
        _mm256_srlv_epi32(w, c.s)
    };
    // Subnormal targets: the magnitude (the smallest normal's in the other
    // lanes, so that no conversion is invalid) scaled, then converted.
    let x = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_min_epi32(a, f.sub)), f.scale);
    let d = match FAM {
        0 => _mm256_cvtps_epi32(x),
        // Ties to odd: `x + 2^23 + 1` rounded once to an integer (its ulp)
        // is `2^23 + RNE(x + 1)`, and `RNE(x + 1) − 1` rounds `x` to
        // nearest with ties to odd (a tie's neighbours swap parity); its
        // bits less those of 2^23 and the one come with `r2`.
        1 => _mm256_castps_si256(_mm256_add_ps(x, _mm256_set1_ps(ODD_MAGIC))),
        _ => _mm256_cvttps_epi32(x),
    };
    let cs = _mm256_srlv_epi32(_mm256_add_epi32(d, r2), f.bits);
    let mag = _mm256_blendv_epi8(cn, cs, _mm256_cmpgt_epi32(f.sub, a));
    let neg = _mm256_srai_epi32::<31>(u);
    (c.code_as::<CAP>(mag, neg), _mm256_cmpgt_epi32(a, c.finite))
}

/// One element of [`sr_table_avx2`] by `kernels::enc32_sr` (out of line:
/// the kernel's steps holding a rare lane and its remainder, shared by
/// both widths of random numbers).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn sr_element(table: &[u32; 1 << 15], fast: bool, mp: &kernels::ModeParams, x: f32, r: u32) -> u8 {
    use crate::float::kernels::{StochFast, StochRn};
    let b = x.to_bits();
    let e = table[((b >> 17) | ((b & 0x1_ffff) != 0) as u32) as usize];
    let c = if fast {
        kernels::enc32_sr::<StochFast>(mp, b, r, e)
    } else {
        kernels::enc32_sr::<StochRn>(mp, b, r, e)
    };
    c as u8
}

/// A random number's word: 32 bits, or 16 widened as they are loaded.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Word: Copy + Default + Into<u32> {
    /// Whether the words are 32 bits wide.
    const WIDE: bool;
    /// Eight words from `p` in 32-bit lanes.
    ///
    /// # Safety
    ///
    /// `p` addresses eight readable words; the CPU supports AVX2.
    unsafe fn load8(p: *const Self) -> __m256i;
    /// Sixteen words from `p` in 32-bit lanes.
    ///
    /// # Safety
    ///
    /// `p` addresses sixteen readable words; the CPU supports AVX-512 F.
    unsafe fn load16(p: *const Self) -> __m512i;
}

#[cfg(target_arch = "x86_64")]
impl Word for u32 {
    const WIDE: bool = true;
    #[inline(always)]
    unsafe fn load8(p: *const u32) -> __m256i {
        _mm256_loadu_si256(p as *const __m256i)
    }
    #[inline(always)]
    unsafe fn load16(p: *const u32) -> __m512i {
        _mm512_loadu_si512(p as *const _)
    }
}

#[cfg(target_arch = "x86_64")]
impl Word for u16 {
    const WIDE: bool = false;
    #[inline(always)]
    unsafe fn load8(p: *const u16) -> __m256i {
        _mm256_cvtepu16_epi32(_mm_loadu_si128(p as *const __m128i))
    }
    #[inline(always)]
    unsafe fn load16(p: *const u16) -> __m512i {
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(p as *const __m256i))
    }
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
// numbers, several generator calls per register, the state held word by
// word: register `w` of a group holds word `w` of one call per 64-bit lane,
// its low half significant (the multiplier reads only that half, and the
// XORs keep the upper halves' garbage there). A round is two `pmuludq`
// (full 64-bit products `c0 · M0` and `c2 · M1`), the high halves brought
// down, and the XORs with the other words and the round keys:
//
//   [c0, c1, c2, c3] → [hi(c2·M1) ^ c1 ^ k0, lo(c2·M1), hi(c0·M0) ^ c3 ^ k1, lo(c0·M0)].
//
// Several groups are in flight to cover the multiplier's latency, and the
// words are interleaved into element order once, at the end.

/// `crate::round::fill_words` out of line, for the few words before
/// and after the vector kernels' whole steps (it is inlined where it is the
/// kernel).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn fill_few(seed: u64, first: u64, cut: Cut, dst: &mut [u32]) {
    crate::round::fill_words(seed, first, cut, dst)
}

/// Philox's multipliers and Weyl constants.
#[cfg(target_arch = "x86_64")]
const PHILOX_M: (u32, u32, u32, u32) = (0xD251_1F53, 0xCD9E_8D57, 0x9E37_79B9, 0xBB67_AE85);

/// Words `first`, `first + 1`, … of `seed`'s stream, each cut by `cut`, as
/// `crate::round::fill_words` gives them (the numbers of elements:
/// `crate::round::seeded_bits`).
///
/// Eight generator calls per register: a round of eight calls is two
/// `vpmuludq`, two dword swaps giving the high halves, and two three-way
/// XORs; four groups are in flight.
///
/// # Safety
///
/// The CPU must support AVX-512 F (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
pub(crate) unsafe fn philox_fill_avx512(seed: u64, first: u64, cut: Cut, dst: &mut [u32]) {
    const CALLS: usize = 8; // per register
    const GROUPS: usize = 4;
    const STEP: usize = 4 * CALLS * GROUPS; // numbers per iteration
    let (m0, m1, w0, w1) = PHILOX_M;
    let head = (first.wrapping_neg() % 4) as usize;
    if dst.len() < head + STEP {
        return fill_few(seed, first, cut, dst);
    }
    fill_few(seed, first, cut, &mut dst[..head]);
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
    // Block numbers wrap at 2^62 (word numbers at 2^64).
    let wrap = _mm512_set1_epi64((u64::MAX >> 2) as i64);
    let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let low = _mm512_set1_epi64(0xffff_ffff);
    let (first_half, second_half) = (
        _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11),
        _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15),
    );
    let zero = _mm512_setzero_si512();
    let (shift, mask) = cut.shift_mask();
    let drop = _mm_cvtsi32_si128(shift as i32);
    let maskv = _mm512_set1_epi32(mask as i32);
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
                let (a, b) = (_mm512_srl_epi32(a, drop), _mm512_srl_epi32(b, drop));
                _mm512_storeu_si512(at as *mut _, _mm512_and_si512(a, maskv));
                _mm512_storeu_si512(at.add(16) as *mut _, _mm512_and_si512(b, maskv));
            }
        }
    }
    let done = head + groups * STEP;
    fill_few(seed, first.wrapping_add(done as u64), cut, &mut dst[done..]);
}

/// [`philox_fill_avx512`] on AVX2: four generator calls per register, the
/// high halves of the products brought down by shifts (the shuffle port
/// stays free for the final interleave), the three-way XORs as two with
/// the key's one off the multiplier's path; two groups in flight (three
/// need more than AVX2's 16 registers and spilled: 13 % slower on Zen 4).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn philox_fill_avx2(seed: u64, first: u64, cut: Cut, dst: &mut [u32]) {
    const CALLS: usize = 4; // per register
    const GROUPS: usize = 2;
    const STEP: usize = 4 * CALLS * GROUPS; // numbers per iteration
    let (m0, m1, w0, w1) = PHILOX_M;
    let head = (first.wrapping_neg() % 4) as usize;
    if dst.len() < head + STEP {
        return fill_few(seed, first, cut, dst);
    }
    fill_few(seed, first, cut, &mut dst[..head]);
    let block0 = first.wrapping_add(head as u64) / 4;
    let (mul0, mul1) = (_mm256_set1_epi64x(m0 as i64), _mm256_set1_epi64x(m1 as i64));
    let (k0, k1) = (seed as u32, (seed >> 32) as u32);
    let keys: [(__m256i, __m256i); 10] = std::array::from_fn(|r| {
        let r = r as u32;
        (
            _mm256_set1_epi64x(k0.wrapping_add(w0.wrapping_mul(r)) as i64),
            _mm256_set1_epi64x(k1.wrapping_add(w1.wrapping_mul(r)) as i64),
        )
    });
    // Block numbers wrap at 2^62 (word numbers at 2^64).
    let wrap = _mm256_set1_epi64x((u64::MAX >> 2) as i64);
    let lanes = _mm256_setr_epi64x(0, 1, 2, 3);
    let zero = _mm256_setzero_si256();
    let (shift, mask) = cut.shift_mask();
    let drop = _mm_cvtsi32_si128(shift as i32);
    let maskv = _mm256_set1_epi32(mask as i32);
    let groups = (dst.len() - head) / STEP;
    let out = dst[head..].as_mut_ptr();
    for g in 0..groups {
        // Counters `[lo32(b), hi32(b), 0, 0]`.
        let mut x: [[__m256i; 4]; GROUPS] = std::array::from_fn(|j| {
            let b0 = block0.wrapping_add((g * GROUPS * CALLS + j * CALLS) as u64);
            let b = _mm256_and_si256(_mm256_add_epi64(_mm256_set1_epi64x(b0 as i64), lanes), wrap);
            [b, _mm256_srli_epi64::<32>(b), zero, zero]
        });
        for (ka, kb) in &keys {
            for w in x.iter_mut() {
                let p0 = _mm256_mul_epu32(w[0], mul0);
                let p1 = _mm256_mul_epu32(w[2], mul1);
                // The high halves of the products, in the low halves (a
                // shift rather than a shuffle: it leaves the shuffle port
                // free); the keys are XORed in off the multiplier's path.
                let h0 = _mm256_srli_epi64::<32>(p0);
                let h1 = _mm256_srli_epi64::<32>(p1);
                *w = [
                    _mm256_xor_si256(h1, _mm256_xor_si256(w[1], *ka)),
                    p1,
                    _mm256_xor_si256(h0, _mm256_xor_si256(w[3], *kb)),
                    p0,
                ];
            }
        }
        for (j, w) in x.iter().enumerate() {
            // Words 0 and 1 (2 and 3) of each call in one 64-bit lane;
            // the 128-bit halves then hold calls 0 and 2 (1 and 3) in
            // element order, which the cross-half permutes put right.
            let w01 = _mm256_blend_epi32::<0b1010_1010>(w[0], _mm256_slli_epi64::<32>(w[1]));
            let w23 = _mm256_blend_epi32::<0b1010_1010>(w[2], _mm256_slli_epi64::<32>(w[3]));
            let (lo, hi) = (
                _mm256_unpacklo_epi64(w01, w23),
                _mm256_unpackhi_epi64(w01, w23),
            );
            let a = _mm256_permute2x128_si256::<0x20>(lo, hi);
            let b = _mm256_permute2x128_si256::<0x31>(lo, hi);
            let at = out.add(g * STEP + 4 * CALLS * j);
            // SAFETY: `groups` whole steps fit in `dst[head..]`.
            unsafe {
                let (a, b) = (_mm256_srl_epi32(a, drop), _mm256_srl_epi32(b, drop));
                _mm256_storeu_si256(at as *mut __m256i, _mm256_and_si256(a, maskv));
                _mm256_storeu_si256(at.add(8) as *mut __m256i, _mm256_and_si256(b, maskv));
            }
        }
    }
    let done = head + groups * STEP;
    fill_few(seed, first.wrapping_add(done as u64), cut, &mut dst[done..]);
}

/// `crate::round::halves` on AVX2: each word's two halves zero-extended in
/// turn (`vpmovzxwd`), cut to their top `sr_bits` bits (1 to 16).
///
/// # Safety
///
/// The CPU must support AVX2 (checked by `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn halves_avx2(words: &[u32], sr_bits: u32, out: &mut [u32]) {
    let n = words.len().min(out.len() / 2);
    let body = n - n % 8;
    let drop = _mm_cvtsi32_si128(16 - sr_bits as i32);
    let (w, o) = (words.as_ptr(), out.as_mut_ptr());
    let mut k = 0;
    while k < body {
        // SAFETY: k + 8 <= n words, 2k + 16 <= 2n numbers.
        unsafe {
            let v = _mm256_loadu_si256(w.add(k) as *const __m256i);
            let lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
            let hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(v));
            _mm256_storeu_si256(o.add(2 * k) as *mut __m256i, _mm256_srl_epi32(lo, drop));
            _mm256_storeu_si256(o.add(2 * k + 8) as *mut __m256i, _mm256_srl_epi32(hi, drop));
        }
        k += 8;
    }
    crate::round::halves(&words[body..n], sr_bits, &mut out[2 * body..2 * n]);
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::dispatch::Path;
    use crate::round::Cut;

    /// The vector halves are the scalar ones, for lengths around whole
    /// steps and every width.
    #[test]
    fn vector_halves_match_the_scalar_ones() {
        if !Path::Avx2.is_available() {
            return;
        }
        let words: Vec<u32> = (0..70u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        for n in [0, 1, 7, 8, 9, 16, 31, 70] {
            for sr_bits in 1..=16 {
                let mut want = vec![0u32; 2 * n];
                crate::round::halves(&words[..n], sr_bits, &mut want);
                let mut got = vec![1u32; 2 * n];
                // SAFETY: checked above.
                unsafe { super::halves_avx2(&words[..n], sr_bits, &mut got) };
                assert_eq!(got, want, "{n} {sr_bits}");
            }
        }
    }

    /// Both vector generators give `fill_words`'s words for every
    /// alignment of the first word, lengths around whole steps, every
    /// width, and word numbers wrapping at 2^64.
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
            0usize, 1, 3, 4, 31, 32, 33, 47, 48, 49, 97, 127, 128, 129, 131, 256, 511, 1000,
        ];
        for seed in [0u64, 7, 0xdead_beef_0123_4567, u64::MAX] {
            for &first in &firsts {
                for &n in &lens {
                    for cut in [1, 13, 16, 31, 32]
                        .map(Cut::Top)
                        .into_iter()
                        .chain([1, 8, 13, 16].map(Cut::Halves))
                    {
                        let mut want = vec![0u32; n];
                        crate::round::fill_words(seed, first, cut, &mut want);
                        if Path::Avx512.is_available() {
                            let mut got = vec![1u32; n];
                            // SAFETY: checked just above.
                            unsafe { super::philox_fill_avx512(seed, first, cut, &mut got) };
                            assert_eq!(got, want, "avx512 {seed} {first} {n} {cut:?}");
                        }
                        if Path::Avx2.is_available() {
                            let mut got = vec![1u32; n];
                            // SAFETY: as above.
                            unsafe { super::philox_fill_avx2(seed, first, cut, &mut got) };
                            assert_eq!(got, want, "avx2 {seed} {first} {n} {cut:?}");
                        }
                    }
                }
            }
        }
    }
}
