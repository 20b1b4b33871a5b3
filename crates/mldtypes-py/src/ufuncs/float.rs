//! Ufunc loops of the float formats: the 75 ufuncs ml_dtypes 0.6.0
//! registers in `RegisterFloatUFuncs` (`custom_float.h`), and `float_power`
//! (which ml_dtypes' main branch registers with `power`'s functor), for
//! bfloat16, the float8, float6 and float4 formats, float8_e8m0fnu, and
//! any format registered at run time ([`register_float_loops`]).
//!
//! Every loop is one implementation per ufunc, driven by the format's
//! [`FloatDesc`] that NumPy passes as the loop's `data`:
//!
//! - every one-operand ufunc reads a result table ([`table`]) built on first
//!   use from the ufunc's scalar definition ([`super::funcs`]): 256 entries
//!   for the one-byte formats, 65,536 for the two-byte ones, with the
//!   floating-point flags each input raises;
//! - the two-operand value and bit-pattern ufuncs of the one-byte formats
//!   read a 65,536-entry table of operand pairs the same way; comparisons,
//!   selections and logical functions compare order keys of the codes;
//! - bfloat16's two-operand ufuncs keep their explicit kernels (`bf16.rs`);
//!   the two-byte formats registered at run time compute element by
//!   element.

use std::hint::black_box;
use std::os::raw::{c_char, c_int, c_void};

use mldtypes::bfloat16;
use mldtypes::dtype::DType;
use mldtypes::format::{Format, NanEncoding};
use mldtypes::sort::SortKey;
use numpy::npyffi::npy_intp;
use pyo3::prelude::*;

use super::bf16;
use super::bf16_libm;
use super::check::{self, Outs, Scalar};
use super::desc::FloatDesc;
use super::expk;
use super::funcs::{self, *};
use super::simd;
use super::table::{Column, FlagPages, Lazy, Table, MIXED};
use super::{
    clear_flags, count, raise_flags, raise_invalid, reported_flags, take_sse_flags, x87_flags, Arg,
    FpFlags, LoopFn, Operand, Registrar, BOOL, FLAG_INVALID, INTC,
};

/// The named float formats, in registration order.
const NAMED: [DType; 12] = [
    DType::BFloat16,
    DType::Float8E3M4,
    DType::Float8E4M3,
    DType::Float8E4M3B11FNUZ,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float6E2M3FN,
    DType::Float6E3M2FN,
    DType::Float4E2M1FN,
    DType::Float8E8M0FNU,
];

/// Registers the loops of the 12 named float formats.
pub(super) fn register(r: &mut Registrar<'_>) -> PyResult<()> {
    for dt in NAMED {
        let format = dt
            .format()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(format!("{dt}: no format")))?;
        let desc: &'static FloatDesc = Box::leak(Box::new(FloatDesc::new(format, Some(dt))));
        register_format(r, super::typenum(dt)?, desc)?;
    }
    Ok(())
}

/// Registers every float ufunc loop (76 of them: ml_dtypes' 75 and
/// `float_power`) for the NumPy user dtype `typenum`, whose elements are
/// codes of `format`: one byte each when the format has at most 8 bits
/// (the code in the low bits), two bytes (little-endian `uint16`) up to 16.
/// Formats whose values float32 cannot hold (an exponent range or a
/// precision beyond float32's) compute in float64. Returns the number of
/// loops registered.
///
/// Call it once per dtype, after the dtype is registered with NumPy (with
/// the GIL held, as any NumPy registration). The loops keep a description
/// of the format for the life of the process.
///
/// # Errors
///
/// The error NumPy raised while registering a loop; a `ValueError` for a
/// format of more than 16 bits.
pub(crate) fn register_float_loops(
    py: Python<'_>,
    typenum: c_int,
    format: &Format,
) -> PyResult<usize> {
    if format.bits() > 16 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{}: formats of more than 16 bits have no ufunc loops",
            format.name
        )));
    }
    let mut r = Registrar::new(py)?;
    let named = DType::ALL
        .iter()
        .copied()
        .find(|d| d.is_float() && d.format().as_ref() == Some(format) && NAMED.contains(d));
    let desc: &'static FloatDesc = Box::leak(Box::new(FloatDesc::new(*format, named)));
    register_format(&mut r, typenum, desc)?;
    Ok(r.count())
}

/// A result table of `desc` built on first use by `build`, as a loop's
/// `data` (kept for the life of the process).
fn lazy(desc: &'static FloatDesc, build: fn(&FloatDesc) -> Table) -> *mut c_void {
    let l: &'static Lazy = Box::leak(Box::new(Lazy::new(desc, build)));
    l as *const Lazy as *mut c_void
}

/// `desc` as a loop's `data`.
fn data(desc: &'static FloatDesc) -> *mut c_void {
    desc as *const FloatDesc as *mut c_void
}

/// A loop to register: ufunc name, loop function, its data, and for a
/// table-driven loop its scalar path (for the test suite's check).
struct Entry {
    name: &'static str,
    f: LoopFn,
    data: *mut c_void,
    scalar: Option<(Scalar, Outs)>,
}

/// A table-driven loop: `f` reading the table `build` makes.
fn tab(
    d: &'static FloatDesc,
    name: &'static str,
    f: LoopFn,
    build: fn(&FloatDesc) -> Table,
    scalar: Scalar,
    outs: Outs,
) -> Entry {
    Entry {
        name,
        f,
        data: lazy(d, build),
        scalar: Some((scalar, outs)),
    }
}

/// A loop driven by the descriptor alone.
fn plain(d: &'static FloatDesc, name: &'static str, f: LoopFn) -> Entry {
    Entry {
        name,
        f,
        data: data(d),
        scalar: None,
    }
}

