//! `convert` and `inspect` through the binary: conversions value by value
//! (against the `half` crate and the library's scalar types), hostile inputs
//! (each must be a message naming the tensor and exit code 2, never a panic),
//! safe writes, sharded model directories, MX / NVFP4 round trips.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde_json::Value;

fn mldtypes() -> Command {
    Command::cargo_bin("mldtypes").expect("binary builds")
}

fn stdout_of(args: &[&str]) -> String {
    let out = mldtypes()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("UTF-8 output")
}

fn json_of(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_of(args)).expect("valid JSON")
}

// ---------------------------------------------------------------------------
// convert, inspect
// ---------------------------------------------------------------------------

/// Float32 test values: ordinary numbers, ties, subnormals, overflow, specials.
fn sample_f32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.5,
        2.718_281_7 * 1.5,
        1.000_976_6, // float16 tie
        65504.0,
        65520.0, // rounds to inf in float16
        1e6,
        -1e6,
        1e-8, // flushes to zero in float16
        6e-8,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
    ];
    let mut x = 0.37f32;
    while v.len() < 64 {
        x = (x * 3.9 * (1.0 - x)).clamp(0.01, 0.99);
        v.push((x - 0.5) * 10f32.powi((v.len() % 9) as i32 - 4));
    }
    v
}

fn write_sample(path: &Path) {
    let f = sample_f32();
    let f_bytes: Vec<u8> = f.iter().flat_map(|x| x.to_le_bytes()).collect();
    let ids: Vec<u8> = (0..6i64)
        .flat_map(|x| (x * 1000 - 7).to_le_bytes())
        .collect();
    let h: Vec<u8> = [0.5f32, -2.0, 100.0, 7.0]
        .iter()
        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
        .collect();
    let views = vec![
        (
            "layer.weight",
            TensorView::new(Dtype::F32, vec![8, 8], &f_bytes).unwrap(),
        ),
        (
            "layer.ids",
            TensorView::new(Dtype::I64, vec![2, 3], &ids).unwrap(),
        ),
        (
            "head.half",
            TensorView::new(Dtype::F16, vec![4], &h).unwrap(),
        ),
    ];
    let mut meta = std::collections::HashMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    std::fs::write(path, safetensors::serialize(views, Some(meta)).unwrap()).unwrap();
}

/// A temporary directory with the paths `in.safetensors` and
/// `out.safetensors` in it (neither written yet).
fn in_out() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (
        dir.path().join("in.safetensors"),
        dir.path().join("out.safetensors"),
    );
    (dir, inp, out)
}

#[test]
fn convert_to_float16_value_by_value() {
    let (_dir, inp, out) = in_out();
    write_sample(&inp);
    let report = mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&out)
        .args(["--to", "float16", "--json"])
        .assert()
        .success()
        // No progress bar when stderr is not a terminal; the warning about
        // the three values overflowing to infinity points to --saturate.
        .stderr(
            predicate::str::contains("\"layer.weight\": 3 finite value(s) overflowed")
                .and(predicate::str::contains("--saturate"))
                .and(predicate::str::contains("[").not()),
        )
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&report).unwrap();
    let buf = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    let (_, meta) = SafeTensors::read_metadata(&buf).unwrap();
    assert_eq!(meta.metadata().as_ref().unwrap()["format"], "pt");
    let w = st.tensor("layer.weight").unwrap();
    assert_eq!(w.dtype(), Dtype::F16);
    assert_eq!(w.shape(), [8, 8]);
    let got: Vec<u16> = w
        .data()
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let want: Vec<u16> = sample_f32()
        .iter()
        .map(|x| half::f16::from_f32(*x).to_bits())
        .collect();
    assert_eq!(got.len(), 64);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let nan = half::f16::from_bits(*g).is_nan() && half::f16::from_bits(*w).is_nan();
        assert!(g == w || nan, "element {i}: got {g:#06x}, want {w:#06x}");
    }
    // Non-float tensors are copied unchanged; float16 tensors pass through.
    let ids = st.tensor("layer.ids").unwrap();
    assert_eq!(ids.dtype(), Dtype::I64);
    assert_eq!(
        ids.data(),
        SafeTensors::deserialize(&std::fs::read(&inp).unwrap())
            .unwrap()
            .tensor("layer.ids")
            .unwrap()
            .data()
    );
    assert_eq!(st.tensor("head.half").unwrap().dtype(), Dtype::F16);

    let t = report["tensors"].as_array().unwrap();
    let lw = t.iter().find(|r| r["name"] == "layer.weight").unwrap();
    assert_eq!(lw["from"], "float32");
    assert_eq!(lw["to"], "float16");
    assert_eq!(lw["shape"], serde_json::json!([8, 8]));
    assert_eq!(lw["clipped"], 3); // 65520, 1e6, -1e6
    assert_eq!(lw["overflow_to_nonfinite"], 3);
    assert_eq!(lw["flushed_to_zero"], 2); // 1e-8, MIN_POSITIVE
                                          // head.half is float16 already: copied byte for byte.
    assert_eq!(
        report["copied"],
        serde_json::json!(["head.half", "layer.ids"])
    );
    assert_eq!(report["files"], serde_json::json!(["in.safetensors"]));
}

#[test]
fn convert_to_bfloat16_table_and_glob() {
    let (_dir, inp, out) = in_out();
    write_sample(&inp);
    let text = mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&out)
        .args(["--to", "bf16", "--only", "layer.*"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("layer.weight") && text.contains("float32 -> bfloat16"),
        "{text}"
    );
    assert!(text.contains("total"));
    let buf = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    assert_eq!(st.tensor("head.half").unwrap().dtype(), Dtype::F16); // not matched by --only
    let got: Vec<u16> = st
        .tensor("layer.weight")
        .unwrap()
        .data()
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for (x, g) in sample_f32().iter().zip(&got) {
        let w = half::bf16::from_f32(*x);
        assert!(
            w.to_bits() == *g || (w.is_nan() && half::bf16::from_bits(*g).is_nan()),
            "{x}"
        );
    }
}

#[test]
fn convert_target_without_tag_fails_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    // The input does not even exist: the target is rejected first.
    mldtypes()
        .arg("convert")
        .arg(dir.path().join("missing.safetensors"))
        .arg(&out)
        .args(["--to", "float8_e4m3b11fnuz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no safetensors dtype tag"));
    assert!(!out.exists());
    mldtypes()
        .arg("convert")
        .arg(dir.path().join("missing.safetensors"))
        .arg(&out)
        .args(["--to", "int8"])
        .assert()
        .code(2);
    // safetensors bytes are little-endian: a big-endian NumPy code is refused.
    mldtypes()
        .arg("convert")
        .arg(dir.path().join("missing.safetensors"))
        .arg(&out)
        .args(["--to", ">f2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "\">f2\" is big-endian float16; mldtypes reads and writes little-endian bytes only",
        ));
    assert!(!out.exists());
}

/// A safetensors file with `header` as its JSON header and `data` after it.
fn raw_file(path: &Path, header: &str, data: &[u8]) {
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header.as_bytes());
    b.extend_from_slice(data);
    std::fs::write(path, b).unwrap();
}

