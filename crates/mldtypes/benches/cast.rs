//! Criterion benchmarks of the conversion kernels: every float32 ↔ format
//! pair at 4 KiB of float32 (cache resident) and 64 MiB (memory bound),
//! single-threaded on the automatically selected path, with a `memcpy` of
//! the larger buffer as the bound. Throughput is reported in elements/s.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mldtypes::cast::{bench, cast_bytes_on, path, Overflow};
use std::time::Duration;

fn group(c: &mut Criterion, label: &str, elements: usize, samples: usize, secs: u64) {
    let mut g = c.benchmark_group(format!("cast/{label}"));
    g.sample_size(samples)
        .measurement_time(Duration::from_secs(secs))
        .warm_up_time(Duration::from_millis(500))
        .throughput(Throughput::Elements(elements as u64));
    let p = path();
    for (from, to) in bench::pairs() {
        let src = bench::generate(from, to, elements);
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
