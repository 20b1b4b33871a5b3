//! `convert` and `inspect`: safetensors checkpoints.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mldtypes::dtype::{DType, Kind};
use mldtypes::format::Overflow;
use safetensors::tensor::{Dtype as Tag, SafeTensors, TensorView};
use serde_json::json;

use crate::backend;
use crate::error::{usage, CliError, Result};
use crate::formats::{json_f64, text_f64};
use crate::promotion::write_atomically_with;

/// The safetensors dtype tag that stores `d`, if the format defines one.
/// `F4`, `F6_E2M3` and `F6_E3M2` are bit-packed.
pub fn tag_of(d: DType) -> Option<Tag> {
    use DType::*;
    Some(match d {
        Bool => Tag::BOOL,
        Int8 => Tag::I8,
        Int16 => Tag::I16,
        Int32 => Tag::I32,
        Int64 => Tag::I64,
        UInt8 => Tag::U8,
        UInt16 => Tag::U16,
        UInt32 => Tag::U32,
        UInt64 => Tag::U64,
        Float4E2M1FN => Tag::F4,
        Float6E2M3FN => Tag::F6_E2M3,
        Float6E3M2FN => Tag::F6_E3M2,
        Float8E4M3FN => Tag::F8_E4M3,
        Float8E5M2 => Tag::F8_E5M2,
        Float8E4M3FNUZ => Tag::F8_E4M3FNUZ,
        Float8E5M2FNUZ => Tag::F8_E5M2FNUZ,
        Float8E8M0FNU => Tag::F8_E8M0,
        BFloat16 => Tag::BF16,
        Float16 => Tag::F16,
        Float32 => Tag::F32,
        Float64 => Tag::F64,
        Complex64 => Tag::C64,
        _ => return None,
    })
}

/// The dtype a safetensors tag stores.
pub fn dtype_of(t: Tag) -> Option<DType> {
    DType::ALL.iter().copied().find(|d| tag_of(*d) == Some(t))
}

/// Arguments of `mldtypes convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The input safetensors file.
    input: PathBuf,
    /// The output safetensors file (written through a temporary file and renamed).
    output: PathBuf,
    /// The target dtype of the floating-point tensors.
    #[arg(long)]
    to: String,
    /// Convert only the tensors whose names match this glob; others are copied.
    #[arg(long, value_name = "GLOB")]
    only: Option<String>,
    /// Clamp overflowing values to ±max instead of inf / NaN.
    #[arg(long)]
    saturate: bool,
    /// Print the per-tensor statistics as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Error statistics of one conversion.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Elements compared.
    pub count: u64,
    /// Largest |converted − original| over finite pairs.
    pub max_abs: f64,
    /// Σ (converted − original)² over finite pairs.
    pub sq_err: f64,
    /// Σ original² over finite pairs.
    pub sq_ref: f64,
    /// Finite values that became inf / NaN, or were clamped to ±max.
    pub overflow: u64,
    /// Non-zero finite values that became zero.
    pub flushed: u64,
}

impl Stats {
    /// Relative RMS error, `sqrt(Σ err² / Σ x²)` (0 when all values are zero).
    pub fn rel_rms(&self) -> f64 {
        if self.sq_ref > 0.0 {
            (self.sq_err / self.sq_ref).sqrt()
        } else if self.sq_err > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }

