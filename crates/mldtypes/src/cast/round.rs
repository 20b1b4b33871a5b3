//! Slice conversions under a [`Rounding`] (any mode of [`crate::round`],
//! saturation, random numbers explicit or from a seed): the routing of a
//! source and a target to the rounding kernels, the random numbers of each
//! chunk, threads.
//!
//! `nearest_even` without saturation of float32 / float64 targets and
//! without random numbers takes the conversion engine of `astype` itself
//! (bit-identical and as fast); float8_e8m0fnu always takes the rounding
//! kernels (it ties to the even code here, see [`crate::round`]).

use super::codec::{self, Plan};
use super::dispatch::Path;
use super::engine::{self, prefetch, with_dst, with_src, Cat, CHUNK};
#[cfg(target_arch = "x86_64")]
use super::hw;
use super::kernels::{self, Code, ModeParams, Params};
use super::CastError;
use crate::dtype::DType;
use crate::float::core::{self, Step};
use crate::float::kernels::{Det, Kind, StochFast, StochRn, B32, BINARY32_PARAMS, K, KF16};
use crate::format::{Format, NanEncoding, NonFinite, Overflow, FLOAT16};
use crate::round::{Random, RandomBits, RoundMode, Rounding};
use std::sync::atomic::{AtomicBool, Ordering};

/// Elements per kernel call of [`streamed`], and how far ahead of each call
/// its inputs are requested.
const PIECE: usize = 256;
const AHEAD: usize = 1024;

/// Inputs from this many elements on take the table of
/// [`codec::encode_table_with`] where [`Job::table_for`] allows it (the
/// table is made by the kernel itself, in about the time of one such
/// conversion).
const TABLE_MIN: usize = 1 << 16;

/// Calls the kernel `k` on consecutive pieces of [`PIECE`] elements of
/// `x`, `rnd` (empty for the deterministic modes) and `d`, requesting the
/// inputs [`AHEAD`] elements early: one thread's conversion is bound by the
/// cache lines in flight, and the rounding kernels' longer loops leave the
/// hardware prefetcher behind (with it, the deterministic modes run as fast
/// as `astype`'s kernel).
#[inline(always)]
fn streamed<S, R, C>(x: &[S], rnd: &[R], d: &mut [C], mut k: impl FnMut(&[S], &[R], &mut [C])) {
    for (i, (xs, ds)) in x.chunks(PIECE).zip(d.chunks_mut(PIECE)).enumerate() {
        let at = i * PIECE;
        prefetch(x, at + AHEAD, xs.len());
        let r = if rnd.is_empty() {
            rnd
        } else {
            prefetch(rnd, at + AHEAD, xs.len());
            &rnd[at..at + xs.len()]
        };
        k(xs, r, ds)
    }
}

/// `x` widened into `buf` (as long), read [`AHEAD`] elements early.
#[inline(always)]
fn widen<'b, T: Copy + Into<u32>>(x: &[T], buf: &'b mut [u32]) -> &'b [u32] {
    streamed::<_, u32, _>(x, &[], buf, |xs, _, ds| {
        for (d, s) in ds.iter_mut().zip(xs) {
            *d = (*s).into();
        }
    });
    buf
}

/// The kernel family of a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// The five deterministic modes.
    Det,
    /// `stochastic`, `stochastic_odd`.
    Rn,
    /// `stochastic_fast`, `stochastic_fastest`.
    Fast,
}

fn family(m: RoundMode) -> Family {
    match m {
        RoundMode::Stochastic | RoundMode::StochasticOdd => Family::Rn,
        RoundMode::StochasticFast | RoundMode::StochasticFastest => Family::Fast,
        _ => Family::Det,
    }
}

