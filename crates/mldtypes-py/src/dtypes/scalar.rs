//! The Python scalar types (`mldtypes.bfloat16`, ...): subclasses of
//! `numpy.generic` holding one value, with construction, text, hashing,
//! comparisons and arithmetic as ml_dtypes 0.6.0's scalars have them.
//!
//! One generic implementation per family ([`Family`]): floats (arithmetic
//! in float32, rounded once), sub-byte integers (wrapping arithmetic,
//! `ZeroDivisionError` for `//` and `%` by zero) and complex pairs.
//! Operations with anything other than the same type are handed to
//! `numpy.ndarray`'s number protocol, i.e. to the ufuncs and NumPy's
//! promotion, as ml_dtypes does.

use std::ffi::{c_void, CString};
use std::os::raw::c_int;
use std::ptr::null_mut;

use mldtypes::float::MiniFloat;
use mldtypes::int::SubByteInt;
use numpy::npyffi::NpyTypes;
use pyo3::ffi;

use crate::dtypes::registry;
use crate::dtypes::types::{ComplexType, Family, IntType, MlType};
use crate::npapi::{self, np_type, set_error, type_check};
use crate::ufuncs::complex::{self, ArithOp};

/// A scalar object: the Python object header followed by the value, the
/// layout NumPy assumes for user-defined scalars (`PyArray_Scalar` copies
/// the element right after the header).
#[repr(C)]
pub(crate) struct ScalarObject<T> {
    ob_base: ffi::PyObject,
    value: T,
}

/// The scalar type object of `T` (registered first thing at import).
fn type_of<T: MlType>() -> *mut ffi::PyTypeObject {
    registry::scalar_type(T::DTYPE).unwrap_or(null_mut())
}

/// Whether `o` is an instance of `T`'s scalar type.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn is<T: MlType>(o: *mut ffi::PyObject) -> bool {
    let t = type_of::<T>();
    !t.is_null() && unsafe { type_check(o, t) }
}

/// The value of a scalar object of `T`.
///
/// # Safety
/// `o` is an instance of `T`'s scalar type.
pub(crate) unsafe fn value<T: MlType>(o: *mut ffi::PyObject) -> T {
    unsafe { std::ptr::read_unaligned(&(*(o as *mut ScalarObject<T>)).value) }
}

/// A new scalar object of `T` (NULL with an exception set on failure).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn new<T: MlType>(v: T) -> *mut ffi::PyObject {
    let t = type_of::<T>();
    if t.is_null() {
        unsafe { set_error(ffi::PyExc_RuntimeError, "mldtypes is not initialized") };
        return null_mut();
    }
    unsafe {
        let alloc = (*t).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let o = alloc(t, 0);
        if !o.is_null() {
            std::ptr::write_unaligned(&mut (*(o as *mut ScalarObject<T>)).value, v);
        }
        o
    }
}

