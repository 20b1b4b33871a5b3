//! Matrix products of any [`Element`] type accumulated in float32, at BLAS
//! speed: the operands are converted to float32 by the slice kernels (exactly:
//! every bfloat16, float8, float6, float4 and sub-byte integer value is a
//! float32), multiplied by [`matrixmultiply`]'s `sgemm` (packed blocks and
//! vector microkernels for AVX-512, AVX2 + FMA, SSE2 and NEON, chosen at run
//! time), and the float32 result is rounded once into the output type.
//!
//! # Accumulation order and error bound
//!
//! The product `a[i, l] · b[l, j]` of two values of at most 12 significant
//! bits (every format here, float16 included) has at most 24: exact in
//! float32 unless it underflows. `sgemm` sums the `k` products of an output
//! element in float32 with fused multiply-adds in the order of its blocking
//! (blocks of `k` in ascending order, each accumulated from zero in a
//! register tile and added to the running result). Whatever that order,
//! the float32 result `ĉ` of the exact sum `c` satisfies the classical bound
//! for recursive summation (Higham, *Accuracy and Stability of Numerical
//! Algorithms*, §3.1), with a term for float32's subnormal spacing:
//!
//! `|ĉ − c| ≤ γ(k) · Σ_l |a[i, l] · b[l, j]| + k · 2^-149`, with
//! `γ(k) = k·u / (1 − k·u)` and `u = 2^-24`,
//!
//! and the final rounding into a format of precision `p` adds at most
//! `2^-p · |ĉ|` (round to nearest; `p` = 8 for bfloat16, 4 for
//! float8_e4m3fn), or half the format's smallest subnormal spacing below
//! its normal range. With float32 operands (products not exact) the bound
//! is `γ(k + 1)`.
//!
//! # Threads
//!
//! `threads` splits the output rows into that many blocks, run in parallel
//! on rayon's thread pool (feature `rayon`; otherwise on scoped threads).
//! `b` is converted first, in `threads` shares in parallel; each block
//! converts its own rows of a row-major `a` (a column-major `a` is
//! converted in shares first, as `b`). Products of fewer than 2^21
//! multiply-adds run on the calling thread. The result does not depend on
//! the number of threads: each output element is computed by one thread
//! with the same blocking.
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::matmul::{matmul_f32, Layout, MatRef};
//! use mldtypes::bfloat16;
//! let v = |x: &[f32]| x.iter().map(|&f| bfloat16::from_f32(f)).collect::<Vec<_>>();
//! let a = v(&[1.0, 2.0, 3.0, 4.0]); // 2 × 2
//! let b = v(&[5.0, 6.0, 7.0, 8.0]);
//! let mut c = [0f32; 4];
//! matmul_f32(
//!     MatRef::new(&a, 2, 2, Layout::RowMajor).unwrap(),
//!     MatRef::new(&b, 2, 2, Layout::RowMajor).unwrap(),
//!     &mut c,
//!     1,
//! )
//! .unwrap();
//! assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
//! ```

use std::fmt;

use super::{convert_slice_on, dispatch, CastError, Element, Overflow};

/// How a matrix's elements lie in its slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row after row (C order): element `(i, j)` at `i · cols + j`.
    RowMajor,
    /// Column after column (Fortran order, a transposed C array): element
    /// `(i, j)` at `j · rows + i`.
    ColMajor,
}

/// A `rows × cols` matrix of `T` in a slice.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    layout: Layout,
}

