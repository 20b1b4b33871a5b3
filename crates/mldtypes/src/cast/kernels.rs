//! The slice kernels: loops over the element conversions of
//! [`crate::float::kernels`], instantiated per format and per instruction
//! set (see [`crate::cast::Path`]); LLVM turns the loops into SIMD code for
//! the enabled target features.
//!
//! The element conversions and the compile-time format markers live in
//! `float::kernels` (the float layer below this one); they are re-exported
//! here under their former paths.

pub(crate) use crate::float::kernels::{
    dec32, dec64, dec_f32, enc32, enc32_det, enc32_m, enc32_m_flat, enc32_sr, enc64, enc64_m,
    enc64_wide, enc64_wide_m, enc_bf16, enc_f32, enc_f64, split32, sr_entry, Fmt, Kind, Mode,
    ModeParams, NearestEven, Params, RoundStep, BF16, E3M4, E4M3, E4M3B11FNUZ, E4M3FN, E4M3FNUZ,
    E5M2, E5M2FNUZ, E8M0FNU, F16, F4E2M1, F6E2M3, F6E3M2,
};

/// Storage word of a code: `u8` for 8-bit and narrower formats, `u16` for
/// wider ones.
pub trait Code: Copy + bytemuck::Pod + Default + Send + Sync + 'static {
    /// Bytes of the word.
    const BYTES: usize;
    fn from_u32(x: u32) -> Self;
    fn to_u32(self) -> u32;
}
impl Code for u8 {
    const BYTES: usize = 1;
    #[inline(always)]
    fn from_u32(x: u32) -> Self {
        x as u8
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
}
impl Code for u16 {
    const BYTES: usize = 2;
    #[inline(always)]
    fn from_u32(x: u32) -> Self {
        x as u16
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
}
impl Code for u32 {
    const BYTES: usize = 4;
    #[inline(always)]
    fn from_u32(x: u32) -> Self {
        x
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self
    }
}

// ---------------------------------------------------------------------------
// Slice kernels. `*_body` are the loops; the `paths` macro instantiates them
// once per instruction set.

#[inline(always)]
fn enc_f32_body<F: Fmt, C: Code, const SAT: bool>(src: &[f32], dst: &mut [C]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = C::from_u32(enc_f32::<F, SAT>(s.to_bits()));
    }
}

#[inline(always)]
fn enc_f64_body<F: Fmt, C: Code, const SAT: bool>(src: &[f64], dst: &mut [C]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = C::from_u32(enc_f64::<F, SAT>(s.to_bits()));
    }
}

#[inline(always)]
fn dec_f32_body<F: Fmt, C: Code>(src: &[C], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f32::from_bits(dec_f32::<F>(s.to_u32()));
    }
}

// Run-time descriptors: the same element code over parameters computed
// once, copied into locals so that the loops keep them in registers.

#[inline(always)]
fn rt_enc32_body<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(
    p: &Params,
    src: &[f32],
    dst: &mut [C],
) {
    let p = *p;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = C::from_u32(enc32::<Q, R, SAT>(&p, s.to_bits()));
    }
}

#[inline(always)]
fn rt_enc64_body<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(
    p: &Params,
    src: &[f64],
    dst: &mut [C],
) {
    let p = *p;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = C::from_u32(enc64::<Q, R, SAT>(&p, s.to_bits()));
    }
}

#[inline(always)]
fn rt_enc64_wide_body<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(
    p: &Params,
    src: &[f64],
    dst: &mut [C],
) {
    let p = *p;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = C::from_u32(enc64_wide::<Q, R, SAT>(&p, s.to_bits()));
    }
}

/// float32 sources of formats beyond float32: widened (exactly) first.
#[inline(always)]
fn rt_enc32_via64_body<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(
    p: &Params,
    src: &[f32],
    dst: &mut [C],
) {
    let p = *p;
    if p.covers_f64 {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc64_wide::<Q, R, SAT>(&p, (*s as f64).to_bits()));
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc64::<Q, R, SAT>(&p, (*s as f64).to_bits()));
        }
    }
}

#[inline(always)]
fn rt_dec32_body<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f32]) {
    let p = *p;
    if p.int_sub32 {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(dec32::<Q, true>(&p, s.to_u32()));
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(dec32::<Q, false>(&p, s.to_u32()));
        }
    }
}

#[inline(always)]
fn rt_dec64_body<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f64]) {
    let p = *p;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f64::from_bits(dec64::<Q>(&p, s.to_u32()));
    }
}

/// Formats beyond float32 to float32: through the float64 value, rounded
/// once (the float64 is exact wherever the float32 result is not zero).
#[inline(always)]
fn rt_dec32_via64_body<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f32]) {
    let p = *p;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f64::from_bits(dec64::<Q>(&p, s.to_u32())) as f32;
    }
}

