//! Loaders for the committed reference vectors in `tests/vectors/formats/`
//! (written by `tools/gen_vectors.py` from ml_dtypes 0.6.0; layout in
//! `tests/vectors/formats/README.md`).
//!
//! Every big array is a NumPy `.npy` file compressed with gzip (`NAME.npy.gz`);
//! small structured data is JSON (`NAME.json`). Use from an integration test
//! with `mod common;`.
#![allow(dead_code)]

/// Runs `$m!(T)` for every float type.
#[allow(unused_macros)]
macro_rules! all_types {
    ($m:ident) => {
        $m!(bfloat16);
        $m!(float8_e3m4);
        $m!(float8_e4m3);
        $m!(float8_e4m3fn);
        $m!(float8_e4m3fnuz);
        $m!(float8_e4m3b11fnuz);
        $m!(float8_e5m2);
        $m!(float8_e5m2fnuz);
        $m!(float8_e8m0fnu);
        $m!(float6_e2m3fn);
        $m!(float6_e3m2fn);
        $m!(float4_e2m1fn);
    };
}

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::OnceLock;

use flate2::read::GzDecoder;

/// Order of the format rows in `f32_to_formats`, `f64_to_formats_*` and of
/// the first 13 target rows of `cast_from_*`.
pub const FORMATS: [&str; 13] = [
    "bfloat16",
    "float16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
];

/// Target rows of `cast_from_*` after the 13 [`FORMATS`]: float32 bits, int8
/// and int32 (both as their two's-complement bits zero-extended to u32).
pub const EXTRA_CAST_TARGETS: [&str; 3] = ["float32", "int8", "int32"];

/// Marker in `cast_from_*` for a format pair ml_dtypes registers no cast for.
pub const UNSUPPORTED: u32 = 0xFFFF_FFFF;

/// Code-point classes in `codes_*_class` row 0.
pub const CLASS_ZERO: u8 = 0;
/// Subnormal (nonzero, below the smallest normal).
pub const CLASS_SUBNORMAL: u8 = 1;
/// Normal finite number.
pub const CLASS_NORMAL: u8 = 2;
/// ±infinity.
pub const CLASS_INF: u8 = 3;
/// NaN.
pub const CLASS_NAN: u8 = 4;

/// The directory holding the format vectors.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/formats")
}

/// Position of a format in [`FORMATS`].
pub fn format_index(name: &str) -> usize {
    FORMATS
        .iter()
        .position(|f| *f == name)
        .unwrap_or_else(|| panic!("unknown format {name}"))
}

/// A loaded array: its shape and its elements in C order.
#[derive(Debug, Clone)]
pub struct Array<T> {
    /// NumPy shape.
    pub shape: Vec<usize>,
    /// Elements, row-major.
    pub data: Vec<T>,
}

impl<T: Copy> Array<T> {
    /// Row `i` of a 2-D array.
    pub fn row(&self, i: usize) -> &[T] {
        assert_eq!(self.shape.len(), 2, "row() on a non-2-D array");
        let n = self.shape[1];
        &self.data[i * n..(i + 1) * n]
    }
}

/// Loads `NAME.npy.gz` as elements of type `T` (the stored dtype must match).
pub fn load<T: npyz::Deserialize>(name: &str) -> Array<T> {
    load_in("formats", name)
}

/// [`load`] from another directory of `tests/vectors/` (`"p3109"`).
pub fn load_in<T: npyz::Deserialize>(sub: &str, name: &str) -> Array<T> {
    let path = dir()
        .parent()
        .expect("tests/vectors")
        .join(sub)
        .join(format!("{name}.npy.gz"));
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(GzDecoder::new(BufReader::new(file)))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let shape = npy.shape().iter().map(|&d| d as usize).collect();
    let data = npy
        .into_vec::<T>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Array { shape, data }
}

/// Loads a 1-D `u32` array, e.g. `load_u32("f32_probe_inputs")`.
pub fn load_u32(name: &str) -> Vec<u32> {
    load::<u32>(name).data
}