/// Registers the 76 loops of one format, in ml_dtypes' order.
fn register_format(r: &mut Registrar<'_>, num: c_int, d: &'static FloatDesc) -> PyResult<()> {
    let t = Arg::Num(num);
    let byte = d.size == 1;
    let bf = d.eigen();
    use Outs::{Bool, Code, CodeInt, TwoCodes};

    macro_rules! value1 {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(tab(d, $name, lut_loop, build_value1::<$o>, Scalar::One(check::value1::<$o>),
                Code)),*]
        };
    }
    // bfloat16's vector kernels replace its table loops (same results and
    // flags, proven by the check of the test suite).
    let bf16_kernel = |e: Entry, f: LoopFn| -> Entry {
        if bf {
            Entry { f, ..e }
        } else {
            e
        }
    };
    let value1 = value1![
        "rint" => Rint, "exp" => Exp, "exp2" => Exp2, "expm1" => Expm1, "log" => Log,
        "log2" => Log2, "log10" => Log10, "log1p" => Log1p, "sqrt" => Sqrt, "square" => Square,
        "cbrt" => Cbrt, "reciprocal" => Reciprocal, "sin" => Sin, "cos" => Cos, "tan" => Tan,
        "arcsin" => Arcsin, "arccos" => Arccos, "arctan" => Arctan, "sinh" => Sinh,
        "cosh" => Cosh, "tanh" => Tanh, "arcsinh" => Arcsinh, "arccosh" => Arccosh,
        "arctanh" => Arctanh, "deg2rad" => Deg2rad, "rad2deg" => Rad2deg, "floor" => Floor,
        "ceil" => Ceil, "trunc" => Trunc,
    ];
    macro_rules! code1 {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(tab(d, $name, lut_loop, build_code1::<$o>, Scalar::One(check::code1::<$o>),
                Code)),*]
        };
    }
    let code1 = code1![
        "negative" => Negative, "positive" => Identity, "absolute" => Absolute,
        "fabs" => Absolute, "sign" => Sign, "conjugate" => Identity,
    ];
    let [rint, exp, exp2, expm1, log, log2, log10, log1p, sqrt, square, cbrt, reciprocal, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh, deg2rad, rad2deg, floor, ceil, trunc] =
        value1;
    let value1 = [
        bf16_kernel(rint, bf16_simd_loop::<simd::Rint>),
        // bfloat16's computed forms, with the table as their exceptions.
        if bf {
            Entry {
                data: lazy(d, build_exp),
                ..exp
            }
        } else {
            exp
        },
        if bf {
            Entry {
                data: lazy(d, build_exp2),
                ..exp2
            }
        } else {
            exp2
        },
        expm1,
        log,
        log2,
        log10,
        log1p,
        sqrt,
        bf16_kernel(square, bf16_simd_loop::<simd::Square>),
        cbrt,
        bf16_kernel(reciprocal, bf16_simd_loop::<simd::Reciprocal>),
        sin,
        cos,
        tan,
        arcsin,
        arccos,
        arctan,
        sinh,
        cosh,
        tanh,
        arcsinh,
        arccosh,
        arctanh,
        bf16_kernel(deg2rad, bf16_simd_loop::<simd::Deg2rad>),
        bf16_kernel(rad2deg, bf16_simd_loop::<simd::Rad2deg>),
        bf16_kernel(floor, bf16_simd_loop::<simd::Floor>),
        bf16_kernel(ceil, bf16_simd_loop::<simd::Ceil>),
        bf16_kernel(trunc, bf16_simd_loop::<simd::Trunc>),
    ];
    let [negative, positive, absolute, fabs, sign, conjugate] = code1;
    let code1 = [
        bf16_kernel(negative, bf16_simd_loop::<simd::Negative>),
        bf16_kernel(positive, bf16_simd_loop::<simd::Identity>),
        bf16_kernel(absolute, bf16_simd_loop::<simd::Absolute>),
        bf16_kernel(fabs, bf16_simd_loop::<simd::Absolute>),
        bf16_kernel(sign, bf16_simd_loop::<simd::Sign>),
        bf16_kernel(conjugate, bf16_simd_loop::<simd::Identity>),
    ];
    let spacing = bf16_kernel(
        tab(
            d,
            "spacing",
            lut_loop,
            build_spacing,
            Scalar::One(check::spacing),
            Code,
        ),
        bf16_simd_loop::<simd::Spacing>,
    );
    macro_rules! value2 {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(if byte {
                tab(d, $name, pair_loop, build_value2::<$o>, Scalar::Two(check::value2::<$o>),
                    Code)
            } else if bf && <$o as Binary>::LIBM != Libm::None {
                Entry {
                    name: $name,
                    f: bf16_libm::binary::<$o>,
                    data: lazy(d, |_| Table::empty()),
                    scalar: Some((Scalar::Two(check::bf16_value2::<$o>), Code)),
                }
            } else if bf {
                plain(d, $name, bf16::binary::<bfloat16, $o>)
            } else {
                plain(d, $name, value2_loop::<$o>)
            }),*]
        };
    }
    let value2 = value2![
        "add" => Add, "subtract" => Subtract, "multiply" => Multiply, "divide" => Divide,
        "logaddexp" => LogAddExp, "logaddexp2" => LogAddExp2, "true_divide" => Divide,
        "floor_divide" => FloorDivide, "power" => Power, "float_power" => Power,
        "remainder" => Remainder, "mod" => Remainder, "fmod" => Fmod, "arctan2" => Arctan2,
        "hypot" => Hypot,
    ];
    macro_rules! code2 {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(if byte {
                tab(d, $name, pair_loop, build_code2::<$o>, Scalar::Two(check::code2::<$o>),
                    Code)
            } else {
                plain(d, $name, code2_loop::<$o>)
            }),*]
        };
    }
    let [heaviside, copysign, nextafter] =
        code2!["heaviside" => Heaviside, "copysign" => CopySign, "nextafter" => NextAfter];
    // bfloat16's two-operand kernels, checked against the scalar path on
    // every code paired with every class of code.
    let bf16_kernel2 = |e: Entry, f: LoopFn, scalar: Scalar| -> Entry {
        if bf {
            Entry {
                f,
                scalar: Some((
                    scalar,
                    if e.name.starts_with("logical") {
                        Bool
                    } else {
                        Code
                    },
                )),
                data: lazy(d, |_| Table::empty()),
                ..e
            }
        } else {
            e
        }
    };
    // The one-byte formats' copysign and logical functions: vector
    // kernels on the codes (faster than a table of pairs).
    let byte_kernel2 = |e: Entry, f: LoopFn, scalar: Scalar| -> Entry {
        if byte {
            Entry {
                f,
                scalar: Some((
                    scalar,
                    if e.name.starts_with("logical") {
                        Bool
                    } else {
                        Code
                    },
                )),
                data: lazy(d, |_| Table::empty()),
                ..e
            }
        } else {
            e
        }
    };
    let copysign = byte_kernel2(
        copysign,
        byte_simd2_loop::<simd::ByteCopySign>,
        Scalar::Two(check::code2::<CopySign>),
    );
    let code2 = [
        bf16_kernel2(
            heaviside,
            bf16_simd2_loop::<simd::Heaviside>,
            Scalar::Two(check::code2::<Heaviside>),
        ),
        bf16_kernel2(
            copysign,
            bf16_simd2_loop::<simd::CopySign>,
            Scalar::Two(check::code2::<CopySign>),
        ),
        bf16_kernel2(
            nextafter,
            bf16_simd2_loop::<simd::NextAfter>,
            Scalar::Two(check::code2::<NextAfter>),
        ),
    ];
    macro_rules! select {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(if bf {
                plain(d, $name, bf16::select::<bfloat16, $o>)
            } else {
                plain(d, $name, select_loop::<$o>)
            }),*]
        };
    }
    let select =
        select!["maximum" => Maximum, "minimum" => Minimum, "fmax" => Fmax, "fmin" => Fmin];
    macro_rules! compare {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(if bf {
                plain(d, $name, bf16::compare::<bfloat16, $o>)
            } else {
                plain(d, $name, compare_loop::<$o>)
            }),*]
        };
    }
    let compare = compare![
        "equal" => Equal, "not_equal" => NotEqual, "less" => Less, "greater" => Greater,
        "less_equal" => LessEqual, "greater_equal" => GreaterEqual,
    ];
    // The logical functions: the element loop, bfloat16's and the
    // one-byte formats' vector kernels (each checked against the scalar
    // definition).
    macro_rules! logical {
        ($($name:literal => $o:ident, $bf:ident, $byte:ident);* $(;)?) => {
            [$(byte_kernel2(
                bf16_kernel2(
                    plain(d, $name, logical_loop::<$o>),
                    bf16_simd2_loop::<simd::$bf>,
                    Scalar::Two(check::logical::<$o>),
                ),
                byte_simd2_loop::<simd::$byte>,
                Scalar::Two(check::logical::<$o>),
            )),*]
        };
    }
    let logical = logical![
        "logical_and" => And, And, ByteAnd;
        "logical_or" => Or, Or, ByteOr;
        "logical_xor" => Xor, Xor, ByteXor;
    ];
    macro_rules! pred1 {
        ($($name:literal => $o:ty),* $(,)?) => {
            [$(tab(d, $name, lut_loop, build_pred::<$o>, Scalar::One(check::pred::<$o>), Bool)),*]
        };
    }
    let [logical_not, isfinite, isinf, isnan, signbit] = pred1![
        "logical_not" => LogicalNot, "isfinite" => IsFinite, "isinf" => IsInf,
        "isnan" => IsNan, "signbit" => SignBit,
    ];
    let pred1 = [
        bf16_kernel(logical_not, bf16_simd_loop::<simd::LogicalNot>),
        bf16_kernel(isfinite, bf16_simd_loop::<simd::IsFinite>),
        bf16_kernel(isinf, bf16_simd_loop::<simd::IsInf>),
        bf16_kernel(isnan, bf16_simd_loop::<simd::IsNan>),
        bf16_kernel(signbit, bf16_simd_loop::<simd::SignBit>),
    ];
    let divmod = if byte {
        tab(
            d,
            "divmod",
            pair2_loop,
            build_divmod,
            Scalar::Two(check::divmod),
            TwoCodes,
        )
    } else if bf {
        Entry {
            name: "divmod",
            f: bf16_libm::divmod,
            data: lazy(d, |_| Table::empty()),
            scalar: Some((Scalar::Two(check::bf16_divmod), TwoCodes)),
        }
    } else {
        plain(d, "divmod", divmod_loop)
    };
    let modf = tab(
        d,
        "modf",
        lut2_loop,
        build_modf,
        Scalar::One(check::modf),
        TwoCodes,
    );
    let ldexp = if bf {
        plain(d, "ldexp", bf16_libm::ldexp)
    } else {
        plain(d, "ldexp", ldexp_loop)
    };
    let frexp = tab(
        d,
        "frexp",
        frexp_loop,
        build_frexp,
        Scalar::One(check::frexp),
        CodeInt,
    );

    let un: &[Arg] = &[t, t];
    let bin: &[Arg] = &[t, t, t];
    let cmp: &[Arg] = &[t, t, BOOL];
    let pred: &[Arg] = &[t, BOOL];
    let groups: [(&[Entry], &[Arg]); 11] = [
        (&value1, un),
        (&code1, un),
        (std::slice::from_ref(&spacing), un),
        (&value2, bin),
        (&code2, bin),
        (&select, bin),
        (&compare, cmp),
        (&logical, cmp),
        (&pred1, pred),
        (std::slice::from_ref(&divmod), &[t, t, t, t]),
        (std::slice::from_ref(&modf), &[t, t, t]),
    ];
    let tail: [(&Entry, &[Arg]); 2] = [(&ldexp, &[t, INTC, t]), (&frexp, &[t, t, INTC])];
    let all = groups
        .iter()
        .flat_map(|(es, sig)| es.iter().map(move |e| (e, *sig)))
        .chain(tail);
    for (e, sig) in all {
        r.add_with_data(e.name, num, sig, e.f, e.data)?;
        if let Some((scalar, outs)) = e.scalar {
            check::record(num, e.name, e.f, e.data, scalar, outs);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Scalar definitions, evaluated on every input to build the tables.
// ---------------------------------------------------------------------------

/// Entries of a table of one-operand results: one per stored value.
#[inline]
fn entries(d: &FloatDesc) -> usize {
    1 << (8 * d.size)
}

/// Runs `f`, returning its result and the flags it raised (then cleared).
/// The operands pass through [`black_box`] and so does the result, so that
/// the evaluation happens between the two flag reads.
#[inline(always)]
fn probed<R>(f: impl FnOnce() -> R) -> (R, u8) {
    let r = black_box(f());
    let raised = reported_flags();
    if raised != 0 {
        clear_flags();
    }
    (r, raised)
}

/// `f(i)` for every `i < n`, handed to `put` with the flags that call
/// raised. The calls run in groups of 16 between two reads of the flags
/// (most groups raise none); a group that raised one runs again a call at
/// a time, and so do the groups after it until one raises nothing (runs of
/// inputs raising flags, such as `log` of the negative numbers, are
/// computed once). A call at a time reads MXCSR alone
/// ([`take_sse_flags`]: glibc's float32 functions compute with SSE); a
/// group that raised a flag in the x87 unit runs again with both read
/// ([`probed`]). `f` must give the same result and flags whenever it is
/// called. The flags are clear before and after.
fn probed_each<R: Copy + Default>(
    n: usize,
    mut f: impl FnMut(usize) -> R,
    mut put: impl FnMut(usize, R, u8),
) {
    const GROUP: usize = 16;
    let mut group = [R::default(); GROUP];
    let mut raised = [0u8; GROUP];
    let mut one_by_one = false;
    clear_flags();
    for start in (0..n).step_by(GROUP) {
        let end = (start + GROUP).min(n);
        let len = end - start;
        if !one_by_one {
            for (i, r) in (start..end).zip(&mut group) {
                *r = black_box(f(i));
            }
            if reported_flags() == 0 {
                for (i, &r) in (start..end).zip(&group) {
                    put(i, r, 0);
                }
                continue;
            }
            clear_flags();
        }
        for (i, (r, fl)) in (start..end).zip(group.iter_mut().zip(&mut raised)) {
            *r = black_box(f(i));
            *fl = take_sse_flags();
        }
        if x87_flags() {
            clear_flags();
            for (i, (r, fl)) in (start..end).zip(group.iter_mut().zip(&mut raised)) {
                (*r, *fl) = probed(|| f(i));
            }
        }
        one_by_one = raised[..len].iter().any(|&fl| fl != 0);
        for (i, (&r, &fl)) in (start..end).zip(group.iter().zip(&raised)) {
            put(i, r, fl);
        }
    }
}

/// The invalid flag if `seen` (a signalling NaN read as float32).
#[inline(always)]
fn invalid_if(seen: bool) -> u8 {
    if seen {
        FLAG_INVALID
    } else {
        0
    }
}

/// The masked code of every stored value, packed (`size` bytes each).
fn all_codes(d: &FloatDesc) -> Vec<u8> {
    let n = entries(d);
    let mask = d.format.code_mask();
    let mut codes = vec![0u8; n * d.size];
    for i in 0..n {
        d.put_code(&mut codes, i, i as u32 & mask);
    }
    codes
}

/// A column of `d`'s codes from packed codes.
fn code_column(d: &FloatDesc, packed: Vec<u8>) -> Column {
    if d.size == 1 {
        Column::U8(packed.into_boxed_slice())
    } else {
        // Two entries of padding for the vector gathers.
        Column::U16(
            packed
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .chain([0, 0])
                .collect(),
        )
    }
}

/// Every stored value decoded to float32 (the slice kernels of a named
/// format, bfloat16's shift): the values the blocked loops computed with.
fn all_values(d: &FloatDesc) -> Vec<f32> {
    let codes = all_codes(d);
    let mut x = vec![0f32; entries(d)];
    d.decode_block(&codes, &mut x);
    x
}

/// Rounds float32 results into a column of codes (the slice kernels).
fn encode_column(d: &FloatDesc, vals: &[f32]) -> Column {
    let mut out = vec![0u8; vals.len() * d.size];
    d.encode_block(vals, &mut out);
    code_column(d, out)
}

/// `T(f(float(a)))`: the value function `O` of every stored value, rounded
/// once; a bfloat16 signalling NaN input raises invalid (Eigen reads it as
/// float32), and a never-negative function's NaN results are `+NaN` in
/// bfloat16 ([`Unary::NONNEGATIVE`]). Formats beyond float32 compute in
/// float64.
fn build_value1<O: Unary>(d: &FloatDesc) -> Table {
    let n = entries(d);
    let mut flags = Vec::with_capacity(n);
    if d.wide {
        let mut out = vec![0u8; n * d.size];
        for i in 0..n {
            let x = d.decode64(i as u32 & d.format.code_mask());
            let (r, f) = probed(|| O::f(black_box(x)));
            flags.push(f);
            d.put_code(&mut out, i, d.encode64(r));
        }
        return table(code_column(d, out), None, &flags);
    }
    let x = all_values(d);
    let mut y = vec![0f32; n];
    flags.resize(n, 0);
    probed_each(
        n,
        |i| O::f(black_box(x[i])),
        |i, mut r, f| {
            if O::NONNEGATIVE && d.eigen() && r.is_nan() {
                r = f32::NAN;
            }
            y[i] = r;
            flags[i] = f | invalid_if(d.eigen() && funcs::is_snan(x[i]));
        },
    );
    table(encode_column(d, &y), None, &flags)
}

/// A table from its columns and per-entry flags.
fn table(first: Column, second: Option<Column>, flags: &[u8]) -> Table {
    let shape8 = match &first {
        Column::U8(v) => simd::Shape8::of(v),
        _ => simd::Shape8::Table,
    };
    Table {
        first,
        second,
        flags: FlagPages::new(flags),
        shape8,
        exp: None,
    }
}

/// bfloat16 `exp`'s table with its computed forms ([`expk`]).
fn build_exp(d: &FloatDesc) -> Table {
    with_exp_form(build_value1::<Exp>(d), expk::Base::E)
}

/// bfloat16 `exp2`'s table with its computed forms ([`expk`]).
fn build_exp2(d: &FloatDesc) -> Table {
    with_exp_form(build_value1::<Exp2>(d), expk::Base::Two)
}

fn with_exp_form(mut t: Table, base: expk::Base) -> Table {
    if let Column::U16(v) = &t.first {
        t.exp = Some(expk::ExpForm::derive(base, v, |run| *t.flags.page(run)));
    }
    t
}

/// The bit-pattern function `O` of every code; reading a bfloat16
/// signalling NaN's value raises invalid.
fn build_code1<O: CodeUnary>(d: &FloatDesc) -> Table {
    let n = entries(d);
    let c = Consts::of(d);
    let mut out = vec![0u8; n * d.size];
    let mut flags = Vec::with_capacity(n);
    for i in 0..n {
        let x = i as u32 & d.format.code_mask();
        flags.push(invalid_if(
            O::READS_VALUE && d.eigen() && funcs::bf16_snan_code(x),
        ));
        d.put_code(&mut out, i, O::f(&d.format, &c, x));
    }
    table(code_column(d, out), None, &flags)
}

/// The predicate `O` of every code, as booleans.
fn build_pred<O: CodePredicate>(d: &FloatDesc) -> Table {
    let n = entries(d);
    let mut out = vec![0u8; n];
    let mut flags = Vec::with_capacity(n);
    for (i, o) in out.iter_mut().enumerate() {
        let x = i as u32 & d.format.code_mask();
        flags.push(invalid_if(
            O::READS_VALUE && d.eigen() && funcs::bf16_snan_code(x),
        ));
        *o = O::f(&d.format, x) as u8;
    }
    table(Column::U8(out.into_boxed_slice()), None, &flags)
}

/// `spacing(x)` as ml_dtypes computes it: `nextafter(x, ±away) - x` in
/// float32, rounded once, where `away` is infinity with `x`'s sign, or the
/// largest finite value in formats without infinities. In those formats
/// `±max` gives NaN with `x`'s sign (`copysign(quiet_NaN, x)`), or `+0` in
/// the float6/float4 formats, which have no NaN.
fn build_spacing(d: &FloatDesc) -> Table {
    let f = &d.format;
    let n = entries(d);
    let c = Consts::of(d);
    let away = f.inf_code().unwrap_or(f.max_code());
    // `abs(x) == max()` in ml_dtypes is a value comparison: only the two
    // codes of ±max match.
    let at_max = |x: u32| !f.has_infinity() && abs_code(f, x) == f.max_code();
    let max_result = |x: u32| {
        if f.has_nan() {
            CopySign::f(f, &c, quiet_nan(f), x)
        } else {
            0
        }
    };
    let code = |i: usize| i as u32 & f.code_mask();
    let mut flags = Vec::with_capacity(n);
    let mut out = vec![0u8; n * d.size];
    if d.wide {
        for i in 0..n {
            let x = code(i);
            let next = next_after(f, x, CopySign::f(f, &c, away, x));
            let (r, fl) = probed(|| black_box(d.decode64(next)) - black_box(d.decode64(x)));
            flags.push(fl);
            let r = if at_max(x) {
                max_result(x)
            } else {
                d.encode64(r)
            };
            d.put_code(&mut out, i, r);
        }
        return table(code_column(d, out), None, &flags);
    }
    let mut nexts = vec![0u8; n * d.size];
    for i in 0..n {
        let x = code(i);
        d.put_code(&mut nexts, i, next_after(f, x, CopySign::f(f, &c, away, x)));
    }
    let x = all_values(d);
    let mut y = vec![0f32; n];
    d.decode_block(&nexts, &mut y);
    let mut r = vec![0f32; n];
    flags.resize(n, 0);
    probed_each(
        n,
        |i| black_box(y[i]) - black_box(x[i]),
        |i, v, f| (r[i], flags[i]) = (v, f),
    );
    d.encode_block(&r, &mut out);
    for i in 0..n {
        if at_max(code(i)) {
            d.put_code(&mut out, i, max_result(code(i)));
        }
    }
    table(code_column(d, out), None, &flags)
}

/// `modf`: `(fractional part, integral part)` from C `modff`.
fn build_modf(d: &FloatDesc) -> Table {
    let n = entries(d);
    let mut flags = Vec::with_capacity(n);
    if d.wide {
        let (mut fr, mut ip) = (vec![0u8; n * d.size], vec![0u8; n * d.size]);
        for i in 0..n {
            let x = d.decode64(i as u32 & d.format.code_mask());
            let ((a, b), f) = probed(|| black_box(x).c_modf());
            flags.push(f);
            d.put_code(&mut fr, i, d.encode64(a));
            d.put_code(&mut ip, i, d.encode64(b));
        }
        return table(code_column(d, fr), Some(code_column(d, ip)), &flags);
    }
    let x = all_values(d);
    let (mut fr, mut ip) = (vec![0f32; n], vec![0f32; n]);
    flags.resize(n, 0);
    probed_each(
        n,
        |i| black_box(x[i]).c_modf(),
        |i, (a, b), f| {
            (fr[i], ip[i]) = (a, b);
            flags[i] = f | invalid_if(d.eigen() && funcs::is_snan(x[i]));
        },
    );
    table(encode_column(d, &fr), Some(encode_column(d, &ip)), &flags)
}

/// The exponent [`build_frexp`] stores where ml_dtypes writes none.
pub(crate) const KEEP_EXPONENT: i16 = i16::MIN;

/// `frexp`: `(mantissa, exponent)` from C `frexpf`. ml_dtypes never writes
/// the exponent of float8_e8m0fnu's NaN (its compiler folds `frexp` of that
/// constant NaN and leaves the output variable alone): the element gets the
/// previous element's exponent, 0 at the start of a loop; the table marks
/// it [`KEEP_EXPONENT`].
fn build_frexp(d: &FloatDesc) -> Table {
    let n = entries(d);
    let mut flags = Vec::with_capacity(n);
    let mut exps = Vec::with_capacity(n);
    let keep = |x_is_nan: bool| !d.format.signed && x_is_nan;
    if d.wide {
        let mut out = vec![0u8; n * d.size];
        for i in 0..n {
            let x = d.decode64(i as u32 & d.format.code_mask());
            if keep(x.is_nan()) {
                flags.push(0);
                exps.push(KEEP_EXPONENT);
                d.put_code(&mut out, i, d.encode64(x));
                continue;
            }
            let ((m, e), f) = probed(|| black_box(x).c_frexp());
            flags.push(f);
            exps.push(e as i16);
            d.put_code(&mut out, i, d.encode64(m));
        }
        return table(
            code_column(d, out),
            Some(Column::I16(exps.into_boxed_slice())),
            &flags,
        );
    }
    let x = all_values(d);
    let mut mant = x.clone();
    flags.resize(n, 0);
    exps.resize(n, KEEP_EXPONENT);
    probed_each(
        n,
        // An element whose exponent ml_dtypes keeps: its value, no call.
        |i| (!keep(x[i].is_nan())).then(|| black_box(x[i]).c_frexp()),
        |i, me, f| {
            if let Some((m, e)) = me {
                (mant[i], exps[i]) = (m, e as i16);
            }
            flags[i] = f | invalid_if(d.eigen() && funcs::is_snan(x[i]));
        },
    );
    table(
        encode_column(d, &mant),
        Some(Column::I16(exps.into_boxed_slice())),
        &flags,
    )
}

/// The operand pairs of a one-byte format's two-operand table: the
/// decoded values and, for each stored pair `a << 8 | b`, the index of its
/// masked pair (the codes' unused high bits are ignored).
fn pair_inputs(d: &FloatDesc) -> (Vec<f32>, u32) {
    let codes: Vec<u8> = (0..=255u32)
        .map(|c| (c & d.format.code_mask()) as u8)
        .collect();
    let mut x = vec![0f32; 256];
    d.decode_block(&codes, &mut x);
    (x, d.format.code_mask())
}

/// Fills the entries of stored pairs with unused high bits from their
/// masked pair's entry.
fn replicate<V: Copy>(v: &mut [V], mask: u32) {
    if mask == 0xff {
        return;
    }
    for i in 0..1usize << 16 {
        let j = (((i >> 8) as u32 & mask) << 8 | (i as u32 & 0xff & mask)) as usize;
        if j != i {
            v[i] = v[j];
        }
    }
}

/// `T(f(float(a), float(b)))` of every pair of one-byte codes, with the
/// format's NaN rule; for the unsigned float8_e8m0fnu, the functions
/// ml_dtypes evaluates without flags raise none.
fn build_value2<O: Binary>(d: &FloatDesc) -> Table {
    let (x, mask) = pair_inputs(d);
    let rule = rule_of::<O>(d.semantics);
    let quiet = O::QUIET_UNSIGNED && !d.format.signed;
    let mut r = vec![0f32; 1 << 16];
    let mut flags = vec![0u8; 1 << 16];
    let m = mask as usize + 1;
    probed_each(
        m * m,
        |i| {
            let (u, v) = (black_box(x[i / m]), black_box(x[i % m]));
            apply_nan_rule(rule, u, v, O::f(u, v))
        },
        |i, res, f| {
            let at = ((i / m) << 8) | (i % m);
            (r[at], flags[at]) = (res, if quiet { 0 } else { f });
        },
    );
    replicate(&mut r, mask);
    replicate(&mut flags, mask);
    table(encode_column(d, &r), None, &flags)
}

/// The bit-pattern function `O` of every pair of one-byte codes.
fn build_code2<O: CodeBinary>(d: &FloatDesc) -> Table {
    let mask = d.format.code_mask();
    let c = Consts::of(d);
    let out: Vec<u8> = (0..1u32 << 16)
        .map(|i| O::f(&d.format, &c, (i >> 8) & mask, i & 0xff & mask) as u8)
        .collect();
    table(Column::U8(out.into_boxed_slice()), None, &[0; 1 << 16])
}

/// `divmod` of every pair of one-byte codes: `(floor_divide, remainder)`
/// from one [`funcs::divmod`].
fn build_divmod(d: &FloatDesc) -> Table {
    let (x, mask) = pair_inputs(d);
    let mut q = vec![0f32; 1 << 16];
    let mut m = vec![0f32; 1 << 16];
    let mut flags = vec![0u8; 1 << 16];
    let w = mask as usize + 1;
    probed_each(
        w * w,
        |i| funcs::divmod(black_box(x[i / w]), black_box(x[i % w])),
        |i, (dq, dm), f| {
            let at = ((i / w) << 8) | (i % w);
            (q[at], m[at], flags[at]) = (dq, dm, f);
        },
    );
    replicate(&mut q, mask);
    replicate(&mut m, mask);
    replicate(&mut flags, mask);
    table(encode_column(d, &q), Some(encode_column(d, &m)), &flags)
}

// ---------------------------------------------------------------------------
// Table loops.
// ---------------------------------------------------------------------------

/// A stored code type: `u8` or `u16`.
trait Code: Copy {
    fn index(self) -> usize;
}
impl Code for u8 {
    #[inline(always)]
    fn index(self) -> usize {
        self as usize
    }
}
impl Code for u16 {
    #[inline(always)]
    fn index(self) -> usize {
        self as usize
    }
}

/// Runs `step(k)` (which writes element `k`'s outputs and returns its
/// table index) for `k < n`; returns the union of the entries' flags. The
/// flags of a block of elements come from one look-up per element in the
/// table's per-run summary; a block that met a run of mixed flags reads
/// its inputs again (`index(k)`: element `k`'s table index) for the
/// per-entry flags, unless the outputs may have replaced the inputs
/// (`alias`): then each element's flags are read as it goes.
#[inline(always)]
fn lut_blocks(
    n: usize,
    fl: &FlagPages,
    alias: bool,
    mut step: impl FnMut(usize) -> usize,
    index: impl Fn(usize) -> usize,
) -> u8 {
    if !fl.any() {
        for k in 0..n {
            step(k);
        }
        return 0;
    }
    if alias {
        return (0..n).fold(0, |f, k| f | fl.get(step(k)));
    }
    let mut f = 0u8;
    super::blocks(n, 4096, |start, len| {
        let mut g = 0u8;
        for k in start..start + len {
            g |= fl.summary(step(k));
        }
        if !fl.settled(f | g) {
            g = (start..start + len).fold(0, |g, k| g | fl.get(index(k)));
        }
        f |= g & !MIXED;
    });
    f
}

/// `o[k] = tab[a[k]]` for `k < n`; the union of the entries' flags (see
/// [`lut_blocks`]). Each element is read before it is written.
///
/// # Safety
///
/// `a` and `o` are operands of a loop call of `n` elements of `I` and `V`;
/// `tab` has an entry for every value of `I`.
#[inline(always)]
unsafe fn lut<I: Code, V: Copy>(a: Operand, o: Operand, n: usize, tab: &[V], fl: &FlagPages) -> u8 {
    assert!(tab.len() >= 1 << (8 * size_of::<I>()));
    let packed = a.contiguous(size_of::<I>()) && o.contiguous(size_of::<V>());
    let (pa, po) = (a.at(0) as *const I, o.at(0) as *mut V);
    let index = |k: usize| -> usize {
        if packed {
            pa.add(k).read_unaligned().index()
        } else {
            a.read::<I>(k).index()
        }
    };
    let step = |k: usize| -> usize {
        let c = index(k);
        // SAFETY: `c` < 2^(8·size_of::<I>()) <= tab.len().
        let v = *tab.get_unchecked(c);
        if packed {
            po.add(k).write_unaligned(v);
        } else {
            o.write::<V>(k, v);
        }
        c
    };
    let alias = spans_overlap(a, size_of::<I>(), o, size_of::<V>(), n);
    lut_blocks(n, fl, alias, step, index)
}

/// Whether the `n` elements of `a` (`sa` bytes each) and of `o` (`so`
/// bytes) share any byte.
#[inline]
fn spans_overlap(a: Operand, sa: usize, o: Operand, so: usize, n: usize) -> bool {
    if n == 0 {
        return false;
    }
    let span = |x: Operand, size: usize| {
        let (p, q) = (x.at(0) as usize, x.at(n - 1) as usize);
        (p.min(q), p.max(q) + size)
    };
    let ((a0, a1), (o0, o1)) = (span(a, sa), span(o, so));
    a0 < o1 && o0 < a1
}

use std::mem::size_of;

/// The result table of a loop call's `data`.
///
/// # Safety
///
/// `data` is the [`Lazy`] the loop was registered with.
#[inline(always)]
unsafe fn lazy_of<'a>(data: *mut c_void) -> &'a Lazy {
    &*(data as *const Lazy)
}

/// Loop of a one-operand ufunc through its table (one output: a code or a
/// boolean).
unsafe extern "C" fn lut_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let l = lazy_of(data);
        let t = l.get();
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let n = count(dims);
        let flags = match (l.desc.size, &t.first) {
            (1, Column::U8(v)) if a.contiguous(1) && o.contiguous(1) && !overlaps(a, o, n) => {
                let tab: &[u8; 256] = v[..256].try_into().expect("256 entries");
                let fl = t.flags.any().then(|| t.flags.page(0));
                // SAFETY: `a` and `o` hold `n` packed bytes each, the same
                // bytes or disjoint ones.
                simd::lut8(a.at(0), o.at(0), n, tab, &t.shape8, fl)
            }
            (1, Column::U8(v)) if o.contiguous(1) && !spans_overlap(a, 1, o, 1, n) => {
                // A strided input into a packed output: gathered in chunks
                // ([`gather_u8`]), each looked up as a packed one.
                let tab: &[u8; 256] = v[..256].try_into().expect("256 entries");
                let fl = t.flags.any().then(|| t.flags.page(0));
                gathered_u8(a, n, |chunk, start| {
                    // SAFETY: `chunk` and the output's `len` packed bytes
                    // from `start` are disjoint (a stack buffer).
                    simd::lut8(chunk.as_ptr(), o.at(start), chunk.len(), tab, &t.shape8, fl)
                })
            }
            (1, Column::U8(v)) => lut::<u8, u8>(a, o, n, v, &t.flags),
            (2, Column::U16(v)) => {
                let fl = t.flags.any().then_some(&t.flags);
                // The vector look-up of `len` packed codes at `src` into the
                // output from element `start`, with the exact flags; None on
                // paths without it.
                let packed = |src: *const u16, start: usize, len: usize, known: u8| {
                    // SAFETY: `src` and the output hold `len` packed codes
                    // from `start`, disjoint; the column is padded.
                    simd::lut16(
                        src,
                        o.at(start) as *mut u16,
                        len,
                        v,
                        fl,
                        known,
                        t.exp.as_ref(),
                    )
                };
                let fast = if a.contiguous(2) && o.contiguous(2) && !spans_overlap(a, 2, o, 2, n) {
                    packed(a.at(0) as *const u16, 0, n, 0)
                } else if o.contiguous(2) && !spans_overlap(a, 2, o, 2, n) && simd::has_lut16(v) {
                    // A strided input into a packed output: gathered in
                    // blocks, each looked up as a packed one (whose flags
                    // are read only where the earlier blocks' leave some
                    // unknown).
                    let mut buf = [0u16; super::BLOCK];
                    let mut f = 0u8;
                    super::blocks(n, super::BLOCK, |start, len| {
                        let chunk = &mut buf[..len];
                        gather_u16(a, start, chunk);
                        f |= packed(chunk.as_ptr(), start, len, f).unwrap_or(0);
                    });
                    Some(f)
                } else {
                    None
                };
                match fast {
                    Some(f) => f,
                    None => lut::<u16, u16>(a, o, n, v, &t.flags),
                }
            }
            (2, Column::U8(v)) => lut::<u16, u8>(a, o, n, v, &t.flags),
            _ => unreachable!("a one-operand table of this format"),
        };
        raise_flags(flags);
    })
}

