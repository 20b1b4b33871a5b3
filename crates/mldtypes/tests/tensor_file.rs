//! `checkpoint::tensor_file`: whole safetensors files of typed tensors. Every tag round-trips
//! through `save` and `MappedFile` (the packed `F4` / `F6_*` tags packed and unpacked), the
//! layout and header are the `safetensors` crate's (checked with `SafeTensors::deserialize`),
//! dtypes without a tag and malformed requests are refused with nothing written, a symbolic
//! link destination is never replaced, and a cancelled write leaves nothing.
#![cfg(feature = "safetensors")]

use mldtypes::cast::pack;
use mldtypes::checkpoint::tensor_file::{save, save_with_metadata, tag_for, MappedFile, Tensor};
use mldtypes::checkpoint::{Cancel, Error};
use mldtypes::dtype::DType;
use safetensors::Dtype;

/// Every tag and the dtype it stores.
const TAGS: [(Dtype, DType); 22] = [
    (Dtype::BOOL, DType::Bool),
    (Dtype::U8, DType::UInt8),
    (Dtype::I8, DType::Int8),
    (Dtype::U16, DType::UInt16),
    (Dtype::I16, DType::Int16),
    (Dtype::U32, DType::UInt32),
    (Dtype::I32, DType::Int32),
    (Dtype::U64, DType::UInt64),
    (Dtype::I64, DType::Int64),
    (Dtype::F16, DType::Float16),
    (Dtype::BF16, DType::BFloat16),
    (Dtype::F32, DType::Float32),
    (Dtype::F64, DType::Float64),
    (Dtype::C64, DType::Complex64),
    (Dtype::F8_E4M3, DType::Float8E4M3FN),
    (Dtype::F8_E5M2, DType::Float8E5M2),
    (Dtype::F8_E4M3FNUZ, DType::Float8E4M3FNUZ),
    (Dtype::F8_E5M2FNUZ, DType::Float8E5M2FNUZ),
    (Dtype::F8_E8M0, DType::Float8E8M0FNU),
    (Dtype::F4, DType::Float4E2M1FN),
    (Dtype::F6_E2M3, DType::Float6E2M3FN),
    (Dtype::F6_E3M2, DType::Float6E3M2FN),
];

/// `n` elements of `d` (sub-byte formats: codes within their width, one per byte).
fn elements(d: DType, n: usize, seed: u64) -> Vec<u8> {
    let size = d.itemsize();
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(n * size);
    for _ in 0..n * size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    let bits = d.bits();
    if bits < 8 {
        v.iter_mut().for_each(|b| *b &= (1u8 << bits) - 1);
    }
    if d == DType::Bool {
        v.iter_mut().for_each(|b| *b &= 1);
    }
    v
}

#[test]
fn every_tag_round_trips_with_the_crates_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.safetensors");
    let shapes: [&[usize]; 3] = [&[0], &[8], &[2, 4]];
    let mut owned = Vec::new();
    for (i, (tag, d)) in TAGS.iter().enumerate() {
        for (j, s) in shapes.iter().enumerate() {
            let n: usize = s.iter().product();
            owned.push((
                format!("{tag}_{j}"),
                *d,
                s.to_vec(),
                elements(*d, n, (i * 7 + j) as u64),
            ));
        }
        if tag.bitsize() >= 8 {
            owned.push((
                format!("{tag}_scalar"),
                *d,
                vec![],
                elements(*d, 1, i as u64),
            ));
        }
    }
    let tensors: Vec<Tensor<'_>> = owned
        .iter()
        .map(|(name, d, shape, data)| Tensor {
            name,
            dtype: *d,
            shape,
            data,
        })
        .collect();
    let meta = vec![
        ("z".to_string(), "last?".to_string()),
        ("a".to_string(), "first?".to_string()),
    ];
    save(&path, &tensors, &meta, &Cancel::new()).unwrap();

    // The crate reads it, every tensor's data aligned for its element type.
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(n % 8, 0);
    for (name, view) in st.tensors() {
        let off = view.data().as_ptr() as usize - bytes.as_ptr() as usize;
        let align = view.dtype().bitsize().div_ceil(8).min(8);
        assert_eq!(off % align, 0, "{name}");
    }
    // Metadata in the caller's order.
    let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap();
    assert!(
        header.starts_with(r#"{"__metadata__":{"z":"last?","a":"first?"}"#),
        "{header}"
    );

    let f = MappedFile::open(&path).unwrap();
    assert_eq!(f.tensors().len(), tensors.len());
    assert_eq!(f.metadata_entries(), meta.as_slice());
    for t in &tensors {
        let e = f.tensor(t.name).unwrap();
        assert_eq!(f.dtype(e), t.dtype, "{}", t.name);
        assert_eq!(e.dtype, tag_for(t.name, t.dtype).unwrap());
        assert_eq!(e.shape, t.shape);
        let mut out = vec![0u8; t.data.len()];
        f.unpack(e, &mut out).unwrap();
        assert_eq!(out, t.data, "{}", t.name);
        if f.is_packed(e) {
            let mut packed = vec![0u8; f.stored_bytes(e).len()];
            pack::pack(t.data, t.dtype, &mut packed).unwrap();
            assert_eq!(f.stored_bytes(e), packed.as_slice());
        } else {
            assert_eq!(f.stored_bytes(e), t.data);
            assert_eq!(
                f.data_ptr(e) as *const u8,
                f.stored_bytes(e).as_ptr(),
                "{}",
                t.name
            );
        }
    }
}

