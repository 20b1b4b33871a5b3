//! The float32-source rounding kernels (every mode, the bfloat16 kernel
//! with one shift for every element, the deterministic modes' kernel of
//! one-byte formats, on AVX2 the tables of one-byte targets and bfloat16's
//! written-out directed modes, the hand-written Philox4x32-10 of the seeded
//! numbers, streamed outputs) on every path this CPU runs, against
//! the scalar path (the scalar core, one element at a time):
//!
//! - a dense sample of float32 bit patterns (one in 16,381, both signs,
//!   every binade) into the formats of the benchmark and the structures
//!   around them, every mode, with and without saturation, random numbers
//!   of 1, 13, 24 and 32 bits;
//! - seeded numbers at offsets on both sides of block and 2^64 boundaries,
//!   and long inputs whose outputs are streamed, against the same input in
//!   short pieces.
//!
//! Every float32 bit pattern into float8_e4m3fn and bfloat16 under every
//! mode is `#[ignore]`d (minutes on two cores):
//! `cargo test -p mldtypes --test round_f32_sweep -- --ignored`.

use mldtypes::cast::{available_paths, round_bytes_on, Path};
use mldtypes::dtype::DType;
use mldtypes::round::{seeded_bits, Random, RandomBits, RoundMode, Rounding};

/// The targets of the dense sample.
const TARGETS: &[DType] = &[
    DType::Float8E4M3FN,
    DType::BFloat16,
    DType::Float16,
    DType::Float8E5M2,
    DType::Float8E4M3FNUZ,
    DType::Float8E8M0FNU,
    DType::Float4E2M1FN,
];

/// A number per element from its index (splitmix64), below `2^sr_bits`.
fn number(i: u64, sr_bits: u32) -> u32 {
    let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(0x2626);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> (64 - sr_bits)) as u32
}

fn vector_paths() -> Vec<Path> {
    available_paths()
        .into_iter()
        .filter(|p| *p != Path::Scalar)
        .collect()
}

/// Rounds the float32 patterns `src` into `to` on `paths` and on the scalar
/// path under `r`; panics at the first difference.
fn compare(src: &[u32], to: DType, r: &Rounding, paths: &[Path]) {
    let bytes: &[u8] = bytemuck::cast_slice(src);
    let b = to.itemsize();
    let mut want = vec![0u8; src.len() * b];
    round_bytes_on(Path::Scalar, bytes, DType::Float32, &mut want, to, r).unwrap();
    let mut got = vec![0u8; src.len() * b];
    for &p in paths {
        round_bytes_on(p, bytes, DType::Float32, &mut got, to, r).unwrap();
        if got != want {
            let i = (0..src.len())
                .find(|&i| got[i * b..(i + 1) * b] != want[i * b..(i + 1) * b])
                .unwrap();
            panic!(
                "float32 {:#010x} -> {to} {} sat={} random {:?} (number {}) on {p}: {:02x?}, \
                 scalar {:02x?}",
                src[i],
                r.mode,
                r.saturate,
                r.random.sr_bits(),
                r.number(i),
                &got[i * b..(i + 1) * b],
                &want[i * b..(i + 1) * b]
            );
        }
    }
}

/// Every mode, saturating or not, the stochastic ones with each width of
/// `widths` (numbers from [`number`], offset by `first`).
fn each_rounding(n: usize, first: u64, widths: &[u32], mut f: impl FnMut(&Rounding)) {
    for sat in [false, true] {
        for m in RoundMode::ALL {
            if !m.is_stochastic() {
                f(&Rounding::new(m).saturating(sat));
                continue;
            }
            for &w in widths {
                let bits: Vec<u32> = (0..n as u64).map(|i| number(first + i, w)).collect();
                f(&Rounding::new(m)
                    .saturating(sat)
                    .with_bits(RandomBits::U32(&bits), w));
            }
        }
    }
}

#[test]
fn a_dense_float32_sample_on_every_path_matches_the_scalar_path() {
    let paths = vector_paths();
    // One pattern in 16,381 (odd: every low-bit residue occurs), and the
    // patterns around every binade edge.
    let mut src: Vec<u32> = (0..=u32::MAX).step_by(16381).collect();
    for e in 0..256u32 {
        for m in [
            0u32, 1, 2, 0x3f_ffff, 0x40_0000, 0x40_0001, 0x7f_fffe, 0x7f_ffff,
        ] {
            src.push((e << 23) | m);
            src.push((e << 23) | m | 0x8000_0000);
        }
    }
    for &to in TARGETS {
        each_rounding(src.len(), 0, &[1, 13, 24, 32], |r| {
            compare(&src, to, r, &paths)
        });
    }
}

