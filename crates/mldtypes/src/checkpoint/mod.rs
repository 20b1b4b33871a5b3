//! Safetensors checkpoints: conversion of whole (sharded) models and
//! inspection, streaming and parallel, behind the `safetensors` feature.
//!
//! [`convert`] reads a single `.safetensors` file, a model directory, or a
//! sharded model's `model.safetensors.index.json`, and writes:
//!
//! - for a file, one file;
//! - for a directory or an index, a directory mirroring the shards (each
//!   tensor stays in the shard of the same name) with an updated index
//!   (`weight_map`, `metadata.total_size` = the sum of the output tensors'
//!   bytes), every other file of the model directory copied, and
//!   `config.json`'s `torch_dtype` / `quantization_config` updated to what
//!   was written.
//!
//! The whole output appears at once: it is written beside the destination
//! (a temporary named `.NAME.XXXXXX.mldtypes-partial`) and renamed into place,
//! so a failure at any shard leaves nothing behind; every input (shard
//! headers, index) is validated before anything is written. Tensors and
//! chunks of large tensors are converted on a rayon pool
//! ([`Options::threads`]); inputs are memory-mapped and released chunk by
//! chunk and outputs written at their final offsets, so the peak resident
//! memory is a few chunks of 2^20 elements per thread, independent of the
//! model's and the tensors' sizes (under 100 MB converting a 3 GB model).
//!
//! Targets ([`Target`]):
//! - a floating-point dtype: every floating-point tensor (or those chosen by
//!   [`Options::select`]) is converted, round-to-nearest-even, with
//!   per-tensor error statistics ([`Stats`]); `config.json`'s `torch_dtype`
//!   and `dtype` become the target. MX, NVFP4 and FP8-with-scales tensors of
//!   the input (see below) are dequantized exactly, rounded once, in their
//!   original orientation, and their scales (and `input_scale`s) dropped
//!   with `quantization_config` and `hf_quant_config.json`;
//! - a quantization *recipe*: which tensors a serving stack quantizes, how
//!   each is laid out and what the configuration says (see [`ModelInfo`],
//!   [`CheckpointFormat`] and the recipe rules below). Defaults come from the
//!   model's `config.json` (`model_type`, `tie_word_embeddings`);
//!   [`Options::select`] / [`Options::exclude`] override them:
//!   - an MX format ([`crate::mx`], OCP MX v1.0), `NAME_blocks` (U8,
//!     `[..., K/32, 32·bits/8]`) and `NAME_scales` (U8 E8M0, `[..., K/32]`):
//!     for gpt-oss exactly the experts' `gate_up_proj` and `down_proj`
//!     (stored `[E, in, out]`, blocked along `in` and stored transposed,
//!     `[E, out, in/32, 16]`, as the gpt-oss checkpoints ship), with
//!     `quantization_config: {"quant_method": "mxfp4",
//!     "modules_to_not_convert": [...]}` as transformers' `Mxfp4Config`
//!     reads it; for other architectures the linear weights `[out, in]`
//!     along `in`, recorded as `{"quant_method": "mx", ...}`;
//!   - `nvfp4`: NVIDIA ModelOpt 0.47's weight-only NVFP4 (`W4A16_NVFP4`):
//!     `NAME` (U8, `[..., K/2]`), `NAME_scale` (`F8_E4M3`, `[..., K/16]`),
//!     `NAME_scale_2` (F32, `[]`), with `weight_scale_2` shared across the
//!     projections serving stacks fuse ([`Options::fuse_scale_2`]),
//!     `hf_quant_config.json` and `config.json`'s `quantization_config`
//!     as ModelOpt writes them;
//!   - `fp8`, `fp8_channel`, `fp8_block`: `float8_e4m3fn` weights with scales
//!     per tensor, per output channel or per 128 × 128 block, in
//!     compressed-tensors' `float-quantized` format (the default of `fp8`
//!     and `fp8_channel`), the `quant_method: "fp8"` format of DeepSeek-V3
//!     and Qwen3-FP8 (`weight_scale_inv`; the default of `fp8_block`) or
//!     ModelOpt's (`FP8`, `FP8_PER_CHANNEL_PER_TOKEN`, `FP8_PB_WO`), which
//!     also quantizes fused `[E, in, out]` experts (gpt-oss, Llama 4) in
//!     place, `NAME_weight_scale` F32 `[]`, `[E]` or `[E, ⌈out/128⌉, 1,
//!     ⌈in/128⌉, 1]`, as ModelOpt 0.47 exports gpt-oss.
//!
//! Other tensors are copied byte for byte, or converted to [`Options::rest`].
//! Each output file's `__metadata__` keeps the input's entries and records
//! the quantized tensors under the key `mldtypes.quantization`: a JSON object
//! mapping each original tensor name to `{"format", "block_size",
//! "scale_rule"}` (`"layout": "transposed"` / `"columns"` for blocks along
//! the input axis of `[E, in, out]` experts; `{"format": "fp8_e4m3",
//! "scales"}` for FP8), so a reader never has to guess between element
//! formats of the same width. Without that record, `NAME_blocks` /
//! `NAME_scales` pairs with 16-byte blocks are read as MXFP4 (gpt-oss:
//! transposed for `….experts.gate_up_proj` / `down_proj`), `NAME` /
//! `NAME_scale` / `NAME_scale_2` triples as NVFP4, and `float8_e4m3fn`
//! weights with a float `NAME_scale` or `NAME_scale_inv` (fused experts:
//! `NAME_weight_scale`) as FP8 with the scales their shape implies.
//!
//! Interrupted per-shard conversions leave temporaries named after the
//! shard and a hash of its planned header, which [`finish_shards`] removes.
//!
//! # Examples
//!
//! ```
//! use mldtypes::checkpoint::{self, Options, Target};
//! use mldtypes::dtype::DType;
//! # let dir = tempfile::tempdir().unwrap();
//! # let input = dir.path().join("in.safetensors");
//! let x: Vec<u8> = [1.0f32, 0.1, -3.0, 1e-3].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &x).unwrap();
//! safetensors::serialize_to_file([("w", view)], None, &input).unwrap();
//!
//! let out = dir.path().join("out.safetensors");
//! let summary = checkpoint::convert(&input, &out, &Options::new(Target::Float(DType::BFloat16)), &()).unwrap();
//! assert_eq!(summary.tensors[0].to, "bfloat16");
//! let stats = summary.tensors[0].stats.as_ref().unwrap();
//! assert!(stats.max_abs > 0.0 && stats.max_abs < 1e-3);
//! ```

