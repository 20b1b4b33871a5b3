//! Ufunc loops of the 12 float formats (bfloat16, the float8, float6 and
//! float4 formats, float8_e8m0fnu): the 75 ufuncs ml_dtypes 0.6.0 registers
//! in `RegisterFloatUFuncs` (`custom_float.h`), with the semantics of its
//! functors (`ufuncs.h`) and of its scalar types (`float8.h`,
//! `mxfloat.h`, Eigen's `bfloat16`).
//!
//! Three kinds of loops:
//!
//! - value functions (`add`, `sqrt`, `power`, ...): decode to float32,
//!   compute in float32, round once (`T(f(float(a), float(b)))` in
//!   ml_dtypes), in blocks through the library's conversion kernels;
//! - comparisons and selections (`less`, `maximum`, ...): by value, on the
//!   decoded float32; the selections return the chosen operand's bits;
//! - bit-pattern functions (`negative`, `absolute`, `sign`, `copysign`,
//!   `nextafter`, `spacing`, `isnan`, `logical_*`, ...): on the codes, with
//!   ml_dtypes' per-format rules (documented on each function below).

use std::mem::size_of;
use std::os::raw::{c_char, c_int, c_void};

use mldtypes::cast::Element;
use mldtypes::dtype::DType;
use mldtypes::float::MiniFloat;
use mldtypes::format::{Format, NanEncoding, NonFinite};
use mldtypes::sort::SortKey;
use mldtypes::{
    bfloat16, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu,
};
use numpy::npyffi::npy_intp;
use pyo3::PyResult;

use super::{
    block_len, blocks, convert, count, libm, raise_invalid, Arg, FpFlags, LoopFn, Operand,
    Registrar, BLOCK, BOOL, INTC,
};

/// A float format with ufunc loops: a scalar type of the library that the
/// conversion kernels accept.
pub(crate) trait Float: MiniFloat + Element {}
impl<T: MiniFloat + Element> Float for T {}

/// Registers the loops of every float format (one line per format).
pub(super) fn register(r: &mut Registrar<'_>) -> PyResult<()> {
    register_type::<bfloat16>(r)?;
    register_type::<float8_e3m4>(r)?;
    register_type::<float8_e4m3>(r)?;
    register_type::<float8_e4m3b11fnuz>(r)?;
    register_type::<float8_e4m3fn>(r)?;
    register_type::<float8_e4m3fnuz>(r)?;
    register_type::<float8_e5m2>(r)?;
    register_type::<float8_e5m2fnuz>(r)?;
    register_type::<float6_e2m3fn>(r)?;
    register_type::<float6_e3m2fn>(r)?;
    register_type::<float4_e2m1fn>(r)?;
    register_type::<float8_e8m0fnu>(r)?;
    Ok(())
}

