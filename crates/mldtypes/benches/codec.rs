//! The run-time codec against the compiled kernels, in the same run, with
//! ratios: each IEEE P3109 member that has the layout of a named format
//! (`p3109_k8p4sf` = float8_e4m3fnuz, `p3109_k8p3sf` = float8_e5m2fnuz)
//! converted by the named format's compile-time kernels
//! ([`Strategy::Compiled`]), by the descriptor-driven kernels
//! ([`Strategy::Descriptor`], parameters at run time) and float32 → code by
//! the 64 Ki-entry table ([`Strategy::Table`]); the extended members next
//! to the named format of their shape; and 16-bit members next to bfloat16
//! and float16.
//!
//! Single-threaded on the automatically selected path (or `--path NAME`),
//! 64 Ki elements (cache resident) and 16 Mi (memory bound); each variant
//! is timed in alternation with the others, best of the rounds.
//!
//! Run with `cargo bench -p mldtypes --bench codec [-- --path avx2]`.

use std::hint::black_box;
use std::time::Instant;

use mldtypes::cast::{self, Codec, Overflow, Path, Strategy};
use mldtypes::format::{self, Format};

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// float32 values over a format's range (subnormals and overflow included).
fn values(f: &Format, n: usize) -> Vec<f32> {
    let mut r = Rng(1);
    let lo = (f.min_exp() - f.man_bits as i32 - 2).max(-149);
    let hi = (f.max_exp() + 2).min(127);
    let span = (hi - lo + 1) as u64;
    (0..n)
        .map(|_| {
            let b = r.next();
            let e = lo + (b % span) as i32;
            let m = 1.0 + (b >> 40) as f64 / (1u64 << 24) as f64;
            let s = if b & (1 << 20) != 0 { -1.0 } else { 1.0 };
            (s * m * 2f64.powi(e)) as f32
        })
        .collect()
}

fn time(rounds: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..rounds {
        f();
    }
    t.elapsed().as_secs_f64() / rounds as f64
}

/// One named variant of a conversion.
type Variant<'a> = (&'a str, Box<dyn FnMut() + 'a>);

