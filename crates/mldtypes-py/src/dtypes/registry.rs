//! What NumPy assigned to each of our dtypes at registration: the type
//! number, the scalar type object and the dtype instance.
//!
//! Written once, while the module initializes (with the GIL held), read
//! from anywhere afterwards: the slots are atomics, so readers on any thread
//! see either "not registered" or the final value.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use mldtypes::dtype::DType;
use numpy::npyffi::PyArray_Descr;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi::PyTypeObject;
use pyo3::PyResult;

use crate::dtypes::float::FloatInfo;

/// Every dtype this module registers at import, in registration order: the
/// library's list of ml_dtypes' types (so type numbers match ml_dtypes'
/// when it is not loaded).
pub(crate) const ORDER: [DType; 20] = DType::ML_DTYPES;

/// NumPy's `dtype.kind` and `dtype.char` of one of ml_dtypes' types, as
/// ml_dtypes 0.6.0 registers them (`dtypes.cc`): every float is kind 'V'
/// except float8_e5m2 ('f'); the complex types are kind 'W'.
pub(crate) const fn numpy_codes(dt: DType) -> (u8, u8) {
    match dt {
        DType::BFloat16 => (b'V', b'E'),
        DType::Float8E3M4 => (b'V', b'3'),
        DType::Float8E4M3 => (b'V', b'7'),
        DType::Float8E4M3B11FNUZ => (b'V', b'L'),
        DType::Float8E4M3FN => (b'V', b'4'),
        DType::Float8E4M3FNUZ => (b'V', b'G'),
        DType::Float8E5M2 => (b'f', b'5'),
        DType::Float8E5M2FNUZ => (b'V', b'C'),
        DType::Float6E2M3FN => (b'V', b'8'),
        DType::Float6E3M2FN => (b'V', b'9'),
        DType::Float4E2M1FN => (b'V', b'0'),
        DType::Float8E8M0FNU => (b'V', b'W'),
        DType::Int1 => (b'V', b'e'),
        DType::UInt1 => (b'V', b'E'),
        DType::Int2 => (b'V', b'c'),
        DType::UInt2 => (b'V', b'C'),
        DType::Int4 => (b'V', b'a'),
        DType::UInt4 => (b'V', b'A'),
        DType::BComplex32 => (b'W', b'P'),
        DType::Complex32 => (b'W', b'O'),
        // Formats ml_dtypes does not define.
        _ => (b'V', b'K'),
    }
}