/// Registers the 75 loops of `T`, in ml_dtypes' order.
fn register_type<T: Float>(r: &mut Registrar<'_>) -> PyResult<()> {
    let d = T::DTYPE;
    let t = Arg::Ours(d);
    let un: [Arg; 2] = [t, t];
    let bin: [Arg; 3] = [t, t, t];
    let cmp: [Arg; 3] = [t, t, BOOL];
    let pred: [Arg; 2] = [t, BOOL];
    let value1: &[(&str, LoopFn)] = &[
        ("rint", unary::<T, Rint> as LoopFn),
        ("exp", unary::<T, Exp>),
        ("exp2", unary::<T, Exp2>),
        ("expm1", unary::<T, Expm1>),
        ("log", unary::<T, Log>),
        ("log2", unary::<T, Log2>),
        ("log10", unary::<T, Log10>),
        ("log1p", unary::<T, Log1p>),
        ("sqrt", unary::<T, Sqrt>),
        ("square", unary::<T, Square>),
        ("cbrt", unary::<T, Cbrt>),
        ("reciprocal", unary::<T, Reciprocal>),
        ("sin", unary::<T, Sin>),
        ("cos", unary::<T, Cos>),
        ("tan", unary::<T, Tan>),
        ("arcsin", unary::<T, Arcsin>),
        ("arccos", unary::<T, Arccos>),
        ("arctan", unary::<T, Arctan>),
        ("sinh", unary::<T, Sinh>),
        ("cosh", unary::<T, Cosh>),
        ("tanh", unary::<T, Tanh>),
        ("arcsinh", unary::<T, Arcsinh>),
        ("arccosh", unary::<T, Arccosh>),
        ("arctanh", unary::<T, Arctanh>),
        ("deg2rad", unary::<T, Deg2rad>),
        ("rad2deg", unary::<T, Rad2deg>),
        ("floor", unary::<T, Floor>),
        ("ceil", unary::<T, Ceil>),
        ("trunc", unary::<T, Trunc>),
    ];
    let value2: &[(&str, LoopFn)] = &[
        ("add", binary::<T, Add> as LoopFn),
        ("subtract", binary::<T, Subtract>),
        ("multiply", binary::<T, Multiply>),
        ("divide", binary::<T, Divide>),
        ("logaddexp", binary::<T, LogAddExp>),
        ("logaddexp2", binary::<T, LogAddExp2>),
        ("true_divide", binary::<T, Divide>),
        ("floor_divide", binary::<T, FloorDivide>),
        ("power", binary::<T, Power>),
        ("remainder", binary::<T, Remainder>),
        ("mod", binary::<T, Remainder>),
        ("fmod", binary::<T, Fmod>),
        ("arctan2", binary::<T, Arctan2>),
        ("hypot", binary::<T, Hypot>),
    ];
    let code1: &[(&str, LoopFn)] = &[
        ("negative", code_unary::<T, Negative> as LoopFn),
        ("positive", code_unary::<T, Identity>),
        ("absolute", code_unary::<T, Absolute>),
        ("fabs", code_unary::<T, Absolute>),
        ("sign", code_unary::<T, Sign>),
        ("conjugate", code_unary::<T, Identity>),
        ("spacing", spacing::<T>),
    ];
    let code2: &[(&str, LoopFn)] = &[
        ("heaviside", code_binary::<T, Heaviside> as LoopFn),
        ("copysign", code_binary::<T, CopySign>),
        ("nextafter", code_binary::<T, NextAfter>),
        ("maximum", select::<T, Maximum>),
        ("minimum", select::<T, Minimum>),
        ("fmax", select::<T, Fmax>),
        ("fmin", select::<T, Fmin>),
    ];
    let compare2: &[(&str, LoopFn)] = &[
        ("equal", compare::<T, Equal> as LoopFn),
        ("not_equal", compare::<T, NotEqual>),
        ("less", compare::<T, Less>),
        ("greater", compare::<T, Greater>),
        ("less_equal", compare::<T, LessEqual>),
        ("greater_equal", compare::<T, GreaterEqual>),
        ("logical_and", logical::<T, And>),
        ("logical_or", logical::<T, Or>),
        ("logical_xor", logical::<T, Xor>),
    ];
    let pred1: &[(&str, LoopFn)] = &[
        ("logical_not", predicate::<T, LogicalNot> as LoopFn),
        ("isfinite", predicate::<T, IsFinite>),
        ("isinf", predicate::<T, IsInf>),
        ("isnan", predicate::<T, IsNan>),
        ("signbit", predicate::<T, SignBit>),
    ];
    for &(name, f) in value1.iter().chain(code1) {
        r.add(name, d, &un, f)?;
    }
    for &(name, f) in value2.iter().chain(code2) {
        r.add(name, d, &bin, f)?;
    }
    for &(name, f) in compare2 {
        r.add(name, d, &cmp, f)?;
    }
    for &(name, f) in pred1 {
        r.add(name, d, &pred, f)?;
    }
    r.add("divmod", d, &[t, t, t, t], divmod::<T>)?;
    r.add("modf", d, &[t, t, t], modf::<T>)?;
    r.add("ldexp", d, &[t, INTC, t], ldexp::<T>)?;
    r.add("frexp", d, &[t, t, INTC], frexp::<T>)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Codes: ml_dtypes' bit-level rules, for any format descriptor.
// ---------------------------------------------------------------------------

/// Reads the code of element `k` (the format's low bits; unused high bits
/// of the sub-byte formats are ignored).
#[inline]
unsafe fn load<T: Float>(o: Operand, k: usize) -> u32 {
    let raw = if size_of::<T>() == 1 {
        o.read::<u8>(k) as u32
    } else {
        o.read::<u16>(k) as u32
    };
    raw & T::FORMAT.code_mask()
}

/// Writes `code` as element `k`.
#[inline]
unsafe fn store<T: Float>(o: Operand, k: usize, code: u32) {
    if size_of::<T>() == 1 {
        o.write::<u8>(k, code as u8)
    } else {
        o.write::<u16>(k, code as u16)
    }
}

/// Whether `code` is NaN (Eigen / ml_dtypes `isnan`, on bits).
#[inline]
fn is_nan(f: &Format, code: u32) -> bool {
    f.is_nan_code(code)
}

/// Whether `code` is ±infinity.
#[inline]
fn is_inf(f: &Format, code: u32) -> bool {
    f.inf_code() == Some(code & !f.sign_mask())
}

/// ml_dtypes' `abs` on bits: the sign bit cleared, except that the
/// negative-zero NaN of the fnuz formats (and their zero) stay as they are,
/// and the unsigned float8_e8m0fnu is its own absolute value.
#[inline]
fn abs_code(f: &Format, code: u32) -> u32 {
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
fn sign_code(f: &Format, code: u32) -> u32 {
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
fn quiet_nan(f: &Format) -> u32 {
    f.nan_code().unwrap_or(f.sign_mask())
}

/// C++ `static_cast<bool>` of an ml_dtypes scalar: false only for zeros.
/// NaN is true (the fnuz NaN too); float8_e8m0fnu has no zero.
#[inline]
fn truthy(f: &Format, code: u32) -> bool {
    if !f.signed {
        true
    } else if f.nan_encoding == NanEncoding::NegativeZero {
        code != 0
    } else {
        code & !f.sign_mask() != 0
    }
}

/// Whether ml_dtypes handles `T` as Eigen's `bfloat16`, whose predicates
/// and comparisons are float32 operations on the value: C relational
/// operators (which raise the invalid flag when an operand is NaN) and
/// float32 tests that raise it for signalling NaNs. The float8/6/4 formats
/// test and compare bit patterns and raise nothing.
#[inline(always)]
fn eigen_float<T: Float>() -> bool {
    matches!(T::DTYPE, DType::BFloat16)
}

/// Whether a decoded float32 is a signalling NaN (quiet bit clear): only
/// bfloat16 codes decode to those, payload kept.
#[inline(always)]
fn is_snan(x: f32) -> bool {
    let b = x.to_bits();
    b & 0x7fc0_0000 == 0x7f80_0000 && b & 0x003f_ffff != 0
}

/// Whether `code` of `T` is a signalling NaN that ml_dtypes raises the
/// invalid flag for when it reads the value as float32 (bfloat16 only).
#[inline(always)]
fn code_is_snan<T: Float>(code: u32) -> bool {
    eigen_float::<T>() && code & 0x7fc0 == 0x7f80 && code & 0x003f != 0
}

/// Raises the invalid flag, after a bfloat16 loop read a signalling NaN as
/// float32 (see [`eigen_float`]).
#[inline]
fn signal_snan<T: Float>(seen: bool) {
    if eigen_float::<T>() && seen {
        raise_invalid();
    }
}

/// Whether any decoded value of a bfloat16 block is a signalling NaN.
#[inline]
fn any_snan<T: Float>(xs: &[f32]) -> bool {
    eigen_float::<T>() && xs.iter().fold(false, |acc, &x| acc | is_snan(x))
}

/// Whether NaN results of `T` keep the sign of their NaN operands as x86
/// arithmetic gives it (IEEE float8 formats and float8_e4m3fn: NaN has a
/// sign; the fnuz formats and float8_e8m0fnu have one unsigned NaN).
#[inline(always)]
fn signed_nan_float8<T: Float>() -> bool {
    let f = &T::FORMAT;
    !eigen_float::<T>() && f.signed && f.has_nan() && f.nan_encoding != NanEncoding::NegativeZero
}

/// Constants some bit-level functions return.
struct Consts {
    one: u32,
    minus_one: u32,
    zero: u32,
}

impl Consts {
    /// `T(1)`, `T(-1)`, `T(0)` as ml_dtypes constructs them.
    fn of<T: Float>() -> Self {
        let flags = FpFlags::save();
        let c = Consts {
            one: T::from_f32(1.0).code(),
            minus_one: T::from_f32(-1.0).code(),
            zero: T::from_f32(0.0).code(),
        };
        flags.restore();
        c
    }
}

// ---------------------------------------------------------------------------
// Blocks: gather + decode / encode + scatter through the kernels.
// ---------------------------------------------------------------------------

/// Bytes of one block of the widest format (bfloat16).
const BLOCK_BYTES: usize = BLOCK * 2;

/// Decodes elements `start..start + out.len()` of `o` into `out`.
#[inline]
unsafe fn decode<T: Float>(o: Operand, start: usize, buf: &mut [u8], out: &mut [f32]) {
    let bytes = o.bytes(start, out.len(), size_of::<T>(), buf);
    if matches!(T::DTYPE, DType::BFloat16) {
        // bfloat16 is the upper half of a float32: widening is a shift
        // (payload and sign kept, as the library's decode), which the
        // compiler vectorises in place here.
        for (v, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *v = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
        }
        return;
    }
    convert(
        bytes,
        T::DTYPE,
        bytemuck::cast_slice_mut(out),
        DType::Float32,
    );
}

/// Rounds `vals` once into `T` and writes them as elements `start..` of `o`.
#[inline]
unsafe fn encode<T: Float>(vals: &[f32], o: Operand, start: usize, buf: &mut [u8]) {
    let size = size_of::<T>();
    let n = vals.len() * size;
    if o.contiguous(size) {
        let dst = std::slice::from_raw_parts_mut(o.at(start), n);
        convert(bytemuck::cast_slice(vals), DType::Float32, dst, T::DTYPE);
    } else {
        convert(
            bytemuck::cast_slice(vals),
            DType::Float32,
            &mut buf[..n],
            T::DTYPE,
        );
        o.put_bytes(start, &buf[..n], size);
    }
}

// ---------------------------------------------------------------------------
// Value functions: computed in float32, rounded once.
// ---------------------------------------------------------------------------

/// A float32 function of one argument (ml_dtypes: `T(f(float(a)))`).
trait Unary {
    /// Whether the compiler building ml_dtypes knows the result is never
    /// negative (`x * x`, `exp`, `exp2`, `cosh`, `acos`, `acosh`, `hypot`)
    /// and so drops the sign of a NaN result in Eigen's `bfloat16(float)`
    /// (whose NaN branch tests `signbit`): those bfloat16 NaN results are
    /// `+NaN`.
    const NONNEGATIVE: bool = false;
    fn f(x: f32) -> f32;
}

/// A float32 function of two arguments (ml_dtypes: `T(f(float(a), float(b)))`).
trait Binary {
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
    /// Whether bfloat16 takes the one-pass loop [`simd::bf16_binary`]
    /// (arithmetic the compiler vectorises; no libm call).
    const CHEAP: bool = false;
    /// The float32 operation, for the explicit AVX2 bfloat16 kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const ARITH: Arith = Arith::None;
    fn f(x: f32, y: f32) -> f32;
}

/// The float32 operation of a [`Binary`] that has an explicit vector
/// kernel (bfloat16 on AVX2).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arith {
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
enum Pred {
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
enum NanRule {
    /// As the float32 operation gives it (NaN operands do not matter).
    Native,
    /// `a` if it is NaN, else `b`.
    FirstSecond,
    /// `b` if it is NaN, else `a`.
    SecondFirst,
    /// `a` if it is NaN, else `+NaN` if `b` is (float8 `+` and `-`).
    FirstElsePositive,
}

/// Applies `T`'s rule to the float32 result `r` of `x op y`.
#[inline(always)]
fn nan_rule<T: Float, O: Binary>(x: f32, y: f32, r: f32) -> f32 {
    let rule = if eigen_float::<T>() {
        O::NAN_BF16
    } else if signed_nan_float8::<T>() {
        O::NAN_FLOAT8
    } else {
        NanRule::Native
    };
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
                f32::NAN
            } else {
                r
            }
        }
    }
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident $([$c:ident = $v:expr])* = |$x:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl Unary for $name {
            $(const $c: bool = $v;)*
            #[inline(always)]
            fn f($x: f32) -> f32 { $e }
        }
    )*};
}

macro_rules! binary_fns {
    ($($(#[$doc:meta])* $name:ident $([$c:ident: $t:ty = $v:expr])* = |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl Binary for $name {
            $(const $c: $t = $v;)*
            #[inline(always)]
            fn f($x: f32, $y: f32) -> f32 { $e }
        }
    )*};
}

/// `M_PI / 180.0f` in ml_dtypes: computed in double, stored as float.
const RADIANS_PER_DEGREE: f32 = (std::f64::consts::PI / 180.0) as f32;
/// `180.0f / M_PI` in ml_dtypes: computed in double, stored as float.
const DEGREES_PER_RADIAN: f32 = (180.0 / std::f64::consts::PI) as f32;

unary_fns! {
    /// `rint`: round half to even (C `rintf`).
    Rint = |x| libm::rintf(x);
    Exp [NONNEGATIVE = true] = |x| libm::expf(x);
    Exp2 [NONNEGATIVE = true] = |x| libm::exp2f(x);
    Expm1 = |x| libm::expm1f(x);
    Log = |x| libm::logf(x);
    Log2 = |x| libm::log2f(x);
    Log10 = |x| libm::log10f(x);
    Log1p = |x| libm::log1pf(x);
    /// IEEE square root (the `sqrtss` instruction `sqrtf` is).
    Sqrt = |x| x.sqrt();
    /// ml_dtypes: `f * f` in float32.
    Square [NONNEGATIVE = true] = |x| x * x;
    Cbrt = |x| libm::cbrtf(x);
    /// ml_dtypes: `1.f / float(a)`.
    Reciprocal = |x| 1.0 / x;
    Sin = |x| libm::sinf(x);
    Cos = |x| libm::cosf(x);
    Tan = |x| libm::tanf(x);
    Arcsin = |x| libm::asinf(x);
    Arccos [NONNEGATIVE = true] = |x| libm::acosf(x);
    Arctan = |x| libm::atanf(x);
    Sinh = |x| libm::sinhf(x);
    Cosh [NONNEGATIVE = true] = |x| libm::coshf(x);
    Tanh = |x| libm::tanhf(x);
    Arcsinh = |x| libm::asinhf(x);
    Arccosh [NONNEGATIVE = true] = |x| libm::acoshf(x);
    Arctanh = |x| libm::atanhf(x);
    Deg2rad = |x| x * RADIANS_PER_DEGREE;
    Rad2deg = |x| x * DEGREES_PER_RADIAN;
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
    LogAddExp [QUIET_UNSIGNED: bool = true] = |x, y| log_add_exp(x, y);
    LogAddExp2 [QUIET_UNSIGNED: bool = true] = |x, y| log_add_exp2(x, y);
    FloorDivide = |x, y| divmod_f32(x, y).0;
    Power = |x, y| libm::powf(x, y);
    /// The quotient is computed too (kept from dead-code elimination): it
    /// raises the overflow flag ml_dtypes' build raises.
    Remainder = |x, y| {
        let (q, m) = divmod_f32(x, y);
        std::hint::black_box(q);
        m
    };
    Fmod = |x, y| fmod_x87(x, y);
    Arctan2 = |x, y| libm::atan2f(x, y);
    Hypot [NONNEGATIVE: bool = true] = |x, y| libm::hypotf(x, y);
}

