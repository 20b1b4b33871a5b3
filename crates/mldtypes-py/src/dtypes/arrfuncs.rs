//! The `PyArray_ArrFuncs` of our dtypes (element access, copying with byte
//! swapping, comparison for sorting, counting/radix `sort` and `argsort`,
//! argmax/argmin, nonzero, fill for `numpy.arange`, dot) and their
//! registration as NumPy user dtypes.

use std::ffi::c_void;
use std::os::raw::{c_char, c_int, c_uchar};
use std::ptr::null_mut;

use mldtypes::dtype::Kind;
use mldtypes::sort::{
    argsort_u16, argsort_u8, byte_keys, counting_sort_u8, int_key, radix_sort_u16, SortKey,
};
use numpy::npyffi::{
    npy_intp, NpyTypes, PyArray_ArrFuncs, PyArray_DescrProto, NPY_NEEDS_PYAPI, NPY_NSORTS,
    NPY_USE_SETITEM, PY_ARRAY_API,
};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::dtypes::registry;
use crate::dtypes::scalar::{self, Arith, Family_};
use crate::dtypes::types::{Family, MlType};
use crate::npapi::{self, set_error};

unsafe fn rd<T: MlType>(p: *const c_void) -> T {
    unsafe { std::ptr::read_unaligned(p as *const T) }
}

unsafe fn wr<T: MlType>(p: *mut c_void, v: T) {
    unsafe { std::ptr::write_unaligned(p as *mut T, v) }
}

unsafe extern "C" fn getitem<T: Family_>(
    data: *mut c_void,
    _arr: *mut c_void,
) -> *mut ffi::PyObject {
    crate::guard::ffi(std::ptr::null_mut(), || unsafe {
        rd::<T>(data).to_python()
    })
}

unsafe extern "C" fn setitem<T: Family_>(
    item: *mut ffi::PyObject,
    data: *mut c_void,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        match scalar::convert_for_setitem::<T>(item) {
            Some(Ok(v)) => {
                wr(data, v);
                0
            }
            Some(Err(())) => -1,
            None => {
                set_error(
                    ffi::PyExc_TypeError,
                    &format!("expected number, got {}", npapi::type_name(item)),
                );
                -1
            }
        }
    })
}

/// Byte-swaps an element in place: each 16-bit part (bfloat16 itself; the
/// real and imaginary parts of complex32/bcomplex32, as ml_dtypes' main
/// branch, b793a6e, swaps them: ml_dtypes 0.6.0 reverses all 4 bytes when
/// copying and swaps only the first two in place, so its byte-swapped
/// complex arrays do not round-trip). One-byte types have nothing to swap.
unsafe fn swap_in_place<T: bytemuck::Pod>(p: *mut u8) {
    let size = std::mem::size_of::<T>();
    for k in (0..size / 2 * 2).step_by(2) {
        unsafe { std::ptr::swap(p.add(k), p.add(k + 1)) };
    }
}

// `copyswapn` and `copyswap` alone do not run through `guard::ffi`: NumPy
// does not look for an error after them (it builds a scalar from the copied
// bytes, so an exception left pending would surface at an unrelated later
// call), and their bodies hold no operation that can panic (raw copies,
// byte swaps, wrapping arithmetic).
unsafe extern "C" fn copyswapn<T: bytemuck::Pod>(
    dst: *mut c_void,
    dstride: npy_intp,
    src: *mut c_void,
    sstride: npy_intp,
    n: npy_intp,
    swap: c_int,
    _arr: *mut c_void,
) {
    let size = std::mem::size_of::<T>() as npy_intp;
    let (dst, src) = (dst as *mut u8, src as *const u8);
    unsafe {
        if !src.is_null() {
            if dstride == size && sstride == size {
                std::ptr::copy(src, dst, n.wrapping_mul(size) as usize);
            } else {
                for i in 0..n {
                    std::ptr::copy(
                        src.offset(i.wrapping_mul(sstride)),
                        dst.offset(i.wrapping_mul(dstride)),
                        size as usize,
                    );
                }
            }
        }
        if swap != 0 && size >= 2 {
            for i in 0..n {
                swap_in_place::<T>(dst.offset(i.wrapping_mul(dstride)));
            }
        }
    }
}

