//! The scalar path of every table-driven float loop, and the private
//! functions the test suite and the benchmark use to compare the two.
//!
//! The scalar path evaluates a ufunc's definition ([`super::funcs`]) on one
//! input with the descriptor's scalar conversions (`decode_f32`,
//! `encode_f32` of the library's core, one element at a time), recording
//! the floating-point flags the evaluation raises. The tables were built
//! from the same definitions through the slice kernels, in blocks; the
//! loops read them. [`_ufunc_check`] runs the registered loop on every
//! input, one element per call (reading the flags it leaves) and then all
//! inputs in one call, contiguous and strided, and compares each result
//! and each input's flags with the scalar path.

use std::hint::black_box;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;
use std::time::Instant;

use numpy::npyffi::npy_intp;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::desc::FloatDesc;
use super::float::KEEP_EXPONENT;
use super::funcs::{self, *};
use super::table::Lazy;
use super::{clear_flags, reported_flags, FpFlags, LoopFn, FLAG_INVALID};

/// The scalar path of one table-driven loop: the result(s) and flags of
/// one input.
#[derive(Clone, Copy)]
pub(crate) enum Scalar {
    /// One operand: `(first output, second output, flags)` of a code.
    One(fn(&FloatDesc, u32) -> (u32, i32, u8)),
    /// Two operands: `(first output, second output, flags)`.
    Two(fn(&FloatDesc, u32, u32) -> (u32, i32, u8)),
}

/// The outputs of a table-driven loop.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outs {
    /// One code.
    Code,
    /// One boolean.
    Bool,
    /// Two codes.
    TwoCodes,
    /// A code and a C `int`.
    CodeInt,
}

/// A registered table-driven loop and its scalar path.
struct Entry {
    num: c_int,
    name: &'static str,
    f: LoopFn,
    /// The loop's [`Lazy`] (an address: `'static`).
    lazy: usize,
    scalar: Scalar,
    outs: Outs,
}

static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Records a table-driven loop for [`_ufunc_check`].
pub(crate) fn record(
    num: c_int,
    name: &'static str,
    f: LoopFn,
    lazy: *mut c_void,
    scalar: Scalar,
    outs: Outs,
) {
    ENTRIES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Entry {
            num,
            name,
            f,
            lazy: lazy as usize,
            scalar,
            outs,
        });
}

/// Runs `f` and returns its result with the flags it raised (cleared
/// afterwards).
#[inline(always)]
fn probed<R>(f: impl FnOnce() -> R) -> (R, u8) {
    clear_flags();
    let r = black_box(f());
    let raised = reported_flags();
    clear_flags();
    (r, raised)
}

/// The invalid flag if `seen`.
fn invalid_if(seen: bool) -> u8 {
    if seen {
        FLAG_INVALID
    } else {
        0
    }
}

// ---------------------------------------------------------------------------
// The scalar path.
// ---------------------------------------------------------------------------

/// A value function of one operand.
pub(crate) fn value1<O: Unary>(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    if d.wide {
        let x = d.decode64(c);
        let (r, f) = probed(|| O::f(black_box(x)));
        return (d.encode64(r), 0, f);
    }
    let x = d.decode(c);
    let snan = invalid_if(d.eigen() && funcs::is_snan(x));
    let (mut r, f) = probed(|| O::f(black_box(x)));
    if O::NONNEGATIVE && d.eigen() && r.is_nan() {
        r = f32::NAN;
    }
    (d.encode(r), 0, f | snan)
}

/// A bit-pattern function of one operand.
pub(crate) fn code1<O: CodeUnary>(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    let snan = invalid_if(O::READS_VALUE && d.eigen() && funcs::bf16_snan_code(c));
    (O::f(&d.format, &Consts::of(d), c), 0, snan)
}

/// A predicate.
pub(crate) fn pred<O: CodePredicate>(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    let snan = invalid_if(O::READS_VALUE && d.eigen() && funcs::bf16_snan_code(c));
    (O::f(&d.format, c) as u32, 0, snan)
}

