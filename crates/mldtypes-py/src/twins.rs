//! Casts between each of our dtypes and its ml_dtypes twin (the dtype of
//! the same name that `ml_dtypes` registers when both packages are loaded):
//! the two store identical bytes (ml_dtypes 0.6.0's layouts), so a cast in
//! either direction copies bytes unchanged, and NumPy may take it as "safe"
//! (the legacy user-dtype API cannot declare "equiv"; a zero-copy
//! reinterpretation is `x.view(other)`).
//!
//! `python/mldtypes/_twins.py` calls [`_register_twins`] when ml_dtypes is
//! or becomes imported.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Mutex;

use numpy::npyffi::{npy_intp, PyArray_Descr, NPY_SCALARKIND, PY_ARRAY_API};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Type-number pairs already registered (in both directions).
static DONE: Mutex<Vec<(c_int, c_int)>> = Mutex::new(Vec::new());

/// A legacy cast function copying `n` elements of `N` bytes unchanged
/// (contiguous, as NumPy calls legacy casts).
unsafe extern "C" fn copy_cast<const N: usize>(
    from: *mut c_void,
    to: *mut c_void,
    n: npy_intp,
    _fromarr: *mut c_void,
    _toarr: *mut c_void,
) {
    if n <= 0 || from.is_null() || to.is_null() {
        return;
    }
    // SAFETY: NumPy passes buffers of `n` elements of N bytes each; they may
    // overlap only when identical (copy is then a no-op in effect).
    unsafe { std::ptr::copy(from as *const u8, to as *mut u8, n as usize * N) };
}

fn copy_fn(itemsize: usize) -> Option<numpy::npyffi::PyArray_VectorUnaryFunc> {
    match itemsize {
        1 => Some(Some(copy_cast::<1>)),
        2 => Some(Some(copy_cast::<2>)),
        4 => Some(Some(copy_cast::<4>)),
        _ => None,
    }
}

/// The dtype object of `t` (`numpy.dtype(t)`), its type number and itemsize.
fn dtype_of<'py>(t: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, c_int, usize)> {
    let d = t.py().import("numpy")?.call_method1("dtype", (t,))?;
    let num: c_int = d.getattr("num")?.extract()?;
    let size: usize = d.getattr("itemsize")?.extract()?;
    Ok((d, num, size))
}

/// Registers byte-copy casts, both ways and declared safe, between each of
/// our scalar types and its twin: `pairs` is a list of `(our_type,
/// their_type)`. Pairs that are the same dtype (ml_dtypes aliased to
/// mldtypes) or already registered are skipped. Returns the number of pairs
/// registered by this call.
///
/// Raises TypeError if a pair's itemsizes differ (not a twin).
#[pyfunction]
pub(crate) fn _register_twins(
    py: Python<'_>,
    pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
) -> PyResult<usize> {
    let mut count = 0;
    for (ours, theirs) in pairs {
        let (dour, nour, sour) = dtype_of(&ours)?;
        let (dtheir, ntheir, stheir) = dtype_of(&theirs)?;
        if nour == ntheir {
            continue;
        }
        if sour != stheir {
            return Err(PyTypeError::new_err(format!(
                "{} ({sour} bytes) and {} ({stheir} bytes) are not twins",
                ours.repr()?,
                theirs.repr()?
            )));
        }
        let f = copy_fn(sour)
            .ok_or_else(|| PyTypeError::new_err(format!("no twin cast for {sour}-byte dtypes")))?;
        {
            let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
            if done.contains(&(nour, ntheir)) {
                continue;
            }
            done.push((nour, ntheir));
        }
        // SAFETY: GIL held; both descriptors are live dtype objects.
        unsafe {
            for (d, to) in [(&dour, ntheir), (&dtheir, nour)] {
                let dp = d.as_ptr() as *mut PyArray_Descr;
                if PY_ARRAY_API.PyArray_RegisterCastFunc(py, dp, to, f) < 0 {
                    return Err(PyErr::fetch(py));
                }
                if PY_ARRAY_API.PyArray_RegisterCanCast(py, dp, to, NPY_SCALARKIND::NPY_NOSCALAR)
                    < 0
                {
                    return Err(PyErr::fetch(py));
                }
            }
        }
        count += 1;
    }
    Ok(count)
}

/// Adds the twin-cast registration hook to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_register_twins, m)?)
}
