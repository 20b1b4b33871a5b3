//! JAX's type promotion for Python callers: `mldtypes.promote_types`,
//! `mldtypes.result_type`, `mldtypes.weak`, `mldtypes.TypePromotionError`,
//! the `numpy_dtype_promotion` / `enable_x64` context managers and
//! `mldtypes.config` (jax 0.10.2 semantics, all computed by
//! `mldtypes::promote::jax`), plus the opt-in JAX promotion inside NumPy
//! ([`switch`]).
//!
//! Python arguments are read as `jax.dtypes.dtype` reads them: Python `int`,
//! `float`, `complex` values and those types are weakly typed; `bool`, NumPy
//! dtypes, dtype names, scalar types, NumPy arrays and scalars are strongly
//! typed; `mldtypes.weak(dtype)` is a weakly typed value of a dtype.

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use mldtypes::dtype::DType;
use mldtypes::promote::jax::{
    JaxType, Operand, PromotionConfig, PromotionMode, PyScalar, TypePromotionError as EngineError,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyString, PyTuple, PyType};

pub(crate) mod slot;
pub(crate) mod switch;

pyo3::create_exception!(
    mldtypes,
    TypePromotionError,
    PyValueError,
    "No implicit promotion path between the input dtypes (jax 0.10.2's \
     `jax.errors.TypePromotionError`, a `ValueError`); the message is JAX's text."
);

// ---------------------------------------------------------------------------
// Configuration: a process-wide default plus per-thread overrides.

/// Process-wide default: bit 0 strict mode, bit 1 x64 (JAX's defaults: 0).
static PROCESS_DEFAULT: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// This thread's overrides (innermost context manager), if any.
    static MODE_OVERRIDE: Cell<Option<PromotionMode>> = const { Cell::new(None) };
    static X64_OVERRIDE: Cell<Option<bool>> = const { Cell::new(None) };
}

fn process_default() -> PromotionConfig {
    let bits = PROCESS_DEFAULT.load(Ordering::Acquire);
    PromotionConfig {
        mode: if bits & 1 != 0 {
            PromotionMode::Strict
        } else {
            PromotionMode::Standard
        },
        x64: bits & 2 != 0,
    }
}

/// The configuration in effect on this thread: its innermost context
/// manager's settings, otherwise the process-wide default.
pub(crate) fn current_config() -> PromotionConfig {
    let d = process_default();
    PromotionConfig {
        mode: MODE_OVERRIDE.with(|c| c.get()).unwrap_or(d.mode),
        x64: X64_OVERRIDE.with(|c| c.get()).unwrap_or(d.x64),
    }
}

fn set_process_default(update: impl Fn(PromotionConfig) -> PromotionConfig) {
    let _ = PROCESS_DEFAULT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
        let old = PromotionConfig {
            mode: if bits & 1 != 0 {
                PromotionMode::Strict
            } else {
                PromotionMode::Standard
            },
            x64: bits & 2 != 0,
        };
        let new = update(old);
        Some(u8::from(new.mode == PromotionMode::Strict) | (u8::from(new.x64) << 1))
    });
}

fn parse_mode(mode: &Bound<'_, PyAny>) -> PyResult<PromotionMode> {
    match mode.extract::<String>().ok().as_deref() {
        Some("standard") => Ok(PromotionMode::Standard),
        Some("strict") => Ok(PromotionMode::Strict),
        _ => Err(PyValueError::new_err(format!(
            "Unexpected value of jax_numpy_dtype_promotion={}; expected 'standard' or 'strict'",
            mode.repr()?
        ))),
    }
}

fn mode_name(mode: PromotionMode) -> &'static str {
    match mode {
        PromotionMode::Standard => "standard",
        PromotionMode::Strict => "strict",
    }
}

/// What a context manager overrides.
#[derive(Clone, Copy)]
enum Setting {
    Mode(PromotionMode),
    X64(bool),
}

/// Saved override to restore on exit.
#[derive(Clone, Copy)]
enum Saved {
    Mode(Option<PromotionMode>),
    X64(Option<bool>),
}