mod engine;
mod groups;
mod inspect;
mod layout;
mod ordered;
mod output;
mod reader;
mod recipe;
mod source;
mod stats;
mod tags;
pub mod tensor_file;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use engine::{convert, convert_shard, finish_shards, max_threads, shards};
pub use inspect::{inspect, inspect_with, InspectRow, ValueSummary};
pub use output::PARTIAL_SUFFIX;
pub use reader::{SafetensorsFile, TensorEntry, MAX_HEADER};
pub use recipe::{CheckpointFormat, Fp8Scales, ModelInfo, E4M3_MAX, FP8_BLOCK};
pub use stats::Stats;
pub use tags::{storage_bytes, NoCounterpart};

use crate::dtype::DType;
use crate::format::Overflow;
use crate::mx::{MxFormat, ScaleRule};
use crate::round::{RoundMode, Rounding};

/// Why a checkpoint operation failed. Nothing has been written when an error
/// is returned.
#[derive(Debug)]
pub enum Error {
    /// The request itself is wrong (an unsupported target, an output that is
    /// the input without `overwrite`).
    Usage(String),
    /// An input cannot be used: a corrupt header, an index naming a missing
    /// shard, … The message names the tensor or the shard.
    Invalid {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Reading an input failed.
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing the output failed (nothing is left behind).
    Write {
        /// The destination.
        path: PathBuf,
        /// What went wrong: the operating system's error (with its errno),
        /// or [`std::io::ErrorKind::Other`] with a message for refusals
        /// (replacing a symlink or a device).
        source: std::io::Error,
    },
    /// [`Options::cancel`] was set or [`Progress::advance`] asked to stop
    /// (nothing is left behind).
    Cancelled,
}

impl Error {
    pub(crate) fn usage(m: impl Into<String>) -> Error {
        Error::Usage(m.into())
    }
    pub(crate) fn invalid(p: &Path, m: impl Into<String>) -> Error {
        Error::Invalid {
            path: p.to_path_buf(),
            message: m.into(),
        }
    }
    pub(crate) fn read(p: &Path, e: std::io::Error) -> Error {
        Error::Read {
            path: p.to_path_buf(),
            source: e,
        }
    }
    pub(crate) fn write_io(p: &Path, e: std::io::Error) -> Error {
        Error::Write {
            path: p.to_path_buf(),
            source: e,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
            Error::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
            Error::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Error::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            Error::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Read { source, .. } | Error::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What floating-point tensors become: a plain conversion, or a quantizing
/// recipe (see the `recipe` part of the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A floating-point dtype with a safetensors tag: every floating-point
    /// tensor is converted.
    Float(DType),
    /// An OCP MX format (blocks of 32, E8M0 scales): the linear weights (for
    /// gpt-oss, its experts), in the layout transformers' `Mxfp4Config`
    /// loads.
    Mx(MxFormat),
    /// NVIDIA NVFP4 (blocks of 16, E4M3 block scales, a float32 tensor
    /// scale), weight-only, as ModelOpt 0.47 exports `W4A16_NVFP4`.
    Nvfp4,
    /// FP8 (`float8_e4m3fn`) weights with float scales `amax / 448` per
    /// tensor, per output channel or per 128 × 128 block.
    Fp8(Fp8Scales),
}

impl Target {
    /// Parses a dtype name or alias, an MX format name (`mxfp8_e4m3`,
    /// `mxfp8_e5m2`, `mxfp6_e3m2`, `mxfp6_e2m3`, `mxfp4`, `mxint8`),
    /// `nvfp4`, `fp8` (per-tensor scales), `fp8_channel` or `fp8_block`.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for unknown names and dtypes that are not
    /// floating-point or have no safetensors tag.
    ///
    /// ```
    /// use mldtypes::checkpoint::{Fp8Scales, Target};
    /// use mldtypes::dtype::DType;
    /// assert_eq!(Target::parse("bf16").unwrap(), Target::Float(DType::BFloat16));
    /// assert_eq!(Target::parse("nvfp4").unwrap(), Target::Nvfp4);
    /// assert_eq!(Target::parse("fp8_block").unwrap(), Target::Fp8(Fp8Scales::Block));
    /// assert!(Target::parse("int8").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Target, Error> {
        if let Some(f) = MxFormat::from_name(s) {
            return Ok(Target::Mx(f));
        }
        if s == "nvfp4" {
            return Ok(Target::Nvfp4);
        }
        for f in [Fp8Scales::Tensor, Fp8Scales::Channel, Fp8Scales::Block] {
            if s == f.name() {
                return Ok(Target::Fp8(f));
            }
        }
        let d = DType::parse_name(s).map_err(|e| {
            Error::usage(format!(
                "{e}; or a quantization recipe: an MX format (mxfp8_e4m3, mxfp8_e5m2, \
                 mxfp6_e3m2, mxfp6_e2m3, mxfp4, mxint8), nvfp4, fp8, fp8_channel, fp8_block"
            ))
        })?;
        float_target(d)?;
        Ok(Target::Float(d))
    }

    /// The target's name (`bfloat16`, `mxfp4`, `nvfp4`, `fp8_block`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Target::Float(d) => d.name(),
            Target::Mx(f) => f.name(),
            Target::Nvfp4 => "nvfp4",
            Target::Fp8(f) => f.name(),
        }
    }
}

