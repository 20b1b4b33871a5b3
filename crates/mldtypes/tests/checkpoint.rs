//! The checkpoint engine through the library API: the dtype-tag mapping,
//! the strict reader under random mutation (a replay of the fuzz target
//! `safetensors_reader`), cancellation leaving nothing behind, byte-identical
//! output across runs, thread counts and the per-shard API, and hostile
//! inputs (FIFOs, files truncated while read, absurd thread counts).

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
    assert_eq!(f.tensor_data(s2).unwrap(), 1.0f32.to_le_bytes());
    assert_eq!(f.tensor("empty.weight").unwrap().shape, [0, 8]);
    let a = f.tensor("a.weight_scale_2").unwrap();
    assert_eq!(
        f.tensor_data(a).unwrap(),
        mldtypes::mx::nvfp4_tensor_scale(43.0).to_le_bytes()
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(
        config["quantization_config"]["ignore"],
        serde_json::json!(["b"])
    );
    let hf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("hf_quant_config.json")).unwrap())
            .unwrap();
    assert_eq!(
        hf["quantization"]["exclude_modules"],
        serde_json::json!(["b"])
    );
    assert_eq!(hf["quantization"]["quant_algo"], "W4A16_NVFP4");
}

/// Writes a safetensors file with `__metadata__` entries in the given order
/// (the safetensors crate's writer would reorder them).
fn write_ordered(path: &Path, meta: &[(&str, &str)], tensors: &[(&str, Vec<usize>, Vec<f32>)]) {
    let mut header = String::from("{");
    if !meta.is_empty() {
        header.push_str("\"__metadata__\":{");
        let m: Vec<String> = meta.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
        header.push_str(&m.join(","));
        header.push_str("},");
    }
    let mut data = Vec::new();
    let mut entries = Vec::new();
    for (name, shape, vals) in tensors {
        let start = data.len();
        data.extend(vals.iter().flat_map(|v| v.to_le_bytes()));
        entries.push(format!(
            "{name:?}:{{\"dtype\":\"F32\",\"shape\":{shape:?},\"data_offsets\":[{start},{}]}}",
            data.len()
        ));
    }
    header.push_str(&entries.join(","));
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header.as_bytes());
    file.extend(data);
    std::fs::write(path, file).unwrap();
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let x = (i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8;
            (x as f32 / (1u32 << 24) as f32 - 0.5) * 3.0
        })
        .collect()
}

/// A two-shard model with metadata and config keys out of sorted order.
fn sharded_model(dir: &Path) -> std::path::PathBuf {
    let model = dir.join("model");
    std::fs::create_dir(&model).unwrap();
    let meta = [("format", "pt"), ("zeta", "1"), ("alpha", "2")];
    write_ordered(
        &model.join("model-00001-of-00002.safetensors"),
        &meta,
        &[
            ("layers.0.w.weight", vec![64, 64], values(4096, 1)),
            ("layers.0.norm", vec![64], values(64, 2)),
        ],
    );
    write_ordered(
        &model.join("model-00002-of-00002.safetensors"),
        &meta,
        &[
            ("layers.1.w.weight", vec![32, 128], values(4096, 3)),
            ("lm_head.weight", vec![16, 48], values(768, 4)),
        ],
    );
    let index = r#"{"metadata": {"total_size": 0}, "weight_map": {"layers.0.w.weight": "model-00001-of-00002.safetensors", "layers.0.norm": "model-00001-of-00002.safetensors", "layers.1.w.weight": "model-00002-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}}"#;
    std::fs::write(model.join("model.safetensors.index.json"), index).unwrap();
    std::fs::write(
        model.join("config.json"),
        r#"{"vocab_size": 10, "architectures": ["X"], "torch_dtype": "float32", "hidden_size": 64, "a_nested": {"z": 1, "b": 2}}"#,
    )
    .unwrap();
    std::fs::write(model.join("tokenizer.json"), "{}").unwrap();
    model
}