/// The value of any of our scalars as a pair (real, imaginary), if `o` is one.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn any_value(
    o: *mut ffi::PyObject,
) -> Option<(mldtypes::dtype::DType, f64, f64)> {
    if let Some(info) = unsafe { crate::dtypes::float::info_of_object(o) } {
        let v = info.to_f64(unsafe { crate::dtypes::float::code_of(info, o) });
        return Some((info.dtype, v, 0.0));
    }
    for dt in registry::ORDER {
        let found = crate::with_fixed!(
            dt,
            |T| unsafe {
                if is::<T>(o) {
                    let (a, b) = value::<T>(o).to_pair();
                    Some((dt, a, b))
                } else {
                    None
                }
            },
            None
        );
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Result of converting a Python object.
pub(crate) enum Conv<T> {
    /// Converted.
    Ok(T),
    /// Not a kind of object this conversion handles (no exception set).
    No,
    /// Failed with a Python exception set.
    Err,
}

/// A Python int as `i64`; `None` with `TypeError` set when it does not fit
/// (ml_dtypes reads it as a C `long` and reports "expected number").
pub(crate) unsafe fn long_value(o: *mut ffi::PyObject) -> Option<i64> {
    unsafe {
        let l = ffi::PyLong_AsLongLong(o);
        if l == -1 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            set_error(
                ffi::PyExc_TypeError,
                &format!("expected number, got {}", npapi::type_name(o)),
            );
            return None;
        }
        Some(l)
    }
}

/// The real value of a NumPy scalar (ours or NumPy's), warning
/// `ComplexWarning` when an imaginary part is dropped. `None`: exception set.
pub(crate) unsafe fn real_of_np_scalar(o: *mut ffi::PyObject) -> Option<f64> {
    unsafe {
        if let Some((dt, re, _)) = any_value(o) {
            if dt.kind() == mldtypes::dtype::Kind::Complex && npapi::complex_warning() < 0 {
                return None;
            }
            return Some(re);
        }
        if type_check(o, np_type(NpyTypes::PyComplexFloatingArrType_Type)) {
            if npapi::complex_warning() < 0 {
                return None;
            }
            let c = ffi::PyComplex_AsCComplex(o);
            if !ffi::PyErr_Occurred().is_null() {
                return None;
            }
            return Some(c.real);
        }
        let f = ffi::PyNumber_Float(o);
        if f.is_null() {
            return None;
        }
        let d = ffi::PyFloat_AsDouble(f);
        ffi::Py_DECREF(f);
        Some(d)
    }
}

/// A 0-d array cast to `T`.
unsafe fn zero_dim<T: MlType>(o: *mut ffi::PyObject) -> Conv<T> {
    unsafe {
        if !npapi::is_array(o) || npapi::array_ndim(o) != 0 {
            return Conv::No;
        }
        let Some(d) = registry::descr(T::DTYPE) else {
            return Conv::No;
        };
        let c = npapi::astype(o, d);
        if c.is_null() {
            return Conv::Err;
        }
        let v = std::ptr::read_unaligned(npapi::array_data(c) as *const T);
        ffi::Py_DECREF(c);
        Conv::Ok(v)
    }
}

/// ml_dtypes' conversion to a sub-byte integer: Python floats must be
/// finite and in range (`ValueError` for NaN, `OverflowError` otherwise),
/// Python ints wrap, NumPy integer and float scalars must be in range.
unsafe fn to_int<T: IntType>(o: *mut ffi::PyObject) -> Conv<T> {
    let out_of_range = || unsafe {
        set_error(
            ffi::PyExc_OverflowError,
            &format!(
                "out of range value cannot be converted to {}",
                T::DTYPE.name()
            ),
        )
    };
    let from_float = |d: f64| -> Conv<T> {
        if d.is_nan() {
            unsafe { set_error(ffi::PyExc_ValueError, "cannot convert float NaN to integer") };
            return Conv::Err;
        }
        if d.is_infinite() {
            unsafe {
                set_error(
                    ffi::PyExc_OverflowError,
                    "cannot convert float infinity to integer",
                )
            };
            return Conv::Err;
        }
        if d < <T as SubByteInt>::MIN as f64 || d > <T as SubByteInt>::MAX as f64 {
            out_of_range();
            return Conv::Err;
        }
        Conv::Ok(T::from_i64_wrapping(d.trunc() as i64))
    };
    unsafe {
        if is::<T>(o) {
            return Conv::Ok(value::<T>(o));
        }
        if ffi::PyFloat_Check(o) != 0 {
            let d = ffi::PyFloat_AsDouble(o);
            if d == -1.0 && !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return from_float(d);
        }
        if ffi::PyLong_Check(o) != 0 {
            let l = ffi::PyLong_AsLongLong(o);
            if l == -1 && !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return Conv::Ok(T::from_i64_wrapping(l));
        }
        if type_check(o, np_type(NpyTypes::PyIntegerArrType_Type))
            || type_check(o, np_type(NpyTypes::PyBoolArrType_Type))
        {
            let i = ffi::PyNumber_Long(o);
            if i.is_null() {
                return Conv::Err;
            }
            let l = ffi::PyLong_AsLongLong(i);
            ffi::Py_DECREF(i);
            if l == -1 && !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                out_of_range();
                return Conv::Err;
            }
            if l < <T as SubByteInt>::MIN as i64 || l > <T as SubByteInt>::MAX as i64 {
                out_of_range();
                return Conv::Err;
            }
            return Conv::Ok(T::from_i64_wrapping(l));
        }
        if type_check(o, np_type(NpyTypes::PyFloatingArrType_Type)) {
            // NumPy float scalars: the value truncated toward zero must be
            // in range (NaN never is)
            let f = ffi::PyNumber_Float(o);
            if f.is_null() {
                return Conv::Err;
            }
            let d = ffi::PyFloat_AsDouble(f).trunc();
            ffi::Py_DECREF(f);
            if !(d >= <T as SubByteInt>::MIN as f64 && d <= <T as SubByteInt>::MAX as f64) {
                out_of_range();
                return Conv::Err;
            }
            return Conv::Ok(T::from_i64_wrapping(d as i64));
        }
        zero_dim::<T>(o)
    }
}

