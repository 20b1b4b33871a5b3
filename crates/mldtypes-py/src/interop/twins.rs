//! Casts between our dtypes and their ml_dtypes twins (the dtypes of the
//! same names that `ml_dtypes` registers when both packages are loaded), and
//! the package-qualified type names used in error messages.
//!
//! The two packages store identical bytes (ml_dtypes 0.6.0's layouts), so:
//!
//! - each of our types X and its twin X' cast both ways by copying bytes,
//!   declared safe with `PyArray_RegisterCanCast` and then, where the
//!   running NumPy's cast object has the expected layout, "equiv" (below);
//! - for every cast X → Z registered among our types (`casts.rs`), X → Z'
//!   and X' → Z are registered with the same function: the bytes of Z' are
//!   those of Z. NumPy derives the cast level of a legacy cast from the
//!   descriptors (kind, itemsize, safe-cast lists), which are the same for
//!   Z and Z', so each mixed cast gets the level of the single-package one,
//!   and ufuncs, `concatenate`, `promote_types` and `copyto` resolve mixed
//!   operands as they resolve one package's.
//!
//! **Promotion order.** Of two different formats each safely castable to the
//! other (NumPy's legacy rule makes every pair of 1-byte formats of the same
//! kind so), NumPy's `promote_types` picks the one with the lower type
//! number: within one package the one registered first, across packages
//! whichever package was imported first. So that `promote_types`,
//! `result_type` and `concatenate` give the single-package answer, the
//! `common_dtype` slot of our DTypes and their twins goes through the slot
//! owner ([`crate::promotion::slot`]), whose twin rule ([`answer`]) asks
//! NumPy's rule about the two formats within our package and returns the
//! operand of the winning format; every other question goes to NumPy's
//! rule. The slots are handed over only after checking the DType layout
//! (NumPy 2.0-2.5) and that all 40 answer with NumPy's legacy function,
//! never on a free-threaded build;
//! `_twin_state()["promotion"]` says whether it was.
//!
//! **"equiv" for twins.** NumPy's legacy user-dtype API can declare a cast
//! safe (`PyArray_RegisterCanCast`) but nothing stronger: the first use of a
//! legacy cast wraps it in an ArrayMethod whose `casting` field NumPy
//! computes once (no-cast only for a dtype to itself, else safe, same-kind
//! or unsafe; NumPy 2.0 to 2.5), and that field is what `can_cast` reads.
//! No public route sets it. So after registering, [`_register_twins`] asks
//! NumPy for the wrapping objects of the twin casts (NumPy's private
//! `_get_castingimpl(FromDType, ToDType)`, a `numpy._BoundArrayMethod` of
//! those two DTypes), checks each method's head (type `numpy._ArrayMethod`,
//! name `legacy_cast`, one input, one output, casting safe) and only when
//! every one matches sets their casting to "equiv".
//! On any mismatch nothing is changed and the casts stay "safe";
//! [`_twin_state`] says which is in effect. An "equiv" legacy cast reports
//! no view offset, so NumPy still copies (`astype(copy=False)` and
//! `np.asarray(x, dtype=twin)` return a new array of the requested dtype,
//! never an alias whose dtype is the other package's).
//!
//! `python/mldtypes/_twins.py` calls [`_register_twins`] when ml_dtypes is
//! or becomes imported.

use std::collections::HashSet;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

use mldtypes::dtype::DType;
use numpy::npyffi::{npy_intp, PyArray_Descr, NPY_SCALARKIND, PY_ARRAY_API};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::dtypes::registry;
use crate::dtypes::{castlevel, casts};
use crate::promotion::slot;

/// `(from, to)` type numbers of every cast registered here.
static DONE: Mutex<Option<HashSet<(c_int, c_int)>>> = Mutex::new(None);

#[allow(clippy::declare_interior_mutable_const)]
const UNSET: AtomicI32 = AtomicI32::new(-1);
/// Type number of each of our types' twin (indexed as `registry::ORDER`),
/// -1 while none is registered.
static TWIN_NUMS: [AtomicI32; 20] = [UNSET; 20];

