//! Every conversion kernel, on every path this CPU runs, against the scalar
//! reference conversions, for every pair of float dtypes and both overflow
//! modes, over every code point and a probe set of float32 / float64 inputs
//! (normals, subnormals, ties, overflow boundaries, ±0, ±inf, NaN payloads,
//! random bit patterns).

use mldtypes::cast::{self, available_paths, cast_bytes_on, CastError, Overflow, Path};
use mldtypes::dtype::DType;
use mldtypes::format::Format;

mod common;
mod reference;
use reference::{ref_convert_bytes, Rng};

/// Float dtypes the kernels convert among.
const FLOATS: &[DType] = &[
    DType::Float32,
    DType::Float64,
    DType::Float16,
    DType::BFloat16,
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

const MODES: [Overflow; 2] = [Overflow::NonSaturating, Overflow::Saturating];

/// Exactly representable values of `fmt` (as float64, finite ones).
fn values(fmt: &Format) -> Vec<f64> {
    let d = if fmt.bits() > 8 {
        if fmt.man_bits == 7 {
            DType::BFloat16
        } else {
            DType::Float16
        }
    } else {
        FLOATS
            .iter()
            .copied()
            .find(|d| d.format() == Some(*fmt))
            .unwrap()
    };
    let codes = all_codes(d);
    let mut out = vec![0u8; codes.len() / d.itemsize() * 8];
    ref_convert_bytes(&codes, d, &mut out, DType::Float64, Overflow::NonSaturating);
    let mut v: Vec<f64> = out
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .filter(|x| x.is_finite())
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

fn all_codes(d: DType) -> Vec<u8> {
    match d.itemsize() {
        1 => (0..=255u8).collect(),
        2 => (0..=u16::MAX).flat_map(|c| c.to_le_bytes()).collect(),
        _ => unreachable!(),
    }
}

/// float32 probe inputs: special values, every value of every format, the
/// midpoints between neighbours (ties) and their float32 neighbours, and
/// random bit patterns.
fn probe_f32() -> Vec<f32> {
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0001,
        0xff80_0001,
        0x7fa0_0000,
        0x7fff_ffff,
        0x7fc0_1234,
        0xffbf_ffff,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x0040_0000,
        0x0060_0000,
        0x0060_0001,
        0x005f_ffff,
        0x7f7f_ffff,
        0x7f40_0000,
        0x7f3f_ffff,
    ];
    for fmt in mldtypes::format::ALL {
        let vals = values(fmt);
        for w in vals.windows(2) {
            let mid = ((w[0] + w[1]) / 2.0) as f32;
            for x in [w[0] as f32, mid] {
                let b = x.to_bits();
                v.extend([b.wrapping_sub(1), b, b.wrapping_add(1)]);
            }
        }
        // Beyond the largest finite value: half an ulp and more.
        let max = *vals.last().unwrap();
        for k in [1.0, 1.0 + 1e-7, 1.5, 2.0, 1e3] {
            let ulp = fmt.epsilon() * max / 2.0;
            v.push(((max + ulp * k) as f32).to_bits());
        }
    }
    let mut rng = Rng(0x5eed);
    v.extend((0..1 << 16).map(|_| rng.next() as u32));
    // The ml_dtypes probe set of the format vectors.
    v.extend(common::load_u32("f32_probe_inputs"));
    let pos: Vec<u32> = v.iter().map(|b| b & 0x7fff_ffff).collect();
    pos.iter()
        .chain(
            pos.iter()
                .map(|b| b | 0x8000_0000)
                .collect::<Vec<_>>()
                .iter(),
        )
        .map(|b| f32::from_bits(*b))
        .collect()
}

/// float64 probe inputs: the float32 probes widened, plus values just off
/// the float32 grid (where converting through float32 would round twice).
fn probe_f64() -> Vec<f64> {
    let mut v: Vec<f64> = probe_f32().iter().map(|x| *x as f64).collect();
    let mut extra = Vec::new();
    for x in &v {
        if x.is_finite() && *x != 0.0 {
            let b = x.to_bits();
            extra.extend([f64::from_bits(b + 1), f64::from_bits(b - 1)]);
        }
    }
    v.extend(extra);
    v.extend([
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0xfff8_0000_0000_0001),
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1.5 * 2f64.powi(128),
        1.9 * 2f64.powi(128),
        2f64.powi(129),
    ]);
    let mut rng = Rng(0xf64);
    v.extend((0..1 << 15).map(|_| f64::from_bits(rng.next())));
    v.extend(
        common::load_u64("f64_probe_inputs")
            .into_iter()
            .map(f64::from_bits),
    );
    v
}

