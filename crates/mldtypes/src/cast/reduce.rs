//! Reductions that accumulate in float32 and round once at the end.
//!
//! Summing many values in a narrow format loses everything once the running
//! sum's unit in the last place exceeds the addends: a bfloat16 running sum
//! of uniform `[0, 1)` values stalls at 256. The ml_dtypes documentation
//! (seed 001) recommends accumulating in float32 and JAX does so; here the
//! elements are widened to float32 (exactly), summed pairwise (blocks of 128
//! with eight partial sums, as NumPy's `add.reduce`, combined in a balanced
//! tree), and the result is rounded once to the element type.
//!
//! With the `ndarray` feature, [`ArrayReduce`] gives the same reductions on
//! `ndarray` arrays of any shape and layout: ndarray's own `sum`/`mean`
//! add in the element type (a bfloat16 or float16 running sum stalls).
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::reduce;
//! let x: Vec<half::bf16> = (0..10_000).map(|_| half::bf16::from_f32(0.5)).collect();
//! assert_eq!(reduce::sum_f32(&x).unwrap(), 5000.0);
//! assert_eq!(reduce::sum(&x).unwrap(), half::bf16::from_f32(5000.0));
//! ```

use super::{convert_slice_on, dispatch, CastError, Element, Overflow, Path};

/// Elements widened per step.
const STEP: usize = 2048;

/// Pairwise sum of float32 values: blocks of up to 128 elements are summed
/// with eight interleaved partial sums, larger ranges are split in halves.
fn pairwise(x: &[f32]) -> f32 {
    if x.len() <= 128 {
        let mut acc = [0f32; 8];
        let chunks = x.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for (a, v) in acc.iter_mut().zip(c) {
                *a += v;
            }
        }
        let mut s =
            ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for v in rest {
            s += v;
        }
        s
    } else {
        let h = (x.len() / 2 + 7) & !7;
        pairwise(&x[..h]) + pairwise(&x[h..])
    }
}

/// Widens `x` to float32 in steps and feeds each step to `f`.
fn widen<T: Element>(path: Path, x: &[T], mut f: impl FnMut(&[f32])) -> Result<(), CastError> {
    let mut buf = [0f32; STEP];
    for c in x.chunks(STEP) {
        let b = &mut buf[..c.len()];
        convert_slice_on(path, c, b, Overflow::NonSaturating)?;
        f(b);
    }
    Ok(())
}

/// Rounds a float32 result once to `T`.
fn round<T: Element>(x: f32) -> Result<T, CastError> {
    let mut out = [T::zeroed()];
    convert_slice_on(dispatch::path(), &[x], &mut out, Overflow::NonSaturating)?;
    Ok(out[0])
}

/// Sum of `x` accumulated in float32 (pairwise), as float32.
///
/// # Errors
///
/// [`CastError::UnsupportedPair`] if `T` does not convert to float32
/// (standard integers wider than the sub-byte ones).
///
/// # Examples
///
/// ```
/// let x = [1.0f32, 2.0, 3.5];
/// assert_eq!(mldtypes::cast::reduce::sum_f32(&x).unwrap(), 6.5);
/// ```
pub fn sum_f32<T: Element>(x: &[T]) -> Result<f32, CastError> {
    let path = dispatch::path();
    let mut partial = Vec::with_capacity(x.len() / STEP + 1);
    widen(path, x, |b| partial.push(pairwise(b)))?;
    Ok(pairwise(&partial))
}

/// Sum of `x` accumulated in float32 (pairwise), rounded once to `T`.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [half::f16::from_f32(0.25); 8];
/// assert_eq!(mldtypes::cast::reduce::sum(&x).unwrap(), half::f16::from_f32(2.0));
/// ```
pub fn sum<T: Element>(x: &[T]) -> Result<T, CastError> {
    round(sum_f32(x)?)
}

/// Arithmetic mean of `x`: the float32 pairwise sum divided by the length
/// in float32 (NaN for an empty slice, as NumPy), as float32.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [1.0f32, 2.0, 4.5];
/// assert_eq!(mldtypes::cast::reduce::mean_f32(&x).unwrap(), 2.5);
/// ```
pub fn mean_f32<T: Element>(x: &[T]) -> Result<f32, CastError> {
    Ok(sum_f32(x)? / x.len() as f32)
}

/// [`mean_f32`] rounded once to `T`.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [half::bf16::from_f32(1.0), half::bf16::from_f32(2.0)];
/// assert_eq!(mldtypes::cast::reduce::mean(&x).unwrap(), half::bf16::from_f32(1.5));
/// ```
pub fn mean<T: Element>(x: &[T]) -> Result<T, CastError> {
    round(mean_f32(x)?)
}

