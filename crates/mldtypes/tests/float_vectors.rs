//! Every float entry of the ml_dtypes 0.6.0 reference vectors
//! (`tests/vectors/formats/`, written by `tools/gen_vectors.py`), compared
//! with the scalar core and the typed API.

#[macro_use]
mod common;

use std::num::FpCategory;

use common::*;
use mldtypes::float::core::{convert, decode_f32, decode_f64, encode_f32, encode_f64};
use mldtypes::float::MiniFloat;
use mldtypes::format::{self, Format, Overflow::NonSaturating};
use mldtypes::*;

fn fmt(name: &str) -> Format {
    *format::ALL.iter().find(|f| f.name == name).unwrap()
}

/// float8_e8m0fnu from a float32 subnormal in (2^-127, 1.5·2^-127), bits
/// `0x00400001`–`0x005fffff`: ml_dtypes 0.6.0 (and PyTorch) give `0x01`
/// (2^-126), which `encode_f32` follows, though 2^-127 (`0x00`) is nearer;
/// `encode_f64` of the same value rounds to nearest.
fn e8m0_subnormal_round_up(name: &str, x: f32) -> bool {
    name == "float8_e8m0fnu" && (0x0040_0001..=0x005f_ffff).contains(&x.to_bits())
}

/// Checks an input of that range: ml_dtypes' value `ml` is `0x01`, `got`
/// equals it, and the float64 encoder gives the nearest value `0x00`.
fn check_e8m0_round_up(x: f32, ml: u32, got: u32) {
    let f = format::FLOAT8_E8M0FNU;
    let (lo, mid) = (2f64.powi(-127), 1.5 * 2f64.powi(-127));
    assert!(lo < x as f64 && (x as f64) < mid, "{x:e}");
    assert_eq!(ml, 0x01, "ml_dtypes rounds {:#010x} up", x.to_bits());
    assert_eq!(got, 0x01, "{:#010x}", x.to_bits());
    assert_eq!(encode_f64(&f, x as f64, NonSaturating), 0x00);
}

#[test]
fn every_code_point_value_class_and_sign() {
    let mut compared = 0usize;
    for name in FORMATS {
        let f = fmt(name);
        let c = load_codes(name);
        assert_eq!(c.f32_bits.len() as u32, f.code_count());
        for code in 0..f.code_count() {
            let i = code as usize;
            assert_eq!(
                decode_f32(&f, code).to_bits(),
                c.f32_bits[i],
                "{name} {code:#x}"
            );
            assert_eq!(
                decode_f64(&f, code).to_bits(),
                c.f64[i].to_bits(),
                "{name} {code:#x}"
            );
            compared += 2;
        }
    }
    macro_rules! typed {
        ($t:ident) => {{
            let c = load_codes(stringify!($t));
            for (i, (&bits, (&class, &sign))) in c
                .f32_bits
                .iter()
                .zip(c.class.iter().zip(&c.sign))
                .enumerate()
            {
                let x = <$t as MiniFloat>::from_code(i as u32);
                assert_eq!(x.to_f32().to_bits(), bits);
                assert_eq!(f32::from(x).to_bits(), bits);
                assert_eq!(x.to_f64().to_bits(), c.f64[i].to_bits());
                let want = match class {
                    CLASS_ZERO => FpCategory::Zero,
                    CLASS_SUBNORMAL => FpCategory::Subnormal,
                    CLASS_NORMAL => FpCategory::Normal,
                    CLASS_INF => FpCategory::Infinite,
                    CLASS_NAN => FpCategory::Nan,
                    _ => unreachable!(),
                };
                assert_eq!(x.classify(), want, "{} {i:#x}", stringify!($t));
                assert_eq!(x.is_nan(), class == CLASS_NAN);
                assert_eq!(x.is_sign_negative(), sign == 1, "{} {i:#x}", stringify!($t));
                compared += 3;
            }
        }};
    }
    all_types!(typed);
    println!("code-point entries compared: {compared}");
}

