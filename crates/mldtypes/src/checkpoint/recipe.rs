//! Recipes: for a quantizing [`Target`], which tensors a serving stack
//! quantizes, how each is laid out, and what the model directory's
//! configuration files say.
//!
//! A recipe is resolved once per conversion from the [`Options`] and the
//! model's `config.json` ([`ModelInfo`]: `model_type`,
//! `tie_word_embeddings`), then asked about every tensor ([`Recipe::decide`])
//! and, at the end, for the configuration ([`Recipe::quantization_config`],
//! [`Recipe::extra_files`]). Element rounding is round-to-nearest-even
//! everywhere; a recipe names the element format and the scale layout, not
//! the rounding, so a rounding mode can be added as an option of its own.
//!
//! # Tensors quantized by default
//!
//! The linear layers' weights: floating-point tensors named `….weight` (or
//! with no module path at all, `w`) with two dimensions, `[out, in]`, blocked
//! or scaled along `in`. Never, unless `--only` asks: embeddings (a module
//! path component containing `embed`), `lm_head` and other output heads
//! (`output`, `output_layer`), routers and MoE gates (`router`, a module
//! named `gate`, `shared_expert_gate`), vision towers and projectors
//! (`visual`, `vision_tower`, `vision_model`, `multi_modal_projector`),
//! multi-token-prediction heads (`mtp.`), `proj_out`, convolutions. These are
//! the exclusions of NVIDIA ModelOpt 0.47's default configurations
//! (`*lm_head*`, `*router*`, `*mlp.gate.*`, `*block_sparse_moe.gate*`, …)
//! plus embeddings, which it never quantizes either. Biases, norms and other
//! one-dimensional tensors are never quantized.
//!
//! Fused MoE experts stored as `[E, in, out]` (`….experts.gate_up_proj` and
//! `….experts.down_proj` of gpt-oss and Llama 4, by `model_type`) are
//! quantized along `in`: MXFP4 stores them transposed, as gpt-oss ships them
//! (`[E, out, in/32, 16]`); NVFP4 packs along `in` in place, as ModelOpt
//! exports them (`[E, in/2, out]`). The `mxfp4` recipe of gpt-oss quantizes
//! those experts only (its attention, router, embeddings and head stay
//! bfloat16, as in the released checkpoints). The FP8 recipes in ModelOpt's
//! format quantize them as ModelOpt 0.47 does: `NAME`
//! F8_E4M3 in the stored `[E, in, out]` layout and `NAME_weight_scale` F32,
//! `[]` for `FP8` (one scale over all experts), `[E]` for
//! `FP8_PER_CHANNEL_PER_TOKEN` (ModelOpt's per-channel axis 0 of the
//! transposed `[E, out, in]` is the expert), `[E, out/128, 1, in/128, 1]`
//! for `fp8_pb_wo` (128 × 128 blocks of each expert's `[out, in]`, the
//! scale of out block `o` and in block `i` at `[e, o, 0, i, 0]`, as
//! ModelOpt's calibration computes them). ModelOpt 0.47's export then
//! quantizes the stored `[E, in, out]` elements with that scale tensor
//! reshaped (not transposed) to `[E, in/128, out/128]`, which puts the
//! scales on the wrong blocks when both `in` and `out` exceed 128;
//! mldtypes applies each scale to its own block (identical output whenever
//! `in` or `out` is at most 128, as in the models checked). The
//! other FP8 formats leave fused experts alone (no FP8 stack of theirs reads
//! them in that layout) and list their experts module as not converted, so
//! that a server builds them unquantized (compressed-tensors' `ignore` as a
//! regular expression, `re:…\.experts($|\.)`, which also matches the
//! per-expert names vLLM looks up).
//!
//! [`Options::select`] (`--only`) replaces the default selection (any
//! floating-point tensor of two or more dimensions matching it is
//! quantized); [`Options::exclude`] (`--exclude`) removes tensors from it.
//! A selected tensor whose blocking dimension is not a multiple of the block
//! (32 for MX, 16 for NVFP4) is left unquantized with a warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::json;

use super::{Error, Options, Target};
use crate::dtype::DType;
use crate::mx::{MxFormat, MX_BLOCK, NVFP4_BLOCK};

/// The side of FP8 scale blocks of [`Fp8Scales::Block`] (DeepSeek-V3,
/// Qwen3-FP8, compressed-tensors' `FP8_BLOCK`, ModelOpt's `FP8_PB_WO`).
pub const FP8_BLOCK: usize = 128;

/// The largest finite float8_e4m3fn value: FP8 scales are `amax / 448`.
pub const E4M3_MAX: f64 = 448.0;

/// How the weights of an FP8 recipe are scaled: `weight = e4m3(x / s)`,
/// `s = amax / 448` over the scale's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Scales {
    /// One scale per tensor.
    Tensor,
    /// One scale per output channel (row of `[out, in]`).
    Channel,
    /// One scale per 128 × 128 block of `[out, in]` (blocks at the right and
    /// bottom edges are partial).
    Block,
}

impl Fp8Scales {
    /// The target name: `fp8`, `fp8_channel`, `fp8_block`.
    pub fn name(self) -> &'static str {
        match self {
            Fp8Scales::Tensor => "fp8",
            Fp8Scales::Channel => "fp8_channel",
            Fp8Scales::Block => "fp8_block",
        }
    }
}

