//! Opt-in JAX type promotion inside NumPy (`mldtypes.set_numpy_promotion`,
//! `mldtypes.numpy_promotion`, `mldtypes.get_numpy_promotion`).
//!
//! With the switch on, promotions that involve one of our dtypes follow
//! JAX's standard lattice with x64 enabled (NumPy has every 64-bit type), as
//! computed by `mldtypes::promote::jax`; promotions among NumPy's own dtypes
//! are untouched. NumPy 2.x's DType API gives three places to act:
//!
//! 1. The `common_dtype` slot of each of our DType classes (NEP 42), which
//!    `np.result_type`, `np.promote_types`, `np.concatenate` and array
//!    creation use. A legacy user DType cannot declare one: NumPy installs
//!    its own (a safe-cast test) when the dtype is registered, so the slot
//!    is handed to the slot owner ([`crate::promotion::slot`]) on the first
//!    switch to "jax", which asks [`answer`] while the switch is on and the
//!    original function otherwise.
//! 2. The same slot of NumPy's abstract Python-scalar DTypes
//!    (`PyArray_PyLongDType`, `PyArray_PyFloatDType`,
//!    `PyArray_PyComplexDType`, public in NumPy 2's C API): NumPy asks them,
//!    not us, first when a Python scalar meets one of our dtypes
//!    (`bf16_array + 1.0`); our replacement answers only for our dtypes and
//!    delegates everything else to the original.
//! 3. Ufunc promoters (NEP 43) for each binary arithmetic / comparison /
//!    logical ufunc and each pair (one of ours, a NumPy or another of our
//!    lattice dtypes): NumPy's dispatch between two concrete dtypes of which
//!    one is a legacy user dtype uses a safe-cast loop search, not
//!    `common_dtype`, so without them `bf16_array + int32_array` stays
//!    float64.
//!
//! NumPy caches each ufunc's dispatch decision per DType tuple for the life
//! of the process, and `PyUFunc_AddPromoter` has no inverse. Switching
//! therefore (a) adds / removes our promoters in each ufunc's `_loops`
//! (a list of `(DTypes, promoter)` in NumPy 2.0-2.4, a dict keyed by the
//! DType tuple from 2.5) and (b) empties each NumPy ufunc's dispatch cache,
//! so that every decision is taken again under the new setting. Both fields
//! are in NumPy's public `PyUFuncObject` struct; the cache's layout
//! (`PyArrayIdentityHash`) is private: a flat bucket array in 2.0-2.4, a
//! pointer to a bucket block in 2.5. It is recognised by the type of
//! `_loops` and only touched after checking it against the ufunc (key
//! length = nargs, power-of-two size). Every layout the switch relies on is
//! checked first; if any check fails nothing is changed and `RuntimeError`
//! is raised.
//!
//! Locking: everything that runs Python code (building the tables, on the
//! first switch to "jax") runs without any lock held; the switch itself runs
//! no Python code (cyclic GC paused) with the GIL held, so it is atomic for
//! other threads and for a signal handler that calls it again.

use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mldtypes::dtype::DType;
use mldtypes::promote::jax::{JaxType, PromotionConfig, PromotionMode};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList, PyTuple};

use crate::promotion::slot;

/// JAX's lattice as used inside NumPy: standard mode, 64-bit types enabled.
const NUMPY_CONFIG: PromotionConfig = PromotionConfig {
    mode: PromotionMode::Standard,
    x64: true,
};

/// Binary ufuncs that get promoters.
const UFUNCS: &[&str] = &[
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "floor_divide",
    "remainder",
    "fmod",
    "divmod",
    "power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "arctan2",
    "hypot",
    "copysign",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "heaviside",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
];

/// The dtypes this package registers with NumPy (the rest of `DType::ALL`
/// are NumPy's own).
const OURS: [DType; 20] = [
    DType::BFloat16,
    DType::Float8E3M4,
    DType::Float8E4M3,
    DType::Float8E4M3B11FNUZ,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float8E8M0FNU,
    DType::Float6E2M3FN,
    DType::Float6E3M2FN,
    DType::Float4E2M1FN,
    DType::Int1,
    DType::Int2,
    DType::Int4,
    DType::UInt1,
    DType::UInt2,
    DType::UInt4,
    DType::Complex32,
    DType::BComplex32,
];

/// NumPy's builtin dtypes that are JAX lattice nodes, by type character
/// (`l` and `q` are distinct DType classes for int64 on some platforms).
const NUMPY_CHARS: &str = "?bBhHiIlLqQefdFD";

type PromoterFn = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    *mut *mut ffi::PyObject,
) -> c_int;

