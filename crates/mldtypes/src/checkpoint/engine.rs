//! The conversion engine: planning, the parallel chunked pass, the index and
//! `config.json`.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;
use serde_json::json;

use super::ordered::Json;
use super::output::{copy_tree, Staging};
use super::reader::read_exact_at;
use super::reader::{quoted, SafetensorsFile, TensorEntry};
use super::source::resolve;
use super::stats::{OverflowLimit, Stats};
use super::{
    float_target, storage_bytes, Action, Error, Options, Progress, Summary, Target, TensorReport,
};
use crate::cast::{self, pack};
use crate::dtype::DType;
use crate::float::core::encode_f64;
use crate::format::Overflow;
use crate::mx::{self, MxFormat, MX_BLOCK, NVFP4_BLOCK};

/// Elements per chunk of work (a multiple of every block and packing group).
const CHUNK: usize = 1 << 20;
/// Bytes per chunk of a copy.
const COPY_CHUNK: usize = 4 << 20;
/// The `__metadata__` key recording the quantized tensors.
const QUANT_KEY: &str = "mldtypes.quantization";

#[derive(Clone, Copy, Debug)]
enum Op {
    Copy,
    Cast {
        from: DType,
        to: DType,
    },
    Mx {
        from: DType,
        fmt: MxFormat,
    },
    Nvfp4 {
        from: DType,
    },
    MxDequant {
        fmt: MxFormat,
        scales: usize,
        to: DType,
    },
    Nvfp4Dequant {
        scale: usize,
        scale2: usize,
        to: DType,
    },
}

struct Job {
    file: usize,
    input: usize,
    op: Op,
    /// Work units: elements (bytes for a copy).
    units: usize,
    /// Output tensor indices within the file's output list.
    outs: Vec<usize>,
    report: Option<usize>,
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
    /// inputs (statistics).
    fb: Vec<f64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Elements per read of the NVFP4 tensor-scale pass, which only scans
/// them: a buffer the core's own cache holds.
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
    let p = cast::path();
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
        cast::cast_bytes_on(p, src, from, &mut codes, to, ov).map_err(cast_err)?;
        pack::pack(&codes, to, dst).map_err(cast_err)
    } else {
        cast::cast_bytes_on(p, src, from, dst, to, ov).map_err(cast_err)
    }
}

/// Encodes exact values to `to` storage, rounding once.
fn encode_values(vals: &[f64], to: DType, ov: Overflow, dst: &mut [u8]) {
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
}

fn float_dtype(t: Dtype) -> Option<DType> {
    DType::try_from(t).ok().filter(|d| d.is_float())
}