/// Loads a 1-D `u64` array, e.g. `load_u64("f64_probe_inputs")`.
pub fn load_u64(name: &str) -> Vec<u64> {
    load::<u64>(name).data
}

/// Every code point of a format: `(f32 bits of its value, f64 value, class, sign)`
/// per code `0 .. 2^bits`.
pub struct Codes {
    /// float32 bit pattern of each code's value (ml_dtypes `astype(float32)`).
    pub f32_bits: Vec<u32>,
    /// float64 value of each code.
    pub f64: Vec<f64>,
    /// One of the `CLASS_*` constants.
    pub class: Vec<u8>,
    /// Sign bit of the float32 value (1 = negative).
    pub sign: Vec<u8>,
}

/// Loads every code point of format `fmt` (an ml_dtypes name).
pub fn load_codes(fmt: &str) -> Codes {
    let f32_bits = load_u32(&format!("codes_{fmt}_f32"));
    let f64 = load::<f64>(&format!("codes_{fmt}_f64")).data;
    let cs = load::<u8>(&format!("codes_{fmt}_class"));
    Codes {
        f32_bits,
        f64,
        class: cs.row(0).to_vec(),
        sign: cs.row(1).to_vec(),
    }
}

/// float32 → format: `(input bits, ml_dtypes codes of format fmt)`.
pub fn load_f32_to(fmt: &str) -> (Vec<u32>, Vec<u16>) {
    // Loaded once per test binary: several tests read every row.
    static ALL: OnceLock<(Vec<u32>, Array<u16>)> = OnceLock::new();
    let (inputs, out) =
        ALL.get_or_init(|| (load_u32("f32_probe_inputs"), load::<u16>("f32_to_formats")));
    (inputs.clone(), out.row(format_index(fmt)).to_vec())
}

/// float64 → format: `(input bits, ml_dtypes astype codes, correctly rounded codes)`.
pub fn load_f64_to(fmt: &str) -> (Vec<u64>, Vec<u16>, Vec<u16>) {
    // Loaded once per test binary, as in `load_f32_to`.
    static ALL: OnceLock<(Vec<u64>, Array<u16>, Array<u16>)> = OnceLock::new();
    let (inputs, ml, ex) = ALL.get_or_init(|| {
        (
            load_u64("f64_probe_inputs"),
            load::<u16>("f64_to_formats_mldtypes"),
            load::<u16>("f64_to_formats_exact"),
        )
    });
    let inputs = inputs.clone();
    let i = format_index(fmt);
    (inputs, ml.row(i).to_vec(), ex.row(i).to_vec())
}

/// Cast of every code of `src` to `dst` (a name in [`FORMATS`] or [`EXTRA_CAST_TARGETS`]), as
/// ml_dtypes `astype` gives it; [`UNSUPPORTED`] entries where ml_dtypes has
/// no such cast.
pub fn load_cast(src: &str, dst: &str) -> Vec<u32> {
    let arr = load::<u32>(&format!("cast_from_{src}"));
    let i = FORMATS
        .iter()
        .chain(EXTRA_CAST_TARGETS.iter())
        .position(|t| *t == dst)
        .unwrap_or_else(|| panic!("unknown cast target {dst}"));
    arr.row(i).to_vec()
}

/// Loads `NAME.json`.
pub fn load_json(name: &str) -> serde_json::Value {
    load_json_in("formats", name)
}

/// [`load_json`] from another directory of `tests/vectors/` (`"p3109"`).
pub fn load_json_in(sub: &str, name: &str) -> serde_json::Value {
    let path = dir()
        .parent()
        .expect("tests/vectors")
        .join(sub)
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Parses a float stored as a Python `repr` string (round-trips exactly).
pub fn parse_f64(v: &serde_json::Value) -> f64 {
    let s = v.as_str().expect("float stored as a string");
    match s {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" => f64::NAN,
        _ => s.parse().unwrap_or_else(|e| panic!("{s}: {e}")),
    }
}
