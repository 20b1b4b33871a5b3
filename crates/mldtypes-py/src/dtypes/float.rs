//! The floating-point dtypes as data: the scalar type, the array functions
//! and the casts of every float format are driven by its descriptor (a
//! [`FloatInfo`]: the library's `Format`, storage width and NumPy codes),
//! one implementation for all of them rather than a compiled copy per type.
//!
//! A scalar object is the Python object header followed by the code (one
//! byte for formats of at most 8 bits, two bytes otherwise), the layout
//! NumPy assumes for user-defined scalars. Every entry point finds the
//! format it works on from its context: the scalar's type
//! ([`info_of_type`]), or the dtype of the array NumPy passes to array
//! functions and casts ([`info_of_array`]).
//!
//! Values follow ml_dtypes 0.6.0: text, hashing, comparisons and scalar
//! arithmetic go through the value as float32 (through float64 for formats
//! whose range exceeds float32's), rounded once into the format with the
//! library's conversions (`mldtypes::float::core`).

use std::ffi::{c_void, CStr, CString};
use std::os::raw::{c_char, c_int, c_uchar};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use mldtypes::dtype::DType;
use mldtypes::float::core::{decode_f32, decode_f64, encode_f32, encode_f64};
use mldtypes::format::{Format, Overflow, P3109};
use mldtypes::sort::{
    argsort_u16, argsort_u8, byte_keys, counting_sort_u8, radix_sort_u16, SortKey,
};
use numpy::npyffi::{
    npy_intp, NpyTypes, PyArrayObject, PyArray_ArrFuncs, PyArray_Descr, PyArray_DescrProto,
    NPY_NSORTS, NPY_TYPES, NPY_USE_SETITEM, PY_ARRAY_API,
};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::dtypes::castlevel;
use crate::dtypes::casts::{self, End, Flags, Val};
use crate::dtypes::registry;
use crate::dtypes::scalar::{self, Conv, Op};
use crate::npapi::{self, np_type, set_error};

/// One float dtype of this package, described by data.
pub(crate) struct FloatInfo {
    /// The dtype in the library's registry.
    pub(crate) dtype: DType,
    /// The format's descriptor.
    pub(crate) format: Format,
    /// Bytes per element: 1 (formats of at most 8 bits) or 2.
    pub(crate) itemsize: usize,
    /// NumPy `dtype.kind` and `dtype.char` (ml_dtypes 0.6.0's for its types).
    pub(crate) kind: u8,
    pub(crate) char: u8,
    /// `tp_name`: `mldtypes.<name>`.
    pub(crate) qualname: &'static CStr,
    /// The scalar type's docstring.
    pub(crate) doc: &'static CStr,
    /// Whether every value is a float32 value (arithmetic, text and hashing
    /// then go through float32, as ml_dtypes does; through float64 otherwise).
    pub(crate) in_f32: bool,
    /// The scalar type object, once created.
    scalar_type: AtomicPtr<ffi::PyTypeObject>,
}

impl FloatInfo {
    /// The descriptor of the float dtype `dt`, with the NumPy codes `kind`
    /// and `char`; `None` if `dt` is not a real float format of at most 16
    /// bits.
    pub(crate) fn new(dt: DType, kind: u8, char: u8) -> Option<FloatInfo> {
        let format = dt.format()?;
        if !dt.is_float() || format.bits() > 16 {
            return None;
        }
        let name = dt.name();
        let leak = |s: String| -> &'static CStr {
            Box::leak(CString::new(s).unwrap_or_default().into_boxed_c_str())
        };
        Some(FloatInfo {
            dtype: dt,
            format,
            itemsize: if format.bits() <= 8 { 1 } else { 2 },
            kind,
            char,
            qualname: leak(format!("mldtypes.{name}")),
            doc: leak(format!(
                "{name} floating-point values: {} (see mldtypes.finfo for its limits)",
                layout_text(&format)
            )),
            in_f32: format.fits_f32(),
            scalar_type: AtomicPtr::new(null_mut()),
        })
    }

    /// The code stored at `p`.
    ///
    /// # Safety
    /// `p` points at `itemsize` readable bytes.
    #[inline]
    pub(crate) unsafe fn read(&self, p: *const u8) -> u32 {
        unsafe {
            if self.itemsize == 1 {
                *p as u32
            } else {
                std::ptr::read_unaligned(p as *const u16) as u32
            }
        }
    }

    /// Stores `code` at `p`.
    ///
    /// # Safety
    /// `p` points at `itemsize` writable bytes.
    #[inline]
    pub(crate) unsafe fn write(&self, p: *mut u8, code: u32) {
        unsafe {
            if self.itemsize == 1 {
                *p = code as u8;
            } else {
                std::ptr::write_unaligned(p as *mut u16, code as u16);
            }
        }
    }

    /// The value of `code` as float32 (exact when `in_f32`).
    #[inline]
    pub(crate) fn to_f32(&self, code: u32) -> f32 {
        decode_f32(&self.format, code)
    }

    /// The exact value of `code` as float64.
    #[inline]
    pub(crate) fn to_f64(&self, code: u32) -> f64 {
        decode_f64(&self.format, code)
    }

    /// The value ml_dtypes computes with: float32 (as float64), or the
    /// float64 value for formats beyond float32's range.
    #[inline]
    pub(crate) fn value(&self, code: u32) -> f64 {
        if self.in_f32 {
            self.to_f32(code) as f64
        } else {
            self.to_f64(code)
        }
    }

    /// `x` rounded once to nearest even (ml_dtypes' overflow).
    #[inline]
    pub(crate) fn encode_f64(&self, x: f64) -> u32 {
        encode_f64(&self.format, x, Overflow::NonSaturating)
    }

    /// `x` rounded as ml_dtypes rounds a float32 (float8_e8m0fnu's float32
    /// subnormal rule).
    #[inline]
    pub(crate) fn encode_f32(&self, x: f32) -> u32 {
        encode_f32(&self.format, x, Overflow::NonSaturating)
    }

    /// `x` rounded once; a NaN keeps its sign as ml_dtypes' conversion
    /// through float32 does.
    #[inline]
    pub(crate) fn encode_f64_nan_signed(&self, x: f64) -> u32 {
        if x.is_nan() {
            self.encode_f32(x as f32)
        } else {
            self.encode_f64(x)
        }
    }

    /// The result of a computation done in [`FloatInfo::value`]'s precision.
    #[inline]
    fn round(&self, x: f64) -> u32 {
        if self.in_f32 {
            self.encode_f32(x as f32)
        } else {
            self.encode_f64(x)
        }
    }

    /// Whether the code is a NaN.
    #[inline]
    pub(crate) fn is_nan(&self, code: u32) -> bool {
        self.format.is_nan_code(code)
    }

    /// The scalar type object (NULL before registration).
    pub(crate) fn scalar_type(&self) -> *mut ffi::PyTypeObject {
        self.scalar_type.load(Ordering::Acquire)
    }
}