/// `a < b` as a C relational operator: false with the invalid flag raised
/// when an operand is NaN (ml_dtypes' float32 code is compiled to the
/// signalling comparison).
#[inline]
fn lt_signalling(a: f32, b: f32) -> bool {
    if a.is_nan() || b.is_nan() {
        raise_invalid();
        false
    } else {
        a < b
    }
}

/// `a < b` without raising any flag for NaN operands.
#[inline]
fn lt_quiet(a: f32, b: f32) -> bool {
    !a.is_nan() && !b.is_nan() && a < b
}

/// `a > b` as a C relational operator (see [`lt_signalling`]).
#[inline]
fn gt_signalling(a: f32, b: f32) -> bool {
    lt_signalling(b, a)
}

/// ml_dtypes' `LogAddExp`: `log(exp(x) + exp(y))` computed as
/// `max + log1p(exp(min - max))`; equal arguments (same-signed infinities
/// included) give `x + log(2)`; unordered ones NaN.
#[inline]
fn log_add_exp(x: f32, y: f32) -> f32 {
    if x == y {
        return x + std::f32::consts::LN_2;
    }
    if gt_signalling(x, y) {
        x + libm::log1pf(libm::expf(y - x))
    } else if lt_signalling(x, y) {
        y + libm::log1pf(libm::expf(x - y))
    } else {
        f32::NAN
    }
}

/// ml_dtypes' `LogAddExp2`, in base 2 (`x + 1` for equal arguments).
#[inline]
fn log_add_exp2(x: f32, y: f32) -> f32 {
    if x == y {
        return x + 1.0;
    }
    if gt_signalling(x, y) {
        x + libm::log1pf(libm::exp2f(y - x)) / std::f32::consts::LN_2
    } else if lt_signalling(x, y) {
        y + libm::log1pf(libm::exp2f(x - y)) / std::f32::consts::LN_2
    } else {
        f32::NAN
    }
}

