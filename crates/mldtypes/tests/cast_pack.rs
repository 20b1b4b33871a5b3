//! Packed sub-byte storage: bit order, round trips, and float32 ↔ packed in
//! one pass against the two-step (convert, then pack) result.

use mldtypes::cast::{available_paths, pack, CastError, Overflow};
use mldtypes::dtype::DType;

mod reference;
use reference::{ref_convert_bytes, Rng};

const PACKABLE: &[(DType, u32)] = &[
    (DType::Float4E2M1FN, 4),
    (DType::Int4, 4),
    (DType::UInt4, 4),
    (DType::Int2, 2),
    (DType::UInt2, 2),
    (DType::Float6E2M3FN, 6),
    (DType::Float6E3M2FN, 6),
];

/// Packs by the definition: element k at bits k·w … k·w+w−1 of a
/// little-endian bit stream.
fn pack_by_definition(codes: &[u8], w: u32) -> Vec<u8> {
    let mut out = vec![0u8; (codes.len() * w as usize).div_ceil(8)];
    for (k, c) in codes.iter().enumerate() {
        for b in 0..w as usize {
            if (c >> b) & 1 != 0 {
                let bit = k * w as usize + b;
                out[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    out
}

#[test]
fn bit_order_is_the_lsb_first_stream() {
    // safetensors F4: the first element is the low nibble.
    let mut out = [0u8; 1];
    pack::pack(&[0x1, 0xa], DType::Float4E2M1FN, &mut out).unwrap();
    assert_eq!(out, [0xa1]);
    // Four float6 in three bytes: 0b000001, 0b000010, 0b000011, 0b111111.
    let mut out = [0u8; 3];
    pack::pack(&[1, 2, 3, 0x3f], DType::Float6E2M3FN, &mut out).unwrap();
    assert_eq!(out, [0x81, 0x30, 0xfc]);
    let mut out = [0u8; 1];
    pack::pack(&[0, 1, 2, 3], DType::UInt2, &mut out).unwrap();
    assert_eq!(out, [0xe4]);
}

#[test]
fn pack_and_unpack_match_the_definition_for_every_length() {
    let mut rng = Rng(11);
    for &(d, w) in PACKABLE {
        for n in (0..40).chain([4095, 4096, 4097, 10_003]) {
            let codes: Vec<u8> = (0..n)
                .map(|_| (rng.next() as u8) & ((1 << w) - 1))
                .collect();
            let want = pack_by_definition(&codes, w);
            assert_eq!(pack::packed_len(d, n).unwrap(), want.len());
            let mut got = vec![0u8; want.len()];
            pack::pack(&codes, d, &mut got).unwrap();
            assert_eq!(got, want, "{d} n={n}");
            let mut back = vec![0u8; n];
            pack::unpack(&got, d, &mut back).unwrap();
            assert_eq!(back, codes, "{d} n={n}");
        }
    }
}

#[test]
fn f32_to_packed_and_back_in_one_pass() {
    let mut rng = Rng(12);
    let x: Vec<f32> = (0..10_001)
        .map(|i| match i % 4 {
            0 => f32::from_bits(rng.next() as u32),
            _ => (rng.uniform_f32() - 0.5) * 20.0,
        })
        .collect();
    let xb: &[u8] = bytemuck::cast_slice(&x);
    for &(d, w) in PACKABLE {
        for ov in [Overflow::NonSaturating, Overflow::Saturating] {
            let mut codes = vec![0u8; x.len()];
            ref_convert_bytes(xb, DType::Float32, &mut codes, d, ov);
            let masked: Vec<u8> = codes.iter().map(|c| c & ((1 << w) - 1)).collect();
            let want = pack_by_definition(&masked, w);
            let mut wanted_f32 = vec![0u8; x.len() * 4];
            ref_convert_bytes(&masked, d, &mut wanted_f32, DType::Float32, ov);
            for p in available_paths() {
                let mut got = vec![0u8; want.len()];
                pack::pack_from_on(p, &x, d, &mut got, ov).unwrap();
                assert_eq!(got, want, "float32 -> packed {d} on {p}");
                let mut back = vec![0f32; x.len()];
                pack::unpack_into_on(p, &got, d, &mut back).unwrap();
                assert_eq!(
                    bytemuck::cast_slice::<f32, u8>(&back),
                    &wanted_f32[..],
                    "packed {d} -> float32 on {p}"
                );
            }
        }
    }
}

#[test]
fn packing_errors() {
    let mut out = [0u8; 1];
    assert_eq!(
        pack::pack(&[1, 2], DType::Float8E4M3FN, &mut out),
        Err(CastError::NotPackable(DType::Float8E4M3FN))
    );
    assert_eq!(
        pack::pack(&[1, 2, 3], DType::Int4, &mut out),
        Err(CastError::PartialElement {
            dtype: DType::Int4,
            len: 1
        })
    );
    let mut vals = [0f32; 3];
    assert!(pack::unpack_into(&[0u8; 1], DType::Float4E2M1FN, &mut vals).is_err());
    assert_eq!(
        CastError::NotPackable(DType::Float16).to_string(),
        "float16 has no packed storage"
    );
}
