//! The Rust-facing API of the float types: `Sum`/`Product`, `Display`,
//! serde, `const` constructors, bytes, operators on references,
//! `num_traits` (`FloatConst`, `FloatCore`, `AsPrimitive`, `ToBytes`),
//! [`MiniFloatOps`] and the slice helpers, against the committed ml_dtypes
//! vectors and the scalar conversions.
// Operators on references are what is tested here.
#![allow(clippy::op_ref)]

#[macro_use]
mod common;

use common::*;
use mldtypes::cast;
use mldtypes::float::{FloatSliceExt, FloatVecExt, MiniFloat, MiniFloatOps};
use mldtypes::*;
use num_traits::AsPrimitive;

/// Every value of `T`, one per code.
fn all<T: MiniFloat>() -> Vec<T> {
    (0..T::FORMAT.code_count()).map(T::from_code).collect()
}

fn same<T: MiniFloat>(a: T, b: T) -> bool {
    a.code() == b.code()
}

#[test]
fn sum_and_product_accumulate_in_f32_and_round_once() {
    let x = bfloat16::from_f32(0.01);
    let xs = vec![x; 1000];
    // 1000 × 0.010009766 = 10.009766 in f32, 10.0 in bfloat16.
    assert_eq!(xs.iter().sum::<bfloat16>().to_f32(), 10.0);
    assert_eq!(xs.iter().copied().sum::<bfloat16>().to_f32(), 10.0);
    let ones = vec![bfloat16::ONE; 1000];
    assert_eq!(ones.iter().sum::<bfloat16>().to_f32(), 1000.0);
    assert_eq!(ones.into_iter().sum::<bfloat16>().to_f32(), 1000.0);
    // Rounding after every addition would stop at 256 (256 + 1 ties to 256).
    let mut stepwise = bfloat16::from_f32(0.0);
    for _ in 0..1000 {
        stepwise += bfloat16::ONE;
    }
    assert_eq!(stepwise.to_f32(), 256.0);

    let p = [bfloat16::from_f32(1.01); 100];
    let want = bfloat16::from_f32(p.iter().map(|v| v.to_f32()).product::<f32>());
    assert_eq!(p.iter().product::<bfloat16>(), want);
    assert_eq!(p.into_iter().product::<bfloat16>(), want);
    // 1.0078125^100 = 2.174...; bfloat16 2.171875.
    assert_eq!(want.to_f32(), 2.171875);

    macro_rules! each {
        ($t:ident) => {{
            // Every format: n ones sum to n as long as n is in range.
            let n = 6usize;
            let ones = vec![$t::ONE; n];
            assert_eq!(ones.iter().sum::<$t>(), $t::from_f32(n as f32));
            let halves = [$t::from_f32(0.5); 4];
            assert_eq!(halves.iter().sum::<$t>(), $t::from_f32(2.0));
            assert_eq!(halves.iter().product::<$t>(), $t::from_f32(0.0625));
            let empty: [$t; 0] = [];
            assert_eq!(empty.iter().product::<$t>(), $t::ONE);
        }};
    }
    all_types!(each);
    // A NaN anywhere makes the sum NaN.
    let with_nan = [float8_e4m3fn::ONE, float8_e4m3fn::NAN];
    assert!(with_nan.iter().sum::<float8_e4m3fn>().is_nan());
}

