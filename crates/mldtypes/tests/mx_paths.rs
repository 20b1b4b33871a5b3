//! The vectorised block quantizers (MX from float32, NVFP4 from float32 and
//! float64), on every kernel path this CPU runs, against the scalar reference
//! path ([`Path::Scalar`], itself checked against exact rational arithmetic
//! in `tests/mx.rs`): scales, packed element codes and clip counts, for every
//! MX format, both scale rules, and every class of float32 input — random
//! values over the whole exponent range, ties (values with few significant
//! bits, exact midpoints after scaling), subnormal blocks, NaN / infinity
//! blocks, blocks at the largest magnitudes and at the clipping and ceil-rule
//! boundaries, zeros of both signs; and FP8 with scales, exact rounding
//! boundaries included.

use mldtypes::cast::{available_paths, Path};
use mldtypes::mx::{self, MxFormat, ScaleRule, MX_BLOCK, NVFP4_BLOCK};

/// A deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn sign(&mut self) -> u32 {
        (self.next() as u32) & 0x8000_0000
    }
}

/// The input classes of the sweep.
const CLASSES: usize = 9;

/// One block of `n` float32 inputs of class `class`.
fn block(r: &mut Rng, class: usize, n: usize) -> Vec<f32> {
    let mut x = vec![0f32; n];
    match class {
        // Random bit patterns over every finite exponent.
        0 => {
            for v in &mut x {
                let e = r.below(255) as u32;
                *v = f32::from_bits(r.sign() | e << 23 | (r.next() as u32 & 0x7f_ffff));
            }
        }
        // Random values within a few octaves of each other (the common case).
        1 => {
            let base = 100 + r.below(60) as u32;
            for v in &mut x {
                let e = base + r.below(12) as u32;
                *v = f32::from_bits(r.sign() | e << 23 | (r.next() as u32 & 0x7f_ffff));
            }
        }
        // Ties: few significant bits, so that scaled values fall on the
        // midpoints between element values (and on their neighbours).
        2 => {
            let base = 110 + r.below(40) as u32;
            for v in &mut x {
                let e = base + r.below(8) as u32;
                let keep = 1 + r.below(5) as u32; // significant fraction bits
                let m = (r.next() as u32 & 0x7f_ffff) & !((1 << (23 - keep)) - 1);
                let t = r.sign() | e << 23 | m;
                // Exactly on a tie, or one float32 step to either side.
                let t = match r.below(4) {
                    0 => t.wrapping_add(1),
                    1 if m != 0 => t - 1,
                    _ => t,
                };
                *v = f32::from_bits(t);
            }
        }
        // Subnormal blocks, some with a normal element.
        3 => {
            for v in &mut x {
                *v = f32::from_bits(r.sign() | (r.next() as u32 & 0x7f_ffff) >> r.below(23));
            }
            if r.below(2) == 0 {
                let i = r.below(n as u64) as usize;
                x[i] = f32::from_bits(r.sign() | (1 + r.below(8) as u32) << 23);
            }
        }
        // NaN (any payload) or an infinity among ordinary values.
        4 => {
            for v in &mut x {
                *v = (r.below(2000) as f32 - 1000.0) / 37.0;
            }
            let bad = match r.below(3) {
                0 => f32::from_bits(r.sign() | 0x7f80_0000 | (1 + r.below(0x7f_ffff) as u32)),
                1 => f32::INFINITY,
                _ => f32::NEG_INFINITY,
            };
            x[r.below(n as u64) as usize] = bad;
        }
        // Largest magnitudes: elements at and near float32's maximum.
        5 => {
            for v in &mut x {
                let e = 254 - r.below(30) as u32;
                *v = f32::from_bits(r.sign() | e << 23 | (r.next() as u32 & 0x7f_ffff));
            }
            x[0] = if r.below(2) == 0 { f32::MAX } else { -f32::MAX };
        }
        // Boundaries of the block scale and of clipping: the block maximum
        // at 2^j · m for fractions m at and around every element format's
        // maximum fraction (1.5, 1.75, 1.875, 127/64) and every rounding
        // boundary beyond it.
        6 => {
            let fracs: [u32; 6] = [
                0x40_0000, 0x60_0000, 0x70_0000, 0x7e_0000, 0x68_0000, 0x7f_0000,
            ];
            let e = 1 + r.below(253) as u32;
            for v in &mut x {
                let f = fracs[r.below(6) as usize];
                let f = match r.below(3) {
                    0 => f + 1,
                    1 => f - 1,
                    _ => f,
                };
                let ee = e.saturating_sub(r.below(4) as u32).max(1);
                *v = f32::from_bits(r.sign() | ee << 23 | f);
            }
        }
        // Zeros of both signs, now and then with one tiny or huge value.
        7 => {
            for v in &mut x {
                *v = f32::from_bits(r.sign());
            }
            match r.below(3) {
                0 => x[r.below(n as u64) as usize] = f32::from_bits(1 + r.below(100) as u32),
                1 => x[r.below(n as u64) as usize] = 3e38,
                _ => {}
            }
        }
        // Random bit patterns, any exponent including subnormals.
        _ => {
            for v in &mut x {
                let b = r.next() as u32;
                let b = if b & 0x7f80_0000 == 0x7f80_0000 {
                    b & !0x0080_0000
                } else {
                    b
                };
                *v = f32::from_bits(b);
            }
        }
    }
    x
}

