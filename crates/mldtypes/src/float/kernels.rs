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
use crate::round::RoundMode;

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
    /// NaN inputs keep their sign and top payload bits with the quiet bit
    /// set, as hardware narrows float64 to float32 (the float32 target of
    /// the rounding kernels).
    const HW_NAN: bool = false;
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
    pub(crate) s32: u32,
    /// Subtracted from the shifted float32 bits to rebias the exponent.
    pub(crate) rebias32: u32,
    /// float32 magnitudes below this round as subnormals (magic addend).
    pub(crate) sub32: u32,
    /// The magic addend for subnormal targets.
    pub(crate) magic32: u32,
    /// Subnormal targets without the FPU: the significand of an input with
    /// biased exponent `e` is shifted right by `sub_shift32 − e`.
    pub(crate) sub_shift32: u32,
    /// XOR-ed into the kept code's parity (P = 1 formats with an odd
    /// rebias: the parity of the code, not of the float32 exponent).
    pub(crate) parity32: u32,
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
    /// [`enc32_det`] applies: a format with a zero whose subnormal quantum
    /// and half of it are normal float32s.
    pub(crate) det32: bool,
    /// Half the subnormal quantum, as float32 bits (when `det32`).
    half32: u32,
    /// float32's exponent range and bias (bfloat16): every finite float32,
    /// subnormals included, rounds at the same bit (see [`enc32_m_flat`]).
    pub(crate) flat32: bool,
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
            // 32-bit codes: float32 as the target of the rounding kernels.
            code_mask: if f.bits() >= 32 {
                u32::MAX
            } else {
                f.code_mask()
            },
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
            flat32: fits_f32 && emin == -126 && f.bias == 127 && m <= 22,
            det32: fits_f32 && f.has_zero && m <= 22 && emin - (m as i32) >= -125,
            half32: if emin - (m as i32) >= -125 && emin - (m as i32) <= 128 {
                pow2_f32_bits(emin - m as i32 - 1)
            } else {
                0
            },
            fits_f64,
            covers_f64,
            bias: f.bias,
            min_exp: emin,
        }
    }
}

/// IEEE binary16 with NumPy's NaN payload rule, as a run-time kind (the
/// rounding kernels' float16).
pub(crate) struct KF16;

impl Kind for KF16 {
    const NON_FINITE: NonFinite = NonFinite::Ieee;
    const NAN: NanEncoding = NanEncoding::Ieee;
    const SIGNED: bool = true;
    const HAS_ZERO: bool = true;
    const KEEP_PAYLOAD: bool = true;
}

/// IEEE binary32 as the target of the rounding kernels (from float64),
/// NaNs narrowed as hardware does.
pub(crate) struct B32;

impl Kind for B32 {
    const NON_FINITE: NonFinite = NonFinite::Ieee;
    const NAN: NanEncoding = NanEncoding::Ieee;
    const SIGNED: bool = true;
    const HAS_ZERO: bool = true;
    const HW_NAN: bool = true;
}

/// The kernels' parameters of float32 as a target (see `core::BINARY32`).
pub(crate) const BINARY32_PARAMS: Params = Params::of(&crate::float::core::BINARY32);

/// Loop-invariant parameters of a rounding mode of [`crate::round`] in the
/// element kernels ([`enc32_m`], [`enc64_m`], [`enc64_wide_m`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ModeParams {
    /// [`Det`]: 1 where non-zero dropped bits round a positive / negative
    /// magnitude up (toward +inf / −inf).
    up_pos: u32,
    up_neg: u32,
    /// [`Det`]: 1 for the round-to-nearest modes.
    near: u32,
    /// [`Det`]: 1 for ties away from zero (added instead of the parity).
    tie_away: u32,
    /// A finite overflow of a positive / negative value gives ±max (the
    /// directed modes).
    clamp_pos: bool,
    clamp_neg: bool,
    /// Saturation.
    sat: bool,
    /// Stochastic modes: the number of random bits.
    n: u32,
    /// [`StochRn`]: 1 for ties to odd.
    odd: u64,
    /// [`StochFast`]: the comparison's precision plus one (54), and the
    /// amount added before dropping `p1 − n` bits.
    p1: u32,
    fast_add: u64,
    /// [`enc32_det`]: all ones for the round-to-nearest modes, for ties
    /// away from zero, and where a positive / negative magnitude rounds up.
    near_m: u32,
    away_m: u32,
    up_pos_m: u32,
    up_neg_m: u32,
    /// Stochastic modes: `2^n − 1`, the largest random number.
    mask_n: u32,
    /// [`StochRn`] on float32 sources: 1 for ties to odd.
    odd32: u32,
    /// [`StochFast`] on float32 sources: 1 for `stochastic_fast` (half a
    /// random step added), 0 for `stochastic_fastest`.
    fast_half: u32,
}