/// NumPy 2's `PyUFuncObject` (numpy/_core/include/numpy/ufuncobject.h),
/// up to `_loops`.
#[repr(C)]
struct UFuncObject {
    ob_base: ffi::PyObject,
    nin: c_int,
    nout: c_int,
    nargs: c_int,
    identity: c_int,
    functions: *mut c_void,
    data: *mut c_void,
    ntypes: c_int,
    reserved1: c_int,
    name: *const std::ffi::c_char,
    types: *mut c_void,
    doc: *const std::ffi::c_char,
    ptr: *mut c_void,
    obj: *mut ffi::PyObject,
    userloops: *mut ffi::PyObject,
    core_enabled: c_int,
    core_num_dim_ix: c_int,
    core_num_dims: *mut c_int,
    core_dim_ixs: *mut c_int,
    core_offsets: *mut c_int,
    core_signature: *mut c_void,
    type_resolver: *mut c_void,
    dict: *mut c_void,
    vectorcall: *mut c_void,
    reserved3: *mut c_void,
    op_flags: *mut u32,
    iter_flags: u32,
    core_dim_sizes: *mut isize,
    core_dim_flags: *mut u32,
    identity_value: *mut ffi::PyObject,
    dispatch_cache: *mut IdentityHash,
    loops: *mut ffi::PyObject,
}

/// NumPy's private `PyArrayIdentityHash` (numpy/_core/src/common/
/// npy_hashtable.h) in NumPy 2.0–2.4 on GIL builds: a cache that holds no
/// references, `size` buckets of `key_len + 1` pointers.
#[repr(C)]
struct IdentityHash {
    key_len: c_int,
    buckets: *mut *mut ffi::PyObject,
    size: isize,
    nelem: isize,
}

/// The same cache in NumPy 2.5 on GIL builds: the buckets moved into a
/// block (`struct buckets`) that starts with a link to the blocks it
/// replaced (only kept on free-threaded builds, so NULL here).
#[repr(C)]
struct IdentityHash25 {
    key_len: c_int,
    buckets: *mut Buckets25,
}

/// The header of NumPy 2.5's `struct buckets`; `size * (key_len + 1)`
/// pointers follow it.
#[repr(C)]
struct Buckets25 {
    prev: *mut Buckets25,
    size: isize,
    nelem: isize,
}

/// How this NumPy stores a ufunc's loops and dispatch cache.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    /// NumPy 2.0–2.4: `_loops` is a list, the cache an [`IdentityHash`].
    List,
    /// NumPy 2.5: `_loops` is a dict keyed by DType tuple, the cache an
    /// [`IdentityHash25`].
    Dict,
}

/// One DType class NumPy may hand our `common_dtype`: its pointer and the
/// lattice node it stands for.
#[derive(Clone, Copy)]
struct Known {
    meta: usize,
    node: JaxType,
    ours: bool,
}

/// One ufunc that gets promoters: its `_loops` and the prebuilt
/// `(key, (key, promoter capsule))` entries.
struct Promoted {
    loops: Py<PyAny>,
    entries: Vec<(Py<PyTuple>, Py<PyTuple>)>,
}

/// Everything the switch needs, built once (validated) while the GIL is held.
struct Hooks {
    layout: Layout,
    known: Vec<Known>,
    /// DTypeMeta of each DType in `DType::ALL` order (0 if not available).
    meta_of: Vec<usize>,
    /// Our lattice DTypeMetas and the abstract Python scalar DTypeMetas,
    /// with their slots tables: the classes handed to the slot owner.
    patched: Vec<(usize, *mut *mut c_void)>,
    promoted: Vec<Promoted>,
    /// Every NumPy ufunc (its dispatch cache is emptied on each switch).
    all_ufuncs: Vec<Py<PyAny>>,
    capsule: Py<PyAny>,
}

// SAFETY: the raw addresses are only dereferenced with the GIL held.
unsafe impl Send for Hooks {}
// SAFETY: as above; the Python objects are only touched with the GIL held.
unsafe impl Sync for Hooks {}

/// The tables, once built. The mutex is only held to read or store the
/// pointer (never while Python code runs), so it cannot be re-entered.
static HOOKS: Mutex<Option<Arc<Hooks>>> = Mutex::new(None);
static ON: AtomicUsize = AtomicUsize::new(0);
/// `(meta, node, ours)` table for the replacement functions.
static KNOWN: Mutex<Vec<Known>> = Mutex::new(Vec::new());
static META_OF: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// The exception class raised from inside NumPy: a subclass of both
/// `mldtypes.TypePromotionError` and `numpy.exceptions.DTypePromotionError`.
static ERROR_CLASS: AtomicPtr<ffi::PyObject> = AtomicPtr::new(std::ptr::null_mut());
/// The exception class raised from ufunc promoters: `mldtypes.TypePromotionError`.
static UFUNC_ERROR_CLASS: AtomicPtr<ffi::PyObject> = AtomicPtr::new(std::ptr::null_mut());

