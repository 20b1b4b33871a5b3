//! Array casts between our dtypes and NumPy's builtin ones, registered with
//! `PyArray_RegisterCastFunc` / `PyArray_RegisterCanCast` for exactly the
//! pairs ml_dtypes 0.6.0 registers.
//!
//! Every pair the Rust library's slice kernels support (float16, float32,
//! float64, bool, the standard integers among themselves, our float formats
//! and sub-byte integers) runs through `mldtypes::cast::cast_bytes_on` on
//! the calling thread. The other pairs go element by element through the
//! values' `f64` (or integer) value with ml_dtypes' semantics:
//!
//! - float → standard integer: the value as float32, truncated as C's
//!   conversion does on x86-64 (NaN and out-of-range values give the
//!   "integer indefinite" pattern, and NumPy reports "invalid value
//!   encountered in cast" as for its own casts);
//! - complex → real: the real part; `ComplexWarning` only from our complex
//!   types, as ml_dtypes 0.6.0 (NumPy's complex types cast into ours
//!   without a warning there);
//! - anything → bool: non-zero (NaN is true); complex32 / bcomplex32: either
//!   part non-zero, without a `ComplexWarning` (ml_dtypes' main branch,
//!   b793a6e; ml_dtypes 0.6.0 stores the real part converted to `uint8` and
//!   warns). float8 → integer conversions (NaN → 0, ±inf → the integer's
//!   limits) and bfloat16 → uint32 (ml_dtypes' vectorized loop converts
//!   whole blocks of 8 through the signed 32-bit conversion, the remainder
//!   through the 64-bit one) are reproduced bit for bit.
//!
//! Deliberate differences: float64 (and longdouble) → our float formats
//! round once (ml_dtypes rounds to float32 first), and so do int32, int64,
//! uint32 and uint64 → bfloat16, bcomplex32 and float8_e8m0fnu (ml_dtypes
//! goes through float32; the other formats agree); bcomplex32 ↔ complex32
//! keep the imaginary part (ml_dtypes 0.6.0 drops it); float casts never
//! raise RuntimeWarning (ml_dtypes reports overflow when a float64 beyond
//! float32's range goes through float32).

use std::ffi::c_void;
use std::os::raw::{c_int, c_long};

use mldtypes::cast::{self, Overflow};
use mldtypes::dtype::DType;
use numpy::npyffi::{npy_intp, NPY_SCALARKIND, NPY_TYPES, PY_ARRAY_API};
use pyo3::prelude::*;

use crate::dtypes::registry;
use crate::dtypes::types::{Family, MlType};
use crate::npapi;
use crate::ufuncs::FpFlags;

/// A value in flight between two dtypes.
#[derive(Clone, Copy)]
pub(crate) enum Val {
    /// A real or complex floating-point value (exact in `f64` for every
    /// source except float64/longdouble, which are what they are).
    Float(f64, f64),
    /// An integer (standard or sub-byte) or bool.
    Int(i128),
}

/// State of one cast call: what the conversion of the current element
/// depends on, and the floating-point flags it gathered.
#[derive(Default)]
pub(crate) struct Flags {
    /// An invalid conversion happened (NumPy warns "invalid value
    /// encountered in cast").
    invalid: bool,
    /// The source is a float8/float6/float4 type: its conversion to an
    /// integer maps NaN to 0 and ±inf to the integer's limits.
    float8_source: bool,
    /// The element lies in the part of the call ml_dtypes' compiled loop
    /// runs vectorized (whole blocks of 8): float32 → uint32 then uses the
    /// 32-bit conversion of the vector code.
    vector_body: bool,
    /// The source's values are float32 values (complex64, and our types,
    /// which ml_dtypes converts through float32): a real float destination
    /// rounds them by its float32 rule.
    pub(crate) f32_source: bool,
}