#[test]
fn f32_to_every_format() {
    let mut compared = 0usize;
    let mut round_ups = 0usize;
    let mut float16_nans = 0usize;
    for name in FORMATS {
        let f = fmt(name);
        let (inputs, want) = load_f32_to(name);
        assert!(inputs.len() > 700_000);
        for (&bits, &w) in inputs.iter().zip(&want) {
            let x = f32::from_bits(bits);
            let got = encode_f32(&f, x, NonSaturating);
            if e8m0_subnormal_round_up(name, x) {
                check_e8m0_round_up(x, w as u32, got);
                round_ups += 1;
            }
            // Bit for bit, NaN payloads of float16 included.
            assert_eq!(got, w as u32, "{name} {bits:#010x}");
            compared += 1;
            float16_nans += (name == "float16" && x.is_nan()) as usize;
        }
    }
    // Every probe of the range is counted by the generator's summary.
    let summary = load_json("summary");
    assert_eq!(
        summary["float8_e8m0fnu_f32_subnormal_deviations"].as_u64(),
        Some(round_ups as u64)
    );
    assert!(round_ups > 0);
    assert!(float16_nans > 100, "{float16_nans}");
    macro_rules! typed {
        ($t:ident) => {{
            let name = stringify!($t);
            let (inputs, want) = load_f32_to(name);
            for (&bits, &w) in inputs.iter().zip(&want) {
                let x = f32::from_bits(bits);
                let got = <$t as MiniFloat>::code($t::from_f32(x));
                if e8m0_subnormal_round_up(name, x) {
                    check_e8m0_round_up(x, w as u32, got);
                }
                assert_eq!(got, w as u32, "{name} {bits:#010x}");
                compared += 1;
            }
        }};
    }
    all_types!(typed);
    println!("float32 → format entries compared: {compared} (float16 NaN probes: {float16_nans})");
    println!("float8_e8m0fnu subnormal probes rounded up as ml_dtypes does: {round_ups}");
}

/// `from_f64` is correctly rounded in one step: it equals the exact oracle
/// everywhere. ml_dtypes' `astype` from float64 rounds through float32;
/// that route is what `encode_f32(x as f32)` computes, and it equals
/// ml_dtypes on every probe.
#[test]
fn f64_to_every_format() {
    let mut compared = 0usize;
    let mut deviations = Vec::new();
    for name in FORMATS {
        let f = fmt(name);
        let (inputs, ml, exact) = load_f64_to(name);
        let mut dev = 0;
        for ((&bits, &m), &e) in inputs.iter().zip(&ml).zip(&exact) {
            let x = f64::from_bits(bits);
            let got = encode_f64(&f, x, NonSaturating);
            if f.is_nan_code(e as u32) {
                assert!(f.is_nan_code(got), "{name} {x:e}");
            } else {
                assert_eq!(got, e as u32, "{name} {x:e} ({bits:#018x})");
            }
            // NumPy converts float64 to float16 directly (one rounding,
            // NaN payloads kept); ml_dtypes' formats go through float32.
            let via_f32 = if name == "float16" {
                got
            } else {
                encode_f32(&f, x as f32, NonSaturating)
            };
            if e8m0_subnormal_round_up(name, x as f32) {
                // ml_dtypes' float32 step rounds the subnormal up.
                check_e8m0_round_up(x as f32, m as u32, via_f32);
            }
            assert_eq!(via_f32, m as u32, "{name} {x:e} ({bits:#018x}) via f32");
            dev += (got != m as u32 && !(f.is_nan_code(got) && f.is_nan_code(m as u32))) as usize;
            compared += 2;
        }
        deviations.push((name, dev));
    }
    macro_rules! typed {
        ($t:ident) => {{
            let (inputs, _, exact) = load_f64_to(stringify!($t));
            for (&bits, &e) in inputs.iter().zip(&exact) {
                let got = $t::from_f64(f64::from_bits(bits));
                if $t::FORMAT.is_nan_code(e as u32) {
                    assert!(got.is_nan());
                } else {
                    assert_eq!(<$t as MiniFloat>::code(got), e as u32);
                }
                compared += 1;
            }
        }};
    }
    all_types!(typed);
    println!("float64 → format entries compared: {compared}");
    println!("from_f64 results differing from ml_dtypes astype (double rounding): {deviations:?}");
}

