//! Reductions that accumulate in float32 and round once at the end.
//!
//! Summing many values in a narrow format loses everything once the running
//! sum's unit in the last place exceeds the addends: a bfloat16 running sum
//! of uniform `[0, 1)` values stalls at 256. The ml_dtypes documentation
//! (seed 001) recommends accumulating in float32 and JAX does so; here the
//! elements are widened to float32 (exactly), summed pairwise (blocks of 128
//! with eight partial sums, as NumPy's `add.reduce`, combined in a balanced
//! tree), and the result is rounded once to the element type. The sixteen
//! blocks of each step of 2048 elements are summed together (independent
//! chains of additions, each in that order), bfloat16 is widened inline
//! (a shift), and the additions run on the selected instruction set's
//! vectors: the order, hence the result, is the same on every path (a sum
//! involving several NaNs may carry any of their payloads).
//!
//! With the `ndarray` feature, `ArrayReduce` gives the same reductions on
//! `ndarray` arrays of any shape and layout: ndarray's own `sum`/`mean`
//! add in the element type (a bfloat16 or float16 running sum stalls).
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::reduce;
//! let x: Vec<half::bf16> = (0..10_000).map(|_| half::bf16::from_f32(0.5)).collect();
//! assert_eq!(reduce::sum_f32(&x).unwrap(), 5000.0);
//! assert_eq!(reduce::sum(&x).unwrap(), half::bf16::from_f32(5000.0));
//! ```
//!
//! [`sum_f32_columns`] sums the columns of a row-major matrix with the
//! same tree of additions as [`sum_f32`] applies to each column on its own
//! (so the result does not depend on the memory layout), vectorised across
//! the columns. [`argmax`] / [`argmin`] find ml_dtypes' extreme element of a
//! slice of codes by their order keys, vectorised.

use super::{convert_slice_on, dispatch, CastError, Element, Overflow, Path};
use crate::format::Format;
use crate::sort::SortKey;

/// Elements widened per step.
const STEP: usize = 2048;

/// Pairwise sum of float32 values: blocks of up to 128 elements are summed
/// with eight interleaved partial sums, larger ranges are split in halves.
fn pairwise(x: &[f32]) -> f32 {
    if x.len() <= 128 {
        let mut acc = [0f32; 8];
        let chunks = x.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for (a, v) in acc.iter_mut().zip(c) {
                *a += v;
            }
        }
        let mut s =
            ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for v in rest {
            s += v;
        }
        s
    } else {
        let h = (x.len() / 2 + 7) & !7;
        pairwise(&x[..h]) + pairwise(&x[h..])
    }
}

/// [`pairwise`] of exactly [`STEP`] (2048) values widened from `x`: the
/// tree's sixteen blocks of 128 are summed at the same time (sixteen
/// independent chains of eight partial sums instead of one), each with
/// `pairwise`'s additions in `pairwise`'s order, then combined as its tree
/// combines them.
#[inline(always)]
fn pairwise_step<E: Lane>(x: &[E]) -> f32 {
    let x = &x[..STEP];
    let mut acc = [[0f32; 8]; 16];
    // four blocks at a time: four chains of eight partial sums in registers
    for (q, quad) in acc.chunks_exact_mut(4).enumerate() {
        let b: [&[E]; 4] = std::array::from_fn(|l| &x[(4 * q + l) * 128..(4 * q + l + 1) * 128]);
        let [a0, a1, a2, a3] = quad else {
            unreachable!()
        };
        let (mut s0, mut s1, mut s2, mut s3) = (*a0, *a1, *a2, *a3);
        for i in 0..16 {
            for k in 0..8 {
                s0[k] += b[0][i * 8 + k].widen();
                s1[k] += b[1][i * 8 + k].widen();
                s2[k] += b[2][i * 8 + k].widen();
                s3[k] += b[3][i * 8 + k].widen();
            }
        }
        (*a0, *a1, *a2, *a3) = (s0, s1, s2, s3);
    }
    let leaf: [f32; 16] = std::array::from_fn(|l| {
        let a = &acc[l];
        ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    });
    let l2: [f32; 8] = std::array::from_fn(|i| leaf[2 * i] + leaf[2 * i + 1]);
    let l4: [f32; 4] = std::array::from_fn(|i| l2[2 * i] + l2[2 * i + 1]);
    (l4[0] + l4[1]) + (l4[2] + l4[3])
}

