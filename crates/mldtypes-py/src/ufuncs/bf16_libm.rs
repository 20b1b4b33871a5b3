//! bfloat16's two-operand value functions that ml_dtypes evaluates with the
//! C library, one element at a time (`power`, `float_power`, `arctan2`,
//! `hypot`, `logaddexp`, `logaddexp2`, `floor_divide`, `remainder`, `mod`,
//! `divmod`, `fmod`), and `ldexp`: loops over chunks of [`CHUNK`] elements with the same results
//! and the same floating-point flags as the element-by-element loop of
//! `bf16.rs` (which keeps NumPy's reductions, `accumulate` and overlapping
//! operands, and the functions without a chunked loop here).
//!
//! Each chunk is widened to float32 in one vector pass, classified in
//! another (the inputs the chunk's fast computation covers, and the rest),
//! computed, and rounded to bfloat16 in one vector pass (round to nearest
//! even on the bits, as the library's kernels round). The computations:
//!
//! - `floor_divide`, `remainder`, `divmod`: the float32 definition of
//!   [`funcs::divmod`], branch-free over the whole chunk (the compiler
//!   vectorises it) for finite operands with a normal divisor and a quotient
//!   between `2^-101` and `2^28` in magnitude, where `fmod` is the exact
//!   float64 computation [`funcs::fmod_x87`] takes and no step can raise a
//!   flag NumPy reports; the other inputs take the definition itself;
//! - `fmod`: an exact float32 computation, branch-free over the chunk, for
//!   finite operands with a normal divisor and `|x| < 2^15 |y|` by
//!   exponents (`trunc(x / y)` is then the true quotient's integer part and
//!   every step is exact: no flag); the others (zero or subnormal divisors,
//!   infinities, NaNs, larger quotients) take [`funcs::fmod_x87`] itself;
//! - `logaddexp`, `logaddexp2`: the larger and smaller operand chosen
//!   without branches (`x > y` is unpredictable on data), then one loop of
//!   `hi + log1pf(expf(lo - hi))` (the same calls, on the same float32
//!   values, as the definition); equal and NaN operands take the
//!   definition;
//! - `power`: with glibc, a negative finite base and a finite exponent that
//!   is not an integer give `powf`'s invalid-operation NaN (glibc's `powf`
//!   returns `(x - x) / (x - x)` there, the same bits for every such input):
//!   those inputs take that NaN without a call but one per chunk, whose
//!   real call raises the invalid flag (and checks the NaN); every other
//!   input calls `powf`;
//! - `hypot`: glibc's `hypotf` of finite operands is
//!   `(float) sqrt((double) x * x + (double) y * y)` (its `e_hypotf.c`);
//!   computed so in vectors for operands whose larger magnitude lies in
//!   `[2^-126, 2^127)` (no overflow, no underflow: only the inexact flag,
//!   which NumPy ignores), `hypotf` for the others;
//! - `arctan2`: every input calls `atan2f`, in an order grouped by the
//!   operands' signs and the range of `|y / x|` (the branches `atan2f` and
//!   `atanf` take), so the processor predicts them;
//! - `ldexp`: [`funcs::ldexp_f32`] (`ldexpf`'s result and flags, exact in
//!   float64 and rounded once) in vectors, the exponents gathered when
//!   strided.
//!
//! The vector passes run with the floating-point flags saved and restored
//! (a vectorised compare or a speculated operation may raise flags the
//! element loop does not); the flags NumPy reports come only from the C
//! library calls and the definitions evaluated element by element, which
//! raise them exactly as before. A test compares every loop with the
//! definition one element at a time, results and flags, on every
//! instruction set.

use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

use mldtypes::bfloat16;
use numpy::npyffi::npy_intp;

use super::bf16::{self, bf16_codes, nan_rule, round_bf16};
use super::funcs::{self, Binary, Libm};
use super::{block_len, blocks, count, libm, raise_invalid, FpFlags, Operand};