/// `spacing`.
pub(crate) fn spacing(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    let f = &d.format;
    let k = Consts::of(d);
    let away = f.inf_code().unwrap_or(f.max_code());
    let next = next_after(f, c, CopySign::f(f, &k, away, c));
    let at_max = !f.has_infinity() && abs_code(f, c) == f.max_code();
    let (r, fl) = if d.wide {
        let (r, fl) = probed(|| black_box(d.decode64(next)) - black_box(d.decode64(c)));
        (d.encode64(r), fl)
    } else {
        let (r, fl) = probed(|| black_box(d.decode(next)) - black_box(d.decode(c)));
        (d.encode(r), fl)
    };
    let r = if !at_max {
        r
    } else if f.has_nan() {
        CopySign::f(f, &k, quiet_nan(f), c)
    } else {
        0
    };
    (r, 0, fl)
}

/// `modf`.
pub(crate) fn modf(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    if d.wide {
        let ((a, b), f) = probed(|| black_box(d.decode64(c)).c_modf());
        return (d.encode64(a), d.encode64(b) as i32, f);
    }
    let x = d.decode(c);
    let snan = invalid_if(d.eigen() && funcs::is_snan(x));
    let ((a, b), f) = probed(|| black_box(x).c_modf());
    (d.encode(a), d.encode(b) as i32, f | snan)
}

/// `frexp` ([`KEEP_EXPONENT`] where ml_dtypes writes no exponent).
pub(crate) fn frexp(d: &FloatDesc, c: u32) -> (u32, i32, u8) {
    if d.wide {
        let x = d.decode64(c);
        if !d.format.signed && x.is_nan() {
            return (d.encode64(x), KEEP_EXPONENT.into(), 0);
        }
        let ((m, e), f) = probed(|| black_box(x).c_frexp());
        return (d.encode64(m), e, f);
    }
    let x = d.decode(c);
    let snan = invalid_if(d.eigen() && funcs::is_snan(x));
    if !d.format.signed && x.is_nan() {
        return (d.encode(x), KEEP_EXPONENT.into(), snan);
    }
    let ((m, e), f) = probed(|| black_box(x).c_frexp());
    (d.encode(m), e, f | snan)
}

/// A value function of two one-byte operands.
pub(crate) fn value2<O: Binary>(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let (x, y) = (d.decode(a), d.decode(b));
    let rule = rule_of::<O>(d.semantics);
    let (r, f) = probed(|| {
        let (x, y) = (black_box(x), black_box(y));
        apply_nan_rule(rule, x, y, O::f(x, y))
    });
    let f = if O::QUIET_UNSIGNED && !d.format.signed {
        0
    } else {
        f
    };
    (d.encode(r), 0, f)
}

/// A bit-pattern function of two operands; reading a bfloat16 signalling
/// NaN's value raises invalid.
pub(crate) fn code2<O: CodeBinary>(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let snan =
        O::READS_VALUE && d.eigen() && (funcs::bf16_snan_code(a) || funcs::bf16_snan_code(b));
    (O::f(&d.format, &Consts::of(d), a, b), 0, invalid_if(snan))
}

/// A logical function of two operands' truth values; reading a bfloat16
/// signalling NaN raises invalid.
pub(crate) fn logical<O: Logical>(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let snan = d.eigen() && (funcs::bf16_snan_code(a) || funcs::bf16_snan_code(b));
    let r = O::f(truthy(&d.format, a), truthy(&d.format, b));
    (r as u32, 0, invalid_if(snan))
}

/// `divmod` of two one-byte operands.
pub(crate) fn divmod(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let ((q, m), f) = probed(|| funcs::divmod(black_box(d.decode(a)), black_box(d.decode(b))));
    (d.encode(q), d.encode(m) as i32, f)
}

/// A value function of two bfloat16 operands, as the element loop of
/// `bf16.rs` evaluates it: the float32 definition with bfloat16's NaN
/// rule, a NaN result of a never-negative function positive, and the
/// invalid flag for a signalling NaN operand.
pub(crate) fn bf16_value2<O: Binary>(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let (x, y) = (d.decode(a), d.decode(b));
    let snan = invalid_if(funcs::is_snan(x) || funcs::is_snan(y));
    let (mut r, f) = probed(|| {
        let (x, y) = (black_box(x), black_box(y));
        apply_nan_rule(O::NAN_BF16, x, y, O::f(x, y))
    });
    if O::NONNEGATIVE && r.is_nan() {
        r = f32::NAN;
    }
    (d.encode(r), 0, f | snan)
}