/// The [`pairwise`] sum of each step of [`STEP`] values of `x` (widened
/// to float32) pushed to `partial`: [`pairwise_step`] for full steps,
/// vectorised for `path`'s instruction set.
fn step_sums<E: Lane>(path: Path, x: &[E], partial: &mut Vec<f32>) {
    #[inline(always)]
    fn run<E: Lane>(x: &[E], partial: &mut Vec<f32>) {
        for c in x.chunks(STEP) {
            if c.len() == STEP {
                partial.push(pairwise_step(c));
            } else {
                let w: Vec<f32> = c.iter().map(|v| v.widen()).collect();
                partial.push(pairwise(&w));
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl")]
        unsafe fn avx512<E: Lane>(x: &[E], partial: &mut Vec<f32>) {
            run(x, partial)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<E: Lane>(x: &[E], partial: &mut Vec<f32>) {
            run(x, partial)
        }
        match path {
            // SAFETY: the path is only selected when the CPU has these
            // features.
            Path::Avx512 => return unsafe { avx512(x, partial) },
            Path::Avx2 => return unsafe { avx2(x, partial) },
            _ => {}
        }
    }
    run(x, partial)
}

/// Widens `x` to float32 in steps and feeds each step to `f`.
fn widen<T: Element>(path: Path, x: &[T], mut f: impl FnMut(&[f32])) -> Result<(), CastError> {
    let mut buf = [0f32; STEP];
    for c in x.chunks(STEP) {
        let b = &mut buf[..c.len()];
        convert_slice_on(path, c, b, Overflow::NonSaturating)?;
        f(b);
    }
    Ok(())
}

/// Rounds a float32 result once to `T`.
fn round<T: Element>(x: f32) -> Result<T, CastError> {
    let mut out = [T::zeroed()];
    convert_slice_on(dispatch::path(), &[x], &mut out, Overflow::NonSaturating)?;
    Ok(out[0])
}

/// Sum of `x` accumulated in float32 (pairwise), as float32.
///
/// # Errors
///
/// [`CastError::UnsupportedPair`] if `T` does not convert to float32
/// (standard integers wider than the sub-byte ones).
///
/// # Examples
///
/// ```
/// let x = [1.0f32, 2.0, 3.5];
/// assert_eq!(mldtypes::cast::reduce::sum_f32(&x).unwrap(), 6.5);
/// ```
pub fn sum_f32<T: Element>(x: &[T]) -> Result<f32, CastError> {
    sum_f32_on(dispatch::path(), x)
}

/// [`sum_f32`] on `path`.
fn sum_f32_on<T: Element>(path: Path, x: &[T]) -> Result<f32, CastError> {
    let mut partial = Vec::with_capacity(x.len() / STEP + 1);
    if T::DTYPE == crate::dtype::DType::BFloat16 && std::mem::size_of::<T>() == 2 {
        // widened inline (the code in the high half of the word)
        step_sums(path, bytemuck::cast_slice::<T, u16>(x), &mut partial);
    } else {
        widen(path, x, |b| step_sums(path, b, &mut partial))?;
    }
    Ok(pairwise(&partial))
}

/// Sum of `x` accumulated in float32 (pairwise), rounded once to `T`.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [half::f16::from_f32(0.25); 8];
/// assert_eq!(mldtypes::cast::reduce::sum(&x).unwrap(), half::f16::from_f32(2.0));
/// ```
pub fn sum<T: Element>(x: &[T]) -> Result<T, CastError> {
    round(sum_f32(x)?)
}

/// Arithmetic mean of `x`: the float32 pairwise sum divided by the length
/// in float32 (NaN for an empty slice, as NumPy), as float32.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [1.0f32, 2.0, 4.5];
/// assert_eq!(mldtypes::cast::reduce::mean_f32(&x).unwrap(), 2.5);
/// ```
pub fn mean_f32<T: Element>(x: &[T]) -> Result<f32, CastError> {
    Ok(sum_f32(x)? / x.len() as f32)
}

/// [`mean_f32`] rounded once to `T`.
///
/// # Errors
///
/// As [`sum_f32`].
///
/// # Examples
///
/// ```
/// let x = [half::bf16::from_f32(1.0), half::bf16::from_f32(2.0)];
/// assert_eq!(mldtypes::cast::reduce::mean(&x).unwrap(), half::bf16::from_f32(1.5));
/// ```
pub fn mean<T: Element>(x: &[T]) -> Result<T, CastError> {
    round(mean_f32(x)?)
}

/// Dot product `Σ a[i]·b[i]`: products and sums in float32 (pairwise), as
/// float32.
///
/// # Errors
///
/// [`CastError::LengthMismatch`] if the lengths differ, otherwise as
/// [`sum_f32`].
///
/// # Examples
///
/// ```
/// let a = [1.0f32, 2.0, 3.0];
/// let b = [4.0f32, 5.0, 6.0];
/// assert_eq!(mldtypes::cast::reduce::dot_f32(&a, &b).unwrap(), 32.0);
/// ```
pub fn dot_f32<T: Element>(a: &[T], b: &[T]) -> Result<f32, CastError> {
    if a.len() != b.len() {
        return Err(CastError::LengthMismatch {
            src: a.len(),
            dst: b.len(),
        });
    }
    let path = dispatch::path();
    let mut partial = Vec::with_capacity(a.len() / STEP + 1);
    let mut xb = [0f32; STEP];
    let mut yb = [0f32; STEP];
    for (x, y) in a.chunks(STEP).zip(b.chunks(STEP)) {
        let (xs, ys) = (&mut xb[..x.len()], &mut yb[..y.len()]);
        convert_slice_on(path, x, xs, Overflow::NonSaturating)?;
        convert_slice_on(path, y, ys, Overflow::NonSaturating)?;
        for (p, q) in xs.iter_mut().zip(ys.iter()) {
            *p *= q;
        }
        partial.push(pairwise(xs));
    }
    Ok(pairwise(&partial))
}

/// [`dot_f32`] rounded once to `T`.
///
/// # Errors
///
/// As [`dot_f32`].
///
/// # Examples
///
/// ```
/// let a = [half::f16::from_f32(0.5); 4];
/// assert_eq!(mldtypes::cast::reduce::dot(&a, &a).unwrap(), half::f16::ONE);
/// ```
pub fn dot<T: Element>(a: &[T], b: &[T]) -> Result<T, CastError> {
    round(dot_f32(a, b)?)
}

/// Column sums of the row-major `rows × cols` matrix `x` in float32:
/// `out[j]` is bit for bit [`sum_f32`] of column `j` (the same steps of
/// 2048 rows, the same pairwise tree within a step and across steps; a NaN
/// sum may carry another NaN's payload), so the result does not depend on
/// the memory layout. The matrix is read once, in place: in each leaf of
/// the tree (at most 128 rows), the rows that feed one of the eight partial
/// sums are added to it four at a time (one load and store of the partial
/// sums per four rows, in row order), each row widened to float32 on the
/// way (bfloat16 by a shift fused with the additions, the other types by
/// the slice kernels) and added with the CPU's widest vectors.
///
/// # Errors
///
/// [`CastError::LengthMismatch`] if `x.len() != rows * cols`; otherwise as
/// [`sum_f32`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::reduce;
/// let x = [1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0]; // 3 rows, 2 columns
/// assert_eq!(reduce::sum_f32_columns(&x, 3, 2).unwrap(), vec![6.0, 60.0]);
/// ```
pub fn sum_f32_columns<T: Element>(
    x: &[T],
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>, CastError> {
    if x.len() != rows * cols {
        return Err(CastError::LengthMismatch {
            src: x.len(),
            dst: rows * cols,
        });
    }
    columns_on(dispatch::path(), x, rows, cols)
}

/// [`sum_f32_columns`] (lengths checked) on `path`.
fn columns_on<T: Element>(
    path: Path,
    x: &[T],
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>, CastError> {
    if T::DTYPE == crate::dtype::DType::BFloat16 && std::mem::size_of::<T>() == 2 {
        let src = Fused {
            data: bytemuck::cast_slice::<T, u16>(x),
            cols,
            path,
        };
        return columns(src, rows, cols, path);
    }
    let src = Widened {
        data: x,
        cols,
        path,
        buf: vec![0.0; 4 * cols],
    };
    columns(src, rows, cols, path)
}

/// [`sum_f32_columns`] of the `rows × cols` rows of `src`.
fn columns(
    mut src: impl RowSource,
    rows: usize,
    cols: usize,
    path: Path,
) -> Result<Vec<f32>, CastError> {
    // The column sums of each step of 2048 rows, then their pairwise sums.
    let mut steps: Vec<f32> = Vec::with_capacity(rows.div_ceil(STEP) * cols);
    let mut scratch = Scratch::default();
    let mut out = vec![0f32; cols];
    for r0 in (0..rows).step_by(STEP) {
        let n = (rows - r0).min(STEP);
        pairwise_rows(&mut src, r0, n, &mut out, &mut scratch, 0, path)?;
        steps.extend_from_slice(&out);
    }
    let nsteps = steps.len() / cols.max(1);
    if nsteps == 0 {
        return Ok(vec![0.0; cols]);
    }
    let mut sums = Fused {
        data: &steps[..],
        cols,
        path,
    };
    pairwise_rows(&mut sums, 0, nsteps, &mut out, &mut scratch, 0, path)?;
    Ok(out)
}

/// Rows of float32 values, produced on demand.
trait RowSource {
    /// Adds rows `r`, `r + stride`, … (`count` rows), as float32, to `acc`
    /// (one element per column), one row after the other.
    fn add_rows(
        &mut self,
        r: usize,
        stride: usize,
        count: usize,
        acc: &mut [f32],
    ) -> Result<(), CastError>;
}

/// Rows of a row-major matrix of `T`, widened by the slice kernels.
struct Widened<'a, T> {
    data: &'a [T],
    cols: usize,
    path: Path,
    /// Four widened rows.
    buf: Vec<f32>,
}

impl<T: Element> RowSource for Widened<'_, T> {
    fn add_rows(
        &mut self,
        r: usize,
        stride: usize,
        count: usize,
        acc: &mut [f32],
    ) -> Result<(), CastError> {
        let c = self.cols;
        let mut i = 0;
        while i < count {
            // up to four rows widened, then added in order
            let g = (count - i).min(4);
            for q in 0..g {
                let row = r + (i + q) * stride;
                convert_slice_on(
                    self.path,
                    &self.data[row * c..(row + 1) * c],
                    &mut self.buf[q * c..(q + 1) * c],
                    Overflow::NonSaturating,
                )?;
            }
            let b = |q: usize| &self.buf[q * c..(q + 1) * c];
            if g == 4 {
                add_lanes(self.path, acc, [b(0), b(1), b(2), b(3)]);
            } else {
                for q in 0..g {
                    add_lanes(self.path, acc, [b(q)]);
                }
            }
            i += g;
        }
        Ok(())
    }
}

/// Rows of a row-major matrix whose elements widen to float32 inline:
/// float32 itself, or bfloat16 codes (the code in the high half of the
/// word: exact for every code, NaN payloads included, as the slice
/// kernels do).
struct Fused<'a, E> {
    data: &'a [E],
    cols: usize,
    path: Path,
}

impl<E: Lane> RowSource for Fused<'_, E> {
    fn add_rows(
        &mut self,
        r: usize,
        stride: usize,
        count: usize,
        acc: &mut [f32],
    ) -> Result<(), CastError> {
        let c = self.cols;
        let row = |i: usize| &self.data[(r + i * stride) * c..(r + i * stride + 1) * c];
        let mut i = 0;
        while i + 4 <= count {
            add_lanes(self.path, acc, [row(i), row(i + 1), row(i + 2), row(i + 3)]);
            i += 4;
        }
        for i in i..count {
            add_lanes(self.path, acc, [row(i)]);
        }
        Ok(())
    }
}

/// An element that widens to float32 in a vector lane.
trait Lane: Copy {
    fn widen(self) -> f32;
}
impl Lane for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}
impl Lane for u16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits(u32::from(self) << 16)
    }
}

