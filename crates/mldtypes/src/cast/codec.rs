//! A run-time codec for any format descriptor: scalar and slice conversions
//! between its codes and float32 / float64 and between the codes of two
//! formats, dispatched at run time to the fastest instruction set like the
//! rest of [`crate::cast`].
//!
//! A [`Codec`] is built from a [`Format`] (the named formats' constants, an
//! IEEE P3109 member from [`Format::p3109`], or any [`Format::new`]
//! descriptor). Its slice conversions take one of four routes
//! ([`Strategy`]):
//!
//! - [`Strategy::Compiled`]: the descriptor states a named format (every
//!   field but the name equal, e.g. `p3109_k8p4sf` and float8_e4m3fnuz):
//!   that format's compile-time kernels;
//! - [`Strategy::Descriptor`]: the same element code with the descriptor's
//!   parameters computed at run time and held in registers (every IEEE
//!   P3109 member);
//! - [`Strategy::Table`]: float32 → code through a 64 Ki-entry table
//!   (formats of at most 8 bits and 5 mantissa bits), for comparison;
//! - [`Strategy::Scalar`]: one element at a time through the scalar core
//!   ([`crate::float::core`]), for descriptors of a structure no kernel
//!   covers, and on [`Path::Scalar`].
//!
//! Every route gives the same bits (the tests compare every path and route
//! with the scalar core). Rounding is to nearest, ties to even, with
//! ml_dtypes' non-saturating overflow ([`Overflow::NonSaturating`]: ±inf,
//! or NaN in formats without infinities) or saturation.
//!
//! Codes are stored one per [`CodeWord`]: `u8` for formats of at most 8
//! bits (code in the low bits, as float4/float6 are), `u16` for wider ones
//! (a `u16` may hold a narrower format's code too). Bits above the format's
//! width are ignored on input and zero on output.
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::{Codec, Overflow};
//! use mldtypes::format::Format;
//! let c = Codec::new(&Format::p3109(8, 3, true, true).unwrap()).unwrap();
//! let mut codes = [0u8; 4];
//! c.encode_f32_slice(&[1.0, -0.0, 1e9, f32::NAN], &mut codes, Overflow::NonSaturating).unwrap();
//! assert_eq!(codes, [0x40, 0x00, 0x7f, 0x80]); // 1, 0 (no −0), +inf, NaN
//! let mut back = [0f32; 4];
//! c.decode_f32_slice(&codes, &mut back).unwrap();
//! assert_eq!(back[..3], [1.0, 0.0, f32::INFINITY]);
//! ```

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use super::dispatch::{self, Path};
use super::kernels::{self, Code, NearestEven, Params};
use super::{CastError, Overflow};
use crate::float::core;
use crate::format::{self, Format, FormatError, NanEncoding, NonFinite};
use crate::round::{Random, RoundMode, Rounding};

/// Which implementation converts a [`Codec`]'s slices. Every strategy
/// gives the same bits (the tests compare every path and strategy with the
/// scalar core); [`Codec::new`] picks [`Strategy::Compiled`] for a
/// descriptor that states a named format (every field but the name equal,
/// e.g. `p3109_k8p4sf` and float8_e4m3fnuz), [`Strategy::Descriptor`] for
/// the IEEE P3109 structures, [`Strategy::Scalar`] otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The compile-time kernels of the named format the descriptor states.
    Compiled,
    /// The descriptor-driven kernels, parameters computed at run time.
    Descriptor,
    /// float32 → code through a 64 Ki-entry table (other directions as
    /// [`Strategy::Descriptor`]).
    Table,
    /// One element at a time through the scalar core.
    Scalar,
}

impl Strategy {
    /// A short lowercase name (`"compiled"`, `"descriptor"`, `"table"`, `"scalar"`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::cast::Strategy::Descriptor.name(), "descriptor");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Compiled => "compiled",
            Strategy::Descriptor => "descriptor",
            Strategy::Table => "table",
            Strategy::Scalar => "scalar",
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The storage word of one code in a [`Codec`]'s slices: `u8` (formats of
/// at most 8 bits) or `u16` (any format). Sealed.
pub trait CodeWord: bytemuck::Pod + Code + sealed::Sealed {
    /// Bits the word holds.
    const BITS: u32;
}

impl sealed::Sealed for u8 {}
impl CodeWord for u8 {
    const BITS: u32 = 8;
}
impl sealed::Sealed for u16 {}
impl CodeWord for u16 {
    const BITS: u32 = 16;
}

/// The position in [`format::ALL`] of the named format whose fields (all
/// but the name) `f` states: a match on four fields, then the other three
/// compared (kernel selection calls this per slice).
pub(crate) fn named_id(f: &Format) -> Option<usize> {
    use NonFinite::*;
    let i = match (f.exp_bits, f.man_bits, f.bias, f.non_finite) {
        (8, 7, 127, Ieee) => 0,      // bfloat16
        (5, 10, 15, Ieee) => 1,      // float16
        (3, 4, 3, Ieee) => 2,        // float8_e3m4
        (4, 3, 7, Ieee) => 3,        // float8_e4m3
        (4, 3, 7, NanOnly) => 4,     // float8_e4m3fn
        (4, 3, 8, NanOnly) => 5,     // float8_e4m3fnuz
        (4, 3, 11, NanOnly) => 6,    // float8_e4m3b11fnuz
        (5, 2, 15, Ieee) => 7,       // float8_e5m2
        (5, 2, 16, NanOnly) => 8,    // float8_e5m2fnuz
        (8, 0, 127, NanOnly) => 9,   // float8_e8m0fnu
        (2, 3, 1, FiniteOnly) => 10, // float6_e2m3fn
        (3, 2, 3, FiniteOnly) => 11, // float6_e3m2fn
        (2, 1, 1, FiniteOnly) => 12, // float4_e2m1fn
        _ => return None,
    };
    let g = &format::ALL[i];
    (g.nan_encoding == f.nan_encoding && g.signed == f.signed && g.has_zero == f.has_zero)
        .then_some(i)
}

/// Whether the descriptor kernels cover `f`'s structure: the four IEEE
/// P3109 structures (signed with the would-be −0 NaN, unsigned with the
/// all-ones NaN; with or without infinities).
fn descriptor_kernels_cover(f: &Format) -> bool {
    matches!(
        (f.non_finite, f.nan_encoding, f.signed, f.has_zero),
        (
            NonFinite::NanOnly | NonFinite::InfAtMax,
            NanEncoding::NegativeZero,
            true,
            true
        ) | (
            NonFinite::NanOnly | NonFinite::InfAtMax,
            NanEncoding::AllOnes,
            false,
            true
        )
    )
}

/// Evaluates `$body` with `$Q` the run-time kind of `$f` (one of the
/// structures [`descriptor_kernels_cover`] lists), or `$other`.
macro_rules! with_kind {
    ($f:expr, |$Q:ident| $body:expr, $other:expr) => {{
        use crate::float::kernels::K;
        let f: &Format = $f;
        match (f.non_finite, f.nan_encoding, f.signed, f.has_zero) {
            (NonFinite::InfAtMax, NanEncoding::NegativeZero, true, true) => {
                type $Q = K<3, 2, true, true>;
                $body
            }
            (NonFinite::NanOnly, NanEncoding::NegativeZero, true, true) => {
                type $Q = K<1, 2, true, true>;
                $body
            }
            (NonFinite::InfAtMax, NanEncoding::AllOnes, false, true) => {
                type $Q = K<3, 1, false, true>;
                $body
            }
            (NonFinite::NanOnly, NanEncoding::AllOnes, false, true) => {
                type $Q = K<1, 1, false, true>;
                $body
            }
            _ => $other,
        }
    }};
}

/// Picks the kernel module for `path`.
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

/// Everything the slice conversions of one format need; cheap to build
/// (no tables).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub(crate) fmt: Format,
    pub(crate) params: Params,
    pub(crate) strategy: Strategy,
}

