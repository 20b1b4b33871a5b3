//! `bench`: ns per element of the bulk conversion kernels (`cast::bench`).

use clap::Args;
use serde_json::json;

use crate::backend;
use crate::error::{usage, Result};

/// Arguments of `mldtypes bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Elements per conversion.
    #[arg(long, default_value_t = 1 << 24)]
    elements: usize,
    /// Print `[{"from", "to", "ns_per_element", "memcpy_ns_per_element"}, …]`.
    #[arg(long)]
    json: bool,
}

/// `mldtypes bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    if a.elements == 0 {
        return Err(usage!("--elements must be positive"));
    }
    let rows = backend::bench(a.elements);
    if a.json {
        let arr: Vec<_> = rows
            .iter()
            .map(|(f, t, ns, mc)| {
                json!({"from": f.name(), "to": t.name(), "ns_per_element": ns, "memcpy_ns_per_element": mc})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&arr).expect("JSON serializes")
        );
    } else {
        println!(
            "{:<16}  {:<20}  {:>8}  {:>8}  {:>9}",
            "from", "to", "ns/elem", "memcpy", "x memcpy"
        );
        for (f, t, ns, mc) in rows {
            println!(
                "{:<16}  {:<20}  {:>8.3}  {:>8.3}  {:>9.2}",
                f.name(),
                t.name(),
                ns,
                mc,
                ns / mc
            );
        }
    }
    Ok(())
}