/// One side of a cast: how to read and write an element.
///
/// Every function takes the side's context for the call ([`End::ctx`],
/// read from the array NumPy hands the cast): `()` for the types known at
/// compile time, the format's descriptor for the float formats
/// ([`crate::dtypes::float::Float`]), whose properties are data.
pub(crate) trait End: 'static {
    /// What a call needs to know about this side beyond its type.
    type Ctx: Copy;
    /// The context of this side for the (dummy) array `arr` NumPy passes to
    /// legacy casts (it carries the dtype); `None` if it is not this side's.
    ///
    /// # Safety
    /// `arr` is NULL or an ndarray.
    unsafe fn ctx(arr: *mut c_void) -> Option<Self::Ctx>;
    /// The dtype the library's kernels know it as, if any.
    const KERNEL: Option<DType>;
    /// Bytes per element.
    const SIZE: usize;
    /// Our complex types and NumPy's complex types.
    const COMPLEX: bool;
    /// Our types (ml_dtypes converts their values through float32 and warns
    /// `ComplexWarning` when its complex types lose an imaginary part).
    const OURS: bool;
    /// float8/float6/float4 types (their integer conversion saturates).
    const FLOAT8: bool = false;
    /// Every value is a float32 value that ml_dtypes converts as a float32
    /// (complex64 and our types).
    const F32_VALUES: bool = false;
    /// [`End::KERNEL`] for this call.
    fn kernel(_c: Self::Ctx) -> Option<DType> {
        Self::KERNEL
    }
    /// [`End::SIZE`] for this call.
    fn size(_c: Self::Ctx) -> usize {
        Self::SIZE
    }
    /// [`End::FLOAT8`] for this call.
    fn float8(_c: Self::Ctx) -> bool {
        Self::FLOAT8
    }
    /// [`End::F32_VALUES`] for this call.
    fn f32_values(_c: Self::Ctx) -> bool {
        Self::F32_VALUES
    }
    /// The element as float32 bits (real, imaginary), for sources whose
    /// NaN payloads must reach a float32 destination unchanged.
    ///
    /// # Safety
    /// As [`End::read`].
    unsafe fn read_f32_bits(_c: Self::Ctx, _p: *const u8) -> Option<(u32, u32)> {
        None
    }
    /// Stores float32 bits; false if this end is not float32-based.
    ///
    /// # Safety
    /// As [`End::write`].
    unsafe fn write_f32_bits(_c: Self::Ctx, _p: *mut u8, _v: (u32, u32)) -> bool {
        false
    }
    /// # Safety
    /// `p` points at `size(c)` readable bytes.
    unsafe fn read(c: Self::Ctx, p: *const u8) -> Val;
    /// # Safety
    /// `p` points at `size(c)` writable bytes.
    unsafe fn write(c: Self::Ctx, p: *mut u8, v: Val, flags: &mut Flags);
}

/// The context-free part of an [`End`] whose type says everything.
macro_rules! static_end {
    () => {
        type Ctx = ();
        unsafe fn ctx(_arr: *mut c_void) -> Option<()> {
            Some(())
        }
    };
}

/// Wraps `i` to `bits` bits, signed or not.
fn wrap(i: i128, bits: u32, signed: bool) -> i128 {
    let m = (1i128 << bits) - 1;
    let u = i & m;
    if signed && u >> (bits - 1) != 0 {
        u - (1i128 << bits)
    } else {
        u
    }
}

/// 2^63 as `f64`.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// C's float → integer conversion of a float32 value on x86-64
/// (`cvttss2si` with a 32- or 64-bit destination), then truncated to the
/// destination's width, as ml_dtypes' `static_cast` compiles.
fn c_float_to_int(x: f32, bits: u32, signed: bool, flags: &mut Flags) -> i128 {
    let x = x as f64;
    if flags.float8_source && !x.is_finite() {
        // float8's own conversion: NaN → 0, ±inf → the limits
        return match (x.is_nan(), x > 0.0, signed) {
            (true, _, _) => 0,
            (false, true, true) => (1i128 << (bits - 1)) - 1,
            (false, true, false) => (1i128 << bits) - 1,
            (false, false, true) => -(1i128 << (bits - 1)),
            (false, false, false) => 0,
        };
    }
    if bits == 32 && !signed && flags.vector_body && !flags.float8_source {
        let v = if x >= 2147483648.0 {
            let c = if x - 2147483648.0 >= 2147483648.0 {
                flags.invalid = true;
                i32::MIN as i128
            } else {
                (x - 2147483648.0) as i32 as i128
            };
            c ^ (i32::MIN as i128)
        } else if x.is_nan() || x <= -2147483649.0 {
            flags.invalid = true;
            i32::MIN as i128
        } else {
            x as i32 as i128
        };
        return wrap(v, 32, false);
    }
    let cvt32 = |x: f64, flags: &mut Flags| -> i128 {
        if x.is_nan() || x >= 2147483648.0 || x <= -2147483649.0 {
            flags.invalid = true;
            i32::MIN as i128
        } else {
            x as i32 as i128
        }
    };
    let cvt64 = |x: f64, flags: &mut Flags| -> i128 {
        if !(-TWO_63..TWO_63).contains(&x) {
            flags.invalid = true;
            i64::MIN as i128
        } else {
            x as i64 as i128
        }
    };
    let v = match (bits, signed) {
        (8 | 16, _) | (32, true) => cvt32(x, flags),
        (32, false) | (64, true) => cvt64(x, flags),
        _ => {
            // unsigned 64-bit: values from 2^63 on are shifted into range
            if x >= TWO_63 {
                cvt64(x - TWO_63, flags) ^ (i64::MIN as i128)
            } else {
                cvt64(x, flags)
            }
        }
    };
    wrap(v, bits, signed)
}