/// Whether the `n` packed bytes at `a` and `o` overlap other than as the
/// same bytes.
#[inline]
fn overlaps(a: Operand, o: Operand, n: usize) -> bool {
    let (p, q) = (a.at(0) as usize, o.at(0) as usize);
    p != q && p < q + n && q < p + n
}

/// Elements `start..start + buf.len()` of a two-byte operand into `buf`:
/// every second code of a packed array (step 4, the common strided case)
/// read as 32-bit words whose low half is the element (the last one
/// alone, so nothing past it is read); any other step element by element.
///
/// # Safety
///
/// The elements are readable.
#[inline]
pub(super) unsafe fn gather_u16(x: Operand, start: usize, buf: &mut [u16]) {
    let len = buf.len();
    if x.contiguous(4) && len > 0 {
        let words = std::slice::from_raw_parts(x.at(start), 4 * (len - 1));
        every_second_u16(words, &mut buf[..len - 1]);
        buf[len - 1] = x.read::<u16>(start + len - 1);
        return;
    }
    for (k, v) in buf.iter_mut().enumerate() {
        *v = x.read::<u16>(start + k);
    }
}

/// `buf[k]` = the low half of the little-endian 32-bit word `k` of `words`.
#[inline(always)]
fn every_second_u16_impl(words: &[u8], buf: &mut [u16]) {
    for (v, w) in buf.iter_mut().zip(words.chunks_exact(4)) {
        *v = u16::from_le_bytes([w[0], w[1]]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
unsafe fn every_second_u16_avx512(words: &[u8], buf: &mut [u16]) {
    every_second_u16_impl(words, buf)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn every_second_u16_avx2(words: &[u8], buf: &mut [u16]) {
    every_second_u16_impl(words, buf)
}

/// [`every_second_u16_impl`] on the best instruction set (a truncating
/// pack the compiler vectorises).
#[inline]
fn every_second_u16(words: &[u8], buf: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    {
        use mldtypes::cast::Path;
        match mldtypes::cast::path() {
            // SAFETY: the path is only selected when the CPU has these
            // features (AVX-512 F/BW/VL/DQ, respectively AVX2).
            Path::Avx512 => return unsafe { every_second_u16_avx512(words, buf) },
            Path::Avx2 => return unsafe { every_second_u16_avx2(words, buf) },
            _ => {}
        }
    }
    every_second_u16_impl(words, buf)
}

/// Elements per chunk of the bfloat16 vector loops.
const CHUNK: usize = 4096;

/// Loop of a bfloat16 one-operand function with a vector kernel
/// ([`simd::Bf16Op`]): chunks of the input gathered (or borrowed when
/// packed and apart from the output), the kernel's output written straight
/// to a packed output or through a buffer. The kernel's float32
/// instructions raise the flags; reading a signalling NaN raises invalid.
unsafe extern "C" fn bf16_simd_loop<O: simd::Bf16Op>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let (a, o) = (Operand::of(args, steps, 0), Operand::of(args, steps, 1));
        let n = count(dims);
        let osize = if O::BOOL { 1 } else { 2 };
        // Buffers only for strided or overlapping operands.
        let (mut inbuf, mut outbuf) = (Vec::new(), Vec::new());
        let (ia, io) = (a.at(0) as usize, o.at(0) as usize);
        let apart = n == 0 || ia + 2 * n <= io || io + osize * n <= ia;
        let plan = simd::Bf16Plan::of::<O>();
        let mut snan = false;
        super::blocks(n, CHUNK, |start, len| {
            let src: &[u16] =
                if a.contiguous(2) && apart && (a.at(start) as usize).is_multiple_of(2) {
                    std::slice::from_raw_parts(a.at(start) as *const u16, len)
                } else {
                    inbuf.resize(len.max(inbuf.len()), 0u16);
                    gather_u16(a, start, &mut inbuf[..len]);
                    &inbuf[..len]
                };
            if o.contiguous(osize) && apart {
                let dst = std::slice::from_raw_parts_mut(o.at(start), len * osize);
                if !O::AHEAD {
                    snan |= simd::bf16_block::<O>(plan, src, dst);
                    return;
                }
                // Pieces of 512 codes whose input is requested 2 KiB ahead
                // (one thread's stream is bound by the lines in flight).
                for (xs, ds) in src.chunks(512).zip(dst.chunks_mut(512 * osize)) {
                    prefetch(xs.as_ptr().wrapping_add(1024).cast());
                    snan |= simd::bf16_block::<O>(plan, xs, ds);
                }
            } else {
                outbuf.resize((len * osize).max(outbuf.len()), 0u8);
                let dst = &mut outbuf[..len * osize];
                snan |= simd::bf16_block::<O>(plan, src, dst);
                o.put_bytes(start, dst, osize);
            }
        });
        if snan {
            raise_invalid();
        }
    })
}

/// Loop of a bfloat16 two-operand bit-pattern function with a vector
/// kernel ([`simd::Bf16Op2`]), in chunks as [`bf16_simd_loop`]; calls
/// whose output overlaps an input other than element for element (NumPy's
/// reductions and accumulations) run element by element.
unsafe extern "C" fn bf16_simd2_loop<O: simd::Bf16Op2>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        let osize = if O::BOOL { 1 } else { 2 };
        let mut snan = false;
        if n < 64 || super::block_len(args, steps, n, &[2, 2, osize], 2) == 1 {
            for k in 0..n {
                let (x, y) = (a.read::<u16>(k), b.read::<u16>(k));
                if O::READS_VALUE {
                    snan |= funcs::bf16_snan_code(x as u32) | funcs::bf16_snan_code(y as u32);
                }
                let r = O::apply(x, y);
                if O::BOOL {
                    o.write::<u8>(k, r as u8);
                } else {
                    o.write::<u16>(k, r);
                }
            }
        } else {
            // Operands borrowed when packed and aligned, else gathered; the
            // output written straight when packed, else through a buffer.
            // `block_len` is not 1: the output is apart from the inputs or
            // equal to one element for element, and each chunk is read
            // before it is written.
            let (mut ga, mut gb) = (Vec::new(), Vec::new());
            let mut out = Vec::new();
            let view = |x: Operand, start: usize, len: usize, buf: &mut Vec<u16>| -> *const u16 {
                if x.contiguous(2) && (x.at(start) as usize).is_multiple_of(2) {
                    return x.at(start) as *const u16;
                }
                buf.resize(len.max(buf.len()), 0);
                gather_u16(x, start, &mut buf[..len]);
                buf.as_ptr()
            };
            super::blocks(n, CHUNK, |start, len| {
                let pa = std::slice::from_raw_parts(view(a, start, len, &mut ga), len);
                let pb = std::slice::from_raw_parts(view(b, start, len, &mut gb), len);
                let inplace = o.at(start) == a.at(start) || o.at(start) == b.at(start);
                if o.contiguous(osize) && !inplace {
                    let dst = std::slice::from_raw_parts_mut(o.at(start), len * osize);
                    snan |= simd::bf16_block2::<O>(pa, pb, dst);
                } else {
                    out.resize((len * osize).max(out.len()), 0u8);
                    let dst = &mut out[..len * osize];
                    snan |= simd::bf16_block2::<O>(pa, pb, dst);
                    o.put_bytes(start, dst, osize);
                }
            });
        }
        if snan {
            raise_invalid();
        }
    })
}

