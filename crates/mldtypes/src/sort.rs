//! Sorting codes by value: order-preserving integer keys derived from a
//! [`Format`] (or a sub-byte integer's width), a counting sort for
//! one-byte storage and an LSD radix sort for 16-bit storage.
//!
//! The order is NumPy's order for floats: by value, `-0` and `+0` equal,
//! every NaN equal to every other NaN and after every number (the order
//! `numpy.sort` gives for float32). [`float_key`] maps a code to an
//! unsigned key of [`Format::bits`] bits whose integer order is that
//! order, so a sort by key is a sort by value:
//!
//! | code | key |
//! |---|---|
//! | negative, magnitude `m` | `sign_mask − 1 − m` |
//! | positive, magnitude `m` (and `±0`) | `sign_mask − 1 + m` |
//! | any NaN | `code_mask` (the largest key) |
//! | unsigned formats (float8_e8m0fnu) | the code itself, NaN `code_mask` |
//!
//! Every sort here is stable: codes with equal keys (`-0`/`+0`, NaNs of
//! different sign or payload) keep their input order.
//!
//! # Examples
//!
//! ```
//! use mldtypes::format::FLOAT8_E4M3FN;
//! use mldtypes::sort::{byte_keys, counting_sort_u8};
//! // -1.0, NaN, +0, 2.0, -0 as float8_e4m3fn codes
//! let mut v = [0xb8u8, 0x7f, 0x00, 0x40, 0x80];
//! counting_sort_u8(&mut v, &byte_keys(|c| mldtypes::sort::float_key(&FLOAT8_E4M3FN, c))).unwrap();
//! assert_eq!(v, [0xb8, 0x00, 0x80, 0x40, 0x7f]); // -1, +0, -0 (input order), 2, NaN
//! ```

use std::collections::TryReserveError;

use crate::format::{Format, NanEncoding};

/// The order-preserving key of a float code (NumPy's float order: NaN last,
/// `-0 == +0`, all NaNs equal), in [`Format::bits`] bits. Bits of `code`
/// above the format's width are ignored, as the formats' decoders do.
/// The same as [`SortKey::key`] of `SortKey::new(format)`.
///
/// # Examples
///
/// ```
/// use mldtypes::format::{BFLOAT16, FLOAT8_E4M3FNUZ};
/// use mldtypes::sort::float_key;
/// let k = |c| float_key(&BFLOAT16, c);
/// assert!(k(0xff80) < k(0xbf80) && k(0xbf80) < k(0x0000)); // -inf < -1 < 0
/// assert_eq!(k(0x8000), k(0x0000)); // -0 == +0
/// assert!(k(0x7f80) < k(0xffc1)); // +inf < NaN (any sign)
/// assert_eq!(k(0x7fc0), 0xffff);
/// // fnuz: the code 0x80 is NaN, after the largest finite 0x7f
/// assert!(float_key(&FLOAT8_E4M3FNUZ, 0x7f) < float_key(&FLOAT8_E4M3FNUZ, 0x80));
/// ```
pub const fn float_key(format: &Format, code: u32) -> u32 {
    SortKey::new(format).key(code)
}

/// [`float_key`] of one format with its facts taken out once, for per-element
/// loops: a handful of integer operations without branches.
///
/// # Examples
///
/// ```
/// use mldtypes::format::FLOAT8_E5M2;
/// use mldtypes::sort::SortKey;
/// let k = SortKey::new(&FLOAT8_E5M2);
/// assert!(k.key(0xfc) < k.key(0xbc)); // -inf < -1
/// assert_eq!(k.key(0x7d), k.key(0xff)); // NaNs are equal
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    code_mask: u32,
    sign_mask: u32,
    /// Magnitudes at or above this are NaN (IEEE, all-ones NaN).
    nan_mag: u32,
    /// The NaN that is the code of negative zero ("fnuz"), or an impossible code.
    nan_code: u32,
}

