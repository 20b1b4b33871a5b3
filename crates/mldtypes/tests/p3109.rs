//! The IEEE P3109 family against the independent exact oracle
//! (`reference/p3109_oracle.rs`: big-integer values and round-to-nearest-even
//! from K, P, signedness and domain alone): every code's value, class and
//! float32/float64 conversion, encodings from float64 and float32 at every
//! tie, its neighbours, the overflow threshold, subnormals, zeros,
//! infinities and NaN; the run-time codec on every path and strategy
//! against the scalar core; and the members that share a named format's
//! layout.
//!
//! The default run covers every member with K ≤ 12 exhaustively and samples
//! the wider ones; `cargo test --test p3109 -- --ignored` runs every code
//! and every tie of every member.

mod reference;

use mldtypes::cast::{self, Codec, Overflow, Path, Strategy};
use mldtypes::dtype::DType;
use mldtypes::float::core::{self, value_parts, CodeValue};
use mldtypes::format::{Format, P3109};
use num_bigint::BigInt;
use reference::p3109_oracle::{exact_f64, same_value, to_f32, to_f64, Class, Exact, Member};
use reference::Rng;

/// Asserts that two sequences are equal, reporting the first difference
/// (index and both values) instead of both sequences.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], ctx: impl std::fmt::Display) {
    assert_eq!(got.len(), want.len(), "{ctx}: lengths");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{ctx}: first difference at {i}: got {:?}, want {:?}",
            got[i], want[i]
        );
    }
}

fn member(m: P3109) -> Member {
    Member {
        k: m.k(),
        p: m.p(),
        signed: m.is_signed(),
        extended: m.is_extended(),
    }
}

fn all_codes(m: P3109) -> impl Iterator<Item = u32> {
    0..(1u32 << m.k())
}

/// Codes of a wide member sampled: every `step`-th code, and at every
/// exponent the smallest two and largest two mantissas of both signs
/// (every code when the mantissa has fewer than 3 bits), zero and the NaN.
fn sampled_codes(m: P3109, step: u32) -> Vec<u32> {
    let o = member(m);
    let t = o.t();
    let mask = (1u32 << t) - 1;
    let mut v: Vec<u32> = all_codes(m).step_by(step as usize).collect();
    for e in 0..(1u32 << (o.mag_bits() - t)) {
        for f in [0, 1, mask.saturating_sub(1), mask] {
            let mag = (e << t) | (f & mask);
            v.push(mag);
            v.push(mag | o.sign_bit());
        }
    }
    v.extend([0, 1, o.max_mag(), o.nan()]);
    v.sort_unstable();
    v.dedup();
    v
}

/// Checks one code against the oracle: value parts, float64 and float32
/// decoding, NaN/inf classes.
fn check_code(fmt: &Format, o: Member, code: u32) {
    let (class, exact) = o.decode(code);
    let name = fmt.name;
    match (class, value_parts(fmt, code)) {
        (Class::Nan, CodeValue::Nan) => {
            assert!(core::decode_f64(fmt, code).is_nan(), "{name} {code:#x}");
            assert!(core::decode_f32(fmt, code).is_nan(), "{name} {code:#x}");
        }
        (Class::Inf, CodeValue::Infinity { negative }) => {
            let want = if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            assert_eq!(negative, code & o.sign_bit() != 0, "{name} {code:#x}");
            assert_eq!(core::decode_f64(fmt, code), want, "{name} {code:#x}");
            assert_eq!(core::decode_f32(fmt, code), want as f32, "{name} {code:#x}");
        }
        (
            Class::Zero | Class::Subnormal | Class::Normal,
            CodeValue::Finite {
                negative,
                significand,
                exponent,
            },
        ) => {
            let v = exact.expect("finite");
            let mut n = BigInt::from(significand);
            if negative {
                n = -n;
            }
            // Same rational (zero compares by sign only: there is no −0).
            let a = Exact {
                n,
                e: exponent as i64,
            };
            let e = a.e.min(v.e);
            assert_eq!(
                a.n.clone() << (a.e - e) as usize,
                v.n.clone() << (v.e - e) as usize,
                "{name} {code:#x}"
            );
            assert!(class != Class::Zero || code == 0, "{name}: −0 at {code:#x}");
            let d64 = core::decode_f64(fmt, code);
            let d32 = core::decode_f32(fmt, code);
            assert_eq!(
                d64.to_bits(),
                to_f64(&v, false).to_bits(),
                "{name} {code:#x} f64"
            );
            assert_eq!(
                d32.to_bits(),
                to_f32(&v, false).to_bits(),
                "{name} {code:#x} f32"
            );
        }
        (c, p) => panic!("{name} {code:#x}: oracle {c:?}, core {p:?}"),
    }
}

