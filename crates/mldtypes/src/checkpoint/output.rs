//! Atomic output: everything is written beside the destination and renamed
//! into place at the end, so a failure at any point leaves nothing behind.
//!
//! The temporary is one file or one directory in the destination's
//! directory, named `.NAME.XXXXXX.mldtypes-partial`, and removed on every
//! failure that can be caught (an error, a panic unwinding). A destination
//! that is a symlink, a device or anything else that is not a regular file
//! (a directory, for a directory output) is refused rather than replaced, and
//! so is an input, unless `overwrite` is set.

use std::fs;
use std::path::{Path, PathBuf};

use super::Error;

/// The suffix of every temporary this module creates.
pub const PARTIAL_SUFFIX: &str = ".mldtypes-partial";

/// The staging area of one output.
pub(crate) enum Staging {
    File {
        tmp: tempfile::NamedTempFile,
        dest: PathBuf,
    },
    Dir {
        tmp: tempfile::TempDir,
        dest: PathBuf,
    },
}

fn parent_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

fn prefix_of(dest: &Path) -> String {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    // Keep the temporary's name short enough for any filesystem.
    let name: String = name.chars().take(100).collect();
    format!(".{name}.")
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

fn kind_of(m: &fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a device, socket or pipe"
    }
}

/// The tempfile crate wraps OS errors to add the path, which hides their
/// errno; this gives it back (from the error kind) so callers (Python's
/// OSError subclasses) see it.
fn with_errno(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    #[cfg(unix)]
    {
        use std::io::ErrorKind as K;
        let errno = match e.kind() {
            K::NotFound => libc::ENOENT,
            K::PermissionDenied => libc::EACCES,
            K::AlreadyExists => libc::EEXIST,
            K::NotADirectory => libc::ENOTDIR,
            K::IsADirectory => libc::EISDIR,
            K::ReadOnlyFilesystem => libc::EROFS,
            K::StorageFull => libc::ENOSPC,
            K::QuotaExceeded => libc::EDQUOT,
            K::FileTooLarge => libc::EFBIG,
            K::InvalidFilename => libc::ENAMETOOLONG,
            _ => return e,
        };
        std::io::Error::from_raw_os_error(errno)
    }
    #[cfg(not(unix))]
    e
}

/// A destination that exists and is not replaced (a symlink, a device, …):
/// `AlreadyExists`, which Python raises as FileExistsError.
fn refuse(dest: &Path, m: String) -> Error {
    Error::write_io(
        dest,
        std::io::Error::new(std::io::ErrorKind::AlreadyExists, m),
    )
}