/// Dot product `Σ a[i]·b[i]`: products and sums in float32 (pairwise), as
/// float32.
///
/// # Errors
///
/// [`CastError::LengthMismatch`] if the lengths differ, otherwise as
/// [`sum_f32`].
///
/// # Examples
///
/// ```
/// let a = [1.0f32, 2.0, 3.0];
/// let b = [4.0f32, 5.0, 6.0];
/// assert_eq!(mldtypes::cast::reduce::dot_f32(&a, &b).unwrap(), 32.0);
/// ```
pub fn dot_f32<T: Element>(a: &[T], b: &[T]) -> Result<f32, CastError> {
    if a.len() != b.len() {
        return Err(CastError::LengthMismatch {
            src: a.len(),
            dst: b.len(),
        });
    }
    let path = dispatch::path();
    let mut partial = Vec::with_capacity(a.len() / STEP + 1);
    let mut xb = [0f32; STEP];
    let mut yb = [0f32; STEP];
    for (x, y) in a.chunks(STEP).zip(b.chunks(STEP)) {
        let (xs, ys) = (&mut xb[..x.len()], &mut yb[..y.len()]);
        convert_slice_on(path, x, xs, Overflow::NonSaturating)?;
        convert_slice_on(path, y, ys, Overflow::NonSaturating)?;
        for (p, q) in xs.iter_mut().zip(ys.iter()) {
            *p *= q;
        }
        partial.push(pairwise(xs));
    }
    Ok(pairwise(&partial))
}

/// [`dot_f32`] rounded once to `T`.
///
/// # Errors
///
/// As [`dot_f32`].
///
/// # Examples
///
/// ```
/// let a = [half::f16::from_f32(0.5); 4];
/// assert_eq!(mldtypes::cast::reduce::dot(&a, &a).unwrap(), half::f16::ONE);
/// ```
pub fn dot<T: Element>(a: &[T], b: &[T]) -> Result<T, CastError> {
    round(dot_f32(a, b)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_matches_exact_small_sums() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        assert_eq!(pairwise(&x), 499_500.0);
        assert_eq!(pairwise(&[]), 0.0);
        assert_eq!(pairwise(&[3.0]), 3.0);
    }
}

#[cfg(feature = "ndarray")]
pub use array::ArrayReduce;

#[cfg(feature = "ndarray")]
mod array {
    use super::{CastError, Element};
    use ::ndarray::{ArrayBase, Data, Dimension};

    /// Reductions of `ndarray` arrays that accumulate in float32 and round
    /// once, as the slice reductions of [`crate::cast::reduce`] do (feature
    /// `ndarray`). This is how to sum an array of bfloat16, float16 or
    /// float8 values: ndarray's `sum` adds in the element type, and a
    /// 16-bit running sum stops growing once its ulp exceeds the addends.
    ///
    /// Contiguous arrays (either memory order) are reduced in place; other
    /// layouts are copied once, in logical order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::reduce::ArrayReduce;
    /// use mldtypes::float16;
    /// let a = ndarray::Array2::from_elem((100, 100), float16::from_f32(0.1));
    /// // 10,000 × 0.0999755859375 (0.1 in float16) = 999.755859375
    /// assert_eq!(a.reduce_sum_f32().unwrap(), 999.75586);
    /// assert_eq!(a.reduce_sum().unwrap().to_f32(), 1000.0); // rounded once
    /// // ndarray's own sum adds in float16 (eight running sums), off by 9 %.
    /// assert_eq!(a.sum().to_f32(), 1091.0);
    /// assert_eq!(a.t().reduce_mean().unwrap(), a.reduce_mean().unwrap());
    /// ```
    pub trait ArrayReduce<T: Element> {
        /// Sum of the elements accumulated in float32 (pairwise), as float32.
        ///
        /// # Errors
        ///
        /// [`CastError::UnsupportedPair`] if `T` does not convert to float32.
        fn reduce_sum_f32(&self) -> Result<f32, CastError>;
        /// [`ArrayReduce::reduce_sum_f32`] rounded once to `T`.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_sum(&self) -> Result<T, CastError>;
        /// Mean accumulated in float32 (NaN for an empty array), as float32.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_mean_f32(&self) -> Result<f32, CastError>;
        /// [`ArrayReduce::reduce_mean_f32`] rounded once to `T`.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_mean(&self) -> Result<T, CastError>;
    }

    impl<T, S, D> ArrayReduce<T> for ArrayBase<S, D>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        fn reduce_sum_f32(&self) -> Result<f32, CastError> {
            with_slice(self, super::sum_f32)
        }
        fn reduce_sum(&self) -> Result<T, CastError> {
            with_slice(self, super::sum)
        }
        fn reduce_mean_f32(&self) -> Result<f32, CastError> {
            with_slice(self, super::mean_f32)
        }
        fn reduce_mean(&self) -> Result<T, CastError> {
            with_slice(self, super::mean)
        }
    }

    /// `f` of the array's elements as one slice: in place when contiguous,
    /// else copied in logical order.
    fn with_slice<T, S, D, R>(a: &ArrayBase<S, D>, f: impl Fn(&[T]) -> R) -> R
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        match a.as_slice_memory_order() {
            Some(s) => f(s),
            None => f(&a.iter().copied().collect::<Vec<T>>()),
        }
    }
}