/// "1 sign, 4 exponent and 3 mantissa bits, bias 7, ..." for docstrings.
fn layout_text(f: &Format) -> String {
    let sign = if f.signed { "1 sign, " } else { "unsigned: " };
    let nonfinite = if f.has_infinity() {
        "with infinities and NaN"
    } else if f.has_nan() {
        "no infinities, NaN"
    } else {
        "finite values only"
    };
    format!(
        "{sign}{} exponent and {} mantissa bits, bias {}, {nonfinite}, largest finite {}",
        f.exp_bits,
        f.man_bits,
        f.bias,
        f.max_finite()
    )
}

/// Every registered float dtype, in registration order.
static ALL: Mutex<Vec<&'static FloatInfo>> = Mutex::new(Vec::new());

/// The registered float dtype `dt`.
pub(crate) fn info(dt: DType) -> Option<&'static FloatInfo> {
    let all = ALL.lock().unwrap_or_else(|e| e.into_inner());
    all.iter().copied().find(|i| i.dtype == dt)
}

/// The registered float dtype whose scalar type is `t` or a base of `t`.
///
/// # Safety
/// GIL held; `t` a live type object.
pub(crate) unsafe fn info_of_type(t: *mut ffi::PyTypeObject) -> Option<&'static FloatInfo> {
    let all = ALL.lock().unwrap_or_else(|e| e.into_inner());
    let direct = all.iter().copied().find(|i| i.scalar_type() == t);
    if direct.is_some() {
        return direct;
    }
    all.iter().copied().find(|i| {
        let s = i.scalar_type();
        // SAFETY: both are live type objects.
        !s.is_null() && unsafe { ffi::PyType_IsSubtype(t, s) } != 0
    })
}

/// The float dtype of the scalar `o`, if it is one of ours.
///
/// # Safety
/// GIL held; `o` a live object.
pub(crate) unsafe fn info_of_object(o: *mut ffi::PyObject) -> Option<&'static FloatInfo> {
    unsafe { info_of_type(ffi::Py_TYPE(o)) }
}

/// The float dtype of the array `arr` (an ndarray NumPy passes to array
/// functions and casts, or NULL).
///
/// # Safety
/// `arr` is NULL or a live ndarray.
pub(crate) unsafe fn info_of_array(arr: *mut c_void) -> Option<&'static FloatInfo> {
    if arr.is_null() {
        return None;
    }
    unsafe {
        let d = (*(arr as *mut PyArrayObject)).fields.descr;
        if d.is_null() {
            return None;
        }
        registry::float_info((*d).fields.type_num)
    }
}

// ---------------------------------------------------------------------------
// Scalars.

/// The code of a scalar object of `info`.
///
/// # Safety
/// `o` is an instance of `info`'s scalar type.
pub(crate) unsafe fn code_of(info: &FloatInfo, o: *mut ffi::PyObject) -> u32 {
    unsafe { info.read((o as *const u8).add(std::mem::size_of::<ffi::PyObject>())) }
}

/// A new scalar of `info` holding `code` (NULL with an exception set on
/// failure).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn new_scalar(info: &FloatInfo, code: u32) -> *mut ffi::PyObject {
    let t = info.scalar_type();
    if t.is_null() {
        unsafe { set_error(ffi::PyExc_RuntimeError, "mldtypes is not initialized") };
        return null_mut();
    }
    unsafe {
        let alloc = (*t).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let o = alloc(t, 0);
        if !o.is_null() {
            info.write(
                (o as *mut u8).add(std::mem::size_of::<ffi::PyObject>()),
                code,
            );
        }
        o
    }
}

/// ml_dtypes' conversion of a Python object to a float format: Python
/// floats, ints, NumPy scalars (complex ones with `ComplexWarning`), our
/// scalars, 0-d arrays. Floats are rounded once from their `f64` value.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn convert(info: &FloatInfo, o: *mut ffi::PyObject) -> Conv<u32> {
    unsafe {
        if let Some(i) = info_of_object(o) {
            if std::ptr::eq(i, info) {
                return Conv::Ok(code_of(info, o));
            }
        }
        if ffi::PyFloat_Check(o) != 0 {
            let d = ffi::PyFloat_AsDouble(o);
            if d == -1.0 && !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return Conv::Ok(info.encode_f64_nan_signed(d));
        }
        if ffi::PyLong_Check(o) != 0 {
            return match scalar::long_value(o) {
                Some(l) => Conv::Ok(info.encode_f64(l as f64)),
                None => Conv::Err,
            };
        }
        if npapi::is_np_scalar(o) {
            return match scalar::real_of_np_scalar(o) {
                Some(d) => Conv::Ok(info.encode_f64_nan_signed(d)),
                None => Conv::Err,
            };
        }
        if !npapi::is_array(o) || npapi::array_ndim(o) != 0 {
            return Conv::No;
        }
        let Some(d) = registry::descr(info.dtype) else {
            return Conv::No;
        };
        let c = npapi::astype(o, d);
        if c.is_null() {
            return Conv::Err;
        }
        let v = info.read(npapi::array_data(c) as *const u8);
        ffi::Py_DECREF(c);
        Conv::Ok(v)
    }
}