    /// Adds a block of (original, converted) pairs, branch-free over eight
    /// independent lanes so the loop vectorizes.
    fn add_block(&mut self, xs: &[f32], ys: &[f32], limit: &OverflowLimit) {
        const L: usize = 8;
        let (mut err, mut sq, mut max) = ([0f64; L], [0f64; L], [0f64; L]);
        let (mut overflow, mut flushed) = ([0u64; L], [0u64; L]);
        let (thr, tie) = (limit.threshold, limit.tie_overflows);
        let mut lane = |l: usize, x: f32, y: f32| {
            let (x, y) = (x as f64, y as f64);
            let ax = x.abs();
            let finite = ax < f64::INFINITY;
            let beyond = ax > thr || (ax == thr && tie);
            let over = finite & (!y.is_finite() | beyond);
            let ok = finite & !over;
            let e = if ok { (y - x).abs() } else { 0.0 };
            overflow[l] += over as u64;
            flushed[l] += (ok & (x != 0.0) & (y == 0.0)) as u64;
            max[l] = if e > max[l] { e } else { max[l] };
            err[l] += e * e;
            sq[l] += if ok { x * x } else { 0.0 };
        };
        let (xc, yc) = (xs.chunks_exact(L), ys.chunks_exact(L));
        let (xr, yr) = (xc.remainder(), yc.remainder());
        for (x, y) in xc.zip(yc) {
            for l in 0..L {
                lane(l, x[l], y[l]);
            }
        }
        for (l, (x, y)) in xr.iter().zip(yr).enumerate() {
            lane(l, *x, *y);
        }
        self.count += xs.len() as u64;
        self.overflow += overflow.iter().sum::<u64>();
        self.flushed += flushed.iter().sum::<u64>();
        self.max_abs = max.iter().fold(self.max_abs, |m, v| m.max(*v));
        self.sq_err += err.iter().sum::<f64>();
        self.sq_ref += sq.iter().sum::<f64>();
    }

    fn merge(&mut self, o: &Stats) {
        self.count += o.count;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.sq_err += o.sq_err;
        self.sq_ref += o.sq_ref;
        self.overflow += o.overflow;
        self.flushed += o.flushed;
    }
}

/// Where finite values stop rounding to a finite number of the target: a
/// value overflows (to inf / NaN, or is saturated to ±max) when its magnitude
/// rounds, with an unbounded exponent, to more than the largest finite value.
struct OverflowLimit {
    /// max + half an ulp of max: the rounding boundary.
    threshold: f64,
    /// Whether the boundary itself rounds up (ties-to-even away from an odd max).
    tie_overflows: bool,
}

impl OverflowLimit {
    fn of(to: DType) -> OverflowLimit {
        match to.format() {
            Some(f) => OverflowLimit {
                threshold: f.max_finite() + 2f64.powi(f.max_exp() - f.man_bits as i32 - 1),
                tie_overflows: f.max_code() & 1 == 1,
            },
            None if to == DType::Float32 => OverflowLimit {
                threshold: f32::MAX as f64 + 2f64.powi(103),
                tie_overflows: true,
            },
            None => OverflowLimit {
                threshold: f64::INFINITY,
                tie_overflows: false,
            },
        }
    }
}

fn bad_input(path: &Path, message: impl Into<String>) -> CliError {
    CliError::BadInput {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The bytes of an input file: memory-mapped, or read for empty files.
enum Input {
    Mapped(memmap2::Mmap),
    Empty,
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Empty => &[],
        }
    }
}

fn read_file(path: &Path) -> Result<Input> {
    let err = |source| CliError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(err)?;
    if file.metadata().map_err(err)?.len() == 0 {
        return Ok(Input::Empty);
    }
    // SAFETY: the map is only read; as with every memory-mapped reader, a file
    // truncated by another process while we run would fault.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(err)?;
    Ok(Input::Mapped(map))
}

/// Parses a safetensors buffer, mapping every failure to a message that
/// names the problem (the `safetensors` crate validates header JSON, dtype
/// tags, and that the offsets cover the data exactly).
fn parse<'a>(path: &Path, buf: &'a [u8]) -> Result<SafeTensors<'a>> {
    if buf.len() < 8 {
        return Err(bad_input(
            path,
            format!(
                "not a safetensors file: truncated ({} bytes, the header length alone takes 8)",
                buf.len()
            ),
        ));
    }
    let n = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
    if n > (buf.len() - 8) as u64 {
        return Err(bad_input(
            path,
            format!(
                "truncated: the header claims {n} bytes but only {} follow",
                buf.len() - 8
            ),
        ));
    }
    SafeTensors::deserialize(buf).map_err(|e| {
        use safetensors::SafeTensorError as E;
        let what = match &e {
            E::InvalidHeaderDeserialization(_)
            | E::InvalidHeader(_)
            | E::HeaderTooLarge
            | E::InvalidHeaderLength => "bad header",
            E::InvalidOffset(_) | E::TensorInvalidInfo | E::ValidationOverflow => {
                "tensor offsets out of range"
            }
            E::MetadataIncompleteBuffer => "truncated or offsets out of range",
            _ => "not a valid safetensors file",
        };
        bad_input(path, format!("{what}: {e}"))
    })
}

