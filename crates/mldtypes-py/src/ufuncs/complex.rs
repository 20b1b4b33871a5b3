//! Ufunc loops of the complex types `complex32` (two IEEE float16) and
//! `bcomplex32` (two bfloat16): the 50 ufuncs ml_dtypes 0.6.0 registers in
//! `RegisterComplexUFuncs` (`custom_complex.h`), with the semantics of its
//! functors (`ufuncs.h`) and of its types (`complex_types.h`), and
//! `float_power`, which ml_dtypes' main branch (b793a6e, `complex.cc`)
//! registers with the `power` functor (without it NumPy computes
//! `float_power` in complex128 and returns complex128).
//!
//! Values are computed as C++ `std::complex<float>` does in ml_dtypes:
//! decoded exactly to a float32 pair, computed with C99 complex arithmetic
//! (Annex G infinity recovery for `*` and `/`) and the C library's `c*f`
//! functions, each part rounded once (Eigen's conversions: round to nearest
//! even, NaN to the canonical quiet NaN with its sign).

use std::os::raw::{c_char, c_void};

use mldtypes::dtype::DType;
use mldtypes::{bcomplex32, bfloat16, complex32};
use numpy::npyffi::{npy_intp, NPY_TYPES};
use pyo3::PyResult;

use super::{
    block_len, blocks, count, libm, raise_invalid, Arg, FpFlags, LoopFn, Operand, Registrar, BLOCK,
    BOOL,
};

/// Registers the loops of both complex types (one line per type), and on
/// NumPy ≥ 2.5 their `real` / `imag` ArrayMethods ([`real_imag`]).
pub(super) fn register(r: &mut Registrar<'_>) -> PyResult<()> {
    register_type::<bcomplex32>(r)?;
    register_type::<complex32>(r)?;
    real_imag::register::<bcomplex32>(r.numpy.py())?;
    real_imag::register::<complex32>(r.numpy.py())?;
    Ok(())
}

/// A complex type of two 16-bit float parts (real first, 4 bytes).
pub(crate) trait Complex: bytemuck::Pod {
    /// The dtype.
    const DTYPE: DType;
    /// The dtype of one part: `absolute`'s output (ml_dtypes registers
    /// `complex32 -> float16` and `bcomplex32 -> bfloat16`).
    const PART: Arg;
    /// The exact float32 value of a part's bits.
    fn part_to_f32(bits: u16) -> f32;
    /// A float32 rounded once into a part (Eigen's conversion).
    fn part_from_f32(x: f32) -> u16;
    /// Whether ml_dtypes' ordered comparisons of the parts raise the
    /// invalid flag on NaN: Eigen's `bfloat16` compares as float32 with C
    /// relational operators; its `half` comparisons raise nothing.
    const SIGNALLING_COMPARE: bool;
}

impl Complex for bcomplex32 {
    const SIGNALLING_COMPARE: bool = true;
    const DTYPE: DType = DType::BComplex32;
    const PART: Arg = Arg::Ours(DType::BFloat16);
    #[inline]
    fn part_to_f32(bits: u16) -> f32 {
        f32::from_bits((bits as u32) << 16)
    }
    #[inline]
    fn part_from_f32(x: f32) -> u16 {
        bfloat16::from_f32(x).to_bits()
    }
}

impl Complex for complex32 {
    const SIGNALLING_COMPARE: bool = false;
    const DTYPE: DType = DType::Complex32;
    const PART: Arg = Arg::Npy(NPY_TYPES::NPY_HALF);
    #[inline]
    fn part_to_f32(bits: u16) -> f32 {
        half::f16::from_bits(bits).to_f32()
    }
    #[inline]
    fn part_from_f32(x: f32) -> u16 {
        if x.is_nan() {
            // Eigen's float -> half: every NaN becomes 0x7e00 with its sign.
            0x7e00 | ((x.to_bits() >> 16) & 0x8000) as u16
        } else {
            half::f16::from_f32(x).to_bits()
        }
    }
}

