//! Branch-free element conversions and the slice kernels built from them.
//!
//! Every conversion here is integer arithmetic on the IEEE bit pattern plus
//! selects, written once over a compile-time [`Format`] and instantiated per
//! format and per instruction set (see [`crate::cast::Path`]): LLVM turns the
//! loops into SIMD code for the enabled target features.
//!
//! Rounding is round-to-nearest-even throughout (float8_e8m0fnu: ties away
//! from zero, as ml_dtypes documents, and float32 subnormals above 2^-127
//! become 2^-126 as in ml_dtypes 0.6.0 and PyTorch, see
//! [`crate::float::core::encode_f32`]). Subnormal targets are rounded with the
//! "magic addend" trick: adding `2^k` whose unit in the last place is the
//! target's subnormal quantum makes the FPU round the magnitude to a multiple
//! of that quantum in the default round-to-nearest-even mode.

use crate::format::{self, Format, NanEncoding, NonFinite};

/// A compile-time format: the descriptor as an associated constant, so that
/// every derived quantity folds to a literal inside the kernels.
pub(crate) trait Fmt: 'static {
    /// The descriptor.
    const F: Format;
    /// NaN payloads are carried through widening and narrowing (IEEE float16,
    /// as NumPy converts it: sign and top payload bits kept, no quiet bit
    /// forced, a zero payload becomes 1) instead of being replaced by the
    /// canonical quiet NaN (every ml_dtypes format).
    const KEEP_PAYLOAD: bool = false;
}

macro_rules! fmt_markers {
    ($($marker:ident = $fmt:path $(, $keep:literal)?;)*) => {
        $(
            pub(crate) struct $marker;
            impl Fmt for $marker {
                const F: Format = $fmt;
                $(const KEEP_PAYLOAD: bool = $keep;)?
            }
        )*
    };
}

fmt_markers! {
    BF16 = format::BFLOAT16;
    F16 = format::FLOAT16, true;
    E3M4 = format::FLOAT8_E3M4;
    E4M3 = format::FLOAT8_E4M3;
    E4M3FN = format::FLOAT8_E4M3FN;
    E4M3FNUZ = format::FLOAT8_E4M3FNUZ;
    E4M3B11FNUZ = format::FLOAT8_E4M3B11FNUZ;
    E5M2 = format::FLOAT8_E5M2;
    E5M2FNUZ = format::FLOAT8_E5M2FNUZ;
    E8M0FNU = format::FLOAT8_E8M0FNU;
    F6E2M3 = format::FLOAT6_E2M3FN;
    F6E3M2 = format::FLOAT6_E3M2FN;
    F4E2M1 = format::FLOAT4_E2M1FN;
}

