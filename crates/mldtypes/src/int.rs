//! Sub-byte integers: [`int1`], [`int2`], [`int4`], [`uint1`], [`uint2`],
//! [`uint4`], bit-exact with ml_dtypes 0.6.0.
//!
//! Each type is `#[repr(transparent)]` over a `u8` holding the two's-complement
//! (signed) or plain binary (unsigned) value in its low [`SubByteInt::BITS`]
//! bits — ml_dtypes' unpacked layout, one element per byte. The upper bits of
//! the byte are **ignored**, as in ml_dtypes: every byte is a valid value
//! (which makes the types [`bytemuck::Pod`]), and equality, ordering and
//! hashing look at the low bits only, so `int4::from_bits(0x17) ==
//! int4::from_bits(0x07)`.
//!
//! | type | bits | range |
//! |---|---|---|
//! | [`int1`] | 1 | −1 … 0 |
//! | [`int2`] | 2 | −2 … 1 |
//! | [`int4`] | 4 | −8 … 7 |
//! | [`uint1`] | 1 | 0 … 1 |
//! | [`uint2`] | 2 | 0 … 3 |
//! | [`uint4`] | 4 | 0 … 15 |
//!
//! Semantics (checked against vectors generated from ml_dtypes 0.6.0):
//!
//! - constructors from integers wrap modulo `2^BITS`
//!   ([`int4::from_i64_wrapping`]`(9) == −7`, like `ml_dtypes.int4(9)`);
//!   [`TryFrom`] and [`FromStr`] are range-checked instead;
//! - casts from floats follow NumPy (`np.array(x).astype(int4)`): truncate
//!   toward zero; NaN, ±infinity and values whose truncation lies outside
//!   `int32` give 0; then wrap ([`int4::from_f64_numpy`]);
//! - `+`, `−`, `×` and negation wrap; `/` and `%` are NumPy's floor division
//!   and floor remainder (the remainder has the sign of the divisor), and
//!   wrap (`int4(−8) / int4(−1) == int4(−8)`). Division or remainder by zero
//!   gives 0, as NumPy's array operations do (ml_dtypes' scalars raise
//!   `ZeroDivisionError` instead); [`int4::checked_div`] and
//!   [`int4::checked_rem`] report it as [`SubByteIntError::DivisionByZero`].
//!
//! Source: the ml_dtypes README (seed 001) and ml_dtypes 0.6.0's behaviour.
//!
//! # Examples
//!
//! ```
//! use mldtypes::{int4, uint2};
//! let a = int4::from_i64_wrapping(9);
//! assert_eq!(a.to_i32(), -7);
//! assert_eq!((a * int4::try_from(3).unwrap()).to_i32(), -5); // −21 wraps
//! assert_eq!((int4::try_from(-7).unwrap() / int4::try_from(2).unwrap()).to_i32(), -4);
//! assert_eq!("3".parse::<uint2>().unwrap().to_string(), "3");
//! assert!("4".parse::<uint2>().is_err());
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};
use std::str::FromStr;

/// Errors of the sub-byte integer types: range-checked conversions, parsing
/// and checked division.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubByteIntError {
    /// The value does not fit in the type's range (e.g. `int4::try_from(8)`).
    OutOfRange {
        /// The ml_dtypes name of the target type (`"int4"`).
        type_name: &'static str,
        /// The offending value, in decimal.
        value: String,
    },
    /// The text is not an integer (optional sign followed by decimal digits).
    Invalid {
        /// The ml_dtypes name of the target type.
        type_name: &'static str,
        /// The text that failed to parse.
        text: String,
    },
    /// Division or remainder by zero in [`int4::checked_div`] and friends.
    DivisionByZero {
        /// The ml_dtypes name of the type.
        type_name: &'static str,
    },
}

impl fmt::Display for SubByteIntError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubByteIntError::OutOfRange { type_name, value } => {
                write!(f, "{value} is out of range for {type_name}")
            }
            SubByteIntError::Invalid { type_name, text } => {
                write!(f, "invalid {type_name} literal: {text:?}")
            }
            SubByteIntError::DivisionByZero { type_name } => {
                write!(f, "{type_name} division by zero")
            }
        }
    }
}

impl std::error::Error for SubByteIntError {}

