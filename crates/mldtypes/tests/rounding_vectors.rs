//! Every rounding mode against gfloat 0.5.2 (`tests/vectors/rounding/`,
//! written by `tools/gen_rounding_vectors.py`): for the OCP formats,
//! bfloat16, float16 and a representative set of the IEEE P3109 family,
//! every mode × saturation × `sr_bits` ∈ {3, 8, 13} on float32 and float64
//! probes (every value of the 8-bit formats, every tie and its neighbours,
//! subnormals, the overflow threshold, ±0, ±inf, NaN, random values),
//! compared as codes on every available path.
//!
//! Deviations (where gfloat raises or disagrees, see `crate::round`):
//! - gfloat raises for NaN and for an overflow without `sat` in the
//!   formats without infinities and NaN (float4_e2m1fn, float6_e2m3fn,
//!   float6_e3m2fn): ours saturates, as with `sat`, and turns NaN into the
//!   zero of ml_dtypes' `astype`;
//! - gfloat rounds a negative value into an unsigned IEEE P3109 format as
//!   if it were positive, then encodes it as NaN or, when the result is
//!   zero, as +0; ours gives NaN for every negative value that does not
//!   round to zero in the given mode (the same except where the mode's
//!   direction differs for the negated value; counted below).

#[macro_use]
mod common;

use common::{load_in, load_json_in};
use mldtypes::cast::{available_paths, cast_bytes, round_bytes_on, Overflow, Path};
use mldtypes::dtype::DType;
use mldtypes::float::core;
use mldtypes::format::{Format, P3109};
use mldtypes::round::{RandomBits, RoundMode, Rounding};
use std::num::FpCategory;

fn dtype(name: &str) -> DType {
    name.parse::<DType>()
        .or_else(|_| name.parse::<P3109>().map(DType::P3109))
        .unwrap_or_else(|_| panic!("unknown format {name}"))
}

/// Whether ours (`g`) and gfloat's (`w`) codes for `x` differ by one of the
/// documented deviations (see the module documentation); asserts ours.
fn deviation(fmt: &Format, src: &str, x: f64, g: u16, w: u16) -> bool {
    let (g, w) = (g as u32, w as u32);
    let not_a_code = w >= fmt.code_count() || core::classify(fmt, w) == FpCategory::Nan;
    let smallest = fmt.min_positive_subnormal();
    if !fmt.signed && x < 0.0 {
        // A negative value into an unsigned format: +0 where its magnitude
        // rounds to zero, NaN otherwise.
        let zero = fmt.has_zero && g == 0;
        assert!(
            zero || Some(g) == fmt.nan_code(),
            "{}: {x:e} gave {g:#x}",
            fmt.name
        );
        assert!(!zero || -x < smallest, "{}: {x:e} gave +0", fmt.name);
        return true;
    }
    if !fmt.has_zero && x == 0.0 {
        // float8_e8m0fnu has no zero: NaN, as ml_dtypes' astype gives it
        // (gfloat's encode leaves code 0, the value 2^-127).
        assert_eq!(Some(g), fmt.nan_code(), "{}: {x:e}", fmt.name);
        return true;
    }
    if !fmt.has_zero && x > 0.0 && x < smallest && not_a_code {
        // float8_e8m0fnu below 2^-127: its smallest value.
        assert_eq!(g, 0, "{}: {x:e}", fmt.name);
        return true;
    }
    if src == "f32" && x.abs() > f32::MAX as f64 / 2.0 && fmt.max_finite() > f32::MAX as f64 {
        // A float32 rounded past float32's range into a wider format: the
        // exact 2^128 (gfloat's float32 arithmetic overflows).
        assert_eq!(
            core::decode_f64(fmt, g),
            2f64.powi(128).copysign(x),
            "{}",
            fmt.name
        );
        return true;
    }
    false
}

