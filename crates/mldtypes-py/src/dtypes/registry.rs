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
use pyo3::ffi::PyTypeObject;

/// Every dtype this module registers, in registration order (the order of
/// ml_dtypes 0.6.0, so type numbers match when ml_dtypes is not loaded).
pub(crate) const ORDER: [DType; 20] = [
    DType::BFloat16,
    DType::Float8E3M4,
    DType::Float8E4M3,
    DType::Float8E4M3B11FNUZ,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float6E2M3FN,
    DType::Float6E3M2FN,
    DType::Float4E2M1FN,
    DType::Float8E8M0FNU,
    DType::Int1,
    DType::UInt1,
    DType::Int2,
    DType::UInt2,
    DType::Int4,
    DType::UInt4,
    DType::BComplex32,
    DType::Complex32,
];

/// Position of `dt` in [`ORDER`], `None` for NumPy's builtin dtypes.
pub(crate) const fn index(dt: DType) -> Option<usize> {
    let mut i = 0;
    while i < ORDER.len() {
        if ORDER[i] as u32 == dt as u32 {
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

/// The NumPy type number of `dt` once it is registered; `None` before
/// registration and for NumPy's builtin dtypes (use `NPY_TYPES` for those).
pub(crate) fn typenum(dt: DType) -> Option<c_int> {
    let n = TYPENUMS[index(dt)?].load(Ordering::Acquire);
    (n >= 0).then_some(n)
}

/// The scalar type object (`mldtypes.bfloat16`, ...) of `dt`, once created;
/// `None` before and for NumPy's builtin dtypes.
pub(crate) fn scalar_type(dt: DType) -> Option<*mut PyTypeObject> {
    let p = SCALAR_TYPES[index(dt)?].load(Ordering::Acquire);
    (!p.is_null()).then_some(p)
}

/// The registered dtype instance (`numpy.dtype(mldtypes.bfloat16)`),
/// a borrowed reference kept alive for the life of the process.
pub(crate) fn descr(dt: DType) -> Option<*mut PyArray_Descr> {
    let p = DESCRS[index(dt)?].load(Ordering::Acquire);
    (!p.is_null()).then_some(p)
}

pub(crate) fn set_scalar_type(dt: DType, t: *mut PyTypeObject) {
    if let Some(i) = index(dt) {
        SCALAR_TYPES[i].store(t, Ordering::Release);
    }
}

pub(crate) fn set_registered(dt: DType, num: c_int, descr: *mut PyArray_Descr) {
    if let Some(i) = index(dt) {
        DESCRS[i].store(descr, Ordering::Release);
        TYPENUMS[i].store(num, Ordering::Release);
    }
}
