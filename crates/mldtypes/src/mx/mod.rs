//! Block-scaled formats: the OCP Microscaling (MX) formats and NVIDIA's NVFP4.
//!
//! # OCP MX (OCP Microscaling Formats (MX) Specification v1.0)
//!
//! An MX block (§5) is `k = 32` consecutive elements sharing one scale `X`,
//! an E8M0 power of two (§5.4.1: `float8_e8m0fnu`, code `e` is `2^(e−127)`,
//! `0xFF` is NaN). The value of element `i` is `X · P_i` (§5.2). The element
//! formats are those of §5.3: FP8 E4M3 and E5M2 (§5.3.1, here
//! `float8_e4m3fn` / `float8_e5m2`), FP6 E3M2 and E2M3 (§5.3.2), FP4 E2M1
//! (§5.3.3) and INT8 (§5.3.4: two's complement with an implicit scale of
//! 2^−6, codes −128…127, values −2 … 127/64).
//!
//! Quantization follows §6.3 (conversion from vectors of scalars): with
//! `amax` the largest magnitude of the block,
//! `X = 2^(floor(log2(amax)) − emax_elem)` where `emax_elem` is the exponent
//! of the element format's largest normal number (8, 15, 4, 2, 2 and 0 for
//! MXINT8), clamped to E8M0's range 2^−127 … 2^127; each element is `V / X`
//! rounded to nearest, ties to even, and saturated to the element format's
//! finite range ([`ScaleRule::Floor`], the specification's rule, can clip:
//! `V / X` may reach `2^(emax_elem+1)`, beyond the largest element).
//! [`ScaleRule::Ceil`] uses `X = 2^ceil(log2(amax / max_elem))`, the smallest
//! power of two that never clips. Values that round to zero keep their sign
//! (`−0` codes in the float element formats). A block of zeros gets scale
//! code `0x00`; a block holding a NaN or an infinity gets scale code `0xFF`
//! (NaN, §5.4.1: the whole block reads back as NaN) and zero elements.
//!
//! Every element is the correctly rounded value of `V / X` (the quotient is
//! exact in `f64` because `X` is a power of two and `V` at most 53 bits);
//! dequantization (`X · P_i`) is exact in `f64` and rounded once to the output
//! type.
//!
//! Storage (the layout of the gpt-oss checkpoints as `transformers` loads
//! them): per block, the element codes packed least-significant-bit first
//! ([`crate::cast::pack`]: two FP4 per byte, four FP6 in three bytes, one
//! byte per FP8 / INT8 element), `32 · bits / 8` bytes; and one E8M0 scale
//! byte.
//!
//! # NVFP4
//!
//! NVIDIA's 4-bit format (as written by TensorRT Model Optimizer):
//! `float4_e2m1fn` elements in blocks of 16 with a `float8_e4m3fn` scale per
//! block and a float32 scale `s2` per tensor: `s2 = amax / (6 · 448)` (1 for
//! an all-zero tensor), block scale `e4m3(block_amax / (6 · s2))` (saturated
//! to 448, and at least 2^-9, the smallest float8_e4m3fn value), element
//! `e2m1(V / (block_scale · s2))` saturated to ±6. Each of these is the
//! correctly rounded result of the exact quotient (one rounding; no float32
//! intermediate). A block whose scale would round to zero keeps the scale
//! 2^-9 (its elements are quantized with it, not flushed), and an all-zero
//! block gets the scale 1.0: ModelOpt 0.47's conventions
//! (`_cast_per_block_scale_to_fp8` clamps to `[2^-9, 448]`, and a zero block
//! scale becomes 1.0), so no block scale is zero. Loaders multiply by the
//! block scale (vLLM's Marlin and CUTLASS kernels, TensorRT-LLM,
//! transformers' FP8 dequantization of FP4 experts), which a zero scale
//! would also have survived; the clamp keeps tiny blocks' values instead of
//! flushing them.
//! Dequantization is the exact product `e2m1 · e4m3 · s2` rounded once.
//!
//! # FP8 with scales
//!
//! [`fp8_quantize`]: `float8_e4m3fn` elements `e4m3(V / s)` with a scale `s`
//! per segment of the input (a tensor, a row, a row's part of a 128 × 128
//! block), each the correctly rounded quotient (one rounding), saturated to
//! ±448; [`fp8_scale`] gives `s = amax / 448` rounded once to the scale's
//! dtype. Dequantization is the exact product `e4m3 · s`.
//!
//! # Kernels
//!
//! Quantization runs on the [`Path`] the cast kernels use (detected once at
//! run time, or forced with [`crate::cast::set_path`]; [`quantize_on`] and
//! [`nvfp4_quantize_on`] take one explicitly). The vector paths quantize MX
//! blocks from float32 and NVFP4 blocks from float32 or float64 a block at a
//! time: MX scales from the integer maximum of the magnitudes' bit patterns,
//! elements by an exact power-of-two scaling and the saturating float32 →
//! element conversion of [`crate::cast`]; NVFP4 by comparing every value with
//! rounding boundaries whose products are exact in float64. [`Path::Scalar`]
//! is the reference: each element in `f64`, the NVFP4 block scale by exact
//! integer division. Every path gives the same bytes and counts.
//!
//! # Examples
//!
//! ```
//! use mldtypes::mx::{self, MxFormat, ScaleRule};
//! let mut x = [0.0f32; 32];
//! x[0] = 1.0;
//! x[1] = -0.3;
//! x[2] = 5.0;
//! let (mut blocks, mut scales) = ([0u8; 16], [0u8; 1]);
//! mx::quantize(&x, MxFormat::Fp4, ScaleRule::Floor, &mut blocks, &mut scales).unwrap();
//! assert_eq!(scales[0], 127); // amax 5 = 2^2 · 1.25, emax(FP4) = 2: X = 2^0
//! let mut y = [0.0f32; 32];
//! mx::dequantize(&blocks, &scales, MxFormat::Fp4, &mut y).unwrap();
//! assert_eq!(&y[..3], &[1.0, -0.5, 4.0]); // 5 rounds to 4 (ties to even), −0.3 to −0.5
//! ```

mod kernels;

pub(crate) use kernels::ErrLanes;

use crate::cast::kernels::E4M3FN as E4M3FnMarker;
use crate::cast::{self, pack, Path};
use crate::dtype::DType;
use crate::float::core::{decode_f64, encode_f64};
use crate::format::{Format, Overflow, FLOAT8_E4M3FN};
use crate::round::{RoundMode, Rounding, RoundingError};

/// Elements per MX block (OCP MX v1.0 §5, `k = 32`).
pub const MX_BLOCK: usize = 32;

/// Elements per NVFP4 block.
pub const NVFP4_BLOCK: usize = 16;

/// The E8M0 scale code of a block holding a NaN or an infinity (§5.4.1).
pub const E8M0_NAN: u8 = 0xFF;

/// An MX element format (OCP MX v1.0 §5.3, Table 1 of §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxFormat {
    /// MXFP8 with FP8 E4M3 elements (`float8_e4m3fn`, max 448, emax 8).
    Fp8E4M3,
    /// MXFP8 with FP8 E5M2 elements (`float8_e5m2`, max 57344, emax 15).
    Fp8E5M2,
    /// MXFP6 with FP6 E3M2 elements (`float6_e3m2fn`, max 28, emax 4).
    Fp6E3M2,
    /// MXFP6 with FP6 E2M3 elements (`float6_e2m3fn`, max 7.5, emax 2).
    Fp6E2M3,
    /// MXFP4 with FP4 E2M1 elements (`float4_e2m1fn`, max 6, emax 2).
    Fp4,
    /// MXINT8: 8-bit two's complement with 6 fraction bits (max 127/64, emax 0).
    Int8,
}

impl MxFormat {
    /// Every MX format, in the specification's order.
    pub const ALL: [MxFormat; 6] = [
        MxFormat::Fp8E4M3,
        MxFormat::Fp8E5M2,
        MxFormat::Fp6E3M2,
        MxFormat::Fp6E2M3,
        MxFormat::Fp4,
        MxFormat::Int8,
    ];

    /// The format's name: `mxfp8_e4m3`, `mxfp8_e5m2`, `mxfp6_e3m2`,
    /// `mxfp6_e2m3`, `mxfp4`, `mxint8`.
    ///
    /// ```
    /// assert_eq!(mldtypes::mx::MxFormat::Fp4.name(), "mxfp4");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MxFormat::Fp8E4M3 => "mxfp8_e4m3",
            MxFormat::Fp8E5M2 => "mxfp8_e5m2",
            MxFormat::Fp6E3M2 => "mxfp6_e3m2",
            MxFormat::Fp6E2M3 => "mxfp6_e2m3",
            MxFormat::Fp4 => "mxfp4",
            MxFormat::Int8 => "mxint8",
        }
    }

    /// The format named `s` (see [`MxFormat::name`]), if any.
    ///
    /// ```
    /// use mldtypes::mx::MxFormat;
    /// assert_eq!(MxFormat::from_name("mxfp6_e2m3"), Some(MxFormat::Fp6E2M3));
    /// assert_eq!(MxFormat::from_name("fp4"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<MxFormat> {
        MxFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The element dtype (`None` for MXINT8, whose elements are int8 codes
    /// with an implicit 2^−6).
    pub fn element(self) -> Option<DType> {
        match self {
            MxFormat::Fp8E4M3 => Some(DType::Float8E4M3FN),
            MxFormat::Fp8E5M2 => Some(DType::Float8E5M2),
            MxFormat::Fp6E3M2 => Some(DType::Float6E3M2FN),
            MxFormat::Fp6E2M3 => Some(DType::Float6E2M3FN),
            MxFormat::Fp4 => Some(DType::Float4E2M1FN),
            MxFormat::Int8 => None,
        }
    }

    /// Bits per element: 8, 8, 6, 6, 4, 8.
    pub fn bits(self) -> usize {
        match self {
            MxFormat::Fp6E3M2 | MxFormat::Fp6E2M3 => 6,
            MxFormat::Fp4 => 4,
            _ => 8,
        }
    }

    /// Bytes of one packed block of 32 elements: `32 · bits / 8`.
    pub fn block_bytes(self) -> usize {
        MX_BLOCK * self.bits() / 8
    }

    /// `emax_elem`: the exponent of the element format's largest normal
    /// number (§6.3): 8, 15, 4, 2, 2, 0.
    pub fn emax(self) -> i32 {
        match self {
            MxFormat::Fp8E4M3 => 8,
            MxFormat::Fp8E5M2 => 15,
            MxFormat::Fp6E3M2 => 4,
            MxFormat::Fp6E2M3 | MxFormat::Fp4 => 2,
            MxFormat::Int8 => 0,
        }
    }

    /// Mantissa (fraction) bits of the element format: 3, 2, 2, 3, 1, and 6
    /// for MXINT8 (whose values are `c / 64`).
    ///
    /// ```
    /// use mldtypes::mx::MxFormat;
    /// assert_eq!(MxFormat::Fp4.man_bits(), 1);
    /// ```
    pub fn man_bits(self) -> i32 {
        match self.element_format() {
            Some(f) => f.man_bits as i32,
            None => 6,
        }
    }

    /// The largest finite element value: 448, 57344, 28, 7.5, 6, 127/64.
    pub fn max_elem(self) -> f64 {
        match self.element_format() {
            Some(f) => f.max_finite(),
            None => 127.0 / 64.0,
        }
    }

    fn element_format(self) -> Option<Format> {
        self.element().and_then(|d| d.format())
    }
}

