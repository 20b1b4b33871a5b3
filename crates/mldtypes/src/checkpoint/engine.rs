//! The conversion engine: model-level planning through a [`Recipe`], the
//! parallel chunked pass, the index, `config.json` and the other model
//! files.
//!
//! Tensor scales shared across tensors (NVFP4's `weight_scale_2` of the
//! projections serving stacks fuse; FP8's per-tensor scale) are planned for
//! the whole model before any shard is converted: each group's members are
//! named by (shard, tensor), and the first pass of a run reads the largest
//! finite magnitude of every member of the groups its jobs use, wherever
//! the member is stored. [`convert_shard`] converts one shard but reads the
//! members of its groups that sit in other shards (a fused q/k/v split by a
//! shard boundary), so every shard converted alone is byte-identical to the
//! one [`convert`] writes, with no coordination between the tasks: no
//! two-phase protocol, at the cost of reading those few tensors twice.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;
use serde_json::json;

use super::groups::{find_groups, records, GroupKind, Mat, QUANT_KEY};
use super::layout::{self, scale_bytes, scale_values, transpose, Cut, CHUNK};
use super::ordered::Json;
use super::output::{copy_tree, Staging};
use super::reader::read_exact_at;
use super::reader::{quoted, SafetensorsFile, TensorEntry};
use super::recipe::{module_of, Decision, Fp8Scales, ModelInfo, Quant, Recipe, FP8_BLOCK};
use super::source::{resolve, Source};
use super::stats::{OverflowLimit, Stats};
use super::{
    float_target, storage_bytes, Action, Error, Options, Progress, Summary, Target, TensorReport,
};
use crate::cast::{self, pack};
use crate::dtype::DType;
use crate::float::core::encode_f64;
use crate::format::Overflow;
use crate::mx::{self, MxFormat, MX_BLOCK, NVFP4_BLOCK};
use crate::round::{RandomBits, Rounding};

#[derive(Clone, Copy, Debug)]
enum Op {
    Copy,
    Cast {
        from: DType,
        to: DType,
    },
    /// MX blocks along the last axis, or (`tr`) along the second-to-last,
    /// stored transposed.
    Mx {
        from: DType,
        fmt: MxFormat,
        tr: Option<Mat>,
    },
    /// NVFP4 along the last axis, or (`cols`: the `n` of `[.., k, n]`)
    /// along the second-to-last.
    Nvfp4 {
        from: DType,
        cols: Option<usize>,
    },
    /// FP8 with scales of a `[rows, k]` weight, the scales stored as `sdt`;
    /// `experts`: the rows form matrices of this many rows (fused experts
    /// `[E, in, out]` as `[E·in, out]`), with one scale per matrix
    /// ([`Fp8Scales::Channel`], `[E]`) or block scales stored transposed
    /// (`[E, ⌈out/128⌉, 1, ⌈in/128⌉, 1]`).
    Fp8 {
        from: DType,
        scales: Fp8Scales,
        k: usize,
        sdt: DType,
        experts: Option<usize>,
    },
    MxDequant {
        fmt: MxFormat,
        scales: usize,
        to: DType,
        tr: Option<Mat>,
    },
    Nvfp4Dequant {
        scale: usize,
        scale2: usize,
        to: DType,
        cols: Option<usize>,
    },
    Fp8Dequant {
        scale: usize,
        scales: Fp8Scales,
        k: usize,
        sdt: DType,
        block: usize,
        experts: Option<usize>,
        to: DType,
    },
}

impl Op {
    /// How the job's elements are cut into chunks.
    fn cut(&self) -> Cut {
        match *self {
            Op::Copy => Cut::Bytes,
            Op::Mx { tr: Some(m), .. } => layout::mx_transposed_quantize(m),
            Op::MxDequant { tr: Some(m), .. } => layout::mx_transposed_dequantize(m),
            Op::Nvfp4 { cols: Some(n), .. } | Op::Nvfp4Dequant { cols: Some(n), .. } => {
                layout::nvfp4_columns(n)
            }
            Op::Fp8 {
                scales, k, experts, ..
            } => layout::fp8(scales, k, layout::fp8_block(scales), experts),
            Op::Fp8Dequant {
                scales,
                k,
                block,
                experts,
                ..
            } => layout::fp8(scales, k, block, experts),
            _ => Cut::Flat,
        }
    }

    /// The fused expert holding element `s` of an FP8 job with one scale
    /// per expert (whose tensor-scale groups are one per expert), else 0.
    fn expert_of(&self, s: usize) -> usize {
        match *self {
            Op::Fp8 {
                scales: Fp8Scales::Channel,
                k,
                experts: Some(m),
                ..
            } if m * k > 0 => s / (m * k),
            _ => 0,
        }
    }

    /// The number of tensor-scale groups of a job of `units` elements (see
    /// [`Op::expert_of`]).
    fn scale_groups(&self, units: usize) -> usize {
        match *self {
            Op::Fp8 {
                scales: Fp8Scales::Channel,
                k,
                experts: Some(m),
                ..
            } if m * k > 0 => units / (m * k),
            _ => 1,
        }
    }

    /// Whether the job writes a per-tensor scale at its first chunk (so an
    /// empty tensor still gets one chunk).
    fn has_tensor_scale(&self) -> bool {
        matches!(
            self,
            Op::Nvfp4 { .. }
                | Op::Fp8 {
                    scales: Fp8Scales::Tensor,
                    ..
                }
        )
    }
}

struct Job {
    /// The output file (index into the planned files).
    file: usize,
    /// The source shard (index into the run's source shards).
    shard: usize,
    input: usize,
    op: Op,
    /// Work units: elements (bytes for a copy).
    units: usize,
    /// Output tensor indices within the file's output list.
    outs: Vec<usize>,
    report: Option<usize>,
    /// The tensor-scale group (NVFP4, per-tensor FP8).
    scale: Option<usize>,
}

struct OutTensor {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    size: usize,
    offset: usize,
}

struct FilePlan {
    name: String,
    outs: Vec<OutTensor>,
    header: Vec<u8>,
    data_len: usize,
}

/// A worker thread's buffers, kept across chunks and tensors: each is
/// allocated (and its pages touched) once per thread, not once per chunk.
#[derive(Default)]
struct Scratch {
    /// Input bytes of the chunk.
    inb: Vec<u8>,
    /// The chunk's values as float32, for inputs that are not float32.
    x32: Vec<f32>,
    /// Output bytes of the chunk (cast values, MX blocks, NVFP4 elements).
    out: Vec<u8>,
    /// Block scales.
    scales: Vec<u8>,
    /// A part of the chunk's originals as float32 (cast statistics).
    xs: Vec<f32>,
    /// A part of the chunk's results as float32 (cast statistics).
    ys: Vec<f32>,
    /// float64 values: inputs that are float64, dequantized values.
    fa: Vec<f64>,
    /// float64 values: the dequantized or converted values of float64
    /// inputs (statistics), transposed values.
    fb: Vec<f64>,
    /// Transposed float32 values.
    t32: Vec<f32>,
    /// Transposed bytes (elements, scales).
    tb: Vec<u8>,
    /// FP8 scales of the chunk.
    sv: Vec<f64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Elements per read of the tensor-scale pass, which only scans them: a
/// buffer the core's own cache holds.
const SCAN: usize = 1 << 16;

/// Elements per pass of a cast's statistics: the float32 views of one part
/// of a chunk stay in the cache between the cast and the statistics.
const SUB: usize = 8192;

/// The first `n` elements of `v`, grown (zero-filled) if shorter.
fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::default());
    }
    &mut v[..n]
}

/// The elements of `src` (storage of `from`, a float dtype) as float32:
/// float32 input in place when aligned, anything else converted into `buf`.
fn as_f32<'a>(src: &'a [u8], from: DType, buf: &'a mut Vec<f32>) -> Result<&'a [f32], Error> {
    if from == DType::Float32 {
        if let Ok(x) = bytemuck::try_cast_slice(src) {
            return Ok(x);
        }
    }
    let n = if is_packed(from) {
        src.len() * 8 / from.bits() as usize
    } else {
        src.len() / from.itemsize()
    };
    let x = grow(buf, n);
    cast_storage(
        src,
        from,
        bytemuck::cast_slice_mut(x),
        DType::Float32,
        Overflow::NonSaturating,
    )?;
    Ok(x)
}

/// The elements of `src` (storage of `from`) as float64 (exact for every
/// float dtype): float64 input in place when aligned, anything else
/// converted into `buf`.
fn as_f64<'a>(
    src: &'a [u8],
    from: DType,
    n: usize,
    buf: &'a mut Vec<f64>,
) -> Result<&'a [f64], Error> {
    if from == DType::Float64 {
        if let Ok(x) = bytemuck::try_cast_slice(src) {
            return Ok(x);
        }
    }
    let x = grow(buf, n);
    cast_storage(
        src,
        from,
        bytemuck::cast_slice_mut(x),
        DType::Float64,
        Overflow::NonSaturating,
    )?;
    Ok(x)
}

fn sb(d: DType, n: usize) -> usize {
    let t = Dtype::try_from(d).expect("planned dtypes have tags");
    storage_bytes(t, n).expect("planned sizes fit")
}

fn is_packed(d: DType) -> bool {
    d.is_float() && d.bits() < 8
}

fn cast_err(e: cast::CastError) -> Error {
    Error::usage(e.to_string())
}

/// `n` elements of `from` (safetensors storage) to `to` (storage), on this
/// thread only.
fn cast_storage(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
) -> Result<(), Error> {
    convert_storage(src, from, dst, to, |s, d| {
        cast::cast_bytes_on(cast::path(), s, from, d, to, ov)
    })
}

/// [`cast_storage`] with rounding `r` (for exactly these elements), on this
/// thread only.
fn round_storage(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    r: &Rounding<'_>,
) -> Result<(), Error> {
    convert_storage(src, from, dst, to, |s, d| {
        cast::round_bytes_on(cast::path(), s, from, d, to, r)
    })
}