impl Plan {
    /// The default plan of `fmt`: compiled kernels for a named format,
    /// descriptor kernels where they cover the structure, else scalar.
    pub(crate) fn new(fmt: &Format) -> Plan {
        let strategy = if named_id(fmt).is_some() {
            Strategy::Compiled
        } else if descriptor_kernels_cover(fmt) {
            Strategy::Descriptor
        } else {
            Strategy::Scalar
        };
        Plan {
            fmt: *fmt,
            params: Params::of(fmt),
            strategy,
        }
    }

    /// float32 → codes on `path` (not [`Path::Scalar`], which callers
    /// route to the scalar core themselves).
    pub(crate) fn encode_f32<C: Code>(&self, path: Path, src: &[f32], dst: &mut [C], sat: bool) {
        let p = &self.params;
        match self.strategy {
            Strategy::Compiled => {
                let k = super::engine::pick_enc_f32::<C>(path, &self.fmt, sat);
                // SAFETY: picked for `path`, which the caller confirmed this
                // CPU runs.
                unsafe { k(src, dst) }
            }
            Strategy::Table if C::BYTES == 1 && table_eligible(&self.fmt) && !sat => {
                let t = encode_table(&self.fmt);
                table_encode(path, t, src, bytemuck::cast_slice_mut(dst))
            }
            Strategy::Descriptor | Strategy::Table => with_kind!(
                &self.fmt,
                |Q| on_path!(path, |m| unsafe {
                    // SAFETY: as above.
                    match (p.fits_f32, sat) {
                        (true, false) => m::rt_enc32::<Q, NearestEven, C, false>(p, src, dst),
                        (true, true) => m::rt_enc32::<Q, NearestEven, C, true>(p, src, dst),
                        (false, false) => {
                            m::rt_enc32_via64::<Q, NearestEven, C, false>(p, src, dst)
                        }
                        (false, true) => m::rt_enc32_via64::<Q, NearestEven, C, true>(p, src, dst),
                    }
                }),
                self.encode_f32_scalar(src, dst, sat)
            ),
            Strategy::Scalar => self.encode_f32_scalar(src, dst, sat),
        }
    }

    /// float64 → codes on `path`.
    pub(crate) fn encode_f64<C: Code>(&self, path: Path, src: &[f64], dst: &mut [C], sat: bool) {
        let p = &self.params;
        match self.strategy {
            Strategy::Compiled => {
                let k = super::engine::pick_enc_f64::<C>(path, &self.fmt, sat);
                // SAFETY: picked for `path`, which the caller confirmed.
                unsafe { k(src, dst) }
            }
            Strategy::Descriptor | Strategy::Table => with_kind!(
                &self.fmt,
                |Q| on_path!(path, |m| unsafe {
                    // SAFETY: as above.
                    match (p.fits_f64, p.covers_f64, sat) {
                        (true, _, false) => m::rt_enc64::<Q, NearestEven, C, false>(p, src, dst),
                        (true, _, true) => m::rt_enc64::<Q, NearestEven, C, true>(p, src, dst),
                        (false, true, false) => {
                            m::rt_enc64_wide::<Q, NearestEven, C, false>(p, src, dst)
                        }
                        (false, true, true) => {
                            m::rt_enc64_wide::<Q, NearestEven, C, true>(p, src, dst)
                        }
                        (false, false, _) => self.encode_f64_scalar(src, dst, sat),
                    }
                }),
                self.encode_f64_scalar(src, dst, sat)
            ),
            Strategy::Scalar => self.encode_f64_scalar(src, dst, sat),
        }
    }