/// Text given to the constructor: Python's `float()` decides what is a
/// number (underscores between digits, surrounding whitespace; no hex); the
/// value is then parsed exactly (`mldtypes::float::parse`).
unsafe fn parse(info: &FloatInfo, s: &str) -> Conv<u32> {
    if unsafe { !scalar::python_float_accepts(s) } {
        return Conv::Err;
    }
    let cleaned: String = s.trim().chars().filter(|&c| c != '_').collect();
    match mldtypes::float::parse::parse_code(&info.format, &cleaned) {
        Ok(c) => Conv::Ok(c),
        Err(_) => {
            unsafe {
                set_error(
                    ffi::PyExc_ValueError,
                    &format!("could not convert string to {}: {s:?}", info.dtype.name()),
                )
            };
            Conv::Err
        }
    }
}

/// The scalar type's format from a slot's `self`.
///
/// # Safety
/// GIL held; `o` a live object.
unsafe fn self_info(o: *mut ffi::PyObject) -> Option<&'static FloatInfo> {
    let i = unsafe { info_of_object(o) };
    if i.is_none() {
        unsafe { set_error(ffi::PyExc_TypeError, "not an mldtypes float scalar") };
    }
    i
}

unsafe extern "C" fn tp_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        let Some(info) = info_of_type(subtype) else {
            set_error(ffi::PyExc_TypeError, "not an mldtypes float type");
            return null_mut();
        };
        if !kwds.is_null() && ffi::PyDict_Size(kwds) != 0 {
            set_error(
                ffi::PyExc_TypeError,
                "constructor takes no keyword arguments",
            );
            return null_mut();
        }
        if ffi::PyTuple_Size(args) != 1 {
            set_error(
                ffi::PyExc_TypeError,
                &format!(
                    "expected number as argument to {} constructor",
                    info.dtype.name()
                ),
            );
            return null_mut();
        }
        let arg = ffi::PyTuple_GetItem(args, 0);
        if info_of_object(arg).is_some_and(|i| std::ptr::eq(i, info)) {
            ffi::Py_INCREF(arg);
            return arg;
        }
        match convert(info, arg) {
            Conv::Ok(v) => return new_scalar(info, v),
            Conv::Err => return null_mut(),
            Conv::No => {}
        }
        if npapi::is_array(arg) {
            if Some(npapi::array_typenum(arg)) == registry::typenum(info.dtype) {
                ffi::Py_INCREF(arg);
                return arg;
            }
            return match registry::descr(info.dtype) {
                Some(d) => npapi::astype(arg, d),
                None => null_mut(),
            };
        }
        match scalar::text_argument(arg) {
            Some(Ok(s)) => match parse(info, &s) {
                Conv::Ok(v) => new_scalar(info, v),
                _ => null_mut(),
            },
            Some(Err(())) => null_mut(),
            None => {
                set_error(
                    ffi::PyExc_TypeError,
                    &format!("expected number, got {}", npapi::type_name(arg)),
                );
                null_mut()
            }
        }
    })
}

unsafe extern "C" fn tp_repr(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        let Some(info) = self_info(o) else {
            return null_mut();
        };
        let x = info.value(code_of(info, o));
        let s = crate::dtypes::fmt::g6(if x.is_nan() { x.abs() } else { x });
        ffi::PyUnicode_FromStringAndSize(s.as_ptr() as *const _, s.len() as _)
    })
}

unsafe extern "C" fn tp_hash(o: *mut ffi::PyObject) -> ffi::Py_hash_t {
    crate::guard::ffi(-1, || unsafe {
        match self_info(o) {
            Some(info) => npapi::hash_f64(o, info.to_f64(code_of(info, o))),
            None => -1,
        }
    })
}

unsafe extern "C" fn tp_richcompare(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: c_int,
) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        if let (Some(ia), Some(ib)) = (info_of_object(a), info_of_object(b)) {
            if std::ptr::eq(ia, ib) {
                let (x, y) = (ia.to_f64(code_of(ia, a)), ia.to_f64(code_of(ia, b)));
                return npapi::np_bool(scalar::cmp_f64(x, y, op));
            }
        }
        scalar::richcompare_fallback(a, b, op)
    })
}

unsafe extern "C" fn nb_float(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        match self_info(o) {
            Some(info) => ffi::PyFloat_FromDouble(info.value(code_of(info, o))),
            None => null_mut(),
        }
    })
}

unsafe extern "C" fn nb_int(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        let Some(info) = self_info(o) else {
            return null_mut();
        };
        let v = info.to_f64(code_of(info, o));
        // float8_e8m0fnu's NaN converts to 0; every other value as C's
        // (long)(float)x
        let i = if info.dtype == DType::Float8E8M0FNU && v.is_nan() {
            0
        } else {
            scalar::c_f64_to_i64(v)
        };
        ffi::PyLong_FromLongLong(i)
    })
}

unsafe extern "C" fn nb_negative(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        let Some(info) = self_info(o) else {
            return null_mut();
        };
        new_scalar(
            info,
            mldtypes::float::negate_code(&info.format, code_of(info, o)),
        )
    })
}

/// Scalar arithmetic between two values of one format: computed in the
/// format's working precision and rounded once. ml_dtypes' compiled code
/// evaluates `+` and `*` as `b op a`: with two NaNs, `b`'s is kept.
fn binop(info: &FloatInfo, x: u32, y: u32, op: Op) -> Option<u32> {
    if info.in_f32 {
        let (a, b) = (info.to_f32(x), info.to_f32(y));
        let r = match op {
            Op::Add if a.is_nan() && b.is_nan() => b,
            Op::Mul if a.is_nan() && b.is_nan() => b,
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::TrueDiv => a / b,
            _ => return None,
        };
        Some(info.encode_f32(r))
    } else {
        let (a, b) = (info.to_f64(x), info.to_f64(y));
        let r = match op {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::TrueDiv => a / b,
            _ => return None,
        };
        Some(info.encode_f64_nan_signed(r))
    }
}

