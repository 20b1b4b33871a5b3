//! Vectorised block quantizers: MX from float32 and NVFP4 from float32 or
//! float64, one block at a time, written once and compiled per instruction
//! set (see [`crate::cast::Path`]) as the conversion kernels of
//! [`crate::cast`] are.
//!
//! MX: the block's largest magnitude is the maximum of the inputs' bit
//! patterns with the sign cleared (an integer maximum that orders every
//! finite float32 and puts infinities and NaNs above them all); the scale
//! exponent follows from its exponent field (and, for the ceil rule, one
//! comparison of its fraction with that of the element maximum); each
//! element is scaled by the exact power of two `2^−k` in float32 and rounded
//! by the saturating float32 → element conversion of the cast kernels
//! ([`crate::cast::kernels::enc_f32`]), MXINT8 by a round-to-nearest-even
//! addend. The scaling is exact except where the product falls below
//! float32's normal range, far below half the element format's smallest
//! subnormal, where every candidate rounds to ±0 alike.
//!
//! NVFP4: the block scale is the float64 quotient `amax / (6 · s2)` rounded
//! to odd at 53 bits (the exact residual of one fused multiply-add tells
//! whether the division rounded and which way), then converted once to
//! float8_e4m3fn: a single rounding of the exact quotient. Each element code
//! is the number of float4_e2m1fn rounding boundaries `B` the exact quotient
//! `|V| / d` (`d = scale · s2`) lies above (ties on the even side), found by
//! comparing `|V|` with the products `B · d`, which are exact in float64: no
//! division, no rounding.

use crate::cast::kernels::{self as ck, Fmt};

use super::{BlockCounts, E8M0_NAN, MX_BLOCK, NVFP4_BLOCK};

/// An MX element format as the kernels see it.
pub(crate) trait Elem: 'static {
    /// Bits per element (8, 6 or 4).
    const BITS: u32;
    /// `emax_elem` (OCP MX v1.0 §6.3).
    const EMAX: i32;
    /// The float32 fraction field of the largest element (the ceil rule
    /// compares the block maximum's fraction with it).
    const MAX_FRAC: u32;
    /// The element code of the float32 `q` (bits, already scaled), saturated,
    /// and whether it clipped.
    fn encode(q: u32) -> (u32, bool);
}

/// A float element format: the saturating float32 conversion of the cast
/// kernels, clipping decided on the scaled magnitude.
pub(crate) struct FloatElem<F: Fmt, const BITS: u32, const EMAX: i32>(core::marker::PhantomData<F>);

impl<F: Fmt, const BITS: u32, const EMAX: i32> Elem for FloatElem<F, BITS, EMAX> {
    const BITS: u32 = BITS;
    const EMAX: i32 = EMAX;
    const MAX_FRAC: u32 = {
        // The largest finite value's fraction bits, moved to float32's place.
        let f = F::F;
        (f.max_code() & f.man_mask()) << (23 - f.man_bits)
    };
    #[inline(always)]
    fn encode(q: u32) -> (u32, bool) {
        // Saturation changes the result from the midpoint between the
        // largest value and the next (unbounded) one up, or from that
        // midpoint itself when the largest code is odd (the tie goes up).
        const fn threshold(f: crate::format::Format) -> u32 {
            let e = f.max_code() >> f.man_bits; // biased exponent of the maximum
            let frac = (f.max_code() & f.man_mask()) << (23 - f.man_bits);
            let max_bits = ((e as i32 - f.bias + 127) as u32) << 23 | frac;
            // + half an ulp of the element format, in float32 bits.
            let t = max_bits + (1 << (22 - f.man_bits));
            t + (f.max_code() & 1 == 0) as u32
        }
        let thr: u32 = const { threshold(F::F) };
        (ck::enc_f32::<F, true>(q), (q & 0x7fff_ffff) >= thr)
    }
}

/// MXINT8: `round(q · 64)` ties to even, clamped to −128 … 127.
pub(crate) struct Int8Elem;

impl Elem for Int8Elem {
    const BITS: u32 = 8;
    const EMAX: i32 = 0;
    // 127/64 = 1.984375: fraction 0b1111110 · 2^16.
    const MAX_FRAC: u32 = 0x7e << 16;
    #[inline(always)]
    fn encode(q: u32) -> (u32, bool) {
        // |q · 64| < 2^9: adding and subtracting 1.5 · 2^23 rounds it to an
        // integer, ties to even (exact, in the default rounding mode).
        const MAGIC: f32 = 12_582_912.0;
        let x = f32::from_bits(q) * 64.0;
        let r = (x + MAGIC) - MAGIC;
        let c = r.clamp(-128.0, 127.0);
        ((c as i32) as u32 & 0xff, c != r)
    }
}

pub(crate) type E4M3 = FloatElem<ck::E4M3FN, 8, 8>;
pub(crate) type E5M2 = FloatElem<ck::E5M2, 8, 15>;
pub(crate) type E3M2 = FloatElem<ck::F6E3M2, 6, 4>;
pub(crate) type E2M3 = FloatElem<ck::F6E2M3, 6, 2>;
pub(crate) type E2M1 = FloatElem<ck::F4E2M1, 4, 2>;

