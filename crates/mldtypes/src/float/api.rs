//! What Rust numeric code expects of a float type, for every format: the
//! [`MiniFloatOps`] trait (arithmetic, constants and classification in
//! generic code), operators on references, `Sum`/`Product`, byte
//! conversions, `const` constructors and the `num_traits` traits that
//! `half` implements (`FloatConst`, `FloatCore`, `AsPrimitive`,
//! `ToBytes`/`FromBytes`).

use std::iter::{Product, Sum};
use std::num::FpCategory;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

use super::MiniFloat;

/// Generic code over every float format: arithmetic (by value and by
/// reference, computed in `f32` and rounded once), `Sum`/`Product`
/// (accumulated in `f32`, rounded once), the format's constants and IEEE
/// classification.
///
/// [`MiniFloat`] gives the conversions; this trait adds what numeric code
/// needs on top of them. (`num_traits`' `NumCast`, `ToPrimitive` and
/// `FromPrimitive` are implemented by every type too, but are not
/// supertraits: their `from_f32` / `to_f32` would make `T::from_f32`
/// ambiguous in generic code.) Implemented by every float type of the crate. A
/// constant a format lacks is `None` ([`Self::NAN`] in float6/float4,
/// [`Self::INFINITY`] where there is no infinity, [`Self::ZERO`] in
/// float8_e8m0fnu).
///
/// # Examples
///
/// ```
/// use mldtypes::float::MiniFloatOps;
/// use mldtypes::{bfloat16, float4_e2m1fn, float8_e4m3fn};
///
/// /// The largest |x|, NaN-aware, for any format.
/// fn amax<T: MiniFloatOps>(xs: &[T]) -> Option<T> {
///     let mut m: Option<T> = None;
///     for &x in xs {
///         if x.is_nan() {
///             return T::NAN;
///         }
///         let a = x.abs();
///         m = Some(match m { Some(b) if b >= a => b, _ => a });
///     }
///     m
/// }
/// let xs = [float8_e4m3fn::from_f32(-3.0), float8_e4m3fn::ONE];
/// assert_eq!(amax(&xs).unwrap().to_f32(), 3.0);
///
/// fn mean<T: MiniFloatOps>(xs: &[T]) -> T {
///     xs.iter().sum::<T>() / T::from_f64(xs.len() as f64)
/// }
/// assert_eq!(mean(&[bfloat16::from_f32(1.0), bfloat16::from_f32(2.0)]).to_f32(), 1.5);
/// assert_eq!(float4_e2m1fn::MAX.to_f32(), 6.0);
/// assert!(<float4_e2m1fn as MiniFloatOps>::NAN.is_none());
/// ```
pub trait MiniFloatOps:
    MiniFloat
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
    + for<'a> Add<&'a Self, Output = Self>
    + for<'a> Sub<&'a Self, Output = Self>
    + for<'a> Mul<&'a Self, Output = Self>
    + for<'a> Div<&'a Self, Output = Self>
    + for<'a> Rem<&'a Self, Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + RemAssign
    + Sum
    + Product
    + for<'a> Sum<&'a Self>
    + for<'a> Product<&'a Self>
    + std::hash::Hash
    + num_traits::One
    + num_traits::Bounded
    + num_traits::FloatConst
{
    /// Largest finite value.
    const MAX: Self;
    /// Smallest finite value (−MAX, or 2^-127 in the unsigned float8_e8m0fnu).
    const MIN: Self;
    /// Smallest positive normal value.
    const MIN_POSITIVE: Self;
    /// Smallest positive value (subnormal where the format has subnormals).
    const MIN_POSITIVE_SUBNORMAL: Self;
    /// The gap between 1 and the next larger value.
    const EPSILON: Self;
    /// One.
    const ONE: Self;
    /// Positive zero, `None` in float8_e8m0fnu (which has no zero).
    const ZERO: Option<Self>;
    /// The canonical NaN, `None` in float6/float4 (which have none).
    const NAN: Option<Self>;
    /// +infinity, `None` in formats without infinities.
    const INFINITY: Option<Self>;

    /// Whether this is NaN.
    fn is_nan(self) -> bool;
    /// Whether this is ±infinity.
    fn is_infinite(self) -> bool;
    /// Whether this is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// Whether this is a normal number.
    fn is_normal(self) -> bool;
    /// Whether this is a subnormal number.
    fn is_subnormal(self) -> bool;
    /// Whether the sign bit is set.
    fn is_sign_negative(self) -> bool;
    /// Whether the sign bit is clear.
    fn is_sign_positive(self) -> bool;
    /// The IEEE class.
    fn classify(self) -> FpCategory;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Magnitude of `self`, sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// 1, −1 or NaN, as `f32::signum`.
    fn signum(self) -> Self;
    /// The least greater value.
    fn next_up(self) -> Self;
    /// The greatest smaller value.
    fn next_down(self) -> Self;
    /// IEEE 754 `totalOrder`.
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering;
    /// The larger value, ignoring NaN.
    fn max(self, other: Self) -> Self;
    /// The smaller value, ignoring NaN.
    fn min(self, other: Self) -> Self;
}