/// How the shared scale of an MX block is chosen.
///
/// `amax` is the largest magnitude of the block, `emax_elem` and `max_elem`
/// are [`MxFormat::emax`] and [`MxFormat::max_elem`]. `Even` and `Rceil` are
/// the `EVEN` and `RCEIL` members of torchao's `ScaleCalculationMode`
/// (torchao 0.18.0, `torchao/prototype/mx_formats/config.py`, computed by
/// `to_mx` and `_to_mx_rceil` in `torchao/prototype/mx_formats/mx_tensor.py`);
/// torchao's `FLOOR` and `CEIL` are this type's `Floor` and (for every finite
/// block) `Ceil`. Every rule clamps the exponent to E8M0's −127 … 127; a
/// block of zeros gets code `0x00` and a block holding a NaN or an infinity
/// code `0xFF` whatever the rule (torchao differs on infinities: see the
/// README's MX section).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ScaleRule {
    /// `X = 2^(floor(log2(amax)) − emax_elem)` (OCP MX v1.0 §6.3); the
    /// largest elements may clip to the element format's maximum.
    #[default]
    Floor,
    /// `X = 2^ceil(log2(amax / max_elem))`: never clips, at the cost of one
    /// bit of resolution for some blocks.
    Ceil,
    /// torchao's `EVEN`: `amax` is first rounded to the element format's
    /// mantissa width `m` (3, 2, 2, 3, 1 and 6 for MXINT8), ties away from
    /// zero, then [`ScaleRule::Floor`] applies. Equivalently
    /// `X = 2^(e + 1 − emax_elem)` when `amax / 2^e ≥ 2 − 2^−(m+1)` with
    /// `e = floor(log2(amax))`, else `2^(e − emax_elem)`. torchao adds
    /// `2^(22−m)` to the float32 bits of `amax` and keeps the exponent field,
    /// which is this rule for every float32 (subnormals give −127 after the
    /// clamp either way). The largest elements may still clip.
    Even,
    /// torchao's `RCEIL` (NVIDIA's `cvt.rp.satfinite.ue8m0x2.f32` applied to
    /// the descale, as in cuBLAS's "Computing scaling and conversion factors
    /// for FP8 with UE8M0 scales"): `d = amax / max_elem` rounded once to
    /// float32 (round to nearest even), then `X = 2^ceil(log2(d))` exactly,
    /// clamped to 2^−127 … 2^127 (satfinite). Differs from
    /// [`ScaleRule::Ceil`] only where the float32 rounding of `d` crosses a
    /// power of two. torchao's CPU fallback takes `ceil` of a float32
    /// `log2`, which can round `log2(d)` down to an integer for `d` just
    /// above a power of two; this rule follows the exact instruction instead.
    Rceil,
}

impl ScaleRule {
    /// Every rule: `floor`, `ceil`, `even`, `rceil`.
    pub const ALL: [ScaleRule; 4] = [
        ScaleRule::Floor,
        ScaleRule::Ceil,
        ScaleRule::Even,
        ScaleRule::Rceil,
    ];

    /// `floor`, `ceil`, `even` or `rceil` (the name recorded as
    /// `"scale_rule"` in checkpoint metadata).
    ///
    /// ```
    /// use mldtypes::mx::ScaleRule;
    /// assert_eq!(ScaleRule::Rceil.name(), "rceil");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ScaleRule::Floor => "floor",
            ScaleRule::Ceil => "ceil",
            ScaleRule::Even => "even",
            ScaleRule::Rceil => "rceil",
        }
    }

    /// The rule named `s` (see [`ScaleRule::name`]), if any.
    ///
    /// ```
    /// use mldtypes::mx::ScaleRule;
    /// assert_eq!(ScaleRule::from_name("even"), Some(ScaleRule::Even));
    /// assert_eq!(ScaleRule::from_name("EVEN"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<ScaleRule> {
        ScaleRule::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Whether the vectorized block kernels implement this rule (the others
    /// run the scalar reference on every path).
    fn has_kernel(self) -> bool {
        matches!(self, ScaleRule::Floor | ScaleRule::Ceil)
    }
}

/// Why a block quantization was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// The element count is not a multiple of the block size.
    NotWholeBlocks {
        /// Elements given.
        len: usize,
        /// The block size (32 or 16).
        block: usize,
    },
    /// An output or input buffer has the wrong length.
    BufferLength {
        /// Which buffer (`blocks`, `scales`, `out`).
        buffer: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A forced [`Path`] needs instructions this CPU lacks.
    PathUnavailable(Path),
    /// The NVFP4 tensor scale `s2` is not a positive finite float32 (its
    /// bits, as given).
    TensorScale {
        /// `s2.to_bits()`.
        bits: u32,
    },
    /// An FP8 scale is not positive and finite (its bits, as given).
    Fp8Scale {
        /// `scale.to_bits()`.
        bits: u64,
    },
    /// The element rounding of [`quantize_rounded`] was refused by
    /// [`Rounding::validate`] (random numbers missing, unused, of the wrong
    /// length or too large).
    Rounding(RoundingError),
    /// A mode other than `nearest_even` for MXINT8, whose elements are
    /// integers.
    IntegerRounding(RoundMode),
}

impl std::fmt::Display for BlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BlockError::NotWholeBlocks { len, block } => write!(
                f,
                "{len} elements are not a whole number of blocks of {block}"
            ),
            BlockError::BufferLength {
                buffer,
                expected,
                actual,
            } => write!(
                f,
                "the {buffer} buffer holds {actual} bytes or elements, {expected} are needed"
            ),
            BlockError::PathUnavailable(p) => {
                write!(f, "the {p} kernels need CPU features this machine lacks")
            }
            BlockError::TensorScale { bits } => write!(
                f,
                "the NVFP4 tensor scale {} is not a positive finite float32",
                f32::from_bits(*bits)
            ),
            BlockError::Fp8Scale { bits } => write!(
                f,
                "the FP8 scale {} is not positive and finite",
                f64::from_bits(*bits)
            ),
            BlockError::Rounding(e) => write!(f, "MX element rounding: {e}"),
            BlockError::IntegerRounding(m) => write!(
                f,
                "MXINT8 elements are integers: rounding {m} is not available, only nearest_even"
            ),
        }
    }
}

impl std::error::Error for BlockError {}

/// Counts of one quantization, for error statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCounts {
    /// Finite elements whose scaled value exceeded the element format's
    /// range and were saturated.
    pub clipped: u64,
    /// Blocks given scale code `0xFF` because they held a NaN or an infinity.
    pub nan_blocks: u64,
}

fn check_len(buffer: &'static str, expected: usize, actual: usize) -> Result<(), BlockError> {
    if expected == actual {
        Ok(())
    } else {
        Err(BlockError::BufferLength {
            buffer,
            expected,
            actual,
        })
    }
}

/// The unbiased binary exponent of a finite non-zero `x` (`floor(log2|x|)`),
/// exact for every f64 (f32 and f64 subnormals included).
fn ilogb(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let e = (bits >> 52) as i32;
    if e == 0 {
        // f64 subnormal: 2^-1074 · mantissa.
        63 - (bits.leading_zeros() as i32) - 1074
    } else {
        e - 1023
    }
}

/// `2^e` as f64 for `e` in −1074 … 1023.
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// The E8M0 scale exponent of a block whose largest magnitude is `amax`
/// (finite, non-zero), clamped to −127 … 127.
fn mx_scale_exp(amax: f64, fmt: MxFormat, rule: ScaleRule) -> i32 {
    let k = ilogb(amax) - fmt.emax();
    let k = match rule {
        ScaleRule::Floor => k,
        // amax / 2^k lies in [2^emax, 2^(emax+1)), as does max_elem: one
        // exact comparison decides ceil(log2(amax / max_elem)).
        ScaleRule::Ceil => {
            if amax * pow2(-k) <= fmt.max_elem() {
                k
            } else {
                k + 1
            }
        }
        // amax / 2^e in [1, 2) rounds up to 2 at m fraction bits exactly when
        // it reaches 2 − 2^−(m+1) (ties away from zero).
        ScaleRule::Even => {
            let e = ilogb(amax);
            let m = fmt.man_bits();
            if amax * pow2(-e) >= 2.0 - pow2(-(m + 1)) {
                k + 1
            } else {
                k
            }
        }
        ScaleRule::Rceil => {
            // The descale rounded once to float32; ceil(log2 d) exactly.
            let d = (amax as f32 / fmt.max_elem() as f32) as f64;
            if d == 0.0 {
                -127
            } else if d.is_infinite() {
                127
            } else {
                let e = ilogb(d);
                if d == pow2(e) {
                    e
                } else {
                    e + 1
                }
            }
        }
    };
    k.clamp(-127, 127)
}

/// Rounds `q` (exact) to an element code of `fmt`, saturating; returns the
/// code and whether it clipped.
fn encode_elem(fmt: MxFormat, q: f64) -> (u8, bool) {
    match fmt.element_format() {
        Some(f) => (
            encode_f64(&f, q, Overflow::Saturating) as u8,
            clips(&f, q.abs()),
        ),
        None => {
            let r = (q * 64.0).round_ties_even();
            let c = r.clamp(-128.0, 127.0);
            (c as i8 as u8, c != r)
        }
    }
}

/// Whether the magnitude `a` rounds (with an unbounded exponent) beyond the
/// largest finite value of `f`, i.e. saturating it changes the result.
fn clips(f: &Format, a: f64) -> bool {
    let t = f.max_finite() + pow2(f.max_exp() - f.man_bits as i32 - 1);
    a > t || (a == t && f.max_code() & 1 == 1)
}

/// The value of an element code.
fn decode_elem(fmt: MxFormat, code: u8) -> f64 {
    match fmt.element_format() {
        Some(f) => decode_f64(&f, code as u32),
        None => code as i8 as f64 / 64.0,
    }
}

/// A value type blocks can be quantized from: `f32` or `f64` (every value of
/// bfloat16 and float16 is exact in `f32`).
pub trait BlockSource: Copy + Send + Sync {
    /// The value, exactly.
    fn to_f64(self) -> f64;
    /// The slice as `f32`s, if it is one (the vectorized path).
    fn as_f32(s: &[Self]) -> Option<&[f32]>;
    /// The slice as `f64`s, if it is one (the vectorized NVFP4 path).
    fn as_f64(_: &[Self]) -> Option<&[f64]> {
        None
    }
}

impl BlockSource for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn as_f32(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
}

impl BlockSource for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn as_f32(_: &[f64]) -> Option<&[f32]> {
        None
    }
    fn as_f64(s: &[f64]) -> Option<&[f64]> {
        Some(s)
    }
}