/// Elements per chunk: the operands, results and scratch of a chunk (about
/// 18 KiB) stay in the L1 cache.
const CHUNK: usize = 1024;

/// Elements per chunk of short calls (a few elements: the zeroed scratch of
/// a full chunk would dominate).
const SHORT: usize = 16;

/// Whether `O` takes a chunked loop here on this platform: the `powf` and
/// `hypotf` shortcuts rest on glibc's implementations.
#[inline]
fn available<O: Binary>() -> bool {
    match O::LIBM {
        Libm::None => false,
        Libm::Power | Libm::Hypot => cfg!(all(target_os = "linux", target_env = "gnu")),
        _ => true,
    }
}

/// Runs `$inner` compiled for the detected instruction set (AVX-512,
/// AVX2 with FMA, or the baseline): the compiler vectorises its loops for
/// each.
macro_rules! on_best_path {
    ($(#[$doc:meta])* fn $name:ident = $inner:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        #[inline]
        fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
                unsafe fn avx512($($arg: $ty),*) -> $ret {
                    $inner($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    $inner($($arg),*)
                }
                use mldtypes::cast::Path;
                match mldtypes::cast::path() {
                    // SAFETY: the path is only selected when the CPU has
                    // these features (AVX-512 F/BW/VL/DQ with AVX2 and FMA,
                    // respectively AVX2 and FMA).
                    Path::Avx512 => return unsafe { avx512($($arg),*) },
                    Path::Avx2 => return unsafe { avx2($($arg),*) },
                    _ => {}
                }
            }
            $inner($($arg),*)
        }
    };
}

/// Loop of a bfloat16 [`Binary`] with a [`Libm`] kernel.
pub(super) unsafe extern "C" fn binary<O: Binary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    let n = count(dims);
    if !available::<O>() || block_len(args, steps, n, &[2, 2, 2], 2) == 1 {
        return bf16::binary::<bfloat16, O>(args, dims, steps, data);
    }
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let seen = if n <= SHORT {
            run::<O, SHORT, false>(a, b, o, o, n)
        } else {
            run::<O, CHUNK, false>(a, b, o, o, n)
        };
        if seen {
            raise_invalid();
        }
    })
}

/// Loop of bfloat16 `divmod` (two outputs).
pub(super) unsafe extern "C" fn divmod(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    let n = count(dims);
    if block_len(args, steps, n, &[2, 2, 2, 2], 2) == 1 {
        return bf16::divmod::<bfloat16>(args, dims, steps, data);
    }
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let (q, m) = (Operand::of(args, steps, 2), Operand::of(args, steps, 3));
        type D = funcs::FloorDivide;
        let seen = if n <= SHORT {
            run::<D, SHORT, true>(a, b, q, m, n)
        } else {
            run::<D, CHUNK, true>(a, b, q, m, n)
        };
        if seen {
            raise_invalid();
        }
    })
}