impl ModeParams {
    /// The parameters of `mode` (`sr_bits` from 1 to 32 for the stochastic
    /// modes), for a source of precision `prec` (24 or 53 bits).
    pub(crate) const fn of(mode: RoundMode, saturate: bool, sr_bits: u32, prec: u32) -> ModeParams {
        let p1 = prec + 1;
        let k = p1.saturating_sub(sr_bits);
        ModeParams {
            up_pos: matches!(mode, RoundMode::TowardPositive) as u32,
            up_neg: matches!(mode, RoundMode::TowardNegative) as u32,
            near: matches!(mode, RoundMode::NearestEven | RoundMode::NearestAway) as u32,
            tie_away: matches!(mode, RoundMode::NearestAway) as u32,
            clamp_pos: mode.clamps(false),
            clamp_neg: mode.clamps(true),
            sat: saturate,
            n: sr_bits,
            odd: matches!(mode, RoundMode::StochasticOdd) as u64,
            p1,
            fast_add: if k == 0 {
                0
            } else if matches!(mode, RoundMode::StochasticFast) {
                1 + (1u64 << (k - 1))
            } else {
                1
            },
            near_m: 0u32
                .wrapping_sub(
                    matches!(mode, RoundMode::NearestEven | RoundMode::NearestAway) as u32,
                ),
            away_m: 0u32.wrapping_sub(matches!(mode, RoundMode::NearestAway) as u32),
            up_pos_m: 0u32.wrapping_sub(matches!(mode, RoundMode::TowardPositive) as u32),
            up_neg_m: 0u32.wrapping_sub(matches!(mode, RoundMode::TowardNegative) as u32),
            mask_n: if sr_bits >= 32 {
                u32::MAX
            } else {
                (1u32 << sr_bits).wrapping_sub(1)
            },
            odd32: matches!(mode, RoundMode::StochasticOdd) as u32,
            fast_half: matches!(mode, RoundMode::StochasticFast) as u32,
        }
    }

    /// The parameters of [`StochRn::away32`] and [`StochFast::away32`] for
    /// kernels written out by hand: the number of random bits `n`, the
    /// largest random number, 1 for ties to odd, and 1 for
    /// `stochastic_fast`'s half step.
    pub(crate) const fn stochastic32(&self) -> [u32; 4] {
        [self.n, self.mask_n, self.odd32, self.fast_half]
    }

    /// [`enc32_det`]'s increments for `s` dropped bits (`1 <= s <= 31`):
    /// added to a positive and to a negative magnitude before the dropped
    /// bits are cut, and 1 where the kept bits' parity is added as well
    /// (ties to even).
    pub(crate) const fn increments(&self, s: u32) -> [u32; 3] {
        let h = 1u32 << (s - 1);
        let near = self.near_m & (h - 1 + (self.away_m & 1));
        [
            near | (self.up_pos_m & (2 * h - 1)),
            near | (self.up_neg_m & (2 * h - 1)),
            self.near_m & !self.away_m & 1,
        ]
    }

    /// Whether a finite overflow of a value of sign `neg` clamps to ±max.
    #[inline(always)]
    fn clamps(&self, neg: u32) -> bool {
        if neg != 0 {
            self.clamp_neg
        } else {
            self.clamp_pos
        }
    }
}

