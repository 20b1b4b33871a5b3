//! Integration tests driving the `mldtypes` binary.
//!
//! Reference values: the JAX "Type promotion semantics" page, current and of
//! October 2020 (their HTML tables, copied verbatim from the seed documents,
//! only the reStructuredText indentation and the trailing `<p>` removed, as
//! `tests/data/jax_page_table.html` and `tests/data/jax_2020_page_table.html`;
//! the strict-mode error text), the JEP 9407 appendix tables, ml_dtypes 0.6.0
//! (format maxima, code points, finfo fields), the `half` crate as an
//! independent IEEE float16 / bfloat16 rounding oracle, and the library's
//! scalar types (themselves checked against ml_dtypes vectors) for the float8,
//! float6 and float4 conversions.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{json, Value};

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
// promote
// ---------------------------------------------------------------------------

#[test]
fn promote_prints_the_join() {
    assert_eq!(stdout_of(&["promote", "int8", "bf16"]), "bfloat16\n");
    assert_eq!(stdout_of(&["promote", "uint8", "int8"]), "int16\n");
    assert_eq!(stdout_of(&["promote", "bfloat16", "float16"]), "float32\n");
    // A Python int adopts the precision of the typed operand (seed page, weak types).
    assert_eq!(stdout_of(&["promote", "int16", "i*"]), "int16\n");
    assert_eq!(stdout_of(&["promote", "i*", "f*"]), "float64 (weak)\n");
    assert_eq!(
        stdout_of(&["promote", "--x32", "i*", "f*"]),
        "float32 (weak)\n"
    );
    assert_eq!(
        stdout_of(&["promote", "--x32", "int64", "uint8"]),
        "int32\n"
    );
}

#[test]
fn promote_json_shape() {
    let v = json_of(&["promote", "--json", "float16", "bfloat16"]);
    assert_eq!(v, serde_json::json!({"dtype": "float32", "weak": false}));
    let v = json_of(&["promote", "--json", "uint8", "i*"]);
    assert_eq!(v, serde_json::json!({"dtype": "uint8", "weak": false}));
}