/// Every file of a directory, by name.
fn tree(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn header_json(bytes: &[u8]) -> String {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    String::from_utf8(bytes[8..8 + n].to_vec()).unwrap()
}

#[test]
fn output_is_byte_identical_across_runs_and_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let model = sharded_model(dir.path());
    for to in [
        "bfloat16",
        "float8_e4m3fn",
        "mxfp4",
        "mxfp8_e4m3",
        "mxfp6_e2m3",
        "nvfp4",
    ] {
        let mut first: Option<Vec<(String, Vec<u8>)>> = None;
        for (run, threads) in [1, 2, 1, 2, 3, 1].into_iter().enumerate() {
            let out = dir.path().join(format!("out-{to}-{run}"));
            let mut o = Options::new(Target::parse(to).unwrap());
            o.threads = threads;
            checkpoint::convert(&model, &out, &o, &()).unwrap();
            let t = tree(&out);
            match &first {
                None => first = Some(t),
                Some(f) => assert!(f == &t, "{to}: run {run} ({threads} threads) differs"),
            }
        }
        let files = first.unwrap();
        let shard = &files
            .iter()
            .find(|f| f.0.starts_with("model-00001"))
            .unwrap()
            .1;
        let h = header_json(shard);
        // The input's metadata in its order, ours last, right after it.
        let meta = r#"{"__metadata__":{"format":"pt","zeta":"1","alpha":"2""#;
        assert!(h.starts_with(meta), "{to}: {h}");
        let quantized = to.starts_with("mx") || to == "nvfp4";
        assert_eq!(
            h.contains(r#""alpha":"2","mldtypes.quantization":"#),
            quantized,
            "{to}: {h}"
        );
        // config.json keeps the input's key order.
        let config = &files.iter().find(|f| f.0 == "config.json").unwrap().1;
        let config = String::from_utf8(config.clone()).unwrap();
        let pos = |k: &str| config.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("vocab_size") < pos("architectures"), "{config}");
        assert!(pos("architectures") < pos("torch_dtype"), "{config}");
        assert!(pos("hidden_size") < pos("a_nested"), "{config}");
        assert!(pos("z") < pos("b"), "{config}");
    }
}

#[test]
fn per_shard_conversion_matches_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let model = sharded_model(dir.path());
    for to in ["bfloat16", "mxfp4", "nvfp4"] {
        let o = Options::new(Target::parse(to).unwrap());
        let local = dir.path().join(format!("local-{to}"));
        let spread = dir.path().join(format!("spread-{to}"));
        let whole = checkpoint::convert(&model, &local, &o, &()).unwrap();
        let shards = checkpoint::shards(&model).unwrap();
        assert_eq!(
            shards,
            [
                "model-00001-of-00002.safetensors",
                "model-00002-of-00002.safetensors"
            ]
        );
        // In reverse order, as independent tasks would finish.
        let mut tensors = 0;
        for s in shards.iter().rev() {
            let part = checkpoint::convert_shard(&model, s, &spread, &o, &()).unwrap();
            assert_eq!(part.files.len(), 1);
            assert_eq!(&part.files[0], s);
            tensors += part.tensors.len();
        }
        assert_eq!(tensors, whole.tensors.len());
        let fin = checkpoint::finish_shards(&model, &spread, &o).unwrap();
        assert_eq!(fin.copied_files, whole.copied_files);
        assert!(tree(&local) == tree(&spread), "{to}");
    }
    // A shard written with other options is caught.
    let spread = dir.path().join("spread-bfloat16");
    let o = Options::new(Target::Float(DType::Float16));
    let e = checkpoint::finish_shards(&model, &spread, &o).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    assert!(e.to_string().contains("is not the shard"), "{e}");
    let e = checkpoint::convert_shard(&model, "nope.safetensors", &spread, &o, &()).unwrap_err();
    assert!(
        e.to_string().contains("has no shard \"nope.safetensors\""),
        "{e}"
    );
}