fn vector_paths() -> Vec<Path> {
    available_paths()
        .into_iter()
        .filter(|&p| p != Path::Scalar)
        .collect()
}

/// Quantizes `x` on `path` and on the scalar path; panics on a difference.
fn check_mx(path: Path, x: &[f32], f: MxFormat, rule: ScaleRule) {
    let nb = x.len() / MX_BLOCK;
    let (mut b0, mut s0) = (vec![0u8; nb * f.block_bytes()], vec![0u8; nb]);
    let (mut b1, mut s1) = (vec![0u8; nb * f.block_bytes()], vec![0u8; nb]);
    let c0 = mx::quantize_on(Path::Scalar, x, f, rule, &mut b0, &mut s0).unwrap();
    let c1 = mx::quantize_on(path, x, f, rule, &mut b1, &mut s1).unwrap();
    if (&b0, &s0, c0) != (&b1, &s1, c1) {
        let bb = f.block_bytes();
        let b = (0..nb)
            .find(|&b| s0[b] != s1[b] || b0[b * bb..(b + 1) * bb] != b1[b * bb..(b + 1) * bb])
            .unwrap_or(0);
        panic!(
            "{path} {} {}: block {b} scale {:#04x} vs {:#04x}, codes {:x?} vs {:x?}, counts {c0:?} vs {c1:?}, input {:?}",
            f.name(),
            rule.name(),
            s0[b],
            s1[b],
            &b0[b * bb..(b + 1) * bb],
            &b1[b * bb..(b + 1) * bb],
            &x[b * MX_BLOCK..(b + 1) * MX_BLOCK]
        );
    }
}

fn check_nvfp4<T: mx::BlockSource + std::fmt::Debug>(path: Path, x: &[T], s2: f32) {
    let n = x.len();
    let (mut p0, mut s0) = (vec![0u8; n / 2], vec![0u8; n / NVFP4_BLOCK]);
    let (mut p1, mut s1) = (vec![0u8; n / 2], vec![0u8; n / NVFP4_BLOCK]);
    let c0 = mx::nvfp4_quantize_on(Path::Scalar, x, s2, &mut p0, &mut s0).unwrap();
    let c1 = mx::nvfp4_quantize_on(path, x, s2, &mut p1, &mut s1).unwrap();
    if (&p0, &s0, c0) != (&p1, &s1, c1) {
        let b = (0..n / NVFP4_BLOCK)
            .find(|&b| s0[b] != s1[b] || p0[b * 8..b * 8 + 8] != p1[b * 8..b * 8 + 8])
            .unwrap_or(0);
        panic!(
            "{path} nvfp4 s2 {s2:e}: block {b} scale {:#04x} vs {:#04x}, codes {:x?} vs {:x?}, clipped {c0} vs {c1}, input {:?}",
            s0[b],
            s1[b],
            &p0[b * 8..b * 8 + 8],
            &p1[b * 8..b * 8 + 8],
            &x[b * NVFP4_BLOCK..(b + 1) * NVFP4_BLOCK]
        );
    }
}

