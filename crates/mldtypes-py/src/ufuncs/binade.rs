//! bfloat16 `square`, `reciprocal`, `deg2rad` and `rad2deg` by a look-up
//! of the fraction bits on the AVX-512 path.
//!
//! Each of these functions scales with the input's binade: for a normal
//! `x = 2^(e − 127) · 1.f` (`e` the biased exponent field, `f` the seven
//! fraction bits), `x · x`, `1 / x` and `x · k` are `2^(a (e − 127))`
//! times the function of `1.f` with `a` = 2, −1 and 1, and float32's
//! rounding of a normal result, like the rounding to bfloat16 after it,
//! depends on the significand alone. So where input and result are normal
//! the result's code is one of 128 per function plus `a` times the
//! exponent field, in 16-bit integer arithmetic:
//! - `square`: `T[f] + ((c << 1) & 0xff00)` (the sign shifted out);
//! - `deg2rad` / `rad2deg`: `T[f] + (c & 0xff80)` (sign and exponent);
//! - `reciprocal`: `T[f] − (c & 0xff80)` (the sign's bit subtracted is
//!   the sign's bit added, modulo 2^16),
//!
//! `T[f]` the result of the code of exponent 127 and fraction `f` less that
//! code's term, a carry into the exponent (a significand rounded up to 2)
//! included.
//!
//! [`BinadeForm::derive`] builds `T` from the scalar definition and then
//! tries every code against it: the form serves the longest run of
//! exponent fields around 127 on which each of the 256 codes of each field
//! gives the scalar result, with a result exponent field in `2 ..= 253` (a
//! normal float32 result, neither tiny nor overflowing before the rounding
//! to bfloat16, so the scalar instruction raises no flag NumPy reports).
//! The kernel ([`binade_avx512`], 32 codes per step) computes a step whose
//! codes all lie in that run by two two-register permutes (`VPERMT2W`, 64
//! entries each) and a blend by the fraction's top bit; any other step
//! (zeros, subnormals, infinities, NaN, the ends of the range) takes the
//! float32 instruction's kernel, which raises the scalar path's flags. The
//! form needs MXCSR's default rounding (the table holds nearest-even
//! results), checked per call. Equal to the scalar path on every code
//! (`tests/test_ufunc_tables.py`, every kernel path).
//!
//! Ten integer operations per 32 codes against some forty for the float32
//! instruction's kernel per 32 (widening, the instruction, the NaN test,
//! the rounding, packing), whose division in particular bounds
//! `reciprocal`: on Zen 4, 4M codes right after ml_dtypes' call run at
//! NumPy's own `invert` of the codes (the memory's speed; `reciprocal`
//! 0.47–0.49 ms against the division's 0.61–0.81 ms, `square` 0.46–0.56
//! against 0.54–0.57), and in the cache at 76–125 ps per code against
//! 147–231.

use std::sync::OnceLock;

use super::simd::Bf16Op;
use super::FpFlags;

/// How a function's result code moves with its input's exponent field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scaling {
    /// `a` = 2, the sign dropped (`square`).
    Square,
    /// `a` = −1, the sign kept (`reciprocal`).
    Inverse,
    /// `a` = 1, the sign kept (`deg2rad`, `rad2deg`).
    Linear,
}

impl Scaling {
    /// The exponent (and sign) term of code `c`, modulo 2^16.
    #[inline(always)]
    fn term(self, c: u16) -> u16 {
        match self {
            Scaling::Square => (c << 1) & 0xff00,
            Scaling::Inverse => (c & 0xff80).wrapping_neg(),
            Scaling::Linear => c & 0xff80,
        }
    }
}

/// The derived form of one function: its 128 fraction entries and the
/// exponent fields it serves.
#[derive(Clone, Debug)]
pub(crate) struct BinadeForm {
    /// `T[f]` (see the module's documentation).
    table: [u16; 128],
    /// The least exponent field served (at least 1).
    lo: u16,
    /// The greatest exponent field served (at most 254).
    hi: u16,
    /// How the result moves with the exponent field.
    scaling: Scaling,
}

