//! One generic minifloat; every named ml_dtypes float format is a descriptor.
//!
//! The scalar types [`bfloat16`], [`float16`], [`float8_e3m4`], [`float8_e4m3`],
//! [`float8_e4m3fn`], [`float8_e4m3fnuz`], [`float8_e4m3b11fnuz`],
//! [`float8_e5m2`], [`float8_e5m2fnuz`], [`float8_e8m0fnu`],
//! [`float6_e2m3fn`], [`float6_e3m2fn`] and [`float4_e2m1fn`] are
//! `#[repr(transparent)]` wrappers around their bit pattern (`u8`, `u16` for
//! bfloat16 and float16; sub-byte formats use the low bits). They are all declared by one
//! macro, one line per format, from the [`Format`] descriptors of
//! [`crate::format`]; all arithmetic on codes is done by the generic
//! functions of [`core`], which are the single source of truth for rounding.
//!
//! The trait [`MiniFloat`] gives generic access to every type.
//!
//! # Examples
//!
//! ```
//! use mldtypes::{bfloat16, float8_e4m3fn};
//! let x = float8_e4m3fn::from_f32(464.0); // tie: rounds to even
//! assert_eq!(x.to_f32(), 448.0);
//! assert!(float8_e4m3fn::from_f32(464.01).to_f32().is_nan()); // overflow → NaN
//! let y: bfloat16 = x.convert();
//! assert_eq!(f32::from(y), 448.0);
//! ```

#[macro_use]
mod api;
pub mod complex;
pub mod core;
mod display;
pub(crate) mod kernels;
mod konst;
mod ops;
pub mod parse;
/// Slice and `Vec` conversions of the float types: [`crate::cast::slice`]
/// (the bulk kernels' layer), re-exported here under its former path.
pub use crate::cast::slice;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::iter::{Product, Sum};
use std::num::FpCategory;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};
use std::str::FromStr;

pub use api::MiniFloatOps;
pub use display::Shortest;
pub use parse::{ParseError, ParseErrorKind};
pub use slice::{FloatSliceExt, FloatVecExt};

use crate::format::{self, Format, Overflow};

/// A floating-point scalar type described by a [`Format`] descriptor.
///
/// Implemented by every float type of the crate. All conversions are
/// defined by [`core`] applied to [`MiniFloat::FORMAT`].
///
/// # Examples
///
/// ```
/// use mldtypes::float::MiniFloat;
/// use mldtypes::{float8_e5m2, float6_e2m3fn};
/// fn roundtrip<T: MiniFloat>(x: f32) -> f32 {
///     T::from_f32(x).to_f32()
/// }
/// assert_eq!(roundtrip::<float8_e5m2>(3.3), 3.5);
/// assert_eq!(roundtrip::<float6_e2m3fn>(100.0), 7.5); // float6 saturates
/// ```
pub trait MiniFloat:
    Copy
    + Default
    + fmt::Debug
    + fmt::Display
    + FromStr<Err = ParseError>
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
{
    /// The format descriptor of this type.
    const FORMAT: Format;
    /// The storage type of the bit pattern: `u8`, or `u16` for bfloat16.
    type Bits: Copy + Into<u32> + Eq + std::fmt::Debug;

    /// The value with bit pattern `bits`; bits above [`Format::bits`] are
    /// cleared.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float6_e2m3fn};
    /// let x = <float6_e2m3fn as MiniFloat>::from_bits(0xc8); // high bits ignored
    /// assert_eq!(x.to_f32(), 1.0);
    /// ```
    fn from_bits(bits: Self::Bits) -> Self;

    /// The bit pattern (upper unused bits are zero).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, bfloat16};
    /// assert_eq!(MiniFloat::to_bits(bfloat16::from_f32(-2.0)), 0xc000);
    /// ```
    fn to_bits(self) -> Self::Bits;

    /// The value whose code is the low [`Format::bits`] bits of `code`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float4_e2m1fn};
    /// assert_eq!(float4_e2m1fn::from_code(0x17).to_f32(), 6.0); // 0x7: low 4 bits
    /// ```
    fn from_code(code: u32) -> Self;

    /// The bit pattern as a `u32` code.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, bfloat16};
    /// assert_eq!(MiniFloat::code(bfloat16::from_f32(1.0)), 0x3f80);
    /// ```
    fn code(self) -> u32 {
        self.to_bits().into() & Self::FORMAT.code_mask()
    }

    /// Rounds an `f32` to nearest, ties to even, bit-exact with ml_dtypes
    /// 0.6.0 (see [`crate::float::core::encode_f32`], which also documents
    /// how float8_e8m0fnu treats float32 subnormals, as ml_dtypes and
    /// PyTorch do).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e4m3fnuz};
    /// assert_eq!(<float8_e4m3fnuz as MiniFloat>::from_f32(-0.0).to_bits(), 0); // no −0
    /// ```
    fn from_f32(x: f32) -> Self {
        Self::from_code(crate::float::core::encode_f32(
            &Self::FORMAT,
            x,
            Overflow::NonSaturating,
        ))
    }

    /// Rounds an `f64` to nearest, ties to even, in one step (see
    /// [`crate::float::core::encode_f64`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e5m2};
    /// assert_eq!(<float8_e5m2 as MiniFloat>::from_f64(0.3).to_f64(), 0.3125);
    /// ```
    fn from_f64(x: f64) -> Self {
        Self::from_code(crate::float::core::encode_f64(
            &Self::FORMAT,
            x,
            Overflow::NonSaturating,
        ))
    }

    /// Rounds an `f32`, clamping overflow and ±infinity to ±max finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e4m3fn};
    /// assert_eq!(<float8_e4m3fn as MiniFloat>::from_f32_saturating(1e9).to_f32(), 448.0);
    /// ```
    fn from_f32_saturating(x: f32) -> Self {
        Self::from_code(crate::float::core::encode_f32(
            &Self::FORMAT,
            x,
            Overflow::Saturating,
        ))
    }

    /// Rounds an `f64` in one step, clamping overflow and ±infinity to ±max finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e5m2};
    /// assert_eq!(<float8_e5m2 as MiniFloat>::from_f64_saturating(f64::NEG_INFINITY).to_f64(), -57344.0);
    /// ```
    fn from_f64_saturating(x: f64) -> Self {
        Self::from_code(crate::float::core::encode_f64(
            &Self::FORMAT,
            x,
            Overflow::Saturating,
        ))
    }

    /// The exact value as `f32` (see [`crate::float::core::decode_f32`] for NaN patterns).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e8m0fnu};
    /// assert_eq!(<float8_e8m0fnu as MiniFloat>::from_bits(0x7f).to_f32(), 1.0);
    /// ```
    fn to_f32(self) -> f32 {
        crate::float::core::decode_f32(&Self::FORMAT, self.code())
    }

    /// The exact value as `f64`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, bfloat16};
    /// assert_eq!(<bfloat16 as MiniFloat>::from_bits(0x0001).to_f64(), 2f64.powi(-133));
    /// ```
    fn to_f64(self) -> f64 {
        crate::float::core::decode_f64(&Self::FORMAT, self.code())
    }

    /// Converts to another format directly, correctly rounded, as
    /// ml_dtypes' array casts do (see [`crate::float::core::convert`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{float::MiniFloat, float8_e4m3fn, float8_e5m2};
    /// let x = float8_e4m3fn::from_f32(448.0);
    /// assert_eq!(MiniFloat::convert::<float8_e5m2>(x).to_f32(), 448.0);
    /// ```
    fn convert<U: MiniFloat>(self) -> U {
        U::from_code(crate::float::core::convert(
            &Self::FORMAT,
            &U::FORMAT,
            self.code(),
            Overflow::NonSaturating,
        ))
    }
}

