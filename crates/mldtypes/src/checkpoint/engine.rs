//! The conversion engine: planning, the parallel chunked pass, the index and
//! `config.json`.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;
use serde_json::json;

use super::output::{copy_tree, Staging};
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

thread_local! {
    static SCRATCH: RefCell<[Vec<u8>; 3]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

fn grow(v: &mut Vec<u8>, n: usize) -> &mut [u8] {
    if v.len() < n {
        v.resize(n, 0);
    }
    &mut v[..n]
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

/// Decodes storage bytes of `from` to f64 (exact for every float dtype).
fn decode_f64(src: &[u8], from: DType, n: usize) -> Result<Vec<f64>, Error> {
    let mut out = vec![0f64; n];
    cast_storage(
        src,
        from,
        bytemuck::cast_slice_mut(&mut out),
        DType::Float64,
        Overflow::NonSaturating,
    )?;
    Ok(out)
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

/// Converts `input` to `output` (see the module documentation).
///
/// # Errors
///
/// [`Error::Usage`] for an unsupported request, [`Error::Invalid`] /
/// [`Error::Read`] for unusable inputs (all checked before anything is
/// written), [`Error::Write`] when writing fails, [`Error::Cancelled`] when
/// `progress` asked to stop. On error nothing is left at `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    opts: &Options<'_>,
    progress: &dyn Progress,
) -> Result<Summary, Error> {
    if let Target::Float(d) = opts.target {
        float_target(d)?;
    }
    if let Some(r) = opts.rest {
        float_target(r)?;
    }
    let src = resolve(input)?;
    let mut summary = Summary {
        target: opts.target.name().to_string(),
        ..Summary::default()
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut files: Vec<FilePlan> = Vec::new();
    let mut quantized_any = false;
    let mut dequantized_any = false;
    let mut unquantized_modules: BTreeSet<String> = BTreeSet::new();
    for (fi, (fname, st)) in src.shards.iter().enumerate() {
        let mut plan = FilePlan {
            name: fname.clone(),
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
            let report = |summary: &mut Summary,
                          from: &str,
                          to: &str,
                          action,
                          stats: bool,
                          shape: Vec<usize>| {
                summary.tensors.push(TensorReport {
                    name: t.name.clone(),
                    file: fname.clone(),
                    shape,
                    from: from.to_string(),
                    to: to.to_string(),
                    action,
                    stats: stats.then(Stats::default),
                });
                Some(summary.tensors.len() - 1)
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
                        let r = summary.tensors.len();
                        summary.tensors.push(TensorReport {
                            name: g.name.clone(),
                            file: fname.clone(),
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
                    summary.copied.push(mt.name.clone());
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
                        summary.warnings.push(format!(
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
                    if selected
                        && t.shape.len() >= 2
                        && t.shape[t.shape.len() - 1] % MX_BLOCK == 0 =>
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
                    summary.copied.push(t.name.clone());
                    jobs.push(copy_job(fi, ti, t, o));
                }
                Op::Cast { from, to } => {
                    let tag = Dtype::try_from(to).expect("checked");
                    let o = push_out(&mut plan, t.name.clone(), tag, t.shape.clone());
                    let r = report(
                        &mut summary,
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
                        &mut summary,
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
                        &mut summary,
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
        let mut meta: BTreeMap<String, String> = st.metadata().cloned().unwrap_or_default();
        meta.remove(QUANT_KEY);
        if !records.is_empty() {
            meta.insert(
                QUANT_KEY.to_string(),
                serde_json::to_string(&records).expect("JSON serializes"),
            );
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
        let metadata = Metadata::new(
            (!meta.is_empty()).then(|| meta.into_iter().collect()),
            infos,
        )
        .map_err(|e| Error::write(output, format!("building the header of {fname}: {e}")))?;
        let mut header = serde_json::to_vec(&metadata).expect("JSON serializes");
        while !header.len().is_multiple_of(8) {
            header.push(b' ');
        }
        let mut h = (header.len() as u64).to_le_bytes().to_vec();
        h.extend(header);
        plan.header = h;
        files.push(plan);
    }

    // Stage the output.
    let input_paths: Vec<&Path> = src.shards.iter().map(|s| s.1.path()).collect();
    let staging = match &src.dir {
        None => Staging::file(output, &input_paths, opts.overwrite)?,
        Some(d) => Staging::dir(output, d, opts.overwrite)?,
    };

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::usage(format!("cannot start {} threads: {e}", opts.threads)))?;

    // NVFP4 tensor scales: the amax of each tensor's finite values.
    let s2s: Vec<f32> = pool.install(|| {
        jobs.par_iter()
            .map(|j| match j.op {
                Op::Nvfp4 { from } => {
                    let st = &src.shards[j.file].1;
                    let t = &st.tensors()[j.input];
                    let amax = (0..j.units.div_ceil(CHUNK))
                        .into_par_iter()
                        .map(|c| {
                            let (s, e) = (c * CHUNK, ((c + 1) * CHUNK).min(j.units));
                            let v = decode_f64(st.data(t, sb(from, s), sb(from, e)), from, e - s)?;
                            st.release(t, sb(from, s), sb(from, e));
                            Ok(v.iter()
                                .filter(|x| x.is_finite())
                                .fold(0f64, |m, x| m.max(x.abs())))
                        })
                        .try_reduce(|| 0f64, |a, b| Ok(a.max(b)))?;
                    Ok(mx::nvfp4_tensor_scale(amax))
                }
                _ => Ok(1.0),
            })
            .collect::<Result<Vec<f32>, Error>>()
    })?;

    let out_path = |name: &str| {
        if src.dir.is_none() {
            output.to_path_buf()
        } else {
            output.join(name)
        }
    };
    // Open the output files and write their headers.
    let mut handles: Vec<File> = Vec::new();
    for f in &files {
        let (_, h) = staging.create(&f.name)?;
        let werr = |e: std::io::Error| Error::write(&out_path(&f.name), e.to_string());
        h.set_len((f.header.len() + f.data_len) as u64)
            .map_err(werr)?;
        write_at(&h, &f.header, 0).map_err(werr)?;
        summary.bytes_written += (f.header.len() + f.data_len) as u64;
        handles.push(h);
    }

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
        let t = &src.shards[j.file].1.tensors()[j.input];
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
    summary.bytes_read = total_in;
    progress.start(total_in);
    let cancelled = AtomicBool::new(false);
    let run = || -> Result<Vec<(usize, Stats)>, Error> {
        chunks
            .par_iter()
            .with_max_len(1)
            .map(|&(ji, s, e)| {
                if cancelled.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
                let j = &jobs[ji];
                let plan = &files[j.file];
                let data_start = plan.header.len();
                let offs: Vec<usize> = j
                    .outs
                    .iter()
                    .map(|&o| data_start + plan.outs[o].offset)
                    .collect();
                let st = &src.shards[j.file].1;
                let stats = run_chunk(j, st, &handles[j.file], &offs, s, e, opts, s2s[ji])
                    .map_err(|e| match e {
                        Error::Write { message, .. } => {
                            Error::write(&out_path(&plan.name), message)
                        }
                        e => e,
                    })?;
                if !progress.advance(in_bytes(j, s, e)) {
                    cancelled.store(true, Ordering::Relaxed);
                    return Err(Error::Cancelled);
                }
                Ok((ji, stats))
            })
            .collect()
    };
    let results = pool.install(run);
    progress.finish();
    let results = results?;
    for (ji, s) in results {
        if let Some(r) = jobs[ji].report {
            if let Some(st) = summary.tensors[r].stats.as_mut() {
                st.merge(&s);
            }
        }
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
    drop(handles);

    // The index, config.json and the other files.
    if let Some(dir) = &src.dir {
        if let Some((iname, json)) = &src.index {
            let mut json = json.clone();
            let mut wm = serde_json::Map::new();
            for f in &files {
                for o in &f.outs {
                    wm.insert(o.name.clone(), json!(f.name));
                }
            }
            let total: usize = files.iter().map(|f| f.data_len).sum();
            json["weight_map"] = serde_json::Value::Object(wm);
            if !json.get("metadata").is_some_and(|m| m.is_object()) {
                json["metadata"] = json!({});
            }
            json["metadata"]["total_size"] = json!(total);
            write_json(&staging, iname, &json, output)?;
        }
        for name in &src.others {
            if name == "config.json" {
                if let Some(c) = updated_config(
                    &dir.join(name),
                    opts,
                    quantized_any,
                    dequantized_any,
                    &unquantized_modules,
                ) {
                    write_json(&staging, name, &c, output)?;
                    summary.copied_files.push(name.clone());
                    continue;
                }
            }
            copy_tree(&dir.join(name), &staging.path_of(name))
                .map_err(|e| Error::write(&output.join(name), format!("copying {name}: {e}")))?;
            summary.copied_files.push(name.clone());
        }
    }
    summary.files = files.iter().map(|f| f.name.clone()).collect();
    staging.commit(opts.fsync)?;
    Ok(summary)
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

fn write_json(
    staging: &Staging,
    name: &str,
    v: &serde_json::Value,
    output: &Path,
) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(v).expect("JSON serializes");
    text.push('\n');
    std::fs::write(staging.path_of(name), text)
        .map_err(|e| Error::write(&output.join(name), e.to_string()))
}

/// `config.json` with `torch_dtype` and `quantization_config` updated, or
/// `None` to copy it unchanged (not a JSON object).
fn updated_config(
    path: &Path,
    opts: &Options<'_>,
    quantized: bool,
    dequantized: bool,
    unquantized: &BTreeSet<String>,
) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut c: serde_json::Value = serde_json::from_str(&text).ok()?;
    let obj = c.as_object_mut()?;
    let not: Vec<&String> = unquantized.iter().collect();
    match opts.target {
        Target::Float(d) => {
            obj.insert("torch_dtype".into(), json!(d.name()));
            if dequantized {
                obj.remove("quantization_config");
            }
        }
        Target::Mx(fmt) if quantized => {
            if let Some(r) = opts.rest {
                obj.insert("torch_dtype".into(), json!(r.name()));
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
            obj.insert("quantization_config".into(), q);
        }
        Target::Nvfp4 if quantized => {
            if let Some(r) = opts.rest {
                obj.insert("torch_dtype".into(), json!(r.name()));
            }
            obj.insert(
                "quantization_config".into(),
                json!({
                    "quant_method": "modelopt",
                    "quant_algo": "NVFP4",
                    "group_size": NVFP4_BLOCK,
                    "exclude_modules": not,
                }),
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

#[allow(clippy::too_many_arguments)]
fn run_chunk(
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
    let werr = |e: std::io::Error| Error::write(st.path(), e.to_string());
    let n = e - s;
    let mut stats = Stats::default();
    match j.op {
        Op::Copy => {
            write_at(out, st.data(t, s, e), (offs[0] + s) as u64).map_err(werr)?;
            st.release(t, s, e);
        }
        Op::Cast { from, to } => {
            let (ib, ie) = (sb(from, s), sb(from, e));
            let src = st.data(t, ib, ie);
            SCRATCH.with(|sc| -> Result<(), Error> {
                let mut sc = sc.borrow_mut();
                let [a, b, c] = &mut *sc;
                let dst = grow(a, sb(to, n));
                cast_storage(src, from, dst, to, opts.overflow)?;
                write_at(out, dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
                // Statistics: both sides decoded to float32.
                let ys = grow(c, n * 4);
                cast_storage(dst, to, ys, DType::Float32, Overflow::NonSaturating)?;
                let xs: &[f32] = match (from, bytemuck::try_cast_slice::<u8, f32>(src)) {
                    (DType::Float32, Ok(x)) => x,
                    _ => {
                        let xb = grow(b, n * 4);
                        cast_storage(src, from, xb, DType::Float32, Overflow::NonSaturating)?;
                        bytemuck::cast_slice(&*xb)
                    }
                };
                let ys: &[f32] = bytemuck::cast_slice(&*ys);
                stats.add_cast(xs, ys, &OverflowLimit::of(to));
                Ok(())
            })?;
            st.release(t, ib, ie);
        }
        Op::Mx { from, fmt } => {
            let (ib, ie) = (sb(from, s), sb(from, e));
            let nb = n / MX_BLOCK;
            let mut blocks = vec![0u8; nb * fmt.block_bytes()];
            let mut scales = vec![0u8; nb];
            let (x, counts) = if from == DType::Float64 {
                let x = decode_f64(st.data(t, ib, ie), from, n)?;
                let c = mx::quantize(&x, fmt, opts.scale_rule, &mut blocks, &mut scales);
                (x, c)
            } else {
                // Every narrower float is exact in float32: the vectorized path.
                let mut x32 = vec![0f32; n];
                cast_storage(
                    st.data(t, ib, ie),
                    from,
                    bytemuck::cast_slice_mut(&mut x32),
                    DType::Float32,
                    Overflow::NonSaturating,
                )?;
                let c = mx::quantize(&x32, fmt, opts.scale_rule, &mut blocks, &mut scales);
                (x32.iter().map(|v| *v as f64).collect(), c)
            };
            let counts = counts.map_err(|e| Error::usage(e.to_string()))?;
            write_at(
                out,
                &blocks,
                (offs[0] + s / MX_BLOCK * fmt.block_bytes()) as u64,
            )
            .map_err(werr)?;
            write_at(out, &scales, (offs[1] + s / MX_BLOCK) as u64).map_err(werr)?;
            let mut y = vec![0f64; n];
            mx::dequantize_f64(&blocks, &scales, fmt, &mut y)
                .map_err(|e| Error::usage(e.to_string()))?;
            stats.add_exact(&x, &y);
            stats.clipped += counts.clipped;
            st.release(t, ib, ie);
        }
        Op::Nvfp4 { from } => {
            let (ib, ie) = (sb(from, s), sb(from, e));
            let x = decode_f64(st.data(t, ib, ie), from, n)?;
            let mut packed = vec![0u8; n / 2];
            let mut scales = vec![0u8; n / NVFP4_BLOCK];
            let clipped = mx::nvfp4_quantize(&x, s2, &mut packed, &mut scales)
                .map_err(|e| Error::usage(e.to_string()))?;
            write_at(out, &packed, (offs[0] + s / 2) as u64).map_err(werr)?;
            write_at(out, &scales, (offs[1] + s / NVFP4_BLOCK) as u64).map_err(werr)?;
            if s == 0 {
                write_at(out, &s2.to_le_bytes(), offs[2] as u64).map_err(werr)?;
            }
            let mut y = vec![0f64; n];
            mx::nvfp4_dequantize_f64(&packed, &scales, s2, &mut y)
                .map_err(|e| Error::usage(e.to_string()))?;
            stats.add_exact(&x, &y);
            stats.clipped += clipped;
            st.release(t, ib, ie);
        }
        Op::MxDequant { fmt, scales, to } => {
            let bb = fmt.block_bytes();
            let (b0, b1) = (s / MX_BLOCK * bb, e / MX_BLOCK * bb);
            let blocks = st.data(t, b0, b1);
            let sc_t = &st.tensors()[scales];
            let sc = st.data(sc_t, s / MX_BLOCK, e / MX_BLOCK);
            let mut y = vec![0f64; n];
            mx::dequantize_f64(blocks, sc, fmt, &mut y).map_err(|e| Error::usage(e.to_string()))?;
            let mut dst = vec![0u8; sb(to, n)];
            encode_values(&y, to, opts.overflow, &mut dst);
            write_at(out, &dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
            st.release(t, b0, b1);
        }
        Op::Nvfp4Dequant { scale, scale2, to } => {
            let packed = st.data(t, s / 2, e / 2);
            let sc_t = &st.tensors()[scale];
            let sc = st.data(sc_t, s / NVFP4_BLOCK, e / NVFP4_BLOCK);
            let s2_t = &st.tensors()[scale2];
            let s2 = f32::from_le_bytes(st.tensor_data(s2_t).try_into().expect("checked: 4 bytes"));
            let mut y = vec![0f64; n];
            mx::nvfp4_dequantize_f64(packed, sc, s2, &mut y)
                .map_err(|e| Error::usage(e.to_string()))?;
            let mut dst = vec![0u8; sb(to, n)];
            encode_values(&y, to, opts.overflow, &mut dst);
            write_at(out, &dst, (offs[0] + sb(to, s)) as u64).map_err(werr)?;
            st.release(t, s / 2, e / 2);
        }
    }
    Ok(stats)
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