/// Decodes `data` (elements of `d` in safetensors storage) to f32, or `None`
/// if the dtype is not a real float.
fn decode_f32(data: &[u8], d: DType, n: usize) -> Result<Option<Vec<f32>>> {
    if d.kind() != Kind::Float {
        return Ok(None);
    }
    let mut out = vec![0u8; n * 4];
    backend::cast_storage(
        data,
        d,
        &mut out,
        DType::Float32,
        n,
        Overflow::NonSaturating,
    )?;
    Ok(Some(
        out.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect(),
    ))
}

/// Error statistics of converting `n` elements `src` (of `from`) to `dst`
/// (of `to`), both in safetensors storage, decoded to float32 a block at a time.
fn compare(
    src: &[u8],
    from: DType,
    dst: &[u8],
    to: DType,
    n: usize,
    limit: &OverflowLimit,
) -> Result<Stats> {
    // A multiple of every packing group (2 and 4 elements).
    const BLOCK: usize = 1 << 16;
    let mut stats = Stats::default();
    let (mut xs, mut ys) = (vec![0f32; BLOCK], vec![0f32; BLOCK]);
    let bytes = |d: DType, k: usize| backend::storage_bytes(d, k).unwrap_or(0);
    let mut i = 0;
    while i < n {
        let k = BLOCK.min(n - i);
        let (s0, d0) = (bytes(from, i), bytes(to, i));
        let (sk, dk) = (bytes(from, k), bytes(to, k));
        let (x, y) = (&mut xs[..k], &mut ys[..k]);
        let ov = Overflow::NonSaturating;
        backend::cast_storage(
            &src[s0..s0 + sk],
            from,
            bytemuck::cast_slice_mut(x),
            DType::Float32,
            k,
            ov,
        )?;
        backend::cast_storage(
            &dst[d0..d0 + dk],
            to,
            bytemuck::cast_slice_mut(y),
            DType::Float32,
            k,
            ov,
        )?;
        stats.add_block(x, y, limit);
        i += k;
    }
    Ok(stats)
}

/// One output tensor: name, dtype tag, shape, and its bytes (borrowed from
/// the input when copied unchanged).
type Output<'a> = (String, Tag, Vec<usize>, Cow<'a, [u8]>);

struct Plan<'a> {
    name: String,
    view: TensorView<'a>,
    from: DType,
    convert: bool,
}