/// Declares the float types, one line per format:
/// `name: storage = FORMAT_CONSTANT, "doc";`.
macro_rules! minifloats {
    ($( $(#[$doc:meta])* $name:ident : $bits:ty = $fmt:ident [$($flag:ident)*]; )*) => {
        $( minifloat_type!($(#[$doc])* $name, $bits, $fmt, [$($flag)*]); )*
    };
}

/// Everything one float type is made of; the body is the same for every
/// format.
macro_rules! minifloat_type {
    ($(#[$doc:meta])* $name:ident, $bits:ty, $fmt:ident, [$($flag:ident)*]) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(transparent)]
        #[derive(Clone, Copy, Default)]
        pub struct $name($bits);

        minifloat_api!($name, $bits, $fmt);

        impl $name {
            /// The format descriptor of this type.
            pub const FORMAT: Format = format::$fmt;

            /// The value with bit pattern `bits`; bits above the format's
            /// width are cleared.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::from_bits(0);")]
            /// assert_eq!(x.to_bits(), 0);
            /// ```
            #[inline]
            pub const fn from_bits(bits: $bits) -> Self {
                Self(bits & (format::$fmt.code_mask() as $bits))
            }

            /// The bit pattern.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32(1.0).to_bits() as u32, ",
                "mldtypes::float::core::encode_f32(&", stringify!($name), "::FORMAT, 1.0, Default::default()));")]
            /// ```
            #[inline]
            pub const fn to_bits(self) -> $bits {
                self.0
            }

            /// Rounds an `f32` to nearest, ties to even, bit-exact with
            /// ml_dtypes 0.6.0 (non-saturating overflow; see
            /// [`crate::float::core::encode_f32`]).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32(1.0).to_f32(), 1.0);")]
            /// ```
            #[inline]
            pub fn from_f32(x: f32) -> Self {
                <Self as MiniFloat>::from_f32(x)
            }

            /// Rounds an `f64` to nearest, ties to even, in a single
            /// rounding step (ml_dtypes rounds through `f32` first; see
            /// [`crate::float::core::encode_f64`] for this deliberate deviation).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f64(2.0).to_f64(), 2.0);")]
            /// ```
            #[inline]
            pub fn from_f64(x: f64) -> Self {
                <Self as MiniFloat>::from_f64(x)
            }

            /// Rounds an `f32`, clamping overflow and ±infinity to ±max
            /// finite; NaN stays NaN where the format has one.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let max = ", stringify!($name), "::FORMAT.max_finite() as f32;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32_saturating(f32::INFINITY).to_f32(), max);")]
            /// ```
            #[inline]
            pub fn from_f32_saturating(x: f32) -> Self {
                <Self as MiniFloat>::from_f32_saturating(x)
            }

            /// Rounds an `f64` in one step, clamping overflow and ±infinity
            /// to ±max finite; NaN stays NaN where the format has one.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let max = ", stringify!($name), "::FORMAT.max_finite();")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f64_saturating(1e300).to_f64(), max);")]
            /// ```
            #[inline]
            pub fn from_f64_saturating(x: f64) -> Self {
                <Self as MiniFloat>::from_f64_saturating(x)
            }

            /// The exact value as `f32`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32(4.0).to_f32(), 4.0);")]
            /// ```
            #[inline]
            pub fn to_f32(self) -> f32 {
                <Self as MiniFloat>::to_f32(self)
            }

            /// The exact value as `f64`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f32(0.5).to_f64(), 0.5);")]
            /// ```
            #[inline]
            pub fn to_f64(self) -> f64 {
                <Self as MiniFloat>::to_f64(self)
            }

            /// Converts directly to another float format, correctly
            /// rounded, as ml_dtypes' array casts do.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::from_f32(2.0);")]
            /// assert_eq!(x.convert::<mldtypes::bfloat16>().to_f32(), 2.0);
            /// ```
            #[inline]
            pub fn convert<U: MiniFloat>(self) -> U {
                <Self as MiniFloat>::convert(self)
            }
        }

        impl MiniFloat for $name {
            const FORMAT: Format = format::$fmt;
            type Bits = $bits;
            #[inline]
            fn from_bits(bits: $bits) -> Self {
                Self::from_bits(bits)
            }
            #[inline]
            fn to_bits(self) -> $bits {
                self.0
            }
            #[inline]
            fn from_code(code: u32) -> Self {
                Self((code & format::$fmt.code_mask()) as $bits)
            }
        }

        impl $name {
            #[inline]
            const fn c(code: u32) -> Self {
                Self(code as $bits)
            }
            #[inline]
            fn code(self) -> u32 {
                <Self as MiniFloat>::code(self)
            }

            /// Largest finite value.
            pub const MAX: Self = Self::c(format::$fmt.max_code());
            /// Smallest finite value: −[`Self::MAX`] if the format is
            /// signed, its smallest positive value if it is unsigned
            /// ([`Format::signed`]).
            pub const MIN: Self = Self::c(ops::min_code(&format::$fmt));
            /// Smallest positive normal value (finfo's `smallest_normal`, `tiny`).
            pub const MIN_POSITIVE: Self = Self::c(ops::min_positive_code(&format::$fmt));
            /// Smallest positive value: the smallest subnormal, or
            /// [`Self::MIN_POSITIVE`] when the format has no subnormals.
            pub const MIN_POSITIVE_SUBNORMAL: Self = Self::c(ops::min_subnormal_code(&format::$fmt));
            /// Machine epsilon, the gap between 1 and the next larger value: `2^-man_bits`.
            pub const EPSILON: Self = Self::c(ops::pow2_code(&format::$fmt, -(format::$fmt.man_bits as i32)));
            /// One.
            pub const ONE: Self = Self::c(ops::pow2_code(&format::$fmt, 0));

            /// Whether this is NaN.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(!T::ONE.is_nan());
            /// ```
            #[inline]
            pub fn is_nan(self) -> bool {
                format::$fmt.is_nan_code(self.code())
            }

            /// Whether this is +infinity or −infinity (always false in
            /// formats without infinities).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(!T::MAX.is_infinite());
            /// ```
            #[inline]
            pub fn is_infinite(self) -> bool {
                ops::is_infinite(&format::$fmt, self.code())
            }

            /// Whether this is neither infinite nor NaN.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(T::MAX.is_finite());
            /// ```
            #[inline]
            pub fn is_finite(self) -> bool {
                !self.is_nan() && !self.is_infinite()
            }

            /// Whether this is a normal number (not zero, subnormal,
            /// infinite or NaN).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(T::MIN_POSITIVE.is_normal());
            /// ```
            #[inline]
            pub fn is_normal(self) -> bool {
                self.classify() == FpCategory::Normal
            }

            /// Whether this is a subnormal number.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(!T::MIN_POSITIVE.is_subnormal());
            /// ```
            #[inline]
            pub fn is_subnormal(self) -> bool {
                self.classify() == FpCategory::Subnormal
            }

            /// Whether the sign bit is set (including −0 and negative NaN;
            /// the fnuz NaN `0x80` counts as negative).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(!T::ONE.is_sign_negative());
            /// ```
            #[inline]
            pub fn is_sign_negative(self) -> bool {
                ops::sign_negative(&format::$fmt, self.code())
            }

            /// Whether the sign bit is clear.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(T::MAX.is_sign_positive());
            /// ```
            #[inline]
            pub fn is_sign_positive(self) -> bool {
                !self.is_sign_negative()
            }

            /// The floating-point category of the value.
            ///
            /// # Examples
            ///
            /// ```
            /// use std::num::FpCategory;
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::ONE.classify(), FpCategory::Normal);
            /// ```
            #[inline]
            pub fn classify(self) -> FpCategory {
                ops::classify(&format::$fmt, self.code())
            }

            /// Absolute value (clears the sign bit; the fnuz NaN stays NaN).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::MIN.abs(), if T::FORMAT.signed { T::MAX } else { T::MIN });
            /// ```
            #[inline]
            pub fn abs(self) -> Self {
                Self::c(ops::abs(&format::$fmt, self.code()))
            }

            /// The magnitude of `self` with the sign of `sign`. fnuz zero
            /// and NaN are unchanged (they have one encoding).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::ONE.copysign(T::MAX), T::ONE);
            /// ```
            #[inline]
            pub fn copysign(self, sign: Self) -> Self {
                Self::c(ops::copysign(&format::$fmt, self.code(), sign.code()))
            }

            /// Rust's `signum`: 1 for positive values and +0, −1 for
            /// negative values and −0, NaN for NaN (ml_dtypes' `np.sign`
            /// differs: it gives 0 for zeros).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::MAX.signum(), T::ONE);
            /// ```
            #[inline]
            pub fn signum(self) -> Self {
                if self.is_nan() {
                    self
                } else {
                    Self::from_f32(self.to_f32().signum())
                }
            }

            /// The least value greater than `self` (IEEE `nextUp`). NaN
            /// stays NaN; the largest finite value steps to +infinity, to
            /// NaN in formats with NaN but no infinities, and to itself in
            /// formats with neither.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(T::ONE.next_up() > T::ONE);
            /// ```
            #[inline]
            pub fn next_up(self) -> Self {
                Self::c(ops::next_up(&format::$fmt, self.code()))
            }

            /// The greatest value less than `self` (IEEE `nextDown`); the
            /// mirror image of [`Self::next_up`]. In a format without a
            /// zero, the smallest value steps down to NaN.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert!(T::ONE.next_down() < T::ONE);
            /// ```
            #[inline]
            pub fn next_down(self) -> Self {
                Self::c(ops::next_down(&format::$fmt, self.code()))
            }

            /// IEEE 754 `totalOrder`: −NaN < −inf < … < −0 < +0 < … < +inf
            /// < +NaN (the fnuz NaN, negative as an `f32`, sorts first).
            ///
            /// # Examples
            ///
            /// ```
            /// use std::cmp::Ordering;
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::ONE.total_cmp(&T::MAX), Ordering::Less);
            /// ```
            #[inline]
            pub fn total_cmp(&self, other: &Self) -> Ordering {
                ops::total_cmp(&format::$fmt, self.code(), other.code())
            }

            /// The larger of two values, ignoring NaN (like `f32::max`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::ONE.max(T::MAX), T::MAX);
            /// ```
            #[inline]
            pub fn max(self, other: Self) -> Self {
                if self.is_nan() || other > self { other } else { self }
            }

            /// The smaller of two values, ignoring NaN (like `f32::min`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::ONE.min(T::MAX), T::ONE);
            /// ```
            #[inline]
            pub fn min(self, other: Self) -> Self {
                if self.is_nan() || other < self { other } else { self }
            }
        }

        $( minifloat_flag!($flag, $name, $bits, $fmt); )*

        impl PartialEq for $name {
            /// Equality by value: NaN is unequal to everything, +0 == −0.
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            /// Ordering by value; NaN is unordered.
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl Hash for $name {
            /// Hashes the value, consistently with `PartialEq` (+0 and −0
            /// hash alike).
            fn hash<H: Hasher>(&self, state: &mut H) {
                ops::hash_code(&format::$fmt, self.code()).hash(state)
            }
        }

        impl fmt::Display for $name {
            /// The value's `f32` text, as `half` prints (`f32`'s
            /// `Display`, precision and flags included): the stored value,
            /// e.g. `float8_e4m3fn::from_f32(300.0)` prints `288`. See
            /// [`Self::shortest`] for the shortest text that reads back.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Debug for $name {
            /// The value's `f32` `Debug` text (`1.0`, `3.3895314e38`).
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::LowerExp for $name {
            /// The value's `f32` text in exponent form, e.g. `1.5e3`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerExp::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::UpperExp for $name {
            /// The value's `f32` text in exponent form, e.g. `1.5E3`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::UpperExp::fmt(&self.to_f32(), f)
            }
        }

        impl FromStr for $name {
            type Err = ParseError;
            /// Correctly rounded from the decimal (or hexadecimal) text
            /// itself, never panicking; see [`parse::parse_code`] (also for
            /// how this deviates from ml_dtypes, which rounds string input
            /// twice and crashes on invalid text).
            fn from_str(s: &str) -> Result<Self, ParseError> {
                parse::parse_code(&format::$fmt, s).map(Self::c)
            }
        }

        impl From<$name> for f32 {
            /// Exact widening (every value of the format is an `f32`).
            #[inline]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            /// Exact widening.
            #[inline]
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }

        impl Neg for $name {
            type Output = Self;
            /// Negation as ml_dtypes does it: a sign-bit flip, except that
            /// without −0 the zero and the NaN are their own negation, and
            /// in an unsigned format every value negates to NaN.
            #[inline]
            fn neg(self) -> Self {
                Self::c(ops::neg(&format::$fmt, self.code()))
            }
        }

        minifloat_binop!($name, Add, add, AddAssign, add_assign, +);
        minifloat_binop!($name, Sub, sub, SubAssign, sub_assign, -);
        minifloat_binop!($name, Mul, mul, MulAssign, mul_assign, *);
        minifloat_binop!($name, Div, div, DivAssign, div_assign, /);
        minifloat_binop!($name, Rem, rem, RemAssign, rem_assign, %);

        impl num_traits::Bounded for $name {
            fn min_value() -> Self {
                Self::MIN
            }
            fn max_value() -> Self {
                Self::MAX
            }
        }

        impl num_traits::One for $name {
            fn one() -> Self {
                Self::ONE
            }
        }

        impl num_traits::ToPrimitive for $name {
            fn to_i64(&self) -> Option<i64> {
                num_traits::ToPrimitive::to_i64(&$name::to_f64(*self))
            }
            fn to_u64(&self) -> Option<u64> {
                num_traits::ToPrimitive::to_u64(&$name::to_f64(*self))
            }
            fn to_i128(&self) -> Option<i128> {
                num_traits::ToPrimitive::to_i128(&$name::to_f64(*self))
            }
            fn to_u128(&self) -> Option<u128> {
                num_traits::ToPrimitive::to_u128(&$name::to_f64(*self))
            }
            fn to_f32(&self) -> Option<f32> {
                Some($name::to_f32(*self))
            }
            fn to_f64(&self) -> Option<f64> {
                Some($name::to_f64(*self))
            }
        }

        impl num_traits::FromPrimitive for $name {
            /// Correctly rounded from the integer (no rounding through `f64`).
            fn from_i64(n: i64) -> Option<Self> {
                Some(Self::c(int_code(&format::$fmt, n < 0, n.unsigned_abs() as u128)))
            }
            fn from_u64(n: u64) -> Option<Self> {
                Some(Self::c(int_code(&format::$fmt, false, n as u128)))
            }
            fn from_i128(n: i128) -> Option<Self> {
                Some(Self::c(int_code(&format::$fmt, n < 0, n.unsigned_abs())))
            }
            fn from_u128(n: u128) -> Option<Self> {
                Some(Self::c(int_code(&format::$fmt, false, n)))
            }
            fn from_f32(x: f32) -> Option<Self> {
                Some(Self::from_f32(x))
            }
            fn from_f64(x: f64) -> Option<Self> {
                Some(Self::from_f64(x))
            }
        }

        impl num_traits::NumCast for $name {
            /// Correctly rounded from any primitive: integers beyond 2^53
            /// are rounded from their exact value, floats from their value.
            fn from<N: num_traits::ToPrimitive>(n: N) -> Option<Self> {
                let f = n.to_f64()?;
                if f.is_finite() && f.trunc() == f && f.abs() >= 9007199254740992.0 {
                    if let Some(i) = n.to_i128() {
                        return num_traits::FromPrimitive::from_i128(i);
                    }
                    if let Some(u) = n.to_u128() {
                        return num_traits::FromPrimitive::from_u128(u);
                    }
                }
                Some(Self::from_f64(f))
            }
        }

        // SAFETY: `#[repr(transparent)]` over an integer; every bit pattern
        // is a valid value (bits above the format's width are ignored).
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above; no padding, no pointers, `Copy + 'static`.
        unsafe impl bytemuck::Pod for $name {}

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            /// A finite value is a number, its exact `f32` value. NaN and
            /// the infinities are the strings `"NaN"`, `"inf"` and `"-inf"`
            /// in human-readable formats such as JSON (which has no
            /// numbers for them); other formats (bincode, ...) get the
            /// `f32` itself.
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let x = self.to_f32();
                if s.is_human_readable() && !x.is_finite() {
                    s.serialize_str(if x.is_nan() {
                        "NaN"
                    } else if x > 0.0 {
                        "inf"
                    } else {
                        "-inf"
                    })
                } else {
                    s.serialize_f32(x)
                }
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            /// Correctly rounded from a number (`f32`, `f64` or integer),
            /// or, in human-readable formats, from a string this type's
            /// `FromStr` accepts: `"NaN"`, `"inf"`, `"-inf"` (as
            /// `Serialize` writes them), or decimal text. Errors name the
            /// type and the input.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                if d.is_human_readable() {
                    d.deserialize_any(NumberVisitor::<$name>::new())
                } else {
                    d.deserialize_f32(NumberVisitor::<$name>::new())
                }
            }
        }
    };
}