#[test]
fn convert_rejects_corrupt_inputs_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.safetensors");
    write_sample(&good);
    let bytes = std::fs::read(&good).unwrap();
    type Make<'a> = Box<dyn Fn(&Path) + 'a>;
    let cases: Vec<(&str, Make, &str)> = vec![
        (
            "truncated",
            Box::new(|p: &Path| std::fs::write(p, &bytes[..bytes.len() / 2]).unwrap()),
            "truncated",
        ),
        (
            "tiny",
            Box::new(|p: &Path| std::fs::write(p, [1u8, 2, 3]).unwrap()),
            "the header length alone takes 8",
        ),
        (
            "bad_json",
            Box::new(|p: &Path| raw_file(p, "{\"w\": {\"dtype\": \"F32\", ", &[0; 16])),
            "header",
        ),
        (
            "offsets",
            Box::new(|p: &Path| {
                raw_file(
                    p,
                    r#"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,64]}}"#,
                    &[0; 16],
                )
            }),
            "offsets",
        ),
        (
            "unknown_dtype",
            Box::new(|p: &Path| {
                raw_file(
                    p,
                    r#"{"w":{"dtype":"F7","shape":[4],"data_offsets":[0,16]}}"#,
                    &[0; 16],
                )
            }),
            "F7",
        ),
    ];
    for (name, make, needle) in cases {
        let inp = dir.path().join(format!("{name}.safetensors"));
        let out = dir.path().join(format!("{name}.out.safetensors"));
        make(&inp);
        mldtypes()
            .arg("convert")
            .arg(&inp)
            .arg(&out)
            .args(["--to", "bfloat16"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(needle).and(predicate::str::contains("panicked").not()),
            );
        assert!(!out.exists(), "{name}: partial output left behind");
        mldtypes().arg("inspect").arg(&inp).assert().code(2);
    }
    // No temporary files remain either.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".out."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn inspect_reports_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("in.safetensors");
    write_sample(&inp);
    let v = json_of(&["inspect", inp.to_str().unwrap(), "--json"]);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 3);
    let ids = a.iter().find(|t| t["name"] == "layer.ids").unwrap();
    assert_eq!(ids["dtype"], "I64");
    assert_eq!(ids["shape"], serde_json::json!([2, 3]));
    assert_eq!(ids["min"], -7.0);
    assert_eq!(ids["max"], 4993.0);
    assert_eq!(ids["mean"], 2493.0);
    let h = a.iter().find(|t| t["name"] == "head.half").unwrap();
    assert_eq!(
        (h["min"].as_f64(), h["max"].as_f64(), h["mean"].as_f64()),
        (Some(-2.0), Some(100.0), Some(26.375))
    );
    let w = a.iter().find(|t| t["name"] == "layer.weight").unwrap();
    assert_eq!(w["nan_count"], 1);
    assert_eq!(w["max"], "inf");
    let text = stdout_of(&["inspect", inp.to_str().unwrap()]);
    assert!(text.contains("3 tensors, 74 elements"), "{text}");
}

/// Converts the sample file to `to` and returns the output tensor `layer.weight`.
fn convert_sample(to: &str, extra: &[&str]) -> (Dtype, Vec<usize>, Vec<u8>) {
    let (_dir, inp, out) = in_out();
    write_sample(&inp);
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&out)
        .args(["--to", to])
        .args(extra)
        .assert()
        .success();
    let buf = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    let t = st.tensor("layer.weight").unwrap();
    (t.dtype(), t.shape().to_vec(), t.data().to_vec())
}

#[test]
fn convert_to_float8_matches_the_scalar_types() {
    let (tag, shape, data) = convert_sample("float8_e4m3fn", &[]);
    assert_eq!((tag, shape), (Dtype::F8_E4M3, vec![8, 8]));
    let want: Vec<u8> = sample_f32()
        .iter()
        .map(|x| mldtypes::float8_e4m3fn::from_f32(*x).to_bits())
        .collect();
    assert_eq!(data, want);
    assert_eq!(data[6], 0x7f); // 65504 overflows to NaN (no infinity in e4m3fn)
    let (_, _, sat) = convert_sample("float8_e4m3fn", &["--saturate"]);
    let want: Vec<u8> = sample_f32()
        .iter()
        .map(|x| mldtypes::float8_e4m3fn::from_f32_saturating(*x).to_bits())
        .collect();
    assert_eq!(sat, want);
    assert_eq!(sat[6], 0x7e); // 448
    let (tag, _, data) = convert_sample("float8_e5m2", &[]);
    assert_eq!(tag, Dtype::F8_E5M2);
    let want: Vec<u8> = sample_f32()
        .iter()
        .map(|x| mldtypes::float8_e5m2::from_f32(*x).to_bits())
        .collect();
    assert_eq!(data, want);
}

#[test]
fn convert_to_packed_float4_and_float6() {
    // F4: two codes per byte, element 2k in the low nibble.
    let (tag, shape, data) = convert_sample("float4_e2m1fn", &[]);
    assert_eq!((tag, shape), (Dtype::F4, vec![8, 8]));
    let codes: Vec<u8> = sample_f32()
        .iter()
        .map(|x| mldtypes::float4_e2m1fn::from_f32(*x).to_bits())
        .collect();
    let want: Vec<u8> = codes.chunks(2).map(|p| p[0] | p[1] << 4).collect();
    assert_eq!(data, want);
    // F6: four codes in three bytes, a little-endian bit stream.
    let (tag, _, data) = convert_sample("float6_e2m3fn", &[]);
    assert_eq!(tag, Dtype::F6_E2M3);
    let codes: Vec<u32> = sample_f32()
        .iter()
        .map(|x| mldtypes::float6_e2m3fn::from_f32(*x).to_bits() as u32)
        .collect();
    let want: Vec<u8> = codes
        .chunks(4)
        .flat_map(|g| {
            let w = g[0] | g[1] << 6 | g[2] << 12 | g[3] << 18;
            [w as u8, (w >> 8) as u8, (w >> 16) as u8]
        })
        .collect();
    assert_eq!(data, want);
    // A tensor whose element count does not pack into whole bytes is copied
    // with a warning; the rest of the file is converted.
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (
        dir.path().join("odd.safetensors"),
        dir.path().join("out.safetensors"),
    );
    let b: Vec<u8> = [1.0f32, 2.0, 3.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let b4: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let views = vec![
        ("t", TensorView::new(Dtype::F32, vec![3], &b).unwrap()),
        ("u", TensorView::new(Dtype::F32, vec![4], &b4).unwrap()),
    ];
    std::fs::write(&inp, safetensors::serialize(views, None).unwrap()).unwrap();
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&out)
        .args(["--to", "float4_e2m1fn"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "tensor \"t\": 3 elements cannot be packed as float4_e2m1fn",
        ));
    let buf = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    assert_eq!(st.tensor("t").unwrap().dtype(), Dtype::F32);
    assert_eq!(st.tensor("t").unwrap().data(), &b[..]);
    assert_eq!(st.tensor("u").unwrap().data(), &[0x42, 0x65]); // 1, 2, 3, 4 → codes 2, 4, 5, 6
}

// ---------------------------------------------------------------------------
// Hostile headers: a message naming the problem and the tensor, exit 2
// ---------------------------------------------------------------------------

/// Runs `inspect` and `convert` on a raw file; both must fail with exit 2 and
/// a message containing `needle`, leaving no output.
fn rejects(header: &str, data: &[u8], needle: &str) {
    let (dir, inp, out) = in_out();
    raw_file(&inp, header, data);
    for cmd in [vec!["inspect"], vec!["convert"]] {
        let mut c = mldtypes();
        c.args(&cmd).arg(&inp);
        if cmd[0] == "convert" {
            c.arg(&out).args(["--to", "bf16"]);
        }
        let o = c.assert().code(2).get_output().clone();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{header}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "output left behind"
    );
}

#[test]
fn header_problems_are_named() {
    rejects("[1, 2]", &[], "expected a JSON object mapping tensor names");
    rejects(
        r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
        &[0; 8],
        "header names \"a\" twice",
    );
    rejects(
        r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}}"#,
        &[0; 4],
        "tensor \"a\": unknown field `extra`",
    );
    rejects(
        r#"{"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}}"#,
        &[0; 4],
        "tensor \"a\": shape [1099511627776, 1099511627776] overflows",
    );
    rejects(
        r#"{"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
        &[0; 2],
        "tensor \"w\": 3 elements of F4 do not fill whole bytes",
    );
    rejects(
        r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
        &[0; 4],
        "tensor \"w\": data_offsets [0, 4] span 4 bytes, but shape [2] of F32 takes 8",
    );
    // Overlaps are named in offset order, whatever the header's order.
    for h in [
        r#"{"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
    ] {
        rejects(
            h,
            &[0; 12],
            "tensors \"a\" (bytes 0..8) and \"b\" (bytes 4..12) overlap",
        );
    }
    rejects(
        r#"{"__metadata__":{"k":1}}"#,
        &[],
        "__metadata__ must map strings to strings",
    );
}

#[test]
fn directory_inputs_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    mldtypes()
        .arg("inspect")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no .safetensors file"));
}