fn lookup(meta: *mut ffi::PyObject) -> Option<Known> {
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    known.iter().copied().find(|k| k.meta == meta as usize)
}

/// The JAX join of two DType classes when at least one is ours and both are
/// lattice nodes: `Some(Ok(new reference))`, `Some(Err(()))` with a Python
/// error set, or `None` (not ours to answer).
///
/// # Safety
/// GIL held; arguments are DTypeMeta pointers.
unsafe fn jax_common(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    error_class: &AtomicPtr<ffi::PyObject>,
) -> Option<Result<*mut ffi::PyObject, ()>> {
    let (ka, kb) = (lookup(a)?, lookup(b)?);
    if !(ka.ours || kb.ours) {
        return None;
    }
    match NUMPY_CONFIG.join(ka.node, kb.node) {
        Ok(node) => {
            let d = node.numpy_dtype();
            let meta_of = META_OF.lock().unwrap_or_else(|e| e.into_inner());
            let i = DType::ALL.iter().position(|x| *x == d)?;
            let m = *meta_of.get(i)?;
            if m == 0 {
                return None;
            }
            let p = m as *mut ffi::PyObject;
            ffi::Py_IncRef(p);
            Some(Ok(p))
        }
        Err(e) => {
            let msg = CString::new(e.to_string()).unwrap_or_default();
            let cls = error_class.load(Ordering::Acquire);
            let cls = if cls.is_null() {
                ffi::PyExc_ValueError
            } else {
                cls
            };
            ffi::PyErr_SetString(cls, msg.as_ptr());
            Some(Err(()))
        }
    }
}

/// The JAX switch's rule of the `common_dtype` slot
/// ([`crate::promotion::slot`]): while the switch is on, JAX's join when at
/// least one of `cls`, `other` is ours and both are lattice nodes (a new
/// reference, or NULL with `TypePromotionError` set); `None` otherwise.
///
/// # Safety
/// GIL held; arguments are DTypeMeta pointers.
pub(crate) unsafe fn answer(
    cls: *mut ffi::PyObject,
    other: *mut ffi::PyObject,
) -> Option<*mut ffi::PyObject> {
    if ON.load(Ordering::Acquire) == 0 {
        return None;
    }
    match unsafe { jax_common(cls, other, &ERROR_CLASS) }? {
        Ok(p) => Some(p),
        Err(()) => Some(std::ptr::null_mut()),
    }
}

/// The ufunc promoter: inputs become the JAX join of the two input DTypes
/// (fixed signature entries are kept), outputs stay as given.
unsafe extern "C" fn promoter(
    ufunc: *mut ffi::PyObject,
    op_dtypes: *const *mut ffi::PyObject,
    signature: *const *mut ffi::PyObject,
    new_op_dtypes: *mut *mut ffi::PyObject,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let u = ufunc as *mut UFuncObject;
        let (nin, nargs) = ((*u).nin as usize, (*u).nargs as usize);
        let pick = |i: usize| {
            let s = *signature.add(i);
            if s.is_null() {
                *op_dtypes.add(i)
            } else {
                s
            }
        };
        let (a, b) = (pick(0), pick(1));
        let (a, b) = match (a.is_null(), b.is_null()) {
            (false, false) => (a, b),
            (true, false) => (b, b),
            (false, true) => (a, a),
            (true, true) => {
                let msg = CString::new("mldtypes promoter called without input DTypes")
                    .unwrap_or_default();
                ffi::PyErr_SetString(ffi::PyExc_RuntimeError, msg.as_ptr());
                return -1;
            }
        };
        // NumPy turns a DTypePromotionError from a promoter into "no loop";
        // raise JAX's TypePromotionError itself, as a JAX operation would.
        let common = match jax_common(a, b, &UFUNC_ERROR_CLASS) {
            Some(Ok(p)) => p,
            Some(Err(())) => return -1,
            None => {
                let msg = CString::new("mldtypes promoter: no JAX promotion for these DTypes")
                    .unwrap_or_default();
                ffi::PyErr_SetString(ffi::PyExc_RuntimeError, msg.as_ptr());
                return -1;
            }
        };
        for i in 0..nin {
            let s = *signature.add(i);
            let t = if s.is_null() { common } else { s };
            ffi::Py_IncRef(t);
            *new_op_dtypes.add(i) = t;
        }
        for i in nin..nargs {
            let t = *op_dtypes.add(i);
            if !t.is_null() {
                ffi::Py_IncRef(t);
            }
            *new_op_dtypes.add(i) = t;
        }
        ffi::Py_DecRef(common);
        0
    })
}

