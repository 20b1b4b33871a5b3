//! Loads every committed format vector file and checks its shape, so a
//! regenerated or truncated file is caught before the tests that use it.

mod common;

use common::*;

#[test]
fn summary_lists_every_file_with_its_shape() {
    let summary = load_json("summary");
    let files = summary["files"].as_array().unwrap();
    assert_eq!(files.len(), 13 * 3 + 13 + 6);
    for f in files {
        let name = f["name"].as_str().unwrap().trim_end_matches(".npy.gz");
        let shape: Vec<usize> = f["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let got = match f["dtype"].as_str().unwrap() {
            "<u4" => load::<u32>(name).shape,
            "<u2" => load::<u16>(name).shape,
            "|u1" => load::<u8>(name).shape,
            "<u8" => load::<u64>(name).shape,
            "<f8" => load::<f64>(name).shape,
            d => panic!("unexpected dtype {d}"),
        };
        assert_eq!(got, shape, "{name}");
    }
}

#[test]
fn code_points_have_one_entry_per_code() {
    for (fmt, bits) in FORMATS
        .iter()
        .zip([16, 16, 8, 8, 8, 8, 8, 8, 8, 8, 6, 6, 4])
    {
        let c = load_codes(fmt);
        let n = 1usize << bits;
        assert_eq!(c.f32_bits.len(), n, "{fmt}");
        assert_eq!(c.f64.len(), n, "{fmt}");
        assert_eq!(c.class.len(), n, "{fmt}");
        assert_eq!(c.sign.len(), n, "{fmt}");
        for i in 0..n {
            let v = f32::from_bits(c.f32_bits[i]);
            assert!(v.is_nan() && c.f64[i].is_nan() || v as f64 == c.f64[i]);
        }
        let cast = load_cast(fmt, "float32");
        assert_eq!(cast, c.f32_bits, "{fmt}");
    }
    // spot checks against the seed's descriptions
    let e4m3fn = load_codes("float8_e4m3fn");
    assert_eq!(f32::from_bits(e4m3fn.f32_bits[0x7e]), 448.0);
    assert_eq!(e4m3fn.class[0x7f], CLASS_NAN);
    let f4 = load_codes("float4_e2m1fn");
    let mags: Vec<f32> = f4.f32_bits[..8]
        .iter()
        .map(|&b| f32::from_bits(b))
        .collect();
    assert_eq!(mags, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(f4.class[1], CLASS_SUBNORMAL);
    let e5m2 = load_codes("float8_e5m2");
    assert_eq!(e5m2.class[0x7c], CLASS_INF);
    assert_eq!(e5m2.class[0x80], CLASS_ZERO);
    assert_eq!(e5m2.sign[0x80], 1);
}

#[test]
fn probe_sets_are_large_and_aligned() {
    let (inputs, out) = load_f32_to("float8_e4m3fn");
    assert!(inputs.len() >= 150_000 + 65_536);
    assert_eq!(out.len(), inputs.len());
    // 464 is the tie between 448 and 480: ties-to-even gives 448 (0x7e);
    // the next float32 above it overflows to NaN (0x7f).
    let at = |x: f32| inputs.binary_search(&x.to_bits()).map(|i| out[i]);
    assert_eq!(at(464.0), Ok(0x7e));
    assert_eq!(at(f32::from_bits(464f32.to_bits() + 1)), Ok(0x7f));
    let (x64, ml, exact) = load_f64_to("bfloat16");
    assert_eq!(x64.len(), ml.len());
    assert_eq!(x64.len(), exact.len());
    assert!(
        ml.iter().zip(&exact).any(|(a, b)| a != b),
        "double rounding recorded"
    );
}

#[test]
fn json_tables_load() {
    let ints = load_json("subbyte_ints");
    assert_eq!(
        ints["types"]["int4"]["values"].as_array().unwrap().len(),
        16
    );
    let finfo = load_json("finfo");
    assert_eq!(finfo.as_object().unwrap().len(), 15);
    assert_eq!(parse_f64(&finfo["float8_e4m3fn"]["max"]), 448.0);
    let iinfo = load_json("iinfo");
    assert_eq!(iinfo["int4"]["min"], -8);
    assert_eq!(iinfo["uint64"]["max"], u64::MAX);
}
