//! `convert` and `inspect`: safetensors checkpoints, through
//! `mldtypes::checkpoint`.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use mldtypes::checkpoint::{self, Cancel, CheckpointFormat, Options, Progress, Summary, Target};
use mldtypes::format::Overflow;
use mldtypes::mx::ScaleRule;
use serde_json::{json, Value};

use crate::backend;
use crate::error::{usage, CliError, Result};
use crate::formats::{json_f64, text_f64};
use crate::output;

/// The MX scale rule.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum MxScale {
    /// X = 2^(floor(log2(amax)) − emax_elem), OCP MX v1.0 §6.3 (may clip).
    Floor,
    /// X = 2^ceil(log2(amax / max_elem)): never clips.
    Ceil,
    /// torchao's EVEN: amax rounded to the element mantissa width (ties
    /// away), then the floor rule.
    Even,
    /// torchao's RCEIL: X = 2^ceil(log2(f32(amax / max_elem))), as NVIDIA's
    /// cvt.rp.satfinite.ue8m0x2.
    Rceil,
}

/// The checkpoint format of a recipe.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// NVIDIA ModelOpt 0.47's export: hf_quant_config.json, quant_method "modelopt".
    Modelopt,
    /// compressed-tensors' float-quantized format (llm-compressor).
    CompressedTensors,
    /// quant_method "fp8" with weight_scale_inv (DeepSeek-V3, Qwen3-FP8).
    Fp8,
}

/// Arguments of `mldtypes convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The input: a .safetensors file, a model directory, or a sharded
    /// model's model.safetensors.index.json.
    input: PathBuf,
    /// The output: a file for a file input, else a directory (written beside
    /// it and renamed into place; a symlink or device is refused).
    output: PathBuf,
    /// The target: a floating-point dtype (bfloat16, float8_e4m3fn, …: every
    /// float tensor is converted; MX, NVFP4 and FP8-with-scales inputs are
    /// dequantized), or a quantization recipe: an MX format (mxfp8_e4m3,
    /// mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4, mxint8), nvfp4 (ModelOpt
    /// W4A16_NVFP4), fp8 (per-tensor scales), fp8_channel or fp8_block
    /// (128×128). Recipes quantize the linear weights a serving stack
    /// quantizes (gpt-oss MXFP4: its experts; ModelOpt's formats: gpt-oss's
    /// experts too), as the model's config.json describes it.
    #[arg(long)]
    to: String,
    /// Convert only the tensors whose names match this glob; others are
    /// copied. For a recipe it replaces the default selection.
    #[arg(long, value_name = "GLOB")]
    only: Option<String>,
    /// Leave the tensors whose names match this glob unconverted.
    #[arg(long, value_name = "GLOB")]
    exclude: Option<String>,
    /// The checkpoint format of a recipe: modelopt (nvfp4; fp8, fp8_channel,
    /// fp8_block), compressed-tensors (fp8, fp8_channel, fp8_block; the
    /// default of fp8 and fp8_channel) or fp8 (quant_method "fp8",
    /// weight_scale_inv: fp8_block's default).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// nvfp4: one weight_scale_2 per tensor instead of one shared by the
    /// projections serving stacks fuse (q/k/v, gate/up).
    #[arg(long)]
    per_tensor_scale_2: bool,
    /// Saturate: clamp values beyond the largest finite number, infinities
    /// included, to ±max instead of inf / NaN (NaN stays NaN).
    #[arg(long)]
    saturate: bool,
    /// The MX scale rule.
    #[arg(long, value_enum, default_value = "floor")]
    mx_scale: MxScale,
    /// Rounding mode of plain conversions, dequantized outputs and MX
    /// elements (gfloat 0.5.2's RoundMode): nearest_even (ml_dtypes'
    /// astype), nearest_away, toward_zero, toward_negative, toward_positive,
    /// stochastic, stochastic_odd, stochastic_fast, stochastic_fastest. The
    /// stochastic modes need --seed; mxint8 takes nearest_even only. NVFP4
    /// and the fp8 recipes round each element's exact quotient by its scale.
    #[arg(long, value_name = "MODE", default_value = "nearest_even", value_parser = crate::formats::parse_mode)]
    rounding: mldtypes::round::RoundMode,
    /// Random bits per element for the stochastic modes, 1 to 32 (default 32).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    sr_bits: Option<u32>,
    /// Seed of the stochastic modes: element i of tensor NAME (row-major; MX:
    /// in block order) takes `mldtypes::round::seeded_bits(tensor_seed(S,
    /// NAME), i, N)` (tensor_seed: S XOR the FNV-1a-64 hash of NAME), so the
    /// bytes are the same whatever --threads and the sharding are.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// For recipes: convert the floating-point tensors that are not
    /// quantized (norms, biases, embeddings, …) to this dtype instead of
    /// copying them.
    #[arg(long, value_name = "DTYPE")]
    rest: Option<String>,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// fsync the output before renaming it into place.
    #[arg(long)]
    fsync: bool,
    /// Allow the output to be the input, or to replace a non-empty directory.
    #[arg(long)]
    overwrite: bool,
    /// Print a JSON summary instead of a table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `mldtypes inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A .safetensors file, a model directory or an index file.
    file: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Appends one formatted line to a `String` (the text tables are built whole
/// and written once through [`output::print`], which reports a failed write).
macro_rules! line_to {
    ($out:expr, $($arg:tt)*) => {{
        let out: &mut String = $out;
        out.push_str(&format!($($arg)*));
        out.push('\n');
    }};
}

fn lib_err(e: checkpoint::Error) -> CliError {
    match e {
        checkpoint::Error::Usage(m) => CliError::Usage(m),
        checkpoint::Error::Invalid { path, message } => CliError::BadInput { path, message },
        checkpoint::Error::Read { path, source } => CliError::Read { path, source },
        checkpoint::Error::Write { path, source } => CliError::Write {
            path,
            message: source.to_string(),
        },
        checkpoint::Error::Cancelled => CliError::Usage("cancelled".into()),
    }
}

/// A progress bar over input bytes with ETA, on a terminal only.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn advance(&self, bytes: u64) -> bool {
        self.0.inc(bytes);
        true
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

fn bar() -> Bar {
    if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        Bar(b)
    } else {
        Bar(ProgressBar::hidden())
    }
}