/// C `fmodf` as ml_dtypes' x86-64 build computes it (GCC inlines
/// `std::fmod` with the x87 `fprem` instruction): when both operands are
/// NaN, the result is the one with the larger significand once quieted,
/// and the positive one on a tie (x87 NaN propagation), where SSE code
/// would return the first operand.
#[inline]
fn fmod_x87(x: f32, y: f32) -> f32 {
    let r = libm::fmodf(x, y);
    if !(x.is_nan() && y.is_nan()) {
        return r;
    }
    const QUIET: u32 = 0x0040_0000;
    let (qx, qy) = (x.to_bits() | QUIET, y.to_bits() | QUIET);
    let (mx, my) = (qx & 0x007f_ffff, qy & 0x007f_ffff);
    f32::from_bits(if mx > my {
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
fn divmod_f32(a: f32, b: f32) -> (f32, f32) {
    if b == 0.0 {
        if a.is_nan() || a == 0.0 {
            return (f32::NAN, f32::NAN);
        }
        let inf = if a.is_sign_negative() == b.is_sign_negative() {
            f32::INFINITY
        } else {
            f32::NEG_INFINITY
        };
        return (inf, f32::NAN);
    }
    let mut m = fmod_x87(a, b);
    let mut div = (a - m) / b;
    if m != 0.0 {
        // ml_dtypes' build compares the divisor with a signalling
        // comparison and the remainder with a quiet one (observed: NaN
        // dividends raise no invalid flag, NaN divisors do).
        if lt_signalling(b, 0.0) != lt_quiet(m, 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0f32.copysign(b);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if lt_quiet(0.5, div - f) {
            f + 1.0
        } else {
            f
        }
    } else {
        0f32.copysign(a / b)
    };
    (floordiv, m)
}

/// Loop of a [`Unary`] value function.
unsafe extern "C" fn unary<T: Float, O: Unary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), size_of::<T>()], 1);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<T>(a, start, &mut buf, x);
            snan |= simd::unary_block::<T, O>(x);
            encode::<T>(x, o, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// The float32 compute of the blocked loops, compiled for each instruction
/// set the conversion kernels use and dispatched on the same detected
/// [`mldtypes::cast::Path`] (the compiler vectorises the arithmetic; the
/// libm calls stay scalar).
mod simd {
    use super::{
        eigen_float, is_snan, nan_rule, positive_nans, round_bf16, widen_bf16, Binary, Compare,
        Float, Select, Unary,
    };
    use mldtypes::bfloat16;
    use mldtypes::sort::SortKey;

    /// `x[i] = f(x[i])`; whether a signalling NaN was read (bfloat16).
    #[inline(always)]
    fn unary<T: Float, O: Unary>(x: &mut [f32]) -> bool {
        let mut seen = false;
        for v in x.iter_mut() {
            seen |= eigen_float::<T>() && is_snan(*v);
            *v = O::f(*v);
        }
        if O::NONNEGATIVE && eigen_float::<T>() {
            positive_nans(x);
        }
        seen
    }

    /// `x[i] = f(x[i], y[i])`; whether a signalling NaN was read (bfloat16).
    #[inline(always)]
    fn binary<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        let mut seen = false;
        for (u, v) in x.iter_mut().zip(y.iter()) {
            seen |= eigen_float::<T>() && (is_snan(*u) | is_snan(*v));
            *u = nan_rule::<T, O>(*u, *v, O::f(*u, *v));
        }
        if O::NONNEGATIVE && eigen_float::<T>() {
            positive_nans(x);
        }
        seen
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn unary_avx512<T: Float, O: Unary>(x: &mut [f32]) -> bool {
        unary::<T, O>(x)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn unary_avx2<T: Float, O: Unary>(x: &mut [f32]) -> bool {
        unary::<T, O>(x)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn binary_avx512<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        binary::<T, O>(x, y)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn binary_avx2<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        binary::<T, O>(x, y)
    }

    /// [`unary`] on the best instruction set.
    #[inline]
    pub(super) fn unary_block<T: Float, O: Unary>(x: &mut [f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use mldtypes::cast::Path;
            match mldtypes::cast::path() {
                // SAFETY: the path is only selected when the CPU has these
                // features (AVX-512 F/BW/VL/DQ, respectively AVX2).
                Path::Avx512 => return unsafe { unary_avx512::<T, O>(x) },
                Path::Avx2 => return unsafe { unary_avx2::<T, O>(x) },
                _ => {}
            }
        }
        unary::<T, O>(x)
    }

    /// bfloat16 `o[i] = T(f(a[i], b[i]))` on codes in one pass (widening,
    /// float32 `f`, the NaN rule and the rounding of [`super::round_bf16`]
    /// in registers); whether a signalling NaN was read.
    #[inline(always)]
    fn bf16_binary<O: Binary>(a: &[u16], b: &[u16], o: &mut [u16]) -> bool {
        let mut seen = false;
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            let r = nan_rule::<bfloat16, O>(x, y, O::f(x, y));
            *d = round_bf16(r.to_bits());
        }
        seen
    }

    /// bfloat16 selection (`maximum`, ...) on codes in one pass: the chosen
    /// operand's code; (whether a signalling NaN was read, whether the
    /// comparison ml_dtypes evaluates had a NaN operand).
    #[inline(always)]
    fn bf16_select<O: Select>(a: &[u16], b: &[u16], o: &mut [u16]) -> (bool, bool) {
        let (mut seen, mut signals) = (false, false);
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            signals |= O::signals(x, y);
            *d = if O::pick_x(x, y) { p } else { q };
        }
        (seen, signals)
    }

    /// bfloat16 comparison on codes in one pass, one byte (0/1) per element;
    /// (whether a signalling NaN was read, whether an operand was NaN).
    #[inline(always)]
    fn bf16_compare<O: Compare>(a: &[u16], b: &[u16], o: &mut [u8]) -> (bool, bool) {
        let (mut seen, mut unordered) = (false, false);
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            unordered |= x.is_nan() | y.is_nan();
            *d = O::f(x, y) as u8;
        }
        (seen, unordered)
    }

    /// Whether a bfloat16 code is a signalling NaN (on the code: 16 lanes
    /// per AVX2 operation).
    #[inline(always)]
    fn snan_code(c: u16) -> bool {
        (c & 0x7fc0 == 0x7f80) & (c & 0x003f != 0)
    }

    macro_rules! dispatched {
        ($(#[$doc:meta])* $name:ident, $inner:ident, $avx512:ident, $avx2:ident, $tr:ident, $out:ty, $ret:ty) => {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
            unsafe fn $avx512<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                $inner::<O>(a, b, o)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn $avx2<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                $inner::<O>(a, b, o)
            }

            $(#[$doc])*
            #[inline]
            pub(super) fn $name<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                #[cfg(target_arch = "x86_64")]
                {
                    use mldtypes::cast::Path;
                    match mldtypes::cast::path() {
                        // SAFETY: as in `unary_block`.
                        Path::Avx512 => return unsafe { $avx512::<O>(a, b, o) },
                        Path::Avx2 => return unsafe { $avx2::<O>(a, b, o) },
                        _ => {}
                    }
                }
                $inner::<O>(a, b, o)
            }
        };
    }

    dispatched!(
        /// [`bf16_binary`] on the best instruction set.
        bf16_binary_block, bf16_binary, bf16_binary_avx512, bf16_binary_avx2, Binary, u16, bool
    );
    dispatched!(
        /// [`bf16_select`] on the best instruction set.
        bf16_select_block, bf16_select, bf16_select_avx512, bf16_select_avx2, Select, u16,
        (bool, bool)
    );
    dispatched!(
        /// [`bf16_compare`] on the best instruction set.
        bf16_compare_block, bf16_compare, bf16_compare_avx512, bf16_compare_avx2, Compare, u8,
        (bool, bool)
    );

    /// One-byte selection (`maximum`, ...) on codes in one pass, by the
    /// codes' order keys (integer operations: no float32 decode, no flags);
    /// the chosen operand's code, masked to the format's bits.
    #[inline(always)]
    fn byte_select<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        // Only NaN has the largest key (the format's code mask).
        let nan = key.code_mask();
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            let (kx, ky) = (key.key(p as u32), key.key(q as u32));
            let pick = O::pick_key(kx, ky, kx == nan, ky == nan);
            *d = (if pick { p } else { q }) & key.code_mask() as u8;
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn byte_select_avx512<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        byte_select::<O>(key, a, b, o)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn byte_select_avx2<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        byte_select::<O>(key, a, b, o)
    }

    /// [`byte_select`] on the best instruction set.
    #[inline]
    pub(super) fn byte_select_block<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        {
            use mldtypes::cast::Path;
            match mldtypes::cast::path() {
                // SAFETY: as in `unary_block`.
                Path::Avx512 => return unsafe { byte_select_avx512::<O>(key, a, b, o) },
                Path::Avx2 => return unsafe { byte_select_avx2::<O>(key, a, b, o) },
                _ => {}
            }
        }
        byte_select::<O>(key, a, b, o)
    }

    /// [`binary`] on the best instruction set.
    #[inline]
    pub(super) fn binary_block<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use mldtypes::cast::Path;
            match mldtypes::cast::path() {
                // SAFETY: as in `unary_block`.
                Path::Avx512 => return unsafe { binary_avx512::<T, O>(x, y) },
                Path::Avx2 => return unsafe { binary_avx2::<T, O>(x, y) },
                _ => {}
            }
        }
        binary::<T, O>(x, y)
    }

    /// Explicit AVX2 kernels of the bfloat16 `add`, `subtract`, `multiply`,
    /// `divide`, selections and comparisons, on raw pointers (so the output may
    /// be an input, element for element: each group of 16 is loaded before it
    /// is stored).
    ///
    /// Widening is an interleave with zeros (the codes become the high
    /// halves of 32-bit lanes; the lanes' order is undone by the packing
    /// that stores the result), the float32 operation runs on 8 lanes and
    /// the rounding to nearest even is integer arithmetic raising no flags of
    /// its own, as the scalar [`super::round_bf16`]. A group of 16 without a
    /// NaN operand (one test) skips the NaN rule, the NaN rounding and the
    /// signalling-NaN check: a NaN the operation makes from other values is
    /// x86's default NaN, which the integer rounding already takes to the
    /// `0xffc0` the scalar rounding gives. The NaN masks are quiet compares:
    /// they raise the invalid flag only for a signalling NaN operand, for
    /// which the loop raises it anyway.
    ///
    /// `S` is the element step in codes: 1 (packed) or 2 (every second code
    /// of a packed array, read as 32-bit words whose low half is the
    /// element). The remainder (under 16 elements, or 17 when `S == 2`: the
    /// 32-bit load of the last element would read past it) takes the scalar
    /// code.
    #[cfg(target_arch = "x86_64")]
    pub(super) mod bf16_avx2 {
        use std::arch::x86_64::*;

        use super::super::{
            nan_rule, round_bf16, widen_bf16, Arith, Binary, Compare, NanRule, Pred, Select,
        };
        use mldtypes::bfloat16;

        /// Whether the kernels of this module may run (the detected kernel
        /// path has AVX2).
        #[inline]
        pub(in super::super) fn available() -> bool {
            use mldtypes::cast::Path;
            matches!(mldtypes::cast::path(), Path::Avx2 | Path::Avx512)
        }

        /// Codes `16 k .. 16 k + 16` read from `p` (step `S` codes) as
        /// float32, in the lane order of [`_mm256_unpacklo_epi16`] /
        /// [`_mm256_unpackhi_epi16`]: elements 0..4 and 8..12, then 4..8
        /// and 12..16.
        #[inline(always)]
        unsafe fn load<const S: usize>(p: *const u8, k: usize) -> (__m256, __m256) {
            let (lo, hi) = if S == 1 {
                let v = _mm256_loadu_si256(p.add(32 * k).cast());
                let z = _mm256_setzero_si256();
                (_mm256_unpacklo_epi16(z, v), _mm256_unpackhi_epi16(z, v))
            } else {
                let w0 = _mm256_slli_epi32::<16>(_mm256_loadu_si256(p.add(64 * k).cast()));
                let w1 = _mm256_slli_epi32::<16>(_mm256_loadu_si256(p.add(64 * k + 32).cast()));
                (
                    _mm256_permute2x128_si256::<0x20>(w0, w1),
                    _mm256_permute2x128_si256::<0x31>(w0, w1),
                )
            };
            (_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi))
        }

        /// All-ones lanes where `x` is NaN.
        #[inline(always)]
        unsafe fn nan(x: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x)
        }

        /// Accumulates the lanes of `x` that are signalling NaNs (quiet bit
        /// clear where `xn` is set) into bit 22 of `acc`.
        #[inline(always)]
        unsafe fn signalling(acc: &mut __m256, x: __m256, xn: __m256) {
            *acc = _mm256_or_ps(*acc, _mm256_andnot_ps(x, xn));
        }

        /// Whether bit 22 (the float32 quiet bit) of some lane of `acc` is
        /// set: a signalling NaN was accumulated.
        #[inline(always)]
        unsafe fn any_signalling(acc: __m256) -> bool {
            let quiet = _mm256_set1_epi32(0x0040_0000);
            _mm256_testz_si256(_mm256_castps_si256(acc), quiet) == 0
        }

        /// Float32 lanes rounded to bfloat16 codes (low 16 bits) to nearest
        /// even; NaN lanes other than x86's default NaN need [`round_nan`].
        #[inline(always)]
        unsafe fn round(r: __m256) -> __m256i {
            let u = _mm256_castps_si256(r);
            let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(u), _mm256_set1_epi32(1));
            let bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd);
            _mm256_srli_epi32::<16>(_mm256_add_epi32(u, bias))
        }

        /// [`round`] with every NaN lane `0x7fc0` with its sign, as
        /// [`round_bf16`].
        #[inline(always)]
        unsafe fn round_nan(r: __m256) -> __m256i {
            let sign = _mm256_and_si256(
                _mm256_srli_epi32::<16>(_mm256_castps_si256(r)),
                _mm256_set1_epi32(0x8000),
            );
            let quiet = _mm256_or_si256(sign, _mm256_set1_epi32(0x7fc0));
            _mm256_blendv_epi8(round(r), quiet, _mm256_castps_si256(nan(r)))
        }

        /// `f(x, y)` on 8 lanes.
        #[inline(always)]
        unsafe fn op<O: Binary>(x: __m256, y: __m256) -> __m256 {
            match O::ARITH {
                Arith::Add => _mm256_add_ps(x, y),
                Arith::Sub => _mm256_sub_ps(x, y),
                Arith::Mul => _mm256_mul_ps(x, y),
                _ => _mm256_div_ps(x, y),
            }
        }

        /// `f(x, y)` with [`Binary::NAN_BF16`]'s NaN rule, rounded.
        #[inline(always)]
        unsafe fn op_nan<O: Binary>(x: __m256, y: __m256, xn: __m256, yn: __m256) -> __m256i {
            let r = op::<O>(x, y);
            let r = match O::NAN_BF16 {
                NanRule::SecondFirst => _mm256_blendv_ps(_mm256_blendv_ps(r, x, xn), y, yn),
                NanRule::FirstSecond => _mm256_blendv_ps(_mm256_blendv_ps(r, y, yn), x, xn),
                _ => r,
            };
            round_nan(r)
        }

        /// Two vectors of 8 codes (low 16 bits of each lane, at most 0xffff,
        /// in [`load`]'s lane order) stored as 16 codes at `o` (32-byte
        /// aligned when `NT`: a non-temporal store).
        #[inline(always)]
        unsafe fn store16<const NT: bool>(o: *mut u8, lo: __m256i, hi: __m256i) {
            let v = _mm256_packus_epi32(lo, hi);
            if NT {
                _mm256_stream_si256(o.cast(), v);
            } else {
                _mm256_storeu_si256(o.cast(), v);
            }
        }

        /// Output bytes from which the kernels store with non-temporal
        /// stores: the operands (at least three times this) then exceed the
        /// last-level cache of current processors, so the output lines need
        /// not be read in before being written.
        const STREAM_BYTES: usize = 16 << 20;

        /// Runs `plain` (a kernel's `run::<false>`) on the elements before
        /// the first `align`-byte boundary of the output and `stream`
        /// (`run::<true>`, non-temporal stores) on the rest, when the output
        /// of `n` elements of `size` bytes at `o` is large enough
        /// ([`STREAM_BYTES`]) and `size`-aligned; else `plain` on all. Each
        /// is called as `run(a, b, o, count)` with the operands (codes of
        /// step `S`) and output moved to its first element; the results are
        /// or-ed.
        #[inline(always)]
        unsafe fn streamed<R: std::ops::BitOr<Output = R>, const S: usize>(
            (a, b, o): (*const u8, *const u8, *mut u8),
            n: usize,
            size: usize,
            align: usize,
            mut plain: impl FnMut(*const u8, *const u8, *mut u8, usize) -> R,
            mut stream: impl FnMut(*const u8, *const u8, *mut u8, usize) -> R,
        ) -> R {
            if n * size < STREAM_BYTES || !(o as usize).is_multiple_of(size) {
                return plain(a, b, o, n);
            }
            let head = ((align - o as usize % align) % align / size).min(n);
            let (ah, bh, oh) = (a.add(2 * S * head), b.add(2 * S * head), o.add(size * head));
            let r = plain(a, b, o, head) | stream(ah, bh, oh, n - head);
            _mm_sfence();
            r
        }

        /// A pair of flags or-ed lane by lane.
        #[derive(Clone, Copy)]
        pub(in super::super) struct Flags(pub(in super::super) bool, pub(in super::super) bool);

        impl std::ops::BitOr for Flags {
            type Output = Flags;
            fn bitor(self, o: Flags) -> Flags {
                Flags(self.0 | o.0, self.1 | o.1)
            }
        }

        /// Elements handled by the vector loop: whole groups of 16, leaving
        /// at least one element when `S == 2` (the 32-bit load of the last
        /// one would read past it).
        #[inline(always)]
        fn vector_len<const S: usize>(n: usize) -> usize {
            if S == 1 {
                n / 16 * 16
            } else {
                n.saturating_sub(1) / 16 * 16
            }
        }

        /// Code `k` of an operand of step `S` codes.
        #[inline(always)]
        unsafe fn code<const S: usize>(p: *const u8, k: usize) -> u16 {
            std::ptr::read_unaligned(p.add(2 * S * k).cast::<u16>())
        }

        /// The four operands of a group of 16, their NaN masks and whether
        /// any is NaN.
        #[inline(always)]
        unsafe fn group<const S: usize>(a: *const u8, b: *const u8, k: usize) -> Group {
            let (xl, xh) = load::<S>(a, k);
            let (yl, yh) = load::<S>(b, k);
            let (xnl, xnh, ynl, ynh) = (nan(xl), nan(xh), nan(yl), nan(yh));
            let any = _mm256_or_ps(_mm256_or_ps(xnl, xnh), _mm256_or_ps(ynl, ynh));
            Group {
                x: [xl, xh],
                y: [yl, yh],
                xn: [xnl, xnh],
                yn: [ynl, ynh],
                any_nan: _mm256_testz_ps(any, any) == 0,
            }
        }

        /// See [`group`].
        struct Group {
            x: [__m256; 2],
            y: [__m256; 2],
            xn: [__m256; 2],
            yn: [__m256; 2],
            any_nan: bool,
        }

        impl Group {
            /// Accumulates the signalling NaN operands into `acc`.
            #[inline(always)]
            unsafe fn signalling(&self, acc: &mut __m256) {
                for h in 0..2 {
                    signalling(acc, self.x[h], self.xn[h]);
                    signalling(acc, self.y[h], self.yn[h]);
                }
            }
        }

        /// `o[k] = bfloat16(f(a[k], b[k]))` for `k < n` (`o` packed);
        /// whether a signalling NaN was read.
        ///
        /// # Safety
        ///
        /// The CPU has AVX2; `a`, `b` hold `n` elements of step `S` codes,
        /// `o` `n` packed codes; `o` is disjoint from the inputs or equal to
        /// one element for element.
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn binary<O: Binary, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> bool {
            streamed::<_, S>(
                (a, b, o),
                n,
                2,
                32,
                |a, b, o, m| binary_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| binary_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`binary`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn binary_run<O: Binary, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> bool {
            let mut snan = _mm256_setzero_ps();
            let nv = vector_len::<S>(n);
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                let (lo, hi) = if g.any_nan {
                    g.signalling(&mut snan);
                    (
                        op_nan::<O>(g.x[0], g.y[0], g.xn[0], g.yn[0]),
                        op_nan::<O>(g.x[1], g.y[1], g.xn[1], g.yn[1]),
                    )
                } else {
                    (
                        round(op::<O>(g.x[0], g.y[0])),
                        round(op::<O>(g.x[1], g.y[1])),
                    )
                };
                store16::<NT>(o.add(32 * k), lo, hi);
            }
            let mut seen = any_signalling(snan);
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                let r = nan_rule::<bfloat16, O>(x, y, O::f(x, y));
                std::ptr::write_unaligned(o.add(2 * k).cast::<u16>(), round_bf16(r.to_bits()));
            }
            seen
        }

        /// `o[k] = pick(a[k], b[k]) ? a[k] : b[k]` for `k < n` (`o` packed);
        /// (whether a signalling NaN was read, whether the comparison
        /// ml_dtypes evaluates had a NaN operand). Safety as [`binary`].
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn select<O: Select, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            streamed::<_, S>(
                (a, b, o),
                n,
                2,
                32,
                |a, b, o, m| select_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| select_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`select`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn select_run<O: Select, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            let (mut snan, mut signals) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            let nv = vector_len::<S>(n);
            let mut codes = [_mm256_setzero_si256(); 2];
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                if g.any_nan {
                    g.signalling(&mut snan);
                }
                for (h, code) in codes.iter_mut().enumerate() {
                    let (x, y) = (g.x[h], g.y[h]);
                    let ord = if O::GREATER {
                        _mm256_cmp_ps::<_CMP_GT_OQ>(x, y)
                    } else {
                        _mm256_cmp_ps::<_CMP_LT_OQ>(x, y)
                    };
                    let (first, second) = if O::NAN_FROM_X {
                        (g.xn[h], g.yn[h])
                    } else {
                        (g.yn[h], g.xn[h])
                    };
                    if g.any_nan {
                        signals = _mm256_or_ps(signals, _mm256_andnot_ps(first, second));
                    }
                    let r = _mm256_blendv_ps(y, x, _mm256_or_ps(first, ord));
                    *code = _mm256_srli_epi32::<16>(_mm256_castps_si256(r));
                }
                store16::<NT>(o.add(32 * k), codes[0], codes[1]);
            }
            let mut seen = any_signalling(snan);
            let mut signalled = _mm256_testz_ps(signals, signals) == 0;
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                signalled |= O::signals(x, y);
                let r = if O::pick_x(x, y) { p } else { q };
                std::ptr::write_unaligned(o.add(2 * k).cast::<u16>(), r);
            }
            Flags(seen, signalled)
        }

        /// `o[k] = f(a[k], b[k])` as one byte (0/1) for `k < n` (`o`
        /// packed); (whether a signalling NaN was read, whether an operand
        /// was NaN). The vector compares may set flags: the caller restores
        /// them. Safety as [`binary`].
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn compare<O: Compare, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            streamed::<_, S>(
                (a, b, o),
                n,
                1,
                16,
                |a, b, o, m| compare_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| compare_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`compare`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn compare_run<O: Compare, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            let mut snan = _mm256_setzero_ps();
            let mut unordered = false;
            let nv = vector_len::<S>(n);
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                if g.any_nan {
                    g.signalling(&mut snan);
                    unordered = true;
                }
                let test = |h: usize| {
                    let (x, y) = (g.x[h], g.y[h]);
                    _mm256_castps_si256(match O::PRED {
                        Pred::Eq => _mm256_cmp_ps::<_CMP_EQ_OQ>(x, y),
                        Pred::Ne => _mm256_cmp_ps::<_CMP_NEQ_UQ>(x, y),
                        Pred::Lt => _mm256_cmp_ps::<_CMP_LT_OQ>(x, y),
                        Pred::Gt => _mm256_cmp_ps::<_CMP_GT_OQ>(x, y),
                        Pred::Le => _mm256_cmp_ps::<_CMP_LE_OQ>(x, y),
                        Pred::Ge => _mm256_cmp_ps::<_CMP_GE_OQ>(x, y),
                    })
                };
                // 16 words in element order (the packing undoes `load`'s
                // lane order), then 16 bytes.
                let words = _mm256_packs_epi32(test(0), test(1));
                let bytes = _mm_packs_epi16(
                    _mm256_castsi256_si128(words),
                    _mm256_extracti128_si256::<1>(words),
                );
                let bytes = _mm_and_si128(bytes, _mm_set1_epi8(1));
                if NT {
                    _mm_stream_si128(o.add(16 * k).cast(), bytes);
                } else {
                    _mm_storeu_si128(o.add(16 * k).cast(), bytes);
                }
            }
            let mut seen = any_signalling(snan);
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                unordered |= x.is_nan() | y.is_nan();
                *o.add(k) = O::f(x, y) as u8;
            }
            Flags(seen, unordered)
        }
    }
}