/// Registers the 51 loops of `C`, in ml_dtypes' order (main's, with
/// `float_power` after `power`).
fn register_type<C: Complex>(r: &mut Registrar<'_>) -> PyResult<()> {
    let d = C::DTYPE;
    let t = Arg::Ours(d);
    let unary_loops: &[(&str, LoopFn)] = &[
        ("negative", unary::<C, Negative> as LoopFn),
        ("positive", positive::<C>),
        ("rint", unary::<C, Rint>),
        ("sign", unary::<C, Sign>),
        ("conjugate", conjugate::<C>),
        ("exp", unary::<C, Exp>),
        ("exp2", unary::<C, Exp2>),
        ("expm1", unary::<C, Expm1>),
        ("log", unary::<C, Log>),
        ("log2", unary::<C, Log2>),
        ("log10", unary::<C, Log10>),
        ("log1p", unary::<C, Log1p>),
        ("sqrt", unary::<C, Sqrt>),
        ("square", unary::<C, Square>),
        ("reciprocal", unary::<C, Reciprocal>),
        ("sin", unary::<C, Sin>),
        ("cos", unary::<C, Cos>),
        ("tan", unary::<C, Tan>),
        ("arcsin", unary::<C, Arcsin>),
        ("arccos", unary::<C, Arccos>),
        ("arctan", unary::<C, Arctan>),
        ("sinh", unary::<C, Sinh>),
        ("cosh", unary::<C, Cosh>),
        ("tanh", unary::<C, Tanh>),
        ("arcsinh", unary::<C, Arcsinh>),
        ("arccosh", unary::<C, Arccosh>),
        ("arctanh", unary::<C, Arctanh>),
    ];
    let binary_loops: &[(&str, LoopFn)] = &[
        ("add", binary::<C, Add> as LoopFn),
        ("subtract", binary::<C, Subtract>),
        ("multiply", binary::<C, Multiply>),
        ("divide", binary::<C, Divide>),
        ("true_divide", binary::<C, Divide>),
        ("power", binary::<C, Power>),
        ("float_power", binary::<C, Power>),
        ("maximum", select::<C, Maximum>),
        ("minimum", select::<C, Minimum>),
        ("fmax", select::<C, Fmax>),
        ("fmin", select::<C, Fmin>),
    ];
    let bool_loops: &[(&str, LoopFn)] = &[
        ("equal", compare::<C, Equal> as LoopFn),
        ("not_equal", compare::<C, NotEqual>),
        ("less", compare::<C, Less>),
        ("greater", compare::<C, Greater>),
        ("less_equal", compare::<C, LessEqual>),
        ("greater_equal", compare::<C, GreaterEqual>),
        ("logical_and", compare::<C, LogicalAnd>),
        ("logical_or", compare::<C, LogicalOr>),
        ("logical_xor", compare::<C, LogicalXor>),
    ];
    let pred_loops: &[(&str, LoopFn)] = &[
        ("logical_not", predicate::<C, LogicalNot> as LoopFn),
        ("isfinite", predicate::<C, IsFinite>),
        ("isinf", predicate::<C, IsInf>),
        ("isnan", predicate::<C, IsNan>),
    ];
    for &(name, f) in binary_loops {
        r.add(name, d, &[t, t, t], f)?;
    }
    for &(name, f) in unary_loops {
        r.add(name, d, &[t, t], f)?;
    }
    r.add("absolute", d, &[t, C::PART], absolute::<C>)?;
    for &(name, f) in bool_loops {
        r.add(name, d, &[t, t, BOOL], f)?;
    }
    for &(name, f) in pred_loops {
        r.add(name, d, &[t, BOOL], f)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// float32 complex numbers and C99 complex arithmetic.
// ---------------------------------------------------------------------------

/// C `float _Complex` (two floats, real first; passed in registers as C
/// passes it on x86-64 and aarch64).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub(crate) struct Cf32 {
    re: f32,
    im: f32,
}

const fn c(re: f32, im: f32) -> Cf32 {
    Cf32 { re, im }
}

/// The C library's complex float functions (glibc's `c*f`), which
/// libstdc++'s `std::exp(std::complex<float>)` etc. call.
mod clib {
    use super::Cf32;
    unsafe extern "C" {
        pub(super) safe fn cexpf(z: Cf32) -> Cf32;
        pub(super) safe fn clogf(z: Cf32) -> Cf32;
        pub(super) safe fn csqrtf(z: Cf32) -> Cf32;
        pub(super) safe fn csinf(z: Cf32) -> Cf32;
        pub(super) safe fn ccosf(z: Cf32) -> Cf32;
        pub(super) safe fn ctanf(z: Cf32) -> Cf32;
        pub(super) safe fn casinf(z: Cf32) -> Cf32;
        pub(super) safe fn cacosf(z: Cf32) -> Cf32;
        pub(super) safe fn catanf(z: Cf32) -> Cf32;
        pub(super) safe fn csinhf(z: Cf32) -> Cf32;
        pub(super) safe fn ccoshf(z: Cf32) -> Cf32;
        pub(super) safe fn ctanhf(z: Cf32) -> Cf32;
        pub(super) safe fn casinhf(z: Cf32) -> Cf32;
        pub(super) safe fn cacoshf(z: Cf32) -> Cf32;
        pub(super) safe fn catanhf(z: Cf32) -> Cf32;
        pub(super) safe fn cpowf(x: Cf32, y: Cf32) -> Cf32;
        pub(super) safe fn cabsf(z: Cf32) -> f32;
    }
}

/// `copysign(isinf(x) ? 1 : 0, x)`: Annex G's "box" of an infinite part.
#[inline]
fn boxed(x: f32) -> f32 {
    (if x.is_infinite() { 1.0f32 } else { 0.0 }).copysign(x)
}

/// A NaN part replaced by a zero of its sign (Annex G recovery).
#[inline]
fn nan_to_zero(x: f32) -> f32 {
    if x.is_nan() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// `(a + bi)(c + di)` as C99 (GCC's inline product, then libgcc's
/// `__mulsc3` recovery of infinities when both parts come out NaN).
#[inline]
fn mul(x: Cf32, y: Cf32) -> Cf32 {
    let (mut a, mut b, mut cc, mut d) = (x.re, x.im, y.re, y.im);
    let (ac, bd, ad, bc) = (a * cc, b * d, a * d, b * cc);
    let (re, im) = (ac - bd, ad + bc);
    if !(re.is_nan() && im.is_nan()) {
        return c(re, im);
    }
    let mut recalc = false;
    if a.is_infinite() || b.is_infinite() {
        a = boxed(a);
        b = boxed(b);
        cc = nan_to_zero(cc);
        d = nan_to_zero(d);
        recalc = true;
    }
    if cc.is_infinite() || d.is_infinite() {
        cc = boxed(cc);
        d = boxed(d);
        a = nan_to_zero(a);
        b = nan_to_zero(b);
        recalc = true;
    }
    if !recalc && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite()) {
        a = nan_to_zero(a);
        b = nan_to_zero(b);
        cc = nan_to_zero(cc);
        d = nan_to_zero(d);
        recalc = true;
    }
    if recalc {
        c(
            f32::INFINITY * (a * cc - b * d),
            f32::INFINITY * (a * d + b * cc),
        )
    } else {
        c(re, im)
    }
}

/// `op(p, q)` with x86's NaN rule for the operands in this order: `p` if it
/// is NaN, else `q` if it is (quieted), whatever operand order the
/// compiler would pick; ml_dtypes' results follow its source order.
#[inline(always)]
fn first<F: Float2>(p: F, q: F, op: impl Fn(F, F) -> F) -> F {
    if p.nan() {
        p.quiet()
    } else if q.nan() {
        q.quiet()
    } else {
        op(p, q)
    }
}

/// `f32` / `f64` for [`first`].
trait Float2: Copy {
    fn nan(self) -> bool;
    fn quiet(self) -> Self;
}

impl Float2 for f32 {
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn quiet(self) -> Self {
        f32::from_bits(self.to_bits() | 0x0040_0000)
    }
}

impl Float2 for f64 {
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    fn quiet(self) -> Self {
        f64::from_bits(self.to_bits() | 0x0008_0000_0000_0000)
    }
}

/// `(a + bi) / (c + di)` as libgcc's `__divsc3` computes a float quotient:
/// `((ac + bd) + (bc - ad)i) / (c² + d²)` in double precision, rounded to
/// float, with Annex G's recovery of infinities and zeros when both parts
/// come out NaN.
#[inline]
fn div(x: Cf32, y: Cf32) -> Cf32 {
    let (a, b, cc, d) = (x.re, x.im, y.re, y.im);
    let (a64, b64, c64, d64) = (a as f64, b as f64, cc as f64, d as f64);
    let denom = first(c64 * c64, d64 * d64, |p, q| p + q);
    let re = first(first(a64 * c64, b64 * d64, |p, q| p + q), denom, |p, q| {
        p / q
    });
    let im = first(first(b64 * c64, a64 * d64, |p, q| p - q), denom, |p, q| {
        p / q
    });
    let (re, im) = (re as f32, im as f32);
    if !(re.is_nan() && im.is_nan()) {
        return c(re, im);
    }
    let denom_zero = cc == 0.0 && d == 0.0;
    if denom_zero && (!a.is_nan() || !b.is_nan()) {
        let inf = f32::INFINITY.copysign(cc);
        c(inf * a, inf * b)
    } else if (a.is_infinite() || b.is_infinite()) && cc.is_finite() && d.is_finite() {
        let (a, b) = (boxed(a), boxed(b));
        c(
            f32::INFINITY * (a * cc + b * d),
            f32::INFINITY * (b * cc - a * d),
        )
    } else if (cc.is_infinite() || d.is_infinite()) && a.is_finite() && b.is_finite() {
        let (cc, d) = (boxed(cc), boxed(d));
        c(0.0 * (a * cc + b * d), 0.0 * (b * cc - a * d))
    } else {
        c(re, im)
    }
}

// ---------------------------------------------------------------------------
// Blocks of decoded values.
// ---------------------------------------------------------------------------

/// Decodes elements `start..start + out.len()` of `o`.
#[inline]
unsafe fn decode<C: Complex>(o: Operand, start: usize, out: &mut [Cf32]) {
    let flags = FpFlags::save();
    for (k, z) in out.iter_mut().enumerate() {
        let [re, im]: [u16; 2] = o.read(start + k);
        *z = c(C::part_to_f32(re), C::part_to_f32(im));
    }
    flags.restore();
}

/// Rounds `vals` into `C` as elements `start..` of `o`.
#[inline]
unsafe fn encode<C: Complex>(vals: &[Cf32], o: Operand, start: usize) {
    let flags = FpFlags::save();
    for (k, z) in vals.iter().enumerate() {
        let parts = [C::part_from_f32(z.re), C::part_from_f32(z.im)];
        o.write(start + k, parts);
    }
    flags.restore();
}

// ---------------------------------------------------------------------------
// Value functions.
// ---------------------------------------------------------------------------

/// A complex float32 function of one argument.
trait CUnary {
    fn f(z: Cf32) -> Cf32;
}

/// A complex float32 function of two arguments.
trait CBinary {
    fn f(x: Cf32, y: Cf32) -> Cf32;
}

macro_rules! cunary {
    ($($(#[$doc:meta])* $name:ident = |$z:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl CUnary for $name {
            #[inline(always)]
            fn f($z: Cf32) -> Cf32 { $e }
        }
    )*};
}

macro_rules! cbinary {
    ($($(#[$doc:meta])* $name:ident = |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl CBinary for $name {
            #[inline(always)]
            fn f($x: Cf32, $y: Cf32) -> Cf32 { $e }
        }
    )*};
}

/// `log(2)` as ml_dtypes' `Exp2` writes it (`0.6931471805599453f`).
const LOGE2: f32 = std::f32::consts::LN_2;
/// `log2(e)` as ml_dtypes' `Log2` writes it (a float literal).
const LOG2E: f32 = std::f32::consts::LOG2_E;

cunary! {
    /// `-z`: both parts negated in float32, then rounded (NaN payloads
    /// become canonical).
    Negative = |z| c(-z.re, -z.im);
    /// Each part rounded to an integer (`rintf`).
    Rint = |z| c(libm::rintf(z.re), libm::rintf(z.im));
    /// NumPy's complex sign `z / |z|` (ml_dtypes' `Sign`).
    Sign = |z| complex_sign(z);
    Exp = |z| clib::cexpf(z);
    /// `exp(z · log 2)`.
    Exp2 = |z| clib::cexpf(c(z.re * LOGE2, z.im * LOGE2));
    /// ml_dtypes' `Expm1`: `(expm1(x)·cos(y) - 2·sin²(y/2), exp(x)·sin(y))`
    /// (NaN operands taken in the order its build evaluates them).
    Expm1 = |z| {
        let a = libm::sinf(z.im / 2.0);
        let p = first(libm::cosf(z.im), libm::expm1f(z.re), |p, q| p * q);
        c(
            first(p, 2.0 * a * a, |p, q| p - q),
            first(libm::expf(z.re), libm::sinf(z.im), |p, q| p * q),
        )
    };
    Log = |z| clib::clogf(z);
    /// `log(z) · log2(e)`.
    Log2 = |z| {
        let l = clib::clogf(z);
        c(l.re * LOG2E, l.im * LOG2E)
    };
    /// libstdc++'s `log10`: `log(z) / log(10.0f)`.
    Log10 = |z| {
        let l = clib::clogf(z);
        let ten = libm::logf(10.0);
        c(l.re / ten, l.im / ten)
    };
    /// ml_dtypes' `Log1p`: `(log|z + 1|, atan2(y, x + 1))`.
    Log1p = |z| {
        let l = clib::cabsf(c(z.re + 1.0, z.im));
        c(libm::logf(l), libm::atan2f(z.im, z.re + 1.0))
    };
    Sqrt = |z| clib::csqrtf(z);
    /// `z · z` (C99 product).
    Square = |z| mul(z, z);
    /// `1 / z` (C99 quotient).
    Reciprocal = |z| div(c(1.0, 0.0), z);
    Sin = |z| clib::csinf(z);
    Cos = |z| clib::ccosf(z);
    Tan = |z| clib::ctanf(z);
    Arcsin = |z| clib::casinf(z);
    Arccos = |z| clib::cacosf(z);
    Arctan = |z| clib::catanf(z);
    Sinh = |z| clib::csinhf(z);
    Cosh = |z| clib::ccoshf(z);
    Tanh = |z| clib::ctanhf(z);
    Arcsinh = |z| clib::casinhf(z);
    Arccosh = |z| clib::cacoshf(z);
    Arctanh = |z| clib::catanhf(z);
}

cbinary! {
    Add = |x, y| c(x.re + y.re, x.im + y.im);
    Subtract = |x, y| c(x.re - y.re, x.im - y.im);
    Multiply = |x, y| mul(x, y);
    Divide = |x, y| div(x, y);
    /// `cpowf` (libstdc++'s `pow` of two complex floats).
    Power = |x, y| clib::cpowf(x, y);
}

/// The four arithmetic operators of the complex types.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ArithOp {
    Add,
    Subtract,
    Multiply,
    Divide,
}