/// Common interface of the sub-byte integer types.
///
/// # Examples
///
/// ```
/// use mldtypes::int::SubByteInt;
/// use mldtypes::{int2, uint4};
/// fn span<T: SubByteInt>() -> i32 {
///     T::MAX - T::MIN + 1
/// }
/// assert_eq!(span::<int2>(), 4);
/// assert_eq!(span::<uint4>(), 16);
/// assert_eq!(uint4::from_f64_numpy(-1.5).to_i32(), 15); // trunc to −1, wrap
/// ```
pub trait SubByteInt:
    Copy + Default + fmt::Debug + fmt::Display + Ord + Hash + Send + Sync + 'static
{
    /// Number of value bits (1, 2 or 4).
    const BITS: u32;
    /// Whether the type is two's-complement signed.
    const SIGNED: bool;
    /// The smallest value, as `i32`.
    const MIN: i32;
    /// The largest value, as `i32`.
    const MAX: i32;
    /// The ml_dtypes name (`"int4"`).
    const NAME: &'static str;

    /// The value stored in the low [`SubByteInt::BITS`] bits of `bits`
    /// (the upper bits are ignored).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{int::SubByteInt, int4, uint2};
    /// // ml_dtypes 0.6.0: array([0xf], uint8).view(int4) == -1
    /// assert_eq!(<int4 as SubByteInt>::from_bits(0xf).to_i32(), -1);
    /// assert_eq!(<uint2 as SubByteInt>::from_bits(0xff).to_i32(), 3);
    /// ```
    fn from_bits(bits: u8) -> Self;
    /// The low [`SubByteInt::BITS`] bits (upper bits zero).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{int::SubByteInt, int4};
    /// // ml_dtypes 0.6.0: array(int4(-1)).view(uint8) == 15
    /// assert_eq!(SubByteInt::to_bits(<int4 as SubByteInt>::from_i64_wrapping(-1)), 0xf);
    /// ```
    fn to_bits(self) -> u8;
    /// The value as `i32`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{int::SubByteInt, int2, uint4};
    /// assert_eq!(SubByteInt::to_i32(<int2 as SubByteInt>::from_bits(0b10)), -2);
    /// assert_eq!(SubByteInt::to_i32(<uint4 as SubByteInt>::from_bits(0b1010)), 10);
    /// ```
    fn to_i32(self) -> i32;
    /// `v` modulo `2^BITS` (ml_dtypes constructor semantics).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{int::SubByteInt, int4, uint4};
    /// // ml_dtypes 0.6.0: uint4(17) == 1, array(8).astype(int4) == -8, uint4(-1) == 15
    /// assert_eq!(<uint4 as SubByteInt>::from_i64_wrapping(17).to_i32(), 1);
    /// assert_eq!(<int4 as SubByteInt>::from_i64_wrapping(8).to_i32(), -8);
    /// assert_eq!(<uint4 as SubByteInt>::from_i64_wrapping(-1).to_i32(), 15);
    /// ```
    fn from_i64_wrapping(v: i64) -> Self;
    /// NumPy's float → integer cast: truncate toward zero; NaN, ±infinity and
    /// values whose truncation is outside `int32` give 0; then wrap.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::{int::SubByteInt, int4};
    /// // ml_dtypes 0.6.0: array([-1.5, 7.9, 9.0, nan]).astype(int4) == [-1, 7, -7, 0]
    /// assert_eq!(<int4 as SubByteInt>::from_f64_numpy(-1.5).to_i32(), -1);
    /// assert_eq!(<int4 as SubByteInt>::from_f64_numpy(7.9).to_i32(), 7);
    /// assert_eq!(<int4 as SubByteInt>::from_f64_numpy(9.0).to_i32(), -7);
    /// assert_eq!(<int4 as SubByteInt>::from_f64_numpy(f64::NAN).to_i32(), 0);
    /// ```
    fn from_f64_numpy(x: f64) -> Self;
}

/// The low `bits` bits of `v` (two's complement), as a byte.
const fn wrap_bits(v: i64, bits: u32) -> u8 {
    (v as u8) & ((1u8 << bits) - 1)
}

/// The value of the low `bits` bits of `raw`, sign-extended when `signed`.
const fn value_of(raw: u8, bits: u32, signed: bool) -> i32 {
    let shift = 8 - bits;
    if signed {
        (((raw << shift) as i8) >> shift) as i32
    } else {
        ((raw << shift) >> shift) as i32
    }
}

/// NumPy's float → int32 step of a cast: truncation, or 0 for NaN, ±infinity
/// and truncations outside `int32` (what NumPy yields on x86-64, whose
/// conversion returns `i32::MIN` there: its low bits are all zero).
fn numpy_trunc_i32(x: f64) -> i64 {
    let t = x.trunc();
    if (i32::MIN as f64..=i32::MAX as f64).contains(&t) {
        t as i64
    } else {
        0
    }
}

