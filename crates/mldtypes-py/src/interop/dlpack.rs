//! DLPack exchange for our dtypes: `from_dlpack` views a producer's CPU
//! tensor as a NumPy array of an mldtypes dtype, `to_dlpack` exports one.
//!
//! The C structures are DLPack's (`dlpack.h`, v1.3 layout, ABI-stable since
//! 1.0), declared here with `#[repr(C)]`. Both capsule kinds are handled:
//! the unversioned `"dltensor"` (DLPack 0.8, `DLManagedTensor`) and the
//! versioned `"dltensor_versioned"` (DLPack 1.x, `DLManagedTensorVersioned`,
//! with the read-only, is-copied and sub-byte-padded flags).
//!
//! Type codes (DLPack 1.1): kDLBfloat bits 16 → bfloat16; kDLFloat8_* bits 8
//! → the eight float8 formats; kDLFloat6_e2m3fn / _e3m2fn bits 6 and
//! kDLFloat4_e2m1fn bits 4; kDLInt / kDLUInt bits 1, 2, 4 → int1 … uint4;
//! kDLComplex bits 32 → complex32. bcomplex32 has no code. NumPy's own
//! dtypes go through NumPy's `from_dlpack` / `ndarray.__dlpack__`. On NumPy
//! ≥ 2.5 the whole-byte types are also registered with NumPy's DLPack
//! registry, so NumPy's own entry points know them
//! ([`register_with_numpy`], called through [`_register_numpy_dlpack`]).
//!
//! Lifetimes: a consumed capsule is renamed `"used_dltensor[_versioned]"`
//! and the managed tensor moves into a private capsule that is the NumPy
//! array's base; its destructor calls the producer's deleter exactly once,
//! when the array (and every view of it) is gone. An exported tensor holds a
//! reference to the exported array until the consumer calls our deleter (or,
//! if the capsule is never consumed, until the capsule dies).

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

use mldtypes::cast::pack as packing;
use mldtypes::dtype::DType;
use numpy::npyffi::{self, npy_intp, NpyTypes, PyArrayObject, NPY_TYPES, PY_ARRAY_API};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::dtypes::registry;
use crate::npapi;

