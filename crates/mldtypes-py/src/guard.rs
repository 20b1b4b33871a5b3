//! The last-resort panic guard of the Python boundary.
//!
//! A Rust panic that reached pyo3's own handler would surface in Python as
//! `pyo3_runtime.PanicException`, a `BaseException` that `except Exception`
//! does not catch (a notebook cell or a server's request handler would be
//! torn down). Every Python-callable function of the module runs its body
//! through [`run`], which turns a panic into a `RuntimeError` carrying the
//! panic message. A panic is always a bug in mldtypes: user input is refused
//! with a typed error long before.
//!
//! The C callbacks NumPy and CPython call directly (ArrFuncs, cast and
//! ufunc loops, scalar slots, promoters; all but the two byte-copy ArrFuncs,
//! see `arrfuncs.rs`) run their bodies through [`ffi`]
//! instead: a panic unwinding out of an `extern "C"` function would abort
//! the process, so [`ffi`] stops it at the boundary, sets the same
//! `RuntimeError` as the pending Python exception and returns the
//! callback's error value.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The text of a panic payload (`panic!("...")` gives a `&str` or a
/// `String`; anything else has no text).
fn payload_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// The `RuntimeError` a caught panic becomes: the panic message, marked as
/// an internal error of mldtypes.
pub(crate) fn panic_error(payload: &(dyn Any + Send)) -> PyErr {
    PyRuntimeError::new_err(format!(
        "internal error in mldtypes (please report it): {}",
        payload_text(payload)
    ))
}

/// Runs `f`, the body of a Python-callable function, turning a Rust panic
/// into `RuntimeError("internal error in mldtypes (please report it):
/// MESSAGE")`. Errors returned by `f` pass through unchanged.
///
/// The panic message is also printed on standard error by the panic hook,
/// with its source location, as for any Rust panic.
pub(crate) fn run<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    // AssertUnwindSafe: after a panic the caller sees only the error; no
    // state the closure borrowed is used again by this call.
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(&*payload)))
}

/// Runs `f`, the body of a C callback that NumPy or CPython calls directly,
/// so that a Rust panic cannot unwind across the C boundary: a panic sets
/// `RuntimeError("internal error in mldtypes (please report it): …")` as
/// the pending Python exception (taking the GIL if the caller released it,
/// as NumPy does around loops) and returns `on_panic`, the callback's error
/// value (NULL, -1, or nothing for a loop; NumPy checks for a pending
/// exception after a loop).
pub(crate) fn ffi<R>(on_panic: R, f: impl FnOnce() -> R) -> R {
    // AssertUnwindSafe: the callback's arguments are raw pointers owned by
    // the caller, which sees the error and not the partial result.
    let body = || {
        if PANIC_IN_CALLBACKS.load(Ordering::Relaxed) {
            panic!("deliberate panic in a callback for a test");
        }
        f()
    };
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            Python::attach(|py| panic_error(&*payload).restore(py));
            on_panic
        }
    }
}

/// Set by [`_panic_in_callbacks_for_test`]: every callback run through
/// [`ffi`] panics at its start.
static PANIC_IN_CALLBACKS: AtomicBool = AtomicBool::new(false);

/// `_panic_in_callbacks_for_test(on)`: while `on` is true, every C callback
/// that NumPy or CPython calls (scalar slots, ArrFuncs, cast and ufunc
/// loops, promoters) panics at its start, inside [`ffi`], so a test can
/// check in a subprocess that the process survives and the operation raises
/// `RuntimeError`. Not part of the public API.
#[pyfunction]
fn _panic_in_callbacks_for_test(on: bool) {
    PANIC_IN_CALLBACKS.store(on, Ordering::Relaxed);
}

/// `_panic_for_test(message)`: panics inside Rust with `message`, through
/// the same guard as every function of the module, so tests can check that
/// a panic reaches Python as `RuntimeError` carrying the message, never as
/// `pyo3_runtime.PanicException`. Not part of the public API.
///
/// Raises RuntimeError, always.
#[pyfunction]
#[pyo3(signature = (message = "deliberate panic for a test"))]
fn _panic_for_test(message: &str) -> PyResult<()> {
    run(|| panic!("{message}"))
}

/// Adds the test hooks `_panic_for_test` and `_panic_in_callbacks_for_test`
/// to the extension module.
///
/// # Errors
///
/// A Python exception if the function cannot be added.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_in_callbacks_for_test, m)?)
}
