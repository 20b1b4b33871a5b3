//! `bench`: ns per element of the bulk conversion kernels.

use std::time::Instant;

use clap::Args;
use mldtypes::dtype::DType;
use mldtypes::format::Overflow;
use serde_json::json;

use crate::backend;
use crate::error::{usage, Result};

/// Arguments of `mldtypes bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Elements per conversion.
    #[arg(long, default_value_t = 1 << 24)]
    elements: usize,
    /// Print `[{"from", "to", "ns_per_element"}, …]`.
    #[arg(long)]
    json: bool,
}

/// `mldtypes bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    if a.elements == 0 {
        return Err(usage!("--elements must be positive"));
    }
    let rows = backend::bench(a.elements)?;
    if a.json {
        let arr: Vec<_> = rows
            .iter()
            .map(|(f, t, ns)| json!({"from": f.name(), "to": t.name(), "ns_per_element": ns}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&arr).expect("JSON serializes")
        );
    } else {
        println!("{:<16}  {:<20}  {:>8}", "from", "to", "ns/elem");
        for (f, t, ns) in rows {
            println!("{:<16}  {:<20}  {:>8.3}", f.name(), t.name(), ns);
        }
    }
    Ok(())
}

/// Times one conversion through [`backend::cast_storage`]: best of three runs.
pub fn time_cast(from: DType, to: DType, n: usize) -> Result<f64> {
    let src: Vec<u8> = (0..n)
        .flat_map(|i| {
            // A deterministic spread of magnitudes and signs.
            let x = ((i as u32).wrapping_mul(2654435761) >> 8) as f32 / (1u32 << 24) as f32;
            ((x - 0.5) * 64.0).to_le_bytes()
        })
        .collect();
    let mut dst = vec![0u8; backend::storage_bytes(to, n).ok_or_else(|| usage!("bad size"))?];
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        backend::cast_storage(&src, from, &mut dst, to, Overflow::NonSaturating)?;
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    Ok(best)
}
