//! Single-threaded timings of the conversion kernels, for `mldtypes bench`.
//!
//! Each conversion runs on generated data (a deterministic generator; finite
//! values spread over the target's exponent range for float32 → format,
//! uniformly random codes for format → float32) on the calling thread with
//! the automatically selected [`Path`](super::Path), best of several
//! repetitions. The bound it is compared with is a plain `memcpy` of the
//! larger of the two buffers (the bytes a conversion must at least stream).
//!
//! # Examples
//!
//! ```
//! let rows = mldtypes::cast::bench::run(4096);
//! assert!(rows.iter().all(|r| r.ns_per_element > 0.0));
//! ```

use std::time::{Duration, Instant};

use crate::dtype::DType;
use crate::format::Overflow;

use super::{cast_bytes_on, dispatch};

/// One measured conversion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchRow {
    /// Source dtype.
    pub from: DType,
    /// Destination dtype.
    pub to: DType,
    /// Best time per element, in nanoseconds.
    pub ns_per_element: f64,
    /// Best time per element of a `memcpy` of the larger buffer, in nanoseconds.
    pub memcpy_ns_per_element: f64,
}

/// The formats every float32 ↔ format pair is measured for.
pub const FORMATS: &[DType] = &[
    DType::BFloat16,
    DType::Float16,
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

/// The (from, to) pairs [`run`] measures: float32 → each of [`FORMATS`] and back.
///
/// # Examples
///
/// ```
/// let p = mldtypes::cast::bench::pairs();
/// assert_eq!(p.len(), 2 * mldtypes::cast::bench::FORMATS.len());
/// ```
pub fn pairs() -> Vec<(DType, DType)> {
    FORMATS
        .iter()
        .flat_map(|&d| [(DType::Float32, d), (d, DType::Float32)])
        .collect()
}

/// SplitMix64: a small deterministic generator for benchmark data.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Generated source bytes for a conversion from `from` (into `to`).
///
/// float32 sources hold finite values whose magnitudes spread over the
/// target's range (subnormals and overflow included); code sources hold
/// uniformly random codes.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// let b = mldtypes::cast::bench::generate(DType::Float32, DType::Float8E4M3FN, 16);
/// assert_eq!(b.len(), 64);
/// ```
pub fn generate(from: DType, to: DType, n: usize) -> Vec<u8> {
    let mut rng = SplitMix(0x6d6c_6474_7970_6573);
    match from {
        DType::Float32 => {
            let (lo, hi) = match to.format() {
                Some(f) => (f.min_exp() - f.man_bits as i32 - 2, f.max_exp() + 2),
                None => (-20, 20),
            };
            let span = (hi - lo + 1) as u64;
            let mut out = Vec::with_capacity(n * 4);
            for _ in 0..n {
                let r = rng.next();
                let e = lo + (r % span) as i32;
                let m = 1.0 + ((r >> 32) as f64) / 4_294_967_296.0;
                let s = if r & (1 << 20) != 0 { -1.0 } else { 1.0 };
                let x = (s * m * 2f64.powi(e)) as f32;
                out.extend_from_slice(&x.to_le_bytes());
            }
            out
        }
        _ => {
            let size = from.itemsize();
            let mut out = Vec::with_capacity(n * size);
            for _ in 0..n {
                let r = rng.next().to_le_bytes();
                out.extend_from_slice(&r[..size]);
            }
            out
        }
    }
}

/// A zeroed buffer of `len` bytes, backed by transparent huge pages where
/// the system allows it (as NumPy backs arrays of 4 MiB and more on Linux),
/// so that measurements do not depend on how the allocator happened to map
/// the pages.
fn buffer(len: usize) -> memmap2::MmapMut {
    let m =
        memmap2::MmapMut::map_anon(len.max(1)).expect("anonymous memory for a benchmark buffer");
    #[cfg(target_os = "linux")]
    let _ = m.advise(memmap2::Advice::HugePage);
    m
}

/// [`buffer`] holding a copy of `data`.
fn buffer_from(data: &[u8]) -> memmap2::MmapMut {
    let mut m = buffer(data.len());
    m[..data.len()].copy_from_slice(data);
    m
}

/// Best wall time of `reps` runs of `f` (at least one).
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Repetitions for `n` elements: more for small inputs.
fn reps_for(n: usize) -> usize {
    ((1usize << 27) / n.max(1)).clamp(7, 1000)
}

/// Times `from → to` over `n` generated elements on the calling thread.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// let r = mldtypes::cast::bench::measure(DType::Float32, DType::BFloat16, 1024);
/// assert!(r.ns_per_element > 0.0 && r.memcpy_ns_per_element > 0.0);
/// ```
pub fn measure(from: DType, to: DType, n: usize) -> BenchRow {
    let n = n.max(1);
    let src = buffer_from(&generate(from, to, n));
    let mut dst = buffer(n * to.itemsize());
    let path = dispatch::path();
    let reps = reps_for(n);
    let t = best(reps, || {
        cast_bytes_on(path, &src, from, &mut dst, to, Overflow::NonSaturating)
            .expect("benchmarked pairs are supported");
        std::hint::black_box(&mut dst);
    });
    let bytes = n * from.itemsize().max(to.itemsize());
    let mut a = buffer(bytes);
    a.fill(1);
    let mut b = buffer(bytes);
    let m = best(reps, || {
        b.copy_from_slice(std::hint::black_box(&a));
        std::hint::black_box(&mut b);
    });
    BenchRow {
        from,
        to,
        ns_per_element: t.as_secs_f64() * 1e9 / n as f64,
        memcpy_ns_per_element: m.as_secs_f64() * 1e9 / n as f64,
    }
}

/// Measures every pair of [`pairs`] over `elements` generated elements,
/// single-threaded.
///
/// # Examples
///
/// ```
/// let rows = mldtypes::cast::bench::run(1000);
/// assert_eq!(rows.len(), mldtypes::cast::bench::pairs().len());
/// ```
pub fn run(elements: usize) -> Vec<BenchRow> {
    pairs()
        .into_iter()
        .map(|(a, b)| measure(a, b, elements))
        .collect()
}