unsafe fn binary(a: *mut ffi::PyObject, b: *mut ffi::PyObject, op: Op) -> *mut ffi::PyObject {
    unsafe {
        if let (Some(ia), Some(ib)) = (info_of_object(a), info_of_object(b)) {
            if std::ptr::eq(ia, ib) {
                if let Some(r) = binop(ia, code_of(ia, a), code_of(ia, b), op) {
                    return new_scalar(ia, r);
                }
            }
        }
        scalar::array_number_fallback(a, b, op)
    }
}

macro_rules! nb_binary {
    ($($slot:ident => $op:ident),* $(,)?) => {$(
        unsafe extern "C" fn $slot(a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> *mut ffi::PyObject {
            crate::guard::ffi(null_mut(), || unsafe { binary(a, b, Op::$op) })
        }
    )*};
}
nb_binary!(
    nb_add => Add,
    nb_subtract => Sub,
    nb_multiply => Mul,
    nb_true_divide => TrueDiv,
);

unsafe extern "C" fn format_method(
    o: *mut ffi::PyObject,
    spec: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        let Some(info) = self_info(o) else {
            return null_mut();
        };
        let x = ffi::PyFloat_FromDouble(info.value(code_of(info, o)));
        scalar::format_python_value(x, spec)
    })
}

/// Creates the scalar type object of `info` (a subclass of `numpy.generic`).
///
/// # Safety
/// GIL held, NumPy imported.
unsafe fn create_type(info: &'static FloatInfo) -> *mut ffi::PyObject {
    let methods: &'static mut [ffi::PyMethodDef] = Box::leak(Box::new([
        ffi::PyMethodDef {
            ml_name: c"__format__".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: format_method,
            },
            ml_flags: ffi::METH_O,
            ml_doc: c"Formats the value as float does.".as_ptr(),
        },
        ffi::PyMethodDef::zeroed(),
    ]));
    macro_rules! slot {
        ($id:expr, $f:expr) => {
            ffi::PyType_Slot {
                slot: $id,
                pfunc: $f as *mut c_void,
            }
        };
    }
    type Unary = unsafe extern "C" fn(*mut ffi::PyObject) -> *mut ffi::PyObject;
    type Binary =
        unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject) -> *mut ffi::PyObject;
    let slots: &'static mut [ffi::PyType_Slot] = Box::leak(Box::new([
        slot!(ffi::Py_tp_new, tp_new as unsafe extern "C" fn(_, _, _) -> _),
        slot!(ffi::Py_tp_repr, tp_repr as Unary),
        slot!(ffi::Py_tp_str, tp_repr as Unary),
        slot!(
            ffi::Py_tp_hash,
            tp_hash as unsafe extern "C" fn(_) -> ffi::Py_hash_t
        ),
        slot!(
            ffi::Py_tp_richcompare,
            tp_richcompare as unsafe extern "C" fn(_, _, _) -> _
        ),
        slot!(ffi::Py_tp_doc, info.doc.as_ptr()),
        slot!(ffi::Py_tp_methods, methods.as_mut_ptr()),
        slot!(ffi::Py_nb_add, nb_add as Binary),
        slot!(ffi::Py_nb_subtract, nb_subtract as Binary),
        slot!(ffi::Py_nb_multiply, nb_multiply as Binary),
        slot!(ffi::Py_nb_true_divide, nb_true_divide as Binary),
        slot!(ffi::Py_nb_negative, nb_negative as Unary),
        slot!(ffi::Py_nb_int, nb_int as Unary),
        slot!(ffi::Py_nb_float, nb_float as Unary),
        ffi::PyType_Slot {
            slot: 0,
            pfunc: null_mut(),
        },
    ]));
    let spec = Box::leak(Box::new(ffi::PyType_Spec {
        name: info.qualname.as_ptr(),
        basicsize: (std::mem::size_of::<ffi::PyObject>() + 2) as c_int,
        itemsize: 0,
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_BASETYPE) as _,
        slots: slots.as_mut_ptr(),
    }));
    unsafe {
        let generic = np_type(NpyTypes::PyGenericArrType_Type) as *mut ffi::PyObject;
        let bases = ffi::PyTuple_Pack(1, generic);
        if bases.is_null() {
            return null_mut();
        }
        let t = ffi::PyType_FromSpecWithBases(spec, bases);
        ffi::Py_DECREF(bases);
        t
    }
}

// ---------------------------------------------------------------------------
// Array functions.

/// The format of the array NumPy passed, or an exception.
///
/// # Safety
/// `arr` is NULL or an ndarray; GIL held when it is missing (to raise).
unsafe fn array_info(arr: *mut c_void) -> Option<&'static FloatInfo> {
    let i = unsafe { info_of_array(arr) };
    if i.is_none() {
        Python::attach(|_| unsafe {
            set_error(
                ffi::PyExc_RuntimeError,
                "mldtypes array function called without its array",
            )
        });
    }
    i
}

unsafe extern "C" fn getitem(data: *mut c_void, arr: *mut c_void) -> *mut ffi::PyObject {
    crate::guard::ffi(null_mut(), || unsafe {
        match array_info(arr) {
            Some(info) => ffi::PyFloat_FromDouble(info.value(info.read(data as *const u8))),
            None => null_mut(),
        }
    })
}

unsafe extern "C" fn setitem(
    item: *mut ffi::PyObject,
    data: *mut c_void,
    arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return -1;
        };
        match convert(info, item) {
            Conv::Ok(v) => {
                info.write(data as *mut u8, v);
                0
            }
            Conv::Err => -1,
            Conv::No => {
                set_error(
                    ffi::PyExc_TypeError,
                    &format!("expected number, got {}", npapi::type_name(item)),
                );
                -1
            }
        }
    })
}

unsafe extern "C" fn compare(a: *const c_void, b: *const c_void, arr: *mut c_void) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return 0;
        };
        let (x, y) = (
            info.to_f64(info.read(a as *const u8)),
            info.to_f64(info.read(b as *const u8)),
        );
        crate::dtypes::arrfuncs::order((x, 0.0), (y, 0.0))
    })
}