/// The chunks of one loop call: `o = f(a, b)` (and, when `TWO`, `divmod`'s
/// remainder into `o2`). Returns whether a signalling NaN was read.
///
/// # Safety
///
/// The operands are those of a loop call of `n` elements whose
/// [`block_len`] is not 1.
#[inline(always)]
unsafe fn run<O: Binary, const N: usize, const TWO: bool>(
    a: Operand,
    b: Operand,
    o: Operand,
    o2: Operand,
    n: usize,
) -> bool {
    let (mut ga, mut gb) = ([0u16; N], [0u16; N]);
    let (mut xs, mut ys) = ([0f32; N], [0f32; N]);
    let (mut rs, mut r2s) = ([0f32; N], [0f32; N]);
    let mut codes = [0u16; N];
    let mut scratch = [0u16; N];
    let mut seen = false;
    blocks(n, N, |start, len| {
        let pa = bf16_codes(a, start, &mut ga[..len]);
        let pb = bf16_codes(b, start, &mut gb[..len]);
        let (x, y) = (&mut xs[..len], &mut ys[..len]);
        seen |= widen(pa, pb, x, y);
        let (r, r2) = (&mut rs[..len], &mut r2s[..len]);
        let s = &mut scratch[..len];
        match O::LIBM {
            Libm::FloorDivide if TWO => divmod_chunk::<0>(x, y, r, r2, s),
            Libm::FloorDivide => divmod_chunk::<1>(x, y, r, r2, s),
            Libm::Remainder => divmod_chunk::<2>(x, y, r2, r, s),
            Libm::LogAddExp | Libm::LogAddExp2 => logaddexp_chunk::<O>(x, y, r, r2, s),
            Libm::Power => power_chunk(x, y, r, s),
            Libm::Hypot => hypot_chunk(x, y, r, s),
            Libm::Arctan2 => arctan2_chunk(x, y, r, s),
            Libm::Fmod => fmod_chunk(x, y, r, s),
            Libm::None => unreachable!("a loop without a chunked kernel"),
        }
        let c = &mut codes[..len];
        round(r, c, O::NONNEGATIVE);
        o.put_bytes(start, bytemuck::cast_slice(c), 2);
        if TWO {
            round(r2, c, false);
            o2.put_bytes(start, bytemuck::cast_slice(c), 2);
        }
    });
    seen
}

/// Whether a bfloat16 code is a signalling NaN.
#[inline(always)]
fn snan_code(c: u16) -> bool {
    (c & 0x7fc0 == 0x7f80) & (c & 0x003f != 0)
}

/// `x`, `y` = the codes `a`, `b` as float32 (a shift: payload and sign
/// kept); whether one is a signalling NaN.
#[inline(always)]
fn widen_impl(a: &[u16], b: &[u16], x: &mut [f32], y: &mut [f32]) -> bool {
    let mut seen = false;
    for (((u, v), &p), &q) in x.iter_mut().zip(y.iter_mut()).zip(a).zip(b) {
        seen |= snan_code(p) | snan_code(q);
        *u = f32::from_bits((p as u32) << 16);
        *v = f32::from_bits((q as u32) << 16);
    }
    seen
}

on_best_path!(
    /// [`widen_impl`] on the best instruction set.
    fn widen = widen_impl(a: &[u16], b: &[u16], x: &mut [f32], y: &mut [f32]) -> bool
);

/// `o` = `r` rounded to bfloat16 ([`round_bf16`]); NaN results `+NaN`
/// first when `positive_nan` (see [`funcs::Unary::NONNEGATIVE`]).
#[inline(always)]
fn round_impl(r: &[f32], o: &mut [u16], positive_nan: bool) {
    for (d, &v) in o.iter_mut().zip(r) {
        let v = if positive_nan && v.is_nan() {
            f32::NAN
        } else {
            v
        };
        *d = round_bf16(v.to_bits());
    }
}

on_best_path!(
    /// [`round_impl`] on the best instruction set.
    fn round = round_impl(r: &[f32], o: &mut [u16], positive_nan: bool) -> ()
);

// ---------------------------------------------------------------------------
// floor_divide, remainder, divmod.
// ---------------------------------------------------------------------------