/// [`quantize`] of whole blocks of float32 on a vector path: the block
/// kernels of the `kernels` module, picked per format, scale rule and
/// instruction set; with `STATS`, the error statistics go to `acc`.
fn quantize_f32_on<const STATS: bool>(
    path: Path,
    src: &[f32],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> BlockCounts {
    use kernels::{Int8Elem, E2M1, E2M3, E3M2, E4M3, E5M2};
    type K = unsafe fn(&[f32], &mut [u8], &mut [u8], &mut ErrLanes) -> BlockCounts;
    macro_rules! pick {
        ($m:ident) => {{
            use kernels::$m as m;
            let ceil = rule == ScaleRule::Ceil;
            match (fmt, ceil) {
                (MxFormat::Fp8E4M3, false) => m::mx_f32::<E4M3, false, STATS> as K,
                (MxFormat::Fp8E4M3, true) => m::mx_f32::<E4M3, true, STATS>,
                (MxFormat::Fp8E5M2, false) => m::mx_f32::<E5M2, false, STATS>,
                (MxFormat::Fp8E5M2, true) => m::mx_f32::<E5M2, true, STATS>,
                (MxFormat::Fp6E3M2, false) => m::mx_f32::<E3M2, false, STATS>,
                (MxFormat::Fp6E3M2, true) => m::mx_f32::<E3M2, true, STATS>,
                (MxFormat::Fp6E2M3, false) => m::mx_f32::<E2M3, false, STATS>,
                (MxFormat::Fp6E2M3, true) => m::mx_f32::<E2M3, true, STATS>,
                (MxFormat::Fp4, false) => m::mx_f32::<E2M1, false, STATS>,
                (MxFormat::Fp4, true) => m::mx_f32::<E2M1, true, STATS>,
                (MxFormat::Int8, false) => m::mx_f32::<Int8Elem, false, STATS>,
                (MxFormat::Int8, true) => m::mx_f32::<Int8Elem, true, STATS>,
            }
        }};
    }
    let k: K = match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => pick!(avx2),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => pick!(avx512),
        _ => pick!(portable),
    };
    // SAFETY: the caller checked that this CPU runs `path`.
    unsafe { k(src, blocks, scales, acc) }
}

/// Calls kernel `$f` compiled for `$path` (the portable one for
/// [`Path::Scalar`] and [`Path::Portable`]); unsafe: `$path` must be
/// available on this CPU.
macro_rules! on_path {
    ($path:expr, $f:ident($($arg:expr),*)) => {
        match $path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => kernels::avx2::$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => kernels::avx512::$f($($arg),*),
            _ => kernels::portable::$f($($arg),*),
        }
    };
}

/// The error statistics of plain conversion results `ys` against the
/// originals `xs` (equal lengths), added to `acc` (element `i` in lane
/// `i % 8`; see `ErrLanes::cast`), on the kernels of [`cast::path`].
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn cast_stats(xs: &[f32], ys: &[f32], thr: f64, tie: bool, acc: &mut ErrLanes) {
    cast_stats_on(cast::path(), xs, ys, thr, tie, acc)
}

/// [`cast_stats`] on `path` (available on this CPU; [`Path::Scalar`] runs
/// the portable kernel).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
fn cast_stats_on(path: Path, xs: &[f32], ys: &[f32], thr: f64, tie: bool, acc: &mut ErrLanes) {
    assert!(path.is_available(), "{path} kernels on this CPU");
    // SAFETY: `path` is available on this CPU.
    unsafe { on_path!(path, cast_stats(xs, ys, thr, tie, acc)) }
}

/// The largest magnitude of the finite values of `x` (0 if none), on the
/// kernels of [`cast::path`] (NVFP4's tensor scale).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn finite_amax(x: &[f32]) -> f32 {
    // SAFETY: `cast::path()` is available on this CPU.
    unsafe { on_path!(cast::path(), finite_amax(x)) }
}

/// The largest finite magnitude of each segment of `seg` elements of `x`
/// (the last may be shorter) into `out`, on the kernels of [`cast::path`]
/// (FP8's per-channel and per-block scales).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn segment_amax(x: &[f32], seg: usize, out: &mut [f32]) {
    // SAFETY: `cast::path()` is available on this CPU.
    unsafe { on_path!(cast::path(), segment_amax(x, seg, out)) }
}

/// The error statistics of exact dequantized values `ys` against the
/// originals `xs` (equal lengths), added to `acc` (see [`ErrLanes::exact`]).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn exact_stats(xs: &[f64], ys: &[f64], acc: &mut ErrLanes) {
    // SAFETY: `cast::path()` is available on this CPU.
    unsafe { on_path!(cast::path(), exact_stats(xs, ys, acc)) }
}