// Rounding modes (`crate::round`): the element conversions of
// `float::kernels` under a mode `M`, with one random number per element
// for the stochastic modes (`rnd` is ignored by the deterministic ones).

#[inline(always)]
fn rm_enc32_body<Q: Kind, M: Mode, C: Code>(
    p: &Params,
    mp: &ModeParams,
    src: &[f32],
    rnd: &[u32],
    dst: &mut [C],
) {
    let (p, mp) = (*p, *mp);
    // bfloat16 (two-byte IEEE codes with float32's exponent): one shift
    // for every element.
    let flat = C::BYTES == 2
        && matches!(Q::NON_FINITE, crate::format::NonFinite::Ieee)
        && !Q::KEEP_PAYLOAD
        && p.flat32;
    if flat && M::RANDOM {
        for ((d, s), r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = C::from_u32(enc32_m_flat::<Q, M>(&p, &mp, s.to_bits(), *r));
        }
    } else if flat {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc32_m_flat::<Q, M>(&p, &mp, s.to_bits(), 0));
        }
    } else if M::RANDOM {
        for ((d, s), r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = C::from_u32(enc32_m::<Q, M>(&p, &mp, s.to_bits(), *r));
        }
    } else if C::BYTES == 1 && Q::HAS_ZERO && p.det32 {
        // One-byte formats: `astype`'s form of the kernel.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc32_det::<Q>(&p, &mp, s.to_bits()));
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc32_m::<Q, M>(&p, &mp, s.to_bits(), 0));
        }
    }
}

#[inline(always)]
fn rm_enc64_body<Q: Kind, M: Mode, C: Code>(
    p: &Params,
    mp: &ModeParams,
    src: &[f64],
    rnd: &[u32],
    dst: &mut [C],
) {
    let (p, mp) = (*p, *mp);
    if M::RANDOM {
        for ((d, s), r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = C::from_u32(enc64_m::<Q, M>(&p, &mp, s.to_bits(), *r));
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc64_m::<Q, M>(&p, &mp, s.to_bits(), 0));
        }
    }
}

#[inline(always)]
fn rm_enc64_wide_body<Q: Kind, M: Mode, C: Code>(
    p: &Params,
    mp: &ModeParams,
    src: &[f64],
    rnd: &[u32],
    dst: &mut [C],
) {
    let (p, mp) = (*p, *mp);
    if M::RANDOM {
        for ((d, s), r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = C::from_u32(enc64_wide_m::<Q, M>(&p, &mp, s.to_bits(), *r));
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(enc64_wide_m::<Q, M>(&p, &mp, s.to_bits(), 0));
        }
    }
}

/// float32 → float32 or float64 → float64 under saturation: ±inf become
/// ±max, everything else is kept (NaN payloads too).
#[inline(always)]
fn saturate_f32_body(src: &[f32], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        let inf = s.to_bits() & 0x7fff_ffff == 0x7f80_0000;
        *d = if inf { f32::MAX.copysign(*s) } else { *s };
    }
}

/// float32 → one-byte code through a 64 Ki-entry table indexed by the top
/// 16 bits (see `float::core`'s encode table).
#[inline(always)]
fn table_enc32_body(table: &[u8; 1 << 16], src: &[f32], dst: &mut [u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        let b = s.to_bits();
        let i = (b >> 16) | ((b & 0xffff) != 0) as u32;
        *d = table[i as usize];
    }
}

/// One-byte codes through a 256-entry table.
#[inline(always)]
fn lut8_body(table: &[u8; 256], src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = table[*s as usize];
    }
}

#[inline(always)]
fn f32_to_f64_body(src: &[f32], dst: &mut [f64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s as f64;
    }
}

#[inline(always)]
fn f64_to_f32_body(src: &[f64], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s as f32;
    }
}

/// Unpacked codes → packed codes, `W` bits each, element `i` of a group in
/// bits `[W*i, W*(i+1))` counted from the least significant bit.
#[inline(always)]
fn pack_body<const W: u32>(src: &[u8], dst: &mut [u8]) {
    let mask = ((1u32 << W) - 1) as u8;
    match W {
        4 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = (s[0] & mask) | ((s[1] & mask) << 4);
            }
        }
        2 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(4)) {
                *d = (s[0] & mask)
                    | ((s[1] & mask) << 2)
                    | ((s[2] & mask) << 4)
                    | ((s[3] & mask) << 6);
            }
        }
        6 => {
            for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                let w = (s[0] & mask) as u32
                    | (((s[1] & mask) as u32) << 6)
                    | (((s[2] & mask) as u32) << 12)
                    | (((s[3] & mask) as u32) << 18);
                d[0] = w as u8;
                d[1] = (w >> 8) as u8;
                d[2] = (w >> 16) as u8;
            }
        }
        _ => unreachable!("pack width"),
    }
}

