//! Exhaustive in-repo checks over every code point of every float format.

use mldtypes::float::core::{convert, decode_f32, decode_f64, encode_f32, encode_f64};
use mldtypes::float::MiniFloat;
use mldtypes::format::{Format, Overflow, ALL};
use mldtypes::*;

/// Every code of `fmt` that is not a NaN.
fn non_nan_codes(fmt: &Format) -> impl Iterator<Item = u32> + '_ {
    (0..fmt.code_count()).filter(|&c| !fmt.is_nan_code(c))
}

#[test]
fn every_code_round_trips_through_f32_and_f64() {
    for fmt in ALL {
        for code in non_nan_codes(fmt) {
            let v32 = decode_f32(fmt, code);
            let v64 = decode_f64(fmt, code);
            assert_eq!(v32 as f64, v64, "{} {code:#x}", fmt.name);
            assert_eq!(
                v32.to_bits(),
                (v64 as f32).to_bits(),
                "{} {code:#x}",
                fmt.name
            );
            for ov in [Overflow::NonSaturating, Overflow::Saturating] {
                let expect = if v32 == 0.0 && !fmt.has_signed_zero() {
                    0
                } else {
                    code
                };
                let expect = if ov == Overflow::Saturating && v32.is_infinite() {
                    fmt.max_code() | (code & fmt.sign_mask())
                } else {
                    expect
                };
                assert_eq!(encode_f32(fmt, v32, ov), expect, "{} {code:#x}", fmt.name);
                assert_eq!(encode_f64(fmt, v64, ov), expect, "{} {code:#x}", fmt.name);
                assert_eq!(
                    convert(fmt, fmt, code, ov),
                    expect,
                    "{} {code:#x}",
                    fmt.name
                );
            }
        }
    }
}

#[test]
fn nan_codes_decode_to_nan_and_encode_back_to_nan() {
    for fmt in ALL {
        let mut nans = 0;
        for code in 0..fmt.code_count() {
            if fmt.is_nan_code(code) {
                nans += 1;
                let v = decode_f32(fmt, code);
                assert!(v.is_nan() && decode_f64(fmt, code).is_nan());
                let back = encode_f32(fmt, v, Overflow::NonSaturating);
                assert!(fmt.is_nan_code(back), "{} {code:#x}", fmt.name);
                if *fmt == format::FLOAT16 {
                    // NumPy's float16 keeps payloads both ways: every NaN
                    // code comes back unchanged, through f32 and f64.
                    assert_eq!(back, code, "float16 {code:#x}");
                    let back64 = encode_f64(fmt, decode_f64(fmt, code), Overflow::NonSaturating);
                    assert_eq!(back64, code, "float16 {code:#x} via f64");
                } else {
                    assert_eq!(
                        back & !fmt.sign_mask(),
                        fmt.nan_code().unwrap() & !fmt.sign_mask()
                    );
                }
            }
        }
        let expect = match fmt.nan_encoding {
            format::NanEncoding::Ieee => 2 * ((1 << fmt.man_bits) - 1),
            format::NanEncoding::AllOnes => 1 + fmt.signed as u32,
            format::NanEncoding::NegativeZero => 1,
            format::NanEncoding::None => 0,
        };
        assert_eq!(nans, expect, "{}", fmt.name);
    }
}

#[test]
fn decoding_is_monotonic_in_the_code() {
    for fmt in ALL {
        let mut prev = f64::NEG_INFINITY;
        let mag_codes = (0..=fmt.code_mask() & !fmt.sign_mask()).filter(|&c| !fmt.is_nan_code(c));
        for code in mag_codes {
            let v = decode_f64(fmt, code);
            assert!(v > prev || (code == 0), "{} {code:#x}", fmt.name);
            if fmt.signed && (v != 0.0 || fmt.has_signed_zero()) {
                assert_eq!(decode_f64(fmt, code | fmt.sign_mask()), -v);
            }
            prev = v;
        }
        assert_eq!(
            prev,
            if fmt.has_infinity() {
                f64::INFINITY
            } else {
                fmt.max_finite()
            }
        );
    }
}

/// The midpoint between two adjacent values rounds to the even code
/// (away from zero in float8_e8m0fnu); one ulp of f64 either side rounds to
/// the nearer code.
#[test]
fn midpoints_between_adjacent_codes() {
    for fmt in ALL {
        let top = fmt.max_code();
        for code in 0..top {
            let (a, b) = (decode_f64(fmt, code), decode_f64(fmt, code + 1));
            let mid = (a + b) / 2.0;
            let tie = if fmt.man_bits == 0 || code & 1 == 1 {
                code + 1
            } else {
                code
            };
            let tie = if a == 0.0 && !fmt.has_zero { code } else { tie };
            for ov in [Overflow::NonSaturating, Overflow::Saturating] {
                assert_eq!(encode_f64(fmt, mid, ov), tie, "{} {code:#x}", fmt.name);
                assert_eq!(
                    encode_f64(fmt, f64::from_bits(mid.to_bits() - 1), ov),
                    code,
                    "{} {code:#x}",
                    fmt.name
                );
                assert_eq!(
                    encode_f64(fmt, f64::from_bits(mid.to_bits() + 1), ov),
                    code + 1,
                    "{} {code:#x}",
                    fmt.name
                );
            }
        }
    }
}

#[test]
fn typed_round_trips() {
    fn check<T: MiniFloat>() {
        let f = T::FORMAT;
        for code in non_nan_codes(&f) {
            let x = T::from_code(code);
            assert_eq!(T::from_f32(x.to_f32()), x);
            assert_eq!(T::from_f64(x.to_f64()), x);
            assert_eq!(x.convert::<bfloat16>().to_f32(), x.to_f32());
        }
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
