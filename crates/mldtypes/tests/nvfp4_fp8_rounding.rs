//! Rounding modes of the scaled quantizers (`mx::fp8_quantize_rounded`,
//! `mx::nvfp4_quantize_rounded`) against the rounding of the exact quotient.
//!
//! The oracle never divides in floating point. For an element `x` and its
//! divisor `d` (both exact dyadic numbers), it finds the binade `2^e` of the
//! exact quotient `q = x / d` and `k = ⌊q / T⌋` with `T = 2^(e − 50)`, and
//! whether `q = k·T`, by integer arithmetic. Every rounding boundary and
//! stochastic threshold of float8_e4m3fn and float4_e2m1fn with up to 32
//! random bits is a multiple of `T`, so `q` rounds as `k·T` when exact and
//! as `k·T + T/2` (strictly inside the same interval, 52 significant bits:
//! an exact `f64`) otherwise; `round_f64` of that value is the expected
//! code.

use mldtypes::float::core::{decode_f64, round_f64};
use mldtypes::format::{Format, FLOAT4_E2M1FN, FLOAT8_E4M3FN};
use mldtypes::mx::{self, fp8_scale, nvfp4_tensor_scale};
use mldtypes::round::{RandomBits, RoundMode, Rounding};

/// `|v|` (finite, non-zero) as `m · 2^e` with an integer `m`.
fn dyadic(v: f64) -> (u128, i32) {
    let b = v.abs().to_bits();
    let (e, m) = ((b >> 52) as i32, (b & ((1 << 52) - 1)) as u128);
    if e == 0 {
        (m, -1074)
    } else {
        (m | 1 << 52, e - 1075)
    }
}

/// `a · 2^s` for a possibly negative shift (`a · 2^s` an integer when
/// `s ≥ 0`; `⌊a · 2^s⌋` and whether bits were dropped otherwise).
fn shifted(a: u128, s: i32) -> (u128, bool) {
    if s >= 0 {
        (a << s, false)
    } else {
        let s = (-s) as u32;
        if s >= 128 {
            (0, a != 0)
        } else {
            (a >> s, a & ((1u128 << s) - 1) != 0)
        }
    }
}

/// The value that rounds as the exact quotient `x / d` (`x` finite,
/// non-zero; `d` positive), with `x`'s sign; with `odd53`, the quotient
/// rounded to odd at 53 bits instead (what the quantizers hand to gfloat's
/// float64 arithmetic).
fn representative(x: f64, d: f64, odd53: bool) -> f64 {
    let ((mx, ex), (md, ed)) = (dyadic(x), dyadic(d));
    // Align both mantissas to 64 bits so that the shifts below stay within
    // u128.
    let norm = |m: u128, e: i32| {
        let z = m.leading_zeros() as i32 - 64;
        (m << z, e - z)
    };
    let ((mx, ex), (md, ed)) = (norm(mx, ex), norm(md, ed));
    // q = mx/md · 2^(ex − ed) with mx, md in [2^63, 2^64): q's binade is
    // 2^(ex − ed) (mx ≥ md) or 2^(ex − ed − 1).
    let e = if mx >= md { ex - ed } else { ex - ed - 1 };
    // k = ⌊q / T⌋ with T = 2^(e − 50) (2^(e − 52) for odd53): the
    // numerator mx · 2^(b + ex − ed − e) stays below 2^(64 + 53).
    let b = if odd53 { 52 } else { 50 };
    let (num, lost) = shifted(mx, b + ex - ed - e);
    assert!(!lost);
    let (k, rem) = (num / md, num % md);
    let t = 2f64.powi(e - b);
    let v = match (rem == 0, odd53) {
        (true, _) => k as f64 * t,
        (false, false) => (2 * k + 1) as f64 * (t / 2.0),
        (false, true) => (k | 1) as f64 * t,
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// A deterministic stream of 32-bit words.
fn words(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 16) as u32
        })
        .collect()
}