/// `divmod` of two bfloat16 operands ([`divmod`], and the invalid flag for
/// a signalling NaN operand).
pub(crate) fn bf16_divmod(d: &FloatDesc, a: u32, b: u32) -> (u32, i32, u8) {
    let (q, m, f) = divmod(d, a, b);
    let snan = funcs::bf16_snan_code(a) || funcs::bf16_snan_code(b);
    (q, m, f | invalid_if(snan))
}

// ---------------------------------------------------------------------------
// Running a loop.
// ---------------------------------------------------------------------------

/// Output bytes of each output of `outs` for a format of `size` bytes.
fn out_sizes(outs: Outs, size: usize) -> (usize, usize) {
    match outs {
        Outs::Code => (size, 0),
        Outs::Bool => (1, 0),
        Outs::TwoCodes => (size, size),
        Outs::CodeInt => (size, 4),
    }
}

/// Reads element `k` (`size` bytes, little-endian) of `buf` as an integer.
fn read(buf: &[u8], k: usize, size: usize) -> i64 {
    match size {
        1 => buf[k] as i64,
        2 => u16::from_le_bytes([buf[2 * k], buf[2 * k + 1]]) as i64,
        4 => i32::from_le_bytes(buf[4 * k..4 * k + 4].try_into().expect("4 bytes")) as i64,
        _ => unreachable!(),
    }
}

/// Runs loop `f` on `n` elements: inputs packed in `ins` (`isize` bytes
/// each, `nin` of them, element `k` of input `j` at `ins[j][k * step]`),
/// outputs into `outs` (sizes `osizes`); `step` elements apart
/// (1: contiguous). Returns the flags left raised.
#[allow(clippy::too_many_arguments)]
unsafe fn call(
    f: LoopFn,
    data: *mut c_void,
    ins: &mut [Vec<u8>],
    isize: usize,
    outs: &mut [Vec<u8>],
    osizes: &[usize],
    n: usize,
    step: usize,
) -> u8 {
    let mut args = [std::ptr::null_mut::<c_char>(); 4];
    let mut steps = [0 as npy_intp; 4];
    for (j, v) in ins.iter_mut().enumerate() {
        args[j] = v.as_mut_ptr().cast();
        steps[j] = (isize * step) as npy_intp;
    }
    for (j, (v, &s)) in outs.iter_mut().zip(osizes).enumerate() {
        args[ins.len() + j] = v.as_mut_ptr().cast();
        steps[ins.len() + j] = (s * step) as npy_intp;
    }
    let mut dims = [n as npy_intp];
    clear_flags();
    f(
        args.as_mut_ptr(),
        dims.as_mut_ptr(),
        steps.as_mut_ptr(),
        data,
    );
    let raised = reported_flags();
    clear_flags();
    raised
}

/// `_ufunc_check(ufunc, dtype)`: compares the table-driven loop of
/// `numpy.<ufunc>` for `dtype` with its scalar path on every input (every
/// stored code, or every pair of one-byte codes): one element per call,
/// results and flags; then every input in one call, contiguous and every
/// second element, results and the union of the flags. Returns a dict
/// `{"inputs", "mismatches", "first", "shape"}` (`first`: the first
/// mismatch, or None; `shape`: how the AVX2 path computes a one-byte
/// table, `"masked"` (bit operations, with the number of exception codes
/// as `"masked+N"`), `"bits"` (a 256-bit map of booleans) or `"table"`;
/// `"computed"`: whether bfloat16 `exp` / `exp2` compute on the current
/// kernel path instead of reading the table, `super::expk`; `"binade"`:
/// for bfloat16 `square`, `reciprocal`, `deg2rad` and `rad2deg`, the
/// exponent fields `(least, greatest)` whose codes take the look-up of
/// their fraction bits on the current kernel path, else None,
/// `super::binade`).
///
/// Raises ValueError if the ufunc has no table-driven loop for the dtype.
#[pyfunction]
pub(crate) fn _ufunc_check<'py>(
    py: Python<'py>,
    ufunc: &str,
    dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guard::run(|| {
        let num: c_int = dtype.getattr("num")?.extract()?;
        let (f, lazy, scalar, outs) = {
            let entries = ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
            let e = entries
                .iter()
                .find(|e| e.num == num && e.name == ufunc)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "numpy.{ufunc} has no table-driven loop for {}",
                        dtype.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?;
            (e.f, e.lazy, e.scalar, e.outs)
        };
        // SAFETY: recorded from a leaked `Lazy`.
        let l = unsafe { &*(lazy as *const Lazy) };
        let d = l.desc;
        let saved = FpFlags::save();
        let (mismatches, inputs, first) = py.detach(|| check(f, l, d, scalar, outs));
        saved.restore();
        let r = PyDict::new(py);
        r.set_item("inputs", inputs)?;
        r.set_item("mismatches", mismatches)?;
        r.set_item("first", first)?;
        r.set_item("shape", l.get().shape8.name())?;
        r.set_item("computed", l.get().exp.is_some_and(|e| e.serves()))?;
        r.set_item("binade", super::binade::served(ufunc).filter(|_| d.eigen()))?;
        Ok(r)
    })
}

