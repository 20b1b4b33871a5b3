//! The safetensors reader: a memory-mapped file and its validated header.
//!
//! The header is parsed with `serde_json` into the `safetensors` crate's
//! types, more strictly than `safetensors::SafeTensors::deserialize`: a
//! duplicate tensor name, a key other than `dtype` / `shape` /
//! `data_offsets` in a tensor entry, or a `__metadata__` that is not a map of
//! strings is an error, and every message names the tensor at fault. Tensors
//! overlapping or leaving gaps are reported in offset order (ties by name), so
//! the same file always gives the same message. The result is then checked
//! once more by the `safetensors` crate's own `read_metadata`.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use safetensors::Dtype;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::{short_name, storage_bytes, Error};

/// The largest header the `safetensors` crate reads (100 MB).
pub const MAX_HEADER: usize = 100_000_000;

/// One tensor of a safetensors file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorEntry {
    /// The tensor's name.
    pub name: String,
    /// Its safetensors dtype tag.
    pub dtype: Dtype,
    /// Its shape (row-major).
    pub shape: Vec<usize>,
    /// Elements: the product of `shape`.
    pub elements: usize,
    /// Byte offsets `[begin, end)` of its data, relative to the data section.
    pub offsets: (usize, usize),
}

/// The bytes of a file: memory-mapped, owned, or empty.
enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    Empty,
}

/// A validated safetensors file, memory-mapped.
pub struct SafetensorsFile {
    path: PathBuf,
    bytes: Bytes,
    data_start: usize,
    /// The tensors, sorted by name.
    tensors: Vec<TensorEntry>,
    metadata: Option<BTreeMap<String, String>>,
}

impl fmt::Debug for SafetensorsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SafetensorsFile")
            .field("path", &self.path)
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInfo {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: (u64, u64),
}

/// The header's entries in file order, duplicates reported.
struct RawHeader {
    metadata: Option<serde_json::Value>,
    entries: Vec<(String, serde_json::Value)>,
    duplicate: Option<String>,
}

impl<'de> Deserialize<'de> for RawHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawHeader;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object mapping tensor names to {dtype, shape, data_offsets}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<RawHeader, A::Error> {
                let mut h = RawHeader {
                    metadata: None,
                    entries: Vec::new(),
                    duplicate: None,
                };
                let mut seen = HashSet::new();
                while let Some(k) = m.next_key::<String>()? {
                    let v: serde_json::Value = m.next_value()?;
                    if !seen.insert(k.clone()) {
                        h.duplicate.get_or_insert(k);
                        continue;
                    }
                    if k == "__metadata__" {
                        h.metadata = Some(v);
                    } else {
                        h.entries.push((k, v));
                    }
                }
                Ok(h)
            }
        }
        d.deserialize_map(V)
    }
}

impl SafetensorsFile {
    /// Opens and validates `path` (see the module documentation).
    ///
    /// # Errors
    ///
    /// [`Error::Read`] if the file cannot be opened or mapped (a directory
    /// included), [`Error::Invalid`] naming the problem and the tensor.
    pub fn open(path: &Path) -> Result<SafetensorsFile, Error> {
        let read = |e| Error::read(path, e);
        let file = std::fs::File::open(path).map_err(read)?;
        let meta = file.metadata().map_err(read)?;
        if meta.is_dir() {
            return Err(Error::invalid(
                path,
                "is a directory (give a .safetensors file, or a model directory as the input of \
                 convert)",
            ));
        }
        if !meta.is_file() {
            return Err(Error::invalid(path, "is not a regular file"));
        }
        let bytes = if meta.len() == 0 {
            Bytes::Empty
        } else {
            // SAFETY: the map is only read. As with every memory-mapped
            // reader, another process truncating the file while we run would
            // fault.
            Bytes::Mapped(unsafe { memmap2::Mmap::map(&file) }.map_err(read)?)
        };
        let mut f = SafetensorsFile {
            path: path.to_path_buf(),
            bytes,
            data_start: 0,
            tensors: Vec::new(),
            metadata: None,
        };
        f.parse()?;
        Ok(f)
    }