/// ml_dtypes' argmax / argmin: the index of the first element `better` than
/// every earlier one, or of the first NaN.
///
/// # Safety
/// `data` holds `n` elements of `info`; `out` is writable.
unsafe fn arg_best(
    info: &FloatInfo,
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    better: impl Fn(f64, f64) -> bool,
) {
    let p = data as *const u8;
    let mut best: Option<f64> = None;
    unsafe {
        *out = 0;
        for i in 0..n.max(0) {
            let c = info.read(p.add(i as usize * info.itemsize));
            if info.is_nan(c) {
                *out = i;
                break;
            }
            let x = info.to_f64(c);
            if best.is_none_or(|b| better(x, b)) {
                best = Some(x);
                *out = i;
            }
        }
    }
}

unsafe extern "C" fn argmax(
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return -1;
        };
        arg_best(info, data, n, out, |x, b| x > b);
        0
    })
}

unsafe extern "C" fn argmin(
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return -1;
        };
        arg_best(info, data, n, out, |x, b| x < b);
        0
    })
}

unsafe extern "C" fn nonzero(data: *mut c_void, arr: *mut c_void) -> c_uchar {
    crate::guard::ffi(0, || unsafe {
        match array_info(arr) {
            Some(info) => {
                let c = info.read(data as *const u8);
                (info.is_nan(c) || info.to_f64(c) != 0.0) as c_uchar
            }
            None => 0,
        }
    })
}

/// `numpy.arange`: element i is `start + i·delta` computed in the format's
/// working precision (float32, as ml_dtypes), rounded into the format.
unsafe extern "C" fn fill(buffer: *mut c_void, length: npy_intp, arr: *mut c_void) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return -1;
        };
        if length < 2 {
            return 0;
        }
        let p = buffer as *mut u8;
        let s = info.value(info.read(p));
        let b = info.value(info.read(p.add(info.itemsize)));
        for i in 2..length as usize {
            let v = if info.in_f32 {
                let (s, d) = (s as f32, b as f32 - s as f32);
                (s + i as f32 * d) as f64
            } else {
                s + i as f64 * (b - s)
            };
            info.write(p.add(i * info.itemsize), info.round(v));
        }
        0
    })
}

unsafe extern "C" fn fillwithscalar(
    buffer: *mut c_void,
    length: npy_intp,
    value: *mut c_void,
    arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        let Some(info) = array_info(arr) else {
            return -1;
        };
        let v = info.read(value as *const u8);
        for i in 0..length.max(0) as usize {
            info.write((buffer as *mut u8).add(i * info.itemsize), v);
        }
        0
    })
}

/// `numpy.dot` of two strided vectors of `info`: accumulated in the working
/// precision (float32, as ml_dtypes), rounded once.
///
/// # Safety
/// The pointers and strides describe `n` elements of `info` each; `op` is
/// writable.
unsafe fn dot(
    info: &FloatInfo,
    a: *const u8,
    is1: npy_intp,
    b: *const u8,
    is2: npy_intp,
    op: *mut u8,
    n: npy_intp,
) {
    let elem = |p: *const u8, i: npy_intp, s: npy_intp| unsafe { info.read(p.offset(i * s)) };
    let r = if info.in_f32 {
        let mut acc = 0f32;
        for i in 0..n.max(0) {
            acc += info.to_f32(elem(a, i, is1)) * info.to_f32(elem(b, i, is2));
        }
        acc as f64
    } else {
        let mut acc = 0f64;
        for i in 0..n.max(0) {
            acc += info.to_f64(elem(a, i, is1)) * info.to_f64(elem(b, i, is2));
        }
        acc
    };
    unsafe { info.write(op, info.round(r)) };
}

/// NumPy calls `dotfunc` without an array (`arr` is NULL), so the format
/// cannot come from the call: each float dtype gets one of these slots,
/// whose function reads the format stored for it.
const DOT_SLOTS: usize = 32 * 17;

#[allow(clippy::declare_interior_mutable_const)]
const NO_INFO: AtomicPtr<FloatInfo> = AtomicPtr::new(null_mut());
static DOT_INFOS: [AtomicPtr<FloatInfo>; DOT_SLOTS] = [NO_INFO; DOT_SLOTS];
/// The next free slot of [`DOT_INFOS`].
static DOT_NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

type DotFn = unsafe extern "C" fn(
    *mut c_void,
    npy_intp,
    *mut c_void,
    npy_intp,
    *mut c_void,
    npy_intp,
    *mut c_void,
);

/// The `dotfunc` of the dtype in slot `H·17 + L`.
unsafe extern "C" fn dot_slot<const H: usize, const L: usize>(
    ip1: *mut c_void,
    is1: npy_intp,
    ip2: *mut c_void,
    is2: npy_intp,
    op: *mut c_void,
    n: npy_intp,
    _arr: *mut c_void,
) {
    crate::guard::ffi((), || {
        let p = DOT_INFOS[H * 17 + L].load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a leaked FloatInfo; NumPy's pointers and strides.
            unsafe {
                dot(
                    &*p,
                    ip1 as *const u8,
                    is1,
                    ip2 as *const u8,
                    is2,
                    op as *mut u8,
                    n,
                )
            };
        }
    })
}

macro_rules! dot_row {
    ($h:literal; $($l:literal)*) => { [$(dot_slot::<$h, $l> as DotFn),*] };
}
macro_rules! dot_bank {
    ($($h:literal)*) => {
        [$(dot_row!($h; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)),*]
    };
}
static DOT_FNS: [[DotFn; 17]; 32] = dot_bank!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
);

/// A `dotfunc` for `info` (`None` once every slot is taken: NumPy then
/// reports "dot not available for this type"; `mldtypes.dot` still works).
fn dot_function(info: &'static FloatInfo) -> Option<DotFn> {
    let i = DOT_NEXT.fetch_add(1, Ordering::AcqRel);
    if i >= DOT_SLOTS {
        return None;
    }
    DOT_INFOS[i].store(
        info as *const FloatInfo as *mut FloatInfo,
        Ordering::Release,
    );
    Some(DOT_FNS[i / 17][i % 17])
}