fn layout_error(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "JAX promotion inside NumPy is not available with this NumPy: {what} \
         (supported: NumPy 2.0-2.5 on a GIL-enabled CPython); nothing was changed"
    ))
}

/// Builds and validates everything the switch touches, without changing
/// anything.
fn build(py: Python<'_>) -> PyResult<Hooks> {
    // `sys.abiflags` has "t" on free-threaded builds (no import needed).
    let abiflags: String = py.import("sys")?.getattr("abiflags")?.extract()?;
    if abiflags.contains('t') {
        return Err(layout_error("free-threaded Python"));
    }
    let np = py.import("numpy")?;
    let version: String = np.getattr("__version__")?.extract()?;
    if !version.starts_with("2.") {
        return Err(layout_error(&format!("NumPy {version}")));
    }
    let heap =
        slot::heap_size(py).ok_or_else(|| layout_error("unexpected PyArray_DTypeMeta size"))?;
    let np_dtype = np.getattr("dtype")?;
    let ml = py.import("mldtypes")?;
    let mut known = Vec::new();
    let mut meta_of = vec![0usize; DType::ALL.len()];
    let mut slots_of_ours: Vec<usize> = Vec::new();
    let mut patched: Vec<(usize, *mut *mut c_void)> = Vec::new();
    let check_meta = |dt: &Bound<'_, PyAny>, legacy: bool| -> PyResult<(usize, *mut *mut c_void)> {
        slot::concrete(dt, heap, legacy)
            .ok_or_else(|| layout_error("unexpected PyArray_DTypeMeta fields"))
    };
    for &d in DType::ALL.iter() {
        let is_node = !matches!(d, DType::Complex32 | DType::BComplex32);
        let ours = OURS.contains(&d);
        let dt = if ours {
            match ml.getattr(d.name()) {
                Ok(t) => np_dtype.call1((t,))?,
                Err(_) => continue,
            }
        } else {
            np_dtype.call1((d.name(),))?
        };
        let (meta, slots) = check_meta(&dt, true)?;
        meta_of[d.ordinal()] = meta;
        if !is_node {
            continue;
        }
        if ours {
            // SAFETY: validated slots table; reading one pointer.
            slots_of_ours.push(unsafe { slot::effective(meta, slots) });
            patched.push((meta, slots));
        }
        known.push(Known {
            meta,
            node: JaxType::Strong(d),
            ours,
        });
    }
    // Every NumPy DType class of a lattice dtype (int64 has two on Linux).
    for c in NUMPY_CHARS.chars() {
        let dt = np_dtype.call1((c.to_string(),))?;
        let name: String = dt.getattr("name")?.extract()?;
        let Ok(d) = name.parse::<DType>() else {
            continue;
        };
        let (meta, _) = check_meta(&dt, true)?;
        if !known.iter().any(|k| k.meta == meta) {
            known.push(Known {
                meta,
                node: JaxType::Strong(d),
                ours: false,
            });
        }
    }
    // All our DTypes must share NumPy's legacy user-DType common_dtype, and
    // it must differ from a builtin's.
    let half = np_dtype.call1(("float16",))?;
    let (_, half_slots) = check_meta(&half, true)?;
    // SAFETY: validated slots table.
    let half_common = unsafe { *half_slots.add(slot::COMMON_DTYPE_SLOT) } as usize;
    let user_common = *slots_of_ours
        .first()
        .ok_or_else(|| layout_error("no mldtypes dtypes registered"))?;
    if user_common == 0
        || half_common == 0
        || user_common == half_common
        || slots_of_ours.iter().any(|&s| s != user_common)
    {
        return Err(layout_error("unexpected common_dtype slots"));
    }
    // The abstract Python scalar DTypes, from the public C API table.
    let api = np_api(py)?;
    // (index in PyArray_API, Python type, weak node)
    let scalars = [
        (
            355usize,
            std::ptr::addr_of_mut!(ffi::PyLong_Type),
            JaxType::WeakInt,
        ),
        (
            356,
            std::ptr::addr_of_mut!(ffi::PyFloat_Type),
            JaxType::WeakFloat,
        ),
        (
            357,
            std::ptr::addr_of_mut!(ffi::PyComplex_Type),
            JaxType::WeakComplex,
        ),
    ];
    let mut seen = Vec::new();
    for (idx, pytype, node) in scalars {
        // SAFETY: the table has over 360 entries in NumPy 2.x.
        let meta = unsafe { *api.add(idx) } as *mut ffi::PyObject;
        if meta.is_null() {
            return Err(layout_error("missing Python scalar DType"));
        }
        // SAFETY: NumPy 2's API table entry is an abstract DTypeMeta.
        let f = unsafe { &*slot::fields(meta, heap) };
        let slot = if f.dt_slots.is_null() {
            0
        } else {
            // SAFETY: non-null slots table.
            unsafe { slot::effective(meta as usize, f.dt_slots) }
        };
        if f.scalar_type != pytype
            || f.flags & slot::NPY_DT_LEGACY != 0
            || slot == 0
            || seen.contains(&slot)
            || slot == user_common
            || slot == half_common
        {
            return Err(layout_error("unexpected Python scalar DType"));
        }
        seen.push(slot);
        known.push(Known {
            meta: meta as usize,
            node,
            ours: false,
        });
        patched.push((meta as usize, f.dt_slots));
    }
    // Ufuncs: public struct fields checked against the Python attributes,
    // `_loops` a list (2.0-2.4) or dict (2.5), the dispatch cache keyed by
    // nargs DTypes.
    let add = np.getattr("add")?;
    // SAFETY: `add` is a numpy.ufunc; `_loops` is a public struct field,
    // checked for NULL and type before use.
    let add_loops = unsafe { (*(add.as_ptr() as *const UFuncObject)).loops };
    // SAFETY: non-null object pointers.
    let layout = if add_loops.is_null() {
        return Err(layout_error("ufunc without _loops"));
    } else if unsafe { ffi::PyList_CheckExact(add_loops) } != 0 {
        Layout::List
    } else if unsafe { ffi::PyDict_CheckExact(add_loops) } != 0 {
        Layout::Dict
    } else {
        return Err(layout_error("ufunc _loops neither a list nor a dict"));
    };
    let all_ufuncs = all_numpy_ufuncs(py)?;
    for u in &all_ufuncs {
        check_ufunc(u.bind(py), layout)?;
    }
    // SAFETY: `promoter` has the signature NumPy's promoter capsules need.
    let capsule = unsafe {
        PyCapsule::new_with_pointer(py, promoter_ptr(promoter), c"numpy._ufunc_promoter")?
    }
    .into_any();
    let mut promoted = Vec::new();
    for name in UFUNCS {
        let u = np.getattr(*name)?;
        check_ufunc(&u, layout)?;
        let nargs: usize = u.getattr("nargs")?.extract()?;
        let nin: usize = u.getattr("nin")?.extract()?;
        if nin != 2 {
            continue;
        }
        // SAFETY: validated by check_ufunc.
        let loops = unsafe { (*(u.as_ptr() as *const UFuncObject)).loops };
        // SAFETY: a live list/dict owned by the ufunc (which NumPy keeps alive).
        let loops = unsafe { Bound::from_borrowed_ptr(py, loops) };
        let entries = promoter_entries(py, &known, nargs, &capsule)?;
        promoted.push(Promoted {
            loops: loops.unbind(),
            entries,
        });
    }
    Ok(Hooks {
        layout,
        known,
        meta_of,
        patched,
        promoted,
        all_ufuncs,
        capsule: capsule.unbind(),
    })
}

