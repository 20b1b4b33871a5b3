//! `Finfo` / `Iinfo` against every field of `finfo.json` and `iinfo.json`
//! (ml_dtypes 0.6.0 / NumPy 2.4.6).

mod common;

use mldtypes::dtype::DType;
use mldtypes::info::{iinfo, Finfo, Iinfo};
use mldtypes::{int1, int2, int4, uint1, uint2, uint4};

fn dtype(name: &str) -> DType {
    *DType::ALL
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("no dtype {name}"))
}

#[test]
fn finfo_matches_ml_dtypes_field_for_field() {
    let all = common::load_json("finfo");
    let mut compared = 0;
    for (name, want) in all.as_object().unwrap() {
        let fi: Finfo = dtype(name).finfo().expect("float dtype");
        assert_eq!(fi.dtype, want["dtype"].as_str().unwrap());
        let ints = [
            ("bits", fi.bits as i64),
            ("machep", fi.machep as i64),
            ("negep", fi.negep as i64),
            ("minexp", fi.minexp as i64),
            ("maxexp", fi.maxexp as i64),
            ("nexp", fi.nexp as i64),
            ("nmant", fi.nmant as i64),
            ("iexp", fi.iexp as i64),
            ("precision", fi.precision as i64),
        ];
        for (field, got) in ints {
            assert_eq!(got, want[field].as_i64().unwrap(), "{name}.{field}");
            compared += 1;
        }
        let floats = [
            ("eps", fi.eps),
            ("epsneg", fi.epsneg),
            ("max", fi.max),
            ("min", fi.min),
            ("tiny", fi.tiny),
            ("smallest_normal", fi.smallest_normal),
            ("smallest_subnormal", fi.smallest_subnormal),
            ("resolution", fi.resolution),
        ];
        for (field, got) in floats {
            let w = common::parse_f64(&want[field]);
            assert_eq!(
                got.to_bits(),
                w.to_bits(),
                "{name}.{field}: {got:e} vs {w:e}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 15 * 17);
}

#[test]
fn iinfo_matches_ml_dtypes() {
    let all = common::load_json("iinfo");
    for (name, want) in all.as_object().unwrap() {
        let ii: Iinfo = dtype(name).iinfo().expect("integer dtype");
        assert_eq!(ii.dtype, want["dtype"].as_str().unwrap());
        assert_eq!(ii.bits as u64, want["bits"].as_u64().unwrap(), "{name}");
        let min = want["min"].as_i64().unwrap() as i128;
        let max = want["max"]
            .as_i64()
            .map(|v| v as i128)
            .unwrap_or_else(|| want["max"].as_u64().unwrap() as i128);
        assert_eq!((ii.min, ii.max), (min, max), "{name}");
    }
    assert_eq!(iinfo::<int1>(), DType::Int1.iinfo().unwrap());
    assert_eq!(iinfo::<int2>(), DType::Int2.iinfo().unwrap());
    assert_eq!(iinfo::<int4>(), DType::Int4.iinfo().unwrap());
    assert_eq!(iinfo::<uint1>(), DType::UInt1.iinfo().unwrap());
    assert_eq!(iinfo::<uint2>(), DType::UInt2.iinfo().unwrap());
    assert_eq!(iinfo::<uint4>(), DType::UInt4.iinfo().unwrap());
}

#[test]
fn lookups_by_kind() {
    for &d in DType::ALL {
        assert_eq!(d.iinfo().is_some(), d.is_integer(), "{d}");
        assert_eq!(
            d.finfo().is_some(),
            d.is_float() || matches!(d.kind(), mldtypes::dtype::Kind::Complex),
            "{d}"
        );
    }
    assert_eq!(DType::BComplex32.finfo().unwrap().dtype, "bfloat16");
    assert_eq!(DType::Complex32.finfo().unwrap().dtype, "float16");
}