/// Checks that `d` is a floating-point dtype with a safetensors tag.
pub(crate) fn float_target(d: DType) -> Result<safetensors::Dtype, Error> {
    let tag = safetensors::Dtype::try_from(d);
    match tag {
        Ok(t) if d.is_float() => Ok(t),
        Ok(_) => Err(Error::usage(format!(
            "{d} is not a floating-point dtype; targets: bfloat16, float16, float32, float64, \
             float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, \
             float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, the MX formats, nvfp4"
        ))),
        Err(_) => Err(Error::usage(format!(
            "{d} has no safetensors dtype tag; targets: bfloat16, float16, float32, float64, \
             float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, \
             float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, the MX formats, nvfp4"
        ))),
    }
}

/// Options of [`convert`].
pub struct Options<'a> {
    /// What the floating-point tensors become.
    pub target: Target,
    /// Overflow handling of plain conversions (`NonSaturating`, ml_dtypes'
    /// default, or `Saturating`). Block formats always saturate.
    pub overflow: Overflow,
    /// The MX scale rule.
    pub scale_rule: ScaleRule,
    /// How plain conversions, dequantized outputs and MX elements round
    /// (`nearest_even`, ml_dtypes' rounding, by default). With
    /// [`Options::overflow`] `Saturating` the modes saturate as
    /// [`crate::round`] describes. NVFP4 and the FP8-with-scales targets
    /// round each element's exact quotient by its scale
    /// ([`crate::mx::nvfp4_quantize_rounded`],
    /// [`crate::mx::fp8_quantize_rounded`]); MXINT8 takes `nearest_even`
    /// only ([`Error::Usage`] otherwise).
    pub rounding: RoundMode,
    /// The seed of the stochastic modes (required by them, refused by the
    /// others). The element at flat position `i` (row-major in the stored
    /// layout; for MX, in the blocked order) of the tensor read, `name`
    /// (for a dequantization, the tensor of blocks or codes), rounds with
    /// [`crate::round::seeded_bits`]`(`[`tensor_seed`]`(seed, name), i,
    /// sr_bits)`: the bytes depend on the seed, the tensor's name and
    /// position only, never on threads, chunks or shards.
    pub seed: Option<u64>,
    /// Random bits per element of the stochastic modes, 1 to 32 (`None`:
    /// 32).
    pub sr_bits: Option<u32>,
    /// For block targets: the dtype the floating-point tensors that are not
    /// quantized are converted to (copied when `None`).
    pub rest: Option<DType>,
    /// Converts only the tensors for which this returns true (by name);
    /// others are copied. For a quantizing target it replaces the recipe's
    /// default selection (any floating-point tensor of two or more
    /// dimensions it accepts is quantized).
    pub select: Option<&'a (dyn Fn(&str) -> bool + Sync)>,
    /// Leaves the tensors for which this returns true (by name) out of the
    /// conversion (copied, or converted to [`Options::rest`]), after
    /// [`Options::select`] and the recipe's defaults.
    pub exclude: Option<&'a (dyn Fn(&str) -> bool + Sync)>,
    /// The checkpoint format of a quantizing target (`None`: the target's
    /// default, the first of [`CheckpointFormat::allowed`]).
    pub format: Option<CheckpointFormat>,
    /// NVFP4: share `weight_scale_2` across the projections serving stacks
    /// fuse (q/k/v, gate/up, …; ModelOpt's default); `false`: one per
    /// tensor.
    pub fuse_scale_2: bool,
    /// Worker threads (0: one per core; at most [`max_threads`], four per
    /// available core).
    pub threads: usize,
    /// `fsync` the output before renaming it into place.
    pub fsync: bool,
    /// Allow the output to replace the input or a non-empty directory.
    pub overwrite: bool,
    /// Set from any thread (a signal handler's flag, a Python thread) to
    /// stop the conversion: workers check it between chunks, and the run
    /// ends with [`Error::Cancelled`], its temporary output removed.
    pub cancel: Cancel,
}