/// `acc[j] = ((acc[j] + v[0][j]) + v[1][j]) + …` (each `v[q]` as long as
/// `acc`), vectorised for `path`'s instruction set: the same float32
/// additions on every path.
fn add_lanes<E: Lane, const G: usize>(path: Path, acc: &mut [f32], v: [&[E]; G]) {
    #[inline(always)]
    fn run<E: Lane, const G: usize>(acc: &mut [f32], v: [&[E]; G]) {
        let n = acc.len();
        let v: [&[E]; G] = v.map(|x| &x[..n]);
        for (j, a) in acc.iter_mut().enumerate() {
            let mut s = *a;
            for x in &v {
                s += x[j].widen();
            }
            *a = s;
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f")]
        unsafe fn avx512<E: Lane, const G: usize>(acc: &mut [f32], v: [&[E]; G]) {
            run(acc, v)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<E: Lane, const G: usize>(acc: &mut [f32], v: [&[E]; G]) {
            run(acc, v)
        }
        match path {
            // SAFETY: the path is only selected when the CPU has these
            // features.
            Path::Avx512 => return unsafe { avx512(acc, v) },
            Path::Avx2 => return unsafe { avx2(acc, v) },
            _ => {}
        }
    }
    run(acc, v)
}

/// Buffers of [`pairwise_rows`]: the eight partial sums of a leaf and one
/// right-half result per level of the tree.
#[derive(Default)]
struct Scratch {
    acc: Vec<f32>,
    levels: Vec<Vec<f32>>,
}

/// [`pairwise`] of each column of rows `r0 .. r0 + n` of `src` into `out`
/// (one element per column); `depth` picks the scratch level.
fn pairwise_rows(
    src: &mut impl RowSource,
    r0: usize,
    n: usize,
    out: &mut [f32],
    scratch: &mut Scratch,
    depth: usize,
    path: Path,
) -> Result<(), CastError> {
    let cols = out.len();
    if n <= 128 {
        // Eight interleaved partial sums per column (rows k, k + 8, … into
        // partial sum k), combined as ((a0 + a1) + (a2 + a3)) + ((a4 + a5)
        // + (a6 + a7)), then the rows past the last group of eight added in
        // order: `pairwise`'s steps.
        let full = n / 8 * 8;
        let acc = &mut scratch.acc;
        acc.clear();
        acc.resize(8 * cols, 0.0);
        // In windows of 32 rows (each partial sum still takes its rows in
        // the same order): the rows read together lie within 32 rows,
        // where a pass per partial sum over the whole block read 16 rows
        // 8 apart (2048 × 2048 bfloat16 from memory, rows 4 KiB long:
        // 0.39–0.53 ms against 0.43–0.69 ms, a plain or-reduction of the
        // codes 0.26–0.38 ms).
        for w in (0..full).step_by(32) {
            let per = (full - w).min(32) / 8;
            for (k, a) in acc.chunks_exact_mut(cols.max(1)).enumerate() {
                src.add_rows(r0 + w + k, 8, per, a)?;
            }
        }
        let p: [&[f32]; 8] = std::array::from_fn(|k| &acc[k * cols..(k + 1) * cols]);
        for (j, o) in out.iter_mut().enumerate() {
            *o = ((p[0][j] + p[1][j]) + (p[2][j] + p[3][j]))
                + ((p[4][j] + p[5][j]) + (p[6][j] + p[7][j]));
        }
        return src.add_rows(r0 + full, 1, n - full, out);
    }
    let h = (n / 2 + 7) & !7;
    if scratch.levels.len() <= depth {
        scratch.levels.resize_with(depth + 1, Vec::new);
    }
    let mut right = std::mem::take(&mut scratch.levels[depth]);
    right.clear();
    right.resize(cols, 0.0);
    pairwise_rows(src, r0, h, out, scratch, depth + 1, path)?;
    pairwise_rows(src, r0 + h, n - h, &mut right, scratch, depth + 1, path)?;
    add_lanes(path, out, [&right[..]]);
    scratch.levels[depth] = right;
    Ok(())
}

/// A stored code: one byte (formats of up to 8 bits) or two.
pub trait CodeWord: Copy + sealed::Sealed {
    /// The code as `u32`.
    fn word(self) -> u32;
}
impl CodeWord for u8 {
    #[inline(always)]
    fn word(self) -> u32 {
        self as u32
    }
}
impl CodeWord for u16 {
    #[inline(always)]
    fn word(self) -> u32 {
        self as u32
    }
}
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// The index of ml_dtypes' `argmax` of `codes` (codes of `format`, bits
/// above its width ignored): the first largest value (`-0 == +0`), or the
/// first NaN if there is one; `None` for an empty slice.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::reduce::argmax;
/// use mldtypes::format::BFLOAT16;
/// let x: [u16; 4] = [0x3f80, 0x4000, 0x4000, 0xbf80]; // 1, 2, 2, -1
/// assert_eq!(argmax(&BFLOAT16, &x), Some(1));
/// assert_eq!(argmax(&BFLOAT16, &[0x3f80u16, 0x7fc0, 0x7f80]), Some(1)); // NaN first
/// ```
pub fn argmax<C: CodeWord>(format: &Format, codes: &[C]) -> Option<usize> {
    let key = SortKey::new(format);
    // NaN has the largest key (the code mask): the first largest key is
    // the first NaN if there is one.
    arg_extreme(codes, |c| key.key(c.word()))
}

/// The index of ml_dtypes' `argmin` of `codes`: the first smallest value
/// (`-0 == +0`), or the first NaN if there is one; `None` for an empty
/// slice.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::reduce::argmin;
/// use mldtypes::format::FLOAT8_E4M3FN;
/// assert_eq!(argmin(&FLOAT8_E4M3FN, &[0x38u8, 0xb8, 0xb8]), Some(1)); // 1, -1, -1
/// assert_eq!(argmin(&FLOAT8_E4M3FN, &[0x38u8, 0xb8, 0x7f]), Some(2)); // NaN
/// ```
pub fn argmin<C: CodeWord>(format: &Format, codes: &[C]) -> Option<usize> {
    let key = SortKey::new(format);
    let nan = key.code_mask();
    // Reversed keys with NaN largest again: the first largest is the first
    // smallest value, or the first NaN.
    arg_extreme(codes, move |c| {
        let k = key.key(c.word());
        if k == nan {
            nan
        } else {
            nan - 1 - k
        }
    })
}

/// The first index of the largest `key` of `codes`: the largest key by a
/// vectorised pass (stopping early at the largest possible key, NaN's),
/// then its first occurrence.
fn arg_extreme<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy) -> Option<usize> {
    if codes.is_empty() {
        return None;
    }
    let top = key_max(codes, key);
    first_key(codes, key, top)
}

/// The first index of `codes` whose key is `top`: blocks of 256 tested
/// at once (vectorised), then the block that has it element by element.
fn first_key<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy, top: u32) -> Option<usize> {
    #[inline(always)]
    fn run<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy, top: u32) -> Option<usize> {
        for (b, block) in codes.chunks(256).enumerate() {
            if block.iter().fold(false, |a, &c| a | (key(c) == top)) {
                return block
                    .iter()
                    .position(|&c| key(c) == top)
                    .map(|i| 256 * b + i);
            }
        }
        None
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
        unsafe fn avx512<C: CodeWord>(
            codes: &[C],
            key: impl Fn(C) -> u32 + Copy,
            top: u32,
        ) -> Option<usize> {
            run(codes, key, top)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<C: CodeWord>(
            codes: &[C],
            key: impl Fn(C) -> u32 + Copy,
            top: u32,
        ) -> Option<usize> {
            run(codes, key, top)
        }
        match dispatch::path() {
            // SAFETY: the path is only selected when the CPU has these
            // features.
            Path::Avx512 => return unsafe { avx512(codes, key, top) },
            Path::Avx2 => return unsafe { avx2(codes, key, top) },
            _ => {}
        }
    }
    run(codes, key, top)
}

