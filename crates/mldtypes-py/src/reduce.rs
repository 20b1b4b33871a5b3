//! `mldtypes.sum`, `mldtypes.mean`, `mldtypes.dot` (float32 accumulation,
//! one rounding, through `mldtypes::cast::reduce`).

use std::os::raw::c_int;

use mldtypes::cast::{self, reduce, CastError, Element};
use mldtypes::dtype::DType;
use numpy::PyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::dtypes::registry;
use crate::npapi;

pub(crate) fn cast_err(e: CastError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Which of our dtypes `arr` (an ndarray) holds.
pub(crate) fn our_dtype(arr: &Bound<'_, PyAny>) -> Option<DType> {
    // SAFETY: `arr` is an ndarray (checked by the callers through asarray).
    let num: c_int = unsafe { npapi::array_typenum(arr.as_ptr()) };
    registry::ORDER
        .iter()
        .copied()
        .find(|&d| registry::typenum(d) == Some(num))
}

/// A C-contiguous `(rows, n)` array, its `[rows, n]`, and the result shape
/// (None for a reduction over every axis).
type Lanes<'py> = (Bound<'py, PyAny>, Vec<usize>, Option<Vec<usize>>);

/// `arr` as a C-contiguous 2-D array `(rows, n)` whose rows are the lanes
/// reduced over `axis` (all elements when `axis` is None), and the shape of
/// the result.
fn lanes<'py>(
    np: &Bound<'py, PyModule>,
    arr: &Bound<'py, PyAny>,
    axis: Option<&Bound<'py, PyAny>>,
) -> PyResult<Lanes<'py>> {
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    let axes: Vec<i64> = match axis {
        None => (0..ndim as i64).collect(),
        Some(a) if a.is_none() => (0..ndim as i64).collect(),
        Some(a) => {
            if let Ok(i) = a.extract::<i64>() {
                vec![i]
            } else {
                a.extract::<Vec<i64>>()?
            }
        }
    };
    let full = axis.is_none_or(|a| a.is_none());
    let k = axes.len() as i64;
    let dest: Vec<i64> = (-k..0).collect();
    // moveaxis validates the axes (numpy.exceptions.AxisError)
    let moved = np.call_method1("moveaxis", (arr, axes, dest))?;
    let shape: Vec<usize> = moved.getattr("shape")?.extract()?;
    let keep = shape.len() - k as usize;
    let out_shape: Vec<usize> = shape[..keep].to_vec();
    let n: usize = shape[keep..].iter().product();
    let rows: usize = out_shape.iter().product();
    let flat = np
        .call_method1("ascontiguousarray", (moved,))?
        .call_method1("reshape", ((rows, n),))?;
    Ok((
        flat,
        vec![rows, n],
        if full { None } else { Some(out_shape) },
    ))
}

/// Row-wise float32 sums (or means) of a contiguous `(rows, n)` array of `T`.
fn rows_f32<T: Element>(
    flat: &Bound<'_, PyAny>,
    rows: usize,
    n: usize,
    mean: bool,
) -> PyResult<Vec<f32>> {
    // SAFETY: `flat` is a C-contiguous ndarray of rows·n elements of T.
    let data = unsafe {
        std::slice::from_raw_parts(npapi::array_data(flat.as_ptr()) as *const T, rows * n)
    };
    let mut out = Vec::with_capacity(rows);
    for r in 0..rows {
        let row = &data[r * n..(r + 1) * n];
        let v = if mean {
            if n == 0 {
                f32::NAN
            } else {
                reduce::mean_f32(row).map_err(cast_err)?
            }
        } else {
            reduce::sum_f32(row).map_err(cast_err)?
        };
        out.push(v);
    }
    Ok(out)
}

