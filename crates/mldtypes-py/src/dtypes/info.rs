//! The values behind `mldtypes.finfo` / `mldtypes.iinfo`: every field of
//! `mldtypes::info::Finfo` / `Iinfo`, the float fields as scalars of the
//! format itself (as ml_dtypes' `finfo` gives them).

use mldtypes::info::{Finfo, Iinfo};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::dtypes::float::{self, FloatInfo};

/// A scalar of `info` holding `v` (exact: every finfo value is representable).
fn scalar_of(py: Python<'_>, info: &FloatInfo, v: f64) -> PyResult<Py<PyAny>> {
    // SAFETY: GIL held; `new_scalar` returns a new reference or NULL with an error.
    unsafe {
        let o = float::new_scalar(info, info.encode_f64(v));
        Bound::from_owned_ptr_or_err(py, o).map(Bound::unbind)
    }
}

fn finfo_dict<'py>(py: Python<'py>, info: &FloatInfo, fi: &Finfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("eps", fi.eps),
        ("epsneg", fi.epsneg),
        ("max", fi.max),
        ("min", fi.min),
        ("resolution", fi.resolution),
        ("tiny", fi.tiny),
        ("smallest_normal", fi.smallest_normal),
        ("smallest_subnormal", fi.smallest_subnormal),
    ] {
        // ml_dtypes gives eps and epsneg of the 6- and 4-bit MX formats as
        // Python floats
        if fi.bits < 8 && (k == "eps" || k == "epsneg") {
            d.set_item(k, v)?;
        } else {
            d.set_item(k, scalar_of(py, info, v)?)?;
        }
    }
    for (k, v) in [
        ("bits", fi.bits as i32),
        ("machep", fi.machep),
        ("negep", fi.negep),
        ("minexp", fi.minexp),
        ("maxexp", fi.maxexp),
        ("nexp", fi.nexp),
        ("nmant", fi.nmant),
        ("iexp", fi.iexp),
        ("precision", fi.precision),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// `_finfo_fields(name)`: the finfo fields of the float format `name`
/// (a registered mldtypes float format) as a dict: `eps`, `epsneg`,
/// `max`, `min`, `resolution`, `tiny`, `smallest_normal`,
/// `smallest_subnormal` as scalars of the format; `bits`, `machep`,
/// `negep`, `minexp`, `maxexp`, `nexp`, `nmant`, `iexp`, `precision` as
/// ints. Source: `mldtypes::info::Finfo` (values of ml_dtypes 0.6.0).
///
/// Raises ValueError for any other name.
#[pyfunction]
pub(crate) fn _finfo_fields<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    crate::guard::run(|| {
        let info = name
            .parse::<mldtypes::dtype::DType>()
            .ok()
            .and_then(float::info)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{name} is not an mldtypes float format"))
            })?;
        finfo_dict(py, info, &Finfo::of(&info.format))
    })
}

/// `_iinfo_fields(name)`: `(kind, bits, min, max)` of the sub-byte integer
/// `name` (int1, int2, int4, uint1, uint2, uint4). Source:
/// `mldtypes::info::Iinfo`.
///
/// Raises ValueError for any other name.
#[pyfunction]
pub(crate) fn _iinfo_fields(name: &str) -> PyResult<(String, u32, i64, i64)> {
    crate::guard::run(|| {
        use mldtypes::dtype::DType;
        let dt = [
            DType::Int1,
            DType::Int2,
            DType::Int4,
            DType::UInt1,
            DType::UInt2,
            DType::UInt4,
        ]
        .into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| PyValueError::new_err(format!("{name} is not an mldtypes integer type")))?;
        let ii: Iinfo = dt
            .iinfo()
            .ok_or_else(|| PyValueError::new_err(format!("{name} has no iinfo")))?;
        let kind = if ii.min < 0 { "i" } else { "u" };
        Ok((kind.to_string(), ii.bits, ii.min as i64, ii.max as i64))
    })
}
