//! `mldtypes.cast`: conversion into a float format under any of the nine
//! rounding modes of `mldtypes::round`, with saturation and the random
//! bits of stochastic rounding (explicit or from a seed). The work is
//! `mldtypes::cast::round_bytes`; this module reads the arguments.

use mldtypes::cast::{self as lib_cast, CastError};
use mldtypes::dtype::DType;
use mldtypes::round::{RandomBits, RoundMode, Rounding};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::dtypes::registry;
use crate::npapi;

/// Which of our dtypes, or NumPy's float16 / float32 / float64, `descr` is.
fn dtype_of(descr: &Bound<'_, PyAny>) -> PyResult<Option<DType>> {
    let ch: String = descr.getattr("char")?.extract()?;
    let builtin = match ch.as_str() {
        "e" => Some(DType::Float16),
        "f" => Some(DType::Float32),
        "d" => Some(DType::Float64),
        _ => None,
    };
    if builtin.is_some() {
        return Ok(builtin);
    }
    let num: std::os::raw::c_int = descr.getattr("num")?.extract()?;
    Ok(registry::registered()
        .into_iter()
        .find(|d| registry::typenum(*d) == Some(num)))
}

/// The qualified name of a dtype for messages (`numpy.int32`, `mldtypes.bfloat16`).
fn name_of(descr: &Bound<'_, PyAny>) -> String {
    crate::interop::twins::qualified_name(descr)
}

/// Converts `x` into `dtype`, rounding by `rounding`.
///
/// Args:
///   x: array_like of floats (NumPy float16 / float32 / float64, any
///     mldtypes float dtype; Python numbers and integer arrays go through
///     float64). Float64 values are rounded once, never through float32.
///   dtype: the target: one of the 12 ml_dtypes float types
///     (`mldtypes.bfloat16`, `float8_e4m3fn`, …, `float4_e2m1fn`), an IEEE
///     P3109 format (`mldtypes.p3109(k, p, ...)`), `numpy.float16` or
///     `numpy.float32`.
///   rounding: one of "nearest_even" (the default; what `astype` does),
///     "nearest_away", "toward_zero", "toward_negative", "toward_positive",
///     "stochastic", "stochastic_odd", "stochastic_fast",
///     "stochastic_fastest": gfloat 0.5.2's `RoundMode` members TiesToEven,
///     TiesToAway, TowardZero, TowardNegative, TowardPositive, Stochastic,
///     StochasticOdd, StochasticFast, StochasticFastest (gfloat's names are
///     accepted too).
///   saturate: map every finite overflow, and ±inf, to ±max finite (gfloat's
///     `sat=True`). NaN stays NaN where the format has one. Without it an
///     overflow gives ±inf, or NaN in formats without infinities, except
///     that the directed modes never round a finite value past ±max toward
///     infinity. float4/float6 always saturate.
///   random_bits: the stochastic modes' random numbers, unsigned integers
///     broadcastable to `x`'s shape, each below `2**sr_bits`; used exactly
///     as gfloat uses `srbits`.
///   sr_bits: the number of random bits per element, 1 to 32; required with
///     `random_bits`, 32 by default with `seed`.
///   seed: an integer 0 ≤ seed < 2**64: the random numbers are made by
///     Philox4x32-10 (Random123) keyed by the seed: word j of its stream is
///     word j mod 4 of the block counter j // 4, and element i (its flat
///     C-order index) takes the top `sr_bits` bits of word i, or with
///     `sr_bits` of 16 or less of half i mod 2 of word i // 2 (the low half
///     for an even i); results do not depend on threads or chunking.
///   out: an array of `dtype` and `x`'s shape (C-contiguous, writeable) to
///     write into and return.
///
/// Returns:
///   An array of `dtype` with `x`'s shape (a scalar for a scalar `x`), or `out`.
///
/// Raises:
///   ValueError: an unknown rounding mode (the message lists the valid
///     ones); a stochastic mode without `random_bits` or `seed`; both given;
///     either given to a deterministic mode; `random_bits` whose shape does
///     not broadcast to `x`'s, negative, or not below `2**sr_bits`; `sr_bits`
///     outside 1 to 32 or missing with `random_bits`; a seed outside
///     0 to 2**64 − 1; `out` of the wrong shape or not C-contiguous and
///     writeable.
///   TypeError: an integer, complex or other non-float target (or `out` of
///     another dtype); a complex or non-numeric `x`; non-integer
///     `random_bits`.
///
/// Source: `mldtypes::cast::round_bytes` (the Rust library), checked against
/// gfloat 0.5.2's `round_ndarray` + `encode_ndarray` on the committed
/// vectors (`tests/vectors/rounding/`).
#[pyfunction]
#[pyo3(signature = (x, dtype, *, rounding = "nearest_even", saturate = false, random_bits = None, sr_bits = None, seed = None, out = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn cast<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    rounding: &str,
    saturate: bool,
    random_bits: Option<&Bound<'py, PyAny>>,
    sr_bits: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard::run(|| {
        cast_body(
            py,
            x,
            dtype,
            rounding,
            saturate,
            random_bits,
            sr_bits,
            seed,
            out,
        )
    })
}