/// `blocks` blocks per class, format, rule and path.
fn sweep_mx(seed: u64, blocks: usize) -> u64 {
    let mut r = Rng(seed);
    let mut n = 0;
    for path in vector_paths() {
        for class in 0..CLASSES {
            let x: Vec<f32> = (0..blocks)
                .flat_map(|_| block(&mut r, class, MX_BLOCK))
                .collect();
            for f in MxFormat::ALL {
                for rule in ScaleRule::ALL {
                    check_mx(path, &x, f, rule);
                    n += x.len() as u64;
                }
            }
        }
    }
    n
}

/// `blocks` blocks per class and path, with the tensor's own scale and with
/// random ones, from float32 and from float64.
fn sweep_nvfp4(seed: u64, blocks: usize) -> u64 {
    let mut r = Rng(seed);
    let mut n = 0;
    for path in vector_paths() {
        for class in 0..CLASSES {
            let x: Vec<f32> = (0..blocks)
                .flat_map(|_| block(&mut r, class, NVFP4_BLOCK))
                .collect();
            let amax = x
                .iter()
                .filter(|v| v.is_finite())
                .fold(0f64, |m, v| m.max(v.abs() as f64));
            let own = mx::nvfp4_tensor_scale(amax);
            let random =
                f32::from_bits(((1 + r.below(253)) as u32) << 23 | r.next() as u32 & 0x7f_ffff);
            let tiny = f32::from_bits(1 + r.below(1 << 23) as u32);
            let wide: Vec<f64> = x.iter().map(|v| *v as f64).collect();
            for s2 in [own, random, tiny, 1.0] {
                check_nvfp4(path, &x, s2);
                check_nvfp4(path, &wide, s2);
                n += 2 * x.len() as u64;
            }
        }
        // float64 inputs beyond float32's range and precision.
        let wide: Vec<f64> = (0..blocks * NVFP4_BLOCK)
            .map(|_| {
                let e = 1 + r.below(2046);
                f64::from_bits((r.next() & 0x8000_0000_0000_0000) | e << 52 | (r.next() >> 12))
            })
            .collect();
        for s2 in [1.0, f32::MIN_POSITIVE, f32::MAX] {
            check_nvfp4(path, &wide, s2);
            n += wide.len() as u64;
        }
    }
    n
}

fn check_fp8(path: Path, x: &[f32], seg: usize, scales: &[f64]) {
    let (mut c0, mut c1) = (vec![0u8; x.len()], vec![0u8; x.len()]);
    let k0 = mx::fp8_quantize_on(Path::Scalar, x, seg, scales, &mut c0).unwrap();
    let k1 = mx::fp8_quantize_on(path, x, seg, scales, &mut c1).unwrap();
    if (&c0, k0) != (&c1, k1) {
        let i = (0..x.len()).find(|&i| c0[i] != c1[i]).unwrap_or(0);
        panic!(
            "{path} fp8: element {i} = {:e} / {:e}: {:#04x} vs {:#04x}, clipped {k0} vs {k1}",
            x[i],
            scales[i / seg],
            c0[i],
            c1[i]
        );
    }
}

