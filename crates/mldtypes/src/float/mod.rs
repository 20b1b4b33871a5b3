//! One generic minifloat; every named ml_dtypes float format is a descriptor.
//!
//! The scalar types [`bfloat16`], [`float8_e3m4`], [`float8_e4m3`],
//! [`float8_e4m3fn`], [`float8_e4m3fnuz`], [`float8_e4m3b11fnuz`],
//! [`float8_e5m2`], [`float8_e5m2fnuz`], [`float8_e8m0fnu`],
//! [`float6_e2m3fn`], [`float6_e3m2fn`] and [`float4_e2m1fn`] are
//! `#[repr(transparent)]` wrappers around their bit pattern (`u8`, `u16` for
//! bfloat16; sub-byte formats use the low bits). They are all declared by one
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

pub mod complex;
pub mod core;

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
    Copy + Default + std::fmt::Debug + PartialEq + PartialOrd + Send + Sync + 'static
{
    /// The format descriptor of this type.
    const FORMAT: Format;
    /// The storage type of the bit pattern: `u8`, or `u16` for bfloat16.
    type Bits: Copy + Into<u32> + Eq + std::fmt::Debug;

    /// The value with bit pattern `bits`; bits above [`Format::bits`] are
    /// cleared.
    fn from_bits(bits: Self::Bits) -> Self;
    /// The bit pattern (upper unused bits are zero).
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

    /// Rounds an `f32` to nearest, ties to even, as ml_dtypes does (see
    /// [`crate::float::core::encode_f32`]).
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
    ($( $(#[$doc:meta])* $name:ident : $bits:ty = $fmt:ident; )*) => {
        $( minifloat_type!($(#[$doc])* $name, $bits, $fmt); )*
    };
}

/// Everything one float type is made of; the body is the same for every
/// format.
macro_rules! minifloat_type {
    ($(#[$doc:meta])* $name:ident, $bits:ty, $fmt:ident) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(transparent)]
        #[derive(Clone, Copy, Default)]
        pub struct $name($bits);

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
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.to_f32(), f)
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
    };
}

minifloats! {
    /// bfloat16: the upper 16 bits of an IEEE float32 (1 sign, 8 exponent,
    /// 7 mantissa bits, bias 127), with infinities and NaN.
    bfloat16: u16 = BFLOAT16;
    /// float8_e3m4: 1 sign, 3 exponent, 4 mantissa bits, bias 3, IEEE
    /// infinities and NaN; max 15.5.
    float8_e3m4: u8 = FLOAT8_E3M4;
    /// float8_e4m3: 1 sign, 4 exponent, 3 mantissa bits, bias 7, IEEE
    /// infinities and NaN; max 240.
    float8_e4m3: u8 = FLOAT8_E4M3;
    /// float8_e4m3fn (OCP FP8 E4M3): bias 7, no infinities, NaN
    /// `0bS111_1111`; max 448.
    float8_e4m3fn: u8 = FLOAT8_E4M3FN;
    /// float8_e4m3fnuz: bias 8, no infinities, no −0, single NaN `0x80`; max 240.
    float8_e4m3fnuz: u8 = FLOAT8_E4M3FNUZ;
    /// float8_e4m3b11fnuz: bias 11, no infinities, no −0, single NaN `0x80`; max 30.
    float8_e4m3b11fnuz: u8 = FLOAT8_E4M3B11FNUZ;
    /// float8_e5m2 (OCP FP8 E5M2): 1 sign, 5 exponent, 2 mantissa bits,
    /// bias 15, IEEE infinities and NaN; max 57344.
    float8_e5m2: u8 = FLOAT8_E5M2;
    /// float8_e5m2fnuz: bias 16, no infinities, no −0, single NaN `0x80`; max 57344.
    float8_e5m2fnuz: u8 = FLOAT8_E5M2FNUZ;
    /// float8_e8m0fnu (OCP MX E8M0 scale): unsigned, 8 exponent bits, no
    /// mantissa, no zero, no infinities, NaN `0xFF`; values 2^-127 … 2^127.
    float8_e8m0fnu: u8 = FLOAT8_E8M0FNU;
    /// float6_e2m3fn (OCP MX FP6 E2M3): `0bSEEMMM` in the low 6 bits, bias 1,
    /// finite only; max 7.5.
    float6_e2m3fn: u8 = FLOAT6_E2M3FN;
    /// float6_e3m2fn (OCP MX FP6 E3M2): `0bSEEEMM` in the low 6 bits, bias 3,
    /// finite only; max 28.
    float6_e3m2fn: u8 = FLOAT6_E3M2FN;
    /// float4_e2m1fn (OCP MX FP4 E2M1): `0bSEEM` in the low 4 bits, bias 1,
    /// finite only; values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
    float4_e2m1fn: u8 = FLOAT4_E2M1FN;
}
