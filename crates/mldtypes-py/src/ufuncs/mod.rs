//! NumPy ufunc inner loops for every dtype of the module, registered with
//! `PyUFunc_RegisterLoopForType` exactly where ml_dtypes 0.6.0 registers its
//! own (`ml_dtypes/_src/ufuncs.h` and the `Register*UFuncs` functions of
//! `custom_float.h`, `intn_numpy.h`, `custom_complex.h`):
//!
//! - [`float`]: 75 ufuncs for each of the 12 float formats;
//! - [`int`]: `add`, `subtract`, `multiply`, `floor_divide`, `remainder` for
//!   each of the 6 sub-byte integer types;
//! - [`complex`]: 51 ufuncs for each of `complex32` and `bcomplex32` (ml_dtypes
//!   0.6.0's 50 and `float_power`, as its main branch registers it).
//!
//! Results are bit-identical to ml_dtypes: value functions decode to
//! float32, compute in float32 with the C library's `*f` functions (the ones
//! ml_dtypes calls) and round once with the library's conversion; sign,
//! NaN and stepping functions work on bit patterns with ml_dtypes' rules.
//!
//! Elementwise arithmetic runs in blocks of [`BLOCK`] elements: the inputs
//! are gathered (NumPy passes byte steps, possibly 0 or negative) and
//! decoded with the library's single-threaded slice kernels, computed in
//! float32 (vectorised by the compiler where the function allows it) and
//! encoded once with the kernels.
//!
//! Floating-point exception flags: NumPy turns the flags a loop leaves
//! raised into `RuntimeWarning`s (`invalid value encountered in sqrt`, ...).
//! The conversion kernels may raise flags ml_dtypes' bit-level conversions
//! never raise, so every kernel call is wrapped in [`FpFlags::save`] /
//! [`FpFlags::restore`]: only the float32 arithmetic itself raises flags,
//! as in ml_dtypes.

use std::os::raw::{c_char, c_int, c_void};

use mldtypes::dtype::DType;
use numpy::npyffi::{npy_intp, PyUFuncObject, NPY_TYPES, PY_UFUNC_API};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::dtypes::registry;

mod bf16;
mod bf16_libm;
mod binade;
mod check;
pub(crate) mod complex;
mod desc;
mod expk;
pub(crate) mod float;
mod funcs;
pub(crate) mod int;
mod simd;
mod table;

pub(crate) use simd::set_streaming_stores;

/// Elements per block in the blocked loops: 4096 float32 (16 KiB) per
/// operand live on the stack and stay in the L1/L2 caches, and amortise the
/// per-call cost of the conversion kernels.
pub(crate) const BLOCK: usize = 4096;

/// A NumPy legacy inner loop (`PyUFuncGenericFunction`): `args` are the
/// operand pointers (inputs, then outputs), `dims[0]` the element count,
/// `steps` the byte strides of each operand.
pub(crate) type LoopFn =
    unsafe extern "C" fn(*mut *mut c_char, *mut npy_intp, *mut npy_intp, *mut c_void);

/// Registers every ufunc loop of every dtype. Called once, after every
/// dtype and cast is registered (the loops' type numbers come from
/// [`registry::typenum`]).
///
/// # Errors
///
/// A Python `RuntimeError` if a dtype is not registered yet, or the error
/// NumPy raised while registering a loop (an `AttributeError` if the NumPy in
/// use has no ufunc of that name).
pub(crate) fn register(py: Python<'_>) -> PyResult<()> {
    let mut r = Registrar::new(py)?;
    float::register(&mut r)?;
    int::register(&mut r)?;
    complex::register(&mut r)?;
    Ok(())
}

/// Loops registered with NumPy, and the distinct loop functions among them
/// (addresses), over every registration of the process.
static STATS: std::sync::Mutex<(usize, Vec<usize>)> = std::sync::Mutex::new((0, Vec::new()));

/// `(loops registered, distinct loop functions)` so far.
pub(crate) fn loop_stats() -> (usize, usize) {
    let stats = STATS.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = stats.1.clone();
    f.sort_unstable();
    f.dedup();
    (stats.0, f.len())
}