/// The largest `n` with `10^n <= x` (`x` finite, positive).
pub(crate) const fn max_10_exp(x: f64) -> i32 {
    let mut n = 0;
    let mut p = 1.0;
    if x >= 1.0 {
        while p * 10.0 <= x {
            p *= 10.0;
            n += 1;
        }
    } else {
        while p > x {
            p /= 10.0;
            n -= 1;
        }
    }
    n
}

/// The smallest `n` with `10^n >= x` (`x` finite, positive).
pub(crate) const fn min_10_exp(x: f64) -> i32 {
    let mut n = 0;
    let mut p = 1.0;
    if x <= 1.0 {
        while p / 10.0 >= x {
            p /= 10.0;
            n -= 1;
        }
    } else {
        while p < x {
            p *= 10.0;
            n += 1;
        }
    }
    n
}

/// The [`MiniFloatOps`] impl and the API additions of one float type.
macro_rules! minifloat_api {
    ($name:ident, $bits:ty, $fmt:ident) => {
        impl $name {
            /// `from_f32` as a `const fn`, for constants: the same code,
            /// computed with `const` operations only (slower at run time
            /// than [`Self::from_f32`]).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("const HALF: ", stringify!($name), " = ", stringify!($name), "::from_f32_const(0.5);")]
            #[doc = concat!("assert_eq!(HALF.to_bits(), ", stringify!($name), "::from_f32(0.5).to_bits());")]
            /// ```
            #[inline]
            pub const fn from_f32_const(x: f32) -> Self {
                Self::c(konst::encode(&format::$fmt, x as f64, true))
            }

            /// `from_f64` as a `const fn` (one rounding from the `f64`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("const TWO: ", stringify!($name), " = ", stringify!($name), "::from_f64_const(2.0);")]
            /// assert_eq!(TWO.to_f64(), 2.0);
            /// ```
            #[inline]
            pub const fn from_f64_const(x: f64) -> Self {
                Self::c(konst::encode(&format::$fmt, x, false))
            }

            /// The bit pattern as little-endian bytes.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::ONE;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_le_bytes(x.to_le_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn to_le_bytes(self) -> [u8; std::mem::size_of::<$bits>()] {
                self.0.to_le_bytes()
            }

            /// The bit pattern as big-endian bytes.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::ONE;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_be_bytes(x.to_be_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn to_be_bytes(self) -> [u8; std::mem::size_of::<$bits>()] {
                self.0.to_be_bytes()
            }

            /// The bit pattern as bytes in native order.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::MAX;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_ne_bytes(x.to_ne_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn to_ne_bytes(self) -> [u8; std::mem::size_of::<$bits>()] {
                self.0.to_ne_bytes()
            }

            /// The value of little-endian bytes (bits above the format's
            /// width are cleared, as [`Self::from_bits`]).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::MAX;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_le_bytes(x.to_le_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn from_le_bytes(bytes: [u8; std::mem::size_of::<$bits>()]) -> Self {
                Self::from_bits(<$bits>::from_le_bytes(bytes))
            }

            /// The value of big-endian bytes.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::MIN;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_be_bytes(x.to_be_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn from_be_bytes(bytes: [u8; std::mem::size_of::<$bits>()]) -> Self {
                Self::from_bits(<$bits>::from_be_bytes(bytes))
            }

            /// The value of bytes in native order.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::MIN;")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_ne_bytes(x.to_ne_bytes()), x);")]
            /// ```
            #[inline]
            pub const fn from_ne_bytes(bytes: [u8; std::mem::size_of::<$bits>()]) -> Self {
                Self::from_bits(<$bits>::from_ne_bytes(bytes))
            }

            /// The shortest decimal text that reads back as this value in
            /// this format (where `Display` prints the value's `f32` text):
            /// a [`Shortest`] wrapper for `{}`, `{:?}`, `{:e}`, `{:E}`.
            ///
            /// # Examples
            ///
            /// ```
            /// let x = mldtypes::bfloat16::from_f32(0.1);
            /// assert_eq!(x.to_string(), "0.100097656");
            /// assert_eq!(x.shortest().to_string(), "0.1");
            /// assert_eq!("0.1".parse::<mldtypes::bfloat16>().unwrap(), x);
            /// ```
            #[inline]
            pub fn shortest(self) -> Shortest<Self> {
                Shortest(self)
            }

            /// The exact value as `f32` in a `const` context (the same value
            /// as [`Self::to_f32`]; NaN payloads may differ).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// const ONE: f32 = T::ONE.to_f32_const();
            /// assert_eq!(ONE, 1.0);
            /// ```
            #[inline]
            pub const fn to_f32_const(self) -> f32 {
                f32::from_bits(crate::float::core::decode_f32_bits(&format::$fmt, self.0 as u32))
            }

            /// The exact value as `f64` in a `const` context.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// const MAX: f64 = T::MAX.to_f64_const();
            /// assert_eq!(MAX, T::MAX.to_f64());
            /// ```
            #[inline]
            pub const fn to_f64_const(self) -> f64 {
                self.to_f32_const() as f64
            }

            /// `self` restricted to `[min, max]`, as `f32::clamp`: NaN stays
            /// NaN.
            ///
            /// # Panics
            ///
            /// If `min > max`, or either bound is NaN (as `f32::clamp` and
            /// `half`'s `clamp`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// assert_eq!(T::MAX.clamp(T::ONE, T::ONE), T::ONE);
            /// ```
            #[inline]
            pub fn clamp(self, min: Self, max: Self) -> Self {
                assert!(min <= max, "clamp needs min <= max, both not NaN");
                if self < min {
                    min
                } else if self > max {
                    max
                } else {
                    self
                }
            }

            /// Number of significant binary digits (`man_bits + 1`), as
            /// `f32::MANTISSA_DIGITS`.
            pub const MANTISSA_DIGITS: u32 = format::$fmt.man_bits + 1;
            /// Decimal digits that survive a round trip through the format,
            /// `⌊(MANTISSA_DIGITS − 1) · log10 2⌋`, as `f32::DIGITS`.
            pub const DIGITS: u32 = format::$fmt.man_bits * 30103 / 100_000;
            /// The radix of the representation: 2.
            pub const RADIX: u32 = 2;
            /// One more than the largest power of two's exponent below
            /// `MAX`, as `f32::MAX_EXP` (128 for float32).
            pub const MAX_EXP: i32 = format::$fmt.max_exp() + 1;
            /// One more than the exponent of the smallest normal value, as
            /// `f32::MIN_EXP` (−125 for float32).
            pub const MIN_EXP: i32 = format::$fmt.min_exp() + 1;
            /// The largest `n` with `10^n <= MAX`, as `f32::MAX_10_EXP`.
            pub const MAX_10_EXP: i32 = crate::float::api::max_10_exp(format::$fmt.max_finite());
            /// The smallest `n` with `10^n >= MIN_POSITIVE`, as
            /// `f32::MIN_10_EXP`.
            pub const MIN_10_EXP: i32 =
                crate::float::api::min_10_exp(format::$fmt.min_positive_normal());

        }

        impl std::fmt::Binary for $name {
            /// The bit pattern (`half`'s formatting of the bits).
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Binary::fmt(&self.0, f)
            }
        }

        impl std::fmt::Octal for $name {
            /// The bit pattern.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Octal::fmt(&self.0, f)
            }
        }

        impl std::fmt::LowerHex for $name {
            /// The bit pattern.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::LowerHex::fmt(&self.0, f)
            }
        }

        impl std::fmt::UpperHex for $name {
            /// The bit pattern.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::UpperHex::fmt(&self.0, f)
            }
        }

        #[cfg(feature = "serde")]
        impl $name {
            /// Serializes as an `f32` number whatever the serializer (for
            /// `#[serde(serialize_with = ...)]`, as `half`'s method).
            ///
            /// # Errors
            ///
            /// The serializer's.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// let mut out = Vec::new();
            /// T::ONE.serialize_as_f32(&mut serde_json::Serializer::new(&mut out)).unwrap();
            /// assert_eq!(out, b"1.0");
            /// ```
            pub fn serialize_as_f32<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_f32(self.to_f32())
            }

            /// Serializes as the value's `Display` text (`"1"`, `"NaN"`,
            /// `"inf"`), as `half`'s method.
            ///
            /// # Errors
            ///
            /// The serializer's.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($name), " as T;")]
            /// let mut out = Vec::new();
            /// T::ONE.serialize_as_string(&mut serde_json::Serializer::new(&mut out)).unwrap();
            /// assert_eq!(out, b"\"1\"");
            /// ```
            pub fn serialize_as_string<S: serde::Serializer>(
                &self,
                s: S,
            ) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl MiniFloatOps for $name {
            const MAX: Self = $name::MAX;
            const MIN: Self = $name::MIN;
            const MIN_POSITIVE: Self = $name::MIN_POSITIVE;
            const MIN_POSITIVE_SUBNORMAL: Self = $name::MIN_POSITIVE_SUBNORMAL;
            const EPSILON: Self = $name::EPSILON;
            const ONE: Self = $name::ONE;
            const ZERO: Option<Self> = if format::$fmt.has_zero { Some(Self::c(0)) } else { None };
            const NAN: Option<Self> = match format::$fmt.nan_code() {
                Some(c) => Some(Self::c(c)),
                None => None,
            };
            const INFINITY: Option<Self> = if format::$fmt.has_infinity() {
                Some(Self::c(format::$fmt.exp_mask()))
            } else {
                None
            };
            #[inline]
            fn is_nan(self) -> bool {
                $name::is_nan(self)
            }
            #[inline]
            fn is_infinite(self) -> bool {
                $name::is_infinite(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                $name::is_finite(self)
            }
            #[inline]
            fn is_normal(self) -> bool {
                $name::is_normal(self)
            }
            #[inline]
            fn is_subnormal(self) -> bool {
                $name::is_subnormal(self)
            }
            #[inline]
            fn is_sign_negative(self) -> bool {
                $name::is_sign_negative(self)
            }
            #[inline]
            fn is_sign_positive(self) -> bool {
                $name::is_sign_positive(self)
            }
            #[inline]
            fn classify(self) -> FpCategory {
                $name::classify(self)
            }
            #[inline]
            fn abs(self) -> Self {
                $name::abs(self)
            }
            #[inline]
            fn copysign(self, sign: Self) -> Self {
                $name::copysign(self, sign)
            }
            #[inline]
            fn signum(self) -> Self {
                $name::signum(self)
            }
            #[inline]
            fn next_up(self) -> Self {
                $name::next_up(self)
            }
            #[inline]
            fn next_down(self) -> Self {
                $name::next_down(self)
            }
            #[inline]
            fn total_cmp(&self, other: &Self) -> Ordering {
                $name::total_cmp(self, other)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                $name::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                $name::min(self, other)
            }
        }

        impl Sum for $name {
            /// Accumulates in `f32` and rounds once at the end, as `half`
            /// does and as the ml_dtypes README recommends (1000 ×
            /// bfloat16 0.01 sums to 10, not to the 4 that rounding after
            /// every addition gives).
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                Self::from_f32(iter.map(|x| x.to_f32()).sum::<f32>())
            }
        }

        impl<'a> Sum<&'a $name> for $name {
            /// As `Sum<Self>`: accumulated in `f32`, rounded once.
            fn sum<I: Iterator<Item = &'a $name>>(iter: I) -> Self {
                iter.copied().sum()
            }
        }

        impl Product for $name {
            /// Multiplies in `f32` and rounds once at the end.
            fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
                Self::from_f32(iter.map(|x| x.to_f32()).product::<f32>())
            }
        }

        impl<'a> Product<&'a $name> for $name {
            /// As `Product<Self>`: multiplied in `f32`, rounded once.
            fn product<I: Iterator<Item = &'a $name>>(iter: I) -> Self {
                iter.copied().product()
            }
        }

        impl Neg for &$name {
            type Output = $name;
            #[inline]
            fn neg(self) -> $name {
                -*self
            }
        }

        minifloat_ref_binop!($name, Add, add, AddAssign, add_assign);
        minifloat_ref_binop!($name, Sub, sub, SubAssign, sub_assign);
        minifloat_ref_binop!($name, Mul, mul, MulAssign, mul_assign);
        minifloat_ref_binop!($name, Div, div, DivAssign, div_assign);
        minifloat_ref_binop!($name, Rem, rem, RemAssign, rem_assign);

        impl num_traits::FloatConst for $name {
            minifloat_api!(@consts E FRAC_1_PI FRAC_1_SQRT_2 FRAC_2_PI FRAC_2_SQRT_PI FRAC_PI_2
                FRAC_PI_3 FRAC_PI_4 FRAC_PI_6 FRAC_PI_8 LN_10 LN_2 LOG10_E LOG2_E PI SQRT_2
                TAU LOG10_2 LOG2_10);
        }

        impl num_traits::ToBytes for $name {
            type Bytes = [u8; std::mem::size_of::<$bits>()];
            #[inline]
            fn to_be_bytes(&self) -> Self::Bytes {
                $name::to_be_bytes(*self)
            }
            #[inline]
            fn to_le_bytes(&self) -> Self::Bytes {
                $name::to_le_bytes(*self)
            }
            #[inline]
            fn to_ne_bytes(&self) -> Self::Bytes {
                $name::to_ne_bytes(*self)
            }
        }

        impl num_traits::FromBytes for $name {
            type Bytes = [u8; std::mem::size_of::<$bits>()];
            #[inline]
            fn from_be_bytes(bytes: &Self::Bytes) -> Self {
                $name::from_be_bytes(*bytes)
            }
            #[inline]
            fn from_le_bytes(bytes: &Self::Bytes) -> Self {
                $name::from_le_bytes(*bytes)
            }
            #[inline]
            fn from_ne_bytes(bytes: &Self::Bytes) -> Self {
                $name::from_ne_bytes(*bytes)
            }
        }

        minifloat_api!(@as_float $name: f32 to_f32 from_f32, f64 to_f64 from_f64);
        minifloat_api!(@as_int $name, from_i128: i8 i16 i32 i64 i128 isize);
        minifloat_api!(@as_int $name, from_u128: u8 u16 u32 u64 u128 usize);
    };
    (@consts $($c:ident)*) => {
        $(
            #[inline]
            #[allow(non_snake_case)]
            fn $c() -> Self {
                Self::from_f64(std::f64::consts::$c)
            }
        )*
    };
    (@as_float $name:ident: $($p:ident $to:ident $from:ident),*) => {
        $(
            impl num_traits::AsPrimitive<$p> for $name {
                /// The exact value, widened.
                #[inline]
                fn as_(self) -> $p {
                    $name::$to(self)
                }
            }
            impl num_traits::AsPrimitive<$name> for $p {
                /// Rounded to nearest (non-saturating, as `from_f32` /
                /// `from_f64`).
                #[inline]
                fn as_(self) -> $name {
                    $name::$from(self)
                }
            }
        )*
    };
    (@as_int $name:ident, $wide:ident: $($p:ty)*) => {
        $(
            impl num_traits::AsPrimitive<$p> for $name {
                /// Rust's `as` from the value: truncation toward zero,
                /// saturating at the integer's bounds, NaN gives 0.
                #[inline]
                fn as_(self) -> $p {
                    self.to_f64() as $p
                }
            }
            impl num_traits::AsPrimitive<$name> for $p {
                /// Rounded once from the integer's exact value.
                #[inline]
                fn as_(self) -> $name {
                    <$name as num_traits::FromPrimitive>::$wide(self as _)
                        .unwrap_or($name::MAX)
                }
            }
        )*
    };
}

