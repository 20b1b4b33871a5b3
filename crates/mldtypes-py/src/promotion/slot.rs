//! The `common_dtype` slot (NEP 42) of our DType classes and of the other
//! DType classes whose promotion answers this package changes: one owner.
//!
//! NumPy gives every legacy user DType the same `common_dtype` function
//! (its legacy rule: of two DTypes each safely castable to the other, the
//! one with the lower type number). Two features answer some questions
//! differently:
//!
//! - the JAX promotion switch ([`crate::promotion::switch`]), for our
//!   lattice DTypes and NumPy's abstract Python-scalar DTypes, while it is on;
//! - the promotion order between our types and their ml_dtypes twins
//!   ([`crate::interop::twins`]), once ml_dtypes is loaded.
//!
//! Both go through this module. A DType class is patched at most once
//! ([`patch`]): its slot then holds [`common_dtype`] for the life of the
//! process, which asks, in order, the JAX switch, the twin rule and
//! finally the function the slot held before. Switching the JAX promotion
//! off therefore needs no slot write: the switch stops answering and every
//! question goes to the original function, exactly as before the patch.
//!
//! Every structure read here is checked first ([`heap_size`], [`concrete`]);
//! nothing is patched on a free-threaded build, where other threads read
//! the slots without a lock.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;

/// A `common_dtype` slot function (NEP 42): a new reference to a DType
/// class, `NotImplemented`, or NULL with an exception set.
pub(crate) type CommonDTypeFn =
    unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject) -> *mut ffi::PyObject;

/// Index of `common_dtype` in NumPy 2.0–2.5's `NPY_DType_Slots` (after
/// `discover_descr_from_pyobject`, `is_known_scalar_type`, `default_descr`).
pub(crate) const COMMON_DTYPE_SLOT: usize = 3;
/// `NPY_DT_LEGACY` (dtypemeta.h).
pub(crate) const NPY_DT_LEGACY: u64 = 1;

/// The fields of NumPy 2's `PyArray_DTypeMeta` after its `PyHeapTypeObject`.
#[repr(C)]
pub(crate) struct DTypeMetaFields {
    pub(crate) singleton: *mut ffi::PyObject,
    pub(crate) type_num: c_int,
    pub(crate) scalar_type: *mut ffi::PyTypeObject,
    pub(crate) flags: u64,
    pub(crate) dt_slots: *mut *mut c_void,
    reserved: [*mut c_void; 3],
}

/// `sizeof(PyHeapTypeObject)` when NumPy's DTypeMeta is that plus
/// [`DTypeMetaFields`] (NumPy 2.0–2.5), else `None`.
pub(crate) fn heap_size(py: Python<'_>) -> Option<usize> {
    // SAFETY: PyType_Type is a static type object.
    let heap = unsafe { (*std::ptr::addr_of_mut!(ffi::PyType_Type)).tp_basicsize } as usize;
    let meta_size: usize = py
        .import("numpy")
        .and_then(|np| np.getattr("dtype"))
        .and_then(|d| d.get_type().getattr("__basicsize__"))
        .and_then(|s| s.extract())
        .ok()?;
    (meta_size == heap + std::mem::size_of::<DTypeMetaFields>()).then_some(heap)
}

/// The `PyArray_DTypeMeta` fields of `meta`.
///
/// # Safety
/// `meta` must be a live NumPy DTypeMeta and `heap` the size from
/// [`heap_size`].
pub(crate) unsafe fn fields(meta: *mut ffi::PyObject, heap: usize) -> *mut DTypeMetaFields {
    unsafe { (meta as *mut u8).add(heap) as *mut DTypeMetaFields }
}