#[test]
fn display_prints_the_stored_value_as_f32_does() {
    assert_eq!(float8_e4m3fn::MAX.to_string(), "448");
    assert_eq!(float8_e4m3fn::from_f32(300.0).to_string(), "288");
    let b = bfloat16::from_f32(1e9);
    assert_eq!(b.to_f32(), 998_244_352.0);
    assert_eq!(b.to_string(), "998244350"); // f32's text of 998244352
    assert_eq!(b.shortest().to_string(), "1000000000");
    assert_eq!(bfloat16::from_f32(0.1).to_string(), "0.100097656");
    assert_eq!(format!("{:?}", bfloat16::ONE), "1.0");
    assert_eq!(format!("{:?}", bfloat16::MAX), "3.3895314e38");
    assert_eq!(format!("{:e}", bfloat16::from_f32(1500.0)), "1.504e3"); // 1504
    assert_eq!(format!("{:.3}", bfloat16::from_f32(0.1)), "0.100");
    assert_eq!(format!("{:+}", float8_e5m2::ONE), "+1");
    assert_eq!(format!("{:>6}", float8_e5m2::ONE), "     1");
    assert_eq!(float8_e5m2::NEG_INFINITY.to_string(), "-inf");
    assert_eq!(float8_e4m3fnuz::NAN.to_string(), "NaN");
    assert_eq!(float8_e8m0fnu::MAX.to_string(), 2f32.powi(127).to_string());
    macro_rules! each {
        ($t:ident) => {
            for x in all::<$t>() {
                let v = x.to_f32();
                assert_eq!(x.to_string(), v.to_string());
                assert_eq!(format!("{x:?}"), format!("{v:?}"));
                assert_eq!(format!("{x:e}"), format!("{v:e}"));
                assert_eq!(format!("{x:E}"), format!("{v:E}"));
                assert_eq!(format!("{x:.2}"), format!("{v:.2}"));
                // Both texts read back as the value.
                for text in [x.to_string(), x.shortest().to_string()] {
                    let y: $t = text.parse().unwrap();
                    assert!(
                        same(y, x) || (x.is_nan() && y.is_nan()) || (v == 0.0 && y.to_f32() == 0.0),
                        "{text}"
                    );
                }
            }
        };
    }
    all_types!(each);
}

#[test]
fn shortest_round_trip_text() {
    assert_eq!(bfloat16::from_f32(0.1).shortest().to_string(), "0.1");
    assert_eq!(format!("{:?}", bfloat16::from_f32(0.1).shortest()), "0.1");
    assert_eq!(float8_e4m3fn::MAX.shortest().to_string(), "450");
    assert_eq!(format!("{:.0}", float8_e4m3fn::MAX.shortest()), "448");
    assert_eq!(format!("{:?}", bfloat16::MAX.shortest()), "3.39e38");
    assert_eq!(format!("{:?}", float8_e8m0fnu::MIN.shortest()), "6e-39");
    assert_eq!(float8_e5m2::NEG_ZERO.shortest().to_string(), "-0");
    assert_eq!(float8_e4m3fn::NAN.shortest().to_string(), "NaN");
    assert_eq!(bfloat16::ONE.shortest().value(), bfloat16::ONE);
}

#[cfg(feature = "serde")]
#[test]
fn serde_json_round_trips_every_value_including_nan_and_infinities() {
    assert_eq!(serde_json::to_string(&bfloat16::NAN).unwrap(), "\"NaN\"");
    assert_eq!(
        serde_json::to_string(&bfloat16::INFINITY).unwrap(),
        "\"inf\""
    );
    assert_eq!(
        serde_json::to_string(&bfloat16::NEG_INFINITY).unwrap(),
        "\"-inf\""
    );
    assert_eq!(serde_json::to_string(&float8_e4m3fn::MAX).unwrap(), "448.0");
    assert_eq!(
        serde_json::to_string(&[bfloat16::from_f32(0.1), bfloat16::NAN]).unwrap(),
        "[0.100097656,\"NaN\"]"
    );
    assert!(serde_json::from_str::<bfloat16>("\"NaN\"")
        .unwrap()
        .is_nan());
    assert!(serde_json::from_str::<bfloat16>("\"nan\"")
        .unwrap()
        .is_nan());
    assert_eq!(
        serde_json::from_str::<bfloat16>("\"inf\"").unwrap(),
        bfloat16::INFINITY
    );
    assert_eq!(
        serde_json::from_str::<bfloat16>("\"-inf\"").unwrap(),
        bfloat16::NEG_INFINITY
    );
    assert!(serde_json::from_str::<float8_e4m3fn>("\"inf\"")
        .unwrap()
        .is_nan());
    assert_eq!(
        serde_json::from_str::<float8_e4m3fn>("464")
            .unwrap()
            .to_f32(),
        448.0
    );
    assert_eq!(
        serde_json::from_str::<float8_e4m3fn>("\"464\"")
            .unwrap()
            .to_f32(),
        448.0
    );
    assert_eq!(
        serde_json::from_str::<float8_e5m2>("-3").unwrap().to_f32(),
        -3.0
    );
    // serde_json writes a float NaN as null: read back as NaN.
    assert!(serde_json::from_str::<float8_e4m3fn>("null")
        .unwrap()
        .is_nan());
    let e = serde_json::from_str::<float4_e2m1fn>("null")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("float4_e2m1fn has no NaN") || e.contains("float4_e2m1fn"),
        "{e}"
    );
    let e = serde_json::from_str::<bfloat16>("\"abc\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bfloat16") && e.contains("abc"), "{e}");
    assert!(serde_json::from_str::<bfloat16>("true").is_err());
    assert_eq!(
        serde_json::from_str::<Option<bfloat16>>("null").unwrap(),
        None::<bfloat16>
    );
    macro_rules! each {
        ($t:ident) => {{
            let xs = all::<$t>();
            let text = serde_json::to_string(&xs).unwrap();
            let back: Vec<$t> = serde_json::from_str(&text).unwrap();
            for (x, y) in xs.iter().zip(&back) {
                if x.is_nan() {
                    assert!(y.is_nan());
                } else {
                    assert_eq!(y.to_f32().to_bits(), x.to_f32().to_bits(), "{text}");
                }
            }
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            for (x, j) in xs.iter().zip(v.as_array().unwrap()) {
                if x.is_finite() {
                    // The shortest f32 text: exact as an f32.
                    assert_eq!(j.as_f64().map(|v| v as f32), Some(x.to_f32()));
                } else {
                    assert!(j.is_string());
                }
            }
        }};
    }
    all_types!(each);
}

