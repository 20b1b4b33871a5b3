//! One-call slice and `Vec` conversions for every float format, like
//! `half`'s `HalfFloatSliceExt` / `HalfFloatVecExt`, built on the bulk
//! kernels of [`crate::cast`] (also reachable as `mldtypes::float::slice`
//! and `mldtypes::float::FloatSliceExt`; same bits as the scalar conversions:
//! round to nearest, ties to even, ml_dtypes' non-saturating overflow).
//!
//! Everything here runs on the calling thread. For large buffers,
//! [`crate::cast::convert_slice_par`] splits the work across rayon's pool
//! (feature `rayon`).
//!
//! Unlike `half`, a length mismatch is an error ([`CastError::LengthMismatch`]),
//! not a panic.
//!
//! # Examples
//!
//! ```
//! use mldtypes::float::{FloatSliceExt, FloatVecExt};
//! use mldtypes::float8_e4m3fn;
//! let v = Vec::<float8_e4m3fn>::from_f32_slice(&[1.0, 464.0, -0.3]);
//! assert_eq!(v.to_f32_vec(), [1.0, 448.0, -0.3125]);
//!
//! let mut out = [0f64; 3];
//! v.convert_to_f64_slice(&mut out).unwrap();
//! assert_eq!(out, [1.0, 448.0, -0.3125]);
//! ```

use super::{convert_slice, CastError, Element};
use crate::float::MiniFloat;

/// Slice conversions between a float format and `f32` / `f64`.
///
/// Implemented for `[T]` for every float type `T` of the crate.
pub trait FloatSliceExt {
    /// Fills `self` with `src` rounded into this format (as `from_f32`).
    ///
    /// # Errors
    ///
    /// [`CastError::LengthMismatch`] if the lengths differ (nothing is
    /// written).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{bfloat16, float::FloatSliceExt};
    /// let mut b = [bfloat16::ONE; 2];
    /// b.convert_from_f32_slice(&[0.5, 3.0]).unwrap();
    /// assert_eq!(b.to_f32_vec(), [0.5, 3.0]);
    /// assert!(b.convert_from_f32_slice(&[1.0]).is_err());
    /// ```
    fn convert_from_f32_slice(&mut self, src: &[f32]) -> Result<(), CastError>;

    /// Fills `self` with `src` rounded once into this format (as `from_f64`).
    ///
    /// # Errors
    ///
    /// [`CastError::LengthMismatch`] if the lengths differ.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float8_e5m2, float::FloatSliceExt};
    /// let mut b = [float8_e5m2::ONE; 2];
    /// b.convert_from_f64_slice(&[0.3, 1e6]).unwrap();
    /// assert_eq!(b.to_f64_vec()[0], 0.3125);
    /// assert!(b[1].is_infinite());
    /// ```
    fn convert_from_f64_slice(&mut self, src: &[f64]) -> Result<(), CastError>;

    /// Writes the exact `f32` values of `self` into `dst`.
    ///
    /// # Errors
    ///
    /// [`CastError::LengthMismatch`] if the lengths differ.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float4_e2m1fn, float::FloatSliceExt};
    /// let x = [float4_e2m1fn::MAX, float4_e2m1fn::MIN];
    /// let mut out = [0f32; 2];
    /// x.convert_to_f32_slice(&mut out).unwrap();
    /// assert_eq!(out, [6.0, -6.0]);
    /// ```
    fn convert_to_f32_slice(&self, dst: &mut [f32]) -> Result<(), CastError>;

    /// Writes the exact `f64` values of `self` into `dst`.
    ///
    /// # Errors
    ///
    /// [`CastError::LengthMismatch`] if the lengths differ.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float8_e8m0fnu, float::FloatSliceExt};
    /// let x = [float8_e8m0fnu::MIN];
    /// let mut out = [0f64];
    /// x.convert_to_f64_slice(&mut out).unwrap();
    /// assert_eq!(out[0], 2f64.powi(-127));
    /// ```
    fn convert_to_f64_slice(&self, dst: &mut [f64]) -> Result<(), CastError>;