/// A context manager setting JAX's promotion mode or x64 flag for the
/// current thread until the `with` block ends (returned by
/// `mldtypes.numpy_dtype_promotion` and `mldtypes.enable_x64`). Blocks nest;
/// other threads and the process-wide default (`mldtypes.config.update`)
/// are unaffected.
#[pyclass(module = "mldtypes", name = "_PromotionSetting", frozen)]
pub(crate) struct PromotionSetting {
    setting: Setting,
    saved: Mutex<Vec<Saved>>,
}

#[pymethods]
impl PromotionSetting {
    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        let saved = match slf.setting {
            Setting::Mode(m) => Saved::Mode(MODE_OVERRIDE.with(|c| c.replace(Some(m)))),
            Setting::X64(x) => Saved::X64(X64_OVERRIDE.with(|c| c.replace(Some(x)))),
        };
        slf.saved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(saved);
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) {
        let saved = self.saved.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match saved {
            Some(Saved::Mode(m)) => MODE_OVERRIDE.with(|c| c.set(m)),
            Some(Saved::X64(x)) => X64_OVERRIDE.with(|c| c.set(x)),
            None => {}
        }
    }

    fn __repr__(&self) -> String {
        match self.setting {
            Setting::Mode(m) => format!("numpy_dtype_promotion('{}')", mode_name(m)),
            Setting::X64(x) => format!("enable_x64({})", if x { "True" } else { "False" }),
        }
    }
}

/// A context manager selecting JAX's type promotion mode for the current
/// thread inside a `with` block, as `jax.numpy_dtype_promotion`: `"standard"`
/// (JAX's default lattice) or `"strict"` (only weakly typed values promote
/// implicitly; anything else raises `TypePromotionError`). Blocks nest and
/// are thread-local. The process-wide default is set with
/// `mldtypes.config.update("jax_numpy_dtype_promotion", mode)`.
///
/// Raises ValueError for any other mode.
#[pyfunction]
fn numpy_dtype_promotion(mode: &Bound<'_, PyAny>) -> PyResult<PromotionSetting> {
    crate::guard::run(|| {
        Ok(PromotionSetting {
            setting: Setting::Mode(parse_mode(mode)?),
            saved: Mutex::new(Vec::new()),
        })
    })
}

/// A context manager enabling (or disabling) 64-bit types for the current
/// thread inside a `with` block, as `jax.enable_x64`. With x64 disabled (JAX's
/// default), strongly typed 64-bit inputs count as their 32-bit
/// counterparts (int64 → int32, uint64 → uint32, float64 → float32,
/// complex128 → complex64) and weak results take 32-bit defaults. Blocks
/// nest and are thread-local. The process-wide default is set with
/// `mldtypes.config.update("jax_enable_x64", flag)`.
#[pyfunction]
#[pyo3(signature = (new_val = true))]
fn enable_x64(new_val: bool) -> PyResult<PromotionSetting> {
    crate::guard::run(|| {
        Ok(PromotionSetting {
            setting: Setting::X64(new_val),
            saved: Mutex::new(Vec::new()),
        })
    })
}

/// The process-wide promotion settings, as `jax.config`:
/// `config.update("jax_numpy_dtype_promotion", "standard" | "strict")`,
/// `config.update("jax_enable_x64", bool)`; the attributes of the same names
/// give the values in effect on the calling thread (context managers
/// included). The defaults are JAX's: standard promotion, x64 disabled.
#[pyclass(module = "mldtypes", name = "Config", frozen)]
pub(crate) struct Config;

#[pymethods]
impl Config {
    /// Sets a process-wide default: `"jax_numpy_dtype_promotion"` to
    /// `"standard"` or `"strict"`, or `"jax_enable_x64"` to a bool.
    /// Threads inside a `numpy_dtype_promotion` / `enable_x64` block keep
    /// that block's setting. Raises ValueError for an unknown name or value.
    fn update(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::guard::run(|| {
            match name {
                "jax_numpy_dtype_promotion" => {
                    let mode = parse_mode(value)?;
                    set_process_default(|c| PromotionConfig { mode, ..c });
                }
                "jax_enable_x64" => {
                    let x64 = value.cast::<PyBool>().map_err(|_| {
                        PyValueError::new_err("jax_enable_x64 must be True or False")
                    })?;
                    let x64 = x64.is_true();
                    set_process_default(|c| PromotionConfig { x64, ..c });
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown promotion option {other:?}; expected \
                         'jax_numpy_dtype_promotion' or 'jax_enable_x64'"
                    )))
                }
            }
            Ok(())
        })
    }

    /// The promotion mode in effect on this thread: "standard" or "strict".
    #[getter]
    fn jax_numpy_dtype_promotion(&self) -> &'static str {
        mode_name(current_config().mode)
    }

    /// Whether 64-bit types are enabled on this thread.
    #[getter]
    fn jax_enable_x64(&self) -> bool {
        current_config().x64
    }

    fn __repr__(&self) -> String {
        let c = current_config();
        format!(
            "mldtypes.config(jax_numpy_dtype_promotion='{}', jax_enable_x64={})",
            mode_name(c.mode),
            if c.x64 { "True" } else { "False" }
        )
    }
}

