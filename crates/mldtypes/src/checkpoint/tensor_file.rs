//! Whole safetensors files as dictionaries of typed tensors, for array
//! libraries (`mldtypes.safetensors` in Python): [`MappedFile`] maps a file
//! and gives each tensor's bytes in place, [`save`] writes tensors of every
//! dtype safetensors stores, all or nothing.
//!
//! Dtypes: every safetensors tag has its dtype ([`DType::try_from`]
//! `safetensors::Dtype`, `tags.rs`): `BOOL`, `U8` … `I64`, `F16`, `BF16`,
//! `F32`, `F64`, `C64`, `F8_E4M3` (float8_e4m3fn), `F8_E5M2`, `F8_E4M3FNUZ`,
//! `F8_E5M2FNUZ`, `F8_E8M0` (float8_e8m0fnu), and the bit-packed `F4`
//! (float4_e2m1fn), `F6_E2M3`, `F6_E3M2`. Tensors hold elements one per
//! element size (sub-byte formats one per byte, as NumPy holds them); the
//! packed tags are packed and unpacked with [`crate::cast::pack`] (element 0
//! in the lowest bits: PyTorch's `float4_e2m1fn_x2`). Types without a tag
//! (float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, the sub-byte integers,
//! complex32, bcomplex32, complex128) are refused by [`save`] with a message
//! naming the tensor and what to store instead ([`tag_for`]).
//!
//! Reading maps the file privately (copy on write: a tensor's bytes may be
//! changed in memory, never in the file) and validates the header twice: with
//! [`SafetensorsFile`]'s strict reader (duplicate names, unknown keys, gaps
//! and overlaps, every message naming the tensor) and with the `safetensors`
//! crate's own `SafeTensors::read_metadata` on the mapped bytes, which must
//! agree entry for entry — so the offsets handed out always lie inside the
//! mapping, even if the file was replaced between the two reads. As with
//! every memory map (NumPy's `memmap`, the `safetensors` package), truncating
//! the file while its tensors are in use makes their pages unreadable
//! (SIGBUS): the library's checkpoint conversion reads by positioned reads
//! instead for that reason.
//!
//! Writing lays tensors out as the `safetensors` crate's writer does (larger
//! element alignments first, then by name; the header padded with spaces to a
//! multiple of 8 bytes, so every tensor of a file written here starts at an
//! offset aligned for its element type), with `__metadata__` in the caller's
//! order, into a temporary beside the destination renamed into place
//! (`output.rs`): a failure or [`Cancel`] leaves nothing behind, and a
//! destination that is a symbolic link, a directory or a device is refused.
//!
//! # Examples
//!
//! ```
//! use mldtypes::checkpoint::tensor_file::{save, MappedFile, Tensor};
//! use mldtypes::checkpoint::Cancel;
//! use mldtypes::dtype::DType;
//! # let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("t.safetensors");
//! let codes = [0x38u8, 0x40, 0xc4]; // float8_e4m3fn 1, 2, -3
//! let w = Tensor { name: "w", dtype: DType::Float8E4M3FN, shape: &[3], data: &codes };
//! save(&path, &[w], &[("format".into(), "np".into())], &Cancel::new()).unwrap();
//! let f = MappedFile::open(&path).unwrap();
//! let t = f.tensor("w").unwrap();
//! assert_eq!(f.dtype(t), DType::Float8E4M3FN);
//! assert_eq!(f.stored_bytes(t), &codes);
//! assert_eq!(f.metadata_entries(), &[("format".to_string(), "np".to_string())]);
//! ```

use std::cmp::Reverse;
use std::io::Write;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;

use super::output::Staging;
use super::reader::{open_regular, quoted};
use super::{storage_bytes, Cancel, Error, SafetensorsFile, TensorEntry};
use crate::cast::pack;
use crate::dtype::DType;

/// A safetensors file mapped into memory, its header validated.
pub struct MappedFile {
    path: PathBuf,
    map: memmap2::MmapMut,
    data_start: usize,
    header: SafetensorsFile,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("tensors", &self.header.tensors().len())
            .finish()
    }
}