impl SortKey {
    /// The key of `format`'s codes.
    pub const fn new(format: &Format) -> SortKey {
        let none = u32::MAX;
        let (nan_mag, nan_code) = match (format.has_nan(), format.nan_encoding) {
            (false, _) | (_, NanEncoding::None) => (none, none),
            (_, NanEncoding::Ieee) => (format.exp_mask() + 1, none),
            (_, NanEncoding::AllOnes) => (format.exp_mask() | format.man_mask(), none),
            (_, NanEncoding::NegativeZero) => (none, format.sign_mask()),
        };
        SortKey {
            code_mask: format.code_mask(),
            sign_mask: format.sign_mask(),
            nan_mag,
            nan_code,
        }
    }

    /// The format's code mask: the largest key, which only NaN has.
    pub const fn code_mask(&self) -> u32 {
        self.code_mask
    }

    /// The key of `code` (upper bits ignored): see [`float_key`].
    #[inline(always)]
    pub const fn key(&self, code: u32) -> u32 {
        let code = code & self.code_mask;
        let mag = code & !self.sign_mask;
        let neg = code & self.sign_mask != 0;
        // Unsigned formats: sign_mask 0, so the key is the code itself.
        let base = if self.sign_mask == 0 {
            0
        } else {
            self.sign_mask - 1
        };
        let k = if neg { base - mag } else { base + mag };
        if mag >= self.nan_mag || code == self.nan_code {
            self.code_mask
        } else {
            k
        }
    }
}

/// Whether distinct codes of `format` can share a key (`±0`, several NaN
/// codes): then sorting must move the stored codes, not only count keys.
///
/// # Examples
///
/// ```
/// use mldtypes::format::{FLOAT8_E4M3FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN};
/// use mldtypes::sort::shares_keys;
/// assert!(!shares_keys(&FLOAT8_E4M3FNUZ)); // one zero, one NaN code
/// assert!(!shares_keys(&FLOAT8_E8M0FNU));
/// assert!(shares_keys(&FLOAT4_E2M1FN)); // -0 and +0
/// ```
pub const fn shares_keys(format: &Format) -> bool {
    let several_nans = match format.nan_encoding {
        NanEncoding::Ieee => format.signed || format.man_bits > 1,
        NanEncoding::AllOnes => format.signed,
        NanEncoding::NegativeZero | NanEncoding::None => false,
    };
    format.has_signed_zero() || (format.has_nan() && several_nans)
}

/// The order-preserving key of a sub-byte integer stored in the low `bits`
/// bits of a byte (two's complement when `signed`; upper bits ignored):
/// the value minus the type's minimum, in `bits` bits.
///
/// # Examples
///
/// ```
/// use mldtypes::sort::int_key;
/// assert_eq!(int_key(4, true, 0x8), 0); // int4 -8
/// assert_eq!(int_key(4, true, 0xf7), 15); // int4 7, upper bits ignored
/// assert_eq!(int_key(2, false, 0x3), 3); // uint2 3
/// ```
pub const fn int_key(bits: u32, signed: bool, byte: u8) -> u32 {
    let mask = (1u32 << bits) - 1;
    let v = byte as u32 & mask;
    if signed {
        v ^ (1 << (bits - 1))
    } else {
        v
    }
}

/// The key of every byte value under `key` (a table for one-byte storage).
///
/// # Examples
///
/// ```
/// use mldtypes::sort::{byte_keys, int_key};
/// let t = byte_keys(|b| int_key(4, true, b as u8));
/// assert_eq!((t[0x8], t[0x7]), (0, 15));
/// ```
pub fn byte_keys(key: impl Fn(u32) -> u32) -> [u8; 256] {
    let mut t = [0u8; 256];
    for (b, k) in t.iter_mut().enumerate() {
        *k = key(b as u32) as u8;
    }
    t
}

