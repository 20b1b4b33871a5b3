//! `mldtypes.sum`, `mldtypes.mean`, `mldtypes.dot`, `mldtypes.matmul`
//! (float32 accumulation, one rounding, through `mldtypes::cast::reduce`
//! and `mldtypes::cast::matmul`), and the fast `argmax` / `argmin` of the
//! float arrays.

use std::os::raw::c_int;

use mldtypes::cast::matmul::{matmul_f32, Layout, MatRef};
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

/// The C-contiguous `arr` as `(pre, n, post)` blocks when `axis` names one
/// axis or several adjacent ones (`n` the elements reduced, `post` the
/// elements after them), with the result shape; None for any other axes.
type Blocks<'py> = (Bound<'py, PyAny>, [usize; 3], Option<Vec<usize>>);

/// See [`Blocks`].
fn one_axis<'py>(
    np: &Bound<'py, PyModule>,
    arr: &Bound<'py, PyAny>,
    axis: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Blocks<'py>>> {
    let Some(axis) = axis.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let ndim = shape.len() as i64;
    let mut axes: Vec<i64> = if let Ok(i) = axis.extract::<i64>() {
        vec![i]
    } else {
        axis.extract::<Vec<i64>>()?
    };
    for a in axes.iter_mut() {
        if *a < -ndim || *a >= ndim {
            return Ok(None); // NumPy's AxisError, through the general path
        }
        if *a < 0 {
            *a += ndim;
        }
    }
    axes.sort_unstable();
    let adjacent = !axes.is_empty() && axes.windows(2).all(|w| w[1] == w[0] + 1);
    if !adjacent {
        return Ok(None);
    }
    let (lo, hi) = (
        axes[0] as usize,
        *axes.last().expect("not empty") as usize + 1,
    );
    let pre: usize = shape[..lo].iter().product();
    let n: usize = shape[lo..hi].iter().product();
    let post: usize = shape[hi..].iter().product();
    let out_shape: Vec<usize> = shape[..lo].iter().chain(&shape[hi..]).copied().collect();
    let flat = np.call_method1("ascontiguousarray", (arr,))?;
    Ok(Some((flat, [pre, n, post], Some(out_shape))))
}

/// Float32 sums (or means) over the middle axis of a C-contiguous
/// `(pre, n, post)` array of `T`, in row-major result order.
fn blocks_f32<T: Element>(
    flat: &Bound<'_, PyAny>,
    pre: usize,
    n: usize,
    post: usize,
    mean: bool,
) -> PyResult<Vec<f32>> {
    // SAFETY: `flat` is a C-contiguous ndarray of pre·n·post elements of T,
    // kept alive by the caller while the slice is read.
    let data = unsafe {
        std::slice::from_raw_parts(npapi::array_data(flat.as_ptr()) as *const T, pre * n * post)
    };
    // without the GIL: long column sums run on rayon's pool
    let mut out = flat
        .py()
        .detach(|| -> Result<Vec<f32>, CastError> {
            let mut out = Vec::with_capacity(pre * post);
            for p in 0..pre {
                let block = &data[p * n * post..(p + 1) * n * post];
                if post == 1 {
                    out.push(reduce::sum_f32(block)?);
                } else {
                    out.extend(reduce::sum_f32_columns(block, n, post)?);
                }
            }
            Ok(out)
        })
        .map_err(cast_err)?;
    if mean {
        for v in out.iter_mut() {
            *v = if n == 0 { f32::NAN } else { *v / n as f32 };
        }
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
    let (sums, out_shape) = match one_axis(&np, &arr, axis)? {
        // One axis (or several adjacent ones): no transposed copy; each
        // block's columns summed with the same tree as a row on its own.
        Some((flat, [pre, n, post], out_shape)) => (
            dispatch_real!(dt, blocks_f32, &flat, pre, n, post, mean)?,
            out_shape,
        ),
        None => {
            let (flat, dims, out_shape) = lanes(&np, &arr, axis)?;
            (
                dispatch_real!(dt, rows_f32, &flat, dims[0], dims[1], mean)?,
                out_shape,
            )
        }
    };
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

/// One operand of a matrix product: a C-contiguous ndarray whose last two
/// axes are the matrices (row-major), or whose last two axes swapped are
/// (a transposed array: column-major matrices, no copy).
struct Operand<'py> {
    /// The contiguous array (the swapped view for column-major operands).
    arr: Bound<'py, PyAny>,
    /// Batch shape (axes before the last two).
    batch: Vec<usize>,
    rows: usize,
    cols: usize,
    layout: Layout,
}

/// `x` (at least 2-D) as an [`Operand`].
fn operand<'py>(np: &Bound<'py, PyModule>, x: &Bound<'py, PyAny>) -> PyResult<Operand<'py>> {
    let shape: Vec<usize> = x.getattr("shape")?.extract()?;
    let nd = shape.len();
    let (rows, cols) = (shape[nd - 2], shape[nd - 1]);
    let batch = shape[..nd - 2].to_vec();
    let flag = |a: &Bound<'py, PyAny>, f: &str| -> PyResult<bool> {
        a.getattr("flags")?.get_item(f)?.extract()
    };
    if flag(x, "C_CONTIGUOUS")? {
        return Ok(Operand {
            arr: x.clone(),
            batch,
            rows,
            cols,
            layout: Layout::RowMajor,
        });
    }
    let swapped = np.call_method1("swapaxes", (x, -1, -2))?;
    if flag(&swapped, "C_CONTIGUOUS")? {
        return Ok(Operand {
            arr: swapped,
            batch,
            rows,
            cols,
            layout: Layout::ColMajor,
        });
    }
    Ok(Operand {
        arr: np.call_method1("ascontiguousarray", (x,))?,
        batch,
        rows,
        cols,
        layout: Layout::RowMajor,
    })
}