impl MappedFile {
    /// Maps `path` (privately, copy on write) and validates its header (see
    /// the module documentation).
    ///
    /// # Errors
    ///
    /// [`Error::Read`] if the file cannot be opened or mapped,
    /// [`Error::Invalid`] for anything but a regular file and for a corrupt
    /// header (naming the tensor), or a file that changed between the two
    /// validations.
    pub fn open(path: &Path) -> Result<MappedFile, Error> {
        let header = SafetensorsFile::open(path)?;
        let file = open_regular(path)?;
        // SAFETY: a private mapping of a regular file; the bytes are only
        // handed out as raw pointers and slices checked against its length.
        // Another process truncating the file while it is mapped makes the
        // lost pages unreadable (documented above), as for any mapping.
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
            .map_err(|e| Error::read(path, e))?;
        let changed = |what: &str| {
            Error::invalid(
                path,
                format!("changed while it was opened ({what}); open it again"),
            )
        };
        if map.len() != header.len() {
            return Err(changed("its length"));
        }
        let (n, meta) = safetensors::SafeTensors::read_metadata(&map)
            .map_err(|e| Error::invalid(path, format!("rejected by the safetensors crate: {e}")))?;
        let infos = meta.tensors();
        if infos.len() != header.tensors().len() {
            return Err(changed("its tensors"));
        }
        for t in header.tensors() {
            match infos.get(&t.name) {
                Some(i)
                    if i.dtype == t.dtype && i.shape == t.shape && i.data_offsets == t.offsets =>
                {
                    // The crate checked its offsets against the mapping.
                }
                _ => return Err(changed(&format!("tensor {}", quoted(&t.name)))),
            }
        }
        Ok(MappedFile {
            path: path.to_path_buf(),
            map,
            data_start: 8 + n,
            header,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tensors, sorted by name.
    pub fn tensors(&self) -> &[TensorEntry] {
        self.header.tensors()
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorEntry> {
        self.header.tensor(name)
    }

    /// `__metadata__`'s entries in the file's order.
    pub fn metadata_entries(&self) -> &[(String, String)] {
        self.header.metadata_entries()
    }

    /// Whether the file has a `__metadata__` map (possibly empty).
    pub fn has_metadata(&self) -> bool {
        self.header.metadata().is_some()
    }

    /// The dtype of `t`'s elements (each safetensors tag has one).
    pub fn dtype(&self, t: &TensorEntry) -> DType {
        DType::try_from(t.dtype).expect("every safetensors 0.8 tag has a dtype")
    }

    /// Whether `t` is stored bit-packed (`F4`, `F6_*`): its elements must be
    /// unpacked ([`MappedFile::unpack`]) before they can be used one per
    /// byte.
    pub fn is_packed(&self, t: &TensorEntry) -> bool {
        t.dtype.bitsize() < 8
    }

    /// `t`'s bytes as stored in the file (little-endian elements, or the
    /// packed bit stream).
    pub fn stored_bytes(&self, t: &TensorEntry) -> &[u8] {
        &self.map[self.data_start + t.offsets.0..self.data_start + t.offsets.1]
    }

    /// The address of `t`'s first byte in the (private, writable) mapping,
    /// for zero-copy views that live no longer than `self`.
    pub fn data_ptr(&self, t: &TensorEntry) -> *mut u8 {
        // A pointer into the mapping; writing through it changes only this
        // process's copy-on-write pages.
        self.map
            .as_ptr()
            .wrapping_add(self.data_start + t.offsets.0) as *mut u8
    }

    /// Unpacks a packed tensor into `out` (one element per byte; `out` holds
    /// `t.elements` bytes); other tensors are copied.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] if `out` has the wrong length.
    pub fn unpack(&self, t: &TensorEntry, out: &mut [u8]) -> Result<(), Error> {
        let src = self.stored_bytes(t);
        if !self.is_packed(t) {
            if out.len() != src.len() {
                return Err(Error::usage(format!(
                    "tensor {}: {} bytes asked of {}",
                    quoted(&t.name),
                    out.len(),
                    src.len()
                )));
            }
            out.copy_from_slice(src);
            return Ok(());
        }
        pack::unpack(src, self.dtype(t), out)
            .map_err(|e| Error::usage(format!("tensor {}: {e}", quoted(&t.name))))
    }
}

/// One tensor to [`save`]: elements of `dtype` (one per element size;
/// sub-byte formats one per byte), little-endian, row-major, `shape`'s
/// product of them in `data`.
#[derive(Clone, Copy, Debug)]
pub struct Tensor<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// Its elements' dtype.
    pub dtype: DType,
    /// Its shape.
    pub shape: &'a [usize],
    /// Its elements.
    pub data: &'a [u8],
}

/// The safetensors tag that stores `dtype`, for tensor `name`.
///
/// # Errors
///
/// [`Error::Usage`] for a dtype safetensors has no tag for, naming the
/// tensor and saying what to store instead.
///
/// ```
/// use mldtypes::checkpoint::tensor_file::tag_for;
/// use mldtypes::dtype::DType;
/// assert_eq!(tag_for("w", DType::BFloat16).unwrap(), safetensors::Dtype::BF16);
/// let e = tag_for("w", DType::Float8E4M3).unwrap_err().to_string();
/// assert!(e.contains("F8_E4M3 is float8_e4m3fn"), "{e}");
/// ```
pub fn tag_for(name: &str, dtype: DType) -> Result<Dtype, Error> {
    Dtype::try_from(dtype).map_err(|_| {
        let hint = match dtype {
            DType::Float8E4M3 => {
                "safetensors' F8_E4M3 is float8_e4m3fn (OCP FP8: no infinities, max 448), not \
                 float8_e4m3 (IEEE-style, max 240); convert with astype(float8_e4m3fn) or to \
                 a wider float"
            }
            DType::Float8E3M4 | DType::Float8E4M3B11FNUZ => {
                "convert it to a float type safetensors has (float8_e4m3fn, float8_e5m2, \
                 bfloat16, float16, float32)"
            }
            DType::Int1 | DType::Int2 | DType::Int4 => {
                "store it as int8 (I8), or its mldtypes.pack bytes as uint8 (U8)"
            }
            DType::UInt1 | DType::UInt2 | DType::UInt4 => {
                "store it as uint8 (U8), or its mldtypes.pack bytes as uint8"
            }
            DType::Complex32 | DType::BComplex32 | DType::Complex128 => {
                "store it as complex64 (C64) or its real and imaginary parts as two tensors"
            }
            _ => "convert it to a dtype safetensors has",
        };
        Error::usage(format!(
            "tensor {}: safetensors has no dtype for {dtype}; {hint}",
            quoted(name)
        ))
    })
}

/// A tensor laid out for writing.
struct Planned<'a> {
    src: &'a Tensor<'a>,
    tag: Dtype,
    size: usize,
}

/// A safetensors header: `__metadata__` first, its entries in the given
/// order, then the tensors in layout order (the crate's `Metadata` keeps its
/// metadata in a `HashMap`, whose order varies).
struct Header<'a> {
    meta: Option<&'a [(String, String)]>,
    tensors: &'a [(String, TensorInfo)],
}

impl serde::Serialize for Header<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Entries<'a>(&'a [(String, String)]);
        impl serde::Serialize for Entries<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        if let Some(meta) = self.meta {
            m.serialize_entry("__metadata__", &Entries(meta))?;
        }
        for (k, v) in self.tensors {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Bytes written between checks of the cancellation flag.
const CHUNK: usize = 1 << 24;

/// Writes `tensors` and `metadata` to `path` as a safetensors file (see the
/// module documentation): all at once or nothing.
///
/// # Errors
///
/// [`Error::Usage`] for a dtype without a safetensors tag ([`tag_for`]), a
/// packed tag whose elements do not fill whole bytes (float4: an even
/// count; float6: a multiple of 4), data whose length is not the shape's,
/// two tensors of one name or a `__metadata__` key given twice;
/// [`Error::Write`] when writing fails or the destination is not a regular
/// file; [`Error::Cancelled`] when `cancel` is set. Nothing is left at `path`
/// on error (an existing file stays as it was).
pub fn save(
    path: &Path,
    tensors: &[Tensor<'_>],
    metadata: &[(String, String)],
    cancel: &Cancel,
) -> Result<(), Error> {
    save_with_metadata(path, tensors, Some(metadata), cancel)
}

/// [`save`], with `None` writing no `__metadata__` at all (a file read back
/// then has no metadata, as the `safetensors` package's `metadata()` gives
/// `None`).
///
/// # Errors
///
/// As [`save`].
pub fn save_with_metadata(
    path: &Path,
    tensors: &[Tensor<'_>],
    metadata: Option<&[(String, String)]>,
    cancel: &Cancel,
) -> Result<(), Error> {
    let mut planned = Vec::with_capacity(tensors.len());
    let mut names = std::collections::HashSet::new();
    for t in tensors {
        if !names.insert(t.name) {
            return Err(Error::usage(format!(
                "two tensors are named {}",
                quoted(t.name)
            )));
        }
        let tag = tag_for(t.name, t.dtype)?;
        let n = t
            .shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                Error::usage(format!(
                    "tensor {}: shape {:?} overflows",
                    quoted(t.name),
                    t.shape
                ))
            })?;
        let elem = t.dtype.itemsize();
        if n.checked_mul(elem) != Some(t.data.len()) {
            return Err(Error::usage(format!(
                "tensor {}: {} bytes of data for shape {:?} of {} ({elem} byte(s) each)",
                quoted(t.name),
                t.data.len(),
                t.shape,
                t.dtype
            )));
        }
        let size = storage_bytes(tag, n).ok_or_else(|| {
            let per = if tag == Dtype::F4 {
                "an even number"
            } else {
                "a multiple of 4"
            };
            Error::usage(format!(
                "tensor {}: {n} elements of {} do not fill whole bytes in safetensors' {tag} \
                 ({} bits each, packed); it needs {per} of elements",
                quoted(t.name),
                t.dtype,
                tag.bitsize()
            ))
        })?;
        planned.push(Planned { src: t, tag, size });
    }
    if let Some(m) = metadata {
        let mut keys = std::collections::HashSet::new();
        for (k, _) in m {
            if !keys.insert(k.as_str()) {
                return Err(Error::usage(format!(
                    "the metadata key {} is given twice",
                    quoted(k)
                )));
            }
        }
    }
    // Layout: larger alignments first, then by name (as the crate's writer).
    planned.sort_by(|a, b| (Reverse(a.tag), a.src.name).cmp(&(Reverse(b.tag), b.src.name)));
    let mut infos = Vec::with_capacity(planned.len());
    let mut off = 0usize;
    for p in &planned {
        infos.push((
            p.src.name.to_string(),
            TensorInfo {
                dtype: p.tag,
                shape: p.src.shape.to_vec(),
                data_offsets: (off, off + p.size),
            },
        ));
        off += p.size;
    }
    // The crate checks the layout; the header is written by `Header`.
    Metadata::new(metadata.map(|m| m.iter().cloned().collect()), infos.clone())
        .map_err(|e| Error::usage(format!("building the safetensors header: {e}")))?;
    let mut header = serde_json::to_vec(&Header {
        meta: metadata,
        tensors: &infos,
    })
    .map_err(|e| Error::usage(format!("building the safetensors header: {e}")))?;
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    if header.len() > super::MAX_HEADER {
        return Err(Error::usage(format!(
            "the header would take {} bytes, more than safetensors' limit of {}",
            header.len(),
            super::MAX_HEADER
        )));
    }
    if cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    let staging = Staging::file(path, &[], true, None)?;
    let (tmp, file) = staging.create("")?;
    let werr = |e: std::io::Error| Error::write_io(path, e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    w.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(werr)?;
    w.write_all(&header).map_err(werr)?;
    let mut packed = Vec::new();
    for p in &planned {
        let data: &[u8] = if p.tag.bitsize() < 8 {
            packed.clear();
            packed.resize(p.size, 0);
            pack::pack(p.src.data, p.src.dtype, &mut packed)
                .map_err(|e| Error::usage(format!("tensor {}: {e}", quoted(p.src.name))))?;
            &packed
        } else {
            p.src.data
        };
        for chunk in data.chunks(CHUNK) {
            if cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            w.write_all(chunk).map_err(werr)?;
        }
    }
    w.flush().map_err(werr)?;
    drop(w);
    let _ = tmp;
    staging.commit(false)
}

/// Every tag round-trips through [`save`] and [`MappedFile`] (the packed `F4` / `F6_*` tags
/// packed and unpacked), the layout and header are the `safetensors` crate's (checked with
/// `SafeTensors::deserialize`), dtypes without a tag and malformed requests are refused with
/// nothing written, a symbolic link destination is never replaced, and a cancelled write
/// leaves nothing. (Unit tests: no test binary of their own to build.)
#[cfg(test)]
mod tests {
    use super::{save, save_with_metadata, tag_for, MappedFile, Tensor};
    use crate::cast::pack;
    use crate::checkpoint::{Cancel, Error};
    use crate::dtype::DType;
    use safetensors::Dtype;

    /// Every tag and the dtype it stores.
    const TAGS: [(Dtype, DType); 22] = [
        (Dtype::BOOL, DType::Bool),
        (Dtype::U8, DType::UInt8),
        (Dtype::I8, DType::Int8),
        (Dtype::U16, DType::UInt16),
        (Dtype::I16, DType::Int16),
        (Dtype::U32, DType::UInt32),
        (Dtype::I32, DType::Int32),
        (Dtype::U64, DType::UInt64),
        (Dtype::I64, DType::Int64),
        (Dtype::F16, DType::Float16),
        (Dtype::BF16, DType::BFloat16),
        (Dtype::F32, DType::Float32),
        (Dtype::F64, DType::Float64),
        (Dtype::C64, DType::Complex64),
        (Dtype::F8_E4M3, DType::Float8E4M3FN),
        (Dtype::F8_E5M2, DType::Float8E5M2),
        (Dtype::F8_E4M3FNUZ, DType::Float8E4M3FNUZ),
        (Dtype::F8_E5M2FNUZ, DType::Float8E5M2FNUZ),
        (Dtype::F8_E8M0, DType::Float8E8M0FNU),
        (Dtype::F4, DType::Float4E2M1FN),
        (Dtype::F6_E2M3, DType::Float6E2M3FN),
        (Dtype::F6_E3M2, DType::Float6E3M2FN),
    ];

    /// `n` elements of `d` (sub-byte formats: codes within their width, one per byte).
    fn elements(d: DType, n: usize, seed: u64) -> Vec<u8> {
        let size = d.itemsize();
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut v = Vec::with_capacity(n * size);
        for _ in 0..n * size {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x as u8);
        }
        let bits = d.bits();
        if bits < 8 {
            v.iter_mut().for_each(|b| *b &= (1u8 << bits) - 1);
        }
        if d == DType::Bool {
            v.iter_mut().for_each(|b| *b &= 1);
        }
        v
    }

    #[test]
    fn every_tag_round_trips_with_the_crates_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("all.safetensors");
        let shapes: [&[usize]; 3] = [&[0], &[8], &[2, 4]];
        let mut owned = Vec::new();
        for (i, (tag, d)) in TAGS.iter().enumerate() {
            for (j, s) in shapes.iter().enumerate() {
                let n: usize = s.iter().product();
                owned.push((
                    format!("{tag}_{j}"),
                    *d,
                    s.to_vec(),
                    elements(*d, n, (i * 7 + j) as u64),
                ));
            }
            if tag.bitsize() >= 8 {
                owned.push((
                    format!("{tag}_scalar"),
                    *d,
                    vec![],
                    elements(*d, 1, i as u64),
                ));
            }
        }
        let tensors: Vec<Tensor<'_>> = owned
            .iter()
            .map(|(name, d, shape, data)| Tensor {
                name,
                dtype: *d,
                shape,
                data,
            })
            .collect();
        let meta = vec![
            ("z".to_string(), "last?".to_string()),
            ("a".to_string(), "first?".to_string()),
        ];
        save(&path, &tensors, &meta, &Cancel::new()).unwrap();

        // The crate reads it, every tensor's data aligned for its element type.
        let bytes = std::fs::read(&path).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(n % 8, 0);
        for (name, view) in st.tensors() {
            let off = view.data().as_ptr() as usize - bytes.as_ptr() as usize;
            let align = view.dtype().bitsize().div_ceil(8).min(8);
            assert_eq!(off % align, 0, "{name}");
        }
        // Metadata in the caller's order.
        let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap();
        assert!(
            header.starts_with(r#"{"__metadata__":{"z":"last?","a":"first?"}"#),
            "{header}"
        );

        let f = MappedFile::open(&path).unwrap();
        assert_eq!(f.tensors().len(), tensors.len());
        assert_eq!(f.metadata_entries(), meta.as_slice());
        for t in &tensors {
            let e = f.tensor(t.name).unwrap();
            assert_eq!(f.dtype(e), t.dtype, "{}", t.name);
            assert_eq!(e.dtype, tag_for(t.name, t.dtype).unwrap());
            assert_eq!(e.shape, t.shape);
            let mut out = vec![0u8; t.data.len()];
            f.unpack(e, &mut out).unwrap();
            assert_eq!(out, t.data, "{}", t.name);
            if f.is_packed(e) {
                let mut packed = vec![0u8; f.stored_bytes(e).len()];
                pack::pack(t.data, t.dtype, &mut packed).unwrap();
                assert_eq!(f.stored_bytes(e), packed.as_slice());
            } else {
                assert_eq!(f.stored_bytes(e), t.data);
                assert_eq!(
                    f.data_ptr(e) as *const u8,
                    f.stored_bytes(e).as_ptr(),
                    "{}",
                    t.name
                );
            }
        }
    }

    #[test]
    fn f4_and_f6_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.safetensors");
        let f4 = [0x1u8, 0x2, 0x3, 0xf];
        let f6 = [1u8, 2, 3, 63];
        let t = [
            Tensor {
                name: "f4",
                dtype: DType::Float4E2M1FN,
                shape: &[4],
                data: &f4,
            },
            Tensor {
                name: "f6",
                dtype: DType::Float6E3M2FN,
                shape: &[2, 2],
                data: &f6,
            },
        ];
        save_with_metadata(&path, &t, None, &Cancel::new()).unwrap();
        let f = MappedFile::open(&path).unwrap();
        assert!(!f.has_metadata());
        assert_eq!(f.stored_bytes(f.tensor("f4").unwrap()), [0x21, 0xf3]);
        let v = 1u32 | (2 << 6) | (3 << 12) | (63 << 18);
        assert_eq!(
            f.stored_bytes(f.tensor("f6").unwrap()),
            &v.to_le_bytes()[..3]
        );
    }

    #[test]
    fn refusals_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.safetensors");
        let one = [0u8; 1];
        let three = [0u8; 3];
        let cases: Vec<(Tensor<'_>, &str)> = vec![
            (
                Tensor {
                    name: "e4m3",
                    dtype: DType::Float8E4M3,
                    shape: &[1],
                    data: &one,
                },
                "F8_E4M3 is float8_e4m3fn",
            ),
            (
                Tensor {
                    name: "i4",
                    dtype: DType::Int4,
                    shape: &[1],
                    data: &one,
                },
                "store it as int8",
            ),
            (
                Tensor {
                    name: "f4",
                    dtype: DType::Float4E2M1FN,
                    shape: &[3],
                    data: &three,
                },
                "an even number",
            ),
            (
                Tensor {
                    name: "short",
                    dtype: DType::Float32,
                    shape: &[2],
                    data: &three,
                },
                "3 bytes of data for shape [2]",
            ),
        ];
        for (t, want) in cases {
            let e = save(&path, &[t], &[], &Cancel::new()).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{e}");
            assert!(e.to_string().contains(want), "{e}");
        }
        let twice = Tensor {
            name: "w",
            dtype: DType::UInt8,
            shape: &[1],
            data: &one,
        };
        let e = save(&path, &[twice, twice], &[], &Cancel::new()).unwrap_err();
        assert!(e.to_string().contains("two tensors are named \"w\""), "{e}");
        let cancel = Cancel::new();
        cancel.cancel();
        assert!(matches!(
            save(&path, &[twice], &[], &cancel),
            Err(Error::Cancelled)
        ));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_destination_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("link.safetensors");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let t = Tensor {
            name: "w",
            dtype: DType::UInt8,
            shape: &[1],
            data: &[1],
        };
        let e = save(&link, &[t], &[], &Cancel::new()).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn corrupt_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.safetensors");
        std::fs::write(&path, b"\x10\0\0\0\0\0\0\0{not json}      ").unwrap();
        let e = MappedFile::open(&path).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        assert!(matches!(
            MappedFile::open(&dir.path().join("missing")).unwrap_err(),
            Error::Read { .. }
        ));
    }
}
