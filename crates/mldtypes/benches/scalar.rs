//! Criterion benchmarks of the scalar types against `half` in the same run:
//! `from_f32`, `to_f32`, `a * b + a` and `Iterator::sum` per element over
//! 4096-element slices (cache resident), for bfloat16 against `half::bf16`,
//! float16 against `half::f16`, and every
//! 8/6/4-bit format of the crate; plus a naive 128×128 matrix product
//! (triple loop, every multiply and add through the scalar type, as a
//! generic `dot` over the type does) over bfloat16 against `half::bf16`.
//!
//! Every group also measures the `half` type nearest to it on the same data
//! right after it (`half::bf16` for the 8/6/4-bit formats, which `half` does
//! not have), so that each figure has a reference taken under the same load.
//!
//! Run with `cargo bench -p mldtypes --bench scalar`; compare the `mldtypes`
//! and `half` lines of a group (criterion reports time per iteration and
//! elements/s).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

/// Elements per measured slice.
const N: usize = 4096;

/// Deterministic pseudo-random values in `[-scale, scale]`, with a few
/// exact zeros, spread over the binades a format covers.
fn inputs(scale: f32, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..N)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
            let v = (u * 2.0 - 1.0) as f32 * scale;
            if s.is_multiple_of(97) {
                0.0
            } else {
                v
            }
        })
        .collect()
}

fn configure<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(30)
        .measurement_time(Duration::from_millis(800))
        .warm_up_time(Duration::from_millis(300))
        .throughput(Throughput::Elements(N as u64));
    g
}

/// The four element benchmarks, each a criterion group in which every
/// listed scalar type `$t` (any type with `from_f32`, `to_f32`, `*`, `+` and
/// `Sum`) is measured, as `$lib`, on the same data.
macro_rules! element_benches {
    ($c:expr, $group:expr, $scale:expr, $(($lib:expr, $t:ty)),+) => {{
        let xs = inputs($scale, 1);
        let ys = inputs(1.0, 2);
        let mut outf = vec![0f32; N];

        let mut g = configure($c, &format!("{}/from_f32", $group));
        $({
            let mut out: Vec<$t> = xs.iter().map(|&x| <$t>::from_f32(x)).collect();
            g.bench_function(BenchmarkId::from_parameter($lib), |bch| {
                bch.iter(|| {
                    for (o, &x) in out.iter_mut().zip(black_box(&xs)) {
                        *o = <$t>::from_f32(x);
                    }
                    black_box(&mut out);
                })
            });
        })+
        g.finish();

        let mut g = configure($c, &format!("{}/to_f32", $group));
        $({
            let a: Vec<$t> = xs.iter().map(|&x| <$t>::from_f32(x)).collect();
            g.bench_function(BenchmarkId::from_parameter($lib), |bch| {
                bch.iter(|| {
                    for (o, &x) in outf.iter_mut().zip(black_box(&a)) {
                        *o = x.to_f32();
                    }
                    black_box(&mut outf);
                })
            });
        })+
        g.finish();

        let mut g = configure($c, &format!("{}/mul_add", $group));
        $({
            let a: Vec<$t> = xs.iter().map(|&x| <$t>::from_f32(x)).collect();
            let b: Vec<$t> = ys.iter().map(|&x| <$t>::from_f32(x)).collect();
            let mut out = a.clone();
            g.bench_function(BenchmarkId::from_parameter($lib), |bch| {
                bch.iter(|| {
                    for ((o, &x), &y) in out.iter_mut().zip(black_box(&a)).zip(black_box(&b)) {
                        *o = x * y + x;
                    }
                    black_box(&mut out);
                })
            });
        })+
        g.finish();

        let mut g = configure($c, &format!("{}/sum", $group));
        $({
            let a: Vec<$t> = xs.iter().map(|&x| <$t>::from_f32(x)).collect();
            g.bench_function(BenchmarkId::from_parameter($lib), |bch| {
                bch.iter(|| black_box(black_box(&a).iter().copied().sum::<$t>()))
            });
        })+
        g.finish();
    }};
}