/// Whose conventions a quantizing recipe writes: tensor names, scale
/// shapes, `config.json`'s `quantization_config` and other files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckpointFormat {
    /// The MX targets' own: transformers' `Mxfp4Config`
    /// (`quant_method: "mxfp4"`) for gpt-oss, mldtypes' `quant_method: "mx"`
    /// record for the rest.
    Mx,
    /// NVIDIA TensorRT Model Optimizer (ModelOpt) 0.47's Hugging Face
    /// export: `hf_quant_config.json` and `quant_method: "modelopt"`, which
    /// vLLM, SGLang and TensorRT-LLM read.
    ModelOpt,
    /// `quant_method: "fp8"` with `weight_scale_inv`: DeepSeek-V3's and
    /// Qwen3-FP8's, read by transformers' `FineGrainedFP8Config` and vLLM's
    /// `Fp8Config`.
    Fp8,
    /// compressed-tensors' `float-quantized` format, as llm-compressor
    /// writes it (`quant_method: "compressed-tensors"`), read by vLLM and by
    /// transformers' `CompressedTensorsConfig`.
    CompressedTensors,
}

impl CheckpointFormat {
    /// `mx`, `modelopt`, `fp8`, `compressed-tensors`.
    pub fn name(self) -> &'static str {
        match self {
            CheckpointFormat::Mx => "mx",
            CheckpointFormat::ModelOpt => "modelopt",
            CheckpointFormat::Fp8 => "fp8",
            CheckpointFormat::CompressedTensors => "compressed-tensors",
        }
    }

    /// Parses a name of [`CheckpointFormat::name`].
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for other names.
    ///
    /// ```
    /// use mldtypes::checkpoint::CheckpointFormat;
    /// assert_eq!(CheckpointFormat::parse("modelopt").unwrap(), CheckpointFormat::ModelOpt);
    /// assert!(CheckpointFormat::parse("gguf").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<CheckpointFormat, Error> {
        [
            CheckpointFormat::Mx,
            CheckpointFormat::ModelOpt,
            CheckpointFormat::Fp8,
            CheckpointFormat::CompressedTensors,
        ]
        .into_iter()
        .find(|f| f.name() == s)
        .ok_or_else(|| {
            Error::usage(format!(
                "unknown checkpoint format {s:?}; formats: mx, modelopt, fp8, compressed-tensors"
            ))
        })
    }

    /// The formats a target can be written in, the default first.
    pub fn allowed(target: Target) -> &'static [CheckpointFormat] {
        use CheckpointFormat as F;
        match target {
            Target::Float(_) => &[],
            Target::Mx(_) => &[F::Mx],
            Target::Nvfp4 => &[F::ModelOpt],
            Target::Fp8(Fp8Scales::Tensor) | Target::Fp8(Fp8Scales::Channel) => {
                &[F::CompressedTensors, F::ModelOpt]
            }
            Target::Fp8(Fp8Scales::Block) => &[F::Fp8, F::CompressedTensors, F::ModelOpt],
        }
    }
}

/// What the model directory's `config.json` says that recipes use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// `model_type` (of the text model for multimodal configurations).
    pub model_type: Option<String>,
    /// `tie_word_embeddings` (`None` when absent).
    pub tie_word_embeddings: Option<bool>,
}

impl ModelInfo {
    /// Reads `dir/config.json`; an absent or unreadable file gives the
    /// defaults (no model type: the generic rules).
    pub fn read(dir: Option<&Path>) -> ModelInfo {
        let Some(text) = dir.and_then(|d| std::fs::read_to_string(d.join("config.json")).ok())
        else {
            return ModelInfo::default();
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            return ModelInfo::default();
        };
        let text_cfg = v.get("text_config");
        let pick = |k: &str| text_cfg.and_then(|t| t.get(k)).or_else(|| v.get(k));
        ModelInfo {
            model_type: pick("model_type")
                .and_then(|m| m.as_str())
                .map(str::to_string),
            tie_word_embeddings: v
                .get("tie_word_embeddings")
                .or_else(|| text_cfg.and_then(|t| t.get("tie_word_embeddings")))
                .and_then(|b| b.as_bool()),
        }
    }

    /// Whether the model stores fused MoE experts as `[E, in, out]`
    /// (gpt-oss, Llama 4).
    pub fn experts_in_out(&self) -> bool {
        matches!(
            self.model_type.as_deref(),
            Some("gpt_oss" | "llama4" | "llama4_text")
        )
    }

    fn is_gpt_oss(&self) -> bool {
        self.model_type.as_deref() == Some("gpt_oss")
    }
}

/// How one tensor is quantized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quant {
    /// MX blocks of 32 along the last axis; `transposed`: a `[.., K, N]`
    /// tensor blocked along `K` and stored `[.., N, K/32, bytes]`.
    Mx { fmt: MxFormat, transposed: bool },
    /// NVFP4 blocks of 16 along the last axis; `columns`: along the
    /// second-to-last (`[.., K, N]` packed `[.., K/2, N]`, scales
    /// `[.., K/16, N]`).
    Nvfp4 { columns: bool },
    /// FP8 with scales of a 2-D `[out, in]` weight, or (`experts`) of fused
    /// `[E, in, out]` experts as ModelOpt quantizes them: one scale over all
    /// experts ([`Fp8Scales::Tensor`]), one per expert
    /// ([`Fp8Scales::Channel`]), or 128 × 128 blocks of each expert's
    /// transpose `[out, in]`, stored `[E, out/128, 1, in/128, 1]`
    /// ([`Fp8Scales::Block`]); the elements keep the `[E, in, out]` layout.
    Fp8 { scales: Fp8Scales, experts: bool },
}

