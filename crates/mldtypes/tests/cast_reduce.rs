//! Reductions accumulate in float32 and round once: the seed's bfloat16
//! example (10,000 uniform [0, 1) values: a naive bfloat16 running sum stalls
//! at 256), with a deterministic generator of our own.

use half::bf16;
use mldtypes::cast::reduce;

mod reference;
use reference::Rng;

fn seed_values() -> Vec<bf16> {
    let mut rng = Rng(2024);
    (0..10_000)
        .map(|_| bf16::from_f32(rng.uniform_f32()))
        .collect()
}

#[test]
fn naive_bfloat16_sum_stalls_at_256_ours_does_not() {
    let x = seed_values();
    // Naive: a bfloat16 accumulator, each addition rounded back to bfloat16.
    let naive = x
        .iter()
        .fold(bf16::ZERO, |s, v| bf16::from_f32(s.to_f32() + v.to_f32()));
    assert_eq!(naive.to_f32(), 256.0);
    // Exact sum of the stored values (float64 is exact for these).
    let exact: f64 = x.iter().map(|v| v.to_f64()).sum();
    assert!((4900.0..5100.0).contains(&exact), "exact sum {exact}");
    let ours = reduce::sum(&x).unwrap().to_f64();
    assert!(
        (ours - exact).abs() / exact < 0.01,
        "ours {ours}, exact {exact}"
    );
    let ours32 = reduce::sum_f32(&x).unwrap() as f64;
    assert!(
        (ours32 - exact).abs() / exact < 1e-5,
        "f32 {ours32}, exact {exact}"
    );
    let mean = reduce::mean_f32(&x).unwrap() as f64;
    assert!((mean - exact / 1e4).abs() < 1e-6);
}

#[test]
fn dot_and_mean_round_once() {
    let a: Vec<bf16> = (0..3000).map(|i| bf16::from_f32((i % 7) as f32)).collect();
    let b: Vec<bf16> = (0..3000)
        .map(|i| bf16::from_f32((i % 5) as f32 * 0.5))
        .collect();
    let exact: f64 = a.iter().zip(&b).map(|(x, y)| x.to_f64() * y.to_f64()).sum();
    assert_eq!(reduce::dot_f32(&a, &b).unwrap() as f64, exact);
    assert_eq!(reduce::dot(&a, &b).unwrap(), bf16::from_f64(exact));
    assert!(reduce::dot(&a, &b[..10]).is_err());
    let m = reduce::mean(&a).unwrap();
    let exact_mean = a.iter().map(|x| x.to_f64()).sum::<f64>() / 3000.0;
    assert_eq!(m, bf16::from_f32(exact_mean as f32));
    assert!(reduce::mean_f32::<f32>(&[]).unwrap().is_nan());
    assert_eq!(reduce::sum::<f32>(&[]).unwrap(), 0.0);
}