/// The index of the batch element of `shape` (broadcast to `full`) at flat
/// index `i` of `full`.
fn batch_index(full: &[usize], shape: &[usize], mut i: usize) -> usize {
    let off = full.len() - shape.len();
    let (mut idx, mut stride) = (0, 1);
    for (d, &size) in full.iter().enumerate().rev() {
        let pos = i % size.max(1);
        i /= size.max(1);
        if d >= off {
            let s = shape[d - off];
            if s != 1 {
                idx += pos * stride;
            }
            stride *= s;
        }
    }
    idx
}

/// Batched float32 products of two operands of `T` (batch shapes already
/// checked to broadcast to `full`): `count(full) × m × n` values.
fn matmul_batches<T: Element>(
    py: Python<'_>,
    a: &Operand<'_>,
    b: &Operand<'_>,
    full: &[usize],
    threads: usize,
) -> PyResult<Vec<f32>> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let count = |s: &[usize]| s.iter().product::<usize>();
    let (na, nb, nfull) = (count(&a.batch), count(&b.batch), count(full));
    // SAFETY: both are C-contiguous ndarrays of T holding their batches of
    // matrices (the layout tells which way round).
    let (da, db) = unsafe {
        (
            std::slice::from_raw_parts(npapi::array_data(a.arr.as_ptr()) as *const T, na * m * k),
            std::slice::from_raw_parts(npapi::array_data(b.arr.as_ptr()) as *const T, nb * k * n),
        )
    };
    let (da, db) = (SendSlice(da), SendSlice(db));
    let (la, lb) = (a.layout, b.layout);
    let (ba, bb) = (a.batch.clone(), b.batch.clone());
    py.detach(move || {
        let (da, db) = (da.0, db.0);
        let mut out = vec![0f32; nfull * m * n];
        for (i, c) in out.chunks_mut((m * n).max(1)).enumerate().take(nfull) {
            let (ia, ib) = (batch_index(full, &ba, i), batch_index(full, &bb, i));
            let ma = MatRef::new(&da[ia * m * k..(ia + 1) * m * k], m, k, la);
            let mb = MatRef::new(&db[ib * k * n..(ib + 1) * k * n], k, n, lb);
            let r = ma.and_then(|ma| mb.and_then(|mb| matmul_f32(ma, mb, c, threads)));
            r.map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        Ok(out)
    })
}

/// A slice handed to a closure run without the GIL.
struct SendSlice<'a, T>(&'a [T]);
// SAFETY: the slices are only read; the arrays outlive the call (their
// owners are held by the caller).
unsafe impl<T> Send for SendSlice<'_, T> {}

/// The number of threads of a product: `threads` (at least 1), or the
/// processors available.
fn thread_count(threads: Option<usize>) -> usize {
    threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// The dtype of a product: `dtype` (a number type) or the operands'.
fn product_dtype<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    name: &str,
    dt: DType,
    dtype: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    match dtype {
        Some(d) if !d.is_none() => result_dtype(np, name, d),
        _ => {
            let descr =
                registry::descr(dt).ok_or_else(|| PyTypeError::new_err("not registered"))?;
            // SAFETY: a live dtype owned by NumPy's registry
            Ok(unsafe { Bound::from_borrowed_ptr(py, descr as *mut pyo3::ffi::PyObject) })
        }
    }
}

