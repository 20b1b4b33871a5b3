//! `convert_checkpoint` / `inspect_checkpoint`: the Python face of the
//! library's checkpoint engine (`mldtypes::checkpoint`), which does all the
//! reading, converting, block quantizing and atomic writing.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use mldtypes::checkpoint::{self, Cancel, CheckpointFormat, Options, Stats, Summary, Target};
use mldtypes::format::Overflow;
use mldtypes::mx::ScaleRule;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

create_exception!(
    mldtypes,
    CheckpointError,
    PyValueError,
    "A checkpoint cannot be used: a corrupt or truncated safetensors file, an index naming a \
     missing or mismatched shard, a tensor whose data does not match its dtype and shape. The \
     message names the file (and the tensor or shard) at fault. A subclass of ValueError."
);

/// The errno Python's OSError subclasses are chosen by, for an I/O error
/// without one (a refusal, a file that ended early).
fn errno_of(e: &std::io::Error) -> Option<i32> {
    use std::io::ErrorKind as K;
    os_errno(e).or(match e.kind() {
        K::NotFound => Some(libc_errno::ENOENT),
        K::PermissionDenied => Some(libc_errno::EACCES),
        K::AlreadyExists => Some(libc_errno::EEXIST),
        K::UnexpectedEof => Some(libc_errno::EIO),
        _ => None,
    })
}

/// The OS errno of `e` or of the I/O error it wraps (the tempfile crate
/// wraps them to add the path).
fn os_errno(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        let inner = e.get_ref()?.source()?;
        inner.downcast_ref::<std::io::Error>().and_then(os_errno)
    })
}

/// POSIX errno values (the same on Linux, macOS and Windows' C runtime).
mod libc_errno {
    pub const ENOENT: i32 = 2;
    pub const EIO: i32 = 5;
    pub const EACCES: i32 = 13;
    pub const EEXIST: i32 = 17;
}

/// `OSError(errno, strerror, filename)`, which Python turns into the
/// matching subclass (FileNotFoundError, PermissionError,
/// IsADirectoryError, ...). `strerror` is the OS's text for OS errors, else
/// the library's message.
fn os_error(e: &std::io::Error, path: &Path, whole: String) -> PyErr {
    let Some(errno) = errno_of(e) else {
        return PyOSError::new_err(whole);
    };
    Python::attach(|py| {
        let strerror = if os_errno(e).is_some() {
            py.import("os")
                .and_then(|os| os.getattr("strerror")?.call1((errno,)))
                .and_then(|s| s.extract::<String>())
                .unwrap_or_else(|_| e.to_string())
        } else {
            e.to_string()
        };
        let filename: Py<PyAny> = match path.to_str() {
            Some(s) => s.into_pyobject(py).map(|s| s.into_any().unbind()),
            None => path
                .as_os_str()
                .into_pyobject(py)
                .map(|s| s.into_any().unbind()),
        }
        .unwrap_or_else(|_| py.None());
        PyOSError::new_err((errno, strerror, filename))
    })
}

/// The Python exception for a library error, with the library's message.
pub(crate) fn to_py_err(e: checkpoint::Error) -> PyErr {
    let message = e.to_string();
    match e {
        checkpoint::Error::Usage(_) => PyValueError::new_err(message),
        checkpoint::Error::Invalid { .. } => CheckpointError::new_err(message),
        checkpoint::Error::Read { path, source } | checkpoint::Error::Write { path, source } => {
            os_error(&source, &path, message)
        }
        checkpoint::Error::Cancelled => PyKeyboardInterrupt::new_err(message),
    }
}