/// Stable counting sort of one-byte codes by `keys[code]`: a histogram of
/// the 256 codes, then runs written in key order. When codes sharing a key
/// occur together (both zeros, several NaN codes) they are written in their
/// input order. Allocates only when such codes occur together.
///
/// # Errors
/// [`TryReserveError`] when the elements of shared keys cannot be set aside.
///
/// # Examples
///
/// ```
/// use mldtypes::sort::{byte_keys, counting_sort_u8, int_key};
/// let mut v = [3u8, 0xe, 0x8, 0x1]; // int4: 3, -2, -8, 1
/// counting_sort_u8(&mut v, &byte_keys(|b| int_key(4, true, b as u8))).unwrap();
/// assert_eq!(v, [0x8, 0xe, 0x1, 3]);
/// ```
pub fn counting_sort_u8(data: &mut [u8], keys: &[u8; 256]) -> Result<(), TryReserveError> {
    if data.len() < 2 {
        return Ok(());
    }
    let mut hist = [0usize; 256];
    count_bytes(data, &mut hist);
    // How many distinct codes of each key occur.
    let mut present = [0u16; 256];
    for c in 0..256 {
        if hist[c] > 0 {
            present[keys[c] as usize] += 1;
        }
    }
    let mixed: Vec<usize> = (0..256).filter(|&k| present[k] > 1).collect();
    // Elements of mixed keys, in input order (only when codes share a key).
    let mut mixed_vals: Vec<Vec<u8>> = Vec::new();
    if !mixed.is_empty() {
        let mut is_mixed = [false; 256];
        for &k in &mixed {
            is_mixed[k] = true;
        }
        mixed_vals = vec![Vec::new(); 256];
        for &k in &mixed {
            let n: usize = (0..256)
                .filter(|&c| keys[c] as usize == k)
                .map(|c| hist[c])
                .sum();
            mixed_vals[k].try_reserve_exact(n)?;
        }
        for &b in data.iter() {
            let k = keys[b as usize] as usize;
            if is_mixed[k] {
                mixed_vals[k].push(b);
            }
        }
    }
    // Codes in key order.
    let mut order: Vec<(u8, u8)> = (0..=255u8)
        .filter(|&c| hist[c as usize] > 0)
        .map(|c| (keys[c as usize], c))
        .collect();
    order.sort_unstable();
    let mut at = 0usize;
    let mut last_key: Option<u8> = None;
    for (k, c) in order {
        if present[k as usize] > 1 {
            if last_key != Some(k) {
                let vals = &mixed_vals[k as usize];
                data[at..at + vals.len()].copy_from_slice(vals);
                at += vals.len();
            }
        } else {
            let n = hist[c as usize];
            data[at..at + n].fill(c);
            at += n;
        }
        last_key = Some(k);
    }
    Ok(())
}

/// Histogram of bytes with four interleaved tables (fewer store-to-load
/// stalls on runs of one value).
fn count_bytes(data: &[u8], hist: &mut [usize; 256]) {
    let mut h = [[0u32; 256]; 4];
    for big in data.chunks(1 << 30) {
        let mut chunks = big.chunks_exact(4);
        for c in &mut chunks {
            h[0][c[0] as usize] += 1;
            h[1][c[1] as usize] += 1;
            h[2][c[2] as usize] += 1;
            h[3][c[3] as usize] += 1;
        }
        for &b in chunks.remainder() {
            h[0][b as usize] += 1;
        }
        for (i, t) in hist.iter_mut().enumerate() {
            *t += (h[0][i] + h[1][i] + h[2][i] + h[3][i]) as usize;
        }
        h = [[0u32; 256]; 4];
    }
}

/// Stable sort of the indices in `idx` by the key of the one-byte code they
/// point at (`keys[data[i]]`): NumPy's `argsort` contract, where `idx`
/// arrives holding a permutation (the identity, or a previous key's order in
/// `numpy.lexsort`) and leaves sorted.
///
/// # Errors
/// [`TryReserveError`] when the two scratch buffers (`idx.len()` bytes and
/// indices) cannot be allocated.
///
/// # Panics
/// If an index is out of `data`'s bounds.
///
/// # Examples
///
/// ```
/// use mldtypes::sort::{argsort_u8, byte_keys, int_key};
/// let v = [3u8, 0xe, 3, 0x8]; // int4: 3, -2, 3, -8
/// let mut idx = [0isize, 1, 2, 3];
/// argsort_u8(&v, &mut idx, &byte_keys(|b| int_key(4, true, b as u8))).unwrap();
/// assert_eq!(idx, [3, 1, 0, 2]);
/// ```
pub fn argsort_u8(data: &[u8], idx: &mut [isize], keys: &[u8; 256]) -> Result<(), TryReserveError> {
    if idx.len() < 2 {
        return Ok(());
    }
    let mut kb: Vec<u8> = Vec::new();
    kb.try_reserve_exact(idx.len())?;
    kb.extend(idx.iter().map(|&i| keys[data[i as usize] as usize]));
    let mut hist = [0usize; 256];
    count_bytes(&kb, &mut hist);
    if hist.contains(&idx.len()) {
        return Ok(());
    }
    let mut src: Vec<isize> = Vec::new();
    src.try_reserve_exact(idx.len())?;
    src.extend_from_slice(idx);
    let mut pos = prefix(&hist);
    for (k, i) in kb.into_iter().zip(src) {
        let p = &mut pos[k as usize];
        idx[*p] = i;
        *p += 1;
    }
    Ok(())
}