#[test]
fn f4_and_f6_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.safetensors");
    let f4 = [0x1u8, 0x2, 0x3, 0xf];
    let f6 = [1u8, 2, 3, 63];
    let t = [
        Tensor {
            name: "f4",
            dtype: DType::Float4E2M1FN,
            shape: &[4],
            data: &f4,
        },
        Tensor {
            name: "f6",
            dtype: DType::Float6E3M2FN,
            shape: &[2, 2],
            data: &f6,
        },
    ];
    save_with_metadata(&path, &t, None, &Cancel::new()).unwrap();
    let f = MappedFile::open(&path).unwrap();
    assert!(!f.has_metadata());
    assert_eq!(f.stored_bytes(f.tensor("f4").unwrap()), [0x21, 0xf3]);
    let v = 1u32 | (2 << 6) | (3 << 12) | (63 << 18);
    assert_eq!(
        f.stored_bytes(f.tensor("f6").unwrap()),
        &v.to_le_bytes()[..3]
    );
}

#[test]
fn refusals_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.safetensors");
    let one = [0u8; 1];
    let three = [0u8; 3];
    let cases: Vec<(Tensor<'_>, &str)> = vec![
        (
            Tensor {
                name: "e4m3",
                dtype: DType::Float8E4M3,
                shape: &[1],
                data: &one,
            },
            "F8_E4M3 is float8_e4m3fn",
        ),
        (
            Tensor {
                name: "i4",
                dtype: DType::Int4,
                shape: &[1],
                data: &one,
            },
            "store it as int8",
        ),
        (
            Tensor {
                name: "f4",
                dtype: DType::Float4E2M1FN,
                shape: &[3],
                data: &three,
            },
            "an even number",
        ),
        (
            Tensor {
                name: "short",
                dtype: DType::Float32,
                shape: &[2],
                data: &three,
            },
            "3 bytes of data for shape [2]",
        ),
    ];
    for (t, want) in cases {
        let e = save(&path, &[t], &[], &Cancel::new()).unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert!(e.to_string().contains(want), "{e}");
    }
    let twice = Tensor {
        name: "w",
        dtype: DType::UInt8,
        shape: &[1],
        data: &one,
    };
    let e = save(&path, &[twice, twice], &[], &Cancel::new()).unwrap_err();
    assert!(e.to_string().contains("two tensors are named \"w\""), "{e}");
    let cancel = Cancel::new();
    cancel.cancel();
    assert!(matches!(
        save(&path, &[twice], &[], &cancel),
        Err(Error::Cancelled)
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn a_symlink_destination_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"keep").unwrap();
    let link = dir.path().join("link.safetensors");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let t = Tensor {
        name: "w",
        dtype: DType::UInt8,
        shape: &[1],
        data: &[1],
    };
    let e = save(&link, &[t], &[], &Cancel::new()).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn corrupt_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.safetensors");
    std::fs::write(&path, b"\x10\0\0\0\0\0\0\0{not json}      ").unwrap();
    let e = MappedFile::open(&path).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    assert!(matches!(
        MappedFile::open(&dir.path().join("missing")).unwrap_err(),
        Error::Read { .. }
    ));
}