/// A path argument as `open()` takes it: `str`, `bytes` or any
/// `os.PathLike`; a NUL byte is a ValueError, None a TypeError.
pub(crate) fn path_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    if obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a str, bytes or os.PathLike path, not None"
        )));
    }
    let p = obj.py().import("os")?.getattr("fspath")?.call1((obj,))?;
    if let Ok(b) = p.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        if bytes.contains(&0) {
            return Err(PyValueError::new_err(format!("{what}: embedded null byte")));
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            return Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)));
        }
        #[cfg(not(unix))]
        {
            let s = p.call_method0("decode")?;
            return Ok(PathBuf::from(s.extract::<String>()?));
        }
    }
    let s = p.cast::<PyString>()?;
    if s.to_cow()?.contains('\0') {
        return Err(PyValueError::new_err(format!("{what}: embedded null byte")));
    }
    s.extract::<PathBuf>()
}

/// The longest `only` glob accepted.
const MAX_GLOB: usize = 1024;

/// Compiles an `only` / `exclude` glob (`what` names it); too long or too
/// complex patterns are a ValueError (the glob compiler must never panic on
/// them).
fn compile_glob(g: &str, what: &str) -> PyResult<globset::GlobMatcher> {
    let n = g.chars().count();
    if n > MAX_GLOB {
        return Err(PyValueError::new_err(format!(
            "bad {what} glob: {n} characters; at most {MAX_GLOB}"
        )));
    }
    match catch_unwind(|| globset::Glob::new(g).map(|g| g.compile_matcher())) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(PyValueError::new_err(format!("bad {what} glob: {e}"))),
        Err(_) => Err(PyValueError::new_err(format!(
            "bad {what} glob: too complex to compile"
        ))),
    }
}

/// Runs a pyfunction's body under the module's panic guard
/// ([`crate::guard::run`]): a Rust panic becomes RuntimeError with its
/// message instead of reaching Python.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    crate::guard::run(f)
}

/// Runs `work` on a worker thread with the GIL released. The calling thread
/// wakes every 50 ms to run Python's signal handlers; when one raises
/// (KeyboardInterrupt on Ctrl-C), `cancel` is set, the workers stop at their
/// next chunk and clean up, and that exception is raised.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Cancel,
    work: impl FnOnce() -> Result<T, checkpoint::Error> + Send,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(work));
            let _ = tx.send(r);
        });
        let mut rx = rx;
        let mut pending: Option<PyErr> = None;
        loop {
            let (r, back) = py.detach(move || {
                let r = rx.recv_timeout(Duration::from_millis(50));
                (r, rx)
            });
            rx = back;
            match r {
                Ok(done) => {
                    if let Some(e) = pending {
                        return Err(e);
                    }
                    return match done {
                        Ok(r) => r.map_err(to_py_err),
                        Err(p) => Err(crate::guard::panic_error(&*p)),
                    };
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if pending.is_none() {
                        if let Err(e) = py.check_signals() {
                            cancel.cancel();
                            pending = Some(e);
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(pending.unwrap_or_else(|| {
                        PyRuntimeError::new_err("the checkpoint worker ended without a result")
                    }))
                }
            }
        }
    })
}