/// `x op y` for one pair of values of `C`, bit for bit as the `add`,
/// `subtract`, `multiply` and `true_divide` loops compute an element
/// (decoded exactly to float32, C99 arithmetic, each part rounded once).
/// The scalar types' operators call this, so scalars and arrays agree.
pub(crate) fn arith<C: Complex>(x: C, y: C, op: ArithOp) -> C {
    let part = |v: C| {
        let [re, im]: [u16; 2] = bytemuck::cast(v);
        c(C::part_to_f32(re), C::part_to_f32(im))
    };
    let (x, y) = (part(x), part(y));
    let z = match op {
        ArithOp::Add => Add::f(x, y),
        ArithOp::Subtract => Subtract::f(x, y),
        ArithOp::Multiply => Multiply::f(x, y),
        ArithOp::Divide => Divide::f(x, y),
    };
    bytemuck::cast([C::part_from_f32(z.re), C::part_from_f32(z.im)])
}

/// NumPy's complex sign as ml_dtypes computes it: `z / hypot(x, y)`; NaN
/// for a NaN magnitude or two infinite parts, `±1` / `±i` for one
/// infinite part, 0 for 0.
#[inline]
fn complex_sign(z: Cf32) -> Cf32 {
    let abs = libm::hypotf(z.re, z.im);
    let nan = f32::NAN;
    if abs.is_nan() {
        return c(nan, nan);
    }
    if abs.is_infinite() {
        if z.re.is_infinite() {
            if z.im.is_infinite() {
                return c(nan, nan);
            }
            return c(if gt(z.re, 0.0) { 1.0 } else { -1.0 }, 0.0);
        }
        return c(0.0, if gt(z.im, 0.0) { 1.0 } else { -1.0 });
    }
    if abs == 0.0 {
        return c(0.0, 0.0);
    }
    c(z.re / abs, z.im / abs)
}