#[test]
fn const_constructors_match_ml_dtypes_vectors() {
    macro_rules! each {
        ($t:ident) => {{
            let name = stringify!($t);
            let (inputs, want) = load_f32_to(name);
            for (&bits, &w) in inputs.iter().zip(&want) {
                let got = $t::from_f32_const(f32::from_bits(bits));
                assert_eq!(got.code(), w as u32, "{name} {bits:#010x}");
            }
            let (inputs, _, exact) = load_f64_to(name);
            for (&bits, &e) in inputs.iter().zip(&exact) {
                let x = f64::from_bits(bits);
                let got = $t::from_f64_const(x);
                if $t::FORMAT.is_nan_code(e as u32) {
                    assert!(got.is_nan(), "{name} {x:e}");
                } else {
                    assert_eq!(got.code(), e as u32, "{name} {x:e}");
                }
                assert_eq!(got.code(), $t::from_f64(x).code(), "{name} {x:e}");
            }
            // And the runtime conversions on a sample of every float32.
            for bits in (0..=u32::MAX).step_by(65_521) {
                let x = f32::from_bits(bits);
                assert_eq!(
                    $t::from_f32_const(x).code(),
                    $t::from_f32(x).code(),
                    "{name} {bits:#x}"
                );
            }
        }};
    }
    all_types!(each);
    const SCALE: float8_e8m0fnu = float8_e8m0fnu::from_f32_const(0.25);
    assert_eq!(SCALE.to_bits(), 125);
    const E4: float8_e4m3fn = float8_e4m3fn::from_f64_const(464.0);
    assert_eq!(E4.to_f32(), 448.0);
}

#[test]
fn bytes_little_and_big_endian() {
    use num_traits::{FromBytes, ToBytes};
    assert_eq!(bfloat16::ONE.to_le_bytes(), [0x80, 0x3f]);
    assert_eq!(bfloat16::ONE.to_be_bytes(), [0x3f, 0x80]);
    assert_eq!(bfloat16::from_le_bytes([0x80, 0x3f]), bfloat16::ONE);
    assert_eq!(bfloat16::from_be_bytes([0xc0, 0x00]).to_f32(), -2.0);
    assert_eq!(float8_e4m3fn::MAX.to_le_bytes(), [0x7e]);
    assert_eq!(float4_e2m1fn::from_le_bytes([0xf7]).to_f32(), 6.0); // low 4 bits
    assert_eq!(ToBytes::to_le_bytes(&bfloat16::ONE), [0x80, 0x3f]);
    assert_eq!(
        <bfloat16 as FromBytes>::from_be_bytes(&[0x3f, 0x80]),
        bfloat16::ONE
    );
    macro_rules! each {
        ($t:ident) => {
            for x in all::<$t>() {
                assert!(same($t::from_le_bytes(x.to_le_bytes()), x));
                assert!(same($t::from_be_bytes(x.to_be_bytes()), x));
                assert!(same($t::from_ne_bytes(x.to_ne_bytes()), x));
                assert_eq!(x.to_le_bytes().as_slice(), bytemuck::bytes_of(&x));
            }
        };
    }
    all_types!(each);
}