/// Adds the module's private ufunc functions (checks and statistics for
/// the test suite and the benchmarks) to the module `m`.
///
/// # Errors
///
/// The error of adding a function to the module.
pub(crate) fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check::_ufunc_check, m)?)?;
    m.add_function(wrap_pyfunction!(check::_ufunc_table_info, m)?)?;
    m.add_function(wrap_pyfunction!(check::_ufunc_loop_stats, m)?)?;
    m.add_function(wrap_pyfunction!(check::_ufunc_selfcheck, m)?)?;
    Ok(())
}

/// One operand type of a loop signature.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    /// One of our dtypes (its type number is assigned at registration).
    Ours(DType),
    /// A NumPy builtin type.
    Npy(NPY_TYPES),
    /// A dtype by its NumPy type number (a format registered at run time).
    Num(c_int),
}

/// NumPy `bool` operand.
pub(crate) const BOOL: Arg = Arg::Npy(NPY_TYPES::NPY_BOOL);
/// NumPy `intc` (C `int`) operand: `ldexp`'s exponent, `frexp`'s output.
pub(crate) const INTC: Arg = Arg::Npy(NPY_TYPES::NPY_INT);

/// Adds loops to NumPy's ufuncs.
pub(crate) struct Registrar<'py> {
    numpy: Bound<'py, PyModule>,
    /// Loops registered so far.
    count: usize,
    /// The loop functions registered (addresses; repeats included).
    functions: Vec<usize>,
}

impl<'py> Registrar<'py> {
    /// A registrar adding loops to the ufuncs of `numpy`.
    ///
    /// # Errors
    ///
    /// `ImportError` if NumPy cannot be imported.
    pub(crate) fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(Registrar {
            numpy: py.import("numpy")?,
            count: 0,
            functions: Vec::new(),
        })
    }

    /// Loops registered through this registrar.
    pub(crate) fn count(&self) -> usize {
        self.count
    }
}

impl Drop for Registrar<'_> {
    /// Adds this registrar's loops to the process's [`loop_stats`].
    fn drop(&mut self) {
        let mut stats = STATS.lock().unwrap_or_else(|e| e.into_inner());
        stats.0 += self.count;
        stats.1.append(&mut self.functions);
    }
}

impl Registrar<'_> {
    /// Registers `f` as the loop of `numpy.<name>` for the signature `sig`
    /// (inputs then outputs), owned by the user dtype `owner`.
    pub(crate) fn add(&mut self, name: &str, owner: DType, sig: &[Arg], f: LoopFn) -> PyResult<()> {
        self.add_with_data(name, typenum(owner)?, sig, f, std::ptr::null_mut())
    }

    /// Registers `f` as the loop of `numpy.<name>` for the signature `sig`,
    /// owned by the user dtype of type number `owner`; NumPy passes `data`
    /// to every call of the loop (its last argument).
    pub(crate) fn add_with_data(
        &mut self,
        name: &str,
        owner: c_int,
        sig: &[Arg],
        f: LoopFn,
        data: *mut c_void,
    ) -> PyResult<()> {
        let py = self.numpy.py();
        let ufunc = self.numpy.getattr(name)?;
        let nargs: usize = ufunc.getattr("nargs")?.extract()?;
        if nargs != sig.len() {
            return Err(PyRuntimeError::new_err(format!(
                "numpy.{name} takes {nargs} operands, the loop of NumPy type {owner} has {}",
                sig.len()
            )));
        }
        let mut types = sig
            .iter()
            .map(|a| match *a {
                Arg::Ours(dt) => typenum(dt),
                Arg::Npy(t) => Ok(t as c_int),
                Arg::Num(n) => Ok(n),
            })
            .collect::<PyResult<Vec<c_int>>>()?;
        // SAFETY: `ufunc` is a live `numpy.ufunc` (it has `nargs`, checked
        // against the signature length); NumPy copies `types` and keeps
        // `data`, which outlives the process (leaked or static).
        let rc = unsafe {
            PY_UFUNC_API.PyUFunc_RegisterLoopForType(
                py,
                ufunc.as_ptr().cast::<PyUFuncObject>(),
                owner,
                Some(f),
                types.as_mut_ptr(),
                data,
            )
        };
        if rc < 0 {
            return Err(PyErr::fetch(py));
        }
        self.count += 1;
        self.functions.push(f as usize);
        Ok(())
    }
}