/// How a rounding kernel decides to round a magnitude up ("away" from
/// zero): `d` holds the `s` dropped bits (`d < 2^s`; all of the significand
/// when `s` exceeds its width), `lsb` the parity of the code below, `neg`
/// the sign, `r` the element's random number.
pub(crate) trait Mode: 'static {
    /// Whether the mode reads random numbers.
    const RANDOM: bool;
    /// float32 sources (`d < 2^24`, `1 <= s <= 63`).
    fn away32(d: u32, s: u32, lsb: u32, neg: u32, r: u32, mp: &ModeParams) -> u32;
    /// float64 sources (`d < 2^53`, `1 <= s <= 127`).
    fn away64(d: u64, s: u32, lsb: u64, neg: u32, r: u32, mp: &ModeParams) -> u64;
}

/// Whether `dn + r ≥ 2^n` (`dn ≤ 2^n`, `r ≤ mask = 2^n − 1`), without
/// leaving 32 bits when `n` is 32.
#[inline(always)]
fn carries(dn: u32, r: u32, mask: u32) -> u32 {
    ((dn > mask) | (r > mask.wrapping_sub(dn))) as u32
}

/// The five deterministic modes, chosen by [`ModeParams`]' masks.
pub(crate) struct Det;

impl Mode for Det {
    const RANDOM: bool = false;
    #[inline(always)]
    fn away32(d: u32, s: u32, lsb: u32, neg: u32, _r: u32, mp: &ModeParams) -> u32 {
        let up = if neg != 0 { mp.up_neg } else { mp.up_pos };
        // Half the quantum; with `d < 2^24` no `s` above 31 changes the result.
        let h = 1u32 << (s.min(31) - 1);
        ((d != 0) as u32 & up) | (((d + (lsb | mp.tie_away)) > h) as u32 & mp.near)
    }
    #[inline(always)]
    fn away64(d: u64, s: u32, lsb: u64, neg: u32, _r: u32, mp: &ModeParams) -> u64 {
        let up = if neg != 0 { mp.up_neg } else { mp.up_pos } as u64;
        let h = 1u64 << (s.min(63) - 1);
        ((d != 0) as u64 & up) | (((d + (lsb | mp.tie_away as u64)) > h) as u64 & mp.near as u64)
    }
}

/// `stochastic` and `stochastic_odd`: the dropped fraction rounded to `n`
/// bits (ties to even or odd), plus the random number, carries out.
pub(crate) struct StochRn;

impl StochRn {
    #[inline(always)]
    fn away(d: u64, s: u32, r: u32, mp: &ModeParams) -> u64 {
        let n = mp.n;
        // s <= n: the fraction is exactly d · 2^(n − s).
        let exact = d << n.saturating_sub(s);
        // s > n: round off k = s − n bits (k above 63 leaves 0: d < 2^53).
        let k = s.saturating_sub(n).clamp(1, 63);
        let q = d >> k;
        let tie = (q & 1) ^ mp.odd;
        let rounded = (d + (1u64 << (k - 1)) - 1 + tie) >> k;
        let dn = if s <= n { exact } else { rounded };
        (dn + r as u64 >= 1u64 << n) as u64
    }
}

impl Mode for StochRn {
    const RANDOM: bool = true;
    /// [`StochRn::away`] in 32-bit lanes (`d < 2^24`): with `s ≤ n` the
    /// fraction `d · 2^(n − s)` is below `2^n`; with `s > n` the `k = s − n`
    /// bits rounded off leave 0 whenever `k ≥ 26`, so `k` is capped there.
    #[inline(always)]
    fn away32(d: u32, s: u32, _lsb: u32, _neg: u32, r: u32, mp: &ModeParams) -> u32 {
        let n = mp.n;
        let exact = d << n.saturating_sub(s).min(31);
        let k = s.saturating_sub(n).clamp(1, 26);
        let tie = ((d >> k) & 1) ^ mp.odd32;
        let rounded = (d + (1u32 << (k - 1)) - 1 + tie) >> k;
        let dn = if s <= n { exact } else { rounded };
        carries(dn, r, mp.mask_n)
    }
    #[inline(always)]
    fn away64(d: u64, s: u32, _lsb: u64, _neg: u32, r: u32, mp: &ModeParams) -> u64 {
        StochRn::away(d, s, r, mp)
    }
}