unsafe extern "C" fn copyswap<T: bytemuck::Pod>(
    dst: *mut c_void,
    src: *mut c_void,
    swap: c_int,
    _arr: *mut c_void,
) {
    unsafe {
        if !src.is_null() {
            std::ptr::copy(src as *const u8, dst as *mut u8, std::mem::size_of::<T>());
        }
        if swap != 0 {
            swap_in_place::<T>(dst as *mut u8);
        }
    }
}

/// [`copyswapn`] for elements of `N` bytes whatever their type (the float
/// formats, whose elements are one- or two-byte codes).
pub(crate) unsafe extern "C" fn copyswapn_n<const N: usize>(
    dst: *mut c_void,
    dstride: npy_intp,
    src: *mut c_void,
    sstride: npy_intp,
    n: npy_intp,
    swap: c_int,
    arr: *mut c_void,
) {
    unsafe {
        match N {
            1 => copyswapn::<u8>(dst, dstride, src, sstride, n, swap, arr),
            _ => copyswapn::<u16>(dst, dstride, src, sstride, n, swap, arr),
        }
    }
}

/// [`copyswap`] for elements of `N` bytes (see [`copyswapn_n`]).
pub(crate) unsafe extern "C" fn copyswap_n<const N: usize>(
    dst: *mut c_void,
    src: *mut c_void,
    swap: c_int,
    arr: *mut c_void,
) {
    unsafe {
        match N {
            1 => copyswap::<u8>(dst, src, swap, arr),
            _ => copyswap::<u16>(dst, src, swap, arr),
        }
    }
}

/// Total order for sorting: by value, NaN last (NumPy's order for floats);
/// complex values by real part, then imaginary part.
pub(crate) fn order(a: (f64, f64), b: (f64, f64)) -> c_int {
    let c = |x: f64, y: f64| -> c_int {
        if x < y {
            -1
        } else if y < x {
            1
        } else if !x.is_nan() && y.is_nan() {
            -1
        } else if x.is_nan() && !y.is_nan() {
            1
        } else {
            0
        }
    };
    match c(a.0, b.0) {
        0 => c(a.1, b.1),
        r => r,
    }
}

unsafe extern "C" fn compare<T: MlType>(
    a: *const c_void,
    b: *const c_void,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || unsafe {
        order(rd::<T>(a).to_pair(), rd::<T>(b).to_pair())
    })
}

/// How `T` is sorted: by a key table over its one-byte codes, by a radix
/// sort of its 16-bit codes, or (complex types) by NumPy's generic sorts
/// over [`compare`], which give the same order (real part, then imaginary,
/// NaN last).
// The table is built on the stack per call and read in place; boxing it
// would only add an allocation.
#[allow(clippy::large_enum_variant)]
enum SortPlan {
    Bytes([u8; 256]),
    Halves(SortKey),
    Compare,
}

fn sort_plan<T: MlType>() -> SortPlan {
    let d = T::DTYPE;
    match (std::mem::size_of::<T>(), T::FAMILY, d.format()) {
        (1, Family::Float, Some(f)) => SortPlan::Bytes(byte_keys(|c| SortKey::new(&f).key(c))),
        (1, Family::Int, _) => {
            let signed = d.kind() == Kind::Signed;
            SortPlan::Bytes(byte_keys(|b| int_key(d.bits(), signed, b as u8)))
        }
        (2, Family::Float, Some(f)) => SortPlan::Halves(SortKey::new(&f)),
        _ => SortPlan::Compare,
    }
}