/// The `sort` slot (every kind): a stable counting sort (one-byte formats)
/// or LSD radix sort (two-byte formats) in NumPy's float order: NaN last,
/// `-0 == +0` with equal values in input order. Returns -1 (NumPy raises
/// `MemoryError`) when scratch memory cannot be allocated. Called without
/// the GIL on a contiguous, aligned buffer.
unsafe extern "C" fn sort(start: *mut c_void, num: npy_intp, arr: *mut c_void) -> c_int {
    crate::guard::ffi(-1, || {
        let Some(info) = (unsafe { info_of_array(arr) }) else {
            return -1;
        };
        let n = num.max(0) as usize;
        let key = SortKey::new(&info.format);
        let ok = if info.itemsize == 1 {
            let keys = byte_keys(|c| key.key(c));
            let v = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, n) };
            counting_sort_u8(v, &keys).is_ok()
        } else {
            let v = unsafe { std::slice::from_raw_parts_mut(start as *mut u16, n) };
            radix_sort_u16(v, |c| key.key(c as u32) as u16).is_ok()
        };
        if ok {
            0
        } else {
            -1
        }
    })
}

/// The `argsort` slot (every kind): sorts the indices in `tosort` stably by
/// the values they point at, in the order of [`sort`].
unsafe extern "C" fn argsort(
    v: *mut c_void,
    tosort: *mut npy_intp,
    num: npy_intp,
    arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        let Some(info) = (unsafe { info_of_array(arr) }) else {
            return -1;
        };
        let n = num.max(0) as usize;
        let idx = unsafe { std::slice::from_raw_parts_mut(tosort, n) };
        if idx.iter().any(|&i| i < 0 || i as usize >= n) {
            return -1;
        }
        let key = SortKey::new(&info.format);
        let ok = if info.itemsize == 1 {
            let keys = byte_keys(|c| key.key(c));
            let d = unsafe { std::slice::from_raw_parts(v as *const u8, n) };
            argsort_u8(d, idx, &keys).is_ok()
        } else {
            let d = unsafe { std::slice::from_raw_parts(v as *const u16, n) };
            argsort_u16(d, idx, |c| key.key(c as u32) as u16).is_ok()
        };
        if ok {
            0
        } else {
            -1
        }
    })
}

/// Creates the scalar type of `info`, registers its dtype with NumPy (with
/// its casts to and from NumPy's builtin types) and makes
/// `numpy.dtype("<name>")` find it.
///
/// # Safety
/// GIL held, NumPy imported.
pub(crate) unsafe fn register(py: Python<'_>, info: FloatInfo) -> PyResult<&'static FloatInfo> {
    let info: &'static FloatInfo = Box::leak(Box::new(info));
    unsafe {
        let t = create_type(info);
        if t.is_null() {
            return Err(PyErr::fetch(py));
        }
        info.scalar_type
            .store(t as *mut ffi::PyTypeObject, Ordering::Release);
        ALL.lock().unwrap_or_else(|e| e.into_inner()).push(info);
        registry::set_scalar_type(info.dtype, t as *mut ffi::PyTypeObject);

        let f: &'static mut PyArray_ArrFuncs = Box::leak(Box::new(std::mem::zeroed()));
        PY_ARRAY_API.PyArray_InitArrFuncs(py, f);
        f.getitem = Some(getitem);
        f.setitem = Some(setitem);
        if info.itemsize == 1 {
            f.copyswapn = Some(crate::dtypes::arrfuncs::copyswapn_n::<1>);
            f.copyswap = Some(crate::dtypes::arrfuncs::copyswap_n::<1>);
        } else {
            f.copyswapn = Some(crate::dtypes::arrfuncs::copyswapn_n::<2>);
            f.copyswap = Some(crate::dtypes::arrfuncs::copyswap_n::<2>);
        }
        f.compare = Some(compare);
        f.argmax = Some(argmax);
        f.argmin = Some(argmin);
        f.nonzero = Some(nonzero);
        f.fill = Some(fill);
        f.fillwithscalar = Some(fillwithscalar);
        f.dotfunc = dot_function(info);
        f.sort = [Some(sort); NPY_NSORTS];
        f.argsort = [Some(argsort); NPY_NSORTS];

        let descr_type = np_type(NpyTypes::PyArrayDescr_Type);
        let proto: &'static mut PyArray_DescrProto = Box::leak(Box::new(std::mem::zeroed()));
        // A static object: one reference that is never released.
        ffi::Py_INCREF(&mut proto.ob_base);
        proto.ob_base.ob_type = descr_type;
        proto.typeobj = t as *mut ffi::PyTypeObject;
        proto.kind = info.kind as c_char;
        proto.type_ = info.char as c_char;
        proto.byteorder = b'=' as c_char;
        proto.flags = NPY_USE_SETITEM as c_char;
        proto.type_num = 0;
        proto.elsize = info.itemsize as c_int;
        proto.alignment = info.itemsize as c_int;
        proto.f = f;
        proto.hash = -1;

        let num = PY_ARRAY_API.PyArray_RegisterDataType(py, proto);
        if num < 0 {
            return Err(PyErr::fetch(py));
        }
        let descr: *mut PyArray_Descr = PY_ARRAY_API.PyArray_DescrFromType(py, num);
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        registry::set_float_info(num, info)?;
        registry::set_registered(info.dtype, num, descr);

        let np = py.import("numpy")?;
        let sctypes = np.getattr("sctypeDict")?;
        let name = info.dtype.name();
        let ty = Bound::from_borrowed_ptr(py, t);
        // When ml_dtypes was imported first, its type keeps the name.
        if !sctypes.contains(name)? {
            sctypes.set_item(name, &ty)?;
        }
        ty.setattr(
            "dtype",
            Bound::from_borrowed_ptr(py, descr as *mut ffi::PyObject),
        )?;
        let (to, from) = safe_builtin_casts(info);
        casts::register_builtin_casts_of::<Float>(py, descr, num, &to, &from)?;
    }
    Ok(info)
}

// ---------------------------------------------------------------------------
// Casts.

/// A float format as one side of a cast: its descriptor comes from the
/// array NumPy passes (one function serves every format).
pub(crate) struct Float;

impl End for Float {
    type Ctx = &'static FloatInfo;
    unsafe fn ctx(arr: *mut c_void) -> Option<&'static FloatInfo> {
        unsafe { info_of_array(arr) }
    }
    // Per-call values below; these constants are never read for this side.
    const KERNEL: Option<DType> = None;
    const SIZE: usize = 0;
    const COMPLEX: bool = false;
    const OURS: bool = true;
    fn kernel(c: &'static FloatInfo) -> Option<DType> {
        Some(c.dtype)
    }
    fn size(c: &'static FloatInfo) -> usize {
        c.itemsize
    }
    /// Every format but bfloat16 converts to integers as ml_dtypes' float8
    /// types do (NaN → 0, ±inf → the integer's limits).
    fn float8(c: &'static FloatInfo) -> bool {
        c.dtype != DType::BFloat16
    }
    fn f32_values(c: &'static FloatInfo) -> bool {
        c.in_f32
    }
    unsafe fn read_f32_bits(c: &'static FloatInfo, p: *const u8) -> Option<(u32, u32)> {
        c.in_f32
            .then(|| (c.to_f32(unsafe { c.read(p) }).to_bits(), 0))
    }
    unsafe fn read(c: &'static FloatInfo, p: *const u8) -> Val {
        Val::Float(c.to_f64(unsafe { c.read(p) }), 0.0)
    }
    unsafe fn write(c: &'static FloatInfo, p: *mut u8, v: Val, flags: &mut Flags) {
        let code = match v {
            Val::Int(i) => c.encode_f64(casts::int_to_f64_odd(i)),
            Val::Float(a, _) if flags.f32_source && c.in_f32 => c.encode_f32(a as f32),
            Val::Float(a, _) => c.encode_f64_nan_signed(a),
        };
        unsafe { c.write(p, code) }
    }
}