/// A bfloat16 code as float32: a shift, payload and sign kept, as
/// [`decode`].
#[inline(always)]
fn widen_bf16(c: u16) -> f32 {
    f32::from_bits((c as u32) << 16)
}

/// float32 bits rounded to bfloat16 as the library's float32 → bfloat16
/// kernels round (to nearest even on the integer bits, overflow to
/// infinity, NaN `0x7fc0` with the sign kept), in integer operations that
/// raise no floating-point flags.
#[inline(always)]
fn round_bf16(u: u32) -> u16 {
    let r = (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16;
    let nan = 0x7fc0 | ((u >> 16) as u16 & 0x8000);
    if u & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        r
    }
}

/// Elements per chunk of the one-pass bfloat16 loops (operands gathered
/// into, and the result written from, stack buffers of this size).
const BF16_CHUNK: usize = 2048;

/// Elements `start..start + buf.len()` of a bfloat16 operand as a slice:
/// borrowed when contiguous and aligned, else gathered into `buf`.
#[inline(always)]
unsafe fn bf16_codes(x: Operand, start: usize, buf: &mut [u16]) -> &[u16] {
    let len = buf.len();
    if x.contiguous(2) && (x.at(start) as usize).is_multiple_of(2) {
        return std::slice::from_raw_parts(x.at(start) as *const u16, len);
    }
    for (k, v) in buf.iter_mut().enumerate() {
        *v = x.read::<u16>(start + k);
    }
    buf
}