impl Quant {
    /// The axis blocks run along, from the end (1: last, 2: second-to-last).
    fn block_axis(self) -> usize {
        match self {
            Quant::Mx {
                transposed: true, ..
            }
            | Quant::Nvfp4 { columns: true } => 2,
            _ => 1,
        }
    }

    /// Block length along that axis (1 when any length will do).
    fn block(self) -> usize {
        match self {
            Quant::Mx { .. } => MX_BLOCK,
            Quant::Nvfp4 { .. } => NVFP4_BLOCK,
            Quant::Fp8 { .. } => 1,
        }
    }
}

/// What a recipe does with one tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Quantized.
    Quantize(Quant),
    /// Not chosen: copied (or converted to [`Options::rest`]).
    Leave,
    /// Chosen but its shape does not allow it: left as [`Decision::Leave`]
    /// with this warning.
    Unfit(String),
}

/// A resolved recipe (see the module documentation).
pub(crate) struct Recipe<'o, 'a> {
    pub opts: &'o Options<'a>,
    pub format: Option<CheckpointFormat>,
    pub model: ModelInfo,
}

/// Families of projections that serving stacks (vLLM, SGLang) fuse into one
/// matrix: siblings sharing the parent module share NVFP4's
/// `weight_scale_2`, as ModelOpt makes them (it finds them by their shared
/// input).
const FUSED: [&[&str]; 5] = [
    &["q_proj", "k_proj", "v_proj"],
    &["gate_proj", "up_proj"],
    &["w1", "w3"],
    &["q_a_proj", "kv_a_proj_with_mqa"],
    &["query", "key", "value"],
];

/// Whether a module path is one of the default exclusions (see the module
/// documentation).
fn excluded_module(module: &str) -> bool {
    let parts: Vec<&str> = module.split('.').collect();
    let last = parts.last().copied().unwrap_or("");
    module.starts_with("mtp.")
        || parts.iter().any(|p| {
            p.contains("embed")
                || p.contains("router")
                || matches!(
                    *p,
                    "lm_head"
                        | "output_layer"
                        | "shared_expert_gate"
                        | "visual"
                        | "vision_tower"
                        | "vision_model"
                        | "multi_modal_projector"
                        | "proj_out"
                        | "conv1d"
                )
        })
        || matches!(last, "gate" | "output")
}

/// The module of a weight: its name without a trailing `.weight`.
pub(crate) fn module_of(name: &str) -> &str {
    name.strip_suffix(".weight").unwrap_or(name)
}

/// Whether `name` is a fused expert tensor stored `[E, in, out]`.
pub(crate) fn fused_expert(name: &str) -> bool {
    name.ends_with(".experts.gate_up_proj") || name.ends_with(".experts.down_proj")
}

/// The experts module (`….mlp.experts`) of a 3-D fused expert tensor.
pub(crate) fn fused_experts_module<'n>(name: &'n str, shape: &[usize]) -> Option<&'n str> {
    if shape.len() == 3 && fused_expert(name) {
        name.rsplit_once('.').map(|(m, _)| m)
    } else {
        None
    }
}

