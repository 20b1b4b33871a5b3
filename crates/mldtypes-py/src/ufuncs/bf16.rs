//! The bfloat16 loops of the two-operand ufuncs (arithmetic, comparisons,
//! selections, `divmod`, `ldexp`, the bit-pattern functions): bfloat16 has
//! 2^32 operand pairs, too many for a result table, so these loops compute
//! each element with explicit AVX2 kernels (`+ - * /`, selections,
//! comparisons) or in float32 blocks through the slice kernels, following
//! Eigen's `bfloat16` as ml_dtypes uses it (signalling NaNs raise the
//! invalid flag when read as float32; ordered comparisons with a NaN raise
//! it; the NaN sign of each operation as x86 gives it).
//!
//! The loops are generic over the scalar type `T` for their shared helpers,
//! and instantiated for bfloat16 only; every other format's loops are
//! driven by its descriptor (`float.rs`).

use std::mem::size_of;
use std::os::raw::{c_char, c_void};

use mldtypes::cast::Element;
use mldtypes::dtype::DType;
use mldtypes::float::MiniFloat;
use mldtypes::format::NanEncoding;
use mldtypes::sort::SortKey;
use numpy::npyffi::npy_intp;

use super::funcs::{
    apply_nan_rule, divmod as divmod_real, is_snan, Arith, Binary, Compare, NanRule, Select,
};
use super::{block_len, blocks, convert, count, raise_invalid, FpFlags, Operand, BLOCK};

/// A float format with these loops: a scalar type of the library that the
/// conversion kernels accept.
pub(crate) trait Float: MiniFloat + Element {}
impl<T: MiniFloat + Element> Float for T {}

/// Reads the code of element `k` (the format's low bits; unused high bits
/// of the sub-byte formats are ignored).
#[inline]
unsafe fn load<T: Float>(o: Operand, k: usize) -> u32 {
    let raw = if size_of::<T>() == 1 {
        o.read::<u8>(k) as u32
    } else {
        o.read::<u16>(k) as u32
    };
    raw & T::FORMAT.code_mask()
}

/// Writes `code` as element `k`.
#[inline]
unsafe fn store<T: Float>(o: Operand, k: usize, code: u32) {
    if size_of::<T>() == 1 {
        o.write::<u8>(k, code as u8)
    } else {
        o.write::<u16>(k, code as u16)
    }
}

/// Whether ml_dtypes handles `T` as Eigen's `bfloat16`, whose predicates
/// and comparisons are float32 operations on the value: C relational
/// operators (which raise the invalid flag when an operand is NaN) and
/// float32 tests that raise it for signalling NaNs. The float8/6/4 formats
/// test and compare bit patterns and raise nothing.
#[inline(always)]
fn eigen_float<T: Float>() -> bool {
    matches!(T::DTYPE, DType::BFloat16)
}

/// Raises the invalid flag, after a bfloat16 loop read a signalling NaN as
/// float32 (see [`eigen_float`]).
#[inline]
fn signal_snan<T: Float>(seen: bool) {
    if eigen_float::<T>() && seen {
        raise_invalid();
    }
}

/// Whether any decoded value of a bfloat16 block is a signalling NaN.
#[inline]
fn any_snan<T: Float>(xs: &[f32]) -> bool {
    eigen_float::<T>() && xs.iter().fold(false, |acc, &x| acc | is_snan(x))
}

/// Whether NaN results of `T` keep the sign of their NaN operands as x86
/// arithmetic gives it (IEEE float8 formats and float8_e4m3fn: NaN has a
/// sign; the fnuz formats and float8_e8m0fnu have one unsigned NaN).
#[inline(always)]
fn signed_nan_float8<T: Float>() -> bool {
    let f = &T::FORMAT;
    !eigen_float::<T>() && f.signed && f.has_nan() && f.nan_encoding != NanEncoding::NegativeZero
}

/// Applies `T`'s rule to the float32 result `r` of `x op y`.
#[inline(always)]
pub(super) fn nan_rule<T: Float, O: Binary>(x: f32, y: f32, r: f32) -> f32 {
    let rule = if eigen_float::<T>() {
        O::NAN_BF16
    } else if signed_nan_float8::<T>() {
        O::NAN_FLOAT8
    } else {
        NanRule::Native
    };
    apply_nan_rule(rule, x, y, r)
}

/// Bytes of one block of the widest format (bfloat16).
const BLOCK_BYTES: usize = BLOCK * 2;

/// Decodes elements `start..start + out.len()` of `o` into `out`.
#[inline]
unsafe fn decode<T: Float>(o: Operand, start: usize, buf: &mut [u8], out: &mut [f32]) {
    let bytes = o.bytes(start, out.len(), size_of::<T>(), buf);
    if matches!(T::DTYPE, DType::BFloat16) {
        // bfloat16 is the upper half of a float32: widening is a shift
        // (payload and sign kept, as the library's decode), which the
        // compiler vectorises in place here.
        for (v, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *v = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
        }
        return;
    }
    convert(
        bytes,
        T::DTYPE,
        bytemuck::cast_slice_mut(out),
        DType::Float32,
    );
}

/// Rounds `vals` once into `T` and writes them as elements `start..` of `o`.
#[inline]
unsafe fn encode<T: Float>(vals: &[f32], o: Operand, start: usize, buf: &mut [u8]) {
    let size = size_of::<T>();
    let n = vals.len() * size;
    if o.contiguous(size) {
        let dst = std::slice::from_raw_parts_mut(o.at(start), n);
        convert(bytemuck::cast_slice(vals), DType::Float32, dst, T::DTYPE);
    } else {
        convert(
            bytemuck::cast_slice(vals),
            DType::Float32,
            &mut buf[..n],
            T::DTYPE,
        );
        o.put_bytes(start, &buf[..n], size);
    }
}

/// The float32 compute of the blocked loops, compiled for each instruction
/// set the conversion kernels use and dispatched on the same detected
/// [`mldtypes::cast::Path`] (the compiler vectorises the arithmetic; the
/// libm calls stay scalar).
pub(super) mod simd {
    use super::super::funcs::{is_snan, Binary, Compare, Select};
    use super::{eigen_float, nan_rule, positive_nans, round_bf16, widen_bf16, Float};
    use mldtypes::bfloat16;
    use mldtypes::sort::SortKey;

