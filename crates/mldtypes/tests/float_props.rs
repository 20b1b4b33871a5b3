//! Exhaustive property tests of the float types over every code point (and
//! every pair of codes for the 8-bit and smaller formats).

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::num::FpCategory;

use mldtypes::float::core::decode_f64;
#[macro_use]
mod common;

use mldtypes::float::{MiniFloat, ParseErrorKind};
use mldtypes::*;

/// Every value of `T`, one per code.
fn all<T: MiniFloat>() -> Vec<T> {
    (0..T::FORMAT.code_count()).map(T::from_code).collect()
}

fn hash_of<T: Hash>(x: &T) -> u64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

#[test]
fn display_parses_back_for_every_code() {
    macro_rules! check {
        ($t:ident) => {
            for x in all::<$t>() {
                let sh = x.shortest();
                for text in [
                    format!("{x}"),
                    format!("{x:?}"),
                    format!("{x:e}"),
                    format!("{x:E}"),
                    format!("{sh}"),
                    format!("{sh:?}"),
                    format!("{sh:e}"),
                    format!("{sh:E}"),
                ] {
                    let y: $t = text.parse().unwrap();
                    if x.is_nan() {
                        assert!(y.is_nan(), "{} {text}", stringify!($t));
                    } else {
                        assert_eq!(y.to_bits(), x.to_bits(), "{} {text}", stringify!($t));
                    }
                }
            }
        };
    }
    all_types!(check);
}

/// `shortest()` is the shortest: dropping the last significant digit (rounding
/// either way) never parses back to the same value.
#[test]
fn display_is_shortest() {
    macro_rules! check {
        ($t:ident) => {
            for x in all::<$t>() {
                if !x.is_finite() || x.to_f32() == 0.0 {
                    continue;
                }
                let e = format!("{:e}", x.abs().shortest());
                let (m, exp) = e.split_once('e').unwrap();
                let digits: String = m.chars().filter(|c| *c != '.').collect();
                let n = digits.len();
                if n == 1 {
                    continue;
                }
                let d: u64 = digits[..n - 1].parse().unwrap();
                let exp: i32 = exp.parse().unwrap();
                for c in [d, d + 1] {
                    let text = format!("{c}e{}", exp - (n as i32 - 2));
                    let y: $t = text.parse().unwrap();
                    assert_ne!(y, x.abs(), "{} {x} {text}", stringify!($t));
                }
            }
        };
    }
    all_types!(check);
}

#[test]
fn display_examples() {
    // The shortest round-trip text (`Display` itself prints the f32 value;
    // see tests/float_api.rs).
    assert_eq!(bfloat16::from_f32(0.1).shortest().to_string(), "0.1");
    assert_eq!(format!("{:?}", bfloat16::from_f32(0.1).shortest()), "0.1");
    assert_eq!(format!("{:?}", bfloat16::ONE.shortest()), "1.0");
    assert_eq!(bfloat16::ONE.shortest().to_string(), "1");
    assert_eq!(
        format!("{:e}", bfloat16::from_f32(1500.0).shortest()),
        "1.5e3"
    );
    assert_eq!(
        format!("{:E}", bfloat16::from_f32(1500.0).shortest()),
        "1.5E3"
    );
    assert_eq!(
        format!("{:.3}", bfloat16::from_f32(0.1).shortest()),
        "0.100"
    );
    assert_eq!(format!("{:+}", float8_e5m2::ONE.shortest()), "+1");
    assert_eq!(format!("{:>6}", float8_e5m2::ONE.shortest()), "     1");
    assert_eq!(format!("{:06.2}", (-float8_e5m2::ONE).shortest()), "-01.00");
    assert_eq!(float8_e5m2::NEG_ZERO.shortest().to_string(), "-0");
    assert_eq!(format!("{:?}", float8_e5m2::NEG_ZERO.shortest()), "-0.0");
    assert_eq!(float8_e5m2::INFINITY.shortest().to_string(), "inf");
    assert_eq!(float8_e5m2::NEG_INFINITY.shortest().to_string(), "-inf");
    assert_eq!(float8_e4m3fn::NAN.shortest().to_string(), "NaN");
    assert_eq!(float8_e4m3fn::MAX.shortest().to_string(), "450"); // 450 reads back as 448
    assert_eq!(format!("{:.0}", float8_e4m3fn::MAX.shortest()), "448");
    assert_eq!(
        float8_e4m3fn::MIN_POSITIVE_SUBNORMAL.shortest().to_string(),
        "0.002"
    );
    assert_eq!(
        format!("{:?}", float8_e4m3fn::MIN_POSITIVE_SUBNORMAL.shortest()),
        "0.002"
    );
    assert_eq!(format!("{:?}", bfloat16::MAX.shortest()), "3.39e38");
    assert_eq!(
        format!("{:?}", bfloat16::MIN_POSITIVE.shortest()),
        "1.18e-38"
    );
    assert_eq!(float4_e2m1fn::MAX.shortest().to_string(), "6");
    assert_eq!(float8_e8m0fnu::MAX.shortest().to_string().len(), 39);
    assert_eq!(format!("{:?}", float8_e8m0fnu::MIN.shortest()), "6e-39");
}