#[test]
fn promote_explain_walks_the_lattice() {
    let out = stdout_of(&["promote", "--explain", "int8", "bfloat16"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("bfloat16"));
    let int8 = lines.next().expect("a path for int8");
    assert!(int8.starts_with("  int8: int8 -> "), "{int8}");
    assert!(int8.ends_with("-> bfloat16"), "{int8}");
    assert!(int8.contains("f*"), "{int8}");
    assert_eq!(lines.next(), Some("  bfloat16: bfloat16"));
}

const STRICT_ERROR: &str =
    "TypePromotionError: Input dtypes ('float32', 'int32') have no available \
implicit dtype promotion path when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs \
to the desired output type, or set jax_numpy_dtype_promotion=standard.";

#[test]
fn promote_strict_error_exits_1_with_jax_text() {
    mldtypes()
        .args(["promote", "--strict", "float32", "int32"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(STRICT_ERROR));
    // Strict mode still allows weakly typed promotions (seed page).
    assert_eq!(
        stdout_of(&["promote", "--strict", "float32", "i*"]),
        "float32\n"
    );
    let out = mldtypes()
        .args(["promote", "--strict", "--json", "float32", "int32"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(v["error"]["kind"], "TypePromotionError");
    assert_eq!(
        format!(
            "TypePromotionError: {}",
            v["error"]["message"].as_str().unwrap()
        ),
        STRICT_ERROR
    );
}

#[test]
fn promote_usage_errors_exit_2() {
    mldtypes()
        .args(["promote", "int8", "float33"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("float33"));
    mldtypes().args(["promote"]).assert().code(2);
}

#[test]
fn promote_stdin_answers_every_line_then_exits_1() {
    let out = mldtypes()
        .args(["promote", "--strict", "--stdin", "--json"])
        .write_stdin("int8 int8\nfloat32 int32\n\nfloat32 f*\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    // One answer per input line, the blank line answered by `null`.
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0],
        serde_json::json!({"dtype": "int8", "weak": false})
    );
    assert_eq!(lines[1]["error"]["kind"], "TypePromotionError");
    assert_eq!(lines[2], Value::Null);
    assert_eq!(
        lines[3],
        serde_json::json!({"dtype": "float32", "weak": false})
    );
    mldtypes()
        .args(["promote", "--stdin"])
        .write_stdin("int8 uint8\n\n  \nbool i*\n")
        .assert()
        .success()
        .stdout("int16\n\n\nint64 (weak)\n");
    mldtypes()
        .args(["promote", "--stdin"])
        .write_stdin("int8 uint8\nint8 nosuchtype\n")
        .assert()
        .code(2)
        .stdout(predicate::str::starts_with("int16\nUsageError: "));
    mldtypes()
        .args(["promote", "--stdin"])
        .write_stdin("int8 uint8\nbool i*\n")
        .assert()
        .success()
        .stdout("int16\nint64 (weak)\n");
}

// ---------------------------------------------------------------------------
// table
// ---------------------------------------------------------------------------

fn strip_classes(s: &str) -> String {
    s.replace(" class=\"d\"", "")
}

#[test]
fn table_html_reproduces_the_jax_page_cells() {
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_page_table.html"),
    )
    .expect("committed seed table");
    let got = stdout_of(&["table", "--format", "html"]);
    assert_eq!(strip_classes(&got), strip_classes(&want));
}

#[test]
fn table_html_reproduces_the_jax_page_markup_byte_for_byte() {
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_page_table.html"),
    )
    .expect("committed seed table");
    assert_eq!(stdout_of(&["table", "--format", "html"]), want);
}

#[test]
fn table_html_reproduces_the_2020_page_markup_byte_for_byte() {
    // Seed 000: the October 2020 table (no weak types; `c4` = complex64,
    // `c8` = complex128), green cells where it differs from NumPy.
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_2020_page_table.html"),
    )
    .expect("committed seed table");
    assert_eq!(
        stdout_of(&["table", "--system", "jax-2020", "--format", "html"]),
        want
    );
}

#[test]
fn table_of_other_systems() {
    // JEP 9407 appendix tables, in their bit-width naming; `-` is undefined.
    let csv = stdout_of(&["table", "--system", "numpy", "--format", "csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 19);
    assert_eq!(rows[0][1..4], ["b", "u8", "u16"]);
    let cell = |r: &str, c: &str| {
        let j = rows[0].iter().position(|h| *h == c).unwrap();
        rows.iter().find(|row| row[0] == r).unwrap()[j].to_string()
    };
    assert_eq!(cell("u8", "i8"), "i16");
    assert_eq!(cell("u64", "i64"), "f64");
    assert_eq!(cell("i*", "u8"), "u8");
    assert_eq!(cell("b", "i*"), "i64");
    assert_eq!(cell("bf16", "f16"), "-");
    let v = json_of(&["table", "--system", "torch", "--format", "json"]);
    assert_eq!(v.as_array().unwrap().len(), 18 * 18);
    mldtypes()
        .args(["table", "--system", "numpyy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("jax-strict"));
}

#[test]
fn table_json_shape_and_cells() {
    let v = json_of(&["table", "--format", "json"]);
    let cells = v.as_array().expect("array");
    assert_eq!(cells.len(), 18 * 18);
    for c in cells {
        let o = c.as_object().expect("object");
        assert!(o.contains_key("a") && o.contains_key("b"));
        assert!(
            (o.contains_key("dtype") && o["weak"].is_boolean()) || o["error"].is_object(),
            "{c}"
        );
    }
    let find = |a: &str, b: &str| {
        cells
            .iter()
            .find(|c| c["a"] == a && c["b"] == b)
            .unwrap_or_else(|| panic!("{a} {b}"))
            .clone()
    };
    assert_eq!(
        find("uint64", "int8"),
        serde_json::json!({"a": "uint64", "b": "int8", "dtype": "float64", "weak": true})
    );
    assert_eq!(
        find("i*", "uint16"),
        serde_json::json!({"a": "i*", "b": "uint16", "dtype": "uint16", "weak": false})
    );
    assert_eq!(find("bfloat16", "float16")["dtype"], "float32");
    assert_eq!(find("c*", "f*")["dtype"], "complex128");
    // Without x64 the weak defaults are 32-bit.
    let v = json_of(&["table", "--x32", "--format", "json"]);
    let c = v
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["a"] == "uint32" && c["b"] == "int8")
        .unwrap()
        .clone();
    assert_eq!(
        c,
        serde_json::json!({"a": "uint32", "b": "int8", "dtype": "int32", "weak": false})
    );
    // Strict mode: a missing path is an error object with JAX's text.
    let v = json_of(&[
        "table",
        "--system",
        "jax-strict",
        "--types",
        "int8,float32",
        "--format",
        "json",
    ]);
    assert_eq!(v[1]["error"]["kind"], "TypePromotionError");
    assert!(v[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("jax_numpy_dtype_promotion=strict"));
}

#[test]
fn table_text_markdown_csv() {
    let text = stdout_of(&["table"]);
    // The grid, between a header and a legend of `#` lines.
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 19);
    assert!(text
        .starts_with("# jax 0.10.2 result_type(row, column); standard promotion; x64 enabled\n"));
    assert!(text.contains("#   b1 bool, u1 uint8,"), "{text}");
    for legend in ["#   -  ", "#   [..]  ", "#   i* f* c*  "] {
        assert!(text.contains(legend), "{legend}");
    }
    let csv = stdout_of(&["table", "--format", "csv"]);
    let first: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(first.len(), 19);
    assert_eq!(first[1..4], ["b1", "u1", "u2"]);
    let row_u8: Vec<&str> = csv.lines().nth(5).unwrap().split(',').collect();
    assert_eq!(row_u8[0], "u8");
    assert_eq!(row_u8[6], "f*"); // u8 + i1
    let md = stdout_of(&["table", "--format", "markdown"]);
    assert!(md.starts_with("| | b1 | u1 |"));
    assert_eq!(md.lines().count(), 20);
    let all = stdout_of(&["table", "--types", "all", "--format", "csv"]);
    assert_eq!(all.lines().count(), 36);
    assert!(all.starts_with(",bool,uint1,uint2,uint4,uint8,"), "{all}");
    let list = stdout_of(&[
        "table",
        "--types",
        "int8,float8_e4m3fn,f4",
        "--format",
        "csv",
    ]);
    assert_eq!(
        list,
        ",int8,float8_e4m3fn,float32\nint8,int8,float8_e4m3fn,float32\n\
         float8_e4m3fn,float8_e4m3fn,float8_e4m3fn,-\nfloat32,float32,-,float32\n"
    );
    let strict = stdout_of(&[
        "table",
        "--system",
        "jax-strict",
        "--types",
        "int8,int16",
        "--format",
        "csv",
    ]);
    assert_eq!(strict, ",int8,int16\nint8,int8,-\nint16,-,int16\n");
    mldtypes()
        .args(["table", "--types", "int8,bogus"])
        .assert()
        .code(2);
}

// ---------------------------------------------------------------------------
// lattice
// ---------------------------------------------------------------------------

#[test]
fn lattice_formats() {
    let dot = stdout_of(&["lattice", "--format", "dot"]);
    assert!(dot.contains("rankdir=BT"));
    for edge in [
        "\"bool\" -> \"i*\"",
        "\"i*\" -> \"uint8\"",
        "\"float32\" -> \"complex64\"",
        "\"c*\" -> \"complex64\"",
    ] {
        assert!(dot.contains(edge), "{edge}");
    }
    let x32 = stdout_of(&["lattice", "--format", "dot", "--x32"]);
    assert!(x32.contains("\"uint32\" -> \"int32\"") && !x32.contains("\"uint32\" -> \"int64\""));
    // Strict: bool is isolated, every strong type a sink.
    let strict = stdout_of(&["lattice", "--strict", "--format", "dot"]);
    assert!(!strict.contains("\"bool\" ->") && strict.contains("\"bool\";"));
    assert!(strict.contains("\"i*\" -> \"f*\"") && !strict.contains("\"int8\" ->"));
    let mermaid = stdout_of(&["lattice", "--format", "mermaid"]);
    assert!(mermaid.starts_with("flowchart BT\n"));
    assert!(mermaid.contains("[\"float8_e4m3fn\"]"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lattice.svg");
    mldtypes()
        .args(["lattice", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("<svg"));
    for label in [
        "bool",
        "i*",
        "f*",
        "c*",
        "uint8",
        "int64",
        "bfloat16",
        "float4_e2m1fn",
        "complex128",
    ] {
        assert!(svg.contains(&format!(">{label}<")), "label {label} missing");
    }
    // Nothing else left in the directory (the temporary file was renamed).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

// ---------------------------------------------------------------------------
// info, values, cast
// ---------------------------------------------------------------------------

#[test]
fn info_json_uses_ml_dtypes_field_names() {
    let v = json_of(&["info", "float8_e4m3fn", "--json"]);
    assert_eq!(v["max"], 448.0);
    assert_eq!(v["min"], -448.0);
    assert_eq!(v["eps"], 0.125);
    assert_eq!(v["smallest_normal"], 2f64.powi(-6));
    assert_eq!(v["smallest_subnormal"], 2f64.powi(-9));
    assert_eq!(v["bits"], 8);
    assert_eq!(v["nmant"], 3);
    let v = json_of(&["info", "bfloat16", "--json"]);
    assert_eq!(v["max"].as_f64(), Some(3.3895313892515355e38));
    let v = json_of(&["info", "int4", "--json"]);
    assert_eq!(
        (v["min"].as_i64(), v["max"].as_i64(), v["bits"].as_i64()),
        (Some(-8), Some(7), Some(4))
    );
    let v = json_of(&["info", "uint64", "--json"]);
    assert_eq!(v["max"].as_u64(), Some(u64::MAX));
    assert!(stdout_of(&["info", "float4_e2m1fn"]).contains("max"));
    // As NumPy: finfo of a complex dtype is that of its component.
    assert_eq!(
        json_of(&["info", "complex64", "--json"])["dtype"],
        "float32"
    );
    let v = json_of(&["info", "float4_e2m1fn", "--json"]);
    assert_eq!(
        (
            v["epsneg"].as_f64(),
            v["maxexp"].as_i64(),
            v["precision"].as_i64()
        ),
        (Some(0.5), Some(3), Some(0))
    );
    mldtypes().args(["info", "bool"]).assert().code(2);
    mldtypes()
        .args(["info", "float33"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("float32"));
}

#[test]
fn values_lists_every_code_point() {
    let v = json_of(&["values", "float8_e4m3fn", "--json"]);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 256);
    assert_eq!(
        a[126],
        serde_json::json!({"bits": 126, "value": 448.0, "class": "normal"})
    );
    assert_eq!(a[127]["value"], "nan");
    assert_eq!(a[0]["class"], "zero");
    assert_eq!(
        a[1],
        serde_json::json!({"bits": 1, "value": 2f64.powi(-9), "class": "subnormal"})
    );
    assert_eq!(a[0xfe]["value"], -448.0);
    let v = json_of(&["values", "float8_e5m2", "--json"]);
    assert_eq!(v[0x7c]["value"], "inf");
    assert_eq!(v[0xfc]["value"], "-inf");
    assert_eq!(v[0x7c]["class"], "inf");
    let v = json_of(&["values", "float4_e2m1fn", "--json"]);
    let vals: Vec<f64> = v.as_array().unwrap()[..8]
        .iter()
        .map(|x| x["value"].as_f64().unwrap())
        .collect();
    assert_eq!(vals, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(stdout_of(&["values", "float16"]).lines().count(), 65536);
    mldtypes().args(["values", "int8"]).assert().code(2);
}

#[test]
fn cast_decimal_and_hex_float_to_float16() {
    // One JSON document: an array with one object per value.
    let v = json_of(&[
        "cast", "--to", "float16", "--json", "464", "0x1.cp+8", "65520", "-inf", "nan", "1e-8",
    ]);
    assert_eq!(
        v[0],
        serde_json::json!({"input": "464", "bits": 0x5f40, "value": 464.0, "error": 0.0})
    );
    assert_eq!(v[1]["bits"], 0x5f00);
    assert_eq!(v[1]["value"], 448.0);
    assert_eq!(v[2]["value"], "inf"); // 65520 rounds up past 65504
    assert_eq!(v[3]["bits"], 0xfc00);
    assert_eq!(v[4]["value"], "nan");
    assert_eq!(v[5]["bits"], 0); // below half the smallest subnormal (2^-25)
    let v = &json_of(&["cast", "--to", "float16", "--saturate", "--json", "1e6"])[0];
    assert_eq!(v["value"], 65504.0);
    assert_eq!(v["bits"], 0x7bff);
    // Saturation takes infinities to ±max as well; NaN stays NaN.
    let v = json_of(&[
        "cast",
        "--to",
        "float8_e4m3fn",
        "--saturate",
        "--json",
        "--",
        "-inf",
        "inf",
        "nan",
    ]);
    assert_eq!(
        (&v[0]["bits"], &v[0]["value"]),
        (&serde_json::json!(0xfe), &serde_json::json!(-448.0))
    );
    assert_eq!(
        (&v[1]["bits"], &v[1]["value"]),
        (&serde_json::json!(0x7e), &serde_json::json!(448.0))
    );
    assert_eq!(v[2]["value"], "nan");
    let text = stdout_of(&["cast", "--to", "bfloat16", "1.00390625"]);
    assert!(text.lines().nth(1).unwrap().contains("0x3f80"), "{text}"); // tie to even
    mldtypes()
        .args(["cast", "--to", "float16", "12abc"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("12abc"));
    mldtypes()
        .args(["cast", "--to", "int8", "1"])
        .assert()
        .code(2);
}

#[test]
fn cast_reads_stdin_and_f32() {
    let out = mldtypes()
        .args([
            "cast", "--to", "bfloat16", "--from", "f32", "--json", "--stdin",
        ])
        .write_stdin("1.5\n0x1.02p0 -2\n")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let bits: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bits"].as_u64().unwrap())
        .collect();
    assert_eq!(bits, [0x3fc0, 0x3f81, 0xc000]);
}

#[test]
fn cast_to_float8_e4m3fn() {
    let v = &json_of(&["cast", "--to", "float8_e4m3fn", "--json", "464"])[0];
    assert_eq!(v["bits"], 126);
    assert_eq!(v["value"], 448.0);
    let v = &json_of(&["cast", "--to", "float8_e4m3fn", "--json", "480"])[0];
    assert_eq!(v["value"], "nan");
}

// ---------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------

#[test]
fn bench_json_shape() {
    let v = json_of(&["bench", "--elements", "4096", "--json"]);
    assert!(["scalar", "portable", "avx2", "avx512"].contains(&v["path"].as_str().unwrap()));
    assert!(v["available_paths"]
        .as_array()
        .unwrap()
        .contains(&v["path"]));
    assert_eq!(v["elements"], 4096);
    let a = v["results"].as_array().unwrap();
    assert!(!a.is_empty());
    for r in a {
        assert!(r["from"].is_string() && r["to"].is_string());
        assert!(r["ns_per_element"].as_f64().unwrap() > 0.0);
    }
    mldtypes()
        .args(["bench", "--elements", "0"])
        .assert()
        .code(2);
}
// ---------------------------------------------------------------------------
// table: every cell of the JAX tables against the committed jax vectors
// ---------------------------------------------------------------------------

/// The committed jax 0.10.2 vectors (tools/gen_promotion_vectors.py).
fn pair_vectors() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mldtypes/tests/vectors/promote/pairs.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("committed vectors"))
        .expect("JSON vectors")
}

/// JAX lists the inputs of a failed promotion in Python set order (hash
/// dependent): the tuple's items are compared as a sorted list.
fn sorted_inputs(msg: &str) -> String {
    match msg
        .strip_prefix("Input dtypes (")
        .and_then(|rest| rest.find(") have no").map(|end| (rest, end)))
    {
        Some((rest, end)) => {
            let mut items: Vec<&str> = rest[..end].split(", ").collect();
            items.sort();
            format!("Input dtypes ({}{}", items.join(", "), &rest[end..])
        }
        None => msg.to_string(),
    }
}

/// Cells compared: values, errors with the same text, errors with the same
/// text up to the order of the inputs.
#[derive(Debug, Default, PartialEq, Eq)]
struct TableCounts {
    values: usize,
    errors_exact: usize,
    errors_unordered: usize,
}

/// Compares `table --types all --json` of one configuration with jax's
/// `result_type` for every pair of the 35 nodes (`i*`/`f*`/`c*` are the
/// Python scalars 1, 1.0, 1j, as in the vectors).
fn check_table_against_jax(vectors: &Value, mode: &str, x64: bool) -> TableCounts {
    let config = vectors["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["mode"] == mode && c["x64"] == x64)
        .expect("configuration in the vectors");
    let nodes: Vec<&str> = vectors["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let system = if mode == "strict" {
        "jax-strict"
    } else {
        "jax"
    };
    let mut args = vec!["table", "--system", system, "--types", "all", "--json"];
    if !x64 {
        args.push("--x32");
    }
    let got = json_of(&args);
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), nodes.len() * nodes.len());
    let messages = vectors["messages"].as_array().unwrap();
    let mut counts = TableCounts::default();
    for (i, a) in nodes.iter().enumerate() {
        for (j, b) in nodes.iter().enumerate() {
            let want = &config["result_type"][i][j];
            // The JSON lists rows in order, each row's columns in order.
            let cell = &got[i * nodes.len() + j];
            assert_eq!((&cell["a"], &cell["b"]), (&json!(a), &json!(b)));
            let what = format!("{system} x64={x64} {a} {b}");
            if let Some(kind) = want.get("error") {
                assert_eq!(cell["error"]["kind"], *kind, "{what}: {cell}");
                let m = messages[want["m"].as_u64().unwrap() as usize]
                    .as_str()
                    .unwrap();
                let ours = cell["error"]["message"].as_str().unwrap();
                if ours == m {
                    counts.errors_exact += 1;
                } else {
                    assert_eq!(sorted_inputs(ours), sorted_inputs(m), "{what}");
                    counts.errors_unordered += 1;
                }
            } else {
                assert_eq!(cell["dtype"], want[0], "{what}: {cell}");
                assert_eq!(cell["weak"], want[1], "{what}: {cell}");
                counts.values += 1;
            }
        }
    }
    counts
}

#[test]
fn table_cells_equal_jax_result_type_in_all_four_configurations() {
    let v = pair_vectors();
    let mut total = 0;
    for (mode, x64) in [
        ("standard", false),
        ("strict", false),
        ("standard", true),
        ("strict", true),
    ] {
        let c = check_table_against_jax(&v, mode, x64);
        // Values and errors as jax gives them (errors_unordered: the same text
        // with the inputs in another order, as Python's set order has them).
        let values = match (mode, x64) {
            ("standard", _) => 607,
            ("strict", false) => 149,
            _ => 141,
        };
        assert_eq!(c.values, values, "{mode} x64={x64}: {c:?}");
        assert_eq!(c.values + c.errors_exact + c.errors_unordered, 35 * 35);
        total += 35 * 35;
    }
    assert_eq!(total, 4900);
}

#[test]
fn table_x32_shows_what_promote_x32_answers() {
    // The issue's examples: bool + float64 is float32 under --x32, and
    // complex128 + complex64 is complex64 (not an error) in strict mode.
    let csv = stdout_of(&["table", "--x32", "--format", "csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let cell = |rows: &[Vec<&str>], r: &str, c: &str| {
        let j = rows[0].iter().position(|h| *h == c).unwrap();
        rows.iter().find(|row| row[0] == r).unwrap()[j].to_string()
    };
    assert_eq!(cell(&rows, "b1", "f8"), "f4");
    assert_eq!(
        stdout_of(&["promote", "--x32", "bool", "float64"]),
        "float32\n"
    );
    let strict = stdout_of(&[
        "table",
        "--system",
        "jax-strict",
        "--x32",
        "--format",
        "csv",
    ]);
    let srows: Vec<Vec<&str>> = strict.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(cell(&srows, "c16", "c8"), "c8");
    // The raw lattice join stays available, explicitly.
    let join = stdout_of(&[
        "table",
        "--system",
        "jax-strict",
        "--x32",
        "--view",
        "join",
        "--format",
        "csv",
    ]);
    let jrows: Vec<Vec<&str>> = join.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(cell(&jrows, "c16", "c8"), "-");
    // With x64 on, result_type and the lattice join agree on every cell.
    for system in ["jax", "jax-strict"] {
        let all = [
            "table", "--system", system, "--types", "all", "--format", "csv",
        ];
        let mut join = all.to_vec();
        join.extend(["--view", "join"]);
        assert_eq!(stdout_of(&all), stdout_of(&join), "{system}");
    }
    // --x32 and --view join belong to the JAX tables.
    mldtypes()
        .args(["table", "--system", "torch", "--x32"])
        .assert()
        .code(2);
}

// ---------------------------------------------------------------------------
// Hostile input: every case is a message and an exit code, never a panic
// ---------------------------------------------------------------------------

/// Runs the binary and returns (exit code, stdout, stderr); fails on a panic.
fn run_of(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = mldtypes()
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("runs");
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!se.contains("panicked"), "{args:?}: {se}");
    (out.status.code().expect("exit code, not a signal"), so, se)
}

#[test]
fn cast_of_values_of_65536_and_more_characters() {
    for digits in [65_536, 70_000, 100_000] {
        let v = format!("1{}", "0".repeat(digits - 1));
        // As an argument.
        let (code, out, _) = run_of(&["cast", "--to", "bf16", "--", &v], "");
        assert_eq!(code, 0);
        let row = out.lines().nth(1).unwrap();
        assert!(row.contains(&format!("({digits} chars)")), "{row}");
        assert!(row.contains("0x7f80"), "{row}"); // 10^65535 overflows to +inf
        assert!(out.lines().all(|l| l.len() < 200));
        // From standard input, and as JSON (which keeps the whole input).
        let (code, out, _) = run_of(&["cast", "--to", "bf16", "--stdin", "--json"], &v);
        assert_eq!(code, 0);
        let j: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j[0]["input"].as_str().unwrap().len(), digits);
    }
    // An unparsable long value: the message quotes only its beginning.
    let bad = format!("1{}x", "0".repeat(70_000));
    let (code, _, err) = run_of(&["cast", "--to", "bf16", "--stdin"], &bad);
    assert_eq!(code, 2);
    assert!(
        err.contains("(70002 characters)") && err.len() < 300,
        "{err}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn failed_standard_output_is_an_error_not_a_panic() {
    let cases: &[&[&str]] = &[
        &["info", "bfloat16"],
        &["info", "--json", "bfloat16"],
        &["values", "float8_e4m3fn"],
        &["dtypes"],
        &["promote", "int8", "uint8"],
        &["promote", "--json", "int8", "uint8"],
        &["table"],
        &["table", "--json"],
        &["lattice"],
        &["cast", "--to", "bf16", "1.5"],
        &["bench", "--elements", "1024"],
    ];
    // The checkpoint commands too: a one-tensor float32 file to read.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.safetensors");
    let header = br#"{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]);
    std::fs::write(&file, bytes).unwrap();
    let file = file.to_str().unwrap();
    let out1 = dir.path().join("a.safetensors");
    let out2 = dir.path().join("b.safetensors");
    let checkpoint_cases: [Vec<&str>; 4] = [
        vec!["inspect", file],
        vec!["inspect", "--json", file],
        vec!["convert", file, out1.to_str().unwrap(), "--to", "bfloat16"],
        vec![
            "convert",
            "--json",
            file,
            out2.to_str().unwrap(),
            "--to",
            "bfloat16",
        ],
    ];
    let cases = cases
        .iter()
        .copied()
        .chain(checkpoint_cases.iter().map(Vec::as_slice));
    for args in cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mldtypes"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("cannot write <stdout>: No space left"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mldtypes"))
        .args(["values", "bfloat16"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("0x0000"));
    // The reader is gone: the next write ends the process by SIGPIPE, silently.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(13), "{:?}", out.status);
    assert!(out.stderr.is_empty());
}

#[test]
fn bench_elements_beyond_memory_are_refused() {
    for n in [
        u64::MAX.to_string(),
        (1u64 << 62).to_string(),
        (1u64 << 40).to_string(),
    ] {
        let (code, out, err) = run_of(&["bench", "--elements", &n], "");
        assert_eq!(code, 2, "{n}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(&format!("--elements {n}")), "{err}");
        assert!(err.contains("memory"), "{err}");
    }
    let (code, _, err) = run_of(&["bench", "--elements", "18446744073709551616"], "");
    assert_eq!(code, 2, "{err}");
}

#[test]
fn unknown_names_cost_linear_time_and_are_echoed_short() {
    // 10 MB and 100 MB tokens (through standard input: an argument is limited
    // to 128 KiB): no edit distance is computed, the echo is cut.
    for len in [10_000_000, 100_000_000] {
        let token = "x".repeat(len);
        let (code, out, _) = run_of(&["promote", "--stdin"], &token);
        assert_eq!(code, 2);
        assert!(
            out.starts_with("UsageError: unknown dtype \"xxxx"),
            "{}",
            &out[..100]
        );
        assert!(out.contains(&format!("… ({len} characters)")));
        assert!(out.len() < 200);
    }
    // Short typos still get the closest names.
    let (_, _, err) = run_of(&["promote", "flaot32", "i*"], "");
    assert!(err.contains("did you mean \"float32\""), "{err}");
    let (_, _, err) = run_of(&["info", "f33"], "");
    assert!(err.contains("\"f32\""), "{err}");
}

// ---------------------------------------------------------------------------
// One dtype vocabulary
// ---------------------------------------------------------------------------

#[test]
fn a_string_means_the_same_dtype_in_every_command() {
    // Bit-width shorthands are aliases everywhere.
    assert_eq!(stdout_of(&["promote", "f32", "f16"]), "float32\n");
    assert_eq!(stdout_of(&["promote", "i64", "u32"]), "int64\n");
    assert_eq!(
        stdout_of(&["table", "--types", "f16,f32", "--format", "csv"]),
        ",float16,float32\nfloat16,float16,float32\nfloat32,float32,float32\n"
    );
    assert_eq!(stdout_of(&["info", "f16"]), stdout_of(&["info", "float16"]));
    assert_eq!(
        stdout_of(&["cast", "--to", "f16", "1"]),
        stdout_of(&["cast", "--to", "float16", "1"])
    );
    // NumPy codes with a byte-order prefix are read as numpy.dtype reads them.
    assert_eq!(stdout_of(&["promote", "<i8", "=u8"]), "float64 (weak)\n");
    // A bare seed-table code is refused outside its table, naming each reading.
    let (code, _, err) = run_of(&["promote", "i8", "u8"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("int64 in NumPy's kind + bytes codes")
            && err.contains("int8 in the kind + bits codes"),
        "{err}"
    );
    let (code, _, err) = run_of(&["info", "c8"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("complex64") && err.contains("complex128"),
        "{err}"
    );
    // Inside its own table a code means what that table means, and the
    // header says which naming is in use.
    let torch = stdout_of(&["table", "--system", "torch", "--types", "i8,u8"]);
    assert!(torch.contains("# names: the kind + bits codes of the JEP 9407 appendix tables"));
    assert!(torch.contains("i8 int8, u8 uint8"), "{torch}");
    assert!(torch.contains("i8 i16"), "{torch}"); // int8 + uint8 -> int16
    let jax = stdout_of(&["table", "--types", "i8,u8", "--format", "csv"]);
    assert_eq!(jax, ",int64,uint64\nint64,int64,f*\nuint64,f*,uint64\n");
}

#[test]
fn dtypes_lists_every_spelling_and_each_one_parses() {
    let text = stdout_of(&["dtypes"]);
    assert!(text.contains("Seed-table codes are read only by `table --types`"));
    let v = json_of(&["dtypes", "--json"]);
    let all = v.as_array().unwrap();
    // The 32 JAX dtypes, complex32, bcomplex32, and the IEEE P3109 family.
    assert_eq!(all.len(), 34 + 510);
    let bf = all.iter().find(|d| d["name"] == "bfloat16").unwrap();
    assert_eq!(bf["table_codes"]["numpy-bytes"], "bf");
    assert_eq!(bf["table_codes"]["jep9407-bits"], "bf16");
    assert_eq!(bf["kind"], "float");
    // Every listed name, alias and shorthand reads back as its dtype through
    // `promote`, and every NumPy code with a byte-order prefix.
    let mut lines = String::new();
    let mut want = Vec::new();
    for d in all {
        let name = d["name"].as_str().unwrap();
        if name == "complex32" || name == "bcomplex32" {
            continue; // not JAX types
        }
        let mut spellings = vec![name.to_string()];
        for key in ["aliases", "shorthands"] {
            for a in d[key].as_array().unwrap() {
                spellings.push(a.as_str().unwrap().to_string());
            }
        }
        for c in d["numpy_codes"].as_array().unwrap() {
            spellings.push(format!("={}", c.as_str().unwrap()));
        }
        for s in spellings {
            lines.push_str(&s);
            lines.push('\n');
            want.push(name.to_string());
        }
    }
    let (code, out, _) = run_of(&["promote", "--stdin"], &lines);
    assert_eq!(code, 0, "{out}");
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------
// Consistent output: JSON, exit codes, legend
// ---------------------------------------------------------------------------

#[test]
fn json_errors_under_json_in_every_command() {
    let cases: &[(&[&str], &str)] = &[
        (&["info", "--json", "nope"], "UsageError"),
        (&["values", "--json", "int8"], "UsageError"),
        (&["cast", "--json", "--to", "nope", "1"], "UsageError"),
        (&["cast", "--json", "--to", "bf16", "zz"], "UsageError"),
        (&["table", "--json", "--types", "nope"], "UsageError"),
        (&["dtypes", "--json", "--bogus"], "UsageError"),
        (&["promote", "--json", "nope"], "UsageError"),
        (
            &["promote", "--json", "--strict", "int8", "float32"],
            "TypePromotionError",
        ),
        (&["bench", "--json", "--elements", "0"], "UsageError"),
    ];
    for (args, kind) in cases {
        let (code, out, err) = run_of(args, "");
        let v: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
        assert_eq!(v["error"]["kind"], *kind, "{args:?}");
        assert!(v["error"]["message"].as_str().unwrap().len() > 5);
        assert!(err.is_empty(), "{args:?}: {err}");
        assert_eq!(code, if *kind == "TypePromotionError" { 1 } else { 2 });
    }
    // `--json` is the table's alias for `--format json`.
    assert_eq!(
        stdout_of(&["table", "--json"]),
        stdout_of(&["table", "--format", "json"])
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let help = stdout_of(&["--help"]);
    assert!(help.contains("Exit codes:"));
    assert!(help.contains("0  success"));
    assert!(help.contains("1  a type promotion error"));
    assert!(help.contains("2  a usage error"));
}

#[test]
fn table_all_has_a_legend_and_fits_the_width() {
    let text = stdout_of(&["table", "--types", "all", "--width", "100"]);
    assert!(text
        .lines()
        .all(|l| l.chars().count() <= 100 || l.starts_with('#')));
    assert!(text.contains("# names: canonical dtype names"));
    assert!(text.contains("#   -         no implicit promotion: jax raises TypePromotionError"));
    assert!(text.contains("#   [..]      differs from numpy"));
    assert!(text.contains("#   i* f* c*  weakly typed int / float / complex"));
    // Every column appears once per panel, each panel repeats the 35 row labels.
    let panels = text.split("\n\n").count();
    assert!(panels > 1);
    for name in ["float8_e4m3b11fnuz", "uint1", "c*"] {
        let rows = text
            .lines()
            .filter(|l| l.starts_with(' ') || l.starts_with(name))
            .filter(|l| l.split_whitespace().next() == Some(name))
            .count();
        // One row per panel, plus a panel header that may start with it.
        assert!(rows == panels || rows == panels + 1, "{name}: {rows}");
    }
    // --width 0: one panel, one line per row.
    let wide = stdout_of(&["table", "--types", "all", "--width", "0"]);
    assert_eq!(wide.lines().filter(|l| !l.starts_with('#')).count(), 36);
}

#[test]
fn torch_table_says_it_is_the_2021_snapshot() {
    let text = stdout_of(&["table", "--system", "torch"]);
    assert!(text.starts_with(
        "# torch: the JEP 9407 appendix snapshot of PyTorch's promotion (about 2021)"
    ));
    assert!(text.contains("PyTorch 2.15 differs in 45 of its 324 cells"));
}

// ---------------------------------------------------------------------------
// lattice pictures: no edge crosses a box
// ---------------------------------------------------------------------------

/// A box of the SVG: label, left, top, width, height.
type SvgBox = (String, f64, f64, f64, f64);

/// The boxes and the edge paths (as sampled points) of a lattice SVG.
fn svg_geometry(svg: &str) -> (Vec<SvgBox>, Vec<Vec<(f64, f64)>>) {
    let attr = |s: &str, name: &str| -> f64 {
        let k = s.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        s[k..k + s[k..].find('"').unwrap()].parse().unwrap()
    };
    let mut boxes = Vec::new();
    for g in svg.split("<g><rect").skip(1) {
        let label = g[g.find('>').unwrap()..]
            .split("central\">")
            .nth(1)
            .unwrap();
        let label = label[..label.find('<').unwrap()].to_string();
        boxes.push((
            label,
            attr(g, "x"),
            attr(g, "y"),
            attr(g, "width"),
            attr(g, "height"),
        ));
    }
    let mut paths = Vec::new();
    for p in svg.split("<path d=\"").skip(2) {
        let d = &p[..p.find('"').unwrap()];
        let nums: Vec<f64> = d
            .split(|c: char| c == ' ' || c == ',' || c.is_ascii_alphabetic())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().unwrap())
            .collect();
        let letters: Vec<char> = d.chars().filter(|c| c.is_ascii_alphabetic()).collect();
        let mut pts = Vec::new();
        let mut k = 2;
        let mut cur = (nums[0], nums[1]);
        pts.push(cur);
        for l in &letters[1..] {
            if *l == 'C' {
                let c: Vec<f64> = nums[k..k + 6].to_vec();
                for s in 1..=40 {
                    let t = s as f64 / 40.0;
                    let u = 1.0 - t;
                    let x = u * u * u * cur.0
                        + 3.0 * u * u * t * c[0]
                        + 3.0 * u * t * t * c[2]
                        + t * t * t * c[4];
                    let y = u * u * u * cur.1
                        + 3.0 * u * u * t * c[1]
                        + 3.0 * u * t * t * c[3]
                        + t * t * t * c[5];
                    pts.push((x, y));
                }
                cur = (c[4], c[5]);
                k += 6;
            } else {
                let end = (nums[k], nums[k + 1]);
                for s in 1..=40 {
                    let t = s as f64 / 40.0;
                    pts.push((cur.0 + (end.0 - cur.0) * t, cur.1 + (end.1 - cur.1) * t));
                }
                cur = end;
                k += 2;
            }
        }
        paths.push(pts);
    }
    (boxes, paths)
}

#[test]
fn lattice_edges_cross_no_box() {
    for args in [
        &["lattice"][..],
        &["lattice", "--strict"],
        &["lattice", "--x32"],
        &["lattice", "--types", "doc"],
        &["lattice", "--types", "doc", "--strict"],
        &["lattice", "--types", "doc", "--x32"],
    ] {
        let svg = stdout_of(args);
        let (boxes, paths) = svg_geometry(&svg);
        let want = if args.contains(&"doc") { 18 } else { 35 };
        assert_eq!(boxes.len(), want, "{args:?}");
        let edges = stdout_of(&[args, &["--format", "dot"][..]].concat())
            .lines()
            .filter(|l| l.contains("->"))
            .count();
        assert_eq!(paths.len(), edges, "{args:?}");
        for (k, path) in paths.iter().enumerate() {
            // Interior points (the ends touch their own boxes).
            for &(x, y) in &path[2..path.len() - 2] {
                for (label, bx, by, bw, bh) in &boxes {
                    let inside =
                        x > bx + 1.0 && x < bx + bw - 1.0 && y > by + 1.0 && y < by + bh - 1.0;
                    assert!(
                        !inside,
                        "{args:?}: edge {k} crosses {label} at ({x:.1}, {y:.1})"
                    );
                }
            }
        }
        // No two boxes overlap.
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                let apart =
                    a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1 || a.2 + a.4 <= b.2 || b.2 + b.4 <= a.2;
                assert!(apart, "{args:?}: {} overlaps {}", a.0, b.0);
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn lattice_output_replaces_only_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.svg");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for out in [link.as_path(), dir.path(), Path::new("/dev/null")] {
        let (code, _, err) = run_of(&["lattice", "-o", out.to_str().unwrap()], "");
        assert_eq!(code, 1, "{out:?}");
        assert!(err.contains("not a regular file"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // A regular file is replaced, with no temporary left behind.
    let (code, _, _) = run_of(&["lattice", "-o", target.to_str().unwrap()], "");
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&target)
        .unwrap()
        .starts_with("<svg"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn committed_lattice_picture_is_in_sync() {
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/type_lattice.svg"),
    )
    .expect("docs/type_lattice.svg");
    assert_eq!(
        stdout_of(&["lattice"]),
        committed,
        "regenerate with `mldtypes lattice -o docs/type_lattice.svg`"
    );
}

#[test]
fn lattice_doc_view_takes_the_pages_positions() {
    let svg = stdout_of(&["lattice", "--types", "doc"]);
    let (boxes, _) = svg_geometry(&svg);
    let at = |n: &str| {
        let b = boxes
            .iter()
            .find(|b| b.0 == n)
            .unwrap_or_else(|| panic!("{n}"));
        (b.1 + b.3 / 2.0, b.2 + b.4 / 2.0)
    };
    // Seed 002's pos: rows (y) and columns (x).
    for row in [
        &["bool", "uint8", "uint16", "uint32", "uint64"][..],
        &[
            "int8",
            "int16",
            "int32",
            "int64",
            "c*",
            "complex64",
            "complex128",
        ],
        &["i*", "f*", "float32", "float64"],
    ] {
        for n in row {
            assert_eq!(at(n).1, at(row[0]).1, "{n} in the row of {}", row[0]);
        }
    }
    for col in [
        ["uint8", "int8"],
        ["uint64", "int64"],
        ["bfloat16", "float16"],
        ["float64", "complex64"],
    ] {
        assert_eq!(at(col[0]).0, at(col[1]).0, "{col:?}");
    }
    let xs: Vec<f64> = [
        "bool",
        "i*",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "f*",
        "c*",
        "bfloat16",
        "float32",
        "float64",
        "complex128",
    ]
    .iter()
    .map(|n| at(n).0)
    .collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
}

// ---------------------------------------------------------------------------
// The README's command-line examples print what the commands print
// ---------------------------------------------------------------------------

/// Splits a shell command line of the README (plain words, single quotes).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(cur);
    }
    words
}

#[test]
fn readme_command_line_examples_match_the_commands() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README");
    // Every ```text block: `$ mldtypes ARGS [| head -N]  [# exit status K]`
    // lines, each followed by the output it shows.
    let mut checked = 0;
    let mut in_block = false;
    let mut lines = readme.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            in_block = line == "```text";
            continue;
        }
        let Some(cmd) = line.strip_prefix("$ mldtypes ").filter(|_| in_block) else {
            continue;
        };
        let mut shown = String::new();
        while let Some(next) = lines.peek() {
            if next.starts_with("$ ") || next.starts_with("```") {
                break;
            }
            shown.push_str(lines.next().unwrap());
            shown.push('\n');
        }
        let (cmd, status) = match cmd.split_once("  # exit status ") {
            Some((c, s)) => (c.trim_end(), s.trim().parse::<i32>().unwrap()),
            None => (cmd.trim_end(), 0),
        };
        let (cmd, head) = match cmd.split_once(" | head -") {
            Some((c, n)) => (c, Some(n.parse::<usize>().unwrap())),
            None => (cmd, None),
        };
        let out = mldtypes()
            .args(shell_words(cmd))
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(status), "$ mldtypes {cmd}");
        // Errors go to standard error; the README shows them in place.
        let mut got = String::from_utf8(out.stdout).unwrap();
        got.push_str(&String::from_utf8(out.stderr).unwrap());
        if let Some(n) = head {
            got = got.lines().take(n).map(|l| format!("{l}\n")).collect();
        }
        assert_eq!(got, shown, "$ mldtypes {cmd}");
        checked += 1;
    }
    assert!(checked >= 12, "{checked} README examples");
}

// ---------------------------------------------------------------------------
// The fuzz targets' entry points, replayed in the normal test run
// ---------------------------------------------------------------------------

#[allow(dead_code)]
#[path = "../../../fuzz/src/entries.rs"]
mod fuzz_entries;

/// A small deterministic generator (xorshift64*) for mutations.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A mutation of `seed`: bytes flipped, inserted, removed, or a cut.
    fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        let mut v = seed.to_vec();
        for _ in 0..1 + self.next() % 4 {
            let r = self.next();
            let at = if v.is_empty() {
                0
            } else {
                (r >> 8) as usize % v.len()
            };
            match r % 5 {
                0 if !v.is_empty() => v[at] ^= 1 << ((r >> 40) % 8),
                1 => v.insert(at, (r >> 32) as u8),
                2 if !v.is_empty() => {
                    v.remove(at);
                }
                3 => v.truncate(at),
                _ => v.insert(at, b"0123456789.e+-x_|,* \nijfcbu"[(r >> 24) as usize % 27]),
            }
        }
        v
    }
}

#[test]
fn fuzz_corpus_replays_without_panics() {
    type Entry = fn(&[u8]);
    let targets: [(&str, Entry); 6] = [
        ("dtype_names", fuzz_entries::dtype_names),
        ("numbers", fuzz_entries::numbers),
        ("operands", fuzz_entries::operands),
        ("tables", fuzz_entries::tables),
        ("cast_bytes", fuzz_entries::cast_bytes),
        ("pack", fuzz_entries::pack),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut m = Mutator(0x9e37_79b9_7f4a_7c15);
    for (name, run) in targets {
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(root.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        seeds.sort();
        assert!(!seeds.is_empty(), "{name}: empty corpus");
        for s in &seeds {
            run(s);
        }
        // Generated mutations of the corpus, and of each other.
        let mut last = seeds[0].clone();
        for k in 0..3000 {
            let base = if k % 2 == 0 {
                &seeds[k % seeds.len()]
            } else {
                &last
            };
            last = m.mutate(base);
            run(&last);
        }
    }
}

// ---------------------------------------------------------------------------
// The command line as people type it: options after operands, negative
// numbers, completions, man pages, JSON Lines, `-` paths
// ---------------------------------------------------------------------------

#[test]
fn options_are_accepted_after_operands() {
    // the same answers wherever the options stand
    for args in [
        &["promote", "--x32", "int64", "f*"][..],
        &["promote", "int64", "f*", "--x32"],
        &["promote", "int64", "--x32", "f*"],
    ] {
        assert_eq!(stdout_of(args), "float32 (weak)\n", "{args:?}");
    }
    assert_eq!(stdout_of(&["promote", "int64", "f*"]), "float64 (weak)\n");
    assert_eq!(
        stdout_of(&["promote", "int8", "bfloat16", "--x32"]),
        "bfloat16\n"
    );
    assert_eq!(
        json_of(&["promote", "uint8", "int8", "--json"]),
        json!({"dtype": "int16", "weak": false})
    );
    let (code, out, _) = run_of(&["promote", "float32", "int32", "--strict", "--json"], "");
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["error"]["kind"], "TypePromotionError");
    // cast: 464.01 is above the float8_e4m3fn overflow threshold (464): NaN (0x7f)
    assert_eq!(
        json_of(&["cast", "--to", "float8_e4m3fn", "464.01", "--json"]),
        json!([{"input": "464.01", "bits": 0x7f, "value": "nan", "error": "nan"}])
    );
    let v = json_of(&[
        "cast",
        "1000",
        "--saturate",
        "--to",
        "float8_e4m3fn",
        "464",
        "--json",
    ]);
    assert_eq!(v[0]["bits"], 0x7e);
    assert_eq!(v[0]["value"], 448.0);
    assert_eq!(v[1]["bits"], 0x7e);
    assert_eq!(v[1]["input"], "464");
}

#[test]
fn negative_numbers_stay_values() {
    let v = json_of(&[
        "cast", "--to", "float16", "-1.5", "-2e3", "-65520", "--json",
    ]);
    assert_eq!(v.as_array().unwrap().len(), 3);
    assert_eq!(
        v[0],
        json!({"input": "-1.5", "bits": half::f16::from_f64(-1.5).to_bits(), "value": -1.5,
               "error": 0.0})
    );
    assert_eq!(v[1]["bits"], half::f16::from_f64(-2000.0).to_bits());
    assert_eq!(v[1]["value"], -2000.0);
    assert_eq!(v[2]["bits"], 0xfc00); // -65520 rounds past -65504: -inf
                                      // a negative Python int literal is a weakly typed int operand
    assert_eq!(
        json_of(&["promote", "int8", "-1", "--json"]),
        json!({"dtype": "int8", "weak": false})
    );
    assert_eq!(stdout_of(&["promote", "-1", "-2.5"]), "float64 (weak)\n");
    // -inf, -nan and negative hex floats are values when no option follows them ...
    let v = json_of(&["cast", "--json", "--to", "float16", "-inf", "-0x1p-3"]);
    assert_eq!(v[0]["bits"], 0xfc00);
    assert_eq!(v[1]["bits"], half::f16::from_f64(-0.125).to_bits());
    // ... and after `--` anywhere
    let v = json_of(&["cast", "--to", "float16", "--json", "--", "-inf", "-0x1p-3"]);
    assert_eq!(v[0]["bits"], 0xfc00);
    assert_eq!(v[1]["bits"], half::f16::from_f64(-0.125).to_bits());
    // an option after such a value is an error that says so
    let (code, out, err) = run_of(&["cast", "--to", "float16", "-inf", "--json"], "");
    assert_eq!(code, 2);
    assert!(err.is_empty(), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("-inf") && m.contains("--json") && m.contains("-- -inf"),
        "{m}"
    );
    let (code, _, err) = run_of(&["cast", "--to", "float16", "-nan", "--saturate"], "");
    assert_eq!(code, 2);
    assert!(err.contains("-nan") && err.contains("--saturate"), "{err}");
    // unknown options are still errors, before or after operands
    for args in [
        &["cast", "--to", "float16", "1", "--bogus"][..],
        &["promote", "int8", "--bogus"],
        &["promote", "--bogus", "int8"],
    ] {
        let (code, _, err) = run_of(args, "");
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("--bogus"), "{args:?}: {err}");
    }
}

#[test]
fn shell_completions_for_four_shells() {
    for (shell, marker) in [
        ("bash", "_mldtypes()"),
        ("zsh", "#compdef mldtypes"),
        ("fish", "complete -c mldtypes"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: no {marker}");
        // every command and a sample of options and choices are completed
        for word in [
            "promote",
            "convert",
            "inspect",
            "completions",
            "x32",
            "mx-scale",
        ] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    if Path::new("/bin/bash").exists() {
        // the bash script is valid bash and registers the completion function
        let script = stdout_of(&["completions", "bash"]);
        let out = std::process::Command::new("/bin/bash")
            .args(["-c", &format!("{script}\ncomplete -p mldtypes")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("_mldtypes"));
    }
    let (code, _, err) = run_of(&["completions", "tcsh"], "");
    assert_eq!(code, 2);
    assert!(err.contains("bash") && err.contains("powershell"), "{err}");
}

#[test]
fn man_pages_in_roff() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH mldtypes 1"), "{page}");
    assert!(page.contains(&format!("\"mldtypes {}\"", env!("CARGO_PKG_VERSION"))));
    assert!(page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"));
    for command in ["promote", "convert", "inspect", "completions", "man"] {
        assert!(page.contains(command), "no {command}");
    }
    let page = stdout_of(&["man", "convert"]);
    assert!(page.contains(".TH mldtypes-convert 1"), "{page}");
    assert!(page.contains("\\-\\-threads") && page.contains("\\-\\-mx\\-scale"));
    let (code, _, err) = run_of(&["man", "nope"], "");
    assert_eq!(code, 2);
    assert!(err.contains("\"nope\"") && err.contains("convert"), "{err}");
}

#[test]
fn promote_stdin_json_stays_json_lines_when_lines_fail() {
    let input: &[u8] = b"int8 int8\nint8 nosuchtype\n\xff\xfe\r\nfloat32 int32\n\nint8, bfloat16\n";
    let out = mldtypes()
        .args(["promote", "--stdin", "--strict", "--json"])
        .write_stdin(input)
        .output()
        .unwrap();
    // a line with invalid operands: exit status 2, every line still answered
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines[0], json!({"dtype": "int8", "weak": false}));
    assert_eq!(lines[1]["error"]["kind"], "UsageError");
    assert!(lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nosuchtype"));
    assert_eq!(
        lines[2],
        json!({"error": {"kind": "UsageError", "message": "line 3 is not valid UTF-8"}})
    );
    assert_eq!(lines[3]["error"]["kind"], "TypePromotionError");
    assert_eq!(lines[4], Value::Null);
    assert_eq!(lines[5]["error"]["kind"], "TypePromotionError");
    // only promotion failures: 1; none: 0
    let (code, out, _) = run_of(
        &["promote", "--stdin", "--json", "--strict"],
        "int8 int8\nint8 i*\n",
    );
    assert_eq!((code, out.lines().count()), (0, 2));
    let (code, out, err) = run_of(
        &["promote", "--stdin", "--json", "--strict"],
        "int8 int16\nint8 i*\n",
    );
    assert_eq!((code, out.lines().count()), (1, 2));
    assert!(err.is_empty(), "{err}");
    // text mode: the same pairing, the summary on standard error
    let (code, out, err) = run_of(
        &["promote", "--stdin"],
        "int8 uint8\nint8 nosuchtype\nbool i*\n",
    );
    assert_eq!(code, 2);
    assert_eq!(out.lines().count(), 3);
    assert!(err.contains("1 line(s) had invalid operands"), "{err}");
}

#[test]
fn dash_paths_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["inspect", "-"], "standard input"),
        (
            &["convert", "-", "out.safetensors", "--to", "bfloat16"],
            "standard input",
        ),
        (
            &["convert", "in.safetensors", "-", "--to", "bfloat16"],
            "standard output",
        ),
    ];
    for (args, which) in cases {
        let out = mldtypes()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("`-`") && err.contains(which),
            "{args:?}: {err}"
        );
        assert!(err.contains("./-"), "{args:?}: {err}");
        // the same as JSON under --json
        let mut json_args = args.to_vec();
        json_args.push("--json");
        let out = mldtypes()
            .args(&json_args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{json_args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["error"]["kind"], "UsageError");
        assert!(v["error"]["message"].as_str().unwrap().contains(which));
    }
    // nothing was created, no file named `-` in particular
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn help_documents_promote_stdin_exit_codes_and_option_order() {
    let help = stdout_of(&["--help"]);
    assert!(
        help.contains("`promote --stdin` answers every line, then exits 2"),
        "{help}"
    );
    assert!(help.contains("Options may follow operands"), "{help}");
    assert!(
        help.contains("mldtypes cast --to bfloat16 -- -inf"),
        "{help}"
    );
}

#[test]
fn p3109_formats_in_values_info_cast_and_dtypes() {
    // p3109_k8p3se: 5 exponent bits, bias 16, NaN 0x80, ±inf 0x7f / 0xff.
    let v = json_of(&["values", "p3109_k8p3se", "--json"]);
    let v = v.as_array().unwrap();
    assert_eq!(v.len(), 256);
    assert_eq!(v[0x40]["value"], 1.0);
    assert_eq!(v[0x7e]["value"], 49152.0);
    assert_eq!(v[0x7f]["value"], "inf");
    assert_eq!(v[0x7f]["class"], "inf");
    assert_eq!(v[0xff]["value"], "-inf");
    assert_eq!(v[0x80]["class"], "nan");
    assert_eq!(v[0x01]["class"], "subnormal");
    // The interim report's alias names the same format.
    assert_eq!(
        stdout_of(&["values", "binary8p3se"]),
        stdout_of(&["values", "p3109_k8p3se"])
    );
    // Beyond float64: exact hexadecimal-float text.
    let v = json_of(&["values", "p3109_k16p1se", "--json"]);
    assert_eq!(v[0x7ffe]["value"], "0x1p+16382");
    assert_eq!(v[0x0001]["value"], "0x1p-16383");
    assert_eq!(v[0x0001]["class"], "normal");
    assert_eq!(v[0x4000]["value"], 1.0);

    let i = json_of(&["info", "p3109_k8p4se", "--json"]);
    assert_eq!(i["dtype"], "p3109_k8p4se");
    assert_eq!(i["bits"], 8);
    assert_eq!(i["max"], 224.0);
    assert_eq!(i["min"], -224.0);
    assert_eq!(i["smallest_subnormal"], 2f64.powi(-10));
    assert_eq!(i["maxexp"], 8);
    let i = json_of(&["info", "p3109_k16p1se", "--json"]);
    assert_eq!(i["max"], "0x1p+16382");
    assert_eq!(i["min"], "-0x1p+16382");
    assert_eq!(i["smallest_subnormal"], "0x1p-16383");
    let u = json_of(&["info", "p3109_k8p3uf", "--json"]);
    assert_eq!(u["min"], 0.0);

    let c = json_of(&[
        "cast",
        "--to",
        "p3109_k8p3se",
        "--json",
        "1",
        "60000",
        "-0",
        "nan",
        "1e-9",
    ]);
    let bits: Vec<u64> = c
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bits"].as_u64().unwrap())
        .collect();
    assert_eq!(bits, [0x40, 0x7f, 0x00, 0x80, 0x00]);
    let c = json_of(&[
        "cast",
        "--to",
        "p3109_k8p3se",
        "--saturate",
        "--json",
        "60000",
    ]);
    assert_eq!(c[0]["bits"], 0x7e);
    let c = json_of(&[
        "cast",
        "--to",
        "p3109_k16p1se",
        "--json",
        "1.7976931348623157e308",
    ]);
    assert_eq!(c[0]["bits"], 0x4000 + 1024);
    assert_eq!(c[0]["value"], "0x1p+1024");
    let text = stdout_of(&["cast", "--to", "p3109_k8p1ue", "-1", "3"]);
    assert!(text.contains("0xff"), "{text}"); // unsigned: NaN
    assert!(text.contains("0x82"), "{text}"); // 3 ties to the even code 4 = 2^2 (0x82)

    let d = json_of(&["dtypes", "--json"]);
    let k8 = d
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "p3109_k8p3se")
        .unwrap();
    assert_eq!(k8["aliases"][0], "binary8p3se");
    assert_eq!(k8["bits"], 8);
    assert!(stdout_of(&["dtypes"]).contains("p3109_k16p16uf"));
    // float16 is listed and reads as IEEE binary16.
    assert_eq!(json_of(&["info", "float16", "--json"])["max"], 65504.0);
}
