//! `mldtypes.pack` / `mldtypes.unpack`: sub-byte elements in safetensors'
//! F4/F6 bit layout (one least-significant-bit-first stream), through
//! `mldtypes::cast::pack`.

use mldtypes::cast::pack as packing;
use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::dtypes::registry;
use crate::npapi;
use crate::reduce::{cast_err, our_dtype};

/// Packs a float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, int4, uint4, int2 or
/// uint2 array (any shape, C order) into a 1-D uint8 array: the elements form
/// one least-significant-bit-first bit stream (element k in bits k·w … k·w+w−1,
/// w the element width; a trailing partial byte is padded with zeros), the
/// layout of safetensors' F4 / F6_E2M3 / F6_E3M2 tensors. Bits above the
/// element width are ignored. Source: `mldtypes::cast::pack`. Arrays of
/// ml_dtypes' types of these names (same bytes) are accepted too.
///
/// Raises TypeError for other dtypes, naming the array's dtype with its
/// package.
#[pyfunction]
pub(crate) fn pack<'py>(py: Python<'py>, array: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| pack_body(py, array))
}

/// The body of `pack`, run under the panic guard.
fn pack_body<'py>(py: Python<'py>, array: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let arr = np.call_method1("ascontiguousarray", (array,))?;
    // ml_dtypes' twins hold the same bytes
    // SAFETY: `arr` is an ndarray (from ascontiguousarray).
    let twin = || crate::interop::twins::twin_of_num(unsafe { npapi::array_typenum(arr.as_ptr()) });
    let dt = our_dtype(&arr).or_else(twin).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "mldtypes.pack needs an array of a sub-byte mldtypes dtype, got {}",
            arr.getattr("dtype")
                .map(|d| crate::interop::twins::qualified_name(&d))
                .unwrap_or_default()
        ))
    })?;
    let n: usize = arr.getattr("size")?.extract()?;
    let len = packing::packed_len(dt, n).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    // SAFETY: a C-contiguous array of n one-byte elements.
    let src =
        unsafe { std::slice::from_raw_parts(npapi::array_data(arr.as_ptr()) as *const u8, n) };
    let mut out = vec![0u8; len];
    packing::pack(src, dt, &mut out).map_err(cast_err)?;
    Ok(PyArray1::from_vec(py, out).into_any())
}

/// Unpacks `shape` elements of `dtype` (float4_e2m1fn, float6_e2m3fn,
/// float6_e3m2fn, int4, uint4, int2, uint2) from `buffer` (bytes or any
/// object with the buffer protocol) in the layout `mldtypes.pack` writes.
/// Returns a new C-contiguous array of that dtype and shape (ml_dtypes'
/// types of these names are accepted and returned as such).
///
/// `shape` is an integer or a sequence of integers (anything with
/// `__index__`, e.g. `numpy.int64`).
///
/// Raises ValueError if the buffer's length is not exactly the packed size
/// of `shape`, or for a negative or too large dimension; TypeError for other
/// dtypes and for a shape or dimension that is not an integer (the message
/// names it: `shape[1] must be an integer, not float (2.5)`).
#[pyfunction]
pub(crate) fn unpack<'py>(
    py: Python<'py>,
    buffer: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| unpack_body(py, buffer, dtype, shape))
}

/// The dimensions of `unpack`'s `shape`: an integer (anything with
/// `__index__`) or a sequence of them, each at least 0, their product
/// representable. TypeError names the item that is not an integer;
/// ValueError a negative or too large one.
fn read_shape(py: Python<'_>, shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let index = py.import("operator")?.getattr("index")?;
    let type_name = |x: &Bound<'_, PyAny>| {
        x.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let single = index.call1((shape,)).is_ok();
    let items: Vec<Bound<'_, PyAny>> = if single {
        vec![shape.clone()]
    } else if shape.is_instance_of::<pyo3::types::PyString>()
        || shape.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(PyTypeError::new_err(format!(
            "mldtypes.unpack: shape must be an integer or a tuple of integers, not {}",
            type_name(shape)
        )));
    } else {
        match shape.try_iter() {
            Ok(it) => it.collect::<PyResult<_>>()?,
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "mldtypes.unpack: shape must be an integer or a tuple of integers, not {}",
                    type_name(shape)
                )))
            }
        }
    };
    let mut dims = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let what = if single {
            "shape".to_string()
        } else {
            format!("shape[{k}]")
        };
        let i = index.call1((item,)).map_err(|_| {
            PyTypeError::new_err(format!(
                "mldtypes.unpack: {what} must be an integer, not {} ({})",
                type_name(item),
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let v: i128 = i.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "mldtypes.unpack: {what} = {} is out of range",
                i.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        if v < 0 {
            return Err(PyValueError::new_err(format!(
                "mldtypes.unpack: {what} = {v} is negative; dimensions must be 0 or more"
            )));
        }
        let d = usize::try_from(v)
            .ok()
            .filter(|&d| d <= isize::MAX as usize)
            .ok_or_else(|| {
                PyValueError::new_err(format!("mldtypes.unpack: {what} = {v} is out of range"))
            })?;
        dims.push(d);
    }
    Ok(dims)
}

/// The body of `unpack`, run under the panic guard.
fn unpack_body<'py>(
    py: Python<'py>,
    buffer: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let descr = np.call_method1("dtype", (dtype,))?;
    let dt = registry::ORDER
        .iter()
        .copied()
        .find(|&d| {
            registry::scalar_type(d).is_some_and(|p| {
                descr
                    .getattr("type")
                    .map(|t| t.as_ptr() as usize)
                    .unwrap_or(0)
                    == p as usize
            })
        })
        // ml_dtypes' twin of a format: the same bytes, returned as that dtype
        .or_else(|| {
            descr
                .getattr("num")
                .and_then(|n| n.extract::<std::os::raw::c_int>())
                .ok()
                .and_then(crate::interop::twins::twin_of_num)
        })
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "mldtypes.unpack needs a sub-byte mldtypes dtype, got {}",
                crate::interop::twins::qualified_name(&descr)
            ))
        })?;
    let shape = read_shape(py, shape)?;
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "mldtypes.unpack: shape {shape:?} has more elements than an array can hold"
            ))
        })?;
    let len = packing::packed_len(dt, n).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let bytes = np.call_method1("frombuffer", (buffer, np.getattr("uint8")?))?;
    let bytes = bytes.cast_into::<PyArray1<u8>>()?;
    let ro = bytes.readonly();
    let src = ro.as_slice()?;
    if src.len() != len {
        return Err(PyValueError::new_err(format!(
            "{} packed {dt} elements take {len} bytes, the buffer has {}",
            n,
            src.len()
        )));
    }
    let mut codes = vec![0u8; n];
    packing::unpack(src, dt, &mut codes).map_err(cast_err)?;
    let out = PyArray1::from_vec(py, codes);
    debug_assert_eq!(out.len(), n);
    out.call_method1("view", (descr,))?
        .call_method1("reshape", (PyTuple::new(py, shape)?,))
}
