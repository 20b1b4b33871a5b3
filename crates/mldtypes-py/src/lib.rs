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
mod npapi;
mod pack;
mod promotion;
mod reduce;
mod ufuncs;

use dtypes::{arrfuncs, casts, info, registry, types};
use interop::{dlpack, twins};

/// Calls `$m!(bfloat16, float8_e3m4, ...)` with the 12 float formats, in
/// ml_dtypes 0.6.0's registration order. A new format is one name here (and
/// its descriptor line in `types.rs`).
#[macro_export]
macro_rules! float_types {
    ($m:ident) => {
        $m!(
            bfloat16,
            float8_e3m4,
            float8_e4m3,
            float8_e4m3b11fnuz,
            float8_e4m3fn,
            float8_e4m3fnuz,
            float8_e5m2,
            float8_e5m2fnuz,
            float6_e2m3fn,
            float6_e3m2fn,
            float4_e2m1fn,
            float8_e8m0fnu
        );
    };
}

/// Calls `$m!(int1, uint1, ...)` with the six sub-byte integer types, in
/// registration order.
#[macro_export]
macro_rules! int_types {
    ($m:ident) => {
        $m!(int1, uint1, int2, uint2, int4, uint4);
    };
}

/// Calls `$m!(bcomplex32, complex32)` with the complex types, in
/// registration order.
#[macro_export]
macro_rules! complex_types {
    ($m:ident) => {
        $m!(bcomplex32, complex32);
    };
}

/// Calls `$m!(...)` once per family (floats, sub-byte integers, complex),
/// covering every scalar type in registration order; `$m` expands to
/// statements.
#[macro_export]
macro_rules! all_types {
    ($m:ident) => {
        $crate::float_types!($m);
        $crate::int_types!($m);
        $crate::complex_types!($m);
    };
}

/// Registers every dtype, its casts and its ufunc loops (once per process).
fn register_all(py: Python<'_>) -> PyResult<()> {
    use mldtypes::{
        bcomplex32, bfloat16, complex32, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4,
        float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
        float8_e5m2fnuz, float8_e8m0fnu, int1, int2, int4, uint1, uint2, uint4,
    };
    if registry::typenum(mldtypes::dtype::DType::BFloat16).is_some() {
        return Ok(());
    }
    npapi::init_cache(py)?;
    macro_rules! each {
        ($($t:ident),*) => {
            $( unsafe { arrfuncs::register_dtype::<$t>(py)? }; )*
            $( unsafe { casts::register_builtin_casts::<$t>(py)? }; )*
        };
    }
    all_types!(each);

    // Casts among our types: the pairs ml_dtypes 0.6.0 registers.
    macro_rules! pairs_among {
        ($a:ident) => {};
        ($a:ident, $($rest:ident),+) => {
            $( unsafe { casts::two_way::<$a, $rest>(py)? }; )+
            pairs_among!($($rest),+);
        };
    }
    pairs_among!(
        bfloat16,
        float8_e3m4,
        float8_e4m3,
        float8_e4m3b11fnuz,
        float8_e4m3fn,
        float8_e4m3fnuz,
        float8_e5m2,
        float8_e5m2fnuz,
        float6_e2m3fn,
        float6_e3m2fn,
        float4_e2m1fn,
        bcomplex32,
        complex32
    );
    unsafe {
        casts::two_way::<float8_e8m0fnu, bfloat16>(py)?;
        casts::one_way::<int1, int2>(py)?;
        casts::one_way::<uint1, uint2>(py)?;
        casts::one_way::<int1, int4>(py)?;
        casts::one_way::<uint1, uint4>(py)?;
        casts::one_way::<int2, int4>(py)?;
        casts::one_way::<uint2, uint4>(py)?;
    }
    macro_rules! int_with_floats {
        ($i:ident; $($f:ident),*) => {
            $( unsafe { casts::two_way::<$i, $f>(py)? }; )*
        };
    }
    macro_rules! ints_with_floats {
        ($($i:ident),*) => {
            $(
                int_with_floats!($i; bfloat16, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
                    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
                    float6_e3m2fn, float4_e2m1fn, bcomplex32, complex32);
            )*
        };
    }
    ints_with_floats!(int1, uint1, int2, uint2, int4, uint4);
    // ml_dtypes registers float6_e2m3fn with the 1- and 2-bit integers only.
    int_with_floats!(int1; float6_e2m3fn);
    int_with_floats!(uint1; float6_e2m3fn);
    int_with_floats!(int2; float6_e2m3fn);
    int_with_floats!(uint2; float6_e2m3fn);
    Ok(())
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
    macro_rules! export {
        ($($t:ident),*) => {
            $(
                let t = registry::scalar_type(<mldtypes::$t as types::MlType>::DTYPE)
                    .expect("registered");
                // SAFETY: the type object lives for the life of the process.
                let t = unsafe { Bound::from_borrowed_ptr(py, t as *mut pyo3::ffi::PyObject) };
                m.add(stringify!($t), t)?;
            )*
        };
    }
    all_types!(export);
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
    dlpack::register(m)?;
    twins::register(m)?;
    guard::register(m)?;
    Ok(())
}