fn inputs(d: DType) -> Vec<u8> {
    match d {
        DType::Float32 => probe_f32().iter().flat_map(|x| x.to_le_bytes()).collect(),
        DType::Float64 => probe_f64().iter().flat_map(|x| x.to_le_bytes()).collect(),
        _ => all_codes(d),
    }
}

fn check_pair(from: DType, to: DType, src: &[u8], paths: &[Path]) -> usize {
    let n = src.len() / from.itemsize();
    let mut compared = 0;
    for ov in MODES {
        let mut want = vec![0u8; n * to.itemsize()];
        ref_convert_bytes(src, from, &mut want, to, ov);
        for &p in paths {
            let mut got = vec![0u8; n * to.itemsize()];
            cast_bytes_on(p, src, from, &mut got, to, ov).unwrap();
            if got != want {
                let (a, b) = (from.itemsize(), to.itemsize());
                let i = (0..n)
                    .find(|&i| got[i * b..(i + 1) * b] != want[i * b..(i + 1) * b])
                    .unwrap();
                panic!(
                    "{from} -> {to} ({ov:?}) on {p}: element {i} (input bytes {:02x?}) gave {:02x?}, reference {:02x?}",
                    &src[i * a..(i + 1) * a],
                    &got[i * b..(i + 1) * b],
                    &want[i * b..(i + 1) * b]
                );
            }
            compared += n;
        }
    }
    compared
}

/// Every float pair whose source is one of `sources` and whose target is one
/// of `targets`, on every path (the pairs are split over several tests so
/// that the test threads share them).
fn every_pair(sources: impl Fn(DType) -> bool, targets: impl Fn(DType) -> bool) -> usize {
    let paths = available_paths();
    let mut compared = 0;
    for &from in FLOATS.iter().filter(|&&d| sources(d)) {
        let src = inputs(from);
        for &to in FLOATS.iter().filter(|&&d| targets(d)) {
            compared += check_pair(from, to, &src, &paths);
        }
    }
    eprintln!("compared {compared} converted elements on {paths:?}");
    compared
}

#[test]
fn every_float_pair_from_float32_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d == DType::Float32, |_| true) > 100_000);
}

#[test]
fn every_float_pair_from_float64_to_wide_types_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d == DType::Float64, |d| d.itemsize() > 1) > 100_000);
}

/// Whether `d` is a one-byte type of even (`half` 0) or odd (1) position in
/// [`FLOATS`].
fn one_byte_half(d: DType, half: usize) -> bool {
    d.itemsize() == 1
        && FLOATS
            .iter()
            .position(|&f| f == d)
            .is_some_and(|i| i % 2 == half)
}

#[test]
fn every_float_pair_from_float64_to_one_byte_types_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d == DType::Float64, |d| one_byte_half(d, 0)) > 100_000);
}

#[test]
fn every_float_pair_from_float64_to_other_one_byte_types_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d == DType::Float64, |d| one_byte_half(d, 1)) > 100_000);
}

#[test]
fn every_float_pair_from_16_bit_types_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d.itemsize() == 2, |_| true) > 1_000_000);
}

#[test]
fn every_float_pair_from_one_byte_types_on_every_path_matches_the_reference() {
    assert!(every_pair(|d| d.itemsize() == 1, |_| true) > 10_000);
}