/// ml_dtypes' conversion to a complex type: Python complex, float and int,
/// NumPy scalars (through complex64), our scalars, 0-d arrays.
unsafe fn to_complex<T: ComplexType>(o: *mut ffi::PyObject) -> Conv<T> {
    unsafe {
        if is::<T>(o) {
            return Conv::Ok(value::<T>(o));
        }
        if ffi::PyComplex_Check(o) != 0 {
            let c = ffi::PyComplex_AsCComplex(o);
            if !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return Conv::Ok(T::from_pair(c.real, c.imag));
        }
        if ffi::PyFloat_Check(o) != 0 {
            let d = ffi::PyFloat_AsDouble(o);
            if d == -1.0 && !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return Conv::Ok(T::from_f64(d));
        }
        if ffi::PyLong_Check(o) != 0 {
            return match long_value(o) {
                Some(l) => Conv::Ok(T::from_f64(l as f64)),
                None => Conv::Err,
            };
        }
        if let Some((_, re, im)) = any_value(o) {
            return Conv::Ok(T::from_pair(re, im));
        }
        if npapi::is_np_scalar(o) {
            let c = ffi::PyObject_CallOneArg(
                std::ptr::addr_of_mut!(ffi::PyComplex_Type) as *mut ffi::PyObject,
                o,
            );
            if c.is_null() {
                return Conv::Err;
            }
            let v = ffi::PyComplex_AsCComplex(c);
            ffi::Py_DECREF(c);
            if !ffi::PyErr_Occurred().is_null() {
                return Conv::Err;
            }
            return Conv::Ok(T::from_pair(v.real, v.imag));
        }
        zero_dim::<T>(o)
    }
}

/// Converts any Python object the type's constructor accepts as a number.
unsafe fn convert<T: MlType + Family_>(o: *mut ffi::PyObject) -> Conv<T> {
    unsafe { T::convert(o) }
}

/// Conversion for `setitem`: `None` when `o` is not a number (no
/// exception set), `Some(Err(()))` with an exception set.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn convert_for_setitem<T: Family_>(
    o: *mut ffi::PyObject,
) -> Option<Result<T, ()>> {
    match unsafe { T::convert(o) } {
        Conv::Ok(v) => Some(Ok(v)),
        Conv::Err => Some(Err(())),
        Conv::No => None,
    }
}

/// Family-specific behaviour, dispatched statically.
#[allow(non_camel_case_types)]
pub(crate) trait Family_: MlType {
    /// Conversion of a Python object (the constructor and `setitem`).
    unsafe fn convert(o: *mut ffi::PyObject) -> Conv<Self>;
    /// Parsing of text given to the constructor.
    unsafe fn parse(s: &str) -> Conv<Self>;
    /// `repr`/`str` text.
    fn text(self) -> String;
    /// `hash`.
    unsafe fn hash(self, o: *mut ffi::PyObject) -> ffi::Py_hash_t;
    /// `<`, `<=`, `==`, `!=`, `>`, `>=` between two values.
    fn compare(self, other: Self, op: c_int) -> bool;
    /// The Python object `arr.item()` gives (float, int or complex).
    unsafe fn to_python(self) -> *mut ffi::PyObject;
    /// Extra attributes of the scalar type (`real`/`imag` of complex types).
    fn getset() -> *mut ffi::PyGetSetDef {
        null_mut()
    }
}

pub(crate) fn cmp_f64(a: f64, b: f64, op: c_int) -> bool {
    match op {
        ffi::Py_LT => a < b,
        ffi::Py_LE => a <= b,
        ffi::Py_EQ => a == b,
        ffi::Py_NE => a != b,
        ffi::Py_GT => a > b,
        _ => a >= b,
    }
}

/// Whether Python's `float(s)` accepts `s` (on refusal its `ValueError`
/// is left set).
pub(crate) unsafe fn python_float_accepts(s: &str) -> bool {
    unsafe {
        let u = ffi::PyUnicode_FromStringAndSize(s.as_ptr() as *const _, s.len() as _);
        if u.is_null() {
            return false;
        }
        let f = ffi::PyFloat_FromString(u);
        ffi::Py_DECREF(u);
        if f.is_null() {
            return false;
        }
        ffi::Py_DECREF(f);
        true
    }
}