// ---------------------------------------------------------------------------
// The IEEE P3109 formats, registered on first use.

/// The NumPy builtin types `info` is declared safely castable to and from:
/// ml_dtypes' lists for its own types; for the other formats exactly the
/// types that hold every value (to), or whose every value the format holds
/// (from), by the library's rule (`Format::fits_in`, `Format::holds_integers`).
fn safe_builtin_casts(info: &FloatInfo) -> (Vec<NPY_TYPES>, Vec<NPY_TYPES>) {
    use NPY_TYPES::*;
    if registry::index(info.dtype).is_some() {
        return casts::ml_dtypes_safe_casts(crate::dtypes::types::Family::Float, true);
    }
    let f = &info.format;
    let mut to = Vec::new();
    if f.fits_in(&mldtypes::format::FLOAT16) {
        to.push(NPY_HALF);
    }
    if f.fits_f32() {
        to.extend([NPY_FLOAT, NPY_CFLOAT]);
    }
    if f.fits_f64() {
        to.extend([NPY_DOUBLE, NPY_LONGDOUBLE, NPY_CDOUBLE, NPY_CLONGDOUBLE]);
    }
    let from = [
        (NPY_BOOL, 0, 1),
        (NPY_UBYTE, 0, 255),
        (NPY_BYTE, -128, 127),
        (NPY_USHORT, 0, 65535),
        (NPY_SHORT, -32768, 32767),
    ]
    .into_iter()
    .filter(|&(_, lo, hi)| f.holds_integers(lo, hi))
    .map(|(t, _, _)| t)
    .collect();
    (to, from)
}

/// One `PyOnceLock` per IEEE P3109 member: its dtype, once registered.
static P3109_DTYPES: [pyo3::sync::PyOnceLock<&'static FloatInfo>; P3109::COUNT] =
    [const { pyo3::sync::PyOnceLock::new() }; P3109::COUNT];

/// The dtype of the IEEE P3109 member `m`, registered with NumPy on first
/// use (once per process, whichever thread asks first): its scalar type,
/// array functions, casts to and from NumPy's types and every registered
/// mldtypes type (declared safe exactly where every value fits), and its
/// ufunc loops.
pub(crate) fn p3109(py: Python<'_>, m: P3109) -> PyResult<&'static FloatInfo> {
    P3109_DTYPES[m.index()]
        .get_or_try_init(py, || {
            // SAFETY: GIL held (attached), NumPy imported by the package.
            unsafe { register_on_first_use(py, DType::P3109(m)) }
        })
        .copied()
}

/// Registers the float format `dt`, which ml_dtypes does not define, after
/// the package's own types.
///
/// # Safety
/// GIL held, NumPy imported.
unsafe fn register_on_first_use(py: Python<'_>, dt: DType) -> PyResult<&'static FloatInfo> {
    let (kind, char) = registry::numpy_codes(dt);
    let info = FloatInfo::new(dt, kind, char).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "{dt} is not a float format of at most 16 bits"
        ))
    })?;
    let info = unsafe { register(py, info)? };
    let me = info.dtype;
    // (from, to, safe, level otherwise) of every cast with one of our types.
    let mut levels = Vec::new();
    for other in registry::registered() {
        if other == me {
            continue;
        }
        // SAFETY: GIL held, both registered.
        unsafe {
            if let Some(o) = self::info(other) {
                casts::one_way_ends::<Float, Float>(py, me, other)?;
                casts::one_way_ends::<Float, Float>(py, other, me)?;
                let (to, from) = (
                    info.format.fits_in(&o.format),
                    o.format.fits_in(&info.format),
                );
                levels.push((me, other, to, castlevel::SAME_KIND));
                levels.push((other, me, from, castlevel::SAME_KIND));
            } else {
                crate::with_fixed!(
                    other,
                    |T| {
                        casts::one_way_ends::<Float, casts::Ours<T>>(py, me, other)?;
                        casts::one_way_ends::<casts::Ours<T>, Float>(py, other, me)?;
                    },
                    ()
                );
                if let Some(ii) = other.iinfo() {
                    let fits = info.format.holds_integers(ii.min as i64, ii.max as i64);
                    levels.push((other, me, fits, castlevel::UNSAFE));
                    levels.push((me, other, false, castlevel::UNSAFE));
                } else if let Some(part) = other.format() {
                    // complex32 / bcomplex32: pairs of `part`
                    let fits = info.format.fits_in(&part);
                    levels.push((me, other, fits, castlevel::SAME_KIND));
                    levels.push((other, me, false, castlevel::UNSAFE));
                }
            }
        }
    }
    for &(from, to, safe, _) in &levels {
        // SAFETY: GIL held, both registered.
        unsafe { declare_safe(py, from, to, safe)? };
    }
    // NumPy holds two legacy dtypes of the same kind and item size
    // equivalent, so it derives "safe" for casts between them whatever their
    // values: set those that do not hold every value to the level they have.
    let np = py.import("numpy")?;
    for (from, to, safe, level) in levels {
        if safe {
            continue;
        }
        let (Some(a), Some(b)) = (registry::descr(from), registry::descr(to)) else {
            continue;
        };
        // SAFETY: registered dtypes, alive for the process.
        let (a, b) = unsafe {
            (
                Bound::from_borrowed_ptr(py, a as *mut ffi::PyObject),
                Bound::from_borrowed_ptr(py, b as *mut ffi::PyObject),
            )
        };
        if np.call_method1("can_cast", (&a, &b))?.extract::<bool>()? {
            castlevel::set_all(py, &[(a, b)], castlevel::SAFE, level);
        }
    }
    // The ufunc loops, driven by the format's descriptor (result tables
    // built on first use).
    if let Some(n) = registry::typenum(me) {
        crate::ufuncs::float::register_float_loops(py, n, &info.format)?;
    }
    Ok(info)
}

