//! Error statistics of a conversion.

use serde::ser::{Serialize, SerializeStruct, Serializer};

/// Error statistics of converting (or quantizing) a set of values.
///
/// Pairs where the original is NaN or infinite are counted in `count` only;
/// a finite original that became non-finite or was clipped counts in
/// `clipped` (and `overflow_to_nonfinite` if it became inf / NaN) and is left
/// out of the error sums.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Elements compared.
    pub count: u64,
    /// Largest `|converted − original|` over the finite pairs.
    pub max_abs: f64,
    /// `Σ (converted − original)²` over the finite pairs.
    pub sq_err: f64,
    /// `Σ original²` over the finite pairs.
    pub sq_ref: f64,
    /// Finite values beyond the target's range: saturated to ±max, or turned
    /// into inf / NaN.
    pub clipped: u64,
    /// Finite values that became inf / NaN (non-saturating conversion).
    pub overflow_to_nonfinite: u64,
    /// Non-zero finite values that became zero.
    pub flushed: u64,
}

impl Stats {
    /// Relative RMS error `sqrt(Σ err² / Σ x²)` (0 when both sums are 0,
    /// infinite when only the reference is all zeros).
    ///
    /// ```
    /// let s = mldtypes::checkpoint::Stats { sq_err: 1.0, sq_ref: 100.0, ..Default::default() };
    /// assert_eq!(s.rel_rms(), 0.1);
    /// ```
    pub fn rel_rms(&self) -> f64 {
        if self.sq_ref > 0.0 {
            (self.sq_err / self.sq_ref).sqrt()
        } else if self.sq_err > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }

    /// Signal-to-quantization-noise ratio in dB, `10 · log10(Σ x² / Σ err²)`
    /// (infinite for an exact conversion).
    ///
    /// ```
    /// let s = mldtypes::checkpoint::Stats { sq_err: 1.0, sq_ref: 100.0, ..Default::default() };
    /// assert_eq!(s.sqnr_db(), 20.0);
    /// ```
    pub fn sqnr_db(&self) -> f64 {
        if self.sq_err == 0.0 {
            f64::INFINITY
        } else {
            10.0 * (self.sq_ref / self.sq_err).log10()
        }
    }

    /// Adds the statistics of `o`.
    pub fn merge(&mut self, o: &Stats) {
        self.count += o.count;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.sq_err += o.sq_err;
        self.sq_ref += o.sq_ref;
        self.clipped += o.clipped;
        self.overflow_to_nonfinite += o.overflow_to_nonfinite;
        self.flushed += o.flushed;
    }

    /// Adds the statistics of `n` elements accumulated in lanes (by the
    /// conversion and quantization kernels, `crate::mx::ErrLanes`): the
    /// lanes' sums are added up in lane order.
    pub(crate) fn add_lanes(&mut self, n: usize, a: &crate::mx::ErrLanes) {
        self.count += n as u64;
        self.clipped += a.clip.iter().sum::<u64>();
        self.overflow_to_nonfinite += a.nonfin.iter().sum::<u64>();
        self.flushed += a.flushed.iter().sum::<u64>();
        self.max_abs = a.max.iter().fold(self.max_abs, |m, v| m.max(*v));
        self.sq_err += a.err.iter().sum::<f64>();
        self.sq_ref += a.sq.iter().sum::<f64>();
    }
}

/// JSON numbers cannot be infinite: those become `null`.
fn num(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Stats", 8)?;
        st.serialize_field("elements", &self.count)?;
        st.serialize_field("max_abs_error", &num(self.max_abs))?;
        st.serialize_field("rel_rms_error", &num(self.rel_rms()))?;
        st.serialize_field("sqnr_db", &num(self.sqnr_db()))?;
        st.serialize_field("clipped", &self.clipped)?;
        st.serialize_field("overflow_to_nonfinite", &self.overflow_to_nonfinite)?;
        st.serialize_field("flushed_to_zero", &self.flushed)?;
        st.end()
    }
}

/// Where finite values stop rounding to a finite number of a target: a value
/// overflows (to inf / NaN, or is saturated) when its magnitude rounds, with
/// an unbounded exponent, beyond the largest finite value.
pub(crate) struct OverflowLimit {
    /// max + half an ulp of max: the rounding boundary.
    pub threshold: f64,
    /// Whether the boundary itself rounds up (ties to even away from an odd max).
    pub tie_overflows: bool,
}

impl OverflowLimit {
    pub fn of(to: crate::dtype::DType) -> OverflowLimit {
        use crate::dtype::DType;
        match to.format() {
            Some(f) => OverflowLimit {
                threshold: f.max_finite() + 2f64.powi(f.max_exp() - f.man_bits as i32 - 1),
                tie_overflows: f.max_code() & 1 == 1,
            },
            None if to == DType::Float32 => OverflowLimit {
                threshold: f32::MAX as f64 + 2f64.powi(103),
                tie_overflows: true,
            },
            None => OverflowLimit {
                threshold: f64::INFINITY,
                tie_overflows: false,
            },
        }
    }
}
