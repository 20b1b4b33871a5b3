//! `convert_checkpoint` / `inspect_checkpoint`: the Python face of the
//! library's checkpoint engine (`mldtypes::checkpoint`), which does all the
//! reading, converting, block quantizing and atomic writing.

use std::path::{Path, PathBuf};

use mldtypes::checkpoint::{self, Options, Stats, Target};
use mldtypes::format::Overflow;
use mldtypes::mx::ScaleRule;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

create_exception!(
    mldtypes,
    CheckpointError,
    PyValueError,
    "A checkpoint cannot be used: a corrupt or truncated safetensors file, an index naming a \
     missing or mismatched shard, a tensor whose data does not match its dtype and shape. The \
     message names the file (and the tensor or shard) at fault. A subclass of ValueError."
);

/// The Python exception for a library error, with the library's message.
fn to_py_err(e: checkpoint::Error) -> PyErr {
    let message = e.to_string();
    match e {
        checkpoint::Error::Usage(_) => PyValueError::new_err(message),
        checkpoint::Error::Invalid { .. } => CheckpointError::new_err(message),
        checkpoint::Error::Read { path, source } => match source.raw_os_error() {
            // OSError(errno, strerror) picks the subclass (FileNotFoundError,
            // PermissionError, ...) from the errno.
            Some(errno) => with_filename(PyOSError::new_err((errno, message)), &path),
            None => with_filename(PyOSError::new_err(message), &path),
        },
        checkpoint::Error::Write { path, .. } => with_filename(PyOSError::new_err(message), &path),
        checkpoint::Error::Cancelled => PyRuntimeError::new_err(message),
    }
}

/// Sets the `filename` attribute of an OSError.
fn with_filename(err: PyErr, path: &Path) -> PyErr {
    Python::attach(|py| {
        let _ = err
            .value(py)
            .setattr("filename", path.display().to_string());
    });
    err
}

/// A dtype name of `obj` for the library's parsers: a string as it is, else
/// whatever `numpy.dtype(obj)` makes of it (our scalar types, NumPy dtypes
/// and scalar types).
fn dtype_name(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.to_string());
    }
    let py = obj.py();
    let dt = py
        .import("numpy")?
        .getattr("dtype")?
        .call1((obj,))
        .map_err(|_| {
            let r = obj.repr().map(|r| r.to_string()).unwrap_or_default();
            PyTypeError::new_err(format!(
                "{what} must be a dtype name, a NumPy dtype or a scalar type, not {r}"
            ))
        })?;
    if let Some(d) = crate::promotion::from_numpy(&dt)? {
        return Ok(d.name().to_string());
    }
    dt.getattr("name")?.extract::<String>()
}

/// A serde_json value as a Python object (objects become dicts, arrays lists,
/// null None).
fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// Puts the derived statistics into `d` as floats, infinities included (JSON
/// has `null` for them).
fn set_float_stats(d: &Bound<'_, PyAny>, s: &Stats) -> PyResult<()> {
    d.set_item("max_abs_error", s.max_abs)?;
    d.set_item("rel_rms_error", s.rel_rms())?;
    d.set_item("sqnr_db", s.sqnr_db())?;
    Ok(())
}