#[test]
fn every_code_of_the_narrower_members_and_a_sample_of_the_wider() {
    let mut checked = 0usize;
    for m in P3109::all() {
        let fmt = m.format();
        let o = member(m);
        let codes: Vec<u32> = if m.k() <= 12 {
            all_codes(m).collect()
        } else {
            sampled_codes(m, 257)
        };
        for code in codes {
            check_code(&fmt, o, code);
            checked += 1;
        }
        // The descriptor's derived facts.
        assert_eq!(fmt.max_code(), o.max_mag(), "{m}");
        assert_eq!(fmt.nan_code(), Some(o.nan()), "{m}");
        assert_eq!(fmt.inf_code(), o.inf_mag(), "{m}");
        assert_eq!(
            fmt.max_finite().to_bits(),
            to_f64(&o.mag_value(o.max_mag()), false).to_bits(),
            "{m}"
        );
    }
    assert!(checked > 500_000, "{checked}");
}

#[test]
#[ignore = "every code of every member (about 30 s); run with --ignored"]
fn every_code_of_every_member() {
    for m in P3109::all() {
        let fmt = m.format();
        for code in all_codes(m) {
            check_code(&fmt, member(m), code);
        }
    }
}

/// float64 probes for a member: every value (exact in float64), every tie
/// between neighbours and the tie above the largest value (when exact in
/// float64), the float64 neighbours of each, their negatives, ±0, ±inf,
/// NaN, and random values across float64.
fn probes(m: P3109, every: usize) -> Vec<f64> {
    let o = member(m);
    let exact = |v: &Exact| {
        let x = to_f64(v, false);
        (x.is_finite() && same_value(&exact_f64(x), v)).then_some(x)
    };
    let mut xs = Vec::new();
    let max = o.max_mag();
    let mut i = 0usize;
    for mag in 0..=max {
        i += 1;
        if !i.is_multiple_of(every) && mag > 2 && mag + 2 < max {
            continue;
        }
        let a = o.mag_value(mag);
        let b = o.mag_value(mag + 1);
        // tie = (a + b) / 2
        let e = a.e.min(b.e) - 1;
        let t = Exact {
            n: (a.n.clone() << (a.e - e) as usize >> 1usize)
                + (b.n.clone() << (b.e - e) as usize >> 1usize),
            e,
        };
        for v in [&a, &t] {
            if let Some(x) = exact(v) {
                for y in [
                    x,
                    f64::from_bits(x.to_bits() + 1),
                    f64::from_bits(x.to_bits().max(1) - 1),
                ] {
                    xs.push(y);
                    xs.push(-y);
                }
            }
        }
    }
    xs.extend([
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ]);
    xs.extend([f64::MAX, f64::MIN_POSITIVE, 5e-324, 1e300, 1e-300, 1.0, 3.0]);
    let mut rng = Rng(m.index() as u64 + 1);
    for _ in 0..2000 {
        let b = rng.next();
        xs.push(f64::from_bits(b));
        // Exponents in and around the member's range.
        let e = (rng.next() % 80) as i32 - 40;
        xs.push((1.0 + (b >> 12) as f64 / (1u64 << 52) as f64) * 2f64.powi(e));
    }
    xs
}