    /// `x[i] = f(x[i], y[i])`; whether a signalling NaN was read (bfloat16).
    #[inline(always)]
    fn binary<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        let mut seen = false;
        for (u, v) in x.iter_mut().zip(y.iter()) {
            seen |= eigen_float::<T>() && (is_snan(*u) | is_snan(*v));
            *u = nan_rule::<T, O>(*u, *v, O::f(*u, *v));
        }
        if O::NONNEGATIVE && eigen_float::<T>() {
            positive_nans(x);
        }
        seen
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn binary_avx512<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        binary::<T, O>(x, y)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn binary_avx2<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        binary::<T, O>(x, y)
    }

    /// bfloat16 `o[i] = T(f(a[i], b[i]))` on codes in one pass (widening,
    /// float32 `f`, the NaN rule and the rounding of [`super::round_bf16`]
    /// in registers); whether a signalling NaN was read.
    #[inline(always)]
    fn bf16_binary<O: Binary>(a: &[u16], b: &[u16], o: &mut [u16]) -> bool {
        let mut seen = false;
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            let r = nan_rule::<bfloat16, O>(x, y, O::f(x, y));
            *d = round_bf16(r.to_bits());
        }
        seen
    }

    /// bfloat16 selection (`maximum`, ...) on codes in one pass: the chosen
    /// operand's code; (whether a signalling NaN was read, whether the
    /// comparison ml_dtypes evaluates had a NaN operand).
    #[inline(always)]
    fn bf16_select<O: Select>(a: &[u16], b: &[u16], o: &mut [u16]) -> (bool, bool) {
        let (mut seen, mut signals) = (false, false);
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            signals |= O::signals(x, y);
            *d = if O::pick_x(x, y) { p } else { q };
        }
        (seen, signals)
    }

    /// bfloat16 comparison on codes in one pass, one byte (0/1) per element;
    /// (whether a signalling NaN was read, whether an operand was NaN).
    #[inline(always)]
    fn bf16_compare<O: Compare>(a: &[u16], b: &[u16], o: &mut [u8]) -> (bool, bool) {
        let (mut seen, mut unordered) = (false, false);
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            seen |= snan_code(p) | snan_code(q);
            let (x, y) = (widen_bf16(p), widen_bf16(q));
            unordered |= x.is_nan() | y.is_nan();
            *d = O::f(x, y) as u8;
        }
        (seen, unordered)
    }

    /// Whether a bfloat16 code is a signalling NaN (on the code: 16 lanes
    /// per AVX2 operation).
    #[inline(always)]
    fn snan_code(c: u16) -> bool {
        (c & 0x7fc0 == 0x7f80) & (c & 0x003f != 0)
    }

    macro_rules! dispatched {
        ($(#[$doc:meta])* $name:ident, $inner:ident, $avx512:ident, $avx2:ident, $tr:ident, $out:ty, $ret:ty) => {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
            unsafe fn $avx512<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                $inner::<O>(a, b, o)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn $avx2<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                $inner::<O>(a, b, o)
            }

            $(#[$doc])*
            #[inline]
            pub(super) fn $name<O: $tr>(a: &[u16], b: &[u16], o: &mut [$out]) -> $ret {
                #[cfg(target_arch = "x86_64")]
                {
                    use mldtypes::cast::Path;
                    match mldtypes::cast::path() {
                        // SAFETY: as in `binary_block`.
                        Path::Avx512 => return unsafe { $avx512::<O>(a, b, o) },
                        Path::Avx2 => return unsafe { $avx2::<O>(a, b, o) },
                        _ => {}
                    }
                }
                $inner::<O>(a, b, o)
            }
        };
    }

    dispatched!(
        /// [`bf16_binary`] on the best instruction set.
        bf16_binary_block, bf16_binary, bf16_binary_avx512, bf16_binary_avx2, Binary, u16, bool
    );
    dispatched!(
        /// [`bf16_select`] on the best instruction set.
        bf16_select_block, bf16_select, bf16_select_avx512, bf16_select_avx2, Select, u16,
        (bool, bool)
    );
    dispatched!(
        /// [`bf16_compare`] on the best instruction set.
        bf16_compare_block, bf16_compare, bf16_compare_avx512, bf16_compare_avx2, Compare, u8,
        (bool, bool)
    );

    /// One-byte selection (`maximum`, ...) on codes in one pass, by the
    /// codes' order keys (integer operations: no float32 decode, no flags);
    /// the chosen operand's code, masked to the format's bits.
    #[inline(always)]
    fn byte_select<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        // Only NaN has the largest key (the format's code mask).
        let nan = key.code_mask();
        for ((d, &p), &q) in o.iter_mut().zip(a).zip(b) {
            let (kx, ky) = (key.key(p as u32), key.key(q as u32));
            let pick = O::pick_key(kx, ky, kx == nan, ky == nan);
            *d = (if pick { p } else { q }) & key.code_mask() as u8;
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn byte_select_avx512<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        byte_select::<O>(key, a, b, o)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn byte_select_avx2<O: Select>(key: SortKey, a: &[u8], b: &[u8], o: &mut [u8]) {
        byte_select::<O>(key, a, b, o)
    }

    /// [`byte_select`] on the best instruction set.
    #[inline]
    pub(in super::super) fn byte_select_block<O: Select>(
        key: SortKey,
        a: &[u8],
        b: &[u8],
        o: &mut [u8],
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            use mldtypes::cast::Path;
            match mldtypes::cast::path() {
                // SAFETY: as in `binary_block`.
                Path::Avx512 => return unsafe { byte_select_avx512::<O>(key, a, b, o) },
                Path::Avx2 => return unsafe { byte_select_avx2::<O>(key, a, b, o) },
                _ => {}
            }
        }
        byte_select::<O>(key, a, b, o)
    }

    /// [`binary`] on the best instruction set.
    #[inline]
    pub(super) fn binary_block<T: Float, O: Binary>(x: &mut [f32], y: &[f32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use mldtypes::cast::Path;
            match mldtypes::cast::path() {
                // SAFETY: the path is only selected when the CPU has these
                // features (AVX-512 F/BW/VL/DQ, respectively AVX2).
                Path::Avx512 => return unsafe { binary_avx512::<T, O>(x, y) },
                Path::Avx2 => return unsafe { binary_avx2::<T, O>(x, y) },
                _ => {}
            }
        }
        binary::<T, O>(x, y)
    }

    /// Explicit AVX2 kernels of the bfloat16 `add`, `subtract`, `multiply`,
    /// `divide`, selections and comparisons, on raw pointers (so the output may
    /// be an input, element for element: each group of 16 is loaded before it
    /// is stored).
    ///
    /// Widening is an interleave with zeros (the codes become the high
    /// halves of 32-bit lanes; the lanes' order is undone by the packing
    /// that stores the result), the float32 operation runs on 8 lanes and
    /// the rounding to nearest even is integer arithmetic raising no flags of
    /// its own, as the scalar [`super::round_bf16`]. A group of 16 without a
    /// NaN operand (one test) skips the NaN rule, the NaN rounding and the
    /// signalling-NaN check: a NaN the operation makes from other values is
    /// x86's default NaN, which the integer rounding already takes to the
    /// `0xffc0` the scalar rounding gives. The NaN masks are quiet compares:
    /// they raise the invalid flag only for a signalling NaN operand, for
    /// which the loop raises it anyway.
    ///
    /// `S` is the element step in codes: 1 (packed) or 2 (every second code
    /// of a packed array, read as 32-bit words whose low half is the
    /// element). The remainder (under 16 elements, or 17 when `S == 2`: the
    /// 32-bit load of the last element would read past it) takes the scalar
    /// code.
    #[cfg(target_arch = "x86_64")]
    pub(super) mod bf16_avx2 {
        use std::arch::x86_64::*;

        use super::super::super::funcs::{Arith, Binary, Compare, NanRule, Pred, Select};
        use super::super::{nan_rule, round_bf16, widen_bf16};
        use mldtypes::bfloat16;

        /// Whether the kernels of this module may run (the detected kernel
        /// path has AVX2).
        #[inline]
        pub(in super::super) fn available() -> bool {
            use mldtypes::cast::Path;
            matches!(mldtypes::cast::path(), Path::Avx2 | Path::Avx512)
        }

        /// Codes `16 k .. 16 k + 16` read from `p` (step `S` codes) as
        /// float32, in the lane order of [`_mm256_unpacklo_epi16`] /
        /// [`_mm256_unpackhi_epi16`]: elements 0..4 and 8..12, then 4..8
        /// and 12..16.
        #[inline(always)]
        unsafe fn load<const S: usize>(p: *const u8, k: usize) -> (__m256, __m256) {
            let (lo, hi) = if S == 1 {
                let v = _mm256_loadu_si256(p.add(32 * k).cast());
                let z = _mm256_setzero_si256();
                (_mm256_unpacklo_epi16(z, v), _mm256_unpackhi_epi16(z, v))
            } else {
                let w0 = _mm256_slli_epi32::<16>(_mm256_loadu_si256(p.add(64 * k).cast()));
                let w1 = _mm256_slli_epi32::<16>(_mm256_loadu_si256(p.add(64 * k + 32).cast()));
                (
                    _mm256_permute2x128_si256::<0x20>(w0, w1),
                    _mm256_permute2x128_si256::<0x31>(w0, w1),
                )
            };
            (_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi))
        }

        /// All-ones lanes where `x` is NaN.
        #[inline(always)]
        unsafe fn nan(x: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x)
        }

        /// Accumulates the lanes of `x` that are signalling NaNs (quiet bit
        /// clear where `xn` is set) into bit 22 of `acc`.
        #[inline(always)]
        unsafe fn signalling(acc: &mut __m256, x: __m256, xn: __m256) {
            *acc = _mm256_or_ps(*acc, _mm256_andnot_ps(x, xn));
        }

        /// Whether bit 22 (the float32 quiet bit) of some lane of `acc` is
        /// set: a signalling NaN was accumulated.
        #[inline(always)]
        unsafe fn any_signalling(acc: __m256) -> bool {
            let quiet = _mm256_set1_epi32(0x0040_0000);
            _mm256_testz_si256(_mm256_castps_si256(acc), quiet) == 0
        }

        /// Float32 lanes rounded to bfloat16 codes (low 16 bits) to nearest
        /// even; NaN lanes other than x86's default NaN need [`round_nan`].
        #[inline(always)]
        unsafe fn round(r: __m256) -> __m256i {
            let u = _mm256_castps_si256(r);
            let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(u), _mm256_set1_epi32(1));
            let bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd);
            _mm256_srli_epi32::<16>(_mm256_add_epi32(u, bias))
        }

        /// [`round`] with every NaN lane `0x7fc0` with its sign, as
        /// [`round_bf16`].
        #[inline(always)]
        unsafe fn round_nan(r: __m256) -> __m256i {
            let sign = _mm256_and_si256(
                _mm256_srli_epi32::<16>(_mm256_castps_si256(r)),
                _mm256_set1_epi32(0x8000),
            );
            let quiet = _mm256_or_si256(sign, _mm256_set1_epi32(0x7fc0));
            _mm256_blendv_epi8(round(r), quiet, _mm256_castps_si256(nan(r)))
        }

        /// `f(x, y)` on 8 lanes.
        #[inline(always)]
        unsafe fn op<O: Binary>(x: __m256, y: __m256) -> __m256 {
            match O::ARITH {
                Arith::Add => _mm256_add_ps(x, y),
                Arith::Sub => _mm256_sub_ps(x, y),
                Arith::Mul => _mm256_mul_ps(x, y),
                _ => _mm256_div_ps(x, y),
            }
        }

        /// `f(x, y)` with [`Binary::NAN_BF16`]'s NaN rule, rounded.
        #[inline(always)]
        unsafe fn op_nan<O: Binary>(x: __m256, y: __m256, xn: __m256, yn: __m256) -> __m256i {
            let r = op::<O>(x, y);
            let r = match O::NAN_BF16 {
                NanRule::SecondFirst => _mm256_blendv_ps(_mm256_blendv_ps(r, x, xn), y, yn),
                NanRule::FirstSecond => _mm256_blendv_ps(_mm256_blendv_ps(r, y, yn), x, xn),
                _ => r,
            };
            round_nan(r)
        }

        /// Two vectors of 8 codes (low 16 bits of each lane, at most 0xffff,
        /// in [`load`]'s lane order) stored as 16 codes at `o` (32-byte
        /// aligned when `NT`: a non-temporal store).
        #[inline(always)]
        unsafe fn store16<const NT: bool>(o: *mut u8, lo: __m256i, hi: __m256i) {
            let v = _mm256_packus_epi32(lo, hi);
            if NT {
                _mm256_stream_si256(o.cast(), v);
            } else {
                _mm256_storeu_si256(o.cast(), v);
            }
        }

        /// Output bytes from which the kernels store with non-temporal
        /// stores: the operands (at least three times this) then exceed the
        /// last-level cache of current processors, so the output lines need
        /// not be read in before being written.
        const STREAM_BYTES: usize = 16 << 20;

        /// Runs `plain` (a kernel's `run::<false>`) on the elements before
        /// the first `align`-byte boundary of the output and `stream`
        /// (`run::<true>`, non-temporal stores) on the rest, when the output
        /// of `n` elements of `size` bytes at `o` is large enough
        /// ([`STREAM_BYTES`]) and `size`-aligned; else `plain` on all. Each
        /// is called as `run(a, b, o, count)` with the operands (codes of
        /// step `S`) and output moved to its first element; the results are
        /// or-ed.
        #[inline(always)]
        unsafe fn streamed<R: std::ops::BitOr<Output = R>, const S: usize>(
            (a, b, o): (*const u8, *const u8, *mut u8),
            n: usize,
            size: usize,
            align: usize,
            mut plain: impl FnMut(*const u8, *const u8, *mut u8, usize) -> R,
            mut stream: impl FnMut(*const u8, *const u8, *mut u8, usize) -> R,
        ) -> R {
            if n * size < STREAM_BYTES || !(o as usize).is_multiple_of(size) {
                return plain(a, b, o, n);
            }
            let head = ((align - o as usize % align) % align / size).min(n);
            let (ah, bh, oh) = (a.add(2 * S * head), b.add(2 * S * head), o.add(size * head));
            let r = plain(a, b, o, head) | stream(ah, bh, oh, n - head);
            _mm_sfence();
            r
        }

        /// A pair of flags or-ed lane by lane.
        #[derive(Clone, Copy)]
        pub(in super::super) struct Flags(pub(in super::super) bool, pub(in super::super) bool);

        impl std::ops::BitOr for Flags {
            type Output = Flags;
            fn bitor(self, o: Flags) -> Flags {
                Flags(self.0 | o.0, self.1 | o.1)
            }
        }

        /// Elements handled by the vector loop: whole groups of 16, leaving
        /// at least one element when `S == 2` (the 32-bit load of the last
        /// one would read past it).
        #[inline(always)]
        fn vector_len<const S: usize>(n: usize) -> usize {
            if S == 1 {
                n / 16 * 16
            } else {
                n.saturating_sub(1) / 16 * 16
            }
        }

        /// Code `k` of an operand of step `S` codes.
        #[inline(always)]
        unsafe fn code<const S: usize>(p: *const u8, k: usize) -> u16 {
            std::ptr::read_unaligned(p.add(2 * S * k).cast::<u16>())
        }

        /// The four operands of a group of 16, their NaN masks and whether
        /// any is NaN.
        #[inline(always)]
        unsafe fn group<const S: usize>(a: *const u8, b: *const u8, k: usize) -> Group {
            let (xl, xh) = load::<S>(a, k);
            let (yl, yh) = load::<S>(b, k);
            let (xnl, xnh, ynl, ynh) = (nan(xl), nan(xh), nan(yl), nan(yh));
            let any = _mm256_or_ps(_mm256_or_ps(xnl, xnh), _mm256_or_ps(ynl, ynh));
            Group {
                x: [xl, xh],
                y: [yl, yh],
                xn: [xnl, xnh],
                yn: [ynl, ynh],
                any_nan: _mm256_testz_ps(any, any) == 0,
            }
        }

        /// See [`group`].
        struct Group {
            x: [__m256; 2],
            y: [__m256; 2],
            xn: [__m256; 2],
            yn: [__m256; 2],
            any_nan: bool,
        }

        impl Group {
            /// Accumulates the signalling NaN operands into `acc`.
            #[inline(always)]
            unsafe fn signalling(&self, acc: &mut __m256) {
                for h in 0..2 {
                    signalling(acc, self.x[h], self.xn[h]);
                    signalling(acc, self.y[h], self.yn[h]);
                }
            }
        }

        /// `o[k] = bfloat16(f(a[k], b[k]))` for `k < n` (`o` packed);
        /// whether a signalling NaN was read.
        ///
        /// # Safety
        ///
        /// The CPU has AVX2; `a`, `b` hold `n` elements of step `S` codes,
        /// `o` `n` packed codes; `o` is disjoint from the inputs or equal to
        /// one element for element.
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn binary<O: Binary, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> bool {
            streamed::<_, S>(
                (a, b, o),
                n,
                2,
                32,
                |a, b, o, m| binary_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| binary_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`binary`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn binary_run<O: Binary, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> bool {
            let mut snan = _mm256_setzero_ps();
            let nv = vector_len::<S>(n);
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                let (lo, hi) = if g.any_nan {
                    g.signalling(&mut snan);
                    (
                        op_nan::<O>(g.x[0], g.y[0], g.xn[0], g.yn[0]),
                        op_nan::<O>(g.x[1], g.y[1], g.xn[1], g.yn[1]),
                    )
                } else {
                    (
                        round(op::<O>(g.x[0], g.y[0])),
                        round(op::<O>(g.x[1], g.y[1])),
                    )
                };
                store16::<NT>(o.add(32 * k), lo, hi);
            }
            let mut seen = any_signalling(snan);
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                let r = nan_rule::<bfloat16, O>(x, y, O::f(x, y));
                std::ptr::write_unaligned(o.add(2 * k).cast::<u16>(), round_bf16(r.to_bits()));
            }
            seen
        }

        /// `o[k] = pick(a[k], b[k]) ? a[k] : b[k]` for `k < n` (`o` packed);
        /// (whether a signalling NaN was read, whether the comparison
        /// ml_dtypes evaluates had a NaN operand). Safety as [`binary`].
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn select<O: Select, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            streamed::<_, S>(
                (a, b, o),
                n,
                2,
                32,
                |a, b, o, m| select_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| select_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`select`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn select_run<O: Select, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            let (mut snan, mut signals) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            let nv = vector_len::<S>(n);
            let mut codes = [_mm256_setzero_si256(); 2];
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                if g.any_nan {
                    g.signalling(&mut snan);
                }
                for (h, code) in codes.iter_mut().enumerate() {
                    let (x, y) = (g.x[h], g.y[h]);
                    let ord = if O::GREATER {
                        _mm256_cmp_ps::<_CMP_GT_OQ>(x, y)
                    } else {
                        _mm256_cmp_ps::<_CMP_LT_OQ>(x, y)
                    };
                    let (first, second) = if O::NAN_FROM_X {
                        (g.xn[h], g.yn[h])
                    } else {
                        (g.yn[h], g.xn[h])
                    };
                    if g.any_nan {
                        signals = _mm256_or_ps(signals, _mm256_andnot_ps(first, second));
                    }
                    let r = _mm256_blendv_ps(y, x, _mm256_or_ps(first, ord));
                    *code = _mm256_srli_epi32::<16>(_mm256_castps_si256(r));
                }
                store16::<NT>(o.add(32 * k), codes[0], codes[1]);
            }
            let mut seen = any_signalling(snan);
            let mut signalled = _mm256_testz_ps(signals, signals) == 0;
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                signalled |= O::signals(x, y);
                let r = if O::pick_x(x, y) { p } else { q };
                std::ptr::write_unaligned(o.add(2 * k).cast::<u16>(), r);
            }
            Flags(seen, signalled)
        }

        /// `o[k] = f(a[k], b[k])` as one byte (0/1) for `k < n` (`o`
        /// packed); (whether a signalling NaN was read, whether an operand
        /// was NaN). The vector compares may set flags: the caller restores
        /// them. Safety as [`binary`].
        #[target_feature(enable = "avx2")]
        pub(in super::super) unsafe fn compare<O: Compare, const S: usize>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            streamed::<_, S>(
                (a, b, o),
                n,
                1,
                16,
                |a, b, o, m| compare_run::<O, S, false>(a, b, o, m),
                |a, b, o, m| compare_run::<O, S, true>(a, b, o, m),
            )
        }

        /// [`compare`] on `n` elements, non-temporal stores when `NT`.
        #[inline(always)]
        unsafe fn compare_run<O: Compare, const S: usize, const NT: bool>(
            a: *const u8,
            b: *const u8,
            o: *mut u8,
            n: usize,
        ) -> Flags {
            let mut snan = _mm256_setzero_ps();
            let mut unordered = false;
            let nv = vector_len::<S>(n);
            for k in 0..nv / 16 {
                let g = group::<S>(a, b, k);
                if g.any_nan {
                    g.signalling(&mut snan);
                    unordered = true;
                }
                let test = |h: usize| {
                    let (x, y) = (g.x[h], g.y[h]);
                    _mm256_castps_si256(match O::PRED {
                        Pred::Eq => _mm256_cmp_ps::<_CMP_EQ_OQ>(x, y),
                        Pred::Ne => _mm256_cmp_ps::<_CMP_NEQ_UQ>(x, y),
                        Pred::Lt => _mm256_cmp_ps::<_CMP_LT_OQ>(x, y),
                        Pred::Gt => _mm256_cmp_ps::<_CMP_GT_OQ>(x, y),
                        Pred::Le => _mm256_cmp_ps::<_CMP_LE_OQ>(x, y),
                        Pred::Ge => _mm256_cmp_ps::<_CMP_GE_OQ>(x, y),
                    })
                };
                // 16 words in element order (the packing undoes `load`'s
                // lane order), then 16 bytes.
                let words = _mm256_packs_epi32(test(0), test(1));
                let bytes = _mm_packs_epi16(
                    _mm256_castsi256_si128(words),
                    _mm256_extracti128_si256::<1>(words),
                );
                let bytes = _mm_and_si128(bytes, _mm_set1_epi8(1));
                if NT {
                    _mm_stream_si128(o.add(16 * k).cast(), bytes);
                } else {
                    _mm_storeu_si128(o.add(16 * k).cast(), bytes);
                }
            }
            let mut seen = any_signalling(snan);
            for k in nv..n {
                let (p, q) = (code::<S>(a, k), code::<S>(b, k));
                seen |= super::snan_code(p) | super::snan_code(q);
                let (x, y) = (widen_bf16(p), widen_bf16(q));
                unordered |= x.is_nan() | y.is_nan();
                *o.add(k) = O::f(x, y) as u8;
            }
            Flags(seen, unordered)
        }
    }
}