/// Elements `start..start + buf.len()` of a one-byte operand into `buf`
/// (every second byte of a packed array read as 16-bit words, the last
/// alone).
///
/// # Safety
///
/// The elements are readable.
#[inline]
unsafe fn gather_u8(x: Operand, start: usize, buf: &mut [u8]) {
    let len = buf.len();
    if x.contiguous(2) && len > 0 {
        let p = x.at(start);
        for (k, v) in buf[..len - 1].iter_mut().enumerate() {
            *v = p.add(2 * k).cast::<u16>().read_unaligned() as u8;
        }
        buf[len - 1] = *x.at(start + len - 1);
        return;
    }
    for (k, v) in buf.iter_mut().enumerate() {
        *v = *x.at(start + k);
    }
}

/// `f(chunk, start)` over a one-byte operand's `n` elements in chunks of
/// [`super::BLOCK`] gathered into a stack buffer ([`gather_u8`]); the
/// union of `f`'s results (flags).
///
/// # Safety
///
/// The operand's `n` elements are readable.
#[inline]
unsafe fn gathered_u8(a: Operand, n: usize, mut f: impl FnMut(&[u8], usize) -> u8) -> u8 {
    let mut buf = [0u8; super::BLOCK];
    let mut flags = 0u8;
    super::blocks(n, super::BLOCK, |start, len| {
        let chunk = &mut buf[..len];
        // SAFETY: the caller's guarantee.
        unsafe { gather_u8(a, start, chunk) };
        flags |= f(chunk, start);
    });
    flags
}