/// A dtype name of `obj` for the library's parsers: a string as it is, else
/// whatever `numpy.dtype(obj)` makes of it (our scalar types, NumPy dtypes
/// and scalar types).
fn dtype_name(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a dtype name, a NumPy dtype or a scalar type, not None"
        )));
    }
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
/// ``to`` is a plain conversion or a quantization *recipe*:
///
/// - a floating-point dtype (``"bfloat16"``, ``"bf16"``, ``"float8_e4m3fn"``,
///   ``mldtypes.float8_e5m2``, ``numpy.float16``, ...): every floating-point
///   tensor is converted, round-to-nearest-even; ``config.json``'s
///   ``torch_dtype`` and ``dtype`` become the target. MX, NVFP4 and
///   FP8-with-scales tensors of the input are dequantized exactly and rounded
///   once, in their original orientation;
/// - a recipe quantizes the tensors a serving stack quantizes (by default the
///   linear layers' ``[out, in]`` weights, blocked along ``in``; never
///   embeddings, ``lm_head``, routers or MoE gates, norms, biases), as the
///   model's ``config.json`` (``model_type``, ``tie_word_embeddings``)
///   describes it, and writes the configuration that stack reads:
///
///   - an OCP MX v1.0 format (``"mxfp8_e4m3"``, ``"mxfp8_e5m2"``,
///     ``"mxfp6_e3m2"``, ``"mxfp6_e2m3"``, ``"mxfp4"``, ``"mxint8"``):
///     ``NAME_blocks`` (U8, ``[..., K/32, 32*bits/8]``) and ``NAME_scales``
///     (U8 E8M0, ``[..., K/32]``). For gpt-oss, ``"mxfp4"`` quantizes exactly
///     the experts' ``gate_up_proj`` and ``down_proj`` (stored ``[E, in,
///     out]``: blocked along ``in``, stored ``[E, out, in/32, 16]``) and
///     writes ``{"quant_method": "mxfp4", "modules_to_not_convert": [...]}``,
///     which transformers' ``Mxfp4Config`` loads;
///   - ``"nvfp4"``: NVIDIA ModelOpt 0.47's weight-only NVFP4
///     (``W4A16_NVFP4``): ``NAME`` (U8 ``[..., K/2]``), ``NAME_scale``
///     (F8_E4M3 ``[..., K/16]``), ``NAME_scale_2`` (F32 ``[]``, shared by the
///     projections serving stacks fuse unless ``fuse_scale_2=False``), plus
///     ``hf_quant_config.json`` and ``quantization_config``;
///   - ``"fp8"`` / ``"fp8_channel"`` / ``"fp8_block"``: float8_e4m3fn weights
///     with scales ``amax / 448`` per tensor, per output channel or per
///     128 x 128 block, in compressed-tensors' ``float-quantized`` format
///     (default of ``fp8`` and ``fp8_channel``), the ``quant_method: "fp8"``
///     format with ``weight_scale_inv`` of DeepSeek-V3 and Qwen3-FP8 (default
///     of ``fp8_block``) or ModelOpt's (``format="modelopt"``), which also
///     quantizes fused ``[E, in, out]`` experts (gpt-oss) in place, with
///     ``NAME_weight_scale`` F32 ``[]`` over all experts, ``[E]`` per expert
///     or ``[E, out/128, 1, in/128, 1]`` per block of each expert's
///     transpose, as ModelOpt 0.47 exports them.
///
/// Other tensors are copied byte for byte (or converted to ``rest``). The
/// output is a file for a file input, else a directory mirroring the shards
/// with an updated index and ``config.json``. It is written beside ``dst`` and
/// renamed into place, so a failure leaves nothing behind. The work runs on
/// ``threads`` threads with the GIL released; memory stays bounded (a few
/// chunks of 2^20 elements per thread) whatever the model's size.
///
/// Args:
///     src: the input path (str, bytes or os.PathLike). Symbolic links are
///         followed, inside a model directory too (Hugging Face caches link
///         every file into a blob store); FIFOs, sockets and devices are
///         refused.
///     dst: the output path.
///     to: the target: a dtype name or alias, a recipe name (above), an
///         mldtypes scalar type or a NumPy dtype.
///     only: a glob (``*``, ``?``, ``[...]``, ``{a,b}``); only the tensors
///         whose names match are converted, the others are copied. For a
///         recipe it replaces the default selection.
///     exclude: a glob; matching tensors are left out of the conversion.
///     format: a recipe's checkpoint format: ``"modelopt"``,
///         ``"compressed-tensors"`` or ``"fp8"`` (None: the recipe's default).
///     fuse_scale_2: ``"nvfp4"``: share ``weight_scale_2`` across q/k/v and
///         gate/up (ModelOpt's default); False: one per tensor.
///     saturate: clamp values beyond the target's range to its largest finite
///         value instead of inf / NaN (plain conversions; recipes always
///         saturate).
///     mx_scale: the MX scale rule: ``"floor"`` (the specification's, X =
///         2^(floor(log2(amax)) - emax_elem), may clip the largest elements)
///         ``"ceil"`` (X = 2^ceil(log2(amax / max_elem)), never clips), or
///         torchao's ``"even"`` (amax rounded to the element mantissa width,
///         ties away, then floor) and ``"rceil"`` (X = 2^ceil(log2(d)) with
///         d = amax / max_elem rounded to float32). Raises ValueError for
///         any other name.
///     rounding: how plain conversions, dequantized outputs and MX elements
///         round, one of ``mldtypes.cast``'s modes (``"nearest_even"``, the
///         default, is ``astype``'s rounding); ``saturate`` applies. The
///         stochastic modes need ``seed``; ``"mxint8"`` takes
///         ``"nearest_even"`` only (ValueError). ``"nvfp4"`` and the
///         FP8-with-scales targets round each element's exact quotient by
///         its scale with the mode.
///     seed: the stochastic modes' seed (an integer 0 to 2^64 - 1): element
///         ``i`` (row-major; MX: in block order) of the tensor named ``name``
///         takes the Philox4x32-10 number of ``mldtypes.cast`` for position
///         ``i`` keyed by ``seed`` XOR FNV-1a-64(``name``), so the bytes do
///         not depend on ``threads`` or on how the model is sharded.
///     sr_bits: random bits per element, 1 to 32 (None: 32); only with
///         ``seed``.
///     rest: for recipes, a floating-point dtype for the tensors that are not
///         quantized; copied when None.
///     threads: worker threads (None or 0: one per core; at most four per
///         available core).
///     overwrite: allow ``dst`` to be ``src`` or to replace a non-empty
///         directory.
///     fsync: fsync the output before renaming it into place.
///
/// Returns:
///     A dict, the fields of ``mldtypes convert --json``: ``target``,
///     ``format`` (a recipe's checkpoint format, else None), ``files`` (names
///     within the output), ``tensors`` (one dict per converted tensor:
///     ``name``, ``file``, ``shape``, ``from``, ``to``, ``action``
///     (``"convert"``, ``"quantize"`` or ``"dequantize"``) and, except for
///     dequantization, ``elements``, ``max_abs_error``, ``rel_rms_error``,
///     ``sqnr_db`` (inf for an exact conversion), ``clipped``,
///     ``overflow_to_nonfinite``, ``flushed_to_zero``), ``copied`` (tensor
///     names), ``copied_files`` (the other files written: copies, the
///     updated ``config.json``, ``hf_quant_config.json``), ``total`` (the
///     statistics over all tensors), ``bytes_read``, ``bytes_written``,
///     ``warnings``, ``removed_partials``, ``input``, ``output`` and
///     ``seconds``. Each warning (values overflowing to inf / NaN, tensors a
///     recipe chose but could not quantize, ...) is also issued as a
///     RuntimeWarning.
///
/// Raises:
///     ValueError: an unknown or non-floating-point target, a format the
///         target cannot be written in, a bad ``only`` / ``exclude`` glob (or
///         one longer than 1024 characters), ``mx_scale`` or ``rest``,
///         ``threads`` above four per core, ``dst`` equal to ``src`` without
///         ``overwrite``, a path with a NUL byte.
///     TypeError: ``to`` (None included) or ``rest`` is neither a string
///         nor dtype-like; a path that is not str, bytes or os.PathLike.
///     CheckpointError: (a ValueError) a corrupt input, an index naming a
///         missing or mismatched shard, a FIFO, socket or device among the
///         inputs; the message names the file.
///     OSError: reading or writing failed, as ``open()`` raises it: the
///         subclass for the errno (FileNotFoundError, PermissionError,
///         IsADirectoryError, FileExistsError for a destination that is a
///         device or symlink, ...) with ``errno``, ``strerror`` and
///         ``filename`` set; an input truncated while it is read gives
///         errno EIO.
///     KeyboardInterrupt: Ctrl-C stops the conversion within about 0.1 s
///         and removes its temporary output (another signal handler's
///         exception is raised the same way).
///     RuntimeError: an internal error (a bug), never a crash.
#[pyfunction]
#[pyo3(signature = (src, dst, to, *, only=None, exclude=None, format=None, fuse_scale_2=true,
                    saturate=false, mx_scale="floor", rounding="nearest_even", seed=None,
                    sr_bits=None, rest=None, threads=None, overwrite=false,
                    fsync=false))]