#[test]
fn tensor_names_of_65536_characters_and_more() {
    let (_dir, inp, out) = in_out();
    let name = "n".repeat(70_000);
    let b: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    let views = vec![(
        name.as_str(),
        TensorView::new(Dtype::F32, vec![2], &b).unwrap(),
    )];
    std::fs::write(&inp, safetensors::serialize(views, None).unwrap()).unwrap();
    let text = stdout_of(&["inspect", inp.to_str().unwrap()]);
    assert!(text.contains(&name));
    let text = stdout_of(&[
        "convert",
        inp.to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        "bf16",
    ]);
    assert!(text.contains(&name));
    let buf = std::fs::read(&out).unwrap();
    assert_eq!(
        SafeTensors::deserialize(&buf)
            .unwrap()
            .tensor(&name)
            .unwrap()
            .dtype(),
        Dtype::BF16
    );
}

// ---------------------------------------------------------------------------
// Safe writes
// ---------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn outputs_that_are_not_ours_to_replace() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("in.safetensors");
    write_sample(&inp);
    // A symlink is refused and left pointing where it pointed.
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, b"keep").unwrap();
    let link = dir.path().join("link.safetensors");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&link)
        .args(["--to", "bf16"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "is a symbolic link; refusing to replace it",
        ));
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // A device node.
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg("/dev/null")
        .args(["--to", "bf16"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is a device, socket or pipe"));
    // The input itself, unless --overwrite.
    let before = std::fs::read(&inp).unwrap();
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&inp)
        .args(["--to", "bf16"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the input; pass --overwrite"));
    assert_eq!(std::fs::read(&inp).unwrap(), before);
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&inp)
        .args(["--to", "bf16", "--overwrite"])
        .assert()
        .success();
    let buf = std::fs::read(&inp).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    assert_eq!(st.tensor("layer.weight").unwrap().dtype(), Dtype::BF16);
    // A new output gets the mode of any new file (0666 less the umask).
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    let want = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
    let out = dir.path().join("new.safetensors");
    mldtypes()
        .arg("convert")
        .arg(&inp)
        .arg(&out)
        .args(["--to", "float32"])
        .assert()
        .success();
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        want
    );
    // No temporaries anywhere.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("mldtypes-partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---------------------------------------------------------------------------
// Sharded models
// ---------------------------------------------------------------------------

/// Float32 values for tensor `seed` with `n` elements.
fn values(seed: u32, n: usize) -> Vec<f32> {
    let mut x = 0.1 + seed as f32 * 0.013;
    (0..n)
        .map(|i| {
            x = (x * 3.91 * (1.0 - x)).clamp(0.001, 0.999);
            (x - 0.5) * if i % 7 == 0 { 8.0 } else { 0.25 }
        })
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A model directory with two shards, an index, a config and a tokenizer.
fn write_model(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    type Shard<'a> = (&'a str, Vec<(&'a str, Vec<usize>)>);
    let shards: [Shard; 2] = [
        (
            "model-00001-of-00002.safetensors",
            vec![("embed.weight", vec![16, 64]), ("layer.0.norm", vec![64])],
        ),
        (
            "model-00002-of-00002.safetensors",
            vec![
                ("layer.0.proj.weight", vec![8, 96]),
                ("lm_head.weight", vec![4, 48]),
            ],
        ),
    ];
    let mut wm = serde_json::Map::new();
    let mut total = 0;
    for (si, (file, ts)) in shards.iter().enumerate() {
        let data: Vec<Vec<u8>> = ts
            .iter()
            .enumerate()
            .map(|(i, (_, s))| f32_bytes(&values((si * 10 + i) as u32, s.iter().product())))
            .collect();
        let views: Vec<(&str, TensorView)> = ts
            .iter()
            .zip(&data)
            .map(|((n, s), d)| (*n, TensorView::new(Dtype::F32, s.clone(), d).unwrap()))
            .collect();
        for (n, _) in ts {
            wm.insert(n.to_string(), Value::String(file.to_string()));
        }
        total += data.iter().map(|d| d.len()).sum::<usize>();
        std::fs::write(dir.join(file), safetensors::serialize(views, None).unwrap()).unwrap();
    }
    let index = serde_json::json!({"metadata": {"total_size": total}, "weight_map": wm});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"architectures": ["Test"], "torch_dtype": "float32"}"#,
    )
    .unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{\"vocab\": {}}").unwrap();
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn sharded_directory_and_index_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    for (input, name) in [
        (model.clone(), "out-dir"),
        (model.join("model.safetensors.index.json"), "out-index"),
    ] {
        let out = dir.path().join(name);
        let v: Value = serde_json::from_slice(
            &mldtypes()
                .arg("convert")
                .arg(&input)
                .arg(&out)
                .args(["--to", "bf16", "--json", "--threads", "2"])
                .assert()
                .success()
                .get_output()
                .stdout,
        )
        .unwrap();
        assert_eq!(v["files"].as_array().unwrap().len(), 2);
        assert_eq!(v["tensors"].as_array().unwrap().len(), 4);
        let index = read_json(&out.join("model.safetensors.index.json"));
        assert_eq!(
            index["weight_map"]["layer.0.proj.weight"],
            "model-00002-of-00002.safetensors"
        );
        let elements = 16 * 64 + 64 + 8 * 96 + 4 * 48;
        assert_eq!(index["metadata"]["total_size"], elements * 2);
        assert_eq!(
            read_json(&out.join("config.json"))["torch_dtype"],
            "bfloat16"
        );
        assert_eq!(
            std::fs::read(out.join("tokenizer.json")).unwrap(),
            std::fs::read(model.join("tokenizer.json")).unwrap()
        );
        let buf = std::fs::read(out.join("model-00001-of-00002.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let got = st.tensor("embed.weight").unwrap();
        let want: Vec<u8> = values(0, 16 * 64)
            .iter()
            .flat_map(|x| half::bf16::from_f32(*x).to_le_bytes())
            .collect();
        assert_eq!(got.data(), &want[..]);
    }
    // A non-empty output directory is not replaced without --overwrite.
    mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(dir.path().join("out-dir"))
        .args(["--to", "float16"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not empty; pass --overwrite"));
    mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(dir.path().join("out-dir"))
        .args(["--to", "float16", "--overwrite"])
        .assert()
        .success();
    assert_eq!(
        read_json(&dir.path().join("out-dir/config.json"))["torch_dtype"],
        "float16"
    );
}

/// The names in `dir` other than `keep`.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn broken_shards_fail_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    type Break = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Break, &str)> = vec![
        (
            "missing",
            Box::new(|m: &Path| {
                std::fs::remove_file(m.join("model-00002-of-00002.safetensors")).unwrap()
            }),
            "weight_map names shard \"model-00002-of-00002.safetensors\", which does not exist",
        ),
        (
            "corrupt",
            Box::new(|m: &Path| {
                let p = m.join("model-00002-of-00002.safetensors");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() - 10]).unwrap();
            }),
            "the file is truncated",
        ),
        (
            "mismatched",
            Box::new(|m: &Path| {
                let p = m.join("model.safetensors.index.json");
                let mut v = read_json(&p);
                v["weight_map"]["lm_head.weight"] = "model-00001-of-00002.safetensors".into();
                std::fs::write(&p, v.to_string()).unwrap();
            }),
            "maps tensor \"lm_head.weight\" to \"model-00001-of-00002.safetensors\", but it is in",
        ),
        (
            "escaping",
            Box::new(|m: &Path| {
                let p = m.join("model.safetensors.index.json");
                let mut v = read_json(&p);
                v["weight_map"]["lm_head.weight"] = "../x.safetensors".into();
                std::fs::write(&p, v.to_string()).unwrap();
            }),
            "which is not a file name in the model directory",
        ),
    ];
    for (name, breakit, needle) in cases {
        let model = dir.path().join(format!("model-{name}"));
        write_model(&model);
        breakit(&model);
        let before = entries(dir.path());
        mldtypes()
            .arg("convert")
            .arg(&model)
            .arg(dir.path().join(format!("out-{name}")))
            .args(["--to", "bf16"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
        assert_eq!(entries(dir.path()), before, "{name}");
    }
}

#[cfg(unix)]
#[test]
fn a_failure_midway_leaves_nothing() {
    // A file size limit lets the first shard be written and fails the second.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    let big: Vec<u8> = f32_bytes(&values(7, 64 * 1024));
    let views = vec![(
        "big.weight",
        TensorView::new(Dtype::F32, vec![256, 256], &big).unwrap(),
    )];
    std::fs::write(
        model.join("model-00002-of-00002.safetensors"),
        safetensors::serialize(views, None).unwrap(),
    )
    .unwrap();
    let p = model.join("model.safetensors.index.json");
    let mut v = read_json(&p);
    v["weight_map"] = serde_json::json!({
        "embed.weight": "model-00001-of-00002.safetensors",
        "layer.0.norm": "model-00001-of-00002.safetensors",
        "big.weight": "model-00002-of-00002.safetensors",
    });
    std::fs::write(&p, v.to_string()).unwrap();
    let before = entries(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("mldtypes");
    let script = format!(
        "ulimit -f 64; exec '{}' convert '{}' '{}' --to float64",
        bin.display(),
        model.display(),
        dir.path().join("out").display()
    );
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
    assert_eq!(entries(dir.path()), before);
}

// ---------------------------------------------------------------------------
// MX and NVFP4
// ---------------------------------------------------------------------------

#[test]
fn mx_round_trip_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    for fmt in ["mxfp4", "mxfp6_e2m3", "mxfp8_e4m3", "mxint8"] {
        let q = dir.path().join(format!("q-{fmt}"));
        let v: Value = serde_json::from_slice(
            &mldtypes()
                .arg("convert")
                .arg(&model)
                .arg(&q)
                .args(["--to", fmt, "--json", "--mx-scale", "ceil"])
                .assert()
                .success()
                .get_output()
                .stdout,
        )
        .unwrap();
        // The linear weight proj [8, 96] is quantized; the embedding
        // [16, 64] and the output head lm_head are not (the recipe's
        // defaults), nor the 1-D norm.
        let quantized: Vec<&str> = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(quantized, ["layer.0.proj.weight"]);
        let proj = &v["tensors"][0];
        assert_eq!(proj["clipped"], 0, "ceil never clips");
        assert!(proj["sqnr_db"].as_f64().unwrap() > 10.0);
        let buf = std::fs::read(q.join("model-00002-of-00002.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let bits = match fmt {
            "mxfp4" => 4,
            "mxfp6_e2m3" => 6,
            _ => 8,
        };
        let b = st.tensor("layer.0.proj.weight_blocks").unwrap();
        assert_eq!(
            (b.dtype(), b.shape()),
            (Dtype::U8, &[8, 3, 32 * bits / 8][..])
        );
        let s = st.tensor("layer.0.proj.weight_scales").unwrap();
        assert_eq!((s.dtype(), s.shape()), (Dtype::U8, &[8, 3][..]));
        assert_eq!(st.tensor("lm_head.weight").unwrap().dtype(), Dtype::F32);
        let (_, meta) = SafeTensors::read_metadata(&buf).unwrap();
        let rec: Value =
            serde_json::from_str(&meta.metadata().as_ref().unwrap()["mldtypes.quantization"])
                .unwrap();
        assert_eq!(
            rec["layer.0.proj.weight"],
            serde_json::json!({"format": fmt, "block_size": 32, "scale_rule": "ceil"})
        );
        // Not gpt-oss: transformers' mxfp4 loader would not take it, so the
        // record is mldtypes' own.
        let config = read_json(&q.join("config.json"));
        let qc = &config["quantization_config"];
        assert_eq!(
            (&qc["quant_method"], &qc["format"]),
            (&"mx".into(), &fmt.into())
        );
        assert_eq!(
            qc["modules_to_not_convert"],
            serde_json::json!(["embed", "lm_head"])
        );
        // Back to float32: within the quantization error reported.
        let back = dir.path().join(format!("back-{fmt}"));
        mldtypes()
            .arg("convert")
            .arg(&q)
            .arg(&back)
            .args(["--to", "float32"])
            .assert()
            .success();
        let buf = std::fs::read(back.join("model-00002-of-00002.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let y: Vec<f32> = st
            .tensor("layer.0.proj.weight")
            .unwrap()
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let x = values(10, 8 * 96);
        let max_err = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (*a as f64 - *b as f64).abs())
            .fold(0.0, f64::max);
        // serde_json's default float parser may be one ulp off.
        let reported = proj["max_abs_error"].as_f64().unwrap();
        assert!(
            (max_err - reported).abs() <= 2.0 * f64::EPSILON * max_err,
            "{fmt}: {max_err} {reported}"
        );
        let back_config = read_json(&back.join("config.json"));
        assert!(back_config.get("quantization_config").is_none());
        assert_eq!(
            (&back_config["torch_dtype"], &back_config["dtype"]),
            (&"float32".into(), &"float32".into())
        );
    }
}

#[test]
fn nvfp4_layout_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    let q = dir.path().join("q");
    mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(&q)
        .args(["--to", "nvfp4", "--rest", "bf16"])
        .assert()
        .success();
    let buf = std::fs::read(q.join("model-00002-of-00002.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    let w = st.tensor("layer.0.proj.weight").unwrap();
    assert_eq!((w.dtype(), w.shape()), (Dtype::U8, &[8, 48][..]));
    let s = st.tensor("layer.0.proj.weight_scale").unwrap();
    assert_eq!((s.dtype(), s.shape()), (Dtype::F8_E4M3, &[8, 6][..]));
    let s2 = st.tensor("layer.0.proj.weight_scale_2").unwrap();
    assert_eq!((s2.dtype(), s2.shape()), (Dtype::F32, &[][..]));
    let x = values(10, 8 * 96);
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert_eq!(
        f32::from_le_bytes(s2.data().try_into().unwrap()),
        mldtypes::mx::nvfp4_tensor_scale(amax as f64)
    );
    // The output head stays unquantized (converted to --rest).
    assert_eq!(st.tensor("lm_head.weight").unwrap().dtype(), Dtype::BF16);
    let config = read_json(&q.join("config.json"));
    let qc = &config["quantization_config"];
    assert_eq!(
        (&qc["quant_method"], &qc["quant_algo"]),
        (&"modelopt".into(), &"W4A16_NVFP4".into())
    );
    assert_eq!(qc["ignore"], serde_json::json!(["embed", "lm_head"]));
    assert_eq!(
        (&config["torch_dtype"], &config["dtype"]),
        (&"bfloat16".into(), &"bfloat16".into())
    );
    let hf = read_json(&q.join("hf_quant_config.json"));
    assert_eq!(
        hf["quantization"],
        serde_json::json!({"quant_algo": "W4A16_NVFP4", "kv_cache_quant_algo": null,
            "group_size": 16, "exclude_modules": ["embed", "lm_head"]})
    );
    let buf1 = std::fs::read(q.join("model-00001-of-00002.safetensors")).unwrap();
    let st1 = SafeTensors::deserialize(&buf1).unwrap();
    assert_eq!(st1.tensor("layer.0.norm").unwrap().dtype(), Dtype::BF16);
    let back = dir.path().join("back");
    mldtypes()
        .arg("convert")
        .arg(&q)
        .arg(&back)
        .args(["--to", "float32"])
        .assert()
        .success();
    // Dequantized: ModelOpt's description is dropped with the scales.
    assert!(!back.join("hf_quant_config.json").exists());
    let buf = std::fs::read(back.join("model-00002-of-00002.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&buf).unwrap();
    let y = st.tensor("layer.0.proj.weight").unwrap();
    assert_eq!(y.shape(), &[8, 96]);
    let mut want = vec![0f32; 8 * 96];
    mldtypes::mx::nvfp4_dequantize(
        w.data(),
        s.data(),
        f32::from_le_bytes(s2.data().try_into().unwrap()),
        &mut want,
    )
    .unwrap();
    assert_eq!(y.data(), &f32_bytes(&want)[..]);
}

/// A gpt-oss-like model directory: experts stored `[E, H, 2I]` /
/// `[E, I, H]` (`[E, in, out]`), their biases, attention, a router, the
/// embeddings and the head, `config.json` saying `model_type: gpt_oss`.
fn write_gpt_oss(dir: &Path, h: usize, i: usize) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    std::fs::create_dir_all(dir).unwrap();
    let e = 2;
    let l = "model.layers.0";
    let mut ts: Vec<(String, Vec<usize>)> = vec![
        (format!("{l}.mlp.experts.gate_up_proj"), vec![e, h, 2 * i]),
        (format!("{l}.mlp.experts.gate_up_proj_bias"), vec![e, 2 * i]),
        (format!("{l}.mlp.experts.down_proj"), vec![e, i, h]),
        (format!("{l}.mlp.experts.down_proj_bias"), vec![e, h]),
        (format!("{l}.mlp.router.weight"), vec![e, h]),
        (format!("{l}.self_attn.q_proj.weight"), vec![h, h]),
        (format!("{l}.input_layernorm.weight"), vec![h]),
        ("model.embed_tokens.weight".to_string(), vec![8, h]),
        ("lm_head.weight".to_string(), vec![8, h]),
    ];
    ts.sort();
    let data: Vec<(String, Vec<usize>, Vec<f32>)> = ts
        .into_iter()
        .enumerate()
        .map(|(k, (n, s))| {
            let v = values(40 + k as u32, s.iter().product());
            (n, s, v)
        })
        .collect();
    let bytes: Vec<Vec<u8>> = data.iter().map(|(_, _, v)| f32_bytes(v)).collect();
    let views: Vec<(&str, TensorView)> = data
        .iter()
        .zip(&bytes)
        .map(|((n, s, _), b)| {
            (
                n.as_str(),
                TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors::serialize(views, None).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "dtype": "float32", "tie_word_embeddings": false}"#,
    )
    .unwrap();
    data
}

/// gpt-oss's MXFP4 recipe: only the experts, blocked along the input axis
/// and stored transposed, `modules_to_not_convert` in the released
/// checkpoints' form; dequantized back in the original orientation,
/// including when the hidden size is twice the intermediate size (square
/// `gate_up_proj`, where a transposed load would go unnoticed).
#[test]
fn gpt_oss_mxfp4_recipe() {
    for (h, i) in [(64, 96), (64, 32)] {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model");
        let orig = write_gpt_oss(&model, h, i);
        let q = dir.path().join("q");
        let v = json_of(&[
            "convert",
            model.to_str().unwrap(),
            q.to_str().unwrap(),
            "--to",
            "mxfp4",
            "--json",
        ]);
        let names: Vec<&str> = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "model.layers.0.mlp.experts.down_proj",
                "model.layers.0.mlp.experts.gate_up_proj"
            ]
        );
        let buf = std::fs::read(q.join("model.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let gu = st
            .tensor("model.layers.0.mlp.experts.gate_up_proj_blocks")
            .unwrap();
        assert_eq!(gu.shape(), &[2, 2 * i, h / 32, 16]);
        let dn = st
            .tensor("model.layers.0.mlp.experts.down_proj_scales")
            .unwrap();
        assert_eq!(dn.shape(), &[2, h, i / 32]);
        // Blocks run along the input axis: output row o of expert 0 holds
        // column o of the original.
        let x = &orig
            .iter()
            .find(|t| t.0 == "model.layers.0.mlp.experts.gate_up_proj")
            .unwrap()
            .2;
        let col: Vec<f32> = (0..h).map(|r| x[r * 2 * i + 5]).collect();
        let (mut b, mut s) = (vec![0u8; h / 2], vec![0u8; h / 32]);
        mldtypes::mx::quantize(
            &col,
            mldtypes::mx::MxFormat::Fp4,
            mldtypes::mx::ScaleRule::Floor,
            &mut b,
            &mut s,
        )
        .unwrap();
        assert_eq!(&gu.data()[5 * h / 2..6 * h / 2], &b[..]);
        let config = read_json(&q.join("config.json"));
        assert_eq!(
            config["quantization_config"],
            serde_json::json!({"quant_method": "mxfp4", "modules_to_not_convert": [
                "lm_head", "model.embed_tokens", "model.layers.*.mlp.router",
                "model.layers.*.self_attn"]})
        );
        // Back: shapes of the original, values within the reported error.
        let back = dir.path().join("back");
        mldtypes()
            .arg("convert")
            .arg(&q)
            .arg(&back)
            .args(["--to", "float32"])
            .assert()
            .success();
        let bbuf = std::fs::read(back.join("model.safetensors")).unwrap();
        let bst = SafeTensors::deserialize(&bbuf).unwrap();
        for (name, shape, x) in &orig {
            let t = bst.tensor(name).unwrap();
            assert_eq!(t.shape(), &shape[..], "{name}");
            let y: Vec<f32> = t
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let err = x
                .iter()
                .zip(&y)
                .map(|(a, b)| (*a as f64 - *b as f64).abs())
                .fold(0.0, f64::max);
            let reported = v["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["name"] == name.as_str())
                .map_or(0.0, |r| r["max_abs_error"].as_f64().unwrap());
            assert!(
                (err - reported).abs() <= 2.0 * f64::EPSILON * err,
                "{name}: {err} {reported}"
            );
        }
    }
}

/// The FP8 recipes in the compressed-tensors and fp8 formats leave gpt-oss's
/// fused experts as they are and list their module as not converted, in
/// each format's matching rule (a regular expression for compressed-tensors,
/// whose `ignore` vLLM matches against per-expert names), so that a server
/// does not take them for quantized. (ModelOpt's format quantizes them:
/// `gpt_oss_modelopt_fp8_experts`.)
#[test]
fn gpt_oss_fp8_lists_the_unquantized_experts() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_gpt_oss(&model, 64, 32);
    for (to, format, key, experts) in [
        (
            "fp8",
            "compressed-tensors",
            "ignore",
            r"re:model\.layers\.0\.mlp\.experts($|\.)",
        ),
        (
            "fp8_block",
            "fp8",
            "modules_to_not_convert",
            "model.layers.0.mlp.experts",
        ),
    ] {
        let q = dir.path().join(format!("q-{to}-{format}"));
        let v = json_of(&[
            "convert",
            model.to_str().unwrap(),
            q.to_str().unwrap(),
            "--to",
            to,
            "--format",
            format,
            "--json",
        ]);
        let names: Vec<&str> = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["model.layers.0.self_attn.q_proj.weight"]);
        let config = read_json(&q.join("config.json"));
        assert_eq!(
            config["quantization_config"][key],
            serde_json::json!([
                "lm_head",
                "model.embed_tokens",
                experts,
                "model.layers.0.mlp.router"
            ]),
            "{to} {format}"
        );
    }
}

/// The FP8 recipes in ModelOpt's format quantize gpt-oss's fused experts as
/// ModelOpt 0.47 does: `NAME` F8_E4M3 in the stored `[E, in, out]` layout,
/// `NAME_weight_scale` F32 `[]` over all experts (`fp8`), `[E]` per expert
/// (`fp8_channel`), `[E, out/128, 1, in/128, 1]` per 128 x 128 block of each
/// expert's transpose (`fp8_block`; here 2 x 2 blocks of `gate_up_proj`, so
/// the transposition shows), the biases unchanged, the experts absent from
/// the exclusions; `--to float32` reads them back.
#[test]
fn gpt_oss_modelopt_fp8_experts() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    let (h, i) = (160, 72);
    let orig = write_gpt_oss(&model, h, i);
    let x_of = |name: &str| &orig.iter().find(|t| t.0 == name).unwrap().2;
    let f32s = |d: &[u8]| -> Vec<f32> {
        d.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let scale = |a: f64| mldtypes::mx::fp8_scale(a, mldtypes::dtype::DType::Float32);
    for (to, algo) in [
        ("fp8", "FP8"),
        ("fp8_channel", "FP8_PER_CHANNEL_PER_TOKEN"),
        ("fp8_block", "fp8_pb_wo"),
    ] {
        let q = dir.path().join(format!("q-{to}"));
        let v = json_of(&[
            "convert",
            model.to_str().unwrap(),
            q.to_str().unwrap(),
            "--to",
            to,
            "--format",
            "modelopt",
            "--json",
        ]);
        let names: Vec<&str> = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "model.layers.0.mlp.experts.down_proj",
                "model.layers.0.mlp.experts.gate_up_proj",
                "model.layers.0.self_attn.q_proj.weight"
            ],
            "{to}"
        );
        let buf = std::fs::read(q.join("model.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let back = dir.path().join(format!("back-{to}"));
        mldtypes()
            .arg("convert")
            .arg(&q)
            .arg(&back)
            .args(["--to", "float32"])
            .assert()
            .success();
        let bbuf = std::fs::read(back.join("model.safetensors")).unwrap();
        let bst = SafeTensors::deserialize(&bbuf).unwrap();
        assert_eq!(bst.len(), orig.len(), "{to}: the scales are gone");
        for (proj, inn, out) in [("gate_up_proj", h, 2 * i), ("down_proj", i, h)] {
            let name = format!("model.layers.0.mlp.experts.{proj}");
            let x = x_of(&name);
            let w = st.tensor(&name).unwrap();
            assert_eq!((w.dtype(), w.shape()), (Dtype::F8_E4M3, &[2, inn, out][..]));
            let s = st.tensor(&format!("{name}_weight_scale")).unwrap();
            let (ob, ib) = (out.div_ceil(128), inn.div_ceil(128));
            let sshape: Vec<usize> = match to {
                "fp8" => vec![],
                "fp8_channel" => vec![2],
                _ => vec![2, ob, 1, ib, 1],
            };
            assert_eq!((s.dtype(), s.shape()), (Dtype::F32, &sshape[..]), "{to}");
            // Each element's scale: amax / 448 over all experts, over its
            // expert, or over its block of the expert's [out, in].
            let at = |e: usize, r: usize, c: usize| x[(e * inn + r) * out + c].abs() as f64;
            let mut want = Vec::new();
            for e in 0..2 {
                for o in 0..ob {
                    for b in 0..ib {
                        let mut a = 0f64;
                        for r in (b * 128..(b + 1) * 128).take_while(|r| *r < inn) {
                            for c in (o * 128..(o + 1) * 128).take_while(|c| *c < out) {
                                a = a.max(at(e, r, c));
                            }
                        }
                        want.push(a);
                    }
                }
            }
            let amax = |v: &[f64]| v.iter().fold(0f64, |m, a| m.max(*a));
            let n = inn * out;
            let (want, elem): (Vec<f64>, Vec<f64>) = match to {
                "fp8" => {
                    let s = scale(amax(&want));
                    (vec![s], vec![s; 2 * n])
                }
                "fp8_channel" => {
                    let per: Vec<f64> = want.chunks(ob * ib).map(|c| scale(amax(c))).collect();
                    let elem = (0..2 * n).map(|j| per[j / n]).collect();
                    (per, elem)
                }
                _ => {
                    let per: Vec<f64> = want.iter().map(|a| scale(*a)).collect();
                    let elem = (0..2 * n)
                        .map(|j| {
                            let (e, r, c) = (j / n, j % n / out, j % out);
                            per[(e * ob + c / 128) * ib + r / 128]
                        })
                        .collect();
                    (per, elem)
                }
            };
            let sv: Vec<f64> = f32s(s.data()).iter().map(|v| *v as f64).collect();
            assert_eq!(sv, want, "{to} {proj}");
            let mut codes = vec![0u8; 2 * n];
            mldtypes::mx::fp8_quantize(&x[..], 1, &elem, &mut codes).unwrap();
            assert_eq!(w.data(), &codes[..], "{to} {proj}");
            let b = st.tensor(&format!("{name}_bias")).unwrap();
            assert_eq!(b.dtype(), Dtype::F32);
            // Back in the stored layout, each value its code times its scale.
            let mut y = vec![0f64; 2 * n];
            mldtypes::mx::fp8_dequantize_f64(&codes, 1, &elem, &mut y).unwrap();
            let y32: Vec<f32> = y.iter().map(|v| *v as f32).collect();
            let bt = bst.tensor(&name).unwrap();
            assert_eq!((bt.dtype(), bt.shape()), (Dtype::F32, &[2, inn, out][..]));
            assert_eq!(bt.data(), &f32_bytes(&y32)[..], "{to} {proj}");
        }
        let exclusions =
            serde_json::json!(["lm_head", "model.embed_tokens", "model.layers.0.mlp.router"]);
        let config = read_json(&q.join("config.json"));
        assert_eq!(config["quantization_config"]["ignore"], exclusions, "{to}");
        assert_eq!(config["quantization_config"]["quant_algo"], algo);
        let hf = read_json(&q.join("hf_quant_config.json"));
        assert_eq!(hf["quantization"]["exclude_modules"], exclusions, "{to}");
        assert_eq!(hf["quantization"]["quant_algo"], algo);
    }
}

/// `--only` replaces the recipe's selection, `--exclude` removes from it;
/// a tensor whose dimension is not a whole number of blocks is left with a
/// warning; a format the target cannot be written in is a usage error.
#[test]
fn recipe_selection_overrides_and_misuse() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    let q = dir.path().join("q");
    let v = json_of(&[
        "convert",
        model.to_str().unwrap(),
        q.to_str().unwrap(),
        "--to",
        "mxfp4",
        "--only",
        "{embed,lm_head}.weight",
        "--json",
    ]);
    let names: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["embed.weight"]);
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("\"lm_head.weight\" of shape [4, 48] left unquantized")),
        "{w:?}"
    );
    let q2 = dir.path().join("q2");
    let v = json_of(&[
        "convert",
        model.to_str().unwrap(),
        q2.to_str().unwrap(),
        "--to",
        "nvfp4",
        "--exclude",
        "*proj*",
        "--json",
    ]);
    assert!(v["tensors"].as_array().unwrap().is_empty());
    // Nothing quantized: config.json is copied as it was.
    assert!(read_json(&q2.join("config.json"))
        .get("quantization_config")
        .is_none());
    assert!(!q2.join("hf_quant_config.json").exists());
    mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(dir.path().join("q3"))
        .args(["--to", "mxfp4", "--format", "modelopt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "mxfp4 cannot be written in the modelopt format; its formats: mx",
        ));
    mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(dir.path().join("q4"))
        .args(["--to", "bf16", "--format", "fp8"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bfloat16 is a plain conversion"));
    assert!(!dir.path().join("q3").exists() && !dir.path().join("q4").exists());
}

/// The FP8 recipes: names, dtypes and shapes of the weight and its scale in
/// each format, the scales `amax / 448` rounded once, the codes those of
/// `mx::fp8_quantize`, the configuration, and dequantization back.
/// One FP8 layout case: target, `--format`, scale name, scale dtype, scale
/// shape, `quant_method`.
type Fp8Case<'a> = (&'a str, &'a str, &'a str, Dtype, &'a [usize], &'a str);

#[test]
fn fp8_recipes_layouts_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    // proj is [8, 96] float32.
    let x = values(10, 8 * 96);
    let cases: [Fp8Case; 6] = [
        (
            "fp8",
            "compressed-tensors",
            "weight_scale",
            Dtype::F32,
            &[1],
            "compressed-tensors",
        ),
        (
            "fp8",
            "modelopt",
            "weight_scale",
            Dtype::F32,
            &[],
            "modelopt",
        ),
        (
            "fp8_channel",
            "compressed-tensors",
            "weight_scale",
            Dtype::F32,
            &[8, 1],
            "compressed-tensors",
        ),
        (
            "fp8_channel",
            "modelopt",
            "weight_scale",
            Dtype::F32,
            &[8],
            "modelopt",
        ),
        (
            "fp8_block",
            "fp8",
            "weight_scale_inv",
            Dtype::F32,
            &[1, 1],
            "fp8",
        ),
        (
            "fp8_block",
            "modelopt",
            "weight_scale",
            Dtype::F32,
            // One 128 x 128 block: ModelOpt writes the scale 0-d.
            &[],
            "modelopt",
        ),
    ];
    for (to, format, sname, sdt, sshape, method) in cases {
        let q = dir.path().join(format!("q-{to}-{format}"));
        let v = json_of(&[
            "convert",
            model.to_str().unwrap(),
            q.to_str().unwrap(),
            "--to",
            to,
            "--format",
            format,
            "--json",
        ]);
        assert_eq!(v["format"], format);
        let buf = std::fs::read(q.join("model-00002-of-00002.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let w = st.tensor("layer.0.proj.weight").unwrap();
        assert_eq!((w.dtype(), w.shape()), (Dtype::F8_E4M3, &[8, 96][..]));
        let s = st.tensor(&format!("layer.0.proj.{sname}")).unwrap();
        assert_eq!((s.dtype(), s.shape()), (sdt, sshape), "{to} {format}");
        let sv: Vec<f64> = s
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect();
        let rows: Vec<f64> = x
            .chunks(96)
            .map(|r| r.iter().fold(0f64, |m, v| m.max(v.abs() as f64)))
            .collect();
        let want: Vec<f64> = if to == "fp8_channel" {
            rows.iter()
                .map(|a| mldtypes::mx::fp8_scale(*a, mldtypes::dtype::DType::Float32))
                .collect()
        } else {
            let a = rows.iter().fold(0f64, |m, v| m.max(*v));
            vec![mldtypes::mx::fp8_scale(a, mldtypes::dtype::DType::Float32)]
        };
        assert_eq!(sv, want, "{to} {format}");
        let mut codes = vec![0u8; 8 * 96];
        let seg = if to == "fp8_channel" { 96 } else { 8 * 96 };
        mldtypes::mx::fp8_quantize(&x, seg, &want, &mut codes).unwrap();
        assert_eq!(w.data(), &codes[..], "{to} {format}");
        let config = read_json(&q.join("config.json"));
        assert_eq!(config["quantization_config"]["quant_method"], method);
        assert_eq!(
            q.join("hf_quant_config.json").exists(),
            method == "modelopt"
        );
        let back = dir.path().join(format!("back-{to}-{format}"));
        mldtypes()
            .arg("convert")
            .arg(&q)
            .arg(&back)
            .args(["--to", "float32"])
            .assert()
            .success();
        let bbuf = std::fs::read(back.join("model-00002-of-00002.safetensors")).unwrap();
        let bst = SafeTensors::deserialize(&bbuf).unwrap();
        assert_eq!(bst.len(), 2, "the scales are gone");
        let mut y = vec![0f64; 8 * 96];
        mldtypes::mx::fp8_dequantize_f64(&codes, seg, &want, &mut y).unwrap();
        let y32: Vec<f32> = y.iter().map(|v| *v as f32).collect();
        assert_eq!(
            bst.tensor("layer.0.proj.weight").unwrap().data(),
            &f32_bytes(&y32)[..]
        );
    }
}

/// MiniLM through the CLI and back, when `scripts/fetch-example-model.sh`
/// has fetched it (tests never download): every quantized tensor comes back
/// with its shape and exactly the max abs error the summary reported; every
/// other tensor byte for byte.
#[test]
fn minilm_round_trip_when_fetched() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples-data/all-MiniLM-L6-v2.safetensors");
    if !model.exists() {
        eprintln!("skipped: run scripts/fetch-example-model.sh");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let orig = std::fs::read(&model).unwrap();
    let orig = SafeTensors::deserialize(&orig).unwrap();
    for fmt in ["mxfp4", "mxfp6_e2m3", "nvfp4"] {
        let (q, back) = (
            dir.path().join("q.safetensors"),
            dir.path().join("b.safetensors"),
        );
        let v: Value = serde_json::from_slice(
            &mldtypes()
                .arg("convert")
                .arg(&model)
                .arg(&q)
                .args(["--to", fmt, "--json"])
                .assert()
                .success()
                .get_output()
                .stdout,
        )
        .unwrap();
        mldtypes()
            .arg("convert")
            .arg(&q)
            .arg(&back)
            .args(["--to", "float32"])
            .assert()
            .success();
        let b = std::fs::read(&back).unwrap();
        let b = SafeTensors::deserialize(&b).unwrap();
        assert_eq!(b.len(), orig.len());
        let reports = v["tensors"].as_array().unwrap();
        // The 37 linear weights; the three embeddings are not quantized.
        assert_eq!(reports.len(), 37, "{fmt}");
        for (name, t) in orig.tensors() {
            let u = b.tensor(&name).unwrap();
            assert_eq!(u.shape(), t.shape(), "{name}");
            match reports.iter().find(|r| r["name"] == name.as_str()) {
                None => assert_eq!(u.data(), t.data(), "{name}"),
                Some(r) => {
                    let f = |d: &[u8]| -> Vec<f64> {
                        d.chunks_exact(4)
                            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
                            .collect()
                    };
                    let (x, y) = (f(t.data()), f(u.data()));
                    let err = x
                        .iter()
                        .zip(&y)
                        .map(|(x, y)| (x - y).abs())
                        .fold(0.0, f64::max);
                    let reported = r["max_abs_error"].as_f64().unwrap();
                    // MX values are exact in float32; an NVFP4 value (a
                    // 30-bit product) is rounded to float32 once, moving the
                    // error by at most half an ulp of the largest value.
                    // Besides, serde_json's default float parser may be one
                    // ulp off.
                    let amax = y.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
                    let tol = if fmt == "nvfp4" {
                        amax * 2f64.powi(-24)
                    } else {
                        0.0
                    };
                    assert!(
                        (err - reported).abs() <= tol + 2.0 * f64::EPSILON * err,
                        "{fmt} {name}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Signals, FIFOs, absurd options: each in a child process with a time limit
// ---------------------------------------------------------------------------

/// A float32 safetensors file of `mib` MiB in 4 MiB tensors.
fn big_file(path: &Path, mib: usize) {
    let block = f32_bytes(&values(7, 1 << 20));
    let n = mib / 4;
    let mut header = String::from("{");
    for i in 0..n {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            "\"t{i:04}\":{{\"dtype\":\"F32\",\"shape\":[1024,1024],\"data_offsets\":[{},{}]}}",
            i * block.len(),
            (i + 1) * block.len()
        ));
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    for _ in 0..n {
        f.write_all(&block).unwrap();
    }
}

fn partials(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|n| n.ends_with(".mldtypes-partial"))
        .collect()
}

#[cfg(unix)]
#[test]
fn sigint_and_sigterm_stop_a_conversion_and_remove_the_temporary() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    big_file(&input, 256);
    let bin = assert_cmd::cargo::cargo_bin("mldtypes");
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let out = dir.path().join("out.safetensors");
        let mut child = std::process::Command::new(&bin)
            .args(["convert", "--to", "nvfp4", "--threads", "1"])
            .arg(&input)
            .arg(&out)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while partials(dir.path()).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            !partials(dir.path()).is_empty(),
            "the conversion never started"
        );
        std::thread::sleep(Duration::from_millis(200));
        let sent = Instant::now();
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if sent.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("signal {sig}: still running after 30 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let elapsed = sent.elapsed();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}: {err}");
        assert!(err.contains("no output written"), "{err}");
        assert!(
            elapsed < Duration::from_secs(2),
            "signal {sig}: {elapsed:?}"
        );
        assert!(!out.exists());
        assert_eq!(partials(dir.path()), Vec::<String>::new());
    }
}

#[cfg(unix)]
#[test]
fn fifo_inputs_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.safetensors");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = dir.path().join("out.safetensors");
    mldtypes()
        .timeout(std::time::Duration::from_secs(20))
        .args(["convert", "--to", "bfloat16"])
        .arg(&fifo)
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is a FIFO (named pipe), not a regular file",
        ));
    mldtypes()
        .timeout(std::time::Duration::from_secs(20))
        .arg("inspect")
        .arg(&fifo)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("FIFO"));
    // Inside a model directory.
    let model = dir.path().join("model");
    write_model(&model);
    assert!(std::process::Command::new("mkfifo")
        .arg(model.join("vocab.txt"))
        .status()
        .unwrap()
        .success());
    mldtypes()
        .timeout(std::time::Duration::from_secs(20))
        .args(["convert", "--to", "bfloat16"])
        .arg(&model)
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("vocab.txt: is a FIFO"));
    assert_eq!(partials(dir.path()), Vec::<String>::new());
}

#[test]
fn absurd_globs_and_thread_counts_are_usage_errors() {
    let (_d, input, out) = in_out();
    let long = "*".repeat(100_000);
    mldtypes()
        .timeout(std::time::Duration::from_secs(60))
        .args(["convert", "--to", "bfloat16", "--only", &long])
        .arg(&input)
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 1024"));
    mldtypes()
        .timeout(std::time::Duration::from_secs(60))
        .args(["convert", "--to", "bfloat16", "--threads", "1000000"])
        .arg(&input)
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("four per available core"));
    assert!(!out.exists());
}