/// The `sort` slot (every kind): a stable counting sort (one-byte types) or
/// LSD radix sort (bfloat16) in NumPy's float order: NaN last, `-0 == +0`
/// with equal values in input order. Returns -1 (NumPy raises
/// `MemoryError`) when scratch memory cannot be allocated. Called without
/// the GIL on a contiguous, aligned buffer.
unsafe extern "C" fn sort<T: MlType>(
    start: *mut c_void,
    num: npy_intp,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        let n = num.max(0) as usize;
        let r = std::panic::catch_unwind(|| match sort_plan::<T>() {
            SortPlan::Bytes(keys) => {
                let v = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, n) };
                counting_sort_u8(v, &keys).is_ok()
            }
            SortPlan::Halves(f) => {
                let v = unsafe { std::slice::from_raw_parts_mut(start as *mut u16, n) };
                radix_sort_u16(v, |c| f.key(c as u32) as u16).is_ok()
            }
            SortPlan::Compare => false,
        });
        if matches!(r, Ok(true)) {
            0
        } else {
            -1
        }
    })
}

/// The `argsort` slot (every kind): sorts the indices in `tosort` (the
/// identity, or the previous key's order in `numpy.lexsort`) stably by the
/// values they point at, in the order of [`sort`].
unsafe extern "C" fn argsort<T: MlType>(
    v: *mut c_void,
    tosort: *mut npy_intp,
    num: npy_intp,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        let n = num.max(0) as usize;
        let r = std::panic::catch_unwind(|| {
            let idx = unsafe { std::slice::from_raw_parts_mut(tosort, n) };
            if idx.iter().any(|&i| i < 0 || i as usize >= n) {
                return false;
            }
            match sort_plan::<T>() {
                SortPlan::Bytes(keys) => {
                    let d = unsafe { std::slice::from_raw_parts(v as *const u8, n) };
                    argsort_u8(d, idx, &keys).is_ok()
                }
                SortPlan::Halves(f) => {
                    let d = unsafe { std::slice::from_raw_parts(v as *const u16, n) };
                    argsort_u16(d, idx, |c| f.key(c as u32) as u16).is_ok()
                }
                SortPlan::Compare => false,
            }
        });
        if matches!(r, Ok(true)) {
            0
        } else {
            -1
        }
    })
}

/// ml_dtypes' argmax / argmin: the index of the first element `better` than
/// every earlier one (compared as (real, imaginary) pairs), or of the first
/// NaN.
///
/// # Safety
/// `data` holds `n` elements of `T`; `out` is writable.
unsafe fn arg_best<T: MlType>(
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    better: impl Fn((f64, f64), (f64, f64)) -> bool,
) {
    let p = data as *const T;
    let mut best: Option<(f64, f64)> = None;
    unsafe {
        *out = 0;
        for i in 0..n.max(0) {
            let v = rd::<T>(p.offset(i) as *const c_void);
            if v.is_nan() {
                *out = i;
                break;
            }
            let x = v.to_pair();
            if best.is_none_or(|b| better(x, b)) {
                best = Some(x);
                *out = i;
            }
        }
    }
}

/// ml_dtypes' argmax: the first maximum, or the first NaN.
unsafe extern "C" fn argmax<T: MlType>(
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        if let Some(i) =
            unsafe { crate::reduce::arg_extreme(T::DTYPE, data, n.max(0) as usize, true) }
        {
            unsafe { *out = i as npy_intp };
            return 0;
        }
        unsafe { arg_best::<T>(data, n, out, |x, b| x.0 > b.0 || (x.0 == b.0 && x.1 > b.1)) };
        0
    })
}

/// ml_dtypes' argmin: the first minimum, or the first NaN.
unsafe extern "C" fn argmin<T: MlType>(
    data: *mut c_void,
    n: npy_intp,
    out: *mut npy_intp,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        if let Some(i) =
            unsafe { crate::reduce::arg_extreme(T::DTYPE, data, n.max(0) as usize, false) }
        {
            unsafe { *out = i as npy_intp };
            return 0;
        }
        unsafe { arg_best::<T>(data, n, out, |x, b| x.0 < b.0 || (x.0 == b.0 && x.1 < b.1)) };
        0
    })
}