// ---------------------------------------------------------------------------
// Reading Python arguments.

/// `numpy.dtype`, fetched once.
fn np_dtype_type(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("numpy")?.getattr("dtype")?.unbind())
    })
    .map(|t| t.bind(py))
}

/// `numpy.dtype(x)`, with NumPy's own errors.
fn np_dtype<'py>(x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    np_dtype_type(x.py())?.call1((x,))
}

/// The NumPy dtype for one of our dtypes (`numpy.dtype(name)`; the format
/// dtypes are registered by then).
pub(crate) fn to_numpy(py: Python<'_>, d: DType) -> PyResult<Bound<'_, PyAny>> {
    let all = numpy_dtypes(py)?;
    let i = DType::ALL
        .iter()
        .position(|x| *x == d)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype {d}")))?;
    Ok(all[i].bind(py).clone())
}

/// The NumPy dtype of every [`DType::ALL`], in that order, fetched once: the
/// dtype of the package's scalar type (`mldtypes.bfloat16`, ...), so that the
/// answer is ours even when ml_dtypes has registered the same names, or
/// `numpy.dtype(name)` for NumPy's own types.
fn numpy_dtypes(py: Python<'_>) -> PyResult<&Vec<Py<PyAny>>> {
    static CACHE: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();
    CACHE.get_or_try_init(py, || {
        let package = py.import("mldtypes").ok();
        DType::ALL
            .iter()
            .map(|d| {
                let scalar_type = package
                    .as_ref()
                    .and_then(|m| m.getattr(d.name()).ok())
                    .filter(|t| t.is_instance_of::<PyType>());
                match scalar_type {
                    Some(t) => np_dtype(&t),
                    None => np_dtype(&PyString::new(py, d.name()).into_any()),
                }
                .map(Bound::unbind)
            })
            .collect::<PyResult<Vec<_>>>()
    })
}

/// Our dtype for a NumPy dtype instance: a native-byte-order dtype whose name,
/// kind and size are one of ours (ml_dtypes' dtypes count as ours); `None`
/// for anything else (float128, strings, '>f4', ...).
pub(crate) fn from_numpy(dt: &Bound<'_, PyAny>) -> PyResult<Option<DType>> {
    // Fast path: NumPy hands out one instance per builtin and registered dtype.
    if let Some(i) = numpy_dtypes(dt.py())?.iter().position(|x| x.is(dt)) {
        return Ok(Some(DType::ALL[i]));
    }
    if !dt.getattr("isnative")?.is_truthy()? {
        return Ok(None);
    }
    let name = dt.getattr("name")?;
    let name = name.cast::<PyString>()?.to_str()?;
    let d = DType::ALL.iter().copied().find(|d| d.name() == name);
    // Another package's dtype of the same name and size is the same format
    // (ml_dtypes registers the same names); anything else sharing a name is not.
    match d {
        Some(d) => {
            let ours = to_numpy(dt.py(), d)?;
            let same = ours.eq(dt)?
                || (ours.getattr("itemsize")?.eq(dt.getattr("itemsize")?)?
                    && ours.getattr("kind")?.eq(dt.getattr("kind")?)?);
            Ok(same.then_some(d))
        }
        None => Ok(None),
    }
}

/// `jax.dtypes`' TypeError for a value whose dtype JAX arrays cannot have.
fn not_a_jax_type(value: &Bound<'_, PyAny>, dt: &Bound<'_, PyAny>) -> PyErr {
    let v = value.str().map(|s| s.to_string()).unwrap_or_default();
    let d = dt.str().map(|s| s.to_string()).unwrap_or_default();
    PyTypeError::new_err(format!(
        "Value '{v}' with dtype {d} is not a valid JAX array type. Only arrays of numeric \
         types are supported by JAX."
    ))
}

/// `jax.numpy.promote_types`' ValueError for a dtype outside the lattice.
fn not_a_lattice_dtype(dt: &Bound<'_, PyAny>) -> PyErr {
    let r = dt.repr().map(|s| s.to_string()).unwrap_or_default();
    PyValueError::new_err(format!(
        "dtype={r} is not a valid dtype for JAX type promotion."
    ))
}

/// A Python exception for an engine error: `TypePromotionError`,
/// `ValueError` or `TypeError` (the class JAX raises) with JAX's text.
pub(crate) fn engine_err(e: EngineError) -> PyErr {
    let msg = e.to_string();
    match e.python_exception() {
        "TypePromotionError" => TypePromotionError::new_err(msg),
        "TypeError" => PyTypeError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// A weakly typed value of the given dtype (JAX's `weak_type=True`; the
/// CLI's `weak:DTYPE`), for `mldtypes.result_type`. It joins the lattice as
/// the weak type of its kind (`i*`, `f*` or `c*`; a weak bool is a bool), as a
/// JAX array created from a Python scalar does: `result_type(weak("int32"),
/// "int8")` is int8. `dtype` is anything `numpy.dtype` accepts.
///
/// Raises TypeError for a dtype JAX arrays cannot have (strings, objects,
/// float128, ...).
#[pyclass(module = "mldtypes", name = "weak", frozen)]
pub(crate) struct Weak {
    dtype: DType,
}

#[pymethods]
impl Weak {
    #[new]
    fn new(dtype: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::guard::run(|| {
            let dt = np_dtype(dtype)?;
            match from_numpy(&dt)? {
                Some(d) => Ok(Weak { dtype: d }),
                None => Err(not_a_jax_type(dtype, &dt)),
            }
        })
    }

    /// The value's dtype (a `numpy.dtype`).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::guard::run(|| to_numpy(py, self.dtype))
    }

    /// Always True: the value is weakly typed.
    #[getter]
    fn weak_type(&self) -> bool {
        true
    }

    fn __repr__(&self) -> String {
        format!("weak({})", self.dtype.name())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Weak>()
            .map(|o| o.get().dtype == self.dtype)
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        0x9e37_79b9_7f4a_7c15 ^ self.dtype.ordinal() as u64
    }
}

/// One `result_type` argument after reading: an engine operand, or a strongly
/// typed NumPy dtype outside the lattice (JAX lets those through when they
/// need no promotion, e.g. `result_type(ml_dtypes.complex32)`).
enum Arg<'py> {
    Op(Operand),
    Foreign(Bound<'py, PyAny>),
}

fn is_exact<T: pyo3::PyTypeInfo>(x: &Bound<'_, PyAny>) -> bool {
    x.get_type().is(x.py().get_type::<T>())
}

/// Reads one `result_type` argument as `jax.dtypes.dtype` and
/// `jax.dtypes.is_weakly_typed` do.
fn read_arg<'py>(x: &Bound<'py, PyAny>) -> PyResult<Arg<'py>> {
    let py = x.py();
    if let Ok(w) = x.cast::<Weak>() {
        return Ok(Arg::Op(Operand::Weak(w.get().dtype)));
    }
    if x.is_none() {
        // `result_type` turns None into the default float dtype (strong).
        return Ok(Arg::Op(Operand::Strong(DType::Float64)));
    }
    if let Ok(t) = x.cast::<PyType>() {
        if t.is(py.get_type::<PyBool>()) {
            return Ok(Arg::Op(Operand::Scalar(PyScalar::Bool)));
        }
        if t.is(py.get_type::<PyInt>()) {
            return Ok(Arg::Op(Operand::Scalar(PyScalar::Int)));
        }
        if t.is(py.get_type::<PyFloat>()) {
            return Ok(Arg::Op(Operand::Scalar(PyScalar::Float)));
        }
        if t.is(py.get_type::<PyComplex>()) {
            return Ok(Arg::Op(Operand::Scalar(PyScalar::Complex)));
        }
        let generic = py.import("numpy")?.getattr("generic")?;
        if t.is_subclass(&generic)? {
            // A NumPy scalar type: its dtype, strongly typed, not validated
            // here (as JAX).
            let dt = np_dtype(x)?;
            return Ok(match from_numpy(&dt)? {
                Some(d) if !matches!(d, DType::Complex32 | DType::BComplex32) => {
                    Arg::Op(Operand::Strong(d))
                }
                _ => Arg::Foreign(dt),
            });
        }
    } else if is_exact::<PyBool>(x) {
        return Ok(Arg::Op(Operand::Scalar(PyScalar::Bool)));
    } else if is_exact::<PyInt>(x) {
        return Ok(Arg::Op(Operand::Scalar(PyScalar::Int)));
    } else if is_exact::<PyFloat>(x) {
        return Ok(Arg::Op(Operand::Scalar(PyScalar::Float)));
    } else if is_exact::<PyComplex>(x) {
        return Ok(Arg::Op(Operand::Scalar(PyScalar::Complex)));
    }
    let np_dtype_t = np_dtype_type(py)?;
    if x.is_instance_of::<PyString>() || x.is_instance(np_dtype_t)? {
        let dt = np_dtype(x)?;
        return match from_numpy(&dt)? {
            Some(d) if !matches!(d, DType::Complex32 | DType::BComplex32) => {
                Ok(Arg::Op(Operand::Strong(d)))
            }
            _ => Err(not_a_jax_type(x, &dt)),
        };
    }
    // Arrays, NumPy scalars, JAX arrays: their `dtype` attribute; anything
    // else: what `numpy.result_type` makes of it.
    let attr = x.getattr_opt("dtype")?;
    let dt = match attr {
        Some(a) if a.is_instance(np_dtype_t)? => a,
        _ => {
            let rt = py.import("numpy")?.getattr("result_type")?;
            match rt.call1((x,)) {
                Ok(dt) => dt,
                Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                    let err = PyTypeError::new_err(format!(
                        "Cannot determine dtype of {}",
                        x.str().map(|s| s.to_string()).unwrap_or_default()
                    ));
                    err.set_cause(py, Some(e));
                    return Err(err);
                }
                Err(e) => return Err(e),
            }
        }
    };
    let weak = match x.getattr_opt("aval")? {
        Some(aval) => aval
            .getattr_opt("weak_type")?
            .map(|w| w.is_truthy())
            .transpose()?
            .unwrap_or(false),
        None => false,
    };
    match from_numpy(&dt)? {
        Some(d) if !matches!(d, DType::Complex32 | DType::BComplex32) => Ok(Arg::Op(if weak {
            Operand::Weak(d)
        } else {
            Operand::Strong(d)
        })),
        _ => Err(not_a_jax_type(x, &dt)),
    }
}