/// Floor division of `a` by `b` (`b != 0`), NumPy `floor_divide`.
const fn floor_div(a: i32, b: i32) -> i32 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Floor remainder of `a` by `b` (`b != 0`), NumPy `remainder`: the sign of `b`.
const fn floor_rem(a: i32, b: i32) -> i32 {
    let r = a % b;
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

macro_rules! sub_byte_int {
    ($(#[$doc:meta])* $t:ident, $bits:literal, $signed:literal, $min:literal, $max:literal,
     lossless: [$($lossless:ty),*]) => {
        $(#[$doc])*
        ///
        /// `#[repr(transparent)]` over a `u8`; the value lives in the low bits
        /// and the upper bits are ignored (see the [module documentation](self)).
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use mldtypes::", stringify!($t), ";")]
        #[doc = concat!("let (lo, hi) = (", stringify!($t), "::MIN, ", stringify!($t), "::MAX);")]
        #[doc = concat!("assert_eq!((lo.to_i32(), hi.to_i32()), (", stringify!($min), ", ", stringify!($max), "));")]
        #[doc = concat!("assert_eq!(hi.checked_mul(", stringify!($t), "::ZERO), Some(", stringify!($t), "::ZERO));")]
        /// assert_eq!(hi.saturating_add(hi), hi);
        /// assert_eq!(lo.saturating_sub(hi), lo);
        #[doc = concat!("assert_eq!(\"", stringify!($max), "\".parse::<", stringify!($t), ">(), Ok(hi));")]
        /// ```
        #[allow(non_camel_case_types)]
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $t(u8);

        impl $t {
            /// Number of value bits.
            pub const BITS: u32 = $bits;
            /// The smallest value.
            pub const MIN: $t = $t(wrap_bits($min, $bits));
            /// The largest value.
            pub const MAX: $t = $t(wrap_bits($max, $bits));
            /// Zero.
            pub const ZERO: $t = $t(0);
            const MASK: u8 = (1u8 << $bits) - 1;

            /// The value whose bit pattern is the low bits of `bits` (upper bits are cleared).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_bits(0xF0), ", stringify!($t), "::ZERO);")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_bits(", stringify!($t), "::MAX.to_bits()), ", stringify!($t), "::MAX);")]
            /// ```
            pub const fn from_bits(bits: u8) -> Self {
                $t(bits & Self::MASK)
            }

            /// The bit pattern: the low bits of the byte, upper bits zero.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.to_bits() >> ", stringify!($bits), ", 0);")]
            /// ```
            pub const fn to_bits(self) -> u8 {
                self.0 & Self::MASK
            }

            /// The value as `i32`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.to_i32(), ", stringify!($min), ");")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.to_i32(), ", stringify!($max), ");")]
            /// ```
            pub const fn to_i32(self) -> i32 {
                value_of(self.0, $bits, $signed)
            }

            /// `v` modulo `2^BITS`: ml_dtypes' constructor and NumPy's integer
            /// cast semantics (`int4(9) == −7`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_i64_wrapping(", stringify!($max), " + 1), ", stringify!($t), "::MIN);")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_i64_wrapping(", stringify!($min), " - 1), ", stringify!($t), "::MAX);")]
            /// ```
            pub const fn from_i64_wrapping(v: i64) -> Self {
                $t(wrap_bits(v, $bits))
            }

            /// NumPy's cast from `float64` (`np.array(x).astype(T)`): truncate
            /// toward zero; NaN, ±infinity and values whose truncation is outside
            /// `int32` give 0; then wrap modulo `2^BITS`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f64_numpy(f64::NAN), ", stringify!($t), "::ZERO);")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f64_numpy(1e10), ", stringify!($t), "::ZERO);")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f64_numpy(", stringify!($max), ".9), ", stringify!($t), "::MAX);")]
            /// ```
            pub fn from_f64_numpy(x: f64) -> Self {
                Self::from_i64_wrapping(numpy_trunc_i32(x))
            }

            /// NumPy's cast from `float32`; the same rules as
            /// [`from_f64_numpy`](Self::from_f64_numpy) (the widening is exact).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f32_numpy(", stringify!($min), ".5), ", stringify!($t), "::MIN);")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f32_numpy(f32::INFINITY), ", stringify!($t), "::ZERO);")]
            /// ```
            pub fn from_f32_numpy(x: f32) -> Self {
                Self::from_f64_numpy(x as f64)
            }

            /// The value as `f32` (exact).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.to_f32(), ", stringify!($min), ".0);")]
            /// ```
            pub const fn to_f32(self) -> f32 {
                self.to_i32() as f32
            }

            /// The value as `f64` (exact).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.to_f64(), ", stringify!($max), ".0);")]
            /// ```
            pub const fn to_f64(self) -> f64 {
                self.to_i32() as f64
            }

            /// Wrapping addition (ml_dtypes' `+`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.wrapping_add(", stringify!($t), "::from_i64_wrapping(1)), ", stringify!($t), "::MIN);")]
            /// ```
            pub const fn wrapping_add(self, rhs: Self) -> Self {
                Self::from_i64_wrapping(self.to_i32() as i64 + rhs.to_i32() as i64)
            }

            /// Wrapping subtraction (ml_dtypes' `−`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.wrapping_sub(", stringify!($t), "::from_i64_wrapping(1)), ", stringify!($t), "::MAX);")]
            /// ```
            pub const fn wrapping_sub(self, rhs: Self) -> Self {
                Self::from_i64_wrapping(self.to_i32() as i64 - rhs.to_i32() as i64)
            }

            /// Wrapping multiplication (ml_dtypes' `×`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.wrapping_mul(", stringify!($t), "::ZERO), ", stringify!($t), "::ZERO);")]
            /// ```
            pub const fn wrapping_mul(self, rhs: Self) -> Self {
                Self::from_i64_wrapping(self.to_i32() as i64 * rhs.to_i32() as i64)
            }

            /// Wrapping negation (ml_dtypes' unary `−`; `−MIN == MIN`, and
            /// unsigned values wrap modulo `2^BITS`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::ZERO.wrapping_neg(), ", stringify!($t), "::ZERO);")]
            /// ```
            pub const fn wrapping_neg(self) -> Self {
                Self::from_i64_wrapping(-(self.to_i32() as i64))
            }

            /// Floor division (NumPy `floor_divide`), wrapping (`−MIN / −1 == MIN`).
            ///
            /// # Errors
            ///
            /// [`SubByteIntError::DivisionByZero`] when `rhs` is zero.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert!(", stringify!($t), "::MAX.checked_div(", stringify!($t), "::ZERO).is_err());")]
            #[doc = concat!("let minus_one = ", stringify!($t), "::from_i64_wrapping(-1); // nonzero")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::ZERO.checked_div(minus_one), Ok(", stringify!($t), "::ZERO));")]
            /// ```
            pub const fn checked_div(self, rhs: Self) -> Result<Self, SubByteIntError> {
                let b = rhs.to_i32();
                if b == 0 {
                    return Err(SubByteIntError::DivisionByZero { type_name: stringify!($t) });
                }
                Ok(Self::from_i64_wrapping(floor_div(self.to_i32(), b) as i64))
            }

            /// Floor remainder (NumPy `remainder`: the result has the sign of `rhs`).
            ///
            /// # Errors
            ///
            /// [`SubByteIntError::DivisionByZero`] when `rhs` is zero.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert!(", stringify!($t), "::MAX.checked_rem(", stringify!($t), "::ZERO).is_err());")]
            #[doc = concat!("let minus_one = ", stringify!($t), "::from_i64_wrapping(-1); // nonzero")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.checked_rem(minus_one), Ok(", stringify!($t), "::ZERO));")]
            /// ```
            pub const fn checked_rem(self, rhs: Self) -> Result<Self, SubByteIntError> {
                let b = rhs.to_i32();
                if b == 0 {
                    return Err(SubByteIntError::DivisionByZero { type_name: stringify!($t) });
                }
                Ok(Self::from_i64_wrapping(floor_rem(self.to_i32(), b) as i64))
            }

            /// `self + rhs`, or `None` if the sum is outside the type's range.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.checked_add(", stringify!($t), "::ZERO), Some(", stringify!($t), "::MAX));")]
            #[doc = concat!("let min = ", stringify!($t), "::MIN;")]
            /// // MIN + MIN is out of range unless MIN is 0.
            #[doc = concat!("assert_eq!(min.checked_add(min), if min.to_i32() == 0 { Some(min) } else { None });")]
            /// ```
            pub const fn checked_add(self, rhs: Self) -> Option<Self> {
                Self::checked_from(self.to_i32() as i64 + rhs.to_i32() as i64)
            }

            /// `self − rhs`, or `None` if the difference is outside the range.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("let (min, max) = (", stringify!($t), "::MIN, ", stringify!($t), "::MAX);")]
            /// // MIN − MAX is out of range unless MAX is 0.
            /// assert_eq!(min.checked_sub(max), if max.to_i32() == 0 { Some(min) } else { None });
            /// ```
            pub const fn checked_sub(self, rhs: Self) -> Option<Self> {
                Self::checked_from(self.to_i32() as i64 - rhs.to_i32() as i64)
            }

            /// `self × rhs`, or `None` if the product is outside the range.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.checked_mul(", stringify!($t), "::ZERO), Some(", stringify!($t), "::ZERO));")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.checked_mul(", stringify!($t), "::MIN), if ", stringify!($t), "::MIN.to_i32() * ", stringify!($t), "::MIN.to_i32() <= ", stringify!($t), "::MAX.to_i32() { Some(", stringify!($t), "::from_i64_wrapping((", stringify!($t), "::MIN.to_i32() * ", stringify!($t), "::MIN.to_i32()) as i64)) } else { None });")]
            /// ```
            pub const fn checked_mul(self, rhs: Self) -> Option<Self> {
                Self::checked_from(self.to_i32() as i64 * rhs.to_i32() as i64)
            }

            /// `−self`, or `None` if it is outside the range (`−MIN` in
            /// signed types, every non-zero value in unsigned ones).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::ZERO.checked_neg(), Some(", stringify!($t), "::ZERO));")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.checked_neg().is_some(), ", stringify!($t), "::MIN.to_i32() <= -", stringify!($t), "::MAX.to_i32());")]
            /// ```
            pub const fn checked_neg(self) -> Option<Self> {
                Self::checked_from(-(self.to_i32() as i64))
            }

            /// `self + rhs`, clamped to [`Self::MIN`, `Self::MAX`].
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MAX.saturating_add(", stringify!($t), "::MAX), ", stringify!($t), "::MAX);")]
            /// ```
            pub const fn saturating_add(self, rhs: Self) -> Self {
                Self::saturating_from(self.to_i32() as i64 + rhs.to_i32() as i64)
            }

            /// `self − rhs`, clamped to the range.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::MIN.saturating_sub(", stringify!($t), "::MAX), ", stringify!($t), "::MIN);")]
            /// ```
            pub const fn saturating_sub(self, rhs: Self) -> Self {
                Self::saturating_from(self.to_i32() as i64 - rhs.to_i32() as i64)
            }

            /// `self × rhs`, clamped to the range.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("let m = ", stringify!($t), "::MIN.saturating_mul(", stringify!($t), "::MIN);")]
            #[doc = concat!("assert_eq!(m.to_i32(), (", stringify!($t), "::MIN.to_i32() * ", stringify!($t), "::MIN.to_i32()).min(", stringify!($t), "::MAX.to_i32()));")]
            /// ```
            pub const fn saturating_mul(self, rhs: Self) -> Self {
                Self::saturating_from(self.to_i32() as i64 * rhs.to_i32() as i64)
            }

            /// `−self`, clamped to the range (`−MIN` gives `MAX`; unsigned
            /// values give 0).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::ZERO.saturating_neg(), ", stringify!($t), "::ZERO);")]
            /// ```
            pub const fn saturating_neg(self) -> Self {
                Self::saturating_from(-(self.to_i32() as i64))
            }

            /// Floor division, clamped to the range (`MIN / −1` gives
            /// `MAX`).
            ///
            /// # Errors
            ///
            /// [`SubByteIntError::DivisionByZero`] when `rhs` is zero.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use mldtypes::", stringify!($t), ";")]
            #[doc = concat!("assert!(", stringify!($t), "::MAX.saturating_div(", stringify!($t), "::ZERO).is_err());")]
            /// ```
            pub const fn saturating_div(self, rhs: Self) -> Result<Self, SubByteIntError> {
                let b = rhs.to_i32();
                if b == 0 {
                    return Err(SubByteIntError::DivisionByZero { type_name: stringify!($t) });
                }
                Ok(Self::saturating_from(floor_div(self.to_i32(), b) as i64))
            }

            const fn checked_from(v: i64) -> Option<Self> {
                if v < $min || v > $max {
                    None
                } else {
                    Some(Self::from_i64_wrapping(v))
                }
            }

            const fn saturating_from(v: i64) -> Self {
                if v < $min {
                    Self::MIN
                } else if v > $max {
                    Self::MAX
                } else {
                    Self::from_i64_wrapping(v)
                }
            }

            fn try_from_i128(v: i128) -> Result<Self, SubByteIntError> {
                if !($min..=$max).contains(&v) {
                    Err(SubByteIntError::OutOfRange { type_name: stringify!($t), value: v.to_string() })
                } else {
                    Ok(Self::from_i64_wrapping(v as i64))
                }
            }
        }

        impl SubByteInt for $t {
            const BITS: u32 = $bits;
            const SIGNED: bool = $signed;
            const MIN: i32 = $min;
            const MAX: i32 = $max;
            const NAME: &'static str = stringify!($t);
            fn from_bits(bits: u8) -> Self {
                $t::from_bits(bits)
            }
            fn to_bits(self) -> u8 {
                $t::to_bits(self)
            }
            fn to_i32(self) -> i32 {
                $t::to_i32(self)
            }
            fn from_i64_wrapping(v: i64) -> Self {
                $t::from_i64_wrapping(v)
            }
            fn from_f64_numpy(x: f64) -> Self {
                $t::from_f64_numpy(x)
            }
        }

        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.to_bits() == other.to_bits()
            }
        }
        impl Eq for $t {}
        impl Hash for $t {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.to_bits().hash(state)
            }
        }
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> Ordering {
                self.to_i32().cmp(&other.to_i32())
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_i32(), f)
            }
        }
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_i32(), f)
            }
        }

        impl FromStr for $t {
            type Err = SubByteIntError;
            /// Parses an optionally signed decimal integer; rejects values
            /// outside the type's range (no wrapping).
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                use std::num::IntErrorKind;
                match s.parse::<i128>() {
                    Ok(v) => Self::try_from_i128(v),
                    Err(e) if matches!(e.kind(), IntErrorKind::PosOverflow | IntErrorKind::NegOverflow) => {
                        Err(SubByteIntError::OutOfRange { type_name: stringify!($t), value: s.to_string() })
                    }
                    Err(_) => Err(SubByteIntError::Invalid { type_name: stringify!($t), text: s.to_string() }),
                }
            }
        }

        sub_byte_int!(@try_from $t: i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);

        $(
            impl From<$t> for $lossless {
                fn from(v: $t) -> $lossless {
                    v.to_i32() as $lossless
                }
            }
        )*
        impl From<$t> for f32 {
            fn from(v: $t) -> f32 {
                v.to_f32()
            }
        }
        impl From<$t> for f64 {
            fn from(v: $t) -> f64 {
                v.to_f64()
            }
        }

        impl Add for $t {
            type Output = $t;
            fn add(self, rhs: $t) -> $t {
                self.wrapping_add(rhs)
            }
        }
        impl Sub for $t {
            type Output = $t;
            fn sub(self, rhs: $t) -> $t {
                self.wrapping_sub(rhs)
            }
        }
        impl Mul for $t {
            type Output = $t;
            fn mul(self, rhs: $t) -> $t {
                self.wrapping_mul(rhs)
            }
        }
        impl Div for $t {
            type Output = $t;
            /// Floor division; division by zero gives 0 (NumPy array semantics).
            fn div(self, rhs: $t) -> $t {
                self.checked_div(rhs).unwrap_or($t::ZERO)
            }
        }
        impl Rem for $t {
            type Output = $t;
            /// Floor remainder; remainder by zero gives 0 (NumPy array semantics).
            fn rem(self, rhs: $t) -> $t {
                self.checked_rem(rhs).unwrap_or($t::ZERO)
            }
        }
        impl Neg for $t {
            type Output = $t;
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
        }
        impl AddAssign for $t {
            fn add_assign(&mut self, rhs: $t) {
                *self = *self + rhs;
            }
        }
        impl SubAssign for $t {
            fn sub_assign(&mut self, rhs: $t) {
                *self = *self - rhs;
            }
        }
        impl MulAssign for $t {
            fn mul_assign(&mut self, rhs: $t) {
                *self = *self * rhs;
            }
        }
        impl DivAssign for $t {
            fn div_assign(&mut self, rhs: $t) {
                *self = *self / rhs;
            }
        }
        impl RemAssign for $t {
            fn rem_assign(&mut self, rhs: $t) {
                *self = *self % rhs;
            }
        }

        impl std::iter::Sum for $t {
            /// Wrapping sum (as `+`).
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold($t::ZERO, |a, b| a.wrapping_add(b))
            }
        }
        impl<'a> std::iter::Sum<&'a $t> for $t {
            /// Wrapping sum (as `+`).
            fn sum<I: Iterator<Item = &'a $t>>(iter: I) -> Self {
                iter.copied().sum()
            }
        }
        impl num_traits::CheckedAdd for $t {
            fn checked_add(&self, v: &Self) -> Option<Self> {
                $t::checked_add(*self, *v)
            }
        }
        impl num_traits::CheckedSub for $t {
            fn checked_sub(&self, v: &Self) -> Option<Self> {
                $t::checked_sub(*self, *v)
            }
        }
        impl num_traits::CheckedMul for $t {
            fn checked_mul(&self, v: &Self) -> Option<Self> {
                $t::checked_mul(*self, *v)
            }
        }
        impl num_traits::CheckedDiv for $t {
            /// Floor division; `None` for division by zero and for a
            /// quotient outside the range (`MIN / −1`).
            fn checked_div(&self, v: &Self) -> Option<Self> {
                let b = v.to_i32();
                if b == 0 {
                    return None;
                }
                Self::checked_from(floor_div(self.to_i32(), b) as i64)
            }
        }
        impl num_traits::CheckedRem for $t {
            /// Floor remainder; `None` for remainder by zero.
            fn checked_rem(&self, v: &Self) -> Option<Self> {
                $t::checked_rem(*self, *v).ok()
            }
        }
        impl num_traits::CheckedNeg for $t {
            fn checked_neg(&self) -> Option<Self> {
                $t::checked_neg(*self)
            }
        }
        impl num_traits::WrappingAdd for $t {
            fn wrapping_add(&self, v: &Self) -> Self {
                $t::wrapping_add(*self, *v)
            }
        }
        impl num_traits::WrappingSub for $t {
            fn wrapping_sub(&self, v: &Self) -> Self {
                $t::wrapping_sub(*self, *v)
            }
        }
        impl num_traits::WrappingMul for $t {
            fn wrapping_mul(&self, v: &Self) -> Self {
                $t::wrapping_mul(*self, *v)
            }
        }
        impl num_traits::WrappingNeg for $t {
            fn wrapping_neg(&self) -> Self {
                $t::wrapping_neg(*self)
            }
        }
        impl num_traits::SaturatingAdd for $t {
            fn saturating_add(&self, v: &Self) -> Self {
                $t::saturating_add(*self, *v)
            }
        }
        impl num_traits::SaturatingSub for $t {
            fn saturating_sub(&self, v: &Self) -> Self {
                $t::saturating_sub(*self, *v)
            }
        }
        impl num_traits::SaturatingMul for $t {
            fn saturating_mul(&self, v: &Self) -> Self {
                $t::saturating_mul(*self, *v)
            }
        }

        impl num_traits::Zero for $t {
            fn zero() -> Self {
                $t::ZERO
            }
            fn is_zero(&self) -> bool {
                self.to_bits() == 0
            }
        }
        impl num_traits::Bounded for $t {
            fn min_value() -> Self {
                $t::MIN
            }
            fn max_value() -> Self {
                $t::MAX
            }
        }
        impl num_traits::ToPrimitive for $t {
            fn to_i64(&self) -> Option<i64> {
                Some($t::to_i32(*self) as i64)
            }
            fn to_u64(&self) -> Option<u64> {
                u64::try_from($t::to_i32(*self)).ok()
            }
            fn to_f32(&self) -> Option<f32> {
                Some($t::to_f32(*self))
            }
            fn to_f64(&self) -> Option<f64> {
                Some($t::to_f64(*self))
            }
        }
        impl num_traits::FromPrimitive for $t {
            fn from_i64(n: i64) -> Option<Self> {
                Self::try_from_i128(n as i128).ok()
            }
            fn from_u64(n: u64) -> Option<Self> {
                Self::try_from_i128(n as i128).ok()
            }
            /// Truncates toward zero; `None` when the result is out of range or `n` is NaN.
            fn from_f64(n: f64) -> Option<Self> {
                let t = n.trunc();
                if ($min as f64..=$max as f64).contains(&t) {
                    Some(Self::from_i64_wrapping(t as i64))
                } else {
                    None
                }
            }
        }
        impl num_traits::NumCast for $t {
            fn from<N: num_traits::ToPrimitive>(n: N) -> Option<Self> {
                match n.to_i64() {
                    Some(v) => <Self as num_traits::FromPrimitive>::from_i64(v),
                    None => n.to_f64().and_then(<Self as num_traits::FromPrimitive>::from_f64),
                }
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_i64(self.to_i32() as i64)
            }
        }
        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = i64::deserialize(d)?;
                Self::try_from_i128(v as i128).map_err(serde::de::Error::custom)
            }
        }
    };
    (@try_from $t:ident: $($src:ty)*) => {
        $(
            impl TryFrom<$src> for $t {
                type Error = SubByteIntError;
                /// Range-checked conversion (no wrapping).
                fn try_from(v: $src) -> Result<Self, Self::Error> {
                    Self::try_from_i128(v as i128)
                }
            }
        )*
    };
}