/// The common mldtypes real dtype of two arrays, or TypeError naming both.
fn operands_dtype(name: &str, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<DType> {
    match (our_dtype(x), our_dtype(y)) {
        (Some(a), Some(b)) if a == b && !matches!(a, DType::Complex32 | DType::BComplex32) => Ok(a),
        _ => {
            let name_of = |a: &Bound<'_, PyAny>| {
                a.getattr("dtype")
                    .map(|d| crate::interop::twins::qualified_name(&d))
                    .unwrap_or_default()
            };
            Err(PyTypeError::new_err(format!(
                "mldtypes.{name} needs two arrays of the same mldtypes real dtype, got {} and {}",
                name_of(x),
                name_of(y)
            )))
        }
    }
}

/// The float32 products `vals` of shape `shape` converted once to the
/// result dtype `target` (integer results checked to fit); a scalar for
/// an empty shape.
fn finish<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    name: &str,
    vals: Vec<f32>,
    shape: Vec<usize>,
    target: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    check_fits(np, name, vals.iter().map(|&v| f64::from(v)), target)?;
    let r = PyArray1::from_vec(py, vals)
        .call_method1("reshape", (PyTuple::new(py, &shape)?,))?
        .call_method1("astype", (target,))?;
    if shape.is_empty() {
        r.get_item(PyTuple::empty(py))
    } else {
        Ok(r)
    }
}

/// Matrix product of `a` and `b` with NumPy's `matmul` (`@`) semantics:
/// stacks of matrices in the last two axes, batch axes broadcast, a 1-D
/// operand taken as a row (first) or a column (second) vector and its axis
/// removed from the result. Each output element is accumulated in float32
/// (the operands converted exactly, then a float32 GEMM:
/// `mldtypes::cast::matmul`, which documents the accumulation order and its
/// error bound `γ(k)·Σ|a·b|`, `γ(k) = k·2^-24 / (1 − k·2^-24)`) and rounded
/// once into `dtype` (default: the operands' dtype; `numpy.float32` keeps
/// the accumulator). Both operands must have the same mldtypes real dtype.
/// Transposed operands (`b.T`) are read in place. `threads` (default: the
/// processors available) splits each product's rows; the GIL is released
/// while computing.
///
/// Raises ValueError for 0-d operands, mismatched inner dimensions or batch
/// shapes that do not broadcast, TypeError for different or unsupported
/// dtypes or a non-number `dtype`.
#[pyfunction]
#[pyo3(signature = (a, b, *, dtype=None, threads=None))]
pub(crate) fn matmul<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| matmul_body(py, a, b, dtype, threads, "matmul"))
}

/// The body of `matmul` (and of `dot` for its matrix cases).
fn matmul_body<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let x = np.call_method1("asarray", (a,))?;
    let y = np.call_method1("asarray", (b,))?;
    let dt = operands_dtype(name, &x, &y)?;
    let (xn, yn): (usize, usize) = (x.getattr("ndim")?.extract()?, y.getattr("ndim")?.extract()?);
    if xn == 0 || yn == 0 {
        return Err(PyValueError::new_err(format!(
            "mldtypes.{name}: input operand {} does not have enough dimensions (it is 0-d)",
            if xn == 0 { 0 } else { 1 }
        )));
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
    let (oa, ob) = (operand(&np, &x2)?, operand(&np, &y2)?);
    if oa.cols != ob.rows {
        return Err(PyValueError::new_err(format!(
            "mldtypes.{name}: the last axis of the first operand ({}) does not match the \
             second-to-last axis of the second ({}): shapes {} and {}",
            oa.cols,
            ob.rows,
            x.getattr("shape")?.repr()?,
            y.getattr("shape")?.repr()?
        )));
    }
    let full: Vec<usize> = np
        .call_method1(
            "broadcast_shapes",
            (PyTuple::new(py, &oa.batch)?, PyTuple::new(py, &ob.batch)?),
        )?
        .extract()?;
    let t = thread_count(threads);
    let vals = dispatch_real!(dt, matmul_batches, py, &oa, &ob, &full, t)?;
    let mut shape = full;
    if xn > 1 {
        shape.push(oa.rows);
    }
    if yn > 1 {
        shape.push(ob.cols);
    }
    let target = product_dtype(py, &np, name, dt, dtype)?;
    finish(py, &np, name, vals, shape, &target)
}