/// `stochastic_fast` and `stochastic_fastest`: gfloat's floating-point sum
/// `fl(δ + c) ≥ 1` as an integer comparison at the source's precision
/// (`p1 − 1` bits): with `D = ⌊δ · 2^p1⌋` it is
/// `⌊(D + fast_add) / 2^(p1 − n)⌋ + r ≥ 2^n` (exact for `n ≤ p1 − 2`).
pub(crate) struct StochFast;

impl StochFast {
    #[inline(always)]
    fn away(d: u64, s: u32, r: u32, mp: &ModeParams) -> u64 {
        let (p1, n) = (mp.p1, mp.n);
        let dq = if s <= p1 {
            d << (p1 - s)
        } else {
            d >> (s - p1).min(63)
        };
        let dn = (dq + mp.fast_add) >> (p1 - n);
        (dn + r as u64 >= 1u64 << n) as u64
    }
}

impl Mode for StochFast {
    const RANDOM: bool = true;
    /// [`StochFast::away`] in 32-bit lanes (`d < 2^24`, `n ≤ p1 − 22`).
    /// With `D = ⌊δ · 2^p1⌋`, the number compared is
    /// `dn = ⌊(D + 1 + h) / 2^(p1 − n)⌋` (`h` half a random step for
    /// `stochastic_fast`, 0 for `stochastic_fastest`):
    /// - `s ≤ n`: `D + 1 + h` stays below the next multiple of
    ///   `2^(p1 − n)`, so `dn = d · 2^(n − s)`;
    /// - `n < s < p1`: `D = d · 2^(p1 − s)` and the `1` is a fraction of
    ///   `2^(s − n)`'s unit below the floor, so `dn = ⌊(d + h') / 2^(s − n)⌋`
    ///   (`h' = 2^(s − n − 1)` or 0);
    /// - `s ≥ p1`: `D = ⌊d / 2^(s − p1)⌋` and `dn = ⌊(D + 1 + h) / 2^(p1 − n)⌋`.
    ///
    /// In the last two the divisor's exponent `j` is capped at 26: with
    /// numerators below `2^25`, any larger `j` leaves 0 as 26 does.
    #[inline(always)]
    fn away32(d: u32, s: u32, _lsb: u32, _neg: u32, r: u32, mp: &ModeParams) -> u32 {
        let (n, p1) = (mp.n, mp.p1);
        let exact = d << n.saturating_sub(s).min(31);
        let deep = s >= p1;
        let base = (d >> s.saturating_sub(p1).min(31)) + deep as u32;
        let j = s.min(p1).saturating_sub(n).clamp(1, 26);
        let cut = (base + (mp.fast_half << (j - 1))) >> j;
        let dn = if s <= n { exact } else { cut };
        carries(dn, r, mp.mask_n)
    }
    #[inline(always)]
    fn away64(d: u64, s: u32, _lsb: u64, _neg: u32, r: u32, mp: &ModeParams) -> u64 {
        StochFast::away(d, s, r, mp)
    }
}