/// The NumPy type number of one of our dtypes.
fn typenum(dt: DType) -> PyResult<c_int> {
    registry::typenum(dt)
        .ok_or_else(|| PyRuntimeError::new_err(format!("{dt} is not registered with NumPy yet")))
}

/// One operand of an inner loop: its base pointer and byte step.
#[derive(Clone, Copy)]
pub(crate) struct Operand {
    ptr: *mut u8,
    step: isize,
}

impl Operand {
    /// Operand `i` of a loop call.
    ///
    /// # Safety
    ///
    /// `args` and `steps` are the arrays NumPy passed to the loop, with more
    /// than `i` entries.
    #[inline]
    pub(crate) unsafe fn of(args: *mut *mut c_char, steps: *mut npy_intp, i: usize) -> Self {
        Operand {
            ptr: (*args.add(i)).cast::<u8>(),
            step: *steps.add(i),
        }
    }

    /// The address of element `k`.
    #[inline]
    pub(crate) fn at(self, k: usize) -> *mut u8 {
        self.ptr.wrapping_offset(self.step * k as isize)
    }

    /// Whether elements of `size` bytes are packed without gaps.
    #[inline]
    pub(crate) fn contiguous(self, size: usize) -> bool {
        self.step == size as isize
    }

    /// Elements `start..start + n`, `size` bytes each, as one byte slice:
    /// borrowed from the array when contiguous, else gathered into `buf`.
    ///
    /// # Safety
    ///
    /// The elements are readable; `buf` holds `n * size` bytes.
    #[inline]
    pub(crate) unsafe fn bytes(self, start: usize, n: usize, size: usize, buf: &mut [u8]) -> &[u8] {
        if self.contiguous(size) {
            return std::slice::from_raw_parts(self.at(start), n * size);
        }
        let buf = &mut buf[..n * size];
        match size {
            1 => {
                for (k, b) in buf.iter_mut().enumerate() {
                    *b = *self.at(start + k);
                }
            }
            2 => {
                for (k, chunk) in buf.chunks_exact_mut(2).enumerate() {
                    chunk.copy_from_slice(&self.read::<[u8; 2]>(start + k));
                }
            }
            _ => {
                for (k, chunk) in buf.chunks_exact_mut(size).enumerate() {
                    std::ptr::copy_nonoverlapping(self.at(start + k), chunk.as_mut_ptr(), size);
                }
            }
        }
        buf
    }

    /// Writes `src` (whole elements of `size` bytes) to elements
    /// `start..`.
    ///
    /// # Safety
    ///
    /// The elements are writable.
    #[inline]
    pub(crate) unsafe fn put_bytes(self, start: usize, src: &[u8], size: usize) {
        if self.contiguous(size) {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.at(start), src.len());
            return;
        }
        match size {
            1 => {
                for (k, &b) in src.iter().enumerate() {
                    *self.at(start + k) = b;
                }
            }
            2 => {
                for (k, chunk) in src.chunks_exact(2).enumerate() {
                    self.write::<[u8; 2]>(start + k, [chunk[0], chunk[1]]);
                }
            }
            _ => {
                for (k, chunk) in src.chunks_exact(size).enumerate() {
                    std::ptr::copy_nonoverlapping(chunk.as_ptr(), self.at(start + k), size);
                }
            }
        }
    }

    /// Reads element `k` as a `V` (unaligned).
    ///
    /// # Safety
    ///
    /// Element `k` is readable and holds a `V`.
    #[inline]
    pub(crate) unsafe fn read<V: Copy>(self, k: usize) -> V {
        std::ptr::read_unaligned(self.at(k).cast::<V>())
    }

    /// Writes `v` to element `k` (unaligned).
    ///
    /// # Safety
    ///
    /// Element `k` is writable and of type `V`.
    #[inline]
    pub(crate) unsafe fn write<V: Copy>(self, k: usize, v: V) {
        std::ptr::write_unaligned(self.at(k).cast::<V>(), v)
    }
}