fn check_encodings(m: P3109, every: usize) -> usize {
    let fmt = m.format();
    let o = member(m);
    let codec = Codec::new(&fmt).unwrap();
    let mut n = 0;
    for x in probes(m, every) {
        let want = o.encode_f64(x);
        let got = core::encode_f64(&fmt, x, Overflow::NonSaturating);
        assert_eq!(got, want, "{m} encode_f64({x:e} = {:#018x})", x.to_bits());
        assert_eq!(
            codec.encode_f64(x, Overflow::NonSaturating),
            want,
            "{m} codec {x:e}"
        );
        // float32 inputs: the probe rounded to float32 and its float32
        // neighbours, against the oracle's rounding of their exact values.
        let y = x as f32;
        let b = y.to_bits();
        for z in [
            y,
            f32::from_bits(b.wrapping_add(1)),
            f32::from_bits(b.wrapping_sub(1)),
        ] {
            let want = o.encode_f64(z as f64);
            let got = core::encode_f32(&fmt, z, Overflow::NonSaturating);
            assert_eq!(got, want, "{m} encode_f32({z:e} = {:#010x})", z.to_bits());
        }
        n += 1;
    }
    n
}

#[test]
fn encodings_of_every_k8_member_and_a_sample_of_the_others() {
    let mut n = 0;
    for m in P3109::all() {
        let every = match m.k() {
            k if k <= 8 => 1,
            k if k <= 12 => 7,
            _ => 997,
        };
        n += check_encodings(m, every);
    }
    assert!(n > 1_000_000, "{n}");
}

#[test]
#[ignore = "every tie of every member (minutes); run with --ignored"]
fn encodings_at_every_tie_of_every_member() {
    for m in P3109::all() {
        check_encodings(m, 1);
    }
}

#[test]
fn wide_members_round_float64_and_float32_correctly() {
    // p3109_k16p1se: 15 exponent bits, bias 16384, values 2^-16383 .. 2^16382.
    let f = Format::p3109(16, 1, true, true).unwrap();
    assert!(!f.fits_f64());
    let c = Codec::new(&f).unwrap();
    // Every float64 is exact there when it is a power of two; others round.
    assert_eq!(
        c.encode_f64(f64::MAX, Overflow::NonSaturating),
        0x4000 + 1024
    );
    assert_eq!(c.encode_f64(5e-324, Overflow::NonSaturating), 0x4000 - 1074);
    assert_eq!(c.encode_f64(3.0, Overflow::NonSaturating), 0x4002); // tie 3 → 4 (even code)
    assert_eq!(c.encode_f64(1.5, Overflow::NonSaturating), 0x4000); // tie 1.5 → 1 (even code)
                                                                    // Decoding beyond float64 overflows to ±inf and underflows to ±0 (no −0
                                                                    // code exists; the smallest negative values give −0.0).
    assert_eq!(c.decode_f64(0x4000 + 1024), f64::INFINITY);
    assert_eq!(c.decode_f64(0x4000 + 1023), 2f64.powi(1023));
    assert_eq!(c.decode_f64(0x4000 - 1074), 5e-324);
    assert_eq!(c.decode_f64(0x4000 - 1075), 0.0); // 2^-1075: the tie rounds to even 0
    assert_eq!(c.decode_f64(0xc000 - 1076).to_bits(), (-0.0f64).to_bits());
    assert_eq!(c.decode_f32(0x4000 + 128), f32::INFINITY);
    assert_eq!(c.decode_f32(0x4000 - 149), f32::from_bits(1));
    // Exact values beyond float64.
    assert_eq!(
        value_parts(&f, 0x7ffe),
        CodeValue::Finite {
            negative: false,
            significand: 1,
            exponent: 16382
        }
    );
    // 12 to 16 exponent bits: every float32 and float64 rounds within range.
    for m in P3109::all().filter(|m| !m.format().fits_f64()) {
        let f = m.format();
        let o = member(m);
        for x in [f64::MAX, -f64::MAX, 5e-324, f64::MIN_POSITIVE, 1.0 / 3.0] {
            assert_eq!(
                core::encode_f64(&f, x, Overflow::NonSaturating),
                o.encode_f64(x),
                "{m} {x:e}"
            );
        }
    }
}

#[test]
fn unsigned_members_on_negative_inputs() {
    // gfloat raises for negative inputs of an unsigned extended format
    // (no -inf to saturate to) and gives NaN in the finite domain; mldtypes
    // gives NaN in both, and +0 when the magnitude rounds to zero.
    for (ext, name) in [(true, "p3109_k8p3ue"), (false, "p3109_k8p3uf")] {
        let f = Format::p3109(8, 3, false, ext).unwrap();
        assert_eq!(f.name, name);
        let enc = |x: f64| core::encode_f64(&f, x, Overflow::NonSaturating);
        assert_eq!(enc(-1.0), 0xff);
        assert_eq!(enc(f64::NEG_INFINITY), 0xff);
        assert_eq!(enc(-0.0), 0x00);
        let sub = f.min_positive_subnormal();
        assert_eq!(enc(-sub / 2.0), 0x00); // the tie rounds to the even 0
        assert_eq!(enc(-sub * 0.51), 0xff);
        assert_eq!(enc(-1e-300), 0x00);
        assert_eq!(core::encode_f32(&f, -1e-30, Overflow::NonSaturating), 0x00);
    }
}

