//! Routing of a dtype pair to kernels, chunking, alignment, threading and
//! non-temporal stores for large outputs.

use bytemuck::Pod;

use crate::dtype::{DType, Kind};
use crate::format::{Format, Overflow, BFLOAT16, FLOAT16};

use super::codec::{self, Plan};
use super::dispatch::Path;
use super::kernels::{self, Code};
use super::scalar::{self, with_marker};
use super::CastError;

/// Elements per inner chunk (bounce buffers live on the stack).
pub(crate) const CHUNK: usize = 2048;

/// Asks for the cache lines of the `n` elements from `x[at]` (hints only:
/// they may lie past the end of `x`, since a prefetch never faults and
/// reads nothing into the program).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &[T], at: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = x.as_ptr().wrapping_add(at).cast::<i8>();
        for line in (0..n * std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch hint dereferences nothing.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(line),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, at, n);
}

/// Inputs at least this long are split across threads (feature `rayon`).
#[cfg(feature = "rayon")]
pub(crate) const PAR_THRESHOLD: usize = 1 << 18;
/// Whether a conversion of `n` elements is split across rayon's pool:
/// asked for, long enough, and a pool of more than one thread (with one,
/// splitting would only hand the work to the pool's thread in pieces).
#[cfg(feature = "rayon")]
pub(crate) fn split(parallel: bool, n: usize) -> bool {
    parallel && n >= PAR_THRESHOLD && rayon::current_num_threads() > 1
}

/// Elements per parallel task.
#[cfg(feature = "rayon")]
pub(crate) const PAR_CHUNK: usize = 1 << 16;
/// Conversions that move at least this many bytes (input and output
/// together: more than the last-level cache of most machines holds) between
/// element types within a factor of two of each other in size (float32 ↔
/// bfloat16 / float16, float32 ↔ float64) are written with non-temporal
/// stores on the vector paths. Such an output does not stay in the caches
/// anyway, and streaming it saves the read of every destination line before
/// it is overwritten: a quarter of the memory traffic of float32 →
/// bfloat16, a third of bfloat16 → float32. Measured (`tools/bench_vs_torch.py`,
/// 1M–16M elements) slower below this size, where the data stays in the
/// last-level cache, and no faster between 1-byte formats and float32.
pub(crate) const STREAM_THRESHOLD: usize = 40 << 20;
/// Output bytes converted into a cache-resident buffer before being
/// streamed out.
const STREAM_BLOCK: usize = 8 << 10;

/// An integer dtype: width in bits, signedness, whether it is `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntTy {
    bits: u32,
    signed: bool,
    boolean: bool,
}

impl IntTy {
    fn sub_byte(self) -> bool {
        self.bits < 8
    }
}

/// How the kernels see a dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cat {
    F32,
    F64,
    /// A float format stored one code per byte.
    Code8(Format),
    /// bfloat16 / float16.
    Code16(Format),
    Int(IntTy),
}

pub(crate) fn category(d: DType) -> Option<Cat> {
    Some(match d {
        DType::Float32 => Cat::F32,
        DType::Float64 => Cat::F64,
        DType::BFloat16 | DType::Float16 => Cat::Code16(d.format()?),
        DType::P3109(m) if m.k() > 8 => Cat::Code16(m.format()),
        DType::Bool => Cat::Int(IntTy {
            bits: 8,
            signed: false,
            boolean: true,
        }),
        _ => match d.kind() {
            Kind::Float => Cat::Code8(d.format()?),
            Kind::Signed | Kind::Unsigned => Cat::Int(IntTy {
                bits: d.bits(),
                signed: d.kind() == Kind::Signed,
                boolean: false,
            }),
            _ => return None,
        },
    })
}

/// Whether the pair is supported, as an error if not.
pub(crate) fn check_pair(from: DType, to: DType) -> Result<(Cat, Cat), CastError> {
    let unsupported = || CastError::UnsupportedPair { from, to };
    let a = category(from).ok_or_else(unsupported)?;
    let b = category(to).ok_or_else(unsupported)?;
    match (a, b) {
        // Integers convert among themselves; integers and floats meet only
        // through the sub-byte integers and bool.
        (Cat::Int(i), Cat::Int(_)) => {
            let _ = i;
        }
        (Cat::Int(i), _) | (_, Cat::Int(i)) if !(i.sub_byte() || i.boolean) => {
            return Err(unsupported())
        }
        _ => {}
    }
    Ok((a, b))
}