macro_rules! dispatch_real {
    ($dt:expr, $f:ident, $($args:expr),*) => {{
        use mldtypes::*;
        match $dt {
            DType::BFloat16 => $f::<bfloat16>($($args),*),
            DType::Float8E3M4 => $f::<float8_e3m4>($($args),*),
            DType::Float8E4M3 => $f::<float8_e4m3>($($args),*),
            DType::Float8E4M3B11FNUZ => $f::<float8_e4m3b11fnuz>($($args),*),
            DType::Float8E4M3FN => $f::<float8_e4m3fn>($($args),*),
            DType::Float8E4M3FNUZ => $f::<float8_e4m3fnuz>($($args),*),
            DType::Float8E5M2 => $f::<float8_e5m2>($($args),*),
            DType::Float8E5M2FNUZ => $f::<float8_e5m2fnuz>($($args),*),
            DType::Float8E8M0FNU => $f::<float8_e8m0fnu>($($args),*),
            DType::Float6E2M3FN => $f::<float6_e2m3fn>($($args),*),
            DType::Float6E3M2FN => $f::<float6_e3m2fn>($($args),*),
            DType::Float4E2M1FN => $f::<float4_e2m1fn>($($args),*),
            DType::Int1 => $f::<int1>($($args),*),
            DType::Int2 => $f::<int2>($($args),*),
            DType::Int4 => $f::<int4>($($args),*),
            DType::UInt1 => $f::<uint1>($($args),*),
            DType::UInt2 => $f::<uint2>($($args),*),
            DType::UInt4 => $f::<uint4>($($args),*),
            other => Err(PyTypeError::new_err(format!("{other} arrays are not supported here"))),
        }
    }};
}

/// `numpy.dtype(dtype)` as the result dtype of `mldtypes.{name}`: a number
/// type (bool, integer, floating-point, complex, one of ours) or object.
/// Strings, bytes, structured/void and datetime/timedelta dtypes are refused
/// with TypeError, as `numpy.sum` / `numpy.mean` refuse them.
fn result_dtype<'py>(
    np: &Bound<'py, PyModule>,
    name: &str,
    dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let dt = np.call_method1("dtype", (dtype,))?;
    if crate::promotion::from_numpy(&dt)?.is_some() {
        return Ok(dt);
    }
    let kind: String = dt.getattr("kind")?.extract()?;
    if matches!(kind.as_str(), "b" | "i" | "u" | "f" | "c" | "O") {
        return Ok(dt);
    }
    Err(PyTypeError::new_err(format!(
        "mldtypes.{name} cannot give a result of dtype {}: it must be a number type (bool, \
         integer, floating-point or complex), as for numpy.{name}",
        dt.repr()?
    )))
}

/// The range of an integer result dtype (NumPy's integers and the sub-byte
/// ones), `None` for any other dtype.
fn int_range(np: &Bound<'_, PyModule>, dt: &Bound<'_, PyAny>) -> PyResult<Option<(i128, i128)>> {
    if let Some(ii) = crate::promotion::from_numpy(dt)?.and_then(|d| d.iinfo()) {
        return Ok(Some((ii.min, ii.max)));
    }
    let kind: String = dt.getattr("kind")?.extract()?;
    if kind == "i" || kind == "u" {
        let ii = np.call_method1("iinfo", (dt,))?;
        return Ok(Some((
            ii.getattr("min")?.extract()?,
            ii.getattr("max")?.extract()?,
        )));
    }
    Ok(None)
}

/// Refuses results that an integer result dtype cannot hold: NaN, ±inf and
/// values whose integer part is outside `dt`'s range (the conversion would
/// wrap them silently, as NumPy's integer accumulators do).
fn check_fits(
    np: &Bound<'_, PyModule>,
    name: &str,
    values: impl IntoIterator<Item = f64>,
    dt: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let Some((lo, hi)) = int_range(np, dt)? else {
        return Ok(());
    };
    for v in values {
        if !v.is_finite() {
            // Python's spelling: nan, inf, -inf
            let text = if v.is_nan() {
                "nan"
            } else if v > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            return Err(PyValueError::new_err(format!(
                "mldtypes.{name}: the result {text} cannot be converted to the integer dtype \
                 of the result, {}",
                dt.repr()?
            )));
        }
        let t = v.trunc();
        if t < lo as f64 || t > hi as f64 {
            return Err(PyValueError::new_err(format!(
                "mldtypes.{name}: the result {v} is out of bounds for {} ({lo} to {hi}) and \
                 would wrap around; pass a wider dtype (e.g. dtype=numpy.int64)",
                dt.repr()?
            )));
        }
    }
    Ok(())
}