/// Optional constants and traits, keyed by one word of a format's line;
/// each checks at compile time that the descriptor agrees.
macro_rules! minifloat_flag {
    (zero, $name:ident, $bits:ty, $fmt:ident) => {
        const _: () = assert!(format::$fmt.has_zero);
        impl $name {
            /// Positive zero.
            pub const ZERO: Self = Self::c(0);
            /// −1 (every format with a zero is signed here).
            pub const NEG_ONE: Self =
                Self::c(ops::pow2_code(&format::$fmt, 0) | format::$fmt.sign_mask());
            /// The largest subnormal value (all mantissa bits set, exponent
            /// field zero).
            pub const MAX_SUBNORMAL: Self = Self::c(format::$fmt.man_mask());
        }
        impl num_traits::Zero for $name {
            fn zero() -> Self {
                Self::ZERO
            }
            fn is_zero(&self) -> bool {
                ops::is_zero(&format::$fmt, self.code())
            }
        }
        minifloat_float_core!($name);
        impl num_traits::Num for $name {
            type FromStrRadixErr = ParseError;
            /// Radix 10 is [`FromStr`]; other radixes are not supported
            /// and give [`ParseErrorKind::Invalid`].
            fn from_str_radix(s: &str, radix: u32) -> Result<Self, ParseError> {
                if radix == 10 {
                    s.parse()
                } else {
                    "invalid radix".parse()
                }
            }
        }
    };
    (neg_zero, $name:ident, $bits:ty, $fmt:ident) => {
        const _: () = assert!(format::$fmt.has_signed_zero());
        impl $name {
            /// Negative zero.
            pub const NEG_ZERO: Self = Self::c(format::$fmt.sign_mask());
        }
    };
    (inf, $name:ident, $bits:ty, $fmt:ident) => {
        const _: () = assert!(format::$fmt.has_infinity());
        impl $name {
            /// Positive infinity.
            pub const INFINITY: Self = Self::c(format::$fmt.exp_mask());
            /// Negative infinity.
            pub const NEG_INFINITY: Self =
                Self::c(format::$fmt.exp_mask() | format::$fmt.sign_mask());
        }
    };
    (nan, $name:ident, $bits:ty, $fmt:ident) => {
        const _: () = assert!(format::$fmt.has_nan());
        impl $name {
            /// The canonical NaN: the code [`Format::nan_code`] gives for
            /// this format (the positive quiet NaN where NaNs are IEEE ones).
            pub const NAN: Self = Self::c(match format::$fmt.nan_code() {
                Some(c) => c,
                None => 0,
            });
        }
    };
    (float, $name:ident, $bits:ty, $fmt:ident) => {
        minifloat_float!($name);
    };
}