/// Packed codes → unpacked codes (inverse of [`pack_body`]).
#[inline(always)]
fn unpack_body<const W: u32>(src: &[u8], dst: &mut [u8]) {
    let mask = ((1u32 << W) - 1) as u8;
    match W {
        4 => {
            for (s, d) in src.iter().zip(dst.chunks_exact_mut(2)) {
                d[0] = s & mask;
                d[1] = s >> 4;
            }
        }
        2 => {
            for (s, d) in src.iter().zip(dst.chunks_exact_mut(4)) {
                d[0] = s & mask;
                d[1] = (s >> 2) & mask;
                d[2] = (s >> 4) & mask;
                d[3] = s >> 6;
            }
        }
        6 => {
            for (s, d) in src.chunks_exact(3).zip(dst.chunks_exact_mut(4)) {
                let w = s[0] as u32 | ((s[1] as u32) << 8) | ((s[2] as u32) << 16);
                d[0] = (w & 0x3f) as u8;
                d[1] = ((w >> 6) & 0x3f) as u8;
                d[2] = ((w >> 12) & 0x3f) as u8;
                d[3] = (w >> 18) as u8;
            }
        }
        _ => unreachable!("unpack width"),
    }
}

/// Instantiates the slice kernels for one instruction set.
///
/// `$($feat)?`: the `target_feature` list; without one the functions are
/// compiled for the crate's baseline target (the portable path).
macro_rules! instantiate {
    ($modname:ident, $($feat:literal)?) => {
        #[allow(clippy::missing_safety_doc)]
        pub(crate) mod $modname {
            use super::*;

            // SAFETY (all functions of this module): compiled with the
            // target features above; callers must only call them after
            // runtime detection confirmed those features (see
            // `cast::dispatch`). The bodies are safe Rust.
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn enc_f32<F: Fmt, C: Code, const SAT: bool>(src: &[f32], dst: &mut [C]) {
                enc_f32_body::<F, C, SAT>(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn enc_f64<F: Fmt, C: Code, const SAT: bool>(src: &[f64], dst: &mut [C]) {
                enc_f64_body::<F, C, SAT>(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn dec_f32<F: Fmt, C: Code>(src: &[C], dst: &mut [f32]) {
                dec_f32_body::<F, C>(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_enc32<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(p: &Params, src: &[f32], dst: &mut [C]) {
                rt_enc32_body::<Q, R, C, SAT>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_enc32_via64<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(p: &Params, src: &[f32], dst: &mut [C]) {
                rt_enc32_via64_body::<Q, R, C, SAT>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_enc64<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(p: &Params, src: &[f64], dst: &mut [C]) {
                rt_enc64_body::<Q, R, C, SAT>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_enc64_wide<Q: Kind, R: RoundStep, C: Code, const SAT: bool>(p: &Params, src: &[f64], dst: &mut [C]) {
                rt_enc64_wide_body::<Q, R, C, SAT>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_dec32<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f32]) {
                rt_dec32_body::<Q, C>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_dec32_via64<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f32]) {
                rt_dec32_via64_body::<Q, C>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rt_dec64<Q: Kind, C: Code>(p: &Params, src: &[C], dst: &mut [f64]) {
                rt_dec64_body::<Q, C>(p, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rm_enc32<Q: Kind, M: Mode, C: Code>(p: &Params, mp: &ModeParams, src: &[f32], rnd: &[u32], dst: &mut [C]) {
                rm_enc32_body::<Q, M, C>(p, mp, src, rnd, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rm_enc64<Q: Kind, M: Mode, C: Code>(p: &Params, mp: &ModeParams, src: &[f64], rnd: &[u32], dst: &mut [C]) {
                rm_enc64_body::<Q, M, C>(p, mp, src, rnd, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn rm_enc64_wide<Q: Kind, M: Mode, C: Code>(p: &Params, mp: &ModeParams, src: &[f64], rnd: &[u32], dst: &mut [C]) {
                rm_enc64_wide_body::<Q, M, C>(p, mp, src, rnd, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn saturate_f32(src: &[f32], dst: &mut [f32]) {
                saturate_f32_body(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn table_enc32(table: &[u8; 1 << 16], src: &[f32], dst: &mut [u8]) {
                table_enc32_body(table, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn lut8(table: &[u8; 256], src: &[u8], dst: &mut [u8]) {
                lut8_body(table, src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn f32_to_f64(src: &[f32], dst: &mut [f64]) {
                f32_to_f64_body(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn f64_to_f32(src: &[f64], dst: &mut [f32]) {
                f64_to_f32_body(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn pack<const W: u32>(src: &[u8], dst: &mut [u8]) {
                pack_body::<W>(src, dst)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn unpack<const W: u32>(src: &[u8], dst: &mut [u8]) {
                unpack_body::<W>(src, dst)
            }
        }
    };
}

instantiate!(portable,);
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
instantiate!(avx2, "avx2,fma,f16c,bmi1,bmi2,popcnt");
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
instantiate!(
    avx512,
    "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c,bmi1,bmi2,popcnt"
);
