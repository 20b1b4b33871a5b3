//! Packed sub-byte storage, in the bit order of safetensors' `F4` / `F6_*`
//! tensors.
//!
//! | dtype | per group | layout |
//! |---|---|---|
//! | float4_e2m1fn, int4, uint4 | 2 values / 1 byte | element 0 in bits 0–3, element 1 in bits 4–7 |
//! | int2, uint2 | 4 values / 1 byte | element `i` in bits `2i … 2i+1` |
//! | float6_e2m3fn, float6_e3m2fn | 4 values / 3 bytes | element `i` in bits `6i … 6i+5` of the little-endian 24-bit group |
//!
//! In every case the elements form one least-significant-bit-first bit
//! stream: element `k` occupies bits `k·w … k·w + w − 1` of the buffer read as
//! a little-endian integer. safetensors stores `F4` as PyTorch's
//! `float4_e2m1fn_x2`, whose first element is the low nibble (the layout of
//! NVIDIA's `__nv_fp4x2_e2m1`); `F6_E2M3` / `F6_E3M2` are the same bit
//! stream with 6-bit elements (safetensors sizes them as `n·6/8` bytes).
//! A trailing partial byte is padded with zero bits.
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::pack;
//! use mldtypes::dtype::DType;
//! let codes = [0x1u8, 0x2, 0x3, 0xf];
//! let mut packed = [0u8; 2];
//! pack::pack(&codes, DType::Float4E2M1FN, &mut packed).unwrap();
//! assert_eq!(packed, [0x21, 0xf3]);
//! ```

use crate::dtype::DType;
use crate::format::Overflow;

use super::dispatch::Path;
use super::engine;
use super::kernels;
use super::{CastError, Element};

/// Bits per element of a packable dtype.
fn width(d: DType) -> Result<u32, CastError> {
    match d {
        DType::Float4E2M1FN | DType::Int4 | DType::UInt4 => Ok(4),
        DType::Int2 | DType::UInt2 => Ok(2),
        DType::Float6E2M3FN | DType::Float6E3M2FN => Ok(6),
        _ => Err(CastError::NotPackable(d)),
    }
}

/// Bytes that `n` packed elements of `dtype` occupy: `ceil(n · bits / 8)`.
///
/// # Errors
///
/// [`CastError::NotPackable`] for dtypes without packed storage.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// assert_eq!(mldtypes::cast::pack::packed_len(DType::Float6E2M3FN, 8).unwrap(), 6);
/// assert_eq!(mldtypes::cast::pack::packed_len(DType::Int4, 3).unwrap(), 2);
/// // No overflow at the top of the range: ceil(usize::MAX / 2).
/// assert_eq!(mldtypes::cast::pack::packed_len(DType::Int4, usize::MAX).unwrap(), usize::MAX / 2 + 1);
/// ```
pub fn packed_len(dtype: DType, n: usize) -> Result<usize, CastError> {
    let w = width(dtype)? as usize;
    // ceil(n·w / 8) without forming n·w, which overflows for n near
    // usize::MAX: whole groups of 8 elements take w bytes each, the rest
    // ceil(r·w / 8). Exact for every n, and never more than n.
    Ok(n / 8 * w + (n % 8 * w).div_ceil(8))
}

/// Elements per packing group, and bytes per group.
fn group(w: u32) -> (usize, usize) {
    match w {
        4 => (2, 1),
        2 => (4, 1),
        _ => (4, 3),
    }
}

fn check(dtype: DType, n: usize, packed: usize) -> Result<u32, CastError> {
    let w = width(dtype)?;
    let want = packed_len(dtype, n)?;
    if packed != want {
        return Err(CastError::PartialElement { dtype, len: packed });
    }
    Ok(w)
}