/// Shared body of `sum` and `mean`.
fn reduction<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    axis: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
    mean: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (a,))?;
    let name = if mean { "mean" } else { "sum" };
    let ours = our_dtype(&arr);
    let target = match dtype {
        Some(d) if !d.is_none() => Some(result_dtype(&np, name, d)?),
        _ => None,
    };
    if let (Some(t), Some(d)) = (&target, ours) {
        if t.getattr("kind")?.extract::<String>()? == "b" {
            // NumPy's meaning of a bool result: every element converted to
            // bool (nonzero, NaN included), then reduced in bool (a logical
            // or). Complex values go through complex64, whose conversion to
            // bool looks at both parts (the complex32 → bool cast, as
            // ml_dtypes', looks at the real part only).
            let src = if matches!(d, DType::Complex32 | DType::BComplex32) {
                arr.call_method1("astype", (np.getattr("complex64")?,))?
            } else {
                arr.clone()
            };
            let kw = PyDict::new(py);
            kw.set_item("axis", axis)?;
            kw.set_item("dtype", t)?;
            let b = src.call_method1("astype", (np.getattr("bool_")?,))?;
            return np.getattr(name)?.call((b,), Some(&kw));
        }
    }
    let real = ours.filter(|d| !matches!(d, DType::Complex32 | DType::BComplex32));
    let Some(dt) = real else {
        // NumPy's own reduction for other dtypes and for the complex types
        // (accumulated in complex64, then converted once to the result dtype)
        let kw = PyDict::new(py);
        kw.set_item("axis", axis)?;
        let src = match (&target, ours) {
            (_, Some(_)) => arr.call_method1("astype", (np.getattr("complex64")?,))?,
            (Some(t), None) => arr.call_method1("astype", (t,))?,
            (None, None) => arr.clone(),
        };
        let r = np.getattr(name)?.call((src,), Some(&kw))?;
        let Some(d) = ours else {
            return Ok(r);
        };
        let out_dt = match target {
            Some(t) => t,
            None => {
                let descr =
                    registry::descr(d).ok_or_else(|| PyTypeError::new_err("not registered"))?;
                // SAFETY: a live dtype owned by NumPy's registry
                unsafe { Bound::from_borrowed_ptr(py, descr as *mut pyo3::ffi::PyObject) }
            }
        };
        let r = np.call_method1("asarray", (r,))?;
        let reals: Vec<f64> = r
            .getattr("real")?
            .call_method1("astype", (np.getattr("float64")?,))?
            .call_method0("ravel")?
            .extract()?;
        check_fits(&np, name, reals, &out_dt)?;
        let out = r.call_method1("astype", (out_dt,))?;
        // a full reduction gives a scalar, as NumPy's
        return out.get_item(PyTuple::empty(py));
    };
    let (flat, dims, out_shape) = lanes(&np, &arr, axis)?;
    let sums = dispatch_real!(dt, rows_f32, &flat, dims[0], dims[1], mean)?;
    let descr = registry::descr(dt).ok_or_else(|| PyTypeError::new_err("not registered"))?;
    // SAFETY: a live dtype owned by NumPy's registry
    let descr = unsafe { Bound::from_borrowed_ptr(py, descr as *mut pyo3::ffi::PyObject) };
    let target_descr = target.unwrap_or(descr);
    check_fits(&np, name, sums.iter().map(|&v| f64::from(v)), &target_descr)?;
    let f32s = PyArray1::from_vec(py, sums);
    let rounded = f32s.call_method1("astype", (target_descr,))?;
    match out_shape {
        None => rounded.get_item(0),
        Some(shape) => rounded.call_method1("reshape", (PyTuple::new(py, shape)?,)),
    }
}

