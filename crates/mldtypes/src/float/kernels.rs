//! Branch-free element conversions between float32/float64 bit patterns and
//! the codes of a format: the arithmetic every slice kernel of
//! [`crate::cast`] (and of [`crate::mx`]) is built from.
//!
//! Each conversion is written once over a format's derived quantities
//! ([`Params`]) and its structure ([`Kind`]: non-finite behaviour, NaN
//! encoding, sign, zero, NaN payload rule). A named format passes its
//! compile-time marker ([`Fmt`]) as the kind and `const` parameters, so
//! every quantity folds to a literal and the loops compile to straight-line
//! SIMD code; a descriptor known only at run time passes one of the
//! run-time kinds ([`K`]) and parameters computed once ([`Params::of`]),
//! which the loops keep in registers. Both are the same code, so they give
//! the same bits.
//!
//! Rounding is round-to-nearest-even ([`NearestEven`], the one
//! [`RoundStep`] so far; float8_e8m0fnu rounds ties away from zero, as
//! ml_dtypes documents, and float32 subnormals above 2^-127 become 2^-126
//! as in ml_dtypes 0.6.0 and PyTorch, see [`crate::float::core::encode_f32`]).
//! Normal targets are rounded with an integer increment on the source bits;
//! subnormal targets with the "magic addend" trick: adding `2^k` whose unit
//! in the last place is the target's subnormal quantum makes the FPU round
//! the magnitude to a multiple of that quantum in the default
//! round-to-nearest-even mode.

use crate::format::{self, Format, NanEncoding, NonFinite};

/// The structure of a format that the kernels branch on at compile time.
pub(crate) trait Kind: 'static {
    /// How infinities and NaN are encoded.
    const NON_FINITE: NonFinite;
    /// Where the NaN lives.
    const NAN: NanEncoding;
    /// Whether there is a sign bit.
    const SIGNED: bool;
    /// Whether there is a zero (false only for float8_e8m0fnu).
    const HAS_ZERO: bool;
    /// NaN payloads are carried through widening and narrowing (IEEE float16,
    /// as NumPy converts it: sign and top payload bits kept, no quiet bit
    /// forced, a zero payload becomes 1) instead of being replaced by the
    /// canonical quiet NaN (every ml_dtypes format).
    const KEEP_PAYLOAD: bool = false;
    /// The format is bfloat16, whose exponent is float32's: a shorter
    /// rounding suffices (compile-time formats only).
    const BF16: bool = false;
}

/// A compile-time format: the descriptor as an associated constant, so that
/// every derived quantity folds to a literal inside the kernels.
pub(crate) trait Fmt: 'static {
    /// The descriptor.
    const F: Format;
    /// See [`Kind::KEEP_PAYLOAD`].
    const KEEP_PAYLOAD: bool = false;
}