macro_rules! one {
    ($($t:ident),*) => {$(
        impl $t {
            /// One.
            pub const ONE: $t = $t(1);
        }
        impl num_traits::One for $t {
            fn one() -> Self {
                $t::ONE
            }
        }
        impl std::iter::Product for $t {
            /// Wrapping product (as `×`).
            fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold($t::ONE, |a, b| a.wrapping_mul(b))
            }
        }
        impl<'a> std::iter::Product<&'a $t> for $t {
            /// Wrapping product (as `×`).
            fn product<I: Iterator<Item = &'a $t>>(iter: I) -> Self {
                iter.copied().product()
            }
        }
        impl num_traits::Num for $t {
            type FromStrRadixErr = SubByteIntError;
            /// An optional sign and digits in `radix` (2 to 36),
            /// range-checked as [`FromStr`].
            ///
            /// # Errors
            ///
            /// [`SubByteIntError::Invalid`] for text that is not an
            /// integer in `radix` (or a radix outside 2..=36),
            /// [`SubByteIntError::OutOfRange`] for values outside the type.
            fn from_str_radix(s: &str, radix: u32) -> Result<Self, SubByteIntError> {
                let invalid = || SubByteIntError::Invalid {
                    type_name: stringify!($t),
                    text: s.to_string(),
                };
                if !(2..=36).contains(&radix) {
                    return Err(invalid());
                }
                let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
                if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                    return Err(invalid());
                }
                match i128::from_str_radix(s, radix) {
                    Ok(v) => Self::try_from_i128(v),
                    // Only overflow is left: far outside the range.
                    Err(_) => Err(SubByteIntError::OutOfRange {
                        type_name: stringify!($t),
                        value: s.to_string(),
                    }),
                }
            }
        }
    )*};
}