/// Runs the packing kernel `$f` (`pack` or `unpack`) of width `$w` on the
/// instruction set `$path` (the scalar path uses the portable build).
macro_rules! width_kernel {
    ($f:ident, $path:expr, $w:expr, $src:expr, $dst:expr) => {{
        macro_rules! go {
            ($m:ident) => {
                // SAFETY: `path` was checked available by the caller.
                unsafe {
                    match $w {
                        4 => kernels::$m::$f::<4>($src, $dst),
                        2 => kernels::$m::$f::<2>($src, $dst),
                        _ => kernels::$m::$f::<6>($src, $dst),
                    }
                }
            };
        }
        match $path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => go!(avx2),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => go!(avx512),
            _ => go!(portable),
        }
    }};
}

fn pack_kernel(path: Path, w: u32, src: &[u8], dst: &mut [u8]) {
    width_kernel!(pack, path, w, src, dst)
}

fn unpack_kernel(path: Path, w: u32, src: &[u8], dst: &mut [u8]) {
    width_kernel!(unpack, path, w, src, dst)
}

/// Packs whole groups with the kernel and the tail bit by bit.
fn pack_codes(path: Path, w: u32, src: &[u8], dst: &mut [u8]) {
    let (ge, gb) = group(w);
    let full = src.len() / ge;
    pack_kernel(path, w, &src[..full * ge], &mut dst[..full * gb]);
    let tail = &src[full * ge..];
    if !tail.is_empty() {
        let mut bits = 0u32;
        for (i, c) in tail.iter().enumerate() {
            bits |= ((*c as u32) & ((1 << w) - 1)) << (w as usize * i);
        }
        for (i, d) in dst[full * gb..].iter_mut().enumerate() {
            *d = (bits >> (8 * i)) as u8;
        }
    }
}

fn unpack_codes(path: Path, w: u32, src: &[u8], dst: &mut [u8]) {
    let (ge, gb) = group(w);
    let full = dst.len() / ge;
    unpack_kernel(path, w, &src[..full * gb], &mut dst[..full * ge]);
    let tail = &mut dst[full * ge..];
    if !tail.is_empty() {
        let mut bits = 0u32;
        for (i, b) in src[full * gb..].iter().enumerate() {
            bits |= (*b as u32) << (8 * i);
        }
        for (i, d) in tail.iter_mut().enumerate() {
            *d = ((bits >> (w as usize * i)) & ((1 << w) - 1)) as u8;
        }
    }
}

/// Packs unpacked codes of `dtype` (one per byte, value in the low bits; the
/// high bits are ignored) into `dst`.
///
/// # Errors
///
/// [`CastError::NotPackable`] for other dtypes; [`CastError::PartialElement`]
/// if `dst.len() != packed_len(dtype, src.len())`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::pack;
/// use mldtypes::dtype::DType;
/// let mut out = [0u8; 3];
/// pack::pack(&[1, 2, 3, 0x3f], DType::Float6E2M3FN, &mut out).unwrap();
/// assert_eq!(out, [0x81, 0x30, 0xfc]);
/// ```
pub fn pack(src: &[u8], dtype: DType, dst: &mut [u8]) -> Result<(), CastError> {
    let w = check(dtype, src.len(), dst.len())?;
    pack_codes(super::path(), w, src, dst);
    Ok(())
}

/// Unpacks `dst.len()` codes of `dtype` from `src` (one per byte, value in
/// the low bits, high bits zero).
///
/// # Errors
///
/// [`CastError::NotPackable`] for other dtypes; [`CastError::PartialElement`]
/// if `src.len() != packed_len(dtype, dst.len())`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::pack;
/// use mldtypes::dtype::DType;
/// let mut codes = [0u8; 4];
/// pack::unpack(&[0xe4], DType::UInt2, &mut codes).unwrap();
/// assert_eq!(codes, [0, 1, 2, 3]);
/// ```
pub fn unpack(src: &[u8], dtype: DType, dst: &mut [u8]) -> Result<(), CastError> {
    let w = check(dtype, dst.len(), src.len())?;
    unpack_codes(super::path(), w, src, dst);
    Ok(())
}

/// Elements converted per step of [`pack_from`] / [`unpack_into`] (a whole
/// number of packing groups).
const STEP: usize = 4096;