#[test]
fn seeded_numbers_on_every_path_at_any_offset() {
    let paths = vector_paths();
    // float32 values whose dropped fraction into bfloat16 is spread over
    // all 16 bits: the results show the numbers' top bits.
    let x: Vec<f32> = (0..3000u32)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(0x9e37_79b9) >> 9)))
        .collect();
    let bytes: &[u8] = bytemuck::cast_slice(&x);
    for seed in [0u64, 0x1234_5678_9abc_def0, u64::MAX] {
        for first in [
            0u64,
            1,
            2,
            3,
            5,
            63,
            64,
            65,
            (1 << 40) + 1,
            u64::MAX - 100,
            u64::MAX - 2,
        ] {
            for n in [0usize, 1, 3, 63, 64, 65, 129, 1000, 3000] {
                for sr in [1u32, 13, 16, 32] {
                    // The numbers of elements `first ..` of a seeded array.
                    let r = Rounding {
                        random: Random::Seed {
                            seed,
                            offset: first,
                            sr_bits: sr,
                        },
                        ..Rounding::new(RoundMode::StochasticFastest)
                    };
                    let nums: Vec<u32> = (0..n as u64)
                        .map(|i| seeded_bits(seed, first.wrapping_add(i), sr))
                        .collect();
                    let rb = Rounding::new(RoundMode::StochasticFastest)
                        .with_bits(RandomBits::U32(&nums), sr);
                    let mut want = vec![0u8; 2 * n];
                    round_bytes_on(
                        Path::Scalar,
                        &bytes[..4 * n],
                        DType::Float32,
                        &mut want,
                        DType::BFloat16,
                        &rb,
                    )
                    .unwrap();
                    for &p in &paths {
                        let mut got = vec![0u8; 2 * n];
                        round_bytes_on(
                            p,
                            &bytes[..4 * n],
                            DType::Float32,
                            &mut got,
                            DType::BFloat16,
                            &r,
                        )
                        .unwrap();
                        assert_eq!(
                            got, want,
                            "seed {seed:#x} first {first} n {n} sr {sr} on {p}"
                        );
                    }
                }
            }
        }
    }
}

/// Outputs of 40 MB and more are written with streaming stores, piece by
/// piece: each piece's random numbers are its elements' own, and the
/// deterministic modes' kernel (called once per staged block there) gives
/// the codes of shorter conversions.
#[test]
fn streamed_outputs_keep_each_elements_numbers() {
    let n = 7_000_013;
    let x: Vec<f32> = (0..n as u32)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(0x9e37_79b9) >> 9)))
        .collect();
    let bits: Vec<u16> = (0..n as u64).map(|i| number(i, 16) as u16).collect();
    let bytes: &[u8] = bytemuck::cast_slice(&x);
    let roundings = [
        Rounding::new(RoundMode::Stochastic).with_seed(77, 16),
        Rounding::new(RoundMode::StochasticFast).with_bits(RandomBits::U16(&bits), 16),
        Rounding::new(RoundMode::TowardPositive),
        Rounding::new(RoundMode::NearestAway).saturating(true),
    ];
    for &p in &vector_paths() {
        for r in &roundings {
            // One element in: the output's start is not 64-byte aligned.
            for skip in [0usize, 1] {
                let m = n - skip;
                let r = r.part(skip, n);
                let src = &bytes[4 * skip..];
                let mut whole = vec![0u8; 2 * m + 2];
                round_bytes_on(
                    p,
                    src,
                    DType::Float32,
                    &mut whole[skip..skip + 2 * m],
                    DType::BFloat16,
                    &r,
                )
                .unwrap();
                let mut pieces = vec![0u8; 2 * m];
                let step = 100_003;
                for s in (0..m).step_by(step) {
                    let e = (s + step).min(m);
                    round_bytes_on(
                        p,
                        &src[4 * s..4 * e],
                        DType::Float32,
                        &mut pieces[2 * s..2 * e],
                        DType::BFloat16,
                        &r.part(s, e),
                    )
                    .unwrap();
                }
                assert!(
                    whole[skip..skip + 2 * m] == pieces[..],
                    "{:?} on {p}, skip {skip}",
                    r.mode
                );
            }
        }
    }
}

/// Every float32 bit pattern into float8_e4m3fn and bfloat16, every mode
/// (random numbers of 13 bits), saturating or not, on every vector path.
/// `ROUND_SWEEP_TARGETS` / `ROUND_SWEEP_MODES` (comma-separated names)
/// run a part of it.
#[test]
#[ignore = "long sweep: every float32 bit pattern, every mode, two targets"]
fn every_float32_pattern_on_every_path_matches_the_scalar_path() {
    let paths = vector_paths();
    const PIECE: u64 = 1 << 22;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let wanted = |var: &str, name: &str| {
        std::env::var(var).map_or(true, |v| v.split(',').any(|w| w == name))
    };
    for to in [DType::Float8E4M3FN, DType::BFloat16] {
        if !wanted("ROUND_SWEEP_TARGETS", &to.to_string()) {
            continue;
        }
        std::thread::scope(|s| {
            for t in 0..threads as u64 {
                let paths = &paths;
                s.spawn(move || {
                    let mut k = t;
                    while k * PIECE < 1 << 32 {
                        let first = k * PIECE;
                        let src: Vec<u32> = (first..first + PIECE).map(|b| b as u32).collect();
                        each_rounding(src.len(), first, &[13], |r| {
                            if wanted("ROUND_SWEEP_MODES", r.mode.name()) {
                                compare(&src, to, r, paths)
                            }
                        });
                        k += threads as u64;
                    }
                });
            }
        });
    }
}