#[test]
fn misaligned_buffers_and_chunk_tails() {
    // Odd offsets force the bounce buffers; odd lengths hit the loop tails.
    let src: Vec<u8> = probe_f32()[..10_001]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut shifted = vec![0u8; src.len() + 1];
    shifted[1..].copy_from_slice(&src);
    for &to in FLOATS {
        let n = src.len() / 4;
        let mut want = vec![0u8; n * to.itemsize()];
        ref_convert_bytes(&src, DType::Float32, &mut want, to, Overflow::NonSaturating);
        for p in available_paths() {
            let mut got = vec![0u8; n * to.itemsize() + 1];
            cast_bytes_on(
                p,
                &shifted[1..],
                DType::Float32,
                &mut got[1..],
                to,
                Overflow::NonSaturating,
            )
            .unwrap();
            let bad = (0..n).find(|&i| {
                let b = to.itemsize();
                got[1 + i * b..1 + (i + 1) * b] != want[i * b..(i + 1) * b]
            });
            assert_eq!(
                bad, None,
                "float32 -> {to} on {p}, misaligned: first bad element"
            );
        }
    }
}

#[test]
fn large_outputs_written_with_streaming_stores_match_the_reference() {
    // Conversions moving 40 MiB and more between element types within a
    // factor of two in size are written with non-temporal stores through a
    // staging buffer; destinations not 64-byte aligned start with a plainly
    // converted head. Random bit patterns cover NaNs, subnormals and
    // overflow; the lengths are not multiples of any block.
    let pairs = [
        (DType::Float32, DType::BFloat16),
        (DType::BFloat16, DType::Float32),
        (DType::Float32, DType::Float16),
        (DType::Float16, DType::Float32),
        (DType::Float32, DType::Float64),
        (DType::Float64, DType::Float32),
    ];
    let mut rng = Rng(11);
    for (from, to) in pairs {
        let (sa, sb) = (from.itemsize(), to.itemsize());
        let n = (41 << 20) / (sa + sb) + 13;
        let src: Vec<u8> = (0..n * sa).map(|_| rng.next() as u8).collect();
        let mut want = vec![0u8; n * sb];
        ref_convert_bytes(&src, from, &mut want, to, Overflow::NonSaturating);
        // Offsets of 0 and of one element from a 64-byte boundary.
        let mut backing = vec![0u8; n * sb + 128];
        let base = backing.as_ptr().align_offset(64);
        for off in [base, base + sb] {
            let got = &mut backing[off..off + n * sb];
            got.fill(0);
            for p in available_paths() {
                cast_bytes_on(p, &src, from, got, to, Overflow::NonSaturating).unwrap();
                let bad = (0..n).find(|&i| got[i * sb..(i + 1) * sb] != want[i * sb..(i + 1) * sb]);
                assert_eq!(
                    bad, None,
                    "{from} -> {to} on {p}, offset {off}: first bad element"
                );
            }
            got.fill(0);
            cast::cast_bytes(&src, from, got, to, Overflow::NonSaturating).unwrap();
            assert!(got == &want[..], "{from} -> {to} in parallel, offset {off}");
        }
    }
}

#[test]
fn parallel_split_matches_single_thread() {
    let x: Vec<f32> = {
        let mut rng = Rng(7);
        (0..600_000)
            .map(|_| f32::from_bits(rng.next() as u32))
            .collect()
    };
    let mut a = vec![0u8; x.len()];
    let mut b = vec![0u8; x.len()];
    let bytes: &[u8] = bytemuck::cast_slice(&x);
    cast::cast_bytes(
        bytes,
        DType::Float32,
        &mut a,
        DType::Float8E4M3FN,
        Overflow::NonSaturating,
    )
    .unwrap();
    ref_convert_bytes(
        bytes,
        DType::Float32,
        &mut b,
        DType::Float8E4M3FN,
        Overflow::NonSaturating,
    );
    assert!(a == b, "parallel result differs");
}