/// [`funcs::divmod`] of the inputs it covers without a flag NumPy reports:
/// `q`, `m` = quotient and remainder; `slow[i]` = 1 for the other inputs
/// (their `q`, `m` are meaningless). Returns whether there is one.
///
/// Covered: `x` zero or normal and `y` normal, both finite, with `|x| <
/// 2^27 |y|` by exponents (the exact float64 `fmod` of
/// [`funcs::fmod_x87`]'s shortcut applies: no division by zero, no
/// invalid operation) and `|x| >= 2^-100 |y|` unless `x` is zero (the
/// quotient is a normal float32: no underflow, no overflow). The steps are
/// those of [`funcs::divmod`] in the same order on the same float32 values
/// (the comparisons on non-NaN values, `copysign(0, x / y)` as the sign of
/// the quotient); `fmod`'s product `n * y` is exact in float64 (`n <
/// 2^28`, `y` has 24 significant bits), so `x - n * y` equals the fused
/// `mul_add` of the shortcut.
#[inline(always)]
fn divmod_fast_impl(x: &[f32], y: &[f32], q: &mut [f32], m: &mut [f32], slow: &mut [u16]) -> bool {
    let mut any = 0u16;
    let lanes = q.iter_mut().zip(m.iter_mut()).zip(slow.iter_mut());
    for (((qo, mo), so), (&a, &b)) in lanes.zip(x.iter().zip(y)) {
        let (ax, ay) = (a.to_bits() & 0x7fff_ffff, b.to_bits() & 0x7fff_ffff);
        let (ex, ey) = (ax >> 23, ay >> 23);
        let fast = (ax < 0x7f80_0000)
            & (0x0080_0000..0x7f80_0000).contains(&ay)
            & (ex < ey + 27)
            & ((ax == 0) | ((ex >= 1) & (ex + 100 >= ey)));
        let (a, b) = if fast { (a, b) } else { (1.0, 1.0) };
        let (da, db) = (a as f64, b as f64);
        let n = (da / db).trunc();
        let r = (da - n * db) as f32;
        let m0 = if r == 0.0 { 0f32.copysign(a) } else { r };
        let div = (a - m0) / b;
        let nonzero = m0 != 0.0;
        let adjust = nonzero & ((b < 0.0) != (m0 < 0.0));
        let mm = if !nonzero {
            0f32.copysign(b)
        } else if adjust {
            m0 + b
        } else {
            m0
        };
        let div = if adjust { div - 1.0 } else { div };
        let f = div.floor();
        let qq = if div == 0.0 {
            f32::from_bits((a.to_bits() ^ b.to_bits()) & 0x8000_0000)
        } else if 0.5 < div - f {
            f + 1.0
        } else {
            f
        };
        *qo = qq;
        *mo = mm;
        *so = (!fast) as u16;
        any |= (!fast) as u16;
    }
    any != 0
}

on_best_path!(
    /// [`divmod_fast_impl`] on the best instruction set.
    fn divmod_fast = divmod_fast_impl(
        x: &[f32], y: &[f32], q: &mut [f32], m: &mut [f32], slow: &mut [u16]
    ) -> bool
);

/// `divmod` of a chunk: `WHAT` 0 both (`q`, `m`), 1 the quotient
/// (`floor_divide`, into `q`), 2 the remainder (`remainder`, into `m`).
#[inline(always)]
fn divmod_chunk<const WHAT: u8>(
    x: &[f32],
    y: &[f32],
    q: &mut [f32],
    m: &mut [f32],
    slow: &mut [u16],
) {
    let flags = FpFlags::save();
    let any = divmod_fast(x, y, q, m, slow);
    flags.restore_if_changed();
    if !any {
        return;
    }
    for i in 0..x.len() {
        if slow[i] == 0 {
            continue;
        }
        let (u, v) = (x[i], y[i]);
        match WHAT {
            0 => (q[i], m[i]) = funcs::divmod(u, v),
            1 => q[i] = nan_rule::<bfloat16, funcs::FloorDivide>(u, v, funcs::FloorDivide::f(u, v)),
            _ => m[i] = nan_rule::<bfloat16, funcs::Remainder>(u, v, funcs::Remainder::f(u, v)),
        }
    }
}

// ---------------------------------------------------------------------------
// fmod.
// ---------------------------------------------------------------------------

