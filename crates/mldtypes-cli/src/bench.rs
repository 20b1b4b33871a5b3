//! `bench`: ns per element of the bulk conversion kernels (`cast::bench`),
//! with the kernel path that runs them.

use std::fmt::Write as _;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mldtypes::cast;
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
    let path = cast::path();
    let available: Vec<&str> = cast::available_paths().iter().map(|p| p.name()).collect();
    let pairs = cast::bench::pairs();
    // Drawn on standard error, and only when it is a terminal.
    let bar = ProgressBar::new(pairs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::with_capacity(pairs.len());
    for (f, t) in pairs {
        bar.set_message(format!("{f} -> {t}"));
        rows.push(cast::bench::measure(f, t, n));
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