#[test]
fn members_with_the_layout_of_a_named_format() {
    use mldtypes::format::{FLOAT8_E4M3FNUZ, FLOAT8_E5M2FNUZ};
    // p3109_k8p4sf holds float8_e4m3fnuz's values and p3109_k8p3sf
    // float8_e5m2fnuz's, code for code (NaN 0x80 included).
    for (m, named) in [((8, 4), FLOAT8_E4M3FNUZ), ((8, 3), FLOAT8_E5M2FNUZ)] {
        let f = Format::p3109(m.0, m.1, true, false).unwrap();
        for code in 0..256 {
            assert_eq!(
                core::decode_f32(&f, code).to_bits(),
                core::decode_f32(&named, code).to_bits(),
                "{} {code:#x}",
                f.name
            );
        }
        let mut rng = Rng(7);
        for _ in 0..100_000 {
            let x = f32::from_bits(rng.next() as u32);
            assert_eq!(
                core::encode_f32(&f, x, Overflow::NonSaturating),
                core::encode_f32(&named, x, Overflow::NonSaturating)
            );
        }
        assert_eq!(Codec::new(&f).unwrap().strategy(), Strategy::Compiled);
    }
}

/// float32 inputs around every value and tie of a member, plus random bits.
fn f32_probes(m: P3109) -> Vec<f32> {
    let mut v: Vec<f32> = probes(m, if m.k() <= 8 { 1 } else { 61 })
        .into_iter()
        .flat_map(|x| {
            let b = (x as f32).to_bits();
            [b, b.wrapping_add(1), b.wrapping_sub(1)].map(f32::from_bits)
        })
        .collect();
    let mut rng = Rng(99);
    v.extend((0..5000).map(|_| f32::from_bits(rng.next() as u32)));
    v
}

fn sample_members() -> Vec<P3109> {
    let mut v: Vec<P3109> = P3109::all().filter(|m| m.k() == 8).collect();
    v.extend(P3109::all().filter(|m| m.k() != 8 && m.index() % 9 == 0));
    for (k, p, s, e) in [
        (16, 1, true, true),
        (16, 1, false, false),
        (16, 4, true, true),
        (16, 5, true, true),
        (16, 7, true, false),
        (16, 8, true, true),
        (16, 11, true, true),
        (16, 15, true, true),
        (16, 16, false, true),
        (2, 1, true, true),
        (3, 2, true, true),
    ] {
        v.push(P3109::new(k, p, s, e).unwrap());
    }
    v
}