#[allow(clippy::too_many_arguments)]
fn convert_checkpoint<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
    only: Option<&str>,
    exclude: Option<&str>,
    format: Option<&str>,
    fuse_scale_2: bool,
    saturate: bool,
    mx_scale: &str,
    rounding: &str,
    seed: Option<u64>,
    sr_bits: Option<u32>,
    rest: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    overwrite: bool,
    fsync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| {
        let (src, dst) = (path_arg(src, "src")?, path_arg(dst, "dst")?);
        let a = Args::new(RawArgs {
            to,
            only,
            exclude,
            format,
            fuse_scale_2,
            saturate,
            mx_scale,
            rounding,
            seed,
            sr_bits,
            rest,
            threads,
            overwrite,
            fsync,
        })?;
        let opts = a.options();
        let start = std::time::Instant::now();
        let summary = interruptible(py, &opts.cancel, || {
            checkpoint::convert(&src, &dst, &opts, &())
        })?;
        summary_dict(py, &summary, &src, &dst, start)
    })
}

/// A name predicate built from a glob.
type Matcher = Box<dyn Fn(&str) -> bool + Sync + Send>;

/// The options shared by the conversion functions, as Python passes them.
struct RawArgs<'a, 'py> {
    to: &'a Bound<'py, PyAny>,
    only: Option<&'a str>,
    exclude: Option<&'a str>,
    format: Option<&'a str>,
    fuse_scale_2: bool,
    saturate: bool,
    mx_scale: &'a str,
    rounding: &'a str,
    seed: Option<u64>,
    sr_bits: Option<u32>,
    rest: Option<&'a Bound<'py, PyAny>>,
    threads: Option<usize>,
    overwrite: bool,
    fsync: bool,
}