/// Reads one `promote_types` argument as `jax.numpy.promote_types` does:
/// the types `int`, `float`, `complex` are the weak types, anything else goes
/// through `numpy.dtype`.
fn read_type(x: &Bound<'_, PyAny>) -> PyResult<JaxType> {
    let py = x.py();
    if x.is(py.get_type::<PyInt>()) {
        return Ok(JaxType::WeakInt);
    }
    if x.is(py.get_type::<PyFloat>()) {
        return Ok(JaxType::WeakFloat);
    }
    if x.is(py.get_type::<PyComplex>()) {
        return Ok(JaxType::WeakComplex);
    }
    let dt = np_dtype(x)?;
    match from_numpy(&dt)? {
        Some(d) => Ok(JaxType::Strong(d)),
        None => Err(not_a_lattice_dtype(&dt)),
    }
}

/// The dtype a binary operation on `a` and `b` promotes to under JAX's type
/// promotion (`jax.numpy.promote_types`, jax 0.10.2): the join of `a` and `b`
/// on JAX's lattice for the current `numpy_dtype_promotion` mode and x64
/// setting. `a` and `b` are dtype specifiers (`numpy.dtype`s, names such as
/// `"bfloat16"` or `"f4"`, scalar types such as `numpy.int8` or
/// `mldtypes.bfloat16`); the Python types `int`, `float` and `complex` are the
/// weak types `i*`, `f*`, `c*`. Inputs are not canonicalized for x64, and a
/// weak result is returned as int64 / float64 / complex128, as JAX does.
///
/// Returns a `numpy.dtype`.
///
/// Raises `TypePromotionError` (a ValueError, with JAX's message) when the
/// lattice has no join (e.g. two float8 formats, or different types in strict
/// mode); ValueError for a dtype outside the lattice (complex32, float128,
/// strings, ...); NumPy's TypeError for something that is not a dtype.
#[pyfunction]
fn promote_types<'py>(a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| {
        let (ta, tb) = (read_type(a)?, read_type(b)?);
        let d = current_config().promote_types(ta, tb).map_err(engine_err)?;
        to_numpy(a.py(), d)
    })
}