/// The body of [`_ufunc_check`]: (mismatches, inputs, first mismatch).
fn check(
    f: LoopFn,
    l: &Lazy,
    d: &FloatDesc,
    scalar: Scalar,
    outs: Outs,
) -> (usize, usize, Option<String>) {
    let data = l as *const Lazy as *mut c_void;
    let mask = d.format.code_mask();
    // The inputs: every stored code; every pair of one-byte codes; for
    // two-byte formats every code paired (both ways) with 16 codes of every
    // class (zeros, subnormals, the smallest normal, ±1/2, ±1, 3, the
    // largest, infinities, quiet and signalling NaNs), then 2^20 pairs of
    // codes drawn at random (a fixed xorshift sequence).
    let pairs: Vec<(u32, u32)> = match (scalar, d.size) {
        (Scalar::One(_), _) => (0..1u32 << (8 * d.size)).map(|c| (c, 0)).collect(),
        (Scalar::Two(_), 1) => (0..1u32 << 16).map(|i| (i >> 8, i & 0xff)).collect(),
        (Scalar::Two(_), _) => {
            let mut v = Vec::with_capacity(2 * SPECIAL.len() * 65536 + RANDOM_PAIRS);
            for c in 0..1u32 << 16 {
                for &s in &SPECIAL {
                    v.push((c, s));
                    v.push((s, c));
                }
            }
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..RANDOM_PAIRS {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                v.push(((state >> 16) as u32 & 0xffff, (state >> 40) as u32 & 0xffff));
            }
            v
        }
    };
    let (nin, isize) = match scalar {
        Scalar::One(_) => (1, d.size),
        Scalar::Two(_) => (2, d.size),
    };
    let n = pairs.len();
    let (s1, s2) = out_sizes(outs, d.size);
    let osizes: Vec<usize> = [s1, s2].into_iter().filter(|&s| s > 0).collect();
    // The expected result of each input (on the masked codes).
    let expect = |i: usize| -> (u32, i32, u8) {
        let (x, y) = pairs[i];
        match scalar {
            Scalar::One(g) => g(d, x & mask),
            Scalar::Two(g) => g(d, x & mask, y & mask),
        }
    };
    let input = |i: usize, j: usize| -> u32 {
        if j == 0 {
            pairs[i].0
        } else {
            pairs[i].1
        }
    };
    let put = |buf: &mut Vec<u8>, k: usize, v: u32, size: usize| {
        buf[k * size..(k + 1) * size].copy_from_slice(&v.to_le_bytes()[..size]);
    };
    let mut mismatches = 0;
    let mut first = None;
    let mut note = |what: String, first: &mut Option<String>| {
        mismatches += 1;
        if first.is_none() {
            *first = Some(what);
        }
    };
    let mut expected = Vec::with_capacity(n);
    let mut union = 0u8;
    // One element per call: results and flags of each input.
    let mut ins: Vec<Vec<u8>> = (0..nin).map(|_| vec![0u8; isize]).collect();
    let mut o: Vec<Vec<u8>> = osizes.iter().map(|&s| vec![0u8; s]).collect();
    for i in 0..n {
        let (e1, e2, ef) = expect(i);
        // A single element's `frexp` exponent where ml_dtypes writes none:
        // the first element of a call gets 0.
        let w2 = if outs == Outs::CodeInt && e2 == i32::from(KEEP_EXPONENT) {
            0
        } else {
            e2
        };
        for (j, b) in ins.iter_mut().enumerate() {
            put(b, 0, input(i, j), isize);
        }
        // SAFETY: buffers of one element each, as the signature needs.
        let got_f = unsafe { call(f, data, &mut ins, isize, &mut o, &osizes, 1, 1) };
        let g1 = read(&o[0], 0, osizes[0]) as u32;
        let g2 = if osizes.len() > 1 {
            read(&o[1], 0, osizes[1]) as i32
        } else {
            0
        };
        let w1 = e1 & out_mask(outs, mask);
        if g1 != w1 || g2 != w2 || got_f != ef {
            note(
                format!(
                    "input {i:#x}: table path gives ({g1:#x}, {g2}) with flags {got_f:#x}, \
                     scalar path ({w1:#x}, {w2}) with flags {ef:#x}"
                ),
                &mut first,
            );
        }
        union |= ef;
        expected.push((w1, e2));
    }
    // Every input in one call, contiguous (step 1) and every second
    // element (step 2): the loop's block paths.
    for step in [1usize, 2] {
        let mut ins: Vec<Vec<u8>> = (0..nin).map(|_| vec![0u8; n * step * isize]).collect();
        for (j, b) in ins.iter_mut().enumerate() {
            for i in 0..n {
                put(b, i * step, input(i, j), isize);
            }
        }
        let mut o: Vec<Vec<u8>> = osizes.iter().map(|&s| vec![0u8; n * step * s]).collect();
        // SAFETY: buffers of `n` elements `step` apart.
        let got_f = unsafe { call(f, data, &mut ins, isize, &mut o, &osizes, n, step) };
        if got_f != union {
            note(
                format!("all inputs, step {step}: flags {got_f:#x}, scalar path {union:#x}"),
                &mut first,
            );
        }
        let mut last: i32 = 0;
        for (i, &(w1, w2)) in expected.iter().enumerate() {
            let g1 = read(&o[0], i * step, osizes[0]) as u32;
            let w2 = if outs == Outs::CodeInt {
                if w2 == i32::from(KEEP_EXPONENT) {
                    last
                } else {
                    last = w2;
                    w2
                }
            } else {
                w2
            };
            let g2 = if osizes.len() > 1 {
                read(&o[1], i * step, osizes[1]) as i32
            } else {
                0
            };
            if g1 != w1 || g2 != w2 {
                note(
                    format!(
                        "all inputs, step {step}, input {i:#x}: table path gives ({g1:#x}, {g2}), \
                         scalar path ({w1:#x}, {w2})"
                    ),
                    &mut first,
                );
            }
        }
    }
    (mismatches, n, first)
}