/// Runs a one-pass bfloat16 block function over `n` elements of `a`, `b`
/// into `o` (elements of `V`), chunk by chunk: operands borrowed when
/// contiguous, gathered otherwise; the result of each chunk is built on
/// the stack and written out once (so `o` may be `a` or `b` element for
/// element; `block` is [`block_len`]'s answer).
#[inline(always)]
unsafe fn bf16_chunks<V: bytemuck::Pod + Default, R>(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    block: usize,
    mut f: impl FnMut(&[u16], &[u16], &mut [V]) -> R,
    mut fold: impl FnMut(R),
) {
    let (mut ga, mut gb) = ([0u16; BF16_CHUNK], [0u16; BF16_CHUNK]);
    let mut out = [V::default(); BF16_CHUNK];
    blocks(n, block.min(BF16_CHUNK), |start, len| {
        let pa = bf16_codes(a, start, &mut ga[..len]);
        let pb = bf16_codes(b, start, &mut gb[..len]);
        let po = &mut out[..len];
        fold(f(pa, pb, po));
        o.put_bytes(start, bytemuck::cast_slice(po), size_of::<V>());
    });
}

/// A bfloat16 kernel of [`simd::bf16_avx2`]: inputs, packed output,
/// element count.
#[cfg(target_arch = "x86_64")]
type Bf16Kernel<R> = unsafe fn(*const u8, *const u8, *mut u8, usize) -> R;

/// Runs an AVX2 bfloat16 kernel over `n` elements of `a`, `b` into `o`
/// (elements of `out_size` bytes): in one call straight on the arrays when
/// the output is packed and both inputs are packed (`packed`) or every
/// second code of packed arrays (`every_second`); otherwise chunk by
/// chunk, the strided operands gathered into and the strided output
/// scattered from stack buffers.
///
/// # Safety
///
/// The CPU has AVX2 ([`simd::bf16_avx2::available`]); the operands are
/// those of a loop call of `n` elements whose [`block_len`] is not 1 (so
/// `o` is disjoint from each input or equal to it element for element).
#[cfg(target_arch = "x86_64")]
unsafe fn bf16_avx2_run<R>(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    out_size: usize,
    packed: Bf16Kernel<R>,
    every_second: Bf16Kernel<R>,
    mut fold: impl FnMut(R),
) {
    if o.contiguous(out_size) {
        if a.contiguous(2) && b.contiguous(2) {
            fold(packed(a.at(0), b.at(0), o.at(0), n));
            return;
        }
        if a.contiguous(4) && b.contiguous(4) {
            fold(every_second(a.at(0), b.at(0), o.at(0), n));
            return;
        }
    }
    let (mut ga, mut gb) = ([0u16; BF16_CHUNK], [0u16; BF16_CHUNK]);
    let mut out = [0u8; 2 * BF16_CHUNK];
    let gather = |x: Operand, start: usize, buf: &mut [u16]| -> *const u8 {
        if x.contiguous(2) {
            return x.at(start);
        }
        for (k, v) in buf.iter_mut().enumerate() {
            *v = x.read::<u16>(start + k);
        }
        buf.as_ptr().cast()
    };
    blocks(n, BF16_CHUNK, |start, len| {
        let pa = gather(a, start, &mut ga[..len]);
        let pb = gather(b, start, &mut gb[..len]);
        if o.contiguous(out_size) {
            fold(packed(pa, pb, o.at(start), len));
        } else {
            fold(packed(pa, pb, out.as_mut_ptr(), len));
            o.put_bytes(start, &out[..len * out_size], out_size);
        }
    });
}

/// Runs a one-byte block function over `n` elements of `a`, `b` into `o`
/// as [`bf16_chunks`] does.
#[inline(always)]
unsafe fn byte_chunks(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    block: usize,
    mut f: impl FnMut(&[u8], &[u8], &mut [u8]),
) {
    let (mut ga, mut gb) = ([0u8; BF16_CHUNK], [0u8; BF16_CHUNK]);
    let mut out = [0u8; BF16_CHUNK];
    blocks(n, block.min(BF16_CHUNK), |start, len| {
        let pa = a.bytes(start, len, 1, &mut ga);
        let pb = b.bytes(start, len, 1, &mut gb);
        let po = &mut out[..len];
        f(pa, pb, po);
        o.put_bytes(start, po, 1);
    });
}

/// Replaces every NaN by `+NaN` (see [`Unary::NONNEGATIVE`]).
#[inline(always)]
fn positive_nans(xs: &mut [f32]) {
    for v in xs {
        if v.is_nan() {
            *v = f32::NAN;
        }
    }
}