/// `DLDevice`: device type (kDLCPU = 1, kDLCUDA = 2, ...) and index.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct DLDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`: type code, bits per lane, lanes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`: shape and strides in elements (strides NULL = C-contiguous
/// before DLPack 1.2), byte offset from `data`.
#[repr(C)]
pub(crate) struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor` (DLPack 0.x, capsule name `"dltensor"`).
#[repr(C)]
pub(crate) struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct DLPackVersion {
    major: u32,
    minor: u32,
}

/// `DLManagedTensorVersioned` (DLPack 1.x, capsule name
/// `"dltensor_versioned"`).
#[repr(C)]
pub(crate) struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const K_DL_CPU: i32 = 1;
const K_DL_INT: u8 = 0;
const K_DL_UINT: u8 = 1;
const K_DL_FLOAT: u8 = 2;
const K_DL_BFLOAT: u8 = 4;
const K_DL_COMPLEX: u8 = 5;
const K_DL_BOOL: u8 = 6;

const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 1 << 1;
const FLAG_SUBBYTE_PADDED: u64 = 1 << 2;

/// The DLPack version we produce and ask for.
const OUR_MINOR: u32 = 3;

const NAME_V0: &CStr = c"dltensor";
const NAME_V1: &CStr = c"dltensor_versioned";
const USED_V0: &CStr = c"used_dltensor";
const USED_V1: &CStr = c"used_dltensor_versioned";
const OWNER_V0: &CStr = c"mldtypes.dlpack_owner";
const OWNER_V1: &CStr = c"mldtypes.dlpack_owner_versioned";

/// Tensors exported by `to_dlpack` / deleted by their deleter (test hook).
static EXPORTED: AtomicU64 = AtomicU64::new(0);
static DELETED: AtomicU64 = AtomicU64::new(0);

/// The DLPack type (code, bits) of one of our dtypes, bits per value
/// (sub-byte types: their width); `None` for bcomplex32.
fn dl_type(dt: DType) -> Option<(u8, u8)> {
    Some(match dt {
        DType::BFloat16 => (K_DL_BFLOAT, 16),
        DType::Float8E3M4 => (7, 8),
        DType::Float8E4M3 => (8, 8),
        DType::Float8E4M3B11FNUZ => (9, 8),
        DType::Float8E4M3FN => (10, 8),
        DType::Float8E4M3FNUZ => (11, 8),
        DType::Float8E5M2 => (12, 8),
        DType::Float8E5M2FNUZ => (13, 8),
        DType::Float8E8M0FNU => (14, 8),
        DType::Float6E2M3FN => (15, 6),
        DType::Float6E3M2FN => (16, 6),
        DType::Float4E2M1FN => (17, 4),
        DType::Int1 => (K_DL_INT, 1),
        DType::UInt1 => (K_DL_UINT, 1),
        DType::Int2 => (K_DL_INT, 2),
        DType::UInt2 => (K_DL_UINT, 2),
        DType::Int4 => (K_DL_INT, 4),
        DType::UInt4 => (K_DL_UINT, 4),
        DType::Complex32 => (K_DL_COMPLEX, 32),
        _ => return None,
    })
}

/// Our dtype for a DLPack (code, bits per lane), if any.
fn our_type(code: u8, bits: u8) -> Option<DType> {
    registry::ORDER
        .iter()
        .copied()
        .find(|&d| dl_type(d) == Some((code, bits)))
}

/// Whether NumPy has a builtin dtype for (code, bits, lanes).
fn numpy_builtin(t: DLDataType) -> bool {
    t.lanes == 1
        && match t.code {
            K_DL_INT | K_DL_UINT => matches!(t.bits, 8 | 16 | 32 | 64),
            K_DL_FLOAT => matches!(t.bits, 16 | 32 | 64),
            K_DL_COMPLEX => matches!(t.bits, 64 | 128),
            K_DL_BOOL => t.bits == 8,
            _ => false,
        }
}

/// DLPack's name of a type code, for error messages.
fn code_name(code: u8) -> &'static str {
    match code {
        0 => "kDLInt",
        1 => "kDLUInt",
        2 => "kDLFloat",
        3 => "kDLOpaqueHandle",
        4 => "kDLBfloat",
        5 => "kDLComplex",
        6 => "kDLBool",
        7 => "kDLFloat8_e3m4",
        8 => "kDLFloat8_e4m3",
        9 => "kDLFloat8_e4m3b11fnuz",
        10 => "kDLFloat8_e4m3fn",
        11 => "kDLFloat8_e4m3fnuz",
        12 => "kDLFloat8_e5m2",
        13 => "kDLFloat8_e5m2fnuz",
        14 => "kDLFloat8_e8m0fnu",
        15 => "kDLFloat6_e2m3fn",
        16 => "kDLFloat6_e3m2fn",
        17 => "kDLFloat4_e2m1fn",
        _ => "unknown code",
    }
}

/// DLPack's name of a device type, for error messages.
fn device_name(t: i32) -> &'static str {
    match t {
        1 => "CPU (kDLCPU)",
        2 => "CUDA (kDLCUDA)",
        3 => "CUDA host (kDLCUDAHost)",
        4 => "OpenCL (kDLOpenCL)",
        7 => "Vulkan (kDLVulkan)",
        8 => "Metal (kDLMetal)",
        9 => "VPI (kDLVPI)",
        10 => "ROCm (kDLROCM)",
        11 => "ROCm host (kDLROCMHost)",
        12 => "ext_dev (kDLExtDev)",
        13 => "CUDA managed (kDLCUDAManaged)",
        14 => "oneAPI (kDLOneAPI)",
        15 => "WebGPU (kDLWebGPU)",
        16 => "Hexagon (kDLHexagon)",
        17 => "MAIA (kDLMAIA)",
        18 => "Trainium (kDLTrn)",
        _ => "an unknown device type",
    }
}

fn device_error(t: i32, id: i32) -> PyErr {
    PyBufferError::new_err(format!(
        "from_dlpack: the tensor is on {} (device type {t}, id {id}); mldtypes views CPU \
         memory only (kDLCPU) — move the tensor to the CPU first",
        device_name(t)
    ))
}

/// The dtype of `arr` among ours, or the one whose ml_dtypes twin it has
/// (the same bytes: an ml_dtypes array exports as its format).
fn array_dtype(arr: &Bound<'_, PyAny>) -> Option<DType> {
    // SAFETY: `arr` is an ndarray (checked by the callers).
    let num = unsafe { npapi::array_typenum(arr.as_ptr()) };
    registry::ORDER
        .iter()
        .copied()
        .find(|&d| registry::typenum(d) == Some(num))
        .or_else(|| crate::interop::twins::twin_of_num(num))
}

/// The package-qualified name of `arr`'s dtype for messages
/// (`mldtypes.bfloat16`, or `ml_dtypes.bfloat16` for an ml_dtypes array).
fn type_name(arr: &Bound<'_, PyAny>, dt: DType) -> String {
    arr.getattr("dtype")
        .map(|d| crate::interop::twins::qualified_name(&d))
        .unwrap_or_else(|_| format!("mldtypes.{}", dt.name()))
}

/// Releases a reference from any thread: attaches to the interpreter if it
/// still runs (a consumer may call the deleter without the GIL); leaks it
/// during interpreter teardown.
unsafe fn release(obj: *mut ffi::PyObject) {
    unsafe {
        if obj.is_null() || ffi::Py_IsInitialized() == 0 {
            return;
        }
        let g = ffi::PyGILState_Ensure();
        ffi::Py_DECREF(obj);
        ffi::PyGILState_Release(g);
    }
}

// ---------------------------------------------------------------- producer

/// What an exported tensor owns: the managed struct (first, so its address
/// is the holder's), the shape and strides it points to, and the array.
#[repr(C)]
struct Holder<M> {
    managed: M,
    shape: Vec<i64>,
    strides: Vec<i64>,
    owner: *mut ffi::PyObject,
}

unsafe extern "C" fn delete_v0(p: *mut DLManagedTensor) {
    if p.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `p` came from Box::into_raw of a Holder<DLManagedTensor>.
        let h = unsafe { Box::from_raw(p as *mut Holder<DLManagedTensor>) };
        unsafe { release(h.owner) };
        DELETED.fetch_add(1, Ordering::Relaxed);
    });
}

unsafe extern "C" fn delete_v1(p: *mut DLManagedTensorVersioned) {
    if p.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `p` came from Box::into_raw of a Holder<DLManagedTensorVersioned>.
        let h = unsafe { Box::from_raw(p as *mut Holder<DLManagedTensorVersioned>) };
        unsafe { release(h.owner) };
        DELETED.fetch_add(1, Ordering::Relaxed);
    });
}

/// A DLPack managed tensor (`DLManagedTensor` or `DLManagedTensorVersioned`):
/// both end their lifetime through their own `deleter`.
trait Managed: Sized {
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)>;
}

impl Managed for DLManagedTensor {
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

impl Managed for DLManagedTensorVersioned {
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
}

/// The body of every capsule destructor: if the capsule still has `name`
/// (no consumer renamed it `used_...`), calls its tensor's deleter.
///
/// # Safety
/// `cap` is a live capsule whose pointer, under `name`, is a `T`.
unsafe fn run_deleter<T: Managed>(cap: *mut ffi::PyObject, name: &CStr) {
    unsafe {
        if ffi::PyCapsule_IsValid(cap, name.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(cap, name.as_ptr()) as *mut T;
            if !p.is_null() {
                if let Some(d) = (*p).deleter() {
                    d(p);
                }
            }
        }
    }
}

/// Destructor of a capsule we produced: frees the tensor unless a consumer
/// took it (renamed the capsule `used_...`).
unsafe extern "C" fn capsule_v0_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule.
    unsafe { run_deleter::<DLManagedTensor>(cap, NAME_V0) }
}

unsafe extern "C" fn capsule_v1_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule.
    unsafe { run_deleter::<DLManagedTensorVersioned>(cap, NAME_V1) }
}

/// The exported layout: dtype, shape, strides (elements), data, owner.
struct Layout<'py> {
    dtype: DLDataType,
    shape: Vec<i64>,
    strides: Vec<i64>,
    data: *mut c_void,
    owner: Bound<'py, PyAny>,
    flags: u64,
}

/// How a sub-byte array of ours is exported.
fn width(dt: DType) -> Option<u8> {
    match dl_type(dt) {
        Some((_, b)) if b < 8 => Some(b),
        _ => None,
    }
}

/// The layout of `arr` (an ndarray of our dtype `dt`) for export.
fn layout<'py>(
    arr: &Bound<'py, PyAny>,
    dt: DType,
    packed: bool,
    lanes: u16,
    copy: bool,
) -> PyResult<Layout<'py>> {
    let py = arr.py();
    let name = type_name(arr, dt);
    let (code, bits) = dl_type(dt).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "to_dlpack: {name} has no DLPack type code (DLPack 1.1 has none for a \
             complex of two bfloat16); convert it first, e.g. with mldtypes.real/imag"
        ))
    })?;
    let sub = bits < 8;
    if packed {
        if !sub {
            return Err(PyValueError::new_err(format!(
                "to_dlpack: packed=True applies to the sub-byte dtypes, not {name}"
            )));
        }
        if dt == DType::Int1 || dt == DType::UInt1 {
            return Err(PyTypeError::new_err(format!(
                "to_dlpack: {name} has no packed layout (mldtypes.pack covers 2-, 4- \
                 and 6-bit types); export it padded (packed=False)"
            )));
        }
        let mut shape: Vec<i64> = arr.getattr("shape")?.extract()?;
        if lanes != 1 {
            if lanes as u32 * bits as u32 != 8 {
                return Err(PyValueError::new_err(format!(
                    "to_dlpack: lanes={lanes} does not group {bits}-bit {name} values \
                     into bytes (lanes x bits must be 8)"
                )));
            }
            match shape.last_mut() {
                Some(l) if *l % lanes as i64 == 0 => *l /= lanes as i64,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "to_dlpack: lanes={lanes} needs a last dimension divisible by {lanes}, \
                         the array's shape is {shape:?}"
                    )))
                }
            }
        }
        let bytes = crate::pack::pack(py, arr)?;
        let data = unsafe { npapi::array_data(bytes.as_ptr()) };
        return Ok(Layout {
            dtype: DLDataType { code, bits, lanes },
            strides: c_strides(&shape),
            shape,
            data,
            owner: bytes,
            flags: FLAG_IS_COPIED,
        });
    }
    let arr = if copy {
        py.import("numpy")?
            .call_method1("array", (arr,))?
            .call_method1("copy", ())?
    } else {
        arr.clone()
    };
    // SAFETY: an ndarray; the fields are read while it is alive.
    let (shape, bstrides, data, flags) = unsafe {
        let a = arr.as_ptr() as *mut PyArrayObject;
        let nd = (*a).fields.nd as usize;
        let dims = if nd == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts((*a).fields.dimensions, nd)
        };
        let st = if nd == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts((*a).fields.strides, nd)
        };
        (
            dims.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            st.iter().map(|&s| s as i64).collect::<Vec<_>>(),
            (*a).fields.data as *mut c_void,
            (*a).fields.flags,
        )
    };
    let itemsize: i64 = arr.getattr("itemsize")?.extract()?;
    let mut strides = Vec::with_capacity(bstrides.len());
    for (s, d) in bstrides.iter().zip(&shape) {
        if s % itemsize != 0 && *d > 1 {
            return Err(PyBufferError::new_err(format!(
                "to_dlpack: a stride of {s} bytes is not a whole number of {name} \
                 elements ({itemsize} bytes); DLPack strides count elements — copy the array \
                 first"
            )));
        }
        strides.push(s / itemsize);
    }
    let mut fl = if copy { FLAG_IS_COPIED } else { 0 };
    if flags & npyffi::NPY_ARRAY_WRITEABLE == 0 {
        fl |= FLAG_READ_ONLY;
    }
    if sub {
        fl |= FLAG_SUBBYTE_PADDED;
    }
    Ok(Layout {
        dtype: DLDataType {
            code,
            bits,
            lanes: 1,
        },
        shape,
        strides,
        data,
        owner: arr,
        flags: fl,
    })
}

/// The number of elements of `shape`, `None` on overflow.
fn count(shape: &[i64]) -> Option<i64> {
    shape.iter().try_fold(1i64, |n, &d| n.checked_mul(d))
}

fn too_big(shape: &[i64]) -> PyErr {
    PyBufferError::new_err(format!(
        "from_dlpack: shape {shape:?} has more elements than fit in 64 bits"
    ))
}

/// C-contiguous strides in elements for `shape`.
fn c_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

/// A capsule for `arr`: versioned (`minor`: the version we claim) or not.
fn make_capsule<'py>(
    arr: &Bound<'py, PyAny>,
    dt: DType,
    minor: Option<u32>,
    (packed, lanes): (bool, u16),
    copy: bool,
    device: DLDevice,
) -> PyResult<Bound<'py, PyAny>> {
    let py = arr.py();
    let lay = layout(arr, dt, packed, lanes, copy)?;
    let name = type_name(arr, dt);
    if minor.is_none() && lay.flags & FLAG_READ_ONLY != 0 {
        return Err(PyBufferError::new_err(format!(
            "to_dlpack: this {name} array is read-only, which only a versioned \
             (DLPack >= 1.0) capsule can signal; ask for max_version=(1, 0) or later, or pass \
             copy=True"
        )));
    }
    if lay.flags & FLAG_SUBBYTE_PADDED != 0 && minor.is_none_or(|m| m < 3) {
        return Err(PyBufferError::new_err(format!(
            "to_dlpack: {name} stores one value per byte, which DLPack signals with \
             the IS_SUBBYTE_TYPE_PADDED flag of DLPack >= 1.3 (this consumer asked for {}); \
             pass packed=True to export a packed copy instead",
            match minor {
                None => "an unversioned capsule".to_string(),
                Some(m) => format!("version 1.{m}"),
            }
        )));
    }
    let owner = lay.owner.clone().unbind().into_ptr();
    let dlt = |shape: &mut Vec<i64>, strides: &mut Vec<i64>| DLTensor {
        data: lay.data,
        device,
        ndim: lay.shape.len() as i32,
        dtype: lay.dtype,
        shape: if shape.is_empty() {
            std::ptr::null_mut()
        } else {
            shape.as_mut_ptr()
        },
        strides: if strides.is_empty() {
            std::ptr::null_mut()
        } else {
            strides.as_mut_ptr()
        },
        byte_offset: 0,
    };
    let cap = unsafe {
        match minor {
            Some(m) => {
                let mut h = Box::new(Holder {
                    managed: DLManagedTensorVersioned {
                        version: DLPackVersion { major: 1, minor: m },
                        manager_ctx: std::ptr::null_mut(),
                        deleter: Some(delete_v1),
                        flags: lay.flags,
                        dl_tensor: dlt(&mut Vec::new(), &mut Vec::new()),
                    },
                    shape: lay.shape.clone(),
                    strides: lay.strides.clone(),
                    owner,
                });
                let (mut sh, mut st) =
                    (std::mem::take(&mut h.shape), std::mem::take(&mut h.strides));
                h.managed.dl_tensor = dlt(&mut sh, &mut st);
                h.shape = sh;
                h.strides = st;
                let p = Box::into_raw(h);
                (*p).managed.manager_ctx = p as *mut c_void;
                let c = ffi::PyCapsule_New(
                    p as *mut c_void,
                    NAME_V1.as_ptr(),
                    Some(capsule_v1_destructor),
                );
                if c.is_null() {
                    delete_v1(p as *mut DLManagedTensorVersioned);
                }
                c
            }
            None => {
                let mut h = Box::new(Holder {
                    managed: DLManagedTensor {
                        dl_tensor: dlt(&mut Vec::new(), &mut Vec::new()),
                        manager_ctx: std::ptr::null_mut(),
                        deleter: Some(delete_v0),
                    },
                    shape: lay.shape.clone(),
                    strides: lay.strides.clone(),
                    owner,
                });
                let (mut sh, mut st) =
                    (std::mem::take(&mut h.shape), std::mem::take(&mut h.strides));
                h.managed.dl_tensor = dlt(&mut sh, &mut st);
                h.shape = sh;
                h.strides = st;
                let p = Box::into_raw(h);
                (*p).managed.manager_ctx = p as *mut c_void;
                let c = ffi::PyCapsule_New(
                    p as *mut c_void,
                    NAME_V0.as_ptr(),
                    Some(capsule_v0_destructor),
                );
                if c.is_null() {
                    delete_v0(p as *mut DLManagedTensor);
                }
                c
            }
        }
    };
    EXPORTED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: a new reference or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, cap) }
}

/// An array exported through DLPack: the object `mldtypes.to_dlpack`
/// returns, with the array-API methods `__dlpack__` and
/// `__dlpack_device__` (always the CPU, `(1, 0)`).
#[pyclass(module = "mldtypes", name = "DLPackExport", frozen)]
pub(crate) struct DLPackExport {
    array: Py<PyAny>,
    /// Our dtype; `None` for NumPy's builtin dtypes (exported by NumPy).
    dtype: Option<DType>,
    packed: bool,
    lanes: u16,
}

/// Parses `max_version` into the minor version of the versioned capsule to
/// produce (`None`: an unversioned capsule).
fn wanted_minor(max_version: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    let Some(v) = max_version else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(None);
    }
    let (major, minor): (i64, i64) = v.extract().map_err(|_| {
        PyTypeError::new_err("__dlpack__: max_version must be None or a (major, minor) tuple")
    })?;
    Ok(if major < 1 {
        None
    } else if major > 1 {
        Some(OUR_MINOR)
    } else {
        Some(minor.clamp(0, OUR_MINOR as i64) as u32)
    })
}

#[pymethods]
impl DLPackExport {
    /// A DLPack capsule of the array (the array-API `__dlpack__`).
    ///
    /// `max_version=None` gives an unversioned `"dltensor"` capsule (DLPack
    /// 0.8; read-only arrays and one-value-per-byte sub-byte types raise
    /// BufferError); `(1, m)` a `"dltensor_versioned"` one. `stream` must be
    /// None (CPU memory), `dl_device` None or `(1, 0)`. `copy=True` exports
    /// a copy (flag IS_COPIED), `copy=False`/`None` the array's memory.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arr = self.array.bind(py);
        let Some(dt) = self.dtype else {
            // Only the keywords given: NumPy 2.0's `__dlpack__` takes
            // `stream` alone (a consumer then retries without the others).
            let kw = PyDict::new(py);
            kw.set_item("stream", stream)?;
            if let Some(v) = max_version {
                kw.set_item("max_version", v)?;
            }
            if let Some(d) = dl_device {
                kw.set_item("dl_device", d)?;
            }
            if let Some(c) = copy {
                kw.set_item("copy", c)?;
            }
            return arr.call_method("__dlpack__", (), Some(&kw));
        };
        if stream.as_ref().is_some_and(|s| !s.is_none()) {
            return Err(PyValueError::new_err(
                "__dlpack__: stream must be None for CPU arrays",
            ));
        }
        if let Some(d) = dl_device.as_ref().filter(|d| !d.is_none()) {
            let (t, i): (i32, i32) = d.extract().map_err(|_| {
                PyTypeError::new_err("__dlpack__: dl_device must be None or (type, id)")
            })?;
            if t != K_DL_CPU {
                return Err(PyBufferError::new_err(format!(
                    "__dlpack__: cannot export to {} (device type {t}, id {i}); mldtypes \
                     arrays live in CPU memory",
                    device_name(t)
                )));
            }
        }
        if self.packed && copy == Some(false) {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: copy=False, but a packed export of {} is a packed copy",
                type_name(self.array.bind(py), dt)
            )));
        }
        let minor = wanted_minor(max_version.as_ref())?;
        make_capsule(
            arr,
            dt,
            minor,
            (self.packed, self.lanes),
            copy == Some(true),
            DLDevice {
                device_type: K_DL_CPU,
                device_id: 0,
            },
        )
    }

    /// `(1, 0)`: kDLCPU, device 0.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (K_DL_CPU, 0)
    }
}

/// Exports `array` for DLPack consumers (`torch.from_dlpack`,
/// `jax.numpy.from_dlpack`, `numpy.from_dlpack`, `mldtypes.from_dlpack`):
/// returns an object with `__dlpack__` and `__dlpack_device__` that shares
/// the array's memory.
///
/// Type codes (DLPack 1.1): bfloat16 → kDLBfloat (bits 16); the float8
/// formats → kDLFloat8_*; float6/float4 → kDLFloat6_*/kDLFloat4_e2m1fn
/// (bits 6/4); int1…uint4 → kDLInt/kDLUInt with bits 1/2/4; complex32 →
/// kDLComplex bits 32. NumPy's own dtypes are exported by NumPy; an array
/// of an ml_dtypes type (loaded in the same process) as its format, and
/// errors name its package (`ml_dtypes.bcomplex32`).
/// Sub-byte types are one value per byte in NumPy; they are exported as
/// such (flag IS_SUBBYTE_TYPE_PADDED, DLPack >= 1.3), or with
/// `packed=True` as a packed copy (the bit stream `mldtypes.pack` writes,
/// DLPack's packed layout; 2-, 4- and 6-bit types). `lanes=2` with
/// `packed=True` groups two 4-bit values per DLPack element (bits 4, lanes
/// 2, last dimension halved): PyTorch's `float4_e2m1fn_x2`.
///
/// Raises TypeError for bcomplex32 (no DLPack code) and for non-arrays.
#[pyfunction]
#[pyo3(signature = (array, /, *, packed=false, lanes=1))]
pub(crate) fn to_dlpack<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    packed: bool,
    lanes: u16,
) -> PyResult<Bound<'py, PyAny>> {
    if lanes != 1 && !packed {
        return Err(PyValueError::new_err(
            "to_dlpack: lanes applies to packed=True exports",
        ));
    }
    // SAFETY: GIL held.
    if !unsafe { npapi::is_array(array.as_ptr()) } {
        return Err(PyTypeError::new_err(format!(
            "to_dlpack needs a numpy.ndarray, got {}",
            array.get_type().name()?
        )));
    }
    let dtype = array_dtype(array);
    if let Some(dt) = dtype {
        if dl_type(dt).is_none() {
            // Raise now rather than at __dlpack__.
            layout(array, dt, false, 1, false)?;
        }
        if packed && width(dt).is_none() {
            return Err(PyValueError::new_err(format!(
                "to_dlpack: packed=True applies to the sub-byte dtypes, not {}",
                type_name(array, dt)
            )));
        }
    } else if packed {
        return Err(PyValueError::new_err(
            "to_dlpack: packed=True applies to the sub-byte mldtypes dtypes",
        ));
    }
    Ok(Bound::new(
        py,
        DLPackExport {
            array: array.clone().unbind(),
            dtype,
            packed,
            lanes,
        },
    )?
    .into_any())
}

/// Test hook: `(exported, deleted)` counts of the tensors `to_dlpack`
/// objects have produced and whose deleters have run.
#[pyfunction]
pub(crate) fn _dlpack_counters() -> (u64, u64) {
    (
        EXPORTED.load(Ordering::Relaxed),
        DELETED.load(Ordering::Relaxed),
    )
}

/// Test hook: a capsule of `array` (one of our dtypes) that claims
/// `device` — to test consumers' device checks without a GPU.
#[pyfunction]
#[pyo3(signature = (array, device, max_version=None))]
pub(crate) fn _dlpack_capsule<'py>(
    array: &Bound<'py, PyAny>,
    device: (i32, i32),
    max_version: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let dt = array_dtype(array)
        .ok_or_else(|| PyTypeError::new_err("_dlpack_capsule needs an mldtypes array"))?;
    make_capsule(
        array,
        dt,
        wanted_minor(max_version.as_ref())?,
        (false, 1),
        false,
        DLDevice {
            device_type: device.0,
            device_id: device.1,
        },
    )
}

// ---------------------------------------------------------------- consumer

/// A capsule handed on to `numpy.from_dlpack` (NumPy's builtin dtypes): its
/// `__dlpack__` returns the capsule already taken from the producer.
#[pyclass(module = "mldtypes", name = "_DLPackCapsule")]
struct CapsuleHolder {
    capsule: Option<Py<PyAny>>,
}

#[pymethods]
impl CapsuleHolder {
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __dlpack__(
        &mut self,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        self.capsule
            .take()
            .ok_or_else(|| PyBufferError::new_err("the DLPack capsule was already consumed"))
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (K_DL_CPU, 0)
    }
}

unsafe extern "C" fn owner_v0_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule.
    unsafe { run_deleter::<DLManagedTensor>(cap, OWNER_V0) }
}

unsafe extern "C" fn owner_v1_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with a live capsule.
    unsafe { run_deleter::<DLManagedTensorVersioned>(cap, OWNER_V1) }
}

/// What the capsule holds.
struct Taken {
    managed: *mut c_void,
    versioned: bool,
    flags: u64,
    tensor: *const DLTensor,
}

/// Reads the capsule without consuming it.
fn inspect(cap: &Bound<'_, PyAny>) -> PyResult<Taken> {
    let c = cap.as_ptr();
    unsafe {
        if ffi::PyCapsule_CheckExact(c) == 0 {
            return Err(PyTypeError::new_err(format!(
                "from_dlpack: __dlpack__ returned {}, not a PyCapsule",
                npapi::type_name(c)
            )));
        }
        if ffi::PyCapsule_IsValid(c, NAME_V1.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(c, NAME_V1.as_ptr()) as *mut DLManagedTensorVersioned;
            if p.is_null() {
                return Err(PyBufferError::new_err("from_dlpack: empty DLPack capsule"));
            }
            let v = (*p).version;
            if v.major != 1 {
                return Err(PyBufferError::new_err(format!(
                    "from_dlpack: DLPack version {}.{} is not supported (mldtypes reads 0.8 \
                     and 1.x)",
                    v.major, v.minor
                )));
            }
            return Ok(Taken {
                managed: p as *mut c_void,
                versioned: true,
                flags: (*p).flags,
                tensor: &(*p).dl_tensor,
            });
        }
        if ffi::PyCapsule_IsValid(c, NAME_V0.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(c, NAME_V0.as_ptr()) as *mut DLManagedTensor;
            if p.is_null() {
                return Err(PyBufferError::new_err("from_dlpack: empty DLPack capsule"));
            }
            return Ok(Taken {
                managed: p as *mut c_void,
                versioned: false,
                flags: 0,
                tensor: &(*p).dl_tensor,
            });
        }
        let name = ffi::PyCapsule_GetName(c);
        ffi::PyErr_Clear();
        let name = if name.is_null() {
            "NULL".to_string()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        Err(PyBufferError::new_err(format!(
            "from_dlpack: a capsule named {name:?} is not a DLPack tensor ready to consume \
             (expected \"dltensor\" or \"dltensor_versioned\"; \"used_...\" ones were consumed \
             already)"
        )))
    }
}

/// Builds an ndarray of `descr` over the tensor's memory, whose base owns
/// the managed tensor; renames the capsule "used_...". `elem` is the bytes
/// per DLPack element.
fn view<'py>(
    cap: &Bound<'py, PyAny>,
    t: &Taken,
    descr: *mut npyffi::PyArray_Descr,
    elem: i64,
    shape: &[i64],
    strides: Option<&[i64]>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cap.py();
    let tensor = unsafe { &*t.tensor };
    let mut dims: Vec<npy_intp> = shape.iter().map(|&d| d as npy_intp).collect();
    let mut bstrides: Vec<npy_intp> = Vec::new();
    if let Some(s) = strides {
        for &x in s {
            let b = x.checked_mul(elem).ok_or_else(|| {
                PyBufferError::new_err(format!("from_dlpack: stride {x} overflows"))
            })?;
            bstrides.push(b as npy_intp);
        }
    }
    let n = count(shape).ok_or_else(|| too_big(shape))?;
    let mut data = tensor.data as *mut u8;
    if data.is_null() {
        if n != 0 {
            return Err(PyBufferError::new_err(
                "from_dlpack: the tensor has elements but a NULL data pointer",
            ));
        }
        data = std::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8;
    } else {
        data = data.wrapping_add(tensor.byte_offset as usize);
    }
    let writeable = t.flags & FLAG_READ_ONLY == 0;
    let arr = unsafe {
        ffi::Py_INCREF(descr as *mut ffi::PyObject);
        PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            descr,
            dims.len() as c_int,
            if dims.is_empty() {
                std::ptr::null_mut()
            } else {
                dims.as_mut_ptr()
            },
            if strides.is_some() && !bstrides.is_empty() {
                bstrides.as_mut_ptr()
            } else {
                std::ptr::null_mut()
            },
            data as *mut c_void,
            if writeable {
                npyffi::NPY_ARRAY_WRITEABLE
            } else {
                0
            },
            std::ptr::null_mut(),
        )
    };
    let arr = unsafe { Bound::from_owned_ptr_or_err(py, arr)? };
    unsafe {
        let (owner_name, destructor, used): (&CStr, ffi::PyCapsule_Destructor, &CStr) =
            if t.versioned {
                (OWNER_V1, owner_v1_destructor, USED_V1)
            } else {
                (OWNER_V0, owner_v0_destructor, USED_V0)
            };
        let owner = ffi::PyCapsule_New(t.managed, owner_name.as_ptr(), Some(destructor));
        if owner.is_null() {
            return Err(PyErr::fetch(py));
        }
        // From here the owner capsule, not the producer's capsule, frees it.
        if ffi::PyCapsule_SetName(cap.as_ptr(), used.as_ptr()) != 0 {
            // Cannot happen for a valid capsule; keep the producer's capsule
            // responsible and drop ours without running the deleter.
            ffi::PyCapsule_SetName(owner, c"mldtypes.dlpack_released".as_ptr());
            ffi::Py_DECREF(owner);
            return Err(PyErr::fetch(py));
        }
        if PY_ARRAY_API.PyArray_SetBaseObject(py, arr.as_ptr() as *mut PyArrayObject, owner) != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(arr)
}

/// Unpacks a C-contiguous packed bit stream of `n` values of `dt` (width
/// `bits`) into a new array of `dt` with `shape`.
fn unpack_to<'py>(
    py: Python<'py>,
    bytes: &Bound<'py, PyAny>,
    dt: DType,
    bits: u8,
    shape: &[i64],
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let src = np.call_method1("ascontiguousarray", (bytes,))?;
    let len: usize = src.getattr("nbytes")?.extract()?;
    let descr = registry::descr(dt)
        .ok_or_else(|| PyTypeError::new_err("mldtypes dtypes are not registered"))?;
    let descr = unsafe { Bound::from_borrowed_ptr(py, descr as *mut ffi::PyObject) };
    let out = np.call_method1("empty", (shape.to_vec(), descr))?;
    let n: usize = out.getattr("size")?.extract()?;
    // SAFETY: both arrays are C-contiguous with `len` / `n` bytes.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts(npapi::array_data(src.as_ptr()) as *const u8, len),
            std::slice::from_raw_parts_mut(npapi::array_data(out.as_ptr()) as *mut u8, n),
        )
    };
    let need = n
        .checked_mul(bits as usize)
        .ok_or_else(|| PyBufferError::new_err("from_dlpack: packed tensor too large"))?
        .div_ceil(8);
    if len < need {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: {n} packed {bits}-bit values need {need} bytes, the tensor has {len}"
        )));
    }
    if bits == 1 {
        let signed = dt == DType::Int1;
        for (k, o) in d.iter_mut().enumerate() {
            let b = (s[k / 8] >> (k % 8)) & 1;
            *o = if signed && b == 1 { 0xff } else { b };
        }
    } else {
        packing::unpack(&s[..need], dt, d)
            .map_err(|e| PyBufferError::new_err(format!("from_dlpack: {e}")))?;
    }
    Ok(out)
}

/// A NumPy array viewing (or, as asked, copying) a DLPack tensor whose
/// dtype is one of ours.
///
/// `obj` is any object with `__dlpack__` (and, optionally,
/// `__dlpack_device__`), e.g. a PyTorch tensor, a JAX array or the result
/// of `mldtypes.to_dlpack`; DLPack 0.8 and 1.x capsules are read (we ask
/// for `max_version=(1, 3)`). The result views the producer's memory — its
/// strides and byte offset, read-only when the producer says so — and keeps
/// the producer's tensor alive until the array and its views are gone.
/// NumPy's own dtypes are handed to `numpy.from_dlpack`.
///
/// `copy=True` returns a copy, `copy=False` raises BufferError for what
/// cannot be viewed, `copy=None` views when it can. Packed sub-byte tensors
/// (DLPack float4/float6/int/uint with fewer than 8 bits, e.g. PyTorch's
/// `float4_e2m1fn_x2`) are unpacked into a new array of the mldtypes dtype
/// by default, because a NumPy dtype holds one value per byte; with
/// `packed=True` the result is a zero-copy `uint8` view of the packed bytes
/// (the layout `mldtypes.pack` writes; shape: the tensor's own for
/// 8-bit lane groups such as float4_e2m1fn_x2, else 1-D).
///
/// Raises BufferError for a tensor outside CPU memory (naming the device)
/// or an unsupported DLPack version, TypeError for a type code we have no
/// dtype for (naming it) and for objects without `__dlpack__`.
#[pyfunction]
#[pyo3(signature = (obj, /, *, copy=None, packed=false))]
pub(crate) fn from_dlpack<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    copy: Option<bool>,
    packed: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if !obj.hasattr("__dlpack__")? {
        return Err(PyTypeError::new_err(format!(
            "from_dlpack needs an object with __dlpack__ (a DLPack producer), got {}",
            obj.get_type().name()?
        )));
    }
    if obj.hasattr("__dlpack_device__")? {
        let (t, i): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
        if t != K_DL_CPU {
            return Err(device_error(t, i));
        }
    }
    let kw = PyDict::new(py);
    kw.set_item("max_version", (1, OUR_MINOR))?;
    let cap = match obj.call_method("__dlpack__", (), Some(&kw)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__")?,
        Err(e) => return Err(e),
    };
    let t = inspect(&cap)?;
    let tensor = unsafe { &*t.tensor };
    if tensor.device.device_type != K_DL_CPU {
        return Err(device_error(
            tensor.device.device_type,
            tensor.device.device_id,
        ));
    }
    let ty = tensor.dtype;
    if numpy_builtin(ty) {
        let holder = Bound::new(
            py,
            CapsuleHolder {
                capsule: Some(cap.unbind()),
            },
        )?;
        // The capsule is taken already, so the copy (if asked) is made here.
        let a = py.import("numpy")?.call_method1("from_dlpack", (holder,))?;
        return if copy == Some(true) {
            a.call_method0("copy")
        } else {
            Ok(a)
        };
    }
    let unknown = || {
        PyTypeError::new_err(format!(
            "from_dlpack: no NumPy or mldtypes dtype for the DLPack type {} (code {}) with \
             bits={} lanes={}",
            code_name(ty.code),
            ty.code,
            ty.bits,
            ty.lanes
        ))
    };
    let dt = our_type(ty.code, ty.bits).ok_or_else(unknown)?;
    let nd = tensor.ndim;
    if !(0..=64).contains(&nd) {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: {nd} dimensions (NumPy allows 0 to 64)"
        )));
    }
    let nd = nd as usize;
    let shape: Vec<i64> = if nd == 0 {
        Vec::new()
    } else if tensor.shape.is_null() {
        return Err(PyBufferError::new_err("from_dlpack: NULL shape"));
    } else {
        unsafe { std::slice::from_raw_parts(tensor.shape, nd) }.to_vec()
    };
    if shape.iter().any(|&d| d < 0) {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: negative dimension in shape {shape:?}"
        )));
    }
    let strides: Option<Vec<i64>> = if nd == 0 || tensor.strides.is_null() {
        None
    } else {
        Some(unsafe { std::slice::from_raw_parts(tensor.strides, nd) }.to_vec())
    };
    let name = dt.name();
    let finish = |a: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(true) {
            a.call_method0("copy")
        } else {
            Ok(a)
        }
    };
    let bits = ty.bits;
    if bits >= 8 || (t.flags & FLAG_SUBBYTE_PADDED != 0 && ty.lanes == 1) {
        if ty.lanes != 1 {
            return Err(unknown());
        }
        if packed {
            return Err(PyValueError::new_err(format!(
                "from_dlpack: packed=True applies to packed sub-byte tensors; this one holds \
                 mldtypes.{name} one value per byte"
            )));
        }
        let descr = registry::descr(dt)
            .ok_or_else(|| PyTypeError::new_err("mldtypes dtypes are not registered"))?;
        let elem = (bits as i64 + 7) / 8;
        let a = view(&cap, &t, descr, elem, &shape, strides.as_deref())?;
        return finish(a);
    }
    // Packed sub-byte data.
    let lane_bits = bits as u32 * ty.lanes as u32;
    let u8descr = unsafe { npapi::descr_from_type(NPY_TYPES::NPY_UBYTE as c_int) };
    if u8descr.is_null() {
        return Err(PyErr::fetch(py));
    }
    let u8descr_owned = unsafe { Bound::from_owned_ptr(py, u8descr as *mut ffi::PyObject) };
    let (bytes, logical) = if lane_bits == 8 {
        let mut logical = shape.clone();
        match logical.last_mut() {
            Some(l) => *l *= ty.lanes as i64,
            None => logical.push(ty.lanes as i64),
        }
        (
            view(&cap, &t, u8descr, 1, &shape, strides.as_deref())?,
            logical,
        )
    } else if ty.lanes == 1 {
        if let Some(s) = &strides {
            if *s != c_strides(&shape) && count(&shape).is_none_or(|n| n > 1) {
                return Err(PyBufferError::new_err(format!(
                    "from_dlpack: a strided packed {bits}-bit tensor (strides {s:?}) cannot be \
                     read; make it contiguous first"
                )));
            }
        }
        let n = count(&shape).ok_or_else(|| too_big(&shape))?;
        let nbits = n.checked_mul(bits as i64).ok_or_else(|| too_big(&shape))?;
        let nbytes = nbits / 8 + i64::from(nbits % 8 != 0);
        (view(&cap, &t, u8descr, 1, &[nbytes], None)?, shape.clone())
    } else {
        return Err(unknown());
    };
    drop(u8descr_owned);
    if packed {
        return finish(bytes);
    }
    if copy == Some(false) {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: the tensor holds packed {bits}-bit mldtypes.{name} values, which a \
             NumPy array of mldtypes.{name} (one value per byte) cannot view; use copy=None \
             to unpack into a new array, or packed=True for a view of the packed bytes"
        )));
    }
    if (dt == DType::Int1 || dt == DType::UInt1) && bits != 1 {
        return Err(unknown());
    }
    unpack_to(py, &bytes, dt, bits, &logical)
}

// ---------------------------------------------------------------- NumPy's own entry points

/// What `numpy.dtypes.register_dlpack_dtype` answered for each of our
/// dtypes: `None` (registered), or the message of NumPy's `ValueError` when
/// another dtype already holds the (code, bits) pair. Empty before NumPy 2.5.
static NUMPY_REGISTRATIONS: std::sync::OnceLock<Vec<Registration>> = std::sync::OnceLock::new();

/// One dtype's registration with NumPy: the dtype, its (code, bits), and
/// `None` or NumPy's message when another dtype kept the pair.
type Registration = (DType, (u8, u8), Option<String>);

/// On NumPy ≥ 2.5, registers every dtype whose DLPack code is stored one
/// value per whole element (bfloat16, the eight float8 formats,
/// float8_e8m0fnu, complex32) with `numpy.dtypes.register_dlpack_dtype`, so
/// that NumPy's own `numpy.from_dlpack` returns arrays of our dtypes and
/// `ndarray.__dlpack__` exports them (hence `torch.from_dlpack(a)` and
/// `jax.dlpack.from_dlpack(a)` take our arrays directly). NumPy asks that
/// the (code, bits) pair's bits equal the element size, so the sub-byte
/// types (float6, float4, int1 … uint4: DLPack bits 6, 4, 1, 2) and
/// bcomplex32 (no code) are left to `mldtypes.from_dlpack` / `to_dlpack`.
///
/// NumPy keeps the first registration of a (code, bits) pair and raises
/// `ValueError` for a later one, after recording the export direction. When
/// another package (ml_dtypes, if a release registers its types) holds a
/// pair already, its registration stays: `numpy.from_dlpack` gives its
/// dtype, our arrays still export through `__dlpack__`, and the import of
/// mldtypes goes on. Before NumPy 2.5 (no `register_dlpack_dtype`) nothing
/// is done.
fn register_with_numpy(py: Python<'_>) -> PyResult<()> {
    let mut done = Vec::new();
    let reg = py
        .import("numpy.dtypes")?
        .getattr("register_dlpack_dtype")
        .ok();
    if let Some(reg) = reg {
        for &dt in registry::ORDER.iter() {
            let Some((code, bits)) = dl_type(dt) else {
                continue;
            };
            let descr = registry::descr(dt)
                .ok_or_else(|| PyTypeError::new_err("mldtypes dtypes are not registered"))?;
            // SAFETY: the registered descriptor lives for the life of the process.
            let d = unsafe { Bound::from_borrowed_ptr(py, descr as *mut ffi::PyObject) };
            let itemsize: usize = d.getattr("itemsize")?.extract()?;
            if usize::from(bits) != 8 * itemsize {
                continue;
            }
            match reg.call1(((code, bits), &d)) {
                Ok(_) => done.push((dt, (code, bits), None)),
                Err(e) if e.is_instance_of::<PyValueError>(py) => {
                    done.push((dt, (code, bits), Some(e.value(py).to_string())))
                }
                Err(e) => return Err(e),
            }
        }
    }
    let _ = NUMPY_REGISTRATIONS.set(done);
    Ok(())
}

/// `_numpy_dlpack_registrations()`: `{name: ((code, bits), None or NumPy's
/// message)}` for each dtype registered with NumPy's DLPack registry at
/// import (`None`: ours; a message: another dtype held the pair first and
/// keeps it). Empty before NumPy 2.5. Not part of the public API.
#[pyfunction]
pub(crate) fn _numpy_dlpack_registrations(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    crate::guard::run(|| {
        let d = PyDict::new(py);
        for (dt, key, msg) in NUMPY_REGISTRATIONS.get().map(Vec::as_slice).unwrap_or(&[]) {
            d.set_item(dt.name(), (*key, msg.clone()))?;
        }
        Ok(d)
    })
}

/// `_register_numpy_dlpack()`: on NumPy ≥ 2.5, registers the dtypes with
/// NumPy's DLPack registry (see [`register_with_numpy`]); once per process,
/// later calls do nothing. Called by the package's `__init__` after the
/// ml_dtypes twin casts are registered: NumPy's registry is a dict keyed by
/// dtype, and its lookups compare dtypes of equal hash (every one-byte user
/// dtype hashes alike) through NumPy's cast table, where a comparison made
/// before a twin cast exists would leave that cast marked impossible. Not
/// part of the public API.
///
/// Raises what NumPy raises other than the `ValueError` of a pair already
/// held.
#[pyfunction]
pub(crate) fn _register_numpy_dlpack(py: Python<'_>) -> PyResult<()> {
    crate::guard::run(|| {
        if NUMPY_REGISTRATIONS.get().is_some() {
            return Ok(());
        }
        register_with_numpy(py)
    })
}

/// Adds the DLPack functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DLPackExport>()?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(to_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(_dlpack_counters, m)?)?;
    m.add_function(wrap_pyfunction!(_dlpack_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(_numpy_dlpack_registrations, m)?)?;
    m.add_function(wrap_pyfunction!(_register_numpy_dlpack, m)?)?;
    Ok(())
}
