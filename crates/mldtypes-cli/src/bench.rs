//! `bench`: ns per element of the bulk conversion kernels, with the kernel
//! path that runs them.
//!
//! Each conversion runs on generated data (a deterministic generator; finite
//! values spread over the target's exponent range for float32 → format,
//! uniformly random codes for format → float32) on the calling thread with
//! the automatically selected path, best of several repetitions. The bound
//! it is compared with is a plain `memcpy` of the larger of the two buffers
//! (the bytes a conversion must at least stream).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mldtypes::cast::{self, Overflow};
use mldtypes::dtype::DType;
use serde_json::json;

use crate::error::{usage, Result};
use crate::output;

/// Arguments of `mldtypes bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Elements per conversion (each needs about 16 bytes of memory while it
    /// runs; refused beyond the memory available).
    #[arg(long, default_value_t = 1 << 24)]
    elements: u64,
    /// Print `{"path", "available_paths", "elements", "results": [{"from",
    /// "to", "ns_per_element", "memcpy_ns_per_element"}, …]}`.
    #[arg(long)]
    json: bool,
    /// Force a kernel path (scalar, portable, avx2, avx512; default: the
    /// fastest this CPU runs).
    #[arg(long, value_name = "PATH")]
    path: Option<String>,
}

/// Peak bytes one measured conversion holds per element: the float32 source
/// or destination (4), the other side (at most 4), and the two memcpy
/// buffers of the larger itemsize (2 × 4).
const BYTES_PER_ELEMENT: u64 = 16;

/// Bytes of memory available to new allocations: `MemAvailable` of
/// /proc/meminfo where there is one.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Checks that `n` elements fit in memory: the byte count must not overflow
/// and must stay below the available memory (without /proc/meminfo, below
/// 64 GiB).
fn check_elements(n: u64) -> Result<usize> {
    if n == 0 {
        return Err(usage!("--elements must be positive"));
    }
    let need = n
        .checked_mul(BYTES_PER_ELEMENT)
        .filter(|b| usize::try_from(*b).is_ok())
        .ok_or_else(|| usage!("--elements {n} is beyond any memory ({BYTES_PER_ELEMENT} bytes per element overflow the address space)"))?;
    let (limit, what) = match available_memory() {
        Some(m) => (m, "the memory available"),
        None => (64 << 30, "the 64 GiB limit"),
    };
    if need > limit {
        return Err(usage!(
            "--elements {n} needs about {} MiB, more than {what} ({} MiB); at most {} elements",
            need >> 20,
            limit >> 20,
            limit / BYTES_PER_ELEMENT
        ));
    }
    usize::try_from(n)
        .map_err(|_| usage!("--elements {n} does not fit this machine's address space"))
}

/// `mldtypes bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    let n = check_elements(a.elements)?;
    if let Some(name) = &a.path {
        let p = cast::Path::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                usage!(
                    "--path {} is not a kernel path (scalar, portable, avx2, avx512)",
                    mldtypes::dtype::echo(name)
                )
            })?;
        cast::set_path(Some(p)).map_err(|e| usage!("--path {name}: {e}"))?;
    }
    let path = cast::path();
    let available: Vec<&str> = cast::available_paths().iter().map(|p| p.name()).collect();
    let pairs = pairs();
    // Drawn on standard error, and only when it is a terminal.
    let bar = ProgressBar::new(pairs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::with_capacity(pairs.len());
    for (f, t) in pairs {
        bar.set_message(format!("{f} -> {t}"));
        rows.push(measure(f, t, n));
        bar.inc(1);
    }
    bar.finish_and_clear();
    if a.json {
        let arr: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"from": r.from.name(), "to": r.to.name(), "ns_per_element": r.ns_per_element, "memcpy_ns_per_element": r.memcpy_ns_per_element})
            })
            .collect();
        return output::print_json(&json!({
            "path": path.name(),
            "available_paths": available,
            "elements": n,
            "results": arr,
        }));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# kernel path: {} (available on this CPU: {}); {n} elements, one thread",
        path.name(),
        available.join(", ")
    );
    let _ = writeln!(
        out,
        "{:<16}  {:<20}  {:>8}  {:>8}  {:>9}",
        "from", "to", "ns/elem", "memcpy", "x memcpy"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<16}  {:<20}  {:>8.3}  {:>8.3}  {:>9.2}",
            r.from.name(),
            r.to.name(),
            r.ns_per_element,
            r.memcpy_ns_per_element,
            r.ns_per_element / r.memcpy_ns_per_element
        );
    }
    output::print(&out)
}

/// One measured conversion.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BenchRow {
    /// Source dtype.
    from: DType,
    /// Destination dtype.
    to: DType,
    /// Best time per element, in nanoseconds.
    ns_per_element: f64,
    /// Best time per element of a `memcpy` of the larger buffer, in nanoseconds.
    memcpy_ns_per_element: f64,
}