/// A bfloat16 code as float32: a shift, payload and sign kept, as
/// [`decode`].
#[inline(always)]
fn widen_bf16(c: u16) -> f32 {
    f32::from_bits((c as u32) << 16)
}

/// float32 bits rounded to bfloat16 as the library's float32 → bfloat16
/// kernels round (to nearest even on the integer bits, overflow to
/// infinity, NaN `0x7fc0` with the sign kept), in integer operations that
/// raise no floating-point flags.
#[inline(always)]
pub(super) fn round_bf16(u: u32) -> u16 {
    let r = (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16;
    let nan = 0x7fc0 | ((u >> 16) as u16 & 0x8000);
    if u & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        r
    }
}

/// Elements per chunk of the one-pass bfloat16 loops (operands gathered
/// into, and the result written from, stack buffers of this size).
const BF16_CHUNK: usize = 2048;

/// Elements `start..start + buf.len()` of a bfloat16 operand as a slice:
/// borrowed when contiguous and aligned, else gathered into `buf`.
#[inline(always)]
pub(super) unsafe fn bf16_codes(x: Operand, start: usize, buf: &mut [u16]) -> &[u16] {
    let len = buf.len();
    if x.contiguous(2) && (x.at(start) as usize).is_multiple_of(2) {
        return std::slice::from_raw_parts(x.at(start) as *const u16, len);
    }
    super::float::gather_u16(x, start, buf);
    buf
}