/// The `(key, (key, capsule))` promoter entries of one binary ufunc: one per
/// (ours, other lattice DType) pair, both orders, outputs `None`.
fn promoter_entries(
    py: Python<'_>,
    known: &[Known],
    nargs: usize,
    capsule: &Bound<'_, PyAny>,
) -> PyResult<Vec<(Py<PyTuple>, Py<PyTuple>)>> {
    let mut out = Vec::new();
    for x in known.iter().filter(|k| k.ours) {
        for y in known {
            if x.meta == y.meta {
                continue;
            }
            for (a, b) in [(x.meta, y.meta), (y.meta, x.meta)] {
                if y.ours && a == y.meta {
                    continue; // ours x ours: added once per order
                }
                let mut items: Vec<Bound<'_, PyAny>> = Vec::with_capacity(nargs);
                for m in [a, b] {
                    // SAFETY: a live DTypeMeta.
                    items.push(unsafe { Bound::from_borrowed_ptr(py, m as *mut ffi::PyObject) });
                }
                while items.len() < nargs {
                    items.push(py.None().into_bound(py));
                }
                let key = PyTuple::new(py, items)?;
                let info = PyTuple::new(py, [key.clone().into_any(), capsule.clone()])?;
                out.push((key.unbind(), info.unbind()));
            }
        }
    }
    Ok(out)
}

/// A promoter function pointer as a capsule pointer.
fn promoter_ptr(f: PromoterFn) -> std::ptr::NonNull<c_void> {
    // A function pointer is never null.
    std::ptr::NonNull::new(f as *mut c_void).unwrap_or(std::ptr::NonNull::dangling())
}