impl<'a, T> MatRef<'a, T> {
    /// The `rows × cols` matrix of `data` in `layout`.
    ///
    /// # Errors
    ///
    /// [`MatmulError::Length`] if `data` does not hold `rows · cols`
    /// elements.
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        layout: Layout,
    ) -> Result<Self, MatmulError> {
        let need = rows.checked_mul(cols).ok_or(MatmulError::Length {
            len: data.len(),
            rows,
            cols,
        })?;
        if data.len() != need {
            return Err(MatmulError::Length {
                len: data.len(),
                rows,
                cols,
            });
        }
        Ok(MatRef {
            data,
            rows,
            cols,
            layout,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `(row stride, column stride)` in elements.
    fn strides(&self) -> (isize, isize) {
        match self.layout {
            Layout::RowMajor => (self.cols as isize, 1),
            Layout::ColMajor => (1, self.rows as isize),
        }
    }
}

/// Why a matrix product was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatmulError {
    /// A slice does not hold `rows · cols` elements.
    Length {
        /// Elements in the slice.
        len: usize,
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
    },
    /// The inner dimensions differ (`a` is `m × k`, `b` is `k2 × n`), or the
    /// output does not hold `m · n` elements.
    Shape {
        /// `a`'s shape.
        a: (usize, usize),
        /// `b`'s shape.
        b: (usize, usize),
        /// Elements in the output.
        out: usize,
    },
    /// The element type does not convert to float32.
    Cast(CastError),
}

impl fmt::Display for MatmulError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatmulError::Length { len, rows, cols } => write!(
                f,
                "a {rows} x {cols} matrix needs {} elements, the slice holds {len}",
                rows.saturating_mul(*cols)
            ),
            MatmulError::Shape { a, b, out } => write!(
                f,
                "cannot multiply a {} x {} matrix by a {} x {} one into {out} elements",
                a.0, a.1, b.0, b.1
            ),
            MatmulError::Cast(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MatmulError {}

impl From<CastError> for MatmulError {
    fn from(e: CastError) -> Self {
        MatmulError::Cast(e)
    }
}

/// Products below this many multiply-adds run on the calling thread.
const PARALLEL_WORK: usize = 1 << 21;

/// Runs `f(0)`, …, `f(tasks - 1)` in parallel: on rayon's thread pool
/// (feature `rayon`, whose threads stay warm between calls), else on
/// scoped threads (the calling thread taking task 0).
fn parallel<F: Fn(usize) + Sync>(tasks: usize, f: F) {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        (0..tasks).into_par_iter().with_max_len(1).for_each(&f);
    }
    #[cfg(not(feature = "rayon"))]
    std::thread::scope(|s| {
        let f = &f;
        for t in 1..tasks {
            s.spawn(move || f(t));
        }
        f(0);
    });
}

/// `dst = src` widened to float32, `threads` contiguous shares converted
/// in parallel; up to 2^18 elements (tens of microseconds) on the calling
/// thread, which costs less than waking the pool.
fn widen_into<T: Element>(src: &[T], dst: &mut [f32], threads: usize) -> Result<(), CastError> {
    let path = dispatch::path();
    let chunk = src.len().div_ceil(threads.max(1)).max(1 << 18);
    if threads <= 1 || src.len() <= chunk {
        return convert_slice_on(path, src, dst, Overflow::NonSaturating);
    }
    let shares: Vec<_> = src
        .chunks(chunk)
        .zip(dst.chunks_mut(chunk))
        .map(std::sync::Mutex::new)
        .collect();
    let errors = std::sync::Mutex::new(Ok(()));
    parallel(shares.len(), |t| {
        let mut share = shares[t].lock().unwrap_or_else(|p| p.into_inner());
        let (s, d) = &mut *share;
        if let Err(e) = convert_slice_on(path, s, d, Overflow::NonSaturating) {
            *errors.lock().unwrap_or_else(|p| p.into_inner()) = Err(e);
        }
    });
    errors.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// `out = a · b` in float32 (row-major `m × n`), on up to `threads` threads:
/// see the [module documentation](self) for the accumulation order and its
/// error bound.
///
/// # Errors
///
/// [`MatmulError::Shape`] if `a`'s columns differ from `b`'s rows or `out`
/// does not hold `m · n` elements; [`MatmulError::Cast`] if `T` does not
/// convert to float32.
pub fn matmul_f32<T: Element>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    out: &mut [f32],
    threads: usize,
) -> Result<(), MatmulError> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if b.rows != k || out.len() != m * n {
        return Err(MatmulError::Shape {
            a: (a.rows, a.cols),
            b: (b.rows, b.cols),
            out: out.len(),
        });
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        out.fill(0.0);
        return Ok(());
    }
    let work = m.saturating_mul(n).saturating_mul(k);
    let threads = if work < PARALLEL_WORK {
        1
    } else {
        threads.clamp(1, m)
    };
    // b (every thread reads all of it) widened first, its shares in
    // parallel; a row-major `a` is widened row block by row block by the
    // thread that multiplies the block.
    let mut wb = vec![0f32; b.data.len()];
    widen_into(b.data, &mut wb, threads)?;
    let (rsb, csb) = b.strides();
    let own_rows = a.layout == Layout::RowMajor;
    let wa = if own_rows {
        Vec::new()
    } else {
        let mut wa = vec![0f32; a.data.len()];
        widen_into(a.data, &mut wa, threads)?;
        wa
    };
    let rows = m.div_ceil(threads);
    // Row block `r0 ..` of the product into `c`.
    let run = |r0: usize, c: &mut [f32]| -> Result<(), CastError> {
        let mt = c.len() / n;
        let mut block = Vec::new();
        let (pa, rsa, csa) = if own_rows {
            block.resize(mt * k, 0f32);
            let src = &a.data[r0 * k..(r0 + mt) * k];
            convert_slice_on(dispatch::path(), src, &mut block, Overflow::NonSaturating)?;
            (block.as_ptr(), k as isize, 1)
        } else {
            let (rsa, csa) = a.strides();
            // SAFETY: row r0 of the column-major m × k matrix starts at r0.
            (unsafe { wa.as_ptr().add(r0) }, rsa, csa)
        };
        // SAFETY: `pa` holds rows r0..r0 + mt of `a` (mt × k) at strides
        // (rsa, csa); `wb` holds k × n at (rsb, csb); `c` holds mt × n
        // row-major.
        unsafe {
            matrixmultiply::sgemm(
                mt,
                k,
                n,
                1.0,
                pa,
                rsa,
                csa,
                wb.as_ptr(),
                rsb,
                csb,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        Ok(())
    };
    if threads == 1 {
        return Ok(run(0, out)?);
    }
    let blocks: Vec<_> = out
        .chunks_mut(rows * n)
        .map(std::sync::Mutex::new)
        .collect();
    let errors = std::sync::Mutex::new(Ok(()));
    parallel(blocks.len(), |t| {
        let mut c = blocks[t].lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = run(t * rows, &mut c) {
            *errors.lock().unwrap_or_else(|p| p.into_inner()) = Err(e);
        }
    });
    Ok(errors.into_inner().unwrap_or_else(|p| p.into_inner())?)
}

/// [`matmul_f32`] rounded once into `U` (to nearest even; overflow to
/// infinity or NaN as the format has them).
///
/// # Errors
///
/// As [`matmul_f32`]; [`MatmulError::Cast`] if float32 does not convert
/// to `U`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::matmul::{matmul, Layout, MatRef};
/// use mldtypes::float8_e4m3fn as F8;
/// let a = [F8::from_f32(1.5); 4]; // a 1 × 4 row
/// let b = [F8::from_f32(2.0); 4]; // a 4 × 1 column
/// let mut c = [F8::from_f32(0.0)];
/// matmul(
///     MatRef::new(&a, 1, 4, Layout::RowMajor).unwrap(),
///     MatRef::new(&b, 4, 1, Layout::RowMajor).unwrap(),
///     &mut c,
///     1,
/// )
/// .unwrap();
/// assert_eq!(c[0].to_f32(), 12.0);
/// ```
pub fn matmul<T: Element, U: Element>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    out: &mut [U],
    threads: usize,
) -> Result<(), MatmulError> {
    let mut acc = vec![0f32; out.len()];
    matmul_f32(a, b, &mut acc, threads)?;
    convert_slice_on(dispatch::path(), &acc, out, Overflow::NonSaturating)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfloat16;

    /// A deterministic bfloat16 matrix.
    fn mat(rows: usize, cols: usize, seed: u32) -> Vec<bfloat16> {
        (0..rows * cols)
            .map(|i| {
                let v = ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 20) as f32;
                bfloat16::from_f32(v / 512.0 - 4.0)
            })
            .collect()
    }

    #[test]
    fn products_within_the_documented_bound_on_every_layout_and_thread_count() {
        let u = 2f64.powi(-24);
        for &(m, k, n) in &[(1, 1, 1), (3, 5, 2), (64, 300, 33), (130, 257, 129)] {
            let (a, b) = (mat(m, k, 1), mat(k, n, 7));
            let gamma = k as f64 * u / (1.0 - k as f64 * u);
            for la in [Layout::RowMajor, Layout::ColMajor] {
                for lb in [Layout::RowMajor, Layout::ColMajor] {
                    let at = |i: usize, l: usize| match la {
                        Layout::RowMajor => a[i * k + l].to_f32() as f64,
                        Layout::ColMajor => a[l * m + i].to_f32() as f64,
                    };
                    let bt = |l: usize, j: usize| match lb {
                        Layout::RowMajor => b[l * n + j].to_f32() as f64,
                        Layout::ColMajor => b[j * k + l].to_f32() as f64,
                    };
                    let mut first: Option<Vec<f32>> = None;
                    for threads in [1, 2, 3] {
                        let mut c = vec![0f32; m * n];
                        matmul_f32(
                            MatRef::new(&a, m, k, la).unwrap(),
                            MatRef::new(&b, k, n, lb).unwrap(),
                            &mut c,
                            threads,
                        )
                        .unwrap();
                        for i in 0..m {
                            for j in 0..n {
                                let (exact, mag) = (0..k).fold((0.0, 0.0), |(s, t), l| {
                                    let p = at(i, l) * bt(l, j);
                                    (s + p, t + p.abs())
                                });
                                let err = (c[i * n + j] as f64 - exact).abs();
                                assert!(
                                    err <= gamma * mag,
                                    "{m}x{k}x{n} ({i},{j}): {err} > {}",
                                    gamma * mag
                                );
                            }
                        }
                        match &first {
                            None => first = Some(c),
                            Some(f) => assert_eq!(f, &c, "threads change the result"),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shapes_are_checked() {
        let a = mat(2, 3, 0);
        let mut c = vec![0f32; 4];
        let e = matmul_f32(
            MatRef::new(&a, 2, 3, Layout::RowMajor).unwrap(),
            MatRef::new(&a, 2, 3, Layout::RowMajor).unwrap(),
            &mut c,
            1,
        );
        assert!(matches!(e, Err(MatmulError::Shape { .. })));
        assert!(MatRef::new(&a, 4, 2, Layout::RowMajor).is_err());
    }
}