/// Loop of a [`Binary`] value function.
unsafe extern "C" fn binary<T: Float, O: Binary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[size_of::<T>(), size_of::<T>(), size_of::<T>()],
            2,
        );
        if is_reduction(a, o, block) {
            signal_snan::<T>(reduce::<T, O>(a, b, n, &mut buf, &mut y));
            return;
        }
        if eigen_float::<T>() && O::CHEAP && !O::NONNEGATIVE {
            #[cfg(target_arch = "x86_64")]
            if block != 1 && O::ARITH != Arith::None && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    2,
                    simd::bf16_avx2::binary::<O, 1>,
                    simd::bf16_avx2::binary::<O, 2>,
                    |s| snan |= s,
                );
                signal_snan::<T>(snan);
                return;
            }
            bf16_chunks((a, b, o), n, block, simd::bf16_binary_block::<O>, |s| {
                snan |= s
            });
            signal_snan::<T>(snan);
            return;
        }
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            let quiet = (O::QUIET_UNSIGNED && !T::FORMAT.signed).then(FpFlags::save);
            snan |= simd::binary_block::<T, O>(x, y);
            if let Some(flags) = quiet {
                flags.restore();
            }
            encode::<T>(x, o, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// Whether a loop call is NumPy's reduction (`np.add.reduce`): the
/// accumulator is the first input and the output, both with step 0.
#[inline]
fn is_reduction(a: Operand, o: Operand, block: usize) -> bool {
    block == 1 && a.at(0) == o.at(0) && a.at(1) == a.at(0) && o.at(1) == o.at(0)
}

/// The exact float32 value of a code of `T`, as a function cheap enough
/// for a per-element loop: bfloat16 widens by a shift (payload and sign
/// kept, as [`decode`]); for a loop of `n` elements worth it, a one-byte
/// format looks its 256 codes up in a table the slice kernels decode once;
/// anything else takes the library's scalar decode.
#[inline(always)]
fn widener<T: Float>(n: usize) -> impl Fn(u32) -> f32 {
    let mut table = [0f32; 256];
    let one_byte = size_of::<T>() == 1 && n >= 1024;
    if one_byte {
        let codes: [u8; 256] = std::array::from_fn(|k| k as u8 & T::FORMAT.code_mask() as u8);
        convert(
            &codes,
            T::DTYPE,
            bytemuck::cast_slice_mut(&mut table),
            DType::Float32,
        );
    }
    move |code: u32| {
        if eigen_float::<T>() {
            f32::from_bits(code << 16)
        } else if one_byte {
            table[(code & 0xff) as usize]
        } else {
            T::from_code(code).to_f32()
        }
    }
}

/// A reduction `acc = f(acc, b[k])` over `n` elements, rounding into `T`
/// after every step as ml_dtypes' element-by-element loop does; the
/// accumulator stays in a register, `b` is decoded in blocks. Returns
/// whether a signalling NaN was read (bfloat16).
unsafe fn reduce<T: Float, O: Binary>(
    acc: Operand,
    b: Operand,
    n: usize,
    buf: &mut [u8],
    y: &mut [f32; BLOCK],
) -> bool {
    let mut code = load::<T>(acc, 0);
    let mut x = T::from_code(code).to_f32();
    let mut seen = false;
    let quiet = (O::QUIET_UNSIGNED && !T::FORMAT.signed).then(FpFlags::save);
    let widen = widener::<T>(n);
    blocks(n, BLOCK, |start, len| {
        let y = &mut y[..len];
        decode::<T>(b, start, buf, y);
        for &v in y.iter() {
            seen |= eigen_float::<T>() && (is_snan(x) | is_snan(v));
            let mut r = nan_rule::<T, O>(x, v, O::f(x, v));
            if O::NONNEGATIVE && eigen_float::<T>() && r.is_nan() {
                r = f32::NAN;
            }
            // The library's scalar rounding (bit-identical to the slice
            // kernels; one element through the kernels costs more), then
            // the exact widening: integer code operations, so they raise
            // no floating-point flags of their own.
            code = T::from_f32(r).code();
            x = widen(code);
        }
    });
    if let Some(flags) = quiet {
        flags.restore();
    }
    store::<T>(acc, 0, code);
    seen
}

/// `divmod`: `(floor_divide, remainder)` from one [`divmod_f32`].
unsafe extern "C" fn divmod<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let (q, m) = (Operand::of(args, steps, 2), Operand::of(args, steps, 3));
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[
                size_of::<T>(),
                size_of::<T>(),
                size_of::<T>(),
                size_of::<T>(),
            ],
            2,
        );
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            snan |= any_snan::<T>(x) | any_snan::<T>(y);
            for (u, v) in x.iter_mut().zip(y.iter_mut()) {
                (*u, *v) = divmod_f32(*u, *v);
            }
            encode::<T>(x, q, start, &mut buf);
            encode::<T>(y, m, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// `modf`: `(fractional part, integral part)` from C `modff`.
unsafe extern "C" fn modf<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let (fr, ip) = (Operand::of(args, steps, 1), Operand::of(args, steps, 2));
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[size_of::<T>(), size_of::<T>(), size_of::<T>()],
            1,
        );
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            snan |= any_snan::<T>(x);
            for (u, v) in x.iter_mut().zip(y.iter_mut()) {
                *u = libm::modff(*u, v);
            }
            encode::<T>(x, fr, start, &mut buf);
            encode::<T>(y, ip, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// `frexp`: `(mantissa, exponent)` from C `frexpf`; the exponent is a C
/// `int`.
unsafe extern "C" fn frexp<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let (mant, exp) = (Operand::of(args, steps, 1), Operand::of(args, steps, 2));
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut snan = false;
        let mut last: c_int = 0;
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), size_of::<T>(), 4], 1);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<T>(a, start, &mut buf, x);
            snan |= any_snan::<T>(x);
            for (k, u) in x.iter_mut().enumerate() {
                if !T::FORMAT.signed && u.is_nan() {
                    // ml_dtypes never writes the exponent of float8_e8m0fnu's
                    // NaN (its compiler folds `frexp` of that constant NaN and
                    // leaves the output variable alone): the element gets the
                    // previous element's exponent, 0 at the start of a loop.
                    exp.write::<c_int>(start + k, last);
                    continue;
                }
                let mut e: c_int = 0;
                *u = libm::frexpf(*u, &mut e);
                last = e;
                exp.write::<c_int>(start + k, e);
            }
            encode::<T>(x, mant, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// `ldexp(x, n)` with a C `int` exponent, from C `ldexpf`.
unsafe extern "C" fn ldexp<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let e = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), 4, size_of::<T>()], 2);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<T>(a, start, &mut buf, x);
            snan |= any_snan::<T>(x);
            for (k, u) in x.iter_mut().enumerate() {
                *u = libm::ldexpf(*u, e.read::<c_int>(start + k));
            }
            encode::<T>(x, o, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

// ---------------------------------------------------------------------------
// Comparisons and selections, by value.
// ---------------------------------------------------------------------------

/// A comparison of two values.
trait Compare {
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
        struct $name;
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

/// Loop of a [`Compare`]: boolean output. Comparing decoded float32 values
/// equals ml_dtypes' sign-magnitude comparison of bit patterns (NaN
/// unordered, `-0 == +0`).
unsafe extern "C" fn compare<T: Float, O: Compare>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut unordered = false;
        let mut snan = false;
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), size_of::<T>(), 1], 2);
        if eigen_float::<T>() {
            // The compiler may vectorise with signalling compares; the flags
            // ml_dtypes raises are set explicitly below.
            let flags = FpFlags::save();
            let fold = |(s, u): (bool, bool)| {
                snan |= s;
                unordered |= u;
            };
            #[cfg(target_arch = "x86_64")]
            if block != 1 && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    1,
                    simd::bf16_avx2::compare::<O, 1>,
                    simd::bf16_avx2::compare::<O, 2>,
                    |f| {
                        snan |= f.0;
                        unordered |= f.1;
                    },
                );
            } else {
                bf16_chunks((a, b, o), n, block, simd::bf16_compare_block::<O>, fold);
            }
            #[cfg(not(target_arch = "x86_64"))]
            bf16_chunks((a, b, o), n, block, simd::bf16_compare_block::<O>, fold);
            flags.restore_if_changed();
            if O::ORDERED && unordered {
                raise_invalid();
            }
            signal_snan::<T>(snan);
            return;
        }
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            snan |= any_snan::<T>(x) | any_snan::<T>(y);
            // The compiler may vectorise with signalling compares; the flags
            // ml_dtypes raises are set explicitly below.
            let flags = FpFlags::save();
            for (k, (u, v)) in x.iter().zip(y.iter()).enumerate() {
                unordered |= u.is_nan() | v.is_nan();
                o.write::<u8>(start + k, O::f(*u, *v) as u8);
            }
            flags.restore();
        });
        if O::ORDERED && unordered && eigen_float::<T>() {
            raise_invalid();
        }
        signal_snan::<T>(snan);
    })
}

/// A choice between two operands.
trait Select {
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
struct Maximum;
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
struct Minimum;
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
struct Fmax;
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
struct Fmin;
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

/// `out[k] = pick_x(x[k], y[k]) ? ca[k] : cb[k]` on codes of `N` bytes
/// (little-endian, masked to the format's `code_mask`), branch-free: the
/// picks of random data are unpredictable.
#[inline(always)]
fn choose_codes<O: Select, const N: usize>(
    x: &[f32],
    y: &[f32],
    ca: &[u8],
    cb: &[u8],
    out: &mut [u8],
    code_mask: u32,
) {
    let chunks = out
        .chunks_exact_mut(N)
        .zip(ca.chunks_exact(N).zip(cb.chunks_exact(N)));
    for ((d, (p, q)), (u, v)) in chunks.zip(x.iter().zip(y.iter())) {
        let code = |c: &[u8]| {
            let mut w = [0u8; 4];
            w[..N].copy_from_slice(c);
            u32::from_le_bytes(w)
        };
        let mask = (O::pick_x(*u, *v) as u32).wrapping_neg() & code_mask;
        let r = (code(p) & mask) | (code(q) & !mask & code_mask);
        d.copy_from_slice(&r.to_le_bytes()[..N]);
    }
}

/// Loop of a [`Select`]: the chosen operand's bits are copied unchanged.
unsafe extern "C" fn select<T: Float, O: Select>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let (mut buf_a, mut buf_b, mut buf_o) =
            ([0u8; BLOCK_BYTES], [0u8; BLOCK_BYTES], [0u8; BLOCK_BYTES]);
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut signals = false;
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[size_of::<T>(), size_of::<T>(), size_of::<T>()],
            2,
        );
        if is_reduction(a, o, block) {
            // The accumulator is element 0 of `a` and `o`: keep it in a
            // register, compare it with each decoded element of `b`.
            let mut code = load::<T>(a, 0);
            let mut acc = T::from_code(code).to_f32();
            blocks(n, BLOCK, |start, len| {
                let y = &mut y[..len];
                decode::<T>(b, start, &mut buf, y);
                snan |= any_snan::<T>(y) | (eigen_float::<T>() && is_snan(acc));
                let flags = FpFlags::save();
                for (k, v) in y.iter().enumerate() {
                    signals |= O::signals(acc, *v);
                    if !O::pick_x(acc, *v) {
                        code = load::<T>(b, start + k);
                        acc = *v;
                    }
                }
                flags.restore();
            });
            store::<T>(o, 0, code);
        } else if eigen_float::<T>() {
            let flags = FpFlags::save();
            let fold = |(s, g): (bool, bool)| {
                snan |= s;
                signals |= g;
            };
            #[cfg(target_arch = "x86_64")]
            if block != 1 && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    2,
                    simd::bf16_avx2::select::<O, 1>,
                    simd::bf16_avx2::select::<O, 2>,
                    |f| {
                        snan |= f.0;
                        signals |= f.1;
                    },
                );
            } else {
                bf16_chunks((a, b, o), n, block, simd::bf16_select_block::<O>, fold);
            }
            #[cfg(not(target_arch = "x86_64"))]
            bf16_chunks((a, b, o), n, block, simd::bf16_select_block::<O>, fold);
            flags.restore_if_changed();
        } else if size_of::<T>() == 1 {
            // float8 and smaller: ml_dtypes compares bit patterns, raising no
            // flags, and so do the order keys.
            let key = SortKey::new(&T::FORMAT);
            byte_chunks((a, b, o), n, block, |pa, pb, po| {
                simd::byte_select_block::<O>(key, pa, pb, po)
            });
        } else {
            blocks(n, block, |start, len| {
                let (x, y) = (&mut x[..len], &mut y[..len]);
                decode::<T>(a, start, &mut buf, x);
                decode::<T>(b, start, &mut buf, y);
                snan |= any_snan::<T>(x) | any_snan::<T>(y);
                let flags = FpFlags::save();
                if eigen_float::<T>() {
                    signals |= x
                        .iter()
                        .zip(y.iter())
                        .fold(false, |acc, (u, v)| acc | O::signals(*u, *v));
                }
                // The operands' codes as byte slices (borrowed when
                // contiguous), the choice written to a local block and copied
                // out once: slice loops the compiler vectorises, and no
                // overlap of `o` with `a` or `b` while reading.
                let size = size_of::<T>();
                let ca = a.bytes(start, len, size, &mut buf_a);
                let cb = b.bytes(start, len, size, &mut buf_b);
                let out = &mut buf_o[..len * size];
                let code_mask = T::FORMAT.code_mask();
                if size == 1 {
                    choose_codes::<O, 1>(x, y, ca, cb, out, code_mask);
                } else {
                    choose_codes::<O, 2>(x, y, ca, cb, out, code_mask);
                }
                flags.restore_if_changed();
                o.put_bytes(start, out, size);
            });
        }
        if signals && eigen_float::<T>() {
            raise_invalid();
        }
        signal_snan::<T>(snan);
    })
}