/// The dtype JAX gives an operation on `args` (`jax.dtypes.result_type`,
/// jax 0.10.2), under the current `numpy_dtype_promotion` mode and x64
/// setting. Each argument is a `numpy.dtype`, a dtype name or alias, a scalar
/// type (`numpy.int8`, `mldtypes.bfloat16`), a NumPy array or scalar (all
/// strongly typed), a Python `bool` (strong), a Python `int` / `float` /
/// `complex` value or one of those types (weakly typed), `None` (the default
/// float), or `mldtypes.weak(dtype)`. With x64 disabled (JAX's default),
/// 64-bit inputs count as 32-bit and results are canonicalized exactly as
/// JAX does (a weak float result is float32, and so on).
///
/// Returns a `numpy.dtype`, or `(numpy.dtype, weak_type: bool)` when
/// `return_weak_type_flag` is true.
///
/// Raises `TypePromotionError` (a ValueError, with JAX's message) when the
/// inputs have no promotion path; TypeError for an argument whose dtype JAX
/// arrays cannot have (complex32, strings, objects, ...) or whose dtype
/// cannot be determined; ValueError when called with no arguments.
///
/// Deviation: where JAX 0.10.2 raises `KeyError: 'V'` (a weak sub-byte
/// integer result) we return the default int / uint, as the Rust library does.
#[pyfunction]
#[pyo3(signature = (*args, return_weak_type_flag = false))]
fn result_type<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyTuple>,
    return_weak_type_flag: bool,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| result_type_body(py, args, return_weak_type_flag))
}