/// A Llama-like two-shard model whose fused projections straddle the shard
/// boundary: q_proj and k_proj in the first shard, v_proj (with gate_proj
/// and up_proj) in the second, each with its own largest magnitude.
fn fused_model(dir: &Path) -> std::path::PathBuf {
    let model = dir.join("fused");
    std::fs::create_dir(&model).unwrap();
    let scaled = |n: usize, seed: u32, k: f32| -> Vec<f32> {
        values(n, seed).iter().map(|v| v * k).collect()
    };
    let a = "model.layers.0";
    let (q, k, v) = (
        format!("{a}.self_attn.q_proj.weight"),
        format!("{a}.self_attn.k_proj.weight"),
        format!("{a}.self_attn.v_proj.weight"),
    );
    let (g, u, d) = (
        format!("{a}.mlp.gate_proj.weight"),
        format!("{a}.mlp.up_proj.weight"),
        format!("{a}.mlp.down_proj.weight"),
    );
    let s1 = "model-00001-of-00002.safetensors";
    let s2 = "model-00002-of-00002.safetensors";
    write_ordered(
        &model.join(s1),
        &[],
        &[
            (q.as_str(), vec![64, 64], scaled(4096, 11, 1.0)),
            (k.as_str(), vec![32, 64], scaled(2048, 12, 3.0)),
            ("model.embed_tokens.weight", vec![16, 64], values(1024, 13)),
        ],
    );
    write_ordered(
        &model.join(s2),
        &[],
        &[
            (v.as_str(), vec![32, 64], scaled(2048, 14, 0.5)),
            (g.as_str(), vec![96, 64], scaled(6144, 15, 2.0)),
            (u.as_str(), vec![96, 64], scaled(6144, 16, 0.25)),
            (d.as_str(), vec![64, 96], scaled(6144, 17, 1.0)),
        ],
    );
    let wm = serde_json::json!({
        q: s1, k: s1, "model.embed_tokens.weight": s1, v: s2, g: s2, u: s2, d: s2,
    });
    std::fs::write(
        model.join("model.safetensors.index.json"),
        serde_json::json!({"metadata": {}, "weight_map": wm}).to_string(),
    )
    .unwrap();
    std::fs::write(
        model.join("config.json"),
        r#"{"model_type": "llama", "tie_word_embeddings": true, "dtype": "float32"}"#,
    )
    .unwrap();
    model
}

/// The float32 value of tensor `name` (shape `[]`) in `dir`'s shards.
fn scalar(dir: &Path, name: &str) -> f32 {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "safetensors") {
            let f = SafetensorsFile::open(&p).unwrap();
            if let Some(t) = f.tensor(name) {
                let b = f.tensor_data(t).unwrap();
                return f32::from_le_bytes(b[..4].try_into().unwrap());
            }
        }
    }
    panic!("no {name}")
}