#[test]
fn every_mode_matches_gfloat() {
    let summary = load_json_in("rounding", "summary");
    let in32 = load_in::<u32>("rounding", "f32_inputs").data;
    let in64 = load_in::<u64>("rounding", "f64_inputs").data;
    let bits = load_in::<u32>("rounding", "bits").data;
    let codes = load_in::<u16>("rounding", "codes").data;
    let raised = load_in::<u8>("rounding", "raised").data;
    let formats = summary["formats"].as_array().unwrap();
    let runs = summary["runs"].as_array().unwrap();
    let paths: Vec<Path> = available_paths();
    let mut bad = std::collections::BTreeMap::new();
    let mut examples = Vec::new();
    let (mut compared, mut deviations, mut raised_n, mut nans) = (0usize, 0usize, 0usize, 0usize);
    for run in runs {
        let name = run["format"].as_str().unwrap();
        let to = dtype(name);
        let src = run["source"].as_str().unwrap();
        let f = formats.iter().find(|f| f["name"] == name).unwrap();
        let range = &f["inputs"][src];
        let (o, n) = (
            range[0].as_u64().unwrap() as usize,
            range[1].as_u64().unwrap() as usize,
        );
        let (from, bytes): (DType, Vec<u8>) = if src == "f32" {
            (
                DType::Float32,
                in32[o..o + n]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            )
        } else {
            (
                DType::Float64,
                in64[o..o + n]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            )
        };
        let value = |i: usize| -> f64 {
            if src == "f32" {
                f32::from_bits(in32[o + i]) as f64
            } else {
                f64::from_bits(in64[o + i])
            }
        };
        let mode: RoundMode = run["mode"].as_str().unwrap().parse().unwrap();
        let sat = run["sat"].as_bool().unwrap();
        let mut r = Rounding::new(mode).saturating(sat);
        let rb;
        if let Some(b) = run["bits"].as_u64() {
            rb = &bits[b as usize..b as usize + n];
            r = r.with_bits(RandomBits::U32(rb), run["sr_bits"].as_u64().unwrap() as u32);
        }
        let c = run["codes"].as_u64().unwrap() as usize;
        let want = &codes[c..c + n];
        let gave_up = &raised[c..c + n];
        let w = to.itemsize();
        let code_at = |d: &[u8], i: usize| -> u16 {
            if w == 1 {
                d[i] as u16
            } else {
                u16::from_le_bytes([d[2 * i], d[2 * i + 1]])
            }
        };
        // Where gfloat raised: the saturated result, NaN as astype gives it.
        let mut sat_codes = vec![0u8; n * w];
        round_bytes_on(
            Path::Scalar,
            &bytes,
            from,
            &mut sat_codes,
            to,
            &Rounding {
                saturate: true,
                ..r
            },
        )
        .unwrap();
        let mut astype = vec![0u8; n * w];
        cast_bytes(&bytes, from, &mut astype, to, Overflow::NonSaturating).unwrap();
        let fmt = to.format().unwrap();
        let is_nan = |c: u16| core::classify(&fmt, c as u32) == FpCategory::Nan;
        for &p in &paths {
            let mut got = vec![0u8; n * w];
            round_bytes_on(p, &bytes, from, &mut got, to, &r).unwrap();
            for i in 0..n {
                let g = code_at(&got, i);
                let x = value(i);
                let ctx = || {
                    format!(
                        "{name} {src} {mode} sat={sat} sr_bits={} on {p}: element {i} = {x:e} \
                         (random {})",
                        run["sr_bits"],
                        r.number(i)
                    )
                };
                if gave_up[i] == 1 {
                    let e = if x.is_nan() {
                        code_at(&astype, i)
                    } else {
                        code_at(&sat_codes, i)
                    };
                    assert_eq!(g, e, "gfloat raised; {}", ctx());
                    raised_n += 1;
                } else if is_nan(want[i]) && is_nan(g) {
                    // gfloat encodes every NaN as `code_of_nan`; ours keeps
                    // the sign where the format has signed NaNs.
                    nans += 1;
                } else if g != want[i] && deviation(&fmt, src, x, g, want[i]) {
                    deviations += 1;
                } else if g != want[i] {
                    let key = format!("{name} {src} {mode} sat={sat}");
                    let k = bad.entry(key).or_insert(0usize);
                    *k += 1;
                    if *k <= 3 {
                        examples.push(format!("{}: ours {g:#x}, gfloat {:#x}", ctx(), want[i]));
                    }
                }
                compared += 1;
            }
        }
    }
    eprintln!(
        "{} runs, {compared} codes compared on {} paths; {raised_n} where gfloat raised, \
         {deviations} documented deviations, {nans} NaNs",
        runs.len(),
        paths.len()
    );
    assert!(bad.is_empty(), "{bad:#?}\n{}", examples.join("\n"));
    assert_eq!(
        summary["counts"]["codes"].as_u64().unwrap() as usize * paths.len(),
        compared
    );
}