/// Sum of the elements of `a` over `axis` (None: all), accumulated in float32
/// (pairwise) and rounded once into the array's dtype, unlike `numpy.sum`,
/// which keeps a running sum in the narrow format (10,000 uniform [0, 1)
/// bfloat16 values: `numpy.sum` stalls at 256, `mldtypes.sum` gives 4992).
///
/// `axis`: int, tuple of ints or None, as NumPy's. `dtype`: the dtype of the
/// result (default: the array's), a number type (bool, integer, float,
/// complex, an mldtypes format) or object; the float32 accumulator is
/// converted to it once. Complex arrays accumulate in complex64. A bool
/// `dtype` means what it means to NumPy: the elements converted to bool,
/// then combined with logical or. Source: `mldtypes::cast::reduce`.
///
/// Raises numpy.exceptions.AxisError for an axis out of range; TypeError for
/// unsupported array dtypes and for a string, bytes, void, datetime64 or
/// timedelta64 `dtype` (as `numpy.sum`); ValueError when the result dtype is
/// an integer type (int8 … uint64, int4 …, the array's own) that cannot hold
/// a result (NaN, ±inf, or out of its range, which NumPy would wrap
/// silently).
#[pyfunction]
#[pyo3(signature = (a, axis=None, dtype=None))]
pub(crate) fn sum<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    axis: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| reduction(py, a, axis, dtype, false))
}

/// Mean of the elements of `a` over `axis`: the float32 sum of
/// `mldtypes.sum` divided by the count in float32, rounded once into the
/// array's dtype. `axis` and `dtype` as in `mldtypes.sum` / `numpy.mean`.
///
/// Raises numpy.exceptions.AxisError for an axis out of range; TypeError for
/// unsupported array dtypes and non-number `dtype`s; ValueError when an
/// integer result dtype cannot hold a result (as `mldtypes.sum`).
#[pyfunction]
#[pyo3(signature = (a, axis=None, dtype=None))]
pub(crate) fn mean<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    axis: Option<&Bound<'py, PyAny>>,
    dtype: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| reduction(py, a, axis, dtype, true))
}

/// Dot products of rows of `x` (m, k) with rows of `yt` (n, k).
fn dot_rows<T: Element>(
    x: &Bound<'_, PyAny>,
    yt: &Bound<'_, PyAny>,
    m: usize,
    n: usize,
    k: usize,
) -> PyResult<Vec<f32>> {
    // SAFETY: both are C-contiguous ndarrays of T with the given shapes.
    let (xs, ys) = unsafe {
        (
            std::slice::from_raw_parts(npapi::array_data(x.as_ptr()) as *const T, m * k),
            std::slice::from_raw_parts(npapi::array_data(yt.as_ptr()) as *const T, n * k),
        )
    };
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            out.push(
                reduce::dot_f32(&xs[i * k..(i + 1) * k], &ys[j * k..(j + 1) * k])
                    .map_err(cast_err)?,
            );
        }
    }
    Ok(out)
}

/// Dot product of `x` and `y` (1-D · 1-D, or matrix products of 1-D/2-D
/// operands as `numpy.dot`), each output element accumulated in float32 and
/// rounded once into the operands' dtype. Both operands must have the same
/// mldtypes dtype. Source: `mldtypes::cast::reduce::dot_f32`.
///
/// Raises ValueError for mismatched shapes or more than 2 dimensions,
/// TypeError for different or unsupported dtypes.
#[pyfunction]
pub(crate) fn dot<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| dot_body(py, x, y))
}