/// Assembles the code of a rounded magnitude `mag` (may exceed the largest
/// code) under a rounding mode: [`finish`] with the mode's overflow rules
/// (saturation and the directed modes' clamp at run time), float8_e8m0fnu's
/// missing zero, and the float32 target's NaNs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn finish_m<Q: Kind>(
    p: &Params,
    mp: &ModeParams,
    mag: u32,
    neg: u32,
    is_nan: bool,
    is_inf: bool,
    is_zero: bool,
    nan_payload: u32,
) -> u32 {
    let over = mag > p.max_code;
    // Saturation, or a directed mode's finite overflow.
    let clamp = mp.sat | (!is_inf & mp.clamps(neg));
    // The overflow results of infinities and of finite values of either
    // sign are the same for the whole slice: two selects per element.
    let ov_if = |c: bool| {
        if c {
            p.max_code
        } else {
            overflow_mag::<Q, false>(p)
        }
    };
    let (ov_inf, ov_pos, ov_neg) = (
        ov_if(mp.sat),
        ov_if(mp.sat | mp.clamp_pos),
        ov_if(mp.sat | mp.clamp_neg),
    );
    let ov_fin = if neg != 0 { ov_neg } else { ov_pos };
    let ov = if is_inf { ov_inf } else { ov_fin };
    if !Q::HAS_ZERO {
        // float8_e8m0fnu: no zero, unsigned; zero, negative values and NaN
        // give the NaN, non-saturated overflow too.
        let m = if over { ov } else { mag };
        return if is_nan | (neg != 0) | is_zero {
            p.nan_code
        } else {
            m
        };
    }
    if !Q::SIGNED {
        let m = if over { ov } else { mag };
        let to_nan = is_nan || (neg != 0 && m != 0);
        return if to_nan { p.nan_code } else { m };
    }
    let sign = neg << p.sign_shift;
    if matches!(Q::NAN, NanEncoding::NegativeZero) {
        let inf = matches!(Q::NON_FINITE, NonFinite::InfAtMax);
        let m = if over && (clamp || inf) { ov } else { mag };
        let r = m | (sign & 0u32.wrapping_sub((m != 0) as u32));
        let to_nan = is_nan || (over && !clamp && !inf);
        return if to_nan { p.sign_mask } else { r };
    }
    let code = if over { ov } else { mag } | sign;
    let nan = if Q::HW_NAN {
        sign | p.exp_mask | (1 << (p.man_bits - 1)) | nan_payload
    } else if Q::KEEP_PAYLOAD {
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

/// The magnitude `a` (float32 bits without the sign) cut at the target's
/// quantum: the kept magnitude (the code rounded toward zero, may exceed
/// the largest code), the dropped bits `d` and their number `s` (`d` holds
/// all of the significand when `s` is 24 or more).
#[inline(always)]
pub(crate) fn split32(p: &Params, a: u32) -> (u32, u32, u32) {
    let sub = a < p.sub32;
    // Subnormal target: the significand over the quantum (garbage for
    // normal targets, which the select below drops).
    let e = (a >> 23).max(1);
    let sig = (a & 0x7f_ffff) | ((((a >> 23) != 0) as u32) << 23);
    let sh = p.sub_shift32.wrapping_sub(e).clamp(1, 63);
    // One shift for both: the significand and the distance to the
    // quantum (subnormal targets), or the bits and `s32` (normal ones).
    // Shifts from 31 on leave no kept bits of a significand below 2^24.
    let (x, s, rebias) = if sub {
        (sig, sh, 0)
    } else {
        (a, p.s32, p.rebias32)
    };
    let s31 = s.min(31);
    ((x >> s31).wrapping_sub(rebias), x & ((1u32 << s31) - 1), s)
}

/// Where the fields of a stochastic rounding table's entry lie (see
/// [`enc32_sr`]).
pub(crate) mod sr_entry {
    /// The code up (bits 8–15; the code down is bits 0–7).
    pub(crate) const UP: u32 = 8;
    /// `32 − s` for `s ≤ 32` dropped bits, else 32 (bits 16–21).
    pub(crate) const SHIFT: u32 = 16;
    /// The lanes the fraction form cannot take (bit 22).
    pub(crate) const RARE: u32 = 1 << 22;
    /// The significand's implicit bit (bit 23, where it stands in one).
    pub(crate) const IMPLICIT: u32 = 1 << 23;
    /// The number of dropped bits `s` (bits 24–29).
    pub(crate) const S: u32 = 24;
}

/// [`enc32_m`] of a stochastic mode through an entry `e` made for the
/// float32 `u` (the fields of [`sr_entry`]): the code of `u`'s kept
/// magnitude, of the next magnitude up (used only where the mode can round
/// up), and the number of dropped bits `s` of [`split32`]. The dropped bits
/// are cut from `u` by `s`, and the mode's decision picks the code up or
/// down: [`enc32_m`]'s bits. (The entry's other fields serve the AVX2
/// kernel of the same tables.)
#[inline(always)]
pub(crate) fn enc32_sr<M: Mode>(mp: &ModeParams, u: u32, r: u32, e: u32) -> u32 {
    let a = u & 0x7fff_ffff;
    let s = (e >> sr_entry::S) & 63;
    let sig = (a & 0x7f_ffff) | ((((a >> 23) != 0) as u32) << 23);
    let d = sig & ((1u32 << s.min(31)) - 1);
    if M::away32(d, s, 0, u >> 31, r, mp) != 0 {
        (e >> sr_entry::UP) & 0xff
    } else {
        e & 0xff
    }
}

/// float32 bits → code of a format whose values are float32s, rounded by
/// the mode `M` with parameters `mp`; `r` is the element's random number
/// (ignored by [`Det`]). Every range rounds by integer shifts (no FPU).
#[inline(always)]
pub(crate) fn enc32_m<Q: Kind, M: Mode>(p: &Params, mp: &ModeParams, u: u32, r: u32) -> u32 {
    let neg = u >> 31;
    let a = u & 0x7fff_ffff;
    let sub = a < p.sub32;
    let sn = p.s32;
    let (kept, d, s) = split32(p, a);
    // float8_e8m0fnu's codes below 2^-126 are one less than the multiple
    // of the quantum 2^-127 (and none is below 2^-127).
    let e8 = (!Q::HAS_ZERO && sub) as u32;
    let mag = kept + M::away32(d, s, (kept ^ e8) & 1, neg, r, mp);
    let mag = if e8 != 0 { mag.max(1) - 1 } else { mag };
    finish_m::<Q>(
        p,
        mp,
        mag,
        neg,
        a > 0x7f80_0000,
        a == 0x7f80_0000,
        a == 0,
        (a & 0x7f_ffff) >> sn,
    )
}

/// [`enc32_m`] for the deterministic modes ([`Det`]) into the formats of
/// [`Params::det32`], in the form of [`enc32`] (`astype`'s kernel):
/// - normal targets: a mode- and sign-dependent increment added to the
///   bits before the dropped ones are cut (`2^(s−1) − 1 + lsb` to nearest
///   even, `2^(s−1)` away from zero, `2^s − 1` where the magnitude rounds
///   up, 0 toward zero);
/// - subnormal targets: the FPU rounds the magnitude to a multiple of the
///   quantum (the magic addend, to nearest even), and the exact remainder
///   corrects that by one code: the comparison of the input's bits with
///   the rounded value's (`t − M`, exact) tells whether it rounded up or
///   down, and `|a − (t − M)|` (exact) equal to half the quantum a tie.
///   The remainder is read from the input's own bits, so a CPU flushing
///   subnormal inputs to zero still gives the right code.
///
/// Gives [`enc32_m`]'s bits (checked against the scalar path over float32
/// patterns in `tests/round_f32_sweep.rs`).
#[inline(always)]
pub(crate) fn enc32_det<Q: Kind>(p: &Params, mp: &ModeParams, u: u32) -> u32 {
    let neg = u >> 31;
    let a = u & 0x7fff_ffff;
    let s = p.s32;
    let negm = 0u32.wrapping_sub(neg);
    let up = (mp.up_pos_m & !negm) | (mp.up_neg_m & negm);
    let down = !(mp.near_m | up);
    // Normal targets.
    let h = 1u32 << (s - 1);
    let lsb = ((a >> s) ^ p.parity32) & 1;
    let inc = (mp.near_m & (h - 1 + (lsb | (mp.away_m & 1)))) | (up & (2 * h - 1));
    let cn = (a.wrapping_add(inc) >> s).wrapping_sub(p.rebias32);
    // Subnormal targets.
    let m = f32::from_bits(p.magic32);
    let t = f32::from_bits(a) + m;
    let q = (t - m).to_bits();
    let err = (f32::from_bits(a) - f32::from_bits(q)).to_bits() & 0x7fff_ffff;
    let tie = 0u32.wrapping_sub((err == p.half32) as u32);
    let below = 0u32.wrapping_sub((a > q) as u32);
    let above = 0u32.wrapping_sub((a < q) as u32);
    let cs = t
        .to_bits()
        .wrapping_sub(p.magic32)
        .wrapping_add(below & (up | (tie & mp.away_m)) & 1)
        .wrapping_sub(above & down & 1);
    let mag = if a < p.sub32 { cs } else { cn };
    finish_m::<Q>(
        p,
        mp,
        mag,
        neg,
        a > 0x7f80_0000,
        a == 0x7f80_0000,
        a == 0,
        (a & 0x7f_ffff) >> s,
    )
}

/// [`enc32_m`] for the formats of [`Params::flat32`] (bfloat16): with
/// float32's bias and smallest normal exponent, a float32 subnormal's
/// significand lies at the same place as a normal number's bits, so every
/// finite input keeps its top bits above the same `s32` and the shift is
/// the same for the whole slice. Gives [`enc32_m`]'s bits.
#[inline(always)]
pub(crate) fn enc32_m_flat<Q: Kind, M: Mode>(p: &Params, mp: &ModeParams, u: u32, r: u32) -> u32 {
    let neg = u >> 31;
    let a = u & 0x7fff_ffff;
    let s = p.s32;
    let kept = a >> s;
    let d = a & ((1u32 << s) - 1);
    let mag = kept + M::away32(d, s, kept & 1, neg, r, mp);
    finish_m::<Q>(
        p,
        mp,
        mag,
        neg,
        a > 0x7f80_0000,
        a == 0x7f80_0000,
        a == 0,
        (a & 0x7f_ffff) >> s,
    )
}

/// float64 bits → code of a format whose values are float64s
/// ([`Params::fits_f64`]; float32 as well, see [`B32`]), rounded once by
/// the mode `M`.
#[inline(always)]
pub(crate) fn enc64_m<Q: Kind, M: Mode>(p: &Params, mp: &ModeParams, u: u64, r: u32) -> u32 {
    let neg = (u >> 63) as u32;
    let a = u & 0x7fff_ffff_ffff_ffff;
    let sub = a < p.sub64;
    let sn = p.s64;
    let kept_n = (a >> sn).wrapping_sub(p.rebias64);
    let d_n = a & ((1u64 << sn) - 1);
    let e = (a >> 52).max(1);
    let sig = (a & ((1u64 << 52) - 1)) | (((a >> 52) != 0) as u64) << 52;
    let sh = (p.sub_shift64 as u64).wrapping_sub(e).clamp(1, 127) as u32;
    let kept_s = sig >> sh.min(63);
    let d_s = sig & ((1u64 << sh.min(63)) - 1);
    let (kept, d, s) = if sub {
        (kept_s, d_s, sh)
    } else {
        (kept_n, d_n, sn)
    };
    let e8 = (!Q::HAS_ZERO && sub) as u64;
    let mag = kept + M::away64(d, s, (kept ^ e8) & 1, neg, r, mp);
    let mag = if e8 != 0 { mag.max(1) - 1 } else { mag };
    // Saturate the 64-bit magnitude into 32 bits while keeping "> max_code".
    let mag = mag.min(0xffff_ffff) as u32;
    finish_m::<Q>(
        p,
        mp,
        mag,
        neg,
        a > 0x7ff0_0000_0000_0000,
        a == 0x7ff0_0000_0000_0000,
        a == 0,
        ((a & ((1u64 << 52) - 1)) >> sn) as u32,
    )
}

/// float64 bits → code of a format that covers float64
/// ([`Params::covers_f64`]), rounded by the mode `M`: every finite value
/// rounds in the normal range, float64 subnormals after normalization.
#[inline(always)]
pub(crate) fn enc64_wide_m<Q: Kind, M: Mode>(p: &Params, mp: &ModeParams, u: u64, r: u32) -> u32 {
    let neg = (u >> 63) as u32;
    let a = u & 0x7fff_ffff_ffff_ffff;
    let sub = a < 0x0010_0000_0000_0000;
    let an = if sub {
        (f64::from_bits(a | 0x4330_0000_0000_0000) - 4503599627370496.0).to_bits()
    } else {
        a
    };
    let rebias = if sub { p.wide_rebias64 } else { p.rebias64 };
    let sn = p.s64;
    let kept = (an >> sn).wrapping_sub(rebias);
    let d = an & ((1u64 << sn) - 1);
    let mag = kept + M::away64(d, sn, kept & 1, neg, r, mp);
    let is_inf = a == 0x7ff0_0000_0000_0000;
    let mag = if a == 0 {
        0
    } else if is_inf {
        u32::MAX
    } else {
        mag.min(0xffff_ffff) as u32
    };
    finish_m::<Q>(
        p,
        mp,
        mag,
        neg,
        a > 0x7ff0_0000_0000_0000,
        is_inf,
        a == 0,
        0,
    )
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