/// Dot product of `x` and `y` as `numpy.dot` for 1-D and 2-D operands:
/// vector · vector (a scalar: the products summed pairwise in float32, as
/// `mldtypes::cast::reduce::dot_f32`), and the matrix cases through the
/// float32 GEMM of `mldtypes.matmul`; rounded once into `dtype` (default:
/// the operands' dtype). Both operands must have the same mldtypes real
/// dtype. `threads` as for `mldtypes.matmul`.
///
/// Raises ValueError for mismatched shapes or operands of 0 or more than
/// 2 dimensions, TypeError for different or unsupported dtypes.
#[pyfunction]
#[pyo3(signature = (x, y, *, dtype=None, threads=None))]
pub(crate) fn dot<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| dot_body(py, x, y, dtype, threads))
}

/// Pairwise float32 dot product of two vectors of `T`.
fn dot_vectors<T: Element>(
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n: usize,
) -> PyResult<Vec<f32>> {
    // SAFETY: both are C-contiguous 1-D ndarrays of n elements of T.
    let (xs, ys) = unsafe {
        (
            std::slice::from_raw_parts(npapi::array_data(x.as_ptr()) as *const T, n),
            std::slice::from_raw_parts(npapi::array_data(y.as_ptr()) as *const T, n),
        )
    };
    Ok(vec![reduce::dot_f32(xs, ys).map_err(cast_err)?])
}

/// The body of `dot`, run under the panic guard.
fn dot_body<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let x = np.call_method1("asarray", (x,))?;
    let y = np.call_method1("asarray", (y,))?;
    let dt = operands_dtype("dot", &x, &y)?;
    let (xn, yn): (usize, usize) = (x.getattr("ndim")?.extract()?, y.getattr("ndim")?.extract()?);
    if xn == 0 || yn == 0 || xn > 2 || yn > 2 {
        return Err(PyValueError::new_err(
            "mldtypes.dot takes 1-D or 2-D operands",
        ));
    }
    let (xs, ys): (Vec<usize>, Vec<usize>) = (
        x.getattr("shape")?.extract()?,
        y.getattr("shape")?.extract()?,
    );
    let (k, k2) = (xs[xn - 1], ys[0]);
    if k != k2 {
        return Err(PyValueError::new_err(format!(
            "shapes {:?} and {:?} not aligned: {k} (dim {}) != {k2} (dim 0)",
            x.getattr("shape")?,
            y.getattr("shape")?,
            xn - 1
        )));
    }
    if xn == 1 && yn == 1 {
        let xc = np.call_method1("ascontiguousarray", (&x,))?;
        let yc = np.call_method1("ascontiguousarray", (&y,))?;
        let vals = dispatch_real!(dt, dot_vectors, &xc, &yc, k)?;
        let target = product_dtype(py, &np, "dot", dt, dtype)?;
        return finish(py, &np, "dot", vals, vec![], &target);
    }
    matmul_body(py, &x, &y, dtype, threads, "dot")
}

/// ml_dtypes' `argmax` (`max`) or `argmin` of the `n` packed codes of
/// `format` at `data`, `itemsize` bytes each, by the library's vectorised
/// kernels over the codes' order keys (`mldtypes::cast::reduce::argmax`);
/// None for an empty array, a width other than one or two bytes, or `data`
/// not aligned for it (the caller's element-by-element path then runs).
///
/// # Safety
///
/// `data` holds `n` readable elements of `itemsize` bytes.
pub(crate) unsafe fn arg_extreme(
    format: &mldtypes::format::Format,
    itemsize: usize,
    data: *const std::os::raw::c_void,
    n: usize,
    max: bool,
) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let r = match itemsize {
        1 => {
            let codes = std::slice::from_raw_parts(data as *const u8, n);
            if max {
                reduce::argmax(format, codes)
            } else {
                reduce::argmin(format, codes)
            }
        }
        2 if (data as usize).is_multiple_of(2) => {
            let codes = std::slice::from_raw_parts(data as *const u16, n);
            if max {
                reduce::argmax(format, codes)
            } else {
                reduce::argmin(format, codes)
            }
        }
        _ => None,
    };
    r
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

/// `_set_streaming_stores(on)`: forces the store form of bfloat16
/// `frexp`'s exponents on the AVX-512 path (True: streaming stores, the
/// choice on Intel CPUs; False: plain stores, the choice on AMD ones), or
/// back to the CPU's choice for `None`, for tests and benchmarks of both.
#[pyfunction]
#[pyo3(signature = (on=None))]
pub(crate) fn _set_streaming_stores(on: Option<bool>) {
    crate::ufuncs::set_streaming_stores(on)
}

/// Adds `matmul` and the private kernel-path switch to the module `m`.
///
/// # Errors
///
/// The error of adding a function to the module.
pub(crate) fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(_set_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(_set_streaming_stores, m)?)?;
    Ok(())
}