/// Declares `from → to` (both ours, registered) safe when `safe`.
///
/// # Safety
/// GIL held.
unsafe fn declare_safe(py: Python<'_>, from: DType, to: DType, safe: bool) -> PyResult<()> {
    if !safe {
        return Ok(());
    }
    let (Some(d), Some(n)) = (registry::descr(from), registry::typenum(to)) else {
        return Ok(());
    };
    let r = unsafe {
        PY_ARRAY_API.PyArray_RegisterCanCast(py, d, n, numpy::npyffi::NPY_SCALARKIND::NPY_NOSCALAR)
    };
    if r < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// `mldtypes.p3109(k, p, *, signed=True, domain="extended")`: the scalar
/// type of the IEEE P3109 format of width `k` bits and precision `p`
/// (significand bits, counting the implicit one), signed or unsigned, with
/// the extended domain (±inf) or the finite one, registered with NumPy on
/// first use and usable as a dtype (`numpy.dtype(t)`, `a.astype(t)`).
/// Formats of at most 8 bits store one code per byte (in the low bits),
/// wider ones two bytes. The name is gfloat's, `p3109_k8p3se`.
///
/// Source: IEEE P3109 interim report v3.1; gfloat 0.5.2
/// `format_info_p3109`.
///
/// Raises ValueError unless `2 <= k <= 16` and `1 <= p <= k - 1` (signed)
/// or `1 <= p <= k` (unsigned), or for a domain other than "extended" or
/// "finite".
#[pyfunction]
#[pyo3(name = "p3109", signature = (k, p, *, signed = true, domain = "extended"))]
pub(crate) fn p3109_type(
    py: Python<'_>,
    k: i64,
    p: i64,
    signed: bool,
    domain: &str,
) -> PyResult<Py<PyAny>> {
    crate::guard::run(|| {
        let extended = match domain {
            "extended" => true,
            "finite" => false,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "domain must be \"extended\" or \"finite\", not {other:?}"
                )))
            }
        };
        let (k32, p32) = (
            u32::try_from(k).unwrap_or(u32::MAX),
            u32::try_from(p).unwrap_or(u32::MAX),
        );
        let m = P3109::new(k32, p32, signed, extended).map_err(|_| {
            let top = if signed { "k - 1" } else { "k" };
            pyo3::exceptions::PyValueError::new_err(format!(
                "no IEEE P3109 format with k={k}, p={p} ({}): k must be 2 to 16 and p 1 to {top}",
                if signed { "signed" } else { "unsigned" }
            ))
        })?;
        scalar_type_object(py, p3109(py, m)?)
    })
}

/// `_p3109_named(name)`: the scalar type of the IEEE P3109 format `name`
/// (`p3109_k8p3se`, or the interim report's `binary8p3se`), registered on
/// first use; `None` for a name outside the family (the package's module
/// `__getattr__` then raises AttributeError).
#[pyfunction]
pub(crate) fn _p3109_named(py: Python<'_>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    crate::guard::run(|| match P3109::from_name(name) {
        Some(m) => scalar_type_object(py, p3109(py, m)?).map(Some),
        None => Ok(None),
    })
}

/// The scalar type of `info` as a Python object.
fn scalar_type_object(py: Python<'_>, info: &FloatInfo) -> PyResult<Py<PyAny>> {
    let t = info.scalar_type();
    if t.is_null() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{} is not registered",
            info.dtype
        )));
    }
    // SAFETY: a live type object, kept for the life of the process.
    Ok(unsafe { Bound::from_borrowed_ptr(py, t as *mut ffi::PyObject) }.unbind())
}

/// `_p3109_names(k=None)`: the names of the IEEE P3109 formats (of width
/// `k`, or all 510), in the library's order (`P3109::all`).
#[pyfunction]
#[pyo3(signature = (k = None))]
pub(crate) fn _p3109_names(k: Option<u32>) -> Vec<&'static str> {
    P3109::all()
        .filter(|m| k.is_none_or(|k| m.k() == k))
        .map(P3109::name)
        .collect()
}