#[test]
fn exact_from_u8_and_i8() {
    for n in 0..=u8::MAX {
        assert_eq!(bfloat16::from(n).to_f32(), n as f32);
    }
    for n in i8::MIN..=i8::MAX {
        assert_eq!(bfloat16::from(n).to_f32(), n as f32);
    }
}

#[test]
fn operators_by_reference_equal_operators_by_value() {
    macro_rules! each {
        ($t:ident) => {{
            let xs = all::<$t>();
            let step = (xs.len() / 40).max(1);
            for a in xs.iter().step_by(step) {
                for b in xs.iter().step_by(step) {
                    let (x, y) = (*a, *b);
                    for (r, v) in [
                        (a + b, x + y),
                        (x + b, x + y),
                        (a + y, x + y),
                        (a - b, x - y),
                        (a * b, x * y),
                        (x * b, x * y),
                        (a / b, x / y),
                        (a % b, x % y),
                    ] {
                        assert!(same(r, v) || (r.is_nan() && v.is_nan()));
                    }
                    let mut m = x;
                    m += b;
                    m -= b;
                    m *= b;
                    m /= b;
                    m %= b;
                    let mut n = x;
                    n += y;
                    n -= y;
                    n *= y;
                    n /= y;
                    n %= y;
                    assert!(same(m, n) || (m.is_nan() && n.is_nan()));
                }
                assert!(same(-a, -*a));
            }
        }};
    }
    all_types!(each);
}

#[test]
fn float_const_is_the_rounded_f64_constant() {
    use num_traits::FloatConst;
    assert_eq!(bfloat16::PI().to_f32(), 3.140625);
    assert_eq!(float8_e4m3fn::PI().to_f32(), 3.25);
    assert_eq!(float8_e8m0fnu::PI().to_f32(), 4.0);
    assert_eq!(float4_e2m1fn::E().to_f32(), 3.0);
    assert_eq!(float8_e5m2::TAU().to_f32(), 6.0);
    assert_eq!(
        bfloat16::SQRT_2(),
        bfloat16::from_f64(std::f64::consts::SQRT_2)
    );
}