/// [`quantize`] of float32 on the kernels of [`cast::path`], adding the
/// error statistics of every element against its exact dequantized value to
/// `acc` (element `i` of `src` in lane `i % 8`), in the same pass.
///
/// # Errors
///
/// As [`quantize`].
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn quantize_stats(
    src: &[f32],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<BlockCounts, BlockError> {
    quantize_stats_on(cast::path(), src, fmt, rule, blocks, scales, acc)
}

/// [`quantize_stats`] on `path` ([`Path::Scalar`]: the reference quantizer,
/// then the dequantized values block by block).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
fn quantize_stats_on(
    path: Path,
    src: &[f32],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<BlockCounts, BlockError> {
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    if path != Path::Scalar && rule.has_kernel() {
        check_mx(src.len(), fmt, blocks, scales)?;
        return Ok(quantize_f32_on::<true>(
            path, src, fmt, rule, blocks, scales, acc,
        ));
    }
    // The reference: quantize, then dequantize block by block.
    let counts = quantize_on(path, src, fmt, rule, blocks, scales)?;
    let bb = fmt.block_bytes();
    let (mut x, mut y) = ([0f64; MX_BLOCK], [0f64; MX_BLOCK]);
    for ((v, b), s) in src
        .chunks_exact(MX_BLOCK)
        .zip(blocks.chunks_exact(bb))
        .zip(scales.iter())
    {
        dequantize_f64(b, std::slice::from_ref(s), fmt, &mut y)?;
        for (d, v) in x.iter_mut().zip(v) {
            *d = *v as f64;
        }
        exact_stats(&x, &y, acc);
    }
    Ok(counts)
}

/// Checks the lengths of an MX quantization of `n` elements.
fn check_mx(n: usize, fmt: MxFormat, blocks: &[u8], scales: &[u8]) -> Result<(), BlockError> {
    if !n.is_multiple_of(MX_BLOCK) {
        return Err(BlockError::NotWholeBlocks {
            len: n,
            block: MX_BLOCK,
        });
    }
    let nb = n / MX_BLOCK;
    check_len("blocks", nb * fmt.block_bytes(), blocks.len())?;
    check_len("scales", nb, scales.len())
}

/// The values of the 256 element codes of `fmt` (NaN for codes the format
/// does not use).
fn elem_table(fmt: MxFormat) -> [f64; 256] {
    let mut t = [f64::NAN; 256];
    let n = 1usize << fmt.bits();
    for (c, v) in t.iter_mut().enumerate().take(n) {
        *v = decode_elem(fmt, c as u8);
    }
    t
}

/// Quantizes `src` to MX blocks of 32 (OCP MX v1.0 §6.3; see the module
/// documentation for the rule and the layout).
///
/// `blocks` receives `src.len() / 32 · fmt.block_bytes()` bytes (element
/// codes packed least-significant-bit first), `scales` one E8M0 code per
/// block.
///
/// # Errors
///
/// [`BlockError::NotWholeBlocks`] if `src.len()` is not a multiple of 32;
/// [`BlockError::BufferLength`] if `blocks` or `scales` has the wrong length.
/// Nothing is written on error.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::{self, MxFormat, ScaleRule};
/// let mut x = [0.0f32; 32];
/// x[0] = 7.0; // floor rule: X = 2^(2 − 2) = 1, 7 clips to 6
/// let (mut b, mut s) = ([0u8; 16], [0u8]);
/// let counts = mx::quantize(&x, MxFormat::Fp4, ScaleRule::Floor, &mut b, &mut s).unwrap();
/// assert_eq!((s[0], b[0] & 0xf, counts.clipped), (127, 0x7, 1));
/// // The ceil rule picks X = 2^ceil(log2(7/6)) = 2: 7/2 = 3.5 rounds to 4.
/// mx::quantize(&x, MxFormat::Fp4, ScaleRule::Ceil, &mut b, &mut s).unwrap();
/// assert_eq!((s[0], b[0] & 0xf), (128, 0x6));
/// ```
pub fn quantize<T: BlockSource>(
    src: &[T],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
) -> Result<BlockCounts, BlockError> {
    quantize_on(cast::path(), src, fmt, rule, blocks, scales)
}

/// [`quantize`] on a given [`Path`] (for tests and benchmarks).
///
/// float32 input runs the vectorised block kernels on every path but
/// [`Path::Scalar`], which runs the reference: each element of the block
/// widened to `f64`, scaled exactly and rounded by the scalar conversions of
/// [`crate::float`] (float64 input always takes the reference, and so do the
/// scale rules [`ScaleRule::Even`] and [`ScaleRule::Rceil`], which have no
/// block kernel). Every path gives the same bytes and counts.
///
/// # Errors
///
/// As [`quantize`], and [`BlockError::PathUnavailable`] if this CPU cannot
/// run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::Path;
/// use mldtypes::mx::{self, MxFormat, ScaleRule};
/// let x: Vec<f32> = (0..64).map(|i| i as f32 / 7.0 - 4.0).collect();
/// let (mut b1, mut s1) = ([0u8; 48], [0u8; 2]);
/// let (mut b2, mut s2) = ([0u8; 48], [0u8; 2]);
/// mx::quantize_on(Path::Scalar, &x, MxFormat::Fp6E2M3, ScaleRule::Floor, &mut b1, &mut s1).unwrap();
/// mx::quantize_on(Path::Portable, &x, MxFormat::Fp6E2M3, ScaleRule::Floor, &mut b2, &mut s2).unwrap();
/// assert_eq!((b1, s1), (b2, s2));
/// ```
pub fn quantize_on<T: BlockSource>(
    path: Path,
    src: &[T],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
) -> Result<BlockCounts, BlockError> {
    check_mx(src.len(), fmt, blocks, scales)?;
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    if path != Path::Scalar && rule.has_kernel() {
        if let Some(x) = T::as_f32(src) {
            let mut acc = ErrLanes::default();
            return Ok(quantize_f32_on::<false>(
                path, x, fmt, rule, blocks, scales, &mut acc,
            ));
        }
    }
    quantize_scalar(src, fmt, rule, blocks, scales)
}

/// The reference block quantizer: one element at a time in `f64`.
fn quantize_scalar<T: BlockSource>(
    src: &[T],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
) -> Result<BlockCounts, BlockError> {
    quantize_blocks(src, fmt, rule, blocks, scales, |_, q| {
        Ok(encode_elem(fmt, q))
    })
}

/// The block loop of the reference quantizers: each block's scale by
/// `rule` (code 0 for an all-zero block, the NaN scale and zero elements
/// for a block holding a NaN or an infinity), then `enc(i, x_i / X)` for
/// element `i` of `src`, giving its code and whether it clipped.
fn quantize_blocks<T: BlockSource>(
    src: &[T],
    fmt: MxFormat,
    rule: ScaleRule,
    blocks: &mut [u8],
    scales: &mut [u8],
    mut enc: impl FnMut(usize, f64) -> Result<(u8, bool), BlockError>,
) -> Result<BlockCounts, BlockError> {
    let mut counts = BlockCounts::default();
    let mut codes = [0u8; MX_BLOCK];
    let packed = fmt.bits() < 8;
    for (b, block) in src.chunks_exact(MX_BLOCK).enumerate() {
        let mut amax = 0.0f64;
        let mut non_finite = false;
        for v in block {
            let a = v.to_f64().abs();
            non_finite |= !a.is_finite();
            amax = if a > amax { a } else { amax };
        }
        let out = &mut blocks[b * fmt.block_bytes()..(b + 1) * fmt.block_bytes()];
        if non_finite {
            scales[b] = E8M0_NAN;
            out.fill(0);
            counts.nan_blocks += 1;
            continue;
        }
        let k = if amax == 0.0 {
            0
        } else {
            mx_scale_exp(amax, fmt, rule)
        };
        scales[b] = if amax == 0.0 { 0 } else { (k + 127) as u8 };
        let inv = pow2(-k);
        for (j, (c, v)) in codes.iter_mut().zip(block).enumerate() {
            let (code, clipped) = enc(b * MX_BLOCK + j, v.to_f64() * inv)?;
            *c = code;
            counts.clipped += clipped as u64;
        }
        if packed {
            let d = fmt.element().expect("packed formats are floats");
            pack::pack(&codes, d, out).expect("a whole block packs");
        } else {
            out.copy_from_slice(&codes);
        }
    }
    Ok(counts)
}

/// [`quantize`] with the element rounding `r`: each block's scale as
/// `rule` computes it (the rounding does not change the scale), then each
/// element `x / 2^k` (exact) rounded to the element format with `r.mode`,
/// saturating (OCP MX v1.0 §6.3: elements never overflow). A stochastic
/// mode takes element `i`'s number from `r` ([`Rounding::number`]: the
/// explicit bits, or the seed's Philox4x32-10 number for position
/// `offset + i`, [`crate::round::seeded_bits`]), as gfloat's `srbits` rounds a value; `i` counts the
/// elements of `src` in order, so quantizing the pieces of a slice with
/// [`Rounding::part`] gives the bytes of quantizing the whole.
///
/// `RoundMode::NearestEven` without random numbers gives exactly
/// [`quantize`]'s bytes (it runs [`quantize`]); the other modes run the
/// reference quantizer (one element at a time in `f64`) on every path.
///
/// # Errors
///
/// As [`quantize`], [`BlockError::Rounding`] if `r` is refused by
/// [`Rounding::validate`] for `src.len()` elements, and
/// [`BlockError::IntegerRounding`] for a mode other than `nearest_even` into
/// [`MxFormat::Int8`].
///
/// # Examples
///
/// ```
/// use mldtypes::mx::{self, MxFormat, ScaleRule};
/// use mldtypes::round::{RoundMode, Rounding};
/// let mut x = [0.0f32; 32];
/// x[0] = 4.0; // the block's scale: 2^0 (emax of E2M1 is 2)
/// x[1] = 1.25; // between the E2M1 values 1.0 and 1.5
/// let (mut b, mut s) = ([0u8; 16], [0u8; 1]);
/// let up = Rounding::new(RoundMode::TowardPositive);
/// mx::quantize_rounded(&x, MxFormat::Fp4, ScaleRule::Floor, &up, &mut b, &mut s).unwrap();
/// assert_eq!((s[0], b[0]), (127, 0x36)); // elements 4.0 (code 6) and 1.5 (code 3)
/// let r = Rounding::new(RoundMode::Stochastic).with_seed(1, 16);
/// mx::quantize_rounded(&x, MxFormat::Fp4, ScaleRule::Floor, &r, &mut b, &mut s).unwrap();
/// assert!(b[0] == 0x26 || b[0] == 0x36);
/// ```
pub fn quantize_rounded<T: BlockSource>(
    src: &[T],
    fmt: MxFormat,
    rule: ScaleRule,
    r: &Rounding<'_>,
    blocks: &mut [u8],
    scales: &mut [u8],
) -> Result<BlockCounts, BlockError> {
    check_mx(src.len(), fmt, blocks, scales)?;
    r.validate(src.len()).map_err(BlockError::Rounding)?;
    if r.mode == RoundMode::NearestEven && r.random.sr_bits().is_none() {
        return quantize(src, fmt, rule, blocks, scales);
    }
    let Some(f) = fmt.element_format() else {
        return Err(BlockError::IntegerRounding(r.mode));
    };
    quantize_blocks(src, fmt, rule, blocks, scales, |i, q| {
        Ok((rounded_code(&f, q, r, i)?, clips(&f, q.abs())))
    })
}

/// Element `i`'s code: `q` rounded into `f` by `r`, saturating (one copy
/// for every quantizer and source type).
#[inline(never)]
fn rounded_code(f: &Format, q: f64, r: &Rounding<'_>, i: usize) -> Result<u8, BlockError> {
    let sr_bits = r.random.sr_bits().unwrap_or(0);
    crate::float::core::round_f64(f, q, r.mode, true, r.number(i), sr_bits)
        .map(|c| c as u8)
        .map_err(BlockError::Rounding)
}

/// Dequantizes MX blocks exactly into `f64` (`X · P_i`, OCP MX v1.0 §5.2;
/// scale code `0xFF` gives NaN for the whole block).
///
/// # Errors
///
/// [`BlockError::BufferLength`] unless `blocks` holds `scales.len()` blocks
/// and `out` `32 · scales.len()` elements.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::{self, MxFormat};
/// let mut out = [0.0f64; 32];
/// let mut blocks = [0u8; 32];
/// blocks[0] = 0x40; // MXINT8 code 64 = 1.0
/// mx::dequantize_f64(&blocks, &[130], MxFormat::Int8, &mut out).unwrap();
/// assert_eq!(out[0], 8.0);
/// ```
pub fn dequantize_f64(
    blocks: &[u8],
    scales: &[u8],
    fmt: MxFormat,
    out: &mut [f64],
) -> Result<(), BlockError> {
    let nb = scales.len();
    check_len("blocks", nb * fmt.block_bytes(), blocks.len())?;
    check_len("out", nb * MX_BLOCK, out.len())?;
    let table = elem_table(fmt);
    let bb = fmt.block_bytes();
    for ((o, inb), &sc) in out
        .chunks_exact_mut(MX_BLOCK)
        .zip(blocks.chunks_exact(bb))
        .zip(scales)
    {
        if sc == E8M0_NAN {
            o.fill(f64::NAN);
            continue;
        }
        let x = pow2(sc as i32 - 127);
        // Codes unpacked in place, least-significant bits first.
        match fmt.bits() {
            8 => {
                for (y, c) in o.iter_mut().zip(inb) {
                    *y = table[*c as usize] * x;
                }
            }
            6 => {
                for (y, c) in o.chunks_exact_mut(4).zip(inb.chunks_exact(3)) {
                    let w = c[0] as usize | (c[1] as usize) << 8 | (c[2] as usize) << 16;
                    y[0] = table[w & 0x3f] * x;
                    y[1] = table[(w >> 6) & 0x3f] * x;
                    y[2] = table[(w >> 12) & 0x3f] * x;
                    y[3] = table[w >> 18] * x;
                }
            }
            _ => {
                for (y, c) in o.chunks_exact_mut(2).zip(inb) {
                    y[0] = table[(c & 0xf) as usize] * x;
                    y[1] = table[(c >> 4) as usize] * x;
                }
            }
        }
    }
    Ok(())
}

/// [`dequantize_f64`] rounded once to `f32` (round-to-nearest-even).
///
/// # Errors
///
/// As [`dequantize_f64`].
pub fn dequantize(
    blocks: &[u8],
    scales: &[u8],
    fmt: MxFormat,
    out: &mut [f32],
) -> Result<(), BlockError> {
    check_len("out", scales.len() * MX_BLOCK, out.len())?;
    rounded_to_f32(out, |tmp| dequantize_f64(blocks, scales, fmt, tmp))
}

/// Runs `dequantize` into a float64 buffer of `out`'s length, then rounds
/// each value once to `out` (round-to-nearest-even).
fn rounded_to_f32(
    out: &mut [f32],
    dequantize: impl FnOnce(&mut [f64]) -> Result<(), BlockError>,
) -> Result<(), BlockError> {
    let mut tmp = vec![0.0f64; out.len()];
    dequantize(&mut tmp)?;
    for (y, v) in out.iter_mut().zip(&tmp) {
        *y = *v as f32;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Exact rational rounding (NVFP4)
// ---------------------------------------------------------------------------

/// `num / den · 2^exp` (num, den > 0) rounded to odd at 53 bits: exact when
/// the quotient fits, otherwise the truncated quotient with its last bit set.
/// Rounding this once more to any format of at most 51 bits of precision
/// gives the correctly rounded quotient (rounding to odd then to nearest is
/// a single rounding).
fn ratio_to_odd(num: u64, den: u64, exp: i32) -> f64 {
    debug_assert!(num > 0 && den > 0 && num < 1 << 62 && den < 1 << 62);
    // Scale num so the quotient has 54..=55 significant bits.
    let shift = 54 + (64 - den.leading_zeros() as i32) - (64 - num.leading_zeros() as i32);
    let shift = shift.max(0);
    let n = (num as u128) << shift;
    let (mut q, r) = (n / den as u128, n % den as u128);
    let mut sticky = r != 0;
    let mut e = exp - shift;
    while q >= 1 << 53 {
        sticky |= q & 1 == 1;
        q >>= 1;
        e += 1;
    }
    let q = (q as u64) | sticky as u64;
    // q < 2^53 and e within f64's range for every use here.
    (q as f64) * pow2_wide(e)
}

/// `2^e` for `e` possibly below f64's subnormal range in intermediate use
/// (split in two exact steps).
fn pow2_wide(e: i32) -> f64 {
    if e < -1000 {
        pow2(e + 600) * pow2(-600)
    } else if e > 1000 {
        pow2(e - 600) * pow2(600)
    } else {
        pow2(e)
    }
}

/// A finite non-zero `|x|` as `m · 2^e` with an integer `0 < m < 2^53`.
fn split(x: f64) -> (u64, i32) {
    let bits = x.abs().to_bits();
    let e = (bits >> 52) as i32;
    let m = bits & ((1 << 52) - 1);
    if e == 0 {
        (m, -1074)
    } else {
        (m | 1 << 52, e - 1075)
    }
}

/// The correctly rounded `a / b` for finite positive `a`, `b` given as exact
/// `f64`s, as an exact-or-round-to-odd `f64` (see [`ratio_to_odd`]).
fn div_to_odd(a: f64, b: f64) -> f64 {
    let (ma, ea) = split(a);
    let (mb, eb) = split(b);
    ratio_to_odd(ma, mb, ea - eb)
}

/// NVFP4's per-tensor scale `s2 = amax / (6 · 448)`, correctly rounded to
/// float32 (1 when `amax` is zero or not finite).
///
/// ```
/// use mldtypes::mx::nvfp4_tensor_scale;
/// assert_eq!(nvfp4_tensor_scale(2688.0), 1.0);
/// assert_eq!(nvfp4_tensor_scale(0.0), 1.0);
/// // 1 / 2688 correctly rounded (a float32 division double-rounds nothing
/// // here, but the exact rule holds for every amax).
/// assert_eq!(nvfp4_tensor_scale(1.0), (1.0f64 / 2688.0) as f32);
/// ```
pub fn nvfp4_tensor_scale(amax: f64) -> f32 {
    if amax == 0.0 || !amax.is_finite() {
        return 1.0;
    }
    let (m, e) = split(amax);
    // amax / 2688 = m / 21 · 2^(e − 7); round to odd, then once to f32.
    let s = ratio_to_odd(m, 21, e - 7) as f32;
    if s == 0.0 {
        // amax below 2688 · 2^-150: the smallest positive scale.
        f32::from_bits(1)
    } else {
        s
    }
}

/// Quantizes `src` to NVFP4 with per-tensor scale `s2` (from
/// [`nvfp4_tensor_scale`] of the whole tensor's amax).
///
/// `packed` receives `src.len() / 2` bytes (two `float4_e2m1fn` codes per
/// byte, the first in the low nibble), `scales` one `float8_e4m3fn` code
/// per block of 16. Returns the number of clipped elements (those whose
/// scaled value exceeded ±6). A block holding a NaN or an infinity gets the
/// NaN block scale `0x7F` and zero elements.
///
/// # Errors
///
/// [`BlockError::NotWholeBlocks`] if `src.len()` is not a multiple of 16;
/// [`BlockError::BufferLength`] for a wrongly sized output;
/// [`BlockError::TensorScale`] unless `s2` is positive and finite.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::{nvfp4_quantize, nvfp4_dequantize, nvfp4_tensor_scale};
/// let mut x = [0.0f32; 16];
/// x[0] = 2688.0;
/// x[1] = 100.0;
/// let s2 = nvfp4_tensor_scale(2688.0); // 1
/// let (mut p, mut s) = ([0u8; 8], [0u8; 1]);
/// nvfp4_quantize(&x, s2, &mut p, &mut s).unwrap();
/// assert_eq!(s[0], 0x7e); // e4m3(2688 / 6) = 448
/// let mut y = [0.0f32; 16];
/// nvfp4_dequantize(&p, &s, s2, &mut y).unwrap();
/// assert_eq!(&y[..2], &[2688.0, 0.0]); // 100 / 448 rounds to 0
/// ```
pub fn nvfp4_quantize<T: BlockSource>(
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
) -> Result<u64, BlockError> {
    nvfp4_quantize_on(cast::path(), src, s2, packed, scales)
}

/// [`nvfp4_quantize`] on a given [`Path`] (for tests and benchmarks):
/// [`Path::Scalar`] runs the reference (exact integer division for the block
/// scale, one float64 division with an exact residual per element), every
/// other path the vectorised block kernels (see the module documentation);
/// the results are the same bits.
///
/// # Errors
///
/// As [`nvfp4_quantize`], and [`BlockError::PathUnavailable`] if this CPU
/// cannot run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::Path;
/// use mldtypes::mx::nvfp4_quantize_on;
/// let x: Vec<f32> = (0..32).map(|i| (i as f32 - 9.5) * 0.37).collect();
/// let (mut p1, mut s1) = ([0u8; 16], [0u8; 2]);
/// let (mut p2, mut s2) = ([0u8; 16], [0u8; 2]);
/// nvfp4_quantize_on(Path::Scalar, &x, 0.01, &mut p1, &mut s1).unwrap();
/// nvfp4_quantize_on(Path::Portable, &x, 0.01, &mut p2, &mut s2).unwrap();
/// assert_eq!((p1, s1), (p2, s2));
/// ```
pub fn nvfp4_quantize_on<T: BlockSource>(
    path: Path,
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
) -> Result<u64, BlockError> {
    check_nvfp4(src.len(), s2, packed, scales)?;
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    if path == Path::Scalar {
        return Ok(nvfp4_quantize_scalar(src, s2, packed, scales));
    }
    Ok(nvfp4_vector::<T, false>(
        path,
        src,
        s2,
        packed,
        scales,
        &mut ErrLanes::default(),
    ))
}

/// NVFP4 quantization on the vector kernels of `path` (available, not
/// [`Path::Scalar`]; lengths checked); with `STATS`, the error statistics go
/// to `acc`.
fn nvfp4_vector<T: BlockSource, const STATS: bool>(
    path: Path,
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> u64 {
    macro_rules! run {
        ($m:ident) => {{
            use kernels::$m as m;
            // SAFETY: `path` is available on this CPU (checked by callers).
            unsafe {
                if let Some(x) = T::as_f32(src) {
                    m::nvfp4::<f32, STATS>(x, s2, packed, scales, acc)
                } else if let Some(x) = T::as_f64(src) {
                    m::nvfp4::<f64, STATS>(x, s2, packed, scales, acc)
                } else {
                    unreachable!("BlockSource is f32 or f64")
                }
            }
        }};
    }
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => run!(avx2),
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => run!(avx512),
        _ => run!(portable),
    }
}

/// [`nvfp4_quantize`] on the kernels of [`cast::path`], adding the error
/// statistics of every element against its exact dequantized value to `acc`
/// (element `i` of `src` in lane `i % 8`), in the same pass.
///
/// # Errors
///
/// As [`nvfp4_quantize`].
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn nvfp4_quantize_stats<T: BlockSource>(
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<u64, BlockError> {
    nvfp4_quantize_stats_on(cast::path(), src, s2, packed, scales, acc)
}

/// [`nvfp4_quantize_stats`] on `path` ([`Path::Scalar`]: the reference
/// quantizer, then the dequantized values block by block).
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
fn nvfp4_quantize_stats_on<T: BlockSource>(
    path: Path,
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<u64, BlockError> {
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    if path == Path::Scalar {
        // The reference: quantize, then dequantize block by block.
        let clipped = nvfp4_quantize_on(path, src, s2, packed, scales)?;
        let (mut x, mut y) = ([0f64; NVFP4_BLOCK], [0f64; NVFP4_BLOCK]);
        for ((v, p), s) in src
            .chunks_exact(NVFP4_BLOCK)
            .zip(packed.chunks_exact(NVFP4_BLOCK / 2))
            .zip(scales.iter())
        {
            nvfp4_dequantize_f64(p, std::slice::from_ref(s), s2, &mut y)?;
            for (d, v) in x.iter_mut().zip(v) {
                *d = v.to_f64();
            }
            exact_stats(&x, &y, acc);
        }
        return Ok(clipped);
    }
    check_nvfp4(src.len(), s2, packed, scales)?;
    Ok(nvfp4_vector::<T, true>(path, src, s2, packed, scales, acc))
}

/// Checks the lengths and the tensor scale of an NVFP4 quantization of `n`
/// elements.
fn check_nvfp4(n: usize, s2: f32, packed: &[u8], scales: &[u8]) -> Result<(), BlockError> {
    if !n.is_multiple_of(NVFP4_BLOCK) {
        return Err(BlockError::NotWholeBlocks {
            len: n,
            block: NVFP4_BLOCK,
        });
    }
    check_len("blocks", n / 2, packed.len())?;
    check_len("scales", n / NVFP4_BLOCK, scales.len())?;
    if !(s2 > 0.0 && s2.is_finite()) {
        return Err(BlockError::TensorScale { bits: s2.to_bits() });
    }
    Ok(())
}

/// The NVFP4 block scale code of an all-zero block: 1.0, as ModelOpt
/// writes it.
pub(crate) const NVFP4_ZERO_BLOCK_SCALE: u32 = 0x38;

/// The NVFP4 block scale code of a block of largest magnitude `amax`
/// (positive finite) for `d6 = 6 · s2`: the exact quotient rounded once to
/// float8_e4m3fn, saturated (before the clamp to code 1).
fn nvfp4_block_scale_exact(amax: f64, d6: f64) -> u32 {
    encode_f64(&FLOAT8_E4M3FN, div_to_odd(amax, d6), Overflow::Saturating)
}

/// The reference NVFP4 quantizer, one element at a time.
fn nvfp4_quantize_scalar<T: BlockSource>(
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
) -> u64 {
    let rne = |_: usize, x: f64, d: f64| -> Result<(u8, bool), BlockError> {
        let (code, clip) = e2m1_of_quotient(x.abs(), d);
        Ok((code | if x < 0.0 { 0x8 } else { 0 }, clip))
    };
    nvfp4_blocks(src, s2, packed, scales, rne).expect("round to nearest even cannot fail")
}

/// The NVFP4 block loop of the reference quantizers: each block's scale
/// (NaN scale `0x7F` and zero elements for a block holding a NaN or an
/// infinity), zeros kept with their sign, and `elem(i, x, d)` giving the
/// signed float4_e2m1fn code of element `i` (finite, non-zero `x`) for the
/// block's divisor `d = e4m3 · s2` and whether it clipped. Returns the
/// number that clipped.
fn nvfp4_blocks<T: BlockSource>(
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
    mut elem: impl FnMut(usize, f64, f64) -> Result<(u8, bool), BlockError>,
) -> Result<u64, BlockError> {
    let s2 = s2 as f64;
    let mut clipped = 0u64;
    let mut codes = [0u8; NVFP4_BLOCK];
    for (b, block) in src.chunks_exact(NVFP4_BLOCK).enumerate() {
        let mut amax = 0.0f64;
        let mut nan = false;
        for v in block {
            let a = v.to_f64().abs();
            nan |= !a.is_finite();
            amax = if a > amax { a } else { amax };
        }
        let out = &mut packed[b * 8..(b + 1) * 8];
        if nan {
            scales[b] = 0x7f;
            out.fill(0);
            continue;
        }
        // block scale = e4m3(amax / (6 · s2)), saturated, at least 2^-9 (code
        // 1); 1.0 (code 0x38) for an all-zero block.
        let sc = if amax == 0.0 {
            NVFP4_ZERO_BLOCK_SCALE
        } else {
            nvfp4_block_scale_exact(amax, 6.0 * s2).max(1)
        };
        scales[b] = sc as u8;
        let bs = decode_f64(&FLOAT8_E4M3FN, sc);
        let d = bs * s2; // exact: 4 × 24 significant bits
        for (j, (c, v)) in codes.iter_mut().zip(block).enumerate() {
            let x = v.to_f64();
            *c = if x == 0.0 {
                if x.is_sign_negative() {
                    0x8
                } else {
                    0
                }
            } else {
                let (code, clip) = elem(b * NVFP4_BLOCK + j, x, d)?;
                clipped += clip as u64;
                code
            };
        }
        pack::pack(&codes, DType::Float4E2M1FN, out).expect("a whole block packs");
    }
    Ok(clipped)
}

/// `x / d` (`x` finite and non-zero, `d` positive and finite, both exact
/// `f64`s) exact, or rounded to odd at 53 bits, with `x`'s sign: rounding it
/// once more with any [`RoundMode`] into a format of at most 20 significant
/// bits (here float8_e4m3fn and float4_e2m1fn), with at most 32 random
/// bits, gives the result of rounding the exact quotient: every rounding
/// boundary and stochastic threshold is a multiple of 2^-51 of the
/// quotient's binade, an even multiple of its last place, so none lies
/// strictly between the exact quotient and the odd one or on the odd one.
/// The one exception is gfloat's own float64 arithmetic: below the
/// smallest subnormal spacing, `stochastic_fast` and `stochastic_fastest`
/// compare `fl(δ + r·2^−N)` with 1, and that rounding looks at the
/// quotient's 54th bit; there the 53-bit quotient rounded to odd is what is
/// rounded (a float64 source value would be rounded the same way).
fn signed_quotient(x: f64, d: f64) -> f64 {
    let a = div_to_odd(x.abs(), d);
    if x < 0.0 {
        -a
    } else {
        a
    }
}

/// [`nvfp4_quantize`] with the element rounding `r`: the block scales as
/// [`nvfp4_quantize`] computes them (the rounding does not change them),
/// then each element's exact quotient `x / (e4m3 · s2)` rounded to
/// float4_e2m1fn with `r.mode`, saturating (float4_e2m1fn has no infinity;
/// `r.saturate` changes nothing). A stochastic mode takes element `i`'s
/// number from `r` ([`Rounding::number`]: the explicit bits, or the seed's
/// Philox4x32-10 number for position `offset + i`), `i` counting the elements
/// of `src` in order, so quantizing whole blocks of a slice with
/// [`Rounding::part`] gives the bytes of quantizing the whole. The count of
/// clipped elements is that of [`nvfp4_quantize`] (scaled magnitude of 7 or
/// more), whatever the mode. The result is that of rounding the exact
/// quotient, except for `stochastic_fast` / `stochastic_fastest` below
/// float4_e2m1fn's smallest subnormal spacing, which round the quotient
/// rounded to odd at 53 bits (gfloat's float64 addition there depends on
/// bits beyond any float64).
///
/// `RoundMode::NearestEven` without random numbers runs
/// [`nvfp4_quantize`] itself; the other modes run the reference quantizer
/// (one element at a time in `f64`) on every path. NVIDIA's NVFP4 training
/// recipe quantizes gradients this way with stochastic rounding.
///
/// # Errors
///
/// As [`nvfp4_quantize`], and [`BlockError::Rounding`] if `r` is refused by
/// [`Rounding::validate`] for `src.len()` elements.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::{nvfp4_quantize_rounded, nvfp4_tensor_scale};
/// use mldtypes::round::{RoundMode, Rounding};
/// let mut x = [0.0f32; 16];
/// x[0] = 2688.0; // block scale 448, elements in units of 448
/// x[1] = 500.0; // 1.116 units: between the E2M1 values 1.0 and 1.5
/// let s2 = nvfp4_tensor_scale(2688.0); // 1
/// let (mut p, mut s) = ([0u8; 8], [0u8; 1]);
/// let down = Rounding::new(RoundMode::TowardZero);
/// nvfp4_quantize_rounded(&x, s2, &down, &mut p, &mut s).unwrap();
/// assert_eq!(p[0], 0x27); // 1.0 (code 2) and 6.0 (code 7)
/// let up = Rounding::new(RoundMode::TowardPositive);
/// nvfp4_quantize_rounded(&x, s2, &up, &mut p, &mut s).unwrap();
/// assert_eq!(p[0], 0x37); // 1.5 (code 3)
/// ```
pub fn nvfp4_quantize_rounded<T: BlockSource>(
    src: &[T],
    s2: f32,
    r: &Rounding<'_>,
    packed: &mut [u8],
    scales: &mut [u8],
) -> Result<u64, BlockError> {
    check_nvfp4(src.len(), s2, packed, scales)?;
    r.validate(src.len()).map_err(BlockError::Rounding)?;
    if r.mode == RoundMode::NearestEven && r.random.sr_bits().is_none() {
        return nvfp4_quantize(src, s2, packed, scales);
    }
    let f = crate::format::FLOAT4_E2M1FN;
    nvfp4_blocks(src, s2, packed, scales, |i, x, d| {
        let q = signed_quotient(x, d);
        Ok((rounded_code(&f, q, r, i)?, clips(&f, q.abs())))
    })
}

/// The magnitudes of the float4_e2m1fn codes 0–7.
const E2M1: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// The float4_e2m1fn code (magnitude) of the exact quotient `a / d`
/// (`a, d > 0` finite), round-to-nearest-even, saturated; and whether it
/// clipped. The quotient is rounded once by the `f64` division; the exact
/// residual `a − q·d` (one fused multiply-add, exact for a correctly rounded
/// quotient) then decides the side of a rounding boundary the exact value
/// lies on when `q` falls on one, so the result is that of the exact quotient.
fn e2m1_of_quotient(a: f64, d: f64) -> (u8, bool) {
    // Rounding boundaries: midpoints between adjacent values, and 7, where
    // saturation starts to change the result.
    const BOUNDS: [f64; 8] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0];
    let mut q = a / d;
    if BOUNDS.contains(&q) {
        let r = (-q).mul_add(d, a);
        if r > 0.0 {
            q = q.next_up();
        } else if r < 0.0 {
            q = q.next_down();
        }
    }
    // Ties go to the even code (0, 2, 4, 6).
    let code = if q <= 0.25 {
        0
    } else if q < 0.75 {
        1
    } else if q <= 1.25 {
        2
    } else if q < 1.75 {
        3
    } else if q <= 2.5 {
        4
    } else if q < 3.5 {
        5
    } else if q <= 5.0 {
        6
    } else {
        7
    };
    (code, q >= 7.0)
}

/// Dequantizes NVFP4 exactly into `f64`: `e2m1 · e4m3 · s2` (every product
/// is exact in `f64`). A NaN block scale gives NaN elements.
///
/// # Errors
///
/// [`BlockError::BufferLength`] unless `packed` holds `out.len() / 2` bytes
/// and `scales` `out.len() / 16` codes.
pub fn nvfp4_dequantize_f64(
    packed: &[u8],
    scales: &[u8],
    s2: f32,
    out: &mut [f64],
) -> Result<(), BlockError> {
    if !out.len().is_multiple_of(NVFP4_BLOCK) {
        return Err(BlockError::NotWholeBlocks {
            len: out.len(),
            block: NVFP4_BLOCK,
        });
    }
    check_len("blocks", out.len() / 2, packed.len())?;
    check_len("scales", out.len() / NVFP4_BLOCK, scales.len())?;
    // The float4_e2m1fn values of the 16 codes, signs included.
    let signed: [f64; 16] = std::array::from_fn(|c| {
        let m = E2M1[c & 7];
        if c & 8 != 0 {
            -m
        } else {
            m
        }
    });
    let s2 = s2 as f64;
    for ((o, p), &sc) in out
        .chunks_exact_mut(NVFP4_BLOCK)
        .zip(packed.chunks_exact(NVFP4_BLOCK / 2))
        .zip(scales)
    {
        let bs = f32::from_bits(crate::cast::kernels::dec_f32::<E4M3FnMarker>(sc as u32));
        let d = bs as f64 * s2;
        for (y, c) in o.chunks_exact_mut(2).zip(p) {
            y[0] = signed[(c & 0xf) as usize] * d;
            y[1] = signed[(c >> 4) as usize] * d;
        }
    }
    Ok(())
}

/// [`nvfp4_dequantize_f64`] rounded once to `f32`.
///
/// # Errors
///
/// As [`nvfp4_dequantize_f64`].
pub fn nvfp4_dequantize(
    packed: &[u8],
    scales: &[u8],
    s2: f32,
    out: &mut [f32],
) -> Result<(), BlockError> {
    rounded_to_f32(out, |tmp| nvfp4_dequantize_f64(packed, scales, s2, tmp))
}

// ---------------------------------------------------------------------------
// FP8 with scales
// ---------------------------------------------------------------------------

/// The float8_e4m3fn magnitude beyond which a scaled value clips: 464, the
/// midpoint between 448 and the next value of an unbounded exponent (480);
/// 464 itself rounds to 448 (ties to even).
const E4M3_CLIP: f64 = 464.0;

/// The FP8 scale `amax / 448` of values of largest finite magnitude `amax`,
/// rounded once to `dtype` (`Float32`, `BFloat16` or `Float16`; other dtypes
/// give float32), as an `f64` holding that value exactly. An `amax` of zero
/// (or not finite) gives 1; a quotient below the dtype's smallest positive
/// value gives that value, so a scale is never zero.
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::mx::fp8_scale;
/// assert_eq!(fp8_scale(448.0, DType::Float32), 1.0);
/// assert_eq!(fp8_scale(0.0, DType::Float32), 1.0);
/// assert_eq!(fp8_scale(1.0, DType::Float32), (1.0f64 / 448.0) as f32 as f64);
/// // bfloat16 scales hold 8 significant bits: 1/448 = 0x3b12 (0.002227783…).
/// assert_eq!(fp8_scale(1.0, DType::BFloat16), 0.002227783203125);
/// ```
pub fn fp8_scale(amax: f64, dtype: DType) -> f64 {
    if amax == 0.0 || !amax.is_finite() {
        return 1.0;
    }
    let (m, e) = split(amax);
    // amax / 448 = m / 7 · 2^(e − 6): round to odd, then once to the dtype.
    let q = ratio_to_odd(m, 7, e - 6);
    match dtype.format().filter(|_| dtype != DType::Float32) {
        Some(f) if matches!(dtype, DType::BFloat16 | DType::Float16) => {
            let c = encode_f64(&f, q, Overflow::Saturating);
            decode_f64(&f, c.max(1))
        }
        _ => {
            let s = q as f32;
            if s == 0.0 {
                f32::from_bits(1) as f64
            } else {
                s as f64
            }
        }
    }
}

/// Checks the arguments of an FP8 quantization.
fn check_fp8(n: usize, seg: usize, scales: &[f64], out: &[u8]) -> Result<(), BlockError> {
    check_len("out", n, out.len())?;
    let need = if seg == 0 { 0 } else { n.div_ceil(seg) };
    if seg == 0 && n > 0 {
        return Err(BlockError::NotWholeBlocks { len: n, block: 0 });
    }
    check_len("scales", need, scales.len())?;
    if let Some(s) = scales.iter().find(|s| !(**s > 0.0 && s.is_finite())) {
        return Err(BlockError::Fp8Scale { bits: s.to_bits() });
    }
    Ok(())
}

/// Quantizes `src` to float8_e4m3fn codes with scales: element `i` becomes
/// `e4m3(src[i] / scales[i / seg])`, the exact quotient rounded once
/// (round-to-nearest-even), saturated to ±448 (infinities too; NaN stays
/// NaN, code `0x7F`). Returns the number of finite elements that clipped
/// (scaled magnitude beyond 464).
///
/// # Errors
///
/// [`BlockError::BufferLength`] unless `out` holds `src.len()` codes and
/// `scales` `ceil(src.len() / seg)` values; [`BlockError::Fp8Scale`] for a
/// scale that is not positive and finite; [`BlockError::NotWholeBlocks`]
/// for `seg` 0.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::fp8_quantize;
/// let x = [448.0f32, -1.0, 3.0, 0.0];
/// let mut out = [0u8; 4];
/// // Two segments of two: scales 2 and 0.5.
/// fp8_quantize(&x, 2, &[2.0, 0.5], &mut out).unwrap();
/// assert_eq!(out, [0x76, 0xb0, 0x4c, 0x00]); // 224, −0.5, 6, 0
/// ```
pub fn fp8_quantize<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
) -> Result<u64, BlockError> {
    fp8_quantize_on(cast::path(), src, seg, scales, out)
}

/// [`fp8_quantize`] on a given [`Path`]: [`Path::Scalar`] (and float64
/// input on every path) runs the reference (each quotient exact, rounded
/// once); the vector paths divide in float64, whose one rounding never
/// changes the float8_e4m3fn result: a float32 over a 24-bit scale is
/// either exactly a rounding boundary (5 significant bits) or at least
/// 2^-29 of its magnitude away from every boundary, far beyond float64's
/// 2^-53. Every path gives the same bytes and counts.
///
/// # Errors
///
/// As [`fp8_quantize`], and [`BlockError::PathUnavailable`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::Path;
/// use mldtypes::mx::fp8_quantize_on;
/// let x: Vec<f32> = (0..40).map(|i| (i as f32 - 20.0) * 0.37).collect();
/// let (mut a, mut b) = ([0u8; 40], [0u8; 40]);
/// fp8_quantize_on(Path::Scalar, &x, 16, &[0.01, 0.02, 0.03], &mut a).unwrap();
/// fp8_quantize_on(Path::Portable, &x, 16, &[0.01, 0.02, 0.03], &mut b).unwrap();
/// assert_eq!(a, b);
/// ```
pub fn fp8_quantize_on<T: BlockSource>(
    path: Path,
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
) -> Result<u64, BlockError> {
    check_fp8(src.len(), seg, scales, out)?;
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    match T::as_f32(src) {
        Some(x) if path != Path::Scalar => Ok(fp8_vector::<false>(
            path,
            x,
            seg,
            scales,
            out,
            &mut ErrLanes::default(),
        )),
        _ => Ok(fp8_quantize_scalar(src, seg, scales, out)),
    }
}

/// The reference FP8 quantizer: each quotient exact (rounded to odd, then
/// once to float8_e4m3fn).
fn fp8_quantize_scalar<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
) -> u64 {
    let rne = |_: usize, q: f64| Ok(encode_f64(&FLOAT8_E4M3FN, q, Overflow::Saturating) as u8);
    fp8_elements(src, seg, scales, out, rne).expect("round to nearest even cannot fail")
}

/// The element loop of the reference FP8 quantizers: element `i`'s
/// quotient `q` by its scale (exact or rounded to odd: [`signed_quotient`])
/// becomes `elem(i, q)`; zeros, infinities and NaN take
/// float8_e4m3fn's saturating encoding of `x / s` (±0, ±448, NaN). Returns
/// the number of finite elements that clipped (scaled magnitude beyond
/// 464).
fn fp8_elements<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
    mut elem: impl FnMut(usize, f64) -> Result<u8, BlockError>,
) -> Result<u64, BlockError> {
    let mut clipped = 0;
    for (i, (v, o)) in src.iter().zip(out.iter_mut()).enumerate() {
        let x = v.to_f64();
        let s = scales[i / seg];
        *o = if x == 0.0 || !x.is_finite() {
            encode_f64(&FLOAT8_E4M3FN, x / s, Overflow::Saturating) as u8
        } else {
            let q = signed_quotient(x, s);
            clipped += (q.abs() > E4M3_CLIP) as u64;
            elem(i, q)?
        };
    }
    Ok(clipped)
}

/// [`fp8_quantize`] with the element rounding `r`: each element's exact
/// quotient `x / s` rounded to float8_e4m3fn with `r.mode`, saturating to
/// ±448 as [`fp8_quantize`] does (zeros, infinities and NaN as there). A
/// stochastic mode takes element `i`'s number from `r`
/// ([`Rounding::number`]), `i` counting the elements of `src` in order, so
/// quantizing the pieces of a slice with [`Rounding::part`] gives the bytes
/// of quantizing the whole. The count of clipped elements is
/// [`fp8_quantize`]'s (scaled magnitude beyond 464), whatever the mode.
/// The result is that of rounding the exact quotient, except for
/// `stochastic_fast` / `stochastic_fastest` below float8_e4m3fn's smallest
/// subnormal spacing (2^−9), which round the quotient rounded to odd at 53
/// bits (gfloat's float64 addition there depends on bits beyond any
/// float64).
///
/// `RoundMode::NearestEven` without random numbers runs [`fp8_quantize`]
/// itself; the other modes the reference quantizer on every path.
///
/// # Errors
///
/// As [`fp8_quantize`], and [`BlockError::Rounding`] if `r` is refused by
/// [`Rounding::validate`] for `src.len()` elements.
///
/// # Examples
///
/// ```
/// use mldtypes::mx::fp8_quantize_rounded;
/// use mldtypes::round::{RoundMode, Rounding};
/// let x = [1.0f32, -1.0];
/// let mut out = [0u8; 2];
/// // 1 / 3 = 0.333…: between the float8_e4m3fn values 0.3125 and 0.34375.
/// let down = Rounding::new(RoundMode::TowardNegative);
/// fp8_quantize_rounded(&x, 2, &[3.0], &down, &mut out).unwrap();
/// assert_eq!(out, [0x2a, 0xab]); // 0.3125, −0.34375
/// ```
pub fn fp8_quantize_rounded<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    r: &Rounding<'_>,
    out: &mut [u8],
) -> Result<u64, BlockError> {
    check_fp8(src.len(), seg, scales, out)?;
    r.validate(src.len()).map_err(BlockError::Rounding)?;
    if r.mode == RoundMode::NearestEven && r.random.sr_bits().is_none() {
        return fp8_quantize(src, seg, scales, out);
    }
    fp8_elements(src, seg, scales, out, |i, q| {
        rounded_code(&FLOAT8_E4M3FN, q, r, i)
    })
}

/// FP8 quantization of float32 on the vector kernels of `path` (available,
/// not [`Path::Scalar`]; arguments checked); with `STATS`, the error
/// statistics go to `acc`.
fn fp8_vector<const STATS: bool>(
    path: Path,
    src: &[f32],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
    acc: &mut ErrLanes,
) -> u64 {
    // SAFETY: `path` is available on this CPU (checked by callers).
    unsafe {
        match path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => kernels::avx2::fp8_f32::<STATS>(src, seg, scales, out, acc),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => kernels::avx512::fp8_f32::<STATS>(src, seg, scales, out, acc),
            _ => kernels::portable::fp8_f32::<STATS>(src, seg, scales, out, acc),
        }
    }
}