impl<'o, 'a> Recipe<'o, 'a> {
    /// Resolves the recipe of `opts` for a model described by `model`.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for a format the target cannot be written in.
    pub fn new(opts: &'o Options<'a>, model: ModelInfo) -> Result<Recipe<'o, 'a>, Error> {
        let allowed = CheckpointFormat::allowed(opts.target);
        let format = match (opts.format, allowed.first()) {
            (None, d) => d.copied(),
            (Some(f), _) if allowed.contains(&f) => Some(f),
            (Some(f), _) => {
                return Err(Error::usage(if allowed.is_empty() {
                    format!(
                        "{} is a plain conversion; a checkpoint format ({}) applies to the \
                         quantizing targets (mxfp4, …, nvfp4, fp8, fp8_channel, fp8_block)",
                        opts.target.name(),
                        f.name()
                    )
                } else {
                    format!(
                        "{} cannot be written in the {} format; its formats: {}",
                        opts.target.name(),
                        f.name(),
                        allowed
                            .iter()
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }))
            }
        };
        Ok(Recipe {
            opts,
            format,
            model,
        })
    }

    /// Whether the target quantizes (as opposed to a plain conversion).
    pub fn quantizes(&self) -> bool {
        !matches!(self.opts.target, Target::Float(_))
    }

    /// What happens to floating-point tensor `name` of shape `shape` (see
    /// the module documentation). `tied` tells whether the model ties its
    /// output head to its embeddings.
    pub fn decide(&self, name: &str, shape: &[usize]) -> Decision {
        let target = self.opts.target;
        if matches!(target, Target::Float(_)) || shape.len() < 2 {
            return Decision::Leave;
        }
        let expert = shape.len() == 3 && fused_expert(name) && self.model.experts_in_out();
        let chosen = match self.opts.select {
            Some(only) => only(name),
            None => self.default_choice(name, shape, expert),
        };
        if !chosen || self.opts.exclude.is_some_and(|x| x(name)) {
            return Decision::Leave;
        }
        let quant = match target {
            Target::Float(_) => return Decision::Leave,
            Target::Mx(fmt) => Quant::Mx {
                fmt,
                transposed: expert,
            },
            Target::Nvfp4 => Quant::Nvfp4 { columns: expert },
            Target::Fp8(scales) if expert && self.format == Some(CheckpointFormat::ModelOpt) => {
                // ModelOpt 0.47 quantizes fused experts through their
                // transpose `[E, out, in]`: its amax reduction squeezes a
                // one-element block amax (one expert of one block) to a 0-d
                // scale, as for 2-D weights below.
                let one_block = scales == Fp8Scales::Block
                    && shape[0] == 1
                    && shape[1] <= FP8_BLOCK
                    && shape[2] <= FP8_BLOCK;
                Quant::Fp8 {
                    scales: if one_block { Fp8Scales::Tensor } else { scales },
                    experts: true,
                }
            }
            Target::Fp8(scales) => {
                if shape.len() != 2 {
                    return Decision::Unfit(format!(
                        "tensor {name:?} of shape {shape:?} left unquantized: the FP8 recipes \
                         quantize two-dimensional [out, in] weights"
                    ));
                }
                // ModelOpt 0.47 takes the block scale of a weight of one
                // 128 x 128 block (n, k <= 128) as a per-tensor scale: its
                // amax reduction squeezes one-element results (a 0-d
                // `weight_scale`), and its export then shares it across the
                // projections it fuses (q/k/v, gate/up), as for any
                // one-element weight amax.
                let one_block = scales == Fp8Scales::Block
                    && self.format == Some(CheckpointFormat::ModelOpt)
                    && shape[0] <= FP8_BLOCK
                    && shape[1] <= FP8_BLOCK;
                Quant::Fp8 {
                    scales: if one_block { Fp8Scales::Tensor } else { scales },
                    experts: false,
                }
            }
        };
        let axis = shape[shape.len() - quant.block_axis()];
        if !axis.is_multiple_of(quant.block()) {
            return Decision::Unfit(format!(
                "tensor {name:?} of shape {shape:?} left unquantized: its {} dimension {axis} \
                 is not a multiple of {}'s blocks of {}",
                if quant.block_axis() == 1 {
                    "last"
                } else {
                    "input (second-to-last)"
                },
                target.name(),
                quant.block()
            ));
        }
        Decision::Quantize(quant)
    }

    /// The default selection: linear weights, gpt-oss MXFP4's experts only;
    /// fused `[E, in, out]` experts for every target but FP8 in formats
    /// other than ModelOpt's.
    fn default_choice(&self, name: &str, shape: &[usize], expert: bool) -> bool {
        if expert {
            return !matches!(self.opts.target, Target::Fp8(_))
                || self.format == Some(CheckpointFormat::ModelOpt);
        }
        if matches!(self.opts.target, Target::Mx(_)) && self.model.is_gpt_oss() {
            return false;
        }
        let weight = name.ends_with(".weight") || !name.contains('.');
        weight && shape.len() == 2 && !excluded_module(module_of(name))
    }

    /// The tensors a quantized `name` becomes, in order: the elements, then
    /// the scales.
    pub fn outputs(&self, name: &str, q: Quant) -> Vec<String> {
        match q {
            Quant::Mx { .. } => vec![format!("{name}_blocks"), format!("{name}_scales")],
            Quant::Nvfp4 { .. } => {
                let s = scale_name(name);
                vec![name.to_string(), s.clone(), format!("{s}_2")]
            }
            Quant::Fp8 { .. } => {
                if self.format == Some(CheckpointFormat::Fp8) {
                    vec![name.to_string(), format!("{name}_scale_inv")]
                } else {
                    vec![name.to_string(), scale_name(name)]
                }
            }
        }
    }

    /// The key of the group of tensors sharing one tensor scale (NVFP4's
    /// `weight_scale_2`, FP8's per-tensor scale): siblings of a fused family
    /// with [`Options::fuse_scale_2`] for NVFP4; for ModelOpt's FP8, an MoE
    /// expert's gate and up projections (ModelOpt shares their scale, which
    /// vLLM's fused MoE kernels keep one of per expert), and for ModelOpt's
    /// FP8_PB_WO the one-block weights of a fused family; else the tensor
    /// alone.
    pub fn scale_group(&self, name: &str, q: Quant) -> Option<String> {
        let fuse = match q {
            Quant::Nvfp4 { .. } => self.opts.fuse_scale_2,
            Quant::Fp8 {
                scales: Fp8Scales::Tensor,
                ..
            } if self.opts.target == Target::Fp8(Fp8Scales::Block) => {
                // A one-block weight of ModelOpt's FP8_PB_WO (see `decide`):
                // shared across every fused family, as ModelOpt's export
                // unifies one-element weight amaxes.
                self.format == Some(CheckpointFormat::ModelOpt)
            }
            Quant::Fp8 {
                scales: Fp8Scales::Tensor,
                ..
            } => self.format == Some(CheckpointFormat::ModelOpt) && name.contains(".experts."),
            _ => return None,
        };
        if fuse && self.opts.target == Target::Fp8(Fp8Scales::Tensor) {
            if let Some(module) = name.strip_suffix(".weight") {
                let (parent, leaf) = module.rsplit_once('.').unwrap_or(("", module));
                for (i, family) in FUSED.iter().enumerate().skip(1).take(2) {
                    if family.contains(&leaf) {
                        return Some(format!("{parent}\u{0}fused{i}"));
                    }
                }
            }
            return Some(name.to_string());
        }
        if fuse {
            if let Some(module) = name.strip_suffix(".weight") {
                let (parent, leaf) = module.rsplit_once('.').unwrap_or(("", module));
                for (i, family) in FUSED.iter().enumerate() {
                    if family.contains(&leaf) {
                        return Some(format!("{parent}\u{0}fused{i}"));
                    }
                }
            }
        }
        Some(name.to_string())
    }

    /// The dtype of FP8 scale tensors for weights of dtype `from`:
    /// compressed-tensors keeps the weights' dtype (bfloat16, float16,
    /// float32), the other formats float32.
    pub fn fp8_scale_dtype(&self, from: DType) -> DType {
        match (self.format, from) {
            (
                Some(CheckpointFormat::CompressedTensors),
                DType::BFloat16 | DType::Float16 | DType::Float32,
            ) => from,
            _ => DType::Float32,
        }
    }

    /// The shape of an FP8 scale tensor of a `[n, k]` weight. (ModelOpt's
    /// block scales of a one-block weight are per-tensor scales: see
    /// [`Recipe::decide`].)
    pub fn fp8_scale_shape(&self, scales: Fp8Scales, n: usize, k: usize) -> Vec<usize> {
        let (ob, ib) = (n.div_ceil(FP8_BLOCK), k.div_ceil(FP8_BLOCK));
        match (scales, self.format) {
            (Fp8Scales::Tensor, Some(CheckpointFormat::ModelOpt)) => vec![],
            (Fp8Scales::Tensor, _) => vec![1],
            (Fp8Scales::Channel, Some(CheckpointFormat::ModelOpt)) => vec![n],
            (Fp8Scales::Channel, _) => vec![n, 1],
            (Fp8Scales::Block, Some(CheckpointFormat::ModelOpt)) => vec![ob, 1, ib, 1],
            (Fp8Scales::Block, _) => vec![ob, ib],
        }
    }

    /// The shape of the FP8 scale tensor of fused experts `[e, inn, out]`
    /// (see [`Quant::Fp8`]; ModelOpt's: `[]`, `[e]`, `[e, ⌈out/128⌉, 1,
    /// ⌈inn/128⌉, 1]`).
    pub fn fp8_experts_scale_shape(
        &self,
        scales: Fp8Scales,
        e: usize,
        inn: usize,
        out: usize,
    ) -> Vec<usize> {
        match scales {
            Fp8Scales::Tensor => vec![],
            Fp8Scales::Channel => vec![e],
            Fp8Scales::Block => vec![e, out.div_ceil(FP8_BLOCK), 1, inn.div_ceil(FP8_BLOCK), 1],
        }
    }

    /// The metadata record of a quantized tensor (`mldtypes.quantization`).
    pub fn record(&self, q: Quant) -> serde_json::Value {
        match q {
            Quant::Mx { fmt, transposed } => {
                let mut r = json!({"format": fmt.name(), "block_size": MX_BLOCK,
                    "scale_rule": self.opts.scale_rule.name()});
                if transposed {
                    r["layout"] = json!("transposed");
                }
                r
            }
            Quant::Nvfp4 { columns } => {
                let mut r = json!({"format": "nvfp4", "block_size": NVFP4_BLOCK});
                if columns {
                    r["layout"] = json!("columns");
                }
                r
            }
            Quant::Fp8 { scales, experts } => {
                let mut r = json!({"format": "fp8_e4m3", "scales": match scales {
                    Fp8Scales::Tensor => "tensor",
                    Fp8Scales::Channel => "channel",
                    Fp8Scales::Block => "block",
                }});
                if scales == Fp8Scales::Block {
                    r["block_size"] = json!([FP8_BLOCK, FP8_BLOCK]);
                }
                if experts {
                    r["layout"] = json!("experts");
                }
                r
            }
        }
    }

    /// The producer entry of ModelOpt-format files.
    fn producer() -> serde_json::Value {
        json!({"name": "mldtypes", "version": env!("CARGO_PKG_VERSION")})
    }

    /// ModelOpt's `quant_algo` for this target.
    fn modelopt_algo(&self) -> &'static str {
        match self.opts.target {
            Target::Nvfp4 => "W4A16_NVFP4",
            Target::Fp8(Fp8Scales::Tensor) => "FP8",
            Target::Fp8(Fp8Scales::Channel) => "FP8_PER_CHANNEL_PER_TOKEN",
            // ModelOpt 0.47 writes this one in lower case (vLLM upper-cases
            // every quant_algo it reads).
            _ => "fp8_pb_wo",
        }
    }