    /// Codes → float32 on `path`.
    pub(crate) fn decode_f32<C: Code>(&self, path: Path, src: &[C], dst: &mut [f32]) {
        let p = &self.params;
        match self.strategy {
            Strategy::Compiled => {
                let k = super::engine::pick_dec_f32::<C>(path, &self.fmt);
                // SAFETY: picked for `path`, which the caller confirmed.
                unsafe { k(src, dst) }
            }
            Strategy::Descriptor | Strategy::Table => with_kind!(
                &self.fmt,
                |Q| on_path!(path, |m| unsafe {
                    // SAFETY: as above.
                    if p.fits_f32 {
                        m::rt_dec32::<Q, C>(p, src, dst)
                    } else {
                        m::rt_dec32_via64::<Q, C>(p, src, dst)
                    }
                }),
                self.decode_f32_scalar(src, dst)
            ),
            Strategy::Scalar => self.decode_f32_scalar(src, dst),
        }
    }

    /// Codes → float64 on `path`; `None` when the caller should go through
    /// float32 (formats whose values are float32s: exact, and the compiled
    /// kernels' NaN rules).
    pub(crate) fn decode_f64<C: Code>(&self, path: Path, src: &[C], dst: &mut [f64]) -> bool {
        if self.fmt.fits_f32() {
            return false;
        }
        let p = &self.params;
        match self.strategy {
            Strategy::Descriptor | Strategy::Table => with_kind!(
                &self.fmt,
                |Q| on_path!(path, |m| unsafe {
                    // SAFETY: picked for `path`, which the caller confirmed.
                    m::rt_dec64::<Q, C>(p, src, dst)
                }),
                self.decode_f64_scalar(src, dst)
            ),
            _ => self.decode_f64_scalar(src, dst),
        }
        true
    }

    pub(crate) fn encode_f32_scalar<C: Code>(&self, src: &[f32], dst: &mut [C], sat: bool) {
        let ov = overflow(sat);
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(core::encode_f32_generic(&self.fmt, *s, ov));
        }
    }

    pub(crate) fn encode_f64_scalar<C: Code>(&self, src: &[f64], dst: &mut [C], sat: bool) {
        let ov = overflow(sat);
        for (d, s) in dst.iter_mut().zip(src) {
            *d = C::from_u32(core::encode_f64_generic(&self.fmt, *s, ov));
        }
    }

    pub(crate) fn decode_f32_scalar<C: Code>(&self, src: &[C], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = core::decode_f32_generic(&self.fmt, s.to_u32());
        }
    }

    pub(crate) fn decode_f64_scalar<C: Code>(&self, src: &[C], dst: &mut [f64]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = core::decode_f64_generic(&self.fmt, s.to_u32());
        }
    }
}

fn overflow(sat: bool) -> Overflow {
    if sat {
        Overflow::Saturating
    } else {
        Overflow::NonSaturating
    }
}

/// Whether float32 → code may go through the 64 Ki-entry table: a format
/// of at most 8 bits and 5 mantissa bits whose rounding boundaries (ties,
/// the overflow threshold) are all multiples of 2^17 in float32 bit space:
/// its smallest tie, half the smallest subnormal, at least 2^-132.
pub(crate) fn table_eligible(f: &Format) -> bool {
    f.bits() <= 8
        && f.man_bits <= 5
        && f.fits_f32()
        && f.has_zero
        && f.min_exp() - f.man_bits as i32 > -132
}

type EncodeTable = &'static [u8; 1 << 16];

/// The 64 Ki-entry float32 → code table of `f` under a deterministic
/// `mode` (`sat`: saturating), made by `build` on first use and kept for
/// the process (one per distinct descriptor, mode and saturation).
///
/// Entry `i` is the code of the float32 `i << 16`. For the formats of
/// [`table_eligible`] the rounding bit of every float32 lies in its top 16
/// bits, so an input's code is the entry of its top 16 bits with the
/// lowest one set when any of its low 16 bits is (a nonzero bit below the
/// rounding bit, as those are): the five deterministic modes, saturating
/// or not, depend only on the sign, the kept bits, the rounding bit and
/// whether anything below it is set. `build` fills the entries from the
/// float32 values `i << 16` by a conversion equal to the scalar core's.
pub(crate) fn encode_table_with(
    f: &Format,
    mode: RoundMode,
    sat: bool,
    build: impl FnOnce(&[f32], &mut [u8]),
) -> EncodeTable {
    static TABLES: Kept<(Format, RoundMode, bool), [u8; 1 << 16]> = OnceLock::new();
    kept(&TABLES, (*f, mode, sat), || {
        let x: Vec<f32> = (0..1u32 << 16).map(|i| f32::from_bits(i << 16)).collect();
        let mut t = Box::new([0u8; 1 << 16]);
        build(&x, &mut t[..]);
        t
    })
}

/// The 32 Ki-entry table of `f` under a stochastic `mode` with `sr_bits`
/// random bits (`sat`: saturating) of the kernels' `enc32_sr`, made by
/// `build` on first use and kept for the process: `build` fills entry `i`
/// for the float32 bits `i << 17`, which stand for every float32 whose top
/// 15 bits are `i`, with bit 17 set when any below is: for the formats of
/// [`table_eligible`] a float32's kept bits, its number of dropped bits
/// and a NaN's payload lie in its top 14 bits, and bit 17 tells a NaN
/// from an infinity.
pub(crate) fn sr_table_with(
    f: &Format,
    mode: RoundMode,
    sat: bool,
    sr_bits: u32,
    build: impl FnOnce(&[u32], &mut [u32]),
) -> &'static [u32; 1 << 15] {
    static TABLES: Kept<(Format, RoundMode, bool, u32), [u32; 1 << 15]> = OnceLock::new();
    kept(&TABLES, (*f, mode, sat, sr_bits), || {
        let u: Vec<u32> = (0..1u32 << 15).map(|i| i << 17).collect();
        let mut t = Box::new([0u32; 1 << 15]);
        build(&u, &mut t[..]);
        t
    })
}

