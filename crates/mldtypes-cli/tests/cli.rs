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
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        serde_json::json!({"dtype": "int8", "weak": false})
    );
    assert_eq!(lines[1]["error"]["kind"], "TypePromotionError");
    assert_eq!(
        lines[2],
        serde_json::json!({"dtype": "float32", "weak": false})
    );
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
    assert_eq!(text.lines().count(), 19);
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
    let out = stdout_of(&[
        "cast", "--to", "float16", "--json", "464", "0x1.cp+8", "65520", "-inf", "nan", "1e-8",
    ]);
    let v: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
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
    let sat = stdout_of(&["cast", "--to", "float16", "--saturate", "--json", "1e6"]);
    let v: Value = serde_json::from_str(sat.trim()).unwrap();
    assert_eq!(v["value"], 65504.0);
    assert_eq!(v["bits"], 0x7bff);
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
    let v: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bits: Vec<u64> = v.iter().map(|x| x["bits"].as_u64().unwrap()).collect();
    assert_eq!(bits, [0x3fc0, 0x3f81, 0xc000]);
}

#[test]
fn cast_to_float8_e4m3fn() {
    let v: Value =
        serde_json::from_str(stdout_of(&["cast", "--to", "float8_e4m3fn", "--json", "464"]).trim())
            .unwrap();
    assert_eq!(v["bits"], 126);
    assert_eq!(v["value"], 448.0);
    let v: Value =
        serde_json::from_str(stdout_of(&["cast", "--to", "float8_e4m3fn", "--json", "480"]).trim())
            .unwrap();
    assert_eq!(v["value"], "nan");
}

// ---------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------

#[test]
fn bench_json_shape() {
    let v = json_of(&["bench", "--elements", "4096", "--json"]);
    let a = v.as_array().unwrap();
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
