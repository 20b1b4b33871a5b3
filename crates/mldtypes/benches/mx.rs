//! Benchmarks of the block quantizers: every MX format (floor rule) and NVFP4
//! from float32, on the scalar reference path and on every vector path this
//! CPU runs, next to the float32 → float8_e4m3fn cast, single-threaded, on
//! 4 Mi elements (16 MiB of float32) of normally distributed values.
//!
//! First a table (best of 7 runs each, measured in this run): GB/s of
//! float32 read on every path, the time relative to the float8_e4m3fn cast on
//! the same path (portable, AVX2, AVX-512), and the speed-up of the fastest
//! path over the scalar one; then the criterion benchmarks of the same calls.
//!
//! `cargo bench -p mldtypes --bench mx` (add `-- --table` for the table
//! alone, `-- --table mxfp4 nvfp4` for some targets only).

use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use mldtypes::cast::{self, available_paths, Overflow, Path};
use mldtypes::dtype::DType;
use mldtypes::mx::{self, MxFormat, ScaleRule};
use std::time::{Duration, Instant};

const N: usize = 4 << 20;

/// Normally distributed float32 values (Box–Muller on a xorshift), the
/// shape of trained weights.
fn data() -> Vec<f32> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut u = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..N)
        .map(|_| {
            let (a, b) = (u(), u());
            ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos() * 0.05) as f32
        })
        .collect()
}

/// A target: an MX format, NVFP4 or the float8_e4m3fn cast.
#[derive(Clone, Copy)]
enum Target {
    Mx(MxFormat),
    Nvfp4,
    Fp8,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Mx(f) => f.name(),
            Target::Nvfp4 => "nvfp4",
            Target::Fp8 => "cast float8_e4m3fn",
        }
    }
}

fn targets() -> Vec<Target> {
    let mut t = vec![Target::Fp8];
    t.extend(MxFormat::ALL.map(Target::Mx));
    t.push(Target::Nvfp4);
    t
}

/// Output buffers, allocated once.
struct Out {
    blocks: Vec<u8>,
    scales: Vec<u8>,
}

fn run(t: Target, p: Path, x: &[f32], s2: f32, o: &mut Out) {
    match t {
        Target::Mx(f) => {
            let nb = x.len() / mx::MX_BLOCK;
            mx::quantize_on(
                p,
                x,
                f,
                ScaleRule::Floor,
                &mut o.blocks[..nb * f.block_bytes()],
                &mut o.scales[..nb],
            )
            .unwrap();
        }
        Target::Nvfp4 => {
            let nb = x.len() / mx::NVFP4_BLOCK;
            mx::nvfp4_quantize_on(p, x, s2, &mut o.blocks[..x.len() / 2], &mut o.scales[..nb])
                .unwrap();
        }
        Target::Fp8 => {
            cast::cast_bytes_on(
                p,
                bytemuck::cast_slice(x),
                DType::Float32,
                &mut o.blocks[..x.len()],
                DType::Float8E4M3FN,
                Overflow::Saturating,
            )
            .unwrap();
        }
    }
    black_box(&mut o.blocks);
}

/// Best-of-`k` seconds of one call.
fn best(k: usize, mut f: impl FnMut()) -> f64 {
    (0..k)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn table(x: &[f32], s2: f32, o: &mut Out, only: &[String]) {
    let paths = available_paths();
    let gbs = |s: f64| (x.len() * 4) as f64 / s / 1e9;
    println!(
        "block quantizers, {} Mi float32 elements, one thread (GB/s of float32 read; \
         \"x fp8\": time / the float8_e4m3fn cast's on the same path)",
        x.len() >> 20
    );
    print!("{:<20}", "target");
    for p in &paths {
        print!(" {:>9}", p.name());
    }
    for p in paths.iter().filter(|p| **p != Path::Scalar) {
        print!(" {:>12}", format!("x fp8 {}", p.name()));
    }
    println!(" {:>10}", "vs scalar");
    let fastest = *paths.last().expect("the scalar path is always there");
    // The float8_e4m3fn cast on every vector path, best of 7.
    let fp8: Vec<f64> = paths
        .iter()
        .map(|&p| {
            if p == Path::Scalar {
                f64::NAN
            } else {
                best(7, || run(Target::Fp8, p, x, s2, o))
            }
        })
        .collect();
    for t in targets() {
        if !only.is_empty() && !only.iter().any(|n| n == t.name()) {
            continue;
        }
        print!("{:<20}", t.name());
        let mut secs = Vec::new();
        for &p in &paths {
            let s = if matches!(t, Target::Fp8) && p != Path::Scalar {
                fp8[secs.len()]
            } else {
                let k = if p == Path::Scalar { 2 } else { 7 };
                best(k, || run(t, p, x, s2, o))
            };
            secs.push(s);
            print!(" {:>9.2}", gbs(s));
        }
        for (i, p) in paths.iter().enumerate() {
            if *p != Path::Scalar {
                print!(" {:>11.2}×", secs[i] / fp8[i]);
            }
        }
        let last = *secs.last().expect("one path at least");
        println!(" {:>9.1}×", secs[0] / last);
    }
    println!("(vs scalar: scalar time / {fastest} time)");
}

fn criterion_groups(c: &mut Criterion, x: &[f32], s2: f32, o: &mut Out) {
    let mut g = c.benchmark_group("mx/4Mi");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300))
        .throughput(Throughput::Bytes((x.len() * 4) as u64));
    for t in targets() {
        for p in available_paths() {
            if p == Path::Scalar && matches!(t, Target::Fp8) {
                continue;
            }
            g.bench_function(BenchmarkId::new(t.name(), p.name()), |b| {
                b.iter(|| run(t, p, x, s2, o))
            });
        }
    }
    g.finish();
}

fn main() {
    let x = data();
    let amax = x.iter().fold(0f64, |m, v| m.max(v.abs() as f64));
    let s2 = mx::nvfp4_tensor_scale(amax);
    let mut o = Out {
        blocks: vec![0u8; N],
        scales: vec![0u8; N / mx::NVFP4_BLOCK],
    };
    // `-- --table [TARGET ...]`: the table alone, of these targets only.
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--table") {
        let only: Vec<String> = args[i + 1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .cloned()
            .collect();
        table(&x, s2, &mut o, &only);
        return;
    }
    table(&x, s2, &mut o, &[]);
    let mut c = Criterion::default().configure_from_args();
    criterion_groups(&mut c, &x, s2, &mut o);
    c.final_summary();
}