/// Runs a one-pass bfloat16 block function over `n` elements of `a`, `b`
/// into `o` (elements of `V`), chunk by chunk: operands borrowed when
/// contiguous, gathered otherwise; the result of each chunk is built on
/// the stack and written out once (so `o` may be `a` or `b` element for
/// element; `block` is [`block_len`]'s answer).
#[inline(always)]
unsafe fn bf16_chunks<V: bytemuck::Pod + Default, R>(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    block: usize,
    mut f: impl FnMut(&[u16], &[u16], &mut [V]) -> R,
    mut fold: impl FnMut(R),
) {
    let (mut ga, mut gb) = ([0u16; BF16_CHUNK], [0u16; BF16_CHUNK]);
    let mut out = [V::default(); BF16_CHUNK];
    blocks(n, block.min(BF16_CHUNK), |start, len| {
        let pa = bf16_codes(a, start, &mut ga[..len]);
        let pb = bf16_codes(b, start, &mut gb[..len]);
        let po = &mut out[..len];
        fold(f(pa, pb, po));
        o.put_bytes(start, bytemuck::cast_slice(po), size_of::<V>());
    });
}

/// A bfloat16 kernel of [`simd::bf16_avx2`]: inputs, packed output,
/// element count.
#[cfg(target_arch = "x86_64")]
type Bf16Kernel<R> = unsafe fn(*const u8, *const u8, *mut u8, usize) -> R;