/// `PyArray_API`, NumPy's C API table (from `_ARRAY_API`).
fn np_api(py: Python<'_>) -> PyResult<*const *mut c_void> {
    let m = py.import("numpy._core._multiarray_umath")?;
    let cap = m.getattr("_ARRAY_API")?;
    let cap = cap
        .cast::<PyCapsule>()
        .map_err(|_| layout_error("_ARRAY_API is not a capsule"))?;
    // SAFETY: NumPy's capsule holds its API table.
    let p = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), std::ptr::null()) };
    if p.is_null() {
        return Err(PyErr::fetch(py));
    }
    Ok(p as *const *mut c_void)
}

/// Every ufunc object NumPy's core module defines (their dispatch caches
/// are cleared on each switch). Read from the already imported module's
/// namespace: nothing is imported, no lazy attribute is triggered.
fn all_numpy_ufuncs(py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
    let ufunc_type = py.import("numpy")?.getattr("ufunc")?;
    let mut out: Vec<Py<PyAny>> = Vec::new();
    for module in ["numpy._core._multiarray_umath", "numpy._core.umath"] {
        let m = py.import(module)?;
        let d = m.getattr("__dict__")?;
        let d = d.cast::<PyDict>()?;
        for (_, v) in d.iter() {
            if v.is_exact_instance(&ufunc_type) && !out.iter().any(|u| u.is(&v)) {
                out.push(v.unbind());
            }
        }
    }
    Ok(out)
}

/// Whether a ufunc's struct, `_loops` and dispatch cache have `layout`
/// (reads public fields and, for the cache, the recognised private layout;
/// runs no Python code).
///
/// # Safety
/// `u` must be a live `numpy.ufunc`.
unsafe fn ufunc_layout_ok(u: *mut ffi::PyObject, layout: Layout) -> bool {
    let s = &*(u as *const UFuncObject);
    if s.nin < 1 || s.nargs < s.nin || s.nargs > 64 || s.loops.is_null() {
        return false;
    }
    let loops_ok = match layout {
        Layout::List => ffi::PyList_CheckExact(s.loops) != 0,
        Layout::Dict => ffi::PyDict_CheckExact(s.loops) != 0,
    };
    if !loops_ok || s.dispatch_cache.is_null() {
        return false;
    }
    let pow2 = |n: isize| n >= 4 && (n & (n - 1)) == 0;
    match layout {
        Layout::List => {
            let h = &*s.dispatch_cache;
            h.key_len == s.nargs
                && pow2(h.size)
                && h.nelem >= 0
                && h.nelem <= h.size
                && !h.buckets.is_null()
        }
        Layout::Dict => {
            let h = &*(s.dispatch_cache as *const IdentityHash25);
            if h.key_len != s.nargs || h.buckets.is_null() {
                return false;
            }
            let b = &*h.buckets;
            b.prev.is_null() && pow2(b.size) && b.nelem >= 0 && b.nelem <= b.size
        }
    }
}

fn check_ufunc(u: &Bound<'_, PyAny>, layout: Layout) -> PyResult<()> {
    let nin: c_int = u.getattr("nin")?.extract()?;
    let nargs: c_int = u.getattr("nargs")?.extract()?;
    // SAFETY: `u` is a numpy.ufunc (checked by the caller or by nin/nargs).
    let s = unsafe { &*(u.as_ptr() as *const UFuncObject) };
    // SAFETY: as above.
    if s.nin == nin && s.nargs == nargs && unsafe { ufunc_layout_ok(u.as_ptr(), layout) } {
        Ok(())
    } else {
        Err(layout_error(&format!(
            "unexpected ufunc layout ({})",
            u.repr()?
        )))
    }
}

/// Empties a ufunc's dispatch cache (the layout is checked again first; a
/// ufunc that fails the check is left alone). Runs no Python code.
fn clear_dispatch_cache(u: &Bound<'_, PyAny>, layout: Layout) {
    // SAFETY: `u` was collected as a numpy.ufunc by `all_numpy_ufuncs`.
    if !unsafe { ufunc_layout_ok(u.as_ptr(), layout) } {
        return;
    }
    // SAFETY: validated layout; the GIL is held and no Python code runs, so
    // no dispatch runs concurrently; the cache holds no references, so
    // zeroing leaks nothing.
    unsafe {
        let s = &*(u.as_ptr() as *const UFuncObject);
        match layout {
            Layout::List => {
                let h = &mut *s.dispatch_cache;
                let n = h.size as usize * (h.key_len as usize + 1);
                std::ptr::write_bytes(h.buckets, 0, n);
                h.nelem = 0;
            }
            Layout::Dict => {
                let h = &*(s.dispatch_cache as *const IdentityHash25);
                let b = &mut *h.buckets;
                let n = b.size as usize * (h.key_len as usize + 1);
                let array = (h.buckets as *mut u8).add(std::mem::size_of::<Buckets25>())
                    as *mut *mut ffi::PyObject;
                std::ptr::write_bytes(array, 0, n);
                b.nelem = 0;
            }
        }
    }
}