unsafe extern "C" fn nonzero<T: MlType>(data: *mut c_void, _arr: *mut c_void) -> c_uchar {
    crate::guard::ffi(0, || unsafe { rd::<T>(data).is_nonzero() as c_uchar })
}

/// `numpy.arange`: element i is `start + i·delta` computed in float32
/// (integers: in int), rounded into the type, as ml_dtypes does.
unsafe extern "C" fn fill<T: MlType>(
    buffer: *mut c_void,
    length: npy_intp,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        let p = buffer as *mut T;
        unsafe {
            if length < 2 {
                return 0;
            }
            let a = rd::<T>(p as *const c_void).to_pair();
            let b = rd::<T>(p.add(1) as *const c_void).to_pair();
            for i in 2..length {
                let v = if T::FAMILY == Family::Int {
                    let (s, d) = (a.0 as i64, b.0 as i64 - a.0 as i64);
                    T::from_f64(((s + i as i64 * d) as i32) as f64)
                } else {
                    let (s0, s1) = (a.0 as f32, a.1 as f32);
                    let (d0, d1) = (b.0 as f32 - s0, b.1 as f32 - s1);
                    T::from_pair((s0 + i as f32 * d0) as f64, (s1 + i as f32 * d1) as f64)
                };
                wr(p.offset(i) as *mut c_void, v);
            }
        }
        0
    })
}

unsafe extern "C" fn fillwithscalar<T: MlType>(
    buffer: *mut c_void,
    length: npy_intp,
    value: *mut c_void,
    _arr: *mut c_void,
) -> c_int {
    crate::guard::ffi(-1, || {
        unsafe {
            let v = rd::<T>(value);
            let p = buffer as *mut T;
            for i in 0..length.max(0) {
                wr(p.offset(i) as *mut c_void, v);
            }
        }
        0
    })
}

/// `numpy.dot` of two strided vectors: accumulated in float32 (complex:
/// complex float32; integers: int), rounded once, as ml_dtypes does.
unsafe extern "C" fn dotfunc<T: MlType>(
    ip1: *mut c_void,
    is1: npy_intp,
    ip2: *mut c_void,
    is2: npy_intp,
    op: *mut c_void,
    n: npy_intp,
    _arr: *mut c_void,
) {
    crate::guard::ffi((), || {
        let (a, b) = (ip1 as *const u8, ip2 as *const u8);
        unsafe {
            match T::FAMILY {
                Family::Int => {
                    let mut acc: i32 = 0;
                    for i in 0..n.max(0) {
                        let x = rd::<T>(a.offset(i * is1) as *const c_void).to_f64() as i32;
                        let y = rd::<T>(b.offset(i * is2) as *const c_void).to_f64() as i32;
                        acc = acc.wrapping_add(x.wrapping_mul(y));
                    }
                    wr(op, T::from_f64(acc as f64));
                }
                Family::Float => {
                    let mut acc = 0f32;
                    for i in 0..n.max(0) {
                        let x = rd::<T>(a.offset(i * is1) as *const c_void).to_f64() as f32;
                        let y = rd::<T>(b.offset(i * is2) as *const c_void).to_f64() as f32;
                        acc += x * y;
                    }
                    wr(op, T::from_f64(acc as f64));
                }
                Family::Complex => {
                    let (mut re, mut im) = (0f32, 0f32);
                    for i in 0..n.max(0) {
                        let (xr, xi) = rd::<T>(a.offset(i * is1) as *const c_void).to_pair();
                        let (yr, yi) = rd::<T>(b.offset(i * is2) as *const c_void).to_pair();
                        let (xr, xi, yr, yi) = (xr as f32, xi as f32, yr as f32, yi as f32);
                        re += xr * yr - xi * yi;
                        im += xr * yi + xi * yr;
                    }
                    wr(op, T::from_pair(re as f64, im as f64));
                }
            }
        }
    })
}