/// `FloatCore` generic code over every format with a zero.
#[test]
fn float_core_for_every_format_with_zero() {
    use num_traits::float::FloatCore;
    fn check<T: FloatCore + MiniFloat>() {
        assert_eq!(T::one().to_f32(), 1.0);
        assert_eq!(T::zero().to_f32(), 0.0);
        assert_eq!(T::max_value().to_f64(), T::FORMAT.max_finite());
        assert_eq!(T::min_value().to_f64(), -T::FORMAT.max_finite());
        assert_eq!(T::epsilon().to_f64(), T::FORMAT.epsilon());
        assert_eq!(
            T::min_positive_value().to_f64(),
            T::FORMAT.min_positive_normal()
        );
        let x = T::from_f32(1.5);
        assert_eq!(FloatCore::floor(x).to_f32(), 1.0);
        assert_eq!(FloatCore::ceil(x).to_f32(), 2.0);
        assert_eq!(FloatCore::round(x).to_f32(), 2.0);
        assert_eq!(FloatCore::trunc(-x).to_f32(), -1.0);
        assert_eq!(FloatCore::fract(x).to_f32(), 0.5);
        assert_eq!(FloatCore::abs(-x).to_f32(), 1.5);
        assert_eq!(FloatCore::powi(x, 2).to_f32(), T::from_f32(2.25).to_f32());
        assert_eq!(FloatCore::signum(-x).to_f32(), -1.0);
        assert!(FloatCore::is_sign_negative(-x));
        assert_eq!(FloatCore::max(x, T::one()).to_f32(), 1.5);
        assert_eq!(FloatCore::min(x, T::one()).to_f32(), 1.0);
        assert_eq!(FloatCore::recip(T::from_f32(0.5)).to_f32(), 2.0);
        assert_eq!(
            FloatCore::integer_decode(x),
            FloatCore::integer_decode(1.5f32)
        );
        let inf = T::infinity();
        let nan = T::nan();
        if T::FORMAT.has_infinity() {
            assert!(FloatCore::is_infinite(inf) && inf > T::max_value());
            assert!(FloatCore::is_infinite(T::neg_infinity()));
        } else if T::FORMAT.has_nan() {
            assert!(FloatCore::is_nan(inf));
        } else {
            assert_eq!(inf, T::max_value());
        }
        if T::FORMAT.has_nan() {
            assert!(FloatCore::is_nan(nan));
        } else {
            assert_eq!(nan.to_f32(), 0.0); // −0, as ml_dtypes' float4/float6
        }
        assert_eq!(T::neg_zero().to_f32(), 0.0);
    }
    check::<bfloat16>();
    check::<float8_e3m4>();
    check::<float8_e4m3>();
    check::<float8_e4m3fn>();
    check::<float8_e4m3fnuz>();
    check::<float8_e4m3b11fnuz>();
    check::<float8_e5m2>();
    check::<float8_e5m2fnuz>();
    check::<float6_e2m3fn>();
    check::<float6_e3m2fn>();
    check::<float4_e2m1fn>();
    assert!(<float8_e4m3fn as FloatCore>::infinity().is_nan());
    assert_eq!(<float4_e2m1fn as FloatCore>::infinity(), float4_e2m1fn::MAX);
}

#[test]
fn as_primitive() {
    let x: f32 = bfloat16::from_f32(0.1).as_();
    assert_eq!(x.to_bits(), 0x3dcd_0000);
    let b: bfloat16 = 16_777_217i64.as_(); // 2^24 + 1: one rounding
    assert_eq!(b.to_f64(), 16_777_216.0);
    let b: bfloat16 = u128::MAX.as_();
    assert!(b.is_infinite());
    let i: i32 = float8_e4m3fn::from_f32(-3.75).as_();
    assert_eq!(i, -3);
    let u: u8 = float8_e5m2::MAX.as_();
    assert_eq!(u, 255); // saturates, as Rust's `as`
    let u: u32 = float8_e4m3fn::NAN.as_();
    assert_eq!(u, 0);
    let e: float8_e8m0fnu = f32::from_bits(0x0040_0001).as_();
    assert_eq!(e.to_bits(), 0x01); // as from_f32
    macro_rules! each {
        ($t:ident) => {
            for x in all::<$t>() {
                let f: f64 = x.as_();
                assert_eq!(f.to_bits(), x.to_f64().to_bits());
                let y: float8_e5m2 = x.as_();
                assert!(same(y, x.convert::<float8_e5m2>()));
                let z: bfloat16 = x.as_();
                assert!(same(z, x.convert::<bfloat16>()));
                let back: $t = x.to_f32().as_();
                assert!(same(back, x) || x.is_nan());
            }
        };
    }
    all_types!(each);
}

#[test]
fn mini_float_ops_generic_code() {
    fn check<T: MiniFloatOps>() {
        assert_eq!(T::ONE.to_f32(), 1.0);
        assert_eq!(T::MAX.to_f64(), T::FORMAT.max_finite());
        assert_eq!(T::ZERO.is_some(), T::FORMAT.has_zero);
        assert_eq!(T::NAN.is_some(), T::FORMAT.has_nan());
        assert_eq!(T::INFINITY.is_some(), T::FORMAT.has_infinity());
        if let Some(n) = T::NAN {
            assert!(n.is_nan() && !n.is_finite());
        }
        if let Some(i) = T::INFINITY {
            assert!(i.is_infinite() && i > T::MAX);
        }
        let two = T::ONE + T::ONE;
        assert_eq!(two.to_f32(), 2.0);
        assert_eq!((two * &two - T::ONE).to_f32(), T::from_f32(3.0).to_f32());
        assert_eq!([T::ONE, T::ONE].iter().sum::<T>(), two);
        assert!(T::MAX.next_up() >= T::MAX || T::MAX.next_up().is_nan());
        assert_eq!(T::MIN_POSITIVE.classify(), std::num::FpCategory::Normal);
        assert!(T::MAX.max(T::ONE) == T::MAX && T::MAX.min(T::ONE) == T::ONE);
    }
    check::<bfloat16>();
    check::<float8_e3m4>();
    check::<float8_e4m3>();
    check::<float8_e4m3fn>();
    check::<float8_e4m3fnuz>();
    check::<float8_e4m3b11fnuz>();
    check::<float8_e5m2>();
    check::<float8_e5m2fnuz>();
    check::<float8_e8m0fnu>();
    check::<float6_e2m3fn>();
    check::<float6_e3m2fn>();
    check::<float4_e2m1fn>();
}