/// The options shared by the conversion functions, parsed.
struct Args {
    target: Target,
    select: Option<Matcher>,
    exclude: Option<Matcher>,
    format: Option<CheckpointFormat>,
    fuse_scale_2: bool,
    saturate: bool,
    scale_rule: ScaleRule,
    rounding: mldtypes::round::RoundMode,
    seed: Option<u64>,
    sr_bits: Option<u32>,
    rest: Option<mldtypes::dtype::DType>,
    threads: usize,
    overwrite: bool,
    fsync: bool,
}

impl Args {
    fn new(raw: RawArgs<'_, '_>) -> PyResult<Args> {
        let RawArgs {
            to,
            only,
            exclude,
            format,
            fuse_scale_2,
            saturate,
            mx_scale,
            rounding,
            seed,
            sr_bits,
            rest,
            threads,
            overwrite,
            fsync,
        } = raw;
        let target = Target::parse(&dtype_name(to, "to")?).map_err(to_py_err)?;
        let format = format
            .map(CheckpointFormat::parse)
            .transpose()
            .map_err(to_py_err)?;
        let matcher = |g: Option<&str>, what: &str| -> PyResult<Option<Matcher>> {
            Ok(match g {
                Some(g) => {
                    let m = compile_glob(g, what)?;
                    Some(Box::new(move |name: &str| m.is_match(name)))
                }
                None => None,
            })
        };
        let select = matcher(only, "only")?;
        let exclude = matcher(exclude, "exclude")?;
        let scale_rule = ScaleRule::from_name(mx_scale).ok_or_else(|| {
            PyValueError::new_err(format!(
                "mx_scale must be \"floor\", \"ceil\", \"even\" or \"rceil\", not {mx_scale:?}"
            ))
        })?;
        let rounding = rounding
            .parse::<mldtypes::round::RoundMode>()
            .map_err(|e| PyValueError::new_err(format!("rounding: {e}")))?;
        let rest = match rest {
            Some(r) if !r.is_none() => Some(
                dtype_name(r, "rest")?
                    .parse::<mldtypes::dtype::DType>()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            ),
            _ => None,
        };
        let threads = threads.unwrap_or(0);
        let max = checkpoint::max_threads();
        if threads > max {
            return Err(PyValueError::new_err(format!(
                "threads={threads} is more than {max} (four per available core); use None or 0 \
                 for one per core"
            )));
        }
        Ok(Args {
            target,
            select,
            exclude,
            format,
            fuse_scale_2,
            saturate,
            scale_rule,
            rounding,
            seed,
            sr_bits,
            rest,
            threads,
            overwrite,
            fsync,
        })
    }

