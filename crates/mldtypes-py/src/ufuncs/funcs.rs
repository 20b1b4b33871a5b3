//! The definitions of the float ufuncs, one per ufunc, with the semantics of
//! ml_dtypes 0.6.0's functors (`ufuncs.h`) and scalar types (`float8.h`,
//! `mxfloat.h`, Eigen's `bfloat16`):
//!
//! - value functions ([`Unary`], [`Binary`]): `T(f(float(a), ...))`,
//!   computed in float32 with the C library's `*f` functions (the ones
//!   ml_dtypes calls) and rounded once; formats whose values float32 cannot
//!   hold compute in float64 ([`Real`] abstracts the two);
//! - comparisons and selections ([`Compare`], [`Select`]): by value;
//! - bit-pattern functions ([`CodeUnary`], [`CodeBinary`],
//!   [`CodePredicate`], [`Logical`]): on the codes, with ml_dtypes'
//!   per-format rules, for any format descriptor.
//!
//! The loops (`float.rs`, `bf16.rs`) and the result tables (`table.rs`) all
//! evaluate these definitions.

use std::os::raw::c_int;

use mldtypes::format::{Format, NanEncoding, NonFinite};

use super::desc::{FloatDesc, Semantics};
use super::{libm, raise_invalid};

// ---------------------------------------------------------------------------
// float32 and float64.
// ---------------------------------------------------------------------------

/// float32 or float64, with the C library's functions of that width.
pub(crate) trait Real:
    Copy
    + PartialOrd
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
{
    const NAN: Self;
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const LN_2: Self;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    /// `M_PI / 180.0f` in ml_dtypes: computed in double, stored as float.
    const RADIANS_PER_DEGREE: Self;
    /// `180.0f / M_PI` in ml_dtypes: computed in double, stored as float.
    const DEGREES_PER_RADIAN: Self;
    /// The quiet bit and the significand field.
    const QUIET: u64;
    const SIGNIFICAND: u64;
    /// The sign bit and the bits of +infinity.
    const SIGN: u64;
    const INFINITY_BITS: u64;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn copysign(self, sign: Self) -> Self;
    fn sqrt(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    fn c_rint(self) -> Self;
    fn c_exp(self) -> Self;
    fn c_exp2(self) -> Self;
    fn c_expm1(self) -> Self;
    fn c_log(self) -> Self;
    fn c_log2(self) -> Self;
    fn c_log10(self) -> Self;
    fn c_log1p(self) -> Self;
    fn c_cbrt(self) -> Self;
    fn c_sin(self) -> Self;
    fn c_cos(self) -> Self;
    fn c_tan(self) -> Self;
    fn c_asin(self) -> Self;
    fn c_acos(self) -> Self;
    fn c_atan(self) -> Self;
    fn c_sinh(self) -> Self;
    fn c_cosh(self) -> Self;
    fn c_tanh(self) -> Self;
    fn c_asinh(self) -> Self;
    fn c_acosh(self) -> Self;
    fn c_atanh(self) -> Self;
    fn c_atan2(self, x: Self) -> Self;
    fn c_hypot(self, y: Self) -> Self;
    fn c_pow(self, y: Self) -> Self;
    fn c_fmod(self, y: Self) -> Self;
    /// `fmod(self, y)` when a short exact computation exists (finite
    /// float32 operands, a normal `y`, `|self / y| < 2^28`; see
    /// [`fmod_f32_exact`]), else None.
    fn fmod_exact(self, _y: Self) -> Option<Self> {
        None
    }
    /// [`Real::c_fmod`] by the x87 `fprem` instruction on x86-64 (as GCC
    /// inlines `std::fmod` in ml_dtypes' build): the same exact remainder
    /// and flags as C `fmodf`, without the library call.
    fn c_fmod_x87(self, y: Self) -> Self {
        self.c_fmod(y)
    }
    fn c_ldexp(self, e: c_int) -> Self;
    /// `(mantissa, exponent)`.
    fn c_frexp(self) -> (Self, c_int);
    /// `(fractional part, integral part)`.
    fn c_modf(self) -> (Self, Self);
}

macro_rules! real {
    ($t:ty, $bits:ty, $quiet:expr, $sig:expr, $ln2:expr, $rpd:expr, $dpr:expr,
     $($m:ident = $c:ident,)* ; $atan2:ident, $hypot:ident, $pow:ident, $fmod:ident,
     $ldexp:ident, $frexp:ident, $modf:ident $(; $x87:ident, $exact:ident)?) => {
        impl Real for $t {
            const NAN: Self = <$t>::NAN;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const LN_2: Self = $ln2;
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const RADIANS_PER_DEGREE: Self = $rpd;
            const DEGREES_PER_RADIAN: Self = $dpr;
            const QUIET: u64 = $quiet;
            const SIGNIFICAND: u64 = $sig;
            const SIGN: u64 = (<$t>::NEG_INFINITY.to_bits() ^ <$t>::INFINITY.to_bits()) as u64;
            const INFINITY_BITS: u64 = <$t>::INFINITY.to_bits() as u64;
            #[inline(always)]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            #[inline(always)]
            fn is_sign_negative(self) -> bool { <$t>::is_sign_negative(self) }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self { <$t>::copysign(self, sign) }
            #[inline(always)]
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline(always)]
            fn floor(self) -> Self { <$t>::floor(self) }
            #[inline(always)]
            fn ceil(self) -> Self { <$t>::ceil(self) }
            #[inline(always)]
            fn trunc(self) -> Self { <$t>::trunc(self) }
            #[inline(always)]
            fn bits(self) -> u64 { self.to_bits() as u64 }
            #[inline(always)]
            fn from_bits(b: u64) -> Self { <$t>::from_bits(b as $bits) }
            $(
                #[inline(always)]
                fn $m(self) -> Self { libm::$c(self) }
            )*
            #[inline(always)]
            fn c_atan2(self, x: Self) -> Self { libm::$atan2(self, x) }
            #[inline(always)]
            fn c_hypot(self, y: Self) -> Self { libm::$hypot(self, y) }
            #[inline(always)]
            fn c_pow(self, y: Self) -> Self { libm::$pow(self, y) }
            #[inline(always)]
            fn c_fmod(self, y: Self) -> Self { libm::$fmod(self, y) }
            $(
                #[cfg(target_arch = "x86_64")]
                #[inline(always)]
                fn c_fmod_x87(self, y: Self) -> Self { $x87(self, y) }
                #[inline(always)]
                fn fmod_exact(self, y: Self) -> Option<Self> { $exact(self, y) }
            )?
            #[inline(always)]
            fn c_ldexp(self, e: c_int) -> Self { libm::$ldexp(self, e) }
            #[inline(always)]
            fn c_frexp(self) -> (Self, c_int) {
                let mut e: c_int = 0;
                // SAFETY: `e` is a writable int.
                let m = unsafe { libm::$frexp(self, &mut e) };
                (m, e)
            }
            #[inline(always)]
            fn c_modf(self) -> (Self, Self) {
                let mut ip: Self = 0.0;
                // SAFETY: `ip` is a writable float.
                let fr = unsafe { libm::$modf(self, &mut ip) };
                (fr, ip)
            }
        }
    };
}