sub_byte_int!(
    /// `int1`: 1-bit two's-complement integer, values −1 and 0 (ml_dtypes).
    int1, 1, true, -1, 0, lossless: [i8, i16, i32, i64, i128, isize]
);
sub_byte_int!(
    /// `int2`: 2-bit two's-complement integer, −2 … 1 (ml_dtypes).
    int2, 2, true, -2, 1, lossless: [i8, i16, i32, i64, i128, isize]
);
sub_byte_int!(
    /// `int4`: 4-bit two's-complement integer, −8 … 7 (ml_dtypes).
    int4, 4, true, -8, 7, lossless: [i8, i16, i32, i64, i128, isize]
);
sub_byte_int!(
    /// `uint1`: 1-bit unsigned integer, 0 and 1 (ml_dtypes).
    uint1, 1, false, 0, 1, lossless: [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize]
);
sub_byte_int!(
    /// `uint2`: 2-bit unsigned integer, 0 … 3 (ml_dtypes).
    uint2, 2, false, 0, 3, lossless: [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize]
);
sub_byte_int!(
    /// `uint4`: 4-bit unsigned integer, 0 … 15 (ml_dtypes).
    uint4, 4, false, 0, 15, lossless: [i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize]
);
// int1 has no 1 (1 wraps to −1), so no `One`.
one!(int2, int4, uint1, uint2, uint4);