/// Slices through the codec on every path and default strategy equal the
/// scalar core element by element.
#[test]
fn codec_slices_on_every_path_match_the_scalar_core() {
    let paths = cast::available_paths();
    let targets = [
        mldtypes::format::BFLOAT16,
        mldtypes::format::FLOAT16,
        mldtypes::format::FLOAT8_E4M3FN,
        mldtypes::format::FLOAT4_E2M1FN,
        Format::p3109(8, 3, true, true).unwrap(),
        Format::p3109(8, 4, false, false).unwrap(),
        Format::p3109(16, 1, true, true).unwrap(),
        Format::p3109(12, 6, true, false).unwrap(),
    ];
    for m in sample_members() {
        let f = m.format();
        let codec = Codec::new(&f).unwrap();
        let xs = f32_probes(m);
        let ys: Vec<f64> = probes(m, if m.k() <= 8 { 1 } else { 61 });
        let codes: Vec<u16> = if m.k() <= 12 {
            all_codes(m).map(|c| c as u16).collect()
        } else {
            sampled_codes(m, 61).iter().map(|&c| c as u16).collect()
        };
        for ov in [Overflow::NonSaturating, Overflow::Saturating] {
            let want32: Vec<u16> = xs
                .iter()
                .map(|&x| core::encode_f32(&f, x, ov) as u16)
                .collect();
            let want64: Vec<u16> = ys
                .iter()
                .map(|&x| core::encode_f64(&f, x, ov) as u16)
                .collect();
            for &p in &paths {
                let mut got = vec![0u16; xs.len()];
                codec.encode_f32_slice_on(p, &xs, &mut got, ov).unwrap();
                same(&got, &want32, format!("{m} {p} {ov:?} encode f32"));
                let mut got = vec![0u16; ys.len()];
                codec.encode_f64_slice_on(p, &ys, &mut got, ov).unwrap();
                same(&got, &want64, format!("{m} {p} {ov:?} encode f64"));
                if m.k() <= 8 {
                    let mut got8 = vec![0u8; xs.len()];
                    codec.encode_f32_slice_on(p, &xs, &mut got8, ov).unwrap();
                    assert!(
                        got8.iter().zip(&want32).all(|(a, b)| *a as u16 == *b),
                        "{m} {p} u8"
                    );
                }
            }
        }
        let want32: Vec<u32> = codes
            .iter()
            .map(|&c| core::decode_f32(&f, c as u32).to_bits())
            .collect();
        let want64: Vec<u64> = codes
            .iter()
            .map(|&c| core::decode_f64(&f, c as u32).to_bits())
            .collect();
        for &p in &paths {
            let mut got = vec![0f32; codes.len()];
            codec.decode_f32_slice_on(p, &codes, &mut got).unwrap();
            let got: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
            same(&got, &want32, format!("{m} {p} decode f32"));
            let mut got = vec![0f64; codes.len()];
            codec.decode_f64_slice_on(p, &codes, &mut got).unwrap();
            let got: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
            same(&got, &want64, format!("{m} {p} decode f64"));
            for g in &targets {
                let to = Codec::new(g).unwrap();
                let want: Vec<u16> = codes
                    .iter()
                    .map(|&c| core::convert(&f, g, c as u32, Overflow::NonSaturating) as u16)
                    .collect();
                let mut got = vec![0u16; codes.len()];
                codec
                    .convert_slice_on(p, &to, &codes, &mut got, Overflow::NonSaturating)
                    .unwrap();
                same(&got, &want, format!("{m} -> {} {p}", g.name));
            }
        }
    }
}

/// The byte-level API (`cast_bytes_on` with `DType::P3109`) on every path
/// equals the scalar path, from and to float32, float64, the named
/// formats, other members and integers.
#[test]
fn cast_bytes_with_p3109_dtypes_on_every_path() {
    let members: Vec<DType> = [
        (8, 3, true, true),
        (8, 4, true, false),
        (8, 1, false, true),
        (6, 3, true, true),
        (16, 8, true, true),
        (16, 1, true, true),
        (11, 3, false, false),
    ]
    .iter()
    .map(|&(k, p, s, e)| DType::p3109(k, p, s, e).unwrap())
    .collect();
    let others = [
        DType::Float32,
        DType::Float64,
        DType::BFloat16,
        DType::Float16,
        DType::Float8E4M3FN,
        DType::Float8E5M2,
        DType::Float6E3M2FN,
        DType::Float8E8M0FNU,
        DType::Int4,
        DType::Bool,
    ];
    let mut rng = Rng(5);
    let n = 5003; // more than two chunks, with a tail
    for &d in &members {
        for &o in others.iter().chain(&members) {
            for (from, to) in [(d, o), (o, d)] {
                let src: Vec<u8> = (0..n * from.itemsize()).map(|_| rng.next() as u8).collect();
                let mut want = vec![0u8; n * to.itemsize()];
                cast::cast_bytes_on(
                    Path::Scalar,
                    &src,
                    from,
                    &mut want,
                    to,
                    Overflow::NonSaturating,
                )
                .unwrap();
                for p in cast::available_paths() {
                    let mut got = vec![0u8; n * to.itemsize()];
                    cast::cast_bytes_on(p, &src, from, &mut got, to, Overflow::NonSaturating)
                        .unwrap();
                    same(&got, &want, format!("{from} -> {to} on {p}"));
                    // Misaligned buffers take the bounce path.
                    let mut got2 = vec![0u8; n * to.itemsize() + 1];
                    let mut src2 = vec![0u8; src.len() + 1];
                    src2[1..].copy_from_slice(&src);
                    cast::cast_bytes_on(
                        p,
                        &src2[1..],
                        from,
                        &mut got2[1..],
                        to,
                        Overflow::NonSaturating,
                    )
                    .unwrap();
                    same(
                        &got2[1..],
                        &want,
                        format!("{from} -> {to} on {p}, misaligned"),
                    );
                }
            }
        }
    }
}