    fn options(&self) -> Options<'_> {
        let mut opts = Options::new(self.target);
        opts.overflow = if self.saturate {
            Overflow::Saturating
        } else {
            Overflow::NonSaturating
        };
        opts.scale_rule = self.scale_rule;
        opts.rounding = self.rounding;
        opts.seed = self.seed;
        opts.sr_bits = self.sr_bits;
        opts.rest = self.rest;
        opts.select = self
            .select
            .as_deref()
            .map(|f| f as &(dyn Fn(&str) -> bool + Sync));
        opts.exclude = self
            .exclude
            .as_deref()
            .map(|f| f as &(dyn Fn(&str) -> bool + Sync));
        opts.format = self.format;
        opts.fuse_scale_2 = self.fuse_scale_2;
        opts.threads = self.threads;
        opts.fsync = self.fsync;
        opts.overwrite = self.overwrite;
        opts
    }
}

/// Lists the tensors of a safetensors checkpoint (a file, a model directory
/// or a sharded model's ``model.safetensors.index.json``) with value
/// statistics, reading each tensor a chunk at a time (the GIL released).
///
/// Args:
///     path: the input path (str, bytes or os.PathLike). Symbolic links
///         are followed, inside a model directory too (Hugging Face caches
///         link every file into a blob store).
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
///         missing or mismatched shard, a FIFO, socket or device (refused,
///         never opened); the message names the file.
///     OSError: reading failed, as ``open()`` raises it: the subclass for
///         the errno (FileNotFoundError, PermissionError, ...) with
///         ``errno``, ``strerror`` and ``filename`` set; an input truncated
///         while it is read gives errno EIO.
///     ValueError: a path with a NUL byte.
///     TypeError: a path that is not str, bytes or os.PathLike.
///     KeyboardInterrupt: Ctrl-C (or what another signal handler raised)
///         stops the work within about 0.1 s.
#[pyfunction]
fn inspect_checkpoint<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    guarded(|| inspect_rows(py, &path_arg(path, "path")?))
}

fn inspect_rows<'py>(py: Python<'py>, path: &Path) -> PyResult<Bound<'py, PyList>> {
    let cancel = Cancel::new();
    let rows = interruptible(py, &cancel, || checkpoint::inspect_with(path, &cancel))?;
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

/// The summary dict of `convert` / `convert_shard`.
fn summary_dict<'py>(
    py: Python<'py>,
    summary: &Summary,
    src: &Path,
    dst: &Path,
    start: std::time::Instant,
) -> PyResult<Bound<'py, PyAny>> {
    let seconds = start.elapsed().as_secs_f64();
    let value = serde_json::to_value(summary)
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