/// Number of twin pairs (names) registered.
static PAIRS: AtomicUsize = AtomicUsize::new(0);
/// Number of casts registered (both directions, twins and cross-type).
static CASTS: AtomicUsize = AtomicUsize::new(0);
/// Whether mixed-package promotion follows the single-package order
/// ([`patch_common_dtype`]).
static PROMOTION: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Cast level of the twin casts: 0 none registered, 1 safe, 2 equiv.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// A legacy cast function copying `n` elements of `N` bytes unchanged
/// (contiguous, as NumPy calls legacy casts).
unsafe extern "C" fn copy_cast<const N: usize>(
    from: *mut c_void,
    to: *mut c_void,
    n: npy_intp,
    _fromarr: *mut c_void,
    _toarr: *mut c_void,
) {
    crate::guard::ffi((), || {
        if n <= 0 || from.is_null() || to.is_null() {
            return;
        }
        // SAFETY: NumPy passes buffers of `n` elements of N bytes each; they may
        // overlap only when identical (copy is then a no-op in effect).
        unsafe { std::ptr::copy(from as *const u8, to as *mut u8, n as usize * N) };
    })
}

fn copy_fn(itemsize: usize) -> Option<numpy::npyffi::PyArray_VectorUnaryFunc> {
    match itemsize {
        1 => Some(Some(copy_cast::<1>)),
        2 => Some(Some(copy_cast::<2>)),
        4 => Some(Some(copy_cast::<4>)),
        _ => None,
    }
}

/// Which of our types `num` is, if any.
fn ours_by_num(num: c_int) -> Option<DType> {
    registry::ORDER
        .iter()
        .copied()
        .find(|&dt| registry::typenum(dt) == Some(num))
}

/// Our type whose ml_dtypes twin has type number `num`.
pub(crate) fn twin_of_num(num: c_int) -> Option<DType> {
    registry::ORDER
        .iter()
        .enumerate()
        .find(|(i, _)| TWIN_NUMS[*i].load(Ordering::Acquire) == num)
        .map(|(_, &dt)| dt)
}

/// The package-qualified name of a type, for error messages: our types are
/// `mldtypes.bfloat16`, ml_dtypes' `ml_dtypes.bfloat16` (told apart by
/// identity, since both print as `bfloat16`), other types
/// `module.qualname` (`numpy.float32`); a dtype instance names its scalar
/// type; anything else is its `repr`.
pub(crate) fn qualified_name(obj: &Bound<'_, PyAny>) -> String {
    let py = obj.py();
    let is_dtype = py
        .import("numpy")
        .and_then(|np| np.getattr("dtype"))
        .and_then(|cls| obj.is_instance(&cls))
        .unwrap_or(false);
    let t = match obj.getattr("type") {
        Ok(t) if is_dtype => t,
        _ => obj.clone(),
    };
    let Ok(ty) = t.cast::<PyType>() else {
        return obj
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "<object>".into());
    };
    let name = ty
        .getattr("__name__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "?".into());
    for dt in registry::ORDER {
        if registry::scalar_type(dt) == Some(ty.as_ptr() as *mut pyo3::ffi::PyTypeObject) {
            return format!("mldtypes.{name}");
        }
    }
    if let Ok(m) = py.import("sys").and_then(|s| s.getattr("modules")) {
        if let Ok(Some(ml)) =
            m.call_method1("get", ("ml_dtypes",))
                .map(|v| if v.is_none() { None } else { Some(v) })
        {
            if let Ok(theirs) = ml.getattr(name.as_str()) {
                if theirs.is(ty) {
                    return format!("ml_dtypes.{name}");
                }
            }
        }
    }
    let module = ty
        .getattr("__module__")
        .and_then(|m| m.extract::<String>())
        .unwrap_or_default();
    let qual = ty
        .getattr("__qualname__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or(name);
    if module.is_empty() || module == "builtins" {
        qual
    } else {
        format!("{module}.{qual}")
    }
}

/// The package-qualified name of a type (`mldtypes.bfloat16`,
/// `ml_dtypes.bfloat16`, `numpy.float32`), as error messages print it.
/// Accepts a scalar type, a dtype or any object (whose `repr` is returned).
#[pyfunction]
pub(crate) fn _qualified_name(obj: &Bound<'_, PyAny>) -> String {
    qualified_name(obj)
}

/// The dtype object of `t` (`numpy.dtype(t)`), its type number and itemsize.
fn dtype_of<'py>(t: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, c_int, usize)> {
    let d = t
        .py()
        .import("numpy")?
        .call_method1("dtype", (t,))
        .map_err(|_| PyTypeError::new_err(format!("{} is not a NumPy dtype", qualified_name(t))))?;
    let num: c_int = d.getattr("num")?.extract()?;
    let size: usize = d.getattr("itemsize")?.extract()?;
    Ok((d, num, size))
}