/// Loop of a [`CUnary`].
unsafe extern "C" fn unary<C: Complex, O: CUnary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let mut x = [Cf32::default(); BLOCK];
        let n = count(dims);
        let block = block_len(args, steps, n, &[4, 4], 1);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<C>(a, start, x);
            for z in x.iter_mut() {
                *z = O::f(*z);
            }
            encode::<C>(x, o, start);
        });
    })
}

/// Loop of a [`CBinary`].
unsafe extern "C" fn binary<C: Complex, O: CBinary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let o = Operand::of(args, steps, 2);
        pairs::<C>(args, dims, steps, 4, |start, x, y| {
            for (u, v) in x.iter_mut().zip(y.iter()) {
                *u = O::f(*u, *v);
            }
            encode::<C>(x, o, start);
        });
    })
}

/// The blocks of a loop over two complex operands (arguments 0 and 1;
/// the output, argument 2, has elements of `out` bytes): `f(start, x, y)`
/// with `x`, `y` the decoded operands of elements `start..start + len`.
unsafe fn pairs<C: Complex>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    out: usize,
    mut f: impl FnMut(usize, &mut [Cf32], &[Cf32]),
) {
    let (a, b) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
    let mut x = [Cf32::default(); BLOCK];
    let mut y = [Cf32::default(); BLOCK];
    let n = count(dims);
    let block = block_len(args, steps, n, &[4, 4, out], 2);
    blocks(n, block, |start, len| {
        let (x, y) = (&mut x[..len], &mut y[..len]);
        decode::<C>(a, start, x);
        decode::<C>(b, start, y);
        f(start, x, y);
    });
}