#[test]
fn slice_and_vec_helpers_equal_the_scalar_conversions() {
    let inputs: Vec<f32> = (0..70_000u32)
        .map(|i| f32::from_bits(i.wrapping_mul(0x9e37_79b9)))
        .collect();
    let inputs64: Vec<f64> = inputs.iter().map(|&x| x as f64 * 1.000_000_1).collect();
    macro_rules! each {
        ($t:ident) => {{
            let v = Vec::<$t>::from_f32_slice(&inputs);
            for (x, y) in inputs.iter().zip(&v) {
                assert!(same(*y, $t::from_f32(*x)));
            }
            let v64 = Vec::<$t>::from_f64_slice(&inputs64);
            for (x, y) in inputs64.iter().zip(&v64) {
                assert!(same(*y, $t::from_f64(*x)));
            }
            let mut w = vec![$t::from_code(0); inputs.len()];
            w.convert_from_f32_slice(&inputs).unwrap();
            assert!(w.iter().zip(&v).all(|(a, b)| same(*a, *b)));
            w.convert_from_f64_slice(&inputs64).unwrap();
            assert!(w.iter().zip(&v64).all(|(a, b)| same(*a, *b)));
            let codes = all::<$t>();
            let f = codes.to_f32_vec();
            let d = codes.to_f64_vec();
            for ((x, a), b) in codes.iter().zip(&f).zip(&d) {
                assert_eq!(a.to_bits(), x.to_f32().to_bits());
                assert_eq!(b.to_bits(), x.to_f64().to_bits());
            }
            let mut f2 = vec![0f32; codes.len()];
            codes.convert_to_f32_slice(&mut f2).unwrap();
            assert_eq!(
                f.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                f2.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
            let mut d2 = vec![0f64; codes.len()];
            codes.convert_to_f64_slice(&mut d2).unwrap();
            assert_eq!(
                d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                d2.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(
                w.convert_from_f32_slice(&inputs[1..]),
                Err(cast::CastError::LengthMismatch {
                    src: inputs.len() - 1,
                    dst: inputs.len()
                })
            );
            assert!(codes.convert_to_f32_slice(&mut [0f32; 3]).is_err());
        }};
    }
    all_types!(each);
}

#[cfg(feature = "rayon")]
#[test]
fn convert_slice_par_equals_convert_slice() {
    let n = 600_000u32;
    let x: Vec<f32> = (0..n)
        .map(|i| f32::from_bits(i.wrapping_mul(0x0101_0101) ^ i))
        .collect();
    let mut a = vec![float8_e4m3fn::from_bits(0); x.len()];
    let mut b = a.clone();
    cast::convert_slice(&x, &mut a).unwrap();
    cast::convert_slice_par(&x, &mut b).unwrap();
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
    let mut c = b.clone();
    cast::convert_slice_par_with(&x, &mut c, cast::Overflow::Saturating).unwrap();
    let mut d = b.clone();
    cast::convert_slice_with(&x, &mut d, cast::Overflow::Saturating).unwrap();
    assert!(c.iter().zip(&d).all(|(p, q)| p.to_bits() == q.to_bits()));
    assert_eq!(
        cast::convert_slice_par(&x[1..], &mut b),
        Err(cast::CastError::LengthMismatch {
            src: x.len() - 1,
            dst: x.len()
        })
    );
}