/// Converts a safetensors checkpoint (a file, a model directory or a sharded
/// model's ``model.safetensors.index.json``) to another number format.
///
/// Every floating-point tensor becomes ``to``, round-to-nearest-even:
///
/// - a floating-point dtype (``"bfloat16"``, ``"bf16"``, ``"float8_e4m3fn"``,
///   ``mldtypes.float8_e5m2``, ``numpy.float16``, ...): a plain conversion;
///   MX / NVFP4 tensors of the input are dequantized exactly and rounded once;
/// - an MX format of the OCP Microscaling Formats (MX) Specification v1.0
///   (``"mxfp8_e4m3"``, ``"mxfp8_e5m2"``, ``"mxfp6_e3m2"``, ``"mxfp6_e2m3"``,
///   ``"mxfp4"``, ``"mxint8"``): tensors of two or more dimensions whose last
///   dimension is a multiple of 32 become ``NAME_blocks`` (U8, shape
///   ``[..., K/32, 32*bits/8]``, sub-byte elements packed LSB-first) and
///   ``NAME_scales`` (U8 E8M0 codes, shape ``[..., K/32]``);
/// - ``"nvfp4"``: tensors whose last dimension is a multiple of 16 become
///   ``NAME`` (U8 float4_e2m1fn pairs, ``[..., K/2]``), ``NAME_scale``
///   (F8_E4M3, ``[..., K/16]``) and ``NAME_scale_2`` (F32, shape ``[]``).
///
/// Other tensors are copied byte for byte (or converted to ``rest``). The
/// output is a file for a file input, else a directory mirroring the shards
/// with an updated index and ``config.json``. It is written beside ``dst`` and
/// renamed into place, so a failure leaves nothing behind. The work runs on
/// ``threads`` threads with the GIL released; memory stays bounded (a few
/// chunks of 2^20 elements per thread) whatever the model's size.
///
/// Args:
///     src: the input path (str or os.PathLike).
///     dst: the output path.
///     to: the target: a dtype name or alias, an MX format name, ``"nvfp4"``,
///         an mldtypes scalar type or a NumPy dtype.
///     only: a glob (``*``, ``?``, ``[...]``, ``{a,b}``); only the tensors
///         whose names match are converted, the others are copied.
///     saturate: clamp values beyond the target's range to its largest finite
///         value instead of inf / NaN (plain conversions; block formats
///         always saturate).
///     mx_scale: the MX scale rule: ``"floor"`` (the specification's, X =
///         2^(floor(log2(amax)) - emax_elem), may clip the largest elements)
///         or ``"ceil"`` (X = 2^ceil(log2(amax / max_elem)), never clips).
///     rest: for MX / NVFP4 targets, a floating-point dtype for the tensors
///         that are not quantized (1-D, odd shapes); copied when None.
///     threads: worker threads (None or 0: one per core).
///     overwrite: allow ``dst`` to be ``src`` or to replace a non-empty
///         directory.
///     fsync: fsync the output before renaming it into place.
///
/// Returns:
///     A dict, the fields of ``mldtypes convert --json``: ``target``,
///     ``files`` (names within the output), ``tensors`` (one dict per
///     converted tensor: ``name``, ``file``, ``shape``, ``from``, ``to``,
///     ``action`` (``"convert"``, ``"quantize"`` or ``"dequantize"``) and,
///     except for dequantization, ``elements``, ``max_abs_error``,
///     ``rel_rms_error``, ``sqnr_db`` (inf for an exact conversion),
///     ``clipped``, ``overflow_to_nonfinite``, ``flushed_to_zero``),
///     ``copied`` (tensor names), ``copied_files``, ``total`` (the
///     statistics over all tensors), ``bytes_read``, ``bytes_written``,
///     ``warnings``, ``input``, ``output`` and ``seconds``. Each warning
///     (values overflowing to inf / NaN, ...) is also issued as a
///     RuntimeWarning.
///
/// Raises:
///     ValueError: an unknown or non-floating-point target, a bad ``only``
///         glob, ``mx_scale`` or ``rest``, ``dst`` equal to ``src`` without
///         ``overwrite``.
///     TypeError: ``to`` or ``rest`` is neither a string nor dtype-like.
///     CheckpointError: (a ValueError) a corrupt input, an index naming a
///         missing or mismatched shard; the message names the file.
///     OSError: reading or writing failed (FileNotFoundError for a missing
///         input); ``filename`` is the path at fault.
#[pyfunction]
#[pyo3(signature = (src, dst, to, *, only=None, saturate=false, mx_scale="floor", rest=None,
                    threads=None, overwrite=false, fsync=false))]