macro_rules! int_end {
    ($name:ident, $t:ty, $dt:ident, $bits:literal, $signed:literal) => {
        pub(crate) struct $name;
        impl End for $name {
            static_end!();
            const KERNEL: Option<DType> = Some(DType::$dt);
            const SIZE: usize = std::mem::size_of::<$t>();
            const COMPLEX: bool = false;
            const OURS: bool = false;
            unsafe fn read(_c: (), p: *const u8) -> Val {
                Val::Int(unsafe { std::ptr::read_unaligned(p as *const $t) } as i128)
            }
            unsafe fn write(_c: (), p: *mut u8, v: Val, flags: &mut Flags) {
                let i = match v {
                    Val::Int(i) => wrap(i, $bits, $signed),
                    Val::Float(re, _) => c_float_to_int(re as f32, $bits, $signed, flags),
                };
                unsafe { std::ptr::write_unaligned(p as *mut $t, i as $t) }
            }
        }
    };
}

int_end!(I8, i8, Int8, 8, true);
int_end!(I16, i16, Int16, 16, true);
int_end!(I32, i32, Int32, 32, true);
int_end!(I64, i64, Int64, 64, true);
int_end!(U8, u8, UInt8, 8, false);
int_end!(U16, u16, UInt16, 16, false);
int_end!(U32, u32, UInt32, 32, false);
int_end!(U64, u64, UInt64, 64, false);

/// NumPy `bool`.
pub(crate) struct Bool;
impl End for Bool {
    static_end!();
    const KERNEL: Option<DType> = Some(DType::Bool);
    const SIZE: usize = 1;
    const COMPLEX: bool = false;
    const OURS: bool = false;
    unsafe fn read(_c: (), p: *const u8) -> Val {
        Val::Int((unsafe { *p } != 0) as i128)
    }
    unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
        let b = match v {
            Val::Int(i) => (i != 0) as u8,
            Val::Float(a, b) => (a != 0.0 || b != 0.0) as u8,
        };
        unsafe { *p = b }
    }
}

macro_rules! float_end {
    ($name:ident, $t:ty, $dt:ident, $to:expr, $from:expr) => {
        pub(crate) struct $name;
        impl End for $name {
            static_end!();
            const KERNEL: Option<DType> = Some(DType::$dt);
            const SIZE: usize = std::mem::size_of::<$t>();
            const COMPLEX: bool = false;
            const OURS: bool = false;
            unsafe fn read(_c: (), p: *const u8) -> Val {
                let x: $t = unsafe { std::ptr::read_unaligned(p as *const $t) };
                Val::Float(($to)(x), 0.0)
            }
            unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
                let x = match v {
                    Val::Int(i) => i as f64,
                    Val::Float(a, _) => a,
                };
                unsafe { std::ptr::write_unaligned(p as *mut $t, ($from)(x)) }
            }
        }
    };
}

float_end!(
    F16,
    half::f16,
    Float16,
    |x: half::f16| x.to_f64(),
    half::f16::from_f64
);
float_end!(F32, f32, Float32, |x: f32| x as f64, |x: f64| x as f32);
float_end!(F64, f64, Float64, |x: f64| x, |x: f64| x);

/// NumPy `complex64` / `complex128`.
macro_rules! complex_end {
    ($name:ident, $t:ty, $f32:literal) => {
        pub(crate) struct $name;
        impl End for $name {
            static_end!();
            const KERNEL: Option<DType> = None;
            const SIZE: usize = 2 * std::mem::size_of::<$t>();
            const COMPLEX: bool = true;
            const OURS: bool = false;
            const F32_VALUES: bool = $f32;
            unsafe fn read(_c: (), p: *const u8) -> Val {
                let q = p as *const $t;
                unsafe {
                    Val::Float(
                        std::ptr::read_unaligned(q) as f64,
                        std::ptr::read_unaligned(q.add(1)) as f64,
                    )
                }
            }
            unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
                let (a, b) = match v {
                    Val::Int(i) => (i as f64, 0.0),
                    Val::Float(a, b) => (a, b),
                };
                let q = p as *mut $t;
                unsafe {
                    std::ptr::write_unaligned(q, a as $t);
                    std::ptr::write_unaligned(q.add(1), b as $t);
                }
            }
        }
    };
}
complex_end!(C64, f32, true);

/// `complex64` keeps float32 NaN payloads from our types.
pub(crate) struct C64Bits;
impl End for C64Bits {
    static_end!();
    const KERNEL: Option<DType> = None;
    const SIZE: usize = 8;
    const COMPLEX: bool = true;
    const OURS: bool = false;
    const F32_VALUES: bool = true;
    unsafe fn read(_c: (), p: *const u8) -> Val {
        unsafe { C64::read((), p) }
    }
    unsafe fn write(_c: (), p: *mut u8, v: Val, flags: &mut Flags) {
        unsafe { C64::write((), p, v, flags) }
    }
    unsafe fn write_f32_bits(_c: (), p: *mut u8, v: (u32, u32)) -> bool {
        let q = p as *mut u32;
        unsafe {
            std::ptr::write_unaligned(q, v.0);
            std::ptr::write_unaligned(q.add(1), v.1);
        }
        true
    }
}
complex_end!(C128, f64, false);