/// `m` = `fmod(x, y)` of bfloat16 operands (as float32) for the inputs
/// computed here: finite `x`, normal `y`, `|x| < 2^15 |y|` by exponents;
/// `slow[i]` = 1 for the other inputs (their `m` is meaningless). Returns
/// whether there is one.
///
/// In float32, exactly: the quotient `|x / y|` is below `2^15`, so its
/// rounding moves it by at most `2^-10`, while a quotient of two bfloat16
/// values that is not an integer lies at least `1/256` from one (`y`'s
/// significand has 8 bits): `n = trunc(x / y)` is the true quotient's
/// integer part; `n·y` (at most 15 and 8 significant bits) is exact, and so is
/// `x − n·y`, the remainder, a zero one taking `x`'s sign. These are
/// the results of `funcs::fmod_x87`, and the operations raise no flag but
/// inexact, as `fmodf` raises none for such operands.
#[inline(always)]
fn fmod_fast_impl(x: &[f32], y: &[f32], m: &mut [f32], slow: &mut [u16]) -> bool {
    let mut any = 0u16;
    for ((mo, so), (&a, &b)) in m.iter_mut().zip(slow.iter_mut()).zip(x.iter().zip(y)) {
        let (ax, ay) = (a.to_bits() & 0x7fff_ffff, b.to_bits() & 0x7fff_ffff);
        let fast = (ax < 0x7f80_0000)
            & (0x0080_0000..0x7f80_0000).contains(&ay)
            & ((ax >> 23) < (ay >> 23) + 15);
        let (a, b) = if fast { (a, b) } else { (1.0, 1.0) };
        let n = (a / b).trunc();
        let r = a - n * b;
        *mo = if r == 0.0 { 0f32.copysign(a) } else { r };
        *so = (!fast) as u16;
        any |= (!fast) as u16;
    }
    any != 0
}

on_best_path!(
    /// [`fmod_fast_impl`] on the best instruction set.
    fn fmod_fast = fmod_fast_impl(x: &[f32], y: &[f32], m: &mut [f32], slow: &mut [u16]) -> bool
);

/// A chunk's vector pass over the inputs it covers: `(x, y, r, slow)`,
/// `slow[i]` = 1 for the others; returns whether there is one.
type FastPass = fn(&[f32], &[f32], &mut [f32], &mut [u16]) -> bool;

/// `r` = `fast`'s results for the inputs it covers (its flags discarded:
/// it raises none that the C library raises for those inputs), then
/// `each(x, y)` element by element for the others (`slow` is scratch, as
/// `fast` fills it): the chunks of `fmod` and `hypot`.
#[inline(always)]
fn fast_then_each(
    fast: FastPass,
    each: impl Fn(f32, f32) -> f32,
    x: &[f32],
    y: &[f32],
    r: &mut [f32],
    slow: &mut [u16],
) {
    let flags = FpFlags::save();
    let any = fast(x, y, r, slow);
    flags.restore_if_changed();
    if any {
        for i in 0..x.len() {
            if slow[i] != 0 {
                r[i] = each(x[i], y[i]);
            }
        }
    }
}

/// `fmod` of a chunk into `m` (`slow` is scratch): [`fmod_fast`], then
/// the definition for the other inputs.
#[inline(always)]
fn fmod_chunk(x: &[f32], y: &[f32], m: &mut [f32], slow: &mut [u16]) {
    let each = |u, v| nan_rule::<bfloat16, funcs::Fmod>(u, v, funcs::Fmod::f(u, v));
    fast_then_each(fmod_fast, each, x, y, m, slow)
}

// ---------------------------------------------------------------------------
// logaddexp, logaddexp2.
// ---------------------------------------------------------------------------