#[cfg(test)]
mod tests {
    use super::*;

    /// All values × all values against i64 arithmetic and an independent
    /// floor-division formula, for every type.
    fn exhaustive<T: SubByteInt>(
        add: fn(T, T) -> T,
        sub: fn(T, T) -> T,
        mul: fn(T, T) -> T,
        div: fn(T, T) -> T,
        rem: fn(T, T) -> T,
    ) {
        let wrap = |v: i64| T::from_i64_wrapping(v);
        let n = 1u8 << T::BITS;
        for a in 0..n {
            let x = T::from_bits(a);
            let xi = x.to_i32() as i64;
            assert!((T::MIN as i64..=T::MAX as i64).contains(&xi));
            // upper bits are ignored
            assert_eq!(T::from_bits(a | (0xFF << T::BITS)), x);
            assert_eq!(wrap(xi), x);
            assert_eq!(wrap(xi + (1 << T::BITS)), x);
            for b in 0..n {
                let y = T::from_bits(b);
                let yi = y.to_i32() as i64;
                assert_eq!(add(x, y), wrap(xi + yi));
                assert_eq!(sub(x, y), wrap(xi - yi));
                assert_eq!(mul(x, y), wrap(xi * yi));
                if yi == 0 {
                    assert_eq!(div(x, y), wrap(0));
                    assert_eq!(rem(x, y), wrap(0));
                } else {
                    let q = (xi as f64 / yi as f64).floor() as i64;
                    assert_eq!(div(x, y), wrap(q), "{xi} // {yi}");
                    assert_eq!(rem(x, y), wrap(xi - q * yi), "{xi} % {yi}");
                }
                assert_eq!(x.cmp(&y), xi.cmp(&yi));
            }
        }
    }