impl BinadeForm {
    /// The form of `apply` (a bfloat16 function's scalar definition, code
    /// to code) under `scaling`: `T` from the codes of exponent field 127,
    /// then the longest run of fields around 127 on which all 256 codes of
    /// each give `apply`'s result with a result exponent field in
    /// `2 ..= 253`. `None` when no field beside 127 fits (a function that
    /// does not scale so). The floating-point flags `apply` raises here
    /// (at the run's ends) are the caller's to discard.
    pub(crate) fn derive(apply: impl Fn(u16) -> u16, scaling: Scaling) -> Option<BinadeForm> {
        let mut table = [0u16; 128];
        for (f, t) in table.iter_mut().enumerate() {
            let c = (127 << 7) | f as u16;
            *t = apply(c).wrapping_sub(scaling.term(c));
        }
        let fits = |e: u16| {
            (0..256u16).all(|k| {
                let c = ((k & 0x100) << 7) | (e << 7) | (k & 0x7f);
                let r = apply(c);
                let field = (r >> 7) & 0xff;
                r == table[usize::from(c & 0x7f)].wrapping_add(scaling.term(c))
                    && (2..=253).contains(&field)
            })
        };
        if !fits(127) {
            return None;
        }
        let lo = (1..127)
            .rev()
            .take_while(|&e| fits(e))
            .last()
            .unwrap_or(127);
        let hi = (128..=254).take_while(|&e| fits(e)).last().unwrap_or(127);
        if lo == hi {
            return None;
        }
        Some(BinadeForm {
            table,
            lo,
            hi,
            scaling,
        })
    }

    /// The exponent fields served, least and greatest.
    pub(crate) fn range(&self) -> (u16, u16) {
        (self.lo, self.hi)
    }

    /// The result of code `c` by the form, if its exponent field is served.
    #[cfg(test)]
    fn apply(&self, c: u16) -> Option<u16> {
        let e = (c >> 7) & 0xff;
        (self.lo..=self.hi)
            .contains(&e)
            .then(|| self.table[usize::from(c & 0x7f)].wrapping_add(self.scaling.term(c)))
    }
}

/// The form in `cell`, derived on its first use from `apply` (per
/// function, some 65,536 scalar evaluations; no Python runs, other callers
/// wait), the floating-point flags left as they were.
pub(crate) fn form(
    cell: &'static OnceLock<Option<BinadeForm>>,
    apply: fn(u16) -> u16,
    scaling: Scaling,
) -> Option<&'static BinadeForm> {
    cell.get_or_init(|| {
        let saved = FpFlags::save();
        let form = BinadeForm::derive(apply, scaling);
        saved.restore();
        form
    })
    .as_ref()
}

/// The exponent fields (least, greatest) whose bfloat16 codes take the
/// look-up for `numpy.<ufunc>` on this call's kernel path, or `None` where
/// the float32 instruction's kernel or the scalar loop computes them.
pub(crate) fn served(ufunc: &str) -> Option<(u16, u16)> {
    use super::simd::{Deg2rad, Rad2deg, Reciprocal, Square};
    let form = match ufunc {
        "square" => Square::binade(),
        "reciprocal" => Reciprocal::binade(),
        "deg2rad" => Deg2rad::binade(),
        "rad2deg" => Rad2deg::binade(),
        _ => None,
    }?;
    #[cfg(target_arch = "x86_64")]
    if runs() {
        return Some(form.range());
    }
    None
}

/// Whether the form runs on this call: the AVX-512 path and MXCSR's
/// default rounding.
#[cfg(target_arch = "x86_64")]
pub(crate) fn runs() -> bool {
    mldtypes::cast::path() == mldtypes::cast::Path::Avx512 && mldtypes::cast::fpu_forms()
}