/// The body of `result_type`, run under the panic guard.
fn result_type_body<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyTuple>,
    return_weak_type_flag: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = current_config();
    let mut ops: Vec<Operand> = Vec::with_capacity(args.len());
    let mut foreign: Option<Bound<'py, PyAny>> = None;
    let mut all_same_foreign = true;
    for a in args.iter() {
        match read_arg(&a)? {
            Arg::Op(op) => {
                all_same_foreign = false;
                ops.push(op);
            }
            Arg::Foreign(dt) => {
                if let Some(f) = &foreign {
                    all_same_foreign &= f.eq(&dt)?;
                } else {
                    foreign = Some(dt);
                }
            }
        }
    }
    let (dtype, weak) = if let Some(f) = foreign {
        // As JAX: a dtype outside the lattice passes through when no
        // promotion is needed, otherwise the lattice rejects it.
        if all_same_foreign {
            (f, false)
        } else {
            return Err(not_a_lattice_dtype(&f));
        }
    } else {
        let (d, w) = cfg.result_type(&ops).map_err(engine_err)?;
        (to_numpy(py, d)?, w)
    };
    if return_weak_type_flag {
        Ok(PyTuple::new(py, [dtype, PyBool::new(py, weak).to_owned().into_any()])?.into_any())
    } else {
        Ok(dtype)
    }
}

/// Adds the promotion API to the `mldtypes` extension module:
/// `promote_types`, `result_type`, `weak`, `TypePromotionError`,
/// `numpy_dtype_promotion`, `enable_x64`, `config`, and the opt-in NumPy
/// promotion switch (`set_numpy_promotion`, `numpy_promotion`,
/// `get_numpy_promotion`).
///
/// # Errors
///
/// A Python exception if an attribute cannot be added.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TypePromotionError", py.get_type::<TypePromotionError>())?;
    m.add_class::<Weak>()?;
    m.add_class::<PromotionSetting>()?;
    m.add_class::<Config>()?;
    m.add("config", Config)?;
    m.add_function(wrap_pyfunction!(promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(result_type, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_dtype_promotion, m)?)?;
    m.add_function(wrap_pyfunction!(enable_x64, m)?)?;
    switch::register(m)?;
    Ok(())
}
