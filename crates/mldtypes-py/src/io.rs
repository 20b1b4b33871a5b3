//! The Python face of the library's safetensors tensor files
//! (`mldtypes::checkpoint::tensor_file`), behind `mldtypes.safetensors`:
//! `_safe_open` maps a file and hands out its tensors as NumPy arrays (views
//! of the mapping where the data is aligned for the dtype, copies otherwise
//! and for the bit-packed `F4` / `F6_*` tensors, which are unpacked);
//! `_safetensors_save` writes a list of arrays. Mapping, validation, dtype
//! tags, packing, layout and the all-or-nothing write are the library's.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use mldtypes::checkpoint::tensor_file::{self, MappedFile, Tensor};
use mldtypes::checkpoint::{Cancel, TensorEntry};
use mldtypes::dtype::DType;
use numpy::npyffi::{self, npy_intp, NpyTypes, PyArrayObject, PY_ARRAY_API};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::checkpoint::{interruptible, path_arg, to_py_err};
use crate::npapi;
use crate::promotion;

/// The owner of a mapped file's memory: the `base` of every array that views
/// it, so the mapping lives as long as the last such array.
#[pyclass(module = "mldtypes", name = "_MappedSafetensors", frozen)]
struct MappedOwner {
    #[allow(dead_code)]
    file: Arc<MappedFile>,
}

/// An open safetensors file (`mldtypes.safetensors.safe_open` wraps it).
#[pyclass(module = "mldtypes", name = "_SafeFile")]
pub(crate) struct SafeFile {
    file: Option<Arc<MappedFile>>,
    name: String,
}

impl SafeFile {
    fn open_file(&self) -> PyResult<&Arc<MappedFile>> {
        self.file.as_ref().ok_or_else(|| {
            PyValueError::new_err(format!("the safetensors file {} is closed", self.name))
        })
    }

    fn entry<'a>(&self, f: &'a MappedFile, name: &str) -> PyResult<&'a TensorEntry> {
        f.tensor(name).ok_or_else(|| {
            PyKeyError::new_err(format!("{} has no tensor named {name:?}", self.name))
        })
    }
}

/// A NumPy dtype for `d`, little-endian (the file's byte order).
fn little_endian_dtype<'py>(py: Python<'py>, d: DType) -> PyResult<Bound<'py, PyAny>> {
    let dt = promotion::to_numpy(py, d)?;
    if cfg!(target_endian = "big") && d.itemsize() > 1 {
        return dt.call_method1("newbyteorder", ("<",));
    }
    Ok(dt)
}

#[pymethods]
impl SafeFile {
    /// The tensor names, sorted.
    fn keys(&self) -> PyResult<Vec<String>> {
        crate::guard::run(|| {
            let f = self.open_file()?;
            Ok(f.tensors().iter().map(|t| t.name.clone()).collect())
        })
    }

    /// The tensor names in the order of their data in the file.
    fn offset_keys(&self) -> PyResult<Vec<String>> {
        crate::guard::run(|| {
            let f = self.open_file()?;
            let mut t: Vec<&TensorEntry> = f.tensors().iter().collect();
            t.sort_by_key(|t| (t.offsets, t.name.clone()));
            Ok(t.into_iter().map(|t| t.name.clone()).collect())
        })
    }