/// The block length for a loop call: [`BLOCK`], or 1 when an input
/// overlaps an output other than element for element. NumPy's reductions
/// pass the accumulator as both the first input and the output with step 0
/// (`np.add.reduce`), and `accumulate` passes the previous output element
/// as the input: each element must then see the results of the previous
/// ones, as in a loop that runs element by element (ml_dtypes' loops),
/// rounding after every step.
///
/// # Safety
///
/// `args` and `steps` are the arrays NumPy passed to the loop; `sizes`
/// holds the element size of each operand (inputs first, `nin` of them).
pub(crate) unsafe fn block_len(
    args: *mut *mut c_char,
    steps: *mut npy_intp,
    n: usize,
    sizes: &[usize],
    nin: usize,
) -> usize {
    if n <= 1 {
        return BLOCK;
    }
    let span = |o: Operand, size: usize| {
        let (p, q) = (o.at(0) as usize, o.at(n - 1) as usize);
        (p.min(q), p.max(q) + size)
    };
    for (i, &isize) in sizes.iter().enumerate().take(nin) {
        for (j, &osize) in sizes.iter().enumerate().skip(nin) {
            let (a, o) = (Operand::of(args, steps, i), Operand::of(args, steps, j));
            if a.ptr == o.ptr && a.step == o.step && a.step != 0 {
                continue; // in place, element for element
            }
            let ((a0, a1), (o0, o1)) = (span(a, isize), span(o, osize));
            if a0 < o1 && o0 < a1 {
                return 1;
            }
        }
    }
    BLOCK
}

/// Calls `f(start, len)` for consecutive blocks of at most `block`
/// elements covering `0..n`.
#[inline]
pub(crate) fn blocks(n: usize, block: usize, mut f: impl FnMut(usize, usize)) {
    let mut start = 0;
    while start < n {
        let len = (n - start).min(block);
        f(start, len);
        start += len;
    }
}

/// The element count of a loop call.
///
/// # Safety
///
/// `dims` is the pointer NumPy passed to the loop.
#[inline]
pub(crate) unsafe fn count(dims: *mut npy_intp) -> usize {
    (*dims).max(0) as usize
}

/// Converts `src` (unpacked elements of `from`) into `dst` (elements of `to`)
/// on the calling thread with the fastest kernels, leaving the
/// floating-point exception flags as they were.
pub(crate) fn convert(src: &[u8], from: DType, dst: &mut [u8], to: DType) {
    let flags = FpFlags::save();
    let r = mldtypes::cast::cast_bytes_on(
        mldtypes::cast::path(),
        src,
        from,
        dst,
        to,
        mldtypes::cast::Overflow::NonSaturating,
    );
    // Every pair used here (our formats <-> float32) is supported and the
    // lengths are whole elements by construction.
    debug_assert!(r.is_ok(), "{r:?}");
    flags.restore_if_changed();
}