fn prefix(hist: &[usize; 256]) -> [usize; 256] {
    let mut pos = [0usize; 256];
    let mut s = 0;
    for (p, &h) in pos.iter_mut().zip(hist.iter()) {
        *p = s;
        s += h;
    }
    pos
}

/// Stable LSD radix sort of 16-bit codes by `key(code)` (two passes of one
/// byte each; a pass whose byte is the same for every element is skipped).
///
/// # Examples
///
/// ```
/// use mldtypes::format::BFLOAT16;
/// use mldtypes::sort::{float_key, radix_sort_u16};
/// // 1.0, NaN, -2.0, -0.0, +0.0 as bfloat16 bits
/// let mut v = [0x3f80u16, 0x7fc0, 0xc000, 0x8000, 0x0000];
/// radix_sort_u16(&mut v, |c| float_key(&BFLOAT16, c as u32) as u16).unwrap();
/// assert_eq!(v, [0xc000, 0x8000, 0x0000, 0x3f80, 0x7fc0]);
/// ```
pub fn radix_sort_u16(data: &mut [u16], key: impl Fn(u16) -> u16) -> Result<(), TryReserveError> {
    let n = data.len();
    if n < 2 {
        return Ok(());
    }
    if n <= 64 {
        insertion_sort(data, |&a| key(a));
        return Ok(());
    }
    let mut hist = [[0usize; 256]; 2];
    for &c in data.iter() {
        let k = key(c);
        hist[0][(k & 0xff) as usize] += 1;
        hist[1][(k >> 8) as usize] += 1;
    }
    let mut tmp: Vec<u16> = Vec::new();
    tmp.try_reserve_exact(n)?;
    tmp.resize(n, 0);
    let mut in_data = true;
    for (pass, h) in hist.iter().enumerate() {
        if h.contains(&n) {
            continue;
        }
        let shift = 8 * pass as u32;
        let mut pos = prefix(h);
        let (src, dst): (&[u16], &mut [u16]) = if in_data {
            (&*data, &mut tmp[..])
        } else {
            (&tmp[..], &mut *data)
        };
        for &c in src {
            let d = ((key(c) >> shift) & 0xff) as usize;
            dst[pos[d]] = c;
            pos[d] += 1;
        }
        in_data = !in_data;
    }
    if !in_data {
        data.copy_from_slice(&tmp);
    }
    Ok(())
}