fn sat(ov: Overflow) -> bool {
    ov == Overflow::Saturating
}

// ---------------------------------------------------------------------------
// Typed views over byte slices, bouncing through aligned buffers if needed.

pub(crate) fn with_src<T: Pod, R>(b: &[u8], f: impl FnOnce(&[T]) -> R) -> R {
    match bytemuck::try_cast_slice::<u8, T>(b) {
        Ok(s) => f(s),
        Err(_) => {
            let n = b.len() / std::mem::size_of::<T>();
            let mut buf = [T::zeroed(); CHUNK];
            bytemuck::cast_slice_mut::<T, u8>(&mut buf[..n]).copy_from_slice(b);
            f(&buf[..n])
        }
    }
}

pub(crate) fn with_dst<T: Pod>(b: &mut [u8], f: impl FnOnce(&mut [T])) {
    match bytemuck::try_cast_slice_mut::<u8, T>(b) {
        Ok(s) => f(s),
        Err(_) => {
            let n = b.len() / std::mem::size_of::<T>();
            let mut buf = [T::zeroed(); CHUNK];
            f(&mut buf[..n]);
            b.copy_from_slice(bytemuck::cast_slice(&buf[..n]));
        }
    }
}

// ---------------------------------------------------------------------------
// Kernel selection per path.

/// Picks the kernel module for `path` (portable for the scalar path, which
/// never reaches these kernels).
macro_rules! on_path {
    ($path:expr, |$m:ident| $e:expr) => {
        match $path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => {
                use kernels::avx2 as $m;
                $e
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                use kernels::avx512 as $m;
                $e
            }
            _ => {
                use kernels::portable as $m;
                $e
            }
        }
    };
}

type EncF32<C> = unsafe fn(&[f32], &mut [C]);
type EncF64<C> = unsafe fn(&[f64], &mut [C]);
type DecF32<C> = unsafe fn(&[C], &mut [f32]);

pub(crate) fn pick_enc_f32<C: Code>(path: Path, fmt: &Format, sat: bool) -> EncF32<C> {
    #[cfg(target_arch = "x86_64")]
    if *fmt == FLOAT16 && !sat {
        // The CPU's own float16 conversion, NaNs fixed up (see `hw`).
        match path {
            Path::Avx2 => return f16_enc_avx2::<C>,
            Path::Avx512 => return f16_enc_avx512::<C>,
            _ => {}
        }
    }
    #[cfg(target_arch = "x86_64")]
    if *fmt == BFLOAT16 && !sat {
        // Explicit narrowing, NaNs re-encoded rarely (see `hw`).
        match path {
            Path::Avx2 => return bf16_enc_avx2::<C>,
            Path::Avx512 => return bf16_enc_avx512::<C>,
            _ => {}
        }
    }

    with_marker!(fmt, |M| on_path!(path, |m| if sat {
        m::enc_f32::<M, C, true> as EncF32<C>
    } else {
        m::enc_f32::<M, C, false>
    }))
}

pub(crate) fn pick_enc_f64<C: Code>(path: Path, fmt: &Format, sat: bool) -> EncF64<C> {
    with_marker!(fmt, |M| on_path!(path, |m| if sat {
        m::enc_f64::<M, C, true> as EncF64<C>
    } else {
        m::enc_f64::<M, C, false>
    }))
}

pub(crate) fn pick_dec_f32<C: Code>(path: Path, fmt: &Format) -> DecF32<C> {
    #[cfg(target_arch = "x86_64")]
    if *fmt == FLOAT16 {
        match path {
            Path::Avx2 => return f16_dec_avx2::<C>,
            Path::Avx512 => return f16_dec_avx512::<C>,
            _ => {}
        }
    }
    with_marker!(fmt, |M| on_path!(path, |m| m::dec_f32::<M, C> as DecF32<C>))
}