/// Runs an AVX2 bfloat16 kernel over `n` elements of `a`, `b` into `o`
/// (elements of `out_size` bytes): in one call straight on the arrays when
/// the output is packed and both inputs are packed (`packed`) or every
/// second code of packed arrays (`every_second`); otherwise chunk by
/// chunk, the strided operands gathered into and the strided output
/// scattered from stack buffers.
///
/// # Safety
///
/// The CPU has AVX2 ([`simd::bf16_avx2::available`]); the operands are
/// those of a loop call of `n` elements whose [`block_len`] is not 1 (so
/// `o` is disjoint from each input or equal to it element for element).
#[cfg(target_arch = "x86_64")]
unsafe fn bf16_avx2_run<R>(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    out_size: usize,
    packed: Bf16Kernel<R>,
    every_second: Bf16Kernel<R>,
    mut fold: impl FnMut(R),
) {
    if o.contiguous(out_size) {
        if a.contiguous(2) && b.contiguous(2) {
            fold(packed(a.at(0), b.at(0), o.at(0), n));
            return;
        }
        if a.contiguous(4) && b.contiguous(4) {
            fold(every_second(a.at(0), b.at(0), o.at(0), n));
            return;
        }
    }
    let (mut ga, mut gb) = ([0u16; BF16_CHUNK], [0u16; BF16_CHUNK]);
    let mut out = [0u8; 2 * BF16_CHUNK];
    let gather = |x: Operand, start: usize, buf: &mut [u16]| -> *const u8 {
        if x.contiguous(2) {
            return x.at(start);
        }
        for (k, v) in buf.iter_mut().enumerate() {
            *v = x.read::<u16>(start + k);
        }
        buf.as_ptr().cast()
    };
    blocks(n, BF16_CHUNK, |start, len| {
        let pa = gather(a, start, &mut ga[..len]);
        let pb = gather(b, start, &mut gb[..len]);
        if o.contiguous(out_size) {
            fold(packed(pa, pb, o.at(start), len));
        } else {
            fold(packed(pa, pb, out.as_mut_ptr(), len));
            o.put_bytes(start, &out[..len * out_size], out_size);
        }
    });
}