    #[test]
    fn all_pairs() {
        macro_rules! each {
            ($($t:ty),*) => {$(
                exhaustive::<$t>(
                    |a, b| a + b,
                    |a, b| a - b,
                    |a, b| a * b,
                    |a, b| a / b,
                    |a, b| a % b,
                );
            )*};
        }
        each!(int1, int2, int4, uint1, uint2, uint4);
    }

    #[test]
    fn range_checks_and_parsing() {
        assert_eq!(int4::try_from(7i32), Ok(int4::MAX));
        assert_eq!(
            int4::try_from(8u64),
            Err(SubByteIntError::OutOfRange {
                type_name: "int4",
                value: "8".into()
            })
        );
        assert!(uint4::try_from(-1i8).is_err());
        assert_eq!("-8".parse::<int4>(), Ok(int4::MIN));
        assert_eq!("+15".parse::<uint4>(), Ok(uint4::MAX));
        assert!(matches!(
            "99999999999999999999999999999999999999999999".parse::<int2>(),
            Err(SubByteIntError::OutOfRange { .. })
        ));
        assert!(matches!(
            "1.0".parse::<int2>(),
            Err(SubByteIntError::Invalid { .. })
        ));
        assert!(matches!(
            "".parse::<int2>(),
            Err(SubByteIntError::Invalid { .. })
        ));
        assert_eq!(
            "16".parse::<uint4>().unwrap_err().to_string(),
            "16 is out of range for uint4"
        );
        assert_eq!(
            int4::MAX.checked_div(int4::ZERO).unwrap_err().to_string(),
            "int4 division by zero"
        );
    }