#[test]
fn typed_api_and_errors() {
    let x = [1.0f32, 2.0, 3.0];
    let mut y = [0f64; 2];
    assert_eq!(
        cast::convert_slice(&x, &mut y),
        Err(CastError::LengthMismatch { src: 3, dst: 2 })
    );
    let mut z = [0u8; 4];
    let e = cast::cast_bytes(
        &[0u8; 7],
        DType::Float32,
        &mut z,
        DType::Float8E5M2,
        Overflow::NonSaturating,
    )
    .unwrap_err();
    assert_eq!(
        e,
        CastError::PartialElement {
            dtype: DType::Float32,
            len: 7
        }
    );
    assert!(e.to_string().contains("7 bytes"));
    let e = cast::cast_bytes(
        &[0u8; 8],
        DType::Complex64,
        &mut z,
        DType::Float32,
        Overflow::NonSaturating,
    )
    .unwrap_err();
    assert_eq!(
        e,
        CastError::UnsupportedPair {
            from: DType::Complex64,
            to: DType::Float32
        }
    );
    assert_eq!(
        e.to_string(),
        "conversion from complex64 to float32 is not supported"
    );
    assert!(!cast::is_supported(DType::Int32, DType::Float32));
    assert!(cast::is_supported(DType::Int4, DType::Float32));
    let mut w = [0f64; 3];
    cast::convert_slice(&x, &mut w).unwrap();
    assert_eq!(w, [1.0, 2.0, 3.0]);
}

#[test]
fn forcing_a_path() {
    for p in Path::ALL {
        let r = cast::set_path(Some(*p));
        assert_eq!(r.is_ok(), p.is_available());
    }
    cast::set_path(None).unwrap();
    assert!(cast::path().is_available());
}

/// Fixed values on every path: float8_e8m0fnu from float32 and bfloat16
/// subnormals above 2^-127 is 2^-126, as ml_dtypes 0.6.0 and PyTorch give
/// (all of (2^-127, 2^-126) rounds up), from float64 it rounds to nearest,
/// float16 keeps float32 / float64 NaN payloads as NumPy does, and drops
/// them between formats as ml_dtypes does.
#[test]
fn e8m0_subnormals_and_float16_nan_payloads_on_every_path() {
    fn run(p: Path, src: &[u8], from: DType, to: DType) -> Vec<u8> {
        let mut out = vec![0u8; src.len() / from.itemsize() * to.itemsize()];
        cast_bytes_on(p, src, from, &mut out, to, Overflow::NonSaturating).unwrap();
        out
    }
    let f32_bytes = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|b| b.to_le_bytes()).collect() };
    let u16_bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|b| b.to_le_bytes()).collect() };
    for p in available_paths() {
        // 2^-127, just above, just below the tie 1.5·2^-127, the tie, 2^-126.
        let x = f32_bytes(&[
            0x0040_0000,
            0x0040_0001,
            0x005f_ffff,
            0x0060_0000,
            0x0080_0000,
        ]);
        assert_eq!(
            run(p, &x, DType::Float32, DType::Float8E8M0FNU),
            [0, 1, 1, 1, 1],
            "{p}"
        );
        let x: Vec<u8> = [0x0040_0001u32, 0x005f_ffff]
            .iter()
            .flat_map(|&b| (f32::from_bits(b) as f64).to_le_bytes())
            .collect();
        assert_eq!(
            run(p, &x, DType::Float64, DType::Float8E8M0FNU),
            [0, 0],
            "{p}"
        );
        let bf = u16_bytes(&[0x0041, 0x005f, 0x0060]);
        assert_eq!(
            run(p, &bf, DType::BFloat16, DType::Float8E8M0FNU),
            [1, 1, 1],
            "{p}"
        );

        let nans = f32_bytes(&[0x7f80_0001, 0xffa0_0000, 0x7fc0_0000, 0x7fff_ffff]);
        let want = u16_bytes(&[0x7c01, 0xfd00, 0x7e00, 0x7fff]);
        assert_eq!(run(p, &nans, DType::Float32, DType::Float16), want, "{p}");
        let nans: Vec<u8> = [
            0x7ff0_0000_0000_0001u64,
            0xfff4_0000_0000_0000,
            0x7ff0_0400_0000_0000,
        ]
        .iter()
        .flat_map(|b| b.to_le_bytes())
        .collect();
        let want = u16_bytes(&[0x7c01, 0xfd00, 0x7c01]);
        assert_eq!(run(p, &nans, DType::Float64, DType::Float16), want, "{p}");
        let bf = u16_bytes(&[0x7f81, 0xffc1]);
        let want = u16_bytes(&[0x7e00, 0xfe00]);
        assert_eq!(run(p, &bf, DType::BFloat16, DType::Float16), want, "{p}");
        // NumPy widens float16 NaNs bit by bit (a signalling NaN stays one).
        let h = u16_bytes(&[0x7c01, 0xfd00]);
        let want: Vec<u8> = [0x7ff0_0400_0000_0000u64, 0xfff4_0000_0000_0000]
            .iter()
            .flat_map(|b| b.to_le_bytes())
            .collect();
        assert_eq!(run(p, &h, DType::Float16, DType::Float64), want, "{p}");
    }
}