/// ml_dtypes' scalar constructors from a Python float: bfloat16 rounds
/// through float32 (double rounding), float8_e8m0fnu too, and additionally
/// returns 0x00 for [1.5·2^128, 2^129), where the value overflows (NaN).
#[test]
fn f64_scalar_constructors() {
    let inputs = load_u64("f64_probe_inputs");
    let ctor = load::<u16>("f64_scalar_ctor");
    let (bf, e8) = (ctor.row(0), ctor.row(1));
    let lo = 1.5 * 2f64.powi(128);
    let hi = 2f64.powi(129);
    let mut bug_region = 0;
    for (i, &bits) in inputs.iter().enumerate() {
        let x = f64::from_bits(bits);
        let bf_route = encode_f32(&format::BFLOAT16, x as f32, NonSaturating);
        if x.is_nan() {
            assert!(format::BFLOAT16.is_nan_code(bf[i] as u32));
        } else {
            assert_eq!(bf[i] as u32, bf_route, "{x:e}");
        }
        let ours = float8_e8m0fnu::from_f64(x).to_bits();
        if (lo..hi).contains(&x) {
            bug_region += 1;
            assert_eq!(e8[i], 0x00, "{x:e}");
            assert_eq!(ours, 0xff, "{x:e}"); // deliberate deviation: NaN
        } else if x > 2f64.powi(-127) && x < 1.5 * 2f64.powi(-127) {
            // The constructor converts the double directly, with the same
            // round-up below 2^-126 as the float32 path.
            assert_eq!(e8[i], 0x01, "{x:e}");
            assert_eq!(ours, 0x00, "{x:e}");
        } else {
            assert_eq!(e8[i], ours as u16, "{x:e}");
        }
    }
    assert!(bug_region > 100);
}

/// Every format → format cast over every code equals ml_dtypes' `astype`
/// (and the float32 row equals `to_f32`). Pairs ml_dtypes does not register
/// (float8_e8m0fnu ↔ float8/6/4) are defined by the same rule as the rest.
#[test]
fn casts_between_formats() {
    let mut compared = 0usize;
    let mut unregistered = 0usize;
    let mut round_ups = 0usize;
    for src in FORMATS {
        let from = fmt(src);
        for dst in FORMATS {
            let to = fmt(dst);
            let want = load_cast(src, dst);
            assert_eq!(want.len() as u32, from.code_count());
            for (code, &w) in want.iter().enumerate() {
                let code = code as u32;
                let got = convert(&from, &to, code, NonSaturating);
                let x = decode_f32(&from, code);
                if w != UNSUPPORTED && e8m0_subnormal_round_up(dst, x) {
                    // bfloat16 subnormals: ml_dtypes goes through its
                    // float32 → float8_e8m0fnu rounding, and so do we.
                    check_e8m0_round_up(x, w, got);
                    round_ups += 1;
                }
                if w == UNSUPPORTED {
                    let route = encode_f32(&to, decode_f32(&from, code), NonSaturating);
                    assert_eq!(got, route);
                    unregistered += 1;
                } else {
                    assert_eq!(got, w, "{src} {code:#x} → {dst}");
                    compared += 1;
                }
            }
        }
        let f32_row = load_cast(src, "float32");
        for (code, &w) in f32_row.iter().enumerate() {
            assert_eq!(decode_f32(&from, code as u32).to_bits(), w);
            compared += 1;
        }
    }
    // The typed API agrees for a few pairs (all go through `core::convert`).
    let want = load_cast("float8_e4m3fn", "float8_e5m2");
    for code in 0..256u32 {
        let x = float8_e4m3fn::from_bits(code as u8);
        assert_eq!(
            x.convert::<float8_e5m2>().to_bits() as u32,
            want[code as usize]
        );
    }
    let want = load_cast("bfloat16", "float4_e2m1fn");
    for code in 0..65536u32 {
        let x = bfloat16::from_bits(code as u16);
        assert_eq!(
            x.convert::<float4_e2m1fn>().to_bits() as u32,
            want[code as usize]
        );
    }
    // bfloat16 codes 0x0041..=0x005f.
    assert_eq!(round_ups, 31);
    println!(
        "cast entries compared: {compared} (+{unregistered} pairs ml_dtypes does not register; \
         {round_ups} bfloat16 → float8_e8m0fnu subnormals rounded up as ml_dtypes does)"
    );
}

/// The constants agree with `ml_dtypes.finfo`.
#[test]
fn constants_match_finfo() {
    let finfo = load_json("finfo");
    macro_rules! check {
        ($t:ident) => {{
            let fi = &finfo[stringify!($t)];
            let g = |k: &str| parse_f64(&fi[k]);
            assert_eq!($t::MAX.to_f64(), g("max"), stringify!($t));
            assert_eq!($t::MIN.to_f64(), g("min"), stringify!($t));
            assert_eq!(
                $t::MIN_POSITIVE.to_f64(),
                g("smallest_normal"),
                stringify!($t)
            );
            assert_eq!($t::MIN_POSITIVE.to_f64(), g("tiny"), stringify!($t));
            assert_eq!(
                $t::MIN_POSITIVE_SUBNORMAL.to_f64(),
                g("smallest_subnormal"),
                stringify!($t)
            );
            assert_eq!($t::EPSILON.to_f64(), g("eps"), stringify!($t));
        }};
    }
    all_types!(check);
}