#[allow(clippy::too_many_arguments)]
fn convert_checkpoint<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: PathBuf,
    to: &Bound<'py, PyAny>,
    only: Option<&str>,
    saturate: bool,
    mx_scale: &str,
    rest: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    overwrite: bool,
    fsync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let target = Target::parse(&dtype_name(to, "to")?).map_err(to_py_err)?;
    let matcher = only
        .map(|g| {
            globset::Glob::new(g)
                .map(|g| g.compile_matcher())
                .map_err(|e| PyValueError::new_err(format!("bad only glob: {e}")))
        })
        .transpose()?;
    let select = |name: &str| matcher.as_ref().is_none_or(|m| m.is_match(name));
    let mut opts = Options::new(target);
    opts.overflow = if saturate {
        Overflow::Saturating
    } else {
        Overflow::NonSaturating
    };
    opts.scale_rule = match mx_scale {
        "floor" => ScaleRule::Floor,
        "ceil" => ScaleRule::Ceil,
        other => {
            return Err(PyValueError::new_err(format!(
                "mx_scale must be \"floor\" or \"ceil\", not {other:?}"
            )))
        }
    };
    opts.rest = match rest {
        Some(r) => Some(
            dtype_name(r, "rest")?
                .parse::<mldtypes::dtype::DType>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        ),
        None => None,
    };
    opts.select = Some(&select);
    opts.threads = threads.unwrap_or(0);
    opts.fsync = fsync;
    opts.overwrite = overwrite;

    let start = std::time::Instant::now();
    let summary = py
        .detach(|| checkpoint::convert(&src, &dst, &opts, &()))
        .map_err(to_py_err)?;
    let seconds = start.elapsed().as_secs_f64();

    let value = serde_json::to_value(&summary)
        .map_err(|e| PyRuntimeError::new_err(format!("summary: {e}")))?;
    let out = json_to_py(py, &value)?;
    let tensors = out.get_item("tensors")?;
    for (i, t) in summary.tensors.iter().enumerate() {
        if let Some(st) = &t.stats {
            set_float_stats(&tensors.get_item(i)?, st)?;
        }
    }
    set_float_stats(&out.get_item("total")?, &summary.total)?;
    out.set_item("input", src.display().to_string())?;
    out.set_item("output", dst.display().to_string())?;
    out.set_item("seconds", seconds)?;
    if !summary.warnings.is_empty() {
        let warn = py.import("warnings")?.getattr("warn")?;
        let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        for w in &summary.warnings {
            warn.call1((w, &category, 2))?;
        }
    }
    Ok(out)
}

/// Lists the tensors of a safetensors checkpoint (a file, a model directory
/// or a sharded model's ``model.safetensors.index.json``) with value
/// statistics, reading each tensor a chunk at a time (the GIL released).
///
/// Args:
///     path: the input path (str or os.PathLike).
///
/// Returns:
///     A list of dicts sorted by file, then name, the fields of
///     ``mldtypes inspect --json``: ``file`` (the shard's name), ``name``,
///     ``dtype`` (the safetensors tag: ``"F32"``, ``"BF16"``,
///     ``"F8_E4M3"``, ...), ``shape`` (a list of ints), and ``min``, ``max``,
///     ``mean`` (floats over the non-NaN values, decoded exactly; inf / nan
///     as Python floats) and ``nan_count`` (an int), which are None for empty
///     and complex tensors.
///
/// Raises:
///     CheckpointError: (a ValueError) a corrupt input, an index naming a
///         missing or mismatched shard; the message names the file.
///     OSError: reading failed (FileNotFoundError for a missing input);
///         ``filename`` is the path at fault.
#[pyfunction]
fn inspect_checkpoint<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyList>> {
    let rows = py
        .detach(|| checkpoint::inspect(&path))
        .map_err(to_py_err)?;
    let out = PyList::empty(py);
    for r in &rows {
        let d = PyDict::new(py);
        d.set_item("file", &r.file)?;
        d.set_item("name", &r.name)?;
        d.set_item("dtype", &r.dtype)?;
        d.set_item("shape", &r.shape)?;
        let s = r.summary;
        d.set_item("min", s.map(|s| s.min))?;
        d.set_item("max", s.map(|s| s.max))?;
        d.set_item("mean", s.map(|s| s.mean))?;
        d.set_item("nan_count", s.map(|s| s.nan_count))?;
        out.append(d)?;
    }
    Ok(out)
}

/// Adds `convert_checkpoint`, `inspect_checkpoint` and `CheckpointError`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_checkpoint, m)?)?;
    m.add("CheckpointError", m.py().get_type::<CheckpointError>())?;
    Ok(())
}