// float16 / bfloat16 kernels of `hw`, typed as the generic kernels (`C` is
// `u16` wherever 16-bit codes are stored).
// SAFETY (all six): only picked for a path whose features the CPU has.
#[cfg(target_arch = "x86_64")]
unsafe fn f16_enc_avx2<C: Code>(src: &[f32], dst: &mut [C]) {
    unsafe { super::hw::f32_to_f16_avx2(src, bytemuck::cast_slice_mut(dst)) }
}
#[cfg(target_arch = "x86_64")]
unsafe fn f16_enc_avx512<C: Code>(src: &[f32], dst: &mut [C]) {
    unsafe { super::hw::f32_to_f16_avx512(src, bytemuck::cast_slice_mut(dst)) }
}
#[cfg(target_arch = "x86_64")]
unsafe fn bf16_enc_avx2<C: Code>(src: &[f32], dst: &mut [C]) {
    unsafe { super::hw::f32_to_bf16_avx2(src, bytemuck::cast_slice_mut(dst)) }
}
#[cfg(target_arch = "x86_64")]
unsafe fn bf16_enc_avx512<C: Code>(src: &[f32], dst: &mut [C]) {
    unsafe { super::hw::f32_to_bf16_avx512(src, bytemuck::cast_slice_mut(dst)) }
}
#[cfg(target_arch = "x86_64")]
unsafe fn f16_dec_avx2<C: Code>(src: &[C], dst: &mut [f32]) {
    unsafe { super::hw::f16_to_f32_avx2(bytemuck::cast_slice(src), dst) }
}
#[cfg(target_arch = "x86_64")]
unsafe fn f16_dec_avx512<C: Code>(src: &[C], dst: &mut [f32]) {
    unsafe { super::hw::f16_to_f32_avx512(bytemuck::cast_slice(src), dst) }
}

// ---------------------------------------------------------------------------
// The conversion of one chunk (at most CHUNK elements).

