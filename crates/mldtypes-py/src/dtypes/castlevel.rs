//! Changing the cast level NumPy derived for a legacy cast (what
//! `numpy.can_cast` and legacy promotion read), for the two places where
//! NumPy's legacy rule gives the wrong answer: casts between our types and
//! their ml_dtypes twins are "equiv", not merely "safe"
//! ([`crate::interop::twins`]); and two legacy dtypes of the same kind and
//! item size are always "safe" to NumPy, which for the IEEE P3109 formats
//! (registered as kind 'V') would declare narrowing casts safe
//! ([`crate::dtypes::float`]).
//!
//! NumPy's legacy user-dtype API can declare a cast safe
//! (`PyArray_RegisterCanCast`) but nothing else: the first use of a legacy
//! cast wraps it in an ArrayMethod whose `casting` field NumPy computes
//! once, and no public route sets it. So the wrapping object is fetched
//! (NumPy's private `_get_castingimpl(FromDType, ToDType)`, a
//! `numpy._BoundArrayMethod` of those two DTypes), its method's head is
//! checked (type `numpy._ArrayMethod`, name `legacy_cast`, one input, one
//! output, the level expected), and only when every one matches is the
//! level changed, then confirmed through `numpy.can_cast` (undone if NumPy
//! disagrees).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use pyo3::prelude::*;

/// NumPy's `NPY_CASTING` values.
pub(crate) const EQUIV: c_int = 1;
pub(crate) const SAFE: c_int = 2;
pub(crate) const SAME_KIND: c_int = 3;
pub(crate) const UNSAFE: c_int = 4;

/// `numpy.can_cast`'s name of a level.
fn level_name(level: c_int) -> &'static str {
    match level {
        EQUIV => "equiv",
        SAFE => "safe",
        SAME_KIND => "same_kind",
        _ => "unsafe",
    }
}

/// The head of NumPy's `PyArrayMethodObject` (array_method.h, the same in
/// NumPy 2.0 to 2.5): checked field by field before `casting` is changed.
#[repr(C)]
struct MethodHead {
    ob_base: pyo3::ffi::PyObject,
    name: *const c_char,
    nin: c_int,
    nout: c_int,
    casting: c_int,
}

/// The head of NumPy's `PyBoundArrayMethodObject` (what
/// `_get_castingimpl` returns): the DTypes and the ArrayMethod.
#[repr(C)]
struct BoundHead {
    ob_base: pyo3::ffi::PyObject,
    dtypes: *const *mut pyo3::ffi::PyObject,
    method: *mut MethodHead,
}

/// Whether `o`'s type is named `name` (tp_name).
///
/// # Safety
/// `o` a live object.
unsafe fn type_named(o: *mut pyo3::ffi::PyObject, name: &[u8]) -> bool {
    unsafe {
        let t = pyo3::ffi::Py_TYPE(o);
        !t.is_null() && !(*t).tp_name.is_null() && CStr::from_ptr((*t).tp_name).to_bytes() == name
    }
}

/// NumPy's ArrayMethod wrapping the legacy cast `from → to` (dtype
/// objects), when it is what this module expects: `_get_castingimpl`
/// returns a `numpy._BoundArrayMethod` for exactly these two DTypes, whose
/// method is a `numpy._ArrayMethod` named `legacy_cast` with 1 input, 1
/// output and casting `level`. `None` on any mismatch or error (nothing
/// raised). The bound object is returned with the method pointer; it keeps
/// the method alive.
fn legacy_cast_method<'py>(
    from: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
    level: c_int,
) -> Option<(Bound<'py, PyAny>, *mut MethodHead)> {
    let py = from.py();
    let get = py
        .import("numpy._core._multiarray_umath")
        .and_then(|m| m.getattr("_get_castingimpl"))
        .ok()?;
    let (f, t) = (from.get_type(), to.get_type());
    let bound = get.call1((&f, &t)).ok()?;
    // SAFETY: live objects; every pointer is checked before it is followed.
    // The heads are those of NumPy 2.0 to 2.5 (array_method.h).
    unsafe {
        if !type_named(bound.as_ptr(), b"numpy._BoundArrayMethod") {
            return None;
        }
        let b = &*(bound.as_ptr() as *const BoundHead);
        if b.dtypes.is_null()
            || *b.dtypes != f.as_ptr()
            || *b.dtypes.add(1) != t.as_ptr()
            || b.method.is_null()
            || !type_named(b.method as *mut pyo3::ffi::PyObject, b"numpy._ArrayMethod")
        {
            return None;
        }
        let head = &*b.method;
        if head.name.is_null() {
            return None;
        }
        let name = CStr::from_ptr(head.name);
        (name.to_bytes() == b"legacy_cast"
            && head.nin == 1
            && head.nout == 1
            && head.casting == level)
            .then_some((bound, b.method))
    }
}

/// Sets the level of every legacy cast `(from, to)` (dtype objects) from
/// `old` to `new`, if every one's ArrayMethod has the expected head and
/// NumPy then reports the new level; returns whether it did (on any
/// mismatch nothing is changed).
pub(crate) fn set_all(
    py: Python<'_>,
    casts: &[(Bound<'_, PyAny>, Bound<'_, PyAny>)],
    old: c_int,
    new: c_int,
) -> bool {
    let mut methods = Vec::with_capacity(casts.len());
    for (from, to) in casts {
        match legacy_cast_method(from, to, old) {
            Some(m) => methods.push(m),
            None => return false,
        }
    }
    let write = |level: c_int| {
        for (_, head) in &methods {
            // SAFETY: head checked in `legacy_cast_method`; the GIL (or, on a
            // free-threaded build, the lock of the registration in progress)
            // is held while casts are registered, before any use by the user.
            unsafe {
                let head = *head;
                std::ptr::write_volatile(std::ptr::addr_of_mut!((*head).casting), level);
            }
        }
    };
    write(new);
    // Confirm through NumPy's public API; undo if it disagrees.
    let ok = py.import("numpy").is_ok_and(|np| {
        casts.iter().all(|(from, to)| {
            let can = |c: &str| -> bool {
                np.call_method1("can_cast", (from, to, c))
                    .and_then(|r| r.extract::<bool>())
                    .unwrap_or(false)
            };
            let stricter = match new {
                EQUIV => "no",
                SAFE => "equiv",
                SAME_KIND => "safe",
                _ => "same_kind",
            };
            can(level_name(new)) && !can(stricter)
        })
    });
    if !ok {
        write(old);
    }
    ok
}