macro_rules! int_family {
    ($($t:ident),*) => {$(
        impl Family_ for mldtypes::$t {
            unsafe fn convert(o: *mut ffi::PyObject) -> Conv<Self> {
                unsafe { to_int::<Self>(o) }
            }
            unsafe fn parse(s: &str) -> Conv<Self> {
                unsafe {
                    let Ok(c) = CString::new(s) else {
                        set_error(ffi::PyExc_ValueError, "embedded NUL in integer text");
                        return Conv::Err;
                    };
                    let l = ffi::PyLong_FromString(c.as_ptr(), null_mut(), 0);
                    if l.is_null() {
                        return Conv::Err;
                    }
                    let r = to_int::<Self>(l);
                    ffi::Py_DECREF(l);
                    r
                }
            }
            fn text(self) -> String {
                SubByteInt::to_i32(self).to_string()
            }
            unsafe fn hash(self, _o: *mut ffi::PyObject) -> ffi::Py_hash_t {
                let v = SubByteInt::to_i32(self) as ffi::Py_hash_t;
                if v == -1 { -2 } else { v }
            }
            fn compare(self, other: Self, op: c_int) -> bool {
                cmp_f64(
                    SubByteInt::to_i32(self) as f64,
                    SubByteInt::to_i32(other) as f64,
                    op,
                )
            }
            unsafe fn to_python(self) -> *mut ffi::PyObject {
                unsafe { ffi::PyLong_FromLong(SubByteInt::to_i32(self) as _) }
            }
        }
    )*};
}

macro_rules! complex_family {
    ($($t:ident),*) => {$(
        impl Family_ for mldtypes::$t {
            unsafe fn convert(o: *mut ffi::PyObject) -> Conv<Self> {
                unsafe { to_complex::<Self>(o) }
            }
            unsafe fn parse(s: &str) -> Conv<Self> {
                unsafe {
                    let u = ffi::PyUnicode_FromStringAndSize(s.as_ptr() as *const _, s.len() as _);
                    if u.is_null() {
                        return Conv::Err;
                    }
                    let c = ffi::PyObject_CallOneArg(
                        std::ptr::addr_of_mut!(ffi::PyComplex_Type) as *mut ffi::PyObject,
                        u,
                    );
                    ffi::Py_DECREF(u);
                    if c.is_null() {
                        return Conv::Err;
                    }
                    let r = to_complex::<Self>(c);
                    ffi::Py_DECREF(c);
                    r
                }
            }
            fn text(self) -> String {
                let (a, b) = self.to_f32_pair();
                crate::dtypes::fmt::complex(a, b)
            }
            unsafe fn hash(self, o: *mut ffi::PyObject) -> ffi::Py_hash_t {
                let (a, b) = self.to_pair();
                unsafe {
                    let hr = npapi::hash_f64(o, a);
                    if hr == -1 { return -1; }
                    let hi = npapi::hash_f64(o, b);
                    if hi == -1 { return -1; }
                    let h = (hr as u64).wrapping_add(1000003u64.wrapping_mul(hi as u64)) as ffi::Py_hash_t;
                    if h == -1 { -2 } else { h }
                }
            }
            fn compare(self, other: Self, op: c_int) -> bool {
                let (a, b) = self.to_pair();
                let (c, d) = other.to_pair();
                // ml_dtypes' ordering: by real part when neither imaginary
                // part is NaN, then by imaginary part
                let no_nan = !b.is_nan() && !d.is_nan();
                match op {
                    ffi::Py_EQ => a == c && b == d,
                    ffi::Py_NE => a != c || b != d,
                    ffi::Py_LT => (a < c && no_nan) || (a == c && b < d),
                    ffi::Py_LE => (a < c && no_nan) || (a == c && b <= d),
                    ffi::Py_GT => (a > c && no_nan) || (a == c && b > d),
                    _ => (a > c && no_nan) || (a == c && b >= d),
                }
            }
            unsafe fn to_python(self) -> *mut ffi::PyObject {
                let (a, b) = self.to_f32_pair();
                unsafe { ffi::PyComplex_FromDoubles(a as f64, b as f64) }
            }
            fn getset() -> *mut ffi::PyGetSetDef {
                let defs = vec![
                    ffi::PyGetSetDef {
                        name: c"real".as_ptr(),
                        get: Some(get_real::<Self>),
                        set: None,
                        doc: c"The real part.".as_ptr(),
                        closure: null_mut(),
                    },
                    ffi::PyGetSetDef {
                        name: c"imag".as_ptr(),
                        get: Some(get_imag::<Self>),
                        set: None,
                        doc: c"The imaginary part.".as_ptr(),
                        closure: null_mut(),
                    },
                    ffi::PyGetSetDef {
                        name: null_mut(),
                        get: None,
                        set: None,
                        doc: null_mut(),
                        closure: null_mut(),
                    },
                ];
                Box::leak(defs.into_boxed_slice()).as_mut_ptr()
            }
        }
    )*};
}