/// The [`simd::ByteFormat`] of a one-byte format.
fn byte_format(d: &FloatDesc) -> simd::ByteFormat {
    let f = &d.format;
    simd::ByteFormat {
        mask: f.code_mask() as u8,
        sign: if f.signed { f.sign_mask() as u8 } else { 0 },
        fnuz: f.nan_encoding == NanEncoding::NegativeZero,
        truthy: truthy_mask(f) as u8,
    }
}

/// Loop of a one-byte two-operand bit function with a vector kernel
/// ([`simd::ByteOp2`]: `copysign`, the logical functions), in chunks:
/// operands borrowed when packed, else gathered; the output written
/// straight when packed and apart from the inputs, else through a buffer.
/// Calls whose output overlaps an input other than element for element
/// (reductions, accumulations) run element by element.
unsafe extern "C" fn byte_simd2_loop<O: simd::ByteOp2>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let f = byte_format(lazy_of(data).desc);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        if n < 64 || super::block_len(args, steps, n, &[1, 1, 1], 2) == 1 {
            for k in 0..n {
                let r = O::apply(f, *a.at(k), *b.at(k));
                *o.at(k) = r;
            }
            return;
        }
        let (mut ga, mut gb, mut out) = (Vec::new(), Vec::new(), Vec::new());
        let view = |x: Operand, start: usize, len: usize, buf: &mut Vec<u8>| -> *const u8 {
            if x.contiguous(1) {
                return x.at(start);
            }
            buf.resize(len.max(buf.len()), 0);
            gather_u8(x, start, &mut buf[..len]);
            buf.as_ptr()
        };
        super::blocks(n, CHUNK, |start, len| {
            let pa = std::slice::from_raw_parts(view(a, start, len, &mut ga), len);
            let pb = std::slice::from_raw_parts(view(b, start, len, &mut gb), len);
            let inplace = o.at(start) == a.at(start) || o.at(start) == b.at(start);
            if o.contiguous(1) && !inplace {
                let po = std::slice::from_raw_parts_mut(o.at(start), len);
                simd::byte_block2::<O>(f, pa, pb, po);
            } else {
                out.resize(len.max(out.len()), 0u8);
                simd::byte_block2::<O>(f, pa, pb, &mut out[..len]);
                o.put_bytes(start, &out[..len], 1);
            }
        });
    })
}