    /// The modules left unquantized, as the format lists them: every module
    /// with a floating-point matrix that was not quantized (`unquantized`),
    /// `lm_head` too when it is tied to the embeddings and so not stored;
    /// for gpt-oss MXFP4, in the released checkpoints' form (wildcards over
    /// layers, whole attention blocks).
    fn not_converted(
        &self,
        unquantized: &BTreeSet<String>,
        quantized: &BTreeSet<String>,
    ) -> Vec<String> {
        let mut u = unquantized.clone();
        if self.model.tie_word_embeddings == Some(true)
            && !quantized.contains("lm_head")
            && u.iter().any(|m| m.contains("embed"))
        {
            u.insert("lm_head".to_string());
        }
        // An experts module one of whose fused tensors was quantized is not
        // listed (a server would then skip all of it).
        u.retain(|m| {
            !quantized.iter().any(|q| {
                q.len() > m.len() && q.starts_with(m.as_str()) && q.as_bytes()[m.len()] == b'.'
            })
        });
        if self.format == Some(CheckpointFormat::Mx) && self.model.is_gpt_oss() {
            return collapse(&u, quantized);
        }
        if self.format == Some(CheckpointFormat::CompressedTensors) {
            // compressed-tensors matches `ignore` entries against module
            // names exactly; vLLM looks a fused MoE layer up by its
            // per-expert names (`….experts.0.gate_proj`), so an experts
            // module is written as a regular expression covering both.
            return u
                .into_iter()
                .map(|m| {
                    if m.ends_with(".experts") {
                        format!("re:{}($|\\.)", regex_escape(&m))
                    } else {
                        m
                    }
                })
                .collect();
        }
        u.into_iter().collect()
    }