impl Staging {
    /// Stages a single-file output. `inputs` are the files read (the
    /// destination may be one of them only with `overwrite`); `tag`, when
    /// given, goes into the temporary's name after the destination's
    /// (`.NAME.TAG.XXXXXX.mldtypes-partial`), so it can be recognized later.
    pub fn file(
        dest: &Path,
        inputs: &[&Path],
        overwrite: bool,
        tag: Option<&str>,
    ) -> Result<Staging, Error> {
        if let Ok(m) = fs::symlink_metadata(dest) {
            if !m.file_type().is_file() {
                return Err(refuse(
                    dest,
                    format!("is {}; refusing to replace it", kind_of(&m)),
                ));
            }
            for i in inputs {
                if fs::metadata(i).is_ok_and(|im| same_file(&im, &m)) && !overwrite {
                    return Err(Error::usage(format!(
                        "the output {} is the input; pass --overwrite to replace it",
                        dest.display()
                    )));
                }
            }
        }
        let mut b = tempfile::Builder::new();
        let mut prefix = prefix_of(dest);
        if let Some(t) = tag {
            prefix = format!("{prefix}{t}.");
        }
        b.prefix(&prefix).suffix(PARTIAL_SUFFIX);
        // Created as an ordinary new file is: 0666 less the umask.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(fs::Permissions::from_mode(0o666));
        }
        let tmp = b
            .tempfile_in(parent_of(dest))
            .map_err(|e| Error::write_io(dest, with_errno(e)))?;
        Ok(Staging::File {
            tmp,
            dest: dest.to_path_buf(),
        })
    }

    /// Stages a directory output; `input_dir` is the model directory read.
    pub fn dir(dest: &Path, input_dir: &Path, overwrite: bool) -> Result<Staging, Error> {
        if let Ok(m) = fs::symlink_metadata(dest) {
            if !m.file_type().is_dir() {
                return Err(refuse(
                    dest,
                    format!(
                        "is {}, not a directory; refusing to replace it",
                        kind_of(&m)
                    ),
                ));
            }
            let is_input = fs::metadata(input_dir).is_ok_and(|im| same_file(&im, &m));
            let empty = fs::read_dir(dest).is_ok_and(|mut d| d.next().is_none());
            if (is_input || !empty) && !overwrite {
                return Err(Error::usage(format!(
                    "the output directory {} {}; pass --overwrite to replace it",
                    dest.display(),
                    if is_input {
                        "is the input"
                    } else {
                        "is not empty"
                    }
                )));
            }
        }
        let mut b = tempfile::Builder::new();
        let prefix = prefix_of(dest);
        b.prefix(&prefix).suffix(PARTIAL_SUFFIX);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(fs::Permissions::from_mode(0o777));
        }
        let tmp = b
            .tempdir_in(parent_of(dest))
            .map_err(|e| Error::write_io(dest, with_errno(e)))?;
        Ok(Staging::Dir {
            tmp,
            dest: dest.to_path_buf(),
        })
    }

    /// Opens (creating) the staged file `name` (ignored for a file output)
    /// for writing.
    pub fn create(&self, name: &str) -> Result<(PathBuf, fs::File), Error> {
        match self {
            Staging::File { tmp, dest } => {
                let f = tmp.reopen().map_err(|e| Error::write_io(dest, e))?;
                Ok((tmp.path().to_path_buf(), f))
            }
            Staging::Dir { tmp, dest } => {
                let p = tmp.path().join(name);
                let f = fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&p)
                    .map_err(|e| Error::write_io(&dest.join(name), e))?;
                Ok((p, f))
            }
        }
    }

    /// The staged path of `name` in a directory output.
    pub fn path_of(&self, name: &str) -> PathBuf {
        match self {
            Staging::File { tmp, .. } => tmp.path().to_path_buf(),
            Staging::Dir { tmp, .. } => tmp.path().join(name),
        }
    }

    /// Renames the staged output into place (syncing it first with `fsync`).
    pub fn commit(self, fsync: bool) -> Result<(), Error> {
        match self {
            Staging::File { tmp, dest } => {
                let err = |e: std::io::Error| Error::write_io(&dest, e);
                if let Ok(m) = fs::metadata(&dest) {
                    // Replacing a file keeps its permissions.
                    fs::set_permissions(tmp.path(), m.permissions()).map_err(err)?;
                }
                if fsync {
                    tmp.as_file().sync_all().map_err(err)?;
                }
                tmp.persist(&dest).map_err(|e| err(e.error))?;
                if fsync {
                    sync_dir(parent_of(&dest)).map_err(err)?;
                }
                Ok(())
            }
            Staging::Dir { tmp, dest } => {
                let err = |e: std::io::Error| Error::write_io(&dest, e);
                if fsync {
                    for e in fs::read_dir(tmp.path()).map_err(err)? {
                        let p = e.map_err(err)?.path();
                        if p.is_file() {
                            fs::File::open(&p).and_then(|f| f.sync_all()).map_err(err)?;
                        }
                    }
                    sync_dir(tmp.path()).map_err(err)?;
                }
                let exists = fs::symlink_metadata(&dest).is_ok();
                let empty = fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
                if exists && !empty {
                    // Swap: the old directory moves aside, the new one in,
                    // and the old one is removed.
                    let old = tempfile::Builder::new()
                        .prefix(&prefix_of(&dest))
                        .suffix(".mldtypes-old")
                        .tempdir_in(parent_of(&dest))
                        .map_err(err)?;
                    let old_path = old.path().join("old");
                    fs::rename(&dest, &old_path).map_err(err)?;
                    if let Err(e) = fs::rename(tmp.path(), &dest) {
                        let _ = fs::rename(&old_path, &dest);
                        return Err(err(e));
                    }
                    let _ = tmp.keep();
                    drop(old);
                } else {
                    fs::rename(tmp.path(), &dest).map_err(err)?;
                    let _ = tmp.keep();
                }
                if fsync {
                    sync_dir(parent_of(&dest)).map_err(err)?;
                }
                Ok(())
            }
        }
    }
}

fn sync_dir(d: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(d)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = d;
        Ok(())
    }
}

/// Copies `from` (a file or a directory, following symbolic links) to `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let m = fs::metadata(from)?;
    if m.is_dir() {
        fs::create_dir(to)?;
        let mut entries: Vec<_> = fs::read_dir(from)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
        Ok(())
    } else {
        fs::copy(from, to).map(|_| ())
    }
}
