//! Criterion benchmarks of the conversion kernels: every float32 ↔ format
//! pair at 4 KiB of float32 (cache resident) and 64 MiB (memory bound),
//! single-threaded on the automatically selected path, with a `memcpy` of
//! the larger buffer as the bound. Throughput is reported in elements/s.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mldtypes::cast::{cast_bytes_on, path, Overflow};
use mldtypes::dtype::DType;
use std::time::Duration;

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
];

/// float32 → each format and back.
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

/// Source bytes for `from → to`: float32 values spread over the target's
/// exponent range (subnormals and overflow included), or uniformly random
/// codes (the data `mldtypes bench` measures on).
fn generate(from: DType, to: DType, n: usize) -> Vec<u8> {
    let mut rng = SplitMix(0x6d6c_6474_7970_6573);
    if from != DType::Float32 {
        let size = from.itemsize();
        return (0..n)
            .flat_map(|_| rng.next().to_le_bytes()[..size].to_vec())
            .collect();
    }
    let (lo, hi) = match to.format() {
        Some(f) => (f.min_exp() - f.man_bits as i32 - 2, f.max_exp() + 2),
        None => (-20, 20),
    };
    let span = (hi - lo + 1) as u64;
    (0..n)
        .flat_map(|_| {
            let r = rng.next();
            let e = lo + (r % span) as i32;
            let m = 1.0 + ((r >> 32) as f64) / 4_294_967_296.0;
            let s = if r & (1 << 20) != 0 { -1.0 } else { 1.0 };
            ((s * m * 2f64.powi(e)) as f32).to_le_bytes()
        })
        .collect()
}

fn group(c: &mut Criterion, label: &str, elements: usize, samples: usize, secs: u64) {
    let mut g = c.benchmark_group(format!("cast/{label}"));
    g.sample_size(samples)
        .measurement_time(Duration::from_secs(secs))
        .warm_up_time(Duration::from_millis(500))
        .throughput(Throughput::Elements(elements as u64));
    let p = path();
    for (from, to) in pairs() {
        let src = generate(from, to, elements);
        let mut dst = vec![0u8; elements * to.itemsize()];
        let id = BenchmarkId::new(format!("{}->{}", from.name(), to.name()), p.name());
        g.bench_function(id, |b| {
            b.iter(|| {
                cast_bytes_on(
                    p,
                    black_box(&src),
                    from,
                    &mut dst,
                    to,
                    Overflow::NonSaturating,
                )
                .unwrap();
                black_box(&mut dst);
            })
        });
    }
    // The bound: a plain copy of a float32 buffer of the same element count.
    let a = vec![1u8; elements * 4];
    let mut b = vec![0u8; elements * 4];
    g.bench_function(BenchmarkId::new("memcpy", "float32"), |bch| {
        bch.iter(|| {
            b.copy_from_slice(black_box(&a));
            black_box(&mut b);
        })
    });
    g.finish();
}

fn kernels(c: &mut Criterion) {
    // 4 KiB of float32 = 1024 elements.
    group(c, "4KiB", 1024, 50, 1);
    // 64 MiB of float32 = 16 Mi elements; few samples to keep it quick.
    group(c, "64MiB", 16 << 20, 10, 2);
}

criterion_group!(benches, kernels);
criterion_main!(benches);
