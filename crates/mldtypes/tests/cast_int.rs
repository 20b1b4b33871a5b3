//! Sub-byte integers to and from the standard integers and the floats, with
//! NumPy's semantics as ml_dtypes 0.6.0 shows them (values below checked with
//! `numpy.ndarray.astype` under ml_dtypes 0.6.0).

use mldtypes::cast::{available_paths, cast_bytes_on, Overflow};
use mldtypes::dtype::DType;

fn conv(src: &[u8], from: DType, to: DType) -> Vec<u8> {
    let n = src.len() / from.itemsize();
    let mut results = Vec::new();
    for p in available_paths() {
        let mut out = vec![0u8; n * to.itemsize()];
        cast_bytes_on(p, src, from, &mut out, to, Overflow::NonSaturating).unwrap();
        results.push(out);
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "paths disagree");
    results.pop().unwrap()
}

fn f32s(x: &[f32]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn floats_to_int4_truncate_and_wrap() {
    // ml_dtypes: [2.7, -2.7, 9.5, nan, inf, 3e9, -3e9] -> int4 [2, -2, -7, 0, 0, 0, 0].
    let src = f32s(&[2.7, -2.7, 9.5, f32::NAN, f32::INFINITY, 3e9, -3e9]);
    assert_eq!(
        conv(&src, DType::Float32, DType::Int4),
        [2, 0xe, 0x9, 0, 0, 0, 0]
    );
}

#[test]
fn standard_ints_wrap_into_sub_byte_ints() {
    // ml_dtypes: int32 [9, -9, 300] -> int4 [-7, 7, -4].
    let src: Vec<u8> = [9i32, -9, 300]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(conv(&src, DType::Int32, DType::Int4), [0x9, 0x7, 0xc]);
    // ml_dtypes: int4 [-1, -8, 7] -> uint8 [255, 248, 7].
    assert_eq!(
        conv(&[0xf, 0x8, 0x7], DType::Int4, DType::UInt8),
        [255, 248, 7]
    );
    // High bits of a stored sub-byte code are ignored (ml_dtypes reads the low bits).
    assert_eq!(conv(&[0x1f], DType::UInt4, DType::Int16), [15, 0]);
    assert_eq!(conv(&[0x1f], DType::Int4, DType::Int16), [0xff, 0xff]);
}

#[test]
fn every_sub_byte_code_to_float_and_back() {
    for (d, bits, signed) in [
        (DType::Int1, 1, true),
        (DType::Int2, 2, true),
        (DType::Int4, 4, true),
        (DType::UInt1, 1, false),
        (DType::UInt2, 2, false),
        (DType::UInt4, 4, false),
    ] {
        let codes: Vec<u8> = (0..(1u8 << bits)).collect();
        let f = conv(&codes, d, DType::Float32);
        let vals: Vec<f32> = f
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for (c, v) in codes.iter().zip(&vals) {
            let want = if signed && c >> (bits - 1) != 0 {
                *c as i32 - (1 << bits)
            } else {
                *c as i32
            };
            assert_eq!(*v, want as f32, "{d} code {c}");
        }
        assert_eq!(conv(&f, DType::Float32, d), codes, "{d} round trip");
        let bf = conv(&codes, d, DType::BFloat16);
        assert_eq!(conv(&bf, DType::BFloat16, d), codes);
        let e = conv(&codes, d, DType::Float8E4M3FN);
        assert_eq!(conv(&e, DType::Float8E4M3FN, d), codes);
    }
}

#[test]
fn bool_conversions() {
    assert_eq!(conv(&[0, 1, 2], DType::Bool, DType::Int4), [0, 1, 1]);
    assert_eq!(conv(&[0, 8, 2], DType::Int4, DType::Bool), [0, 1, 1]);
    assert_eq!(
        conv(
            &f32s(&[0.0, -0.0, 0.5, f32::NAN]),
            DType::Float32,
            DType::Bool
        ),
        [0, 0, 1, 1]
    );
}