/// Asks for the sixteen cache lines from `p` (a hint: it never faults).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    for line in 0..16 {
        // SAFETY: a prefetch hint dereferences nothing.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                p.wrapping_add(64 * line).cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `f(codes, start)` for the blocks of 512 of a two-byte operand's first
/// `n` elements: packed inputs borrowed (requested 2 KiB ahead), strided
/// ones gathered.
///
/// # Safety
///
/// `a` is an operand of a loop call of at least `n` two-byte elements.
unsafe fn u16_blocks(a: Operand, n: usize, mut f: impl FnMut(&[u16], usize)) {
    let packed = a.contiguous(2) && (a.at(0) as usize).is_multiple_of(2);
    let mut buf = [0u16; 512];
    super::blocks(n, 512, |start, len| unsafe {
        if packed {
            let p = a.at(start) as *const u16;
            prefetch(p.wrapping_add(1024).cast());
            f(std::slice::from_raw_parts(p, len), start)
        } else {
            gather_u16(a, start, &mut buf[..len]);
            f(&buf[..len], start)
        }
    });
}

/// Loop of `modf` through its table (two code outputs).
unsafe extern "C" fn lut2_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let l = lazy_of(data);
        let t = l.get();
        let a = Operand::of(args, steps, 0);
        let (o1, o2) = (Operand::of(args, steps, 1), Operand::of(args, steps, 2));
        let n = count(dims);
        let second = t.second.as_ref().expect("a two-output table");
        let f = match (&t.first, second) {
            (Column::U16(p), Column::U16(q))
                if l.desc.eigen()
                    && (o1.at(0) as usize).is_multiple_of(2)
                    && (o2.at(0) as usize).is_multiple_of(2)
                    && o1.contiguous(2)
                    && o2.contiguous(2)
                    && !spans_overlap(a, 2, o1, 2, n)
                    && !spans_overlap(a, 2, o2, 2, n)
                    && !spans_overlap(o1, 2, o2, 2, n) =>
            {
                // bfloat16 (`modf` is this loop's only function): blocks of
                // 512 in integer and exact float32 steps, a block holding an
                // infinity or a NaN through the table.
                // SAFETY: packed, aligned outputs of `n` elements, disjoint
                // from each other and from the input.
                let fr = std::slice::from_raw_parts_mut(o1.at(0) as *mut u16, n);
                let ip = std::slice::from_raw_parts_mut(o2.at(0) as *mut u16, n);
                let mut f = 0u8;
                u16_blocks(a, n, |xs, start| {
                    let len = xs.len();
                    let (fs, is) = (&mut fr[start..start + len], &mut ip[start..start + len]);
                    if simd::modf_bf16_block(xs, fs, is) {
                        for ((&c, fo), io) in xs.iter().zip(fs.iter_mut()).zip(is.iter_mut()) {
                            *fo = p[c as usize];
                            *io = q[c as usize];
                            f |= t.flags.get(c as usize);
                        }
                    }
                });
                f
            }
            (Column::U8(p), Column::U8(q))
                if a.contiguous(1)
                    && o1.contiguous(1)
                    && o2.contiguous(1)
                    && !overlaps(a, o1, n)
                    && !overlaps(a, o2, n)
                    && !spans_overlap(o1, 1, o2, 1, n) =>
            {
                // One-byte codes: two vector look-ups ([`simd::lut8`]),
                // the output that replaces the input (if one does) last.
                let tp: &[u8; 256] = p[..256].try_into().expect("256 entries");
                let tq: &[u8; 256] = q[..256].try_into().expect("256 entries");
                let fl = t.flags.any().then(|| t.flags.page(0));
                let (x, y1, y2) = (a.at(0), o1.at(0), o2.at(0));
                // SAFETY: packed operands of `n` bytes; the input and each
                // output are the same bytes or disjoint.
                if y1 == x {
                    simd::lut8(x, y2, n, tq, &simd::Shape8::Table, fl)
                        | simd::lut8(x, y1, n, tp, &t.shape8, None)
                } else {
                    simd::lut8(x, y1, n, tp, &t.shape8, fl)
                        | simd::lut8(x, y2, n, tq, &simd::Shape8::Table, None)
                }
            }
            (Column::U8(p), Column::U8(q))
                if o1.contiguous(1)
                    && o2.contiguous(1)
                    && !spans_overlap(a, 1, o1, 1, n)
                    && !spans_overlap(a, 1, o2, 1, n)
                    && !spans_overlap(o1, 1, o2, 1, n) =>
            {
                // A strided input into packed outputs: gathered in chunks
                // ([`gather_u8`]), each looked up as a packed one (a look-up
                // per element through `lut2` took 0.68 ns per element of
                // every second one, the chunks 0.1).
                let tp: &[u8; 256] = p[..256].try_into().expect("256 entries");
                let tq: &[u8; 256] = q[..256].try_into().expect("256 entries");
                let fl = t.flags.any().then(|| t.flags.page(0));
                gathered_u8(a, n, |chunk, start| {
                    let (x, len) = (chunk.as_ptr(), chunk.len());
                    // SAFETY: the outputs' `len` packed bytes from `start`
                    // are disjoint from `chunk` (a stack buffer).
                    simd::lut8(x, o1.at(start), len, tp, &t.shape8, fl)
                        | simd::lut8(x, o2.at(start), len, tq, &simd::Shape8::Table, None)
                })
            }
            (Column::U8(p), Column::U8(q)) => lut2::<u8>(a, o1, o2, n, p, q, &t.flags),
            (Column::U16(p), Column::U16(q)) => lut2::<u16>(a, o1, o2, n, p, q, &t.flags),
            _ => unreachable!("a two-output table of this format"),
        };
        raise_flags(f);
    })
}

/// `o1[k] = p[a[k]]`, `o2[k] = q[a[k]]` for `k < n`, elements of `C`;
/// the union of the entries' flags (each element's, as it goes: the
/// outputs may replace the input).
///
/// # Safety
///
/// The operands are those of a loop call of `n` elements of `C`; the
/// tables have an entry for every value of `C`.
#[inline(always)]
unsafe fn lut2<C: Code>(
    a: Operand,
    o1: Operand,
    o2: Operand,
    n: usize,
    p: &[C],
    q: &[C],
    fl: &FlagPages,
) -> u8 {
    assert!(p.len() >= 1 << (8 * size_of::<C>()) && q.len() >= p.len());
    let size = size_of::<C>();
    let packed = a.contiguous(size) && o1.contiguous(size) && o2.contiguous(size);
    let (pa, p1, p2) = (a.at(0) as *const C, o1.at(0) as *mut C, o2.at(0) as *mut C);
    let index = |k: usize| {
        if packed {
            pa.add(k).read_unaligned().index()
        } else {
            a.read::<C>(k).index()
        }
    };
    let step = |k: usize| -> usize {
        let c = index(k);
        // SAFETY: `c` < 2^(8·size_of::<C>()) <= the tables' lengths.
        let (x, y) = (*p.get_unchecked(c), *q.get_unchecked(c));
        if packed {
            p1.add(k).write_unaligned(x);
            p2.add(k).write_unaligned(y);
        } else {
            o1.write::<C>(k, x);
            o2.write::<C>(k, y);
        }
        c
    };
    let alias = spans_overlap(a, size, o1, size, n) || spans_overlap(a, size, o2, size, n);
    lut_blocks(n, fl, alias, step, index)
}

