//! MX element rounding with every mode of `mldtypes::round`
//! (`mx::quantize_rounded`): each block's scale is the scale rule's, as
//! `mx::quantize` computes it, and each element `x / X` is the code the
//! slice API `mldtypes::cast::round_bytes` gives it with the same mode,
//! saturating, and the same random number (its index in the input).

use mldtypes::cast::{pack, round_bytes};
use mldtypes::dtype::DType;
use mldtypes::mx::{self, BlockError, MxFormat, ScaleRule, MX_BLOCK};
use mldtypes::round::{RoundMode, Rounding, RoundingError};

/// Values over many binades, zero blocks and a block with an infinity.
fn input() -> Vec<f32> {
    let mut v: Vec<f32> = (0..64 * MX_BLOCK as u32)
        .map(|i| {
            let h = i.wrapping_mul(2654435761) ^ (i >> 3).wrapping_mul(40503);
            let m = (h >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            m * 2f32.powi(((h % 23) as i32) - 11 + (i as i32 / 32 % 7) * 3)
        })
        .collect();
    v[32..64].fill(0.0);
    v[64] = f32::INFINITY;
    v
}

fn reference(x: &[f32], fmt: MxFormat, rule: ScaleRule, r: &Rounding<'_>) -> (Vec<u8>, Vec<u8>) {
    let nb = x.len() / MX_BLOCK;
    let (mut blocks, mut scales) = (vec![0u8; nb * fmt.block_bytes()], vec![0u8; nb]);
    mx::quantize(x, fmt, rule, &mut blocks, &mut scales).unwrap();
    let d = fmt.element().unwrap();
    let mut q = vec![0f64; x.len()];
    for (b, s) in scales.iter().enumerate() {
        for j in 0..MX_BLOCK {
            let i = b * MX_BLOCK + j;
            q[i] = if *s == 0xff {
                0.0
            } else {
                x[i] as f64 * 2f64.powi(127 - *s as i32)
            };
        }
    }
    let src: Vec<u8> = q.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut codes = vec![0u8; x.len()];
    round_bytes(&src, DType::Float64, &mut codes, d, &r.saturating(true)).unwrap();
    let mut want = vec![0u8; nb * fmt.block_bytes()];
    for (b, s) in scales.iter().enumerate() {
        let c = &mut codes[b * MX_BLOCK..(b + 1) * MX_BLOCK];
        if *s == 0xff {
            c.fill(0);
        }
        let out = &mut want[b * fmt.block_bytes()..(b + 1) * fmt.block_bytes()];
        if fmt.bits() < 8 {
            pack::pack(c, d, out).unwrap();
        } else {
            out.copy_from_slice(c);
        }
    }
    (want, scales)
}

#[test]
fn every_mode_matches_the_slice_api_element_by_element() {
    let x = input();
    let nb = x.len() / MX_BLOCK;
    let mut checked = 0;
    for fmt in MxFormat::ALL.into_iter().filter(|f| *f != MxFormat::Int8) {
        for rule in [ScaleRule::Floor, ScaleRule::Ceil] {
            for mode in RoundMode::ALL {
                let r = if mode.is_stochastic() {
                    Rounding::new(mode).with_seed(0xfeed, 13)
                } else {
                    Rounding::new(mode)
                };
                let (mut blocks, mut scales) = (vec![0u8; nb * fmt.block_bytes()], vec![0u8; nb]);
                mx::quantize_rounded(&x, fmt, rule, &r, &mut blocks, &mut scales).unwrap();
                let (want_b, want_s) = reference(&x, fmt, rule, &r);
                assert_eq!(scales, want_s, "{fmt:?} {rule:?} {mode}");
                assert_eq!(blocks, want_b, "{fmt:?} {rule:?} {mode}");
                // Cut into two parts at a block boundary: the same bytes.
                let cut = 17 * MX_BLOCK;
                let (mut b2, mut s2) = (vec![0u8; nb * fmt.block_bytes()], vec![0u8; nb]);
                let bb = cut / MX_BLOCK * fmt.block_bytes();
                let (b_lo, b_hi) = b2.split_at_mut(bb);
                let (s_lo, s_hi) = s2.split_at_mut(cut / MX_BLOCK);
                mx::quantize_rounded(&x[..cut], fmt, rule, &r.part(0, cut), b_lo, s_lo).unwrap();
                let p = r.part(cut, x.len());
                mx::quantize_rounded(&x[cut..], fmt, rule, &p, b_hi, s_hi).unwrap();
                assert_eq!((b2, s2), (blocks, scales), "{fmt:?} {rule:?} {mode}: parts");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 5 * 2 * 9);
}

#[test]
fn stochastic_elements_differ_by_seed_and_refusals_are_typed() {
    let x = input();
    let nb = x.len() / MX_BLOCK;
    let fmt = MxFormat::Fp4;
    let run = |r: &Rounding<'_>| {
        let (mut b, mut s) = (vec![0u8; nb * 16], vec![0u8; nb]);
        mx::quantize_rounded(&x, fmt, ScaleRule::Floor, r, &mut b, &mut s).map(|_| b)
    };
    let a = run(&Rounding::new(RoundMode::Stochastic).with_seed(1, 8)).unwrap();
    let b = run(&Rounding::new(RoundMode::Stochastic).with_seed(2, 8)).unwrap();
    assert_ne!(a, b);
    assert_eq!(
        run(&Rounding::new(RoundMode::Stochastic)),
        Err(BlockError::Rounding(RoundingError::MissingRandom(
            RoundMode::Stochastic
        )))
    );
    let (mut b, mut s) = (vec![0u8; nb * 32], vec![0u8; nb]);
    let e = mx::quantize_rounded(
        &x,
        MxFormat::Int8,
        ScaleRule::Floor,
        &Rounding::new(RoundMode::TowardZero),
        &mut b,
        &mut s,
    );
    assert_eq!(e, Err(BlockError::IntegerRounding(RoundMode::TowardZero)));
}