/// The codes every two-byte code is paired with (both ways) by
/// [`_ufunc_check`].
const SPECIAL: [u32; 16] = [
    0x0000, 0x8000, 0x8001, 0x007f, 0x0080, 0x3f00, 0xbf00, 0x3f80, 0xbf81, 0x4040, 0x7f7f, 0x7f80,
    0xff80, 0xffc0, 0x7f81, 0xffbf,
];

/// Random pairs of two-byte codes [`_ufunc_check`] adds.
const RANDOM_PAIRS: usize = 1 << 20;

/// The bits of a first output that are compared: the format's code bits,
/// or the boolean.
fn out_mask(outs: Outs, mask: u32) -> u32 {
    match outs {
        Outs::Bool => 1,
        _ => mask,
    }
}

/// `_ufunc_table_info(ufunc, dtype)`: `{"bytes", "build_seconds"}` of the
/// result table of `numpy.<ufunc>`'s loop for `dtype`: the bytes it holds
/// and the time one build takes (built afresh, not kept), for the
/// benchmark's report.
///
/// Raises ValueError if the ufunc has no table-driven loop for the dtype.
#[pyfunction]
pub(crate) fn _ufunc_table_info<'py>(
    py: Python<'py>,
    ufunc: &str,
    dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guard::run(|| {
        let num: c_int = dtype.getattr("num")?.extract()?;
        let lazy = ENTRIES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|e| e.num == num && e.name == ufunc)
            .map(|e| e.lazy)
            .ok_or_else(|| {
                PyValueError::new_err(format!("numpy.{ufunc} has no table-driven loop here"))
            })?;
        // SAFETY: recorded from a leaked `Lazy`.
        let l = unsafe { &*(lazy as *const Lazy) };
        let t0 = Instant::now();
        let t = py.detach(|| l.build_fresh());
        let secs = t0.elapsed().as_secs_f64();
        let r = PyDict::new(py);
        r.set_item("bytes", t.bytes())?;
        r.set_item("build_seconds", secs)?;
        Ok(r)
    })
}