/// The shard files of a sharded checkpoint (a model directory or its
/// ``model.safetensors.index.json``), in the order the conversion writes
/// them: the work list of a distributed conversion (one
/// :func:`convert_checkpoint_shard` per name, then
/// :func:`finish_checkpoint_shards`). Every shard's header is validated.
///
/// Args:
///     src: the input path (str, bytes or os.PathLike).
///
/// Returns:
///     A list of file names (a one-element list for a single file).
///
/// Raises:
///     CheckpointError, OSError, ValueError, TypeError: as
///         :func:`inspect_checkpoint`.
#[pyfunction]
fn checkpoint_shards(py: Python<'_>, src: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    guarded(|| {
        let src = path_arg(src, "src")?;
        let cancel = Cancel::new();
        interruptible(py, &cancel, || checkpoint::shards(&src))
    })
}

/// Converts ONE shard of a sharded checkpoint into ``dst_dir/SHARD``: the
/// unit of work of a distributed conversion (a Ray task, a batch job). With
/// the same options every shard file is byte-identical to the one
/// :func:`convert_checkpoint` writes (tensor scales shared with tensors of
/// other shards, such as NVFP4's fused ``weight_scale_2`` of a q/k/v split by
/// a shard boundary, are computed from those tensors too); when all are
/// written, :func:`finish_checkpoint_shards` writes the index,
/// ``config.json`` and the other files. The shard is written beside its
/// destination as ``.SHARD.TAG.XXXXXX.mldtypes-partial`` (``TAG``: a hash of
/// the shard's planned header, by which :func:`finish_checkpoint_shards`
/// recognizes the temporaries a killed task left) and renamed into place;
/// ``dst_dir`` is created if missing.
///
/// Args:
///     src: the model directory or its index (str, bytes or os.PathLike).
///     dst_dir: the output directory.
///     shard: a name from :func:`checkpoint_shards`.
///     to, only, exclude, format, fuse_scale_2, saturate, mx_scale, rest,
///         threads, fsync: as :func:`convert_checkpoint`; give every shard
///         and :func:`finish_checkpoint_shards` the same ones.
///     overwrite: replace an existing ``dst_dir/SHARD`` (refused otherwise,
///         as :func:`convert_checkpoint` refuses a non-empty output); the
///         output's index file, if any, is then removed first, so an index is
///         present only while the shards match it.
///
/// Returns:
///     The shard's summary dict, the fields of :func:`convert_checkpoint`.
///
/// Raises:
///     ValueError: ``shard`` is not a shard of ``src``; ``dst_dir/SHARD``
///         exists and ``overwrite`` is not set; or as
///         :func:`convert_checkpoint`.
///     CheckpointError, OSError, TypeError, KeyboardInterrupt: as
///         :func:`convert_checkpoint`.
#[pyfunction]
#[pyo3(signature = (src, dst_dir, shard, to, *, only=None, exclude=None, format=None,
                    fuse_scale_2=true, saturate=false, mx_scale="floor", rounding="nearest_even", seed=None,
                    sr_bits=None, rest=None, threads=None,
                    overwrite=false, fsync=false))]
#[allow(clippy::too_many_arguments)]
fn convert_checkpoint_shard<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst_dir: &Bound<'py, PyAny>,
    shard: &str,
    to: &Bound<'py, PyAny>,
    only: Option<&str>,
    exclude: Option<&str>,
    format: Option<&str>,
    fuse_scale_2: bool,
    saturate: bool,
    mx_scale: &str,
    rounding: &str,
    seed: Option<u64>,
    sr_bits: Option<u32>,
    rest: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    overwrite: bool,
    fsync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| {
        let (src, dst) = (path_arg(src, "src")?, path_arg(dst_dir, "dst_dir")?);
        let a = Args::new(RawArgs {
            to,
            only,
            exclude,
            format,
            fuse_scale_2,
            saturate,
            mx_scale,
            rounding,
            seed,
            sr_bits,
            rest,
            threads,
            overwrite,
            fsync,
        })?;
        let opts = a.options();
        let start = std::time::Instant::now();
        let summary = interruptible(py, &opts.cancel, || {
            checkpoint::convert_shard(&src, shard, &dst, &opts, &())
        })?;
        summary_dict(py, &summary, &src, &dst, start)
    })
}