/// `absolute`: `|z|` (`cabsf`, i.e. `hypotf`) rounded once into the part
/// type.
unsafe extern "C" fn absolute<C: Complex>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let mut x = [Cf32::default(); BLOCK];
        let mut m = [0f32; BLOCK];
        let n = count(dims);
        let block = block_len(args, steps, n, &[4, 2], 1);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<C>(a, start, x);
            for (z, r) in x.iter().zip(m.iter_mut()) {
                *r = clib::cabsf(*z);
            }
            let flags = FpFlags::save();
            for (k, r) in m[..len].iter().enumerate() {
                o.write::<u16>(start + k, C::part_from_f32(*r));
            }
            flags.restore();
        });
    })
}

/// `positive`: the operand's bits unchanged.
unsafe extern "C" fn positive<C: Complex>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        for k in 0..count(dims) {
            o.write::<[u16; 2]>(k, a.read(k));
        }
    })
}

/// `conjugate`: the imaginary part's sign bit flipped (Eigen's `-half` /
/// `-bfloat16` is a bit operation: NaN payloads are kept).
unsafe extern "C" fn conjugate<C: Complex>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        for k in 0..count(dims) {
            let [re, im]: [u16; 2] = a.read(k);
            o.write::<[u16; 2]>(k, [re, im ^ 0x8000]);
        }
    })
}

// ---------------------------------------------------------------------------
// Comparisons, selections, predicates.
// ---------------------------------------------------------------------------

/// `a < b` as the C relational operator on the parts (float32 compare):
/// false with the invalid flag raised when an operand is NaN.
#[inline]
fn lt(a: f32, b: f32) -> bool {
    if a.is_nan() || b.is_nan() {
        raise_invalid();
        false
    } else {
        a < b
    }
}

/// `a > b` (see [`lt`]).
#[inline]
fn gt(a: f32, b: f32) -> bool {
    lt(b, a)
}

/// `a <= b` (see [`lt`]).
#[inline]
fn le(a: f32, b: f32) -> bool {
    if a.is_nan() || b.is_nan() {
        raise_invalid();
        false
    } else {
        a <= b
    }
}

/// `a >= b` (see [`lt`]).
#[inline]
fn ge(a: f32, b: f32) -> bool {
    le(b, a)
}

/// `complex_types.h`'s lexicographic `<`: real parts first; the real
/// comparison only counts when neither imaginary part is NaN.
#[inline]
fn lex_lt(x: Cf32, y: Cf32) -> bool {
    (lt(x.re, y.re) && !x.im.is_nan() && !y.im.is_nan()) || (x.re == y.re && lt(x.im, y.im))
}

/// Lexicographic `>` (see [`lex_lt`]).
#[inline]
fn lex_gt(x: Cf32, y: Cf32) -> bool {
    (gt(x.re, y.re) && !x.im.is_nan() && !y.im.is_nan()) || (x.re == y.re && gt(x.im, y.im))
}

/// Whether a complex value is NaN (either part).
#[inline]
fn cnan(z: Cf32) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// `static_cast<bool>`: either part non-zero (NaN counts).
#[inline]
fn truthy(z: Cf32) -> bool {
    z.re != 0.0 || z.im != 0.0
}

/// A boolean function of two complex values.
trait CCompare {
    fn f(x: Cf32, y: Cf32) -> bool;
}

macro_rules! ccompare {
    ($($(#[$doc:meta])* $name:ident = |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl CCompare for $name {
            #[inline(always)]
            fn f($x: Cf32, $y: Cf32) -> bool { $e }
        }
    )*};
}