/// The E8M0 scale exponent (−127 … 127) of a block whose largest magnitude
/// has the float32 bits `a` (finite; 0 gives −127, the scale code 0 of an
/// all-zero block).
#[inline(always)]
fn scale_exp<E: Elem, const CEIL: bool>(a: u32) -> i32 {
    if a == 0 {
        return -127;
    }
    // floor(log2 a) and the fraction normalised to 23 bits.
    let (lg, frac) = if a >= 0x0080_0000 {
        ((a >> 23) as i32 - 127, a & 0x7f_ffff)
    } else {
        let lz = a.leading_zeros(); // 9 … 31
        (-149 + 31 - lz as i32, (a << (lz - 8)) & 0x7f_ffff)
    };
    let k = lg - E::EMAX + (CEIL && frac > E::MAX_FRAC) as i32;
    k.clamp(-127, 127)
}

/// `2^−k` as float32 for `k` in −127 … 127 (`2^−127` is subnormal, exact).
#[inline(always)]
fn inv_pow2(k: i32) -> f32 {
    if k == 127 {
        f32::from_bits(0x0040_0000)
    } else {
        f32::from_bits(((127 - k) as u32) << 23)
    }
}

/// Packs 32 element codes of `bits` bits, least-significant bit first.
#[inline(always)]
fn pack_block(codes: &[u8; MX_BLOCK], bits: u32, out: &mut [u8]) {
    match bits {
        8 => out.copy_from_slice(codes),
        6 => {
            for (d, s) in out.chunks_exact_mut(3).zip(codes.chunks_exact(4)) {
                let w = (s[0] & 0x3f) as u32
                    | ((s[1] & 0x3f) as u32) << 6
                    | ((s[2] & 0x3f) as u32) << 12
                    | ((s[3] & 0x3f) as u32) << 18;
                d[0] = w as u8;
                d[1] = (w >> 8) as u8;
                d[2] = (w >> 16) as u8;
            }
        }
        _ => {
            for (d, s) in out.iter_mut().zip(codes.chunks_exact(2)) {
                *d = (s[0] & 0xf) | (s[1] << 4);
            }
        }
    }
}

/// MX quantization of whole blocks of float32 (`src.len()` a multiple of 32,
/// `blocks` and `scales` sized for it).
#[inline(always)]
fn mx_f32_body<E: Elem, const CEIL: bool>(
    src: &[f32],
    blocks: &mut [u8],
    scales: &mut [u8],
) -> BlockCounts {
    let bb = MX_BLOCK * E::BITS as usize / 8;
    let mut counts = BlockCounts::default();
    for ((x, out), scale) in src
        .chunks_exact(MX_BLOCK)
        .zip(blocks.chunks_exact_mut(bb))
        .zip(scales.iter_mut())
    {
        let x: &[f32; MX_BLOCK] = x.try_into().expect("whole blocks");
        let mut amax = 0u32;
        for v in x {
            amax = amax.max(v.to_bits() & 0x7fff_ffff);
        }
        if amax >= 0x7f80_0000 {
            // A NaN or an infinity: the NaN scale, zero elements.
            *scale = E8M0_NAN;
            out.fill(0);
            counts.nan_blocks += 1;
            continue;
        }
        let k = scale_exp::<E, CEIL>(amax);
        *scale = (k + 127) as u8;
        let inv = inv_pow2(k);
        let mut codes = [0u8; MX_BLOCK];
        let mut clipped = 0u32;
        for (c, v) in codes.iter_mut().zip(x) {
            let (code, clip) = E::encode((v * inv).to_bits());
            *c = code as u8;
            clipped += clip as u32;
        }
        counts.clipped += clipped as u64;
        pack_block(&codes, E::BITS, out);
    }
    counts
}

/// A float type NVFP4 blocks are read from.
pub(crate) trait Nv: Copy {
    /// The magnitude's bit pattern (sign cleared), widened.
    fn mag(self) -> u64;
    /// [`Nv::mag`] of +inf: every larger-or-equal pattern is not finite.
    const INF: u64;
    /// The value of a magnitude pattern, exactly.
    fn mag_f64(m: u64) -> f64;
    /// The value, exactly.
    fn f64(self) -> f64;
}