/// NumPy `longdouble` / `clongdouble`: x87 80-bit extended in 16 bytes
/// (x86-64), IEEE binary128 (other 64-bit Linux targets) or binary64
/// (Windows, macOS on Arm), chosen by `SIZE`.
pub(crate) struct LongDouble;
pub(crate) struct CLongDouble;

#[cfg(target_arch = "x86_64")]
const LD_X87: bool = true;
#[cfg(not(target_arch = "x86_64"))]
const LD_X87: bool = false;

/// Byte size of `long double` on this platform (checked against NumPy's
/// `longdouble` itemsize before registering its casts).
pub(crate) const LD_SIZE: usize = if cfg!(any(
    windows,
    all(target_os = "macos", target_arch = "aarch64")
)) {
    8
} else {
    16
};

/// `m · 2^e` (m < 2^128) rounded to nearest even `f64`.
fn scaled_to_f64(neg: bool, m: u128, e: i32) -> f64 {
    if m == 0 {
        return if neg { -0.0 } else { 0.0 };
    }
    let top = 127 - m.leading_zeros() as i32; // value in [2^(top+e), 2^(top+e+1))
    let exp = top + e;
    // bits to keep: 53, fewer when subnormal
    let keep = if exp < -1022 { 53 - (-1022 - exp) } else { 53 };
    let r = if keep <= 0 {
        // below half the smallest subnormal, or rounding to it
        let half = exp == -1075 && keep == 0;
        if half && m.count_ones() > 1 {
            f64::from_bits(1)
        } else {
            0.0
        }
    } else {
        let drop = top + 1 - keep;
        let (q, e2) = if drop > 0 {
            let q = m >> drop;
            let rem = m & ((1u128 << drop) - 1);
            let halfway = 1u128 << (drop - 1);
            let q = if rem > halfway || (rem == halfway && q & 1 == 1) {
                q + 1
            } else {
                q
            };
            (q, e + drop)
        } else {
            (m << (-drop), e + drop)
        };
        // q < 2^54, exact in f64; scale by 2^e2 in two steps to avoid
        // intermediate overflow/underflow
        let f = q as f64;
        let h = e2 / 2;
        f * 2f64.powi(h) * 2f64.powi(e2 - h)
    };
    if neg {
        -r
    } else {
        r
    }
}

unsafe fn ld_read(p: *const u8) -> f64 {
    let b: [u8; 16] = unsafe { std::ptr::read_unaligned(p as *const [u8; 16]) };
    if LD_SIZE == 8 {
        return f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    }
    if LD_X87 {
        let m = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
        let se = u16::from_le_bytes([b[8], b[9]]);
        let neg = se & 0x8000 != 0;
        let ex = (se & 0x7fff) as i32;
        if ex == 0x7fff {
            let v = if m << 1 == 0 { f64::INFINITY } else { f64::NAN };
            return if neg { -v } else { v };
        }
        let e = if ex == 0 {
            1 - 16383 - 63
        } else {
            ex - 16383 - 63
        };
        scaled_to_f64(neg, m as u128, e)
    } else {
        let v = u128::from_le_bytes(b);
        let neg = v >> 127 != 0;
        let ex = ((v >> 112) & 0x7fff) as i32;
        let frac = v & ((1u128 << 112) - 1);
        if ex == 0x7fff {
            let r = if frac == 0 { f64::INFINITY } else { f64::NAN };
            return if neg { -r } else { r };
        }
        let (m, e) = if ex == 0 {
            (frac, 1 - 16383 - 112)
        } else {
            (frac | (1u128 << 112), ex - 16383 - 112)
        };
        scaled_to_f64(neg, m, e)
    }
}

unsafe fn ld_write(p: *mut u8, x: f64) {
    let mut b = [0u8; 16];
    if LD_SIZE == 8 {
        b[..8].copy_from_slice(&x.to_le_bytes());
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, 8) };
        return;
    }
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let ex = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // (biased exponent, significand with the leading bit at position 52)
    let (e, m): (i32, u64) = if ex == 0x7ff {
        (i32::MAX, frac)
    } else if ex == 0 {
        if frac == 0 {
            (i32::MIN, 0)
        } else {
            let shift = frac.leading_zeros() as i32 - 11;
            (1 - 1023 - shift, frac << shift)
        }
    } else {
        (ex - 1023, frac | (1u64 << 52))
    };
    if LD_X87 {
        let (se, mant): (u16, u64) = if e == i32::MAX {
            (
                0x7fff,
                if frac == 0 {
                    1u64 << 63
                } else {
                    (3u64 << 62) | (frac << 11)
                },
            )
        } else if e == i32::MIN {
            (0, 0)
        } else {
            ((e + 16383) as u16, m << 11)
        };
        b[..8].copy_from_slice(&mant.to_le_bytes());
        let se = se | if neg { 0x8000 } else { 0 };
        b[8..10].copy_from_slice(&se.to_le_bytes());
    } else {
        let v: u128 = if e == i32::MAX {
            (0x7fffu128 << 112)
                | if frac == 0 {
                    0
                } else {
                    (1u128 << 111) | ((frac as u128) << 60)
                }
        } else if e == i32::MIN {
            0
        } else {
            (((e + 16383) as u128) << 112) | (((m & ((1u64 << 52) - 1)) as u128) << 60)
        };
        let v = v | if neg { 1u128 << 127 } else { 0 };
        b = v.to_le_bytes();
    }
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, 16) };
}