/// Converts `n` elements from `src` to `dst` (whole elements, at most
/// [`CHUNK`]) on a vector path.
fn chunk_vector(path: Path, a: Cat, b: Cat, src: &[u8], dst: &mut [u8], ov: Overflow) {
    let s = sat(ov);
    // SAFETY (every `unsafe` call below): the kernels were picked for
    // `path`, which `Path::is_available` confirmed this CPU runs before any
    // conversion started (see `convert_bytes`).
    match (a, b) {
        (Cat::Int(_), _) | (_, Cat::Int(_)) => chunk_int(a, b, src, dst, ov),
        (Cat::F32, Cat::F32) | (Cat::F64, Cat::F64) => dst.copy_from_slice(src),
        // A format to itself keeps every code (NaN payloads included),
        // except that saturation turns infinities into ±max, and the unused
        // high bits of float6 / float4 codes are cleared.
        (Cat::Code8(f), Cat::Code8(g)) | (Cat::Code16(f), Cat::Code16(g))
            if f == g && f.bits() % 8 == 0 && (!s || !f.has_infinity()) =>
        {
            dst.copy_from_slice(src)
        }
        (Cat::F32, Cat::F64) => {
            let k = on_path!(path, |m| m::f32_to_f64 as unsafe fn(&[f32], &mut [f64]));
            with_src::<f32, _>(src, |x| with_dst::<f64>(dst, |d| unsafe { k(x, d) }));
        }
        (Cat::F64, Cat::F32) => {
            let k = on_path!(path, |m| m::f64_to_f32 as unsafe fn(&[f64], &mut [f32]));
            with_src::<f64, _>(src, |x| with_dst::<f32>(dst, |d| unsafe { k(x, d) }));
        }
        (Cat::F32, Cat::Code8(g)) => {
            let k = pick_enc_f32::<u8>(path, &g, s);
            with_src::<f32, _>(src, |x| unsafe { k(x, dst) });
        }
        (Cat::F32, Cat::Code16(g)) => {
            let k = pick_enc_f32::<u16>(path, &g, s);
            with_src::<f32, _>(src, |x| with_dst::<u16>(dst, |d| unsafe { k(x, d) }));
        }
        (Cat::F64, Cat::Code8(g)) => {
            let k = pick_enc_f64::<u8>(path, &g, s);
            with_src::<f64, _>(src, |x| unsafe { k(x, dst) });
        }
        (Cat::F64, Cat::Code16(g)) => {
            let k = pick_enc_f64::<u16>(path, &g, s);
            with_src::<f64, _>(src, |x| with_dst::<u16>(dst, |d| unsafe { k(x, d) }));
        }
        (Cat::Code8(f), Cat::F32) => {
            let k = pick_dec_f32::<u8>(path, &f);
            with_dst::<f32>(dst, |d| unsafe { k(src, d) });
        }
        (Cat::Code16(f), Cat::F32) => {
            let k = pick_dec_f32::<u16>(path, &f);
            with_src::<u16, _>(src, |x| with_dst::<f32>(dst, |d| unsafe { k(x, d) }));
        }
        (Cat::Code8(g), Cat::Code8(h)) => {
            let t = codec::table8(&g, &h, ov);
            for (d, c) in dst.iter_mut().zip(src) {
                *d = t[*c as usize];
            }
        }
        (Cat::Code8(_) | Cat::Code16(_), _) => {
            // Two stages through float32: the decode is exact, so the result
            // is rounded once.
            let mut tmp = [0f32; CHUNK];
            let n = src.len() / size_of_cat(a);
            let tmp = &mut tmp[..n];
            match a {
                Cat::Code8(f) => unsafe { pick_dec_f32::<u8>(path, &f)(src, tmp) },
                Cat::Code16(f) => {
                    let k = pick_dec_f32::<u16>(path, &f);
                    with_src::<u16, _>(src, |x| unsafe { k(x, tmp) })
                }
                _ => unreachable!(),
            }
            if b == Cat::Code16(FLOAT16) {
                // Between formats NaN payloads are dropped (the quiet NaN
                // with the source's sign, `0x7e00`/`0xfe00`), although the
                // float16 encoder keeps a float32 payload.
                for v in tmp.iter_mut() {
                    let q = f32::from_bits((v.to_bits() & 0x8000_0000) | 0x7fc0_0000);
                    *v = if v.is_nan() { q } else { *v };
                }
            }
            let tmp = &*tmp;
            match b {
                Cat::F64 if a == Cat::Code16(FLOAT16) => {
                    // NumPy widens float16 NaNs bit by bit: a signalling NaN
                    // stays signalling (hardware float32 → float64 would
                    // set the quiet bit).
                    with_dst::<f64>(dst, |d| {
                        for (y, x) in d.iter_mut().zip(tmp) {
                            let b = x.to_bits() as u64;
                            let nan =
                                ((b >> 31) << 63) | 0x7ff0_0000_0000_0000 | ((b & 0x7f_ffff) << 29);
                            *y = if x.is_nan() {
                                f64::from_bits(nan)
                            } else {
                                *x as f64
                            };
                        }
                    });
                }
                Cat::F64 => {
                    let k = on_path!(path, |m| m::f32_to_f64 as unsafe fn(&[f32], &mut [f64]));
                    with_dst::<f64>(dst, |d| unsafe { k(tmp, d) });
                }
                Cat::Code8(g) => unsafe { pick_enc_f32::<u8>(path, &g, s)(tmp, dst) },
                Cat::Code16(g) => {
                    let k = pick_enc_f32::<u16>(path, &g, s);
                    with_dst::<u16>(dst, |d| unsafe { k(tmp, d) });
                }
                _ => unreachable!("integer pairs are handled first"),
            }
        }
    }
}