#[test]
fn parse_rounds_from_the_decimal_text() {
    let p = |s: &str| s.parse::<float8_e4m3fn>().unwrap().to_bits();
    assert_eq!(p("464"), 0x7e);
    assert_eq!(p("464.0000000000000000001"), 0x7f);
    assert_eq!(p("463.9999999999999999999"), 0x7e);
    assert_eq!(p("-464.0000000000000000001"), 0xff);
    assert_eq!(p("1.0625"), 0x38); // tie between 1 and 1.125 → even (1)
    assert_eq!(p("1.0625000000000000000000000000000001"), 0x39);
    assert_eq!(p("1.1875"), 0x3a); // tie between 1.125 and 1.25 → even (1.25)
    assert_eq!(p("0x1.1p0"), 0x38);
    assert_eq!(p("0x1.10000000000000000001p0"), 0x39);
    assert_eq!(p("0x1.2P+0"), 0x39);
    assert_eq!(p("0xAp-1"), 0x4a); // 5
    assert_eq!(p("inf"), 0x7f);
    assert_eq!(p("-Infinity"), 0xff);
    assert_eq!(p("NaN"), 0x7f);
    assert_eq!(p("1e-400"), 0x00);
    assert_eq!(p("-1e-400"), 0x80);
    assert_eq!(p("1e999999999999999999999"), 0x7f);
    assert_eq!(p("0.0"), 0x00);
    assert_eq!(p(".5"), 0x30);
    assert_eq!(p("2."), 0x40);
    let bf = |s: &str| s.parse::<bfloat16>().unwrap().to_bits();
    // 1 + 2^-8 is the tie between 1 and 1 + 2^-7; f64 parsing of a long
    // decimal just above it must not collapse onto the tie.
    assert_eq!(bf("1.00390625"), 0x3f80);
    assert_eq!(bf("1.003906250000000000000000000001"), 0x3f81);
    assert_eq!(bf("1.003906249999999999999999999999"), 0x3f80);
    assert_eq!(bf("-0"), 0x8000);
    // e8m0: ties away from zero, 0 → NaN, tiny → 2^-127.
    let e = |s: &str| s.parse::<float8_e8m0fnu>().unwrap().to_bits();
    assert_eq!(e("1.5"), 0x80);
    assert_eq!(e("1.4999999999999999999999"), 0x7f);
    assert_eq!(e("0"), 0xff);
    assert_eq!(e("1e-300"), 0x00);
    assert_eq!(e("-1"), 0xff);
    // fnuz: −0 is +0.
    assert_eq!("-0".parse::<float8_e4m3fnuz>().unwrap().to_bits(), 0);
    // float4: ±inf saturate, as conversions do.
    assert_eq!("-inf".parse::<float4_e2m1fn>().unwrap().to_bits(), 0xf);
}