/// One arithmetic operator, computed in `f32` and rounded once.
macro_rules! minifloat_binop {
    ($name:ident, $tr:ident, $m:ident, $atr:ident, $am:ident, $op:tt) => {
        impl $tr for $name {
            type Output = Self;
            /// Computed in `f32` and rounded once to this format, as
            /// ml_dtypes does. `%` is Rust's (and C's `fmod`) truncated
            /// remainder; NumPy's `%` (`np.remainder`) is the floored one.
            #[inline]
            fn $m(self, rhs: Self) -> Self {
                Self::from_f32(self.to_f32() $op rhs.to_f32())
            }
        }
        impl $atr for $name {
            #[inline]
            fn $am(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
    };
}

/// `num_traits::Float`, for the IEEE-like formats: every function is
/// evaluated in `f32` and rounded once.
macro_rules! minifloat_float {
    ($name:ident) => {
        impl num_traits::Float for $name {
            fn nan() -> Self {
                Self::NAN
            }
            fn infinity() -> Self {
                Self::INFINITY
            }
            fn neg_infinity() -> Self {
                Self::NEG_INFINITY
            }
            fn neg_zero() -> Self {
                Self::NEG_ZERO
            }
            fn min_value() -> Self {
                Self::MIN
            }
            fn min_positive_value() -> Self {
                Self::MIN_POSITIVE
            }
            fn epsilon() -> Self {
                Self::EPSILON
            }
            fn max_value() -> Self {
                Self::MAX
            }
            fn is_nan(self) -> bool {
                $name::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                $name::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                $name::is_finite(self)
            }
            fn is_normal(self) -> bool {
                $name::is_normal(self)
            }
            fn is_subnormal(self) -> bool {
                $name::is_subnormal(self)
            }
            fn classify(self) -> FpCategory {
                $name::classify(self)
            }
            fn abs(self) -> Self {
                $name::abs(self)
            }
            fn signum(self) -> Self {
                $name::signum(self)
            }
            fn is_sign_positive(self) -> bool {
                $name::is_sign_positive(self)
            }
            fn is_sign_negative(self) -> bool {
                $name::is_sign_negative(self)
            }
            fn copysign(self, sign: Self) -> Self {
                $name::copysign(self, sign)
            }
            fn max(self, other: Self) -> Self {
                $name::max(self, other)
            }
            fn min(self, other: Self) -> Self {
                $name::min(self, other)
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                Self::from_f32(self.to_f32().mul_add(a.to_f32(), b.to_f32()))
            }
            fn powi(self, n: i32) -> Self {
                Self::from_f32(self.to_f32().powi(n))
            }
            fn powf(self, n: Self) -> Self {
                Self::from_f32(self.to_f32().powf(n.to_f32()))
            }
            fn log(self, base: Self) -> Self {
                Self::from_f32(self.to_f32().log(base.to_f32()))
            }
            #[allow(deprecated)]
            fn abs_sub(self, other: Self) -> Self {
                Self::from_f32(num_traits::Float::abs_sub(self.to_f32(), other.to_f32()))
            }
            fn hypot(self, other: Self) -> Self {
                Self::from_f32(self.to_f32().hypot(other.to_f32()))
            }
            fn atan2(self, other: Self) -> Self {
                Self::from_f32(self.to_f32().atan2(other.to_f32()))
            }
            fn sin_cos(self) -> (Self, Self) {
                let (s, c) = self.to_f32().sin_cos();
                (Self::from_f32(s), Self::from_f32(c))
            }
            fn integer_decode(self) -> (u64, i16, i8) {
                num_traits::Float::integer_decode(self.to_f32())
            }
            minifloat_float!(@unary $name: floor ceil round trunc fract recip sqrt exp exp2 ln
                log2 log10 cbrt sin cos tan asin acos atan exp_m1 ln_1p sinh cosh tanh
                asinh acosh atanh to_degrees to_radians);
        }
    };
    (@unary $name:ident: $($f:ident)*) => {
        $(
            fn $f(self) -> Self {
                Self::from_f32(self.to_f32().$f())
            }
        )*
    };
}

/// The code of the integer `(-1)^neg × mag`, correctly rounded.
fn int_code(fmt: &Format, neg: bool, mag: u128) -> u32 {
    let (sig, exp, sticky) = if mag >> 64 == 0 {
        (mag as u64, 0, false)
    } else {
        let shift = 64 - mag.leading_zeros();
        let sticky = mag & ((1u128 << shift) - 1) != 0;
        ((mag >> shift) as u64, shift as i64, sticky)
    };
    core::encode_exact(fmt, neg, sig, exp, sticky, Overflow::NonSaturating)
}

/// serde visitor accepting any number, rounding it once into `T`.
#[cfg(feature = "serde")]
struct NumberVisitor<T>(std::marker::PhantomData<T>);

#[cfg(feature = "serde")]
impl<T> NumberVisitor<T> {
    fn new() -> Self {
        NumberVisitor(std::marker::PhantomData)
    }
}

#[cfg(feature = "serde")]
impl<'de, T: MiniFloat> serde::de::Visitor<'de> for NumberVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a number representable as {}", T::FORMAT.name)
    }
    fn visit_f32<E: serde::de::Error>(self, v: f32) -> Result<T, E> {
        Ok(T::from_f32(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::from_code(int_code(
            &T::FORMAT,
            v < 0,
            v.unsigned_abs() as u128,
        )))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::from_code(int_code(&T::FORMAT, false, v as u128)))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        parse::parse_code(&T::FORMAT, v)
            .map(T::from_code)
            .map_err(|e| E::custom(format_args!("{e}: {v:?}")))
    }
    /// `null`, which serde_json writes for a float NaN, is NaN in formats
    /// that have one.
    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        match T::FORMAT.nan_code() {
            Some(c) => Ok(T::from_code(c)),
            None => Err(E::custom(format_args!(
                "null (NaN) is not a {} value: the format has no NaN",
                T::FORMAT.name
            ))),
        }
    }
}

