//! The checkpoint engine through the library API: the dtype-tag mapping,
//! the strict reader under random mutation (a replay of the fuzz target
//! `safetensors_reader`), cancellation leaving nothing behind.

use std::path::Path;

use mldtypes::checkpoint::{self, Error, Options, Progress, SafetensorsFile, Target};
use mldtypes::dtype::DType;
use proptest::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::Dtype;

#[test]
fn dtype_tags_round_trip() {
    let mut tagged = 0;
    for d in DType::ALL.iter().copied() {
        if let Ok(t) = Dtype::try_from(d) {
            assert_eq!(DType::try_from(t), Ok(d));
            assert_eq!(t.bitsize(), d.bits() as usize, "{d}");
            tagged += 1;
        }
    }
    assert_eq!(tagged, 22);
    assert_eq!(DType::try_from(Dtype::F8_E4M3), Ok(DType::Float8E4M3FN));
    assert!(Dtype::try_from(DType::Float8E4M3B11FNUZ).is_err());
}

fn sample() -> Vec<u8> {
    let a: Vec<u8> = (0..24)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    let b: Vec<u8> = (0..4u16).flat_map(|i| i.to_le_bytes()).collect();
    let c = [0x21u8, 0x43];
    let views = vec![
        ("a", TensorView::new(Dtype::F32, vec![4, 6], &a).unwrap()),
        ("b", TensorView::new(Dtype::BF16, vec![4], &b).unwrap()),
        ("c", TensorView::new(Dtype::F4, vec![4], &c).unwrap()),
    ];
    let mut meta = std::collections::HashMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    safetensors::serialize(views, Some(meta)).unwrap()
}

/// The reader never panics; what it accepts the safetensors crate accepts.
fn replay(bytes: Vec<u8>) {
    let ours = SafetensorsFile::from_vec(Path::new("fuzz"), bytes.clone());
    if ours.is_ok() {
        assert!(safetensors::SafeTensors::deserialize(&bytes).is_ok());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reader_survives_byte_mutations(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let mut b = sample();
        for (i, v) in flips {
            let n = b.len();
            b[i % n] = v;
        }
        replay(b.clone());
        let n = b.len();
        b.truncate(cut % (n + 1));
        replay(b);
    }

    #[test]
    fn reader_survives_arbitrary_headers(h in "\\{(\"[a-c_]{0,3}\":\\{\"dtype\":\"(F32|F4|U8|BF16|X)\",\"shape\":\\[[0-9]{0,3}(,[0-9]{1,20})?\\],\"data_offsets\":\\[[0-9]{1,3},[0-9]{1,3}\\]\\},?){0,3}\\}", data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut b = (h.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(h.as_bytes());
        b.extend(data);
        replay(b);
    }
}

#[test]
fn corpus_replay() {
    // Seeds of the fuzz target: the cases issue reports found.
    let seeds: [&[u8]; 6] = [
        b"",
        b"\x02\x00\x00\x00\x00\x00\x00\x00[]",
        b"\xff\xff\xff\xff\xff\xff\xff\xff{}",
        b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"a\":{}}}  ",
        b"\x3c\x00\x00\x00\x00\x00\x00\x00{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}    \x00\x00",
        b"\x02\x00\x00\x00\x00\x00\x00\x00{}",
    ];
    for s in seeds {
        replay(s.to_vec());
    }
    assert!(SafetensorsFile::from_vec(Path::new("x"), sample()).is_ok());
}

struct CancelAfter(std::sync::atomic::AtomicU64);
impl Progress for CancelAfter {
    fn advance(&self, bytes: u64) -> bool {
        self.0.fetch_add(bytes, std::sync::atomic::Ordering::SeqCst) == 0
    }
}

#[test]
fn cancellation_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    for s in ["a", "b", "c"] {
        std::fs::write(model.join(format!("{s}.safetensors")), sample()).unwrap();
    }
    let out = dir.path().join("out");
    let mut o = Options::new(Target::Float(DType::BFloat16));
    o.threads = 1;
    let e = checkpoint::convert(&model, &out, &o, &CancelAfter(0.into())).unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["model"]);
    // Without cancelling: three files, F4 tensors converted too.
    let s = checkpoint::convert(&model, &out, &o, &()).unwrap();
    assert_eq!(s.files.len(), 3);
    assert_eq!(s.tensors.len(), 6); // "b" is bfloat16 already: copied
    assert_eq!(s.copied, ["b", "b", "b"]);
}

#[test]
fn nvfp4_empty_tensors_and_unselected_modules() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    let w: Vec<u8> = (0..64)
        .flat_map(|i| (i as f32 - 20.0).to_le_bytes())
        .collect();
    let views = vec![
        (
            "empty.weight",
            TensorView::new(Dtype::F32, vec![0, 16], &[]).unwrap(),
        ),
        (
            "a.weight",
            TensorView::new(Dtype::F32, vec![4, 16], &w).unwrap(),
        ),
        (
            "b.weight",
            TensorView::new(Dtype::F32, vec![2, 32], &w).unwrap(),
        ),
    ];
    std::fs::write(
        model.join("model.safetensors"),
        safetensors::serialize(views, None).unwrap(),
    )
    .unwrap();
    std::fs::write(model.join("config.json"), "{}").unwrap();
    let out = dir.path().join("out");
    let select = |n: &str| n != "b.weight";
    let mut o = Options::new(Target::Nvfp4);
    o.select = Some(&select);
    let s = checkpoint::convert(&model, &out, &o, &()).unwrap();
    assert_eq!(s.tensors.len(), 2);
    let f = SafetensorsFile::open(&out.join("model.safetensors")).unwrap();
    let s2 = f.tensor("empty.weight_scale_2").unwrap();
    assert_eq!(f.tensor_data(s2), 1.0f32.to_le_bytes());
    assert_eq!(f.tensor("empty.weight").unwrap().shape, [0, 8]);
    let a = f.tensor("a.weight_scale_2").unwrap();
    assert_eq!(
        f.tensor_data(a),
        mldtypes::mx::nvfp4_tensor_scale(43.0).to_le_bytes()
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(
        config["quantization_config"]["exclude_modules"],
        serde_json::json!(["b"])
    );
}
