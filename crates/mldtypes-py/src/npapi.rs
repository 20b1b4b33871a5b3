//! Small helpers over the NumPy and CPython C APIs used by the scalar,
//! array-function and cast code.

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::OnceLock;

use numpy::npyffi::{self, NpyTypes, PyArrayObject, PY_ARRAY_API};
use pyo3::ffi;
use pyo3::prelude::*;

/// The Python token inside C callbacks that NumPy or CPython call with an
/// attached thread state (every callback that touches Python objects is
/// documented by NumPy as called with the GIL held).
///
/// # Safety
/// The caller must hold the GIL.
pub(crate) unsafe fn py<'a>() -> Python<'a> {
    unsafe { Python::assume_attached() }
}

/// A NumPy type object (`numpy.ndarray`, `numpy.generic`, ...).
///
/// # Safety
/// GIL held; NumPy imported.
pub(crate) unsafe fn np_type(t: NpyTypes) -> *mut ffi::PyTypeObject {
    unsafe { npyffi::get_type_object(py(), t) }
}

/// `isinstance(o, t)` without calling `__instancecheck__`.
///
/// # Safety
/// `o` a live object, `t` a type.
pub(crate) unsafe fn type_check(o: *mut ffi::PyObject, t: *mut ffi::PyTypeObject) -> bool {
    unsafe { ffi::PyObject_TypeCheck(o, t) != 0 }
}

/// Whether `o` is a `numpy.ndarray`.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn is_array(o: *mut ffi::PyObject) -> bool {
    unsafe { type_check(o, np_type(NpyTypes::PyArray_Type)) }
}

/// Whether `o` is a NumPy scalar (`numpy.generic`).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn is_np_scalar(o: *mut ffi::PyObject) -> bool {
    unsafe { type_check(o, np_type(NpyTypes::PyGenericArrType_Type)) }
}

/// The type number of an array's dtype.
///
/// # Safety
/// `a` is an ndarray.
pub(crate) unsafe fn array_typenum(a: *mut ffi::PyObject) -> c_int {
    unsafe {
        let arr = a as *mut PyArrayObject;
        (*(*arr).fields.descr).fields.type_num
    }
}

/// Data pointer of an array.
///
/// # Safety
/// `a` is an ndarray.
pub(crate) unsafe fn array_data(a: *mut ffi::PyObject) -> *mut c_void {
    unsafe { (*(a as *mut PyArrayObject)).fields.data as *mut c_void }
}

/// Number of dimensions of an array.
///
/// # Safety
/// `a` is an ndarray.
pub(crate) unsafe fn array_ndim(a: *mut ffi::PyObject) -> c_int {
    unsafe { (*(a as *mut PyArrayObject)).fields.nd }
}

/// `a.astype(descr)` as a new reference (NULL with an exception set).
///
/// # Safety
/// GIL held, `a` an object with `astype`, `descr` a live dtype.
pub(crate) unsafe fn astype(
    a: *mut ffi::PyObject,
    descr: *mut npyffi::PyArray_Descr,
) -> *mut ffi::PyObject {
    unsafe {
        let name = ffi::PyUnicode_FromString(c"astype".as_ptr());
        if name.is_null() {
            return std::ptr::null_mut();
        }
        let r = ffi::PyObject_CallMethodOneArg(a, name, descr as *mut ffi::PyObject);
        ffi::Py_DECREF(name);
        r
    }
}

/// The dtype instance of a builtin type number (new reference).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn descr_from_type(num: c_int) -> *mut npyffi::PyArray_Descr {
    unsafe { PY_ARRAY_API.PyArray_DescrFromType(py(), num) }
}

struct Cached {
    true_: usize,
    false_: usize,
    complex_warning: usize,
}

static CACHED: OnceLock<Cached> = OnceLock::new();

/// Looks up `numpy.True_`, `numpy.False_` and `numpy.exceptions.ComplexWarning`
/// once (they live as long as NumPy, which we keep imported).
pub(crate) fn init_cache(py: Python<'_>) -> PyResult<()> {
    if CACHED.get().is_some() {
        return Ok(());
    }
    let np = py.import("numpy")?;
    let t = np.getattr("True_")?.unbind().into_ptr() as usize;
    let f = np.getattr("False_")?.unbind().into_ptr() as usize;
    let w = np
        .getattr("exceptions")?
        .getattr("ComplexWarning")?
        .unbind()
        .into_ptr() as usize;
    let _ = CACHED.set(Cached {
        true_: t,
        false_: f,
        complex_warning: w,
    });
    Ok(())
}

/// `numpy.True_` or `numpy.False_` as a new reference.
///
/// # Safety
/// GIL held, [`init_cache`] done.
pub(crate) unsafe fn np_bool(b: bool) -> *mut ffi::PyObject {
    let c = CACHED.get().expect("initialized at import");
    let o = if b { c.true_ } else { c.false_ } as *mut ffi::PyObject;
    unsafe { ffi::Py_INCREF(o) };
    o
}

/// Issues NumPy's `ComplexWarning` ("Casting complex values to real discards
/// the imaginary part"); returns -1 if it was turned into an exception.
///
/// # Safety
/// GIL held, [`init_cache`] done.
pub(crate) unsafe fn complex_warning() -> c_int {
    let c = CACHED.get().expect("initialized at import");
    unsafe {
        ffi::PyErr_WarnEx(
            c.complex_warning as *mut ffi::PyObject,
            c"Casting complex values to real discards the imaginary part".as_ptr(),
            1,
        )
    }
}

/// Sets a Python exception of type `exc` with message `msg`.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn set_error(exc: *mut ffi::PyObject, msg: &str) {
    let s = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
    unsafe { ffi::PyErr_SetString(exc, s.as_ptr()) }
}

/// `Py_TYPE(o)->tp_name` as a Rust string.
///
/// # Safety
/// `o` is live.
pub(crate) unsafe fn type_name(o: *mut ffi::PyObject) -> String {
    unsafe {
        let t = ffi::Py_TYPE(o);
        CStr::from_ptr((*t).tp_name).to_string_lossy().into_owned()
    }
}

/// Python's hash of a float that is NaN: derived from the object's address,
/// as `float.__hash__` does since Python 3.10.
pub(crate) fn hash_pointer(p: *mut ffi::PyObject) -> ffi::Py_hash_t {
    let y = p as usize;
    let y = y.rotate_right(4) as ffi::Py_hash_t;
    if y == -1 {
        -2
    } else {
        y
    }
}

/// `hash(float(v))`, with NaN hashed by the object's identity.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn hash_f64(self_: *mut ffi::PyObject, v: f64) -> ffi::Py_hash_t {
    if v.is_nan() {
        return hash_pointer(self_);
    }
    unsafe {
        let f = ffi::PyFloat_FromDouble(v);
        if f.is_null() {
            return -1;
        }
        let h = ffi::PyObject_Hash(f);
        ffi::Py_DECREF(f);
        h
    }
}
