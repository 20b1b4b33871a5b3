//! The run-time description of a float format that its ufunc loops read:
//! the library's [`Format`] descriptor and what is derived from it once
//! (element size, decoding table, constants, order keys, which arithmetic
//! the format's results follow). One [`FloatDesc`] per registered float
//! dtype, named or registered at run time, reaches every loop through
//! NumPy's per-loop `data` pointer; the loops themselves are one
//! implementation per ufunc, not one per format.

use mldtypes::dtype::DType;
use mldtypes::float::core::{decode_f32, decode_f64, encode_f32, encode_f64};
use mldtypes::format::{Format, NanEncoding, Overflow, BFLOAT16};
use mldtypes::sort::SortKey;

use super::{convert, FpFlags};

/// How the results of a format's float32 arithmetic get their NaN, which
/// ml_dtypes' scalar types decide (see `float.rs`, `NanRule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Semantics {
    /// bfloat16: Eigen's `bfloat16`, float32 semantics (signalling NaNs,
    /// ordered comparisons raise the invalid flag, NaN signs).
    Eigen,
    /// A float8 format whose NaN has a sign (IEEE formats, float8_e4m3fn):
    /// x86's operand choice decides the sign.
    SignedNan,
    /// Every other format: one unsigned NaN or none; NaN operands do not
    /// matter.
    Native,
}

/// Everything a ufunc loop needs to know about a float format.
pub(crate) struct FloatDesc {
    /// The library's descriptor.
    pub(crate) format: Format,
    /// The library's dtype when the format is one of its named ones (its
    /// slice kernels then convert blocks; the same conversions as the
    /// descriptor's scalar core).
    pub(crate) dtype: Option<DType>,
    /// Bytes per element: 1 for formats of up to 8 bits, 2 up to 16.
    pub(crate) size: usize,
    /// Whose arithmetic the results follow.
    pub(crate) semantics: Semantics,
    /// Whether values need float64 to be exact (an exponent range or a
    /// precision beyond float32's): the value functions then compute in
    /// float64 and round once from it.
    pub(crate) wide: bool,
    /// `T(1)`, `T(-1)`, `T(0)` as the format rounds them.
    pub(crate) one: u32,
    pub(crate) minus_one: u32,
    pub(crate) zero: u32,
    /// The order keys of the codes (value order, NaN last).
    pub(crate) key: SortKey,
    /// The float32 value of each one-byte code (formats of up to 8 bits).
    pub(crate) dec8: [f32; 256],
}

impl FloatDesc {
    /// The description of `format`, stored in `size` bytes per element;
    /// `dtype` is the library's dtype of a named format.
    pub(crate) fn new(format: Format, dtype: Option<DType>) -> FloatDesc {
        let size = if format.bits() <= 8 { 1 } else { 2 };
        let semantics = if format == BFLOAT16 {
            Semantics::Eigen
        } else if format.signed
            && format.has_nan()
            && format.nan_encoding != NanEncoding::NegativeZero
        {
            Semantics::SignedNan
        } else {
            Semantics::Native
        };
        // Every value is exact in float32 when the precision fits and the
        // exponent range (subnormals included) lies inside float32's.
        let wide = format.precision() > 24
            || format.max_exp() > 127
            || format.min_exp() - (format.man_bits as i32) < -149;
        let flags = FpFlags::save();
        let enc = |x: f32| encode_f32(&format, x, Overflow::NonSaturating);
        let (one, minus_one, zero) = (enc(1.0), enc(-1.0), enc(0.0));
        flags.restore();
        let mask = format.code_mask();
        let dec8 = std::array::from_fn(|c| decode_f32(&format, c as u32 & mask));
        FloatDesc {
            format,
            dtype,
            size,
            semantics,
            wide,
            one,
            minus_one,
            zero,
            key: SortKey::new(&format),
            dec8,
        }
    }

    /// Whether this is bfloat16 (Eigen's semantics).
    #[inline(always)]
    pub(crate) fn eigen(&self) -> bool {
        self.semantics == Semantics::Eigen
    }

    /// The float32 value of `code` (exact unless [`FloatDesc::wide`]).
    #[inline]
    pub(crate) fn decode(&self, code: u32) -> f32 {
        if self.size == 1 {
            self.dec8[(code & 0xff) as usize]
        } else if self.eigen() {
            f32::from_bits(code << 16)
        } else {
            decode_f32(&self.format, code)
        }
    }

    /// The float64 value of `code` (always exact).
    #[inline]
    pub(crate) fn decode64(&self, code: u32) -> f64 {
        decode_f64(&self.format, code)
    }

    /// `x` rounded once into the format (to nearest even, overflow to
    /// infinity or NaN), without touching the floating-point flags.
    #[inline]
    pub(crate) fn encode(&self, x: f32) -> u32 {
        let flags = FpFlags::save();
        let c = encode_f32(&self.format, x, Overflow::NonSaturating);
        flags.restore_if_changed();
        c
    }

    /// `x` rounded once into the format from float64.
    #[inline]
    pub(crate) fn encode64(&self, x: f64) -> u32 {
        let flags = FpFlags::save();
        let c = encode_f64(&self.format, x, Overflow::NonSaturating);
        flags.restore_if_changed();
        c
    }

    /// Decodes packed codes (`size` bytes each) into float32, leaving the
    /// flags as they were: through the named dtype's slice kernels, or
    /// code by code.
    pub(crate) fn decode_block(&self, codes: &[u8], out: &mut [f32]) {
        if let Some(dt) = self.dtype {
            if !self.eigen() {
                convert(codes, dt, bytemuck::cast_slice_mut(out), DType::Float32);
                return;
            }
        }
        for (k, v) in out.iter_mut().enumerate() {
            *v = self.decode(self.code_at(codes, k));
        }
    }

    /// Rounds float32 values once into packed codes (`size` bytes each),
    /// leaving the flags as they were.
    pub(crate) fn encode_block(&self, vals: &[f32], out: &mut [u8]) {
        if let Some(dt) = self.dtype {
            convert(bytemuck::cast_slice(vals), DType::Float32, out, dt);
            return;
        }
        let flags = FpFlags::save();
        for (k, &v) in vals.iter().enumerate() {
            let c = encode_f32(&self.format, v, Overflow::NonSaturating);
            self.put_code(out, k, c);
        }
        flags.restore_if_changed();
    }

    /// Code `k` of packed codes.
    #[inline(always)]
    pub(crate) fn code_at(&self, codes: &[u8], k: usize) -> u32 {
        let raw = if self.size == 1 {
            codes[k] as u32
        } else {
            u16::from_le_bytes([codes[2 * k], codes[2 * k + 1]]) as u32
        };
        raw & self.format.code_mask()
    }

    /// Writes `code` as element `k` of packed codes.
    #[inline(always)]
    pub(crate) fn put_code(&self, out: &mut [u8], k: usize, code: u32) {
        if self.size == 1 {
            out[k] = code as u8;
        } else {
            out[2 * k..2 * k + 2].copy_from_slice(&(code as u16).to_le_bytes());
        }
    }
}