macro_rules! from_small_int {
    ($f:ident: $($t:ty),*) => {$(
        impl From<$t> for $f {
            /// Exact: every value of the integer type is a value of the
            /// format (8 significant bits at most are needed).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let x = mldtypes::", stringify!($f), "::from(", stringify!($t), "::MAX);")]
            #[doc = concat!("assert_eq!(x.to_f32(), ", stringify!($t), "::MAX as f32);")]
            /// ```
            #[inline]
            fn from(x: $t) -> $f {
                $f::from_f32(x as f32)
            }
        }
    )*};
}
from_small_int!(bfloat16: u8, i8);
from_small_int!(float16: u8, i8);

impl From<float16> for half::f16 {
    /// Zero-cost: the same bits.
    ///
    /// # Examples
    ///
    /// ```
    /// let x = mldtypes::float16::from_f32(1.5);
    /// assert_eq!(half::f16::from(x), half::f16::from_f32(1.5));
    /// ```
    #[inline]
    fn from(x: float16) -> half::f16 {
        half::f16::from_bits(x.to_bits())
    }
}

/// `half::f16`'s mathematical constants as inherent constants (as there;
/// the other formats give them through `num_traits::FloatConst`, whose
/// methods these would shadow).
impl float16 {
    /// Euler's number `e`, rounded to float16 (`half::f16`'s constant).
    pub const E: Self = Self::from_f64_const(std::f64::consts::E);
    /// π, rounded to float16 (`half::f16`'s constant).
    pub const PI: Self = Self::from_f64_const(std::f64::consts::PI);
    /// τ = 2π, rounded to float16 (`half` has no `TAU`; `FloatConst::TAU`'s value).
    pub const TAU: Self = Self::from_f64_const(std::f64::consts::TAU);
    /// 1/π, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_1_PI: Self = Self::from_f64_const(std::f64::consts::FRAC_1_PI);
    /// 1/√2, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_1_SQRT_2: Self = Self::from_f64_const(std::f64::consts::FRAC_1_SQRT_2);
    /// 2/π, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_2_PI: Self = Self::from_f64_const(std::f64::consts::FRAC_2_PI);
    /// 2/√π, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_2_SQRT_PI: Self = Self::from_f64_const(std::f64::consts::FRAC_2_SQRT_PI);
    /// π/2, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_PI_2: Self = Self::from_f64_const(std::f64::consts::FRAC_PI_2);
    /// π/3, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_PI_3: Self = Self::from_f64_const(std::f64::consts::FRAC_PI_3);
    /// π/4, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_PI_4: Self = Self::from_f64_const(std::f64::consts::FRAC_PI_4);
    /// π/6, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_PI_6: Self = Self::from_f64_const(std::f64::consts::FRAC_PI_6);
    /// π/8, rounded to float16 (`half::f16`'s constant).
    pub const FRAC_PI_8: Self = Self::from_f64_const(std::f64::consts::FRAC_PI_8);
    /// ln 10, rounded to float16 (`half::f16`'s constant).
    pub const LN_10: Self = Self::from_f64_const(std::f64::consts::LN_10);
    /// ln 2, rounded to float16 (`half::f16`'s constant).
    pub const LN_2: Self = Self::from_f64_const(std::f64::consts::LN_2);
    /// log10 e, rounded to float16 (`half::f16`'s constant).
    pub const LOG10_E: Self = Self::from_f64_const(std::f64::consts::LOG10_E);
    /// log10 2, rounded to float16 (`half::f16`'s constant).
    pub const LOG10_2: Self = Self::from_f64_const(std::f64::consts::LOG10_2);
    /// log2 e, rounded to float16 (`half::f16`'s constant).
    pub const LOG2_E: Self = Self::from_f64_const(std::f64::consts::LOG2_E);
    /// log2 10, rounded to float16 (`half::f16`'s constant).
    pub const LOG2_10: Self = Self::from_f64_const(std::f64::consts::LOG2_10);
    /// √2, rounded to float16 (`half::f16`'s constant).
    pub const SQRT_2: Self = Self::from_f64_const(std::f64::consts::SQRT_2);
}