/// Loop of `frexp` through its table: the mantissa's code and the C `int`
/// exponent ([`KEEP_EXPONENT`]: the previous element's, 0 for the first).
unsafe extern "C" fn frexp_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let l = lazy_of(data);
        let t = l.get();
        let a = Operand::of(args, steps, 0);
        let (mant, exp) = (Operand::of(args, steps, 1), Operand::of(args, steps, 2));
        let n = count(dims);
        let exps = t.second.as_ref().expect("a two-output table").i16s();
        let f = match &t.first {
            Column::U8(m)
                if n >= 256
                    && mant.contiguous(1)
                    && exp.contiguous(4)
                    && (if a.contiguous(1) {
                        !overlaps(a, mant, n)
                    } else {
                        !spans_overlap(a, 1, mant, 1, n)
                    })
                    && !spans_overlap(a, 1, exp, 4, n)
                    && !spans_overlap(mant, 1, exp, 4, n) =>
            {
                let table: &[u8; 256] = m[..256].try_into().expect("256 entries");
                let fl = t.flags.any().then(|| t.flags.page(0));
                match exponents8(exps) {
                    // SAFETY: packed operands of `n` elements, the input and
                    // the mantissas the same bytes or disjoint, the
                    // exponents disjoint from both.
                    Some(e) if a.contiguous(1) => simd::frexp8(
                        a.at(0),
                        mant.at(0),
                        exp.at(0) as *mut c_int,
                        n,
                        table,
                        &e,
                        fl,
                    ),
                    Some(e) => {
                        // A strided input: gathered in chunks, each looked
                        // up as a packed one (into packed outputs disjoint
                        // from it).
                        let mut buf = [0u8; super::BLOCK];
                        let mut f = 0u8;
                        super::blocks(n, super::BLOCK, |start, len| {
                            let chunk = &mut buf[..len];
                            gather_u8(a, start, chunk);
                            f |= simd::frexp8(
                                chunk.as_ptr(),
                                mant.at(start),
                                exp.at(start) as *mut c_int,
                                len,
                                table,
                                &e,
                                fl,
                            );
                        });
                        f
                    }
                    None => frexp_lut::<u8>(a, mant, exp, n, m, exps, &t.flags),
                }
            }
            Column::U8(m) => frexp_lut::<u8>(a, mant, exp, n, m, exps, &t.flags),
            Column::U16(m)
                if l.desc.eigen()
                    && (mant.at(0) as usize).is_multiple_of(2)
                    && (exp.at(0) as usize).is_multiple_of(4)
                    && mant.contiguous(2)
                    && exp.contiguous(4)
                    && !spans_overlap(a, 2, mant, 2, n)
                    && !spans_overlap(a, 2, exp, 4, n)
                    && !spans_overlap(mant, 2, exp, 4, n) =>
            {
                // SAFETY: packed, aligned outputs of `n` elements, disjoint
                // from each other and from the input.
                let ms = std::slice::from_raw_parts_mut(mant.at(0) as *mut u16, n);
                let es = std::slice::from_raw_parts_mut(exp.at(0) as *mut i32, n);
                let mut f = 0u8;
                u16_blocks(a, n, |xs, start| {
                    let len = xs.len();
                    let (ms, es) = (&mut ms[start..start + len], &mut es[start..start + len]);
                    if simd::frexp_bf16_block(xs, ms, es) {
                        // A subnormal, infinity or NaN: the block through
                        // the table (bfloat16 has no kept exponents).
                        simd::fence_streams();
                        for ((&c, mo), eo) in xs.iter().zip(ms.iter_mut()).zip(es.iter_mut()) {
                            *mo = m[c as usize];
                            *eo = exps[c as usize].into();
                            f |= t.flags.get(c as usize);
                        }
                    }
                });
                simd::fence_streams();
                f
            }
            Column::U16(m) => frexp_lut::<u16>(a, mant, exp, n, m, exps, &t.flags),
            Column::I16(_) => unreachable!("a code column"),
        };
        raise_flags(f);
    })
}

/// The exponents of a one-byte format's `frexp` table as bytes, where each
/// fits one and every element writes its own (not float8_e8m0fnu's, see
/// [`KEEP_EXPONENT`]).
fn exponents8(exps: &[i16]) -> Option<[i8; 256]> {
    let mut e = [0i8; 256];
    for (d, &x) in e.iter_mut().zip(&exps[..256]) {
        *d = i8::try_from(x).ok()?;
    }
    Some(e)
}

/// The body of [`frexp_loop`] for codes of `C`.
///
/// # Safety
///
/// As [`lut2`]; `exps` has an entry for every value of `C`.
#[inline(always)]
unsafe fn frexp_lut<C: Code>(
    a: Operand,
    mant: Operand,
    exp: Operand,
    n: usize,
    m: &[C],
    exps: &[i16],
    fl: &FlagPages,
) -> u8 {
    let codes = 1 << (8 * size_of::<C>());
    assert!(m.len() >= codes && exps.len() >= codes);
    let mut last: c_int = 0;
    let size = size_of::<C>();
    let packed = a.contiguous(size) && mant.contiguous(size) && exp.contiguous(4);
    let (pa, pm, pe) = (
        a.at(0) as *const C,
        mant.at(0) as *mut C,
        exp.at(0) as *mut c_int,
    );
    let index = |k: usize| {
        if packed {
            pa.add(k).read_unaligned().index()
        } else {
            a.read::<C>(k).index()
        }
    };
    let step = |k: usize| -> usize {
        let c = index(k);
        // SAFETY: `c` < 2^(8·size_of::<C>()) <= the tables' lengths.
        let (x, e) = (*m.get_unchecked(c), *exps.get_unchecked(c));
        if e != KEEP_EXPONENT {
            last = c_int::from(e);
        }
        if packed {
            pm.add(k).write_unaligned(x);
            pe.add(k).write_unaligned(last);
        } else {
            mant.write::<C>(k, x);
            exp.write::<c_int>(k, last);
        }
        c
    };
    let alias = spans_overlap(a, size, mant, size, n) || spans_overlap(a, size, exp, 4, n);
    lut_blocks(n, fl, alias, step, index)
}

/// Whether operand `b` of `n` elements of `size` bytes covers the byte at
/// `p`.
#[inline]
fn covers(b: Operand, n: usize, size: usize, p: *mut u8) -> bool {
    if n == 0 {
        return false;
    }
    let (s, e) = (b.at(0) as usize, b.at(n - 1) as usize);
    let (lo, hi) = (s.min(e), s.max(e) + size);
    (lo..hi).contains(&(p as usize))
}

/// Loop of a two-operand ufunc of a one-byte format through its table of
/// operand pairs. NumPy's reductions (`np.add.reduce`: the accumulator is
/// the first input and the output, both with step 0) keep the accumulator
/// in a register; every other call runs element by element in order, so
/// `accumulate` and overlapping operands see the results of earlier
/// elements, as in ml_dtypes' loops.
unsafe extern "C" fn pair_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let t = lazy_of(data).get();
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        let tab: &[u8; 1 << 16] = t.first.u8s().try_into().expect("a pair table");
        let fl = &t.flags;
        let mut f = 0u8;
        if a.at(0) == o.at(0)
            && a.at(1) == a.at(0)
            && o.at(1) == o.at(0)
            && !covers(b, n, 1, o.at(0))
        {
            let mut acc = a.read::<u8>(0) as usize;
            for k in 0..n {
                let i = acc << 8 | b.read::<u8>(k) as usize;
                acc = tab[i] as usize;
                f |= fl.get(i);
            }
            if n > 0 {
                o.write::<u8>(0, acc as u8);
            }
        } else if fl.any() {
            let dense = fl.dense();
            for k in 0..n {
                let i = (a.read::<u8>(k) as usize) << 8 | b.read::<u8>(k) as usize;
                o.write::<u8>(k, tab[i]);
                f |= dense[i];
            }
        } else {
            for k in 0..n {
                let i = (a.read::<u8>(k) as usize) << 8 | b.read::<u8>(k) as usize;
                o.write::<u8>(k, tab[i]);
            }
        }
        raise_flags(f);
    })
}

/// Loop of `divmod` of a one-byte format through its table of operand
/// pairs (two outputs).
unsafe extern "C" fn pair2_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let t = lazy_of(data).get();
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let (q, m) = (Operand::of(args, steps, 2), Operand::of(args, steps, 3));
        let tq = t.first.u8s();
        let tm = t.second.as_ref().expect("a two-output table").u8s();
        let mut f = 0u8;
        let dense = t.flags.dense();
        for k in 0..count(dims) {
            let i = (a.read::<u8>(k) as usize) << 8 | b.read::<u8>(k) as usize;
            q.write::<u8>(k, tq[i]);
            m.write::<u8>(k, tm[i]);
            f |= dense[i];
        }
        raise_flags(f);
    })
}

// ---------------------------------------------------------------------------
// Loops driven by the descriptor, element by element.
// ---------------------------------------------------------------------------

/// The descriptor of a loop call's `data`.
///
/// # Safety
///
/// `data` is the [`FloatDesc`] the loop was registered with.
#[inline(always)]
unsafe fn desc_of<'a>(data: *mut c_void) -> &'a FloatDesc {
    &*(data as *const FloatDesc)
}

/// Reads the code of element `k` of `d`'s format (unused high bits
/// ignored).
#[inline(always)]
unsafe fn load(d: &FloatDesc, o: Operand, k: usize) -> u32 {
    let raw = if d.size == 1 {
        o.read::<u8>(k) as u32
    } else {
        o.read::<u16>(k) as u32
    };
    raw & d.format.code_mask()
}

