//! The geometry of a job's chunks, in-memory transposes of a chunk, and the
//! byte encoding of FP8 scales.
//!
//! A chunk is a range `[s, e)` of a job's elements in the order the job
//! walks them: the input's order, except for MX quantization into the
//! transposed layout, which walks the output's rows (each a column of the
//! input, gathered by strided reads). Every chunk holds whole blocks and,
//! where scales or transposes need them, whole rows or bands of rows.

use super::groups::Mat;
use super::recipe::{Fp8Scales, FP8_BLOCK};
use crate::dtype::DType;
use crate::mx::{MX_BLOCK, NVFP4_BLOCK};

/// Elements per chunk of work (a multiple of every block and packing group).
pub(crate) const CHUNK: usize = 1 << 20;
/// Bytes per chunk of a copy.
pub(crate) const COPY_CHUNK: usize = 4 << 20;

/// How a job's elements are cut into chunks.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cut {
    /// Bytes, `COPY_CHUNK` at a time.
    Bytes,
    /// Runs of `CHUNK` elements.
    Flat,
    /// Whole rows of `row` elements, `rows_min` at a time at least, in
    /// multiples of `rows_align` rows (the last chunk of a matrix may be
    /// shorter), never across a matrix of `matrix` rows.
    Rows {
        row: usize,
        rows_align: usize,
        rows_min: usize,
        matrix: usize,
    },
}

impl Cut {
    /// The `[s, e)` ranges of a job of `units` elements (bytes for
    /// [`Cut::Bytes`]).
    pub fn ranges(self, units: usize) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut push_runs = |lo: usize, hi: usize, step: usize| {
            let mut s = lo;
            while s < hi {
                let e = (s + step).min(hi);
                v.push((s, e));
                s = e;
            }
        };
        match self {
            Cut::Bytes => push_runs(0, units, COPY_CHUNK),
            Cut::Flat => push_runs(0, units, CHUNK),
            Cut::Rows {
                row,
                rows_align,
                rows_min,
                matrix,
            } => {
                if row == 0 || units == 0 {
                    return v;
                }
                let rows = (CHUNK / row).max(rows_min).max(1);
                let rows = rows.div_ceil(rows_align) * rows_align;
                let total_rows = units / row;
                let per = matrix.max(1);
                let mut m0 = 0;
                while m0 < total_rows {
                    let m1 = (m0 + per).min(total_rows);
                    push_runs(m0 * row, m1 * row, rows * row);
                    m0 = m1;
                }
            }
        }
        v
    }
}

/// The rows of an output chunk of MX quantization into the transposed
/// layout, at least: each is a strided read per input row, so a few KiB per
/// read keep the system calls from dominating.
const MX_TRANSPOSED_ROWS: usize = 1024;

/// The cut of a quantization or dequantization job (see the module
/// documentation).
pub(crate) fn mx_transposed_quantize(m: Mat) -> Cut {
    Cut::Rows {
        row: m.k,
        rows_align: 1,
        rows_min: MX_TRANSPOSED_ROWS.min(m.n),
        matrix: m.n,
    }
}

/// Dequantization from the transposed MX layout: output rows (`n` wide) in
/// multiples of a block.
pub(crate) fn mx_transposed_dequantize(m: Mat) -> Cut {
    Cut::Rows {
        row: m.n,
        rows_align: MX_BLOCK,
        rows_min: 4 * MX_BLOCK,
        matrix: m.k,
    }
}

/// NVFP4 blocked along the second-to-last axis: bands of 16 rows of `n`.
pub(crate) fn nvfp4_columns(n: usize) -> Cut {
    Cut::Rows {
        row: n,
        rows_align: NVFP4_BLOCK,
        rows_min: NVFP4_BLOCK,
        matrix: usize::MAX,
    }
}

/// FP8 with scales of a `[rows, k]` weight; `experts`: rows per matrix of
/// fused experts (`[E, in, out]` as `[E·in, out]`), which chunks never
/// cross.
pub(crate) fn fp8(scales: Fp8Scales, k: usize, block: usize, experts: Option<usize>) -> Cut {
    match scales {
        Fp8Scales::Tensor => Cut::Flat,
        Fp8Scales::Channel => Cut::Rows {
            row: k,
            rows_align: 1,
            rows_min: 1,
            matrix: experts.unwrap_or(usize::MAX),
        },
        Fp8Scales::Block => Cut::Rows {
            row: k,
            rows_align: block.max(1),
            rows_min: block.max(1),
            matrix: experts.unwrap_or(usize::MAX),
        },
    }
}

/// FP8 block size of a scale layout (0 when not blocked).
pub(crate) fn fp8_block(scales: Fp8Scales) -> usize {
    if scales == Fp8Scales::Block {
        FP8_BLOCK
    } else {
        0
    }
}