/// An IEEE P3109 member as a dtype, in a constant.
const fn p3109(k: u32, p: u32, signed: bool, extended: bool) -> DType {
    match DType::p3109(k, p, signed, extended) {
        Ok(d) => d,
        Err(_) => panic!("a member of the family"),
    }
}

/// The formats every float32 ↔ format pair is measured for.
const FORMATS: &[DType] = &[
    DType::BFloat16,
    DType::Float16,
    DType::Float8E3M4,
    DType::Float8E4M3,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E4M3B11FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float8E8M0FNU,
    DType::Float6E2M3FN,
    DType::Float6E3M2FN,
    DType::Float4E2M1FN,
    p3109(8, 3, true, true),
    p3109(8, 4, true, true),
    p3109(8, 1, false, true),
    p3109(16, 8, true, true),
];

/// The (from, to) pairs `bench` measures: float32 → each of [`FORMATS`] and back.
fn pairs() -> Vec<(DType, DType)> {
    FORMATS
        .iter()
        .flat_map(|&d| [(DType::Float32, d), (d, DType::Float32)])
        .collect()
}

/// SplitMix64: a small deterministic generator for benchmark data.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Generated source bytes for a conversion from `from` (into `to`).
///
/// float32 sources hold finite values whose magnitudes spread over the
/// target's range (subnormals and overflow included); code sources hold
/// uniformly random codes.
fn generate(from: DType, to: DType, n: usize) -> Vec<u8> {
    let mut rng = SplitMix(0x6d6c_6474_7970_6573);
    match from {
        DType::Float32 => {
            let (lo, hi) = match to.format() {
                Some(f) => (
                    (f.min_exp() - f.man_bits as i32 - 2).max(-150),
                    (f.max_exp() + 2).min(128),
                ),
                None => (-20, 20),
            };
            let span = (hi - lo + 1) as u64;
            let mut out = Vec::with_capacity(n * 4);
            for _ in 0..n {
                let r = rng.next();
                let e = lo + (r % span) as i32;
                let m = 1.0 + ((r >> 32) as f64) / 4_294_967_296.0;
                let s = if r & (1 << 20) != 0 { -1.0 } else { 1.0 };
                let x = (s * m * 2f64.powi(e)) as f32;
                out.extend_from_slice(&x.to_le_bytes());
            }
            out
        }
        _ => {
            let size = from.itemsize();
            let mut out = Vec::with_capacity(n * size);
            for _ in 0..n {
                let r = rng.next().to_le_bytes();
                out.extend_from_slice(&r[..size]);
            }
            out
        }
    }
}

/// A zeroed buffer of `len` bytes, backed by transparent huge pages where
/// the system allows it (as NumPy backs arrays of 4 MiB and more on Linux),
/// so that measurements do not depend on how the allocator happened to map
/// the pages.
fn buffer(len: usize) -> memmap2::MmapMut {
    let m =
        memmap2::MmapMut::map_anon(len.max(1)).expect("anonymous memory for a benchmark buffer");
    #[cfg(target_os = "linux")]
    let _ = m.advise(memmap2::Advice::HugePage);
    m
}

/// [`buffer`] holding a copy of `data`.
fn buffer_from(data: &[u8]) -> memmap2::MmapMut {
    let mut m = buffer(data.len());
    m[..data.len()].copy_from_slice(data);
    m
}

/// Best wall time of `reps` runs of `f` (at least one).
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Repetitions for `n` elements: more for small inputs.
fn reps_for(n: usize) -> usize {
    ((1usize << 27) / n.max(1)).clamp(7, 1000)
}

/// Times `from → to` over `n` generated elements on the calling thread.
fn measure(from: DType, to: DType, n: usize) -> BenchRow {
    let n = n.max(1);
    let src = buffer_from(&generate(from, to, n));
    let mut dst = buffer(n * to.itemsize());
    let path = cast::path();
    let reps = reps_for(n);
    let t = best(reps, || {
        cast::cast_bytes_on(path, &src, from, &mut dst, to, Overflow::NonSaturating)
            .expect("benchmarked pairs are supported");
        std::hint::black_box(&mut dst);
    });
    let bytes = n * from.itemsize().max(to.itemsize());
    let mut a = buffer(bytes);
    a.fill(1);
    let mut b = buffer(bytes);
    let m = best(reps, || {
        b.copy_from_slice(std::hint::black_box(&a));
        std::hint::black_box(&mut b);
    });
    BenchRow {
        from,
        to,
        ns_per_element: t.as_secs_f64() * 1e9 / n as f64,
        memcpy_ns_per_element: m.as_secs_f64() * 1e9 / n as f64,
    }
}