/// Elements for the scales below: random magnitudes over many binades,
/// the exact multiples `c · s` of each scale's quarter-steps of
/// float8_e4m3fn / float4_e2m1fn (ties, boundaries and their neighbours),
/// zeros, and values past the formats' largest.
fn elements(scale: f64, n: usize, seed: u64) -> Vec<f32> {
    let w = words(n, seed);
    let mut v: Vec<f32> = w
        .iter()
        .map(|&u| {
            let m = (u >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            m * 2f32.powi((u % 30) as i32 - 14) * scale as f32
        })
        .collect();
    for (i, c) in (0..n / 4).enumerate() {
        // quarter steps of 2^-12 up to ±512: exact products for scales of
        // few significant bits, neighbours of ties for the others
        let q = (c as f64 - (n / 8) as f64) * 2f64.powi(-12 + (i % 22) as i32);
        v[i * 4 % n] = (q * scale) as f32;
        v[(i * 4 + 1) % n] = f32::from_bits(((q * scale) as f32).to_bits().wrapping_add(1));
    }
    v[0] = 0.0;
    v[1] = -0.0;
    v[2] = 1e30;
    v[3] = -1e30;
    v
}

/// Every mode with the random numbers it needs (explicit bits).
fn roundings(bits: &[u32]) -> Vec<(Rounding<'_>, u32)> {
    let mut r = Vec::new();
    for mode in RoundMode::ALL {
        if mode.is_stochastic() {
            for sr in [1u32, 3, 13, 32] {
                r.push((Rounding::new(mode).with_bits(RandomBits::U32(bits), sr), sr));
            }
        } else {
            r.push((Rounding::new(mode), 0));
        }
    }
    r
}

/// Explicit numbers below `2^sr` from the same stream.
fn masked(bits: &[u32], sr: u32) -> Vec<u32> {
    let mask = if sr == 32 { u32::MAX } else { (1 << sr) - 1 };
    bits.iter().map(|b| b & mask).collect()
}

/// float64 elements next to thresholds: for random multiples `b` of
/// 2^-f below `top` (f from 0 to 32: representable values, midpoints and
/// stochastic thresholds of every `sr_bits`), the float64 product `b · d`
/// and its two neighbours, so that a float64 division `x / d` often lands
/// exactly on `b` while the exact quotient does not (what the quotient
/// rounded to odd gets right), with both signs.
fn near_thresholds(d: f64, top: f64, n: usize, seed: u64) -> Vec<f64> {
    const FRAC: [i32; 9] = [0, 1, 2, 3, 5, 8, 16, 24, 32];
    words(n, seed)
        .iter()
        .enumerate()
        .map(|(i, &u)| {
            let frac = FRAC[i / 3 % FRAC.len()];
            let b = (u as f64 / u32::MAX as f64 * top * 2f64.powi(frac)).floor() * 2f64.powi(-frac);
            let x = b * d;
            let x = match i % 3 {
                0 => x,
                1 => x.next_up(),
                _ => x.next_down(),
            };
            if i % 2 == 1 {
                -x
            } else {
                x
            }
        })
        .collect()
}

/// The code of `x / d` (zeros keep their sign): the exact quotient's
/// rounding, except for
/// `stochastic_fast` / `stochastic_fastest` below the smallest subnormal
/// spacing, where gfloat's float64 addition `fl(δ + r·2^−N)` looks at bits
/// no float64 quotient carries and the quantizers document the 53-bit
/// quotient rounded to odd.
fn expected(f: &Format, x: f64, d: f64, mode: RoundMode, number: u32, sr: u32) -> u32 {
    if x == 0.0 {
        // zeros keep their sign
        return if x.is_sign_negative() {
            1 << (f.bits() - 1)
        } else {
            0
        };
    }
    let exact = representative(x, d, false);
    let fast = matches!(
        mode,
        RoundMode::StochasticFast | RoundMode::StochasticFastest
    );
    let v = if fast && exact.abs() < decode_f64(f, 1) {
        representative(x, d, true)
    } else {
        exact
    };
    round_f64(f, v, mode, true, number, sr).unwrap()
}

#[test]
fn the_oracle_agrees_with_exact_quotients() {
    // Where the quotient is exact in f64 (power-of-two divisors), the
    // representative is the quotient itself.
    for (x, d) in [
        (3.0, 4.0),
        (-0.375, 0.5),
        (1e-3, 2f64.powi(-20)),
        (448.0, 1.0),
    ] {
        assert_eq!(representative(x, d, false), x / d);
        assert_eq!(representative(x, d, true), x / d);
    }
    // 1/3 lies strictly inside its interval of 2^-52; rounded to odd it is
    // the truncation 0x3FD5555555555555 (already odd).
    let r = representative(1.0, 3.0, false);
    assert!((r - 1.0 / 3.0).abs() <= 2f64.powi(-53));
    assert_eq!(
        representative(1.0, 3.0, true).to_bits(),
        0x3FD5_5555_5555_5555
    );
    assert_eq!(
        representative(-2.0, 3.0, true).to_bits(),
        0xBFE5_5555_5555_5555
    );
}

#[test]
fn fp8_elements_round_as_the_exact_quotient() {
    let n = 4096;
    let raw = words(n, 7);
    // Scales: float32 quotients of amax / 448 (many significant bits),
    // bfloat16 ones, and short ones whose products with the tie grid are
    // exact.
    let scales = [
        fp8_scale(1.0, mldtypes::dtype::DType::Float32),
        fp8_scale(37.25, mldtypes::dtype::DType::Float32),
        fp8_scale(0.013, mldtypes::dtype::DType::BFloat16),
        0.75,
        3.0,
        (1.0f32 / 3.0) as f64,
    ];
    for (si, &s) in scales.iter().enumerate() {
        // float32 elements, and float64 ones next to thresholds (up to 480)
        let mut x: Vec<f64> = elements(s, n / 2, si as u64 + 1)
            .iter()
            .map(|&v| v as f64)
            .collect();
        x.extend(near_thresholds(s, 480.0, n / 2, si as u64 + 100));
        for sr_bits in [1u32, 3, 13, 32] {
            let bits = masked(&raw, sr_bits);
            for (r, sr) in roundings(&bits) {
                if r.mode.is_stochastic() && sr != sr_bits {
                    continue;
                }
                if !r.mode.is_stochastic() && sr_bits != 1 {
                    continue;
                }
                let mut out = vec![0u8; n];
                // two segments of n / 2 sharing the scale
                mx::fp8_quantize_rounded(&x, n / 2, &[s, s], &r, &mut out).unwrap();
                for (i, (&v, &c)) in x.iter().zip(&out).enumerate() {
                    let want = expected(&FLOAT8_E4M3FN, v, s, r.mode, r.number(i), sr);
                    assert_eq!(
                        c as u32, want,
                        "scale {s} {} sr_bits {sr} element {i} = {v}",
                        r.mode
                    );
                }
            }
        }
    }
}

#[test]
fn nvfp4_elements_round_as_the_exact_quotient() {
    let n = 4096;
    let raw = words(n, 11);
    for (ti, amax) in [2688.0f64, 1.0, 0.0371, 1e4].into_iter().enumerate() {
        let s2 = nvfp4_tensor_scale(amax);
        // float32 elements, then float64 blocks whose first element fixes
        // the block scale to a chosen float8_e4m3fn value m (amax 6·m·s2)
        // and whose others lie next to thresholds times d = m·s2
        let mut x: Vec<f64> = elements(amax / 6.0, n / 2, ti as u64 + 20)
            .iter()
            .map(|&v| v as f64)
            .collect();
        let ms = [1.0, 0.8125, 13.0, 448.0, 0.001953125, 2.75];
        for (j, blk) in (0..n / 2).collect::<Vec<_>>().chunks(16).enumerate() {
            let m = ms[j % ms.len()];
            let d = m * s2 as f64;
            x.push(6.0 * d);
            x.extend(near_thresholds(
                d,
                6.0,
                blk.len() - 1,
                (ti * 1000 + j) as u64,
            ));
        }
        for sr_bits in [1u32, 13, 32] {
            let bits = masked(&raw, sr_bits);
            for (r, sr) in roundings(&bits) {
                if (r.mode.is_stochastic() && sr != sr_bits)
                    || (!r.mode.is_stochastic() && sr_bits != 1)
                {
                    continue;
                }
                let (mut p, mut sc) = (vec![0u8; n / 2], vec![0u8; n / 16]);
                mx::nvfp4_quantize_rounded(&x, s2, &r, &mut p, &mut sc).unwrap();
                // The block scales are those of round to nearest even.
                let (mut p0, mut sc0) = (vec![0u8; n / 2], vec![0u8; n / 16]);
                mx::nvfp4_quantize(&x, s2, &mut p0, &mut sc0).unwrap();
                assert_eq!(sc, sc0, "amax {amax} {}", r.mode);
                for (i, &v) in x.iter().enumerate() {
                    let code = (p[i / 2] >> (4 * (i % 2))) & 0xf;
                    let b = i / 16;
                    assert_ne!(sc[b], 0x7f, "NaN scale for finite block {b}");
                    let d = decode_f64(&FLOAT8_E4M3FN, sc[b] as u32) * s2 as f64;
                    let want = expected(&FLOAT4_E2M1FN, v, d, r.mode, r.number(i), sr);
                    assert_eq!(
                        code as u32, want,
                        "amax {amax} {} sr_bits {sr} element {i} = {v}",
                        r.mode
                    );
                }
            }
        }
    }
}

#[test]
fn nearest_even_is_the_plain_quantizers() {
    let n = 2048;
    let x = elements(0.02, n, 3);
    let ne = Rounding::new(RoundMode::NearestEven);
    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
    mx::fp8_quantize_rounded(&x, n, &[0.02], &ne, &mut a).unwrap();
    mx::fp8_quantize(&x, n, &[0.02], &mut b).unwrap();
    assert_eq!(a, b);
    // and the rounded quantizer's own loop gives the same codes: explicit
    // bits with a deterministic mode are refused, so compare nearest_away,
    // which differs from nearest_even on exact ties only
    let away = Rounding::new(RoundMode::NearestAway);
    mx::fp8_quantize_rounded(&x, n, &[0.02], &away, &mut a).unwrap();
    for (i, (&p, &q)) in a.iter().zip(&b).enumerate() {
        if p != q {
            let r = representative(x[i] as f64, 0.02, false);
            let lo = decode_f64(&FLOAT8_E4M3FN, q.min(p) as u32 & 0x7f);
            let hi = decode_f64(&FLOAT8_E4M3FN, q.max(p) as u32 & 0x7f);
            assert_eq!(r.abs(), (lo + hi) / 2.0, "element {i}: not a tie");
        }
    }
    let s2 = nvfp4_tensor_scale(6.0);
    let (mut p1, mut s1) = (vec![0u8; n / 2], vec![0u8; n / 16]);
    let (mut p2, mut s2b) = (vec![0u8; n / 2], vec![0u8; n / 16]);
    mx::nvfp4_quantize_rounded(&x, s2, &ne, &mut p1, &mut s1).unwrap();
    mx::nvfp4_quantize(&x, s2, &mut p2, &mut s2b).unwrap();
    assert_eq!((p1, s1), (p2, s2b));
}

#[test]
fn seeded_pieces_give_the_whole() {
    let n = 4096;
    let x = elements(0.5, n, 5);
    let r = Rounding::new(RoundMode::Stochastic).with_seed(77, 16);
    let (mut whole, mut parts) = (vec![0u8; n], vec![0u8; n]);
    mx::fp8_quantize_rounded(&x, n, &[0.5], &r, &mut whole).unwrap();
    for (k, (xs, o)) in x.chunks(1000).zip(parts.chunks_mut(1000)).enumerate() {
        let p = r.part(k * 1000, k * 1000 + xs.len());
        mx::fp8_quantize_rounded(xs, xs.len(), &[0.5], &p, o).unwrap();
    }
    assert_eq!(whole, parts);
    let s2 = nvfp4_tensor_scale(3.0);
    let (mut pw, mut sw) = (vec![0u8; n / 2], vec![0u8; n / 16]);
    mx::nvfp4_quantize_rounded(&x, s2, &r, &mut pw, &mut sw).unwrap();
    let (mut pp, mut sp) = (vec![0u8; n / 2], vec![0u8; n / 16]);
    for k in 0..4 {
        let (a, b) = (k * 1024, (k + 1) * 1024);
        mx::nvfp4_quantize_rounded(
            &x[a..b],
            s2,
            &r.part(a, b),
            &mut pp[a / 2..b / 2],
            &mut sp[a / 16..b / 16],
        )
        .unwrap();
    }
    assert_eq!((pw, sw), (pp, sp));
}

#[test]
fn refusals_are_typed() {
    let x = [1.0f32; 16];
    let (mut p, mut s, mut o) = ([0u8; 8], [0u8; 1], [0u8; 16]);
    let no_bits = Rounding::new(RoundMode::Stochastic);
    assert!(matches!(
        mx::nvfp4_quantize_rounded(&x, 1.0, &no_bits, &mut p, &mut s),
        Err(mx::BlockError::Rounding(_))
    ));
    assert!(matches!(
        mx::fp8_quantize_rounded(&x, 16, &[1.0], &no_bits, &mut o),
        Err(mx::BlockError::Rounding(_))
    ));
    let short = [1u32; 3];
    let r = Rounding::new(RoundMode::StochasticFast).with_bits(RandomBits::U32(&short), 8);
    assert!(mx::fp8_quantize_rounded(&x, 16, &[1.0], &r, &mut o).is_err());
    assert!(matches!(
        mx::fp8_quantize_rounded(&x, 16, &[0.0], &Rounding::NEAREST_EVEN, &mut o),
        Err(mx::BlockError::Fp8Scale { .. })
    ));
}