/// NVFP4's weight_scale_2 is shared by q/k/v and by gate/up (the largest
/// magnitude over the fused projections), also when a shard boundary splits
/// them: each shard converted alone reads the other shard's members, and the
/// output is byte-identical to the local conversion. One scale per tensor
/// without fusing; the tied head is listed among the excluded modules.
#[test]
fn fused_tensor_scales_across_shards() {
    let dir = tempfile::tempdir().unwrap();
    let model = fused_model(dir.path());
    let a = "model.layers.0";
    let amax = |seed: u32, n: usize, k: f32| {
        values(n, seed)
            .iter()
            .fold(0f64, |m, v| m.max((v * k).abs() as f64))
    };
    let qkv = amax(11, 4096, 1.0)
        .max(amax(12, 2048, 3.0))
        .max(amax(14, 2048, 0.5));
    let gu = amax(15, 6144, 2.0).max(amax(16, 6144, 0.25));
    for fuse in [true, false] {
        let mut o = Options::new(Target::Nvfp4);
        o.fuse_scale_2 = fuse;
        let local = dir.path().join(format!("local-{fuse}"));
        let spread = dir.path().join(format!("spread-{fuse}"));
        checkpoint::convert(&model, &local, &o, &()).unwrap();
        for s in checkpoint::shards(&model).unwrap() {
            checkpoint::convert_shard(&model, &s, &spread, &o, &()).unwrap();
        }
        checkpoint::finish_shards(&model, &spread, &o).unwrap();
        assert!(tree(&local) == tree(&spread), "fuse {fuse}");
        let s2 = |m: &str| scalar(&local, &format!("{a}.{m}.weight_scale_2"));
        let want = |x: f64| mldtypes::mx::nvfp4_tensor_scale(x);
        if fuse {
            for m in ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"] {
                assert_eq!(s2(m), want(qkv), "{m}");
            }
            assert_eq!(s2("mlp.gate_proj"), want(gu));
            assert_eq!(s2("mlp.up_proj"), want(gu));
        } else {
            assert_eq!(s2("self_attn.v_proj"), want(amax(14, 2048, 0.5)));
            assert_eq!(s2("mlp.up_proj"), want(amax(16, 6144, 0.25)));
        }
        assert_eq!(s2("mlp.down_proj"), want(amax(17, 6144, 1.0)));
        let hf: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(local.join("hf_quant_config.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            hf["quantization"]["exclude_modules"],
            serde_json::json!(["lm_head", "model.embed_tokens"])
        );
    }
    // The FP8 recipes per shard too.
    for to in ["fp8", "fp8_channel", "fp8_block"] {
        let o = Options::new(Target::parse(to).unwrap());
        let local = dir.path().join(format!("local-{to}"));
        let spread = dir.path().join(format!("spread-{to}"));
        checkpoint::convert(&model, &local, &o, &()).unwrap();
        for s in checkpoint::shards(&model).unwrap().iter().rev() {
            checkpoint::convert_shard(&model, s, &spread, &o, &()).unwrap();
        }
        checkpoint::finish_shards(&model, &spread, &o).unwrap();
        assert!(tree(&local) == tree(&spread), "{to}");
    }
}