int_family!(int1, uint1, int2, uint2, int4, uint4);
complex_family!(bcomplex32, complex32);

// ---------------------------------------------------------------------------
// Slots.

unsafe extern "C" fn tp_new<T: Family_>(
    _subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        if !kwds.is_null() && ffi::PyDict_Size(kwds) != 0 {
            set_error(
                ffi::PyExc_TypeError,
                "constructor takes no keyword arguments",
            );
            return null_mut();
        }
        let n = ffi::PyTuple_Size(args);
        let arg: *mut ffi::PyObject;
        let mut pair: *mut ffi::PyObject = null_mut();
        if n == 2 && T::FAMILY == Family::Complex {
            // complex32(re, im): as Python's complex(re, im)
            pair = ffi::PyObject_Call(
                std::ptr::addr_of_mut!(ffi::PyComplex_Type) as *mut ffi::PyObject,
                args,
                null_mut(),
            );
            if pair.is_null() {
                return null_mut();
            }
            arg = pair;
        } else if n != 1 {
            set_error(
                ffi::PyExc_TypeError,
                &format!(
                    "expected number as argument to {} constructor",
                    T::DTYPE.name()
                ),
            );
            return null_mut();
        } else {
            arg = ffi::PyTuple_GetItem(args, 0);
        }
        let r = new_from::<T>(arg);
        if !pair.is_null() {
            ffi::Py_DECREF(pair);
        }
        r
    })
}

unsafe fn new_from<T: Family_>(arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    unsafe {
        if is::<T>(arg) {
            ffi::Py_INCREF(arg);
            return arg;
        }
        match convert::<T>(arg) {
            Conv::Ok(v) => return new(v),
            Conv::Err => return null_mut(),
            Conv::No => {}
        }
        if npapi::is_array(arg) {
            if Some(npapi::array_typenum(arg)) == registry::typenum(T::DTYPE) {
                ffi::Py_INCREF(arg);
                return arg;
            }
            return match registry::descr(T::DTYPE) {
                Some(d) => npapi::astype(arg, d),
                None => null_mut(),
            };
        }
        match text_argument(arg) {
            Some(Ok(s)) => match T::parse(&s) {
                Conv::Ok(v) => new(v),
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
    }
}

/// The text of a `str` or `bytes` constructor argument (`None` for other
/// objects; `Some(Err(()))` with an exception set).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn text_argument(arg: *mut ffi::PyObject) -> Option<Result<String, ()>> {
    unsafe {
        if ffi::PyUnicode_Check(arg) != 0 {
            let mut len: ffi::Py_ssize_t = 0;
            let p = ffi::PyUnicode_AsUTF8AndSize(arg, &mut len);
            if p.is_null() {
                return Some(Err(()));
            }
            Some(Ok(String::from_utf8_lossy(std::slice::from_raw_parts(
                p as *const u8,
                len as usize,
            ))
            .into_owned()))
        } else if ffi::PyBytes_Check(arg) != 0 {
            let p = ffi::PyBytes_AsString(arg);
            let len = ffi::PyBytes_Size(arg);
            Some(Ok(String::from_utf8_lossy(std::slice::from_raw_parts(
                p as *const u8,
                len as usize,
            ))
            .into_owned()))
        } else {
            None
        }
    }
}

unsafe extern "C" fn tp_repr<T: Family_>(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || {
        let s = unsafe { value::<T>(o) }.text();
        unsafe { ffi::PyUnicode_FromStringAndSize(s.as_ptr() as *const _, s.len() as _) }
    })
}

unsafe extern "C" fn tp_hash<T: Family_>(o: *mut ffi::PyObject) -> ffi::Py_hash_t {
    crate::guard::ffi(-1, || unsafe { value::<T>(o).hash(o) })
}

unsafe extern "C" fn tp_richcompare<T: Family_>(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: c_int,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        if is::<T>(a) && is::<T>(b) {
            return npapi::np_bool(value::<T>(a).compare(value::<T>(b), op));
        }
        richcompare_fallback(a, b, op)
    })
}

