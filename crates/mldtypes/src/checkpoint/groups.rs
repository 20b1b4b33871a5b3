//! Block groups of an input file: the tensors that together hold one
//! quantized tensor (MX, NVFP4, FP8 with scales), which a plain float target
//! dequantizes and any other target copies together.
//!
//! A group is found by names and shapes, its layout confirmed by the file's
//! `mldtypes.quantization` record when there is one:
//!
//! - MX: `NAME_blocks` (U8 `[.., K/32, bytes]`) and `NAME_scales` (U8
//!   `[.., K/32]`), MXFP4 without a record; `….experts.gate_up_proj` and
//!   `….experts.down_proj` of rank 4 without a record (or a record saying
//!   `"layout": "transposed"`) are gpt-oss's experts, stored `[E, out, in/32,
//!   16]` for a logical `[E, in, out]`;
//! - NVFP4: `NAME` (U8), `NAME_scale` / `NAME_weight_scale` (F8_E4M3, blocks
//!   of 16 along the last axis, or along the second-to-last as ModelOpt
//!   exports fused experts) and `…_scale_2` (F32, one element);
//! - FP8: `NAME` (F8_E4M3, two dimensions) and `NAME_scale` (ModelOpt,
//!   compressed-tensors) or `NAME_scale_inv` (DeepSeek-V3, Qwen3-FP8) in
//!   float32, bfloat16 or float16: shape `[]` / `[1]` per tensor, `[N]` /
//!   `[N, 1]` per channel, `[⌈N/128⌉, ⌈K/128⌉]` or `[⌈N/128⌉, 1, ⌈K/128⌉,
//!   1]` per 128 × 128 block; fused experts `….experts.gate_up_proj` /
//!   `….experts.down_proj` (F8_E4M3 `[E, in, out]`) with
//!   `NAME_weight_scale`, as ModelOpt exports gpt-oss's: `[]` / `[1]` over
//!   all experts, `[E]` per expert, `[E, ⌈out/128⌉, 1, ⌈in/128⌉, 1]` per
//!   128 × 128 block of each expert's transpose `[out, in]`.
//!
//! A weight's `input_scale` (activation scale of W8A8 / W4A4 checkpoints)
//! belongs to its group: dequantizing drops it with the scales.

use std::collections::{BTreeMap, BTreeSet};

use safetensors::Dtype;

use super::reader::SafetensorsFile;
use super::recipe::{fused_expert, module_of, scale_name, Fp8Scales, FP8_BLOCK};
use crate::dtype::DType;
use crate::mx::{MxFormat, MX_BLOCK, NVFP4_BLOCK};

/// The `__metadata__` key recording the quantized tensors.
pub(crate) const QUANT_KEY: &str = "mldtypes.quantization";

/// A logical matrix `[.., k, n]` stored with its blocks along `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mat {
    pub k: usize,
    pub n: usize,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum GroupKind {
    Mx {
        fmt: MxFormat,
        scales: usize,
        tr: Option<Mat>,
    },
    Nvfp4 {
        scale: usize,
        scale2: usize,
        cols: Option<usize>,
    },
    Fp8 {
        scale: usize,
        scales: Fp8Scales,
        k: usize,
        sdt: DType,
        block: usize,
        /// Fused experts `[E, in, out]`: `in`, the rows of each expert's
        /// matrix, with one scale per expert (`[E]`) or block scales stored
        /// `[E, out/b, 1, in/b, 1]`.
        experts: Option<usize>,
    },
}

impl GroupKind {
    /// The format's name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            GroupKind::Mx { fmt, .. } => fmt.name(),
            GroupKind::Nvfp4 { .. } => "nvfp4",
            GroupKind::Fp8 { scales, .. } => scales.name(),
        }
    }
}

pub(crate) struct Group {
    /// The logical tensor's name.
    pub name: String,
    /// Its logical shape.
    pub shape: Vec<usize>,
    pub kind: GroupKind,
    /// Every tensor of the group.
    pub all: Vec<usize>,
}