/// The plan of one output file: its tensors and header, the jobs that fill
/// it, and its part of the summary.
struct Planned {
    plan: FilePlan,
    jobs: Vec<Job>,
    /// This file's tensors, copies and warnings (job reports index its
    /// `tensors`).
    part: Summary,
    quantized: bool,
    dequantized: bool,
    unquantized: BTreeSet<String>,
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

/// Plans the output of shard `fname` (`st`); its jobs name it as file `fi`.
fn plan_file(
    fi: usize,
    fname: &str,
    st: &SafetensorsFile,
    opts: &Options<'_>,
) -> Result<Planned, Error> {
    let mut part = Summary::default();
    let mut jobs: Vec<Job> = Vec::new();
    let mut quantized_any = false;
    let mut dequantized_any = false;
    let mut unquantized_modules: BTreeSet<String> = BTreeSet::new();
    let mut plan = FilePlan {
        name: fname.to_string(),
        outs: Vec::new(),
        header: Vec::new(),
        data_len: 0,
    };
    let mut records: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    let groups = find_groups(st);
    let tensors = st.tensors();
    for (ti, t) in tensors.iter().enumerate() {
        if groups.member.contains(&ti) {
            continue;
        }
        let selected = opts.select.is_none_or(|f| f(&t.name));
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
        let report =
            |part: &mut Summary, from: &str, to: &str, action, stats: bool, shape: Vec<usize>| {
                part.tensors.push(TensorReport {
                    name: t.name.clone(),
                    file: fname.to_string(),
                    shape,
                    from: from.to_string(),
                    to: to.to_string(),
                    action,
                    stats: stats.then(Stats::default),
                });
                Some(part.tensors.len() - 1)
            };
        // Dequantization of a block group headed by this tensor.
        if let Some(g) = groups.heads.get(&ti) {
            if let Target::Float(to) = opts.target {
                if selected && !is_packed(to) {
                    let tag = float_target(to)?;
                    let o = push_out(&mut plan, g.name.clone(), tag, g.shape.clone());
                    let (op, from) = match g.kind {
                        GroupKind::Mx { fmt, scales } => {
                            (Op::MxDequant { fmt, scales, to }, fmt.name())
                        }
                        GroupKind::Nvfp4 { scale, scale2 } => {
                            (Op::Nvfp4Dequant { scale, scale2, to }, "nvfp4")
                        }
                    };
                    let r = part.tensors.len();
                    part.tensors.push(TensorReport {
                        name: g.name.clone(),
                        file: fname.to_string(),
                        shape: g.shape.clone(),
                        from: from.to_string(),
                        to: to.name().to_string(),
                        action: Action::Dequantize,
                        stats: None,
                    });
                    jobs.push(Job {
                        file: fi,
                        input: ti,
                        op,
                        units: g.shape.iter().product(),
                        outs: vec![o],
                        report: Some(r),
                    });
                    dequantized_any = true;
                    continue;
                }
            }
            // Not dequantized: the group's tensors are copied below.
            for &m in &g.all {
                let mt = &tensors[m];
                let o = push_out(&mut plan, mt.name.clone(), mt.dtype, mt.shape.clone());
                part.copied.push(mt.name.clone());
                jobs.push(copy_job(fi, m, mt, o));
            }
            if let Some(r) = st.metadata().and_then(|m| m.get(QUANT_KEY)) {
                if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(r) {
                    if let Some(v) = m.get(&g.name) {
                        records.insert(g.name.clone(), v.clone());
                    }
                }
            }
            continue;
        }
        let from = float_dtype(t.dtype);
        let op = match (from, opts.target) {
            (Some(from), Target::Float(to)) if selected && from != to => {
                if storage_bytes(Dtype::try_from(to).expect("checked"), t.elements).is_none() {
                    part.warnings.push(format!(
                        "tensor {}: {} elements cannot be packed as {} ({} bits each, whole \
                         bytes needed); copied unchanged",
                        quoted(&t.name),
                        t.elements,
                        to,
                        to.bits()
                    ));
                    Op::Copy
                } else if !cast::is_supported(from, to) {
                    return Err(Error::usage(format!(
                        "tensor {}: converting {from} to {to} is not supported",
                        quoted(&t.name)
                    )));
                } else {
                    Op::Cast { from, to }
                }
            }
            (Some(from), Target::Mx(fmt))
                if selected && t.shape.len() >= 2 && t.shape[t.shape.len() - 1] % MX_BLOCK == 0 =>
            {
                Op::Mx { from, fmt }
            }
            (Some(from), Target::Nvfp4)
                if selected
                    && t.shape.len() >= 2
                    && t.shape[t.shape.len() - 1] % NVFP4_BLOCK == 0 =>
            {
                Op::Nvfp4 { from }
            }
            (Some(from), Target::Mx(_) | Target::Nvfp4) if selected => match opts.rest {
                Some(r)
                    if r != from
                        && storage_bytes(Dtype::try_from(r).expect("checked"), t.elements)
                            .is_some() =>
                {
                    Op::Cast { from, to: r }
                }
                _ => Op::Copy,
            },
            _ => Op::Copy,
        };
        // Floating-point matrices a block target leaves unquantized.
        if from.is_some()
            && matches!(opts.target, Target::Mx(_) | Target::Nvfp4)
            && !matches!(op, Op::Mx { .. } | Op::Nvfp4 { .. })
            && t.shape.len() >= 2
        {
            unquantized_modules.insert(module_of(&t.name));
        }
        match op {
            Op::Copy => {
                let o = push_out(&mut plan, t.name.clone(), t.dtype, t.shape.clone());
                part.copied.push(t.name.clone());
                jobs.push(copy_job(fi, ti, t, o));
            }
            Op::Cast { from, to } => {
                let tag = Dtype::try_from(to).expect("checked");
                let o = push_out(&mut plan, t.name.clone(), tag, t.shape.clone());
                let r = report(
                    &mut part,
                    from.name(),
                    to.name(),
                    Action::Convert,
                    true,
                    t.shape.clone(),
                );
                jobs.push(Job {
                    file: fi,
                    input: ti,
                    op,
                    units: t.elements,
                    outs: vec![o],
                    report: r,
                });
            }
            Op::Mx { from, fmt } => {
                let k = t.shape[t.shape.len() - 1];
                let lead = &t.shape[..t.shape.len() - 1];
                let mut bshape = lead.to_vec();
                bshape.extend([k / MX_BLOCK, fmt.block_bytes()]);
                let mut sshape = lead.to_vec();
                sshape.push(k / MX_BLOCK);
                let ob = push_out(&mut plan, format!("{}_blocks", t.name), Dtype::U8, bshape);
                let os = push_out(&mut plan, format!("{}_scales", t.name), Dtype::U8, sshape);
                let r = report(
                    &mut part,
                    from.name(),
                    fmt.name(),
                    Action::Quantize,
                    true,
                    t.shape.clone(),
                );
                records.insert(
                    t.name.clone(),
                    json!({"format": fmt.name(), "block_size": MX_BLOCK, "scale_rule": opts.scale_rule.name()}),
                );
                quantized_any = true;
                jobs.push(Job {
                    file: fi,
                    input: ti,
                    op,
                    units: t.elements,
                    outs: vec![ob, os],
                    report: r,
                });
            }
            Op::Nvfp4 { from } => {
                let k = t.shape[t.shape.len() - 1];
                let lead = &t.shape[..t.shape.len() - 1];
                let mut pshape = lead.to_vec();
                pshape.push(k / 2);
                let mut sshape = lead.to_vec();
                sshape.push(k / NVFP4_BLOCK);
                let op_ = push_out(&mut plan, t.name.clone(), Dtype::U8, pshape);
                let os = push_out(
                    &mut plan,
                    format!("{}_scale", t.name),
                    Dtype::F8_E4M3,
                    sshape,
                );
                let o2 = push_out(&mut plan, format!("{}_scale_2", t.name), Dtype::F32, vec![]);
                let r = report(
                    &mut part,
                    from.name(),
                    "nvfp4",
                    Action::Quantize,
                    true,
                    t.shape.clone(),
                );
                records.insert(
                    t.name.clone(),
                    json!({"format": "nvfp4", "block_size": NVFP4_BLOCK}),
                );
                quantized_any = true;
                jobs.push(Job {
                    file: fi,
                    input: ti,
                    op,
                    units: t.elements,
                    outs: vec![op_, os, o2],
                    report: r,
                });
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
    if !records.is_empty() {
        meta.push((
            QUANT_KEY.to_string(),
            serde_json::to_string(&records).expect("JSON serializes"),
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
        quantized: quantized_any,
        dequantized: dequantized_any,
        unquantized: unquantized_modules,
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

fn make_pool(opts: &Options<'_>) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::usage(format!("cannot start {} threads: {e}", opts.threads)))
}

/// Converts `input` to `output` (see the module documentation).
///
/// # Errors
///
/// [`Error::Usage`] for an unsupported request or more than
/// [`max_threads`] threads, [`Error::Invalid`] / [`Error::Read`] for
/// unusable inputs (all checked before anything is written; a FIFO or
/// device among them is refused, not opened), [`Error::Read`] also when an
/// input is truncated while it is read, [`Error::Write`] when writing fails,
/// [`Error::Cancelled`] when [`Options::cancel`] was set or `progress` asked
/// to stop. On error nothing is left at `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<Summary, Error> {
    check_options(opts)?;
    let src = resolve(input)?;
    let mut planned = src
        .shards
        .iter()
        .enumerate()
        .map(|(fi, (fname, st))| plan_file(fi, fname, st, opts))
        .collect::<Result<Vec<_>, Error>>()?;

    // Stage the output.
    let input_paths: Vec<&Path> = src.shards.iter().map(|s| s.1.path()).collect();
    let staging = match &src.dir {
        None => Staging::file(output, &input_paths, opts.overwrite)?,
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
        &mut planned,
        &handles,
        &out_paths,
        &pool,
        opts,
        progress,
    )?;
    drop(handles);
    let mut summary = merge_parts(opts, &mut planned);
    if let Some(dir) = &src.dir {
        if opts.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        model_files(
            &src,
            dir,
            &planned,
            opts,
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

/// Converts one shard of a sharded checkpoint (a model directory or an
/// index) into `output_dir/SHARD`, for distributing a conversion (one task
/// per shard, e.g. on Ray): with the same `opts`, the file is byte-identical
/// to the one [`convert`] writes. The file is written beside its destination
/// and renamed into place; `output_dir` is created if missing. When every
/// shard is written, [`finish_shards`] writes the index, `config.json` and
/// the other files.
///
/// Returns the shard's part of the [`Summary`].
///
/// # Errors
///
/// As [`convert`]; [`Error::Usage`] when `shard` is not one of
/// [`shards`]`(input)`.
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
/// ```
pub fn convert_shard(
    input: &Path,
    shard: &str,
    output_dir: &Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<Summary, Error> {
    check_options(opts)?;
    let src = resolve(input)?;
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
    let mut planned = vec![plan_file(0, fname, st, opts)?];
    std::fs::create_dir_all(output_dir).map_err(|e| Error::write_io(output_dir, e))?;
    let dest = output_dir.join(fname);
    let staging = Staging::file(&dest, &[st.path()], opts.overwrite)?;
    let handles = vec![staging.create(fname)?.1];
    let pool = make_pool(opts)?;
    run_files(
        &[st],
        &mut planned,
        &handles,
        std::slice::from_ref(&dest),
        &pool,
        opts,
        progress,
    )?;
    drop(handles);
    let summary = merge_parts(opts, &mut planned);
    if opts.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    staging.commit(opts.fsync)?;
    Ok(summary)
}

/// Completes a conversion done shard by shard with [`convert_shard`]: checks
/// that every shard of `output_dir` is the one the plan for `opts` expects
/// (its header byte for byte, its size), then writes the index,
/// `config.json` and copies of the model directory's other files, as
/// [`convert`] does (the index last, so its presence means the model is
/// complete).
///
/// Returns the [`Summary`] without tensors: `files`, `copied_files`.
///
/// # Errors
///
/// As [`convert`]; [`Error::Invalid`] naming a shard of `output_dir` that is
/// missing or was written with other options.
pub fn finish_shards(
    input: &Path,
    output_dir: &Path,
    opts: &Options<'_>,
) -> Result<Summary, Error> {
    check_options(opts)?;
    let src = resolve(input)?;
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
        .map(|(fi, (fname, st))| plan_file(fi, fname, st, opts))
        .collect::<Result<Vec<_>, Error>>()?;
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
    let stage = tempfile::Builder::new()
        .prefix(".finish.")
        .suffix(super::output::PARTIAL_SUFFIX)
        .tempdir_in(output_dir)
        .map_err(|e| Error::write_io(output_dir, e))?;
    model_files(
        &src,
        dir,
        &planned,
        opts,
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

/// Writes the headers and runs the jobs of `planned` (file `i` is
/// `shards[i]` → `handles[i]`, named `out_paths[i]` in messages), merging
/// each job's statistics into its file's summary part.
fn run_files(
    shards: &[&SafetensorsFile],
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

    // NVFP4 tensor scales: the amax of each tensor's finite values.
    let s2s: Vec<f32> = pool.install(|| {
        jobs.par_iter()
            .map(|j| match j.op {
                Op::Nvfp4 { from } => {
                    let st = shards[j.file];
                    let t = &st.tensors()[j.input];
                    let amax = (0..j.units.div_ceil(CHUNK))
                        .into_par_iter()
                        .map(|c| {
                            if cancel.is_cancelled() {
                                return Err(Error::Cancelled);
                            }
                            let (s, e) = (c * CHUNK, ((c + 1) * CHUNK).min(j.units));
                            finite_amax(st, t, from, s, e)
                        })
                        .try_reduce(|| 0f64, |a, b| Ok(a.max(b)))?;
                    Ok(mx::nvfp4_tensor_scale(amax))
                }
                _ => Ok(1.0),
            })
            .collect::<Result<Vec<f32>, Error>>()
    })?;

    // The chunks.
    let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
    for (ji, j) in jobs.iter().enumerate() {
        let step = if matches!(j.op, Op::Copy) {
            COPY_CHUNK
        } else {
            CHUNK
        };
        let mut s = 0;
        while s < j.units {
            let e = (s + step).min(j.units);
            chunks.push((ji, s, e));
            s = e;
        }
        if j.units == 0 && matches!(j.op, Op::Nvfp4 { .. }) {
            // An empty tensor still gets its tensor scale (1).
            chunks.push((ji, 0, 0));
        }
    }
    let in_bytes = |j: &Job, s: usize, e: usize| -> u64 {
        let t = &shards[j.file].tensors()[j.input];
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
                let st = shards[j.file];
                let stats = SCRATCH
                    .with(|sc| {
                        let out = &handles[j.file];
                        run_chunk(&mut sc.borrow_mut(), j, st, out, &offs, s, e, opts, s2s[ji])
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
fn merge_parts(opts: &Options<'_>, planned: &mut [Planned]) -> Summary {
    let mut summary = Summary {
        target: opts.target.name().to_string(),
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
    summary
}

/// Writes the index, `config.json` and the other files of model directory
/// `dir` for the output files `planned`, each at `staged(name)` (`output`
/// names the destination in messages).
fn model_files(
    src: &super::source::Source,
    dir: &Path,
    planned: &[Planned],
    opts: &Options<'_>,
    staged: &dyn Fn(&str) -> PathBuf,
    output: &Path,
    summary: &mut Summary,
) -> Result<(), Error> {
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
    let quantized = planned.iter().any(|p| p.quantized);
    let dequantized = planned.iter().any(|p| p.dequantized);
    let unquantized: BTreeSet<String> = planned
        .iter()
        .flat_map(|p| p.unquantized.iter().cloned())
        .collect();
    for name in &src.others {
        if opts.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if name == "config.json" {
            if let Some(c) =
                updated_config(&dir.join(name), opts, quantized, dequantized, &unquantized)
            {
                write_json(&staged(name), &c, &output.join(name))?;
                summary.copied_files.push(name.clone());
                continue;
            }
        }
        copy_tree(&dir.join(name), &staged(name))
            .map_err(|e| Error::write_io(&output.join(name), e))?;
        summary.copied_files.push(name.clone());
    }
    Ok(())
}

fn copy_job(file: usize, input: usize, t: &TensorEntry, out: usize) -> Job {
    Job {
        file,
        input,
        op: Op::Copy,
        units: t.offsets.1 - t.offsets.0,
        outs: vec![out],
        report: None,
    }
}

/// The module of a weight: its name without a trailing `.weight`.
fn module_of(name: &str) -> String {
    name.strip_suffix(".weight").unwrap_or(name).to_string()
}

fn write_json(path: &Path, v: &Json, dest: &Path) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(v).expect("JSON serializes");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| Error::write_io(dest, e))
}

/// `config.json` with `torch_dtype` and `quantization_config` updated (its
/// keys in their order, new ones last), or `None` to copy it unchanged (not
/// a JSON object).
fn updated_config(
    path: &Path,
    opts: &Options<'_>,
    quantized: bool,
    dequantized: bool,
    unquantized: &BTreeSet<String>,
) -> Option<Json> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut c: Json = serde_json::from_str(&text).ok()?;
    if !matches!(c, Json::Object(_)) {
        return None;
    }
    let obj = &mut c;
    let not: Vec<&String> = unquantized.iter().collect();
    match opts.target {
        Target::Float(d) => {
            obj.set("torch_dtype", Json::Scalar(json!(d.name())));
            if dequantized {
                obj.remove("quantization_config");
            }
        }
        Target::Mx(fmt) if quantized => {
            if let Some(r) = opts.rest {
                obj.set("torch_dtype", Json::Scalar(json!(r.name())));
            }
            let q = if fmt == MxFormat::Fp4 {
                json!({"quant_method": "mxfp4", "modules_to_not_convert": not})
            } else {
                json!({
                    "quant_method": "mx",
                    "format": fmt.name(),
                    "block_size": MX_BLOCK,
                    "scale_rule": opts.scale_rule.name(),
                    "modules_to_not_convert": not,
                })
            };
            obj.set("quantization_config", Json::from_value(q));
        }
        Target::Nvfp4 if quantized => {
            if let Some(r) = opts.rest {
                obj.set("torch_dtype", Json::Scalar(json!(r.name())));
            }
            obj.set(
                "quantization_config",
                Json::from_value(json!({
                    "quant_method": "modelopt",
                    "quant_algo": "NVFP4",
                    "group_size": NVFP4_BLOCK,
                    "exclude_modules": not,
                })),
            );
        }
        _ => {}
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

/// Converts elements `s..e` of job `j` with the thread's buffers `sc`.
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
    s2: f32,
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
            let mut acc = mx::ErrLanes::default();
            // A part at a time: cast, decode the result to float32, compare
            // with the original (both still in the cache). The parts start
            // at multiples of 8, so element i is in lane i % 8 throughout.
            let mut a = 0;
            while a < n {
                let b = (a + SUB).min(n);
                let x = &src[sb(from, a)..sb(from, b)];
                let y = &mut dst[sb(to, a)..sb(to, b)];
                cast_storage(x, from, y, to, opts.overflow)?;
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
        Op::Mx { from, fmt } => {
            let src = st.read(t, sb(from, s), sb(from, e), inb)?;
            let nb = n / MX_BLOCK;
            let blocks = grow(obuf, nb * fmt.block_bytes());
            let scales = grow(sbuf, nb);
            let mut acc = mx::ErrLanes::default();
            let counts = if from == DType::Float64 {
                let x = as_f64(src, from, n, fa)?;
                let c = mx::quantize(x, fmt, opts.scale_rule, blocks, scales).map_err(berr)?;
                let y = grow(fb, n);
                mx::dequantize_f64(blocks, scales, fmt, y).map_err(berr)?;
                mx::exact_stats(x, y, &mut acc);
                c
            } else {
                // Every narrower float is exact in float32: the vectorized
                // path, statistics in the same pass.
                let x = as_f32(src, from, x32)?;
                mx::quantize_stats(x, fmt, opts.scale_rule, blocks, scales, &mut acc)
                    .map_err(berr)?
            };
            write_at(
                out,
                blocks,
                (offs[0] + s / MX_BLOCK * fmt.block_bytes()) as u64,
            )
            .map_err(werr)?;
            write_at(out, scales, (offs[1] + s / MX_BLOCK) as u64).map_err(werr)?;
            stats.add_lanes(n, &acc);
            stats.clipped += counts.clipped;
        }
        Op::Nvfp4 { from } => {
            let src = st.read(t, sb(from, s), sb(from, e), inb)?;
            let packed = grow(obuf, n / 2);
            let scales = grow(sbuf, n / NVFP4_BLOCK);
            let mut acc = mx::ErrLanes::default();
            let clipped = if from == DType::Float64 {
                let x = as_f64(src, from, n, fa)?;
                mx::nvfp4_quantize_stats(x, s2, packed, scales, &mut acc)
            } else {
                let x = as_f32(src, from, x32)?;
                mx::nvfp4_quantize_stats(x, s2, packed, scales, &mut acc)
            }
            .map_err(berr)?;
            write_at(out, packed, (offs[0] + s / 2) as u64).map_err(werr)?;
            write_at(out, scales, (offs[1] + s / NVFP4_BLOCK) as u64).map_err(werr)?;
            if s == 0 {
                write_at(out, &s2.to_le_bytes(), offs[2] as u64).map_err(werr)?;
            }
            stats.add_lanes(n, &acc);
            stats.clipped += clipped;
        }
        Op::MxDequant { fmt, scales, to } => {
            let bb = fmt.block_bytes();
            let (b0, b1) = (s / MX_BLOCK * bb, e / MX_BLOCK * bb);
            let blocks = st.read(t, b0, b1, inb)?;
            let sc_t = &st.tensors()[scales];
            let sc = st.read(sc_t, s / MX_BLOCK, e / MX_BLOCK, sbuf)?;
            let y = grow(fa, n);
            mx::dequantize_f64(blocks, sc, fmt, y).map_err(berr)?;
            let dst = grow(obuf, sb(to, n));
            encode_values(y, to, opts.overflow, dst);
            write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
        }
        Op::Nvfp4Dequant { scale, scale2, to } => {
            let packed = st.read(t, s / 2, e / 2, inb)?;
            let sc_t = &st.tensors()[scale];
            let sc = st.read(sc_t, s / NVFP4_BLOCK, e / NVFP4_BLOCK, sbuf)?;
            let s2_t = &st.tensors()[scale2];
            let mut s2buf = Vec::new();
            let s2b = st.read(s2_t, 0, 4, &mut s2buf)?;
            let s2 = f32::from_le_bytes(s2b.try_into().expect("checked: 4 bytes"));
            let y = grow(fa, n);
            mx::nvfp4_dequantize_f64(packed, sc, s2, y).map_err(berr)?;
            let dst = grow(obuf, sb(to, n));
            encode_values(y, to, opts.overflow, dst);
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

// ---------------------------------------------------------------------------
// Block groups of an input file
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum GroupKind {
    Mx { fmt: MxFormat, scales: usize },
    Nvfp4 { scale: usize, scale2: usize },
}

struct Group {
    /// The logical tensor's name.
    name: String,
    /// Its logical shape.
    shape: Vec<usize>,
    kind: GroupKind,
    /// Every tensor of the group.
    all: Vec<usize>,
}

#[derive(Default)]
struct Groups {
    /// Groups by the index of their head tensor (blocks / packed data).
    heads: BTreeMap<usize, Group>,
    /// Tensors that belong to a group but are not its head.
    member: BTreeSet<usize>,
}

/// Finds MX (`NAME_blocks` + `NAME_scales`) and NVFP4 (`NAME` + `NAME_scale`
/// + `NAME_scale_2`) groups whose shapes agree.
fn find_groups(st: &SafetensorsFile) -> Groups {
    let records: BTreeMap<String, serde_json::Value> = st
        .metadata()
        .and_then(|m| m.get(QUANT_KEY))
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default();
    let ts = st.tensors();
    let idx = |n: &str| ts.binary_search_by(|t| t.name.as_str().cmp(n)).ok();
    let mut g = Groups::default();
    for (i, t) in ts.iter().enumerate() {
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
            if ok {
                let mut shape = t.shape[..r - 2].to_vec();
                shape.push(t.shape[r - 2] * MX_BLOCK);
                g.member.insert(si);
                g.heads.insert(
                    i,
                    Group {
                        name: base.to_string(),
                        shape,
                        kind: GroupKind::Mx { fmt, scales: si },
                        all: vec![i, si],
                    },
                );
            }
        } else if t.dtype == Dtype::U8 {
            let (Some(si), Some(s2i)) = (
                idx(&format!("{}_scale", t.name)),
                idx(&format!("{}_scale_2", t.name)),
            ) else {
                continue;
            };
            let (sc, s2) = (&ts[si], &ts[s2i]);
            let r = t.shape.len();
            let ok = r >= 1
                && sc.dtype == Dtype::F8_E4M3
                && s2.dtype == Dtype::F32
                && s2.elements == 1
                && sc.shape.len() == r
                && sc.shape[..r - 1] == t.shape[..r - 1]
                && sc.shape[r - 1] * NVFP4_BLOCK == t.shape[r - 1] * 2;
            if ok {
                let mut shape = t.shape.clone();
                shape[r - 1] *= 2;
                g.member.extend([si, s2i]);
                g.heads.insert(
                    i,
                    Group {
                        name: t.name.clone(),
                        shape,
                        kind: GroupKind::Nvfp4 {
                            scale: si,
                            scale2: s2i,
                        },
                        all: vec![i, si, s2i],
                    },
                );
            }
        }
    }
    g
}