impl<F: Fmt> Kind for F {
    const NON_FINITE: NonFinite = F::F.non_finite;
    const NAN: NanEncoding = F::F.nan_encoding;
    const SIGNED: bool = F::F.signed;
    const HAS_ZERO: bool = F::F.has_zero;
    const KEEP_PAYLOAD: bool = <F as Fmt>::KEEP_PAYLOAD;
    const BF16: bool = F::F.exp_bits == 8 && F::F.man_bits == 7 && F::F.bias == 127;
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

/// A run-time kind: the structure of a descriptor known only at run time,
/// as const parameters (`NF`: 0 IEEE, 1 NaN-only, 2 finite-only,
/// 3 infinity-at-max; `NAN`: 0 IEEE, 1 all-ones, 2 negative zero, 3 none).
pub(crate) struct K<const NF: u8, const NAN: u8, const SIGNED: bool, const ZERO: bool>;

impl<const NF: u8, const NAN: u8, const SIGNED: bool, const ZERO: bool> Kind
    for K<NF, NAN, SIGNED, ZERO>
{
    const NON_FINITE: NonFinite = nf_of(NF);
    const NAN: NanEncoding = nan_of(NAN);
    const SIGNED: bool = SIGNED;
    const HAS_ZERO: bool = ZERO;
}

const fn nf_of(id: u8) -> NonFinite {
    match id {
        0 => NonFinite::Ieee,
        1 => NonFinite::NanOnly,
        2 => NonFinite::FiniteOnly,
        _ => NonFinite::InfAtMax,
    }
}

const fn nan_of(id: u8) -> NanEncoding {
    match id {
        0 => NanEncoding::Ieee,
        1 => NanEncoding::AllOnes,
        2 => NanEncoding::NegativeZero,
        _ => NanEncoding::None,
    }
}

/// The rounding step of the element kernels: how far the magnitude moves
/// when bits are dropped. Only round-to-nearest-even exists so far; the
/// kernels take it as a parameter so that other modes are another
/// implementation of this trait.
pub(crate) trait RoundStep: 'static {
    /// The subnormal range is rounded by the FPU's default mode (the magic
    /// addend), which is round-to-nearest-even.
    const FPU_NEAREST_EVEN: bool;
    /// The amount added to the source bits `a` (magnitude) before the low
    /// `shift` bits are dropped; `lsb` is the parity of the kept code.
    fn increment32(a: u32, shift: u32, lsb: u32) -> u32;
    /// [`RoundStep::increment32`] for float64 sources.
    fn increment64(a: u64, shift: u32, lsb: u64) -> u64;
}

/// Round to nearest, ties to even (IEEE 754 `roundTiesToEven`).
pub(crate) struct NearestEven;

impl RoundStep for NearestEven {
    const FPU_NEAREST_EVEN: bool = true;
    #[inline(always)]
    fn increment32(_a: u32, shift: u32, lsb: u32) -> u32 {
        (1u32 << (shift - 1)) - 1 + lsb
    }
    #[inline(always)]
    fn increment64(_a: u64, shift: u32, lsb: u64) -> u64 {
        (1u64 << (shift - 1)) - 1 + lsb
    }
}

/// [`NearestEven`] with the subnormal range rounded by integer shifts
/// instead of the FPU: the route other rounding modes take; the tests
/// check that it gives [`NearestEven`]'s bits.
#[cfg(test)]
pub(crate) struct NearestEvenShifted;

