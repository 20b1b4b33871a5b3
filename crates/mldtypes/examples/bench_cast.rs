//! Single-threaded conversion timings as JSON, for `tools/bench_vs_ml_dtypes.py`
//! (the same rows `mldtypes bench --json` prints).
//!
//! Usage: `cargo run --release -p mldtypes --example bench_cast -- [ELEMENTS]`

fn main() {
    let elements = match std::env::args().nth(1) {
        None => 1 << 24,
        Some(s) => match s.parse::<usize>() {
            Ok(n) => n,
            Err(e) => {
                eprintln!("bench_cast: ELEMENTS must be a count: {e}");
                std::process::exit(2);
            }
        },
    };
    let rows: Vec<serde_json::Value> = mldtypes::cast::bench::run(elements)
        .into_iter()
        .map(|r| {
            serde_json::json!({
                "from": r.from.name(),
                "to": r.to.name(),
                "ns_per_element": r.ns_per_element,
                "memcpy_ns_per_element": r.memcpy_ns_per_element,
                "path": mldtypes::cast::path().name(),
            })
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&rows).expect("JSON of plain numbers")
    );
}