impl End for LongDouble {
    static_end!();
    const KERNEL: Option<DType> = None;
    const SIZE: usize = LD_SIZE;
    const COMPLEX: bool = false;
    const OURS: bool = false;
    unsafe fn read(_c: (), p: *const u8) -> Val {
        Val::Float(unsafe { ld_read(p) }, 0.0)
    }
    unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
        let x = match v {
            Val::Int(i) => i as f64,
            Val::Float(a, _) => a,
        };
        unsafe { ld_write(p, x) }
    }
}

impl End for CLongDouble {
    static_end!();
    const KERNEL: Option<DType> = None;
    const SIZE: usize = 2 * LD_SIZE;
    const COMPLEX: bool = true;
    const OURS: bool = false;
    unsafe fn read(_c: (), p: *const u8) -> Val {
        unsafe { Val::Float(ld_read(p), ld_read(p.add(LD_SIZE))) }
    }
    unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
        let (a, b) = match v {
            Val::Int(i) => (i as f64, 0.0),
            Val::Float(a, b) => (a, b),
        };
        unsafe {
            ld_write(p, a);
            ld_write(p.add(LD_SIZE), b);
        }
    }
}

/// One of our types as a cast end.
pub(crate) struct Ours<T>(std::marker::PhantomData<T>);

impl<T: MlType> End for Ours<T> {
    static_end!();
    const KERNEL: Option<DType> = match T::FAMILY {
        Family::Complex => None,
        _ => Some(T::DTYPE),
    };
    const SIZE: usize = std::mem::size_of::<T>();
    const COMPLEX: bool = matches!(T::FAMILY, Family::Complex);
    const OURS: bool = true;
    const F32_VALUES: bool = true;
    unsafe fn read_f32_bits(_c: (), p: *const u8) -> Option<(u32, u32)> {
        let v: T = unsafe { std::ptr::read_unaligned(p as *const T) };
        v.f32_bits()
    }
    unsafe fn read(_c: (), p: *const u8) -> Val {
        let v: T = unsafe { std::ptr::read_unaligned(p as *const T) };
        match T::FAMILY {
            Family::Int => Val::Int(v.to_f64() as i128),
            _ => {
                let (a, b) = v.to_pair();
                Val::Float(a, b)
            }
        }
    }
    unsafe fn write(_c: (), p: *mut u8, v: Val, _flags: &mut Flags) {
        let x = match (T::FAMILY, v) {
            (Family::Int, Val::Int(i)) => T::from_f64(wrap(i, 32, true) as f64),
            (Family::Int, Val::Float(a, _)) if _flags.float8_source && a.is_infinite() => {
                // float8's saturating conversion to the 8-bit integer the
                // sub-byte type is stored in, then wrapping
                let signed = T::DTYPE.kind() == mldtypes::dtype::Kind::Signed;
                let v: i64 = match (a > 0.0, signed) {
                    (true, true) => 127,
                    (false, true) => -128,
                    (true, false) => 255,
                    (false, false) => 0,
                };
                T::from_f64(v as f64)
            }
            (_, Val::Int(i)) => T::from_f64(int_to_f64_odd(i)),
            (_, Val::Float(a, b)) => T::from_pair(a, b),
        };
        unsafe { std::ptr::write_unaligned(p as *mut T, x) }
    }
}

/// `i` as `f64`, rounded to odd when it has more than 53 significant bits
/// (truncated, with the lowest kept bit set if any dropped bit was set): a
/// later rounding to a format of at most 51 significant bits then gives the
/// correctly rounded result, as if rounded once from `i` (a plain `i as f64`
/// rounds to nearest, and a second rounding of that can land on the wrong
/// side of a tie, e.g. int64 `2^60 + 2^52 + 1` → bfloat16).
pub(crate) fn int_to_f64_odd(i: i128) -> f64 {
    let m = i.unsigned_abs();
    let bits = 128 - m.leading_zeros();
    if bits <= 53 {
        return i as f64;
    }
    let drop = bits - 53;
    let mut q = m >> drop;
    if m & ((1u128 << drop) - 1) != 0 {
        q |= 1;
    }
    // q < 2^53 and the scale a power of two: exact
    let v = q as f64 * 2f64.powi(drop as i32);
    if i < 0 {
        -v
    } else {
        v
    }
}