/// `fmod(x, y)` of finite float32 operands with a normal `y` and
/// `|x / y| < 2^28`, exactly, in float64: `n = trunc(x / y)` is the true
/// quotient's integer part (a quotient of float32 values that is not an
/// integer lies at least `2^-24` from one, and float64 division is off by
/// at most `2^28 · 2^-53`), `x − n·y` is exact in float64 (`n·y` has at
/// most 52 significant bits) and a float32 (the remainder of two float32
/// values); a zero remainder takes `x`'s sign. The operations raise no
/// flag but inexact, as `fmodf` raises none for such operands; None for
/// any other operands.
#[inline(always)]
fn fmod_f32_exact(x: f32, y: f32) -> Option<f32> {
    let (ax, ay) = (x.to_bits() & 0x7fff_ffff, y.to_bits() & 0x7fff_ffff);
    // Finite operands, a normal divisor, and |x| < 2^27 |y| by exponents
    // (so |x / y| < 2^28).
    if ax >= 0x7f80_0000 || !(0x0080_0000..0x7f80_0000).contains(&ay) {
        return None;
    }
    if (ax >> 23) >= (ay >> 23) + 27 {
        return None;
    }
    let (dx, dy) = (x as f64, y as f64);
    let n = (dx / dy).trunc();
    let r = (-n).mul_add(dy, dx) as f32;
    Some(if r == 0.0 { 0f32.copysign(x) } else { r })
}

/// C `ldexpf(x, e)` computed exactly in float64 and rounded once to
/// float32: `x · 2^e` (the exponent clamped to ±400, beyond which every
/// float32 overflows or underflows alike) is exact in float64, and the
/// conversion rounds to nearest even with the flags of `ldexpf`
/// (overflow, underflow when the result is tiny and inexact, invalid for a
/// signalling NaN, which becomes quiet).
#[inline(always)]
pub(crate) fn ldexp_f32(x: f32, e: c_int) -> f32 {
    let e = e.clamp(-400, 400);
    let scale = f64::from_bits(((e + 1023) as u64) << 52);
    ((x as f64) * scale) as f32
}

/// `fmod(x, y)` by x87 `fprem`: both operands loaded exactly into the
/// 80-bit stack, the partial remainder repeated until complete (status
/// flag C2 clear), then stored to float32 (exact: the remainder is a
/// float32). Invalid operations (`y == 0`, `x` infinite, signalling NaN)
/// raise the x87 invalid flag, which `fetestexcept` reports as `fmodf`'s.
#[cfg(target_arch = "x86_64")]
#[inline]
fn fprem_f32(x: f32, y: f32) -> f32 {
    let mut r = 0f32;
    // SAFETY: the asm reads `x` and `y` and writes `r` through valid
    // pointers, leaves the x87 stack as it found it (two loads, two pops)
    // and clobbers only `ax` and the x87 registers it declares.
    unsafe {
        std::arch::asm!(
            "fld dword ptr [{y}]",
            "fld dword ptr [{x}]",
            "2:",
            "fprem",
            "fnstsw ax",
            "test ah, 4",
            "jnz 2b",
            "fstp dword ptr [{r}]",
            "fstp st(0)",
            x = in(reg) &x,
            y = in(reg) &y,
            r = in(reg) &mut r,
            out("ax") _,
            out("st(0)") _,
            out("st(1)") _,
            options(nostack),
        );
    }
    r
}