#[cfg(test)]
impl RoundStep for NearestEvenShifted {
    const FPU_NEAREST_EVEN: bool = false;
    fn increment32(a: u32, shift: u32, lsb: u32) -> u32 {
        NearestEven::increment32(a, shift, lsb)
    }
    fn increment64(a: u64, shift: u32, lsb: u64) -> u64 {
        NearestEven::increment64(a, shift, lsb)
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

/// `2^k` as an `f32` bit pattern, subnormals included, clamped to the
/// range of float32 (0 below it, +inf above it).
const fn pow2_f32_any(k: i32) -> u32 {
    if k > 127 {
        0x7f80_0000
    } else if k >= -126 {
        pow2_f32_bits(k)
    } else if k >= -149 {
        1u32 << (k + 149)
    } else {
        0
    }
}

/// `2^k` as an `f64` bit pattern, subnormals included, clamped.
const fn pow2_f64_any(k: i32) -> u64 {
    if k > 1023 {
        0x7ff0_0000_0000_0000
    } else if k >= -1022 {
        pow2_f64_bits(k)
    } else if k >= -1074 {
        1u64 << (k + 1074)
    } else {
        0
    }
}

/// Every quantity the element kernels need, derived from a descriptor once
/// (at compile time for the named formats).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    /// Stored mantissa bits.
    pub(crate) man_bits: u32,
    /// Code bits of the format.
    pub(crate) code_mask: u32,
    /// The sign bit (0 if unsigned).
    pub(crate) sign_mask: u32,
    /// Position of the sign bit (exponent + mantissa bits).
    pub(crate) sign_shift: u32,
    /// The exponent field.
    pub(crate) exp_mask: u32,
    /// The mantissa field.
    pub(crate) man_mask: u32,
    /// Largest finite magnitude.
    pub(crate) max_code: u32,
    /// Magnitude of the infinity code (0 without infinities).
    pub(crate) inf_mag: u32,
    /// The canonical NaN code (0 without NaN).
    pub(crate) nan_code: u32,
    /// float32 sources: bits dropped (`23 − man_bits`).
    s32: u32,
    /// Subtracted from the shifted float32 bits to rebias the exponent.
    rebias32: u32,
    /// float32 magnitudes below this round as subnormals (magic addend).
    sub32: u32,
    /// The magic addend for subnormal targets.
    magic32: u32,
    /// Subnormal targets without the FPU: the significand of an input with
    /// biased exponent `e` is shifted right by `sub_shift32 − e`.
    sub_shift32: u32,
    /// XOR-ed into the kept code's parity (P = 1 formats with an odd
    /// rebias: the parity of the code, not of the float32 exponent).
    parity32: u32,
    /// float64 sources: bits dropped.
    s64: u32,
    rebias64: u64,
    sub64: u64,
    magic64: u64,
    sub_shift64: u32,
    parity64: u64,
    /// float64 subnormal inputs, normalized, get this added rebias
    /// (formats covering float64).
    wide_rebias64: u64,
    /// Decoding to float32: added to the shifted magnitude.
    drebias32: u32,
    /// Decoding to float32: the subnormal quantum (bits).
    quantum32: u32,
    /// Decoding to float32: magnitudes below this are the quantum times
    /// the magnitude (subnormal codes, and codes whose value is a float32
    /// subnormal).
    dsub32: u32,
    /// Decoding to float32: the values below `dsub32` are float32
    /// subnormals (8 exponent bits, bias 128), built as the bit pattern
    /// `mag << dshift32` rather than by the FPU, whose subnormal arithmetic
    /// is slow (microcode assists) and flushed under denormals-are-zero.
    pub(crate) int_sub32: bool,
    dshift32: u32,
    /// The format's values are exactly float32s.
    pub(crate) fits_f32: bool,
    /// The format's values are exactly float64s.
    pub(crate) fits_f64: bool,
    /// Every finite non-zero float64 is a normal number of the format and
    /// none overflows it (exponent fields of 12 bits and more).
    pub(crate) covers_f64: bool,
    /// The exponent of a normal code's value is `e − bias − man_bits`.
    pub(crate) bias: i32,
    /// The smallest normal exponent.
    pub(crate) min_exp: i32,
}

impl Params {
    /// The kernels' parameters of `f` (any valid descriptor).
    pub(crate) const fn of(f: &Format) -> Params {
        let m = f.man_bits;
        let emin = f.min_exp();
        let normal_min32 = pow2_f32_any(emin);
        let normal_min64 = pow2_f64_any(emin);
        // Magnitudes below the target's smallest normal, and float
        // subnormals (their exponent field is not the value's), go through
        // the FPU.
        let sub32 = if normal_min32 > 0x0080_0000 {
            normal_min32
        } else {
            0x0080_0000
        };
        let sub64 = if normal_min64 > 0x0010_0000_0000_0000 {
            normal_min64
        } else {
            0x0010_0000_0000_0000
        };
        let rebias32 = ((127 - f.bias) as u32) << m;
        let rebias64 = ((1023 - f.bias as i64) as u64) << m;
        let (inf_mag, nan_code) = (
            match f.inf_code() {
                Some(c) => c,
                None => 0,
            },
            match f.nan_code() {
                Some(c) => c,
                None => 0,
            },
        );
        let fits_f32 = f.fits_f32();
        let fits_f64 = f.fits_f64();
        let covers_f64 = f.min_exp() <= -1074 && f.max_exp() >= 1024;
        Params {
            man_bits: m,
            code_mask: f.code_mask(),
            sign_mask: f.sign_mask(),
            sign_shift: f.exp_bits + f.man_bits,
            exp_mask: f.exp_mask(),
            man_mask: f.man_mask(),
            max_code: f.max_code(),
            inf_mag,
            nan_code,
            s32: 23 - m,
            rebias32,
            sub32,
            magic32: if fits_f32 {
                pow2_f32_bits(emin - m as i32 + 23)
            } else {
                0
            },
            // The quantum 2^(emin − m) against an input's ulp 2^(e − 150).
            sub_shift32: (emin - m as i32 + 150) as u32,
            parity32: if m == 0 { rebias32 & 1 } else { 0 },
            s64: 52 - m,
            rebias64,
            sub64,
            magic64: if fits_f64 {
                pow2_f64_bits(emin - m as i32 + 52)
            } else {
                0
            },
            sub_shift64: (emin - m as i32 + 1075) as u32,
            parity64: if m == 0 { rebias64 & 1 } else { 0 },
            wide_rebias64: rebias64.wrapping_add(1074u64 << m),
            drebias32: ((127 - f.bias) as u32) << 23,
            quantum32: if fits_f32 {
                pow2_f32_any(emin - m as i32)
            } else {
                0
            },
            dsub32: if emin >= -126 {
                1 << m
            } else {
                ((-126 - emin + 1) as u32) << m
            },
            int_sub32: emin < -126,
            dshift32: if emin - (m as i32) + 149 >= 0 {
                (emin - m as i32 + 149) as u32
            } else {
                0
            },
            fits_f32,
            fits_f64,
            covers_f64,
            bias: f.bias,
            min_exp: emin,
        }
    }
}

/// Code of a NaN result for a NaN input of sign `neg` (0/1), before payload.
#[inline(always)]
const fn nan_result<Q: Kind>(p: &Params, neg: u32) -> u32 {
    let sign = if Q::SIGNED { neg << p.sign_shift } else { 0 };
    match (Q::NON_FINITE, Q::NAN) {
        // ml_dtypes maps +NaN to −0 and −NaN to +0 in the MX float6/float4 formats.
        (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => (neg ^ 1) << p.sign_shift,
        (_, NanEncoding::NegativeZero) => p.sign_mask,
        (_, NanEncoding::AllOnes) => sign | p.exp_mask | p.man_mask,
        (_, NanEncoding::Ieee) => sign | p.exp_mask | (1 << (p.man_bits - 1)),
    }
}

/// Magnitude code of a finite value beyond the largest finite one (and of ±inf).
#[inline(always)]
const fn overflow_mag<Q: Kind, const SAT: bool>(p: &Params) -> u32 {
    if SAT {
        return p.max_code;
    }
    match (Q::NON_FINITE, Q::NAN) {
        (NonFinite::Ieee | NonFinite::InfAtMax, _) => p.inf_mag,
        (NonFinite::FiniteOnly, _) | (_, NanEncoding::None) => p.max_code,
        // NaN; for NegativeZero the sign bit is forced below.
        (_, NanEncoding::NegativeZero) => 0,
        // NaN-only formats with an IEEE or all-ones NaN: the all-ones code.
        (_, NanEncoding::AllOnes | NanEncoding::Ieee) => p.exp_mask | p.man_mask,
    }
}

/// Assemble the final code from the rounded magnitude `mag` (may exceed the
/// largest code), the input sign `neg`, and the input class flags.
/// `nan_payload` (the input's top mantissa bits) is used only by formats
/// that keep payloads ([`Kind::KEEP_PAYLOAD`]).
#[inline(always)]
fn finish<Q: Kind, const SAT: bool>(
    p: &Params,
    mag: u32,
    neg: u32,
    is_nan: bool,
    nan_payload: u32,
) -> u32 {
    let over = mag > p.max_code;
    if !Q::SIGNED {
        // Unsigned with a zero (IEEE P3109 `u` formats): a negative value
        // whose magnitude rounds to zero is +0; any other negative value,
        // −inf and NaN give the NaN.
        let m = if over { overflow_mag::<Q, SAT>(p) } else { mag };
        let to_nan = is_nan || (neg != 0 && m != 0);
        return if to_nan { p.nan_code } else { m };
    }
    let sign = neg << p.sign_shift;
    if matches!(Q::NAN, NanEncoding::NegativeZero) {
        // No negative zero: the sign is kept only on a non-zero magnitude
        // (computed with a mask rather than a select: fewer blends on AVX2);
        // NaN, and without saturation overflow in NaN-only formats, give
        // the NaN 0x80; infinity-at-max formats overflow to ±inf.
        let inf = matches!(Q::NON_FINITE, NonFinite::InfAtMax);
        let m = if SAT && over {
            p.max_code
        } else if inf && over {
            p.inf_mag
        } else {
            mag
        };
        let r = m | (sign & 0u32.wrapping_sub((m != 0) as u32));
        let to_nan = is_nan || (!SAT && !inf && over);
        return if to_nan { p.sign_mask } else { r };
    }
    let code = if over { overflow_mag::<Q, SAT>(p) } else { mag } | sign;
    let nan = if Q::KEEP_PAYLOAD {
        // NumPy: the payload as it is, 1 if it truncated to zero.
        sign | p.exp_mask | nan_payload.max(1)
    } else {
        nan_result::<Q>(p, neg)
    };
    if is_nan {
        nan
    } else {
        code
    }
}

/// float32 bits → code of a format whose values are float32s
/// ([`Params::fits_f32`]), ml_dtypes' non-saturating overflow or saturating
/// if `SAT`, rounded by `R`.
#[inline(always)]
pub(crate) fn enc32<Q: Kind, R: RoundStep, const SAT: bool>(p: &Params, u: u32) -> u32 {
    if Q::BF16 {
        return enc_bf16::<SAT>(u);
    }
    if !Q::SIGNED && !Q::HAS_ZERO {
        return enc_f32_e8m0::<SAT>(u);
    }
    let shift = p.s32;
    let neg = u >> 31;
    let a = u & 0x7fff_ffff;
    // Normal target: add the rounding increment, truncate, rebias.
    let lsb = ((a >> shift) ^ p.parity32) & 1;
    let r = a.wrapping_add(R::increment32(a, shift, lsb));
    let cn = (r >> shift).wrapping_sub(p.rebias32);
    // Subnormal target: let the FPU round to the subnormal quantum, or
    // shift the significand by its distance to the quantum.
    let cs = if R::FPU_NEAREST_EVEN {
        (f32::from_bits(a) + f32::from_bits(p.magic32))
            .to_bits()
            .wrapping_sub(p.magic32)
    } else {
        let e = (a >> 23).max(1);
        let sig = (a & 0x7f_ffff) | (((a >> 23) != 0) as u32) << 23;
        // Computed for every input (the select below keeps it only for
        // subnormal targets, where it lies in 1..=31).
        let sh = p.sub_shift32.wrapping_sub(e).clamp(1, 31);
        let lsb = (sig >> sh) & 1;
        (sig + R::increment32(sig, sh, lsb)) >> sh
    };
    let mag = if a < p.sub32 { cs } else { cn };
    let is_nan = a > 0x7f80_0000;
    finish::<Q, SAT>(p, mag, neg, is_nan, (a & 0x7f_ffff) >> shift)
}

/// float32 bits → code of `F` (a named format), round to nearest even,
/// ml_dtypes' non-saturating overflow or saturating if `SAT`.
#[inline(always)]
pub(crate) fn enc_f32<F: Fmt, const SAT: bool>(u: u32) -> u32 {
    enc32::<F, NearestEven, SAT>(const { &Params::of(&F::F) }, u)
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

/// float64 bits → code of a format whose values are float64s
/// ([`Params::fits_f64`]), correctly rounded (one rounding).
#[inline(always)]
pub(crate) fn enc64<Q: Kind, R: RoundStep, const SAT: bool>(p: &Params, u: u64) -> u32 {
    if !Q::SIGNED && !Q::HAS_ZERO {
        return enc_f64_e8m0::<SAT>(u);
    }
    let shift = p.s64;
    let neg = (u >> 63) as u32;
    let a = u & 0x7fff_ffff_ffff_ffff;
    let lsb = ((a >> shift) ^ p.parity64) & 1;
    let r = a.wrapping_add(R::increment64(a, shift, lsb));
    let cn = (r >> shift).wrapping_sub(p.rebias64);
    let cs = if R::FPU_NEAREST_EVEN {
        (f64::from_bits(a) + f64::from_bits(p.magic64))
            .to_bits()
            .wrapping_sub(p.magic64)
    } else {
        let e = (a >> 52).max(1);
        let sig = (a & ((1 << 52) - 1)) | (((a >> 52) != 0) as u64) << 52;
        let sh = (p.sub_shift64 as u64).wrapping_sub(e).clamp(1, 63) as u32;
        let lsb = (sig >> sh) & 1;
        (sig + R::increment64(sig, sh, lsb)) >> sh
    };
    let mag = if a < p.sub64 { cs } else { cn };
    // Saturate the 64-bit magnitude into 32 bits while keeping "> max_code".
    let mag = if mag > 0xffff_ffff {
        0xffff_ffff
    } else {
        mag as u32
    };
    let is_nan = a > 0x7ff0_0000_0000_0000;
    let payload = ((a & ((1u64 << 52) - 1)) >> shift) as u32;
    finish::<Q, SAT>(p, mag, neg, is_nan, payload)
}

/// float64 bits → code of a format that covers float64
/// ([`Params::covers_f64`]: exponent fields of 12 bits and more): every
/// finite value rounds in the normal range, float64 subnormals after
/// normalization; ±inf give the format's overflow result.
#[inline(always)]
pub(crate) fn enc64_wide<Q: Kind, R: RoundStep, const SAT: bool>(p: &Params, u: u64) -> u32 {
    let shift = p.s64;
    let neg = (u >> 63) as u32;
    let a = u & 0x7fff_ffff_ffff_ffff;
    // A subnormal's mantissa as a float64 (exact; no subnormal is read):
    // the value times 2^1074.
    let sub = a < 0x0010_0000_0000_0000;
    let an = if sub {
        (f64::from_bits(a | 0x4330_0000_0000_0000) - 4503599627370496.0).to_bits()
    } else {
        a
    };
    let rebias = if sub { p.wide_rebias64 } else { p.rebias64 };
    let lsb = ((an >> shift) ^ p.parity64) & 1;
    let r = an.wrapping_add(R::increment64(an, shift, lsb));
    let cn = ((r >> shift).wrapping_sub(rebias)) as u32;
    let is_inf = a == 0x7ff0_0000_0000_0000;
    let mag = if a == 0 {
        0
    } else if is_inf {
        u32::MAX
    } else {
        cn
    };
    let is_nan = a > 0x7ff0_0000_0000_0000;
    finish::<Q, SAT>(p, mag, neg, is_nan, 0)
}

/// float64 bits → code of `F` (a named format), correctly rounded.
#[inline(always)]
pub(crate) fn enc_f64<F: Fmt, const SAT: bool>(u: u64) -> u32 {
    enc64::<F, NearestEven, SAT>(const { &Params::of(&F::F) }, u)
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

/// Code → float32 bits of a format whose values are float32s (exact; NaN →
/// canonical quiet NaN carrying the sign as ml_dtypes produces it, the NaN
/// of fnuz-style formats being negative). `INT_SUB` must equal
/// [`Params::int_sub32`].
#[inline(always)]
pub(crate) fn dec32<Q: Kind, const INT_SUB: bool>(p: &Params, c: u32) -> u32 {
    let c = c & p.code_mask;
    if Q::BF16 {
        // bfloat16 is the top half of a float32: widening keeps NaN payloads.
        return c << 16;
    }
    if !Q::SIGNED && !Q::HAS_ZERO {
        // float8_e8m0fnu: the code is the float32 biased exponent; 0 is 2^-127.
        let v = if c == 0 { 0x0040_0000 } else { c << 23 };
        return if c == 0xff { 0x7fc0_0000 } else { v };
    }
    let neg = if Q::SIGNED { c >> p.sign_shift } else { 0 };
    let mag = c & !p.sign_mask;
    let shift = 23 - p.man_bits;
    // Normal codes: move the fields into place and rebias the exponent.
    let vn = (mag << shift).wrapping_add(p.drebias32);
    // Subnormal codes: the mantissa times the subnormal quantum, an exact
    // product; for the named formats a normal float32 result (no float32
    // subnormal is read or made, so denormals-are-zero modes and their slow
    // paths play no part). Formats reaching below 2^-126 (8 exponent bits
    // and bias 128) make float32 subnormals this way, exactly.
    let vs = if INT_SUB {
        mag << p.dshift32
    } else {
        (mag as f32 * f32::from_bits(p.quantum32)).to_bits()
    };
    let v = if mag < p.dsub32 { vs } else { vn };
    let special = match (Q::NON_FINITE, Q::NAN) {
        (NonFinite::Ieee, _) => {
            let man = mag & p.man_mask;
            let is_special = (mag & p.exp_mask) == p.exp_mask;
            let nan_bits = if Q::KEEP_PAYLOAD {
                0x7f80_0000 | (man << shift)
            } else {
                0x7fc0_0000
            };
            let s = if man == 0 { 0x7f80_0000 } else { nan_bits };
            (is_special, s)
        }
        (NonFinite::NanOnly, NanEncoding::AllOnes) => (mag == p.exp_mask | p.man_mask, 0x7fc0_0000),
        (NonFinite::NanOnly, NanEncoding::NegativeZero) => (c == p.sign_mask, 0x7fc0_0000),
        (NonFinite::InfAtMax, NanEncoding::NegativeZero) => {
            let nan = c == p.sign_mask;
            (
                nan || mag == p.inf_mag,
                if nan { 0x7fc0_0000 } else { 0x7f80_0000 },
            )
        }
        (NonFinite::InfAtMax, _) => {
            let nan = mag == p.nan_code;
            (
                nan || mag == p.inf_mag,
                if nan { 0x7fc0_0000 } else { 0x7f80_0000 },
            )
        }
        _ => (false, 0),
    };
    let v = if special.0 { special.1 } else { v };
    v | (neg << 31)
}

/// Code of `F` (a named format) → float32 bits.
#[inline(always)]
pub(crate) fn dec_f32<F: Fmt>(c: u32) -> u32 {
    dec32::<F, false>(const { &Params::of(&F::F) }, c)
}

/// Code → float64 bits, for any format but float8_e8m0fnu: exact where the
/// values are float64s, otherwise rounded to nearest even (overflow to
/// ±inf, gradual underflow). NaN codes give the float32 NaN of [`dec32`]
/// widened (quiet bit set).
#[inline(always)]
pub(crate) fn dec64<Q: Kind>(p: &Params, c: u32) -> u64 {
    let c = c & p.code_mask;
    let neg = if Q::SIGNED { c >> p.sign_shift } else { 0 };
    let mag = c & !p.sign_mask;
    let e = (mag >> p.man_bits) as i32;
    let f = mag & p.man_mask;
    let normal = e != 0 || !Q::HAS_ZERO;
    let sig = if normal { f | (1 << p.man_bits) } else { f };
    let exp = if normal { e } else { 1 } - p.bias - p.man_bits as i32;
    // sig · 2^exp in two exact-then-rounding steps: the first factor keeps
    // the product normal and exact, the second rounds it once.
    let s1 = exp.clamp(-1000, 1000);
    let s2 = (exp - s1).clamp(-1000, 1000);
    let v = (sig as f64) * f64::from_bits(pow2_f64_bits(s1)) * f64::from_bits(pow2_f64_bits(s2));
    let v = v.to_bits();
    let (special, s) = match (Q::NON_FINITE, Q::NAN) {
        (NonFinite::Ieee, _) => {
            let is_special = (mag & p.exp_mask) == p.exp_mask;
            let s = if f == 0 {
                0x7ff0_0000_0000_0000
            } else {
                0x7ff8_0000_0000_0000
            };
            (is_special, s)
        }
        (NonFinite::NanOnly, NanEncoding::AllOnes) => {
            (mag == p.exp_mask | p.man_mask, 0x7ff8_0000_0000_0000)
        }
        (NonFinite::NanOnly, NanEncoding::NegativeZero) => {
            (c == p.sign_mask, 0x7ff8_0000_0000_0000)
        }
        (NonFinite::InfAtMax, NanEncoding::NegativeZero) => {
            let nan = c == p.sign_mask;
            let s = if nan {
                0x7ff8_0000_0000_0000
            } else {
                0x7ff0_0000_0000_0000
            };
            (nan || mag == p.inf_mag, s)
        }
        (NonFinite::InfAtMax, _) => {
            let nan = mag == p.nan_code;
            let s = if nan {
                0x7ff8_0000_0000_0000
            } else {
                0x7ff0_0000_0000_0000
            };
            (nan || mag == p.inf_mag, s)
        }
        _ => (false, 0),
    };
    let v = if special { s } else { v };
    v | ((neg as u64) << 63)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::P3109;

    /// float32 inputs around every binade edge and random bits.
    fn probes32() -> Vec<u32> {
        let mut v: Vec<u32> = (0..1u64 << 32).step_by(65_537).map(|b| b as u32).collect();
        for e in 0..256u32 {
            for m in [0u32, 1, 0x3f_ffff, 0x40_0000, 0x40_0001, 0x7f_ffff] {
                v.push((e << 23) | m);
                v.push((e << 23) | m | 0x8000_0000);
            }
        }
        v
    }

    fn check<Q: Kind>(p: &Params, name: &str) {
        for b in probes32() {
            assert_eq!(
                enc32::<Q, NearestEven, false>(p, b),
                enc32::<Q, NearestEvenShifted, false>(p, b),
                "{name} {b:#010x}"
            );
            assert_eq!(
                enc32::<Q, NearestEven, true>(p, b),
                enc32::<Q, NearestEvenShifted, true>(p, b),
                "{name} {b:#010x} saturating"
            );
            let d = (f32::from_bits(b) as f64).to_bits();
            for x in [d, d ^ 0x8_0000, d | 1] {
                assert_eq!(
                    enc64::<Q, NearestEven, false>(p, x),
                    enc64::<Q, NearestEvenShifted, false>(p, x),
                    "{name} {x:#018x}"
                );
            }
        }
    }

    /// The integer-shift rounding of the subnormal range (the route other
    /// rounding modes will take) gives the FPU's round-to-nearest-even bits.
    #[test]
    fn shifted_subnormal_rounding_matches_the_fpu() {
        macro_rules! named {
            ($($m:ident)*) => {$(
                if $m::F.man_bits != 7 || $m::F.exp_bits != 8 {
                    check::<$m>(&Params::of(&$m::F), $m::F.name);
                }
            )*};
        }
        named!(F16 E3M4 E4M3 E4M3FN E4M3FNUZ E4M3B11FNUZ E5M2 E5M2FNUZ F6E2M3 F6E3M2 F4E2M1);
        for m in P3109::all().filter(|m| m.format().fits_f32()) {
            let f = m.format();
            let p = Params::of(&f);
            match (m.is_signed(), m.is_extended()) {
                (true, true) => check::<K<3, 2, true, true>>(&p, f.name),
                (true, false) => check::<K<1, 2, true, true>>(&p, f.name),
                (false, true) => check::<K<3, 1, false, true>>(&p, f.name),
                (false, false) => check::<K<1, 1, false, true>>(&p, f.name),
            }
        }
    }
}