/// Transposes the row-major `rows × cols` matrix `src` into `dst`
/// (`cols × rows`), in tiles that stay in the cache.
pub(crate) fn transpose<T: Copy>(src: &[T], rows: usize, cols: usize, dst: &mut [T]) {
    const TILE: usize = 16;
    debug_assert!(src.len() >= rows * cols && dst.len() >= rows * cols);
    for r0 in (0..rows).step_by(TILE) {
        let r1 = (r0 + TILE).min(rows);
        for c0 in (0..cols).step_by(TILE) {
            let c1 = (c0 + TILE).min(cols);
            for r in r0..r1 {
                for c in c0..c1 {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

/// The bytes of an FP8 scale `v` (exactly representable) stored as `sdt`
/// (float32, bfloat16 or float16).
pub(crate) fn scale_bytes(v: f64, sdt: DType, out: &mut Vec<u8>) {
    match sdt {
        DType::BFloat16 => {
            out.extend_from_slice(&half::bf16::from_f32(v as f32).to_bits().to_le_bytes())
        }
        DType::Float16 => out.extend_from_slice(&half::f16::from_f64(v).to_bits().to_le_bytes()),
        _ => out.extend_from_slice(&(v as f32).to_le_bytes()),
    }
}

/// The FP8 scales stored as `sdt` in `bytes`, as `f64`s.
pub(crate) fn scale_values(bytes: &[u8], sdt: DType, out: &mut Vec<f64>) {
    out.clear();
    match sdt {
        DType::BFloat16 | DType::Float16 => {
            for c in bytes.chunks_exact(2) {
                let b = u16::from_le_bytes([c[0], c[1]]);
                out.push(if sdt == DType::BFloat16 {
                    half::bf16::from_bits(b).to_f64()
                } else {
                    half::f16::from_bits(b).to_f64()
                });
            }
        }
        _ => {
            for c in bytes.chunks_exact(4) {
                out.push(f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_cuts_hold_whole_rows_and_stay_in_their_matrix() {
        // 3 matrices of 5 rows of 300 000: 3 rows per chunk (CHUNK / row),
        // never across a matrix.
        let c = Cut::Rows {
            row: 300_000,
            rows_align: 1,
            rows_min: 1,
            matrix: 5,
        };
        let r = c.ranges(15 * 300_000);
        let rows: Vec<(usize, usize)> = r.iter().map(|(s, e)| (s / 300_000, e / 300_000)).collect();
        assert_eq!(rows, [(0, 3), (3, 5), (5, 8), (8, 10), (10, 13), (13, 15)]);
        // Bands of 128 rows of 64: 16384 rows (CHUNK / 64) per chunk.
        let b = fp8(Fp8Scales::Block, 64, 128, None).ranges(64 * 40_000);
        assert!(b.iter().all(|(s, _)| s % (128 * 64) == 0));
        assert_eq!(b.last().unwrap().1, 64 * 40_000);
        // Experts of 200 rows: bands of 128 and 72 rows, never across an
        // expert.
        let x = fp8(Fp8Scales::Block, 64, 128, Some(200)).ranges(64 * 600);
        let rows: Vec<(usize, usize)> = x.iter().map(|(s, e)| (s / 64, e / 64)).collect();
        assert_eq!(rows, [(0, 200), (200, 400), (400, 600)]);
        // One scale per expert of 1200 rows of 1000: 1048 rows (CHUNK /
        // 1000) at a time, never across an expert.
        let c = fp8(Fp8Scales::Channel, 1000, 0, Some(1200)).ranges(1000 * 2400);
        let rows: Vec<(usize, usize)> = c.iter().map(|(s, e)| (s / 1000, e / 1000)).collect();
        assert_eq!(rows, [(0, 1048), (1048, 1200), (1200, 2248), (2248, 2400)]);
    }

    #[test]
    fn transposes() {
        let a: Vec<u32> = (0..6 * 35).collect();
        let mut t = vec![0; a.len()];
        transpose(&a, 6, 35, &mut t);
        for r in 0..6 {
            for c in 0..35 {
                assert_eq!(t[c * 6 + r], a[r * 35 + c]);
            }
        }
    }

    #[test]
    fn scale_bytes_round_trip() {
        for sdt in [DType::Float32, DType::BFloat16, DType::Float16] {
            let mut b = Vec::new();
            scale_bytes(0.0078125, sdt, &mut b);
            scale_bytes(3.0, sdt, &mut b);
            let mut v = Vec::new();
            scale_values(&b, sdt, &mut v);
            assert_eq!(v, [0.0078125, 3.0], "{sdt}");
        }
    }
}