ccompare! {
    /// Both parts equal.
    Equal = |x, y| x.re == y.re && x.im == y.im;
    /// Either part unequal.
    NotEqual = |x, y| x.re != y.re || x.im != y.im;
    Less = |x, y| lex_lt(x, y);
    Greater = |x, y| lex_gt(x, y);
    /// Lexicographic `<=`.
    LessEqual = |x, y| (lt(x.re, y.re) && !x.im.is_nan() && !y.im.is_nan())
        || (x.re == y.re && le(x.im, y.im));
    /// Lexicographic `>=`.
    GreaterEqual = |x, y| (gt(x.re, y.re) && !x.im.is_nan() && !y.im.is_nan())
        || (x.re == y.re && ge(x.im, y.im));
    LogicalAnd = |x, y| truthy(x) && truthy(y);
    LogicalOr = |x, y| truthy(x) || truthy(y);
    LogicalXor = |x, y| truthy(x) ^ truthy(y);
}

/// Loop of a [`CCompare`]: boolean output.
unsafe extern "C" fn compare<C: Complex, O: CCompare>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let o = Operand::of(args, steps, 2);
        pairs::<C>(args, dims, steps, 1, |start, x, y| {
            let quiet = (!C::SIGNALLING_COMPARE).then(FpFlags::save);
            for (k, (u, v)) in x.iter().zip(y.iter()).enumerate() {
                o.write::<u8>(start + k, O::f(*u, *v) as u8);
            }
            if let Some(flags) = quiet {
                flags.restore();
            }
        });
    })
}

/// A choice between two complex operands: whether the result is `x`.
trait CSelect {
    fn pick_x(x: Cf32, y: Cf32) -> bool;
}

/// `maximum`: `isnan(a) || a > b ? a : b` (lexicographic `>`).
struct Maximum;
impl CSelect for Maximum {
    #[inline(always)]
    fn pick_x(x: Cf32, y: Cf32) -> bool {
        cnan(x) || lex_gt(x, y)
    }
}

/// `minimum`: `isnan(a) || a < b ? a : b`.
struct Minimum;
impl CSelect for Minimum {
    #[inline(always)]
    fn pick_x(x: Cf32, y: Cf32) -> bool {
        cnan(x) || lex_lt(x, y)
    }
}

/// `fmax`: `isnan(b) || a > b ? a : b`.
struct Fmax;
impl CSelect for Fmax {
    #[inline(always)]
    fn pick_x(x: Cf32, y: Cf32) -> bool {
        cnan(y) || lex_gt(x, y)
    }
}

/// `fmin`: `isnan(b) || a < b ? a : b`.
struct Fmin;
impl CSelect for Fmin {
    #[inline(always)]
    fn pick_x(x: Cf32, y: Cf32) -> bool {
        cnan(y) || lex_lt(x, y)
    }
}

/// Loop of a [`CSelect`]: the chosen operand's bits are copied unchanged.
unsafe extern "C" fn select<C: Complex, O: CSelect>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, b) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let o = Operand::of(args, steps, 2);
        pairs::<C>(args, dims, steps, 4, |start, x, y| {
            let quiet = (!C::SIGNALLING_COMPARE).then(FpFlags::save);
            for (k, (u, v)) in x.iter().zip(y.iter()).enumerate() {
                let src = if O::pick_x(*u, *v) { a } else { b };
                o.write::<[u16; 2]>(start + k, src.read(start + k));
            }
            if let Some(flags) = quiet {
                flags.restore();
            }
        });
    })
}

/// A boolean function of one complex value.
trait CPredicate {
    fn f(z: Cf32) -> bool;
}

/// `logical_not`: both parts zero.
struct LogicalNot;
impl CPredicate for LogicalNot {
    #[inline(always)]
    fn f(z: Cf32) -> bool {
        !truthy(z)
    }
}

/// `isfinite`: both parts finite.
struct IsFinite;
impl CPredicate for IsFinite {
    #[inline(always)]
    fn f(z: Cf32) -> bool {
        z.re.is_finite() && z.im.is_finite()
    }
}

/// `isinf`: either part infinite.
struct IsInf;
impl CPredicate for IsInf {
    #[inline(always)]
    fn f(z: Cf32) -> bool {
        z.re.is_infinite() || z.im.is_infinite()
    }
}

/// `isnan`: either part NaN.
struct IsNan;
impl CPredicate for IsNan {
    #[inline(always)]
    fn f(z: Cf32) -> bool {
        cnan(z)
    }
}

/// Loop of a [`CPredicate`]: boolean output.
unsafe extern "C" fn predicate<C: Complex, O: CPredicate>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let mut x = [Cf32::default(); BLOCK];
        let n = count(dims);
        let block = block_len(args, steps, n, &[4, 1], 1);
        blocks(n, block, |start, len| {
            let x = &mut x[..len];
            decode::<C>(a, start, x);
            let flags = FpFlags::save();
            for (k, z) in x.iter().enumerate() {
                o.write::<u8>(start + k, O::f(*z) as u8);
            }
            flags.restore();
        });
    })
}