/// The floating-point exception flags (C `fenv.h`), which NumPy reads after
/// each loop to warn about invalid operations, division by zero and
/// overflow.
pub(crate) struct FpFlags(#[allow(dead_code)] u64);

#[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod fenv {
    use std::os::raw::c_int;

    /// `FE_ALL_EXCEPT` of glibc/musl/Darwin.
    #[cfg(target_arch = "x86_64")]
    pub(super) const FE_ALL_EXCEPT: c_int = 0x3d;
    #[cfg(target_arch = "aarch64")]
    pub(super) const FE_ALL_EXCEPT: c_int = 0x1f;
    /// `FE_INVALID` (the same bit on both architectures).
    pub(super) const FE_INVALID: c_int = 0x01;
    /// `FE_DIVBYZERO`.
    #[cfg(target_arch = "x86_64")]
    pub(super) const FE_DIVBYZERO: c_int = 0x04;
    #[cfg(target_arch = "aarch64")]
    pub(super) const FE_DIVBYZERO: c_int = 0x02;
    /// The four flags NumPy reports (`FE_INVALID | FE_DIVBYZERO |
    /// FE_OVERFLOW | FE_UNDERFLOW`; not `FE_INEXACT`).
    #[cfg(target_arch = "x86_64")]
    pub(super) const FE_REPORTED: c_int = 0x1d;
    #[cfg(target_arch = "aarch64")]
    pub(super) const FE_REPORTED: c_int = 0x0f;

    unsafe extern "C" {
        // `fexcept_t` is at most 4 bytes on these platforms; callers pass an
        // 8-byte slot.
        pub(super) fn fegetexceptflag(flagp: *mut u64, excepts: c_int) -> c_int;
        pub(super) fn fesetexceptflag(flagp: *const u64, excepts: c_int) -> c_int;
        pub(super) fn feraiseexcept(excepts: c_int) -> c_int;
        #[cfg(target_arch = "aarch64")]
        pub(super) fn feclearexcept(excepts: c_int) -> c_int;
        #[cfg(target_arch = "aarch64")]
        pub(super) fn fetestexcept(excepts: c_int) -> c_int;
    }
}

impl FpFlags {
    /// The current flags.
    #[inline]
    pub(crate) fn save() -> Self {
        #[allow(unused_mut)]
        let mut v = 0u64;
        #[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
        // SAFETY: `v` is a writable slot larger than `fexcept_t`.
        unsafe {
            fenv::fegetexceptflag(&mut v, fenv::FE_ALL_EXCEPT);
        }
        FpFlags(v)
    }

    /// [`FpFlags::restore`] if the flags differ from the saved state
    /// (reading the flags is much cheaper than setting them).
    #[inline]
    pub(crate) fn restore_if_changed(&self) {
        if FpFlags::save().0 != self.0 {
            self.restore();
        }
    }

    /// Sets the flags back to the saved state (without trapping).
    #[inline]
    pub(crate) fn restore(&self) {
        #[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
        // SAFETY: the slot was filled by `fegetexceptflag`.
        unsafe {
            fenv::fesetexceptflag(&self.0, fenv::FE_ALL_EXCEPT);
        }
    }
}

/// The floating-point exception flags NumPy reports (invalid, divide by
/// zero, overflow, underflow) that are raised now, as `FE_*` bits of this
/// platform (0 on platforms without `fenv.h` bindings). On x86-64: the x87
/// status word and MXCSR read directly, as glibc's `fetestexcept` reads
/// them (their exception bits are the `FE_*` bits).
#[inline]
pub(crate) fn reported_flags() -> u8 {
    #[cfg(all(unix, target_arch = "x86_64"))]
    {
        let sw: u16;
        let mut csr: u32 = 0;
        // SAFETY: `fnstsw` stores the x87 status word in `ax`; `stmxcsr`
        // stores MXCSR in `csr`. Neither changes any state.
        unsafe {
            std::arch::asm!("fnstsw ax", out("ax") sw, options(nomem, nostack, preserves_flags));
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
        }
        ((u32::from(sw) | csr) as c_int & fenv::FE_REPORTED) as u8
    }
    #[cfg(all(unix, target_arch = "aarch64"))]
    // SAFETY: plain libm call.
    unsafe {
        fenv::fetestexcept(fenv::FE_REPORTED) as u8
    }
    #[cfg(not(all(unix, any(target_arch = "x86_64", target_arch = "aarch64"))))]
    0
}

/// Whether a reported flag is raised in the x87 unit (x86-64; elsewhere
/// there is one set of flags and this is false): glibc's float32 functions
/// compute with SSE, and a caller that found none here needs only MXCSR's
/// flags ([`take_sse_flags`]).
#[inline]
pub(crate) fn x87_flags() -> bool {
    #[cfg(all(unix, target_arch = "x86_64"))]
    {
        let sw: u16;
        // SAFETY: `fnstsw` stores the x87 status word in `ax`, nothing else.
        unsafe {
            std::arch::asm!("fnstsw ax", out("ax") sw, options(nomem, nostack, preserves_flags))
        };
        c_int::from(sw) & fenv::FE_REPORTED != 0
    }
    #[cfg(not(all(unix, target_arch = "x86_64")))]
    false
}