    /// Validates a safetensors file held in memory; `path` only names it in
    /// messages.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`], as [`SafetensorsFile::open`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::checkpoint::SafetensorsFile;
    /// let header = br#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    /// let mut file = (header.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(header);
    /// file.extend_from_slice(&1.5f32.to_le_bytes());
    /// let f = SafetensorsFile::from_vec("mem".as_ref(), file).unwrap();
    /// assert_eq!(f.tensors()[0].shape, [1]);
    /// let e = SafetensorsFile::from_vec("mem".as_ref(), b"[]".to_vec()).unwrap_err();
    /// assert!(e.to_string().contains("takes 8"));
    /// ```
    pub fn from_vec(path: &Path, bytes: Vec<u8>) -> Result<SafetensorsFile, Error> {
        let mut f = SafetensorsFile {
            path: path.to_path_buf(),
            bytes: Bytes::Owned(bytes),
            data_start: 0,
            tensors: Vec::new(),
            metadata: None,
        };
        f.parse()?;
        Ok(f)
    }

    fn buf(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
            Bytes::Empty => &[],
        }
    }

    fn parse(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let bad = |m: String| Error::invalid(&path, m);
        let buf = self.buf();
        if buf.len() < 8 {
            return Err(bad(format!(
                "not a safetensors file: {} bytes, the header length alone takes 8",
                buf.len()
            )));
        }
        let n = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
        if n > MAX_HEADER as u64 {
            return Err(bad(format!(
                "header of {n} bytes is larger than safetensors' limit of {MAX_HEADER}"
            )));
        }
        let n = n as usize;
        if n > buf.len() - 8 {
            return Err(bad(format!(
                "truncated: the header claims {n} bytes but only {} follow",
                buf.len() - 8
            )));
        }
        let text = std::str::from_utf8(&buf[8..8 + n])
            .map_err(|e| bad(format!("header is not UTF-8: {e}")))?;
        let raw: RawHeader =
            serde_json::from_str(text).map_err(|e| bad(format!("bad header: {e}")))?;
        if let Some(d) = raw.duplicate {
            return Err(bad(format!("header names {} twice", quoted(&d))));
        }
        let metadata = match raw.metadata {
            None => None,
            Some(v) => Some(
                serde_json::from_value::<BTreeMap<String, String>>(v)
                    .map_err(|e| bad(format!("__metadata__ must map strings to strings: {e}")))?,
            ),
        };
        let data_len = buf.len() - 8 - n;
        let mut tensors = Vec::with_capacity(raw.entries.len());
        for (name, v) in raw.entries {
            let who = format!("tensor {}", quoted(&name));
            let info: RawInfo =
                serde_json::from_value(v).map_err(|e| bad(format!("{who}: {e}")))?;
            let dtype: Dtype = serde_json::from_value(serde_json::Value::String(
                info.dtype.clone(),
            ))
            .map_err(|_| {
                bad(format!(
                    "{who}: unknown dtype {:?}",
                    short_name(&info.dtype)
                ))
            })?;
            let shape: Vec<usize> = info
                .shape
                .iter()
                .map(|d| usize::try_from(*d))
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    bad(format!(
                        "{who}: shape {:?} does not fit in memory",
                        info.shape
                    ))
                })?;
            let elements = shape
                .iter()
                .try_fold(1usize, |a, d| a.checked_mul(*d))
                .ok_or_else(|| {
                    bad(format!(
                        "{who}: shape {shape:?} overflows (more elements than memory can address)"
                    ))
                })?;
            let size = storage_bytes(dtype, elements).ok_or_else(|| {
                if elements.checked_mul(dtype.bitsize()).is_none() {
                    bad(format!("{who}: shape {shape:?} of {dtype} overflows"))
                } else {
                    bad(format!(
                        "{who}: {elements} elements of {dtype} do not fill whole bytes \
                         ({dtype} packs {} bits per element)",
                        dtype.bitsize()
                    ))
                }
            })?;
            let (b, e) = info.data_offsets;
            if b > e {
                return Err(bad(format!(
                    "{who}: data_offsets [{b}, {e}] end before they begin"
                )));
            }
            if e - b != size as u64 {
                return Err(bad(format!(
                    "{who}: data_offsets [{b}, {e}] span {} bytes, but shape {shape:?} of {dtype} takes {size}",
                    e - b
                )));
            }
            if e > data_len as u64 {
                return Err(bad(format!(
                    "{who}: data_offsets [{b}, {e}] run past the end of the data ({data_len} \
                     bytes): the file is truncated or the offsets are wrong"
                )));
            }
            tensors.push(TensorEntry {
                name,
                dtype,
                shape,
                elements,
                offsets: (b as usize, e as usize),
            });
        }
        // Coverage: in offset order (ties by name), each tensor starts where
        // the previous one ends and the last one ends with the file.
        let mut order: Vec<&TensorEntry> = tensors.iter().collect();
        order.sort_by(|a, b| (a.offsets, &a.name).cmp(&(b.offsets, &b.name)));
        let mut end = 0usize;
        let mut prev: Option<&TensorEntry> = None;
        for t in &order {
            if t.offsets.0 < end {
                let p = prev.expect("end > 0 implies a previous tensor");
                return Err(bad(format!(
                    "tensors {} (bytes {}..{}) and {} (bytes {}..{}) overlap",
                    quoted(&p.name),
                    p.offsets.0,
                    p.offsets.1,
                    quoted(&t.name),
                    t.offsets.0,
                    t.offsets.1
                )));
            }
            if t.offsets.0 > end {
                return Err(bad(format!(
                    "bytes {end}..{} of the data belong to no tensor (before {})",
                    t.offsets.0,
                    quoted(&t.name)
                )));
            }
            end = t.offsets.1;
            prev = Some(t);
        }
        if end != data_len {
            return Err(bad(format!(
                "bytes {end}..{data_len} of the data belong to no tensor"
            )));
        }
        // The safetensors crate must agree.
        safetensors::SafeTensors::read_metadata(buf)
            .map_err(|e| bad(format!("rejected by the safetensors crate: {e}")))?;
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        self.data_start = 8 + n;
        self.tensors = tensors;
        self.metadata = metadata;
        Ok(())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tensors, sorted by name.
    pub fn tensors(&self) -> &[TensorEntry] {
        &self.tensors
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorEntry> {
        self.tensors
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.tensors[i])
    }

    /// The `__metadata__` map.
    pub fn metadata(&self) -> Option<&BTreeMap<String, String>> {
        self.metadata.as_ref()
    }

    /// Bytes `[begin, end)` of `t`'s data.
    pub fn data(&self, t: &TensorEntry, begin: usize, end: usize) -> &[u8] {
        let s = self.data_start + t.offsets.0;
        &self.buf()[s + begin..s + end]
    }

    /// The whole data of `t`.
    pub fn tensor_data(&self, t: &TensorEntry) -> &[u8] {
        self.data(t, 0, t.offsets.1 - t.offsets.0)
    }

    /// Tells the kernel the pages behind bytes `[begin, end)` of `t` are no
    /// longer needed (they stay in the page cache but leave this process's
    /// resident set), so reading a model keeps memory bounded.
    pub fn release(&self, t: &TensorEntry, begin: usize, end: usize) {
        #[cfg(unix)]
        if let Bytes::Mapped(m) = &self.bytes {
            let s = self.data_start + t.offsets.0 + begin;
            // SAFETY: the map is private and read-only: dropping its pages
            // only makes later reads fault them in again from the file.
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, s, end - begin)
            };
        }
        #[cfg(not(unix))]
        let _ = (t, begin, end);
    }

    /// The file's size in bytes.
    pub fn len(&self) -> usize {
        self.buf().len()
    }

    /// Whether the file is empty (never true of a valid file).
    pub fn is_empty(&self) -> bool {
        self.buf().is_empty()
    }
}

/// A name for messages: quoted, and shortened to its first 80 characters
/// when longer than 200.
pub(crate) fn quoted(name: &str) -> String {
    format!("{:?}", short_name(name))
}