    /// `config.json`'s `quantization_config` for what was written
    /// (`unquantized` / `quantized`: modules), or `None` when nothing was
    /// quantized.
    pub fn quantization_config(
        &self,
        unquantized: &BTreeSet<String>,
        quantized: &BTreeSet<String>,
    ) -> Option<serde_json::Value> {
        if quantized.is_empty() {
            return None;
        }
        let not = self.not_converted(unquantized, quantized);
        Some(match (self.opts.target, self.format) {
            (Target::Mx(fmt), _) => {
                if fmt == MxFormat::Fp4 && self.model.is_gpt_oss() {
                    json!({"quant_method": "mxfp4", "modules_to_not_convert": not})
                } else {
                    json!({
                        "quant_method": "mx",
                        "format": fmt.name(),
                        "block_size": MX_BLOCK,
                        "scale_rule": self.opts.scale_rule.name(),
                        "modules_to_not_convert": not,
                    })
                }
            }
            (_, Some(CheckpointFormat::ModelOpt)) => {
                let weights = match self.opts.target {
                    Target::Nvfp4 => json!({"dynamic": false, "num_bits": 4, "type": "float",
                        "group_size": NVFP4_BLOCK}),
                    _ => json!({"dynamic": false, "num_bits": 8, "type": "float"}),
                };
                let mut group = serde_json::Map::new();
                if self.opts.target == Target::Fp8(Fp8Scales::Tensor) {
                    group.insert(
                        "input_activations".into(),
                        json!({"dynamic": false, "num_bits": 8, "type": "float"}),
                    );
                }
                group.insert("weights".into(), weights);
                group.insert("targets".into(), json!(["Linear"]));
                let mut q = serde_json::Map::new();
                if matches!(
                    self.opts.target,
                    Target::Nvfp4 | Target::Fp8(Fp8Scales::Tensor)
                ) {
                    q.insert("config_groups".into(), json!({"group_0": group}));
                }
                q.insert("ignore".into(), json!(not));
                q.insert("quant_algo".into(), json!(self.modelopt_algo()));
                q.insert("producer".into(), Self::producer());
                q.insert("quant_method".into(), json!("modelopt"));
                serde_json::Value::Object(q)
            }
            (_, Some(CheckpointFormat::Fp8)) => json!({
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "modules_to_not_convert": not,
                "quant_method": "fp8",
                "weight_block_size": [FP8_BLOCK, FP8_BLOCK],
            }),
            (Target::Fp8(scales), _) => compressed_tensors_config(scales, &not),
            _ => return None,
        })
    }

    /// Files written beside `config.json` (ModelOpt's
    /// `hf_quant_config.json`), when something was quantized.
    pub fn extra_files(
        &self,
        unquantized: &BTreeSet<String>,
        quantized: &BTreeSet<String>,
    ) -> Vec<(&'static str, serde_json::Value)> {
        if quantized.is_empty() || self.format != Some(CheckpointFormat::ModelOpt) {
            return Vec::new();
        }
        let not = self.not_converted(unquantized, quantized);
        let mut q = serde_json::Map::new();
        q.insert("quant_algo".into(), json!(self.modelopt_algo()));
        q.insert("kv_cache_quant_algo".into(), serde_json::Value::Null);
        if self.opts.target == Target::Nvfp4 {
            q.insert("group_size".into(), json!(NVFP4_BLOCK));
        }
        q.insert("exclude_modules".into(), json!(not));
        vec![(
            "hf_quant_config.json",
            json!({"producer": Self::producer(), "quantization": q}),
        )]
    }

    /// Files of the input directory not copied: the quantization
    /// descriptions a conversion replaces (`hf_quant_config.json`, ModelOpt's)
    /// when the output is not ModelOpt's, or was dequantized.
    pub fn dropped_file(&self, name: &str) -> bool {
        name == "hf_quant_config.json"
    }

    /// Warnings about the output as a whole.
    pub fn warnings(&self, quantized: &BTreeSet<String>) -> Vec<String> {
        let mut w = Vec::new();
        if !quantized.is_empty()
            && self.opts.target == Target::Fp8(Fp8Scales::Tensor)
            && self.format == Some(CheckpointFormat::ModelOpt)
        {
            w.push(
                "ModelOpt's FP8 (quant_algo \"FP8\") is W8A8 with static activation scales \
                 (input_scale), which only calibration on activations gives; this checkpoint \
                 has weights and weight scales only, as ModelOpt exports it with activation \
                 quantizers disabled. vLLM's ModelOpt FP8 path requires input_scale: serve \
                 per-tensor FP8 weights from the default compressed-tensors format instead"
                    .to_string(),
            );
        }
        w
    }
}