/// Position of `dt` in [`ORDER`], `None` for NumPy's builtin dtypes.
pub(crate) const fn index(dt: DType) -> Option<usize> {
    let mut i = 0;
    while i < ORDER.len() {
        if ORDER[i].ordinal() == dt.ordinal() {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[allow(clippy::declare_interior_mutable_const)]
const UNSET_NUM: AtomicI32 = AtomicI32::new(-1);
#[allow(clippy::declare_interior_mutable_const)]
const UNSET_TYPE: AtomicPtr<PyTypeObject> = AtomicPtr::new(std::ptr::null_mut());
#[allow(clippy::declare_interior_mutable_const)]
const UNSET_DESCR: AtomicPtr<PyArray_Descr> = AtomicPtr::new(std::ptr::null_mut());

static TYPENUMS: [AtomicI32; 20] = [UNSET_NUM; 20];
static SCALAR_TYPES: [AtomicPtr<PyTypeObject>; 20] = [UNSET_TYPE; 20];
static DESCRS: [AtomicPtr<PyArray_Descr>; 20] = [UNSET_DESCR; 20];

/// The dtypes registered beyond [`ORDER`] (the IEEE P3109 formats, on
/// first use): `(dtype, type number, scalar type, dtype instance)`.
#[allow(clippy::type_complexity)]
static EXTRA: std::sync::Mutex<Vec<(DType, c_int, usize, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// The [`EXTRA`] entry of `dt`, if any.
fn extra(dt: DType) -> Option<(c_int, usize, usize)> {
    let e = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
    e.iter().find(|x| x.0 == dt).map(|x| (x.1, x.2, x.3))
}

/// The NumPy type number of `dt` once it is registered; `None` before
/// registration and for NumPy's builtin dtypes (use `NPY_TYPES` for those).
pub(crate) fn typenum(dt: DType) -> Option<c_int> {
    let n = match index(dt) {
        Some(i) => TYPENUMS[i].load(Ordering::Acquire),
        None => extra(dt)?.0,
    };
    (n >= 0).then_some(n)
}

/// The scalar type object (`mldtypes.bfloat16`, ...) of `dt`, once created;
/// `None` before and for NumPy's builtin dtypes.
pub(crate) fn scalar_type(dt: DType) -> Option<*mut PyTypeObject> {
    let p = match index(dt) {
        Some(i) => SCALAR_TYPES[i].load(Ordering::Acquire),
        None => extra(dt)?.1 as *mut PyTypeObject,
    };
    (!p.is_null()).then_some(p)
}

/// The registered dtype instance (`numpy.dtype(mldtypes.bfloat16)`),
/// a borrowed reference kept alive for the life of the process.
pub(crate) fn descr(dt: DType) -> Option<*mut PyArray_Descr> {
    let p = match index(dt) {
        Some(i) => DESCRS[i].load(Ordering::Acquire),
        None => extra(dt)?.2 as *mut PyArray_Descr,
    };
    (!p.is_null()).then_some(p)
}

/// Every dtype registered so far: [`ORDER`], then the ones registered on
/// first use, in registration order.
pub(crate) fn registered() -> Vec<DType> {
    let mut v: Vec<DType> = ORDER
        .into_iter()
        .filter(|d| typenum(*d).is_some())
        .collect();
    let e = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
    v.extend(e.iter().filter(|x| x.1 >= 0).map(|x| x.0));
    v
}

pub(crate) fn set_scalar_type(dt: DType, t: *mut PyTypeObject) {
    match index(dt) {
        Some(i) => SCALAR_TYPES[i].store(t, Ordering::Release),
        None => {
            let mut e = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
            match e.iter_mut().find(|x| x.0 == dt) {
                Some(x) => x.2 = t as usize,
                None => e.push((dt, -1, t as usize, 0)),
            }
        }
    }
}

pub(crate) fn set_registered(dt: DType, num: c_int, descr: *mut PyArray_Descr) {
    match index(dt) {
        Some(i) => {
            DESCRS[i].store(descr, Ordering::Release);
            TYPENUMS[i].store(num, Ordering::Release);
        }
        None => {
            let mut e = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
            match e.iter_mut().find(|x| x.0 == dt) {
                Some(x) => {
                    x.1 = num;
                    x.3 = descr as usize;
                }
                None => e.push((dt, num, 0, descr as usize)),
            }
        }
    }
}

/// NumPy's first user type number (`NPY_USERDEF`).
const NPY_USERDEF: c_int = 256;
/// How many user type numbers [`FLOATS`] covers.
const USER_SLOTS: usize = 4096;

#[allow(clippy::declare_interior_mutable_const)]
const NO_FLOAT: AtomicPtr<FloatInfo> = AtomicPtr::new(std::ptr::null_mut());
/// The float format of each user type number that is one of ours (or an
/// ml_dtypes twin of one): what the array functions and casts read from the
/// dtype of the array NumPy passes them.
static FLOATS: [AtomicPtr<FloatInfo>; USER_SLOTS] = [NO_FLOAT; USER_SLOTS];

/// The float format registered under type number `num`.
pub(crate) fn float_info(num: c_int) -> Option<&'static FloatInfo> {
    let i = usize::try_from(num.checked_sub(NPY_USERDEF)?).ok()?;
    let p = FLOATS.get(i)?.load(Ordering::Acquire);
    // SAFETY: only leaked `&'static FloatInfo`s are stored.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Records that type number `num` holds elements of `info`.
///
/// Raises RuntimeError when NumPy has handed out more user type numbers
/// than this table covers.
pub(crate) fn set_float_info(num: c_int, info: &'static FloatInfo) -> PyResult<()> {
    let slot = num
        .checked_sub(NPY_USERDEF)
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| FLOATS.get(i))
        .ok_or_else(|| {
            PyRuntimeError::new_err(format!(
                "NumPy type number {num} is beyond the {USER_SLOTS} user dtypes mldtypes can track"
            ))
        })?;
    slot.store(
        info as *const FloatInfo as *mut FloatInfo,
        Ordering::Release,
    );
    Ok(())
}

/// The casts between two of ml_dtypes' types that ml_dtypes 0.6.0 registers,
/// as `(from, to)` in registration order: both ways between any two of the
/// float formats (but float8_e8m0fnu) and complex types; float8_e8m0fnu with
/// bfloat16; widening among the signed and among the unsigned sub-byte
/// integers; both ways between each sub-byte integer and each float format
/// or complex type, except float6_e2m3fn, which ml_dtypes pairs with the 1-
/// and 2-bit integers only.
pub(crate) fn ml_dtypes_casts() -> Vec<(DType, DType)> {
    use mldtypes::dtype::Kind;
    let mut out = Vec::new();
    let mut both = |a: DType, b: DType| {
        out.push((a, b));
        out.push((b, a));
    };
    let inexact: Vec<DType> = ORDER
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Float | Kind::Complex) && *d != DType::Float8E8M0FNU)
        .collect();
    for (i, &a) in inexact.iter().enumerate() {
        for &b in &inexact[i + 1..] {
            both(a, b);
        }
    }
    both(DType::Float8E8M0FNU, DType::BFloat16);
    let ints: Vec<DType> = ORDER.into_iter().filter(|d| d.is_integer()).collect();
    for &a in &ints {
        for &b in &ints {
            if a.kind() == b.kind() && a.bits() < b.bits() {
                out.push((a, b));
            }
        }
    }
    for &i in &ints {
        for &f in &inexact {
            if f != DType::Float6E2M3FN || i.bits() <= 2 {
                out.push((i, f));
                out.push((f, i));
            }
        }
    }
    out
}

/// `_registry()`: the types the package registers at import, in
/// registration order, as `(name, family)` pairs (`"float"`, `"int"` or
/// `"complex"`): the library's list of ml_dtypes' types
/// (`DType::ML_DTYPES`). The Python side (exports, `__all__`, finfo/iinfo,
/// the ml_dtypes alias, the twin casts) takes its names from here.
#[pyo3::pyfunction]
pub(crate) fn _registry() -> Vec<(&'static str, &'static str)> {
    use mldtypes::dtype::Kind;
    ORDER
        .into_iter()
        .map(|d| {
            let family = match d.kind() {
                Kind::Float => "float",
                Kind::Complex => "complex",
                _ => "int",
            };
            (d.name(), family)
        })
        .collect()
}