/// The largest `key` of `codes` (not empty), on the best instruction set.
fn key_max<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy) -> u32 {
    #[inline(always)]
    fn run<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy) -> u32 {
        let mut best = 0u32;
        for chunk in codes.chunks(4096) {
            best = chunk.iter().fold(best, |m, &c| m.max(key(c)));
        }
        best
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
        unsafe fn avx512<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy) -> u32 {
            run(codes, key)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<C: CodeWord>(codes: &[C], key: impl Fn(C) -> u32 + Copy) -> u32 {
            run(codes, key)
        }
        match dispatch::path() {
            // SAFETY: the path is only selected when the CPU has these
            // features.
            Path::Avx512 => return unsafe { avx512(codes, key) },
            Path::Avx2 => return unsafe { avx2(codes, key) },
            _ => {}
        }
    }
    run(codes, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{BFLOAT16, FLOAT4_E2M1FN, FLOAT8_E4M3FNUZ};

    #[test]
    fn column_sums_equal_each_columns_sum() {
        for &(rows, cols) in &[
            (0, 3),
            (1, 5),
            (7, 3),
            (128, 2),
            (129, 3),
            (1000, 5),
            (5000, 3),
        ] {
            let x: Vec<f32> = (0..rows * cols)
                .map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 150.0)
                .collect();
            let got = sum_f32_columns(&x, rows, cols).unwrap();
            for j in 0..cols {
                let col: Vec<f32> = (0..rows).map(|r| x[r * cols + j]).collect();
                assert_eq!(
                    got[j].to_bits(),
                    sum_f32(&col).unwrap().to_bits(),
                    "{rows}x{cols} col {j}"
                );
            }
        }
    }

    /// Equal bits, or both NaN: which NaN's payload a sum of two NaNs
    /// carries is not fixed (IEEE 754 leaves it open and the compiler may
    /// swap the operands of an addition).
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn column_sums_of_narrow_types_equal_each_columns_sum_on_every_path() {
        // Blocks of 512 columns with a partial last block, leaves with and
        // without rows past the last group of eight, several steps.
        for &(rows, cols) in &[(3, 1030), (136, 515), (2100, 520), (300, 1)] {
            let bf: Vec<crate::bfloat16> = (0..rows * cols)
                .map(|i| crate::bfloat16::from_bits(((i * 40_503) % 65_536) as u16))
                .collect();
            let f8: Vec<crate::float8_e4m3fn> = (0..rows * cols)
                .map(|i| crate::float8_e4m3fn::from_bits(((i * 97) % 256) as u8))
                .collect();
            for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                let got = columns_on(path, &bf, rows, cols).unwrap();
                let got8 = columns_on(path, &f8, rows, cols).unwrap();
                for j in 0..cols {
                    let col: Vec<_> = (0..rows).map(|r| bf[r * cols + j]).collect();
                    let want = sum_f32(&col).unwrap();
                    assert!(same(got[j], want), "{path:?} {rows}x{cols} {j}");
                    let col: Vec<_> = (0..rows).map(|r| f8[r * cols + j]).collect();
                    let want = sum_f32(&col).unwrap();
                    assert!(same(got8[j], want), "{path:?} {rows}x{cols} {j}");
                }
            }
        }
    }

    #[test]
    fn bfloat16_rows_widen_as_the_slice_kernels() {
        // Every code, NaN payloads and signalling NaNs included, in a
        // one-row matrix (each column's sum is the code's value) and added
        // to a row of ones.
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        let bf: Vec<crate::bfloat16> = codes
            .iter()
            .map(|&c| crate::bfloat16::from_bits(c))
            .collect();
        for &path in Path::ALL.iter().filter(|p| p.is_available()) {
            for rows in [1, 2] {
                let mut x = bf.clone();
                if rows == 2 {
                    x.extend(std::iter::repeat_n(
                        crate::bfloat16::from_f32(1.0),
                        codes.len(),
                    ));
                }
                let cols = codes.len();
                let fast = columns(
                    Fused {
                        data: bytemuck::cast_slice::<_, u16>(&x),
                        cols,
                        path,
                    },
                    rows,
                    cols,
                    path,
                )
                .unwrap();
                let slow = columns(
                    Widened {
                        data: &x[..],
                        cols,
                        path,
                        buf: vec![0.0; 4 * cols],
                    },
                    rows,
                    cols,
                    path,
                )
                .unwrap();
                for (j, (a, b)) in fast.iter().zip(&slow).enumerate() {
                    assert_eq!(a.to_bits(), b.to_bits(), "{path:?} code {j:#06x}");
                }
            }
        }
    }

    #[test]
    fn whole_sums_follow_the_pairwise_tree_on_every_path() {
        // Full steps of 2048 (sixteen blocks summed together) and a last
        // partial step, against `pairwise` of the widened values.
        for len in [0, 1, 127, 2048, 2049, 5000, 3 * 2048] {
            let bf: Vec<crate::bfloat16> = (0..len)
                .map(|i| crate::bfloat16::from_bits(((i * 40_503 + 7) % 65_536) as u16))
                .collect();
            let f8: Vec<crate::float8_e4m3fn> = (0..len)
                .map(|i| crate::float8_e4m3fn::from_bits(((i * 97 + 3) % 256) as u8))
                .collect();
            let tree = |w: Vec<f32>| {
                let partial: Vec<f32> = w.chunks(STEP).map(pairwise).collect();
                pairwise(&partial)
            };
            let want_bf = tree(bf.iter().map(|v| v.to_f32()).collect());
            let want_f8 = tree(f8.iter().map(|v| v.to_f32()).collect());
            for &path in Path::ALL.iter().filter(|p| p.is_available()) {
                assert!(
                    same(sum_f32_on(path, &bf).unwrap(), want_bf),
                    "{path:?} bf16 {len}"
                );
                assert!(
                    same(sum_f32_on(path, &f8).unwrap(), want_f8),
                    "{path:?} f8 {len}"
                );
            }
        }
        // finite values: equal bits
        let x: Vec<crate::bfloat16> = (0..3 * 2048 + 5)
            .map(|i| crate::bfloat16::from_f32(((i * 7919) % 1013) as f32 * 0.37 - 150.0))
            .collect();
        let w: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
        let partial: Vec<f32> = w.chunks(STEP).map(pairwise).collect();
        for &path in Path::ALL.iter().filter(|p| p.is_available()) {
            assert_eq!(
                sum_f32_on(path, &x).unwrap().to_bits(),
                pairwise(&partial).to_bits()
            );
        }
    }

    #[test]
    fn argmax_argmin_follow_ml_dtypes() {
        // -0 and +0 are equal: the first wins.
        assert_eq!(argmax(&BFLOAT16, &[0x8000u16, 0x0000]), Some(0));
        assert_eq!(argmin(&BFLOAT16, &[0x0000u16, 0x8000]), Some(0));
        assert_eq!(
            argmin(&BFLOAT16, &[0x3f80u16, 0xff80, 0xffc1, 0x7fc0]),
            Some(2)
        );
        assert_eq!(argmax(&BFLOAT16, &[0x3f80u16, 0x7f80, 0x7f80]), Some(1));
        assert_eq!(argmax::<u16>(&BFLOAT16, &[]), None);
        // the fnuz NaN is 0x80
        assert_eq!(argmax(&FLOAT8_E4M3FNUZ, &[0x7fu8, 0x80, 0x7f]), Some(1));
        assert_eq!(argmin(&FLOAT8_E4M3FNUZ, &[0xffu8, 0x01, 0x80]), Some(2));
        // float4 codes in the low bits; the high bits are ignored
        assert_eq!(argmax(&FLOAT4_E2M1FN, &[0x01u8, 0xf7, 0x07]), Some(1));
    }

    #[test]
    fn pairwise_matches_exact_small_sums() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        assert_eq!(pairwise(&x), 499_500.0);
        assert_eq!(pairwise(&[]), 0.0);
        assert_eq!(pairwise(&[3.0]), 3.0);
    }
}

