//! Rounding modes in checkpoint conversion (`Options::rounding`, `seed`,
//! `sr_bits`): seeded output independent of threads and sharding, every
//! tensor equal to the slice API's rounding with the tensor's key, MX
//! elements equal to `mx::quantize_rounded`, NVFP4 and FP8-with-scales
//! elements equal to `mx::nvfp4_quantize_rounded` / `fp8_quantize_rounded`,
//! and the refusals.

use std::path::{Path, PathBuf};

use mldtypes::cast::round_bytes;
use mldtypes::checkpoint::{self, tensor_seed, Error, Options, Target};
use mldtypes::dtype::DType;
use mldtypes::mx::{self, MxFormat, ScaleRule};
use mldtypes::round::{RandomBits, RoundMode, Rounding};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// Deterministic values spread over several binades (float8 subnormals
/// and values past float8_e4m3fn's range included).
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let x = (i as u32).wrapping_mul(2654435761).wrapping_add(seed);
            let m = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            m * 2f32.powi((x % 24) as i32 - 12)
        })
        .collect()
}

/// The tensors of the test model: one spans several chunks of the engine.
fn tensors() -> Vec<(&'static str, Vec<usize>, Vec<f32>)> {
    vec![
        (
            "layers.0.w.weight",
            vec![1200, 1024],
            values(1200 * 1024, 1),
        ),
        ("layers.0.norm", vec![64], values(64, 2)),
        ("layers.1.w.weight", vec![64, 128], values(64 * 128, 3)),
        ("lm_head.weight", vec![16, 64], values(1024, 4)),
    ]
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn write(path: &Path, ts: &[(&str, Vec<usize>, Vec<f32>)]) {
    let data: Vec<(String, Vec<usize>, Vec<u8>)> = ts
        .iter()
        .map(|(n, s, v)| (n.to_string(), s.clone(), bytes(v)))
        .collect();
    let views: Vec<(String, TensorView<'_>)> = data
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

/// The same tensors as one file, or as a three-shard model directory.
fn model(dir: &Path, shards: usize) -> PathBuf {
    let m = dir.join(format!("model{shards}"));
    std::fs::create_dir(&m).unwrap();
    let ts = tensors();
    if shards == 1 {
        write(&m.join("model.safetensors"), &ts);
    } else {
        let parts: [&[usize]; 3] = [&[1], &[0, 3], &[2]];
        let mut map = serde_json::Map::new();
        for (k, p) in parts.iter().enumerate() {
            let name = format!("model-0000{}-of-00003.safetensors", k + 1);
            let sel: Vec<_> = p.iter().map(|&i| ts[i].clone()).collect();
            write(&m.join(&name), &sel);
            for t in &sel {
                map.insert(t.0.to_string(), name.clone().into());
            }
        }
        let index = serde_json::json!({"metadata": {}, "weight_map": map});
        std::fs::write(m.join("model.safetensors.index.json"), index.to_string()).unwrap();
    }
    std::fs::write(m.join("config.json"), r#"{"architectures": ["X"]}"#).unwrap();
    m
}

/// Every tensor of an output directory, by name: (dtype, bytes).
fn read_tensors(out: &Path) -> Vec<(String, Dtype, Vec<u8>)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(out).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "safetensors") {
            let buf = std::fs::read(&p).unwrap();
            let st = SafeTensors::deserialize(&buf).unwrap();
            for (n, t) in st.tensors() {
                all.push((n, t.dtype(), t.data().to_vec()));
            }
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn convert(input: &Path, out: &Path, to: &str, f: impl Fn(&mut Options<'_>)) -> Result<(), Error> {
    let mut o = Options::new(Target::parse(to).unwrap());
    f(&mut o);
    checkpoint::convert(input, out, &o, &()).map(|_| ())
}

#[test]
fn seeded_stochastic_conversion_ignores_threads_and_shards() {
    let dir = tempfile::tempdir().unwrap();
    let (one, three) = (model(dir.path(), 1), model(dir.path(), 3));
    for to in ["float8_e4m3fn", "bfloat16", "float4_e2m1fn"] {
        let mut first = None;
        for (k, (input, threads)) in [(&one, 1), (&three, 1), (&one, 3), (&three, 4)]
            .into_iter()
            .enumerate()
        {
            let out = dir.path().join(format!("{to}-{k}"));
            convert(input, &out, to, |o| {
                o.rounding = RoundMode::Stochastic;
                o.seed = Some(11);
                o.sr_bits = Some(13);
                o.threads = threads;
            })
            .unwrap();
            let t = read_tensors(&out);
            match &first {
                None => first = Some(t),
                Some(f) => assert!(f == &t, "{to}: run {k} ({threads} threads) differs"),
            }
        }
        // Each tensor is the slice API's rounding keyed by its name.
        let d: DType = to.parse().unwrap();
        for ((name, _, got), (n2, _, v)) in first.unwrap().iter().zip({
            let mut ts = tensors();
            ts.sort_by(|a, b| a.0.cmp(b.0));
            ts
        }) {
            assert_eq!(name, n2);
            let r = Rounding::new(RoundMode::Stochastic).with_seed(tensor_seed(11, name), 13);
            let mut codes = vec![0u8; v.len() * d.itemsize()];
            round_bytes(&bytes(&v), DType::Float32, &mut codes, d, &r).unwrap();
            let want = if d.bits() < 8 {
                let mut p = vec![0u8; v.len() * d.bits() as usize / 8];
                mldtypes::cast::pack::pack(&codes, d, &mut p).unwrap();
                p
            } else {
                codes
            };
            assert!(got == &want, "{to}: {name} differs from round_bytes");
        }
    }
    // Another seed gives other bytes.
    let (a, b) = (dir.path().join("s1"), dir.path().join("s2"));
    for (out, seed) in [(&a, 1), (&b, 2)] {
        convert(&one, out, "float8_e4m3fn", |o| {
            o.rounding = RoundMode::StochasticFast;
            o.seed = Some(seed);
        })
        .unwrap();
    }
    assert_ne!(read_tensors(&a), read_tensors(&b));
}

#[test]
fn directed_modes_equal_the_slice_api() {
    let dir = tempfile::tempdir().unwrap();
    let one = model(dir.path(), 1);
    for (k, mode) in [
        RoundMode::TowardZero,
        RoundMode::TowardNegative,
        RoundMode::NearestAway,
    ]
    .into_iter()
    .enumerate()
    {
        for saturate in [false, true] {
            let out = dir.path().join(format!("d{k}{saturate}"));
            convert(&one, &out, "float8_e5m2", |o| {
                o.rounding = mode;
                if saturate {
                    o.overflow = mldtypes::format::Overflow::Saturating;
                }
            })
            .unwrap();
            let mut ts = tensors();
            ts.sort_by(|a, b| a.0.cmp(b.0));
            for ((name, dt, got), (_, _, v)) in read_tensors(&out).iter().zip(ts) {
                assert_eq!(*dt, Dtype::F8_E5M2);
                let r = Rounding::new(mode).saturating(saturate);
                let mut want = vec![0u8; v.len()];
                round_bytes(&bytes(&v), DType::Float32, &mut want, DType::Float8E5M2, &r).unwrap();
                assert!(got == &want, "{mode} saturate={saturate}: {name}");
            }
        }
    }
}

/// `to` converted with seeded stochastic rounding (seed 5, 8 bits) from the
/// one-file model on one thread and from the three-shard model on three:
/// both outputs' tensors.
fn seeded_outputs(
    dir: &Path,
    one: &Path,
    three: &Path,
    to: &str,
) -> Vec<Vec<(String, Dtype, Vec<u8>)>> {
    let mut outs = Vec::new();
    for (k, (input, threads)) in [(one, 1), (three, 3)].into_iter().enumerate() {
        let out = dir.join(format!("{to}{k}"));
        convert(input, &out, to, |o| {
            o.rounding = RoundMode::Stochastic;
            o.seed = Some(5);
            o.sr_bits = Some(8);
            o.threads = threads;
        })
        .unwrap();
        outs.push(read_tensors(&out));
    }
    outs
}

#[test]
fn mx_elements_round_with_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (one, three) = (model(dir.path(), 1), model(dir.path(), 3));
    let outs = seeded_outputs(dir.path(), &one, &three, "mxfp4");
    assert!(outs[0] == outs[1], "mxfp4: shards/threads change the bytes");
    // The linear weight of 1200 × 1024: blocks along its rows, as stored.
    let name = "layers.0.w.weight";
    let v = values(1200 * 1024, 1);
    let r = Rounding::new(RoundMode::Stochastic).with_seed(tensor_seed(5, name), 8);
    let (mut blocks, mut scales) = (vec![0u8; v.len() / 2], vec![0u8; v.len() / 32]);
    mx::quantize_rounded(
        &v,
        MxFormat::Fp4,
        ScaleRule::Floor,
        &r,
        &mut blocks,
        &mut scales,
    )
    .unwrap();
    let find = |suffix: &str| {
        outs[0]
            .iter()
            .find(|t| t.0.starts_with("layers.0.w.") && t.0.ends_with(suffix))
            .unwrap_or_else(|| {
                panic!(
                    "no {suffix} in {:?}",
                    outs[0].iter().map(|t| &t.0).collect::<Vec<_>>()
                )
            })
            .2
            .clone()
    };
    assert_eq!(find("scales"), scales);
    assert_eq!(find("blocks"), blocks);
    // nearest_even through quantize_rounded is quantize.
    let (mut b2, mut s2) = (vec![0u8; v.len() / 2], vec![0u8; v.len() / 32]);
    let (mut b3, mut s3) = (vec![0u8; v.len() / 2], vec![0u8; v.len() / 32]);
    let ne = Rounding::new(RoundMode::NearestEven);
    mx::quantize_rounded(&v, MxFormat::Fp4, ScaleRule::Floor, &ne, &mut b2, &mut s2).unwrap();
    mx::quantize(&v, MxFormat::Fp4, ScaleRule::Floor, &mut b3, &mut s3).unwrap();
    assert_eq!((b2, s2), (b3, s3));
}

#[test]
fn mx_rounded_elements_equal_the_scalar_rounding() {
    // Every element of every block: its code is round_f64 of x / 2^k.
    let v = values(32 * 64, 9);
    for fmt in [
        MxFormat::Fp8E4M3,
        MxFormat::Fp6E3M2,
        MxFormat::Fp6E2M3,
        MxFormat::Fp8E5M2,
    ] {
        for mode in [RoundMode::TowardPositive, RoundMode::StochasticOdd] {
            let r = if mode.is_stochastic() {
                Rounding::new(mode).with_seed(3, 10)
            } else {
                Rounding::new(mode)
            };
            let bb = fmt.block_bytes();
            let (mut blocks, mut scales) = (vec![0u8; 64 * bb], vec![0u8; 64]);
            mx::quantize_rounded(&v, fmt, ScaleRule::Floor, &r, &mut blocks, &mut scales).unwrap();
            let d = fmt.element().unwrap();
            let f = d.format().unwrap();
            for (b, blk) in v.chunks(32).enumerate() {
                let k = scales[b] as i32 - 127;
                let mut codes = vec![0u8; 32];
                if d.bits() < 8 {
                    mldtypes::cast::pack::unpack(&blocks[b * bb..(b + 1) * bb], d, &mut codes)
                        .unwrap();
                } else {
                    codes.copy_from_slice(&blocks[b * bb..(b + 1) * bb]);
                }
                for (j, x) in blk.iter().enumerate() {
                    let q = *x as f64 * 2f64.powi(-k);
                    let i = b * 32 + j;
                    let sr = r.random.sr_bits().unwrap_or(0);
                    let want = mldtypes::float::core::round_f64(&f, q, mode, true, r.number(i), sr)
                        .unwrap();
                    assert_eq!(codes[j] as u32, want, "{fmt:?} {mode} element {i}");
                }
            }
        }
    }
}

#[test]
fn refusals_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let one = model(dir.path(), 1);
    /// Target, mode, seed, sr_bits, the message's key words.
    type Case = (
        &'static str,
        RoundMode,
        Option<u64>,
        Option<u32>,
        &'static str,
    );
    let cases: [Case; 4] = [
        (
            "float8_e4m3fn",
            RoundMode::Stochastic,
            None,
            None,
            "needs a seed",
        ),
        (
            "float8_e4m3fn",
            RoundMode::TowardZero,
            Some(1),
            None,
            "deterministic",
        ),
        (
            "float8_e4m3fn",
            RoundMode::NearestEven,
            None,
            Some(8),
            "sr_bits needs",
        ),
        ("mxint8", RoundMode::NearestAway, None, None, "mxint8"),
    ];
    for (k, (to, mode, seed, sr, msg)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("bad{k}"));
        let e = convert(&one, &out, to, |o| {
            o.rounding = mode;
            o.seed = seed;
            o.sr_bits = sr;
        })
        .unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{to} {mode}: {e}");
        assert!(e.to_string().contains(msg), "{to} {mode}: {e}");
        assert!(!out.exists());
    }
}

#[test]
fn nvfp4_and_fp8_elements_round_with_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (one, three) = (model(dir.path(), 1), model(dir.path(), 3));
    let name = "layers.0.w.weight";
    let v = values(1200 * 1024, 1);
    let get = |ts: &[(String, Dtype, Vec<u8>)], n: &str| {
        ts.iter()
            .find(|t| t.0 == n)
            .unwrap_or_else(|| {
                panic!(
                    "no {n} in {:?}",
                    ts.iter().map(|t| &t.0).collect::<Vec<_>>()
                )
            })
            .clone()
    };
    for to in ["nvfp4", "fp8", "fp8_channel", "fp8_block"] {
        // seeded stochastic rounding: the same bytes from one file and from
        // three shards, on one and on three threads
        let outs = seeded_outputs(dir.path(), &one, &three, to);
        assert!(outs[0] == outs[1], "{to}: shards/threads change the bytes");
        let r = Rounding::new(RoundMode::Stochastic).with_seed(tensor_seed(5, name), 8);
        let ts = &outs[0];
        if to == "nvfp4" {
            // elements numbered row-major; the scales are those of
            // round to nearest even
            let s2 = f32::from_le_bytes(
                get(ts, &format!("{name}_scale_2")).2[..4]
                    .try_into()
                    .unwrap(),
            );
            let (mut p, mut s) = (vec![0u8; v.len() / 2], vec![0u8; v.len() / 16]);
            mx::nvfp4_quantize_rounded(&v, s2, &r, &mut p, &mut s).unwrap();
            assert_eq!(get(ts, &format!("{name}_scale")).2, s);
            assert_eq!(get(ts, name).2, p);
            let (mut p0, mut s0) = (vec![0u8; v.len() / 2], vec![0u8; v.len() / 16]);
            mx::nvfp4_quantize(&v, s2, &mut p0, &mut s0).unwrap();
            assert_eq!(s, s0);
            assert_ne!(p, p0, "stochastic rounding left every element at nearest");
        } else {
            // `NAME_scale` (compressed-tensors) or `NAME_scale_inv`
            // (DeepSeek's "fp8"): the dequantization multiplier either way
            let sname = [format!("{name}_scale"), format!("{name}_scale_inv")]
                .into_iter()
                .find(|n| ts.iter().any(|t| &t.0 == n))
                .unwrap_or_else(|| panic!("{to}: no scale of {name}"));
            let (_, sdt, sb) = get(ts, &sname);
            assert_eq!(sdt, Dtype::F32, "{to}");
            let sv: Vec<f64> = sb
                .chunks(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect();
            let mut codes = vec![0u8; v.len()];
            match to {
                "fp8" => {
                    mx::fp8_quantize_rounded(&v, v.len(), &sv, &r, &mut codes).unwrap();
                }
                "fp8_channel" => {
                    mx::fp8_quantize_rounded(&v, 1024, &sv, &r, &mut codes).unwrap();
                }
                _ => {
                    // 128 × 128 blocks: element by element
                    for (i, c) in codes.iter_mut().enumerate() {
                        let (row, col) = (i / 1024, i % 1024);
                        let s = sv[row / 128 * 8 + col / 128];
                        let mut one = [0u8];
                        mx::fp8_quantize_rounded(
                            &v[i..i + 1],
                            1,
                            &[s],
                            &r.part(i, i + 1),
                            &mut one,
                        )
                        .unwrap();
                        *c = one[0];
                    }
                }
            }
            assert_eq!(get(ts, name).2, codes, "{to}");
        }
    }
}

#[test]
fn nvfp4_fused_experts_round_with_numbers_in_the_stored_order() {
    // gpt-oss's fused experts [E, in, out] are blocked along `in` (the
    // second-to-last axis): each band of rows is transposed before it is
    // quantized, and its random numbers travel with it. Several chunks per
    // tensor; one file on one thread against two shards on three threads.
    let dir = tempfile::tempdir().unwrap();
    let (e, inn, out) = (2usize, 1200usize, 1000usize);
    let big = values(e * inn * out, 21);
    let small = values(2 * 160 * 64, 22);
    let l0 = "model.layers.0.mlp.experts.gate_up_proj";
    let l1 = "model.layers.1.mlp.experts.down_proj";
    let ts = [
        (l0, vec![e, inn, out], big.clone()),
        (l1, vec![2, 160, 64], small),
    ];
    let config = r#"{"model_type": "gpt_oss", "dtype": "float32"}"#;
    let one = dir.path().join("one");
    std::fs::create_dir(&one).unwrap();
    write(&one.join("model.safetensors"), &ts);
    std::fs::write(one.join("config.json"), config).unwrap();
    let two = dir.path().join("two");
    std::fs::create_dir(&two).unwrap();
    let names = [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ];
    write(&two.join(names[0]), &ts[..1]);
    write(&two.join(names[1]), &ts[1..]);
    let index = serde_json::json!({"metadata": {}, "weight_map": {l0: names[0], l1: names[1]}});
    std::fs::write(two.join("model.safetensors.index.json"), index.to_string()).unwrap();
    std::fs::write(two.join("config.json"), config).unwrap();
    let mut outs = Vec::new();
    for (k, (input, threads)) in [(&one, 1), (&two, 3)].into_iter().enumerate() {
        let o = dir.path().join(format!("out{k}"));
        convert(input, &o, "nvfp4", |o| {
            o.rounding = RoundMode::StochasticOdd;
            o.seed = Some(8);
            o.sr_bits = Some(12);
            o.threads = threads;
        })
        .unwrap();
        outs.push(read_tensors(&o));
    }
    assert!(
        outs[0] == outs[1],
        "nvfp4 experts: shards/threads change the bytes"
    );
    let get = |n: &str| {
        let t = outs[0].iter().find(|t| t.0 == n);
        let names: Vec<_> = outs[0].iter().map(|t| &t.0).collect();
        t.unwrap_or_else(|| panic!("no {n} in {names:?}")).2.clone()
    };
    let (packed, scales) = (get(l0), get(&format!("{l0}_weight_scale")));
    let s2 = f32::from_le_bytes(
        get(&format!("{l0}_weight_scale_2"))[..4]
            .try_into()
            .unwrap(),
    );
    // The library on each expert's transpose, with the numbers of the
    // stored positions.
    let key = tensor_seed(8, l0);
    for x in 0..e {
        let mut xt = vec![0f32; inn * out];
        let mut nt = vec![0u32; inn * out];
        for i in 0..inn {
            for o in 0..out {
                let p = x * inn * out + i * out + o;
                xt[o * inn + i] = big[p];
                nt[o * inn + i] = mldtypes::round::seeded_bits(key, p as u64, 12);
            }
        }
        let r = Rounding::new(RoundMode::StochasticOdd).with_bits(RandomBits::U32(&nt), 12);
        let (mut p, mut s) = (vec![0u8; inn * out / 2], vec![0u8; inn * out / 16]);
        mx::nvfp4_quantize_rounded(&xt, s2, &r, &mut p, &mut s).unwrap();
        // stored: packed [E, in / 2, out], scales [E, in / 16, out]
        for o in 0..out {
            for i2 in 0..inn / 2 {
                assert_eq!(
                    packed[x * inn / 2 * out + i2 * out + o],
                    p[o * inn / 2 + i2],
                    "expert {x} column {o} pair {i2}"
                );
            }
            for b in 0..inn / 16 {
                assert_eq!(
                    scales[x * inn / 16 * out + b * out + o],
                    s[o * inn / 16 + b]
                );
            }
        }
    }
}