/// `mldtypes convert`.
pub fn convert(a: ConvertArgs) -> Result<()> {
    let to = backend::parse_dtype(&a.to)?;
    let to_tag = match tag_of(to) {
        Some(t) if to.kind() == Kind::Float => t,
        Some(_) => return Err(usage!("--to must be a floating-point dtype, not {to}")),
        None => {
            return Err(usage!(
                "{to} has no safetensors dtype tag; targets: bfloat16, float16, float32, float64, \
                 float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, \
                 float6_e2m3fn, float6_e3m2fn, float4_e2m1fn"
            ))
        }
    };
    let only = match &a.only {
        Some(g) => Some(
            globset::Glob::new(g)
                .map_err(|e| usage!("bad --only glob: {e}"))?
                .compile_matcher(),
        ),
        None => None,
    };
    let ov = if a.saturate {
        Overflow::Saturating
    } else {
        Overflow::NonSaturating
    };
    let buf = read_file(&a.input)?;
    let st = parse(&a.input, &buf)?;
    let (_, meta) =
        SafeTensors::read_metadata(&buf).map_err(|e| bad_input(&a.input, e.to_string()))?;

    // Plan and validate every tensor before converting anything.
    let mut names: Vec<String> = st.names().into_iter().map(String::from).collect();
    names.sort();
    let mut plans = Vec::with_capacity(names.len());
    for name in names {
        let view = st
            .tensor(&name)
            .map_err(|e| bad_input(&a.input, e.to_string()))?;
        let from = dtype_of(view.dtype()).ok_or_else(|| {
            bad_input(
                &a.input,
                format!("tensor {name}: unsupported dtype {}", view.dtype()),
            )
        })?;
        let convert = from.kind() == Kind::Float && only.as_ref().is_none_or(|m| m.is_match(&name));
        if convert {
            let n: usize = view.shape().iter().product();
            if backend::storage_bytes(to, n).is_none() {
                return Err(usage!(
                    "tensor {name} has {n} elements, which do not pack into whole bytes as {to_tag}"
                ));
            }
            if !backend::can_cast(from, to) {
                return Err(usage!("converting {from} to {to} is not supported"));
            }
        }
        plans.push(Plan {
            name,
            view,
            from,
            convert,
        });
    }

    let total: u64 = plans
        .iter()
        .filter(|p| p.convert)
        .map(|p| p.view.data().len() as u64)
        .sum();
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template("{spinner} [{bar:40}] {bytes}/{total_bytes} {wide_msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };

    let limit = OverflowLimit::of(to);
    let mut outputs: Vec<Output> = Vec::with_capacity(plans.len());
    let mut rows: Vec<(String, Vec<usize>, DType, Stats)> = Vec::new();
    let mut totals = Stats::default();
    for p in &plans {
        let shape = p.view.shape().to_vec();
        if !p.convert {
            outputs.push((
                p.name.clone(),
                p.view.dtype(),
                shape,
                Cow::Borrowed(p.view.data()),
            ));
            continue;
        }
        bar.set_message(p.name.clone());
        let n: usize = shape.iter().product();
        let mut dst = vec![0u8; backend::storage_bytes(to, n).expect("checked above")];
        backend::cast_storage(p.view.data(), p.from, &mut dst, to, n, ov)?;
        let stats = compare(p.view.data(), p.from, &dst, to, n, &limit)?;
        totals.merge(&stats);
        rows.push((p.name.clone(), shape.clone(), p.from, stats));
        outputs.push((p.name.clone(), to_tag, shape, Cow::Owned(dst)));
        bar.inc(p.view.data().len() as u64);
    }
    bar.finish_and_clear();

    let views: Vec<(String, TensorView<'_>)> = outputs
        .iter()
        .map(|(n, t, s, d)| {
            TensorView::new(*t, s.clone(), d)
                .map(|v| (n.clone(), v))
                .map_err(|e| CliError::Write {
                    path: a.output.clone(),
                    message: e.to_string(),
                })
        })
        .collect::<Result<_>>()?;
    write_atomically_with(&a.output, |tmp| {
        safetensors::serialize_to_file(views, meta.metadata().clone(), tmp)
            .map_err(|e| e.to_string())
    })?;

    if a.json {
        let tensors: Vec<_> = rows
            .iter()
            .map(|(n, s, f, st)| {
                stats_json(
                    json!({"name": n, "shape": s, "from": f.name(), "to": to.name()}),
                    st,
                )
            })
            .collect();
        let v = json!({"tensors": tensors, "total": stats_json(json!({"to": to.name(), "copied": plans.len() - rows.len()}), &totals)});
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("JSON serializes")
        );
        return Ok(());
    }
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
    println!(
        "{:<w$}  {:<14}  {:<22}  {:>11}  {:>9}  {:>8}  {:>7}",
        "tensor", "shape", "from -> to", "max |err|", "rel RMS", "overflow", "flushed"
    );
    let line = |name: &str, shape: &str, conv: &str, s: &Stats| {
        println!(
            "{name:<w$}  {shape:<14}  {conv:<22}  {:>11}  {:>9}  {:>8}  {:>7}",
            format!("{:.3e}", s.max_abs),
            format!("{:.3e}", s.rel_rms()),
            s.overflow,
            s.flushed
        );
    };
    for (n, s, f, st) in &rows {
        let shape = format!("{s:?}");
        line(n, &shape, &format!("{} -> {}", f.name(), to.name()), st);
    }
    let conv = format!("{} tensors", rows.len());
    line(
        "total",
        &format!("{} elements", totals.count),
        &conv,
        &totals,
    );
    if rows.len() < plans.len() {
        println!("({} tensor(s) copied unchanged)", plans.len() - rows.len());
    }
    println!("wrote {}", a.output.display());
    Ok(())
}

fn stats_json(mut base: serde_json::Value, s: &Stats) -> serde_json::Value {
    base["elements"] = json!(s.count);
    base["max_abs_error"] = json_f64(s.max_abs);
    base["rel_rms_error"] = json_f64(s.rel_rms());
    base["overflow"] = json!(s.overflow);
    base["flushed_to_zero"] = json!(s.flushed);
    base
}

/// Summary statistics of one tensor.
struct Summary {
    min: f64,
    max: f64,
    mean: f64,
    nans: u64,
}

fn summarize(values: impl Iterator<Item = f64>) -> Option<Summary> {
    let (mut min, mut max, mut sum, mut n, mut nans) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0u64, 0u64);
    for v in values {
        if v.is_nan() {
            nans += 1;
            continue;
        }
        min = min.min(v);
        max = max.max(v);
        sum += v;
        n += 1;
    }
    (n + nans > 0).then(|| Summary {
        min,
        max,
        mean: if n > 0 { sum / n as f64 } else { f64::NAN },
        nans,
    })
}