/// Runs a one-byte block function over `n` elements of `a`, `b` into `o`
/// as [`bf16_chunks`] does.
#[inline(always)]
pub(super) unsafe fn byte_chunks(
    (a, b, o): (Operand, Operand, Operand),
    n: usize,
    block: usize,
    mut f: impl FnMut(&[u8], &[u8], &mut [u8]),
) {
    let (mut ga, mut gb) = ([0u8; BF16_CHUNK], [0u8; BF16_CHUNK]);
    let mut out = [0u8; BF16_CHUNK];
    // A packed output that shares no byte with the inputs (`block` is 1
    // when the operands overlap other than element for element) is written
    // in place, without the copy through `out`.
    let direct = block != 1 && o.contiguous(1) && o.at(0) != a.at(0) && o.at(0) != b.at(0);
    blocks(n, block.min(BF16_CHUNK), |start, len| {
        let pa = a.bytes(start, len, 1, &mut ga);
        let pb = b.bytes(start, len, 1, &mut gb);
        if direct {
            // SAFETY: `len` packed, writable output bytes, disjoint from
            // `pa` and `pb` (see `direct`).
            f(pa, pb, std::slice::from_raw_parts_mut(o.at(start), len));
        } else {
            let po = &mut out[..len];
            f(pa, pb, po);
            o.put_bytes(start, po, 1);
        }
    });
}

/// Replaces every NaN by `+NaN` (see `Unary::NONNEGATIVE`).
#[inline(always)]
fn positive_nans(xs: &mut [f32]) {
    for v in xs {
        if v.is_nan() {
            *v = f32::NAN;
        }
    }
}