/// Comparison of one of our scalars with anything but a scalar of its own
/// type: `NotImplemented` for text and non-numbers under `==`/`!=`, else
/// `numpy.generic`'s comparison (NumPy's promotion and ufuncs).
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn richcompare_fallback(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: c_int,
) -> *mut ffi::PyObject {
    unsafe {
        if (op == ffi::Py_EQ || op == ffi::Py_NE)
            && (ffi::PyUnicode_Check(b) != 0
                || ffi::PyBytes_Check(b) != 0
                || (ffi::PyNumber_Check(b) == 0
                    && !npapi::is_array(b)
                    && ffi::PySequence_Check(b) == 0))
        {
            let ni = ffi::Py_NotImplemented();
            ffi::Py_INCREF(ni);
            return ni;
        }
        let g = np_type(NpyTypes::PyGenericArrType_Type);
        match (*g).tp_richcompare {
            Some(f) => f(a, b, op),
            None => {
                let ni = ffi::Py_NotImplemented();
                ffi::Py_INCREF(ni);
                ni
            }
        }
    }
}

unsafe extern "C" fn nb_float<T: Family_>(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        if T::FAMILY == Family::Complex && npapi::complex_warning() < 0 {
            return null_mut();
        }
        let v = value::<T>(o).to_f64();
        let v = if T::FAMILY == Family::Int {
            v
        } else {
            v as f32 as f64
        };
        ffi::PyFloat_FromDouble(v)
    })
}

/// C's `(long)(float)x` on x86-64: truncation, with the "integer
/// indefinite" value `i64::MIN` for NaN and out-of-range values.
pub(crate) fn c_f64_to_i64(x: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

unsafe extern "C" fn nb_int<T: Family_>(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        if T::FAMILY == Family::Complex && npapi::complex_warning() < 0 {
            return null_mut();
        }
        let v = value::<T>(o).to_f64();
        // float8_e8m0fnu's NaN converts to 0; every other value as C's
        // (long)(float)x
        let i = if T::DTYPE == mldtypes::dtype::DType::Float8E8M0FNU && v.is_nan() {
            0
        } else {
            c_f64_to_i64(v)
        };
        ffi::PyLong_FromLongLong(i)
    })
}

unsafe extern "C" fn nb_negative<T: Family_ + Arith>(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe { new(value::<T>(o).neg()) })
}

unsafe extern "C" fn nb_positive<T: Family_>(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe { new(value::<T>(o)) })
}

/// Scalar arithmetic between two values of one type.
pub(crate) trait Arith: Sized {
    fn neg(self) -> Self;
    /// `None`: the operation is not defined for the family (handed to NumPy).
    fn binop(self, other: Self, op: Op) -> Option<Result<Self, &'static str>>;
}

/// A binary number-protocol operation.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    TrueDiv,
    FloorDiv,
    Rem,
}

macro_rules! int_arith {
    ($($t:ident),*) => {$(
        impl Arith for mldtypes::$t {
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn binop(self, o: Self, op: Op) -> Option<Result<Self, &'static str>> {
                Some(match op {
                    Op::Add => Ok(self.wrapping_add(o)),
                    Op::Sub => Ok(self.wrapping_sub(o)),
                    Op::Mul => Ok(self.wrapping_mul(o)),
                    Op::FloorDiv => self.checked_div(o).map_err(|_| "division by zero"),
                    Op::Rem => self.checked_rem(o).map_err(|_| "division by zero"),
                    Op::TrueDiv => return None,
                })
            }
        }
    )*};
}

macro_rules! complex_arith {
    ($($t:ident),*) => {$(
        impl Arith for mldtypes::$t {
            fn neg(self) -> Self {
                -self
            }
            fn binop(self, o: Self, op: Op) -> Option<Result<Self, &'static str>> {
                // std::complex<float> semantics, as ml_dtypes computes
                // them: the same arithmetic as the ufunc loops.
                let op = match op {
                    Op::Add => ArithOp::Add,
                    Op::Sub => ArithOp::Subtract,
                    Op::Mul => ArithOp::Multiply,
                    Op::TrueDiv => ArithOp::Divide,
                    _ => return None,
                };
                Some(Ok(complex::arith(self, o, op)))
            }
        }
    )*};
}

int_arith!(int1, uint1, int2, uint2, int4, uint4);
complex_arith!(bcomplex32, complex32);

