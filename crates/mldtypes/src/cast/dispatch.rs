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

/// Whether the CPU's vendor string (CPUID leaf 0) is "GenuineIntel"; false
/// off x86-64. Kernels whose fastest form differs between Intel's and AMD's
/// cores (gathers, non-temporal stores) choose by it.
///
/// # Examples
///
/// ```
/// let intel = mldtypes::cast::cpu_is_intel();
/// assert_eq!(intel, mldtypes::cast::cpu_is_intel());
/// ```
pub fn cpu_is_intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *INTEL.get_or_init(|| {
            let r = std::arch::x86_64::__cpuid(0);
            (r.ebx, r.edx, r.ecx) == (0x756e_6547, 0x4965_6e69, 0x6c65_746e)
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// 0: by the CPU; 1: tables; 2: arithmetic (see [`set_gather_tables`]).
static GATHER_TABLES: AtomicU8 = AtomicU8::new(0);

/// Whether the AVX2 rounding kernels from float32 into one-byte signed
/// formats look the codes up in tables with gathers (the default on Intel,
/// whose gathers are fast) or compute them with integer arithmetic (the
/// default elsewhere: AMD's Zen 4 gathers eight lanes several times
/// slower). Both give the scalar path's bits; see [`set_gather_tables`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast;
/// assert_eq!(cast::gather_tables(), cast::cpu_is_intel());
/// ```
pub fn gather_tables() -> bool {
    match GATHER_TABLES.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => cpu_is_intel(),
    }
}

/// Forces the form [`gather_tables`] reports for every later conversion
/// (process-wide): `Some(true)` the tables, `Some(false)` the arithmetic,
/// `None` the CPU's default. For tests and benchmarks of both forms.
///
/// # Examples
///
/// ```
/// use mldtypes::cast;
/// cast::set_gather_tables(Some(false));
/// assert!(!cast::gather_tables());
/// cast::set_gather_tables(None);
/// ```
pub fn set_gather_tables(tables: Option<bool>) {
    let v = match tables {
        None => 0,
        Some(true) => 1,
        Some(false) => 2,
    };
    GATHER_TABLES.store(v, Ordering::Relaxed);
}

/// Whether the FPU forms are allowed (see [`set_fpu_forms`]).
static FPU_FORMS: AtomicU8 = AtomicU8::new(1);

/// Whether the AVX2 rounding kernels from float32 into one-byte signed
/// formats may take their FPU forms, which convert subnormal targets (and,
/// under the stochastic modes with fewer random bits than a normal target
/// drops, everything) with the FPU's float → integer conversions: they run
/// where the calling thread's MXCSR rounds to nearest with DAZ clear (the
/// default environment); elsewhere, or after `set_fpu_forms(false)`
/// (process-wide), the integer forms run. Both give the scalar path's bits.
///
/// # Examples
///
/// ```
/// use mldtypes::cast;
/// cast::set_fpu_forms(false);
/// assert!(!cast::fpu_forms());
/// cast::set_fpu_forms(true);
/// ```
pub fn fpu_forms() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        FPU_FORMS.load(Ordering::Relaxed) != 0 && super::hw::fpu_rounds_to_nearest()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Allows (`true`, the default) or forbids the FPU forms of [`fpu_forms`]
/// for every later conversion (process-wide). For tests and benchmarks of
/// both forms.
///
/// # Examples
///
/// ```
/// use mldtypes::cast;
/// cast::set_fpu_forms(false);
/// assert!(!cast::fpu_forms());
/// cast::set_fpu_forms(true);
/// ```
pub fn set_fpu_forms(allowed: bool) {
    FPU_FORMS.store(allowed as u8, Ordering::Relaxed);
}