/// [`chunk_vector`] for pairs with a format only its descriptor describes
/// (the IEEE P3109 members): the run-time codec's kernels.
fn chunk_descriptor(path: Path, a: Cat, b: Cat, src: &[u8], dst: &mut [u8], ov: Overflow) {
    let s = sat(ov);
    match (a, b) {
        (Cat::Int(_), _) | (_, Cat::Int(_)) => chunk_int(a, b, src, dst, ov),
        (Cat::F32, Cat::Code8(g)) => {
            let p = Plan::new(&g);
            with_src::<f32, _>(src, |x| p.encode_f32::<u8>(path, x, dst, s));
        }
        (Cat::F32, Cat::Code16(g)) => {
            let p = Plan::new(&g);
            with_src::<f32, _>(src, |x| {
                with_dst::<u16>(dst, |d| p.encode_f32(path, x, d, s))
            });
        }
        (Cat::F64, Cat::Code8(g)) => {
            let p = Plan::new(&g);
            with_src::<f64, _>(src, |x| p.encode_f64::<u8>(path, x, dst, s));
        }
        (Cat::F64, Cat::Code16(g)) => {
            let p = Plan::new(&g);
            with_src::<f64, _>(src, |x| {
                with_dst::<u16>(dst, |d| p.encode_f64(path, x, d, s))
            });
        }
        (Cat::Code8(f), Cat::F32) => {
            let p = Plan::new(&f);
            with_dst::<f32>(dst, |d| p.decode_f32::<u8>(path, src, d));
        }
        (Cat::Code16(f), Cat::F32) => {
            let p = Plan::new(&f);
            with_src::<u16, _>(src, |x| with_dst::<f32>(dst, |d| p.decode_f32(path, x, d)));
        }
        (Cat::Code8(f), Cat::F64) => {
            let p = Plan::new(&f);
            with_dst::<f64>(dst, |d| decode_f64_via(path, &p, src, d));
        }
        (Cat::Code16(f), Cat::F64) => {
            let p = Plan::new(&f);
            with_src::<u16, _>(src, |x| {
                with_dst::<f64>(dst, |d| decode_f64_via(path, &p, x, d))
            });
        }
        (Cat::Code8(f), Cat::Code8(g)) => {
            codec::convert_codes::<u8, u8>(path, &Plan::new(&f), &Plan::new(&g), src, dst, ov)
        }
        (Cat::Code8(f), Cat::Code16(g)) => with_dst::<u16>(dst, |d| {
            codec::convert_codes(path, &Plan::new(&f), &Plan::new(&g), src, d, ov)
        }),
        (Cat::Code16(f), Cat::Code8(g)) => with_src::<u16, _>(src, |x| {
            codec::convert_codes(path, &Plan::new(&f), &Plan::new(&g), x, dst, ov)
        }),
        (Cat::Code16(f), Cat::Code16(g)) => with_src::<u16, _>(src, |x| {
            with_dst::<u16>(dst, |d| {
                codec::convert_codes(path, &Plan::new(&f), &Plan::new(&g), x, d, ov)
            })
        }),
        _ => unreachable!("float32/float64 pairs have no descriptor-only format"),
    }
}

/// Codes → float64: directly where the values reach beyond float32, else
/// through the exact float32 value (at most [`CHUNK`] elements).
fn decode_f64_via<C: Code>(path: Path, p: &Plan, src: &[C], dst: &mut [f64]) {
    if p.decode_f64(path, src, dst) {
        return;
    }
    let mut tmp = [0f32; CHUNK];
    let tmp = &mut tmp[..src.len()];
    p.decode_f32(path, src, tmp);
    for ((y, x), c) in dst.iter_mut().zip(tmp.iter()).zip(src) {
        *y = if x.is_nan() {
            scalar::decode_f64(&p.fmt, c.to_u32())
        } else {
            *x as f64
        };
    }
}

/// The scalar path: one element at a time through the reference conversions.
fn chunk_scalar(a: Cat, b: Cat, src: &[u8], dst: &mut [u8], ov: Overflow) {
    if matches!(a, Cat::Int(_)) || matches!(b, Cat::Int(_)) {
        return chunk_int(a, b, src, dst, ov);
    }
    let (sa, sb) = (size_of_cat(a), size_of_cat(b));
    for (x, y) in src.chunks_exact(sa).zip(dst.chunks_exact_mut(sb)) {
        let raw = read_le(x);
        let out: u64 = match (a, b) {
            (Cat::F32, Cat::F32) | (Cat::F64, Cat::F64) => raw,
            (Cat::F32, Cat::F64) => (f32::from_bits(raw as u32) as f64).to_bits(),
            (Cat::F64, Cat::F32) => (f64::from_bits(raw) as f32).to_bits() as u64,
            (Cat::F32, Cat::Code8(g) | Cat::Code16(g)) => {
                scalar::encode_f32(&g, f32::from_bits(raw as u32), ov) as u64
            }
            (Cat::F64, Cat::Code8(g) | Cat::Code16(g)) => {
                scalar::encode_f64(&g, f64::from_bits(raw), ov) as u64
            }
            (Cat::Code8(f) | Cat::Code16(f), Cat::F32) => {
                scalar::decode_f32(&f, raw as u32).to_bits() as u64
            }
            (Cat::Code8(f) | Cat::Code16(f), Cat::F64) => {
                scalar::decode_f64(&f, raw as u32).to_bits()
            }
            (Cat::Code8(f) | Cat::Code16(f), Cat::Code8(g) | Cat::Code16(g)) => {
                scalar::convert(&f, &g, raw as u32, ov) as u64
            }
            _ => unreachable!("integer pairs handled above"),
        };
        y.copy_from_slice(&out.to_le_bytes()[..sb]);
    }
}