/// `Op<&T> for T`, `Op<T> for &T`, `Op<&T> for &T` and `OpAssign<&T>`.
macro_rules! minifloat_ref_binop {
    ($name:ident, $tr:ident, $m:ident, $atr:ident, $am:ident) => {
        impl $tr<&$name> for $name {
            type Output = $name;
            #[inline]
            fn $m(self, rhs: &$name) -> $name {
                $tr::$m(self, *rhs)
            }
        }
        impl $tr<$name> for &$name {
            type Output = $name;
            #[inline]
            fn $m(self, rhs: $name) -> $name {
                $tr::$m(*self, rhs)
            }
        }
        impl $tr<&$name> for &$name {
            type Output = $name;
            #[inline]
            fn $m(self, rhs: &$name) -> $name {
                $tr::$m(*self, *rhs)
            }
        }
        impl $atr<&$name> for $name {
            #[inline]
            fn $am(&mut self, rhs: &$name) {
                $atr::$am(self, *rhs)
            }
        }
    };
}

/// `AsPrimitive` between every pair of float formats (`convert`).
macro_rules! minifloat_as_between {
    ($($t:ident)*) => {
        minifloat_as_between!(@each [$($t)*] $($t)*);
    };
    (@each $all:tt $($t:ident)*) => {
        $( minifloat_as_between!(@one $t $all); )*
    };
    (@one $t:ident [$($u:ident)*]) => {
        $(
            impl num_traits::AsPrimitive<$u> for $t {
                /// Converted directly, rounded once (as `convert`).
                #[inline]
                fn as_(self) -> $u {
                    self.convert::<$u>()
                }
            }
        )*
    };
}