/// Pads `s` to `w` characters (no padding for longer strings: names may be
/// arbitrarily long).
fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// The name column's width: the longest name, at most 60.
fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 60)
}

/// The longest `--only` glob accepted.
const MAX_GLOB: usize = 1024;

/// Compiles an `--only` / `--exclude` glob (`option` names it); patterns
/// too long or too complex for the glob compiler are usage errors, never a
/// panic.
fn compile_glob(g: &str, option: &str) -> Result<globset::GlobMatcher> {
    let n = g.chars().count();
    if n > MAX_GLOB {
        return Err(usage!(
            "bad --{option} glob: {n} characters; at most {MAX_GLOB}"
        ));
    }
    match std::panic::catch_unwind(|| globset::Glob::new(g).map(|g| g.compile_matcher())) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(usage!("bad --{option} glob: {e}")),
        Err(_) => Err(usage!("bad --{option} glob: too complex to compile")),
    }
}

/// SIGINT and SIGTERM during a conversion: the first sets the conversion's
/// cancellation flag (the workers stop at their next chunk and the
/// temporary output is removed), then the process exits 128 + the signal
/// number (130, 143); a second one ends the process at once.
struct StopSignals {
    cancel: Cancel,
    #[cfg(unix)]
    which: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl StopSignals {
    fn install() -> StopSignals {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGINT, SIGTERM};
            use signal_hook::flag;
            let which = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            for sig in [SIGINT, SIGTERM] {
                // Registration only fails for signals that cannot be caught.
                let _ = flag::register_conditional_shutdown(sig, 128 + sig, flag.clone());
                let _ = flag::register_usize(sig, which.clone(), sig as usize);
                let _ = flag::register(sig, flag.clone());
            }
            StopSignals {
                cancel: Cancel::from_flag(flag),
                which,
            }
        }
        #[cfg(not(unix))]
        StopSignals {
            cancel: Cancel::from_flag(flag),
        }
    }

    /// After the conversion returned (`written`: successfully): if a signal
    /// came, says so and exits 128 + its number (a stopped conversion has
    /// removed its temporary output by then).
    fn exit_if_stopped(&self, written: bool) {
        #[cfg(unix)]
        {
            let sig = self.which.load(std::sync::atomic::Ordering::SeqCst);
            if sig != 0 {
                let name = if sig == signal_hook::consts::SIGINT as usize {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                if written {
                    eprintln!("mldtypes: interrupted by {name}; the output was already complete");
                } else {
                    eprintln!("mldtypes: interrupted by {name}; no output written");
                }
                std::process::exit(128 + sig as i32);
            }
        }
    }
}