/// Midpoints between adjacent codes, written out exactly in decimal, round
/// to even; a digit beyond them decides the direction.
#[test]
fn parse_exact_decimal_midpoints() {
    fn exact_decimal(x: f64) -> String {
        let s = format!("{x:.1100}");
        let s = s.trim_end_matches('0');
        s.trim_end_matches('.').to_string()
    }
    macro_rules! check {
        ($t:ident) => {{
            let f = <$t as MiniFloat>::FORMAT;
            for code in 0..f.max_code() {
                let (a, b) = (decode_f64(&f, code), decode_f64(&f, code + 1));
                let mid = exact_decimal((a + b) / 2.0);
                let tie = if f.man_bits == 0 || code & 1 == 1 {
                    code + 1
                } else {
                    code
                };
                let p = |s: &str| <$t as MiniFloat>::code(s.parse::<$t>().unwrap());
                assert_eq!(p(&mid), tie, "{} {mid}", stringify!($t));
                let dot = if mid.contains('.') { "" } else { "." };
                assert_eq!(p(&format!("{mid}{dot}00000000000000000000001")), code + 1);
                let last = mid.len() - 1;
                let d = mid.as_bytes()[last] - b'0';
                if d > 0 {
                    let below = format!("{}{}{dot}99999999999999999999", &mid[..last], d - 1);
                    assert_eq!(p(&below), code, "{} {below}", stringify!($t));
                }
            }
        }};
    }
    all_types!(check);
}

#[test]
fn parse_errors_are_typed() {
    for junk in [
        "", " ", "1 ", " 1", "1,5", "1.2.3", "e5", "1e", "1e+", "--1", "+-1", "0x", "0xg", "0x1p",
        "0x1.2.3", "0x1pz", "nanx", "infinite", "١", "1_000", "0b101", "∞",
    ] {
        let r = junk.parse::<bfloat16>();
        let err = r.expect_err(junk);
        let kind = if junk.is_empty() {
            ParseErrorKind::Empty
        } else {
            ParseErrorKind::Invalid
        };
        assert_eq!(err.kind(), kind, "{junk:?}");
        assert!(!err.to_string().is_empty());
        assert!(junk.parse::<float4_e2m1fn>().is_err());
    }
}

#[test]
fn classification_agrees_with_the_decoded_value() {
    macro_rules! check {
        ($t:ident) => {
            for x in all::<$t>() {
                let v = x.to_f64();
                let tiny = $t::MIN_POSITIVE.to_f64();
                assert_eq!(x.is_nan(), v.is_nan());
                assert_eq!(x.is_infinite(), v.is_infinite());
                assert_eq!(x.is_finite(), v.is_finite());
                let cat = if v.is_nan() {
                    FpCategory::Nan
                } else if v.is_infinite() {
                    FpCategory::Infinite
                } else if v == 0.0 {
                    FpCategory::Zero
                } else if v.abs() < tiny {
                    FpCategory::Subnormal
                } else {
                    FpCategory::Normal
                };
                assert_eq!(x.classify(), cat, "{} {:#x}", stringify!($t), x.to_bits());
                assert_eq!(x.is_normal(), cat == FpCategory::Normal);
                assert_eq!(x.is_subnormal(), cat == FpCategory::Subnormal);
                assert_eq!(x.is_sign_negative(), v.is_sign_negative());
                assert_eq!(x.is_sign_positive(), !v.is_sign_negative());
                assert_eq!(f32::from(x).to_bits(), x.to_f32().to_bits());
                assert_eq!(f64::from(x).to_bits(), v.to_bits());
            }
        };
    }
    all_types!(check);
}