#[cfg(feature = "ndarray")]
pub use array::ArrayReduce;

#[cfg(feature = "ndarray")]
mod array {
    use super::{CastError, Element};
    use ::ndarray::{ArrayBase, Data, Dimension};

    /// Reductions of `ndarray` arrays that accumulate in float32 and round
    /// once, as the slice reductions of [`crate::cast::reduce`] do (feature
    /// `ndarray`). This is how to sum an array of bfloat16, float16 or
    /// float8 values: ndarray's `sum` adds in the element type, and a
    /// 16-bit running sum stops growing once its ulp exceeds the addends.
    ///
    /// Contiguous arrays (either memory order) are reduced in place; other
    /// layouts are copied once, in logical order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::reduce::ArrayReduce;
    /// use mldtypes::float16;
    /// let a = ndarray::Array2::from_elem((100, 100), float16::from_f32(0.1));
    /// // 10,000 × 0.0999755859375 (0.1 in float16) = 999.755859375
    /// assert_eq!(a.reduce_sum_f32().unwrap(), 999.75586);
    /// assert_eq!(a.reduce_sum().unwrap().to_f32(), 1000.0); // rounded once
    /// // ndarray's own sum adds in float16 (eight running sums), off by 9 %.
    /// assert_eq!(a.sum().to_f32(), 1091.0);
    /// assert_eq!(a.t().reduce_mean().unwrap(), a.reduce_mean().unwrap());
    /// ```
    pub trait ArrayReduce<T: Element> {
        /// Sum of the elements accumulated in float32 (pairwise), as float32.
        ///
        /// # Errors
        ///
        /// [`CastError::UnsupportedPair`] if `T` does not convert to float32.
        fn reduce_sum_f32(&self) -> Result<f32, CastError>;
        /// [`ArrayReduce::reduce_sum_f32`] rounded once to `T`.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_sum(&self) -> Result<T, CastError>;
        /// Mean accumulated in float32 (NaN for an empty array), as float32.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_mean_f32(&self) -> Result<f32, CastError>;
        /// [`ArrayReduce::reduce_mean_f32`] rounded once to `T`.
        ///
        /// # Errors
        ///
        /// As [`ArrayReduce::reduce_sum_f32`].
        fn reduce_mean(&self) -> Result<T, CastError>;
    }

    impl<T, S, D> ArrayReduce<T> for ArrayBase<S, D>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        fn reduce_sum_f32(&self) -> Result<f32, CastError> {
            with_slice(self, super::sum_f32)
        }
        fn reduce_sum(&self) -> Result<T, CastError> {
            with_slice(self, super::sum)
        }
        fn reduce_mean_f32(&self) -> Result<f32, CastError> {
            with_slice(self, super::mean_f32)
        }
        fn reduce_mean(&self) -> Result<T, CastError> {
            with_slice(self, super::mean)
        }
    }

    /// `f` of the array's elements as one slice: in place when contiguous,
    /// else copied in logical order.
    fn with_slice<T, S, D, R>(a: &ArrayBase<S, D>, f: impl Fn(&[T]) -> R) -> R
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        match a.as_slice_memory_order() {
            Some(s) => f(s),
            None => f(&a.iter().copied().collect::<Vec<T>>()),
        }
    }
}