    /// `__metadata__` as a dict of str (in the file's order), or None when
    /// the file has none.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        crate::guard::run(|| {
            let f = self.open_file()?;
            if !f.has_metadata() {
                return Ok(None);
            }
            let d = PyDict::new(py);
            for (k, v) in f.metadata_entries() {
                d.set_item(k, v)?;
            }
            Ok(Some(d))
        })
    }

    /// `(safetensors tag, dtype name, shape)` of tensor `name`.
    fn info(&self, name: &str) -> PyResult<(String, String, Vec<usize>)> {
        crate::guard::run(|| {
            let f = self.open_file()?;
            let t = self.entry(f, name)?;
            Ok((
                t.dtype.to_string(),
                f.dtype(t).name().to_string(),
                t.shape.clone(),
            ))
        })
    }

    /// Tensor `name` as a NumPy array of its dtype: a writable view of the
    /// (private, copy-on-write) mapping when its data is aligned for the
    /// dtype, else a copy; bit-packed tensors unpacked into a new array.
    fn get_tensor<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        crate::guard::run(|| {
            let f = self.open_file()?;
            let t = self.entry(f, name)?;
            let dt = f.dtype(t);
            let descr = little_endian_dtype(py, dt)?;
            let np = py.import("numpy")?;
            let shape = PyTuple::new(py, &t.shape)?;
            let align: usize = descr.getattr("alignment")?.extract()?;
            let ptr = f.data_ptr(t);
            if t.elements == 0 || f.is_packed(t) || !(ptr as usize).is_multiple_of(align.max(1)) {
                let out = np.call_method1("empty", (shape, &descr))?;
                // SAFETY: a new C-contiguous array of `t.elements` elements of
                // `dt`, one per byte for sub-byte types (the unpacked size).
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(
                        npapi::array_data(out.as_ptr()) as *mut u8,
                        t.elements * dt.itemsize(),
                    )
                };
                f.unpack(t, dst).map_err(to_py_err)?;
                return Ok(out);
            }
            view(py, f, t, &descr, ptr)
        })
    }

    /// Closes the file: later calls raise ValueError; arrays already handed
    /// out keep the mapping alive.
    fn close(&mut self) {
        self.file = None;
    }

    /// Whether the file is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.file.is_none()
    }
}

/// A writable, C-contiguous array of `t`'s elements in place, owning a
/// reference to the mapping.
fn view<'py>(
    py: Python<'py>,
    f: &Arc<MappedFile>,
    t: &TensorEntry,
    descr: &Bound<'py, PyAny>,
    ptr: *mut u8,
) -> PyResult<Bound<'py, PyAny>> {
    let owner = Py::new(py, MappedOwner { file: f.clone() })?;
    let mut dims: Vec<npy_intp> = t.shape.iter().map(|&d| d as npy_intp).collect();
    // SAFETY: `descr` is a live dtype (a reference is given to NumPy, which
    // steals it); the data pointer lies in the mapping, aligned, with
    // `t.elements` elements of the dtype, and the mapping outlives the array
    // (its owner becomes the array's base).
    unsafe {
        let d = descr.as_ptr() as *mut npyffi::PyArray_Descr;
        ffi::Py_INCREF(d as *mut ffi::PyObject);
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
            d,
            dims.len() as c_int,
            if dims.is_empty() {
                std::ptr::null_mut()
            } else {
                dims.as_mut_ptr()
            },
            std::ptr::null_mut(),
            ptr as *mut c_void,
            npyffi::NPY_ARRAY_WRITEABLE,
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, arr)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(
            py,
            arr.as_ptr() as *mut PyArrayObject,
            owner.into_ptr(),
        ) != 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// `_safe_open(path)`: maps and validates the safetensors file `path`.