/// [`fp8_quantize`] on the kernels of [`cast::path`], adding the error
/// statistics of every element against its exact dequantized value
/// (`e4m3 · s`, exact in float64) to `acc` (element `i` in lane `i % 8`).
///
/// # Errors
///
/// As [`fp8_quantize`].
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn fp8_quantize_stats<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<u64, BlockError> {
    fp8_quantize_stats_on(cast::path(), src, seg, scales, out, acc)
}

/// [`fp8_quantize_stats`] on `path` ([`Path::Scalar`] and float64 input:
/// the reference quantizer, then the dequantized values).
fn fp8_quantize_stats_on<T: BlockSource>(
    path: Path,
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<u64, BlockError> {
    check_fp8(src.len(), seg, scales, out)?;
    if !path.is_available() {
        return Err(BlockError::PathUnavailable(path));
    }
    if let (Some(x), false) = (T::as_f32(src), path == Path::Scalar) {
        return Ok(fp8_vector::<true>(path, x, seg, scales, out, acc));
    }
    let clipped = fp8_quantize_scalar(src, seg, scales, out);
    fp8_stats(src, seg, scales, out, acc);
    Ok(clipped)
}

/// [`fp8_quantize_rounded`], adding the error statistics of every element
/// against its exact dequantized value to `acc` (element `i` in lane
/// `i % 8`).
///
/// # Errors
///
/// As [`fp8_quantize_rounded`].
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
pub(crate) fn fp8_quantize_rounded_stats<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    r: &Rounding<'_>,
    out: &mut [u8],
    acc: &mut ErrLanes,
) -> Result<u64, BlockError> {
    let clipped = fp8_quantize_rounded(src, seg, scales, r, out)?;
    fp8_stats(src, seg, scales, out, acc);
    Ok(clipped)
}