/// The per-shard API refuses what the local one refuses and cleans up after
/// killed tasks: an existing shard without overwrite; with overwrite the old
/// index goes first; temporaries of this conversion left by an interrupted
/// task are removed at finish, anything else left and named; missing shards
/// are a typed error naming them all.
#[test]
fn per_shard_failures_are_handled_like_local_ones() {
    let dir = tempfile::tempdir().unwrap();
    let model = sharded_model(dir.path());
    let out = dir.path().join("out");
    let s1 = "model-00001-of-00002.safetensors";
    let s2 = "model-00002-of-00002.safetensors";
    let fp8 = Options::new(Target::Float(DType::Float8E4M3FN));
    // A first, complete run (float8).
    for s in [s1, s2] {
        checkpoint::convert_shard(&model, s, &out, &fp8, &()).unwrap();
    }
    checkpoint::finish_shards(&model, &out, &fp8).unwrap();
    let before = tree(&out);
    // A second run with another target into the same directory: refused,
    // nothing changed.
    let mx = Options::new(Target::parse("mxfp4").unwrap());
    let e = checkpoint::convert_shard(&model, s1, &out, &mx, &()).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e}");
    assert!(e.to_string().contains("exists; pass --overwrite"), "{e}");
    assert!(tree(&out) == before);
    // With overwrite: the stale index is removed before the shard is
    // replaced, so no index vouches for a half-converted directory.
    let mut mxo = Options::new(Target::parse("mxfp4").unwrap());
    mxo.overwrite = true;
    checkpoint::convert_shard(&model, s1, &out, &mxo, &()).unwrap();
    assert!(!out.join("model.safetensors.index.json").exists());
    // A task interrupted mid-write leaves its temporary (simulated: a copy
    // of the live temporary under another random suffix, as a killed
    // worker's retry would leave the first attempt's); another conversion's
    // temporary and an unrelated partial file sit beside it.
    struct Snapshot(std::path::PathBuf, std::sync::Mutex<bool>);
    impl Progress for Snapshot {
        fn advance(&self, _: u64) -> bool {
            let mut done = self.1.lock().unwrap();
            if !*done {
                // `.SHARD.TAG.RANDOM.mldtypes-partial`: the same prefix,
                // another RANDOM.
                for n in leftovers(&self.0) {
                    let stem = n.strip_suffix(checkpoint::PARTIAL_SUFFIX).unwrap();
                    let copy = format!(
                        "{}.stale00{}",
                        stem.rsplit_once('.').unwrap().0,
                        checkpoint::PARTIAL_SUFFIX
                    );
                    std::fs::copy(self.0.join(&n), self.0.join(copy)).unwrap();
                }
                *done = true;
            }
            true
        }
    }
    let snapshot = |d: &Path| Snapshot(d.to_path_buf(), std::sync::Mutex::new(false));
    let mut one = Options::new(Target::parse("mxfp4").unwrap());
    one.overwrite = true;
    one.threads = 1;
    checkpoint::convert_shard(&model, s2, &out, &one, &snapshot(&out)).unwrap();
    let ours: Vec<String> = leftovers(&out);
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert!(ours[0].starts_with(&format!(".{s2}.")), "{ours:?}");
    std::fs::write(out.join(".notes.mldtypes-partial"), b"not ours").unwrap();
    // Another conversion's temporary (float16) of the same shard.
    let side = dir.path().join("side");
    std::fs::create_dir(&side).unwrap();
    let mut f16 = Options::new(Target::Float(DType::Float16));
    f16.threads = 1;
    checkpoint::convert_shard(&model, s2, &side, &f16, &snapshot(&side)).unwrap();
    let theirs = leftovers(&side);
    assert_eq!(theirs.len(), 1);
    assert_ne!(theirs[0], ours[0]);
    std::fs::copy(side.join(&theirs[0]), out.join(&theirs[0])).unwrap();
    // Missing shards: a typed error naming each.
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let e = checkpoint::finish_shards(&model, &gone, &mxo).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("2 of the 2 shards are missing: {s1}, {s2}")),
        "{e}"
    );
    // Finishing: ours removed, the others left and named.
    let fin = checkpoint::finish_shards(&model, &out, &mxo).unwrap();
    assert_eq!(fin.removed_partials, ours);
    let mut left = leftovers(&out);
    left.sort();
    let mut want = vec![".notes.mldtypes-partial".to_string(), theirs[0].clone()];
    want.sort();
    assert_eq!(left, want);
    assert!(
        fin.warnings.iter().any(|w| w.contains("left alone")
            && w.contains(".notes.mldtypes-partial")
            && w.contains(&theirs[0])),
        "{:?}",
        fin.warnings
    );
    // And the output is the local conversion's.
    let local = dir.path().join("local");
    checkpoint::convert(&model, &local, &mx, &()).unwrap();
    for f in ["config.json", "model.safetensors.index.json", s1, s2] {
        assert_eq!(
            std::fs::read(local.join(f)).unwrap(),
            std::fs::read(out.join(f)).unwrap(),
            "{f}"
        );
    }
}

fn leftovers(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(checkpoint::PARTIAL_SUFFIX))
        .collect()
}

