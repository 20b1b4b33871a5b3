//! The sub-byte integers against every entry of `subbyte_ints.json`
//! (ml_dtypes 0.6.0, see `tests/vectors/formats/README.md`).

mod common;

use mldtypes::int::{SubByteInt, SubByteIntError};
use mldtypes::{int1, int2, int4, uint1, uint2, uint4};
use serde_json::Value;

fn codes(v: &Value) -> Vec<Option<u8>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().map(|c| c as u8))
        .collect()
}

/// Checks one type; returns the number of reference values compared.
fn check<T>() -> usize
where
    T: SubByteInt
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + std::ops::Rem<Output = T>
        + std::ops::Neg<Output = T>
        + std::str::FromStr<Err = SubByteIntError>
        + Into<f32>,
{
    let all = common::load_json("subbyte_ints");
    let t = &all["types"][T::NAME];
    let mut n = 0;
    assert_eq!(t["bits"], T::BITS);
    let count = 1usize << T::BITS;
    let code = |x: T| x.to_bits();

    let values: Vec<i64> = t["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(values.len(), count);
    for (c, &v) in values.iter().enumerate() {
        let x = T::from_bits(c as u8);
        assert_eq!(x.to_i32() as i64, v);
        assert_eq!(x.to_string(), t["str"][c].as_str().unwrap());
        assert_eq!(format!("{x:?}"), t["repr"][c].as_str().unwrap());
        assert_eq!(x.into(), t["to_float32"][c].as_f64().unwrap() as f32);
        // Display round-trips through FromStr
        assert_eq!(x.to_string().parse::<T>(), Ok(x));
        n += 4;
    }
    assert_eq!(T::MIN as i64, *values.iter().min().unwrap());
    assert_eq!(T::MAX as i64, *values.iter().max().unwrap());

    // integer constructors and int64 casts: wrap modulo 2^BITS
    let inputs: Vec<i64> = all["ctor_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    for (key, _) in [("ctor", ()), ("from_int64", ())] {
        for (x, want) in inputs.iter().zip(codes(&t[key])) {
            let want = want.expect("ml_dtypes accepted every int64 input");
            assert_eq!(code(T::from_i64_wrapping(*x)), want, "{key}({x})");
            n += 1;
            // the range-checked conversion agrees where the value fits
            let fits = (T::MIN as i64..=T::MAX as i64).contains(x);
            match T::from_str(&x.to_string()) {
                Ok(v) => assert!(fits && code(v) == want),
                Err(e) => {
                    assert!(!fits);
                    assert!(matches!(e, SubByteIntError::OutOfRange { .. }));
                }
            }
        }
    }

    // float casts (NumPy semantics)
    let floats: Vec<f64> = all["float_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::parse_f64)
        .collect();
    for (x, want) in floats.iter().zip(codes(&t["from_float64"])) {
        assert_eq!(Some(code(T::from_f64_numpy(*x))), want, "from_f64({x})");
        n += 1;
    }
    for (x, want) in floats.iter().zip(codes(&t["from_float32"])) {
        let x32 = *x as f32;
        assert_eq!(
            Some(code(T::from_f64_numpy(x32 as f64))),
            want,
            "from_f32({x32})"
        );
        n += 1;
    }

    // arithmetic: operators follow NumPy array semantics; the scalar table
    // agrees except where ml_dtypes scalars raise ZeroDivisionError.
    for op in ["add", "sub", "mul", "floordiv", "mod"] {
        for a in 0..count {
            let arr = codes(&t["array_ops"][op][a]);
            let scal = codes(&t["scalar_ops"][op][a]);
            for b in 0..count {
                let (x, y) = (T::from_bits(a as u8), T::from_bits(b as u8));
                let got = code(match op {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "floordiv" => x / y,
                    _ => x % y,
                });
                assert_eq!(Some(got), arr[b], "{op}({}, {})", x, y);
                if y.to_i32() == 0 && (op == "floordiv" || op == "mod") {
                    assert_eq!(scal[b], None, "ml_dtypes scalar {op} by zero raises");
                } else {
                    assert_eq!(Some(got), scal[b], "scalar {op}({x}, {y})");
                }
                n += 2;
            }
        }
    }
    for c in 0..count {
        let x = T::from_bits(c as u8);
        assert_eq!(Some(code(-x)), codes(&t["neg"])[c]);
        assert_eq!(Some(code(-x)), codes(&t["neg_array"])[c]);
        n += 2;
    }
    n
}

#[test]
fn every_subbyte_int_entry_matches_ml_dtypes() {
    let n = check::<int1>()
        + check::<int2>()
        + check::<int4>()
        + check::<uint1>()
        + check::<uint2>()
        + check::<uint4>();
    // every value, constructor, cast, operation table entry and negation
    assert!(n > 3000, "{n} reference values compared");
    println!("{n} sub-byte integer reference values compared");
}

#[test]
fn checked_division_reports_zero_divisor() {
    let e = int4::MIN.checked_div(int4::ZERO).unwrap_err();
    assert_eq!(e, SubByteIntError::DivisionByZero { type_name: "int4" });
    assert!(uint4::MAX.checked_rem(uint4::ZERO).is_err());
    assert_eq!(
        int4::MIN.checked_div(int4::from_i64_wrapping(-1)),
        Ok(int4::MIN)
    );
}
