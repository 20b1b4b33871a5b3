//! `inspect`: the tensors of a checkpoint with value statistics, streamed.

use std::path::Path;

use safetensors::Dtype;

use super::reader::{SafetensorsFile, TensorEntry};
use super::source::resolve;
use super::{Cancel, Error};
use crate::cast;
use crate::dtype::DType;
use crate::format::Overflow;

const CHUNK: usize = 1 << 20;

/// Value statistics of one tensor (NaN excluded from min / max / mean).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ValueSummary {
    /// The smallest non-NaN value (+inf when all are NaN).
    pub min: f64,
    /// The largest non-NaN value (−inf when all are NaN).
    pub max: f64,
    /// The mean of the non-NaN values (NaN when all are NaN).
    pub mean: f64,
    /// The number of NaNs.
    pub nan_count: u64,
}

/// One tensor of [`inspect`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct InspectRow {
    /// The shard file.
    pub file: String,
    /// The tensor's name.
    pub name: String,
    /// Its safetensors dtype tag (`F32`, `BF16`, `F8_E4M3`, …).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its values' statistics (real numbers only; `None` for empty and
    /// complex tensors).
    pub summary: Option<ValueSummary>,
}

/// Lists the tensors of a file, a model directory or an index (sorted by
/// file, then name) with value statistics, a chunk at a time.
///
/// # Errors
///
/// As the reading half of [`super::convert`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("m.safetensors");
/// let x: Vec<u8> = [1.0f32, -2.0, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![3], &x).unwrap();
/// safetensors::serialize_to_file([("w", view)], None, &path).unwrap();
/// let rows = mldtypes::checkpoint::inspect(&path).unwrap();
/// let s = rows[0].summary.unwrap();
/// assert_eq!((s.min, s.max, s.mean, s.nan_count), (-2.0, 1.0, -0.5, 1));
/// ```
pub fn inspect(path: &Path) -> Result<Vec<InspectRow>, Error> {
    inspect_with(path, &Cancel::new())
}

/// [`inspect`], stopping with [`Error::Cancelled`] between chunks once
/// `cancel` is set.
///
/// # Errors
///
/// As [`inspect`], and [`Error::Cancelled`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("m.safetensors");
/// # let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &[0u8; 4]).unwrap();
/// # safetensors::serialize_to_file([("w", view)], None, &path).unwrap();
/// use mldtypes::checkpoint::{inspect_with, Cancel, Error};
/// let stop = Cancel::new();
/// assert_eq!(inspect_with(&path, &stop).unwrap().len(), 1);
/// stop.cancel();
/// assert!(matches!(inspect_with(&path, &stop), Err(Error::Cancelled)));
/// ```
pub fn inspect_with(path: &Path, cancel: &Cancel) -> Result<Vec<InspectRow>, Error> {
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    let src = resolve(path)?;
    let mut rows = Vec::new();
    for (fname, st) in &src.shards {
        for t in st.tensors() {
            rows.push(InspectRow {
                file: fname.clone(),
                name: t.name.clone(),
                dtype: t.dtype.to_string(),
                shape: t.shape.clone(),
                summary: summarize(st, t, cancel)?,
            });
        }
    }
    Ok(rows)
}

fn summarize(
    st: &SafetensorsFile,
    t: &TensorEntry,
    cancel: &Cancel,
) -> Result<Option<ValueSummary>, Error> {
    let Ok(d) = DType::try_from(t.dtype) else {
        return Ok(None);
    };
    if t.elements == 0 || t.dtype == Dtype::C64 {
        return Ok(None);
    }
    let (mut min, mut max, mut sum, mut n, mut nans) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0u64, 0u64);
    let mut buf = vec![0f64; CHUNK.min(t.elements)];
    let mut s = 0;
    let mut inbuf = Vec::new();
    while s < t.elements {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let e = (s + CHUNK).min(t.elements);
        let (b0, b1) = (
            super::storage_bytes(t.dtype, s).expect("validated"),
            super::storage_bytes(t.dtype, e).expect("validated"),
        );
        let src = st.read(t, b0, b1, &mut inbuf)?;
        let out = &mut buf[..e - s];
        decode(src, d, out)?;
        for &v in out.iter() {
            if v.is_nan() {
                nans += 1;
            } else {
                min = min.min(v);
                max = max.max(v);
                sum += v;
                n += 1;
            }
        }
        s = e;
    }
    Ok(Some(ValueSummary {
        min,
        max,
        mean: if n > 0 { sum / n as f64 } else { f64::NAN },
        nan_count: nans,
    }))
}

/// Decodes storage bytes of `d` to f64 (64-bit integers rounded).
fn decode(src: &[u8], d: DType, out: &mut [f64]) -> Result<(), Error> {
    macro_rules! ints {
        ($t:ty) => {{
            let w = std::mem::size_of::<$t>();
            for (o, c) in out.iter_mut().zip(src.chunks_exact(w)) {
                *o = <$t>::from_le_bytes(c.try_into().expect("width")) as f64;
            }
            Ok(())
        }};
    }
    match d {
        DType::Bool | DType::UInt8 => {
            for (o, b) in out.iter_mut().zip(src) {
                *o = *b as f64;
            }
            Ok(())
        }
        DType::Int8 => ints!(i8),
        DType::Int16 => ints!(i16),
        DType::Int32 => ints!(i32),
        DType::Int64 => ints!(i64),
        DType::UInt16 => ints!(u16),
        DType::UInt32 => ints!(u32),
        DType::UInt64 => ints!(u64),
        DType::Float64 => ints!(f64),
        _ => {
            let n = out.len();
            let unpacked;
            let src = if d.bits() < 8 {
                let mut u = vec![0u8; n];
                cast::pack::unpack(src, d, &mut u).map_err(|e| Error::usage(e.to_string()))?;
                unpacked = u;
                &unpacked[..]
            } else {
                src
            };
            cast::cast_bytes_on(
                cast::path(),
                src,
                d,
                bytemuck::cast_slice_mut(out),
                DType::Float64,
                Overflow::NonSaturating,
            )
            .map_err(|e| Error::usage(e.to_string()))
        }
    }
}