/// Tables made once and kept for the process, by key.
type Kept<K, T> = OnceLock<RwLock<HashMap<K, &'static T>>>;

/// The table of `key` in `tables`, made by `build` if it is not there yet
/// (without holding the lock while building; a table two threads make at
/// once is kept once).
fn kept<K: Eq + std::hash::Hash, T>(
    tables: &'static Kept<K, T>,
    key: K,
    build: impl FnOnce() -> Box<T>,
) -> &'static T {
    let tables = tables.get_or_init(Default::default);
    if let Some(t) = tables.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return t;
    }
    let t: &'static T = Box::leak(build());
    tables
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_insert(t)
}

/// [`encode_table_with`] of `astype` (round to nearest even, not
/// saturating), from the scalar core.
fn encode_table(f: &Format) -> EncodeTable {
    encode_table_with(f, RoundMode::NearestEven, false, |x, t| {
        for (e, v) in t.iter_mut().zip(x) {
            *e = core::encode_f32_generic(f, *v, Overflow::NonSaturating) as u8;
        }
    })
}

/// float32 → one-byte codes through a table of [`encode_table`] on `path`
/// (AVX2 gathers on [`Path::Avx2`], which LLVM does not emit there).
pub(crate) fn table_encode(path: Path, t: &[u8; 1 << 16], src: &[f32], dst: &mut [u8]) {
    match path {
        // SAFETY: the caller confirmed that this CPU runs `path`.
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => unsafe { super::hw::table_enc32_avx2(t, src, dst) },
        _ => on_path!(path, |m| unsafe { m::table_enc32(t, src, dst) }),
    }
}

/// The 256-entry code → code table of two formats of at most 8 bits, built
/// from the scalar core on first use and kept for the process.
pub(crate) fn table8(from: &Format, to: &Format, ov: Overflow) -> &'static [u8; 256] {
    // The named pairs: a fixed array (no lock on the way).
    const N: usize = format::ALL.len();
    static NAMED: [OnceLock<[u8; 256]>; N * N * 2] = [const { OnceLock::new() }; N * N * 2];
    let build = || {
        let mut t = [0u8; 256];
        for (c, e) in t.iter_mut().enumerate() {
            *e = core::convert_generic(from, to, c as u32 & from.code_mask(), ov) as u8;
        }
        t
    };
    let sat = (ov == Overflow::Saturating) as usize;
    if let (Some(i), Some(j)) = (named_id(from), named_id(to)) {
        if format::ALL[i] == *from && format::ALL[j] == *to {
            return NAMED[(i * N + j) * 2 + sat].get_or_init(build);
        }
    }
    type Key = (Format, Format, bool);
    static OTHERS: OnceLock<RwLock<HashMap<Key, &'static [u8; 256]>>> = OnceLock::new();
    let others = OTHERS.get_or_init(Default::default);
    let key = (*from, *to, sat == 1);
    if let Some(t) = others.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return t;
    }
    let t: &'static [u8; 256] = Box::leak(Box::new(build()));
    others
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_insert(t)
}

/// A run-time codec for one format descriptor: scalar and slice
/// conversions between its codes and float32 / float64, and to the codes
/// of another format, on the fastest instruction set this CPU has (or a
/// forced [`Path`]).
///
/// Conversions are bit-identical to the scalar core
/// ([`crate::float::core`]) on every path and [`Strategy`]: round to
/// nearest, ties to even (the float8_e8m0fnu descriptor rounds ties away,
/// as ml_dtypes), ml_dtypes' overflow or saturation by [`Overflow`], exact
/// decoding where the format's values are float32s / float64s and
/// correct rounding where they reach beyond (IEEE P3109 members with more
/// than 8 / 11 exponent bits). Slices run on the calling thread.
///
/// Cheap to build (no tables); `Clone`, `Send` and `Sync`.
///
/// # Examples
///
/// ```
/// use mldtypes::cast::{Codec, Overflow, Strategy};
/// use mldtypes::format::{Format, P3109, FLOAT8_E4M3FN};
/// let e4m3 = Codec::new(&FLOAT8_E4M3FN).unwrap();
/// assert_eq!(e4m3.strategy(), Strategy::Compiled);
/// assert_eq!(e4m3.encode_f32(464.0, Overflow::NonSaturating), 0x7e);
///
/// let p = Codec::new(&P3109::new(16, 8, true, true).unwrap().format()).unwrap();
/// assert_eq!(p.strategy(), Strategy::Descriptor);
/// let mut codes = [0u16; 2];
/// p.encode_f64_slice(&[1.0, -2.5], &mut codes, Overflow::NonSaturating).unwrap();
/// assert_eq!(p.decode_f64(codes[1] as u32), -2.5);
/// ```
#[derive(Clone, Debug)]
pub struct Codec {
    plan: Plan,
    decode_table: OnceLock<Box<[f32; 256]>>,
}

impl Codec {
    /// The codec of `fmt`, with the default [`Strategy`]: compiled kernels
    /// when `fmt` states a named format, descriptor kernels for the IEEE
    /// P3109 structures, the scalar core for anything else.
    ///
    /// # Errors
    ///
    /// The [`FormatError`] of [`Format::validate`] for a descriptor whose
    /// fields were changed into an invalid one.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 1, false, true).unwrap()).unwrap();
    /// assert_eq!(c.format().name, "p3109_k8p1ue");
    /// ```
    pub fn new(fmt: &Format) -> Result<Codec, FormatError> {
        fmt.validate()?;
        Ok(Codec {
            plan: Plan::new(fmt),
            decode_table: OnceLock::new(),
        })
    }