/// `arr.real` / `arr.imag` (and `numpy.real` / `numpy.imag`) of complex32 and
/// bcomplex32 arrays on NumPy ≥ 2.5, through the `real` / `imag`
/// ArrayMethods NumPy 2.5 added for user dtypes (`PyUFunc_AddLoopsFromSpecs`
/// with the names `"real"` and `"imag"` stores them on the DType; NumPy's
/// `_get_part` in `getset.c` calls their `resolve_descriptors` and, given a
/// view offset, returns a view), as ml_dtypes' main branch (b793a6e,
/// `RegisterRealAndImag` in `complex.cc`) registers them:
///
/// - the result is a view of the parts, as for NumPy's own complex types:
///   `float16` (complex32) or `bfloat16` (bcomplex32), at byte offset 0
///   (`real`) or 2 (`imag`), with the array's strides, writeable when the
///   array is (`a.imag[...] = 0` writes into `a`);
/// - a byte-swapped array gives byte-swapped parts.
///
/// On NumPy 2.0–2.4 nothing is registered and NumPy answers as for any user
/// dtype (`a.real` is `a`, `a.imag` zeros of `a`'s dtype);
/// `mldtypes.real` / `mldtypes.imag` give the parts on every version.
pub(crate) mod real_imag {
    use std::ffi::{c_void, CStr};
    use std::os::raw::{c_char, c_int};

    use numpy::npyffi::{
        npy_intp, PyArrayMethod_Spec, PyArray_DTypeMeta, PyArray_Descr, NPY_ARRAYMETHOD_FLAGS,
        NPY_CASTING, NPY_TYPES, PY_ARRAY_API,
    };
    use pyo3::exceptions::PyRuntimeError;
    use pyo3::ffi;
    use pyo3::prelude::*;

    use super::Complex;
    use crate::dtypes::registry;
    use crate::npapi;

    /// NumPy's `NPY_2_5_API_VERSION`: the C feature version of the first
    /// NumPy whose `PyUFunc_AddLoopsFromSpecs` accepts `"real"` / `"imag"`.
    const NPY_2_5_FEATURE_VERSION: u32 = 0x16;
    /// `PyUFunc_AddLoopsFromSpecs`' index in NumPy's ufunc C-API table
    /// (`numpy_api.py`: 47, since NumPy 2.4).
    const ADD_LOOPS_FROM_SPECS: usize = 47;
    /// ArrayMethod slot numbers (`dtype_api.h`).
    const NPY_METH_RESOLVE_DESCRIPTORS: c_int = 2;
    const NPY_METH_STRIDED_LOOP: c_int = 5;
    /// `_NPY_ERROR_OCCURRED_IN_CAST`: `resolve_descriptors`' error value.
    const ERROR: c_int = -1;
    /// `NPY_SWAP` for `PyArray_DescrNewByteorder`.
    const NPY_SWAP: c_char = b's' as c_char;

    /// `PyUFunc_LoopSlot` (`dtype_api.h`, NumPy ≥ 2.4).
    #[repr(C)]
    struct LoopSlot {
        name: *const c_char,
        spec: *mut PyArrayMethod_Spec,
    }

    /// Whether this NumPy takes `real` / `imag` ArrayMethods (2.5 or newer).
    pub(crate) fn available(py: Python<'_>) -> bool {
        // SAFETY: plain query of the imported NumPy's C API.
        unsafe { PY_ARRAY_API.PyArray_GetNDArrayCFeatureVersion(py) >= NPY_2_5_FEATURE_VERSION }
    }

    /// Whether `d`'s byte order is the opposite of the machine's
    /// (`PyDataType_ISBYTESWAPPED`).
    unsafe fn byteswapped(d: *const PyArray_Descr) -> bool {
        let order = unsafe { (*d).fields.byteorder } as u8;
        if cfg!(target_endian = "little") {
            order == b'>'
        } else {
            order == b'<'
        }
    }

    /// `resolve_descriptors`: the part's dtype (byte-swapped like the
    /// input), viewed at offset 0 (`real`) or one part's size (`imag`).
    unsafe extern "C" fn resolve<const IMAG: bool>(
        _method: *mut c_void,
        dtypes: *const *mut PyArray_DTypeMeta,
        given: *const *mut PyArray_Descr,
        loop_descrs: *mut *mut PyArray_Descr,
        view_offset: *mut npy_intp,
    ) -> c_int {
        crate::guard::ffi(ERROR, || unsafe {
            let py = npapi::py();
            let input = *given;
            let part = (*(*dtypes.add(1))).singleton;
            let out = if byteswapped(input) {
                let swapped = PY_ARRAY_API.PyArray_DescrNewByteorder(py, part, NPY_SWAP);
                if swapped.is_null() {
                    return ERROR;
                }
                swapped
            } else {
                ffi::Py_INCREF(part.cast());
                part
            };
            ffi::Py_INCREF(input.cast());
            *loop_descrs = input;
            *loop_descrs.add(1) = out;
            *view_offset = if IMAG { 2 } else { 0 };
            NPY_CASTING::NPY_NO_CASTING as c_int
        })
    }

    /// The strided loop (NumPy uses the view; this copies the part for a
    /// direct call of the method): two bytes per element, unchanged.
    unsafe extern "C" fn copy_part<const IMAG: bool>(
        _context: *mut c_void,
        data: *const *mut c_char,
        dimensions: *const npy_intp,
        strides: *const npy_intp,
        _auxdata: *mut c_void,
    ) -> c_int {
        crate::guard::ffi(-1, || unsafe {
            let n = (*dimensions).max(0);
            let (src, dst) = (*data, *data.add(1));
            let src = src.add(if IMAG { 2 } else { 0 });
            let (is, os) = (*strides, *strides.add(1));
            for i in 0..n {
                std::ptr::copy_nonoverlapping(src.offset(i * is), dst.offset(i * os), 2);
            }
            0
        })
    }