fn scalars(c: &mut Criterion) {
    element_benches!(
        c,
        "bfloat16",
        100.0,
        ("mldtypes", mldtypes::bfloat16),
        ("half", half::bf16)
    );
    element_benches!(
        c,
        "float16",
        100.0,
        ("mldtypes", mldtypes::float16),
        ("half", half::f16)
    );
    element_benches!(
        c,
        "float8_e3m4",
        8.0,
        ("mldtypes", mldtypes::float8_e3m4),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e4m3",
        100.0,
        ("mldtypes", mldtypes::float8_e4m3),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e4m3fn",
        200.0,
        ("mldtypes", mldtypes::float8_e4m3fn),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e4m3fnuz",
        100.0,
        ("mldtypes", mldtypes::float8_e4m3fnuz),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e4m3b11fnuz",
        16.0,
        ("mldtypes", mldtypes::float8_e4m3b11fnuz),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e5m2",
        1000.0,
        ("mldtypes", mldtypes::float8_e5m2),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e5m2fnuz",
        1000.0,
        ("mldtypes", mldtypes::float8_e5m2fnuz),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float8_e8m0fnu",
        1000.0,
        ("mldtypes", mldtypes::float8_e8m0fnu),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float6_e2m3fn",
        4.0,
        ("mldtypes", mldtypes::float6_e2m3fn),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float6_e3m2fn",
        16.0,
        ("mldtypes", mldtypes::float6_e3m2fn),
        ("half-bf16", half::bf16)
    );
    element_benches!(
        c,
        "float4_e2m1fn",
        4.0,
        ("mldtypes", mldtypes::float4_e2m1fn),
        ("half-bf16", half::bf16)
    );
}

/// Naive `C = A·B` over `n×n` row-major matrices, every operation in `T`.
macro_rules! matmul {
    ($t:ty, $a:expr, $b:expr, $c:expr, $n:expr) => {{
        let (a, b, c, n): (&[$t], &[$t], &mut [$t], usize) = ($a, $b, $c, $n);
        for i in 0..n {
            for j in 0..n {
                let mut acc = <$t>::from_f32(0.0);
                for k in 0..n {
                    acc += a[i * n + k] * b[k * n + j];
                }
                c[i * n + j] = acc;
            }
        }
    }};
}

fn dot(c: &mut Criterion) {
    const D: usize = 128;
    // Two D×D matrices from consecutive N-element blocks.
    let xs: Vec<f32> = (0..(2 * D * D).div_ceil(N) as u64)
        .flat_map(|seed| inputs(1.0, 3 + seed))
        .collect();
    let (xa, rest) = xs.split_at(D * D);
    let xb = &rest[..D * D];
    let mut g = c.benchmark_group("matmul128/bfloat16");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300))
        .throughput(Throughput::Elements((D * D * D) as u64));
    {
        let a: Vec<mldtypes::bfloat16> = xa
            .iter()
            .map(|&x| mldtypes::bfloat16::from_f32(x))
            .collect();
        let b: Vec<mldtypes::bfloat16> = xb
            .iter()
            .map(|&x| mldtypes::bfloat16::from_f32(x))
            .collect();
        let mut out = vec![mldtypes::bfloat16::from_f32(0.0); D * D];
        g.bench_function(BenchmarkId::from_parameter("mldtypes"), |bch| {
            bch.iter(|| {
                matmul!(
                    mldtypes::bfloat16,
                    black_box(&a),
                    black_box(&b),
                    &mut out,
                    D
                );
                black_box(&mut out);
            })
        });
    }
    {
        let a: Vec<half::bf16> = xa.iter().map(|&x| half::bf16::from_f32(x)).collect();
        let b: Vec<half::bf16> = xb.iter().map(|&x| half::bf16::from_f32(x)).collect();
        let mut out = vec![half::bf16::from_f32(0.0); D * D];
        g.bench_function(BenchmarkId::from_parameter("half"), |bch| {
            bch.iter(|| {
                matmul!(half::bf16, black_box(&a), black_box(&b), &mut out, D);
                black_box(&mut out);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, scalars, dot);
criterion_main!(benches);