///
/// Raises FileNotFoundError / PermissionError / … (OSError with errno and
/// filename) when it cannot be read, CheckpointError (a ValueError) for a
/// file that is not a valid safetensors file, naming the problem.
#[pyfunction]
pub(crate) fn _safe_open(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<SafeFile> {
    crate::guard::run(|| {
        let p = path_arg(path, "filename")?;
        let file = py.detach(|| MappedFile::open(&p)).map_err(to_py_err)?;
        Ok(SafeFile {
            file: Some(Arc::new(file)),
            name: format!("{:?}", p.display().to_string()),
        })
    })
}

/// `_safetensors_save(tensors, path, metadata)`: writes `tensors`, a list of
/// `(name, array)` with C-contiguous arrays in little-endian byte order, to
/// `path`, with `metadata` (a dict of str to str, kept in its order, or
/// None). The GIL is released while writing; Ctrl-C stops it (nothing is
/// left behind).
///
/// Raises TypeError for a name or metadata entry that is not a str and for
/// arrays of dtypes safetensors cannot store (naming the tensor and what to
/// store instead), ValueError for arrays that are not C-contiguous and
/// little-endian, or whose element count does not fill whole bytes in a
/// packed tag; OSError for the file (FileExistsError for a destination that
/// is a symbolic link, directory or device).
#[pyfunction]
#[pyo3(signature = (tensors, path, metadata=None))]
pub(crate) fn _safetensors_save(
    py: Python<'_>,
    tensors: &Bound<'_, PyList>,
    path: &Bound<'_, PyAny>,
    metadata: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    crate::guard::run(|| {
        let p = path_arg(path, "filename")?;
        let meta: Option<Vec<(String, String)>> = match metadata {
            None => None,
            Some(m) => Some(
                m.iter()
                    .map(|(k, v)| {
                        let k: String = k.extract().map_err(|_| {
                            PyTypeError::new_err(format!(
                                "safetensors metadata keys must be str, not {}",
                                type_name(&k)
                            ))
                        })?;
                        let v: String = v.extract().map_err(|_| {
                            PyTypeError::new_err(format!(
                                "safetensors metadata values must be str; {k:?} is {}",
                                type_name(&v)
                            ))
                        })?;
                        Ok((k, v))
                    })
                    .collect::<PyResult<_>>()?,
            ),
        };
        let mut held: Vec<(String, DType, Vec<usize>, Bound<'_, PyAny>)> = Vec::new();
        for item in tensors.iter() {
            let (name, arr): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let name: String = name
                .cast::<PyString>()
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "safetensors tensor names must be str, not {}",
                        type_name(&name)
                    ))
                })?
                .to_str()?
                .to_string();
            // SAFETY: GIL held.
            if !unsafe { npapi::is_array(arr.as_ptr()) } {
                return Err(PyTypeError::new_err(format!(
                    "tensor {name:?}: expected a numpy.ndarray, not {}",
                    type_name(&arr)
                )));
            }
            let dtype = arr.getattr("dtype")?;
            let dt = promotion::from_numpy(&dtype)?.ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "tensor {name:?}: safetensors has no dtype for {}",
                    dtype.str().map(|s| s.to_string()).unwrap_or_default()
                ))
            })?;
            tensor_file::tag_for(&name, dt).map_err(|e| PyTypeError::new_err(e.to_string()))?;
            let flags = arr.getattr("flags")?;
            if !flags.getattr("c_contiguous")?.is_truthy()? {
                return Err(PyValueError::new_err(format!(
                    "tensor {name:?}: the array must be C-contiguous"
                )));
            }
            let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
            held.push((name, dt, shape, arr));
        }
        let views: Vec<Tensor<'_>> = held
            .iter()
            .map(|(name, dt, shape, arr)| {
                let n: usize = shape.iter().product();
                // SAFETY: a C-contiguous array of `n` elements of `dt`, kept
                // alive by `held` while the data is written.
                let data = unsafe {
                    std::slice::from_raw_parts(
                        npapi::array_data(arr.as_ptr()) as *const u8,
                        n * dt.itemsize(),
                    )
                };
                Tensor {
                    name,
                    dtype: *dt,
                    shape,
                    data,
                }
            })
            .collect();
        let cancel = Cancel::new();
        let c = cancel.clone();
        let views = &views;
        let meta = meta.as_deref();
        interruptible(py, &cancel, move || {
            tensor_file::save_with_metadata(&p, views, meta, &c)
        })
    })
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Adds the safetensors functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SafeFile>()?;
    m.add_class::<MappedOwner>()?;
    m.add_function(wrap_pyfunction!(_safe_open, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_save, m)?)?;
    Ok(())
}