/// Evaluates `$body` with `$Q` the run-time kind of `$f`'s structure, or
/// `$other` for structures the rounding kernels do not cover.
macro_rules! with_round_kind {
    ($f:expr, |$Q:ident| $body:expr, $other:expr) => {{
        let f: &Format = $f;
        match (f.non_finite, f.nan_encoding, f.signed, f.has_zero) {
            (NonFinite::Ieee, NanEncoding::Ieee, true, true) => {
                if f.exp_bits == FLOAT16.exp_bits
                    && f.man_bits == FLOAT16.man_bits
                    && f.bias == FLOAT16.bias
                {
                    type $Q = KF16;
                    $body
                } else {
                    type $Q = K<0, 0, true, true>;
                    $body
                }
            }
            (NonFinite::NanOnly, NanEncoding::AllOnes, true, true) => {
                type $Q = K<1, 1, true, true>;
                $body
            }
            (NonFinite::NanOnly, NanEncoding::NegativeZero, true, true) => {
                type $Q = K<1, 2, true, true>;
                $body
            }
            (NonFinite::FiniteOnly, NanEncoding::None, true, true) => {
                type $Q = K<2, 3, true, true>;
                $body
            }
            (NonFinite::NanOnly, NanEncoding::AllOnes, false, false) if f.man_bits == 0 => {
                type $Q = K<1, 1, false, false>;
                $body
            }
            (NonFinite::InfAtMax, NanEncoding::NegativeZero, true, true) => {
                type $Q = K<3, 2, true, true>;
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

/// [`with_round_kind`] for the formats that cover float64 (only IEEE
/// P3109 structures reach 12 exponent bits).
macro_rules! with_wide_kind {
    ($f:expr, |$Q:ident| $body:expr, $other:expr) => {{
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

/// Evaluates `$body` with `$M` the mode type of `$family`.
macro_rules! with_family {
    ($family:expr, |$M:ident| $body:expr) => {
        match $family {
            Family::Det => {
                type $M = Det;
                $body
            }
            Family::Rn => {
                type $M = StochRn;
                $body
            }
            Family::Fast => {
                type $M = StochFast;
                $body
            }
        }
    };
}

/// Picks the kernel module for `path` (portable for the scalar path).
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

/// Where the values come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source {
    F32,
    F64,
    /// A float format's codes (1 or 2 bytes each), through the exact value.
    Code(Format, usize),
}

/// Where the values go (float64 is no target: it holds every float32 and
/// float64 source as it is).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    F32,
    /// A float format's codes: the format, its kernel parameters, 1 or 2 bytes.
    Code(Format, Params, usize),
}

/// A validated conversion under a rounding.
struct Job<'a> {
    path: Path,
    mode: RoundMode,
    family: Family,
    ov: Overflow,
    sat: bool,
    sr_bits: u32,
    random: Random<'a>,
    /// Mode parameters for float32 sources and float64 ones (both compare
    /// in float64 precision, as gfloat does).
    mp32: ModeParams,
    mp64: ModeParams,
    from: Source,
    to: Target,
    /// Explicit random numbers are checked chunk by chunk as they are read
    /// (rather than all before the first write); `bad` records one too
    /// large, after which no chunk is converted.
    lazy: bool,
    bad: AtomicBool,
    /// float32 → one-byte codes through a table (see [`Job::table_for`]).
    table: Option<Table>,
    /// The output is written through the staging buffer of
    /// [`engine::convert_streaming`] (see [`Job::pieces`]).
    stream: bool,
}

/// The table of a conversion (see [`Job::table_for`]).
#[derive(Clone, Copy, Debug)]
enum Table {
    /// Codes of a deterministic mode ([`codec::encode_table_with`]).
    Det(&'static [u8; 1 << 16]),
    /// A stochastic mode's codes up and down, and the dropped bits'
    /// number ([`codec::sr_table_with`]).
    #[cfg(target_arch = "x86_64")]
    Sr(&'static [u32; 1 << 15]),
    /// No table: the parameters of the deterministic kernels of AVX-512
    /// ([`hw::det8_avx512`]) and of AVX2 where gathers are slow
    /// ([`hw::det8_fpu_avx2`]), which run there instead.
    #[cfg(target_arch = "x86_64")]
    Det8(hw::Params8),
    /// No table: the parameters of the stochastic kernels of AVX-512
    /// ([`hw::sr8_avx512`]) and of AVX2 where gathers are slow
    /// ([`hw::sr8_avx2`]), which run there instead.
    #[cfg(target_arch = "x86_64")]
    Sr8(hw::Params8),
}

fn source_of(d: DType) -> Option<Source> {
    Some(match engine::category(d)? {
        Cat::F32 => Source::F32,
        Cat::F64 => Source::F64,
        Cat::Code8(f) => Source::Code(f, 1),
        Cat::Code16(f) => Source::Code(f, 2),
        Cat::Int(_) => return None,
    })
}

fn target_of(d: DType) -> Option<Target> {
    Some(match engine::category(d)? {
        Cat::F32 => Target::F32,
        Cat::Code8(f) => Target::Code(f, Params::of(&f), 1),
        Cat::Code16(f) => Target::Code(f, Params::of(&f), 2),
        Cat::F64 | Cat::Int(_) => return None,
    })
}

/// Whether a rounding is ml_dtypes' `astype` for this target (see the
/// module documentation).
fn is_astype(r: &Rounding, to: &Target) -> bool {
    r.mode == RoundMode::NearestEven
        && matches!(r.random, Random::None)
        && match to {
            Target::F32 => !r.saturate,
            Target::Code(f, _, _) => f.man_bits != 0 || f.has_zero,
        }
}

impl Job<'_> {
    /// The step of element `i` of this chunk for the scalar core.
    #[inline]
    fn step(&self, rnd: &[u32], i: usize) -> Step {
        Step {
            mode: self.mode,
            random: rnd.get(i).copied().unwrap_or(0),
            sr_bits: self.sr_bits,
        }
    }

    /// The random numbers of elements `start .. start + n` (empty for the
    /// deterministic modes), in `buf` unless they can be borrowed.
    fn numbers<'b>(&'b self, start: usize, n: usize, buf: &'b mut [u32]) -> &'b [u32] {
        match self.random {
            Random::None => &[],
            Random::Bits {
                bits: RandomBits::U32(b),
                ..
            } => &b[start..start + n],
            Random::Bits {
                bits: RandomBits::U16(b),
                ..
            } => widen(&b[start..start + n], &mut buf[..n]),
            Random::Bits {
                bits: RandomBits::U8(b),
                ..
            } => widen(&b[start..start + n], &mut buf[..n]),
            Random::Seed {
                seed,
                offset,
                sr_bits,
            } => {
                let first = offset.wrapping_add(start as u64);
                let out = &mut buf[..n];
                let path = self.path;
                let words = |j: u64, cut, out: &mut [u32]| self.seed_words(seed, j, cut, out);
                let halves = |ws: &[u32], bits: u32, out: &mut [u32]| match path {
                    #[cfg(target_arch = "x86_64")]
                    Path::Avx512 | Path::Avx2 => unsafe { hw::halves_avx2(ws, bits, out) },
                    _ => crate::round::halves(ws, bits, out),
                };
                crate::round::fill_seeded_with(first, sr_bits, out, words, halves);
                &buf[..n]
            }
        }
    }

    /// Words `j`, `j + 1`, … of `seed`'s stream, cut by `cut`, into `out`
    /// by the path's generator (Philox4x32-10 by hand on the vector paths,
    /// see `hw`).
    fn seed_words(&self, seed: u64, j: u64, cut: crate::round::Cut, out: &mut [u32]) {
        // SAFETY: the kernels of the path, which was confirmed available
        // before the conversion started.
        match self.path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => unsafe { hw::philox_fill_avx512(seed, j, cut, out) },
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => unsafe { hw::philox_fill_avx2(seed, j, cut, out) },
            _ => crate::round::fill_words(seed, j, cut, out),
        }
    }

    /// The 16-bit random numbers of elements `start .. start + n`, and
    /// whether they are explicit: explicit 16-bit ones as they are, or a
    /// seed's of at most 16 bits made into `buf` (read as 16-bit words);
    /// None for the others.
    #[cfg(target_arch = "x86_64")]
    fn numbers16<'s>(
        &'s self,
        start: usize,
        n: usize,
        buf: &'s mut [u32],
    ) -> Option<(&'s [u16], bool)> {
        match self.random {
            Random::Bits {
                bits: RandomBits::U16(b),
                ..
            } => Some((&b[start..start + n], true)),
            Random::Seed {
                seed,
                offset,
                sr_bits,
            } if sr_bits <= 16 && matches!(self.path, Path::Avx2 | Path::Avx512) => {
                // The words' halves, cut, are the elements' numbers as 16-bit
                // words in element order (x86 is little-endian): the words of
                // elements `first ..` from the one holding `first`, read from
                // its half.
                let first = offset.wrapping_add(start as u64);
                let (j, odd) = (first / 2, (first % 2) as usize);
                let nw = (odd + n).div_ceil(2);
                // Element numbers wrap at 2^64, so words at 2^63.
                let room = ((1u64 << 63) - j).min(nw as u64) as usize;
                let cut = crate::round::Cut::Halves(sr_bits);
                let (before, after) = buf[..nw].split_at_mut(room);
                for (at, w) in [(j, before), (0, after)] {
                    self.seed_words(seed, at, cut, w);
                }
                let out = &bytemuck::cast_slice::<u32, u16>(&buf[..nw])[odd..odd + n];
                Some((out, false))
            }
            _ => None,
        }
    }

    /// Whether explicit random numbers include one of `sr_bits` bits or
    /// more (seeded ones never do): a bit set at or above `sr_bits` in
    /// their union.
    fn too_large(&self, rnd: &[u32]) -> bool {
        match self.random {
            Random::Bits { .. } if self.sr_bits < 32 => {
                rnd.iter().fold(0, |m, &r| m | r) >> self.sr_bits != 0
            }
            _ => false,
        }
    }

    /// Whether explicit 16-bit numbers checked as they are converted
    /// (`lazy`) include one of `sr_bits` bits or more; if so, the job is
    /// marked bad.
    #[cfg(target_arch = "x86_64")]
    fn lazy_u16_too_large(&self, r: &[u16]) -> bool {
        let bad =
            self.lazy && self.sr_bits < 16 && r.iter().fold(0, |m, &v| m | v) >> self.sr_bits != 0;
        if bad {
            self.bad.store(true, Ordering::Relaxed);
        }
        bad
    }

    /// Converts elements `start ..` (at most [`CHUNK`] of them unless the
    /// rounding is deterministic and the buffers aligned) of the byte
    /// slices.
    fn chunk(&self, start: usize, src: &[u8], dst: &mut [u8], buf: &mut [u32]) {
        let n = match self.from {
            Source::F32 => src.len() / 4,
            Source::F64 => src.len() / 8,
            Source::Code(_, b) => src.len() / b,
        };
        if self.lazy && self.bad.load(Ordering::Relaxed) {
            return;
        }
        // 16-bit numbers (explicit ones, or a seed's of at most 16 bits) go
        // to the kernels that read them as they are: the stochastic tables'
        // and AVX-512's one-byte kernel (AVX2's integer kernel takes them
        // widened: one instance of it), and bfloat16's.
        #[cfg(target_arch = "x86_64")]
        if let Source::F32 = self.from {
            let sr_table = match self.table {
                Some(t @ Table::Sr(_)) => Some(t),
                Some(t @ Table::Sr8(k)) if self.path != Path::Avx2 || self.sr8_fpu(&k) => Some(t),
                _ => None,
            };
            let bf16 = match self.to {
                Target::Code(f, p, 2) if self.flat_written_out(&f, &p) => Some(p),
                _ => None,
            };
            if sr_table.is_some() || bf16.is_some() {
                if let Some((r, explicit)) = self.numbers16(start, n, buf) {
                    // AVX-512's one-byte kernel checks explicit numbers as it
                    // reads them.
                    let checked = matches!(sr_table, Some(Table::Sr8(_)));
                    if explicit && !checked && self.lazy_u16_too_large(r) {
                        return;
                    }
                    let seen = with_src::<f32, _>(src, |x| match (sr_table, bf16) {
                        (Some(t), _) => self.by_sr_table(t, x, r, dst),
                        (_, Some(p)) => {
                            self.bf16_sr(&p, x, r, dst);
                            None
                        }
                        _ => unreachable!("checked above"),
                    });
                    if explicit
                        && self.lazy
                        && self.sr_bits < 16
                        && seen.is_some_and(|v| v >> self.sr_bits != 0)
                    {
                        self.bad.store(true, Ordering::Relaxed);
                    }
                    return;
                }
            }
        }
        let rnd = self.numbers(start, n, buf);
        if self.lazy && self.too_large(rnd) {
            self.bad.store(true, Ordering::Relaxed);
            return;
        }
        match self.from {
            Source::F32 => with_src::<f32, _>(src, |x| self.round_f32s(x, rnd, dst)),
            Source::F64 => with_src::<f64, _>(src, |x| self.round_f64s(x, rnd, dst)),
            Source::Code(f, 1) => self.round_codes_of::<u8>(&f, src, rnd, dst),
            Source::Code(f, _) => {
                with_src::<u16, _>(src, |x| self.round_codes_of::<u16>(&f, x, rnd, dst))
            }
        }
    }

    fn round_f32s(&self, x: &[f32], rnd: &[u32], dst: &mut [u8]) {
        match self.to {
            Target::F32 => with_dst::<f32>(dst, |d| {
                if self.sat {
                    // SAFETY: the path was confirmed available.
                    on_path!(self.path, |m| unsafe { m::saturate_f32(x, d) })
                } else {
                    d.copy_from_slice(x)
                }
            }),
            Target::Code(_, _, 1) if self.table.is_some() => self.by_table(x, rnd, dst),
            #[cfg(target_arch = "x86_64")]
            Target::Code(f, p, 2)
                if self.family == Family::Det && self.flat_written_out(&f, &p) =>
            {
                with_dst::<u16>(dst, |d| {
                    // bfloat16 under a deterministic mode on AVX2 and
                    // AVX-512: the increment's form written out (LLVM's code
                    // of the element conversion is slower than `astype`'s).
                    let [pos, neg, parity] = self.mp32.increments(p.s32);
                    let mp = &self.mp32;
                    #[inline(never)]
                    fn flat(p: &Params, mp: &ModeParams, v: f32) -> u16 {
                        kernels::enc32_m_flat::<K<0, 0, true, true>, Det>(p, mp, v.to_bits(), 0)
                            as u16
                    }
                    let element = |v: f32| flat(&p, mp, v);
                    self.pieces::<_, u32, _>(x, &[], d, |x, _, d| unsafe {
                        // SAFETY: the path was confirmed available.
                        hw::f32_to_bf16_det_avx2(p.s32, [pos, neg], parity, x, d, element)
                    })
                })
            }
            #[cfg(target_arch = "x86_64")]
            Target::Code(f, p, 2) if self.flat_written_out(&f, &p) => self.bf16_sr(&p, x, rnd, dst),
            Target::Code(f, p, 1) => self.enc32::<u8>(&f, &p, x, rnd, dst),
            Target::Code(f, p, _) => with_dst::<u16>(dst, |d| self.enc32(&f, &p, x, rnd, d)),
        }
    }

    /// float32 → bfloat16 (a format of [`Self::flat_written_out`]) under a
    /// stochastic mode on AVX2 / AVX-512, the random numbers 16 or 32 bits
    /// wide: every element rounds at the same bit, so the fraction form
    /// needs no table.
    #[cfg(target_arch = "x86_64")]
    fn bf16_sr<W: hw::Word>(&self, p: &Params, x: &[f32], rnd: &[W], dst: &mut [u8]) {
        with_dst::<u16>(dst, |d| {
            let mp = &self.mp32;
            #[inline(never)]
            fn flat<M: kernels::Mode>(p: &Params, mp: &ModeParams, v: f32, r: u32) -> u16 {
                kernels::enc32_m_flat::<K<0, 0, true, true>, M>(p, mp, v.to_bits(), r) as u16
            }
            let fast = self.family != Family::Rn;
            let element = |v, r| {
                if fast {
                    flat::<StochFast>(p, mp, v, r)
                } else {
                    flat::<StochRn>(p, mp, v, r)
                }
            };
            self.pieces(x, rnd, d, |x, r, d| unsafe {
                // SAFETY: the path was confirmed available.
                if self.path == Path::Avx512 {
                    hw::f32_to_bf16_sr_avx512::<W>(p.s32, fast, mp, x, r, d, element)
                } else {
                    hw::f32_to_bf16_sr_avx2::<W>(p.s32, fast, mp, x, r, d, element)
                }
            })
        })
    }

    /// The bfloat16 kernels' calls: [`streamed`], or one call on the whole
    /// slices where the output goes through the staging buffer of
    /// [`engine::convert_streaming`] (blocks of a few thousand elements,
    /// read in sequence: the early requests of `streamed` then cost more
    /// than they save — on Zen 4, float32 → bfloat16 under `toward_zero`
    /// took 1.22–1.45× `astype`'s time with them and 0.95–1.15× without,
    /// where below the streaming size they help or do nothing).
    #[cfg(target_arch = "x86_64")]
    fn pieces<S, R, C>(
        &self,
        x: &[S],
        rnd: &[R],
        d: &mut [C],
        mut k: impl FnMut(&[S], &[R], &mut [C]),
    ) {
        if self.stream {
            k(x, rnd, d)
        } else {
            streamed(x, rnd, d, k)
        }
    }

    /// Whether float32 → `f` takes a bfloat16 kernel written out
    /// ([`Params::flat32`], IEEE infinities and NaN, signed) on AVX2 and
    /// AVX-512: under a deterministic mode, or a stochastic one of at most
    /// 31 random bits.
    fn flat_written_out(&self, f: &Format, p: &Params) -> bool {
        let path = matches!(self.path, Path::Avx2 | Path::Avx512)
            && (self.family == Family::Det || self.sr_bits <= 31);
        path && p.flat32
            && (f.non_finite, f.nan_encoding, f.signed, f.has_zero)
                == (NonFinite::Ieee, NanEncoding::Ieee, true, true)
            && self.kernel_f32(f)
    }

    /// float32 → one-byte codes through the job's table.
    fn by_table(&self, x: &[f32], rnd: &[u32], dst: &mut [u8]) {
        match self.table {
            // SAFETY (both): `table_for` gives tables on the AVX2 and
            // AVX-512 paths only, so AVX2 was confirmed available.
            #[cfg(target_arch = "x86_64")]
            Some(Table::Det(t)) => streamed::<_, u32, _>(x, &[], dst, |x, _, d| unsafe {
                hw::table_enc32_avx2(t, x, d)
            }),
            #[cfg(target_arch = "x86_64")]
            Some(t @ (Table::Sr(_) | Table::Sr8(_))) => {
                self.by_sr_table(t, x, rnd, dst);
            }
            #[cfg(target_arch = "x86_64")]
            Some(Table::Det8(k)) => {
                let Target::Code(f, p, _) = self.to else {
                    unreachable!("one-byte codes")
                };
                let element = |x: &[f32], d: &mut [u8]| self.enc32::<u8>(&f, &p, x, &[], d);
                // The kernels' numbering of the modes.
                let mode = match self.mode {
                    RoundMode::NearestEven => 0,
                    RoundMode::NearestAway => 1,
                    RoundMode::TowardZero => 2,
                    RoundMode::TowardNegative => 3,
                    _ => 4,
                };
                let avx512 = self.path == Path::Avx512;
                let cvt = !avx512 && super::fpu_forms();
                let cap = k.caps().is_some();
                streamed::<_, u32, _>(x, &[], dst, |x, _, d| unsafe {
                    // SAFETY: `table_for` gives these parameters on the
                    // AVX-512 and AVX2 paths only.
                    if cvt {
                        return match (cap, mode) {
                            (true, 0) => hw::det8_cvt_avx2::<0, true>(&k, x, d, element),
                            (true, 1) => hw::det8_cvt_avx2::<1, true>(&k, x, d, element),
                            (true, 2) => hw::det8_cvt_avx2::<2, true>(&k, x, d, element),
                            (true, 3) => hw::det8_cvt_avx2::<3, true>(&k, x, d, element),
                            (true, _) => hw::det8_cvt_avx2::<4, true>(&k, x, d, element),
                            (false, 0) => hw::det8_cvt_avx2::<0, false>(&k, x, d, element),
                            (false, 1) => hw::det8_cvt_avx2::<1, false>(&k, x, d, element),
                            (false, 2) => hw::det8_cvt_avx2::<2, false>(&k, x, d, element),
                            (false, 3) => hw::det8_cvt_avx2::<3, false>(&k, x, d, element),
                            (false, _) => hw::det8_cvt_avx2::<4, false>(&k, x, d, element),
                        };
                    }
                    match (avx512, mode) {
                        (true, 0) => hw::det8_avx512::<0>(&k, x, d, element),
                        (true, 1) => hw::det8_avx512::<1>(&k, x, d, element),
                        (true, 2) => hw::det8_avx512::<2>(&k, x, d, element),
                        (true, 3) => hw::det8_avx512::<3>(&k, x, d, element),
                        (true, _) => hw::det8_avx512::<4>(&k, x, d, element),
                        (false, 0) => hw::det8_fpu_avx2::<0>(&k, x, d, element),
                        (false, 1) => hw::det8_fpu_avx2::<1>(&k, x, d, element),
                        (false, 2) => hw::det8_fpu_avx2::<2>(&k, x, d, element),
                        (false, 3) => hw::det8_fpu_avx2::<3>(&k, x, d, element),
                        (false, _) => hw::det8_fpu_avx2::<4>(&k, x, d, element),
                    }
                })
            }
            _ => unreachable!("called with a table"),
        }
    }

    /// float32 → one-byte codes through a stochastic mode's table, the
    /// random numbers 16 or 32 bits wide (16-bit ones are widened in
    /// registers); with AVX-512's kernels ([`hw::sr8_avx512`],
    /// [`hw::sr8_fpu_avx512`]) and AVX2's FPU form ([`hw::sr8_fpu_avx2`]),
    /// the OR of the numbers they read (None from the other kernels).
    #[cfg(target_arch = "x86_64")]
    fn by_sr_table<W: hw::Word>(
        &self,
        table: Table,
        x: &[f32],
        rnd: &[W],
        dst: &mut [u8],
    ) -> Option<u32> {
        let rn = self.family == Family::Rn;
        match table {
            // SAFETY: `table_for` gives tables on the AVX2 and AVX-512
            // paths only, so AVX2 was confirmed available.
            Table::Sr(t) => {
                streamed(x, rnd, dst, |x, r, d| unsafe {
                    hw::sr_table_avx2::<W>(t, !rn, &self.mp32, x, r, d)
                });
                None
            }
            Table::Sr8(k) => {
                let Target::Code(f, p, _) = self.to else {
                    unreachable!("one-byte codes")
                };
                let element = |x: &[f32], r: &[W], d: &mut [u8]| {
                    let mut wide = [0u32; 16];
                    for ((x, r), d) in x.chunks(16).zip(r.chunks(16)).zip(d.chunks_mut(16)) {
                        for (w, &v) in wide.iter_mut().zip(r) {
                            *w = v.into();
                        }
                        self.enc32::<u8>(&f, &p, x, &wide[..r.len()], d)
                    }
                };
                let (mp, sub_shift) = (&self.mp32, p.sub_shift32);
                let avx512 = self.path == Path::Avx512;
                // AVX2's 16-bit numbers come here only where `chunk` found
                // the FPU form (a later `set_fpu_forms` does not undo that
                // choice); AVX-512's kernels take either width.
                let fpu = (!avx512 && !W::WIDE) || self.sr8_fpu(&k);
                let cap = k.caps().is_some();
                // The FPU forms' numbering of the modes.
                let fam = match self.mode {
                    RoundMode::Stochastic => 0,
                    RoundMode::StochasticOdd => 1,
                    _ => 2,
                };
                let mut seen = 0;
                // SAFETY: `table_for` gives these parameters on the AVX-512
                // and AVX2 paths only; `sr8_fpu` checked the random bits.
                streamed(x, rnd, dst, |x, r, d| unsafe {
                    seen |= match (avx512, fpu, fam, cap) {
                        (true, true, 0, _) => hw::sr8_fpu_avx512::<W, 0>(&k, mp, x, r, d, &element),
                        (true, true, 1, _) => hw::sr8_fpu_avx512::<W, 1>(&k, mp, x, r, d, &element),
                        (true, true, _, _) => hw::sr8_fpu_avx512::<W, 2>(&k, mp, x, r, d, &element),
                        (true, false, _, _) => {
                            hw::sr8_avx512::<W>(&k, !rn, sub_shift, mp, x, r, d, &element)
                        }
                        (false, true, 0, true) => {
                            hw::sr8_fpu_avx2::<W, 0, true>(&k, mp, x, r, d, &element)
                        }
                        (false, true, 0, false) => {
                            hw::sr8_fpu_avx2::<W, 0, false>(&k, mp, x, r, d, &element)
                        }
                        (false, true, 1, true) => {
                            hw::sr8_fpu_avx2::<W, 1, true>(&k, mp, x, r, d, &element)
                        }
                        (false, true, 1, false) => {
                            hw::sr8_fpu_avx2::<W, 1, false>(&k, mp, x, r, d, &element)
                        }
                        (false, true, _, true) => {
                            hw::sr8_fpu_avx2::<W, 2, true>(&k, mp, x, r, d, &element)
                        }
                        (false, true, _, false) => {
                            hw::sr8_fpu_avx2::<W, 2, false>(&k, mp, x, r, d, &element)
                        }
                        // 32-bit numbers here (see `fpu`).
                        (false, false, _, _) => {
                            hw::sr8_avx2::<W>(&k, !rn, mp, x, r, d, &element);
                            0
                        }
                    }
                });
                (avx512 || fpu).then_some(seen)
            }
            _ => unreachable!("a stochastic mode's kernel"),
        }
    }

    /// Whether AVX2's one-byte stochastic kernel for the parameters `k`
    /// takes its FPU form ([`hw::sr8_fpu_avx2`], which reads 16-bit numbers
    /// as they are): fewer random bits than a normal target drops, and
    /// [`super::fpu_forms`].
    #[cfg(target_arch = "x86_64")]
    fn sr8_fpu(&self, k: &hw::Params8) -> bool {
        self.family != Family::Det && self.sr_bits < k.s && super::fpu_forms()
    }

    /// The table for float32 → one-byte codes of [`codec::table_eligible`]
    /// formats on AVX2 and AVX-512, for `n` elements from [`TABLE_MIN`] on:
    /// there the arithmetic kernels (on AVX2: 8-lane vectors with few
    /// registers) take longer than the AVX2 gathers of the table, which
    /// both paths run (on AVX-512, LLVM's own gathers of the same table
    /// were slower than either). The table of a
    /// deterministic mode holds the codes (made by [`Job::enc32`], equal to
    /// the scalar core); a stochastic mode's holds for each input's top
    /// bits the codes up and down, between which the kernel decides
    /// ([`kernels::enc32_sr`]). One per format, mode and saturation. On
    /// AVX-512, and on AVX2 where gathers are slow, the signed formats take
    /// no table but the parameters of [`hw::det8_avx512`] /
    /// [`hw::sr8_avx512`] ([`hw::det8_fpu_avx2`] / [`hw::sr8_avx2`]), at any
    /// length.
    fn table_for(&self, n: usize) -> Option<Table> {
        let (Source::F32, Target::Code(f, p, 1)) = (self.from, self.to) else {
            return None;
        };
        // AVX-512's kernels of the signed formats (16 lanes of arithmetic,
        // the subnormals rounded by the addition in the mode; half the
        // quantum a normal float32, at most 31 random bits) beat the
        // table's 8-lane gathers and need no table: any length. So do
        // AVX2's integer kernels where gathers are slow (AMD).
        let own = (self.path == Path::Avx512
            || (self.path == Path::Avx2 && !super::dispatch::gather_tables()))
            && f.signed
            && p.magic32 > 24 << 23
            && (self.family == Family::Det || self.sr_bits <= 31);
        if !(matches!(self.path, Path::Avx2 | Path::Avx512)
            && (n >= TABLE_MIN || own)
            && p.fits_f32
            && codec::table_eligible(&f)
            && self.kernel_f32(&f))
        {
            return None;
        }
        match self.family {
            #[cfg(target_arch = "x86_64")]
            Family::Det if own => Some(Table::Det8(self.avx512_params(&f, &p))),
            Family::Det => Some(Table::Det(codec::encode_table_with(
                &f,
                self.mode,
                self.sat,
                |x, t| self.enc32::<u8>(&f, &p, x, &[], t),
            ))),
            #[cfg(target_arch = "x86_64")]
            _ if own => Some(Table::Sr8(self.avx512_params(&f, &p))),
            // (The AVX2 kernel's fraction has room for 31 random bits.)
            #[cfg(target_arch = "x86_64")]
            _ if self.sr_bits <= 31 => Some(Table::Sr(codec::sr_table_with(
                &f,
                self.mode,
                self.sat,
                self.sr_bits,
                |u, t| self.sr_entries(&f, &p, u, t),
            ))),
            _ => None,
        }
    }

    /// The parameters of AVX-512's kernels for float32 → `f` under this
    /// job's mode ([`hw::det8_avx512`], [`hw::sr8_avx512`]): the format's,
    /// the code of −0 and those of a finite overflow of either sign, by the
    /// job's own element conversion (random number 0).
    #[cfg(target_arch = "x86_64")]
    fn avx512_params(&self, f: &Format, p: &Params) -> hw::Params8 {
        let code = |v: f32| {
            let mut c = [0u8];
            let r: &[u32] = if self.family == Family::Det {
                &[]
            } else {
                &[0]
            };
            self.enc32::<u8>(f, p, &[v], r, &mut c);
            u32::from(c[0])
        };
        hw::Params8 {
            s: p.s32,
            rebias: p.rebias32,
            sub: p.sub32,
            magic: p.magic32,
            parity: p.parity32,
            max_code: p.max_code,
            sign: p.sign_mask,
            zero_sign: code(-0.0) != 0,
            over: [code(f32::MAX), code(-f32::MAX)],
        }
    }

    /// The entries of a stochastic mode's table for the float32 bits `u`
    /// (see [`kernels::enc32_sr`]), made by this job's kernel: the code
    /// down is that of `u` with its dropped bits cleared and no random
    /// number (which never rounds up), the code up that of `u` with every
    /// dropped bit of its significand set and the largest random number of
    /// the job's width, which rounds up wherever any float32 with `u`'s
    /// kept bits does under that width (the decision grows with the
    /// dropped bits and the number); infinities and NaN give their code
    /// either way.
    #[cfg(target_arch = "x86_64")]
    fn sr_entries(&self, f: &Format, p: &Params, u: &[u32], t: &mut [u32]) {
        let s: Vec<u32> = u
            .iter()
            .map(|u| kernels::split32(p, u & 0x7fff_ffff).2)
            .collect();
        let (mut down, mut up) = (Vec::with_capacity(u.len()), Vec::with_capacity(u.len()));
        for (u, s) in u.iter().zip(&s) {
            let special = u & 0x7fff_ffff >= 0x7f80_0000;
            let dropped = if special {
                0
            } else {
                (1u32 << (*s).min(23)) - 1
            };
            down.push(f32::from_bits(u & !dropped));
            up.push(f32::from_bits(u | dropped));
        }
        // Both in one call: the codes down, then up.
        let n = u.len();
        let max = self.mp32.stochastic32()[1];
        let rnd: Vec<u32> = (0..2 * n).map(|i| if i < n { 0 } else { max }).collect();
        down.extend(up);
        let mut c = vec![0u8; 2 * n];
        self.enc32::<u8>(f, p, &down, &rnd, &mut c);
        use kernels::sr_entry;
        for (i, ((e, s), u)) in t.iter_mut().zip(s).zip(u).enumerate() {
            let (down, up) = (c[i] as u32, c[n + i] as u32);
            let shift = if s > 32 { 32 } else { 32 - s };
            // Beyond 32 dropped bits the fraction form sees no fraction:
            // right where the code never rounds up. An infinity's entry
            // serves the NaNs of the same top bits in the AVX2 kernel.
            let rare = if (s > 32 && up != down) || u & 0x7fff_ffff == 0x7f80_0000 {
                sr_entry::RARE
            } else {
                0
            };
            let implicit = if u & 0x7f80_0000 != 0 {
                sr_entry::IMPLICIT
            } else {
                0
            };
            *e = down
                | up << sr_entry::UP
                | shift << sr_entry::SHIFT
                | rare
                | implicit
                | s << sr_entry::S;
        }
    }

    fn round_f64s(&self, x: &[f64], rnd: &[u32], dst: &mut [u8]) {
        match self.to {
            Target::F32 => with_dst::<u32>(dst, |d| self.enc_f64_to_f32(x, rnd, d)),
            Target::Code(f, p, 1) => self.enc64::<u8>(&f, &p, x, rnd, dst, 53),
            Target::Code(f, p, _) => with_dst::<u16>(dst, |d| self.enc64(&f, &p, x, rnd, d, 53)),
        }
    }

    /// Codes of `f` → their exact values as float64 (NaNs as the quiet NaN
    /// with their sign: payloads are not carried between formats), then
    /// rounded as float64; formats beyond float64 one at a time from their
    /// exact values.
    fn round_codes_of<C: Code>(&self, f: &Format, x: &[C], rnd: &[u32], dst: &mut [u8]) {
        if !f.fits_f64() {
            let per = |code: u32, i: usize, to: &Format| {
                core::round_code_step(f, to, code, self.step(rnd, i), self.ov)
            };
            match self.to {
                Target::Code(g, _, 1) => {
                    for (i, (d, c)) in dst.iter_mut().zip(x).enumerate() {
                        *d = per(c.to_u32(), i, &g) as u8;
                    }
                }
                Target::Code(g, _, _) => with_dst::<u16>(dst, |d| {
                    for (i, (y, c)) in d.iter_mut().zip(x).enumerate() {
                        *y = per(c.to_u32(), i, &g) as u16;
                    }
                }),
                Target::F32 => with_dst::<u32>(dst, |d| {
                    for (i, (y, c)) in d.iter_mut().zip(x).enumerate() {
                        *y = per(c.to_u32(), i, &core::BINARY32);
                    }
                }),
            }
            return;
        }
        let mut tmp = [0f64; CHUNK];
        let t = &mut tmp[..x.len()];
        if self.path == Path::Scalar {
            for (y, c) in t.iter_mut().zip(x) {
                *y = core::decode_f64(f, c.to_u32());
            }
        } else if f.fits_f32() {
            let mut t32 = [0f32; CHUNK];
            let t32 = &mut t32[..x.len()];
            Plan::new(f).decode_f32(self.path, x, t32);
            for (y, v) in t.iter_mut().zip(t32.iter()) {
                *y = *v as f64;
            }
        } else if !Plan::new(f).decode_f64(self.path, x, t) {
            for (y, c) in t.iter_mut().zip(x) {
                *y = core::decode_f64(f, c.to_u32());
            }
        }
        for y in t.iter_mut() {
            if y.is_nan() {
                *y = f64::from_bits((y.to_bits() & (1 << 63)) | 0x7ff8_0000_0000_0000);
            }
        }
        self.round_f64s(t, rnd, dst)
    }

    /// Whether the kernels of the float32 → `f` conversion exist for this
    /// path and format.
    fn kernel_f32(&self, f: &Format) -> bool {
        self.path != Path::Scalar && with_round_kind!(f, |_Q| true, false)
    }

    fn enc32<C: Code>(&self, f: &Format, p: &Params, x: &[f32], rnd: &[u32], d: &mut [C]) {
        if !self.kernel_f32(f) {
            for (i, (y, v)) in d.iter_mut().zip(x).enumerate() {
                *y = C::from_u32(core::round_f32_step(f, *v, self.step(rnd, i), self.ov));
            }
            return;
        }
        if !p.fits_f32 {
            // Widened exactly; float32 precision for the comparisons.
            let mut tmp = [0f64; CHUNK];
            let t = &mut tmp[..x.len()];
            for (y, v) in t.iter_mut().zip(x) {
                *y = *v as f64;
            }
            return self.enc64(f, p, t, rnd, d, 24);
        }
        let mp = &self.mp32;
        streamed(x, rnd, d, |x, rnd, d| {
            with_round_kind!(
                f,
                |Q| with_family!(self.family, |M| {
                    // AVX-512 leaves the one-byte codes of signed formats
                    // to its own kernels ([`hw::det8_avx512`],
                    // [`hw::sr8_avx512`], through `table_for`) and to AVX2's
                    // code for the steps and formats they leave: no
                    // AVX-512 instance of the element code for those in the
                    // shipped library.
                    let path = match self.path {
                        Path::Avx512 if Q::SIGNED && size_of::<C>() == 1 => Path::Avx2,
                        p => p,
                    };
                    on_path!(path, |m| unsafe {
                        // SAFETY: the path was confirmed available (AVX-512
                        // includes AVX2).
                        m::rm_enc32::<Q, M, C>(p, mp, x, rnd, d)
                    })
                }),
                unreachable!("checked by kernel_f32")
            )
        })
    }

    /// float64 values → codes of `f`, the stochastic comparisons at
    /// precision `prec` (24: widened float32 sources).
    fn enc64<C: Code>(
        &self,
        f: &Format,
        p: &Params,
        x: &[f64],
        rnd: &[u32],
        d: &mut [C],
        prec: u32,
    ) {
        let mp = if prec == 24 { &self.mp32 } else { &self.mp64 };
        let scalar = |d: &mut [C]| {
            for (i, (y, v)) in d.iter_mut().zip(x).enumerate() {
                // Exact: a float32 source widened (prec 24) is a float32.
                let c = if prec == 24 {
                    core::round_f32_step(f, *v as f32, self.step(rnd, i), self.ov)
                } else {
                    core::round_f64_step(f, *v, self.step(rnd, i), self.ov)
                };
                *y = C::from_u32(c);
            }
        };
        if self.path == Path::Scalar {
            return scalar(d);
        }
        if p.fits_f64 {
            with_round_kind!(
                f,
                |Q| with_family!(self.family, |M| on_path!(self.path, |m| unsafe {
                    // SAFETY: the path was confirmed available.
                    m::rm_enc64::<Q, M, C>(p, mp, x, rnd, d)
                })),
                scalar(d)
            )
        } else if p.covers_f64 {
            with_wide_kind!(
                f,
                |Q| with_family!(self.family, |M| on_path!(self.path, |m| unsafe {
                    // SAFETY: the path was confirmed available.
                    m::rm_enc64_wide::<Q, M, C>(p, mp, x, rnd, d)
                })),
                scalar(d)
            )
        } else {
            scalar(d)
        }
    }

    fn enc_f64_to_f32(&self, x: &[f64], rnd: &[u32], d: &mut [u32]) {
        if self.path == Path::Scalar {
            for (i, (y, v)) in d.iter_mut().zip(x).enumerate() {
                *y = core::round_f64_to_f32_step(*v, self.step(rnd, i), self.ov);
            }
            return;
        }
        let (p, mp) = (&BINARY32_PARAMS, &self.mp64);
        with_family!(self.family, |M| on_path!(self.path, |m| unsafe {
            // SAFETY: the path was confirmed available.
            m::rm_enc64::<B32, M, u32>(p, mp, x, rnd, d)
        }))
    }

    /// Whether the whole of `src` → `dst` can be one kernel call: a
    /// deterministic mode between a float32 / float64 source and a target
    /// on the same kernel, over aligned buffers.
    fn single_pass(&self, src: &[u8], dst: &[u8]) -> bool {
        if self.family != Family::Det || self.path == Path::Scalar {
            return false;
        }
        let (sa, one) = match (self.from, self.to) {
            (Source::F32, Target::Code(f, p, _)) => (4, p.fits_f32 && self.kernel_f32(&f)),
            (Source::F64, Target::Code(_, p, _)) => (8, p.fits_f64 || p.covers_f64),
            (Source::F64, Target::F32) => (8, true),
            _ => (0, false),
        };
        let sb = match self.to {
            Target::F32 => 4,
            Target::Code(_, _, b) => b,
        };
        one && (src.as_ptr() as usize).is_multiple_of(sa)
            && (dst.as_ptr() as usize).is_multiple_of(sb)
    }

    /// Converts `src` into `dst`, elements `start ..` of the whole.
    fn run(&self, start: usize, src: &[u8], dst: &mut [u8], sa: usize, sb: usize) {
        // The random numbers of each chunk (none for the deterministic modes).
        let mut store = (self.family != Family::Det).then_some([0u32; CHUNK]);
        let buf: &mut [u32] = match &mut store {
            Some(b) => b,
            None => &mut [],
        };
        if self.single_pass(src, dst) {
            return self.chunk(start, src, dst, buf);
        }
        for (k, (s, d)) in src
            .chunks(CHUNK * sa)
            .zip(dst.chunks_mut(CHUNK * sb))
            .enumerate()
        {
            self.chunk(start + k * CHUNK, s, d, buf);
        }
    }
}

/// Rounds unpacked little-endian elements of `from` (float32, float64, or
/// any float format through its exact value) into `to` (float32 or a float
/// format) under `r`; `parallel` splits long inputs across rayon's pool;
/// `lazy` checks explicit random numbers as they are read (`dst` may then
/// hold part of a result when they are refused).
#[allow(clippy::too_many_arguments)]
pub(crate) fn round_bytes(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    r: &Rounding,
    path: Path,
    parallel: bool,
    lazy: bool,
) -> Result<(), CastError> {
    let unsupported = || CastError::UnsupportedPair { from, to };
    let source = source_of(from).ok_or_else(unsupported)?;
    let target = target_of(to).ok_or_else(unsupported)?;
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
    if lazy {
        r.validate_form(n)
    } else {
        r.validate(n)
    }
    .map_err(CastError::Rounding)?;
    if is_astype(r, &target) {
        let ov = core::overflow_of(r.saturate);
        return engine::convert_bytes(src, from, dst, to, ov, path, parallel);
    }
    if run(src, source, sa, dst, target, sb, r, path, parallel, lazy) {
        // A chunk found a number too large: the whole check names the first.
        r.validate(n).map_err(CastError::Rounding)?;
    }
    Ok(())
}

/// Rounds float32 / float64 values (`C` of them, as bytes) into the codes
/// of `fmt` (`C::BYTES` each) under `r`, on the calling thread: a
/// [`super::Codec`]'s conversions. The caller checked lengths, the path
/// and the word.
pub(crate) fn round_codes<C: Code>(
    src: &[u8],
    source: Source,
    dst: &mut [C],
    fmt: &Format,
    r: &Rounding,
    path: Path,
) -> Result<(), CastError> {
    let (sa, n) = match source {
        Source::F32 => (4, src.len() / 4),
        Source::F64 => (8, src.len() / 8),
        Source::Code(_, b) => (b, src.len() / b),
    };
    r.validate(n).map_err(CastError::Rounding)?;
    let target = Target::Code(*fmt, Params::of(fmt), C::BYTES);
    let dst: &mut [u8] = bytemuck::cast_slice_mut(dst);
    run(
        src,
        source,
        sa,
        dst,
        target,
        C::BYTES,
        r,
        path,
        false,
        false,
    );
    Ok(())
}

/// Runs a validated rounding (explicit random numbers checked chunk by
/// chunk if `lazy`); whether one was found too large.
#[allow(clippy::too_many_arguments)]
fn run(
    src: &[u8],
    from: Source,
    sa: usize,
    dst: &mut [u8],
    to: Target,
    sb: usize,
    r: &Rounding,
    path: Path,
    parallel: bool,
    lazy: bool,
) -> bool {
    let sr_bits = r.random.sr_bits().unwrap_or(0);
    let mut job = Job {
        path,
        mode: r.mode,
        family: family(r.mode),
        ov: core::overflow_of(r.saturate),
        sat: r.saturate,
        sr_bits,
        random: r.random,
        mp32: ModeParams::of(r.mode, r.saturate, sr_bits, 53),
        mp64: ModeParams::of(r.mode, r.saturate, sr_bits, 53),
        from,
        to,
        lazy,
        bad: AtomicBool::new(false),
        table: None,
        stream: src.len() + dst.len() >= engine::STREAM_THRESHOLD && 2 * sb >= sa && sb <= 2 * sa,
    };
    job.table = job.table_for(src.len() / sa);
    let stream = job.stream;
    let go = |start: usize, s: &[u8], d: &mut [u8]| {
        // Streaming hands over consecutive pieces of `s`: each piece's
        // first element is found from its place in `s` (the random
        // numbers are the element's).
        let base = s.as_ptr() as usize;
        let plain = |p: &[u8], d: &mut [u8]| {
            job.run(start + (p.as_ptr() as usize - base) / sa, p, d, sa, sb)
        };
        if !(stream && engine::convert_streaming(path, sa, sb, s, d, &plain)) {
            job.run(start, s, d, sa, sb)
        }
    };
    #[cfg(feature = "rayon")]
    if engine::split(parallel, src.len() / sa) {
        use rayon::prelude::*;
        src.par_chunks(engine::PAR_CHUNK * sa)
            .zip(dst.par_chunks_mut(engine::PAR_CHUNK * sb))
            .enumerate()
            .for_each(|(k, (s, d))| go(k * engine::PAR_CHUNK, s, d));
        return job.bad.into_inner();
    }
    let _ = parallel;
    go(0, src, dst);
    job.bad.into_inner()
}