/// The reported flags raised outside the x87 unit (MXCSR on x86-64; every
/// flag elsewhere), then cleared there: one read, and one write only when
/// a flag was raised.
#[inline]
pub(crate) fn take_sse_flags() -> u8 {
    #[cfg(all(unix, target_arch = "x86_64"))]
    {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores MXCSR in `csr`; `ldmxcsr` writes it back
        // with only its six exception bits cleared.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
        }
        let raised = (csr as c_int & fenv::FE_REPORTED) as u8;
        if raised != 0 {
            csr &= !0x3f;
            // SAFETY: as above.
            unsafe {
                std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags))
            };
        }
        raised
    }
    #[cfg(not(all(unix, target_arch = "x86_64")))]
    {
        let raised = reported_flags();
        if raised != 0 {
            clear_flags();
        }
        raised
    }
}

/// Clears every floating-point exception flag. On x86-64: `fnclex` for the
/// x87 unit and MXCSR's exception bits rewritten (what glibc's
/// `feclearexcept` does, without saving and reloading the x87
/// environment).
#[inline]
pub(crate) fn clear_flags() {
    #[cfg(all(unix, target_arch = "x86_64"))]
    // SAFETY: `fnclex` clears the x87 exception flags; MXCSR is read and
    // written back with only its six exception bits cleared.
    unsafe {
        let mut csr: u32 = 0;
        std::arch::asm!("fnclex", options(nomem, nostack, preserves_flags));
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
        csr &= !0x3f;
        std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags));
    }
    #[cfg(all(unix, target_arch = "aarch64"))]
    // SAFETY: plain libm call.
    unsafe {
        fenv::feclearexcept(fenv::FE_ALL_EXCEPT);
    }
}

/// Raises the flags `flags` (`FE_*` bits as [`reported_flags`] gives them),
/// as the operations that set them would.
#[inline]
pub(crate) fn raise_flags(flags: u8) {
    #[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
    if flags != 0 {
        // SAFETY: plain libm call; traps are masked in NumPy processes.
        unsafe {
            fenv::feraiseexcept(c_int::from(flags) & fenv::FE_REPORTED);
        }
    }
    #[cfg(not(all(unix, any(target_arch = "x86_64", target_arch = "aarch64"))))]
    let _ = flags;
}

/// The invalid-operation flag as [`reported_flags`] gives it.
#[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) const FLAG_INVALID: u8 = fenv::FE_INVALID as u8;
#[cfg(not(all(unix, any(target_arch = "x86_64", target_arch = "aarch64"))))]
pub(crate) const FLAG_INVALID: u8 = 0;

/// Raises the invalid-operation flag, as an ordered C comparison (`<`)
/// involving a NaN does.
#[inline]
pub(crate) fn raise_invalid() {
    #[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: plain libm call; traps are masked in NumPy processes.
    unsafe {
        fenv::feraiseexcept(fenv::FE_INVALID);
    }
}

/// The C library's float32 functions: the ones ml_dtypes calls through
/// `std::` in C++, so results agree to the bit with ml_dtypes on the same
/// machine (Rust's own `asinh`, `acosh`, `atanh` are different algorithms;
/// these bind the C symbols directly). The float64 ones serve formats whose
/// values float32 cannot hold.
pub(crate) mod libm {
    use std::os::raw::c_int;