    /// The codec of `fmt` with its slices converted by `strategy` (for
    /// benchmarks and tests; every strategy gives the same bits).
    ///
    /// # Errors
    ///
    /// [`FormatError`] as [`Codec::new`]; [`FormatError::NonFinite`] when the
    /// strategy cannot convert this format: [`Strategy::Compiled`] needs a
    /// descriptor that states a named format, [`Strategy::Descriptor`] and
    /// [`Strategy::Table`] an IEEE P3109 structure (or a named format), and
    /// [`Strategy::Table`] a format of at most 8 bits with at most 5
    /// mantissa bits.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Strategy};
    /// use mldtypes::format::{Format, FLOAT8_E4M3FNUZ};
    /// // p3109_k8p4sf has float8_e4m3fnuz's layout: both kernels apply.
    /// let f = Format::p3109(8, 4, true, false).unwrap();
    /// assert!(Codec::with_strategy(&f, Strategy::Compiled).is_ok());
    /// assert!(Codec::with_strategy(&f, Strategy::Descriptor).is_ok());
    /// assert!(Codec::with_strategy(&Format::p3109(8, 7, true, false).unwrap(), Strategy::Table).is_err());
    /// ```
    pub fn with_strategy(fmt: &Format, strategy: Strategy) -> Result<Codec, FormatError> {
        let mut c = Codec::new(fmt)?;
        let ok = match strategy {
            Strategy::Compiled => named_id(fmt).is_some(),
            Strategy::Descriptor => descriptor_kernels_cover(fmt),
            Strategy::Table => descriptor_kernels_cover(fmt) && table_eligible(fmt),
            Strategy::Scalar => true,
        };
        if !ok {
            return Err(FormatError::NonFinite);
        }
        c.plan.strategy = strategy;
        Ok(c)
    }

    /// The descriptor.
    ///
    /// # Examples
    ///
    /// ```
    /// let c = mldtypes::cast::Codec::new(&mldtypes::format::BFLOAT16).unwrap();
    /// assert_eq!(c.format().name, "bfloat16");
    /// ```
    pub fn format(&self) -> &Format {
        &self.plan.fmt
    }

    /// How slices are converted.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Strategy};
    /// let c = Codec::new(&mldtypes::format::Format::p3109(8, 4, true, false).unwrap()).unwrap();
    /// assert_eq!(c.strategy(), Strategy::Compiled); // float8_e4m3fnuz's layout
    /// ```
    pub fn strategy(&self) -> Strategy {
        self.plan.strategy
    }

    /// Bytes of the storage word of one code: 1 for formats of at most 8
    /// bits, 2 otherwise (NumPy's itemsize of the format).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// assert_eq!(Codec::new(&Format::p3109(6, 3, true, true).unwrap()).unwrap().itemsize(), 1);
    /// assert_eq!(Codec::new(&Format::p3109(9, 3, true, true).unwrap()).unwrap().itemsize(), 2);
    /// ```
    pub fn itemsize(&self) -> usize {
        if self.plan.fmt.bits() <= 8 {
            1
        } else {
            2
        }
    }

    /// The float32 value of `code` (low bits of the format's width): exact
    /// where the format's values are float32s, rounded to nearest even
    /// otherwise; NaN codes give the NaN [`core::decode_f32`] gives.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 3, true, true).unwrap()).unwrap();
    /// assert_eq!(c.decode_f32(0x7e), 49152.0);
    /// assert_eq!(c.decode_f32(0xff), f32::NEG_INFINITY);
    /// assert!(c.decode_f32(0x80).is_nan());
    /// ```
    #[inline]
    pub fn decode_f32(&self, code: u32) -> f32 {
        if let Some(t) = self.table() {
            return t[(code & self.plan.fmt.code_mask()) as usize];
        }
        core::decode_f32(&self.plan.fmt, code)
    }

    /// The float64 value of `code`: exact where the format's values are
    /// float64s, rounded to nearest even otherwise (IEEE P3109 members with
    /// 12 to 16 exponent bits; [`core::value_parts`] gives their exact
    /// value).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(16, 1, true, true).unwrap()).unwrap();
    /// assert_eq!(c.decode_f64(0x7ffe), f64::INFINITY); // 2^16382 overflows float64
    /// assert_eq!(c.decode_f64(0x4000), 1.0);
    /// ```
    #[inline]
    pub fn decode_f64(&self, code: u32) -> f64 {
        core::decode_f64(&self.plan.fmt, code)
    }

