//! Resolving an input: one file, a model directory, or a sharded model's
//! `model.safetensors.index.json`, validated before anything is written.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::ordered::Json;
use super::reader::{quoted, SafetensorsFile};
use super::Error;

/// A resolved input.
pub(crate) struct Source {
    /// The model directory (`None` for a single file).
    pub dir: Option<PathBuf>,
    /// The index file name and its JSON, when sharded.
    pub index: Option<(String, Json)>,
    /// The shards: file name and the opened file.
    pub shards: Vec<(String, SafetensorsFile)>,
    /// Other entries of the model directory (copied), by file name.
    pub others: Vec<String>,
}

fn is_index_name(n: &str) -> bool {
    n.ends_with(".safetensors.index.json")
}

fn list_dir(dir: &Path) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    for e in fs::read_dir(dir).map_err(|e| Error::read(dir, e))? {
        let e = e.map_err(|e| Error::read(dir, e))?;
        match e.file_name().into_string() {
            Ok(n) => names.push(n),
            Err(n) => {
                return Err(Error::invalid(
                    dir,
                    format!("holds a file whose name is not UTF-8: {n:?}"),
                ))
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Resolves and validates `input`.
pub(crate) fn resolve(input: &Path) -> Result<Source, Error> {
    let m = fs::metadata(input).map_err(|e| Error::read(input, e))?;
    if m.is_dir() {
        let names = list_dir(input)?;
        let indexes: Vec<&String> = names.iter().filter(|n| is_index_name(n)).collect();
        return match indexes.len() {
            0 => {
                let shards: Vec<String> = names
                    .iter()
                    .filter(|n| n.ends_with(".safetensors"))
                    .cloned()
                    .collect();
                if shards.is_empty() {
                    return Err(Error::invalid(
                        input,
                        "holds no .safetensors file and no model.safetensors.index.json",
                    ));
                }
                let mut opened = Vec::new();
                for s in &shards {
                    opened.push((s.clone(), SafetensorsFile::open(&input.join(s))?));
                }
                let others = names.into_iter().filter(|n| !shards.contains(n)).collect();
                Ok(Source {
                    dir: Some(input.to_path_buf()),
                    index: None,
                    shards: opened,
                    others: filter_others(input, others)?,
                })
            }
            1 => {
                let idx = indexes[0].clone();
                sharded(input, &idx, names)
            }
            _ => Err(Error::invalid(
                input,
                format!(
                    "holds several index files ({}); give the one to convert",
                    indexes
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        };
    }
    let name = input
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    if name.ends_with(".json") {
        let dir = match input.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let names = list_dir(&dir)?;
        return sharded(&dir, &name, names);
    }
    Ok(Source {
        dir: None,
        index: None,
        shards: vec![(name, SafetensorsFile::open(input)?)],
        others: Vec::new(),
    })
}

/// Refuses a FIFO, socket or device at `path` or anywhere under it
/// (following symbolic links, as copying does; `depth` bounds link loops).
fn check_tree(path: &Path, depth: usize) -> Result<(), Error> {
    let m = fs::metadata(path).map_err(|e| Error::read(path, e))?;
    if m.is_file() {
        return Ok(());
    }
    if !m.is_dir() {
        return Err(Error::invalid(
            path,
            format!(
                "is {}; a model directory may hold only regular files and directories \
                 (symbolic links to them are followed)",
                super::reader::kind_name(&m.file_type())
            ),
        ));
    }
    if depth > 40 {
        return Err(Error::invalid(
            path,
            "is nested more than 40 directories deep (a symbolic link loop?)",
        ));
    }
    for e in fs::read_dir(path).map_err(|e| Error::read(path, e))? {
        let e = e.map_err(|e| Error::read(path, e))?;
        check_tree(&e.path(), depth + 1)?;
    }
    Ok(())
}

/// Leaves out our own temporaries.
fn filter_others(dir: &Path, v: Vec<String>) -> Result<Vec<String>, Error> {
    let v: Vec<String> = v
        .into_iter()
        .filter(|n| !n.ends_with(super::output::PARTIAL_SUFFIX) && !n.ends_with(".mldtypes-old"))
        .collect();
    for n in &v {
        check_tree(&dir.join(n), 0)?;
    }
    Ok(v)
}

fn sharded(dir: &Path, index_name: &str, names: Vec<String>) -> Result<Source, Error> {
    let ipath = dir.join(index_name);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut super::reader::open_regular(&ipath)?, &mut text)
        .map_err(|e| Error::read(&ipath, e))?;
    let bad = |m: String| Error::invalid(&ipath, m);
    let json: Json =
        serde_json::from_str(&text).map_err(|e| bad(format!("bad index JSON: {e}")))?;
    let wm = json
        .get("weight_map")
        .ok_or_else(|| bad("has no weight_map".into()))?;
    let wm: BTreeMap<String, String> = serde_json::from_value(wm.to_value()).map_err(|e| {
        bad(format!(
            "weight_map must map tensor names to file names: {e}"
        ))
    })?;
    let files: BTreeSet<&String> = wm.values().collect();
    for f in &files {
        if f.is_empty() || f.contains('/') || f.contains('\\') || *f == ".." || *f == "." {
            return Err(bad(format!(
                "weight_map names {}, which is not a file name in the model directory",
                quoted(f)
            )));
        }
        if !dir.join(f).exists() {
            return Err(bad(format!(
                "weight_map names shard {}, which does not exist in {}",
                quoted(f),
                dir.display()
            )));
        }
    }
    let mut shards = Vec::new();
    for f in &files {
        let st = SafetensorsFile::open(&dir.join(f))?;
        for t in st.tensors() {
            match wm.get(&t.name) {
                Some(g) if g == *f => {}
                Some(g) => {
                    return Err(bad(format!(
                        "maps tensor {} to {}, but it is in {}",
                        quoted(&t.name),
                        quoted(g),
                        quoted(f)
                    )))
                }
                None => {
                    return Err(bad(format!(
                        "does not list tensor {} of shard {}",
                        quoted(&t.name),
                        quoted(f)
                    )))
                }
            }
        }
        shards.push(((*f).clone(), st));
    }
    for (t, f) in &wm {
        let s = &shards.iter().find(|s| &s.0 == f).expect("opened above").1;
        if s.tensor(t).is_none() {
            return Err(bad(format!(
                "maps tensor {} to shard {}, which does not contain it",
                quoted(t),
                quoted(f)
            )));
        }
    }
    let others = names
        .into_iter()
        .filter(|n| n != index_name && !files.contains(n))
        .collect();
    Ok(Source {
        dir: Some(dir.to_path_buf()),
        index: Some((index_name.to_string(), json)),
        shards,
        others: filter_others(dir, others)?,
    })
}