#[test]
fn cancel_flag_stops_a_running_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    // 32 MiB of float32 in 8 tensors: 8 chunks of work on one thread.
    let t: Vec<(String, Vec<usize>, Vec<f32>)> = (0..8)
        .map(|i| (format!("t{i}"), vec![1024, 1024], values(1 << 20, i)))
        .collect();
    let t: Vec<(&str, Vec<usize>, Vec<f32>)> = t
        .iter()
        .map(|(n, s, v)| (n.as_str(), s.clone(), v.clone()))
        .collect();
    write_ordered(&input, &[], &t);
    let out = dir.path().join("out.safetensors");
    let mut o = Options::new(Target::Nvfp4);
    o.threads = 1;
    // Cancelled from another thread after the first chunk.
    struct Stop(checkpoint::Cancel);
    impl Progress for Stop {
        fn advance(&self, _: u64) -> bool {
            self.0.cancel();
            true
        }
    }
    let e = checkpoint::convert(&input, &out, &o, &Stop(o.cancel.clone())).unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
    assert!(!out.exists());
    assert!(leftovers(dir.path()).is_empty());
    // A flag set before the start: nothing is read.
    let e = checkpoint::convert(&input, &out, &o, &()).unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
    let e = checkpoint::inspect_with(&input, &o.cancel).unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
}

#[test]
fn input_truncated_while_read_is_an_error_not_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    let t: Vec<(String, Vec<usize>, Vec<f32>)> = (0..6)
        .map(|i| (format!("t{i}"), vec![1024, 1024], values(1 << 20, i)))
        .collect();
    let t: Vec<(&str, Vec<usize>, Vec<f32>)> = t
        .iter()
        .map(|(n, s, v)| (n.as_str(), s.clone(), v.clone()))
        .collect();
    write_ordered(&input, &[], &t);
    // Truncated to its header after the first chunk.
    struct Truncate(std::path::PathBuf);
    impl Progress for Truncate {
        fn advance(&self, _: u64) -> bool {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&self.0)
                .unwrap()
                .set_len(4096)
                .unwrap();
            true
        }
    }
    let out = dir.path().join("out.safetensors");
    let mut o = Options::new(Target::Float(DType::BFloat16));
    o.threads = 1;
    let e = checkpoint::convert(&input, &out, &o, &Truncate(input.clone())).unwrap_err();
    match &e {
        Error::Read { path, source } => {
            assert_eq!(path, &input);
            assert_eq!(source.kind(), std::io::ErrorKind::UnexpectedEof);
            assert!(e.to_string().contains("truncated while being read"), "{e}");
        }
        e => panic!("{e}"),
    }
    assert!(!out.exists());
    assert!(leftovers(dir.path()).is_empty());
    // An opened file truncated before a read.
    write_ordered(&input, &[], &t);
    let f = SafetensorsFile::open(&input).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&input)
        .unwrap()
        .set_len(100)
        .unwrap();
    assert!(matches!(
        f.tensor_data(&f.tensors()[0]),
        Err(Error::Read { .. })
    ));
}

/// Runs `f` on a thread, failing the test if it does not end within 20 s
/// (a FIFO opened for reading would block forever).
fn within_20s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("blocked: did not end within 20 s")
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mkfifo = |p: &Path| {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    // As the input.
    let fifo = dir.path().join("pipe.safetensors");
    mkfifo(&fifo);
    let (f2, out) = (fifo.clone(), dir.path().join("o.safetensors"));
    let e = within_20s(move || {
        checkpoint::convert(
            &f2,
            &out,
            &Options::new(Target::Float(DType::BFloat16)),
            &(),
        )
        .unwrap_err()
        .to_string()
    });
    assert!(
        e.contains("is a FIFO (named pipe), not a regular file"),
        "{e}"
    );
    let f2 = fifo.clone();
    let e = within_20s(move || checkpoint::inspect(&f2).unwrap_err().to_string());
    assert!(e.contains("FIFO"), "{e}");
    // As a shard, an index and another file of a model directory.
    for name in ["x.safetensors", "model.safetensors.index.json", "vocab.txt"] {
        let model = dir.path().join(format!("model-{name}"));
        std::fs::create_dir(&model).unwrap();
        write_ordered(
            &model.join("a.safetensors"),
            &[],
            &[("w", vec![2], vec![1.0, 2.0])],
        );
        mkfifo(&model.join(name));
        let out = dir.path().join(format!("out-{name}"));
        let e = within_20s(move || {
            checkpoint::convert(
                &model,
                &out,
                &Options::new(Target::Float(DType::BFloat16)),
                &(),
            )
            .unwrap_err()
        });
        assert!(matches!(e, Error::Invalid { .. }), "{name}: {e}");
        assert!(e.to_string().contains("FIFO"), "{name}: {e}");
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn thread_counts_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.safetensors");
    write_ordered(&input, &[], &[("w", vec![2], vec![1.0, 2.0])]);
    let out = dir.path().join("o.safetensors");
    let mut o = Options::new(Target::Float(DType::BFloat16));
    o.threads = checkpoint::max_threads() + 1;
    let e = checkpoint::convert(&input, &out, &o, &()).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e}");
    assert!(e.to_string().contains("four per available core"), "{e}");
    o.threads = 1_000_000;
    assert!(checkpoint::convert(&input, &out, &o, &()).is_err());
    o.threads = checkpoint::max_threads();
    checkpoint::convert(&input, &out, &o, &()).unwrap();
}