impl From<half::f16> for float16 {
    /// Zero-cost: the same bits.
    ///
    /// # Examples
    ///
    /// ```
    /// let x = mldtypes::float16::from(half::f16::from_f32(-2.0));
    /// assert_eq!(x.to_f32(), -2.0);
    /// ```
    #[inline]
    fn from(x: half::f16) -> float16 {
        float16::from_bits(x.to_bits())
    }
}

impl From<bfloat16> for half::bf16 {
    /// Zero-cost: the same bits.
    ///
    /// # Examples
    ///
    /// ```
    /// let x = mldtypes::bfloat16::from_f32(1.5);
    /// assert_eq!(half::bf16::from(x), half::bf16::from_f32(1.5));
    /// ```
    #[inline]
    fn from(x: bfloat16) -> half::bf16 {
        half::bf16::from_bits(x.to_bits())
    }
}

impl From<half::bf16> for bfloat16 {
    /// Zero-cost: the same bits.
    ///
    /// # Examples
    ///
    /// ```
    /// let x = mldtypes::bfloat16::from(half::bf16::from_f32(-2.0));
    /// assert_eq!(x.to_f32(), -2.0);
    /// ```
    #[inline]
    fn from(x: half::bf16) -> bfloat16 {
        bfloat16::from_bits(x.to_bits())
    }
}