/// `mldtypes convert`.
pub fn convert(a: ConvertArgs) -> Result<()> {
    // A file size limit must fail the write (and be cleaned up), not kill us.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let target = Target::parse(&a.to).map_err(lib_err)?;
    let matcher = a
        .only
        .as_deref()
        .map(|g| compile_glob(g, "only"))
        .transpose()?;
    let excluder = a
        .exclude
        .as_deref()
        .map(|g| compile_glob(g, "exclude"))
        .transpose()?;
    let select = |name: &str| matcher.as_ref().is_none_or(|m| m.is_match(name));
    let exclude = |name: &str| excluder.as_ref().is_some_and(|m| m.is_match(name));
    let mut opts = Options::new(target);
    opts.format = a.format.map(|f| match f {
        Format::Modelopt => CheckpointFormat::ModelOpt,
        Format::CompressedTensors => CheckpointFormat::CompressedTensors,
        Format::Fp8 => CheckpointFormat::Fp8,
    });
    opts.fuse_scale_2 = !a.per_tensor_scale_2;
    if excluder.is_some() {
        opts.exclude = Some(&exclude);
    }
    opts.overflow = if a.saturate {
        Overflow::Saturating
    } else {
        Overflow::NonSaturating
    };
    opts.scale_rule = match a.mx_scale {
        MxScale::Floor => ScaleRule::Floor,
        MxScale::Ceil => ScaleRule::Ceil,
        MxScale::Even => ScaleRule::Even,
        MxScale::Rceil => ScaleRule::Rceil,
    };
    opts.rounding = a.rounding;
    opts.sr_bits = a.sr_bits;
    opts.seed = a.seed;
    opts.rest = a.rest.as_deref().map(backend::parse_dtype).transpose()?;
    if matcher.is_some() {
        opts.select = Some(&select);
    }
    opts.threads = a.threads;
    opts.fsync = a.fsync;
    opts.overwrite = a.overwrite;
    let signals = StopSignals::install();
    opts.cancel = signals.cancel.clone();
    let start = std::time::Instant::now();
    let result = checkpoint::convert(&a.input, &a.output, &opts, &bar());
    signals.exit_if_stopped(result.is_ok());
    let summary = result.map_err(lib_err)?;
    let seconds = start.elapsed().as_secs_f64();
    for w in &summary.warnings {
        eprintln!("mldtypes: warning: {w}");
    }
    if a.json {
        let mut v = serde_json::to_value(&summary).map_err(|e| usage!("{e}"))?;
        v["input"] = json!(a.input.display().to_string());
        v["output"] = json!(a.output.display().to_string());
        v["seconds"] = json!(seconds);
        return output::print_json(&v);
    }
    output::print(&summary_text(&summary, &a, seconds))
}