real!(f32, u32, 0x0040_0000, 0x007f_ffff, std::f32::consts::LN_2,
    (std::f64::consts::PI / 180.0) as f32, (180.0 / std::f64::consts::PI) as f32,
    c_rint = rintf, c_exp = expf, c_exp2 = exp2f, c_expm1 = expm1f, c_log = logf,
    c_log2 = log2f, c_log10 = log10f, c_log1p = log1pf, c_cbrt = cbrtf, c_sin = sinf,
    c_cos = cosf, c_tan = tanf, c_asin = asinf, c_acos = acosf, c_atan = atanf,
    c_sinh = sinhf, c_cosh = coshf, c_tanh = tanhf, c_asinh = asinhf, c_acosh = acoshf,
    c_atanh = atanhf,;
    atan2f, hypotf, powf, fmodf, ldexpf, frexpf, modff; fprem_f32, fmod_f32_exact);
real!(f64, u64, 0x0008_0000_0000_0000, 0x000f_ffff_ffff_ffff, std::f64::consts::LN_2,
    std::f64::consts::PI / 180.0, 180.0 / std::f64::consts::PI,
    c_rint = rint, c_exp = exp, c_exp2 = exp2, c_expm1 = expm1, c_log = log,
    c_log2 = log2, c_log10 = log10, c_log1p = log1p, c_cbrt = cbrt, c_sin = sin,
    c_cos = cos, c_tan = tan, c_asin = asin, c_acos = acos, c_atan = atan,
    c_sinh = sinh, c_cosh = cosh, c_tanh = tanh, c_asinh = asinh, c_acosh = acosh,
    c_atanh = atanh,;
    atan2, hypot, pow, fmod, ldexp, frexp, modf);

// ---------------------------------------------------------------------------
// Value functions: computed in float32 (float64), rounded once.
// ---------------------------------------------------------------------------

/// A function of one value (ml_dtypes: `T(f(float(a)))`).
pub(crate) trait Unary {
    /// Whether the compiler building ml_dtypes knows the result is never
    /// negative (`x * x`, `exp`, `exp2`, `cosh`, `acos`, `acosh`, `hypot`)
    /// and so drops the sign of a NaN result in Eigen's `bfloat16(float)`
    /// (whose NaN branch tests `signbit`): those bfloat16 NaN results are
    /// `+NaN`.
    const NONNEGATIVE: bool = false;
    fn f<R: Real>(x: R) -> R;
}

/// A function of two values (ml_dtypes: `T(f(float(a), float(b)))`).
pub(crate) trait Binary {
    /// Whether, for the unsigned float8_e8m0fnu, ml_dtypes raises no
    /// floating-point flags for NaN operands (its `logaddexp` comparisons
    /// with the NaN `0xFF` raise nothing, unlike the signed formats').
    const QUIET_UNSIGNED: bool = false;
    /// See [`Unary::NONNEGATIVE`].
    const NONNEGATIVE: bool = false;
    /// Which NaN operand a bfloat16 result takes (see [`NanRule`]).
    const NAN_BF16: NanRule = NanRule::Native;
    /// Which NaN operand a float8 result takes (see [`NanRule`]).
    const NAN_FLOAT8: NanRule = NanRule::Native;
    /// Whether bfloat16 takes the one-pass loop of `bf16.rs`
    /// (arithmetic the compiler vectorises; no libm call).
    const CHEAP: bool = false;
    /// The float32 operation, for the explicit AVX2 bfloat16 kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const ARITH: Arith = Arith::None;
    /// The chunked bfloat16 loop of a function that calls the C library
    /// (`bf16_libm.rs`), or [`Libm::None`].
    const LIBM: Libm = Libm::None;
    fn f<R: Real>(x: R, y: R) -> R;
}

/// The chunked bfloat16 loop of a [`Binary`] (`bf16_libm.rs`): each names
/// the function whose float32 definition it evaluates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Libm {
    /// None: the blocked float32 loop of `bf16.rs`.
    None,
    /// `floor_divide`: the quotient of [`divmod`].
    FloorDivide,
    /// `remainder` / `mod`: the remainder of [`divmod`].
    Remainder,
    /// `logaddexp`.
    LogAddExp,
    /// `logaddexp2`.
    LogAddExp2,
    /// `power`, `float_power`: C `powf`.
    Power,
    /// `hypot`: C `hypotf`.
    Hypot,
    /// `arctan2`: C `atan2f`.
    Arctan2,
    /// `fmod`: [`fmod_x87`].
    Fmod,
}

/// The float32 operation of a [`Binary`] that has an explicit vector
/// kernel (bfloat16 on AVX2).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    /// None: the blocked float32 loop.
    None,
    Add,
    Sub,
    Mul,
    Div,
}

/// The predicate of a [`Compare`], for the explicit vector kernel.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pred {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