    /// The code of `x` rounded to nearest, ties to even, with overflow `ov`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow};
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 3, false, false).unwrap()).unwrap();
    /// assert_eq!(c.encode_f32(-1.0, Overflow::NonSaturating), 0xff); // unsigned: NaN
    /// assert_eq!(c.encode_f32(-1e-30, Overflow::NonSaturating), 0x00); // rounds to 0
    /// ```
    #[inline]
    pub fn encode_f32(&self, x: f32, ov: Overflow) -> u32 {
        core::encode_f32(&self.plan.fmt, x, ov)
    }

    /// The code of `x` rounded once to nearest, ties to even (never through
    /// float32), with overflow `ov`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow};
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 3, true, true).unwrap()).unwrap();
    /// assert_eq!(c.encode_f64(1e300, Overflow::NonSaturating), 0x7f); // +inf
    /// assert_eq!(c.encode_f64(1e300, Overflow::Saturating), 0x7e); // max
    /// ```
    #[inline]
    pub fn encode_f64(&self, x: f64, ov: Overflow) -> u32 {
        core::encode_f64(&self.plan.fmt, x, ov)
    }

    /// The 256 float32 values of a format of at most 8 bits, indexed by
    /// code (bits above the format's width ignored); `None` for wider
    /// formats. Built on first use.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(4, 2, true, false).unwrap()).unwrap();
    /// let t = c.decode_table().unwrap();
    /// assert_eq!(t[0x7], 3.0); // p3109_k4p2sf's largest value
    /// assert_eq!(t[0x17], 3.0); // high bits ignored
    /// ```
    pub fn decode_table(&self) -> Option<&[f32; 256]> {
        self.table()
    }

    #[inline]
    fn table(&self) -> Option<&[f32; 256]> {
        if self.plan.fmt.bits() > 8 {
            return None;
        }
        Some(self.decode_table.get_or_init(|| {
            let f = &self.plan.fmt;
            let mut t = Box::new([0f32; 256]);
            for (c, e) in t.iter_mut().enumerate() {
                *e = core::decode_f32(f, c as u32 & f.code_mask());
            }
            t
        }))
    }

    fn check_word<C: CodeWord>(&self) -> Result<(), CastError> {
        let bits = self.plan.fmt.bits();
        if bits > C::BITS {
            return Err(CastError::CodeWord {
                format: self.plan.fmt.name,
                bits,
                word_bits: C::BITS,
            });
        }
        Ok(())
    }

    /// Rounds every float32 of `src` into `dst` (one code per word) on the
    /// calling thread and the current [`Path`].
    ///
    /// # Errors
    ///
    /// [`CastError::LengthMismatch`] if the lengths differ,
    /// [`CastError::CodeWord`] if `C` is narrower than the format; nothing
    /// is written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow};
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 4, true, true).unwrap()).unwrap();
    /// let mut y = [0u8; 3];
    /// c.encode_f32_slice(&[0.1, 240.0, 1e6], &mut y, Overflow::Saturating).unwrap();
    /// assert_eq!(y, [0x25, 0x7e, 0x7e]); // 0.1015625, and the largest value 224 twice
    /// ```
    pub fn encode_f32_slice<C: CodeWord>(
        &self,
        src: &[f32],
        dst: &mut [C],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.encode_f32_slice_on(dispatch::path(), src, dst, ov)
    }

    /// [`Codec::encode_f32_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`], and [`CastError::PathUnavailable`] if
    /// this CPU cannot run `path`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow, Path};
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 4, true, true).unwrap()).unwrap();
    /// let mut y = [0u8; 1];
    /// c.encode_f32_slice_on(Path::Scalar, &[1.0], &mut y, Overflow::NonSaturating).unwrap();
    /// assert_eq!(y, [0x40]); // bias 8
    /// ```
    pub fn encode_f32_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[f32],
        dst: &mut [C],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        let sat = ov == Overflow::Saturating;
        if path == Path::Scalar {
            self.plan.encode_f32_scalar(src, dst, sat);
        } else {
            self.plan.encode_f32(path, src, dst, sat);
        }
        Ok(())
    }

    /// Rounds every float64 of `src` into `dst` once (never through
    /// float32), on the calling thread and the current [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow};
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(16, 1, true, true).unwrap()).unwrap();
    /// let mut y = [0u16; 2];
    /// c.encode_f64_slice(&[f64::MAX, 5e-324], &mut y, Overflow::NonSaturating).unwrap();
    /// assert_eq!(y, [0x4000 + 1024, 0x4000 - 1074]); // 2^1024 and 2^-1074, exactly
    /// ```
    pub fn encode_f64_slice<C: CodeWord>(
        &self,
        src: &[f64],
        dst: &mut [C],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.encode_f64_slice_on(dispatch::path(), src, dst, ov)
    }

    /// [`Codec::encode_f64_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice_on`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow, Path};
    /// let c = Codec::new(&mldtypes::format::FLOAT8_E5M2).unwrap();
    /// let mut y = [0u8; 1];
    /// c.encode_f64_slice_on(Path::Portable, &[3.3], &mut y, Overflow::NonSaturating).unwrap();
    /// assert_eq!(y, [0x43]); // 3.5
    /// ```
    pub fn encode_f64_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[f64],
        dst: &mut [C],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        let sat = ov == Overflow::Saturating;
        if path == Path::Scalar {
            self.plan.encode_f64_scalar(src, dst, sat);
        } else {
            self.plan.encode_f64(path, src, dst, sat);
        }
        Ok(())
    }

    /// The float32 values of the codes of `src`, on the calling thread and
    /// the current [`Path`] (see [`Codec::decode_f32`]).
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(8, 1, true, true).unwrap()).unwrap();
    /// let mut y = [0f32; 3];
    /// c.decode_f32_slice(&[0x40u8, 0x41, 0xc0], &mut y).unwrap();
    /// assert_eq!(y, [1.0, 2.0, -1.0]);
    /// ```
    pub fn decode_f32_slice<C: CodeWord>(
        &self,
        src: &[C],
        dst: &mut [f32],
    ) -> Result<(), CastError> {
        self.decode_f32_slice_on(dispatch::path(), src, dst)
    }

    /// [`Codec::decode_f32_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice_on`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Path};
    /// let c = Codec::new(&mldtypes::format::FLOAT4_E2M1FN).unwrap();
    /// let mut y = [0f32; 2];
    /// c.decode_f32_slice_on(Path::Scalar, &[0x7u8, 0xf], &mut y).unwrap();
    /// assert_eq!(y, [6.0, -6.0]);
    /// ```
    pub fn decode_f32_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[C],
        dst: &mut [f32],
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        if path == Path::Scalar {
            self.plan.decode_f32_scalar(src, dst);
        } else {
            self.plan.decode_f32(path, src, dst);
        }
        Ok(())
    }

    /// The float64 values of the codes of `src` (see [`Codec::decode_f64`]).
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// let c = Codec::new(&Format::p3109(12, 1, true, true).unwrap()).unwrap();
    /// let mut y = [0f64; 1];
    /// c.decode_f64_slice(&[0x400u16 + 1000], &mut y).unwrap();
    /// assert_eq!(y[0], 2f64.powi(1000));
    /// ```
    pub fn decode_f64_slice<C: CodeWord>(
        &self,
        src: &[C],
        dst: &mut [f64],
    ) -> Result<(), CastError> {
        self.decode_f64_slice_on(dispatch::path(), src, dst)
    }

    /// [`Codec::decode_f64_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice_on`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Path};
    /// let c = Codec::new(&mldtypes::format::FLOAT8_E4M3FN).unwrap();
    /// let mut y = [0f64; 1];
    /// c.decode_f64_slice_on(Path::Portable, &[0x7eu8], &mut y).unwrap();
    /// assert_eq!(y, [448.0]);
    /// ```
    pub fn decode_f64_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[C],
        dst: &mut [f64],
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        if path == Path::Scalar {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = core::decode_f64(&self.plan.fmt, s.to_u32());
            }
            return Ok(());
        }
        if self.plan.fmt.fits_f32() {
            // Exact through the float32 value; NaN codes by the scalar core
            // (its NaN widening rules).
            let mut tmp = [0f32; 1024];
            for (s, d) in src.chunks(1024).zip(dst.chunks_mut(1024)) {
                let t = &mut tmp[..s.len()];
                self.plan.decode_f32(path, s, t);
                for ((y, x), c) in d.iter_mut().zip(t.iter()).zip(s) {
                    *y = if x.is_nan() {
                        core::decode_f64(&self.plan.fmt, c.to_u32())
                    } else {
                        *x as f64
                    };
                }
            }
            return Ok(());
        }
        self.plan.decode_f64(path, src, dst);
        Ok(())
    }

    /// Rounds every float32 of `src` into `dst` under `r` (any mode of
    /// [`crate::round`], saturation, explicit or seeded random numbers), on
    /// the calling thread and the current [`Path`]. The stochastic "fast"
    /// modes compare in float64 precision, as gfloat's `round_ndarray` does
    /// on float32 arrays. `RoundMode::NearestEven` without saturation or
    /// random numbers gives [`Codec::encode_f32_slice`]'s bits (for
    /// float8_e8m0fnu see [`crate::round`]).
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`], and [`CastError::Rounding`] for a
    /// rounding [`Rounding::validate`] refuses; nothing is written then.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::format::Format;
    /// use mldtypes::round::{RoundMode, Rounding};
    /// let c = Codec::new(&Format::p3109(8, 3, true, true).unwrap()).unwrap();
    /// let mut y = [0u8; 3];
    /// let r = Rounding::new(RoundMode::TowardZero);
    /// c.round_f32_slice(&[1.2, -1.2, 1e9], &mut y, &r).unwrap();
    /// assert_eq!(y, [0x40, 0xc0, 0x7e]); // 1, −1, the largest value (no rounding past it)
    /// ```
    pub fn round_f32_slice<C: CodeWord>(
        &self,
        src: &[f32],
        dst: &mut [C],
        r: &Rounding<'_>,
    ) -> Result<(), CastError> {
        self.round_f32_slice_on(dispatch::path(), src, dst, r)
    }

    /// [`Codec::round_f32_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::round_f32_slice`], and [`CastError::PathUnavailable`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Path};
    /// use mldtypes::round::{RoundMode, Rounding};
    /// let c = Codec::new(&mldtypes::format::FLOAT8_E8M0FNU).unwrap();
    /// let mut y = [0u8; 2];
    /// // 3 · 2^-1 is a tie between 1 (0x7f, odd) and 2 (0x80, even).
    /// c.round_f32_slice_on(Path::Scalar, &[1.5, 3.0], &mut y, &Rounding::NEAREST_EVEN).unwrap();
    /// assert_eq!(y, [0x80, 0x80]);
    /// ```
    pub fn round_f32_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[f32],
        dst: &mut [C],
        r: &Rounding<'_>,
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        if self.rounds_as_astype(r) {
            r.validate(src.len()).map_err(CastError::Rounding)?;
            return self.encode_f32_slice_on(path, src, dst, Overflow::of(r.saturate));
        }
        super::round::round_codes(
            bytemuck::cast_slice(src),
            super::round::Source::F32,
            dst,
            &self.plan.fmt,
            r,
            path,
        )
    }

    /// [`Codec::round_f32_slice`] for float64 sources, each rounded once
    /// (never through float32); the stochastic "fast" modes compare in
    /// float64 precision.
    ///
    /// # Errors
    ///
    /// As [`Codec::round_f32_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::Codec;
    /// use mldtypes::round::{RandomBits, RoundMode, Rounding};
    /// let c = Codec::new(&mldtypes::format::FLOAT4_E2M1FN).unwrap();
    /// let mut y = [0u8; 2];
    /// // 1.25 lies halfway between 1 and 1.5.
    /// let r = Rounding::new(RoundMode::StochasticFastest).with_bits(RandomBits::U8(&[3, 4]), 3);
    /// c.round_f64_slice(&[1.25, 1.25], &mut y, &r).unwrap();
    /// assert_eq!(y, [0x2, 0x3]); // up once 1/2 + r/8 reaches 1
    /// ```
    pub fn round_f64_slice<C: CodeWord>(
        &self,
        src: &[f64],
        dst: &mut [C],
        r: &Rounding<'_>,
    ) -> Result<(), CastError> {
        self.round_f64_slice_on(dispatch::path(), src, dst, r)
    }

    /// [`Codec::round_f64_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::round_f32_slice_on`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Path};
    /// use mldtypes::format::Format;
    /// use mldtypes::round::{RoundMode, Rounding};
    /// let c = Codec::new(&Format::p3109(16, 1, true, true).unwrap()).unwrap();
    /// let mut y = [0u16; 1];
    /// c.round_f64_slice_on(Path::Portable, &[1.5], &mut y, &Rounding::new(RoundMode::TowardPositive)).unwrap();
    /// assert_eq!(y, [0x4001]); // 2
    /// ```
    pub fn round_f64_slice_on<C: CodeWord>(
        &self,
        path: Path,
        src: &[f64],
        dst: &mut [C],
        r: &Rounding<'_>,
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<C>()?;
        if self.rounds_as_astype(r) {
            r.validate(src.len()).map_err(CastError::Rounding)?;
            return self.encode_f64_slice_on(path, src, dst, Overflow::of(r.saturate));
        }
        super::round::round_codes(
            bytemuck::cast_slice(src),
            super::round::Source::F64,
            dst,
            &self.plan.fmt,
            r,
            path,
        )
    }

    /// Whether `r` rounds as the plain conversions do: nearest even without
    /// random numbers, for a format other than float8_e8m0fnu's structure.
    fn rounds_as_astype(&self, r: &Rounding<'_>) -> bool {
        let f = &self.plan.fmt;
        r.mode == RoundMode::NearestEven
            && matches!(r.random, Random::None)
            && (f.man_bits != 0 || f.has_zero)
    }

    /// Converts the codes of `src` (this codec's format) to the codes of
    /// `to`'s format, each rounded once from its exact value, as
    /// [`core::convert`] does (a format to itself keeps every code).
    ///
    /// # Errors
    ///
    /// As [`Codec::encode_f32_slice`], [`CastError::CodeWord`] naming the
    /// format whose word is too narrow.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow};
    /// use mldtypes::format::{Format, FLOAT8_E4M3FN};
    /// let p = Codec::new(&Format::p3109(8, 4, true, true).unwrap()).unwrap();
    /// let e4m3 = Codec::new(&FLOAT8_E4M3FN).unwrap();
    /// let mut y = [0u8; 3];
    /// // float8_e4m3fn 448, NaN and −0 into p3109_k8p4se (largest value 224):
    /// e4m3.convert_slice(&p, &[0x7eu8, 0x7f, 0x80], &mut y, Overflow::NonSaturating).unwrap();
    /// assert_eq!(y, [0x7f, 0x80, 0x00]); // +inf, its NaN, 0 (no −0)
    /// ```
    pub fn convert_slice<A: CodeWord, B: CodeWord>(
        &self,
        to: &Codec,
        src: &[A],
        dst: &mut [B],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.convert_slice_on(dispatch::path(), to, src, dst, ov)
    }

    /// [`Codec::convert_slice`] on a given [`Path`].
    ///
    /// # Errors
    ///
    /// As [`Codec::convert_slice`], and [`CastError::PathUnavailable`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::cast::{Codec, Overflow, Path};
    /// use mldtypes::format::{Format, BFLOAT16};
    /// let p = Codec::new(&Format::p3109(16, 8, true, true).unwrap()).unwrap();
    /// let bf = Codec::new(&BFLOAT16).unwrap();
    /// let mut y = [0u16; 1];
    /// // p3109_k16p8se has bfloat16's precision and one more exponent value.
    /// p.convert_slice_on(Path::Scalar, &bf, &[0x4000u16], &mut y, Overflow::NonSaturating).unwrap();
    /// assert_eq!(y, [0x3f80]); // 1.0
    /// ```
    pub fn convert_slice_on<A: CodeWord, B: CodeWord>(
        &self,
        path: Path,
        to: &Codec,
        src: &[A],
        dst: &mut [B],
        ov: Overflow,
    ) -> Result<(), CastError> {
        self.check(path, src.len(), dst.len())?;
        self.check_word::<A>()?;
        to.check_word::<B>()?;
        convert_codes(path, &self.plan, &to.plan, src, dst, ov);
        Ok(())
    }

    fn check(&self, path: Path, src: usize, dst: usize) -> Result<(), CastError> {
        if !path.is_available() {
            return Err(CastError::PathUnavailable(path));
        }
        if src != dst {
            return Err(CastError::LengthMismatch { src, dst });
        }
        Ok(())
    }
}