/// Writes `code` as element `k`.
#[inline(always)]
unsafe fn store(d: &FloatDesc, o: Operand, k: usize, code: u32) {
    if d.size == 1 {
        o.write::<u8>(k, code as u8)
    } else {
        o.write::<u16>(k, code as u16)
    }
}

/// `T(f(float(a), float(b)))` of two codes (float64 for wide formats).
#[inline]
fn value2<O: Binary>(d: &FloatDesc, x: u32, y: u32) -> u32 {
    let rule = rule_of::<O>(d.semantics);
    let quiet = (O::QUIET_UNSIGNED && !d.format.signed).then(FpFlags::save);
    let r = if d.wide {
        let (u, v) = (d.decode64(x), d.decode64(y));
        d.encode64(apply_nan_rule(rule, u, v, O::f(u, v)))
    } else {
        let (u, v) = (d.decode(x), d.decode(y));
        d.encode(apply_nan_rule(rule, u, v, O::f(u, v)))
    };
    if let Some(flags) = quiet {
        flags.restore();
    }
    r
}

/// Loop of a [`Binary`] value function of a two-byte format registered at
/// run time, element by element.
unsafe extern "C" fn value2_loop<O: Binary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        for k in 0..count(dims) {
            let r = value2::<O>(d, load(d, a, k), load(d, b, k));
            store(d, o, k, r);
        }
    })
}

/// Loop of `divmod` of a two-byte format registered at run time.
unsafe extern "C" fn divmod_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let (q, m) = (Operand::of(args, steps, 2), Operand::of(args, steps, 3));
        for k in 0..count(dims) {
            let (x, y) = (load(d, a, k), load(d, b, k));
            let (cq, cm) = if d.wide {
                let (dq, dm) = funcs::divmod(d.decode64(x), d.decode64(y));
                (d.encode64(dq), d.encode64(dm))
            } else {
                let (dq, dm) = funcs::divmod(d.decode(x), d.decode(y));
                (d.encode(dq), d.encode(dm))
            };
            store(d, q, k, cq);
            store(d, m, k, cm);
        }
    })
}

/// Loop of a [`CodeBinary`] (two-byte formats; the one-byte ones read a
/// table): reading a bfloat16 signalling NaN's value raises invalid.
unsafe extern "C" fn code2_loop<O: CodeBinary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let c = Consts::of(d);
        let mut snan = false;
        for k in 0..count(dims) {
            let (x, y) = (load(d, a, k), load(d, b, k));
            snan |= O::READS_VALUE
                && d.eigen()
                && (funcs::bf16_snan_code(x) || funcs::bf16_snan_code(y));
            store(d, o, k, O::f(&d.format, &c, x, y));
        }
        if snan {
            raise_invalid();
        }
    })
}

/// [`funcs::truthy`] as a mask test: a code is true when it has a bit of
/// the mask set, or always when the mask is 0.
#[inline]
fn truthy_mask(f: &Format) -> u32 {
    if !f.signed {
        0
    } else if f.nan_encoding == NanEncoding::NegativeZero {
        f.code_mask()
    } else {
        f.code_mask() & !f.sign_mask()
    }
}

/// `code` is true under [`truthy_mask`]'s mask `m`.
#[inline(always)]
fn truthy_by(m: u32, code: u32) -> bool {
    m == 0 || code & m != 0
}

/// Loop of a [`Logical`] on the operands' [`funcs::truthy`] values; reading
/// a bfloat16 signalling NaN raises invalid.
unsafe extern "C" fn logical_loop<O: Logical>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let m = truthy_mask(&d.format);
        let n = count(dims);
        let mut snan = false;
        if d.size == 1 {
            for k in 0..n {
                let (x, y) = (a.read::<u8>(k) as u32, b.read::<u8>(k) as u32);
                o.write::<u8>(k, O::f(truthy_by(m, x), truthy_by(m, y)) as u8);
            }
        } else {
            for k in 0..n {
                let (x, y) = (a.read::<u16>(k) as u32, b.read::<u16>(k) as u32);
                if d.eigen() {
                    snan |= funcs::bf16_snan_code(x) | funcs::bf16_snan_code(y);
                }
                o.write::<u8>(k, O::f(truthy_by(m, x), truthy_by(m, y)) as u8);
            }
        }
        if snan {
            raise_invalid();
        }
    })
}

/// `o[k] = f(a[k], b[k])` by the order keys of the codes (NaN unordered,
/// `-0 == +0`): the value comparison of the float32 values, raising no
/// flags (ml_dtypes compares the bit patterns of these formats).
#[inline(always)]
fn compare_keys<O: Compare>(key: SortKey, x: u32, y: u32) -> bool {
    let nan = key.code_mask();
    let (kx, ky) = (key.key(x), key.key(y));
    let ordered = (kx != nan) & (ky != nan);
    match O::PRED {
        Pred::Eq => ordered & (kx == ky),
        Pred::Ne => !(ordered & (kx == ky)),
        Pred::Lt => ordered & (kx < ky),
        Pred::Gt => ordered & (kx > ky),
        Pred::Le => ordered & (kx <= ky),
        Pred::Ge => ordered & (kx >= ky),
    }
}

/// [`compare_keys`] over packed one-byte codes.
#[inline(always)]
fn byte_compare<O: Compare>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
    for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
        *d = compare_keys::<O>(key, p as u32, q as u32) as u8;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
unsafe fn byte_compare_avx512<O: Compare>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
    byte_compare::<O>(key, a, b, o)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn byte_compare_avx2<O: Compare>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
    byte_compare::<O>(key, a, b, o)
}

/// [`byte_compare`] on the best instruction set.
#[inline]
fn byte_compare_block<O: Compare>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use mldtypes::cast::Path;
        match mldtypes::cast::path() {
            // SAFETY: the path is only selected when the CPU has these
            // features (AVX-512 F/BW/VL/DQ, respectively AVX2).
            Path::Avx512 => return unsafe { byte_compare_avx512::<O>(key, a, b, o) },
            Path::Avx2 => return unsafe { byte_compare_avx2::<O>(key, a, b, o) },
            _ => {}
        }
    }
    byte_compare::<O>(key, a, b, o)
}

/// Loop of a [`Compare`] of a format other than bfloat16: by order keys,
/// no flags.
unsafe extern "C" fn compare_loop<O: Compare>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        if d.size == 1 {
            bf16::byte_chunks(
                (a, b, o),
                n,
                block_of(args, steps, n, &[1, 1, 1]),
                |pa, pb, po| byte_compare_block::<O>(d.key, pa, pb, po),
            );
        } else {
            for k in 0..n {
                let r = compare_keys::<O>(d.key, load(d, a, k), load(d, b, k));
                o.write::<u8>(k, r as u8);
            }
        }
    })
}

/// The block length of a loop call (see [`super::block_len`]).
#[inline]
unsafe fn block_of(
    args: *mut *mut c_char,
    steps: *mut npy_intp,
    n: usize,
    sizes: &[usize],
) -> usize {
    super::block_len(args, steps, n, sizes, 2)
}

/// Loop of a [`Select`] of a format other than bfloat16: the chosen
/// operand's code (masked to the format's bits), by order keys, no flags.
unsafe extern "C" fn select_loop<O: Select>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        let key = d.key;
        let nan = key.code_mask();
        let block = block_of(args, steps, n, &[d.size, d.size, d.size]);
        if block == 1 && a.at(0) == o.at(0) && a.at(1) == a.at(0) && o.at(1) == o.at(0) {
            // A reduction: the accumulator is element 0 of `a` and `o`.
            let mut code = load(d, a, 0);
            let mut ka = key.key(code);
            for k in 0..n {
                let c = load(d, b, k);
                let kc = key.key(c);
                if !O::pick_key(ka, kc, ka == nan, kc == nan) {
                    (code, ka) = (c, kc);
                }
            }
            if n > 0 {
                store(d, o, 0, code);
            }
        } else if d.size == 1 && block != 1 {
            bf16::byte_chunks((a, b, o), n, block, |pa, pb, po| {
                bf16::simd::byte_select_block::<O>(key, pa, pb, po)
            });
        } else {
            for k in 0..n {
                let (x, y) = (load(d, a, k), load(d, b, k));
                let (kx, ky) = (key.key(x), key.key(y));
                let r = if O::pick_key(kx, ky, kx == nan, ky == nan) {
                    x
                } else {
                    y
                };
                store(d, o, k, r);
            }
        }
    })
}

/// `ldexp(x, n)` with a C `int` exponent, from C `ldexpf` (`ldexp` in
/// float64 for wide formats): decoded and encoded in blocks through the
/// slice kernels of named formats.
pub(super) unsafe extern "C" fn ldexp_loop(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let d = desc_of(data);
        let a = Operand::of(args, steps, 0);
        let e = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let n = count(dims);
        if d.wide {
            for k in 0..n {
                let x = d.decode64(load(d, a, k));
                store(d, o, k, d.encode64(x.c_ldexp(e.read::<c_int>(k))));
            }
            return;
        }
        let block = super::block_len(args, steps, n, &[d.size, 4, d.size], 2);
        let mut buf = [0u8; 2 * super::BLOCK];
        let mut x = [0f32; super::BLOCK];
        let mut snan = false;
        super::blocks(n, block, |start, len| {
            let x = &mut x[..len];
            let bytes = a.bytes(start, len, d.size, &mut buf);
            d.decode_block(bytes, x);
            if d.eigen() {
                snan |= x.iter().fold(false, |acc, &v| acc | funcs::is_snan(v));
            }
            for (k, u) in x.iter_mut().enumerate() {
                *u = funcs::ldexp_f32(*u, e.read::<c_int>(start + k));
            }
            let out = &mut buf[..len * d.size];
            d.encode_block(x, out);
            o.put_bytes(start, out, d.size);
        });
        if snan {
            raise_invalid();
        }
    })
}