unsafe fn binary<T: Family_ + Arith>(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: Op,
) -> *mut ffi::PyObject {
    unsafe {
        if is::<T>(a) && is::<T>(b) {
            if let Some(r) = value::<T>(a).binop(value::<T>(b), op) {
                return match r {
                    Ok(v) => new(v),
                    Err(msg) => {
                        set_error(ffi::PyExc_ZeroDivisionError, msg);
                        null_mut()
                    }
                };
            }
        }
        array_number_fallback(a, b, op)
    }
}

/// A binary operator on anything but two scalars of one type: handed to
/// `numpy.ndarray`'s number protocol (ufuncs and NumPy's promotion), as
/// ml_dtypes does.
///
/// # Safety
/// GIL held.
pub(crate) unsafe fn array_number_fallback(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: Op,
) -> *mut ffi::PyObject {
    unsafe {
        let arr = np_type(NpyTypes::PyArray_Type);
        let nb = (*arr).tp_as_number;
        let f = match op {
            Op::Add => (*nb).nb_add,
            Op::Sub => (*nb).nb_subtract,
            Op::Mul => (*nb).nb_multiply,
            Op::TrueDiv => (*nb).nb_true_divide,
            Op::FloorDiv => (*nb).nb_floor_divide,
            Op::Rem => (*nb).nb_remainder,
        };
        match f {
            Some(f) => f(a, b),
            None => {
                let ni = ffi::Py_NotImplemented();
                ffi::Py_INCREF(ni);
                ni
            }
        }
    }
}

/// The number-protocol slots of the binary operators: each forwards to
/// [`binary`] with its operator.
macro_rules! nb_binary {
    ($($slot:ident => $op:ident),* $(,)?) => {$(
        unsafe extern "C" fn $slot<T: Family_ + Arith>(
            a: *mut ffi::PyObject,
            b: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            unsafe { binary::<T>(a, b, Op::$op) }
        }
    )*};
}
nb_binary!(
    nb_add => Add,
    nb_subtract => Sub,
    nb_multiply => Mul,
    nb_true_divide => TrueDiv,
    nb_floor_divide => FloorDiv,
    nb_remainder => Rem,
);

unsafe extern "C" fn format_method<T: Family_>(
    o: *mut ffi::PyObject,
    spec: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        format_python_value(value::<T>(o).to_python(), spec)
    })
}

/// `format(x, spec)` for the Python value `x` of a scalar (a new reference
/// consumed here; NULL passes the pending exception through).
///
/// # Safety
/// GIL held; `spec` a live object.
pub(crate) unsafe fn format_python_value(
    x: *mut ffi::PyObject,
    spec: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    unsafe {
        if ffi::PyUnicode_Check(spec) == 0 {
            if !x.is_null() {
                ffi::Py_DECREF(x);
            }
            set_error(
                ffi::PyExc_TypeError,
                &format!(
                    "__format__() argument 1 must be str, not {}",
                    npapi::type_name(spec)
                ),
            );
            return null_mut();
        }
        if x.is_null() {
            return null_mut();
        }
        let r = ffi::PyObject_Format(x, spec);
        ffi::Py_DECREF(x);
        r
    }
}

unsafe extern "C" fn complex_method<T: Family_>(
    o: *mut ffi::PyObject,
    _unused: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || {
        let (a, b) = unsafe { value::<T>(o) }.to_pair();
        unsafe { ffi::PyComplex_FromDoubles(a as f32 as f64, b as f32 as f64) }
    })
}

unsafe extern "C" fn get_real<T: Family_ + ComplexType>(
    o: *mut ffi::PyObject,
    _c: *mut c_void,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || part::<T>(o, false))
}

unsafe extern "C" fn get_imag<T: Family_ + ComplexType>(
    o: *mut ffi::PyObject,
    _c: *mut c_void,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || part::<T>(o, true))
}

/// The real or imaginary part as a scalar of the component type
/// (`bfloat16` for bcomplex32, `numpy.float16` for complex32).
fn part<T: Family_ + ComplexType>(o: *mut ffi::PyObject, imag: bool) -> *mut ffi::PyObject {
    let (a, b) = unsafe { value::<T>(o) }.to_pair();
    let v = if imag { b } else { a };
    match T::PART {
        Some(_) => unsafe { new(<mldtypes::bfloat16 as MiniFloat>::from_f64(v)) },
        None => unsafe {
            // numpy.float16(v): exact, v came from a float16
            let np = ffi::PyImport_ImportModule(c"numpy".as_ptr());
            if np.is_null() {
                return null_mut();
            }
            let f16 = ffi::PyObject_GetAttrString(np, c"float16".as_ptr());
            ffi::Py_DECREF(np);
            if f16.is_null() {
                return null_mut();
            }
            let x = ffi::PyFloat_FromDouble(v);
            let r = ffi::PyObject_CallOneArg(f16, x);
            ffi::Py_DECREF(x);
            ffi::Py_DECREF(f16);
            r
        },
    }
}