/// `num_traits::float::FloatCore`, for every format with a zero (all but
/// float8_e8m0fnu, which cannot implement `num_traits::Zero`).
macro_rules! minifloat_float_core {
    ($name:ident) => {
        impl num_traits::float::FloatCore for $name {
            /// +infinity where the format has it; otherwise what
            /// `from_f32(f32::INFINITY)` gives (NaN in float8_e4m3fn and
            /// the fnuz formats, MAX in float6/float4, as ml_dtypes).
            fn infinity() -> Self {
                Self::from_f32(f32::INFINITY)
            }
            /// −infinity where the format has it; otherwise what
            /// `from_f32(f32::NEG_INFINITY)` gives.
            fn neg_infinity() -> Self {
                Self::from_f32(f32::NEG_INFINITY)
            }
            /// The canonical NaN; in float6/float4, which have no NaN,
            /// what `from_f32(f32::NAN)` gives (−0, as ml_dtypes).
            fn nan() -> Self {
                Self::from_f32(f32::NAN)
            }
            /// −0 (+0 in the fnuz formats, which have no −0).
            fn neg_zero() -> Self {
                Self::from_f32(-0.0)
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
            fn min(self, other: Self) -> Self {
                $name::min(self, other)
            }
            fn max(self, other: Self) -> Self {
                $name::max(self, other)
            }
            fn floor(self) -> Self {
                Self::from_f32(self.to_f32().floor())
            }
            fn ceil(self) -> Self {
                Self::from_f32(self.to_f32().ceil())
            }
            fn round(self) -> Self {
                Self::from_f32(self.to_f32().round())
            }
            fn trunc(self) -> Self {
                Self::from_f32(self.to_f32().trunc())
            }
            fn fract(self) -> Self {
                Self::from_f32(self.to_f32().fract())
            }
            fn recip(self) -> Self {
                Self::from_f32(self.to_f32().recip())
            }
            fn powi(self, n: i32) -> Self {
                Self::from_f32(self.to_f32().powi(n))
            }
            fn to_degrees(self) -> Self {
                Self::from_f32(self.to_f32().to_degrees())
            }
            fn to_radians(self) -> Self {
                Self::from_f32(self.to_f32().to_radians())
            }
            fn integer_decode(self) -> (u64, i16, i8) {
                num_traits::float::FloatCore::integer_decode(self.to_f32())
            }
        }
    };
}