fn insertion_sort<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    for i in 1..v.len() {
        let x = v[i];
        let kx = key(&x);
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > kx {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Stable sort of the indices in `idx` by `key(data[i])` for 16-bit codes
/// (the `argsort` contract of [`argsort_u8`]): an LSD radix sort of
/// packed (key, index) words.
///
/// # Errors
/// [`TryReserveError`] when the two scratch arrays of `idx.len()` words
/// cannot be allocated.
///
/// # Panics
/// If an index is out of `data`'s bounds or not below 2^48.
///
/// # Examples
///
/// ```
/// use mldtypes::format::BFLOAT16;
/// use mldtypes::sort::{argsort_u16, float_key};
/// let v = [0x3f80u16, 0x8000, 0xc000, 0x0000]; // 1, -0, -2, +0
/// let mut idx = [0isize, 1, 2, 3];
/// argsort_u16(&v, &mut idx, |c| float_key(&BFLOAT16, c as u32) as u16).unwrap();
/// assert_eq!(idx, [2, 1, 3, 0]);
/// ```
pub fn argsort_u16(
    data: &[u16],
    idx: &mut [isize],
    key: impl Fn(u16) -> u16,
) -> Result<(), TryReserveError> {
    let n = idx.len();
    if n < 2 {
        return Ok(());
    }
    let mut a: Vec<u64> = Vec::new();
    a.try_reserve_exact(n)?;
    a.extend(idx.iter().map(|&i| {
        assert!((i as u64) < 1 << 48, "index beyond 2^48");
        ((key(data[i as usize]) as u64) << 48) | i as u64
    }));
    let mut hist = [[0usize; 256]; 2];
    for &w in &a {
        hist[0][((w >> 48) & 0xff) as usize] += 1;
        hist[1][(w >> 56) as usize] += 1;
    }
    let mut b: Vec<u64> = Vec::new();
    b.try_reserve_exact(n)?;
    b.resize(n, 0);
    for (pass, h) in hist.iter().enumerate() {
        if h.contains(&n) {
            continue;
        }
        let shift = 48 + 8 * pass as u32;
        let mut pos = prefix(h);
        for &w in &a {
            let d = ((w >> shift) & 0xff) as usize;
            b[pos[d]] = w;
            pos[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    for (o, w) in idx.iter_mut().zip(a) {
        *o = (w & ((1 << 48) - 1)) as isize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ALL;

    fn value(f: &Format, c: u32) -> f64 {
        crate::float::core::decode_f64(f, c)
    }

    /// The key order equals NumPy's float order on every code of every format.
    #[test]
    fn keys_follow_value_order() {
        for f in ALL.iter().filter(|f| f.bits() <= 16) {
            let codes: Vec<u32> = (0..f.code_count()).collect();
            for &a in codes.iter().step_by(if f.bits() > 8 { 97 } else { 1 }) {
                for &b in &codes {
                    if f.bits() > 8 && b % 89 != 0 {
                        continue;
                    }
                    let (x, y) = (value(f, a), value(f, b));
                    let want = match (x.is_nan(), y.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Greater,
                        (false, true) => std::cmp::Ordering::Less,
                        _ => x.partial_cmp(&y).unwrap(),
                    };
                    assert_eq!(
                        float_key(f, a).cmp(&float_key(f, b)),
                        want,
                        "{} {a:#x} {b:#x}",
                        f.name
                    );
                    assert!(float_key(f, a) <= f.code_mask());
                    assert_eq!(float_key(f, a) == f.code_mask(), f.is_nan_code(a));
                }
            }
        }
    }

    #[test]
    fn shares_keys_matches_the_keys() {
        for f in ALL.iter().filter(|f| f.bits() <= 8) {
            let mut seen = std::collections::HashSet::new();
            let dup = (0..f.code_count()).any(|c| !seen.insert(float_key(f, c)));
            assert_eq!(dup, shares_keys(f), "{}", f.name);
        }
    }

    #[test]
    fn counting_sort_is_stable_on_shared_keys() {
        let f = crate::format::FLOAT8_E5M2;
        let keys = byte_keys(|c| float_key(&f, c));
        let mut v = vec![0x80u8, 0x7e, 0x00, 0xfd, 0x3c, 0x80, 0x7d, 0x00, 0xbc];
        counting_sort_u8(&mut v, &keys).unwrap();
        assert_eq!(v, [0xbc, 0x80, 0x00, 0x80, 0x00, 0x3c, 0x7e, 0xfd, 0x7d]);
    }

    #[test]
    fn radix_matches_a_stable_sort() {
        let f = crate::format::BFLOAT16;
        let key = |c: u16| float_key(&f, c as u32) as u16;
        let mut x = 0x1234_5678u32;
        let v: Vec<u16> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u16
            })
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|&c| key(c));
        let mut got = v.clone();
        radix_sort_u16(&mut got, key).unwrap();
        assert_eq!(got, want);
        let mut idx: Vec<isize> = (0..v.len() as isize).collect();
        argsort_u16(&v, &mut idx, key).unwrap();
        let mut want_idx: Vec<isize> = (0..v.len() as isize).collect();
        want_idx.sort_by_key(|&i| key(v[i as usize]));
        assert_eq!(idx, want_idx);
    }
}