/// Loop of a [`Binary`] value function.
pub(super) unsafe extern "C" fn binary<T: Float, O: Binary>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[size_of::<T>(), size_of::<T>(), size_of::<T>()],
            2,
        );
        if is_reduction(a, o, block) {
            signal_snan::<T>(reduce::<T, O>(a, b, n, &mut buf, &mut y));
            return;
        }
        if eigen_float::<T>() && O::CHEAP && !O::NONNEGATIVE {
            #[cfg(target_arch = "x86_64")]
            if block != 1 && O::ARITH != Arith::None && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    2,
                    simd::bf16_avx2::binary::<O, 1>,
                    simd::bf16_avx2::binary::<O, 2>,
                    |s| snan |= s,
                );
                signal_snan::<T>(snan);
                return;
            }
            bf16_chunks((a, b, o), n, block, simd::bf16_binary_block::<O>, |s| {
                snan |= s
            });
            signal_snan::<T>(snan);
            return;
        }
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            let quiet = (O::QUIET_UNSIGNED && !T::FORMAT.signed).then(FpFlags::save);
            snan |= simd::binary_block::<T, O>(x, y);
            if let Some(flags) = quiet {
                flags.restore();
            }
            encode::<T>(x, o, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// Whether a loop call is NumPy's reduction (`np.add.reduce`): the
/// accumulator is the first input and the output, both with step 0.
#[inline]
fn is_reduction(a: Operand, o: Operand, block: usize) -> bool {
    block == 1 && a.at(0) == o.at(0) && a.at(1) == a.at(0) && o.at(1) == o.at(0)
}

/// The exact float32 value of a code of `T`, as a function cheap enough
/// for a per-element loop: bfloat16 widens by a shift (payload and sign
/// kept, as [`decode`]); for a loop of `n` elements worth it, a one-byte
/// format looks its 256 codes up in a table the slice kernels decode once;
/// anything else takes the library's scalar decode.
#[inline(always)]
fn widener<T: Float>(n: usize) -> impl Fn(u32) -> f32 {
    let mut table = [0f32; 256];
    let one_byte = size_of::<T>() == 1 && n >= 1024;
    if one_byte {
        let codes: [u8; 256] = std::array::from_fn(|k| k as u8 & T::FORMAT.code_mask() as u8);
        convert(
            &codes,
            T::DTYPE,
            bytemuck::cast_slice_mut(&mut table),
            DType::Float32,
        );
    }
    move |code: u32| {
        if eigen_float::<T>() {
            f32::from_bits(code << 16)
        } else if one_byte {
            table[(code & 0xff) as usize]
        } else {
            T::from_code(code).to_f32()
        }
    }
}

/// A reduction `acc = f(acc, b[k])` over `n` elements, rounding into `T`
/// after every step as ml_dtypes' element-by-element loop does; the
/// accumulator stays in a register, `b` is decoded in blocks. Returns
/// whether a signalling NaN was read (bfloat16).
unsafe fn reduce<T: Float, O: Binary>(
    acc: Operand,
    b: Operand,
    n: usize,
    buf: &mut [u8],
    y: &mut [f32; BLOCK],
) -> bool {
    if eigen_float::<T>() && O::ARITH != Arith::None {
        return reduce_bf16_arith::<O>(acc, b, n);
    }
    let mut code = load::<T>(acc, 0);
    let mut x = T::from_code(code).to_f32();
    let mut seen = false;
    let quiet = (O::QUIET_UNSIGNED && !T::FORMAT.signed).then(FpFlags::save);
    let widen = widener::<T>(n);
    blocks(n, BLOCK, |start, len| {
        let y = &mut y[..len];
        decode::<T>(b, start, buf, y);
        for &v in y.iter() {
            seen |= eigen_float::<T>() && (is_snan(x) | is_snan(v));
            let mut r = nan_rule::<T, O>(x, v, O::f(x, v));
            if O::NONNEGATIVE && eigen_float::<T>() && r.is_nan() {
                r = f32::NAN;
            }
            // The library's scalar rounding (bit-identical to the slice
            // kernels; one element through the kernels costs more), then
            // the exact widening: integer code operations, so they raise
            // no floating-point flags of their own.
            code = T::from_f32(r).code();
            x = widen(code);
        }
    });
    if let Some(flags) = quiet {
        flags.restore();
    }
    store::<T>(acc, 0, code);
    seen
}

/// bfloat16 `np.add.reduce` (and `subtract`, `multiply`, `divide`): the
/// accumulator `acc = T(acc op b[k])`, rounded after every step, in the
/// order NumPy fixes. A block of operands without NaN (nor a NaN
/// accumulator at its start) runs a chain kept in one vector register: the
/// float32 operation, then the rounding to nearest even in integer
/// operations on the same register (no trip through the general
/// registers). A NaN the chain makes from other values (`inf - inf`) is
/// x86's default NaN, which that rounding keeps and which later steps
/// return unchanged, as the NaN rule would. Blocks holding a NaN take
/// the element-by-element path with the NaN rule. Returns whether a
/// signalling NaN was read.
unsafe fn reduce_bf16_arith<O: Binary>(acc: Operand, b: Operand, n: usize) -> bool {
    let mut code = acc.read::<u16>(0);
    let mut seen = false;
    let mut buf = [0u16; BF16_CHUNK];
    let nan = |c: u16| c & 0x7fff > 0x7f80;
    blocks(n, BF16_CHUNK, |start, len| {
        let ys = bf16_codes(b, start, &mut buf[..len]);
        let any_nan = nan(code) | ys.iter().fold(false, |a, &c| a | nan(c));
        if !any_nan {
            code = bf16_chain::<O>(code, ys);
            return;
        }
        for &c in ys {
            seen |=
                super::funcs::bf16_snan_code(c as u32) | super::funcs::bf16_snan_code(code as u32);
            let (x, y) = (widen_bf16(code), widen_bf16(c));
            code = round_bf16(nan_rule::<mldtypes::bfloat16, O>(x, y, O::f(x, y)).to_bits());
        }
    });
    if n > 0 {
        acc.write::<u16>(0, code);
    }
    seen
}

/// The accumulation chain of [`reduce_bf16_arith`] over NaN-free operands.
#[inline]
fn bf16_chain<O: Binary>(code: u16, ys: &[u16]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        use std::arch::x86_64::*;
        let mut v = _mm_castsi128_ps(_mm_cvtsi32_si128(((code as u32) << 16) as i32));
        let bias = _mm_set1_epi32(0x7fff);
        let one = _mm_set1_epi32(1);
        let high = _mm_set1_epi32(0xffff_0000u32 as i32);
        for &c in ys {
            let y = _mm_castsi128_ps(_mm_cvtsi32_si128(((c as u32) << 16) as i32));
            let r = match O::ARITH {
                Arith::Add => _mm_add_ss(v, y),
                Arith::Sub => _mm_sub_ss(v, y),
                Arith::Mul => _mm_mul_ss(v, y),
                Arith::Div => _mm_div_ss(v, y),
                Arith::None => unreachable!("an arithmetic reduction"),
            };
            let u = _mm_castps_si128(r);
            let odd = _mm_and_si128(_mm_srli_epi32::<16>(u), one);
            v = _mm_castsi128_ps(_mm_and_si128(
                _mm_add_epi32(_mm_add_epi32(u, bias), odd),
                high,
            ));
        }
        (_mm_cvtsi128_si32(_mm_castps_si128(v)) as u32 >> 16) as u16
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut x = widen_bf16(code);
        for &c in ys {
            let u = O::f(x, widen_bf16(c)).to_bits();
            x = f32::from_bits(u.wrapping_add(0x7fff + ((u >> 16) & 1)) & 0xffff_0000);
        }
        (x.to_bits() >> 16) as u16
    }
}

/// `divmod`: `(floor_divide, remainder)` from one `divmod_f32`.
pub(super) unsafe extern "C" fn divmod<T: Float>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let (q, m) = (Operand::of(args, steps, 2), Operand::of(args, steps, 3));
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[
                size_of::<T>(),
                size_of::<T>(),
                size_of::<T>(),
                size_of::<T>(),
            ],
            2,
        );
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            snan |= any_snan::<T>(x) | any_snan::<T>(y);
            for (u, v) in x.iter_mut().zip(y.iter_mut()) {
                (*u, *v) = divmod_real(*u, *v);
            }
            encode::<T>(x, q, start, &mut buf);
            encode::<T>(y, m, start, &mut buf);
        });
        signal_snan::<T>(snan);
    })
}

/// Loop of a [`Compare`]: boolean output. Comparing decoded float32 values
/// equals ml_dtypes' sign-magnitude comparison of bit patterns (NaN
/// unordered, `-0 == +0`).
pub(super) unsafe extern "C" fn compare<T: Float, O: Compare>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut unordered = false;
        let mut snan = false;
        let n = count(dims);
        let block = block_len(args, steps, n, &[size_of::<T>(), size_of::<T>(), 1], 2);
        if eigen_float::<T>() {
            // The compiler may vectorise with signalling compares; the flags
            // ml_dtypes raises are set explicitly below.
            let flags = FpFlags::save();
            let fold = |(s, u): (bool, bool)| {
                snan |= s;
                unordered |= u;
            };
            #[cfg(target_arch = "x86_64")]
            if block != 1 && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    1,
                    simd::bf16_avx2::compare::<O, 1>,
                    simd::bf16_avx2::compare::<O, 2>,
                    |f| {
                        snan |= f.0;
                        unordered |= f.1;
                    },
                );
            } else {
                bf16_chunks((a, b, o), n, block, simd::bf16_compare_block::<O>, fold);
            }
            #[cfg(not(target_arch = "x86_64"))]
            bf16_chunks((a, b, o), n, block, simd::bf16_compare_block::<O>, fold);
            flags.restore_if_changed();
            if O::ORDERED && unordered {
                raise_invalid();
            }
            signal_snan::<T>(snan);
            return;
        }
        blocks(n, block, |start, len| {
            let (x, y) = (&mut x[..len], &mut y[..len]);
            decode::<T>(a, start, &mut buf, x);
            decode::<T>(b, start, &mut buf, y);
            snan |= any_snan::<T>(x) | any_snan::<T>(y);
            // The compiler may vectorise with signalling compares; the flags
            // ml_dtypes raises are set explicitly below.
            let flags = FpFlags::save();
            for (k, (u, v)) in x.iter().zip(y.iter()).enumerate() {
                unordered |= u.is_nan() | v.is_nan();
                o.write::<u8>(start + k, O::f(*u, *v) as u8);
            }
            flags.restore();
        });
        if O::ORDERED && unordered && eigen_float::<T>() {
            raise_invalid();
        }
        signal_snan::<T>(snan);
    })
}