#[test]
fn repeated_conversions_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    for to in ["mxfp4", "nvfp4", "bfloat16"] {
        let mut first: Option<Vec<(String, Vec<u8>)>> = None;
        for (i, threads) in ["1", "2", "1", "3"].into_iter().enumerate() {
            let out = dir.path().join(format!("o-{to}-{i}"));
            mldtypes()
                .args(["convert", "--to", to, "--threads", threads])
                .arg(&model)
                .arg(&out)
                .assert()
                .success();
            let files: Vec<(String, Vec<u8>)> = entries(&out)
                .into_iter()
                .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
                .collect();
            match &first {
                None => first = Some(files),
                Some(f) => assert!(f == &files, "{to}: run {i} differs"),
            }
        }
    }
}

#[test]
fn float64_originals_are_compared_in_float64() {
    // Rounded to float32 first, 1/3 and 0.1 would show no error in a
    // float32 target, and ±1e300 would count as infinite originals.
    let x = [
        0.1,
        1.0 / 3.0,
        1e-30,
        2.5,
        1e300,
        -1e300,
        f64::NAN,
        f64::INFINITY,
        1e-50,
        -7.000_000_1,
    ];
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (to, width) in [("float32", 4), ("bfloat16", 2)] {
        let (_dir, inp, out) = in_out();
        let views = vec![(
            "w",
            TensorView::new(Dtype::F64, vec![2, 5], &bytes).unwrap(),
        )];
        std::fs::write(&inp, safetensors::serialize(views, None).unwrap()).unwrap();
        let report = json_of(&[
            "convert",
            inp.to_str().unwrap(),
            out.to_str().unwrap(),
            "--to",
            to,
            "--json",
        ]);
        let buf = std::fs::read(&out).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let y: Vec<f64> = st
            .tensor("w")
            .unwrap()
            .data()
            .chunks_exact(width)
            .map(|c| match width {
                4 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
                _ => f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16) as f64,
            })
            .collect();
        // The statistics of the definition, on the float64 originals.
        let (mut max, mut err, mut sq, mut clipped, mut flushed) = (0f64, 0f64, 0f64, 0, 0);
        for (x, y) in x.iter().zip(&y) {
            if !x.is_finite() {
                continue;
            }
            if !y.is_finite() {
                clipped += 1;
                continue;
            }
            let e = (y - x).abs();
            max = max.max(e);
            err += e * e;
            sq += x * x;
            flushed += (*x != 0.0 && *y == 0.0) as u64;
        }
        assert!(max > 1e-9, "{to}: {max}");
        let r = &report["tensors"][0];
        assert_eq!(r["max_abs_error"].as_f64().unwrap(), max, "{to}");
        assert_eq!(r["clipped"], clipped, "{to}");
        assert_eq!(r["clipped"], 2, "{to}: ±1e300");
        assert_eq!(r["overflow_to_nonfinite"], 2, "{to}");
        assert_eq!(r["flushed_to_zero"], flushed, "{to}");
        let rel = r["rel_rms_error"].as_f64().unwrap();
        let want = (err / sq).sqrt();
        assert!((rel - want).abs() <= 1e-12 * want, "{to}: {rel} {want}");
    }
}