/// The name of a block-scale tensor of `name`: `NAME_scale` for a
/// `….weight`, else `NAME_weight_scale` (ModelOpt's naming of fused experts,
/// `gate_up_proj_weight_scale`).
pub(crate) fn scale_name(name: &str) -> String {
    if name.ends_with("weight") {
        format!("{name}_scale")
    } else {
        format!("{name}_weight_scale")
    }
}

/// compressed-tensors 0.20's `quantization_config` of a float-quantized
/// checkpoint (as `ModelCompressor.update_config` writes it): weights
/// per-tensor, per-channel or 128 × 128 blocks (`FP8_DYNAMIC`, `FP8_BLOCK`
/// presets), activations quantized dynamically at run time (per token, or
/// per group of 128 for block weights), so no activation scale is stored.
fn compressed_tensors_config(scales: Fp8Scales, ignore: &[String]) -> serde_json::Value {
    let mut weights = json!({"num_bits": 8, "type": "float", "symmetric": true,
        "group_size": null, "strategy": "tensor", "dynamic": false});
    let mut acts = json!({"num_bits": 8, "type": "float", "symmetric": true,
        "group_size": null, "strategy": "token", "dynamic": true});
    match scales {
        Fp8Scales::Tensor => {}
        Fp8Scales::Channel => weights["strategy"] = json!("channel"),
        Fp8Scales::Block => {
            weights["strategy"] = json!("block");
            weights["block_structure"] = json!([FP8_BLOCK, FP8_BLOCK]);
            acts["strategy"] = json!("group");
            acts["group_size"] = json!(FP8_BLOCK);
        }
    }
    json!({
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": weights,
            "input_activations": acts,
            "output_activations": null,
            "format": null,
        }},
        "format": "float-quantized",
        "global_compression_ratio": null,
        "ignore": ignore,
        "kv_cache_scheme": null,
        "moe_sparsity_config": null,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
        "sparsity_config": {},
        "transform_config": {},
        "version": "0.20.0",
    })
}

/// `s` with the regular-expression metacharacters escaped.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// gpt-oss's `modules_to_not_convert` form: each unquantized module widened
/// to its largest ancestor holding nothing quantized (below the model's
/// root), then layer indices replaced by `*` where the pattern (a regular
/// expression, as transformers matches it) matches no quantized module.
fn collapse(unquantized: &BTreeSet<String>, quantized: &BTreeSet<String>) -> Vec<String> {
    let under = |a: &str, m: &str| m == a || m.starts_with(&format!("{a}."));
    let mut wide: BTreeSet<String> = BTreeSet::new();
    for u in unquantized {
        let parts: Vec<&str> = u.split('.').collect();
        let mut best = u.clone();
        // Ancestors from the nearest up, never the root component alone.
        for k in (2..parts.len()).rev() {
            let a = parts[..k].join(".");
            if quantized.iter().any(|q| under(&a, q)) {
                break;
            }
            best = a;
        }
        wide.insert(best);
    }
    let mut out: BTreeMap<String, ()> = BTreeMap::new();
    for w in &wide {
        let star: Vec<String> = w
            .split('.')
            .map(|p| {
                if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                    "*".to_string()
                } else {
                    p.to_string()
                }
            })
            .collect();
        let pattern = star.join(".");
        let starred = pattern != *w;
        let hits_quantized = starred && quantized.iter().any(|q| wildcard_matches(&pattern, q));
        out.insert(if hits_quantized { w.clone() } else { pattern }, ());
    }
    out.into_keys().collect()
}