/// Creates the scalar type of `T`, registers its dtype with NumPy and
/// makes `numpy.dtype("<name>")` find it.
///
/// # Safety
/// GIL held, NumPy imported.
pub(crate) unsafe fn register_dtype<T: Family_ + Arith>(py: Python<'_>) -> PyResult<()> {
    unsafe {
        let t = scalar::create_type::<T>();
        if t.is_null() {
            return Err(PyErr::fetch(py));
        }
        let f: &'static mut PyArray_ArrFuncs = Box::leak(Box::new(std::mem::zeroed()));
        PY_ARRAY_API.PyArray_InitArrFuncs(py, f);
        f.getitem = Some(getitem::<T>);
        f.setitem = Some(setitem::<T>);
        f.copyswapn = Some(copyswapn::<T>);
        f.copyswap = Some(copyswap::<T>);
        f.compare = Some(compare::<T>);
        f.argmax = Some(argmax::<T>);
        f.argmin = Some(argmin::<T>);
        f.nonzero = Some(nonzero::<T>);
        f.fill = Some(fill::<T>);
        f.fillwithscalar = Some(fillwithscalar::<T>);
        f.dotfunc = Some(dotfunc::<T>);
        if !matches!(sort_plan::<T>(), SortPlan::Compare) {
            f.sort = [Some(sort::<T>); NPY_NSORTS];
            f.argsort = [Some(argsort::<T>); NPY_NSORTS];
        }

        let descr_type = npapi::np_type(NpyTypes::PyArrayDescr_Type);
        let proto: &'static mut PyArray_DescrProto = Box::leak(Box::new(std::mem::zeroed()));
        // A static object: one reference that is never released.
        ffi::Py_INCREF(&mut proto.ob_base);
        proto.ob_base.ob_type = descr_type;
        proto.typeobj = t as *mut ffi::PyTypeObject;
        let (kind, char) = registry::numpy_codes(T::DTYPE);
        proto.kind = kind as c_char;
        proto.type_ = char as c_char;
        proto.byteorder = b'=' as c_char;
        // The complex types' casts to real types warn `ComplexWarning`
        // from inside the cast loop; NumPy looks for a Python error after a
        // legacy cast (a warning turned into an error, KeyboardInterrupt)
        // only when a dtype carries NPY_NEEDS_PYAPI. ml_dtypes leaves it
        // off (flags 64) and gives SystemError there; ours are 80.
        let needs_api = if matches!(T::FAMILY, Family::Complex) {
            NPY_NEEDS_PYAPI
        } else {
            0
        };
        proto.flags = (NPY_USE_SETITEM | needs_api) as c_char;
        proto.type_num = 0;
        proto.elsize = std::mem::size_of::<T>() as c_int;
        proto.alignment = std::mem::align_of::<T>() as c_int;
        proto.subarray = null_mut();
        proto.fields = null_mut();
        proto.names = null_mut();
        proto.f = f;
        proto.metadata = null_mut();
        proto.c_metadata = null_mut();
        proto.hash = -1;

        let num = PY_ARRAY_API.PyArray_RegisterDataType(py, proto);
        if num < 0 {
            return Err(PyErr::fetch(py));
        }
        let descr = PY_ARRAY_API.PyArray_DescrFromType(py, num);
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        registry::set_registered(T::DTYPE, num, descr);

        let np = py.import("numpy")?;
        let sctypes = np.getattr("sctypeDict")?;
        let name = T::DTYPE.name();
        let ty = Bound::from_borrowed_ptr(py, t);
        // When ml_dtypes was imported first, its type keeps the name.
        if !sctypes.contains(name)? {
            sctypes.set_item(name, &ty)?;
        }
        ty.setattr(
            "dtype",
            Bound::from_borrowed_ptr(py, descr as *mut ffi::PyObject),
        )?;
    }
    Ok(())
}