/// An integer argument (anything with `__index__`) in `lo..=hi`.
fn int_arg(py: Python<'_>, what: &str, v: &Bound<'_, PyAny>, lo: i128, hi: i128) -> PyResult<i128> {
    let index = py.import("operator")?.getattr("index")?;
    let i = index.call1((v,)).map_err(|_| {
        PyTypeError::new_err(format!(
            "mldtypes.cast: {what} must be an integer, not {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let n: Option<i128> = i.extract().ok();
    match n {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(PyValueError::new_err(format!(
            "mldtypes.cast: {what} = {} is out of range: it must be {lo} to {hi}",
            i.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

fn cast_err(e: CastError) -> PyErr {
    match e {
        CastError::UnsupportedPair { .. } => PyTypeError::new_err(format!("mldtypes.cast: {e}")),
        _ => PyValueError::new_err(format!("mldtypes.cast: {e}")),
    }
}

#[allow(clippy::too_many_arguments)]
fn cast_body<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    rounding: &str,
    saturate: bool,
    random_bits: Option<&Bound<'py, PyAny>>,
    sr_bits: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let mode: RoundMode = rounding
        .parse()
        .map_err(|e| PyValueError::new_err(format!("mldtypes.cast: {e}")))?;

    // The target.
    let descr = np.call_method1("dtype", (dtype,))?;
    let to =
        match dtype_of(&descr)? {
            Some(DType::Float64) => return Err(PyTypeError::new_err(
                "mldtypes.cast: numpy.float64 is no target: it holds every float32 and float64 \
                 value as it is (use astype)",
            )),
            Some(d) if d.format().is_some() || d == DType::Float32 => d,
            _ => {
                return Err(PyTypeError::new_err(format!(
                "mldtypes.cast rounds into float formats; {} is not one (targets: the mldtypes \
                 float types, mldtypes.p3109(...) formats, numpy.float16, numpy.float32)",
                name_of(&descr)
            )))
            }
        };

    // The source, C-contiguous; integers and Python numbers through float64.
    let scalar_in = !x.is_instance(&np.getattr("ndarray")?)? && {
        let a = np.call_method1("asarray", (x,))?;
        a.getattr("ndim")?.extract::<usize>()? == 0
    };
    let mut arr = np.call_method1("asarray", (x,))?;
    let mut from = dtype_of(&arr.getattr("dtype")?)?;
    if from.is_none() {
        let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
        if matches!(kind.as_str(), "i" | "u" | "b") {
            arr = arr.call_method1("astype", (np.getattr("float64")?,))?;
            from = Some(DType::Float64);
        } else {
            return Err(PyTypeError::new_err(format!(
                "mldtypes.cast needs an array of floats, got {}",
                name_of(&arr.getattr("dtype")?)
            )));
        }
    }
    let from = match from {
        Some(d) if d.format().is_some() || matches!(d, DType::Float32 | DType::Float64) => d,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "mldtypes.cast needs an array of floats, got {}",
                name_of(&arr.getattr("dtype")?)
            )))
        }
    };
    // C order, 0-d arrays kept 0-d (ascontiguousarray would make them 1-d).
    let order = pyo3::types::PyDict::new(py);
    order.set_item("order", "C")?;
    let arr = np.call_method("asarray", (arr,), Some(&order))?;
    let shape = arr.getattr("shape")?;
    let n: usize = arr.getattr("size")?.extract()?;

    // The random numbers.
    if random_bits.is_some() && seed.is_some() {
        return Err(PyValueError::new_err(
            "mldtypes.cast: give random_bits or seed, not both",
        ));
    }
    let sr = match sr_bits {
        Some(v) if !v.is_none() => Some(int_arg(py, "sr_bits", v, 1, 32)? as u32),
        _ => None,
    };
    let mut r = Rounding::new(mode).saturating(saturate);
    // Keeps the random numbers alive (empty without explicit ones).
    let mut bits_arr = np.call_method1("empty", (0,))?;
    let mut bits_kind = 0usize;
    if let Some(seed) = seed.filter(|s| !s.is_none()) {
        let s = int_arg(py, "seed", seed, 0, u64::MAX as i128)? as u64;
        r = r.with_seed(s, sr.unwrap_or(32));
    } else if let Some(b) = random_bits.filter(|b| !b.is_none()) {
        let sr = sr.ok_or_else(|| {
            PyValueError::new_err(
                "mldtypes.cast: sr_bits is required with random_bits (the number of random bits \
                 in each number, 1 to 32)",
            )
        })?;
        let b = np.call_method1("asarray", (b,))?;
        let kind: String = b.getattr("dtype")?.getattr("kind")?.extract()?;
        if !matches!(kind.as_str(), "i" | "u") {
            return Err(PyTypeError::new_err(format!(
                "mldtypes.cast: random_bits must be unsigned integers, got {}",
                name_of(&b.getattr("dtype")?)
            )));
        }
        // Negative numbers and numbers beyond 32 bits cannot be handed to
        // the library as unsigned words; it checks the rest against sr_bits.
        let size: usize = b.getattr("size")?.extract()?;
        let itemsize: usize = b.getattr("dtype")?.getattr("itemsize")?.extract()?;
        if size > 0 && kind == "i" {
            let lo: i128 = b.call_method0("min")?.extract()?;
            if lo < 0 {
                return Err(PyValueError::new_err(format!(
                    "mldtypes.cast: random_bits must not be negative (found {lo})"
                )));
            }
        }
        if size > 0 && itemsize > 4 {
            let hi: i128 = b.call_method0("max")?.extract()?;
            if hi > u32::MAX as i128 {
                return Err(PyValueError::new_err(format!(
                    "mldtypes.cast: random number {hi} does not fit sr_bits = {sr}: every \
                     number must be below 2^{sr} = {}",
                    1u64 << sr
                )));
            }
        }
        let (word, k) = match itemsize {
            1 => ("uint8", 1),
            2 => ("uint16", 2),
            _ => ("uint32", 4),
        };
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("copy", false)?;
        let b = b.call_method("astype", (np.getattr(word)?,), Some(&kwargs))?;
        let b = np.call_method1("broadcast_to", (&b, &shape)).map_err(|_| {
            PyValueError::new_err(format!(
                "mldtypes.cast: random_bits of shape {} do not broadcast to the input's shape {}",
                b.getattr("shape")
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
                shape
            ))
        })?;
        bits_arr = np.call_method1("ascontiguousarray", (b,))?;
        bits_kind = k;
    }

    // The destination.
    let dst = match out.filter(|o| !o.is_none()) {
        Some(o) => {
            if !o.is_instance(&np.getattr("ndarray")?)? {
                return Err(PyTypeError::new_err(
                    "mldtypes.cast: out must be a numpy array",
                ));
            }
            let od = o.getattr("dtype")?;
            if !od.eq(&descr)? {
                return Err(PyTypeError::new_err(format!(
                    "mldtypes.cast: out has dtype {}, the target is {}",
                    name_of(&od),
                    name_of(&descr)
                )));
            }
            if !o.getattr("shape")?.eq(&shape)? {
                return Err(PyValueError::new_err(format!(
                    "mldtypes.cast: out has shape {}, the input {}",
                    o.getattr("shape")?,
                    shape
                )));
            }
            let flags = o.getattr("flags")?;
            if !flags.getattr("c_contiguous")?.extract::<bool>()?
                || !flags.getattr("writeable")?.extract::<bool>()?
            {
                return Err(PyValueError::new_err(
                    "mldtypes.cast: out must be C-contiguous and writeable",
                ));
            }
            o.clone()
        }
        None => np.call_method1("empty", (&shape, &descr))?,
    };

    // SAFETY: `arr`, `dst` and `bits_arr` are C-contiguous ndarrays holding
    // `n` elements of their dtypes (bits: `n` words of `bits_kind` bytes),
    // alive until this function returns.
    let src = unsafe {
        std::slice::from_raw_parts(
            npapi::array_data(arr.as_ptr()) as *const u8,
            n * from.itemsize(),
        )
    };
    let out_bytes = unsafe {
        std::slice::from_raw_parts_mut(
            npapi::array_data(dst.as_ptr()) as *mut u8,
            n * to.itemsize(),
        )
    };
    let bits_ptr = unsafe { npapi::array_data(bits_arr.as_ptr()) };
    let bits = match bits_kind {
        // SAFETY: as above.
        1 => Some(RandomBits::U8(unsafe {
            std::slice::from_raw_parts(bits_ptr as *const u8, n)
        })),
        2 => Some(RandomBits::U16(unsafe {
            std::slice::from_raw_parts(bits_ptr as *const u16, n)
        })),
        4 => Some(RandomBits::U32(unsafe {
            std::slice::from_raw_parts(bits_ptr as *const u32, n)
        })),
        _ => None,
    };
    if let (Some(b), Some(sr)) = (bits, sr) {
        r = r.with_bits(b, sr);
    } else if sr.is_some() && seed.is_none_or(|s| s.is_none()) {
        return Err(PyValueError::new_err(
            "mldtypes.cast: sr_bits is for the stochastic modes, with random_bits or seed",
        ));
    }
    // A result array made here is dropped on error: its conversion checks
    // explicit random numbers as it reads them (one pass over them, not two).
    let fresh = out.is_none_or(|o| o.is_none());
    py.detach(|| {
        if fresh {
            lib_cast::round_bytes_fresh(src, from, out_bytes, to, &r)
        } else {
            lib_cast::round_bytes(src, from, out_bytes, to, &r)
        }
    })
    .map_err(cast_err)?;
    if scalar_in && out.is_none_or(|o| o.is_none()) {
        return dst.get_item(pyo3::types::PyTuple::empty(py));
    }
    Ok(dst)
}