/// Whether [`chunk_vector`] can convert `src` into `dst` in one call of any
/// length: a single kernel (no float32 stage between two formats, no
/// integers) over buffers aligned for their element types (no bounce
/// buffers).
fn single_pass(a: Cat, b: Cat, src: &[u8], dst: &mut [u8]) -> bool {
    let one_kernel = match (a, b) {
        (Cat::Int(_), _) | (_, Cat::Int(_)) => false,
        (Cat::F32 | Cat::F64, _) | (_, Cat::F32) => true,
        (Cat::Code8(f), Cat::Code8(g)) => !(f.bits() > 8 || g.bits() > 8),
        _ => false,
    };
    let aligned = |p: *const u8, c: Cat| (p as usize).is_multiple_of(size_of_cat(c));
    one_kernel && aligned(src.as_ptr(), a) && aligned(dst.as_ptr(), b)
}

fn size_of_cat(c: Cat) -> usize {
    match c {
        Cat::F32 => 4,
        Cat::F64 => 8,
        Cat::Code8(_) => 1,
        Cat::Code16(_) => 2,
        Cat::Int(i) => (i.bits.max(8) / 8) as usize,
    }
}

fn read_le(x: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..x.len()].copy_from_slice(x);
    u64::from_le_bytes(b)
}

/// A value on its way between an integer and anything else.
#[derive(Clone, Copy)]
enum Val {
    Int(i64),
    Float(f64),
}

/// NumPy's float → integer cast as ml_dtypes' sub-byte integers see it:
/// truncate toward zero; NaN, ±inf and values outside the int32 range give 0.
pub(crate) fn numpy_float_to_int(x: f64) -> i64 {
    let t = x.trunc();
    if t.is_nan() || t < i32::MIN as f64 || t > i32::MAX as f64 {
        0
    } else {
        t as i64
    }
}

/// Conversions with an integer on either side, one element at a time.
fn chunk_int(a: Cat, b: Cat, src: &[u8], dst: &mut [u8], ov: Overflow) {
    let (sa, sb) = (size_of_cat(a), size_of_cat(b));
    for (x, y) in src.chunks_exact(sa).zip(dst.chunks_exact_mut(sb)) {
        let raw = read_le(x);
        let v = match a {
            Cat::Int(i) if i.boolean => Val::Int((raw != 0) as i64),
            Cat::Int(i) => {
                let sh = 64 - i.bits;
                Val::Int(if i.signed {
                    ((raw << sh) as i64) >> sh
                } else {
                    ((raw << sh) >> sh) as i64
                })
            }
            Cat::F32 => Val::Float(f32::from_bits(raw as u32) as f64),
            Cat::F64 => Val::Float(f64::from_bits(raw)),
            Cat::Code8(f) | Cat::Code16(f) => Val::Float(scalar::decode_f64(&f, raw as u32)),
        };
        let out: u64 = match (b, v) {
            (Cat::Int(j), Val::Int(n)) if j.boolean => (n != 0) as u64,
            (Cat::Int(j), Val::Float(x)) if j.boolean => (x != 0.0) as u64,
            (Cat::Int(j), v) => {
                let n = match v {
                    Val::Int(n) => n,
                    Val::Float(x) => numpy_float_to_int(x),
                };
                let mask = if j.bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << j.bits) - 1
                };
                (n as u64) & mask
            }
            (Cat::F32, v) => (as_f64(v) as f32).to_bits() as u64,
            (Cat::F64, v) => as_f64(v).to_bits(),
            (Cat::Code8(g) | Cat::Code16(g), v) => scalar::encode_f64(&g, as_f64(v), ov) as u64,
        };
        y.copy_from_slice(&out.to_le_bytes()[..sb]);
    }
}

fn as_f64(v: Val) -> f64 {
    match v {
        Val::Int(n) => n as f64,
        Val::Float(x) => x,
    }
}

// ---------------------------------------------------------------------------
// Whole conversions.