#[test]
fn strategies_agree() {
    let paths = cast::available_paths();
    for m in P3109::all().filter(|m| m.k() <= 8) {
        let f = m.format();
        let xs = f32_probes(m);
        let want: Vec<u8> = xs
            .iter()
            .map(|&x| core::encode_f32(&f, x, Overflow::NonSaturating) as u8)
            .collect();
        for s in [
            Strategy::Compiled,
            Strategy::Descriptor,
            Strategy::Table,
            Strategy::Scalar,
        ] {
            let Ok(c) = Codec::with_strategy(&f, s) else {
                continue;
            };
            for &p in &paths {
                let mut got = vec![0u8; xs.len()];
                c.encode_f32_slice_on(p, &xs, &mut got, Overflow::NonSaturating)
                    .unwrap();
                same(&got, &want, format!("{m} {s} {p}"));
            }
        }
    }
}

#[test]
fn codec_errors() {
    let c = Codec::new(&Format::p3109(12, 5, true, true).unwrap()).unwrap();
    let mut y8 = [0u8; 2];
    let e = c
        .encode_f32_slice(&[1.0, 2.0], &mut y8, Overflow::NonSaturating)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "p3109_k12p5se codes have 12 bits and do not fit 8-bit words; use u16"
    );
    let mut y = [0u16; 3];
    assert!(matches!(
        c.encode_f32_slice(&[1.0], &mut y, Overflow::NonSaturating),
        Err(cast::CastError::LengthMismatch { src: 1, dst: 3 })
    ));
    let mut bad = Format::p3109(8, 3, true, true).unwrap();
    bad.exp_bits = 20;
    assert!(Codec::new(&bad).is_err());
}

/// Decimal text beyond float64's reach is rounded from its exact value:
/// every float64 probe printed exactly (all its decimal digits), and
/// decimal powers of ten far outside float64, against the oracle.
#[test]
fn parsing_decimal_text_in_the_widest_members() {
    use mldtypes::float::parse::parse_code;
    for m in P3109::all().filter(|m| !m.format().fits_f64()).step_by(7) {
        let f = m.format();
        let o = member(m);
        for x in probes(m, 4099).into_iter().step_by(5) {
            if !x.is_finite() {
                continue;
            }
            let text = format!("{x:.800e}"); // exact: every digit of the double
            assert_eq!(parse_code(&f, &text), Ok(o.encode_f64(x)), "{m} {text:.30}");
        }
    }
    // 10^k for k beyond float64: compare with the oracle's rounding of the
    // exact power of ten (as a rational with a power-of-two denominator
    // bound: checked through the neighbouring codes' values instead).
    // p3109_k16p3se: 13 exponent bits, largest value 1.5 · 2^4095 ≈ 7.9e1232.
    let f = Format::p3109(16, 3, true, true).unwrap();
    assert_eq!(parse_code(&f, "1e1233"), Ok(0x7fff)); // +inf
    assert_eq!(parse_code(&f, "-1e-1300"), Ok(0x0000)); // rounds to 0 (no −0)
                                                        // The smallest subnormal is 2^-4097 ≈ 4.8e-1234.
    assert_eq!(parse_code(&f, "-5e-1234"), Ok(0x8001));
    for k in [309i32, 400, 800, 1000, 1232, -400, -1000, -1232] {
        let c = parse_code(&f, &format!("1e{k}")).unwrap();
        let v = core::value_parts(&f, c);
        // The chosen value v and its neighbours bracket 10^k (log2 check).
        let CodeValue::Finite {
            significand,
            exponent,
            ..
        } = v
        else {
            panic!("1e{k} gave {v}")
        };
        let lg = (significand as f64).log2() + exponent as f64;
        assert!((lg - k as f64 * 10f64.log2()).abs() < 0.3, "1e{k}: {v}");
    }
}
