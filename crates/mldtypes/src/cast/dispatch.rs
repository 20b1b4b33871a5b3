//! Runtime choice of the instruction set the kernels run on.

use std::sync::atomic::{AtomicU8, Ordering};

use super::CastError;

/// An implementation of the conversion kernels.
///
/// The vectorised paths run the same branch-free element code compiled for
/// different instruction sets; [`Path::Scalar`] converts one element at a
/// time through the scalar conversions of [`crate::float`] (the reference
/// every other path is tested against).
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{self, Path};
/// assert!(cast::available_paths().contains(&Path::Scalar));
/// assert!(cast::available_paths().contains(&Path::Portable));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Path {
    /// One element at a time through the scalar reference conversions.
    Scalar,
    /// The branch-free kernels compiled for the crate's baseline target
    /// (SSE2 on x86-64), auto-vectorised.
    Portable,
    /// The kernels compiled for AVX2 + FMA + F16C (x86-64 only).
    Avx2,
    /// The kernels compiled for AVX-512 F/BW/VL/DQ/VBMI (x86-64 only).
    Avx512,
}

impl Path {
    /// Every path this build knows, slowest first.
    pub const ALL: &'static [Path] = &[Path::Scalar, Path::Portable, Path::Avx2, Path::Avx512];

    /// A short lowercase name (`"scalar"`, `"portable"`, `"avx2"`, `"avx512"`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::cast::Path::Avx2.name(), "avx2");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Path::Scalar => "scalar",
            Path::Portable => "portable",
            Path::Avx2 => "avx2",
            Path::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path (detected once, then cached).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(mldtypes::cast::Path::Portable.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        match self {
            Path::Scalar | Path::Portable => true,
            Path::Avx2 => detected() >= Path::Avx2,
            Path::Avx512 => detected() >= Path::Avx512,
        }
    }

    fn to_u8(self) -> u8 {
        self as u8 + 1
    }

    fn from_u8(x: u8) -> Option<Path> {
        Path::ALL.get((x as usize).checked_sub(1)?).copied()
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// 0: not detected yet; otherwise `Path::to_u8` of the best path.
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// 0: automatic (the detected path); otherwise a forced path.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// The fastest path this CPU supports, detected on first use.
fn detected() -> Path {
    if let Some(p) = Path::from_u8(DETECTED.load(Ordering::Relaxed)) {
        return p;
    }
    let p = detect();
    DETECTED.store(p.to_u8(), Ordering::Relaxed);
    p
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Path {
    if is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512vbmi")
        && has_avx2()
    {
        Path::Avx512
    } else if has_avx2() {
        Path::Avx2
    } else {
        Path::Portable
    }
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("bmi2")
        && is_x86_feature_detected!("popcnt")
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Path {
    Path::Portable
}

/// Every path available on this CPU, slowest first.
///
/// # Examples
///
/// ```
/// let paths = mldtypes::cast::available_paths();
/// assert_eq!(paths[0], mldtypes::cast::Path::Scalar);
/// ```
pub fn available_paths() -> Vec<Path> {
    Path::ALL
        .iter()
        .copied()
        .filter(|p| p.is_available())
        .collect()
}

/// The path conversions currently use: the forced one if
/// [`set_path`] was called, otherwise the fastest available.
///
/// # Examples
///
/// ```
/// assert!(mldtypes::cast::path().is_available());
/// ```
pub fn path() -> Path {
    Path::from_u8(FORCED.load(Ordering::Relaxed)).unwrap_or_else(detected)
}

/// Forces every later conversion (process-wide) onto `path`, or back to
/// automatic selection with `None`.
///
/// # Errors
///
/// [`CastError::PathUnavailable`] if this CPU cannot run `path`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{self, Path};
/// cast::set_path(Some(Path::Portable)).unwrap();
/// assert_eq!(cast::path(), Path::Portable);
/// cast::set_path(None).unwrap();
/// ```
pub fn set_path(path: Option<Path>) -> Result<(), CastError> {
    match path {
        None => FORCED.store(0, Ordering::Relaxed),
        Some(p) if p.is_available() => FORCED.store(p.to_u8(), Ordering::Relaxed),
        Some(p) => return Err(CastError::PathUnavailable(p)),
    }
    Ok(())
}
