//! The Python extension module `mldtypes._core`: every ml_dtypes number
//! format registered as a NumPy user dtype from Rust (NumPy >= 2.0 legacy
//! user-dtype API), with every conversion done by the `mldtypes` library.
//!
//! The Python package `mldtypes` (python/mldtypes/__init__.py) re-exports
//! the scalar types and adds `finfo`/`iinfo`, which subclass NumPy's.

use pyo3::prelude::*;

mod checkpoint;
mod dtypes;
mod guard;
mod interop;
mod io;
mod npapi;
mod pack;
mod promotion;
mod reduce;
mod ufuncs;

use dtypes::{arrfuncs, casts, info, registry};
use interop::{dlpack, twins};

/// Registers every dtype of ml_dtypes' list (`registry::ORDER`), its casts
/// and its ufunc loops (once per process): the float formats as data
/// ([`dtypes::float`]), the sub-byte integers and complex types through
/// their compiled implementations.
fn register_all(py: Python<'_>) -> PyResult<()> {
    use dtypes::float::{self, Float, FloatInfo};
    use mldtypes::dtype::DType;
    if registry::typenum(DType::BFloat16).is_some() {
        return Ok(());
    }
    npapi::init_cache(py)?;
    for dt in registry::ORDER {
        let (kind, char) = registry::numpy_codes(dt);
        if let Some(info) = FloatInfo::new(dt, kind, char) {
            // SAFETY: GIL held, NumPy imported.
            unsafe { float::register(py, info)? };
        } else {
            crate::with_fixed!(
                dt,
                |T| unsafe { arrfuncs::register_dtype::<T>(py)? },
                unreachable_dtype(dt)?
            );
        }
    }
    for dt in registry::ORDER {
        crate::with_fixed!(
            dt,
            |T| unsafe { casts::register_builtin_casts::<T>(py)? },
            ()
        );
    }
    // Casts among our types: the pairs ml_dtypes 0.6.0 registers.
    for (a, b) in registry::ml_dtypes_casts() {
        let (fa, fb) = (float::info(a).is_some(), float::info(b).is_some());
        // SAFETY: GIL held, both registered.
        unsafe {
            match (fa, fb) {
                (true, true) => casts::one_way_ends::<Float, Float>(py, a, b)?,
                (true, false) => crate::with_fixed!(
                    b,
                    |B| casts::one_way_ends::<Float, casts::Ours<B>>(py, a, b)?,
                    unreachable_dtype(b)?
                ),
                (false, true) => crate::with_fixed!(
                    a,
                    |A| casts::one_way_ends::<casts::Ours<A>, Float>(py, a, b)?,
                    unreachable_dtype(a)?
                ),
                (false, false) => crate::with_fixed!(
                    a,
                    |A| crate::with_fixed!(
                        b,
                        |B| casts::one_way_ends::<casts::Ours<A>, casts::Ours<B>>(py, a, b)?,
                        unreachable_dtype(b)?
                    ),
                    unreachable_dtype(a)?
                ),
            }
        }
    }
    Ok(())
}

/// The error for a dtype of ml_dtypes' list that no family implements.
fn unreachable_dtype(dt: mldtypes::dtype::DType) -> PyResult<()> {
    Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
        "mldtypes: no NumPy implementation for {dt}"
    )))
}

/// The compiled core of the `mldtypes` package: the 20 scalar types (each
/// registered as a NumPy dtype on import, with its casts and ufunc loops),
/// `sum`/`mean`/`dot`, `pack`/`unpack`, the finfo/iinfo tables and type
/// promotion. Import `mldtypes`, not this module.
///
/// Free-threading safe (`gil_used = false`): the registered state is
/// written once, while the interpreter's import lock for this module is held,
/// and read-only afterwards; the promotion settings are atomics, locks and
/// thread-locals.
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    guard::run(|| init(m))
}

/// The body of `_core`, run under the panic guard.
fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // The package version, from Cargo.toml (the Python metadata's one source).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    register_all(py)?;
    for dt in registry::ORDER {
        let t = registry::scalar_type(dt).ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(format!("mldtypes: {dt} is not registered"))
        })?;
        // SAFETY: the type object lives for the life of the process.
        let t = unsafe { Bound::from_borrowed_ptr(py, t as *mut pyo3::ffi::PyObject) };
        m.add(dt.name(), t)?;
    }
    m.add_function(wrap_pyfunction!(dtypes::float::p3109_type, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::float::_p3109_named, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::float::_p3109_names, m)?)?;
    m.add_function(wrap_pyfunction!(registry::_registry, m)?)?;
    m.add_function(wrap_pyfunction!(info::_finfo_fields, m)?)?;
    m.add_function(wrap_pyfunction!(info::_iinfo_fields, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::sum, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::mean, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::dot, m)?)?;
    m.add_function(wrap_pyfunction!(pack::pack, m)?)?;
    m.add_function(wrap_pyfunction!(pack::unpack, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::_kernel_path, m)?)?;
    reduce::add_functions(m)?;
    ufuncs::register(py)?;
    ufuncs::add_functions(m)?;
    promotion::register(m)?;
    checkpoint::register(m)?;
    io::register(m)?;
    dlpack::register(m)?;
    twins::register(m)?;
    guard::register(m)?;
    Ok(())
}