/// Registers `descr → to` with `f` (and declares it safe when `safe`),
/// unless done before. Returns whether it registered.
///
/// # Safety
/// GIL held; `descr` a live dtype.
unsafe fn register_one(
    py: Python<'_>,
    done: &mut HashSet<(c_int, c_int)>,
    descr: *mut PyArray_Descr,
    from: c_int,
    to: c_int,
    f: numpy::npyffi::PyArray_VectorUnaryFunc,
    safe: bool,
) -> PyResult<bool> {
    if !done.insert((from, to)) {
        return Ok(false);
    }
    unsafe {
        if PY_ARRAY_API.PyArray_RegisterCastFunc(py, descr, to, f) < 0 {
            return Err(PyErr::fetch(py));
        }
        if safe
            && PY_ARRAY_API.PyArray_RegisterCanCast(py, descr, to, NPY_SCALARKIND::NPY_NOSCALAR) < 0
        {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(true)
}

/// Sets the twin casts `(from, to)` (dtype objects) to "equiv" if every
/// one's ArrayMethod has the expected head; returns whether it did.
fn make_equiv(py: Python<'_>, casts: &[(Bound<'_, PyAny>, Bound<'_, PyAny>)]) -> bool {
    castlevel::set_all(py, casts, castlevel::SAFE, castlevel::EQUIV)
}

#[allow(clippy::declare_interior_mutable_const)]
const NO_META: AtomicUsize = AtomicUsize::new(0);
/// Our DType classes and their twins', indexed as `registry::ORDER`.
static OUR_METAS: [AtomicUsize; 20] = [NO_META; 20];
static TWIN_METAS: [AtomicUsize; 20] = [NO_META; 20];

/// Which DType class `meta` is: (index in `registry::ORDER`, ours?).
fn meta_index(meta: *mut pyo3::ffi::PyObject) -> Option<(usize, bool)> {
    let m = meta as usize;
    (0..20).find_map(|i| {
        if OUR_METAS[i].load(Ordering::Acquire) == m {
            Some((i, true))
        } else if TWIN_METAS[i].load(Ordering::Acquire) == m {
            Some((i, false))
        } else {
            None
        }
    })
}

/// The twin rule of the `common_dtype` slot ([`crate::promotion::slot`]).
/// NumPy's legacy rule picks, of two user DTypes each safely castable to
/// the other, the one with the lower type number; within one package that
/// is the one registered first, across packages it depends on the import
/// order. For one of ours and a twin of another format, this answers as for
/// the two formats within one package and returns the operand of the
/// winning format; `None` for every other pair (not ours to answer). Runs no
/// Python code.
///
/// # Safety
/// GIL held; `cls` and `other` are DType classes.
pub(crate) unsafe fn answer(
    cls: *mut pyo3::ffi::PyObject,
    other: *mut pyo3::ffi::PyObject,
) -> Option<*mut pyo3::ffi::PyObject> {
    let (Some((ia, oa)), Some((ib, ob))) = (meta_index(cls), meta_index(other)) else {
        return None;
    };
    if oa == ob {
        return None;
    }
    let ma = OUR_METAS[ia].load(Ordering::Acquire) as *mut pyo3::ffi::PyObject;
    let mb = OUR_METAS[ib].load(Ordering::Acquire) as *mut pyo3::ffi::PyObject;
    // NumPy's legacy function, which both of our classes held.
    let legacy = slot::original(ma)?;
    // SAFETY: NumPy's common_dtype protocol on live DType classes (ours,
    // alive for the process): a new reference, NotImplemented or NULL.
    unsafe {
        let mut r = legacy(ma, mb);
        if r == pyo3::ffi::Py_NotImplemented() {
            pyo3::ffi::Py_DecRef(r);
            r = legacy(mb, ma);
        }
        if r == ma || r == mb {
            let pick = if r == ma { cls } else { other };
            pyo3::ffi::Py_DecRef(r);
            pyo3::ffi::Py_IncRef(pick);
            return Some(pick);
        }
        Some(r)
    }
}

/// Hands the `common_dtype` slots of our DTypes and their twins (`twins`:
/// (our dtype, their dtype) by `registry::ORDER` index) to
/// [`crate::promotion::slot`], after checking the DType layout and that
/// every slot answers with the same function (NumPy's legacy rule) and
/// differs from a builtin's. Returns whether it did; on any mismatch
/// (another NumPy layout, a free-threaded build, slots replaced by someone
/// else) nothing is changed.
fn patch_common_dtype(
    py: Python<'_>,
    twins: &[(usize, Bound<'_, PyAny>, Bound<'_, PyAny>)],
) -> bool {
    if slot::free_threaded(py) {
        return false;
    }
    let Some(heap) = slot::heap_size(py) else {
        return false;
    };
    let Ok(np) = py.import("numpy") else {
        return false;
    };
    let Some((_, half_slots)) = np
        .getattr("float16")
        .ok()
        .and_then(|t| np.call_method1("dtype", (t,)).ok())
        .and_then(|d| slot::concrete(&d, heap, true))
    else {
        return false;
    };
    // SAFETY: a validated slots table.
    let half_common = unsafe { *half_slots.add(slot::COMMON_DTYPE_SLOT) } as usize;
    let mut all = Vec::new();
    for (i, ours, theirs) in twins {
        let (Some(o), Some(t)) = (
            slot::concrete(ours, heap, true),
            slot::concrete(theirs, heap, true),
        ) else {
            return false;
        };
        all.push((*i, o, t));
    }
    // NumPy's legacy function: what every one of these slots answers with
    // apart from the slot owner.
    let Some(&(_, (m0, s0), _)) = all.first() else {
        return false;
    };
    // SAFETY: validated slots tables.
    let legacy = unsafe { slot::effective(m0, s0) };
    let same = all.iter().all(|(_, (om, os), (tm, ts))| unsafe {
        slot::effective(*om, *os) == legacy && slot::effective(*tm, *ts) == legacy
    });
    if !same || legacy == 0 || legacy == half_common {
        return false;
    }
    for (i, (om, _), (tm, _)) in &all {
        OUR_METAS[*i].store(*om, Ordering::Release);
        TWIN_METAS[*i].store(*tm, Ordering::Release);
    }
    let classes: Vec<_> = all.iter().flat_map(|(_, o, t)| [*o, *t]).collect();
    // SAFETY: validated classes; the GIL is held and no Python code runs
    // between the checks and the patch.
    unsafe { slot::patch(&classes) };
    true
}

/// Registers the casts between our scalar types and their twins: `pairs`
/// is a list of `(our_type, their_type)` of the same name. For each pair,
/// byte-copy casts both ways (declared safe, then made "equiv" where
/// possible: see the module documentation); for every cast X → Z among our
/// types, X → twin(Z) and twin(X) → Z with the same function. Pairs that
/// are the same dtype (ml_dtypes aliased to mldtypes) and casts registered
/// before are skipped. Returns the number of pairs registered by this call.
///
/// Raises TypeError, naming both types with their packages, if a pair is
/// not one of our types and a dtype of the same name and itemsize.
#[pyfunction]
pub(crate) fn _register_twins(
    py: Python<'_>,
    pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
) -> PyResult<usize> {
    // Validate everything first: nothing is registered on error.
    let mut twins = Vec::new(); // (our DType, our dtype, our num, their dtype, their num, size)
    for (ours, theirs) in &pairs {
        let (dour, nour, sour) = dtype_of(ours)?;
        let (dtheir, ntheir, stheir) = dtype_of(theirs)?;
        let Some(dt) = ours_by_num(nour) else {
            return Err(PyTypeError::new_err(format!(
                "{} is not an mldtypes type (twin casts pair an mldtypes type with its ml_dtypes twin)",
                qualified_name(ours)
            )));
        };
        if nour == ntheir {
            continue;
        }
        let (name_our, name_their) = (dour.str()?.to_string(), dtheir.str()?.to_string());
        if sour != stheir || name_our != name_their {
            return Err(PyTypeError::new_err(format!(
                "{} ({sour} bytes) and {} ({stheir} bytes) are not twins",
                qualified_name(ours),
                qualified_name(theirs)
            )));
        }
        if copy_fn(sour).is_none() {
            return Err(PyTypeError::new_err(format!(
                "no twin cast for {sour}-byte dtypes ({})",
                qualified_name(ours)
            )));
        }
        twins.push((dt, dour, nour, dtheir, ntheir, sour));
    }
    // The float formats' array functions and casts read the format from
    // the dtype of the array NumPy passes: a twin's type number stands for
    // the same format.
    for (dt, _, _, _, ntheir, _) in &twins {
        if let Some(info) = crate::dtypes::float::info(*dt) {
            registry::set_float_info(*ntheir, info)?;
        }
    }
    let mut guard = DONE.lock().unwrap_or_else(|e| e.into_inner());
    let done = guard.get_or_insert_with(HashSet::new);
    let mut count = 0;
    let mut casts_made = 0;
    let mut identity = Vec::new();
    for (_, dour, nour, dtheir, ntheir, size) in &twins {
        let f = copy_fn(*size).unwrap_or(None);
        let mut any = false;
        for (d, from, to) in [(dour, *nour, *ntheir), (dtheir, *ntheir, *nour)] {
            // SAFETY: GIL held; `d` a live dtype object.
            if unsafe {
                register_one(
                    py,
                    done,
                    d.as_ptr() as *mut _,
                    from,
                    to,
                    Some(f.expect("sized")),
                    true,
                )?
            } {
                any = true;
                casts_made += 1;
            }
        }
        if any {
            count += 1;
            identity.push((dour.clone(), dtheir.clone()));
            identity.push((dtheir.clone(), dour.clone()));
        }
    }
    // Cross-type casts, with the functions of our own.
    let twin_of = |dt: DType| twins.iter().find(|t| t.0 == dt);
    for (a, b, f) in casts::among_ours() {
        let (Some(ta), Some(tb)) = (twin_of(a), twin_of(b)) else {
            continue;
        };
        // X → Z': our X's descriptor, the twin's number for Z.
        // SAFETY: GIL held; descriptors live.
        unsafe {
            if register_one(py, done, ta.1.as_ptr() as *mut _, ta.2, tb.4, f, false)? {
                casts_made += 1;
            }
            if register_one(py, done, ta.3.as_ptr() as *mut _, ta.4, tb.2, f, false)? {
                casts_made += 1;
            }
        }
    }
    drop(guard);
    for (dt, _, _, _, ntheir, _) in &twins {
        if let Some(i) = registry::index(*dt) {
            TWIN_NUMS[i].store(*ntheir, Ordering::Release);
        }
    }
    if !identity.is_empty() {
        let metas: Vec<_> = twins
            .iter()
            .filter_map(|t| registry::index(t.0).map(|i| (i, t.1.clone(), t.3.clone())))
            .collect();
        if patch_common_dtype(py, &metas) {
            PROMOTION.store(true, Ordering::Release);
        }
        let equiv = make_equiv(py, &identity);
        // the weakest level in effect: once safe, it stays reported safe
        let level = if equiv { 2 } else { 1 };
        let prev = LEVEL.load(Ordering::Acquire);
        LEVEL.store(
            if prev == 0 { level } else { prev.min(level) },
            Ordering::Release,
        );
    }
    PAIRS.fetch_add(count, Ordering::AcqRel);
    CASTS.fetch_add(casts_made, Ordering::AcqRel);
    Ok(count)
}

/// The state of the twin casts: a dict with `pairs` (twin pairs
/// registered), `casts` (casts registered, both directions, twins and
/// cross-type), `promotion` (whether mixed promotions follow the
/// single-package order, see the module documentation) and `casting` (`"equiv"`, `"safe"`, or `None` before any
/// registration): the level `numpy.can_cast` reports between twins.
#[pyfunction]
pub(crate) fn _twin_state(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("pairs", PAIRS.load(Ordering::Acquire))?;
    d.set_item("casts", CASTS.load(Ordering::Acquire))?;
    d.set_item("promotion", PROMOTION.load(Ordering::Acquire))?;
    d.set_item(
        "casting",
        match LEVEL.load(Ordering::Acquire) {
            2 => Some("equiv"),
            1 => Some("safe"),
            _ => None,
        },
    )?;
    Ok(d)
}

/// Adds the twin-cast registration functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_register_twins, m)?)?;
    m.add_function(wrap_pyfunction!(_twin_state, m)?)?;
    m.add_function(wrap_pyfunction!(_qualified_name, m)?)
}