/// Every one of the 2^32 float32 bit patterns into every format, both
/// overflow modes, on every vector path this CPU runs, against the scalar
/// path (the element conversions, themselves checked against an independent
/// reference over all 2^32 inputs by `float_all_f32`). Chunks of 2^24
/// inputs, large enough for the streaming-store path of the 16-bit formats.
///
/// Ignored by default (about 17 minutes on two threads); run with
/// `cargo test --release -p mldtypes --test cast_paths -- --ignored --nocapture`.
#[test]
#[ignore]
fn all_f32_inputs_on_every_kernel_path() {
    const CHUNK: u64 = 1 << 24;
    let vector: Vec<Path> = available_paths()
        .into_iter()
        .filter(|&p| p != Path::Scalar)
        .collect();
    let formats: Vec<DType> = FLOATS[2..].to_vec();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let chunks = (1u64 << 32) / CHUNK;
    let compared = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (vector, formats, compared) = (&vector, &formats, &compared);
            s.spawn(move || {
                let mut src = vec![0u8; CHUNK as usize * 4];
                for c in (t..chunks).step_by(threads as usize) {
                    for (k, b) in src.chunks_exact_mut(4).enumerate() {
                        b.copy_from_slice(&((c * CHUNK + k as u64) as u32).to_le_bytes());
                    }
                    for &to in formats {
                        let mut want = vec![0u8; CHUNK as usize * to.itemsize()];
                        let mut got = want.clone();
                        for ov in MODES {
                            cast_bytes_on(Path::Scalar, &src, DType::Float32, &mut want, to, ov)
                                .unwrap();
                            for &p in vector {
                                cast_bytes_on(p, &src, DType::Float32, &mut got, to, ov).unwrap();
                                if got != want {
                                    let b = to.itemsize();
                                    let i = (0..CHUNK as usize)
                                        .find(|&i| got[i * b..(i + 1) * b] != want[i * b..(i + 1) * b])
                                        .unwrap();
                                    panic!(
                                        "float32 {:#010x} -> {to} ({ov:?}) on {p}: {:02x?}, scalar path {:02x?}",
                                        c * CHUNK + i as u64,
                                        &got[i * b..(i + 1) * b],
                                        &want[i * b..(i + 1) * b]
                                    );
                                }
                                compared.fetch_add(CHUNK, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    }
                }
            });
        }
    });
    let n = compared.into_inner();
    eprintln!("compared {n} conversions on {vector:?}");
    assert_eq!(
        n,
        (1u64 << 32) * formats.len() as u64 * 2 * vector.len() as u64
    );
}