/// FP8 with scales: every input class with the segments' own scales, random
/// scales, scales whose reciprocals leave float32's normal range, and inputs
/// that are exact multiples `s · t` of a scale by the rounding boundaries
/// `t` of float8_e4m3fn (ties, the clipping boundary 464, subnormal ties)
/// and their float32 neighbours.
fn sweep_fp8(seed: u64, blocks: usize) -> u64 {
    let mut r = Rng(seed);
    let mut n = 0;
    for path in vector_paths() {
        for class in 0..CLASSES {
            let x: Vec<f32> = (0..blocks).flat_map(|_| block(&mut r, class, 48)).collect();
            let seg = 48;
            let own: Vec<f64> = x
                .chunks(seg)
                .map(|c| {
                    let a = c
                        .iter()
                        .filter(|v| v.is_finite())
                        .fold(0f64, |m, v| m.max(v.abs() as f64));
                    mx::fp8_scale(a, mldtypes::dtype::DType::Float32)
                })
                .collect();
            let random: Vec<f64> = own
                .iter()
                .map(|_| {
                    f32::from_bits(((1 + r.below(253)) as u32) << 23 | r.next() as u32 & 0x7f_ffff)
                        as f64
                })
                .collect();
            let extreme: Vec<f64> = own
                .iter()
                .enumerate()
                .map(|(i, _)| match i % 3 {
                    0 => f32::from_bits(1 + r.below(1 << 23) as u32) as f64,
                    1 => f32::MAX as f64,
                    _ => 2f64.powi(-130),
                })
                .collect();
            for scales in [&own, &random, &extreme] {
                check_fp8(path, &x, seg, scales);
                n += x.len() as u64;
            }
        }
        // Exact boundaries: s · t for t a midpoint between adjacent
        // float8_e4m3fn values (or 464), s with few significant bits so the
        // product is a float32; and their neighbours.
        let mut x = Vec::new();
        let mut scales = Vec::new();
        for _ in 0..blocks {
            let s = (1 + r.below(63)) as f64 * 2f64.powi(r.below(40) as i32 - 30);
            for code in 0..126u32 {
                let lo = mldtypes::float8_e4m3fn::from_bits(code as u8).to_f64();
                let hi = mldtypes::float8_e4m3fn::from_bits(code as u8 + 1).to_f64();
                let t = if code == 125 { 464.0 } else { (lo + hi) / 2.0 };
                let v = (t * s) as f32;
                x.extend([
                    v,
                    -v,
                    f32::from_bits(v.to_bits() + 1),
                    f32::from_bits(v.to_bits() - 1),
                ]);
            }
            while x.len() % 16 != 0 {
                x.push(0.0);
            }
            scales.resize(x.len() / 16, s);
        }
        check_fp8(path, &x, 16, &scales);
        n += x.len() as u64;
    }
    n
}

#[test]
fn fp8_every_input_class_on_every_kernel_path() {
    assert!(sweep_fp8(0x5eed_0003, 64) > 0 || vector_paths().is_empty());
}

#[test]
fn mx_every_input_class_on_every_kernel_path() {
    assert!(sweep_mx(0x5eed_0001, 256) > 0 || vector_paths().is_empty());
}

#[test]
fn nvfp4_every_input_class_on_every_kernel_path() {
    assert!(sweep_nvfp4(0x5eed_0002, 256) > 0 || vector_paths().is_empty());
}

#[test]
fn every_path_is_reported_and_refused_when_missing() {
    for p in Path::ALL {
        let x = [1.0f32; 32];
        let (mut b, mut s) = ([0u8; 32], [0u8]);
        let r = mx::quantize_on(*p, &x, MxFormat::Fp8E4M3, ScaleRule::Floor, &mut b, &mut s);
        if p.is_available() {
            assert_eq!(r, Ok(mx::BlockCounts::default()));
            assert_eq!((s[0], b[0]), (127 - 8, 0x78)); // 1.0 · 2^8 = 256
        } else {
            assert_eq!(r, Err(mx::BlockError::PathUnavailable(*p)));
        }
    }
    // A tensor scale that is not positive and finite is an error.
    for s2 in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
        let (mut p, mut s) = ([0u8; 8], [0u8]);
        let r = mx::nvfp4_quantize(&[1.0f32; 16], s2, &mut p, &mut s);
        assert_eq!(r, Err(mx::BlockError::TensorScale { bits: s2.to_bits() }));
    }
}

/// The long sweep: 2^16 blocks per class, format, rule and path (about
/// 300 million MX elements on two vector paths), and as many NVFP4 blocks.
///
/// Ignored by default; run with
/// `nice cargo test --release -p mldtypes --test mx_paths -- --ignored --nocapture`.
#[test]
#[ignore]
fn long_sweep_on_every_kernel_path() {
    let mut total = 0;
    for round in 0..16u64 {
        total += sweep_mx(0x1000 + round, 4096);
        total += sweep_nvfp4(0x2000 + round, 4096);
        total += sweep_fp8(0x3000 + round, 2048);
    }
    println!("compared {total} elements on {:?}", vector_paths());
}