/// Converts unpacked little-endian elements; validates lengths and the pair.
pub(crate) fn convert_bytes(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
    path: Path,
    parallel: bool,
) -> Result<(), CastError> {
    let (a, b) = check_pair(from, to)?;
    if !path.is_available() {
        return Err(CastError::PathUnavailable(path));
    }
    let (sa, sb) = (from.itemsize(), to.itemsize());
    if !src.len().is_multiple_of(sa) {
        return Err(CastError::PartialElement {
            dtype: from,
            len: src.len(),
        });
    }
    if !dst.len().is_multiple_of(sb) {
        return Err(CastError::PartialElement {
            dtype: to,
            len: dst.len(),
        });
    }
    let n = src.len() / sa;
    if dst.len() / sb != n {
        return Err(CastError::LengthMismatch {
            src: n,
            dst: dst.len() / sb,
        });
    }
    // A format only its descriptor describes (an IEEE P3109 member) on
    // either side: the run-time codec's kernels.
    let vector = if from.is_p3109() || to.is_p3109() {
        chunk_descriptor
    } else {
        chunk_vector
    };
    let plain = |src: &[u8], dst: &mut [u8]| {
        if path != Path::Scalar && single_pass(a, b, src, dst) {
            // One kernel call over the whole slice: no per-chunk dispatch.
            return vector(path, a, b, src, dst, ov);
        }
        for (s, d) in src.chunks(CHUNK * sa).zip(dst.chunks_mut(CHUNK * sb)) {
            if path == Path::Scalar {
                chunk_scalar(a, b, s, d, ov);
            } else {
                vector(path, a, b, s, d, ov);
            }
        }
    };
    let stream = src.len() + dst.len() >= STREAM_THRESHOLD && 2 * sb >= sa && sb <= 2 * sa;
    let run = |src: &[u8], dst: &mut [u8]| {
        if !(stream && convert_streaming(path, sa, sb, src, dst, &plain)) {
            plain(src, dst)
        }
    };
    #[cfg(feature = "rayon")]
    if split(parallel, n) {
        use rayon::prelude::*;
        src.par_chunks(PAR_CHUNK * sa)
            .zip(dst.par_chunks_mut(PAR_CHUNK * sb))
            .for_each(|(s, d)| run(s, d));
        return Ok(());
    }
    let _ = parallel;
    run(src, dst);
    Ok(())
}

/// A cache-resident staging buffer for [`convert_streaming`].
#[repr(C, align(64))]
struct StreamBlock([u8; STREAM_BLOCK]);

/// Converts `src` into `dst` with `plain` block by block through a
/// staging buffer whose contents are then written out with non-temporal
/// stores; `false` (nothing written) where that is not possible: a path
/// without vector stores, or a destination whose elements cannot be
/// aligned to 64 bytes.
#[cfg(target_arch = "x86_64")]
pub(crate) fn convert_streaming(
    path: Path,
    sa: usize,
    sb: usize,
    src: &[u8],
    dst: &mut [u8],
    plain: &impl Fn(&[u8], &mut [u8]),
) -> bool {
    use super::hw;
    let copy: unsafe fn(&[u8], &mut [u8]) = match path {
        Path::Avx2 => hw::stream_copy_avx2,
        Path::Avx512 => hw::stream_copy_avx512,
        Path::Scalar | Path::Portable => return false,
    };
    let head = dst.as_ptr().align_offset(64);
    if !head.is_multiple_of(sb) || head > dst.len() {
        return false;
    }
    let h = head / sb;
    plain(&src[..h * sa], &mut dst[..head]);
    let per = STREAM_BLOCK / sb;
    let mut buf = StreamBlock([0; STREAM_BLOCK]);
    for (s, d) in src[h * sa..]
        .chunks(per * sa)
        .zip(dst[head..].chunks_mut(per * sb))
    {
        let staged = &mut buf.0[..d.len()];
        plain(s, staged);
        // SAFETY: `path` was confirmed available before the conversion
        // started; `d` starts at a multiple of STREAM_BLOCK (itself a
        // multiple of 64) after the 64-byte aligned `dst[head..]`.
        unsafe { copy(staged, d) };
    }
    hw::store_fence();
    true
}

/// Streaming stores exist only on the x86-64 vector paths.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn convert_streaming(
    _: Path,
    _: usize,
    _: usize,
    _: &[u8],
    _: &mut [u8],
    _: &impl Fn(&[u8], &mut [u8]),
) -> bool {
    false
}