/// Adds the error statistics of the codes `out` of `src` (scales `scales`,
/// one per `seg` elements) against the exact dequantized values to `acc`.
fn fp8_stats<T: BlockSource>(
    src: &[T],
    seg: usize,
    scales: &[f64],
    out: &[u8],
    acc: &mut ErrLanes,
) {
    const PART: usize = 1024;
    let (mut x, mut y) = ([0f64; PART], [0f64; PART]);
    for (p, (v, c)) in src.chunks(PART).zip(out.chunks(PART)).enumerate() {
        for (i, (d, v)) in x.iter_mut().zip(v).enumerate() {
            *d = v.to_f64();
            y[i] = decode_f64(&FLOAT8_E4M3FN, c[i] as u32) * scales[(p * PART + i) / seg];
        }
        exact_stats(&x[..v.len()], &y[..v.len()], acc);
    }
}

/// Dequantizes float8_e4m3fn codes with scales exactly into `f64`: element
/// `i` is `e4m3(codes[i]) · scales[i / seg]` (exact: 4 × 53 bits at most
/// for the float32 and 16-bit scales this module writes).
///
/// # Errors
///
/// As [`fp8_quantize`] for the lengths and the scales.
///
/// ```
/// use mldtypes::mx::fp8_dequantize_f64;
/// let mut y = [0f64; 2];
/// fp8_dequantize_f64(&[0x76, 0xb0], 1, &[2.0, 0.5], &mut y).unwrap();
/// assert_eq!(y, [448.0, -0.25]);
/// ```
pub fn fp8_dequantize_f64(
    codes: &[u8],
    seg: usize,
    scales: &[f64],
    out: &mut [f64],
) -> Result<(), BlockError> {
    check_fp8(out.len(), seg, scales, codes)?;
    for (i, (y, c)) in out.iter_mut().zip(codes).enumerate() {
        let v = f32::from_bits(crate::cast::kernels::dec_f32::<E4M3FnMarker>(*c as u32)) as f64;
        *y = v * scales[i / seg];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The fused statistics of the quantizers and the cast statistics kernel
    //! against references computed element by element.
    use super::kernels::LANES;
    use super::*;

    /// A reproducible stream of float32 values of every class: normal values
    /// of widely spread magnitudes, ties of the element formats, subnormals,
    /// zeros of both signs, values near float32's largest, and (when
    /// `specials`) NaNs and infinities.
    fn values(n: usize, seed: u64, specials: bool) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        (0..n)
            .map(|i| {
                let r = next();
                let class = if i / 32 % 7 == 3 { 7 } else { r % 10 };
                let sign = if r >> 63 == 1 { -1.0f32 } else { 1.0 };
                let v = match class {
                    0 => 0.0,
                    1 => f32::from_bits((r >> 8) as u32 & 0x007f_ffff), // subnormal
                    2 => f32::MAX / (1 + (r >> 40) % 4) as f32,
                    3 if specials && r % 97 == 0 => f32::NAN,
                    4 if specials && r % 89 == 0 => f32::INFINITY,
                    5 => ((r >> 20) % 64) as f32 * 0.125 + 0.0625, // ties
                    7 => f32::from_bits(0x0000_0100 + (r >> 50) as u32), // a tiny block
                    _ => {
                        let e = ((r >> 32) % 60) as i32 - 30;
                        (1.0 + (r >> 40) as f32 / (1u64 << 24) as f32) * 2f32.powi(e)
                    }
                };
                sign * v
            })
            .collect()
    }

    /// The same sums, lane by lane and bit for bit, and the same counts (in
    /// total: a count's lane does not matter).
    fn same(a: &ErrLanes, b: &ErrLanes) -> bool {
        let bits = |v: &[f64; LANES]| v.map(f64::to_bits);
        let total = |v: &[u64; LANES]| v.iter().sum::<u64>();
        bits(&a.err) == bits(&b.err)
            && bits(&a.sq) == bits(&b.sq)
            && bits(&a.max) == bits(&b.max)
            && total(&a.clip) == total(&b.clip)
            && total(&a.nonfin) == total(&b.nonfin)
            && total(&a.flushed) == total(&b.flushed)
    }

    /// The reference: every pair through [`ErrLanes::exact`], in order.
    fn exact_reference(x: &[f64], y: &[f64]) -> ErrLanes {
        let mut r = ErrLanes::default();
        for (i, (x, y)) in x.iter().zip(y).enumerate() {
            r.exact(i % LANES, *x, *y);
        }
        r
    }

    #[test]
    fn block_maxima_agree_on_every_path() {
        let x = values(32 * 77, 9, true);
        for b in [16usize, 32] {
            let n = x.len() / b;
            let mut want = vec![0u32; n];
            kernels::block_amax_on::<0>(b, &x, &mut want);
            for (i, w) in want.iter().enumerate() {
                let m = x[i * b..(i + 1) * b]
                    .iter()
                    .map(|v| v.to_bits() & 0x7fff_ffff)
                    .max()
                    .unwrap();
                assert_eq!(*w, m);
            }
            #[cfg(target_arch = "x86_64")]
            for (level, path) in [(1u8, Path::Avx2), (2, Path::Avx512)] {
                if !path.is_available() {
                    continue;
                }
                let mut got = vec![0u32; n];
                if level == 1 {
                    kernels::block_amax_on::<1>(b, &x, &mut got);
                } else {
                    kernels::block_amax_on::<2>(b, &x, &mut got);
                }
                assert_eq!(got, want, "{path} blocks of {b}");
            }
        }
    }

    #[test]
    fn fused_mx_statistics_match_the_dequantized_reference() {
        let x = values(32 * 700, 1, true);
        let x64: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        for fmt in MxFormat::ALL {
            for rule in ScaleRule::ALL {
                let nb = x.len() / MX_BLOCK;
                let (mut b0, mut s0) = (vec![0u8; nb * fmt.block_bytes()], vec![0u8; nb]);
                let c0 = quantize_on(Path::Scalar, &x, fmt, rule, &mut b0, &mut s0).unwrap();
                let mut y = vec![0f64; x.len()];
                dequantize_f64(&b0, &s0, fmt, &mut y).unwrap();
                let want = exact_reference(&x64, &y);
                assert!(
                    want.nonfin.iter().sum::<u64>() > 0,
                    "NaN blocks are exercised"
                );
                for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                    let (mut b, mut s) = (vec![0u8; b0.len()], vec![0u8; nb]);
                    let mut got = ErrLanes::default();
                    // In two calls split at a block boundary: the lanes carry over.
                    let cut = 32 * 300;
                    let (bc, sc) = (cut / 32 * fmt.block_bytes(), cut / 32);
                    let (b1, b2) = b.split_at_mut(bc);
                    let (s1, s2) = s.split_at_mut(sc);
                    let c1 =
                        quantize_stats_on(path, &x[..cut], fmt, rule, b1, s1, &mut got).unwrap();
                    let c2 =
                        quantize_stats_on(path, &x[cut..], fmt, rule, b2, s2, &mut got).unwrap();
                    assert_eq!((&b, &s), (&b0, &s0), "{fmt:?} {rule:?} {path}");
                    assert_eq!(c1.clipped + c2.clipped, c0.clipped);
                    assert!(
                        same(&got, &want),
                        "{fmt:?} {rule:?} {path}: {got:?} {want:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn fused_nvfp4_statistics_match_the_dequantized_reference() {
        let x = values(16 * 1500, 2, true);
        let x64: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let amax = x64
            .iter()
            .filter(|v| v.is_finite())
            .fold(0f64, |m, v| m.max(v.abs()));
        for s2 in [nvfp4_tensor_scale(amax), nvfp4_tensor_scale(1.0), 1.0] {
            let nb = x.len() / NVFP4_BLOCK;
            let (mut p0, mut s0) = (vec![0u8; x.len() / 2], vec![0u8; nb]);
            nvfp4_quantize_on(Path::Scalar, &x, s2, &mut p0, &mut s0).unwrap();
            let mut y = vec![0f64; x.len()];
            nvfp4_dequantize_f64(&p0, &s0, s2, &mut y).unwrap();
            let want = exact_reference(&x64, &y);
            for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                let (mut p, mut s) = (vec![0u8; p0.len()], vec![0u8; nb]);
                let mut got = ErrLanes::default();
                nvfp4_quantize_stats_on(path, &x, s2, &mut p, &mut s, &mut got).unwrap();
                assert_eq!((&p, &s), (&p0, &s0), "{path}");
                assert!(same(&got, &want), "f32 {path} {s2}: {got:?} {want:?}");
                let mut got = ErrLanes::default();
                nvfp4_quantize_stats_on(path, &x64, s2, &mut p, &mut s, &mut got).unwrap();
                assert_eq!((&p, &s), (&p0, &s0), "{path}");
                assert!(same(&got, &want), "f64 {path} {s2}: {got:?} {want:?}");
            }
        }
    }

    /// The reference of the cast statistics: every test in float64, as the
    /// statistics define it, one pair at a time (the float64 originals'
    /// path, itself checked against statistics computed from their
    /// definition by the command-line tests).
    fn cast_reference(xs: &[f32], ys: &[f32], thr: f64, tie: bool) -> ErrLanes {
        let wide = |v: &[f32]| v.iter().map(|v| *v as f64).collect::<Vec<f64>>();
        let mut r = ErrLanes::default();
        r.cast_slices_f64(&wide(xs), &wide(ys), thr, tie);
        r
    }

    #[test]
    fn cast_statistics_match_the_float64_reference() {
        let reference = cast_reference;
        let mut xs = values(4003, 3, true);
        // Values at and around each threshold.
        let limits = [
            (464.0, false),                           // float8_e4m3fn
            (61440.0, true),                          // float8_e5m2
            (65520.0, true),                          // float16
            (f32::MAX as f64 + 2f64.powi(103), true), // float32
            (2f64.powi(128), true),                   // bfloat16
            (f64::INFINITY, false),                   // float64
        ];
        for (t, _) in limits {
            let t32 = t as f32;
            xs.extend([t32, t32.next_up(), t32.next_down(), -t32, -t32.next_up()]);
        }
        let ys: Vec<f32> = values(xs.len(), 4, true)
            .iter()
            .zip(&xs)
            .map(|(r, x)| if r.to_bits() % 3 == 0 { *r } else { *x * 1.001 })
            .collect();
        for (thr, tie) in limits {
            let want = reference(&xs, &ys, thr, tie);
            for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                let mut got = ErrLanes::default();
                // In parts of multiples of 8: the lanes carry over.
                cast_stats_on(path, &xs[..800], &ys[..800], thr, tie, &mut got);
                cast_stats_on(path, &xs[800..], &ys[800..], thr, tie, &mut got);
                assert!(same(&got, &want), "{thr} {tie} {path}: {got:?} {want:?}");
            }
        }
    }

    #[test]
    fn cast_statistics_blocks_with_and_without_exceptions() {
        // Ordinary values with their bfloat16 roundings (all pairs count:
        // the blocks' first pass stands), then one exception at a time in
        // one block (that block is taken again, lane by lane), at the
        // float8_e4m3fn and the float32 limits.
        let xs: Vec<f32> = values(5000, 11, false)
            .iter()
            .map(|v| {
                if v.abs() > 400.0 {
                    v.signum() * (1.0 + (v.to_bits() % 1000) as f32 / 7.0)
                } else {
                    *v
                }
            })
            .collect();
        let ys: Vec<f32> = xs
            .iter()
            .map(|x| f32::from_bits(crate::cast::kernels::enc_bf16::<false>(x.to_bits()) << 16))
            .collect();
        let exceptions: [(usize, f32, f32); 7] = [
            (1000, f32::NAN, f32::NAN),
            (1001, f32::INFINITY, f32::INFINITY),
            (2050, 1e6, 448.0), // beyond float8_e4m3fn's limit, saturated
            (2600, 464f32.next_up(), 448.0), // the first float32 beyond it
            (3077, 1.0, f32::NAN), // a finite original whose result is NaN
            (4100, 2.0, f32::INFINITY),
            (4999, -0.0, -0.0),
        ];
        let limits = [(464.0, false), (f32::MAX as f64 + 2f64.powi(103), true)];
        for k in 0..=exceptions.len() {
            let (mut x, mut y) = (xs.clone(), ys.clone());
            if let Some(&(i, xv, yv)) = exceptions.get(k) {
                (x[i], y[i]) = (xv, yv);
            }
            for (thr, tie) in limits {
                let want = cast_reference(&x, &y, thr, tie);
                for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                    for split in [0, 8, 2048, 4096] {
                        let mut got = ErrLanes::default();
                        cast_stats_on(path, &x[..split], &y[..split], thr, tie, &mut got);
                        cast_stats_on(path, &x[split..], &y[split..], thr, tie, &mut got);
                        assert!(same(&got, &want), "{k} {thr} {path} {split}");
                    }
                }
            }
        }
    }

    #[test]
    fn finite_amax_skips_nan_and_infinity() {
        let mut x = values(1001, 5, false);
        let want = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        x.extend([f32::NAN, f32::INFINITY, -f32::INFINITY]);
        x.swap(3, 1002);
        assert_eq!(finite_amax(&x), want);
        assert_eq!(finite_amax(&[f32::NAN, -0.0]), 0.0);
    }
}