    /// The DType (class) of a dtype instance.
    unsafe fn dtype_meta(d: *mut PyArray_Descr) -> *mut PyArray_DTypeMeta {
        unsafe { ffi::Py_TYPE(d.cast()).cast() }
    }

    /// Registers `C`'s `real` and `imag` ArrayMethods on NumPy ≥ 2.5; does
    /// nothing on older NumPy.
    ///
    /// # Errors
    ///
    /// A Python `RuntimeError` if the dtypes are not registered yet or
    /// NumPy's ufunc C-API table cannot be found; the error NumPy raised
    /// while registering.
    /// The descriptor of NumPy type number `t` (a new reference, kept for
    /// the life of the process like NumPy's own builtin descriptors).
    fn descr_of(py: Python<'_>, t: c_int) -> PyResult<*mut numpy::npyffi::PyArray_Descr> {
        // SAFETY: GIL held.
        let d = unsafe { npapi::descr_from_type(t) };
        if d.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(d)
    }

    pub(crate) fn register<C: Complex>(py: Python<'_>) -> PyResult<()> {
        if !available(py) {
            return Ok(());
        }
        let missing = |what: &str| PyRuntimeError::new_err(format!("{what} is not registered"));
        let complex = registry::descr(C::DTYPE).ok_or_else(|| missing(C::DTYPE.name()))?;
        let part = match C::PART {
            super::Arg::Ours(d) => registry::descr(d).ok_or_else(|| missing(d.name()))?,
            super::Arg::Npy(t) => {
                debug_assert!(t == NPY_TYPES::NPY_HALF);
                descr_of(py, t as c_int)?
            }
            super::Arg::Num(t) => descr_of(py, t)?,
        };
        let add_loops = add_loops_from_specs(py)?;
        for (imag, name) in [(false, c"real"), (true, c"imag")] {
            // SAFETY: the descriptors live for the life of the process; NumPy
            // copies the spec, its dtypes and slots (the name is static).
            unsafe {
                let mut dtypes = [dtype_meta(complex), dtype_meta(part)];
                let (resolve_fn, loop_fn): (*mut c_void, *mut c_void) = if imag {
                    (
                        resolve::<true> as *mut c_void,
                        copy_part::<true> as *mut c_void,
                    )
                } else {
                    (
                        resolve::<false> as *mut c_void,
                        copy_part::<false> as *mut c_void,
                    )
                };
                let mut slots = [
                    ffi::PyType_Slot {
                        slot: NPY_METH_RESOLVE_DESCRIPTORS,
                        pfunc: resolve_fn,
                    },
                    ffi::PyType_Slot {
                        slot: NPY_METH_STRIDED_LOOP,
                        pfunc: loop_fn,
                    },
                    ffi::PyType_Slot {
                        slot: 0,
                        pfunc: std::ptr::null_mut(),
                    },
                ];
                let mut spec = PyArrayMethod_Spec {
                    name: method_name(imag).as_ptr(),
                    nin: 1,
                    nout: 1,
                    casting: NPY_CASTING::NPY_NO_CASTING,
                    flags: NPY_ARRAYMETHOD_FLAGS::NPY_METH_NO_FLOATINGPOINT_ERRORS,
                    dtypes: dtypes.as_mut_ptr(),
                    slots: slots.as_mut_ptr(),
                };
                let mut loop_slots = [
                    LoopSlot {
                        name: name.as_ptr(),
                        spec: &mut spec,
                    },
                    LoopSlot {
                        name: std::ptr::null(),
                        spec: std::ptr::null_mut(),
                    },
                ];
                if add_loops(loop_slots.as_mut_ptr()) < 0 {
                    return Err(PyErr::fetch(py));
                }
            }
        }
        Ok(())
    }

    /// The ArrayMethods' names (as `repr` shows them).
    fn method_name(imag: bool) -> &'static CStr {
        if imag {
            c"mldtypes_complex_imag"
        } else {
            c"mldtypes_complex_real"
        }
    }

    /// `PyUFunc_AddLoopsFromSpecs` from NumPy's ufunc C-API table (the
    /// capsule `numpy._core._multiarray_umath._UFUNC_API`).
    fn add_loops_from_specs(
        py: Python<'_>,
    ) -> PyResult<unsafe extern "C" fn(*mut LoopSlot) -> c_int> {
        let cap = py
            .import("numpy._core._multiarray_umath")?
            .getattr("_UFUNC_API")?;
        // SAFETY: NumPy's API capsule holds a table of function pointers
        // that lives as long as NumPy; index 47 exists from 2.4 on and we
        // only get here on 2.5 or newer (checked by the caller).
        unsafe {
            if ffi::PyCapsule_CheckExact(cap.as_ptr()) == 0 {
                return Err(PyRuntimeError::new_err(
                    "numpy._core._multiarray_umath._UFUNC_API is not a capsule",
                ));
            }
            let table =
                ffi::PyCapsule_GetPointer(cap.as_ptr(), std::ptr::null()) as *const *const c_void;
            if table.is_null() {
                return Err(PyErr::fetch(py));
            }
            let f = *table.add(ADD_LOOPS_FROM_SPECS);
            if f.is_null() {
                return Err(PyRuntimeError::new_err(
                    "NumPy's PyUFunc_AddLoopsFromSpecs is missing",
                ));
            }
            Ok(std::mem::transmute::<
                *const c_void,
                unsafe extern "C" fn(*mut LoopSlot) -> c_int,
            >(f))
        }
    }
}