minifloats! {
    /// bfloat16: the upper 16 bits of an IEEE float32 (1 sign, 8 exponent,
    /// 7 mantissa bits, bias 127), with infinities and NaN. `Default` is
    /// +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::bfloat16;
    /// let x = bfloat16::from_f32(0.1);
    /// assert_eq!(x.to_bits(), 0x3dcd);
    /// assert_eq!(x.to_string(), "0.100097656"); // the stored value
    /// let s: bfloat16 = [x; 1000].iter().sum(); // f32 accumulation
    /// assert_eq!(s.to_f32(), 100.0);
    /// assert_eq!(bfloat16::from(255u8).to_f32(), 255.0);
    /// ```
    bfloat16: u16 = BFLOAT16 [zero neg_zero inf nan float];
    /// float16: IEEE 754 binary16 (half precision; `half::f16`, NumPy's
    /// `float16`): 1 sign, 5 exponent, 10 mantissa bits, bias 15, with
    /// infinities and NaN; max 65504. `Default` is +0.
    ///
    /// Every value and every rounding from `f32` is `half::f16`'s, bit for
    /// bit; `from_f64` rounds once (`half::f16::from_f64` rounds through
    /// `f32` on x86 with F16C, twice, and its software fallback ignores the
    /// low 29 bits of the `f64`). NaN payloads follow NumPy's float16
    /// conversions (sign and top payload bits kept, no quiet bit forced),
    /// where `half` sets the quiet bit of a signalling NaN.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float16;
    /// assert_eq!(float16::MAX.to_f32(), 65504.0);
    /// assert_eq!(float16::from_f32(0.1).to_bits(), half::f16::from_f32(0.1).to_bits());
    /// assert_eq!(float16::PI.to_f32(), 3.140625);
    /// assert!(float16::from_f32(65520.0).is_infinite()); // the tie above MAX overflows
    /// let s: float16 = [float16::from_f32(0.1); 1000].iter().sum(); // f32 accumulation
    /// assert_eq!(s.to_f32(), 100.0);
    /// ```
    float16: u16 = FLOAT16 [zero neg_zero inf nan float];
    /// float8_e3m4: 1 sign, 3 exponent, 4 mantissa bits, bias 3, IEEE
    /// infinities and NaN; max 15.5. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e3m4;
    /// assert_eq!(float8_e3m4::MAX.to_f32(), 15.5);
    /// assert!(float8_e3m4::from_f32(16.0).is_infinite());
    /// assert_eq!(float8_e3m4::from_f32(1.03).to_f32(), 1.0);
    /// ```
    float8_e3m4: u8 = FLOAT8_E3M4 [zero neg_zero inf nan float];
    /// float8_e4m3: 1 sign, 4 exponent, 3 mantissa bits, bias 7, IEEE
    /// infinities and NaN; max 240. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e4m3;
    /// assert_eq!(float8_e4m3::MAX.to_f32(), 240.0);
    /// assert!(float8_e4m3::from_f32(248.0).is_infinite());
    /// assert_eq!(float8_e4m3::from_f32(-3.3).to_f32(), -3.25);
    /// ```
    float8_e4m3: u8 = FLOAT8_E4M3 [zero neg_zero inf nan float];
    /// float8_e4m3fn (OCP FP8 E4M3): bias 7, no infinities, NaN
    /// `0bS111_1111`; max 448. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e4m3fn;
    /// assert_eq!(float8_e4m3fn::MAX.to_string(), "448");
    /// assert_eq!(float8_e4m3fn::from_f32(300.0).to_string(), "288");
    /// assert!(float8_e4m3fn::from_f32(f32::INFINITY).is_nan()); // no infinity
    /// assert_eq!(float8_e4m3fn::from_f32_saturating(1e6), float8_e4m3fn::MAX);
    /// ```
    float8_e4m3fn: u8 = FLOAT8_E4M3FN [zero neg_zero nan];
    /// float8_e4m3fnuz: bias 8, no infinities, no −0, single NaN `0x80`;
    /// max 240. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e4m3fnuz;
    /// assert_eq!(float8_e4m3fnuz::MAX.to_f32(), 240.0);
    /// assert_eq!(float8_e4m3fnuz::from_f32(-0.0).to_bits(), 0x00); // no −0
    /// assert_eq!(float8_e4m3fnuz::NAN.to_bits(), 0x80);
    /// ```
    float8_e4m3fnuz: u8 = FLOAT8_E4M3FNUZ [zero nan];
    /// float8_e4m3b11fnuz: bias 11, no infinities, no −0, single NaN
    /// `0x80`; max 30. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e4m3b11fnuz;
    /// assert_eq!(float8_e4m3b11fnuz::MAX.to_f32(), 30.0);
    /// assert!(float8_e4m3b11fnuz::from_f32(32.0).is_nan());
    /// assert_eq!(float8_e4m3b11fnuz::MIN_POSITIVE.to_f32(), 2f32.powi(-10));
    /// ```
    float8_e4m3b11fnuz: u8 = FLOAT8_E4M3B11FNUZ [zero nan];
    /// float8_e5m2 (OCP FP8 E5M2): 1 sign, 5 exponent, 2 mantissa bits,
    /// bias 15, IEEE infinities and NaN; max 57344. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e5m2;
    /// assert_eq!(float8_e5m2::MAX.to_f32(), 57344.0);
    /// assert_eq!(float8_e5m2::from_f32(0.3).to_f32(), 0.3125);
    /// assert_eq!((float8_e5m2::ONE + &float8_e5m2::ONE).to_f32(), 2.0);
    /// ```
    float8_e5m2: u8 = FLOAT8_E5M2 [zero neg_zero inf nan float];
    /// float8_e5m2fnuz: bias 16, no infinities, no −0, single NaN `0x80`;
    /// max 57344. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e5m2fnuz;
    /// assert_eq!(float8_e5m2fnuz::MAX.to_f32(), 57344.0);
    /// assert!(float8_e5m2fnuz::from_f32(f32::INFINITY).is_nan());
    /// assert_eq!((-float8_e5m2fnuz::ZERO).to_bits(), 0x00);
    /// ```
    float8_e5m2fnuz: u8 = FLOAT8_E5M2FNUZ [zero nan];
    /// float8_e8m0fnu (OCP MX E8M0 scale): unsigned, 8 exponent bits, no
    /// mantissa, no zero, no infinities, NaN `0xFF`; values 2^-127 … 2^127.
    /// Conversions round ties away from zero (up), give NaN for zero,
    /// negatives and overflow, and `0x00` for positive values below 2^-127.
    /// `from_f64` gives NaN for [1.5·2^128, 2^129), where ml_dtypes'
    /// constructor wrongly returns `0x00`. `from_f32` turns every float32
    /// subnormal above 2^-127 into 2^-126 (`0x01`), as ml_dtypes 0.6.0 and
    /// PyTorch 2.15 do, although (2^-127, 1.5·2^-127) lies nearer 2^-127;
    /// `from_f64` rounds those values to nearest (`0x00`). Having no zero,
    /// its `Default` is the code `0x00` (2^-127), which is also what
    /// `np.zeros` holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float8_e8m0fnu;
    /// assert_eq!(float8_e8m0fnu::from_f32(1.5).to_f32(), 2.0); // tie: up
    /// assert!(float8_e8m0fnu::from_f32(0.0).is_nan()); // no zero
    /// assert_eq!(float8_e8m0fnu::default().to_f64(), 2f64.powi(-127));
    /// assert_eq!(float8_e8m0fnu::from_f32(f32::from_bits(0x0040_0001)).to_bits(), 0x01);
    /// ```
    float8_e8m0fnu: u8 = FLOAT8_E8M0FNU [nan];
    /// float6_e2m3fn (OCP MX FP6 E2M3): `0bSEEMMM` in the low 6 bits, bias 1,
    /// finite only; max 7.5. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float6_e2m3fn;
    /// assert_eq!(float6_e2m3fn::MAX.to_f32(), 7.5);
    /// assert_eq!(float6_e2m3fn::from_f32(100.0).to_f32(), 7.5); // saturates, as ml_dtypes
    /// assert_eq!(float6_e2m3fn::from_f32(0.3).to_f32(), 0.25);
    /// ```
    float6_e2m3fn: u8 = FLOAT6_E2M3FN [zero neg_zero];
    /// float6_e3m2fn (OCP MX FP6 E3M2): `0bSEEEMM` in the low 6 bits, bias 3,
    /// finite only; max 28. `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float6_e3m2fn;
    /// assert_eq!(float6_e3m2fn::MAX.to_f32(), 28.0);
    /// assert_eq!(float6_e3m2fn::from_f32(-1e9).to_f32(), -28.0);
    /// assert_eq!(float6_e3m2fn::from_bits(0xff).to_bits(), 0x3f); // 6 bits kept
    /// ```
    float6_e3m2fn: u8 = FLOAT6_E3M2FN [zero neg_zero];
    /// float4_e2m1fn (OCP MX FP4 E2M1): `0bSEEM` in the low 4 bits, bias 1,
    /// finite only; values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
    /// `Default` is +0.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::float4_e2m1fn;
    /// let v: Vec<f32> = (0..8u8).map(|c| float4_e2m1fn::from_bits(c).to_f32()).collect();
    /// assert_eq!(v, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    /// assert_eq!(float4_e2m1fn::from_f32(2.5).to_f32(), 2.0); // tie to even
    /// ```
    float4_e2m1fn: u8 = FLOAT4_E2M1FN [zero neg_zero];
}