/// Adds our promoters and replaces the `common_dtype` slots. Runs no Python
/// code (list appends / dict insertions of prebuilt tuples keyed by types).
fn install(py: Python<'_>, hooks: &Hooks) -> PyResult<()> {
    *KNOWN.lock().unwrap_or_else(|e| e.into_inner()) = hooks.known.clone();
    *META_OF.lock().unwrap_or_else(|e| e.into_inner()) = hooks.meta_of.clone();
    for p in &hooks.promoted {
        let loops = p.loops.bind(py);
        match hooks.layout {
            Layout::List => {
                let loops = loops.cast::<PyList>()?;
                for (_, info) in &p.entries {
                    loops.append(info.bind(py))?;
                }
            }
            Layout::Dict => {
                let loops = loops.cast::<PyDict>()?;
                for (key, info) in &p.entries {
                    // A loop NumPy (or another package) registered is kept.
                    if !loops.contains(key.bind(py))? {
                        loops.set_item(key.bind(py), info.bind(py))?;
                    }
                }
            }
        }
    }
    // The slots last (after the tables they read are set): handed to the
    // slot owner once, which asks `answer` while the switch is on.
    // SAFETY: classes validated by `build`, on a GIL-enabled build (checked
    // there); the GIL is held and no Python code runs.
    unsafe { slot::patch(&hooks.patched) };
    Ok(())
}