/// `out[k] = pick_x(x[k], y[k]) ? ca[k] : cb[k]` on codes of `N` bytes
/// (little-endian, masked to the format's `code_mask`), branch-free: the
/// picks of random data are unpredictable.
#[inline(always)]
fn choose_codes<O: Select, const N: usize>(
    x: &[f32],
    y: &[f32],
    ca: &[u8],
    cb: &[u8],
    out: &mut [u8],
    code_mask: u32,
) {
    let chunks = out
        .chunks_exact_mut(N)
        .zip(ca.chunks_exact(N).zip(cb.chunks_exact(N)));
    for ((d, (p, q)), (u, v)) in chunks.zip(x.iter().zip(y.iter())) {
        let code = |c: &[u8]| {
            let mut w = [0u8; 4];
            w[..N].copy_from_slice(c);
            u32::from_le_bytes(w)
        };
        let mask = (O::pick_x(*u, *v) as u32).wrapping_neg() & code_mask;
        let r = (code(p) & mask) | (code(q) & !mask & code_mask);
        d.copy_from_slice(&r.to_le_bytes()[..N]);
    }
}

/// Loop of a [`Select`]: the chosen operand's bits are copied unchanged.
pub(super) unsafe extern "C" fn select<T: Float, O: Select>(
    args: *mut *mut c_char,
    dims: *mut npy_intp,
    steps: *mut npy_intp,
    _data: *mut c_void,
) {
    crate::guard::ffi((), || unsafe {
        let a = Operand::of(args, steps, 0);
        let b = Operand::of(args, steps, 1);
        let o = Operand::of(args, steps, 2);
        let mut buf = [0u8; BLOCK_BYTES];
        let (mut buf_a, mut buf_b, mut buf_o) =
            ([0u8; BLOCK_BYTES], [0u8; BLOCK_BYTES], [0u8; BLOCK_BYTES]);
        let mut x = [0f32; BLOCK];
        let mut y = [0f32; BLOCK];
        let mut signals = false;
        let mut snan = false;
        let n = count(dims);
        let block = block_len(
            args,
            steps,
            n,
            &[size_of::<T>(), size_of::<T>(), size_of::<T>()],
            2,
        );
        if is_reduction(a, o, block) {
            // The accumulator is element 0 of `a` and `o`: keep it in a
            // register, compare it with each decoded element of `b`.
            let mut code = load::<T>(a, 0);
            let mut acc = T::from_code(code).to_f32();
            blocks(n, BLOCK, |start, len| {
                let y = &mut y[..len];
                decode::<T>(b, start, &mut buf, y);
                snan |= any_snan::<T>(y) | (eigen_float::<T>() && is_snan(acc));
                let flags = FpFlags::save();
                for (k, v) in y.iter().enumerate() {
                    signals |= O::signals(acc, *v);
                    if !O::pick_x(acc, *v) {
                        code = load::<T>(b, start + k);
                        acc = *v;
                    }
                }
                flags.restore();
            });
            store::<T>(o, 0, code);
        } else if eigen_float::<T>() {
            let flags = FpFlags::save();
            let fold = |(s, g): (bool, bool)| {
                snan |= s;
                signals |= g;
            };
            #[cfg(target_arch = "x86_64")]
            if block != 1 && simd::bf16_avx2::available() {
                bf16_avx2_run(
                    (a, b, o),
                    n,
                    2,
                    simd::bf16_avx2::select::<O, 1>,
                    simd::bf16_avx2::select::<O, 2>,
                    |f| {
                        snan |= f.0;
                        signals |= f.1;
                    },
                );
            } else {
                bf16_chunks((a, b, o), n, block, simd::bf16_select_block::<O>, fold);
            }
            #[cfg(not(target_arch = "x86_64"))]
            bf16_chunks((a, b, o), n, block, simd::bf16_select_block::<O>, fold);
            flags.restore_if_changed();
        } else if size_of::<T>() == 1 {
            // float8 and smaller: ml_dtypes compares bit patterns, raising no
            // flags, and so do the order keys.
            let key = SortKey::new(&T::FORMAT);
            byte_chunks((a, b, o), n, block, |pa, pb, po| {
                simd::byte_select_block::<O>(key, pa, pb, po)
            });
        } else {
            blocks(n, block, |start, len| {
                let (x, y) = (&mut x[..len], &mut y[..len]);
                decode::<T>(a, start, &mut buf, x);
                decode::<T>(b, start, &mut buf, y);
                snan |= any_snan::<T>(x) | any_snan::<T>(y);
                let flags = FpFlags::save();
                if eigen_float::<T>() {
                    signals |= x
                        .iter()
                        .zip(y.iter())
                        .fold(false, |acc, (u, v)| acc | O::signals(*u, *v));
                }
                // The operands' codes as byte slices (borrowed when
                // contiguous), the choice written to a local block and copied
                // out once: slice loops the compiler vectorises, and no
                // overlap of `o` with `a` or `b` while reading.
                let size = size_of::<T>();
                let ca = a.bytes(start, len, size, &mut buf_a);
                let cb = b.bytes(start, len, size, &mut buf_b);
                let out = &mut buf_o[..len * size];
                let code_mask = T::FORMAT.code_mask();
                if size == 1 {
                    choose_codes::<O, 1>(x, y, ca, cb, out, code_mask);
                } else {
                    choose_codes::<O, 2>(x, y, ca, cb, out, code_mask);
                }
                flags.restore_if_changed();
                o.put_bytes(start, out, size);
            });
        }
        if signals && eigen_float::<T>() {
            raise_invalid();
        }
        signal_snan::<T>(snan);
    })
}