minifloat_as_between!(bfloat16 float16 float8_e3m4 float8_e4m3 float8_e4m3fn float8_e4m3fnuz
    float8_e4m3b11fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float6_e2m3fn float6_e3m2fn
    float4_e2m1fn);

/// Negation of a code of any format, as ml_dtypes negates its scalars:
/// the sign bit is flipped (NaN payloads and −0 kept), except that the zero
/// and the NaN of formats whose NaN is the would-be −0 code ("fnuz") are
/// their own negation, and every code of an unsigned format negates to its
/// NaN (0 < x, so −x is not representable; float8_e8m0fnu has no zero).
///
/// # Examples
///
/// ```
/// use mldtypes::float::negate_code;
/// use mldtypes::format::{FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E8M0FNU};
/// assert_eq!(negate_code(&FLOAT8_E4M3FN, 0x38), 0xb8); // 1.0 → −1.0
/// assert_eq!(negate_code(&FLOAT8_E4M3FN, 0x00), 0x80); // +0 → −0
/// assert_eq!(negate_code(&FLOAT8_E4M3FNUZ, 0x00), 0x00); // single zero
/// assert_eq!(negate_code(&FLOAT8_E8M0FNU, 0x7f), 0xff); // unsigned → NaN
/// ```
pub fn negate_code(fmt: &Format, code: u32) -> u32 {
    ops::neg(fmt, code)
}