/// Raises the "invalid" floating-point flag, which NumPy reports as
/// "RuntimeWarning: invalid value encountered in cast" after the cast (or
/// raises as `FloatingPointError` under `np.errstate(invalid="raise")`).
fn raise_invalid() {
    let (z, w) = (std::hint::black_box(0.0f64), std::hint::black_box(0.0f64));
    std::hint::black_box(z / w);
}

/// The cast function `A → B` registered with NumPy (contiguous, aligned
/// buffers of `n` elements).
unsafe extern "C" fn cast_fn<A: End, B: End>(
    from: *mut c_void,
    to: *mut c_void,
    n: npy_intp,
    fromarr: *mut c_void,
    toarr: *mut c_void,
) {
    crate::guard::ffi((), || {
        // SAFETY: NumPy passes its dummy arrays of the two dtypes (or NULL).
        let (Some(ca), Some(cb)) = (unsafe { A::ctx(fromarr) }, unsafe { B::ctx(toarr) }) else {
            Python::attach(|_| unsafe {
                npapi::set_error(
                    pyo3::ffi::PyExc_RuntimeError,
                    "mldtypes cast called without the arrays that carry its dtypes",
                )
            });
            return;
        };
        let n = n.max(0) as usize;
        let (sa, sb) = (A::size(ca), B::size(cb));
        let (src, dst) = (from as *const u8, to as *mut u8);
        // The floating-point flags raised before this call (by the ufunc loop
        // whose output this cast converts, or by the previous chunk of a
        // strided cast, which NumPy converts one element per call) stay raised
        // for NumPy to report; the flags our conversions raise are dropped
        // (ml_dtypes' conversions between float formats raise none), and an
        // invalid float → integer conversion raises "invalid" afterwards.
        let saved = FpFlags::save();
        if let (Some(fa), Some(fb)) = (A::kernel(ca), B::kernel(cb)) {
            if cast::is_supported(fa, fb) && kernel_semantics_match(fa, fb) {
                // SAFETY: NumPy hands us n elements of each side.
                let (s, d) = unsafe {
                    (
                        std::slice::from_raw_parts(src, n * sa),
                        std::slice::from_raw_parts_mut(dst, n * sb),
                    )
                };
                if cast::cast_bytes_on(cast::path(), s, fa, d, fb, Overflow::NonSaturating).is_ok()
                {
                    saved.restore_if_changed();
                    return;
                }
            }
        }
        let to_bool = B::KERNEL == Some(DType::Bool);
        if A::OURS && A::COMPLEX && !B::COMPLEX && !to_bool {
            // ml_dtypes warns `ComplexWarning` when its own complex types lose
            // their imaginary part (not for NumPy's complex types). NumPy calls
            // legacy casts with the GIL released for large arrays; take it.
            // A warning turned into an error stays set and NumPy raises it
            // after the call: our complex dtypes carry NPY_NEEDS_PYAPI (see
            // `arrfuncs::register_dtype`), the flag NumPy checks for that.
            Python::attach(|_| unsafe { npapi::complex_warning() });
        }
        let mut flags = Flags {
            float8_source: A::float8(ca),
            f32_source: A::f32_values(ca),
            ..Flags::default()
        };
        let body = n / 8 * 8;
        for i in 0..n {
            flags.vector_body = !A::COMPLEX && i < body;
            // SAFETY: i < n elements on both sides.
            unsafe {
                if let Some(bits) = A::read_f32_bits(ca, src.add(i * sa)) {
                    if B::write_f32_bits(cb, dst.add(i * sb), bits) {
                        continue;
                    }
                }
            }
            // SAFETY: i < n elements on both sides.
            unsafe {
                let v = A::read(ca, src.add(i * sa));
                let v = match v {
                    // ml_dtypes converts our floats to a standard integer
                    // through float32, and our complex to real through its
                    // real part as float32
                    Val::Float(a, b) if A::OURS && !B::OURS => {
                        Val::Float(a, if B::COMPLEX || to_bool { b } else { 0.0 })
                    }
                    other => other,
                };
                B::write(cb, dst.add(i * sb), v, &mut flags);
            }
        }
        saved.restore_if_changed();
        if flags.invalid {
            raise_invalid();
        }
    })
}

/// Whether the library's kernel for `from → to` computes exactly what
/// ml_dtypes' cast does (every pair the kernels support, except those
/// where ml_dtypes goes through float32 and the kernels round once:
/// these are our documented deviation and use the kernels too).
fn kernel_semantics_match(from: DType, to: DType) -> bool {
    // float8 formats with infinities saturate ±inf when converted to an
    // integer (then the sub-byte integer wraps); the kernels give 0
    let inf_float8 = matches!(
        from,
        DType::Float8E3M4 | DType::Float8E4M3 | DType::Float8E5M2
    );
    !(inf_float8 && to.is_integer())
}