/// The NaN an arithmetic operation of ml_dtypes' scalar types returns when
/// an operand is NaN, as its x86-64 build gives it (x86 returns the NaN of
/// the instruction's first source, and the compiler picks the operand order
/// of commutative operations): observed on ml_dtypes 0.6.0 for every pair of
/// float8 codes and for bfloat16 NaN pairs. Only the sign is at stake: each
/// format's encoder gives its canonical quiet NaN.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NanRule {
    /// As the float32 operation gives it (NaN operands do not matter).
    Native,
    /// `a` if it is NaN, else `b`.
    FirstSecond,
    /// `b` if it is NaN, else `a`.
    SecondFirst,
    /// `a` if it is NaN, else `+NaN` if `b` is (float8 `+` and `-`).
    FirstElsePositive,
}

/// The rule of `O` for a format of the given semantics.
#[inline(always)]
pub(crate) const fn rule_of<O: Binary>(s: Semantics) -> NanRule {
    match s {
        Semantics::Eigen => O::NAN_BF16,
        Semantics::SignedNan => O::NAN_FLOAT8,
        Semantics::Native => NanRule::Native,
    }
}

/// Applies `rule` to the result `r` of `x op y`.
#[inline(always)]
pub(crate) fn apply_nan_rule<R: Real>(rule: NanRule, x: R, y: R, r: R) -> R {
    match rule {
        NanRule::Native => r,
        NanRule::FirstSecond => {
            if x.is_nan() {
                x
            } else if y.is_nan() {
                y
            } else {
                r
            }
        }
        NanRule::SecondFirst => {
            if y.is_nan() {
                y
            } else if x.is_nan() {
                x
            } else {
                r
            }
        }
        NanRule::FirstElsePositive => {
            if x.is_nan() {
                x
            } else if y.is_nan() {
                R::NAN
            } else {
                r
            }
        }
    }
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident $([$c:ident = $v:expr])* = |$x:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $name;
        impl Unary for $name {
            $(const $c: bool = $v;)*
            #[inline(always)]
            fn f<R: Real>($x: R) -> R { $e }
        }
    )*};
}