/// The DType class of the dtype instance `dt` and its slots table, when
/// its fields are as NumPy 2 lays them out (singleton, type number, scalar
/// type, the legacy flag as `legacy` says, a slots table); else `None`.
pub(crate) fn concrete(
    dt: &Bound<'_, PyAny>,
    heap: usize,
    legacy: bool,
) -> Option<(usize, *mut *mut c_void)> {
    let meta = dt.get_type();
    let num: c_int = dt.getattr("num").ok()?.extract().ok()?;
    let scalar = dt.getattr("type").ok()?;
    // SAFETY: `meta` is the DTypeMeta of a live dtype and `heap` was checked.
    let f = unsafe { &*fields(meta.as_ptr(), heap) };
    (f.singleton == dt.as_ptr()
        && f.type_num == num
        && f.scalar_type as *mut ffi::PyObject == scalar.as_ptr()
        && (f.flags & NPY_DT_LEGACY != 0) == legacy
        && !f.dt_slots.is_null())
    .then_some((meta.as_ptr() as usize, f.dt_slots))
}

/// Whether this CPython is a free-threaded build (`sys.abiflags` has "t").
pub(crate) fn free_threaded(py: Python<'_>) -> bool {
    py.import("sys")
        .and_then(|s| s.getattr("abiflags"))
        .and_then(|a| a.extract::<String>())
        .map_or(true, |a| a.contains('t'))
}

/// `(DType class, function its slot held before)` of every patched class.
static PATCHED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// The function the slot of `meta` held before it was patched; `None` for
/// a class that is not patched.
pub(crate) fn original(meta: *mut ffi::PyObject) -> Option<CommonDTypeFn> {
    let patched = PATCHED.lock().unwrap_or_else(|e| e.into_inner());
    patched
        .iter()
        .find(|(m, _)| *m == meta as usize)
        .map(|&(_, f)| {
            // SAFETY: a value read from a `common_dtype` slot.
            unsafe { std::mem::transmute::<usize, CommonDTypeFn>(f) }
        })
}

/// What the slot of `meta` (slots table `slots`) answers with apart from
/// this module: the original function once patched, the slot's value
/// otherwise.
///
/// # Safety
/// `slots` must be the validated slots table of `meta`.
pub(crate) unsafe fn effective(meta: usize, slots: *mut *mut c_void) -> usize {
    match original(meta as *mut ffi::PyObject) {
        Some(f) => f as usize,
        None => (unsafe { *slots.add(COMMON_DTYPE_SLOT) }) as usize,
    }
}

/// Points the slot of every `(DType class, slots table)` at
/// [`common_dtype`], recording what it held; classes already patched are
/// left as they are. Runs no Python code.
///
/// # Safety
/// GIL held; every entry validated by [`concrete`] (or, for NumPy's
/// abstract DTypes, the same field checks), on a GIL-enabled build.
pub(crate) unsafe fn patch(classes: &[(usize, *mut *mut c_void)]) {
    let mut patched = PATCHED.lock().unwrap_or_else(|e| e.into_inner());
    for &(meta, slots) in classes {
        if patched.iter().any(|(m, _)| *m == meta) {
            continue;
        }
        // SAFETY: a validated slots table; the GIL is held and no Python
        // code runs, so nothing reads the slot while it changes.
        unsafe {
            let orig = *slots.add(COMMON_DTYPE_SLOT) as usize;
            patched.push((meta, orig));
            *slots.add(COMMON_DTYPE_SLOT) = common_dtype as CommonDTypeFn as *mut c_void;
        }
    }
}

/// The slot function of every patched class: the JAX switch's answer while
/// it is on, else the twin rule's, else the original function's. Runs no
/// Python code.
unsafe extern "C" fn common_dtype(
    cls: *mut ffi::PyObject,
    other: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        if let Some(r) = crate::promotion::switch::answer(cls, other) {
            return r;
        }
        if let Some(r) = crate::interop::twins::answer(cls, other) {
            return r;
        }
        match original(cls) {
            Some(f) => f(cls, other),
            None => {
                let ni = ffi::Py_NotImplemented();
                ffi::Py_IncRef(ni);
                ni
            }
        }
    })
}