#[derive(Default)]
pub(crate) struct Groups {
    /// Groups by the index of their head tensor (blocks / packed data).
    pub heads: BTreeMap<usize, Group>,
    /// Tensors that belong to a group but are not its head.
    pub member: BTreeSet<usize>,
}

/// The file's `mldtypes.quantization` records.
pub(crate) fn records(st: &SafetensorsFile) -> BTreeMap<String, serde_json::Value> {
    st.metadata()
        .and_then(|m| m.get(QUANT_KEY))
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default()
}

fn float_scale(d: Dtype) -> Option<DType> {
    match d {
        Dtype::F32 => Some(DType::Float32),
        Dtype::BF16 => Some(DType::BFloat16),
        Dtype::F16 => Some(DType::Float16),
        _ => None,
    }
}

/// Finds the block groups of `st` (see the module documentation).
pub(crate) fn find_groups(st: &SafetensorsFile) -> Groups {
    let records = records(st);
    let ts = st.tensors();
    let idx = |n: &str| ts.binary_search_by(|t| t.name.as_str().cmp(n)).ok();
    let layout = |base: &str| {
        records
            .get(base)
            .and_then(|r| r.get("layout"))
            .and_then(|l| l.as_str())
            .map(str::to_string)
    };
    let mut g = Groups::default();
    let add = |g: &mut Groups, head: usize, group: Group| {
        g.member
            .extend(group.all.iter().copied().filter(|&m| m != head));
        g.heads.insert(head, group);
    };
    for (i, t) in ts.iter().enumerate() {
        if g.member.contains(&i) {
            continue;
        }
        if let Some(base) = t.name.strip_suffix("_blocks") {
            let Some(si) = idx(&format!("{base}_scales")) else {
                continue;
            };
            let sc = &ts[si];
            let fmt = match records
                .get(base)
                .and_then(|r| r.get("format"))
                .and_then(|f| f.as_str())
            {
                Some(f) => MxFormat::from_name(f),
                None => Some(MxFormat::Fp4),
            };
            let Some(fmt) = fmt else { continue };
            let r = t.shape.len();
            let ok = t.dtype == Dtype::U8
                && sc.dtype == Dtype::U8
                && r >= 2
                && t.shape[r - 1] == fmt.block_bytes()
                && sc.shape[..] == t.shape[..r - 1];
            if !ok {
                continue;
            }
            let transposed = match layout(base) {
                Some(l) => l == "transposed",
                None => {
                    r == 4
                        && (base.ends_with(".experts.gate_up_proj")
                            || base.ends_with(".experts.down_proj"))
                }
            } && r >= 3;
            let k = t.shape[r - 2] * MX_BLOCK;
            let (shape, tr) = if transposed {
                let n = t.shape[r - 3];
                let mut s = t.shape[..r - 3].to_vec();
                s.extend([k, n]);
                (s, Some(Mat { k, n }))
            } else {
                let mut s = t.shape[..r - 2].to_vec();
                s.push(k);
                (s, None)
            };
            add(
                &mut g,
                i,
                Group {
                    name: base.to_string(),
                    shape,
                    kind: GroupKind::Mx {
                        fmt,
                        scales: si,
                        tr,
                    },
                    all: vec![i, si],
                },
            );
        } else if t.dtype == Dtype::U8 {
            let sn = scale_name(&t.name);
            let (Some(si), Some(s2i)) = (idx(&sn), idx(&format!("{sn}_2"))) else {
                continue;
            };
            let (sc, s2) = (&ts[si], &ts[s2i]);
            let r = t.shape.len();
            if sc.dtype != Dtype::F8_E4M3
                || s2.dtype != Dtype::F32
                || s2.elements != 1
                || sc.shape.len() != r
                || r == 0
            {
                continue;
            }
            let rows = sc.shape[..r - 1] == t.shape[..r - 1]
                && sc.shape[r - 1] * NVFP4_BLOCK == t.shape[r - 1] * 2;
            let cols = r >= 2
                && sc.shape[..r - 2] == t.shape[..r - 2]
                && sc.shape[r - 1] == t.shape[r - 1]
                && sc.shape[r - 2] * NVFP4_BLOCK == t.shape[r - 2] * 2;
            let columns = match layout(&t.name).as_deref() {
                Some("columns") => cols,
                Some(_) => false,
                None => cols && !rows,
            };
            if !rows && !columns {
                continue;
            }
            let mut shape = t.shape.clone();
            let cols = if columns {
                shape[r - 2] *= 2;
                Some(t.shape[r - 1])
            } else {
                shape[r - 1] *= 2;
                None
            };
            let mut all = vec![i, si, s2i];
            all.extend(input_scale(&t.name, &idx));
            add(
                &mut g,
                i,
                Group {
                    name: t.name.clone(),
                    shape,
                    kind: GroupKind::Nvfp4 {
                        scale: si,
                        scale2: s2i,
                        cols,
                    },
                    all,
                },
            );
        } else if t.dtype == Dtype::F8_E4M3 && t.shape.len() == 3 && fused_expert(&t.name) {
            let Some(si) = idx(&scale_name(&t.name)) else {
                continue;
            };
            let sc = &ts[si];
            let Some(sdt) = float_scale(sc.dtype) else {
                continue;
            };
            let (e, inn, out) = (t.shape[0], t.shape[1], t.shape[2]);
            let (scales, k, block, experts) = match sc.shape[..] {
                [] | [1] => (Fp8Scales::Tensor, out, 0, None),
                [m] if m == e => (Fp8Scales::Channel, out, 0, Some(inn)),
                [m, ob, 1, ib, 1] if m == e => {
                    match [FP8_BLOCK, 64, 32, 256]
                        .into_iter()
                        .find(|b| out.div_ceil(*b) == ob && inn.div_ceil(*b) == ib)
                    {
                        Some(b) => (Fp8Scales::Block, out, b, Some(inn)),
                        None => continue,
                    }
                }
                _ => continue,
            };
            add(
                &mut g,
                i,
                Group {
                    name: t.name.clone(),
                    shape: t.shape.clone(),
                    kind: GroupKind::Fp8 {
                        scale: si,
                        scales,
                        k,
                        sdt,
                        block,
                        experts,
                    },
                    all: vec![i, si],
                },
            );
        } else if t.dtype == Dtype::F8_E4M3 && t.shape.len() == 2 {
            let sn = scale_name(&t.name);
            let inv = format!("{}_scale_inv", t.name);
            let Some(si) = idx(&sn).or_else(|| idx(&inv)) else {
                continue;
            };
            let sc = &ts[si];
            let Some(sdt) = float_scale(sc.dtype) else {
                continue;
            };
            let (n, k) = (t.shape[0], t.shape[1]);
            let s = &sc.shape[..];
            let block_of = |ob: usize, ib: usize| -> Option<usize> {
                [FP8_BLOCK, 64, 32, 256]
                    .into_iter()
                    .find(|b| n.div_ceil(*b) == ob && k.div_ceil(*b) == ib)
            };
            let (scales, block) = match s {
                [] | [1] => (Fp8Scales::Tensor, 0),
                [1, 1] if n > FP8_BLOCK || k > FP8_BLOCK => (Fp8Scales::Tensor, 0),
                [m] | [m, 1] if *m == n => (Fp8Scales::Channel, 0),
                [ob, ib] | [ob, 1, ib, 1] => match block_of(*ob, *ib) {
                    Some(b) => (Fp8Scales::Block, b),
                    None => continue,
                },
                _ => continue,
            };
            let mut all = vec![i, si];
            all.extend(input_scale(&t.name, &idx));
            add(
                &mut g,
                i,
                Group {
                    name: t.name.clone(),
                    shape: t.shape.clone(),
                    kind: GroupKind::Fp8 {
                        scale: si,
                        scales,
                        k,
                        sdt,
                        block,
                        experts: None,
                    },
                    all,
                },
            );
        }
    }
    g
}

/// The `input_scale` of weight `name`, if the file holds one.
fn input_scale(name: &str, idx: &impl Fn(&str) -> Option<usize>) -> Option<usize> {
    let module = module_of(name);
    (module != name)
        .then(|| idx(&format!("{module}.input_scale")))
        .flatten()
}
