//! Promotion benchmarks: the binary lattice join is a single lookup in the
//! precomputed dense join table; `promote_types` and `result_type` add the
//! node-index mapping and JAX's operand rules on top.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mldtypes::dtype::DType;
use mldtypes::promote::jax::{JaxType, Operand, PromotionConfig, PyScalar, NODES};

fn bench(c: &mut Criterion) {
    let cfg = PromotionConfig {
        x64: true,
        ..PromotionConfig::DEFAULT
    };
    let lattice = cfg.lattice();
    let n = lattice.nodes().len();
    // Cycle through all ordered pairs so the branch predictor sees varied input.
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    // One iteration joins all 35 x 35 ordered pairs; criterion reports the
    // time per join (Throughput::Elements).
    let mut g = c.benchmark_group("binary join, per pair");
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("Lattice::join_index (dense table lookup)", |b| {
        b.iter(|| {
            for &(i, j) in black_box(&pairs) {
                black_box(lattice.join_index(i, j));
            }
        })
    });
    let typed: Vec<(JaxType, JaxType)> = pairs.iter().map(|&(i, j)| (NODES[i], NODES[j])).collect();
    let defined: Vec<(JaxType, JaxType)> = typed
        .iter()
        .copied()
        .filter(|&(x, y)| cfg.join(x, y).is_ok())
        .collect();
    g.throughput(Throughput::Elements(defined.len() as u64));
    g.bench_function("PromotionConfig::join (defined pairs)", |b| {
        b.iter(|| {
            for &(x, y) in black_box(&defined) {
                black_box(cfg.join(x, y).ok());
            }
        })
    });
    g.bench_function("PromotionConfig::promote_types (defined pairs)", |b| {
        b.iter(|| {
            for &(x, y) in black_box(&defined) {
                black_box(cfg.promote_types(x, y).ok());
            }
        })
    });
    g.finish();
    let ops = [
        Operand::Strong(DType::BFloat16),
        Operand::Scalar(PyScalar::Float),
    ];
    c.bench_function("jax result_type (bfloat16, float)", |b| {
        b.iter(|| black_box(cfg.result_type(black_box(&ops)).ok()))
    });
    let ops = [
        Operand::Strong(DType::Int8),
        Operand::Strong(DType::UInt8),
        Operand::Weak(DType::Float32),
        Operand::Strong(DType::Float16),
    ];
    c.bench_function("jax result_type (4 operands)", |b| {
        b.iter(|| black_box(cfg.result_type(black_box(&ops)).ok()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