    #[test]
    fn numpy_float_casts() {
        assert_eq!(int4::from_f64_numpy(-2.7).to_i32(), -2);
        assert_eq!(int4::from_f64_numpy(9.9).to_i32(), -7);
        assert_eq!(int4::from_f64_numpy(2147483647.0).to_i32(), -1);
        assert_eq!(int4::from_f64_numpy(4294967299.0), int4::ZERO);
        assert_eq!(uint2::from_f64_numpy(-0.9), uint2::ZERO);
        assert_eq!(uint2::from_f64_numpy(f64::NEG_INFINITY), uint2::ZERO);
    }

    #[test]
    fn num_traits_and_bytemuck() {
        use num_traits::{Bounded, FromPrimitive, NumCast, One, ToPrimitive, Zero};
        assert_eq!(<int4 as Bounded>::min_value(), int4::MIN);
        assert_eq!(<uint2 as One>::one().to_i32(), 1);
        assert!(<int1 as Zero>::zero().is_zero());
        assert_eq!(int4::MIN.to_u64(), None);
        assert_eq!(int4::MIN.to_i64(), Some(-8));
        assert_eq!(<int4 as FromPrimitive>::from_f64(-8.9), Some(int4::MIN));
        assert_eq!(<int4 as FromPrimitive>::from_f64(f64::NAN), None);
        assert_eq!(<uint4 as NumCast>::from(15u64), Some(uint4::MAX));
        assert_eq!(<uint4 as NumCast>::from(16i32), None);
        assert_eq!(<uint4 as NumCast>::from(3.5f32), Some(uint4::from_bits(3)));
        let bytes = [0x07u8, 0x17, 0xF8];
        let xs: &[int4] = bytemuck::cast_slice(&bytes);
        assert_eq!(xs[0], xs[1]);
        assert_eq!(xs[2], int4::MIN);
        assert_eq!(<i8 as From<int4>>::from(xs[2]), -8);
        assert_eq!(<u8 as From<uint4>>::from(uint4::MAX), 15);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_as_numbers() {
        let v = vec![int4::MIN, int4::MAX];
        let s = serde_json::to_string(&v).unwrap();
        assert_eq!(s, "[-8,7]");
        let back: Vec<int4> = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        assert!(serde_json::from_str::<uint2>("4").is_err());
        assert!(serde_json::from_str::<uint2>("\"1\"").is_err());
    }
}