fn tensor_summary(view: &TensorView<'_>, d: DType) -> Result<Option<Summary>> {
    let data = view.data();
    let n: usize = view.shape().iter().product();
    macro_rules! ints {
        ($t:ty) => {
            summarize(
                data.chunks_exact(std::mem::size_of::<$t>())
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("width")) as f64),
            )
        };
    }
    Ok(match d {
        DType::Bool | DType::UInt8 => summarize(data.iter().map(|b| *b as f64)),
        DType::Int8 => ints!(i8),
        DType::Int16 => ints!(i16),
        DType::Int32 => ints!(i32),
        DType::Int64 => ints!(i64),
        DType::UInt16 => ints!(u16),
        DType::UInt32 => ints!(u32),
        DType::UInt64 => ints!(u64),
        DType::Float64 => ints!(f64),
        d if d.kind() == Kind::Float => match decode_f32(data, d, n) {
            Ok(Some(v)) => summarize(v.into_iter().map(|x| x as f64)),
            _ => None,
        },
        _ => None,
    })
}

/// `mldtypes inspect`.
pub fn inspect(path: &Path, json_out: bool) -> Result<()> {
    let buf = read_file(path)?;
    let st = parse(path, &buf)?;
    let mut names: Vec<String> = st.names().into_iter().map(String::from).collect();
    names.sort();
    let mut rows = Vec::new();
    for name in names {
        let view = st
            .tensor(&name)
            .map_err(|e| bad_input(path, e.to_string()))?;
        let d = dtype_of(view.dtype());
        let summary = match d {
            Some(d) => tensor_summary(&view, d)?,
            None => None,
        };
        rows.push((name, view.dtype(), view.shape().to_vec(), summary));
    }
    if json_out {
        let arr: Vec<_> = rows
            .iter()
            .map(|(n, t, s, sum)| {
                let mut v = json!({"name": n, "dtype": t.to_string(), "shape": s});
                if let Some(m) = sum {
                    v["min"] = json_f64(m.min);
                    v["max"] = json_f64(m.max);
                    v["mean"] = json_f64(m.mean);
                    v["nan_count"] = json!(m.nans);
                }
                v
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&arr).expect("JSON serializes")
        );
        return Ok(());
    }
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
    println!(
        "{:<w$}  {:<8}  {:<14}  {:>12}  {:>12}  {:>12}  {:>5}",
        "tensor", "dtype", "shape", "min", "max", "mean", "NaN"
    );
    for (n, t, s, sum) in &rows {
        let shape = format!("{s:?}");
        match sum {
            Some(m) => println!(
                "{n:<w$}  {:<8}  {shape:<14}  {:>12}  {:>12}  {:>12}  {:>5}",
                t.to_string(),
                short(m.min),
                short(m.max),
                short(m.mean),
                m.nans
            ),
            None => println!(
                "{n:<w$}  {:<8}  {shape:<14}  {:>12}  {:>12}  {:>12}  {:>5}",
                t.to_string(),
                "-",
                "-",
                "-",
                "-"
            ),
        }
    }
    let total: usize = rows.iter().map(|r| r.2.iter().product::<usize>()).sum();
    println!("{} tensors, {total} elements", rows.len());
    Ok(())
}

fn short(x: f64) -> String {
    if x.is_finite() && x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) {
        format!("{x:.4e}")
    } else if x.is_finite() {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text_f64(x)
    }
}
