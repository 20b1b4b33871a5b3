//! Complex pairs of 16-bit floats: [`complex32`] (two IEEE float16,
//! `half::f16`) and [`bcomplex32`] (two [`bfloat16`]).
//!
//! Both are `#[repr(C)]` pairs `{ re, im }` (4 bytes, real part first, as
//! NumPy lays out complex numbers). Arithmetic is computed in `f32`
//! complex arithmetic and each component is rounded once.
//!
//! # Examples
//!
//! ```
//! use mldtypes::{bcomplex32, complex32};
//! let z = complex32::from_f32_pair(1.0, 2.0);
//! let w = z * z; // (1 + 2i)^2 = -3 + 4i
//! assert_eq!(w.to_f32_pair(), (-3.0, 4.0));
//! let b = bcomplex32::from_f32_pair(0.1, -0.1);
//! assert_eq!(b.to_f32_pair(), (0.10009765625, -0.10009765625));
//! ```

use std::fmt;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use super::bfloat16;

macro_rules! complex_type {
    ($(#[$doc:meta])* $name:ident, $part:ty, $from:path, $from64:path, $to:path) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(C)]
        #[derive(Clone, Copy, Default, PartialEq)]
        pub struct $name {
            /// Real part.
            pub re: $part,
            /// Imaginary part.
            pub im: $part,
        }

        impl $name {
            /// The complex number `re + im·i`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let z = ", stringify!($name), "::from_f32_pair(1.0, 0.0);")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::new(z.re, z.im), z);")]
            /// ```
            #[inline]
            pub const fn new(re: $part, im: $part) -> Self {
                Self { re, im }
            }

            /// Rounds each component from `f32` (nearest, ties to even).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let z = ", stringify!($name), "::from_f32_pair(0.5, -2.0);")]
            /// assert_eq!(z.to_f32_pair(), (0.5, -2.0));
            /// ```
            #[inline]
            pub fn from_f32_pair(re: f32, im: f32) -> Self {
                Self { re: $from(re), im: $from(im) }
            }

            /// The exact components as `f32`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::default().to_f32_pair(), (0.0, 0.0));")]
            /// ```
            #[inline]
            pub fn to_f32_pair(self) -> (f32, f32) {
                ($to(self.re), $to(self.im))
            }

            /// The complex conjugate `re − im·i`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let z = ", stringify!($name), "::from_f32_pair(1.0, 2.0);")]
            /// assert_eq!(z.conj().to_f32_pair(), (1.0, -2.0));
            /// ```
            #[inline]
            pub fn conj(self) -> Self {
                Self { re: self.re, im: -self.im }
            }

            /// Squared magnitude `re² + im²`, computed in `f32`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32_pair(3.0, 4.0).norm_sqr(), 25.0);")]
            /// ```
            #[inline]
            pub fn norm_sqr(self) -> f32 {
                let (a, b) = self.to_f32_pair();
                a * a + b * b
            }
        }

        impl From<(f32, f32)> for $name {
            /// Rounds each component (see `from_f32_pair`).
            fn from((re, im): (f32, f32)) -> Self {
                Self::from_f32_pair(re, im)
            }
        }

        impl From<$name> for (f32, f32) {
            /// Exact widening of both components.
            fn from(z: $name) -> (f32, f32) {
                z.to_f32_pair()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "({:?}{:+?}j)", self.re, self.im)
            }
        }

        impl fmt::Display for $name {
            /// NumPy's layout: `(1+2j)`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "({}{:+}j)", self.re, self.im)
            }
        }

        impl Neg for $name {
            type Output = Self;
            fn neg(self) -> Self {
                Self { re: -self.re, im: -self.im }
            }
        }

        impl Add for $name {
            type Output = Self;
            /// Componentwise, in `f32`, rounded once.
            fn add(self, o: Self) -> Self {
                let ((a, b), (c, d)) = (self.to_f32_pair(), o.to_f32_pair());
                Self::from_f32_pair(a + c, b + d)
            }
        }

        impl Sub for $name {
            type Output = Self;
            /// Componentwise, in `f32`, rounded once.
            fn sub(self, o: Self) -> Self {
                let ((a, b), (c, d)) = (self.to_f32_pair(), o.to_f32_pair());
                Self::from_f32_pair(a - c, b - d)
            }
        }

        impl Mul for $name {
            type Output = Self;
            /// `(ac − bd) + (ad + bc)i` in `f32`, each component rounded once.
            fn mul(self, o: Self) -> Self {
                let ((a, b), (c, d)) = (self.to_f32_pair(), o.to_f32_pair());
                Self::from_f32_pair(a * c - b * d, a * d + b * c)
            }
        }

        impl Div for $name {
            type Output = Self;
            /// Textbook division evaluated in `f64` (products of 16-bit
            /// values are exact there and cannot overflow), each component
            /// rounded once from `f64`.
            fn div(self, o: Self) -> Self {
                let ((a, b), (c, d)) = (self.to_f32_pair(), o.to_f32_pair());
                let den = c as f64 * c as f64 + d as f64 * d as f64;
                let re = (a as f64 * c as f64 + b as f64 * d as f64) / den;
                let im = (b as f64 * c as f64 - a as f64 * d as f64) / den;
                Self { re: $from64(re), im: $from64(im) }
            }
        }

        impl AddAssign for $name {
            fn add_assign(&mut self, o: Self) {
                *self = *self + o;
            }
        }
        impl SubAssign for $name {
            fn sub_assign(&mut self, o: Self) {
                *self = *self - o;
            }
        }
        impl MulAssign for $name {
            fn mul_assign(&mut self, o: Self) {
                *self = *self * o;
            }
        }
        impl DivAssign for $name {
            fn div_assign(&mut self, o: Self) {
                *self = *self / o;
            }
        }

        // SAFETY: `#[repr(C)]` pair of two 2-byte `Pod` types: no padding,
        // every bit pattern valid.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above.
        unsafe impl bytemuck::Pod for $name {}
    };
}

complex_type!(
    /// complex32: a complex number of two IEEE float16 (`half::f16`),
    /// real part first (4 bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::complex32;
    /// let z = complex32::from_f32_pair(1.5, -2.0);
    /// assert_eq!((z * z.conj()).to_f32_pair(), (6.25, 0.0));
    /// assert_eq!(z.to_string(), "(1.5-2j)");
    /// ```
    complex32,
    half::f16,
    half::f16::from_f32,
    half::f16::from_f64,
    half::f16::to_f32
);

complex_type!(
    /// bcomplex32: a complex number of two [`bfloat16`], real part first
    /// (4 bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::bcomplex32;
    /// let z = bcomplex32::from((3.0, 4.0));
    /// assert_eq!(z.norm_sqr(), 25.0);
    /// assert_eq!(format!("{z:?}"), "(3.0+4.0j)");
    /// ```
    bcomplex32,
    bfloat16,
    bfloat16::from_f32,
    bfloat16::from_f64,
    bfloat16::to_f32
);