// ---------------------------------------------------------------------------
// Bit-pattern functions.
// ---------------------------------------------------------------------------

/// A function of one code.
trait CodeUnary {
    /// Whether ml_dtypes reads the value as float32 (an `isnan` test on a
    /// bfloat16 signalling NaN raises the invalid flag, see
    /// [`eigen_float`]).
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, c: &Consts, x: u32) -> u32;
}

/// A function of two codes.
trait CodeBinary {
    /// See [`CodeUnary::READS_VALUE`].
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, c: &Consts, x: u32, y: u32) -> u32;
}

/// A boolean function of one code.
trait CodePredicate {
    /// See [`CodeUnary::READS_VALUE`].
    const READS_VALUE: bool = false;
    fn f(fmt: &Format, x: u32) -> bool;
}

/// `positive` and `conjugate` (real): the operand unchanged.
struct Identity;
impl CodeUnary for Identity {
    #[inline(always)]
    fn f(_: &Format, _: &Consts, x: u32) -> u32 {
        x
    }
}

/// `negative`: the sign bit flipped; the fnuz zero and NaN (magnitude bits
/// zero) are their own negation; every float8_e8m0fnu value negates to NaN
/// (`float8.h`, `mxfloat.h` `operator-`).
struct Negative;
impl CodeUnary for Negative {
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32) -> u32 {
        if !fmt.signed {
            return fmt.nan_code().unwrap_or(x);
        }
        if fmt.nan_encoding == NanEncoding::NegativeZero && x & !fmt.sign_mask() == 0 {
            return x;
        }
        x ^ fmt.sign_mask()
    }
}

/// `absolute` / `fabs`: [`abs_code`].
struct Absolute;
impl CodeUnary for Absolute {
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32) -> u32 {
        abs_code(fmt, x)
    }
}

/// `sign`: NaN and zeros (magnitude bits zero) unchanged, else `T(±1)`.
/// As in ml_dtypes, float8_e8m0fnu's code `0x00` (2^-127, not a zero)
/// is returned unchanged, being "magnitude zero".
struct Sign;
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
struct Heaviside;
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
struct CopySign;
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
fn next_after(fmt: &Format, from: u32, to: u32) -> u32 {
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
struct NextAfter;
impl CodeBinary for NextAfter {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, _: &Consts, x: u32, y: u32) -> u32 {
        next_after(fmt, x, y)
    }
}

/// `logical_not`: not [`truthy`].
struct LogicalNot;
impl CodePredicate for LogicalNot {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        !truthy(fmt, x)
    }
}

/// `isfinite`: neither NaN nor infinite.
struct IsFinite;
impl CodePredicate for IsFinite {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        !is_nan(fmt, x) && !is_inf(fmt, x)
    }
}

/// `isinf`.
struct IsInf;
impl CodePredicate for IsInf {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        is_inf(fmt, x)
    }
}

/// `isnan`.
struct IsNan;
impl CodePredicate for IsNan {
    const READS_VALUE: bool = true;
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        is_nan(fmt, x)
    }
}

/// `signbit`: the sign bit ([`sign_code`]); true for the fnuz NaN.
struct SignBit;
impl CodePredicate for SignBit {
    #[inline(always)]
    fn f(fmt: &Format, x: u32) -> bool {
        sign_code(fmt, x) != 0
    }
}

/// A boolean function of two truth values (`logical_and`, ...).
trait Logical {
    fn f(x: bool, y: bool) -> bool;
}

/// `logical_and`.
struct And;
impl Logical for And {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x && y
    }
}

/// `logical_or`.
struct Or;
impl Logical for Or {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x || y
    }
}

/// `logical_xor`.
struct Xor;
impl Logical for Xor {
    #[inline(always)]
    fn f(x: bool, y: bool) -> bool {
        x ^ y
    }
}

/// Loop of a [`CodeUnary`].
unsafe extern "C" fn code_unary<T: Float, O: CodeUnary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let c = Consts::of::<T>();
        let mut snan = false;
        for k in 0..count(dims) {
            let x = load::<T>(a, k);
            snan |= O::READS_VALUE && code_is_snan::<T>(x);
            store::<T>(o, k, O::f(&T::FORMAT, &c, x));
        }
        signal_snan::<T>(snan);
    })
}

/// Loop of a [`CodeBinary`].
unsafe extern "C" fn code_binary<T: Float, O: CodeBinary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let c = Consts::of::<T>();
        let mut snan = false;
        for k in 0..count(dims) {
            let (x, y) = (load::<T>(a, k), load::<T>(b, k));
            snan |= O::READS_VALUE && (code_is_snan::<T>(x) || code_is_snan::<T>(y));
            store::<T>(o, k, O::f(&T::FORMAT, &c, x, y));
        }
        signal_snan::<T>(snan);
    })
}

/// Loop of a [`CodePredicate`]: boolean output.
unsafe extern "C" fn predicate<T: Float, O: CodePredicate>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let mut snan = false;
        for k in 0..count(dims) {
            let x = load::<T>(a, k);
            snan |= O::READS_VALUE && code_is_snan::<T>(x);
            o.write::<u8>(k, O::f(&T::FORMAT, x) as u8);
        }
        signal_snan::<T>(snan);
    })
}

/// Loop of a [`Logical`] on the operands' [`truthy`] values.
unsafe extern "C" fn logical<T: Float, O: Logical>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let f = &T::FORMAT;
        let mut snan = false;
        for k in 0..count(dims) {
            let (x, y) = (load::<T>(a, k), load::<T>(b, k));
            snan |= code_is_snan::<T>(x) || code_is_snan::<T>(y);
            o.write::<u8>(k, O::f(truthy(f, x), truthy(f, y)) as u8);
        }
        signal_snan::<T>(snan);
    })
}

/// `spacing(x)` as ml_dtypes computes it: `nextafter(x, ±away) - x` in
/// float32, rounded once, where `away` is infinity with `x`'s sign, or the
/// largest finite value in formats without infinities. In those formats
/// `±max` gives NaN with `x`'s sign (`copysign(quiet_NaN, x)`), or `+0` in
/// the float6/float4 formats, which have no NaN.
unsafe extern "C" fn spacing<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let f = &T::FORMAT;
        let size = size_of::<T>();
        let c = Consts::of::<T>();
        let away = f.inf_code().unwrap_or(f.max_code());
        // `abs(x) == max()` in ml_dtypes is a value comparison: only the two
        // codes of ±max match.
        let at_max = |x: u32| !f.has_infinity() && abs_code(f, x) == f.max_code();
        let max_result = |x: u32| {
            if f.has_nan() {
                CopySign::f(f, &c, quiet_nan(f), x)
            } else {
                0
            }
        };
        let mut buf = [0u8; BLOCK_BYTES];
        let mut nbuf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), size_of::<T>()], 1);
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            for k in 0..len {
                let code = load::<T>(a, start + k);
                let to = CopySign::f(f, &c, away, code);
                let next = next_after(f, code, to);
                let bytes = next.to_le_bytes();
                nbuf[k * size..(k + 1) * size].copy_from_slice(&bytes[..size]);
            }
            decode::<T>(a, start, &mut buf, x);
            convert(
                &nbuf[..len * size],
                T::DTYPE,
                bytemuck::cast_slice_mut(y),
                DType::Float32,
            );
            for (u, v) in x.iter_mut().zip(y.iter()) {
                *u = *v - *u;
            }
            convert(
                bytemuck::cast_slice(x),
                DType::Float32,
                &mut buf[..len * size],
                T::DTYPE,
            );
            for k in 0..len {
                let code = load::<T>(a, start + k);
                if at_max(code) {
                    let bytes = max_result(code).to_le_bytes();
                    buf[k * size..(k + 1) * size].copy_from_slice(&bytes[..size]);
                }
            }
            o.put_bytes(start, &buf[..len * size], size);
        });
    })
}