macro_rules! binary_fns {
    ($($(#[$doc:meta])* $name:ident $([$c:ident: $t:ty = $v:expr])* = |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $name;
        impl Binary for $name {
            $(const $c: $t = $v;)*
            #[inline(always)]
            fn f<R: Real>($x: R, $y: R) -> R { $e }
        }
    )*};
}

unary_fns! {
    /// `rint`: round half to even (C `rintf`).
    Rint = |x| x.c_rint();
    Exp [NONNEGATIVE = true] = |x| x.c_exp();
    Exp2 [NONNEGATIVE = true] = |x| x.c_exp2();
    Expm1 = |x| x.c_expm1();
    Log = |x| x.c_log();
    Log2 = |x| x.c_log2();
    Log10 = |x| x.c_log10();
    Log1p = |x| x.c_log1p();
    /// IEEE square root (the `sqrtss` instruction `sqrtf` is).
    Sqrt = |x| x.sqrt();
    /// ml_dtypes: `f * f` in float32.
    Square [NONNEGATIVE = true] = |x| x * x;
    Cbrt = |x| x.c_cbrt();
    /// ml_dtypes: `1.f / float(a)`.
    Reciprocal = |x| R::ONE / x;
    Sin = |x| x.c_sin();
    Cos = |x| x.c_cos();
    Tan = |x| x.c_tan();
    Arcsin = |x| x.c_asin();
    Arccos [NONNEGATIVE = true] = |x| x.c_acos();
    Arctan = |x| x.c_atan();
    Sinh = |x| x.c_sinh();
    Cosh [NONNEGATIVE = true] = |x| x.c_cosh();
    Tanh = |x| x.c_tanh();
    Arcsinh = |x| x.c_asinh();
    Arccosh [NONNEGATIVE = true] = |x| x.c_acosh();
    Arctanh = |x| x.c_atanh();
    Deg2rad = |x| x * R::RADIANS_PER_DEGREE;
    Rad2deg = |x| x * R::DEGREES_PER_RADIAN;
    Floor = |x| x.floor();
    Ceil = |x| x.ceil();
    Trunc = |x| x.trunc();
}

binary_fns! {
    Add [NAN_BF16: NanRule = NanRule::SecondFirst]
        [NAN_FLOAT8: NanRule = NanRule::FirstElsePositive] [CHEAP: bool = true]
        [ARITH: Arith = Arith::Add] = |x, y| x + y;
    Subtract [NAN_BF16: NanRule = NanRule::FirstSecond]
        [NAN_FLOAT8: NanRule = NanRule::FirstElsePositive] [CHEAP: bool = true]
        [ARITH: Arith = Arith::Sub] = |x, y| x - y;
    Multiply [NAN_BF16: NanRule = NanRule::SecondFirst]
        [NAN_FLOAT8: NanRule = NanRule::SecondFirst] [CHEAP: bool = true]
        [ARITH: Arith = Arith::Mul] = |x, y| x * y;
    Divide [NAN_BF16: NanRule = NanRule::FirstSecond]
        [NAN_FLOAT8: NanRule = NanRule::FirstSecond] [CHEAP: bool = true]
        [ARITH: Arith = Arith::Div] = |x, y| x / y;
    LogAddExp [QUIET_UNSIGNED: bool = true] [LIBM: Libm = Libm::LogAddExp]
        = |x, y| log_add_exp(x, y);
    LogAddExp2 [QUIET_UNSIGNED: bool = true] [LIBM: Libm = Libm::LogAddExp2]
        = |x, y| log_add_exp2(x, y);
    FloorDivide [LIBM: Libm = Libm::FloorDivide] = |x, y| divmod(x, y).0;
    /// `power`, and `float_power` (ml_dtypes' main branch registers the
    /// same functor for it).
    Power [LIBM: Libm = Libm::Power] = |x, y| x.c_pow(y);
    /// The quotient is computed too (kept from dead-code elimination): it
    /// raises the overflow flag ml_dtypes' build raises.
    Remainder [LIBM: Libm = Libm::Remainder] = |x, y| {
        let (q, m) = divmod(x, y);
        std::hint::black_box(q);
        m
    };
    Fmod [LIBM: Libm = Libm::Fmod] = |x, y| fmod_x87(x, y);
    Arctan2 [LIBM: Libm = Libm::Arctan2] = |x, y| x.c_atan2(y);
    Hypot [NONNEGATIVE: bool = true] [LIBM: Libm = Libm::Hypot] = |x, y| x.c_hypot(y);
}

/// `a < b` as a C relational operator: false with the invalid flag raised
/// when an operand is NaN (ml_dtypes' float32 code is compiled to the
/// signalling comparison).
#[inline]
pub(crate) fn lt_signalling<R: Real>(a: R, b: R) -> bool {
    if a.is_nan() || b.is_nan() {
        raise_invalid();
        false
    } else {
        a < b
    }
}

/// `a < b` without raising any flag for NaN operands: compared as integers
/// (sign-magnitude order keys of the bit patterns), since the compiler may
/// implement a float comparison guarded by NaN tests with a signalling
/// compare instruction (`cmpltss`), which raises invalid for a quiet NaN.
#[inline]
pub(crate) fn lt_quiet<R: Real>(a: R, b: R) -> bool {
    let key = |x: R| -> Option<i64> {
        let b = x.bits();
        let mag = b & !R::SIGN;
        if mag > R::INFINITY_BITS {
            None
        } else if b & R::SIGN != 0 {
            Some(-(mag as i64))
        } else {
            Some(mag as i64)
        }
    };
    matches!((key(a), key(b)), (Some(p), Some(q)) if p < q)
}

/// `a > b` as a C relational operator (see [`lt_signalling`]).
#[inline]
fn gt_signalling<R: Real>(a: R, b: R) -> bool {
    lt_signalling(b, a)
}

/// ml_dtypes' `LogAddExp`: `log(exp(x) + exp(y))` computed as
/// `max + log1p(exp(min - max))`; equal arguments (same-signed infinities
/// included) give `x + log(2)`; unordered ones NaN.
#[inline]
fn log_add_exp<R: Real>(x: R, y: R) -> R {
    if x == y {
        return x + R::LN_2;
    }
    if gt_signalling(x, y) {
        x + (y - x).c_exp().c_log1p()
    } else if lt_signalling(x, y) {
        y + (x - y).c_exp().c_log1p()
    } else {
        R::NAN
    }
}

/// ml_dtypes' `LogAddExp2`, in base 2 (`x + 1` for equal arguments).
#[inline]
fn log_add_exp2<R: Real>(x: R, y: R) -> R {
    if x == y {
        return x + R::ONE;
    }
    if gt_signalling(x, y) {
        x + (y - x).c_exp2().c_log1p() / R::LN_2
    } else if lt_signalling(x, y) {
        y + (x - y).c_exp2().c_log1p() / R::LN_2
    } else {
        R::NAN
    }
}

/// C `fmodf` as ml_dtypes' x86-64 build computes it (GCC inlines
/// `std::fmod` with the x87 `fprem` instruction): when both operands are
/// NaN, the result is the one with the larger significand once quieted,
/// and the positive one on a tie (x87 NaN propagation), where SSE code
/// would return the first operand.
#[inline]
pub(crate) fn fmod_x87<R: Real>(x: R, y: R) -> R {
    if let Some(r) = x.fmod_exact(y) {
        return r;
    }
    let r = x.c_fmod_x87(y);
    if !(x.is_nan() && y.is_nan()) {
        return r;
    }
    let (qx, qy) = (x.bits() | R::QUIET, y.bits() | R::QUIET);
    let (mx, my) = (qx & R::SIGNIFICAND, qy & R::SIGNIFICAND);
    R::from_bits(if mx > my {
        qx
    } else if my > mx {
        qy
    } else {
        qx & qy
    })
}

/// ml_dtypes' `divmod_impl` (NumPy's float `divmod`): `(floor(a / b),
/// a mod b)` with the remainder taking the divisor's sign; a zero divisor
/// gives `(±inf, nan)`, or `(nan, nan)` for a zero or NaN dividend.
#[inline]
pub(crate) fn divmod<R: Real>(a: R, b: R) -> (R, R) {
    if b == R::ZERO {
        if a.is_nan() || a == R::ZERO {
            return (R::NAN, R::NAN);
        }
        let inf = if a.is_sign_negative() == b.is_sign_negative() {
            R::INFINITY
        } else {
            R::NEG_INFINITY
        };
        return (inf, R::NAN);
    }
    let mut m = fmod_x87(a, b);
    let mut div = (a - m) / b;
    if m != R::ZERO {
        // ml_dtypes' build compares the divisor with a signalling
        // comparison and the remainder with a quiet one (observed: NaN
        // dividends raise no invalid flag, NaN divisors do).
        if lt_signalling(b, R::ZERO) != lt_quiet(m, R::ZERO) {
            m += b;
            div -= R::ONE;
        }
    } else {
        m = R::ZERO.copysign(b);
    }
    let floordiv = if div != R::ZERO {
        let f = div.floor();
        if lt_quiet(R::HALF, div - f) {
            f + R::ONE
        } else {
            f
        }
    } else {
        R::ZERO.copysign(a / b)
    };
    (floordiv, m)
}

// ---------------------------------------------------------------------------
// Codes: ml_dtypes' bit-level rules, for any format descriptor.
// ---------------------------------------------------------------------------

/// Whether a decoded float32 is a signalling NaN (quiet bit clear): only
/// bfloat16 codes decode to those, payload kept.
#[inline(always)]
pub(crate) fn is_snan(x: f32) -> bool {
    let b = x.to_bits();
    b & 0x7fc0_0000 == 0x7f80_0000 && b & 0x003f_ffff != 0
}

/// Whether a bfloat16 code is a signalling NaN.
#[inline(always)]
pub(crate) fn bf16_snan_code(c: u32) -> bool {
    c & 0x7fc0 == 0x7f80 && c & 0x003f != 0
}

/// Constants some bit-level functions return: `T(1)`, `T(-1)`, `T(0)` as
/// ml_dtypes constructs them.
pub(crate) struct Consts {
    pub(crate) one: u32,
    pub(crate) minus_one: u32,
    pub(crate) zero: u32,
}

impl Consts {
    /// The constants of `d`.
    #[inline]
    pub(crate) fn of(d: &FloatDesc) -> Consts {
        Consts {
            one: d.one,
            minus_one: d.minus_one,
            zero: d.zero,
        }
    }
}

/// Whether `code` is NaN (Eigen / ml_dtypes `isnan`, on bits).
#[inline]
pub(crate) fn is_nan(f: &Format, code: u32) -> bool {
    f.is_nan_code(code)
}

/// Whether `code` is ±infinity.
#[inline]
pub(crate) fn is_inf(f: &Format, code: u32) -> bool {
    f.inf_code() == Some(code & !f.sign_mask())
}

/// ml_dtypes' `abs` on bits: the sign bit cleared, except that the
/// negative-zero NaN of the fnuz formats (and their zero) stay as they are,
/// and the unsigned float8_e8m0fnu is its own absolute value.
#[inline]
pub(crate) fn abs_code(f: &Format, code: u32) -> u32 {
    if !f.signed {
        return code;
    }
    let mag = code & !f.sign_mask();
    if f.nan_encoding == NanEncoding::NegativeZero && mag == 0 {
        code
    } else {
        mag
    }
}

/// The sign half of ml_dtypes' `SignAndMagnitude`: the sign bit (0 in the
/// unsigned float8_e8m0fnu). The fnuz NaN `0x80` counts as negative.
#[inline]
pub(crate) fn sign_code(f: &Format, code: u32) -> u32 {
    if f.signed {
        code & f.sign_mask()
    } else {
        0
    }
}

/// `std::numeric_limits<T>::quiet_NaN()` of ml_dtypes: the positive quiet
/// NaN (top mantissa bit set) in IEEE formats, the format's NaN otherwise;
/// the float6/float4 formats, which have none, give `-0` (`0b1'00...`).
#[inline]
pub(crate) fn quiet_nan(f: &Format) -> u32 {
    f.nan_code().unwrap_or(f.sign_mask())
}

/// C++ `static_cast<bool>` of an ml_dtypes scalar: false only for zeros.
/// NaN is true (the fnuz NaN too); float8_e8m0fnu has no zero.
#[inline]
pub(crate) fn truthy(f: &Format, code: u32) -> bool {
    if !f.signed {
        true
    } else if f.nan_encoding == NanEncoding::NegativeZero {
        code != 0
    } else {
        code & !f.sign_mask() != 0
    }
}

// ---------------------------------------------------------------------------
// Comparisons and selections, by value.
// ---------------------------------------------------------------------------

/// A comparison of two values.
pub(crate) trait Compare {
    /// Whether ml_dtypes evaluates it with an ordered (signalling) C
    /// operator when comparing as float32.
    const ORDERED: bool;
    /// The same predicate, for the explicit vector kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const PRED: Pred;
    fn f(x: f32, y: f32) -> bool;
}

macro_rules! compares {
    ($($name:ident = |$x:ident, $y:ident| $e:expr, $ordered:expr, $pred:ident;)*) => {$(
        pub(crate) struct $name;
        impl Compare for $name {
            const ORDERED: bool = $ordered;
            const PRED: Pred = Pred::$pred;
            #[inline(always)]
            fn f($x: f32, $y: f32) -> bool { $e }
        }
    )*};
}

compares! {
    Equal = |x, y| x == y, false, Eq;
    NotEqual = |x, y| x != y, false, Ne;
    Less = |x, y| x < y, true, Lt;
    Greater = |x, y| x > y, true, Gt;
    LessEqual = |x, y| x <= y, true, Le;
    GreaterEqual = |x, y| x >= y, true, Ge;
}

/// A choice between two operands.
pub(crate) trait Select {
    /// Whether the ordered part of [`Select::pick_x`] is `x > y` (else
    /// `x < y`), for the explicit vector kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const GREATER: bool;
    /// Whether a NaN `x` is picked (`maximum`, `minimum`: NaN propagates;
    /// signals when only `y` is NaN), else a NaN `y` picks `x` (`fmax`,
    /// `fmin`; signals when only `x` is NaN).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const NAN_FROM_X: bool;
    /// Whether the result is `x` (else `y`).
    fn pick_x(x: f32, y: f32) -> bool;
    /// Whether ml_dtypes evaluates an ordered float32 comparison with a NaN
    /// operand for these arguments (when comparing as float32).
    fn signals(x: f32, y: f32) -> bool;
    /// [`Select::pick_x`] on the order keys of the codes
    /// ([`mldtypes::sort::SortKey`]: value order, `-0 == +0`) and whether
    /// each operand is NaN.
    fn pick_key(kx: u32, ky: u32, nan_x: bool, nan_y: bool) -> bool;
}

/// `maximum`: `isnan(a) || a > b ? a : b` (NaN propagates from either side;
/// `maximum(+0, -0)` is `-0`, the second operand).
pub(crate) struct Maximum;
impl Select for Maximum {
    const GREATER: bool = true;
    const NAN_FROM_X: bool = true;
    #[inline(always)]
    fn pick_x(x: f32, y: f32) -> bool {
        x.is_nan() | (x > y)
    }
    #[inline(always)]
    fn pick_key(kx: u32, ky: u32, nan_x: bool, nan_y: bool) -> bool {
        nan_x | (!nan_y & (kx > ky))
    }
    #[inline(always)]
    fn signals(x: f32, y: f32) -> bool {
        !x.is_nan() & y.is_nan()
    }
}

/// `minimum`: `isnan(a) || a < b ? a : b`.
pub(crate) struct Minimum;
impl Select for Minimum {
    const GREATER: bool = false;
    const NAN_FROM_X: bool = true;
    #[inline(always)]
    fn pick_x(x: f32, y: f32) -> bool {
        x.is_nan() | (x < y)
    }
    #[inline(always)]
    fn pick_key(kx: u32, ky: u32, nan_x: bool, nan_y: bool) -> bool {
        nan_x | (!nan_y & (kx < ky))
    }
    #[inline(always)]
    fn signals(x: f32, y: f32) -> bool {
        !x.is_nan() & y.is_nan()
    }
}

/// `fmax`: `isnan(b) || a > b ? a : b` (NaN only if both are).
pub(crate) struct Fmax;
impl Select for Fmax {
    const GREATER: bool = true;
    const NAN_FROM_X: bool = false;
    #[inline(always)]
    fn pick_x(x: f32, y: f32) -> bool {
        y.is_nan() | (x > y)
    }
    #[inline(always)]
    fn pick_key(kx: u32, ky: u32, nan_x: bool, nan_y: bool) -> bool {
        nan_y | (!nan_x & (kx > ky))
    }
    #[inline(always)]
    fn signals(x: f32, y: f32) -> bool {
        x.is_nan() & !y.is_nan()
    }
}

/// `fmin`: `isnan(b) || a < b ? a : b`.
pub(crate) struct Fmin;
impl Select for Fmin {
    const GREATER: bool = false;
    const NAN_FROM_X: bool = false;
    #[inline(always)]
    fn pick_x(x: f32, y: f32) -> bool {
        y.is_nan() | (x < y)
    }
    #[inline(always)]
    fn pick_key(kx: u32, ky: u32, nan_x: bool, nan_y: bool) -> bool {
        nan_y | (!nan_x & (kx < ky))
    }
    #[inline(always)]
    fn signals(x: f32, y: f32) -> bool {
        x.is_nan() & !y.is_nan()
    }
}

// ---------------------------------------------------------------------------
// Bit-pattern functions.
// ---------------------------------------------------------------------------

/// A function of one code.
pub(crate) trait CodeUnary {
    /// Whether ml_dtypes reads the value as float32 (an `isnan` test on a
    /// bfloat16 signalling NaN raises the invalid flag).
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, c: &Consts, x: u32) -> u32;
}