    unsafe extern "C" {
        pub(crate) safe fn sinf(x: f32) -> f32;
        pub(crate) safe fn cosf(x: f32) -> f32;
        pub(crate) safe fn tanf(x: f32) -> f32;
        pub(crate) safe fn asinf(x: f32) -> f32;
        pub(crate) safe fn acosf(x: f32) -> f32;
        pub(crate) safe fn atanf(x: f32) -> f32;
        pub(crate) safe fn atan2f(y: f32, x: f32) -> f32;
        pub(crate) safe fn hypotf(x: f32, y: f32) -> f32;
        pub(crate) safe fn sinhf(x: f32) -> f32;
        pub(crate) safe fn coshf(x: f32) -> f32;
        pub(crate) safe fn tanhf(x: f32) -> f32;
        pub(crate) safe fn asinhf(x: f32) -> f32;
        pub(crate) safe fn acoshf(x: f32) -> f32;
        pub(crate) safe fn atanhf(x: f32) -> f32;
        pub(crate) safe fn expf(x: f32) -> f32;
        pub(crate) safe fn exp2f(x: f32) -> f32;
        pub(crate) safe fn expm1f(x: f32) -> f32;
        pub(crate) safe fn logf(x: f32) -> f32;
        pub(crate) safe fn log2f(x: f32) -> f32;
        pub(crate) safe fn log10f(x: f32) -> f32;
        pub(crate) safe fn log1pf(x: f32) -> f32;
        pub(crate) safe fn cbrtf(x: f32) -> f32;
        pub(crate) safe fn powf(x: f32, y: f32) -> f32;
        pub(crate) safe fn fmodf(x: f32, y: f32) -> f32;
        pub(crate) safe fn rintf(x: f32) -> f32;
        pub(crate) safe fn ldexpf(x: f32, e: c_int) -> f32;
        pub(crate) fn frexpf(x: f32, e: *mut c_int) -> f32;
        pub(crate) fn modff(x: f32, ip: *mut f32) -> f32;

        pub(crate) safe fn sin(x: f64) -> f64;
        pub(crate) safe fn cos(x: f64) -> f64;
        pub(crate) safe fn tan(x: f64) -> f64;
        pub(crate) safe fn asin(x: f64) -> f64;
        pub(crate) safe fn acos(x: f64) -> f64;
        pub(crate) safe fn atan(x: f64) -> f64;
        pub(crate) safe fn atan2(y: f64, x: f64) -> f64;
        pub(crate) safe fn hypot(x: f64, y: f64) -> f64;
        pub(crate) safe fn sinh(x: f64) -> f64;
        pub(crate) safe fn cosh(x: f64) -> f64;
        pub(crate) safe fn tanh(x: f64) -> f64;
        pub(crate) safe fn asinh(x: f64) -> f64;
        pub(crate) safe fn acosh(x: f64) -> f64;
        pub(crate) safe fn atanh(x: f64) -> f64;
        pub(crate) safe fn exp(x: f64) -> f64;
        pub(crate) safe fn exp2(x: f64) -> f64;
        pub(crate) safe fn expm1(x: f64) -> f64;
        pub(crate) safe fn log(x: f64) -> f64;
        pub(crate) safe fn log2(x: f64) -> f64;
        pub(crate) safe fn log10(x: f64) -> f64;
        pub(crate) safe fn log1p(x: f64) -> f64;
        pub(crate) safe fn cbrt(x: f64) -> f64;
        pub(crate) safe fn pow(x: f64, y: f64) -> f64;
        pub(crate) safe fn fmod(x: f64, y: f64) -> f64;
        pub(crate) safe fn rint(x: f64) -> f64;
        pub(crate) safe fn ldexp(x: f64, e: c_int) -> f64;
        pub(crate) fn frexp(x: f64, e: *mut c_int) -> f64;
        pub(crate) fn modf(x: f64, ip: *mut f64) -> f64;
    }
}

/// Raises the divide-by-zero flag, as NumPy's own integer loops do for a
/// zero divisor: NumPy then warns `RuntimeWarning: divide by zero
/// encountered in <ufunc>` after the loop (the text ml_dtypes' integer
/// loops warn with), or raises under `np.errstate(divide="raise")`. Unlike
/// a direct `PyErr_WarnEx`, this needs no GIL in the loop.
#[inline]
pub(crate) fn raise_divide_by_zero() {
    #[cfg(all(unix, any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: plain libm call; traps are masked in NumPy processes.
    unsafe {
        fenv::feraiseexcept(fenv::FE_DIVBYZERO);
    }
}