/// Completes a conversion done shard by shard: checks that every shard in
/// ``dst_dir`` is the one :func:`convert_checkpoint_shard` writes with these
/// options (its header byte for byte and its size), removes the temporaries
/// of this conversion that killed or failed tasks left (other files, other
/// conversions' temporaries included, are left alone and named in
/// ``warnings``), then writes the index (last, so its presence means the
/// model is complete), ``config.json`` (``torch_dtype`` / ``dtype`` /
/// ``quantization_config`` updated, keys in the input's order), the recipe's
/// other files (``hf_quant_config.json``) and copies of the model directory's
/// other files. Call it once no shard task of the conversion is running.
///
/// Args:
///     src: the model directory or its index.
///     dst_dir: the directory the shards were written to.
///     to, only, exclude, format, fuse_scale_2, saturate, mx_scale, rest:
///         the options the shards were converted with.
///     overwrite: let the index and the other files replace existing ones.
///
/// Returns:
///     A dict: ``target``, ``format``, ``files`` (the shards),
///     ``copied_files``, ``removed_partials`` (the temporaries removed),
///     ``warnings``.
///
/// Raises:
///     CheckpointError: shards of ``dst_dir`` are missing (all of them are
///         named), or one was written with other options or not completely
///         (or as :func:`convert_checkpoint`).
///     ValueError, OSError, TypeError, KeyboardInterrupt: as
///         :func:`convert_checkpoint`.
#[pyfunction]
#[pyo3(signature = (src, dst_dir, to, *, only=None, exclude=None, format=None, fuse_scale_2=true,
                    saturate=false, mx_scale="floor", rounding="nearest_even", seed=None,
                    sr_bits=None, rest=None, overwrite=false))]
#[allow(clippy::too_many_arguments)]
fn finish_checkpoint_shards<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst_dir: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
    only: Option<&str>,
    exclude: Option<&str>,
    format: Option<&str>,
    fuse_scale_2: bool,
    saturate: bool,
    mx_scale: &str,
    rounding: &str,
    seed: Option<u64>,
    sr_bits: Option<u32>,
    rest: Option<&Bound<'py, PyAny>>,
    overwrite: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| {
        let (src, dst) = (path_arg(src, "src")?, path_arg(dst_dir, "dst_dir")?);
        let a = Args::new(RawArgs {
            to,
            only,
            exclude,
            format,
            fuse_scale_2,
            saturate,
            mx_scale,
            rounding,
            seed,
            sr_bits,
            rest,
            threads: None,
            overwrite,
            fsync: false,
        })?;
        let opts = a.options();
        let summary = interruptible(py, &opts.cancel, || {
            checkpoint::finish_shards(&src, &dst, &opts)
        })?;
        let d = PyDict::new(py);
        d.set_item("target", &summary.target)?;
        d.set_item("format", &summary.format)?;
        d.set_item("files", &summary.files)?;
        d.set_item("copied_files", &summary.copied_files)?;
        d.set_item("removed_partials", &summary.removed_partials)?;
        d.set_item("warnings", &summary.warnings)?;
        Ok(d.into_any())
    })
}

/// Adds `convert_checkpoint`, `inspect_checkpoint`, the per-shard functions
/// and `CheckpointError`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_shards, m)?)?;
    m.add_function(wrap_pyfunction!(convert_checkpoint_shard, m)?)?;
    m.add_function(wrap_pyfunction!(finish_checkpoint_shards, m)?)?;
    m.add("CheckpointError", m.py().get_type::<CheckpointError>())?;
    Ok(())
}