/// `_ufunc_loop_stats()`: `(loops registered with NumPy, distinct loop
/// functions among them)` over every dtype registered so far.
#[pyfunction]
pub(crate) fn _ufunc_loop_stats() -> PyResult<(usize, usize)> {
    crate::guard::run(|| Ok(super::loop_stats()))
}

/// `_ufunc_selfcheck(step=1)`: the shortcuts of two float32 functions against
/// the C library on a grid of inputs, results (bits) and flags:
/// `fmod` (the exact float64 computation and x87 `fprem`, against `fmodf`
/// with x87 NaN propagation) on every pair of a bfloat16 code with 512
/// codes of every class, and `ldexp` (the exact float64 computation,
/// against `ldexpf`) on every bfloat16 code with every exponent from -350
/// to 350 and the `int` extremes. `step` > 1 takes every `step`-th
/// bfloat16 code only. Returns `{"fmod": mismatches, "ldexp": mismatches,
/// "first": the first one or None}`.
#[pyfunction]
#[pyo3(signature = (step=1))]
pub(crate) fn _ufunc_selfcheck(py: Python<'_>, step: usize) -> PyResult<Bound<'_, PyDict>> {
    crate::guard::run(|| {
        let saved = FpFlags::save();
        let step = step.max(1);
        let (fm, lm, first) = py.detach(|| selfcheck(step));
        saved.restore();
        let r = PyDict::new(py);
        r.set_item("fmod", fm)?;
        r.set_item("ldexp", lm)?;
        r.set_item("first", first)?;
        Ok(r)
    })
}

/// The body of [`_ufunc_selfcheck`].
fn selfcheck(step: usize) -> (usize, usize, Option<String>) {
    let bf = |c: u32| f32::from_bits(c << 16);
    let mut first = None;
    // fmod: the reference is `fmodf` with the x87 rule for two NaNs.
    let reference = |x: f32, y: f32| -> f32 {
        let r = super::libm::fmodf(x, y);
        if !(x.is_nan() && y.is_nan()) {
            return r;
        }
        let (qx, qy) = (x.to_bits() | 0x0040_0000, y.to_bits() | 0x0040_0000);
        let (mx, my) = (qx & 0x007f_ffff, qy & 0x007f_ffff);
        f32::from_bits(if mx > my {
            qx
        } else if my > mx {
            qy
        } else {
            qx & qy
        })
    };
    let mut fm = 0;
    for c in (0..1u32 << 16).step_by(step) {
        for j in 0..512u32 {
            // every class: the low codes, the high codes and a spread
            let d = match j {
                0..=127 => j,
                128..=255 => 0x7f00 + j,
                _ => j.wrapping_mul(2_654_435_761) >> 16,
            } ^ if j % 2 == 1 { 0x8000 } else { 0 };
            for (x, y) in [(bf(c), bf(d)), (bf(d), bf(c))] {
                let (want, wf) = probed(|| reference(black_box(x), black_box(y)));
                let (got, gf) = probed(|| fmod_x87(black_box(x), black_box(y)));
                if want.to_bits() != got.to_bits() || wf != gf {
                    fm += 1;
                    if first.is_none() {
                        first = Some(format!(
                            "fmod({:#x}, {:#x}): {:#x} flags {gf:#x}, fmodf {:#x} flags {wf:#x}",
                            x.to_bits(),
                            y.to_bits(),
                            got.to_bits(),
                            want.to_bits()
                        ));
                    }
                }
            }
        }
    }
    let mut lm = 0;
    let exps = (-350..=350).chain([c_int::MIN, c_int::MIN + 1, c_int::MAX, -1000, 1000]);
    let exps: Vec<c_int> = exps.collect();
    for c in (0..1u32 << 16).step_by(step) {
        let x = bf(c);
        for &e in &exps {
            let (want, wf) = probed(|| super::libm::ldexpf(black_box(x), black_box(e)));
            let (got, gf) = probed(|| funcs::ldexp_f32(black_box(x), black_box(e)));
            if want.to_bits() != got.to_bits() || wf != gf {
                lm += 1;
                if first.is_none() {
                    first = Some(format!(
                        "ldexp({:#x}, {e}): {:#x} flags {gf:#x}, ldexpf {:#x} flags {wf:#x}",
                        x.to_bits(),
                        got.to_bits(),
                        want.to_bits()
                    ));
                }
            }
        }
    }
    (fm, lm, first)
}