/// Creates the scalar type object of `T` (a subclass of `numpy.generic`,
/// `__module__ == "mldtypes"`) and records it in the registry.
///
/// # Safety
/// GIL held, NumPy imported.
pub(crate) unsafe fn create_type<T: Family_ + Arith>() -> *mut ffi::PyObject {
    let mut slots: Vec<ffi::PyType_Slot> = Vec::new();
    macro_rules! slot {
        ($id:expr, $f:expr) => {
            slots.push(ffi::PyType_Slot {
                slot: $id,
                pfunc: $f as *mut c_void,
            })
        };
    }
    let mut methods: Vec<ffi::PyMethodDef> = vec![ffi::PyMethodDef {
        ml_name: c"__format__".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: format_method::<T>,
        },
        ml_flags: ffi::METH_O,
        ml_doc: c"Formats the value as float/int/complex does.".as_ptr(),
    }];
    if T::FAMILY == Family::Complex {
        methods.push(ffi::PyMethodDef {
            ml_name: c"__complex__".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: complex_method::<T>,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: c"The value as a Python complex.".as_ptr(),
        });
    }
    methods.push(ffi::PyMethodDef::zeroed());
    let methods = Box::leak(methods.into_boxed_slice());
    slot!(
        ffi::Py_tp_new,
        tp_new::<T> as unsafe extern "C" fn(_, _, _) -> _
    );
    slot!(
        ffi::Py_tp_repr,
        tp_repr::<T> as unsafe extern "C" fn(_) -> _
    );
    slot!(ffi::Py_tp_str, tp_repr::<T> as unsafe extern "C" fn(_) -> _);
    slot!(
        ffi::Py_tp_hash,
        tp_hash::<T> as unsafe extern "C" fn(_) -> _
    );
    slot!(
        ffi::Py_tp_richcompare,
        tp_richcompare::<T> as unsafe extern "C" fn(_, _, _) -> _
    );
    slot!(ffi::Py_tp_doc, T::DOC.as_ptr());
    slot!(ffi::Py_tp_methods, methods.as_mut_ptr());
    let getset = T::getset();
    if !getset.is_null() {
        slot!(ffi::Py_tp_getset, getset);
    }
    slot!(
        ffi::Py_nb_add,
        nb_add::<T> as unsafe extern "C" fn(_, _) -> _
    );
    slot!(
        ffi::Py_nb_subtract,
        nb_subtract::<T> as unsafe extern "C" fn(_, _) -> _
    );
    slot!(
        ffi::Py_nb_multiply,
        nb_multiply::<T> as unsafe extern "C" fn(_, _) -> _
    );
    slot!(
        ffi::Py_nb_negative,
        nb_negative::<T> as unsafe extern "C" fn(_) -> _
    );
    slot!(ffi::Py_nb_int, nb_int::<T> as unsafe extern "C" fn(_) -> _);
    slot!(
        ffi::Py_nb_float,
        nb_float::<T> as unsafe extern "C" fn(_) -> _
    );
    match T::FAMILY {
        Family::Float | Family::Complex => {
            slot!(
                ffi::Py_nb_true_divide,
                nb_true_divide::<T> as unsafe extern "C" fn(_, _) -> _
            );
        }
        Family::Int => {
            slot!(
                ffi::Py_nb_positive,
                nb_positive::<T> as unsafe extern "C" fn(_) -> _
            );
            slot!(
                ffi::Py_nb_remainder,
                nb_remainder::<T> as unsafe extern "C" fn(_, _) -> _
            );
            slot!(
                ffi::Py_nb_floor_divide,
                nb_floor_divide::<T> as unsafe extern "C" fn(_, _) -> _
            );
        }
    }
    slots.push(ffi::PyType_Slot {
        slot: 0,
        pfunc: null_mut(),
    });
    let slots = Box::leak(slots.into_boxed_slice());
    let spec = Box::leak(Box::new(ffi::PyType_Spec {
        name: T::QUALNAME.as_ptr(),
        basicsize: std::mem::size_of::<ScalarObject<T>>() as c_int,
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
        if t.is_null() {
            return null_mut();
        }
        registry::set_scalar_type(T::DTYPE, t as *mut ffi::PyTypeObject);
        t
    }
}