/// Runs `conv` (unpacked `from` bytes to unpacked `to` bytes) between
/// safetensors storages: packed sub-byte floats are unpacked before and
/// packed after it.
fn convert_storage(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    conv: impl FnOnce(&[u8], &mut [u8]) -> Result<(), cast::CastError>,
) -> Result<(), Error> {
    let n = if is_packed(from) {
        src.len() * 8 / from.bits() as usize
    } else {
        src.len() / from.itemsize()
    };
    let mut tmp_in = Vec::new();
    let src = if is_packed(from) {
        tmp_in.resize(n, 0);
        pack::unpack(src, from, &mut tmp_in).map_err(cast_err)?;
        &tmp_in[..]
    } else {
        src
    };
    if is_packed(to) {
        let mut codes = vec![0u8; n];
        conv(src, &mut codes).map_err(cast_err)?;
        pack::pack(&codes, to, dst).map_err(cast_err)
    } else {
        conv(src, dst).map_err(cast_err)
    }
}

/// Encodes exact values to `to` storage, rounding once: with `r` (for
/// exactly these elements) when given, else to nearest even with `ov`.
fn encode_values(
    vals: &[f64],
    to: DType,
    ov: Overflow,
    r: Option<&Rounding<'_>>,
    dst: &mut [u8],
) -> Result<(), Error> {
    if let (Some(r), true) = (r, to != DType::Float64) {
        let src: &[u8] = bytemuck::cast_slice(vals);
        return round_storage(src, DType::Float64, dst, to, r);
    }
    match to {
        DType::Float64 => {
            for (c, v) in dst.chunks_exact_mut(8).zip(vals) {
                c.copy_from_slice(&v.to_le_bytes());
            }
        }
        DType::Float32 => {
            for (c, v) in dst.chunks_exact_mut(4).zip(vals) {
                c.copy_from_slice(&(*v as f32).to_le_bytes());
            }
        }
        _ => {
            let f = to.format().expect("a float format");
            let w = to.itemsize();
            for (c, v) in dst.chunks_exact_mut(w).zip(vals) {
                let code = encode_f64(&f, *v, ov);
                c.copy_from_slice(&code.to_le_bytes()[..w]);
            }
        }
    }
    Ok(())
}

fn float_dtype(t: Dtype) -> Option<DType> {
    DType::try_from(t).ok().filter(|d| d.is_float())
}

/// Whether `name` names a weight: `….weight`, or a bare name with no module
/// path (the tensors whose modules configurations list).
fn is_weight_name(name: &str) -> bool {
    name.ends_with(".weight") || !name.contains('.')
}

/// The recipe's decision for tensor `t` of float dtype `from`; layouts that
/// transpose or block along the second-to-last axis need byte-sized
/// elements.
fn decision(recipe: &Recipe<'_, '_>, t: &TensorEntry, from: DType) -> Decision {
    match recipe.decide(&t.name, &t.shape) {
        Decision::Quantize(
            Quant::Mx {
                transposed: true, ..
            }
            | Quant::Nvfp4 { columns: true },
        ) if is_packed(from) => Decision::Unfit(format!(
            "tensor {} of {from} left unquantized: the blocked layout along its input axis \
             needs whole-byte elements",
            quoted(&t.name)
        )),
        d => d,
    }
}

/// The name of a quantized tensor's format in reports.
fn quant_name(q: Quant) -> &'static str {
    match q {
        Quant::Mx { fmt, .. } => fmt.name(),
        Quant::Nvfp4 { .. } => "nvfp4",
        Quant::Fp8 { scales, .. } => scales.name(),
    }
}

/// The plan of one output file: its tensors and header, the jobs that fill
/// it, and its part of the summary.
struct Planned {
    plan: FilePlan,
    jobs: Vec<Job>,
    /// This file's tensors, copies and warnings (job reports index its
    /// `tensors`).
    part: Summary,
    /// Modules whose weights were quantized.
    quantized: BTreeSet<String>,
    /// Modules whose floating-point matrices a quantizing target left
    /// unquantized.
    unquantized: BTreeSet<String>,
    dequantized: bool,
}

/// A member of a tensor-scale group.
#[derive(Clone, Copy, Debug)]
struct Member {
    shard: usize,
    tensor: usize,
    from: DType,
    /// The elements `[s, e)` of the tensor that count (one expert of fused
    /// experts), or all of them.
    range: Option<(usize, usize)>,
}

/// The model-level plan: the groups of tensors sharing a tensor scale, by
/// (shard, tensor).
#[derive(Default)]
struct ModelPlan {
    groups: Vec<Vec<Member>>,
    group_of: HashMap<(usize, usize), usize>,
}

/// Plans the tensor-scale groups of the whole model (every shard).
fn model_plan(shards: &[(String, SafetensorsFile)], recipe: &Recipe<'_, '_>) -> ModelPlan {
    let mut mp = ModelPlan::default();
    if !recipe.quantizes() {
        return mp;
    }
    let mut keys: BTreeMap<String, usize> = BTreeMap::new();
    for (si, (_, st)) in shards.iter().enumerate() {
        let ig = find_groups(st);
        for (ti, t) in st.tensors().iter().enumerate() {
            if ig.member.contains(&ti) || ig.heads.contains_key(&ti) {
                continue;
            }
            let Some(from) = float_dtype(t.dtype) else {
                continue;
            };
            if let Decision::Quantize(q) = decision(recipe, t, from) {
                if let (
                    Quant::Fp8 {
                        scales: Fp8Scales::Channel,
                        experts: true,
                    },
                    &[e, inn, out],
                ) = (q, &t.shape[..])
                {
                    // One scale per expert: a group per expert, from the
                    // tensor's first one on (each expert's amax is read
                    // before its chunks run, which stay within it).
                    mp.group_of.insert((si, ti), mp.groups.len());
                    let n = inn * out;
                    for x in 0..e {
                        mp.groups.push(vec![Member {
                            shard: si,
                            tensor: ti,
                            from,
                            range: Some((x * n, (x + 1) * n)),
                        }]);
                    }
                    continue;
                }
                if let Some(key) = recipe.scale_group(&t.name, q) {
                    let next = keys.len();
                    let g = *keys.entry(key).or_insert(next);
                    if g == mp.groups.len() {
                        mp.groups.push(Vec::new());
                    }
                    mp.groups[g].push(Member {
                        shard: si,
                        tensor: ti,
                        from,
                        range: None,
                    });
                    mp.group_of.insert((si, ti), g);
                }
            }
        }
    }
    mp
}

/// A safetensors header with `__metadata__` first (its entries in the given
/// order), then the tensors in layout order.
struct Header<'a> {
    meta: &'a [(String, String)],
    tensors: &'a [(String, TensorInfo)],
}

struct Entries<'a>(&'a [(String, String)]);