/// ModelOpt's FP8 of gpt-oss's fused experts through the library: experts of
/// a two-shard model, one of them cut into several chunks (an expert of
/// 1200 × 1000 elements: 1048 rows, then 152, for one scale per expert, the
/// expert's amax read beforehand; bands of 128 rows for blocks, the second
/// chunk starting at a band inside the expert), blocks of different
/// magnitudes so that a scale written to the wrong place shows. Per-shard output equals the local one
/// at any thread count; block scales sit at `[e, out block, 0, in block, 0]`
/// and the float32 dequantization is each code times its block's scale.
#[test]
fn modelopt_fp8_experts_across_shards_and_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("moe");
    std::fs::create_dir(&model).unwrap();
    let (e, inn, out) = (2usize, 1200usize, 1000usize);
    let mut big = values(e * inn * out, 9);
    for (j, v) in big.iter_mut().enumerate() {
        let (x, r, c) = (j / (inn * out), j / out % inn, j % out);
        *v *= (1u32 << ((x + 3 * (r / 128) + 5 * (c / 128)) % 7)) as f32;
    }
    let l0 = "model.layers.0.mlp.experts";
    let l1 = "model.layers.1.mlp.experts";
    write_ordered(
        &model.join("model-00001-of-00002.safetensors"),
        &[],
        &[(
            &format!("{l0}.gate_up_proj"),
            vec![e, inn, out],
            big.clone(),
        )],
    );
    write_ordered(
        &model.join("model-00002-of-00002.safetensors"),
        &[],
        &[
            (
                &format!("{l1}.down_proj"),
                vec![e, 72, 160],
                values(e * 72 * 160, 5),
            ),
            (
                &format!("{l1}.down_proj_bias"),
                vec![e, 160],
                values(e * 160, 6),
            ),
        ],
    );
    let index = format!(
        r#"{{"metadata": {{"total_size": 0}}, "weight_map": {{"{l0}.gate_up_proj": "model-00001-of-00002.safetensors", "{l1}.down_proj": "model-00002-of-00002.safetensors", "{l1}.down_proj_bias": "model-00002-of-00002.safetensors"}}}}"#
    );
    std::fs::write(model.join("model.safetensors.index.json"), index).unwrap();
    std::fs::write(
        model.join("config.json"),
        r#"{"model_type": "gpt_oss", "dtype": "float32"}"#,
    )
    .unwrap();
    for to in ["fp8", "fp8_channel", "fp8_block"] {
        let mut o = Options::new(Target::parse(to).unwrap());
        o.format = Some(checkpoint::CheckpointFormat::ModelOpt);
        o.threads = 1;
        let local = dir.path().join(format!("local-{to}"));
        let whole = checkpoint::convert(&model, &local, &o, &()).unwrap();
        assert_eq!(whole.tensors.len(), 2, "{to}");
        o.threads = 4;
        let spread = dir.path().join(format!("spread-{to}"));
        for s in checkpoint::shards(&model).unwrap().iter().rev() {
            checkpoint::convert_shard(&model, s, &spread, &o, &()).unwrap();
        }
        checkpoint::finish_shards(&model, &spread, &o).unwrap();
        assert!(tree(&local) == tree(&spread), "{to}");
        let st = SafetensorsFile::open(&local.join("model-00001-of-00002.safetensors")).unwrap();
        let read = |name: &str| {
            let t = st.tensor(name).unwrap();
            let mut buf = Vec::new();
            let b = st
                .read(t, 0, t.offsets.1 - t.offsets.0, &mut buf)
                .unwrap()
                .to_vec();
            (t.shape.clone(), b)
        };
        let (wshape, codes) = read(&format!("{l0}.gate_up_proj"));
        assert_eq!(wshape, [e, inn, out]);
        let (sshape, sb) = read(&format!("{l0}.gate_up_proj_weight_scale"));
        let sv: Vec<f64> = sb
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect();
        let (ob, ib) = (out.div_ceil(128), inn.div_ceil(128));
        let amax = |f: &dyn Fn(usize, usize, usize) -> bool| {
            let mut m = 0f64;
            for (j, v) in big.iter().enumerate() {
                if f(j / (inn * out), j / out % inn, j % out) {
                    m = m.max(v.abs() as f64);
                }
            }
            mldtypes::mx::fp8_scale(m, DType::Float32)
        };
        let elem_scale: Box<dyn Fn(usize, usize, usize) -> f64> = match to {
            "fp8" => {
                assert_eq!(sshape, Vec::<usize>::new());
                assert_eq!(sv, [amax(&|_, _, _| true)]);
                Box::new(move |_, _, _| sv[0])
            }
            "fp8_channel" => {
                assert_eq!(sshape, [e]);
                assert_eq!(sv, [amax(&|x, _, _| x == 0), amax(&|x, _, _| x == 1)]);
                Box::new(move |x, _, _| sv[x])
            }
            _ => {
                assert_eq!(sshape, [e, ob, 1, ib, 1]);
                for (x, cb, rb) in [(0, 0, 0), (0, 7, 0), (0, 2, 9), (1, 7, 9), (1, 3, 8)] {
                    let want = amax(&|a, r, c| a == x && r / 128 == rb && c / 128 == cb);
                    assert_eq!(sv[(x * ob + cb) * ib + rb], want, "{x} {cb} {rb}");
                }
                Box::new(move |x, r, c| sv[(x * ob + c / 128) * ib + r / 128])
            }
        };
        let back = dir.path().join(format!("back-{to}"));
        let f32_opts = Options::new(Target::Float(DType::Float32));
        checkpoint::convert(&local, &back, &f32_opts, &()).unwrap();
        let bt = SafetensorsFile::open(&back.join("model-00001-of-00002.safetensors")).unwrap();
        assert_eq!(bt.tensors().len(), 1, "{to}: the scale is gone");
        let t = bt.tensor(&format!("{l0}.gate_up_proj")).unwrap();
        assert_eq!(t.shape, [e, inn, out]);
        let mut buf = Vec::new();
        let y = bt.read(t, 0, t.offsets.1 - t.offsets.0, &mut buf).unwrap();
        let e4m3 = |c: u8| mldtypes::float8_e4m3fn::from_bits(c).to_f32() as f64;
        for (j, (yc, c)) in y.chunks_exact(4).zip(&codes).enumerate() {
            let want = (e4m3(*c) * elem_scale(j / (inn * out), j / out % inn, j % out)) as f32;
            let got = f32::from_le_bytes(yc.try_into().unwrap());
            assert_eq!(got.to_bits(), want.to_bits(), "{to} element {j}");
        }
    }
}