/// A cancellation flag shared between the caller and the workers of
/// [`convert`] / [`inspect_with`]; clones share the flag.
///
/// # Examples
///
/// ```
/// use mldtypes::checkpoint::{self, Cancel, Error, Options, Target};
/// use mldtypes::dtype::DType;
/// # let dir = tempfile::tempdir().unwrap();
/// # let input = dir.path().join("in.safetensors");
/// # let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &[0u8; 4]).unwrap();
/// # safetensors::serialize_to_file([("w", view)], None, &input).unwrap();
/// let mut opts = Options::new(Target::Float(DType::BFloat16));
/// let stop = opts.cancel.clone();
/// stop.cancel(); // e.g. from a signal handler's thread
/// let out = dir.path().join("out.safetensors");
/// let e = checkpoint::convert(&input, &out, &opts, &()).unwrap_err();
/// assert!(matches!(e, Error::Cancelled));
/// assert!(!out.exists());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A new, unset flag.
    pub fn new() -> Cancel {
        Cancel::default()
    }
    /// Wraps an existing flag (`signal_hook::flag::register` sets one).
    pub fn from_flag(flag: Arc<AtomicBool>) -> Cancel {
        Cancel(flag)
    }
    /// Asks the operation to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether stopping was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl<'a> Options<'a> {
    /// Defaults: non-saturating, floor scale rule, nothing else converted,
    /// the recipe's selection (every tensor for a plain conversion), the
    /// target's default format, fused NVFP4 tensor scales, all cores, no
    /// fsync, no overwrite, a fresh cancellation flag.
    pub fn new(target: Target) -> Options<'a> {
        Options {
            target,
            overflow: Overflow::NonSaturating,
            scale_rule: ScaleRule::Floor,
            rounding: RoundMode::NearestEven,
            seed: None,
            sr_bits: None,
            rest: None,
            select: None,
            exclude: None,
            format: None,
            fuse_scale_2: true,
            threads: 0,
            fsync: false,
            overwrite: false,
            cancel: Cancel::new(),
        }
    }
}