/// Converts `src` to `dtype` and packs the result into `dst` in one pass
/// (e.g. float32 → packed float4_e2m1fn).
///
/// # Errors
///
/// As [`pack`], and [`CastError::UnsupportedPair`] if `A` does not convert
/// to `dtype`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{pack, Overflow};
/// use mldtypes::dtype::DType;
/// let mut out = [0u8; 2];
/// pack::pack_from(&[1.0f32, -6.0, 0.5, 100.0], DType::Float4E2M1FN, &mut out,
///                 Overflow::NonSaturating).unwrap();
/// assert_eq!(out, [0xf2, 0x71]);
/// ```
pub fn pack_from<A: Element>(
    src: &[A],
    dtype: DType,
    dst: &mut [u8],
    ov: Overflow,
) -> Result<(), CastError> {
    pack_from_on(super::path(), src, dtype, dst, ov)
}

/// [`pack_from`] on a given [`Path`], on the calling thread.
///
/// # Errors
///
/// As [`pack_from`], and [`CastError::PathUnavailable`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{pack, Overflow, Path};
/// use mldtypes::dtype::DType;
/// let mut out = [0u8; 1];
/// pack::pack_from_on(Path::Scalar, &[-1i8, 1, 0, 1], DType::Int2, &mut out,
///                    Overflow::NonSaturating).unwrap();
/// assert_eq!(out, [0b01_00_01_11]);
/// ```
pub fn pack_from_on<A: Element>(
    path: Path,
    src: &[A],
    dtype: DType,
    dst: &mut [u8],
    ov: Overflow,
) -> Result<(), CastError> {
    let w = check(dtype, src.len(), dst.len())?;
    engine::check_pair(A::DTYPE, dtype)?;
    let (ge, gb) = group(w);
    let mut codes = [0u8; STEP];
    for (s, d) in src.chunks(STEP).zip(dst.chunks_mut(STEP / ge * gb)) {
        let c = &mut codes[..s.len()];
        engine::convert_bytes(bytemuck::cast_slice(s), A::DTYPE, c, dtype, ov, path, false)?;
        pack_codes(path, w, c, d);
    }
    Ok(())
}

/// Unpacks `dst.len()` elements of `dtype` from `src` and converts them to
/// `B` in one pass (e.g. packed float4_e2m1fn → float32).
///
/// # Errors
///
/// As [`unpack`], and [`CastError::UnsupportedPair`] if `dtype` does not
/// convert to `B`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::pack;
/// use mldtypes::dtype::DType;
/// let mut out = [0f32; 4];
/// pack::unpack_into(&[0xf2, 0x71], DType::Float4E2M1FN, &mut out).unwrap();
/// assert_eq!(out, [1.0, -6.0, 0.5, 6.0]);
/// ```
pub fn unpack_into<B: Element>(src: &[u8], dtype: DType, dst: &mut [B]) -> Result<(), CastError> {
    unpack_into_on(super::path(), src, dtype, dst)
}

/// [`unpack_into`] on a given [`Path`], on the calling thread.
///
/// # Errors
///
/// As [`unpack_into`], and [`CastError::PathUnavailable`].
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{pack, Path};
/// use mldtypes::dtype::DType;
/// let mut out = [0i32; 2];
/// pack::unpack_into_on(Path::Portable, &[0x8f], DType::Int4, &mut out).unwrap();
/// assert_eq!(out, [-1, -8]);
/// ```
pub fn unpack_into_on<B: Element>(
    path: Path,
    src: &[u8],
    dtype: DType,
    dst: &mut [B],
) -> Result<(), CastError> {
    let w = check(dtype, dst.len(), src.len())?;
    engine::check_pair(dtype, B::DTYPE)?;
    if !path.is_available() {
        return Err(CastError::PathUnavailable(path));
    }
    let (ge, gb) = group(w);
    let mut codes = [0u8; STEP];
    for (s, d) in src.chunks(STEP / ge * gb).zip(dst.chunks_mut(STEP)) {
        let c = &mut codes[..d.len()];
        unpack_codes(path, w, s, c);
        engine::convert_bytes(
            c,
            dtype,
            bytemuck::cast_slice_mut(d),
            B::DTYPE,
            Overflow::NonSaturating,
            path,
            false,
        )?;
    }
    Ok(())
}