/// A function of two codes.
pub(crate) trait CodeBinary {
    /// See [`CodeUnary::READS_VALUE`].
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, c: &Consts, x: u32, y: u32) -> u32;
}

/// A boolean function of one code.
pub(crate) trait CodePredicate {
    /// See [`CodeUnary::READS_VALUE`].
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, x: u32) -> bool;
}

/// `positive` and `conjugate` (real): the operand unchanged.
pub(crate) struct Identity;
impl CodeUnary for Identity {
    #[inline(always)]
    fn f(_: &Format, _: &Consts, x: u32) -> u32 {
        x
    }
}

/// `negative`: the sign bit flipped; the fnuz zero and NaN (magnitude bits
/// zero) are their own negation; every float8_e8m0fnu value negates to NaN
/// (`float8.h`, `mxfloat.h` `operator-`), as every nonzero value of an
/// unsigned format does.
pub(crate) struct Negative;
impl CodeUnary for Negative {
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32) -> u32 {
        if !fmt.signed {
            // Unsigned formats have no negative values: -0 is 0, the rest NaN.
            if fmt.has_zero && x == 0 {
                return x;
            }
            return fmt.nan_code().unwrap_or(x);
        }
        if fmt.nan_encoding == NanEncoding::NegativeZero && x & !fmt.sign_mask() == 0 {
            return x;
        }
        x ^ fmt.sign_mask()
    }
}