#[test]
fn mx_scale_rules_even_and_rceil_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    // The original weight, from whichever shard holds it.
    let (dt, raw) = tensor_in(&model, "layer.0.proj.weight");
    assert_eq!(dt, Dtype::F32);
    let x: Vec<f32> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(x.len(), 8 * 96);
    for (name, rule) in [
        ("even", mldtypes::mx::ScaleRule::Even),
        ("rceil", mldtypes::mx::ScaleRule::Rceil),
    ] {
        let q = dir.path().join(format!("q-{name}"));
        mldtypes()
            .arg("convert")
            .arg(&model)
            .arg(&q)
            .args(["--to", "mxfp4", "--mx-scale", name])
            .assert()
            .success();
        let buf = std::fs::read(q.join("model-00002-of-00002.safetensors")).unwrap();
        let st = SafeTensors::deserialize(&buf).unwrap();
        let (mut b, mut s) = (vec![0u8; 8 * 3 * 16], vec![0u8; 8 * 3]);
        mldtypes::mx::quantize(&x, mldtypes::mx::MxFormat::Fp4, rule, &mut b, &mut s).unwrap();
        assert_eq!(
            st.tensor("layer.0.proj.weight_blocks").unwrap().data(),
            &b[..]
        );
        assert_eq!(
            st.tensor("layer.0.proj.weight_scales").unwrap().data(),
            &s[..]
        );
        let (_, meta) = SafeTensors::read_metadata(&buf).unwrap();
        let rec: Value =
            serde_json::from_str(&meta.metadata().as_ref().unwrap()["mldtypes.quantization"])
                .unwrap();
        assert_eq!(
            rec["layer.0.proj.weight"],
            serde_json::json!({"format": "mxfp4", "block_size": 32, "scale_rule": name})
        );
    }
    // An unknown rule is a usage error naming the valid ones.
    let o = mldtypes()
        .arg("convert")
        .arg(&model)
        .arg(dir.path().join("bad"))
        .args(["--to", "mxfp4", "--mx-scale", "round"])
        .assert()
        .failure()
        .get_output()
        .stderr
        .clone();
    let e = String::from_utf8_lossy(&o);
    assert!(e.contains("rceil") && e.contains("even"), "{e}");
}