/// Registers `A → B` for the NumPy descriptors `da`, type number `nb`.
///
/// # Safety
/// GIL held; `da` a live dtype.
unsafe fn register_cast<A: End, B: End>(
    py: Python<'_>,
    da: *mut numpy::npyffi::PyArray_Descr,
    nb: c_int,
) -> PyResult<()> {
    let r = unsafe { PY_ARRAY_API.PyArray_RegisterCastFunc(py, da, nb, Some(cast_fn::<A, B>)) };
    if r < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// Registers both directions between our dtype (`ours`, type number `tn`,
/// elements described by `O`) and the builtin NumPy type `num` (elements
/// described by `E`).
unsafe fn both_ways<O: End, E: End>(
    py: Python<'_>,
    ours: *mut numpy::npyffi::PyArray_Descr,
    tn: c_int,
    num: c_int,
) -> PyResult<()> {
    unsafe {
        let d = npapi::descr_from_type(num);
        let r = register_cast::<E, O>(py, d, tn);
        pyo3::ffi::Py_DECREF(d as *mut pyo3::ffi::PyObject);
        r?;
        register_cast::<O, E>(py, ours, num)
    }
}

/// Declares `from → to` safe (`numpy.can_cast(from, to)`).
unsafe fn can_cast(py: Python<'_>, from: c_int, to: c_int) -> PyResult<()> {
    unsafe {
        let d = npapi::descr_from_type(from);
        let r = PY_ARRAY_API.PyArray_RegisterCanCast(py, d, to, NPY_SCALARKIND::NPY_NOSCALAR);
        pyo3::ffi::Py_DECREF(d as *mut pyo3::ffi::PyObject);
        if r < 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(())
}

const fn n(t: NPY_TYPES) -> c_int {
    t as c_int
}

/// Registers the casts between `T` and every NumPy builtin numeric type,
/// and the safe casts ml_dtypes declares for its family.
///
/// # Safety
/// GIL held, `T` registered.
pub(crate) unsafe fn register_builtin_casts<T: MlType>(py: Python<'_>) -> PyResult<()> {
    let ours = registry::descr(T::DTYPE).expect("registered");
    let me = registry::typenum(T::DTYPE).expect("registered");
    let signed = T::DTYPE.kind() == mldtypes::dtype::Kind::Signed;
    let (to, from) = ml_dtypes_safe_casts(T::FAMILY, signed);
    unsafe { register_builtin_casts_of::<Ours<T>>(py, ours, me, &to, &from) }
}

/// Registers the casts between our dtype `ours` (type number `me`, elements
/// described by `O`) and every NumPy builtin numeric type, and declares
/// `ours → t` safe for every `t` in `safe_to` and `f → ours` for every `f`
/// in `safe_from`.
///
/// # Safety
/// GIL held, `ours` registered as `me`.
pub(crate) unsafe fn register_builtin_casts_of<O: End>(
    py: Python<'_>,
    ours: *mut numpy::npyffi::PyArray_Descr,
    me: c_int,
    safe_to: &[NPY_TYPES],
    safe_from: &[NPY_TYPES],
) -> PyResult<()> {
    use NPY_TYPES::*;
    unsafe {
        both_ways::<O, F16>(py, ours, me, n(NPY_HALF))?;
        both_ways::<O, F32>(py, ours, me, n(NPY_FLOAT))?;
        both_ways::<O, F64>(py, ours, me, n(NPY_DOUBLE))?;
        if npapi_itemsize(n(NPY_LONGDOUBLE)) == LD_SIZE {
            both_ways::<O, LongDouble>(py, ours, me, n(NPY_LONGDOUBLE))?;
            both_ways::<O, CLongDouble>(py, ours, me, n(NPY_CLONGDOUBLE))?;
        }
        both_ways::<O, Bool>(py, ours, me, n(NPY_BOOL))?;
        both_ways::<O, U8>(py, ours, me, n(NPY_UBYTE))?;
        both_ways::<O, U16>(py, ours, me, n(NPY_USHORT))?;
        both_ways::<O, U32>(py, ours, me, n(NPY_UINT))?;
        if std::mem::size_of::<c_long>() == 8 {
            both_ways::<O, U64>(py, ours, me, n(NPY_ULONG))?;
            both_ways::<O, I64>(py, ours, me, n(NPY_LONG))?;
        } else {
            both_ways::<O, U32>(py, ours, me, n(NPY_ULONG))?;
            both_ways::<O, I32>(py, ours, me, n(NPY_LONG))?;
        }
        both_ways::<O, U64>(py, ours, me, n(NPY_ULONGLONG))?;
        both_ways::<O, I8>(py, ours, me, n(NPY_BYTE))?;
        both_ways::<O, I16>(py, ours, me, n(NPY_SHORT))?;
        both_ways::<O, I32>(py, ours, me, n(NPY_INT))?;
        both_ways::<O, I64>(py, ours, me, n(NPY_LONGLONG))?;
        both_ways::<O, C64Bits>(py, ours, me, n(NPY_CFLOAT))?;
        both_ways::<O, C128>(py, ours, me, n(NPY_CDOUBLE))?;

        for &t in safe_to {
            let r =
                PY_ARRAY_API.PyArray_RegisterCanCast(py, ours, n(t), NPY_SCALARKIND::NPY_NOSCALAR);
            if r < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        for &f in safe_from {
            can_cast(py, n(f), me)?;
        }
    }
    Ok(())
}

/// The NumPy builtin types ml_dtypes 0.6.0 declares its types of `family`
/// safely castable to and from (`signed`: for the integers).
pub(crate) fn ml_dtypes_safe_casts(
    family: Family,
    signed: bool,
) -> (Vec<NPY_TYPES>, Vec<NPY_TYPES>) {
    use NPY_TYPES::*;
    // ml_dtypes declares the sub-byte integers safely castable to NumPy's
    // sized integer types (`NPY_INT32`, `NPY_INT64`, ...): one type number
    // per width, so `np.longlong` (a second 64-bit type number on LP64
    // platforms) and `np.ulonglong` are not safe targets, as there.
    let long64 = std::mem::size_of::<c_long>() == 8;
    let (int32, uint32) = if long64 {
        (NPY_INT, NPY_UINT)
    } else {
        (NPY_LONG, NPY_ULONG)
    };
    let (int64, uint64) = if long64 {
        (NPY_LONG, NPY_ULONG)
    } else {
        (NPY_LONGLONG, NPY_ULONGLONG)
    };
    let (to, from): (&[NPY_TYPES], &[NPY_TYPES]) = match family {
        Family::Float => (
            &[
                NPY_FLOAT,
                NPY_DOUBLE,
                NPY_LONGDOUBLE,
                NPY_CFLOAT,
                NPY_CDOUBLE,
                NPY_CLONGDOUBLE,
            ],
            &[NPY_BOOL, NPY_UBYTE, NPY_BYTE],
        ),
        Family::Complex => (
            &[NPY_CFLOAT, NPY_CDOUBLE, NPY_CLONGDOUBLE],
            &[NPY_BOOL, NPY_UBYTE, NPY_BYTE],
        ),
        Family::Int => {
            if signed {
                (
                    &[
                        NPY_BYTE,
                        NPY_SHORT,
                        int32,
                        int64,
                        NPY_HALF,
                        NPY_FLOAT,
                        NPY_DOUBLE,
                        NPY_LONGDOUBLE,
                        NPY_CFLOAT,
                        NPY_CDOUBLE,
                        NPY_CLONGDOUBLE,
                    ],
                    &[NPY_BOOL],
                )
            } else {
                (
                    &[
                        NPY_BYTE,
                        NPY_SHORT,
                        int32,
                        int64,
                        NPY_UBYTE,
                        NPY_USHORT,
                        uint32,
                        uint64,
                        NPY_HALF,
                        NPY_FLOAT,
                        NPY_DOUBLE,
                        NPY_LONGDOUBLE,
                        NPY_CFLOAT,
                        NPY_CDOUBLE,
                        NPY_CLONGDOUBLE,
                    ],
                    &[NPY_BOOL],
                )
            }
        }
    };
    (to.to_vec(), from.to_vec())
}

/// `numpy.dtype(num).itemsize`.
fn npapi_itemsize(num: c_int) -> usize {
    // SAFETY: called at import with the GIL held.
    unsafe {
        let d = npapi::descr_from_type(num);
        if d.is_null() {
            return 0;
        }
        let s = numpy::npyffi::PyDataType_ELSIZE(npapi::py(), d);
        pyo3::ffi::Py_DECREF(d as *mut pyo3::ffi::PyObject);
        s as usize
    }
}

/// The casts registered between two of our types, `(from, to, function)`,
/// in registration order: `twins.rs` registers the same functions between
/// our types and ml_dtypes' twins.
static AMONG_OURS: std::sync::Mutex<Vec<(DType, DType, numpy::npyffi::PyArray_VectorUnaryFunc)>> =
    std::sync::Mutex::new(Vec::new());

/// The casts registered between two of our types (see [`AMONG_OURS`]).
pub(crate) fn among_ours() -> Vec<(DType, DType, numpy::npyffi::PyArray_VectorUnaryFunc)> {
    AMONG_OURS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Registers `a → b` between two of our dtypes, whose elements `EA` and
/// `EB` describe.
///
/// # Safety
/// GIL held, both registered.
pub(crate) unsafe fn one_way_ends<EA: End, EB: End>(
    py: Python<'_>,
    a: DType,
    b: DType,
) -> PyResult<()> {
    let da = registry::descr(a).expect("registered");
    let nb = registry::typenum(b).expect("registered");
    unsafe { register_cast::<EA, EB>(py, da, nb)? };
    AMONG_OURS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((a, b, Some(cast_fn::<EA, EB>)));
    Ok(())
}
