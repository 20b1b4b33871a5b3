//! The safetensors reader: an open file, its validated header, and tensor
//! data read by positioned reads into the caller's buffers.
//!
//! Reading never maps the file: a file truncated or replaced while it is
//! read gives an [`Error::Read`] naming it, never a fault (SIGBUS) that would
//! kill the process. Only regular files are opened; a FIFO, socket or device
//! is refused before it is opened, so it cannot block.
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

use super::ordered::Json;
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

/// Where a file's bytes are: an open file (read by positioned reads) or a
/// buffer.
enum Bytes {
    File(std::fs::File),
    Owned(Vec<u8>),
}

/// A validated safetensors file.
pub struct SafetensorsFile {
    path: PathBuf,
    bytes: Bytes,
    /// The file's length when it was opened.
    len: usize,
    data_start: usize,
    /// The tensors, sorted by name.
    tensors: Vec<TensorEntry>,
    metadata: Option<BTreeMap<String, String>>,
    /// `__metadata__`'s entries in the file's order.
    metadata_entries: Vec<(String, String)>,
}

/// What a non-regular file is, for messages.
pub(crate) fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Refuses anything but a regular file (following symbolic links) before it
/// is opened: opening a FIFO would block until a writer comes.
pub(crate) fn check_regular(path: &Path) -> Result<(), Error> {
    let m = std::fs::metadata(path).map_err(|e| Error::read(path, e))?;
    if m.is_dir() {
        return Err(Error::invalid(
            path,
            "is a directory (give a .safetensors file, or a model directory as the input of \
             convert)",
        ));
    }
    if !m.is_file() {
        return Err(Error::invalid(
            path,
            format!(
                "is {}, not a regular file; refusing to read it",
                kind_name(&m.file_type())
            ),
        ));
    }
    Ok(())
}

/// Opens a regular file for reading without blocking on a FIFO swapped in
/// after [`check_regular`], and checks what was opened.
pub(crate) fn open_regular(path: &Path) -> Result<std::fs::File, Error> {
    check_regular(path)?;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = o.open(path).map_err(|e| Error::read(path, e))?;
    let m = file.metadata().map_err(|e| Error::read(path, e))?;
    if !m.is_file() {
        return Err(Error::invalid(
            path,
            format!(
                "is {}, not a regular file; refusing to read it",
                kind_name(&m.file_type())
            ),
        ));
    }
    Ok(file)
}