#[test]
fn rounding_modes_and_seeds_reach_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_model(&model);
    // A seeded stochastic conversion: the same bytes on one and two threads,
    // and the library's rounding of the tensor keyed by its name.
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        let q = dir.path().join(format!("sr-{threads}"));
        mldtypes()
            .arg("convert")
            .arg(&model)
            .arg(&q)
            .args([
                "--to",
                "float8_e4m3fn",
                "--rounding",
                "stochastic",
                "--seed",
                "9",
            ])
            .args(["--sr-bits", "12", "--threads", threads])
            .assert()
            .success();
        outs.push(std::fs::read(q.join("model-00002-of-00002.safetensors")).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    let name = "layer.0.proj.weight";
    let (_, x) = tensor_in(&model, name);
    let r = mldtypes::round::Rounding::new(mldtypes::round::RoundMode::Stochastic)
        .with_seed(mldtypes::checkpoint::tensor_seed(9, name), 12);
    let mut want = vec![0u8; x.len() / 4];
    mldtypes::cast::round_bytes(
        &x,
        mldtypes::dtype::DType::Float32,
        &mut want,
        mldtypes::dtype::DType::Float8E4M3FN,
        &r,
    )
    .unwrap();
    let st = SafeTensors::deserialize(&outs[0]).unwrap();
    assert_eq!(st.tensor(name).unwrap().data(), &want[..]);
    // Refusals name the fault.
    for (args, msg) in [
        (&["--rounding", "stochastic"][..], "needs a seed"),
        (
            &["--rounding", "toward_zero", "--seed", "1"][..],
            "deterministic",
        ),
        (&["--rounding", "upward"][..], "nearest_even"),
    ] {
        mldtypes()
            .arg("convert")
            .arg(&model)
            .arg(dir.path().join("bad"))
            .args(["--to", "float8_e4m3fn"])
            .args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(msg));
    }
    assert!(!dir.path().join("bad").exists());
}

/// The dtype and bytes of tensor `name`, from whichever shard of the model
/// directory holds it.
fn tensor_in(model: &Path, name: &str) -> (Dtype, Vec<u8>) {
    for e in std::fs::read_dir(model).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "safetensors") {
            let buf = std::fs::read(&p).unwrap();
            let st = SafeTensors::deserialize(&buf).unwrap();
            if let Ok(t) = st.tensor(name) {
                return (t.dtype(), t.data().to_vec());
            }
        }
    }
    panic!("no shard of {} holds {name}", model.display())
}