/// `absolute` / `fabs`: [`abs_code`].
pub(crate) struct Absolute;
impl CodeUnary for Absolute {
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32) -> u32 {
        abs_code(fmt, x)
    }
}

/// `sign`: NaN and zeros (magnitude bits zero) unchanged, else `T(±1)`.
/// As in ml_dtypes, float8_e8m0fnu's code `0x00` (2^-127, not a zero)
/// is returned unchanged, being "magnitude zero".
pub(crate) struct Sign;
impl CodeUnary for Sign {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, c: &Consts, x: u32) -> u32 {
        if is_nan(fmt, x) || abs_code(fmt, x) == 0 {
            x
        } else if sign_code(fmt, x) != 0 {
            c.minus_one
        } else {
            c.one
        }
    }
}

/// `heaviside(x, h0)`: NaN `x` unchanged, `h0` where `x`'s magnitude bits
/// are zero, else `T(0)` for negative and `T(1)` for positive `x`.
pub(crate) struct Heaviside;
impl CodeBinary for Heaviside {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, c: &Consts, x: u32, h0: u32) -> u32 {
        if is_nan(fmt, x) {
            x
        } else if abs_code(fmt, x) == 0 {
            h0
        } else if sign_code(fmt, x) != 0 {
            c.zero
        } else {
            c.one
        }
    }
}