impl Nv for f32 {
    #[inline(always)]
    fn mag(self) -> u64 {
        (self.to_bits() & 0x7fff_ffff) as u64
    }
    const INF: u64 = 0x7f80_0000;
    #[inline(always)]
    fn mag_f64(m: u64) -> f64 {
        f32::from_bits(m as u32) as f64
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Nv for f64 {
    #[inline(always)]
    fn mag(self) -> u64 {
        self.to_bits() & 0x7fff_ffff_ffff_ffff
    }
    const INF: u64 = 0x7ff0_0000_0000_0000;
    #[inline(always)]
    fn mag_f64(m: u64) -> f64 {
        f64::from_bits(m)
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
}

/// The float8_e4m3fn block scale code of NVFP4: `amax / d6` (both positive
/// finite, `d6 = 6 · s2`) correctly rounded, saturated to 448.
#[inline(always)]
fn nv_block_scale(amax: f64, d6: f64) -> u32 {
    let q = amax / d6;
    // The residual of a correctly rounded quotient is exact unless it falls
    // below float64's normal range (or the quotient overflows): those rare
    // blocks take the exact integer division.
    if !(amax >= f64::from_bits(0x0800_0000_0000_0000) && q < 1e300) {
        return super::nvfp4_block_scale_exact(amax, d6);
    }
    let r = (-q).mul_add(d6, amax);
    // Round to odd: the truncated quotient with its last bit set if inexact.
    let t = if r < 0.0 { q.next_down() } else { q };
    let t = f64::from_bits(t.to_bits() | (r != 0.0) as u64);
    ck::enc_f64::<ck::E4M3FN, true>(t.to_bits())
}

/// float4_e2m1fn rounding boundaries whose ties go down (to codes 0, 2, 4, 6)
/// and up (to codes 2, 4, 6).
const TIE_DOWN: [f64; 4] = [0.25, 1.25, 2.5, 5.0];
const TIE_UP: [f64; 3] = [0.75, 1.75, 3.5];

/// NVFP4 quantization of whole blocks of 16 (`packed` and `scales` sized for
/// them); returns the number of clipped elements.
#[inline(always)]
fn nvfp4_body<T: Nv>(src: &[T], s2: f32, packed: &mut [u8], scales: &mut [u8]) -> u64 {
    let s2 = s2 as f64;
    let d6 = 6.0 * s2;
    let mut clipped = 0u64;
    for ((x, out), scale) in src
        .chunks_exact(NVFP4_BLOCK)
        .zip(packed.chunks_exact_mut(NVFP4_BLOCK / 2))
        .zip(scales.iter_mut())
    {
        let x: &[T; NVFP4_BLOCK] = x.try_into().expect("whole blocks");
        let mut amax = 0u64;
        for v in x {
            amax = amax.max(v.mag());
        }
        if amax >= T::INF {
            *scale = 0x7f;
            out.fill(0);
            continue;
        }
        let sc = if amax == 0 {
            0
        } else {
            nv_block_scale(T::mag_f64(amax), d6)
        };
        *scale = sc as u8;
        // The block scale times s2: 4 × 24 significant bits, exact.
        let d = f32::from_bits(ck::dec_f32::<ck::E4M3FN>(sc)) as f64 * s2;
        let mut codes = [0u8; NVFP4_BLOCK];
        if d == 0.0 {
            for (c, v) in codes.iter_mut().zip(x) {
                *c = ((v.f64().is_sign_negative()) as u8) << 3;
            }
        } else {
            let down = TIE_DOWN.map(|b| b * d);
            let up = TIE_UP.map(|b| b * d);
            let top = 7.0 * d;
            let mut clip = 0u32;
            for (c, v) in codes.iter_mut().zip(x) {
                let y = v.f64();
                let a = y.abs();
                let mut m = 0u8;
                for t in down {
                    m += (a > t) as u8;
                }
                for t in up {
                    m += (a >= t) as u8;
                }
                clip += (a >= top) as u32;
                *c = m | ((y.is_sign_negative() as u8) << 3);
            }
            clipped += clip as u64;
        }
        for (o, p) in out.iter_mut().zip(codes.chunks_exact(2)) {
            *o = p[0] | (p[1] << 4);
        }
    }
    clipped
}

/// Instantiates the block kernels for one instruction set (as
/// `cast::kernels` does for the conversions).
macro_rules! instantiate {
    ($modname:ident, $($feat:literal)?) => {
        #[allow(clippy::missing_safety_doc)]
        pub(crate) mod $modname {
            use super::*;

            // SAFETY (both functions): compiled with the target features
            // above; callers only call them after runtime detection confirmed
            // those features (`Path::is_available`). The bodies are safe Rust.
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn mx_f32<E: Elem, const CEIL: bool>(
                src: &[f32],
                blocks: &mut [u8],
                scales: &mut [u8],
            ) -> BlockCounts {
                mx_f32_body::<E, CEIL>(src, blocks, scales)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn nvfp4<T: Nv>(
                src: &[T],
                s2: f32,
                packed: &mut [u8],
                scales: &mut [u8],
            ) -> u64 {
                nvfp4_body::<T>(src, s2, packed, scales)
            }
        }
    };
}

instantiate!(portable,);
#[cfg(target_arch = "x86_64")]
instantiate!(avx2, "avx2,fma,f16c,bmi1,bmi2,popcnt");
#[cfg(target_arch = "x86_64")]
instantiate!(
    avx512,
    "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c,bmi1,bmi2,popcnt"
);