impl serde::Serialize for Entries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl serde::Serialize for Header<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if !self.meta.is_empty() {
            m.serialize_entry("__metadata__", &Entries(self.meta))?;
        }
        for (k, v) in self.tensors {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Plans the output of shard `fname` (`st`, source shard `si`); its jobs
/// name it as file `fi`.
fn plan_file(
    fi: usize,
    si: usize,
    fname: &str,
    st: &SafetensorsFile,
    recipe: &Recipe<'_, '_>,
    mp: &ModelPlan,
) -> Result<Planned, Error> {
    let opts = recipe.opts;
    let mut part = Summary::default();
    let mut jobs: Vec<Job> = Vec::new();
    let mut quantized: BTreeSet<String> = BTreeSet::new();
    let mut unquantized: BTreeSet<String> = BTreeSet::new();
    let mut dequantized = false;
    let mut plan = FilePlan {
        name: fname.to_string(),
        outs: Vec::new(),
        header: Vec::new(),
        data_len: 0,
    };
    let mut recs: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    let old_records = records(st);
    let groups = find_groups(st);
    let tensors = st.tensors();
    let picked =
        |name: &str| opts.select.is_none_or(|f| f(name)) && !opts.exclude.is_some_and(|f| f(name));
    let push_out = |plan: &mut FilePlan, name: String, dtype: Dtype, shape: Vec<usize>| {
        let n: usize = shape.iter().product();
        let size = storage_bytes(dtype, n).expect("sizes planned");
        plan.outs.push(OutTensor {
            name,
            dtype,
            shape,
            size,
            offset: 0,
        });
        plan.outs.len() - 1
    };
    let job = |input: usize, op: Op, units: usize, outs: Vec<usize>, report, scale| Job {
        file: fi,
        shard: si,
        input,
        op,
        units,
        outs,
        report,
        scale,
    };
    for (ti, t) in tensors.iter().enumerate() {
        if groups.member.contains(&ti) {
            continue;
        }
        let report = |part: &mut Summary, name: &str, from: &str, to: &str, action, stats: bool| {
            part.tensors.push(TensorReport {
                name: name.to_string(),
                file: fname.to_string(),
                shape: t.shape.clone(),
                from: from.to_string(),
                to: to.to_string(),
                action,
                stats: stats.then(Stats::default),
            });
            Some(part.tensors.len() - 1)
        };
        // A block group headed by this tensor: dequantized by a float
        // target, else copied whole.
        if let Some(g) = groups.heads.get(&ti) {
            if let Target::Float(to) = opts.target {
                if (picked(&g.name) || picked(&t.name)) && !is_packed(to) {
                    let tag = float_target(to)?;
                    let o = push_out(&mut plan, g.name.clone(), tag, g.shape.clone());
                    let op = match g.kind {
                        GroupKind::Mx { fmt, scales, tr } => Op::MxDequant {
                            fmt,
                            scales,
                            to,
                            tr,
                        },
                        GroupKind::Nvfp4 {
                            scale,
                            scale2,
                            cols,
                        } => Op::Nvfp4Dequant {
                            scale,
                            scale2,
                            to,
                            cols,
                        },
                        GroupKind::Fp8 {
                            scale,
                            scales,
                            k,
                            sdt,
                            block,
                            experts,
                        } => Op::Fp8Dequant {
                            scale,
                            scales,
                            k,
                            sdt,
                            block,
                            experts,
                            to,
                        },
                    };
                    part.tensors.push(TensorReport {
                        name: g.name.clone(),
                        file: fname.to_string(),
                        shape: g.shape.clone(),
                        from: g.kind.name().to_string(),
                        to: to.name().to_string(),
                        action: Action::Dequantize,
                        stats: None,
                    });
                    let r = Some(part.tensors.len() - 1);
                    jobs.push(job(ti, op, g.shape.iter().product(), vec![o], r, None));
                    dequantized = true;
                    continue;
                }
            }
            for &m in &g.all {
                let mt = &tensors[m];
                let o = push_out(&mut plan, mt.name.clone(), mt.dtype, mt.shape.clone());
                part.copied.push(mt.name.clone());
                jobs.push(copy_job(fi, si, m, mt, o));
            }
            if let Some(v) = old_records.get(&g.name) {
                recs.insert(g.name.clone(), v.clone());
            }
            continue;
        }
        let from = float_dtype(t.dtype);
        // What a tensor left unquantized becomes: `rest`, or itself.
        let rest_op = |from: DType| match opts.rest {
            Some(r)
                if r != from
                    && storage_bytes(Dtype::try_from(r).expect("checked"), t.elements)
                        .is_some() =>
            {
                Op::Cast { from, to: r }
            }
            _ => Op::Copy,
        };
        let (op, quant) = match (from, opts.target) {
            (Some(from), Target::Float(to)) if picked(&t.name) && from != to => {
                if storage_bytes(Dtype::try_from(to).expect("checked"), t.elements).is_none() {
                    part.warnings.push(format!(
                        "tensor {}: {} elements cannot be packed as {} ({} bits each, whole \
                         bytes needed); copied unchanged",
                        quoted(&t.name),
                        t.elements,
                        to,
                        to.bits()
                    ));
                    (Op::Copy, None)
                } else if !cast::is_supported(from, to) {
                    return Err(Error::usage(format!(
                        "tensor {}: converting {from} to {to} is not supported",
                        quoted(&t.name)
                    )));
                } else {
                    (Op::Cast { from, to }, None)
                }
            }
            (Some(_), Target::Float(_)) | (None, _) => (Op::Copy, None),
            (Some(from), _) => match decision(recipe, t, from) {
                Decision::Quantize(q) => (Op::Copy, Some((from, q))),
                Decision::Unfit(w) => {
                    part.warnings.push(w);
                    (rest_op(from), None)
                }
                Decision::Leave => (rest_op(from), None),
            },
        };
        if let Some((from, q)) = quant {
            let names = recipe.outputs(&t.name, q);
            let r = t.shape.len();
            let (op, outs) = match q {
                Quant::Mx { fmt, transposed } => {
                    let bb = fmt.block_bytes();
                    let (lead, k, tr) = if transposed {
                        let (k, n) = (t.shape[r - 2], t.shape[r - 1]);
                        let mut lead = t.shape[..r - 2].to_vec();
                        lead.push(n);
                        (lead, k, Some(Mat { k, n }))
                    } else {
                        (t.shape[..r - 1].to_vec(), t.shape[r - 1], None)
                    };
                    let mut bshape = lead.clone();
                    bshape.extend([k / MX_BLOCK, bb]);
                    let mut sshape = lead;
                    sshape.push(k / MX_BLOCK);
                    let ob = push_out(&mut plan, names[0].clone(), Dtype::U8, bshape);
                    let os = push_out(&mut plan, names[1].clone(), Dtype::U8, sshape);
                    (Op::Mx { from, fmt, tr }, vec![ob, os])
                }
                Quant::Nvfp4 { columns } => {
                    let (mut pshape, mut sshape) = (t.shape.clone(), t.shape.clone());
                    let cols = if columns {
                        pshape[r - 2] /= 2;
                        sshape[r - 2] /= NVFP4_BLOCK;
                        Some(t.shape[r - 1])
                    } else {
                        pshape[r - 1] /= 2;
                        sshape[r - 1] /= NVFP4_BLOCK;
                        None
                    };
                    let op_ = push_out(&mut plan, names[0].clone(), Dtype::U8, pshape);
                    let os = push_out(&mut plan, names[1].clone(), Dtype::F8_E4M3, sshape);
                    let o2 = push_out(&mut plan, names[2].clone(), Dtype::F32, vec![]);
                    (Op::Nvfp4 { from, cols }, vec![op_, os, o2])
                }
                Quant::Fp8 { scales, experts } => {
                    // Fused experts [E, in, out]: one scale over all, one
                    // per expert (a row of in·out), or blocks of each
                    // expert's [in, out] matrix.
                    let (k, sshape, experts) = match (experts, &t.shape[..]) {
                        (true, &[e, inn, out]) => (
                            out,
                            recipe.fp8_experts_scale_shape(scales, e, inn, out),
                            (scales != Fp8Scales::Tensor).then_some(inn),
                        ),
                        _ => {
                            let (n, k) = (t.shape[0], t.shape[1]);
                            (k, recipe.fp8_scale_shape(scales, n, k), None)
                        }
                    };
                    let sdt = recipe.fp8_scale_dtype(from);
                    let ow = push_out(&mut plan, names[0].clone(), Dtype::F8_E4M3, t.shape.clone());
                    let os = push_out(
                        &mut plan,
                        names[1].clone(),
                        Dtype::try_from(sdt).expect("float32 and 16-bit floats have tags"),
                        sshape,
                    );
                    (
                        Op::Fp8 {
                            from,
                            scales,
                            k,
                            sdt,
                            experts,
                        },
                        vec![ow, os],
                    )
                }
            };
            let rep = report(
                &mut part,
                &t.name,
                from.name(),
                quant_name(q),
                Action::Quantize,
                true,
            );
            recs.insert(t.name.clone(), recipe.record(q));
            quantized.insert(module_of(&t.name).to_string());
            let scale = mp.group_of.get(&(si, ti)).copied();
            jobs.push(job(ti, op, t.elements, outs, rep, scale));
            continue;
        }
        if from.is_some() && recipe.quantizes() {
            if let Some(m) = super::recipe::fused_experts_module(&t.name, &t.shape) {
                // A fused expert tensor left as it is: its experts module is
                // listed, so that servers do not take it for quantized.
                unquantized.insert(m.to_string());
            } else if t.shape.len() >= 2 && is_weight_name(&t.name) {
                unquantized.insert(module_of(&t.name).to_string());
            }
        }
        match op {
            Op::Copy => {
                let o = push_out(&mut plan, t.name.clone(), t.dtype, t.shape.clone());
                part.copied.push(t.name.clone());
                jobs.push(copy_job(fi, si, ti, t, o));
            }
            Op::Cast { from, to } => {
                let tag = Dtype::try_from(to).expect("checked");
                let o = push_out(&mut plan, t.name.clone(), tag, t.shape.clone());
                let r = report(
                    &mut part,
                    &t.name,
                    from.name(),
                    to.name(),
                    Action::Convert,
                    true,
                );
                jobs.push(job(ti, op, t.elements, vec![o], r, None));
            }
            _ => unreachable!("planned above"),
        }
    }
    // Output names must be unique (NAME_blocks may already exist).
    let mut seen = BTreeSet::new();
    for o in &plan.outs {
        if !seen.insert(o.name.as_str()) {
            return Err(Error::invalid(
                st.path(),
                format!(
                    "the output would hold two tensors named {}",
                    quoted(&o.name)
                ),
            ));
        }
    }
    // Layout: larger alignments first, then by name (as safetensors' writer).
    let mut order: Vec<usize> = (0..plan.outs.len()).collect();
    order.sort_by(|&a, &b| {
        (Reverse(plan.outs[a].dtype), &plan.outs[a].name)
            .cmp(&(Reverse(plan.outs[b].dtype), &plan.outs[b].name))
    });
    let mut off = 0usize;
    for &i in &order {
        plan.outs[i].offset = off;
        off += plan.outs[i].size;
    }
    plan.data_len = off;
    // The input's metadata in its order, ours last.
    let mut meta: Vec<(String, String)> = st
        .metadata_entries()
        .iter()
        .filter(|(k, _)| k != QUANT_KEY)
        .cloned()
        .collect();
    if !recs.is_empty() {
        meta.push((
            QUANT_KEY.to_string(),
            serde_json::to_string(&recs).expect("JSON serializes"),
        ));
    }
    let infos: Vec<(String, TensorInfo)> = order
        .iter()
        .map(|&i| {
            let o = &plan.outs[i];
            (
                o.name.clone(),
                TensorInfo {
                    dtype: o.dtype,
                    shape: o.shape.clone(),
                    data_offsets: (o.offset, o.offset + o.size),
                },
            )
        })
        .collect();
    // The safetensors crate checks the layout; the header is written by
    // `Header`, in a fixed order (its `HashMap` of metadata is not).
    Metadata::new(
        (!meta.is_empty()).then(|| meta.iter().cloned().collect()),
        infos.clone(),
    )
    .map_err(|e| Error::invalid(st.path(), format!("building the output header: {e}")))?;
    let mut header = serde_json::to_vec(&Header {
        meta: &meta,
        tensors: &infos,
    })
    .expect("JSON serializes");
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut h = (header.len() as u64).to_le_bytes().to_vec();
    h.extend(header);
    plan.header = h;
    Ok(Planned {
        plan,
        jobs,
        part,
        quantized,
        unquantized,
        dequantized,
    })
}

/// The largest [`Options::threads`]: four per available core.
pub fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Checks the options that do not depend on the input.
fn check_options(opts: &Options<'_>) -> Result<(), Error> {
    if let Target::Float(d) = opts.target {
        float_target(d)?;
    }
    if let Some(r) = opts.rest {
        float_target(r)?;
    }
    check_rounding(opts)?;
    let max = max_threads();
    if opts.threads > max {
        return Err(Error::usage(format!(
            "threads={} is more than {max} (four per available core); use 0 for one per core",
            opts.threads
        )));
    }
    if opts.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// Checks [`Options::rounding`], [`Options::seed`] and [`Options::sr_bits`]
/// against each other and the target.
fn check_rounding(opts: &Options<'_>) -> Result<(), Error> {
    let mode = opts.rounding;
    if mode.is_stochastic() && opts.seed.is_none() {
        return Err(Error::usage(format!(
            "rounding {mode} needs a seed (its random bits come from Philox4x32-10 keyed by it)"
        )));
    }
    if !mode.is_stochastic() && opts.seed.is_some() {
        return Err(Error::usage(format!(
            "rounding {mode} is deterministic: a seed is for the stochastic modes"
        )));
    }
    if opts.sr_bits.is_some() && opts.seed.is_none() {
        return Err(Error::usage(
            "sr_bits needs a stochastic rounding mode and a seed",
        ));
    }
    if let Some(b) = opts.sr_bits {
        if !(1..=32).contains(&b) {
            return Err(Error::usage(format!("sr_bits={b} is not in 1 to 32")));
        }
    }
    if opts.custom_rounding() {
        if let Target::Mx(MxFormat::Int8) = opts.target {
            return Err(Error::usage(format!(
                "rounding {mode} is not available for mxint8: its integer elements round to \
                 nearest even"
            )));
        }
    }
    Ok(())
}

fn make_pool(opts: &Options<'_>) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::usage(format!("cannot start {} threads: {e}", opts.threads)))
}

/// The resolved input, its recipe and model plan, and every shard's plan.
struct Prepared<'o, 'a> {
    src: Source,
    recipe: Recipe<'o, 'a>,
    mp: ModelPlan,
}

fn prepare<'o, 'a>(input: &Path, opts: &'o Options<'a>) -> Result<Prepared<'o, 'a>, Error> {
    check_options(opts)?;
    let src = resolve(input)?;
    let recipe = Recipe::new(opts, ModelInfo::read(src.dir.as_deref()))?;
    let mp = model_plan(&src.shards, &recipe);
    Ok(Prepared { src, recipe, mp })
}

/// Converts `input` to `output` (see the module documentation).
///
/// # Errors
///
/// [`Error::Usage`] for an unsupported request (a checkpoint format the
/// target cannot be written in included) or more than [`max_threads`]
/// threads, [`Error::Invalid`] / [`Error::Read`] for unusable inputs (all
/// checked before anything is written; a FIFO or device among them is
/// refused, not opened), [`Error::Read`] also when an input is truncated
/// while it is read, [`Error::Write`] when writing fails,
/// [`Error::Cancelled`] when [`Options::cancel`] was set or `progress` asked
/// to stop. On error nothing is left at `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<Summary, Error> {
    let Prepared { src, recipe, mp } = prepare(input, opts)?;
    let mut planned = src
        .shards
        .iter()
        .enumerate()
        .map(|(fi, (fname, st))| plan_file(fi, fi, fname, st, &recipe, &mp))
        .collect::<Result<Vec<_>, Error>>()?;

    // Stage the output.
    let input_paths: Vec<&Path> = src.shards.iter().map(|s| s.1.path()).collect();
    let staging = match &src.dir {
        None => Staging::file(output, &input_paths, opts.overwrite, None)?,
        Some(d) => Staging::dir(output, d, opts.overwrite)?,
    };
    let out_paths: Vec<PathBuf> = planned
        .iter()
        .map(|p| {
            if src.dir.is_none() {
                output.to_path_buf()
            } else {
                output.join(&p.plan.name)
            }
        })
        .collect();
    let mut handles = Vec::new();
    for p in &planned {
        handles.push(staging.create(&p.plan.name)?.1);
    }
    let shards: Vec<&SafetensorsFile> = src.shards.iter().map(|s| &s.1).collect();
    let pool = make_pool(opts)?;
    run_files(
        &shards,
        &mp,
        &mut planned,
        &handles,
        &out_paths,
        &pool,
        opts,
        progress,
    )?;
    drop(handles);
    let mut summary = merge_parts(&recipe, &mut planned);
    if let Some(dir) = &src.dir {
        if opts.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        model_files(
            &src,
            dir,
            &planned,
            &recipe,
            &|name| staging.path_of(name),
            output,
            &mut summary,
        )?;
    }
    if opts.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    staging.commit(opts.fsync)?;
    Ok(summary)
}

/// The names of the shards of a model directory or index (a one-element
/// list of the file name for a single file), in the order [`convert`]
/// writes them.
///
/// # Errors
///
/// As the reading half of [`convert`]: every shard's header is validated.
pub fn shards(input: &Path) -> Result<Vec<String>, Error> {
    Ok(resolve(input)?.shards.into_iter().map(|s| s.0).collect())
}

/// A 64-bit FNV-1a hash, as 16 hexadecimal digits: the tag of a shard's
/// temporary files, from its planned header, so [`finish_shards`] tells the
/// temporaries of this conversion from any other file.
fn tag_of(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Converts one shard of a sharded checkpoint (a model directory or an
/// index) into `output_dir/SHARD`, for distributing a conversion (one task
/// per shard, e.g. on Ray): with the same `opts`, the file is byte-identical
/// to the one [`convert`] writes (tensor scales shared with tensors of other
/// shards are computed from those tensors too; see the module
/// documentation). The file is written beside its destination as
/// `.SHARD.TAG.XXXXXX.mldtypes-partial` (`TAG`: a hash of the shard's
/// planned header, by which [`finish_shards`] recognizes temporaries of this
/// conversion left by a killed task) and renamed into place; `output_dir` is
/// created if missing. When every shard is written, [`finish_shards`] writes
/// the index, `config.json` and the other files.
///
/// An existing `output_dir/SHARD` is refused unless [`Options::overwrite`]
/// is set; with it, the output's index file (if any) is removed first, so
/// an index is present only while the shards match it.
///
/// Returns the shard's part of the [`Summary`].
///
/// # Errors
///
/// As [`convert`]; [`Error::Usage`] when `shard` is not one of
/// [`shards`]`(input)`, or `output_dir/SHARD` exists and `overwrite` is not
/// set.
///
/// # Examples
///
/// ```
/// use mldtypes::checkpoint::{self, Options, Target};
/// use mldtypes::dtype::DType;
/// # let dir = tempfile::tempdir().unwrap();
/// # let model = dir.path().join("model");
/// # std::fs::create_dir(&model).unwrap();
/// let x: Vec<u8> = [1.0f32, 0.1].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &x).unwrap();
/// safetensors::serialize_to_file([("w", view)], None, &model.join("a.safetensors")).unwrap();
///
/// let opts = Options::new(Target::Float(DType::BFloat16));
/// let (local, spread) = (dir.path().join("local"), dir.path().join("spread"));
/// checkpoint::convert(&model, &local, &opts, &()).unwrap();
/// for shard in checkpoint::shards(&model).unwrap() {
///     checkpoint::convert_shard(&model, &shard, &spread, &opts, &()).unwrap();
/// }
/// checkpoint::finish_shards(&model, &spread, &opts).unwrap();
/// let read = |d: &std::path::Path| std::fs::read(d.join("a.safetensors")).unwrap();
/// assert_eq!(read(&local), read(&spread));
/// // A second run into the same directory is refused without overwrite.
/// assert!(checkpoint::convert_shard(&model, "a.safetensors", &spread, &opts, &()).is_err());
/// ```
pub fn convert_shard(
    input: &Path,
    shard: &str,
    output_dir: &Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<Summary, Error> {
    let Prepared { src, recipe, mp } = prepare(input, opts)?;
    if src.dir.is_none() {
        return Err(Error::usage(format!(
            "{} is a single file; convert_shard needs a model directory or an index",
            input.display()
        )));
    }
    let Some(fi) = src.shards.iter().position(|s| s.0 == shard) else {
        return Err(Error::usage(format!(
            "{} has no shard {}; its shards: {}",
            input.display(),
            quoted(shard),
            src.shards
                .iter()
                .map(|s| s.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let (fname, st) = &src.shards[fi];
    let mut planned = vec![plan_file(0, fi, fname, st, &recipe, &mp)?];
    std::fs::create_dir_all(output_dir).map_err(|e| Error::write_io(output_dir, e))?;
    let dest = output_dir.join(fname);
    if std::fs::symlink_metadata(&dest).is_ok() && !opts.overwrite {
        return Err(Error::usage(format!(
            "{} exists; pass --overwrite (Python overwrite=True) to replace it",
            dest.display()
        )));
    }
    let tag = tag_of(&planned[0].plan.header);
    let staging = Staging::file(&dest, &[st.path()], opts.overwrite, Some(&tag))?;
    if opts.overwrite {
        if let Some((iname, _)) = &src.index {
            let index = output_dir.join(iname);
            if std::fs::symlink_metadata(&index).is_ok_and(|m| m.is_file()) {
                std::fs::remove_file(&index).map_err(|e| Error::write_io(&index, e))?;
            }
        }
    }
    let handles = vec![staging.create(fname)?.1];
    let shards: Vec<&SafetensorsFile> = src.shards.iter().map(|s| &s.1).collect();
    let pool = make_pool(opts)?;
    run_files(
        &shards,
        &mp,
        &mut planned,
        &handles,
        std::slice::from_ref(&dest),
        &pool,
        opts,
        progress,
    )?;
    drop(handles);
    let summary = merge_parts(&recipe, &mut planned);
    if opts.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    staging.commit(opts.fsync)?;
    Ok(summary)
}

/// Completes a conversion done shard by shard with [`convert_shard`]: checks
/// that every shard of `output_dir` is the one the plan for `opts` expects
/// (its header byte for byte, its size), removes the temporaries of this
/// conversion that killed or failed tasks left (`.SHARD.TAG.…
/// .mldtypes-partial`, recognized by the tag of each shard's planned
/// header; other files, other conversions' temporaries included, are left
/// alone and named in the summary's warnings), then writes the index,
/// `config.json` and copies of the model directory's other files, as
/// [`convert`] does (the index last, so its presence means the model is
/// complete). Run it once no task of the conversion is running.
///
/// Returns the [`Summary`] without tensors: `files`, `copied_files`,
/// `warnings`.
///
/// # Errors
///
/// As [`convert`]; [`Error::Invalid`] naming every shard of `output_dir`
/// that is missing, and a shard that was written with other options or
/// not completely.
pub fn finish_shards(
    input: &Path,
    output_dir: &Path,
    opts: &Options<'_>,
) -> Result<Summary, Error> {
    let Prepared { src, recipe, mp } = prepare(input, opts)?;
    let Some(dir) = &src.dir else {
        return Err(Error::usage(format!(
            "{} is a single file; finish_shards needs a model directory or an index",
            input.display()
        )));
    };
    let planned = src
        .shards
        .iter()
        .enumerate()
        .map(|(fi, (fname, st))| plan_file(fi, fi, fname, st, &recipe, &mp))
        .collect::<Result<Vec<_>, Error>>()?;
    let missing: Vec<&str> = planned
        .iter()
        .map(|p| p.plan.name.as_str())
        .filter(|n| std::fs::symlink_metadata(output_dir.join(n)).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(Error::invalid(
            output_dir,
            format!(
                "{} of the {} shards {} missing: {} (convert them with convert_shard first)",
                missing.len(),
                planned.len(),
                if missing.len() == 1 { "is" } else { "are" },
                missing.join(", ")
            ),
        ));
    }
    for p in &planned {
        let path = output_dir.join(&p.plan.name);
        let want = (p.plan.header.len() + p.plan.data_len) as u64;
        let f = super::reader::open_regular(&path)?;
        let len = f.metadata().map_err(|e| Error::read(&path, e))?.len();
        let mut head = vec![0u8; p.plan.header.len()];
        let same = len == want && read_exact_at(&f, &mut head, 0).is_ok() && head == p.plan.header;
        if !same {
            return Err(Error::invalid(
                &path,
                "is not the shard convert_shard writes with these options (a different target, \
                 selection or input, or an unfinished write)",
            ));
        }
    }
    let mut summary = Summary {
        target: opts.target.name().to_string(),
        ..Summary::default()
    };
    // Temporaries of this conversion: `.SHARD.TAG.` of a planned shard, or
    // the finishing directory of the same tags.
    let finish_tag = tag_of(
        &planned
            .iter()
            .flat_map(|p| p.plan.header.iter().copied())
            .collect::<Vec<u8>>(),
    );
    let ours: BTreeSet<String> = planned
        .iter()
        .map(|p| format!(".{}.{}.", prefix_name(&p.plan.name), tag_of(&p.plan.header)))
        .chain([format!(".finish.{finish_tag}.")])
        .collect();
    remove_our_partials(output_dir, &ours, &mut summary)?;
    let stage = tempfile::Builder::new()
        .prefix(&format!(".finish.{finish_tag}."))
        .suffix(super::output::PARTIAL_SUFFIX)
        .tempdir_in(output_dir)
        .map_err(|e| Error::write_io(output_dir, e))?;
    model_files(
        &src,
        dir,
        &planned,
        &recipe,
        &|name| stage.path().join(name),
        output_dir,
        &mut summary,
    )?;
    // Into place: the other files first, the index last.
    let index = src.index.as_ref().map(|i| i.0.clone());
    let mut names: Vec<String> = summary.copied_files.clone();
    names.extend(index);
    for name in &names {
        let to = output_dir.join(name);
        if let Ok(m) = std::fs::symlink_metadata(&to) {
            if !opts.overwrite || m.is_dir() {
                return Err(Error::usage(format!(
                    "{} exists; pass --overwrite (Python overwrite=True) to replace it",
                    to.display()
                )));
            }
        }
        std::fs::rename(stage.path().join(name), &to).map_err(|e| Error::write_io(&to, e))?;
    }
    summary.files = planned.iter().map(|p| p.plan.name.clone()).collect();
    Ok(summary)
}

/// The file name as a temporary's prefix holds it (the first 100
/// characters).
fn prefix_name(name: &str) -> String {
    name.chars().take(100).collect()
}

/// Removes the temporaries of `output_dir` whose names start with one of
/// `ours`; other temporaries are named in a warning.
fn remove_our_partials(
    output_dir: &Path,
    ours: &BTreeSet<String>,
    summary: &mut Summary,
) -> Result<(), Error> {
    let entries = std::fs::read_dir(output_dir).map_err(|e| Error::read(output_dir, e))?;
    let mut others = Vec::new();
    for e in entries {
        let e = e.map_err(|e| Error::read(output_dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(super::output::PARTIAL_SUFFIX) {
            continue;
        }
        let path = e.path();
        if ours.iter().any(|p| name.starts_with(p.as_str())) {
            let m = std::fs::symlink_metadata(&path).map_err(|e| Error::read(&path, e))?;
            let r = if m.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            match r {
                Ok(()) => summary.removed_partials.push(name),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::write_io(&path, e)),
            }
        } else {
            others.push(name);
        }
    }
    if !others.is_empty() {
        others.sort();
        summary.warnings.push(format!(
            "{} holds temporaries of another conversion, left alone: {}",
            output_dir.display(),
            others.join(", ")
        ));
    }
    Ok(())
}

/// Writes the headers and runs the jobs of `planned` (job inputs are in
/// `shards`, every source shard of the model; file `i` is written to
/// `handles[i]`, named `out_paths[i]` in messages), merging each job's
/// statistics into its file's summary part.
#[allow(clippy::too_many_arguments)]
fn run_files(
    shards: &[&SafetensorsFile],
    mp: &ModelPlan,
    planned: &mut [Planned],
    handles: &[File],
    out_paths: &[PathBuf],
    pool: &rayon::ThreadPool,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<(), Error> {
    for (i, p) in planned.iter_mut().enumerate() {
        let f = &p.plan;
        let werr = |e: std::io::Error| Error::write_io(&out_paths[i], e);
        handles[i]
            .set_len((f.header.len() + f.data_len) as u64)
            .map_err(werr)?;
        write_at(&handles[i], &f.header, 0).map_err(werr)?;
        p.part.bytes_written += (f.header.len() + f.data_len) as u64;
    }
    let jobs: Vec<&Job> = planned.iter().flat_map(|p| &p.jobs).collect();
    let cancel = &opts.cancel;

    // Tensor scales: the largest finite magnitude of every member of the
    // groups these jobs use, wherever the member is stored.
    let needed: BTreeSet<usize> = jobs
        .iter()
        .filter_map(|j| j.scale.map(|g| g..g + j.op.scale_groups(j.units)))
        .flatten()
        .collect();
    let mut scans: Vec<(usize, Member, usize, usize)> = Vec::new();
    for &g in &needed {
        for m in &mp.groups[g] {
            let (mut s, n) = m
                .range
                .unwrap_or((0, shards[m.shard].tensors()[m.tensor].elements));
            while s < n {
                let e = (s + CHUNK).min(n);
                scans.push((g, *m, s, e));
                s = e;
            }
        }
    }
    let parts: Vec<(usize, f64)> = pool.install(|| {
        scans
            .par_iter()
            .map(|&(g, m, s, e)| {
                if cancel.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                let st = shards[m.shard];
                let t = &st.tensors()[m.tensor];
                Ok((g, finite_amax(st, t, m.from, s, e)?))
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    let mut amax = vec![0f64; mp.groups.len()];
    for (g, a) in parts {
        amax[g] = amax[g].max(a);
    }

    // The chunks.
    let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
    for (ji, j) in jobs.iter().enumerate() {
        let r = j.op.cut().ranges(j.units);
        if r.is_empty() && j.op.has_tensor_scale() {
            // An empty tensor still gets its tensor scale.
            chunks.push((ji, 0, 0));
        }
        chunks.extend(r.into_iter().map(|(s, e)| (ji, s, e)));
    }
    let in_bytes = |j: &Job, s: usize, e: usize| -> u64 {
        let t = &shards[j.shard].tensors()[j.input];
        match j.op {
            Op::Copy => (e - s) as u64,
            _ => {
                let total = (t.offsets.1 - t.offsets.0) as u64;
                if j.units == 0 {
                    0
                } else {
                    total * (e - s) as u64 / j.units as u64
                }
            }
        }
    };
    let total_in: u64 = jobs.iter().map(|j| in_bytes(j, 0, j.units)).sum();
    let reads: Vec<u64> = planned
        .iter()
        .map(|p| p.jobs.iter().map(|j| in_bytes(j, 0, j.units)).sum())
        .collect();
    progress.start(total_in);
    let stop = AtomicBool::new(false);
    let run = || -> Result<Vec<(usize, Stats)>, Error> {
        chunks
            .par_iter()
            .with_max_len(1)
            .map(|&(ji, s, e)| {
                if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                let j = jobs[ji];
                let plan = &planned[j.file].plan;
                let data_start = plan.header.len();
                let offs: Vec<usize> = j
                    .outs
                    .iter()
                    .map(|&o| data_start + plan.outs[o].offset)
                    .collect();
                let st = shards[j.shard];
                let a = j.scale.map_or(0.0, |g| amax[g + j.op.expert_of(s)]);
                let stats = SCRATCH
                    .with(|sc| {
                        let out = &handles[j.file];
                        run_chunk(&mut sc.borrow_mut(), j, st, out, &offs, s, e, opts, a)
                    })
                    .map_err(|e| match e {
                        Error::Write { source, .. } => Error::Write {
                            path: out_paths[j.file].clone(),
                            source,
                        },
                        e => e,
                    })?;
                if !progress.advance(in_bytes(j, s, e)) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(Error::Cancelled);
                }
                Ok((ji, stats))
            })
            .collect()
    };
    let results = pool.install(run);
    progress.finish();
    let results = results?;
    let owner: Vec<(usize, Option<usize>)> = jobs.iter().map(|j| (j.file, j.report)).collect();
    for (p, r) in planned.iter_mut().zip(reads) {
        p.part.bytes_read = r;
    }
    for (ji, s) in results {
        if let (f, Some(r)) = owner[ji] {
            if let Some(st) = planned[f].part.tensors[r].stats.as_mut() {
                st.merge(&s);
            }
        }
    }
    Ok(())
}

/// The summary of `planned`'s parts in file order: totals, and a warning per
/// tensor with values overflowing to inf / NaN.
fn merge_parts(recipe: &Recipe<'_, '_>, planned: &mut [Planned]) -> Summary {
    let opts = recipe.opts;
    let mut summary = Summary {
        target: opts.target.name().to_string(),
        format: recipe.format.map(|f| f.name().to_string()),
        ..Summary::default()
    };
    for p in planned.iter_mut() {
        let part = std::mem::take(&mut p.part);
        summary.files.push(p.plan.name.clone());
        summary.tensors.extend(part.tensors);
        summary.copied.extend(part.copied);
        summary.warnings.extend(part.warnings);
        summary.bytes_read += part.bytes_read;
        summary.bytes_written += part.bytes_written;
    }
    for r in &summary.tensors {
        if let Some(s) = &r.stats {
            summary.total.merge(s);
            if s.overflow_to_nonfinite > 0 && matches!(opts.target, Target::Float(_)) {
                summary.warnings.push(format!(
                    "tensor {}: {} finite value(s) overflowed to inf/NaN in {}; the saturating \
                     conversion (`--saturate`, Python `saturate=True`) clamps them to ±max instead",
                    quoted(&r.name),
                    s.overflow_to_nonfinite,
                    r.to
                ));
            }
        }
    }
    let quantized: BTreeSet<String> = planned
        .iter()
        .flat_map(|p| p.quantized.iter().cloned())
        .collect();
    summary.warnings.extend(recipe.warnings(&quantized));
    summary
}

/// Writes the index, `config.json`, the recipe's other configuration files
/// and the other files of model directory `dir` for the output files
/// `planned`, each at `staged(name)` (`output` names the destination in
/// messages).
fn model_files(
    src: &Source,
    dir: &Path,
    planned: &[Planned],
    recipe: &Recipe<'_, '_>,
    staged: &dyn Fn(&str) -> PathBuf,
    output: &Path,
    summary: &mut Summary,
) -> Result<(), Error> {
    let opts = recipe.opts;
    if let Some((iname, json)) = &src.index {
        let mut json = json.clone();
        // The weight map sorted by tensor name; the index's other keys keep
        // their order.
        let mut names: BTreeMap<&str, &str> = BTreeMap::new();
        for p in planned {
            for o in &p.plan.outs {
                names.insert(&o.name, &p.plan.name);
            }
        }
        let wm = names
            .into_iter()
            .map(|(k, v)| (k.to_string(), Json::Scalar(json!(v))))
            .collect();
        let total: usize = planned.iter().map(|p| p.plan.data_len).sum();
        json.set("weight_map", Json::Object(wm));
        json.object_at("metadata")
            .set("total_size", Json::Scalar(json!(total)));
        write_json(&staged(iname), &json, &output.join(iname))?;
    }
    let dequantized = planned.iter().any(|p| p.dequantized);
    let quantized: BTreeSet<String> = planned
        .iter()
        .flat_map(|p| p.quantized.iter().cloned())
        .collect();
    let unquantized: BTreeSet<String> = planned
        .iter()
        .flat_map(|p| p.unquantized.iter().cloned())
        .collect();
    let extra = recipe.extra_files(&unquantized, &quantized);
    // A conversion that dequantizes or quantizes replaces the input's
    // quantization descriptions.
    let replaced = dequantized || !quantized.is_empty();
    for name in &src.others {
        if opts.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if recipe.dropped_file(name) && (replaced || extra.iter().any(|(n, _)| n == name)) {
            continue;
        }
        if name == "config.json" {
            if let Some(c) = updated_config(
                &dir.join(name),
                recipe,
                dequantized,
                &quantized,
                &unquantized,
            ) {
                write_json(&staged(name), &c, &output.join(name))?;
                summary.copied_files.push(name.clone());
                continue;
            }
        }
        copy_tree(&dir.join(name), &staged(name))
            .map_err(|e| Error::write_io(&output.join(name), e))?;
        summary.copied_files.push(name.clone());
    }
    for (name, v) in extra {
        write_json(&staged(name), &Json::from_value(v), &output.join(name))?;
        summary.copied_files.push(name.to_string());
    }
    summary.copied_files.sort();
    Ok(())
}

fn copy_job(file: usize, shard: usize, input: usize, t: &TensorEntry, out: usize) -> Job {
    Job {
        file,
        shard,
        input,
        op: Op::Copy,
        units: t.offsets.1 - t.offsets.0,
        outs: vec![out],
        report: None,
        scale: None,
    }
}

fn write_json(path: &Path, v: &Json, dest: &Path) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(v).expect("JSON serializes");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| Error::write_io(dest, e))
}

/// Sets `torch_dtype` and `dtype` (transformers 4's and 5's keys; 5 reads
/// `dtype` first) to `d`.
fn set_dtype(c: &mut Json, d: DType) {
    for key in ["torch_dtype", "dtype"] {
        c.set(key, Json::Scalar(json!(d.name())));
    }
}

/// `config.json` with the dtype and `quantization_config` updated (its keys
/// in their order, new ones last), or `None` to copy it unchanged (not a
/// JSON object).
fn updated_config(
    path: &Path,
    recipe: &Recipe<'_, '_>,
    dequantized: bool,
    quantized: &BTreeSet<String>,
    unquantized: &BTreeSet<String>,
) -> Option<Json> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut c: Json = serde_json::from_str(&text).ok()?;
    if !matches!(c, Json::Object(_)) {
        return None;
    }
    match recipe.opts.target {
        Target::Float(d) => {
            set_dtype(&mut c, d);
            if dequantized {
                c.remove("quantization_config");
            }
        }
        _ => {
            if let Some(q) = recipe.quantization_config(unquantized, quantized) {
                if let Some(r) = recipe.opts.rest {
                    set_dtype(&mut c, r);
                }
                c.set("quantization_config", Json::from_value(q));
            }
        }
    }
    Some(c)
}

fn write_at(f: &File, buf: &[u8], off: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(f, buf, off)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_write(f, &buf[done..], off + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            done += n;
        }
        Ok(())
    }
}

/// The largest magnitude of the finite values of each segment of `seg`
/// elements of `x` (the last may be shorter) into `out` (resized).
fn seg_amaxes<T: mx::BlockSource>(x: &[T], seg: usize, out: &mut Vec<f64>) {
    let n = x.len().div_ceil(seg.max(1));
    out.clear();
    match T::as_f32(x) {
        Some(x) => {
            let mut m = vec![0f32; n];
            mx::segment_amax(x, seg.max(1), &mut m);
            out.extend(m.iter().map(|v| *v as f64));
        }
        None => out.extend(x.chunks(seg.max(1)).map(|c| {
            c.iter()
                .map(|v| v.to_f64().abs())
                .filter(|a| a.is_finite())
                .fold(0f64, f64::max)
        })),
    }
}

/// FP8 quantization of a chunk `x` of whole rows of `k` (bands of 128 rows
/// for block scales) with tensor amax `amax`: codes to `codes`, the chunk's
/// scale values to `sv`.
#[allow(clippy::too_many_arguments)]
fn fp8_chunk<T: mx::BlockSource>(
    x: &[T],
    scales: Fp8Scales,
    k: usize,
    sdt: DType,
    amax: f64,
    rounding: Option<&Rounding<'_>>,
    codes: &mut [u8],
    sv: &mut Vec<f64>,
    acc: &mut mx::ErrLanes,
) -> Result<u64, mx::BlockError> {
    // Elements `off ..` of the chunk, `seg` per scale; the custom rounding
    // numbers them from the chunk's first element.
    let quantize =
        |x: &[T], seg: usize, sv: &[f64], codes: &mut [u8], off: usize, acc: &mut mx::ErrLanes| {
            match rounding {
                None => mx::fp8_quantize_stats(x, seg, sv, codes, acc),
                Some(r) => {
                    let r = r.part(off, off + x.len());
                    mx::fp8_quantize_rounded_stats(x, seg, sv, &r, codes, acc)
                }
            }
        };
    sv.clear();
    match scales {
        Fp8Scales::Tensor => {
            sv.push(mx::fp8_scale(amax, sdt));
            if x.is_empty() {
                return Ok(0);
            }
            quantize(x, x.len(), sv, codes, 0, acc)
        }
        Fp8Scales::Channel => {
            let mut m = Vec::new();
            seg_amaxes(x, k, &mut m);
            sv.extend(m.iter().map(|a| mx::fp8_scale(*a, sdt)));
            quantize(x, k, sv, codes, 0, acc)
        }
        Fp8Scales::Block => {
            let b = FP8_BLOCK;
            let ib = k.div_ceil(b);
            let mut clipped = 0;
            let mut band_scales = vec![0f64; ib];
            let mut m = Vec::new();
            for (bi, band) in x.chunks(b * k).enumerate() {
                // Each row's column blocks, then the largest over the band.
                let mut bm = vec![0f64; ib];
                for row in band.chunks(k) {
                    seg_amaxes(row, b, &mut m);
                    for (a, v) in bm.iter_mut().zip(&m) {
                        *a = a.max(*v);
                    }
                }
                for (s, a) in band_scales.iter_mut().zip(&bm) {
                    *s = mx::fp8_scale(*a, sdt);
                }
                sv.extend_from_slice(&band_scales);
                for (ri, row) in band.chunks(k).enumerate() {
                    let off = bi * b * k + ri * k;
                    clipped += quantize(row, b, &band_scales, &mut codes[off..off + k], off, acc)?;
                }
            }
            Ok(clipped)
        }
    }
}

/// The float8_e4m3fn values of the 256 codes.
fn e4m3_table() -> [f64; 256] {
    std::array::from_fn(|c| crate::float::core::decode_f64(&crate::format::FLOAT8_E4M3FN, c as u32))
}

/// Converts elements `s..e` of job `j` with the thread's buffers `sc`;
/// `amax` is the largest finite magnitude of the job's tensor-scale group.
#[allow(clippy::too_many_arguments)]
fn run_chunk(
    sc: &mut Scratch,
    j: &Job,
    st: &SafetensorsFile,
    out: &File,
    offs: &[usize],
    s: usize,
    e: usize,
    opts: &Options<'_>,
    amax: f64,
) -> Result<Stats, Error> {
    let t = &st.tensors()[j.input];
    let werr = |e: std::io::Error| Error::write_io(st.path(), e);
    let berr = |e: mx::BlockError| Error::usage(e.to_string());
    let Scratch {
        inb,
        x32,
        out: obuf,
        scales: sbuf,
        xs: xsb,
        ys: ysb,
        fa,
        fb,
        t32,
        tb,
        sv,
    } = sc;
    let n = e - s;
    let mut stats = Stats::default();
    match j.op {
        Op::Copy => {
            let src = st.read(t, s, e, inb)?;
            write_at(out, src, (offs[0] + s) as u64).map_err(werr)?;
        }
        Op::Cast { from, to } => {
            let src = st.read(t, sb(from, s), sb(from, e), inb)?;
            let dst = grow(obuf, sb(to, n));
            let limit = OverflowLimit::of(to);
            let rnd =
                (opts.custom_rounding() && to != DType::Float64).then(|| opts.rounding_of(&t.name));
            let mut acc = mx::ErrLanes::default();
            // A part at a time: cast, decode the result to float32, compare
            // with the original (both still in the cache). The parts start
            // at multiples of 8, so element i is in lane i % 8 throughout.
            let mut a = 0;
            while a < n {
                let b = (a + SUB).min(n);
                let x = &src[sb(from, a)..sb(from, b)];
                let y = &mut dst[sb(to, a)..sb(to, b)];
                match &rnd {
                    Some(r) => round_storage(x, from, y, to, &r.part(s + a, s + b))?,
                    None => cast_storage(x, from, y, to, opts.overflow)?,
                }
                let (thr, tie) = (limit.threshold, limit.tie_overflows);
                if from == DType::Float64 {
                    // Compared in float64: a float32 copy would round the
                    // originals (and turn those beyond float32's range into
                    // infinities).
                    let xs = as_f64(x, from, b - a, fa)?;
                    let ys = grow(fb, b - a);
                    let yv = bytemuck::cast_slice_mut(ys);
                    cast_storage(y, to, yv, DType::Float64, Overflow::NonSaturating)?;
                    acc.cast_slices_f64(xs, ys, thr, tie);
                } else {
                    let ys = grow(ysb, b - a);
                    let yv = bytemuck::cast_slice_mut(ys);
                    cast_storage(y, to, yv, DType::Float32, Overflow::NonSaturating)?;
                    let xs = as_f32(x, from, xsb)?;
                    mx::cast_stats(xs, ys, thr, tie, &mut acc);
                }
                a = b;
            }
            write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
            stats.add_lanes(n, &acc);
        }
        Op::Mx { from, fmt, tr } => {
            let bb = fmt.block_bytes();
            // The chunk's elements in the order they are blocked: the input
            // as read, or (transposed) columns of the input gathered into
            // rows.
            let (src, rows, k, row0) = match tr {
                None => (st.read(t, sb(from, s), sb(from, e), inb)?, 0, 0, 0),
                Some(Mat { k, n: cols }) => {
                    let (row0, rows) = (s / k, n / k);
                    let (m, c0) = (row0 / cols, row0 % cols);
                    let w = from.itemsize();
                    let raw =
                        st.read_strided(t, (m * k * cols + c0) * w, cols * w, k, rows * w, inb)?;
                    (raw, rows, k, row0)
                }
            };
            let nb = n / MX_BLOCK;
            let blocks = grow(obuf, nb * bb);
            let scales = grow(sbuf, nb);
            let mut acc = mx::ErrLanes::default();
            let first = if tr.is_some() { row0 * k } else { s };
            let counts = if opts.custom_rounding() {
                // Elements rounded with the mode, numbered in the blocked
                // order; statistics against the exact dequantized values.
                let r = opts.rounding_of(&t.name);
                let r = r.part(first, first + n);
                let mut x: Vec<f64> = as_f64(src, from, n, fa)?.to_vec();
                if tr.is_some() {
                    let mut xt = vec![0f64; n];
                    transpose(&x, k, rows, &mut xt);
                    x = xt;
                }
                let c = mx::quantize_rounded(&x, fmt, opts.scale_rule, &r, blocks, scales)
                    .map_err(berr)?;
                let mut y = vec![0f64; n];
                mx::dequantize_f64(blocks, scales, fmt, &mut y).map_err(berr)?;
                mx::exact_stats(&x, &y, &mut acc);
                c
            } else if from == DType::Float64 {
                let mut x = as_f64(src, from, n, fa)?;
                if tr.is_some() {
                    let xt = grow(fb, n);
                    transpose(x, k, rows, xt);
                    x = xt;
                }
                let c = mx::quantize(x, fmt, opts.scale_rule, blocks, scales).map_err(berr)?;
                let mut y = vec![0f64; n];
                mx::dequantize_f64(blocks, scales, fmt, &mut y).map_err(berr)?;
                mx::exact_stats(x, &y, &mut acc);
                c
            } else {
                // Every narrower float is exact in float32: the vectorized
                // path, statistics in the same pass.
                let mut x = as_f32(src, from, x32)?;
                if tr.is_some() {
                    let xt = grow(t32, n);
                    transpose(x, k, rows, xt);
                    x = xt;
                }
                mx::quantize_stats(x, fmt, opts.scale_rule, blocks, scales, &mut acc)
                    .map_err(berr)?
            };
            write_at(out, blocks, (offs[0] + first / MX_BLOCK * bb) as u64).map_err(werr)?;
            write_at(out, scales, (offs[1] + first / MX_BLOCK) as u64).map_err(werr)?;
            stats.add_lanes(n, &acc);
            stats.clipped += counts.clipped;
        }
        Op::Nvfp4 { from, cols } => {
            let src = st.read(t, sb(from, s), sb(from, e), inb)?;
            let s2 = mx::nvfp4_tensor_scale(amax);
            let packed = grow(obuf, n / 2);
            let scales = grow(sbuf, n / NVFP4_BLOCK);
            let mut acc = mx::ErrLanes::default();
            // Blocked along the second-to-last axis: the band of rows
            // transposed, quantized along its new rows, transposed back.
            let clipped = if opts.custom_rounding() {
                // Elements numbered row-major in the stored layout: a
                // transposed band takes its numbers transposed with it.
                let r = opts.rounding_of(&t.name).part(s, e);
                let mut x = as_f64(src, from, n, fa)?;
                let mut numbers = Vec::new();
                let r = match (cols, r.random.sr_bits()) {
                    (None, _) => r,
                    (Some(c), sr_bits) => {
                        let xt = grow(fb, n);
                        transpose(x, n / c, c, xt);
                        x = xt;
                        match sr_bits {
                            None => r,
                            Some(b) => {
                                let stored: Vec<u32> = (0..n).map(|i| r.number(i)).collect();
                                numbers.resize(n, 0);
                                transpose(&stored, n / c, c, &mut numbers);
                                r.with_bits(RandomBits::U32(&numbers), b)
                            }
                        }
                    }
                };
                let c = mx::nvfp4_quantize_rounded(x, s2, &r, packed, scales).map_err(berr)?;
                let mut y = vec![0f64; n];
                mx::nvfp4_dequantize_f64(packed, scales, s2, &mut y).map_err(berr)?;
                mx::exact_stats(x, &y, &mut acc);
                Ok(c)
            } else if from == DType::Float64 {
                let mut x = as_f64(src, from, n, fa)?;
                if let Some(c) = cols {
                    let xt = grow(fb, n);
                    transpose(x, n / c, c, xt);
                    x = xt;
                }
                mx::nvfp4_quantize_stats(x, s2, packed, scales, &mut acc)
            } else {
                let mut x = as_f32(src, from, x32)?;
                if let Some(c) = cols {
                    let xt = grow(t32, n);
                    transpose(x, n / c, c, xt);
                    x = xt;
                }
                mx::nvfp4_quantize_stats(x, s2, packed, scales, &mut acc)
            }
            .map_err(berr)?;
            match cols {
                None => {
                    write_at(out, packed, (offs[0] + s / 2) as u64).map_err(werr)?;
                    write_at(out, scales, (offs[1] + s / NVFP4_BLOCK) as u64).map_err(werr)?;
                }
                Some(c) => {
                    let h = n / c;
                    let buf = grow(tb, n / 2 + n / NVFP4_BLOCK);
                    let (pt, st_) = buf.split_at_mut(n / 2);
                    transpose(packed, c, h / 2, pt);
                    transpose(scales, c, h / NVFP4_BLOCK, st_);
                    write_at(out, pt, (offs[0] + s / 2) as u64).map_err(werr)?;
                    write_at(out, st_, (offs[1] + s / NVFP4_BLOCK) as u64).map_err(werr)?;
                }
            }
            if s == 0 {
                write_at(out, &s2.to_le_bytes(), offs[2] as u64).map_err(werr)?;
            }
            stats.add_lanes(n, &acc);
            stats.clipped += clipped;
        }
        Op::Fp8 {
            from,
            scales,
            k,
            sdt,
            experts,
        } => {
            let src = st.read(t, sb(from, s), sb(from, e), inb)?;
            let codes = grow(obuf, n);
            let mut acc = mx::ErrLanes::default();
            // One scale per fused expert: the chunk (within one expert)
            // scaled as a tensor by its expert's amax.
            let per_expert = scales == Fp8Scales::Channel && experts.is_some();
            let how = if per_expert {
                Fp8Scales::Tensor
            } else {
                scales
            };
            // Elements numbered row-major from the chunk's first.
            let r = opts
                .custom_rounding()
                .then(|| opts.rounding_of(&t.name).part(s, e));
            let clipped = if from == DType::Float64 {
                let x = as_f64(src, from, n, fa)?;
                fp8_chunk(x, how, k, sdt, amax, r.as_ref(), codes, sv, &mut acc)
            } else {
                let x = as_f32(src, from, x32)?;
                fp8_chunk(x, how, k, sdt, amax, r.as_ref(), codes, sv, &mut acc)
            }
            .map_err(berr)?;
            write_at(out, codes, (offs[0] + s) as u64).map_err(werr)?;
            tb.clear();
            for v in sv.iter() {
                scale_bytes(*v, sdt, tb);
            }
            let w = sdt.itemsize();
            let at = match (scales, experts) {
                (Fp8Scales::Tensor, _) => (s == 0).then_some(0),
                (Fp8Scales::Channel, Some(m)) => s.is_multiple_of(m * k).then(|| s / (m * k) * w),
                (Fp8Scales::Channel, None) => Some(s / k * w),
                (Fp8Scales::Block, None) => Some(s / k / FP8_BLOCK * k.div_ceil(FP8_BLOCK) * w),
                (Fp8Scales::Block, Some(rows)) => {
                    // The chunk's bands (of one expert) hold scales
                    // [band][out block]; the file holds them [out block]
                    // [band] per expert: one run of bands per out block.
                    let (r0, ob, ib) = (s / k, k.div_ceil(FP8_BLOCK), rows.div_ceil(FP8_BLOCK));
                    let (base, band0) = (r0 / rows * ob * ib, r0 % rows / FP8_BLOCK);
                    let nb = sv.len() / ob.max(1);
                    for c in 0..ob {
                        let mut bytes = Vec::with_capacity(nb * w);
                        for b in 0..nb {
                            bytes.extend_from_slice(&tb[(b * ob + c) * w..(b * ob + c + 1) * w]);
                        }
                        let at = (base + c * ib + band0) * w;
                        write_at(out, &bytes, (offs[1] + at) as u64).map_err(werr)?;
                    }
                    None
                }
            };
            if let Some(at) = at {
                write_at(out, tb, (offs[1] + at) as u64).map_err(werr)?;
            }
            stats.add_lanes(n, &acc);
            stats.clipped += clipped;
        }
        Op::MxDequant {
            fmt,
            scales,
            to,
            tr,
        } => {
            let bb = fmt.block_bytes();
            let sc_t = &st.tensors()[scales];
            let y = grow(fa, n);
            match tr {
                None => {
                    let blocks = st.read(t, s / MX_BLOCK * bb, e / MX_BLOCK * bb, inb)?;
                    let scl = st.read(sc_t, s / MX_BLOCK, e / MX_BLOCK, sbuf)?;
                    mx::dequantize_f64(blocks, scl, fmt, y).map_err(berr)?;
                }
                Some(Mat { k, n: cols }) => {
                    // Output rows r0.. of matrix m: from each stored row
                    // (an output column), the blocks covering them.
                    let (r0, rows) = (s / cols, n / cols);
                    let (m, h0) = (r0 / k, r0 % k);
                    let (kb, hb) = (k / MX_BLOCK, rows / MX_BLOCK);
                    let first = m * cols * kb + h0 / MX_BLOCK;
                    let blocks = st.read_strided(t, first * bb, kb * bb, cols, hb * bb, inb)?;
                    let scl = st.read_strided(sc_t, first, kb, cols, hb, sbuf)?;
                    let yc = grow(fb, n);
                    mx::dequantize_f64(blocks, scl, fmt, yc).map_err(berr)?;
                    transpose(yc, cols, rows, y);
                }
            }
            let dst = grow(obuf, sb(to, n));
            let r = opts
                .custom_rounding()
                .then(|| opts.rounding_of(&t.name).part(s, e));
            encode_values(y, to, opts.overflow, r.as_ref(), dst)?;
            write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
        }
        Op::Nvfp4Dequant {
            scale,
            scale2,
            to,
            cols,
        } => {
            let sc_t = &st.tensors()[scale];
            let s2_t = &st.tensors()[scale2];
            let mut s2buf = Vec::new();
            let s2b = st.read(s2_t, 0, 4, &mut s2buf)?;
            let s2 = f32::from_le_bytes(s2b.try_into().expect("checked: 4 bytes"));
            let packed = st.read(t, s / 2, e / 2, inb)?;
            let scl = st.read(sc_t, s / NVFP4_BLOCK, e / NVFP4_BLOCK, sbuf)?;
            let y = grow(fa, n);
            match cols {
                None => mx::nvfp4_dequantize_f64(packed, scl, s2, y).map_err(berr)?,
                Some(c) => {
                    let h = n / c;
                    let buf = grow(tb, n / 2 + n / NVFP4_BLOCK);
                    let (pt, st_) = buf.split_at_mut(n / 2);
                    transpose(packed, h / 2, c, pt);
                    transpose(scl, h / NVFP4_BLOCK, c, st_);
                    let yc = grow(fb, n);
                    mx::nvfp4_dequantize_f64(pt, st_, s2, yc).map_err(berr)?;
                    transpose(yc, c, h, y);
                }
            }
            let dst = grow(obuf, sb(to, n));
            let r = opts
                .custom_rounding()
                .then(|| opts.rounding_of(&t.name).part(s, e));
            encode_values(y, to, opts.overflow, r.as_ref(), dst)?;
            write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
        }
        Op::Fp8Dequant {
            scale,
            scales,
            k,
            sdt,
            block,
            experts,
            to,
        } => {
            let codes = st.read(t, s, e, inb)?;
            let sc_t = &st.tensors()[scale];
            let w = sdt.itemsize();
            let (r0, rows) = (s / k.max(1), n / k.max(1));
            // Fused experts' block scales: the chunk's expert (chunks never
            // cross one) holds [out block][band] from `b0`.
            let ex = experts.map(|m| {
                let b = block.max(1);
                let (ob, ib) = (k.div_ceil(b), m.div_ceil(b));
                (m, ib, r0 / m * ob * ib)
            });
            let (b0, b1) = match (scales, ex) {
                (Fp8Scales::Tensor, _) => (0, sc_t.elements),
                (Fp8Scales::Channel, Some((m, _, _))) => (r0 / m, r0 / m + 1),
                (Fp8Scales::Channel, None) => (r0, r0 + rows),
                (Fp8Scales::Block, Some((_, ib, b0))) => (b0, b0 + k.div_ceil(block) * ib),
                (Fp8Scales::Block, None) => {
                    let ib = k.div_ceil(block);
                    (r0 / block * ib, (r0 + rows).div_ceil(block) * ib)
                }
            };
            let sbytes = st.read(sc_t, b0 * w, b1 * w, sbuf)?;
            scale_values(sbytes, sdt, sv);
            let table = e4m3_table();
            let y = grow(fa, n);
            for (i, (y, c)) in y.iter_mut().zip(codes).enumerate() {
                let sidx = match (scales, ex) {
                    (Fp8Scales::Tensor, _) | (Fp8Scales::Channel, Some(_)) => 0,
                    (Fp8Scales::Channel, None) => i / k,
                    (Fp8Scales::Block, Some((m, ib, _))) => {
                        let (r, col) = (r0 + i / k, i % k);
                        col / block * ib + r % m / block
                    }
                    (Fp8Scales::Block, None) => {
                        let (r, col) = (r0 + i / k, i % k);
                        (r / block) * k.div_ceil(block) + col / block - b0
                    }
                };
                *y = table[*c as usize] * sv[sidx];
            }
            let dst = grow(obuf, sb(to, n));
            let r = opts
                .custom_rounding()
                .then(|| opts.rounding_of(&t.name).part(s, e));
            encode_values(y, to, opts.overflow, r.as_ref(), dst)?;
            write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
        }
    }
    Ok(stats)
}

/// The largest magnitude of the finite values of elements `s..e` of `t`
/// (dtype `from`), read with the thread's buffers.
fn finite_amax(
    st: &SafetensorsFile,
    t: &TensorEntry,
    from: DType,
    s: usize,
    e: usize,
) -> Result<f64, Error> {
    SCRATCH.with(|sc| {
        let mut sc = sc.borrow_mut();
        let Scratch { inb, x32, fa, .. } = &mut *sc;
        let mut m = 0f64;
        for a in (s..e).step_by(SCAN) {
            let b = (a + SCAN).min(e);
            let src = st.read(t, sb(from, a), sb(from, b), inb)?;
            m = m.max(if from == DType::Float64 {
                let x = as_f64(src, from, b - a, fa)?;
                x.iter()
                    .filter(|x| x.is_finite())
                    .fold(0f64, |m, x| m.max(x.abs()))
            } else {
                mx::finite_amax(as_f32(src, from, x32)?) as f64
            });
        }
        Ok(m)
    })
}