#[test]
fn constants() {
    macro_rules! check {
        ($t:ident) => {{
            let f = $t::FORMAT;
            assert_eq!($t::MAX.to_f64(), f.max_finite());
            assert_eq!(
                $t::MIN.to_f64(),
                if f.signed {
                    -f.max_finite()
                } else {
                    f.min_positive_normal()
                }
            );
            assert_eq!($t::MIN_POSITIVE.to_f64(), f.min_positive_normal());
            assert_eq!(
                $t::MIN_POSITIVE_SUBNORMAL.to_f64(),
                f.min_positive_subnormal()
            );
            assert_eq!($t::EPSILON.to_f64(), f.epsilon());
            assert_eq!($t::ONE.to_f64(), 1.0);
            assert_eq!(<$t as num_traits::One>::one(), $t::ONE);
            assert_eq!(<$t as num_traits::Bounded>::max_value(), $t::MAX);
            assert_eq!(<$t as num_traits::Bounded>::min_value(), $t::MIN);
            assert_eq!(($t::ONE + $t::EPSILON).to_f64(), 1.0 + f.epsilon());
            assert_eq!($t::ONE.next_up().to_f64(), 1.0 + f.epsilon());
            // Every value lies within [MIN, MAX].
            for x in all::<$t>() {
                if x.is_finite() {
                    assert!(x >= $t::MIN && x <= $t::MAX);
                    assert!(x.to_f64() == 0.0 || x.abs() >= $t::MIN_POSITIVE_SUBNORMAL);
                }
            }
        }};
    }
    all_types!(check);
    assert_eq!(bfloat16::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(bfloat16::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert!(bfloat16::NAN.is_nan() && float8_e4m3fn::NAN.is_nan());
    assert_eq!(float8_e4m3fn::NAN.to_bits(), 0x7f);
    assert_eq!(float8_e4m3fnuz::NAN.to_bits(), 0x80);
    assert_eq!(float8_e8m0fnu::NAN.to_bits(), 0xff);
    assert_eq!(float8_e5m2::NEG_ZERO.to_bits(), 0x80);
    assert_eq!(float6_e2m3fn::NEG_ZERO.to_bits(), 0x20);
    assert_eq!(float4_e2m1fn::ZERO.to_bits(), 0);
    assert_eq!(float8_e4m3b11fnuz::MAX.to_f32(), 30.0);
    assert_eq!(float8_e8m0fnu::EPSILON.to_f32(), 1.0);
    assert_eq!(float4_e2m1fn::EPSILON.to_f32(), 0.5);
    assert_eq!(float8_e8m0fnu::MIN.to_f64(), 2f64.powi(-127));
    assert_eq!(
        float8_e8m0fnu::MIN_POSITIVE_SUBNORMAL.to_f64(),
        2f64.powi(-127)
    );
}

#[test]
fn ordering_and_equality_agree_with_f32() {
    macro_rules! check {
        ($t:ident) => {{
            let xs = all::<$t>();
            let step = if xs.len() > 256 { 97 } else { 1 };
            for a in xs.iter().step_by(step) {
                for b in &xs {
                    let (fa, fb) = (a.to_f32(), b.to_f32());
                    assert_eq!(a.partial_cmp(b), fa.partial_cmp(&fb));
                    assert_eq!(a == b, fa == fb);
                    if a == b {
                        assert_eq!(hash_of(a), hash_of(b));
                    }
                    if !a.is_nan() && !b.is_nan() {
                        let tc = a.total_cmp(b);
                        assert_eq!(tc, fa.total_cmp(&fb), "{} {a:?} {b:?}", stringify!($t));
                    }
                }
            }
        }};
    }
    all_types!(check);
    // NaN ordering in total_cmp: negative NaN first, positive NaN last.
    assert_eq!(
        float8_e4m3fnuz::NAN.total_cmp(&float8_e4m3fnuz::MIN),
        Ordering::Less
    );
    assert_eq!(
        float8_e4m3fn::NAN.total_cmp(&float8_e4m3fn::MAX),
        Ordering::Greater
    );
    assert_eq!(
        (-float8_e4m3fn::NAN).total_cmp(&float8_e4m3fn::MIN),
        Ordering::Less
    );
    assert_eq!(
        float8_e5m2::NEG_ZERO.total_cmp(&float8_e5m2::ZERO),
        Ordering::Less
    );
    assert_eq!(float8_e5m2::NEG_ZERO, float8_e5m2::ZERO);
}

#[test]
fn next_up_and_down_step_to_the_adjacent_value() {
    macro_rules! check {
        ($t:ident) => {{
            let xs = all::<$t>();
            let mut sorted: Vec<$t> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
            sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
            sorted.dedup_by(|a, b| a == b);
            for x in xs {
                let up = x.next_up();
                let down = x.next_down();
                if x.is_nan() {
                    assert!(up.is_nan() && down.is_nan());
                    continue;
                }
                let i = sorted.partition_point(|y| y < &x);
                assert!(sorted[i] == x);
                match sorted.get(i + 1) {
                    Some(&n) => assert!(up == n, "{} up {x:?} {up:?}", stringify!($t)),
                    None if $t::FORMAT.has_infinity() => assert_eq!(up.to_bits(), x.to_bits()),
                    None if $t::FORMAT.has_nan() => assert!(up.is_nan()),
                    None => assert_eq!(up.to_bits(), x.to_bits()),
                }
                match i.checked_sub(1).map(|j| sorted[j]) {
                    Some(p) => assert!(down == p, "{} down {x:?} {down:?}", stringify!($t)),
                    None if $t::FORMAT.has_infinity() => assert_eq!(down.to_bits(), x.to_bits()),
                    None if $t::FORMAT.has_nan() => assert!(down.is_nan()),
                    None => assert_eq!(down.to_bits(), x.to_bits()),
                }
            }
        }};
    }
    all_types!(check);
    // IEEE sign conventions at zero.
    assert_eq!(
        (-float8_e5m2::MIN_POSITIVE_SUBNORMAL).next_up().to_bits(),
        0x80
    );
    assert_eq!(
        float8_e5m2::MIN_POSITIVE_SUBNORMAL.next_down().to_bits(),
        0x00
    );
    assert_eq!(float8_e4m3fnuz::ZERO.next_down().to_bits(), 0x81);
    assert_eq!(float8_e5m2::MAX.next_up(), float8_e5m2::INFINITY);
}

#[test]
fn sign_operations() {
    macro_rules! check {
        ($t:ident) => {
            for x in all::<$t>() {
                let v = x.to_f32();
                let n = -x;
                let a = x.abs();
                if x.is_nan() {
                    assert!(n.is_nan() && a.is_nan() && x.signum().is_nan());
                    continue;
                }
                if $t::FORMAT.signed {
                    assert_eq!(n.to_f32(), -v);
                    assert_eq!((-n).to_bits(), x.to_bits());
                } else {
                    assert!(n.is_nan());
                }
                assert_eq!(a.to_f32(), v.abs());
                assert_eq!(
                    x.signum().to_f32(),
                    if $t::FORMAT.signed { v.signum() } else { 1.0 }
                );
                for s in [$t::ONE, $t::MIN] {
                    let c = x.copysign(s);
                    let want = $t::from_f32(v.copysign(s.to_f32()));
                    assert_eq!(
                        c.to_bits(),
                        want.to_bits(),
                        "{} {x:?} {s:?}",
                        stringify!($t)
                    );
                }
                assert_eq!(
                    x.max($t::NAN_OR_MIN).to_f32(),
                    v.max($t::NAN_OR_MIN.to_f32())
                );
            }
        };
    }
    trait NanOrMin {
        const NAN_OR_MIN: Self;
    }
    macro_rules! nan_or_min {
        ($t:ident) => {
            impl NanOrMin for $t {
                const NAN_OR_MIN: Self = $t::MIN;
            }
        };
    }
    all_types!(nan_or_min);
    all_types!(check);
    assert_eq!(
        float8_e4m3fnuz::ZERO
            .copysign(-float8_e4m3fnuz::ONE)
            .to_bits(),
        0
    );
}

/// Arithmetic on every pair of values equals `f32` arithmetic rounded
/// once (NaN results are compared as NaN: their sign is the platform's).
#[test]
fn arithmetic_on_all_pairs_is_f32_rounded_once() {
    macro_rules! check {
        ($t:ident) => {{
            if $t::FORMAT.bits() <= 8 {
                let xs = all::<$t>();
                for &a in &xs {
                    for &b in &xs {
                        let (fa, fb) = (a.to_f32(), b.to_f32());
                        let cases = [
                            (a + b, fa + fb),
                            (a - b, fa - fb),
                            (a * b, fa * fb),
                            (a / b, fa / fb),
                            (a % b, fa % fb),
                        ];
                        for (got, want) in cases {
                            let want = $t::from_f32(want);
                            if want.is_nan() {
                                assert!(got.is_nan());
                            } else {
                                assert_eq!(
                                    got.to_bits(),
                                    want.to_bits(),
                                    "{} {a:?} {b:?}",
                                    stringify!($t)
                                );
                            }
                        }
                        let mut c = a;
                        c += b;
                        c -= b;
                        c *= b;
                        c /= b;
                        c %= b;
                        let want = $t::from_f32(
                            $t::from_f32(
                                $t::from_f32(
                                    $t::from_f32($t::from_f32(fa + fb).to_f32() - fb).to_f32() * fb,
                                )
                                .to_f32()
                                    / fb,
                            )
                            .to_f32()
                                % fb,
                        );
                        assert!(c.to_bits() == want.to_bits() || (c.is_nan() && want.is_nan()));
                    }
                }
            }
        }};
    }
    all_types!(check);
    // bfloat16 on a sample of pairs.
    let xs = all::<bfloat16>();
    for a in xs.iter().step_by(251) {
        for b in xs.iter().step_by(7) {
            let want = bfloat16::from_f32(a.to_f32() * b.to_f32());
            let got = *a * *b;
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
        }
    }
    assert_eq!((bfloat16::from_f32(256.0) + bfloat16::ONE).to_f32(), 256.0);
    let v: Vec<float8_e5m2> = [1.0f32, 2.0, 3.0]
        .iter()
        .map(|&x| float8_e5m2::from_f32(x))
        .collect();
    assert_eq!(v.iter().copied().sum::<float8_e5m2>().to_f32(), 6.0);
    assert_eq!(v.iter().copied().product::<float8_e5m2>().to_f32(), 6.0);
}

#[test]
fn num_traits_conversions_round_once() {
    use num_traits::{Float, FromPrimitive, NumCast, ToPrimitive, Zero};
    // 2^60 + 2^52 is the tie between 2^60 and 2^60 + 2^53 in bfloat16;
    // one more makes it round up. Through f64 the +1 would be lost.
    let tie = (1u64 << 60) + (1u64 << 52);
    assert_eq!(bfloat16::from_u64(tie).unwrap().to_f64(), 2f64.powi(60));
    assert_eq!(
        bfloat16::from_u64(tie + 1).unwrap().to_f64(),
        2f64.powi(60) + 2f64.powi(53)
    );
    assert_eq!(
        <bfloat16 as NumCast>::from(tie + 1).unwrap().to_f64(),
        2f64.powi(60) + 2f64.powi(53)
    );
    assert_eq!(
        bfloat16::from_i128(-((1i128 << 100) + (1i128 << 92) + 1))
            .unwrap()
            .to_f64(),
        -(2f64.powi(100) + 2f64.powi(93))
    );
    assert!(bfloat16::from_u128(u128::MAX).unwrap().is_infinite()); // rounds to 2^128
    assert_eq!(float8_e4m3fn::from_i64(464).unwrap().to_f32(), 448.0);
    assert!(float8_e4m3fn::from_i64(465).unwrap().is_nan());
    assert_eq!(
        <float8_e5m2 as NumCast>::from(0.3f64).unwrap().to_f64(),
        0.3125
    );
    assert_eq!(float8_e5m2::from_f32(-3.5).to_i64(), Some(-3));
    assert_eq!(float8_e5m2::INFINITY.to_i64(), None);
    assert_eq!(float8_e8m0fnu::MAX.to_u128(), Some(1u128 << 127));
    assert!(float8_e4m3fn::ZERO.is_zero() && float8_e4m3fnuz::zero().is_zero());
    assert!(Float::is_nan(<bfloat16 as Float>::nan()));
    assert_eq!(Float::sqrt(bfloat16::from_f32(2.0)).to_f32(), 1.4140625);
    assert_eq!(Float::floor(float8_e4m3::from_f32(-1.5)).to_f32(), -2.0);
    assert_eq!(<float8_e3m4 as Float>::epsilon().to_f32(), 0.0625);
    assert_eq!(
        <float8_e5m2 as num_traits::Num>::from_str_radix("1.5", 10)
            .unwrap()
            .to_f32(),
        1.5
    );
    assert!(<float8_e5m2 as num_traits::Num>::from_str_radix("1", 16).is_err());
}

#[test]
fn saturating_conversions() {
    macro_rules! check {
        ($t:ident) => {{
            let max = $t::MAX;
            for x in [f32::INFINITY, f32::MAX] {
                assert_eq!($t::from_f32_saturating(x).to_bits(), max.to_bits());
                assert_eq!($t::from_f64_saturating(x as f64).to_bits(), max.to_bits());
                assert_eq!($t::from_f64_saturating(1e300).to_bits(), max.to_bits());
                if $t::FORMAT.signed {
                    assert_eq!($t::from_f32_saturating(-x).to_bits(), $t::MIN.to_bits());
                }
            }
            if $t::FORMAT.has_nan() {
                assert!($t::from_f32_saturating(f32::NAN).is_nan());
                assert!($t::from_f64_saturating(f64::NAN).is_nan());
            }
            // Non-saturating overflow follows ml_dtypes.
            let o = $t::from_f32(f32::MAX);
            if $t::FORMAT.has_infinity() {
                assert!(o.is_infinite());
            } else if $t::FORMAT.has_nan() {
                assert!(o.is_nan());
            } else {
                assert_eq!(o.to_bits(), max.to_bits());
            }
        }};
    }
    all_types!(check);
}

#[test]
fn serde_bytemuck_and_half_interop() {
    macro_rules! check {
        ($t:ident) => {
            for x in all::<$t>() {
                let j = serde_json::to_string(&x).unwrap();
                if x.is_finite() {
                    let y: $t = serde_json::from_str(&j).unwrap();
                    assert_eq!(y.to_bits(), x.to_bits(), "{} {j}", stringify!($t));
                }
                let bytes = bytemuck::bytes_of(&x);
                assert_eq!(bytes.len(), std::mem::size_of::<$t>());
                let y: $t = bytemuck::pod_read_unaligned(bytes);
                assert_eq!(y.to_bits(), x.to_bits());
            }
        };
    }
    all_types!(check);
    let y: float8_e4m3fn = serde_json::from_str("464").unwrap();
    assert_eq!(y.to_f32(), 448.0);
    let y: bfloat16 = serde_json::from_str("-2").unwrap();
    assert_eq!(y.to_f32(), -2.0);
    for x in all::<bfloat16>() {
        let h: half::bf16 = x.into();
        assert_eq!(h.to_bits(), x.to_bits());
        assert_eq!(bfloat16::from(h).to_bits(), x.to_bits());
        if !x.is_nan() {
            assert_eq!(h.to_f32(), x.to_f32());
        }
    }
    assert_eq!(std::mem::size_of::<bfloat16>(), 2);
    assert_eq!(std::mem::size_of::<float4_e2m1fn>(), 1);
}

#[test]
fn complex_pairs() {
    let z = complex32::from_f32_pair(1.5, -2.0);
    assert_eq!(std::mem::size_of::<complex32>(), 4);
    assert_eq!(std::mem::size_of::<bcomplex32>(), 4);
    assert_eq!(bytemuck::bytes_of(&z), [0x00, 0x3e, 0x00, 0xc0]);
    assert_eq!((z + z).to_f32_pair(), (3.0, -4.0));
    assert_eq!((z - z).to_f32_pair(), (0.0, 0.0));
    assert_eq!((z * z.conj()).to_f32_pair(), (6.25, 0.0));
    assert_eq!((z / z).to_f32_pair(), (1.0, 0.0));
    assert_eq!((-z).to_f32_pair(), (-1.5, 2.0));
    assert_eq!(z.to_string(), "(1.5-2j)");
    let b = bcomplex32::from((3.0, 4.0));
    assert_eq!(b.norm_sqr(), 25.0);
    let mut c = b;
    c *= b;
    assert_eq!(<(f32, f32)>::from(c), (-7.0, 24.0));
    c /= b;
    assert_eq!(c, b);
    c += b;
    c -= b;
    assert_eq!(c, b);
    assert_eq!(format!("{b:?}"), "(3.0+4.0j)");
}
