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
//! ufunc loops, scalar slots) cannot go through this function: a panic
//! unwinding out of an `extern "C"` function aborts the process.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

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

/// Adds the test hook `_panic_for_test` to the extension module.
///
/// # Errors
///
/// A Python exception if the function cannot be added.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)
}