/// `O` of the packed codes `src` into `dst` (two bytes per code) by
/// `form`, 32 codes per step; the steps with a code outside the form's
/// exponent fields, and the last few codes, by `fallback` (the float32
/// instruction's kernel), whose result (whether a signalling NaN was
/// read) is returned.
///
/// # Safety
///
/// The CPU must support AVX-512 F/BW/VL/DQ and AVX2 (checked by
/// `cast::dispatch`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
pub(crate) unsafe fn binade_avx512(
    form: &BinadeForm,
    src: &[u16],
    dst: &mut [u8],
    fallback: unsafe fn(&[u16], &mut [u8]) -> bool,
) -> bool {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len() / 2);
    let body = n - n % 32;
    let t = form.table.as_ptr();
    // SAFETY: the table holds 128 codes, four vectors of 32.
    let (t0, t1, t2, t3) = unsafe {
        (
            _mm512_loadu_si512(t.cast()),
            _mm512_loadu_si512(t.add(32).cast()),
            _mm512_loadu_si512(t.add(64).cast()),
            _mm512_loadu_si512(t.add(96).cast()),
        )
    };
    let (field, lo, span) = (
        _mm512_set1_epi16(0x7f80),
        _mm512_set1_epi16((form.lo << 7) as i16),
        _mm512_set1_epi16(((form.hi - form.lo) << 7) as i16),
    );
    let (top, sign_exp, square_exp) = (
        _mm512_set1_epi16(0x40),
        _mm512_set1_epi16(0xff80_u16 as i16),
        _mm512_set1_epi16(0xff00_u16 as i16),
    );
    let out = dst.as_mut_ptr() as *mut u16;
    let mut snan = false;
    let mut i = 0;
    while i < body {
        // SAFETY: i + 32 <= n for both slices; unaligned loads and store.
        let c = unsafe { _mm512_loadu_si512(src.as_ptr().add(i).cast()) };
        let e = _mm512_sub_epi16(_mm512_and_si512(c, field), lo);
        if _mm512_cmple_epu16_mask(e, span) != u32::MAX {
            // SAFETY: the step's 32 codes in and out.
            snan |= unsafe {
                fallback(
                    &src[i..i + 32],
                    std::slice::from_raw_parts_mut(out.add(i).cast(), 64),
                )
            };
            i += 32;
            continue;
        }
        // The permutes read the index's low six bits.
        let low = _mm512_permutex2var_epi16(t0, c, t1);
        let high = _mm512_permutex2var_epi16(t2, c, t3);
        let entry = _mm512_mask_blend_epi16(_mm512_test_epi16_mask(c, top), low, high);
        let term = match form.scaling {
            Scaling::Square => _mm512_and_si512(_mm512_slli_epi16::<1>(c), square_exp),
            Scaling::Inverse => {
                _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_and_si512(c, sign_exp))
            }
            Scaling::Linear => _mm512_and_si512(c, sign_exp),
        };
        // SAFETY: as the load's.
        unsafe { _mm512_storeu_si512(out.add(i).cast(), _mm512_add_epi16(entry, term)) };
        i += 32;
    }
    // SAFETY: `out` holds `n` codes.
    snan | unsafe {
        fallback(
            &src[body..n],
            std::slice::from_raw_parts_mut(out.add(body).cast(), 2 * (n - body)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::simd::{Deg2rad, Rad2deg, Reciprocal, Square};
    use super::*;

    /// Every code the form serves gives the scalar result; the served
    /// ranges are those of the functions' binades.
    #[test]
    fn forms_equal_the_scalar_definition() {
        type Case = (fn(u16) -> u16, Scaling, (u16, u16));
        let cases: [Case; 4] = [
            // 2 (e − 127) + 127, one more from 1.f² ≥ 2: 2 ..= 253.
            (Square::apply, Scaling::Square, (65, 189)),
            // 254 − e, one less for f ≠ 0.
            (Reciprocal::apply, Scaling::Inverse, (1, 251)),
            // π / 180 = 2^−6 · 1.117: e − 6, one more from 1.f ≥ 1.79.
            (Deg2rad::apply, Scaling::Linear, (8, 254)),
            // 180 / π = 2^5 · 1.79: e + 5, one more from 1.f ≥ 1.117.
            (Rad2deg::apply, Scaling::Linear, (1, 247)),
        ];
        for (apply, scaling, range) in cases {
            let form = BinadeForm::derive(apply, scaling).expect("1.0 fits");
            assert_eq!(form.range(), range, "{scaling:?}");
            let mut served = 0;
            for c in 0..=u16::MAX {
                if let Some(r) = form.apply(c) {
                    assert_eq!(r, apply(c), "{scaling:?} {c:#06x}");
                    served += 1;
                }
            }
            assert_eq!(served, 256 * usize::from(range.1 - range.0 + 1));
        }
    }

    /// A function that does not scale with the binade has no form.
    #[test]
    fn no_form_for_other_functions() {
        let sqrt = |c: u16| (f32::from_bits(u32::from(c) << 16).sqrt().to_bits() >> 16) as u16;
        assert!(BinadeForm::derive(sqrt, Scaling::Linear).is_none());
    }
}