/// `copysign(a, b)`: `abs(a)`'s bits with `b`'s sign bit (ml_dtypes: no
/// special case, so in the fnuz formats `copysign(0, -1)` is the NaN
/// `0x80`); float8_e8m0fnu returns `a`.
pub(crate) struct CopySign;
impl CodeBinary for CopySign {
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32, y: u32) -> u32 {
        if !fmt.signed {
            x
        } else {
            abs_code(fmt, x) | sign_code(fmt, y)
        }
    }
}

/// ml_dtypes' `NextAfter` on codes: NaN if either is NaN; `to` if the bits
/// are equal; from a magnitude-zero code, the smallest subnormal with
/// `to`'s sign; otherwise the code stepped by one towards `to` (integer
/// step on the bit pattern), and in formats that are not IEEE a step that
/// lands on a NaN code gives `+0` instead.
#[inline]
pub(crate) fn next_after(fmt: &Format, from: u32, to: u32) -> u32 {
    if is_nan(fmt, from) || is_nan(fmt, to) {
        return quiet_nan(fmt);
    }
    if from == to {
        return to;
    }
    let (from_sign, from_abs) = (sign_code(fmt, from), abs_code(fmt, from));
    let (to_sign, to_abs) = (sign_code(fmt, to), abs_code(fmt, to));
    if from_abs == 0 {
        return if to_abs == 0 { to } else { 1 | to_sign };
    }
    let down = from_abs > to_abs || from_sign != to_sign;
    let out = if down { from.wrapping_sub(1) } else { from + 1 } & fmt.code_mask();
    // bfloat16 and the IEEE float8 formats are `is_iec559`; the others
    // replace a NaN result (the fnuz `0x80` reached from -min) with zero.
    if fmt.non_finite != NonFinite::Ieee && is_nan(fmt, out) {
        return 0;
    }
    out
}

/// `nextafter(from, to)`: [`next_after`].
pub(crate) struct NextAfter;
impl CodeBinary for NextAfter {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32, y: u32) -> u32 {
        next_after(fmt, x, y)
    }
}

/// `logical_not`: not [`truthy`].
pub(crate) struct LogicalNot;
impl CodePredicate for LogicalNot {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        !truthy(fmt, x)
    }
}

/// `isfinite`: neither NaN nor infinite.
pub(crate) struct IsFinite;
impl CodePredicate for IsFinite {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        !is_nan(fmt, x) && !is_inf(fmt, x)
    }
}

/// `isinf`.
pub(crate) struct IsInf;
impl CodePredicate for IsInf {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        is_inf(fmt, x)
    }
}

/// `isnan`.
pub(crate) struct IsNan;
impl CodePredicate for IsNan {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        is_nan(fmt, x)
    }
}

/// `signbit`: the sign bit ([`sign_code`]); true for the fnuz NaN.
pub(crate) struct SignBit;
impl CodePredicate for SignBit {
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        sign_code(fmt, x) != 0
    }
}

/// A boolean function of two truth values (`logical_and`, ...).
pub(crate) trait Logical {
    fn f(x: bool, y: bool) -> bool;
}

/// `logical_and`.
pub(crate) struct And;
impl Logical for And {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x && y
    }
}

/// `logical_or`.
pub(crate) struct Or;
impl Logical for Or {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x || y
    }
}

/// `logical_xor`.
pub(crate) struct Xor;
impl Logical for Xor {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x ^ y
    }
}