/// Removes our promoters (the `common_dtype` slots stay with the slot
/// owner, which stops asking the switch once it is off). Runs no Python code.
fn uninstall(py: Python<'_>, hooks: &Hooks) -> PyResult<()> {
    let capsule = hooks.capsule.bind(py);
    let ours = |info: &Bound<'_, PyAny>| {
        info.cast::<PyTuple>()
            .ok()
            .and_then(|t| t.get_item(1).ok())
            .is_some_and(|r| r.is(capsule))
    };
    for p in &hooks.promoted {
        let loops = p.loops.bind(py);
        match hooks.layout {
            Layout::List => {
                let loops = loops.cast::<PyList>()?;
                let keep: Vec<Bound<'_, PyAny>> = loops.iter().filter(|i| !ours(i)).collect();
                loops.as_any().del_item(pyo3::types::PySlice::full(py))?;
                for k in keep {
                    loops.append(k)?;
                }
            }
            Layout::Dict => {
                let loops = loops.cast::<PyDict>()?;
                for (key, _) in &p.entries {
                    if let Some(info) = loops.get_item(key.bind(py))? {
                        if ours(&info) {
                            loops.del_item(key.bind(py))?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Pauses CPython's cyclic garbage collector (whose finalizers could run
/// Python code) for the life of the guard.
struct GcPause(bool);

impl GcPause {
    fn new() -> Self {
        // SAFETY: the GIL is held by the caller.
        GcPause(unsafe { ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: the GIL is still held (the guard lives inside `set`).
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

fn parse(mode: &str) -> PyResult<bool> {
    match mode {
        "jax" => Ok(true),
        "numpy" => Ok(false),
        other => Err(PyValueError::new_err(format!(
            "numpy promotion must be 'jax' or 'numpy', not {other:?}"
        ))),
    }
}

/// The switch's tables, built on first use. Building runs Python code
/// (reading NumPy's attributes) without any lock held: two threads, or a
/// signal handler interrupting a build, may both build; the first stored wins.
fn hooks(py: Python<'_>) -> PyResult<Arc<Hooks>> {
    if let Some(h) = HOOKS.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return Ok(h.clone());
    }
    let built = Arc::new(build(py)?);
    let mut guard = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    Ok(guard.get_or_insert(built).clone())
}

fn set(py: Python<'_>, on: bool) -> PyResult<()> {
    if (ON.load(Ordering::Acquire) != 0) == on {
        return Ok(());
    }
    let hooks = if on {
        hooks(py)?
    } else {
        match HOOKS.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(h) => h.clone(),
            None => return Ok(()),
        }
    };
    // From here on no Python code runs and the GIL is never released, so the
    // check and the switch are one step for every other thread and for a
    // signal handler (which only runs between bytecodes).
    let _gc = GcPause::new();
    if (ON.load(Ordering::Acquire) != 0) == on {
        return Ok(());
    }
    if on {
        if let Err(e) = install(py, &hooks) {
            // Leave NumPy as it was (uninstall only removes our entries).
            let _ = uninstall(py, &hooks);
            return Err(e);
        }
        ON.store(1, Ordering::Release);
    } else {
        ON.store(0, Ordering::Release);
        uninstall(py, &hooks)?;
    }
    for u in &hooks.all_ufuncs {
        clear_dispatch_cache(u.bind(py), hooks.layout);
    }
    Ok(())
}

/// Chooses how NumPy itself promotes between mldtypes' dtypes and NumPy's,
/// process-wide: `"numpy"` (the default: exactly as ml_dtypes 0.6.0) or
/// `"jax"`: `np.result_type`, `np.promote_types`, `np.concatenate` and
/// binary ufuncs (arithmetic, comparisons, logical, maximum/minimum, ...)
/// follow JAX's standard type promotion lattice with 64-bit types enabled,
/// e.g. bfloat16 with float16 gives float32, `bf16_array + 1.0` and
/// `bf16_array + int32_array` stay bfloat16, and two different float8
/// formats raise `mldtypes.TypePromotionError` (also a
/// `numpy.exceptions.DTypePromotionError`) with JAX's text. Promotions
/// among NumPy's own dtypes, and with complex32 / bcomplex32, are unchanged.
/// Switching back to `"numpy"` restores NumPy's defaults exactly.
///
/// Raises ValueError for another mode; RuntimeError if this NumPy's
/// internals do not have the layout the switch needs (nothing is changed).
#[pyfunction]
fn set_numpy_promotion(py: Python<'_>, mode: &str) -> PyResult<()> {
    crate::guard::run(|| set(py, parse(mode)?))
}

/// The current NumPy promotion mode: "numpy" (default) or "jax".
#[pyfunction]
fn get_numpy_promotion() -> &'static str {
    if ON.load(Ordering::Acquire) != 0 {
        "jax"
    } else {
        "numpy"
    }
}

/// A context manager for `set_numpy_promotion(mode)` within a `with`
/// block; the previous mode is restored on exit. The setting is
/// process-wide (NumPy's DType slots and ufunc dispatch caches are shared by
/// all threads), not thread-local.
#[pyclass(module = "mldtypes", name = "_NumpyPromotion", frozen)]
struct NumpyPromotion {
    on: bool,
    saved: Mutex<Vec<bool>>,
}

#[pymethods]
impl NumpyPromotion {
    fn __enter__<'py>(slf: PyRef<'py, Self>, py: Python<'py>) -> PyResult<PyRef<'py, Self>> {
        let prev = ON.load(Ordering::Acquire) != 0;
        set(py, slf.on)?;
        slf.saved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(prev);
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<()> {
        let prev = self.saved.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if let Some(prev) = prev {
            set(py, prev)?;
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "numpy_promotion('{}')",
            if self.on { "jax" } else { "numpy" }
        )
    }
}

/// A context manager: `with mldtypes.numpy_promotion("jax"): ...` switches
/// NumPy's own promotion to JAX's for the block (see
/// `set_numpy_promotion`) and restores the previous mode afterwards. The
/// switch is process-wide, not thread-local.
///
/// Raises ValueError for a mode other than "jax" / "numpy".
#[pyfunction]
#[pyo3(signature = (mode = "jax"))]
fn numpy_promotion(mode: &str) -> PyResult<NumpyPromotion> {
    crate::guard::run(|| {
        Ok(NumpyPromotion {
            on: parse(mode)?,
            saved: Mutex::new(Vec::new()),
        })
    })
}

/// Adds the NumPy switch to the module and creates the exception class
/// raised from inside NumPy.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let base = py.get_type::<super::TypePromotionError>();
    let np_err = py
        .import("numpy.exceptions")?
        .getattr("DTypePromotionError")?;
    let builtins = py.import("builtins")?;
    let ns = pyo3::types::PyDict::new(py);
    ns.set_item("__module__", "mldtypes")?;
    ns.set_item(
        "__doc__",
        "mldtypes.TypePromotionError raised from inside NumPy while JAX promotion is on \
         (also a numpy.exceptions.DTypePromotionError).",
    )?;
    let cls =
        builtins
            .getattr("type")?
            .call1(("TypePromotionError", (base.clone(), np_err), ns))?;
    // Both kept alive for the life of the process.
    ERROR_CLASS.store(cls.into_ptr(), Ordering::Release);
    UFUNC_ERROR_CLASS.store(base.clone().into_any().into_ptr(), Ordering::Release);
    m.add_class::<NumpyPromotion>()?;
    m.add_function(wrap_pyfunction!(set_numpy_promotion, m)?)?;
    m.add_function(wrap_pyfunction!(get_numpy_promotion, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_promotion, m)?)?;
    Ok(())
}