/// Storage word of a code: `u8` for 8-bit and narrower formats, `u16` for
/// bfloat16 / float16.
pub(crate) trait Code: Copy + bytemuck::Pod + Default + Send + Sync + 'static {
    fn from_u32(x: u32) -> Self;
    fn to_u32(self) -> u32;
}
impl Code for u8 {
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
    #[inline(always)]
    fn from_u32(x: u32) -> Self {
        x as u16
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
}

/// `2^k` as an `f32` bit pattern (normal range only).
const fn pow2_f32_bits(k: i32) -> u32 {
    ((k + 127) as u32) << 23
}

/// `2^k` as an `f64` bit pattern (normal range only).
const fn pow2_f64_bits(k: i32) -> u64 {
    ((k + 1023) as u64) << 52
}

/// Code of a NaN result for a NaN input of sign `neg` (0/1), before payload.
#[inline(always)]
const fn nan_result<F: Fmt>(neg: u32) -> u32 {
    let f = F::F;
    let sign = if f.signed {
        neg << (f.exp_bits + f.man_bits)
    } else {
        0
    };
    match (f.non_finite, f.nan_encoding) {
        // ml_dtypes maps +NaN to −0 and −NaN to +0 in the MX float6/float4 formats.
        (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => {
            (neg ^ 1) << (f.exp_bits + f.man_bits)
        }
        (_, NanEncoding::NegativeZero) => f.sign_mask(),
        (_, NanEncoding::AllOnes) => sign | f.exp_mask() | f.man_mask(),
        (_, NanEncoding::Ieee) => sign | f.exp_mask() | (1 << (f.man_bits - 1)),
    }
}

/// Magnitude code of a finite value beyond the largest finite one (and of ±inf).
#[inline(always)]
const fn overflow_mag<F: Fmt, const SAT: bool>() -> u32 {
    let f = F::F;
    if SAT {
        return f.max_code();
    }
    match (f.non_finite, f.nan_encoding) {
        (NonFinite::Ieee, _) => f.exp_mask(),
        (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => f.max_code(),
        // NaN; for NegativeZero the sign bit is forced below.
        (_, NanEncoding::NegativeZero) => 0,
        // NaN-only formats with an IEEE or all-ones NaN: the all-ones code.
        (_, NanEncoding::AllOnes | NanEncoding::Ieee) => f.exp_mask() | f.man_mask(),
    }
}

/// Assemble the final code from the rounded magnitude `mag` (may exceed the
/// largest code), the input sign `neg`, and the input class flags.
/// `nan_payload` (the input's top mantissa bits) is used only by formats
/// that keep payloads ([`Fmt::KEEP_PAYLOAD`]).
#[inline(always)]
fn finish<F: Fmt, const SAT: bool>(mag: u32, neg: u32, is_nan: bool, nan_payload: u32) -> u32 {
    let f = F::F;
    let sbits = f.exp_bits + f.man_bits;
    let sign = neg << sbits;
    let over = mag > f.max_code();
    if matches!(f.nan_encoding, NanEncoding::NegativeZero) {
        // No negative zero: the sign is kept only on a non-zero magnitude
        // (computed with a mask rather than a select: fewer blends on AVX2);
        // NaN and, without saturation, overflow give the NaN 0x80.
        let m = if SAT && over { f.max_code() } else { mag };
        let r = m | (sign & 0u32.wrapping_sub((m != 0) as u32));
        let to_nan = is_nan || (!SAT && over);
        return if to_nan { f.sign_mask() } else { r };
    }
    let code = if over { overflow_mag::<F, SAT>() } else { mag } | sign;
    let nan = if F::KEEP_PAYLOAD {
        // NumPy: the payload as it is, 1 if it truncated to zero.
        sign | f.exp_mask() | nan_payload.max(1)
    } else {
        nan_result::<F>(neg)
    };
    if is_nan {
        nan
    } else {
        code
    }
}

/// float32 bits → code of `F` (any format except float8_e8m0fnu), round to
/// nearest even, ml_dtypes' non-saturating overflow or saturating if `SAT`.
#[inline(always)]
pub(crate) fn enc_f32<F: Fmt, const SAT: bool>(u: u32) -> u32 {
    let f = F::F;
    if f.exp_bits == 8 && f.man_bits == 7 {
        // bfloat16 shares float32's exponent: a shorter rounding suffices.
        return enc_bf16::<SAT>(u);
    }
    if !f.signed {
        return enc_f32_e8m0::<SAT>(u);
    }
    let m = f.man_bits;
    let shift = 23 - m;
    let neg = u >> 31;
    let a = u & 0x7fff_ffff;
    let emin = 1 - f.bias;
    let normal_min = ((emin + 127) as u32) << 23;
    // Normal target: add half an ulp minus one plus the lsb, truncate, rebias.
    let r = a.wrapping_add((1u32 << (shift - 1)) - 1 + ((a >> shift) & 1));
    let cn = (r >> shift).wrapping_sub(((127 - f.bias) as u32) << m);
    // Subnormal target: let the FPU round to the subnormal quantum.
    let magic = pow2_f32_bits(emin - m as i32 + 23);
    let cs = (f32::from_bits(a) + f32::from_bits(magic))
        .to_bits()
        .wrapping_sub(magic);
    let mag = if a < normal_min { cs } else { cn };
    let is_nan = a > 0x7f80_0000;
    finish::<F, SAT>(mag, neg, is_nan, (a & 0x7f_ffff) >> shift)
}

/// float32 bits → float8_e8m0fnu: negative values (and −0) and NaN give NaN
/// (`0xFF`); values below `2^-127` give `0x00`; ties round up. float32
/// subnormals above 2^-127 give `0x01` (2^-126), as ml_dtypes 0.6.0 and
/// PyTorch convert them (see [`crate::float::core::encode_f32`]).
#[inline(always)]
fn enc_f32_e8m0<const SAT: bool>(u: u32) -> u32 {
    let neg = (u >> 31) != 0;
    let a = u & 0x7fff_ffff;
    let normal = (a.wrapping_add(1 << 22)) >> 23;
    // Subnormal inputs: 2^-126 above 2^-127, else 2^-127.
    let sub = (a > 0x0040_0000) as u32;
    let code = if a < 0x0080_0000 { sub } else { normal };
    let over = code >= 0xff;
    let code = if over {
        if SAT {
            0xfe
        } else {
            0xff
        }
    } else {
        code
    };
    // No zero: ±0, negative values and NaN are NaN.
    if neg || a == 0 || a > 0x7f80_0000 {
        0xff
    } else {
        code
    }
}

/// float64 bits → code of `F`, correctly rounded (one rounding).
#[inline(always)]
pub(crate) fn enc_f64<F: Fmt, const SAT: bool>(u: u64) -> u32 {
    let f = F::F;
    if !f.signed {
        return enc_f64_e8m0::<SAT>(u);
    }
    let m = f.man_bits;
    let shift = 52 - m;
    let neg = (u >> 63) as u32;
    let a = u & 0x7fff_ffff_ffff_ffff;
    let emin = 1 - f.bias;
    let normal_min = ((emin + 1023) as u64) << 52;
    let r = a.wrapping_add((1u64 << (shift - 1)) - 1 + ((a >> shift) & 1));
    let cn = (r >> shift).wrapping_sub(((1023 - f.bias) as u64) << m);
    let magic = pow2_f64_bits(emin - m as i32 + 52);
    let cs = (f64::from_bits(a) + f64::from_bits(magic))
        .to_bits()
        .wrapping_sub(magic);
    let mag = if a < normal_min { cs } else { cn };
    // Saturate the 64-bit magnitude into 32 bits while keeping "> max_code".
    let mag = if mag > 0xffff_ffff {
        0xffff_ffff
    } else {
        mag as u32
    };
    let is_nan = a > 0x7ff0_0000_0000_0000;
    let payload = ((a & ((1u64 << 52) - 1)) >> shift) as u32;
    finish::<F, SAT>(mag, neg, is_nan, payload)
}

#[inline(always)]
fn enc_f64_e8m0<const SAT: bool>(u: u64) -> u32 {
    let neg = (u >> 63) != 0;
    let a = u & 0x7fff_ffff_ffff_ffff;
    // Rounded biased exponent, ties up; the code is that exponent rebiased to 127.
    let t = (a.wrapping_add(1 << 51) >> 52) as i64 - (1023 - 127);
    let code = if t < 0 { 0 } else { t as u64 };
    let over = code >= 0xff;
    let code = if over {
        if SAT {
            0xfe
        } else {
            0xff
        }
    } else {
        code as u32
    };
    if neg || a == 0 || a > 0x7ff0_0000_0000_0000 {
        0xff
    } else {
        code
    }
}

/// Code of `F` → float32 bits (exact; NaN → canonical quiet NaN carrying the
/// sign as ml_dtypes produces it, the NaN of fnuz formats being negative).
#[inline(always)]
pub(crate) fn dec_f32<F: Fmt>(c: u32) -> u32 {
    let f = F::F;
    let c = c & f.code_mask();
    if f.exp_bits == 8 && f.man_bits == 7 {
        // bfloat16 is the top half of a float32: widening keeps NaN payloads.
        return c << 16;
    }
    if !f.signed {
        // float8_e8m0fnu: the code is the float32 biased exponent; 0 is 2^-127.
        let v = if c == 0 { 0x0040_0000 } else { c << 23 };
        return if c == 0xff { 0x7fc0_0000 } else { v };
    }
    let sbits = f.exp_bits + f.man_bits;
    let neg = c >> sbits;
    let mag = c & !f.sign_mask();
    let shift = 23 - f.man_bits;
    // Normal codes: move the fields into place and rebias the exponent.
    let vn = (mag << shift).wrapping_add(((127 - f.bias) as u32) << 23);
    // Subnormal codes: the mantissa times the subnormal quantum, an exact
    // product with a normal float32 result (no float32 subnormal is read or
    // made, so denormals-are-zero modes and their slow paths play no part).
    let quantum = f32::from_bits(pow2_f32_bits(1 - f.bias - f.man_bits as i32));
    let vs = (mag as f32 * quantum).to_bits();
    let v = if mag >> f.man_bits == 0 { vs } else { vn };
    let special = match (f.non_finite, f.nan_encoding) {
        (NonFinite::Ieee, _) => {
            let man = mag & f.man_mask();
            let is_special = (mag & f.exp_mask()) == f.exp_mask();
            let nan_bits = if F::KEEP_PAYLOAD {
                0x7f80_0000 | (man << shift)
            } else {
                0x7fc0_0000
            };
            let s = if man == 0 { 0x7f80_0000 } else { nan_bits };
            (is_special, s)
        }
        (NonFinite::NanOnly, NanEncoding::AllOnes) => {
            (mag == f.exp_mask() | f.man_mask(), 0x7fc0_0000)
        }
        (NonFinite::NanOnly, NanEncoding::NegativeZero) => (c == f.sign_mask(), 0x7fc0_0000),
        _ => (false, 0),
    };
    let v = if special.0 { special.1 } else { v };
    v | (neg << 31)
}

/// float32 bits → bfloat16, round to nearest even; NaN → `0x7fc0` with the
/// input's sign (ml_dtypes drops the payload).
#[inline(always)]
pub(crate) fn enc_bf16<const SAT: bool>(u: u32) -> u32 {
    let a = u & 0x7fff_ffff;
    let r = u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16;
    let sign = (u >> 16) & 0x8000;
    let r = if SAT && (r & 0x7fff) == 0x7f80 {
        sign | 0x7f7f
    } else {
        r
    };
    if a > 0x7f80_0000 {
        sign | 0x7fc0
    } else {
        r
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