/// The text table of `convert`: one row per converted tensor and the total.
fn summary_text(s: &Summary, a: &ConvertArgs, seconds: f64) -> String {
    let mut out = String::new();
    let w = name_width(s.tensors.iter().map(|t| t.name.as_str()));
    line_to!(
        &mut out,
        "{}  {:<16}  {:<24}  {:>10}  {:>9}  {:>8}  {:>8}  {:>7}",
        pad("tensor", w),
        "shape",
        "from -> to",
        "max |err|",
        "rel RMS",
        "SQNR dB",
        "clipped",
        "flushed"
    );
    let mut line = |name: &str, shape: &str, conv: &str, st: Option<&checkpoint::Stats>| match st {
        Some(st) => line_to!(
            &mut out,
            "{}  {shape:<16}  {conv:<24}  {:>10}  {:>9}  {:>8}  {:>8}  {:>7}",
            pad(name, w),
            format!("{:.3e}", st.max_abs),
            format!("{:.3e}", st.rel_rms()),
            text_sqnr(st.sqnr_db()),
            st.clipped,
            st.flushed
        ),
        None => line_to!(
            &mut out,
            "{}  {shape:<16}  {conv:<24}  {:>10}  {:>9}  {:>8}  {:>8}  {:>7}",
            pad(name, w),
            "exact",
            "-",
            "-",
            "-",
            "-"
        ),
    };
    for t in &s.tensors {
        line(
            &t.name,
            &format!("{:?}", t.shape),
            &format!("{} -> {}", t.from, t.to),
            t.stats.as_ref(),
        );
    }
    line(
        "total",
        &format!("{} elements", s.total.count),
        &format!("{} tensors", s.tensors.len()),
        Some(&s.total),
    );
    if !s.copied.is_empty() {
        line_to!(&mut out, "({} tensor(s) copied unchanged)", s.copied.len());
    }
    line_to!(
        &mut out,
        "wrote {} ({} file(s), {:.1} MB in {:.2} s)",
        a.output.display(),
        s.files.len(),
        s.bytes_written as f64 / 1e6,
        seconds
    );
    out
}

fn text_sqnr(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        text_f64(x)
    }
}

/// `mldtypes inspect`.
pub fn inspect(a: InspectArgs) -> Result<()> {
    let rows = checkpoint::inspect(&a.file).map_err(lib_err)?;
    if a.json {
        let arr: Vec<_> = rows
            .iter()
            .map(|r| {
                let mut v =
                    json!({"file": r.file, "name": r.name, "dtype": r.dtype, "shape": r.shape});
                if let Some(m) = &r.summary {
                    v["min"] = json_f64(m.min);
                    v["max"] = json_f64(m.max);
                    v["mean"] = json_f64(m.mean);
                    v["nan_count"] = json!(m.nan_count);
                }
                v
            })
            .collect();
        return output::print_json(&Value::Array(arr));
    }
    let mut out = String::new();
    let w = name_width(rows.iter().map(|r| r.name.as_str()));
    let several = rows
        .first()
        .is_some_and(|f| rows.iter().any(|r| r.file != f.file));
    line_to!(
        &mut out,
        "{}  {:<8}  {:<16}  {:>12}  {:>12}  {:>12}  {:>5}",
        pad("tensor", w),
        "dtype",
        "shape",
        "min",
        "max",
        "mean",
        "NaN"
    );
    let mut file = "";
    for r in &rows {
        if several && r.file != file {
            line_to!(&mut out, "# {}", r.file);
            file = &r.file;
        }
        let shape = format!("{:?}", r.shape);
        let (min, max, mean, nan) = match &r.summary {
            Some(m) => (
                short(m.min),
                short(m.max),
                short(m.mean),
                m.nan_count.to_string(),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        line_to!(
            &mut out,
            "{}  {:<8}  {shape:<16}  {min:>12}  {max:>12}  {mean:>12}  {nan:>5}",
            pad(&r.name, w),
            r.dtype
        );
    }
    let total: usize = rows.iter().map(|r| r.shape.iter().product::<usize>()).sum();
    line_to!(&mut out, "{} tensors, {total} elements", rows.len());
    output::print(&out)
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