pub(crate) fn read_exact_at(f: &std::fs::File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(f, buf, off)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            let n =
                std::os::windows::fs::FileExt::seek_read(f, &mut buf[done..], off + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
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
    metadata: Option<Json>,
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
                    // `__metadata__` keeps its keys' order.
                    let v: Json = m.next_value()?;
                    if !seen.insert(k.clone()) {
                        h.duplicate.get_or_insert(k);
                        continue;
                    }
                    if k == "__metadata__" {
                        h.metadata = Some(v);
                    } else {
                        h.entries.push((k, v.to_value()));
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
    /// [`Error::Read`] if the file cannot be opened or read,
    /// [`Error::Invalid`] for a directory, a FIFO or another file that is not
    /// a regular file, and for a corrupt header (naming the problem and the
    /// tensor).
    pub fn open(path: &Path) -> Result<SafetensorsFile, Error> {
        let file = open_regular(path)?;
        let len = file.metadata().map_err(|e| Error::read(path, e))?.len();
        let len = usize::try_from(len)
            .map_err(|_| Error::invalid(path, format!("{len} bytes do not fit in memory")))?;
        let mut f = SafetensorsFile {
            path: path.to_path_buf(),
            bytes: Bytes::File(file),
            len,
            data_start: 0,
            tensors: Vec::new(),
            metadata: None,
            metadata_entries: Vec::new(),
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
            len: bytes.len(),
            bytes: Bytes::Owned(bytes),
            data_start: 0,
            tensors: Vec::new(),
            metadata: None,
            metadata_entries: Vec::new(),
        };
        f.parse()?;
        Ok(f)
    }

    /// Reads bytes `[off, off + buf.len())` of the file.
    fn read_at(&self, buf: &mut [u8], off: usize) -> Result<(), Error> {
        match &self.bytes {
            Bytes::Owned(v) => {
                buf.copy_from_slice(&v[off..off + buf.len()]);
                Ok(())
            }
            Bytes::File(f) => read_exact_at(f, buf, off as u64).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Error::read(
                        &self.path,
                        std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!(
                                "the file ended before byte {} of its {} bytes: it was \
                                 truncated while being read",
                                off + buf.len(),
                                self.len
                            ),
                        ),
                    )
                } else {
                    Error::read(&self.path, e)
                }
            }),
        }
    }

    fn parse(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let bad = |m: String| Error::invalid(&path, m);
        let len = self.len;
        if len < 8 {
            return Err(bad(format!(
                "not a safetensors file: {len} bytes, the header length alone takes 8"
            )));
        }
        let mut n8 = [0u8; 8];
        self.read_at(&mut n8, 0)?;
        let n = u64::from_le_bytes(n8);
        if n > MAX_HEADER as u64 {
            return Err(bad(format!(
                "header of {n} bytes is larger than safetensors' limit of {MAX_HEADER}"
            )));
        }
        let n = n as usize;
        if n > len - 8 {
            return Err(bad(format!(
                "truncated: the header claims {n} bytes but only {} follow",
                len - 8
            )));
        }
        let mut hbuf = vec![0u8; n];
        self.read_at(&mut hbuf, 8)?;
        let text =
            std::str::from_utf8(&hbuf).map_err(|e| bad(format!("header is not UTF-8: {e}")))?;
        let raw: RawHeader =
            serde_json::from_str(text).map_err(|e| bad(format!("bad header: {e}")))?;
        if let Some(d) = raw.duplicate {
            return Err(bad(format!("header names {} twice", quoted(&d))));
        }
        let (metadata, metadata_entries) = match raw.metadata {
            None => (None, Vec::new()),
            Some(v) => {
                let entries = match &v {
                    Json::Object(m) => m
                        .iter()
                        .map(|(k, x)| (k.clone(), x.to_value().as_str().map(str::to_string)))
                        .collect::<Vec<_>>(),
                    _ => Vec::new(),
                };
                let map = serde_json::from_value::<BTreeMap<String, String>>(v.to_value())
                    .map_err(|e| bad(format!("__metadata__ must map strings to strings: {e}")))?;
                let entries = entries
                    .into_iter()
                    .map(|(k, x)| (k, x.expect("checked: strings")))
                    .collect();
                (Some(map), entries)
            }
        };
        let data_len = len - 8 - n;
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
        serde_json::from_str::<safetensors::tensor::Metadata>(text)
            .map_err(|e| bad(format!("rejected by the safetensors crate: {e}")))?;
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        self.data_start = 8 + n;
        self.tensors = tensors;
        self.metadata = metadata;
        self.metadata_entries = metadata_entries;
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

    /// `__metadata__`'s entries in the order the file lists them.
    pub fn metadata_entries(&self) -> &[(String, String)] {
        &self.metadata_entries
    }

    /// Reads bytes `[begin, end)` of `t`'s data into `buf` (resized) and
    /// returns them.
    ///
    /// # Errors
    ///
    /// [`Error::Read`] when reading fails, the file having been truncated
    /// since it was opened included.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::checkpoint::SafetensorsFile;
    /// let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    /// let mut file = (header.len() as u64).to_le_bytes().to_vec();
    /// file.extend_from_slice(header);
    /// file.extend_from_slice(&[1.5f32.to_le_bytes(), 2.5f32.to_le_bytes()].concat());
    /// let f = SafetensorsFile::from_vec("mem".as_ref(), file).unwrap();
    /// let mut buf = Vec::new();
    /// assert_eq!(f.read(&f.tensors()[0], 4, 8, &mut buf).unwrap(), 2.5f32.to_le_bytes());
    /// ```
    pub fn read<'b>(
        &self,
        t: &TensorEntry,
        begin: usize,
        end: usize,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], Error> {
        let n = end - begin;
        if buf.len() < n {
            buf.resize(n, 0);
        }
        let out = &mut buf[..n];
        self.read_at(out, self.data_start + t.offsets.0 + begin)?;
        Ok(out)
    }

    /// Reads `count` runs of `len` bytes of `t`'s data, the first at byte
    /// `first` and each `stride` bytes after the previous one, into `buf`
    /// (resized) one after the other: a column slab of a row-major matrix.
    ///
    /// # Errors
    ///
    /// As [`SafetensorsFile::read`].
    pub(crate) fn read_strided<'b>(
        &self,
        t: &TensorEntry,
        first: usize,
        stride: usize,
        count: usize,
        len: usize,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], Error> {
        let n = count * len;
        if buf.len() < n {
            buf.resize(n, 0);
        }
        let out = &mut buf[..n];
        if stride == len {
            self.read_at(out, self.data_start + t.offsets.0 + first)?;
            return Ok(out);
        }
        for (i, run) in out.chunks_exact_mut(len.max(1)).enumerate().take(count) {
            self.read_at(run, self.data_start + t.offsets.0 + first + i * stride)?;
        }
        Ok(out)
    }

    /// The whole data of `t`, read into a new buffer.
    ///
    /// # Errors
    ///
    /// As [`SafetensorsFile::read`].
    pub fn tensor_data(&self, t: &TensorEntry) -> Result<Vec<u8>, Error> {
        let mut buf = Vec::new();
        self.read(t, 0, t.offsets.1 - t.offsets.0, &mut buf)?;
        Ok(buf)
    }

    /// The file's size in bytes when it was opened.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the file is empty (never true of a valid file).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A name for messages: quoted, and shortened to its first 80 characters
/// when longer than 200.
pub(crate) fn quoted(name: &str) -> String {
    format!("{:?}", short_name(name))
}