/// The body of `dot`, run under the panic guard.
fn dot_body<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let x = np.call_method1("asarray", (x,))?;
    let y = np.call_method1("asarray", (y,))?;
    let (dx, dy) = (our_dtype(&x), our_dtype(&y));
    let dt = match (dx, dy) {
        (Some(a), Some(b)) if a == b && !matches!(a, DType::Complex32 | DType::BComplex32) => a,
        _ => {
            let name = |a: &Bound<'_, PyAny>| {
                a.getattr("dtype")
                    .map(|d| crate::interop::twins::qualified_name(&d))
                    .unwrap_or_default()
            };
            return Err(PyTypeError::new_err(format!(
                "mldtypes.dot needs two arrays of the same mldtypes real dtype, got {} and {}",
                name(&x),
                name(&y)
            )));
        }
    };
    let (xn, yn): (usize, usize) = (x.getattr("ndim")?.extract()?, y.getattr("ndim")?.extract()?);
    if xn == 0 || yn == 0 || xn > 2 || yn > 2 {
        return Err(PyValueError::new_err(
            "mldtypes.dot takes 1-D or 2-D operands",
        ));
    }
    let x2 = if xn == 1 {
        x.call_method1("reshape", ((1, -1),))?
    } else {
        x.clone()
    };
    let y2 = if yn == 1 {
        y.call_method1("reshape", ((-1, 1),))?
    } else {
        y.clone()
    };
    let (m, k): (usize, usize) = x2.getattr("shape")?.extract()?;
    let (k2, n): (usize, usize) = y2.getattr("shape")?.extract()?;
    if k != k2 {
        return Err(PyValueError::new_err(format!(
            "shapes {:?} and {:?} not aligned: {k} (dim {}) != {k2} (dim 0)",
            x.getattr("shape")?,
            y.getattr("shape")?,
            xn - 1
        )));
    }
    let xc = np.call_method1("ascontiguousarray", (x2,))?;
    let yt = np.call_method1("ascontiguousarray", (y2.getattr("T")?,))?;
    let vals = dispatch_real!(dt, dot_rows, &xc, &yt, m, n, k)?;
    let descr = registry::descr(dt).ok_or_else(|| PyTypeError::new_err("not registered"))?;
    // SAFETY: a live dtype owned by NumPy's registry
    let descr = unsafe { Bound::from_borrowed_ptr(py, descr as *mut pyo3::ffi::PyObject) };
    let r = PyArray1::from_vec(py, vals).call_method1("astype", (descr,))?;
    match (xn, yn) {
        (1, 1) => r.get_item(0),
        (1, 2) => r.call_method1("reshape", ((n,),)),
        (2, 1) => r.call_method1("reshape", ((m,),)),
        _ => r.call_method1("reshape", ((m, n),)),
    }
}

/// `_kernel_path()`: the name of the conversion kernels the Rust library
/// selected for this CPU (e.g. `"avx512"`), for benchmark reports.
#[pyfunction]
pub(crate) fn _kernel_path() -> PyResult<&'static str> {
    crate::guard::run(|| Ok(cast::path().name()))
}

/// `_set_kernel_path(name)`: forces the conversion kernels and the ufunc
/// loops that dispatch on the instruction set to `name` (`"portable"`,
/// `"avx2"`, `"avx512"`, or `"scalar"`), or back to the detected one for
/// `None`, for benchmarks and tests of each path.
///
/// Raises ValueError for an unknown name or a path this CPU lacks.
#[pyfunction]
#[pyo3(signature = (name=None))]
pub(crate) fn _set_kernel_path(name: Option<&str>) -> PyResult<()> {
    crate::guard::run(|| {
        let path = match name {
            None => None,
            Some(n) => Some(
                cast::Path::ALL
                    .iter()
                    .copied()
                    .find(|p| p.name() == n)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "unknown kernel path {n:?}: one of scalar, portable, avx2, avx512"
                        ))
                    })?,
            ),
        };
        cast::set_path(path).map_err(cast_err)
    })
}

/// Adds `matmul` and the private kernel-path switch to the module `m`.
///
/// # Errors
///
/// The error of adding a function to the module.
pub(crate) fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_kernel_path, m)?)?;
    Ok(())
}