/// Whether `name` is matched by `pattern` as transformers reads
/// `modules_to_not_convert` (a regular expression matched at the start, up
/// to a module boundary), for patterns whose only special characters are
/// `.` (any character) and `.*`.
fn wildcard_matches(pattern: &str, name: &str) -> bool {
    // `a.*.b` as a regular expression: `a`, any run, `.b`; the parts between
    // stars must appear in order.
    let parts: Vec<&str> = pattern.split(".*").collect();
    let mut rest = name;
    for (i, p) in parts.iter().enumerate() {
        let p = if i > 0 {
            p.strip_prefix('.').unwrap_or(p)
        } else {
            p
        };
        match rest.find(p) {
            Some(at) if i > 0 || at == 0 => rest = &rest[at + p.len()..],
            _ => return false,
        }
    }
    rest.is_empty() || rest.starts_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn gpt_oss_modules_to_not_convert_take_the_released_form() {
        let mut u = Vec::new();
        let mut q = Vec::new();
        for l in 0..3 {
            for p in ["q_proj", "k_proj", "v_proj", "o_proj"] {
                u.push(format!("model.layers.{l}.self_attn.{p}"));
            }
            u.push(format!("model.layers.{l}.mlp.router"));
            q.push(format!("model.layers.{l}.mlp.experts.gate_up_proj"));
            q.push(format!("model.layers.{l}.mlp.experts.down_proj"));
        }
        u.push("model.embed_tokens".into());
        u.push("lm_head".into());
        let u: Vec<&str> = u.iter().map(|s| s.as_str()).collect();
        let q: Vec<&str> = q.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            collapse(&set(&u), &set(&q)),
            [
                "lm_head",
                "model.embed_tokens",
                "model.layers.*.mlp.router",
                "model.layers.*.self_attn"
            ]
        );
    }

    #[test]
    fn wildcards_never_cover_quantized_modules() {
        // Layer 1's attention is quantized: no `*` over layers for it (and
        // layer 2, with nothing quantized, is left out whole).
        let u = set(&["m.layers.0.attn", "m.layers.2.attn"]);
        let q = set(&["m.layers.1.attn", "m.layers.0.mlp"]);
        assert_eq!(collapse(&u, &q), ["m.layers.0.attn", "m.layers.2"]);
        assert!(wildcard_matches("m.layers.*.attn", "m.layers.11.attn"));
        assert!(!wildcard_matches("m.layers.*.attn", "m.layers.1.attn_x"));
        assert!(wildcard_matches("lm_head", "lm_head"));
    }

    #[test]
    fn modelopt_fp8_block_of_one_block_weights() {
        // ModelOpt 0.47's FP8_PB_WO: a weight of one 128 x 128 block gets a
        // 0-d scale shared by its fused siblings; larger weights keep
        // [n/128, 1, k/128, 1] scales of their own.
        let mut opts = Options::new(Target::Fp8(Fp8Scales::Block));
        opts.format = Some(CheckpointFormat::ModelOpt);
        let r = Recipe::new(&opts, ModelInfo::default()).unwrap();
        let q = "model.layers.0.self_attn.q_proj.weight";
        let k = "model.layers.0.self_attn.k_proj.weight";
        let one = Quant::Fp8 {
            scales: Fp8Scales::Tensor,
            experts: false,
        };
        assert_eq!(r.decide(q, &[64, 64]), Decision::Quantize(one));
        assert_eq!(r.decide(k, &[32, 128]), Decision::Quantize(one));
        assert_eq!(
            r.fp8_scale_shape(Fp8Scales::Tensor, 64, 64),
            Vec::<usize>::new()
        );
        assert_eq!(r.scale_group(q, one), r.scale_group(k, one));
        assert_ne!(
            r.scale_group(q, one),
            r.scale_group("model.layers.0.self_attn.o_proj.weight", one)
        );
        let big = Quant::Fp8 {
            scales: Fp8Scales::Block,
            experts: false,
        };
        assert_eq!(r.decide(q, &[256, 64]), Decision::Quantize(big));
        assert_eq!(r.scale_group(q, big), None);
        assert_eq!(r.fp8_scale_shape(Fp8Scales::Block, 256, 64), [2, 1, 1, 1]);
        // Other formats keep [1, 1] block scales of their own.
        opts.format = Some(CheckpointFormat::Fp8);
        let r = Recipe::new(&opts, ModelInfo::default()).unwrap();
        assert_eq!(r.decide(q, &[64, 64]), Decision::Quantize(big));
        assert_eq!(r.fp8_scale_shape(Fp8Scales::Block, 64, 64), [1, 1]);
    }

    #[test]
    fn fused_experts_in_fp8_recipes() {
        // ModelOpt's format quantizes gpt-oss's [E, in, out] experts; the
        // other FP8 formats leave them.
        let gpt_oss = ModelInfo {
            model_type: Some("gpt_oss".into()),
            tie_word_embeddings: None,
        };
        let gu = "model.layers.0.mlp.experts.gate_up_proj";
        for scales in [Fp8Scales::Tensor, Fp8Scales::Channel, Fp8Scales::Block] {
            let mut opts = Options::new(Target::Fp8(scales));
            opts.format = Some(CheckpointFormat::ModelOpt);
            let r = Recipe::new(&opts, gpt_oss.clone()).unwrap();
            let q = Quant::Fp8 {
                scales,
                experts: true,
            };
            assert_eq!(r.decide(gu, &[4, 64, 192]), Decision::Quantize(q));
            assert_eq!(
                r.outputs(gu, q),
                [gu.to_string(), format!("{gu}_weight_scale")]
            );
            assert_eq!(r.scale_group(gu, q).is_some(), scales == Fp8Scales::Tensor);
            assert_eq!(r.fp8_scale_dtype(DType::BFloat16), DType::Float32);
            opts.format = Some(CheckpointFormat::CompressedTensors);
            let r = Recipe::new(&opts, gpt_oss.clone()).unwrap();
            assert_eq!(r.decide(gu, &[4, 64, 192]), Decision::Leave);
        }
        let mut opts = Options::new(Target::Fp8(Fp8Scales::Block));
        opts.format = Some(CheckpointFormat::ModelOpt);
        let r = Recipe::new(&opts, gpt_oss).unwrap();
        assert_eq!(
            r.fp8_experts_scale_shape(Fp8Scales::Block, 4, 2880, 5760),
            [4, 45, 1, 23, 1]
        );
        // One expert of one block: a 0-d scale, as ModelOpt squeezes it.
        assert_eq!(
            r.decide(gu, &[1, 64, 128]),
            Decision::Quantize(Quant::Fp8 {
                scales: Fp8Scales::Tensor,
                experts: true
            })
        );
    }

    #[test]
    fn default_exclusions() {
        for m in [
            "lm_head",
            "model.embed_tokens",
            "model.layers.0.mlp.gate",
            "model.layers.0.block_sparse_moe.gate",
            "model.layers.0.mlp.router",
            "model.layers.0.mlp.shared_expert_gate",
            "visual.blocks.0.attn.qkv",
            "mtp.layers.0.proj",
            "output",
        ] {
            assert!(excluded_module(m), "{m}");
        }
        for m in [
            "model.layers.0.mlp.gate_proj",
            "model.layers.0.self_attn.o_proj",
            "encoder.layer.0.output.dense",
            "model.layers.0.block_sparse_moe.experts.0.w1",
        ] {
            assert!(!excluded_module(m), "{m}");
        }
    }
}