/// Variants of one conversion, timed in alternation; best per-element ns.
fn race(n: usize, variants: &mut [Variant<'_>]) -> Vec<f64> {
    let rounds = ((1usize << 26) / n).clamp(3, 2000);
    let mut best = vec![f64::INFINITY; variants.len()];
    for _ in 0..9 {
        for (i, (_, f)) in variants.iter_mut().enumerate() {
            let t = time(rounds, &mut *f);
            best[i] = best[i].min(t * 1e9 / n as f64);
        }
    }
    best
}

fn row(label: &str, names: &[&str], ns: &[f64]) {
    let base = ns[0];
    let cells: Vec<String> = names
        .iter()
        .zip(ns)
        .map(|(n, t)| format!("{n} {t:.3} ns ({:.2}x)", t / base))
        .collect();
    println!("{label:<34} {}", cells.join("  "));
}

fn codec(f: &Format, s: Strategy) -> Codec {
    Codec::with_strategy(f, s).expect("the strategy applies")
}

/// Encode and decode of an 8-bit member by every strategy.
fn eight_bit(n: usize, path: Path, member: Format, reference: Option<Format>) {
    let xs = values(&member, n);
    let ov = Overflow::NonSaturating;
    let mut strategies: Vec<(&str, Codec)> = Vec::new();
    if let Some(r) = reference {
        strategies.push((r.name, codec(&r, Strategy::Compiled)));
    }
    strategies.push(("descriptor", codec(&member, Strategy::Descriptor)));
    strategies.push(("table", codec(&member, Strategy::Table)));
    let names: Vec<&str> = strategies.iter().map(|s| s.0).collect();
    let mut outs: Vec<Vec<u8>> = strategies.iter().map(|_| vec![0u8; n]).collect();
    let ns = {
        let mut v: Vec<Variant<'_>> = Vec::new();
        for ((name, c), out) in strategies.iter().zip(outs.iter_mut()) {
            let xs = &xs;
            v.push((
                name,
                Box::new(move || {
                    c.encode_f32_slice_on(path, black_box(xs), out, ov).unwrap();
                    black_box(&mut *out);
                }),
            ));
        }
        race(n, &mut v)
    };
    row(&format!("float32 -> {}", member.name), &names, &ns);
    // The member's strategies give the same bits (the reference too when it
    // has the member's layout).
    let same_layout = reference.is_some_and(|r| {
        Codec::with_strategy(&member, Strategy::Compiled).is_ok()
            && r.max_finite() == member.max_finite()
    });
    let skip = usize::from(reference.is_some() && !same_layout);
    assert!(
        outs[skip..].windows(2).all(|w| w[0] == w[1]),
        "strategies disagree"
    );

    // float64 sources and decoding take the descriptor kernels under the
    // table strategy too: compare the compiled and descriptor kernels only.
    strategies.retain(|(n, _)| *n != "table");
    outs.truncate(strategies.len());
    let names: Vec<&str> = strategies.iter().map(|s| s.0).collect();
    let ys: Vec<f64> = xs.iter().map(|&x| x as f64 * 1.0000001).collect();
    let ns = {
        let mut v: Vec<Variant<'_>> = Vec::new();
        for ((name, c), out) in strategies.iter().zip(outs.iter_mut()) {
            let ys = &ys;
            v.push((
                name,
                Box::new(move || {
                    c.encode_f64_slice_on(path, black_box(ys), out, ov).unwrap();
                    black_box(&mut *out);
                }),
            ));
        }
        race(n, &mut v)
    };
    row(&format!("float64 -> {}", member.name), &names, &ns);

    let codes: Vec<u8> = (0..n)
        .map(|i| (i as u64).wrapping_mul(0x9e37_79b9) as u8)
        .collect();
    let mut decs: Vec<Vec<f32>> = strategies.iter().map(|_| vec![0f32; n]).collect();
    let ns = {
        let mut v: Vec<Variant<'_>> = Vec::new();
        for ((name, c), out) in strategies.iter().zip(decs.iter_mut()) {
            let codes = &codes;
            v.push((
                name,
                Box::new(move || {
                    c.decode_f32_slice_on(path, black_box(codes), out).unwrap();
                    black_box(&mut *out);
                }),
            ));
        }
        race(n, &mut v)
    };
    row(&format!("{} -> float32", member.name), &names, &ns);
}

/// A 16-bit member (descriptor kernels) next to a named 16-bit format.
fn sixteen_bit(n: usize, path: Path, member: Format, reference: Format) {
    let xs = values(&member, n);
    let ov = Overflow::NonSaturating;
    let r = codec(&reference, Strategy::Compiled);
    let m = Codec::new(&member).unwrap();
    let (mut a, mut b) = (vec![0u16; n], vec![0u16; n]);
    let ns = race(
        n,
        &mut [
            (
                reference.name,
                Box::new(|| {
                    r.encode_f32_slice_on(path, black_box(&xs), &mut a, ov)
                        .unwrap()
                }),
            ),
            (
                member.name,
                Box::new(|| {
                    m.encode_f32_slice_on(path, black_box(&xs), &mut b, ov)
                        .unwrap()
                }),
            ),
        ],
    );
    row(
        &format!("float32 -> {}", member.name),
        &[reference.name, "descriptor"],
        &ns,
    );
    let codes: Vec<u16> = (0..n)
        .map(|i| (i as u64).wrapping_mul(0x9e37_79b9) as u16)
        .collect();
    let (mut c, mut d) = (vec![0f32; n], vec![0f32; n]);
    let ns = race(
        n,
        &mut [
            (
                reference.name,
                Box::new(|| {
                    r.decode_f32_slice_on(path, black_box(&codes), &mut c)
                        .unwrap()
                }),
            ),
            (
                member.name,
                Box::new(|| {
                    m.decode_f32_slice_on(path, black_box(&codes), &mut d)
                        .unwrap()
                }),
            ),
        ],
    );
    row(
        &format!("{} -> float32", member.name),
        &[reference.name, "descriptor"],
        &ns,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut path = cast::path();
    while let Some(a) = args.next() {
        if a == "--path" {
            let name = args.next().unwrap_or_default();
            path = *Path::ALL
                .iter()
                .find(|p| p.name() == name)
                .expect("a path name");
        }
    }
    assert!(path.is_available(), "{path} is not available on this CPU");
    let p = |k, p, s, e| Format::p3109(k, p, s, e).unwrap();
    for n in [1usize << 16, 1 << 24] {
        println!("# path {path}, {n} elements, one thread; ns per element (ratio to the first)");
        eight_bit(n, path, p(8, 4, true, false), Some(format::FLOAT8_E4M3FNUZ));
        eight_bit(n, path, p(8, 3, true, false), Some(format::FLOAT8_E5M2FNUZ));
        eight_bit(n, path, p(8, 4, true, true), Some(format::FLOAT8_E4M3FNUZ));
        eight_bit(n, path, p(8, 3, true, true), Some(format::FLOAT8_E5M2FNUZ));
        eight_bit(n, path, p(8, 1, false, true), None);
        sixteen_bit(n, path, p(16, 8, true, true), format::BFLOAT16);
        sixteen_bit(n, path, p(16, 11, true, true), format::FLOAT16);
        println!();
    }
}