    /// The exact `f32` values in a new `Vec`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float6_e3m2fn, float::FloatSliceExt};
    /// let x = [float6_e3m2fn::MAX, float6_e3m2fn::ONE];
    /// assert_eq!(x.to_f32_vec(), [28.0, 1.0]);
    /// ```
    fn to_f32_vec(&self) -> Vec<f32>;

    /// The exact `f64` values in a new `Vec`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{bfloat16, float::FloatSliceExt};
    /// let x = [bfloat16::MAX];
    /// assert_eq!(x.to_f64_vec(), [3.3895313892515355e38]);
    /// ```
    fn to_f64_vec(&self) -> Vec<f64>;
}

/// Building a `Vec` of a float format from `f32` / `f64` slices.
///
/// Implemented for `Vec<T>` for every float type `T` of the crate.
pub trait FloatVecExt: Sized {
    /// `src` rounded into the format (as `from_f32`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{bfloat16, float::FloatVecExt};
    /// let v = Vec::<bfloat16>::from_f32_slice(&[1.0, 0.1]);
    /// assert_eq!(v[1].to_bits(), 0x3dcd);
    /// ```
    fn from_f32_slice(src: &[f32]) -> Self;

    /// `src` rounded once into the format (as `from_f64`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float8_e4m3fn, float::FloatVecExt};
    /// let v = Vec::<float8_e4m3fn>::from_f64_slice(&[1e9, 2.0]);
    /// assert!(v[0].is_nan());
    /// assert_eq!(v[1].to_f32(), 2.0);
    /// ```
    fn from_f64_slice(src: &[f64]) -> Self;
}

/// `convert_slice`, element by element if the kernels refuse the pair
/// (they accept every float pair; this keeps the helpers panic-free).
fn convert_or_scalar<A: Element, B: Element>(src: &[A], dst: &mut [B], each: impl Fn(A) -> B) {
    if convert_slice(src, dst).is_err() {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = each(s);
        }
    }
}

fn check(src: usize, dst: usize) -> Result<(), CastError> {
    if src == dst {
        Ok(())
    } else {
        Err(CastError::LengthMismatch { src, dst })
    }
}

impl<T: MiniFloat + Element> FloatSliceExt for [T] {
    fn convert_from_f32_slice(&mut self, src: &[f32]) -> Result<(), CastError> {
        check(src.len(), self.len())?;
        convert_or_scalar(src, self, T::from_f32);
        Ok(())
    }

    fn convert_from_f64_slice(&mut self, src: &[f64]) -> Result<(), CastError> {
        check(src.len(), self.len())?;
        convert_or_scalar(src, self, T::from_f64);
        Ok(())
    }

    fn convert_to_f32_slice(&self, dst: &mut [f32]) -> Result<(), CastError> {
        check(self.len(), dst.len())?;
        convert_or_scalar(self, dst, T::to_f32);
        Ok(())
    }

    fn convert_to_f64_slice(&self, dst: &mut [f64]) -> Result<(), CastError> {
        check(self.len(), dst.len())?;
        convert_or_scalar(self, dst, T::to_f64);
        Ok(())
    }

    fn to_f32_vec(&self) -> Vec<f32> {
        let mut v = vec![0f32; self.len()];
        convert_or_scalar(self, &mut v, T::to_f32);
        v
    }

    fn to_f64_vec(&self) -> Vec<f64> {
        let mut v = vec![0f64; self.len()];
        convert_or_scalar(self, &mut v, T::to_f64);
        v
    }
}

impl<T: MiniFloat + Element> FloatVecExt for Vec<T> {
    fn from_f32_slice(src: &[f32]) -> Self {
        let mut v = vec![T::from_code(0); src.len()];
        convert_or_scalar(src, &mut v, T::from_f32);
        v
    }

    fn from_f64_slice(src: &[f64]) -> Self {
        let mut v = vec![T::from_code(0); src.len()];
        convert_or_scalar(src, &mut v, T::from_f64);
        v
    }
}