/// The generator key of tensor `name` in a seeded conversion: `seed` XOR
/// the 64-bit FNV-1a hash of the name's UTF-8 bytes (offset basis
/// `0xcbf29ce484222325`, prime `0x100000001b3`). Keying by name makes a
/// tensor's random numbers independent of the shard it is stored in and of
/// the other tensors.
///
/// # Examples
///
/// ```
/// use mldtypes::checkpoint::tensor_seed;
/// assert_eq!(tensor_seed(0, ""), 0xcbf29ce484222325);
/// assert_eq!(tensor_seed(0, "a"), 0xaf63dc4c8601ec8c);
/// assert_ne!(tensor_seed(7, "w"), tensor_seed(7, "v"));
/// ```
pub fn tensor_seed(seed: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    seed ^ h
}

impl Options<'_> {
    /// Whether the conversion rounds other than by ml_dtypes' conversions
    /// (a mode other than `nearest_even`, or a seed).
    pub(crate) fn custom_rounding(&self) -> bool {
        self.rounding != RoundMode::NearestEven || self.seed.is_some()
    }

    /// The rounding of tensor `name`, for its whole element range.
    pub(crate) fn rounding_of(&self, name: &str) -> Rounding<'static> {
        let r = Rounding::new(self.rounding).saturating(self.overflow == Overflow::Saturating);
        match self.seed {
            Some(seed) => r.with_seed(tensor_seed(seed, name), self.sr_bits.unwrap_or(32)),
            None => r,
        }
    }
}

/// Progress reports of [`convert`], called from worker threads.
pub trait Progress: Sync {
    /// The conversion starts; `total_bytes` of input will be processed.
    fn start(&self, total_bytes: u64) {
        let _ = total_bytes;
    }
    /// `bytes` more were processed. Returning `false` cancels the
    /// conversion ([`Error::Cancelled`]; nothing is written).
    fn advance(&self, bytes: u64) -> bool {
        let _ = bytes;
        true
    }
    /// Processing ended (successfully or not).
    fn finish(&self) {}
}

/// No progress reports.
impl Progress for () {}

/// What happened to one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Converted to another floating-point dtype.
    Convert,
    /// Quantized to MX or NVFP4 blocks.
    Quantize,
    /// Dequantized from MX or NVFP4 blocks.
    Dequantize,
}

/// One converted tensor of a [`Summary`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct TensorReport {
    /// The tensor's name in the input (for quantization, the prefix of the
    /// output names).
    pub name: String,
    /// The shard file it is in, by its file name in the input (a sharded
    /// output keeps the same names; a single-file conversion reports the
    /// input's file name).
    pub file: String,
    /// Its logical shape.
    pub shape: Vec<usize>,
    /// The input dtype (or block format).
    pub from: String,
    /// The output dtype (or block format).
    pub to: String,
    /// What was done.
    pub action: Action,
    /// Error statistics (not for dequantization, which is exact); in JSON,
    /// its fields appear in the tensor's object.
    #[serde(flatten)]
    pub stats: Option<Stats>,
}

/// The outcome of [`convert`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// The target's name.
    pub target: String,
    /// The checkpoint format a quantizing target was written in
    /// (`modelopt`, `compressed-tensors`, …; `None` for a plain conversion).
    pub format: Option<String>,
    /// The shard files written, by their file names in the input (a sharded
    /// output directory mirrors them; for a single-file conversion this is
    /// the input's file name, whatever the output path is).
    pub files: Vec<String>,
    /// The converted tensors, by file then name.
    pub tensors: Vec<TensorReport>,
    /// Tensors copied unchanged.
    pub copied: Vec<String>,
    /// Other files of the model directory copied.
    pub copied_files: Vec<String>,
    /// Totals over the converted tensors that have statistics.
    pub total: Stats,
    /// Input bytes of tensor data processed.
    pub bytes_read: u64,
    /// Bytes written (headers included).
    pub bytes_written: u64,
    /// Warnings: values overflowing to inf / NaN, tensors that could not be
    /// converted, caveats of the checkpoint format.
    pub warnings: Vec<String>,
    /// [`finish_shards`]: temporaries of this conversion that killed or
    /// failed shard tasks had left, removed.
    pub removed_partials: Vec<String>,
}

/// A name for messages: names longer than 200 characters are shortened to
/// their first 80 and their length.
pub(crate) fn short_name(name: &str) -> String {
    if name.chars().count() <= 200 {
        name.to_string()
    } else {
        let head: String = name.chars().take(80).collect();
        format!("{head}… ({} characters)", name.chars().count())
    }
}