/// Codes of `a` → codes of `b` (any words), one rounding each.
pub(crate) fn convert_codes<A: Code, B: Code>(
    path: Path,
    a: &Plan,
    b: &Plan,
    src: &[A],
    dst: &mut [B],
    ov: Overflow,
) {
    let (f, g) = (&a.fmt, &b.fmt);
    if path == Path::Scalar {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = B::from_u32(core::convert_generic(f, g, s.to_u32(), ov));
        }
        return;
    }
    if f.bits() <= 8 && g.bits() <= 8 {
        let t = table8(f, g, ov);
        if A::BYTES == 1 && B::BYTES == 1 {
            let (s, d): (&[u8], &mut [u8]) =
                (bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst));
            on_path!(path, |m| unsafe {
                // SAFETY: `path` was confirmed available by the caller.
                m::lut8(t, s, d)
            });
        } else {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = B::from_u32(t[(s.to_u32() & 0xff) as usize] as u32);
            }
        }
        return;
    }
    if f == g && (ov == Overflow::NonSaturating || !f.has_infinity()) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = B::from_u32(s.to_u32() & f.code_mask());
        }
        return;
    }
    let sat = ov == Overflow::Saturating;
    const BLOCK: usize = 1024;
    if f.fits_f32() {
        // Exact through float32; NaN payloads dropped between formats.
        let mut tmp = [0f32; BLOCK];
        for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
            let t = &mut tmp[..s.len()];
            a.decode_f32(path, s, t);
            for v in t.iter_mut() {
                if v.is_nan() {
                    *v = f32::from_bits((v.to_bits() & 0x8000_0000) | 0x7fc0_0000);
                }
            }
            b.encode_f32(path, t, d, sat);
        }
    } else if f.fits_f64() && a.strategy != Strategy::Scalar {
        let mut tmp = [0f64; BLOCK];
        for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
            let t = &mut tmp[..s.len()];
            a.decode_f64(path, s, t);
            b.encode_f64(path, t, d, sat);
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = B::from_u32(core::convert_generic(f, g, s.to_u32(), ov));
        }
    }
}