/// `hi`, `lo` = the larger and the smaller of `x`, `y`, branch-free;
/// `special[i]` = 1 where they are equal or one is NaN (then `hi` = `lo`
/// = 0). Returns whether there is one.
#[inline(always)]
fn order_impl(x: &[f32], y: &[f32], hi: &mut [f32], lo: &mut [f32], special: &mut [u16]) -> bool {
    let mut any = 0u16;
    let lanes = hi.iter_mut().zip(lo.iter_mut()).zip(special.iter_mut());
    for (((h, l), s), (&u, &v)) in lanes.zip(x.iter().zip(y)) {
        let sp = (u == v) | u.is_nan() | v.is_nan();
        let gt = u > v;
        let (a, b) = if gt { (u, v) } else { (v, u) };
        *h = if sp { 0.0 } else { a };
        *l = if sp { 0.0 } else { b };
        *s = sp as u16;
        any |= sp as u16;
    }
    any != 0
}

on_best_path!(
    /// [`order_impl`] on the best instruction set.
    fn order = order_impl(
        x: &[f32], y: &[f32], hi: &mut [f32], lo: &mut [f32], special: &mut [u16]
    ) -> bool
);

/// `logaddexp` / `logaddexp2` of a chunk into `r` (`t` is scratch): the
/// definition's `hi + log1pf(expf(lo - hi))` (`hi + log1pf(exp2f(lo -
/// hi)) / ln 2`) in one loop of C library calls, element by element, so
/// every flag they raise is raised as before.
#[inline(always)]
fn logaddexp_chunk<O: Binary>(
    x: &[f32],
    y: &[f32],
    r: &mut [f32],
    t: &mut [f32],
    special: &mut [u16],
) {
    let flags = FpFlags::save();
    let any = order(x, y, r, t, special);
    flags.restore_if_changed();
    if O::LIBM == Libm::LogAddExp {
        for (h, &l) in r.iter_mut().zip(t.iter()) {
            *h += libm::log1pf(libm::expf(l - *h));
        }
    } else {
        for (h, &l) in r.iter_mut().zip(t.iter()) {
            *h += libm::log1pf(libm::exp2f(l - *h)) / std::f32::consts::LN_2;
        }
    }
    if any {
        for i in 0..x.len() {
            if special[i] != 0 {
                r[i] = nan_rule::<bfloat16, O>(x[i], y[i], O::f(x[i], y[i]));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// power.
// ---------------------------------------------------------------------------

/// `nan[i]` = 1 and `r[i]` = `nan_value` where `x` is negative, finite and
/// not zero and `y` finite and not an integer (glibc's `powf` gives its
/// invalid-operation NaN); `order` = the other indices, ascending. Returns
/// their count.
#[inline(always)]
fn power_split_impl(
    x: &[f32],
    y: &[f32],
    nan_value: f32,
    r: &mut [f32],
    nan: &mut [u16],
    order: &mut [u16],
) -> usize {
    for (((d, s), &u), &v) in r.iter_mut().zip(nan.iter_mut()).zip(x).zip(y) {
        let ux = u.to_bits();
        let negative = (ux > 0x8000_0000) & (ux < 0xff80_0000);
        let fractional = v.is_finite() & (v.trunc() != v);
        let invalid = negative & fractional;
        *s = invalid as u16;
        *d = if invalid { nan_value } else { 0.0 };
    }
    let mut k = 0;
    for (i, &s) in nan.iter().enumerate() {
        order[k] = i as u16;
        k += (s == 0) as usize;
    }
    k
}

on_best_path!(
    /// [`power_split_impl`] on the best instruction set.
    fn power_split = power_split_impl(
        x: &[f32], y: &[f32], nan_value: f32, r: &mut [f32], nan: &mut [u16], order: &mut [u16]
    ) -> usize
);

/// The bits of `powf(-2, 0.5)`, the C library's invalid-operation NaN of
/// `powf` (0: not known yet).
static POW_NAN: AtomicU32 = AtomicU32::new(0);

/// `powf`'s invalid-operation NaN, computed once (flags left as they were).
#[inline]
fn pow_nan() -> f32 {
    let bits = POW_NAN.load(Ordering::Relaxed);
    if bits != 0 {
        return f32::from_bits(bits);
    }
    let flags = FpFlags::save();
    let v = libm::powf(std::hint::black_box(-2.0), std::hint::black_box(0.5));
    flags.restore();
    POW_NAN.store(v.to_bits(), Ordering::Relaxed);
    v
}

/// `power` of a chunk into `r` (`s` is scratch). The inputs whose result
/// is the invalid-operation NaN take it without a call, but one: its real
/// call raises the invalid flag, and if it gave another NaN than
/// [`pow_nan`] (a C library whose NaN depends on the operands) all of them
/// are called.
#[inline(always)]
fn power_chunk(x: &[f32], y: &[f32], r: &mut [f32], s: &mut [u16]) {
    let len = x.len();
    let mut order = [0u16; CHUNK];
    let order = &mut order[..len];
    let nan = pow_nan();
    let flags = FpFlags::save();
    let k = power_split(x, y, nan, r, s, order);
    flags.restore_if_changed();
    if k < len {
        let first = s.iter().position(|&v| v != 0).unwrap_or(0);
        let v = libm::powf(x[first], y[first]);
        if v.to_bits() != nan.to_bits() {
            for i in 0..len {
                if s[i] != 0 {
                    r[i] = libm::powf(x[i], y[i]);
                }
            }
        }
    }
    for &i in &order[..k] {
        let i = i as usize;
        r[i] = libm::powf(x[i], y[i]);
    }
}

// ---------------------------------------------------------------------------
// hypot.
// ---------------------------------------------------------------------------

/// glibc's `hypotf` of the inputs whose larger magnitude lies in `[2^-126,
/// 2^127)`: `(float) sqrt((double) x * x + (double) y * y)` (the squares
/// of bfloat16 values are exact in float64, so a fused multiply-add gives
/// the same sum); `slow[i]` = 1 for the others. Returns whether there is
/// one.
#[inline(always)]
fn hypot_fast_impl(x: &[f32], y: &[f32], r: &mut [f32], slow: &mut [u16]) -> bool {
    let mut any = 0u16;
    for (((d, s), &u), &v) in r.iter_mut().zip(slow.iter_mut()).zip(x).zip(y) {
        let big = (u.to_bits() & 0x7fff_ffff).max(v.to_bits() & 0x7fff_ffff);
        let fast = (0x0080_0000..0x7f00_0000).contains(&big);
        let (u, v) = if fast {
            (u as f64, v as f64)
        } else {
            (0.0, 0.0)
        };
        *d = (u * u + v * v).sqrt() as f32;
        *s = (!fast) as u16;
        any |= (!fast) as u16;
    }
    any != 0
}

on_best_path!(
    /// [`hypot_fast_impl`] on the best instruction set.
    fn hypot_fast = hypot_fast_impl(x: &[f32], y: &[f32], r: &mut [f32], slow: &mut [u16]) -> bool
);

/// `hypot` of a chunk into `r` (`s` is scratch).
#[inline(always)]
fn hypot_chunk(x: &[f32], y: &[f32], r: &mut [f32], s: &mut [u16]) {
    fast_then_each(hypot_fast, |u, v| libm::hypotf(u, v), x, y, r, s)
}

// ---------------------------------------------------------------------------
// arctan2.
// ---------------------------------------------------------------------------

/// Classes of [`arctan2_class`].
const ATAN2_CLASSES: usize = 24;

/// The class of `atan2f(y, x)`'s branches: the two signs and the range of
/// `|y / x|` among the intervals of `atanf` (below 7/16, 11/16, 19/16,
/// 39/16, above), and one class for the non-finite, zero and NaN operands.
#[inline(always)]
fn arctan2_class_impl(y: &[f32], x: &[f32], class: &mut [u16]) {
    for ((c, &v), &u) in class.iter_mut().zip(y).zip(x) {
        let (ay, ax) = (v.abs(), u.abs());
        let t = ay / ax;
        let range = (t >= 0.4375) as u16
            + (t >= 0.6875) as u16
            + (t >= 1.1875) as u16
            + (t >= 2.4375) as u16;
        let signs = (v.is_sign_negative() as u16) | ((u.is_sign_negative() as u16) << 1);
        let odd = !(ax.is_finite() & ay.is_finite()) | (ax == 0.0) | (ay == 0.0);
        *c = if odd { 20 } else { signs * 5 + range };
    }
}

on_best_path!(
    /// [`arctan2_class_impl`] on the best instruction set.
    fn arctan2_class = arctan2_class_impl(y: &[f32], x: &[f32], class: &mut [u16]) -> ()
);

/// `arctan2` of a chunk into `r` (`class` is scratch): every input through
/// `atan2f`, grouped by [`arctan2_class`].
#[inline(always)]
fn arctan2_chunk(y: &[f32], x: &[f32], r: &mut [f32], class: &mut [u16]) {
    let flags = FpFlags::save();
    arctan2_class(y, x, class);
    flags.restore_if_changed();
    let mut start = [0usize; ATAN2_CLASSES + 1];
    for &c in class.iter() {
        start[c as usize + 1] += 1;
    }
    for k in 0..ATAN2_CLASSES {
        start[k + 1] += start[k];
    }
    let mut order = [0u16; CHUNK];
    for (i, &c) in class.iter().enumerate() {
        let slot = &mut start[c as usize];
        order[*slot] = i as u16;
        *slot += 1;
    }
    for &i in &order[..y.len()] {
        let i = i as usize;
        r[i] = libm::atan2f(y[i], x[i]);
    }
}

// ---------------------------------------------------------------------------
// ldexp.
// ---------------------------------------------------------------------------

/// `r = ldexp(a, e)` of bfloat16 codes `a` ([`funcs::ldexp_f32`]: exact in
/// float64, rounded once to float32, with `ldexpf`'s flags raised by the
/// same conversion in every lane); whether a signalling NaN was read.
#[inline(always)]
fn ldexp_impl(a: &[u16], e: &[c_int], r: &mut [f32]) -> bool {
    let mut seen = false;
    for ((d, &p), &k) in r.iter_mut().zip(a).zip(e) {
        seen |= snan_code(p);
        *d = funcs::ldexp_f32(f32::from_bits((p as u32) << 16), k);
    }
    seen
}

on_best_path!(
    /// [`ldexp_impl`] on the best instruction set.
    fn ldexp_block = ldexp_impl(a: &[u16], e: &[c_int], r: &mut [f32]) -> bool
);

/// Loop of bfloat16 `ldexp(x, n)` with a C `int` exponent, in chunks (the
/// exponents gathered when strided).
pub(super) unsafe extern "C" fn ldexp(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    let n = count(dims);
    if block_len(args, steps, n, &[2, 4, 2], 2) == 1 {
        return super::float::ldexp_loop(args, dims, steps, data);
    }
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let e = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut ga = [0u16; CHUNK];
        let mut ge = [0 as c_int; CHUNK];
        let mut rs = [0f32; CHUNK];
        let mut codes = [0u16; CHUNK];
        let mut seen = false;
        blocks(n, CHUNK, |start, len| {
            let pa = bf16_codes(a, start, &mut ga[..len]);
            let pe: &[c_int] = if e.contiguous(4) && (e.at(start) as usize).is_multiple_of(4) {
                std::slice::from_raw_parts(e.at(start) as *const c_int, len)
            } else {
                for (k, v) in ge[..len].iter_mut().enumerate() {
                    *v = e.read::<c_int>(start + k);
                }
                &ge[..len]
            };
            let r = &mut rs[..len];
            seen |= ldexp_block(pa, pe, r);
            let c = &mut codes[..len];
            round(r, c, false);
            o.put_bytes(start, bytemuck::cast_slice(c), 2);
        });
        if seen {
            raise_invalid();
        }
    })
}
