//! Statistics of stochastic rounding from a seed: with `sr_bits` = 16 the
//! mean of `stochastic` (and `stochastic_odd`) rounding over 10^6 values
//! equals the exact mean of the inputs within its confidence bound, where
//! round-to-nearest is far off; seeded results do not depend on the number
//! of threads or on how the input is cut.

use mldtypes::cast::{round_slice, round_slice_par, Element};
use mldtypes::round::{RoundMode, Rounding};
use mldtypes::{bfloat16, float4_e2m1fn, float8_e4m3fn};

/// SplitMix64: a small deterministic generator for the inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const N: usize = 1_000_000;
const SR_BITS: u32 = 16;

/// Rounds `x` with `r` and returns the mean of the results as float64.
fn mean_of<T: Element + Copy>(x: &[f32], r: &Rounding, zero: T, to_f64: impl Fn(T) -> f64) -> f64 {
    let mut y = vec![zero; x.len()];
    round_slice_par(x, &mut y, r).unwrap();
    y.iter().map(|v| to_f64(*v)).sum::<f64>() / x.len() as f64
}

/// Inputs `lo + q·(k + δ)` with `δ` uniform in `[0, 0.3)`: nearest rounding
/// always rounds down, stochastic rounding up with probability `δ`.
/// Returns the inputs, their exact mean, and the standard deviation of the
/// stochastic mean (`q·√(Σ δ(1−δ))/n`).
fn inputs(seed: u64, lo: f64, q: f64, steps: u64) -> (Vec<f32>, f64, f64) {
    let mut rng = Rng(seed);
    let mut x = Vec::with_capacity(N);
    let (mut sum, mut var) = (0.0f64, 0.0f64);
    for _ in 0..N {
        let k = (rng.next() % steps) as f64;
        let d = 0.3 * rng.unit();
        let v = (lo + q * (k + d)) as f32;
        let d = (v as f64 - lo) / q - k; // δ of the float32 actually rounded
        x.push(v);
        sum += v as f64;
        var += d * (1.0 - d) * q * q;
    }
    (x, sum / N as f64, var.sqrt() / N as f64)
}

fn check<T: Element + Copy>(
    name: &str,
    x: &[f32],
    exact: f64,
    sigma: f64,
    q: f64,
    zero: T,
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    // δ rounded to 16 bits moves each probability by at most 2^-17.
    let bias = q * 2f64.powi(-(SR_BITS as i32 + 1));
    let bound = 5.0 * sigma + bias;
    for m in [RoundMode::Stochastic, RoundMode::StochasticOdd] {
        let r = Rounding::new(m).with_seed(0x5eed_0001, SR_BITS);
        let mean = mean_of(x, &r, zero, to_f64);
        assert!(
            (mean - exact).abs() <= bound,
            "{name} {m}: mean {mean}, exact {exact}, bound {bound:e} (5 sigma {:e})",
            5.0 * sigma
        );
    }
    let nearest = mean_of(x, &Rounding::NEAREST_EVEN, zero, to_f64);
    assert!(
        (nearest - exact).abs() > 20.0 * bound,
        "{name}: nearest rounding should be biased here"
    );
}

#[test]
fn the_mean_of_stochastic_rounding_is_the_exact_mean() {
    // float8_e4m3fn on [1, 2): spacing 1/8.
    let (x, exact, sigma) = inputs(1, 1.0, 0.125, 8);
    check(
        "float8_e4m3fn",
        &x,
        exact,
        sigma,
        0.125,
        float8_e4m3fn::ZERO,
        |v| v.to_f32() as f64,
    );
    // bfloat16 on [256, 512): spacing 2.
    let (x, exact, sigma) = inputs(2, 256.0, 2.0, 128);
    check("bfloat16", &x, exact, sigma, 2.0, bfloat16::ZERO, |v| {
        v.to_f32() as f64
    });
    // float4_e2m1fn on [2, 4): values 2, 3, 4.
    let (x, exact, sigma) = inputs(3, 2.0, 1.0, 2);
    check(
        "float4_e2m1fn",
        &x,
        exact,
        sigma,
        1.0,
        float4_e2m1fn::ZERO,
        |v| v.to_f32() as f64,
    );
}

#[test]
fn seeded_results_do_not_depend_on_thread_counts_or_chunking() {
    let mut rng = Rng(7);
    let x: Vec<f32> = (0..N).map(|_| (rng.unit() * 64.0 - 32.0) as f32).collect();
    let r = Rounding::new(RoundMode::Stochastic).with_seed(42, SR_BITS);
    let mut one = vec![float8_e4m3fn::ZERO; N];
    round_slice(&x, &mut one, &r).unwrap();
    for threads in [1, 2, 3, 5] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut par = vec![float8_e4m3fn::ZERO; N];
        pool.install(|| round_slice_par(&x, &mut par, &r)).unwrap();
        assert!(par == one, "{threads} threads");
    }
    // Uneven pieces, each with its part of the rounding.
    let mut pieces = vec![float8_e4m3fn::ZERO; N];
    let cuts = [0, 1, 7, 4096, 4099, 65_537, 300_001, N];
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        round_slice(&x[a..b], &mut pieces[a..b], &r.part(a, b)).unwrap();
    }
    assert!(pieces == one, "pieces");
    // A different seed gives different bits.
    let mut other = vec![float8_e4m3fn::ZERO; N];
    round_slice(&x, &mut other, &r.part(0, N).with_seed(43, SR_BITS)).unwrap();
    assert!(other != one);
}
