//! Ufunc loops of the 6 sub-byte integer types (int1, int2, int4, uint1,
//! uint2, uint4): the 5 ufuncs ml_dtypes 0.6.0 registers in
//! `RegisterIntNUFuncs` (`intn_numpy.h`): `add`, `subtract`, `multiply`,
//! `floor_divide`, `remainder`. Every result wraps to the type's width
//! (ml_dtypes' `intN` arithmetic masks to `N` bits).

use std::os::raw::{c_char, c_void};

use mldtypes::int::SubByteInt;
use mldtypes::{int1, int2, int4, uint1, uint2, uint4};
use numpy::npyffi::npy_intp;
use pyo3::PyResult;

use super::{count, raise_divide_by_zero, Arg, LoopFn, Operand, Registrar};

/// Registers the loops of every sub-byte integer type (one line per type).
pub(super) fn register(r: &mut Registrar<'_>) -> PyResult<()> {
    register_type::<int1>(r)?;
    register_type::<uint1>(r)?;
    register_type::<int2>(r)?;
    register_type::<uint2>(r)?;
    register_type::<int4>(r)?;
    register_type::<uint4>(r)?;
    Ok(())
}

/// A sub-byte integer type with ufunc loops.
pub(crate) trait Int: SubByteInt + mldtypes::cast::Element {}
impl<T: SubByteInt + mldtypes::cast::Element> Int for T {}

/// Registers the 5 loops of `T`.
fn register_type<T: Int>(r: &mut Registrar<'_>) -> PyResult<()> {
    let t = Arg::Ours(T::DTYPE);
    let loops: [(&str, LoopFn); 5] = [
        ("add", binary::<T, Add>),
        ("subtract", binary::<T, Subtract>),
        ("multiply", binary::<T, Multiply>),
        ("floor_divide", binary::<T, FloorDivide>),
        ("remainder", binary::<T, Remainder>),
    ];
    for (name, f) in loops {
        r.add(name, T::DTYPE, &[t, t, t], f)?;
    }
    Ok(())
}

/// An integer function of two values; `None` for a zero divisor.
trait IntOp {
    fn f(x: i32, y: i32) -> Option<i32>;
}

/// `add` (wrapping).
struct Add;
impl IntOp for Add {
    #[inline(always)]
    fn f(x: i32, y: i32) -> Option<i32> {
        Some(x + y)
    }
}

/// `subtract` (wrapping).
struct Subtract;
impl IntOp for Subtract {
    #[inline(always)]
    fn f(x: i32, y: i32) -> Option<i32> {
        Some(x - y)
    }
}

/// `multiply` (wrapping).
struct Multiply;
impl IntOp for Multiply {
    #[inline(always)]
    fn f(x: i32, y: i32) -> Option<i32> {
        Some(x * y)
    }
}

/// `floor_divide`: the truncated quotient, minus one when the signs differ
/// and the division is inexact (ml_dtypes' `FloorDivide`); wraps, so
/// `int4(-8) // int4(-1)` is `-8`. A zero divisor gives 0 and a
/// `RuntimeWarning`.
struct FloorDivide;
impl IntOp for FloorDivide {
    #[inline(always)]
    fn f(x: i32, y: i32) -> Option<i32> {
        if y == 0 {
            return None;
        }
        let q = x / y;
        Some(if (x > 0) != (y > 0) && x % y != 0 {
            q - 1
        } else {
            q
        })
    }
}

/// `remainder`: the truncated remainder, plus the divisor when their signs
/// differ (the result has the divisor's sign). A zero divisor gives 0 and
/// a `RuntimeWarning`.
struct Remainder;
impl IntOp for Remainder {
    #[inline(always)]
    fn f(x: i32, y: i32) -> Option<i32> {
        if y == 0 {
            return None;
        }
        let r = x % y;
        Some(if r != 0 && (r < 0) != (y < 0) {
            r + y
        } else {
            r
        })
    }
}

/// Loop of an [`IntOp`]. A zero divisor gives 0 and raises the
/// divide-by-zero flag (see [`raise_divide_by_zero`]): NumPy warns
/// `divide by zero encountered in floor_divide` (or `remainder`), the
/// warning ml_dtypes gives.
unsafe extern "C" fn binary<T: Int, O: IntOp>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut zero_divisor = false;
        for k in 0..count(dims) {
            let x = T::from_bits(a.read::<u8>(k)).to_i32();
            let y = T::from_bits(b.read::<u8>(k)).to_i32();
            let r = O::f(x, y).unwrap_or_else(|| {
                zero_divisor = true;
                0
            });
            o.write::<u8>(k, T::from_i64_wrapping(r as i64).to_bits());
        }
        if zero_divisor {
            raise_divide_by_zero();
        }
    })
}
