//! Vectorised block quantizers: MX from float32 and NVFP4 from float32 or
//! float64, one block at a time, written once and compiled per instruction
//! set (see [`crate::cast::Path`]) as the conversion kernels of
//! [`crate::cast`] are.
//!
//! MX: the block's largest magnitude is the maximum of the inputs' bit
//! patterns with the sign cleared (an integer maximum that orders every
//! finite float32 and puts infinities and NaNs above them all); the scale
//! exponent follows from its exponent field (and, for the ceil rule, one
//! comparison of its fraction with that of the element maximum); each
//! element is scaled by the exact power of two `2^−k` in float32 and rounded
//! by the saturating float32 → element conversion of the cast kernels
//! ([`crate::cast::kernels::enc_f32`]), MXINT8 by a round-to-nearest-even
//! addend. The scaling is exact except where the product falls below
//! float32's normal range, far below half the element format's smallest
//! subnormal, where every candidate rounds to ±0 alike.
//!
//! NVFP4: every rounding is decided by exact comparisons, with no division.
//! For the call's tensor scale `s2`, the boundaries between adjacent
//! float8_e4m3fn block scales (midpoints, at most 5 significant bits) times
//! `6 · s2` (26 bits), and for each block scale `c` the float4_e2m1fn
//! boundaries `B` (0.25, 0.75, … 5, and 7 where clipping starts) times
//! `d = e4m3(c) · s2`, are products exact in float64, computed once per
//! call. A block's scale code is the number of scale boundaries below its
//! largest magnitude (a float64 estimate corrected by two comparisons);
//! each element code is
//! the number of element boundaries below `|V|`: the correctly rounded
//! quotient, ties to even, as the reference computes it by exact division.

use crate::cast::kernels::{self as ck, Fmt};

use super::{BlockCounts, E8M0_NAN, MX_BLOCK, NVFP4_BLOCK};

/// Lanes of error statistics accumulators.
pub(crate) const LANES: usize = 8;

/// Elements per block of [`ErrLanes::cast_slices`]' first pass.
const BLOCK: usize = 512;

/// Error statistics of a conversion in [`LANES`] lanes: element `i` of a
/// pass goes to lane `i % 8`, and each lane adds its elements in order, so
/// the sums do not depend on how the pass is split (at multiples of 8) nor
/// on the instruction set; the lanes are added up in order at the end
/// (`checkpoint::Stats`). Every operation is an exactly specified `f64`
/// operation (no fused multiply-add), so each kernel gives the same bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ErrLanes {
    /// `Σ (y − x)²` over the finite pairs.
    pub err: [f64; LANES],
    /// `Σ x²` over the finite pairs.
    pub sq: [f64; LANES],
    /// The largest `|y − x|` over the finite pairs.
    pub max: [f64; LANES],
    /// Finite originals beyond the target's range (plain conversions).
    pub clip: [u64; LANES],
    /// Finite originals that became inf / NaN.
    pub nonfin: [u64; LANES],
    /// Non-zero finite originals that became zero.
    pub flushed: [u64; LANES],
}

impl ErrLanes {
    /// The pair (original `x`, exactly dequantized `y`) of a block
    /// quantization, in lane `l`: a non-finite `x` is left out; a finite `x`
    /// whose block reads back as NaN counts as non-finite (clipping is
    /// counted by the quantizer).
    #[inline(always)]
    pub fn exact(&mut self, l: usize, x: f64, y: f64) {
        let finite = x.abs() < f64::INFINITY;
        let yfin = y.abs() < f64::INFINITY;
        let ok = finite & yfin;
        let e = if ok { (y - x).abs() } else { 0.0 };
        self.nonfin[l] += (finite & !yfin) as u64;
        self.flushed[l] += (ok & (x != 0.0) & (y == 0.0)) as u64;
        self.max[l] = if e > self.max[l] { e } else { self.max[l] };
        self.err[l] += e * e;
        self.sq[l] += if ok { x * x } else { 0.0 };
    }

    /// [`ErrLanes::exact`] for a finite `x` and a finite `y` (a block that
    /// holds no NaN or infinity).
    #[inline(always)]
    fn finite(&mut self, l: usize, x: f64, y: f64) {
        let e = (y - x).abs();
        self.flushed[l] += ((x != 0.0) & (y == 0.0)) as u64;
        self.max[l] = if e > self.max[l] { e } else { self.max[l] };
        self.err[l] += e * e;
        self.sq[l] += x * x;
    }

    /// [`ErrLanes::finite`] for eight pairs, one per lane.
    #[inline(always)]
    fn finite8(&mut self, x: &[f64; LANES], y: &[f64; LANES]) {
        for l in 0..LANES {
            self.finite(l, x[l], y[l]);
        }
    }

    /// [`ErrLanes::exact`] for the originals `x` of a block that reads back
    /// as NaN: each finite one counts as non-finite (the sums take nothing).
    #[inline(always)]
    fn nan_block<T: Copy + Into<f64>>(&mut self, x: &[T]) {
        for (i, v) in x.iter().enumerate() {
            let v: f64 = (*v).into();
            self.nonfin[i % LANES] += (v.abs() < f64::INFINITY) as u64;
        }
    }

    /// The pairs (original `xs[i]`, converted `ys[i]`) of a plain conversion
    /// (equal lengths), element `i` in lane `i % 8`: a finite original whose
    /// magnitude rounds beyond the target's largest value (beyond `thr`, or
    /// at it with `tie`), or whose result is not finite, counts as clipped
    /// and is left out of the sums. The tests run on the float32 lanes (the
    /// threshold moved to the first float32 it excludes), the sums in
    /// float64.
    ///
    /// A block of [`BLOCK`] pairs is taken first on the assumption that
    /// every pair counts, with no test but the flushed count's: the largest
    /// original magnitude pattern (below the threshold's: finite and in
    /// range) and finite squared-error sums (no result was inf or NaN)
    /// confirm it at the block's end. Otherwise the block is taken again,
    /// from the sums as they were before it, with every test; either pass
    /// gives each lane the same operations in the same order, so the same
    /// bits. A checkpoint's blocks rarely hold a NaN, an infinity or a value
    /// beyond the target's range, and the first pass costs about half of
    /// the second (float32 → float8_e4m3fn on AVX2: 0.31 against 0.6 ns per
    /// pair).
    #[inline(always)]
    pub fn cast_slices(&mut self, xs: &[f32], ys: &[f32], thr: f64, tie: bool) {
        let t = first_beyond(thr, tie);
        let mut acc = CastAcc {
            err: self.err,
            sq: self.sq,
            max: self.max,
            ..CastAcc::default()
        };
        // 32-bit counts, a part of at most 2^31 elements at a time.
        for (xs, ys) in xs.chunks(1 << 31).zip(ys.chunks(1 << 31)) {
            acc.clip = [0; LANES];
            acc.nonfin = [0; LANES];
            acc.flushed = [0; LANES];
            let n8 = xs.len() / LANES * LANES;
            let tbits = t.to_bits();
            for (xb, yb) in xs[..n8].chunks(BLOCK).zip(ys[..n8].chunks(BLOCK)) {
                // First on the assumption that every pair counts.
                let before = (acc.err, acc.sq, acc.max, acc.flushed);
                let mut amax = [0u32; LANES];
                for (x, y) in xb.chunks_exact(LANES).zip(yb.chunks_exact(LANES)) {
                    let x: &[f32; LANES] = x.try_into().expect("eight lanes");
                    let y: &[f32; LANES] = y.try_into().expect("eight lanes");
                    acc.add_counted(x, y, &mut amax);
                }
                let counted =
                    amax.iter().all(|a| *a < tbits) && acc.err.iter().all(|e| e.is_finite());
                if !counted {
                    (acc.err, acc.sq, acc.max, acc.flushed) = before;
                    for (x, y) in xb.chunks_exact(LANES).zip(yb.chunks_exact(LANES)) {
                        let x: &[f32; LANES] = x.try_into().expect("eight lanes");
                        let y: &[f32; LANES] = y.try_into().expect("eight lanes");
                        acc.add(x, y, t);
                    }
                }
            }
            if n8 < xs.len() {
                // The remainder padded with (NaN, NaN) pairs, which change nothing.
                let (mut x, mut y) = ([f32::NAN; LANES], [f32::NAN; LANES]);
                x[..xs.len() - n8].copy_from_slice(&xs[n8..]);
                y[..xs.len() - n8].copy_from_slice(&ys[n8..]);
                acc.add(&x, &y, t);
            }
            for l in 0..LANES {
                self.clip[l] += acc.clip[l] as u64;
                self.nonfin[l] += acc.nonfin[l] as u64;
                self.flushed[l] += acc.flushed[l] as u64;
            }
        }
        (self.err, self.sq, self.max) = (acc.err, acc.sq, acc.max);
    }

    /// [`ErrLanes::cast_slices`] for float64 originals, every test and sum
    /// on the float64 values: a finite original whose magnitude is beyond
    /// `thr` (or at it with `tie`), or whose result `ys[i]` (exact in
    /// float64) is not finite, counts as clipped and is left out of the sums.
    #[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
    pub fn cast_slices_f64(&mut self, xs: &[f64], ys: &[f64], thr: f64, tie: bool) {
        for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
            let l = i % LANES;
            let ax = x.abs();
            let finite = ax < f64::INFINITY;
            let beyond = ax > thr || (ax == thr && tie);
            let yinf = !y.is_finite();
            let over = finite & (yinf | beyond);
            let ok = finite & !over;
            let e = if ok { (y - x).abs() } else { 0.0 };
            self.clip[l] += over as u64;
            self.nonfin[l] += (finite & yinf) as u64;
            self.flushed[l] += (ok & (*x != 0.0) & (*y == 0.0)) as u64;
            self.max[l] = if e > self.max[l] { e } else { self.max[l] };
            self.err[l] += e * e;
            self.sq[l] += if ok { x * x } else { 0.0 };
        }
    }

    /// [`ErrLanes::finite`] over the finite pairs `xs`, `ys` (equal
    /// lengths, a multiple of 8, at most 2^32 · 8), element `i` in lane
    /// `i % 8`.
    #[inline(always)]
    pub fn finite_slices<T: Nv>(&mut self, xs: &[T], ys: &[f64]) {
        let mut a = ExactAcc {
            err: self.err,
            sq: self.sq,
            max: self.max,
            flushed: [0; LANES],
        };
        for (x, y) in xs.chunks_exact(LANES).zip(ys.chunks_exact(LANES)) {
            let xv: [f64; LANES] = core::array::from_fn(|l| x[l].to_f64());
            a.add(&xv, y.try_into().expect("eight lanes"));
        }
        (self.err, self.sq, self.max) = (a.err, a.sq, a.max);
        for l in 0..LANES {
            self.flushed[l] += a.flushed[l] as u64;
        }
    }

    /// [`ErrLanes::exact`] over `xs`, `ys` (equal lengths), element `i` in
    /// lane `i % 8`.
    #[inline(always)]
    pub fn exact_slices(&mut self, xs: &[f64], ys: &[f64]) {
        let mut a = *self;
        let (xc, yc) = (xs.chunks_exact(LANES), ys.chunks_exact(LANES));
        let (xr, yr) = (xc.remainder(), yc.remainder());
        for (x, y) in xc.zip(yc) {
            for l in 0..LANES {
                a.exact(l, x[l], y[l]);
            }
        }
        for (l, (x, y)) in xr.iter().zip(yr).enumerate() {
            a.exact(l, *x, *y);
        }
        *self = a;
    }
}

/// The smallest float32 magnitude beyond the overflow limit `thr` (beyond
/// it, or at it with `tie`; +inf if no finite float32 is): the test of
/// [`ErrLanes::cast_slices`] on float32 magnitudes.
#[inline(always)]
fn first_beyond(thr: f64, tie: bool) -> f32 {
    let mut t = thr as f32;
    if (t as f64) < thr {
        t = t.next_up();
    }
    if (t as f64) == thr && !tie {
        t = t.next_up();
    }
    t
}

/// The largest magnitude of the finite values of `x` (0 if none): the
/// largest magnitude pattern below infinity's, in eight lanes.
#[inline(always)]
#[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
fn finite_amax_body(x: &[f32]) -> f32 {
    let mut m = [0u32; LANES];
    let mut lane = |l: usize, v: f32| {
        let b = v.to_bits() & 0x7fff_ffff;
        let b = if b < 0x7f80_0000 { b } else { 0 };
        m[l] = m[l].max(b);
    };
    let c = x.chunks_exact(LANES);
    let r = c.remainder();
    for v in c {
        let v: &[f32; LANES] = v.try_into().expect("eight lanes");
        for (l, v) in v.iter().enumerate() {
            lane(l, *v);
        }
    }
    for (l, v) in r.iter().enumerate() {
        lane(l, *v);
    }
    f32::from_bits(m.into_iter().max().unwrap_or(0))
}

/// The accumulators of [`ErrLanes::cast_slices`], with 32-bit counts.
#[derive(Default)]
struct CastAcc {
    err: [f64; LANES],
    sq: [f64; LANES],
    max: [f64; LANES],
    clip: [u32; LANES],
    nonfin: [u32; LANES],
    flushed: [u32; LANES],
}

impl CastAcc {
    /// [`CastAcc::add`] for eight pairs that all count (a finite original
    /// below the limit, a finite result); `amax` keeps the largest
    /// magnitude pattern of the originals, to confirm it.
    #[inline(always)]
    fn add_counted(&mut self, x: &[f32; LANES], y: &[f32; LANES], amax: &mut [u32; LANES]) {
        for l in 0..LANES {
            let (x, y) = (x[l], y[l]);
            amax[l] = amax[l].max(x.to_bits() & 0x7fff_ffff);
            self.flushed[l] += ((x != 0.0) & (y == 0.0)) as u32;
            let (x, y) = (x as f64, y as f64);
            let e = (y - x).abs();
            self.max[l] = if e > self.max[l] { e } else { self.max[l] };
            self.err[l] += e * e;
            self.sq[l] += x * x;
        }
    }

    /// Eight pairs, one per lane; `t` is the smallest float32 magnitude
    /// beyond the target's range.
    #[inline(always)]
    fn add(&mut self, x: &[f32; LANES], y: &[f32; LANES], t: f32) {
        for l in 0..LANES {
            let (x, y) = (x[l], y[l]);
            let ax = x.abs();
            let finite = ax < f32::INFINITY;
            let yinf = !y.is_finite();
            let over = finite & (yinf | (ax >= t));
            let ok = finite & !over;
            self.clip[l] += over as u32;
            self.nonfin[l] += (finite & yinf) as u32;
            self.flushed[l] += (ok & (x != 0.0) & (y == 0.0)) as u32;
            let (x, y) = (x as f64, y as f64);
            let e = if ok { (y - x).abs() } else { 0.0 };
            let q = if ok { x * x } else { 0.0 };
            self.max[l] = if e > self.max[l] { e } else { self.max[l] };
            self.err[l] += e * e;
            self.sq[l] += q;
        }
    }
}

/// `2^k` as float64 for `k` in −1022 … 1023.
#[inline(always)]
fn pow2_f64(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// An MX element format as the kernels see it.
pub(crate) trait Elem: 'static {
    /// Bits per element (8, 6 or 4).
    const BITS: u32;
    /// `emax_elem` (OCP MX v1.0 §6.3).
    const EMAX: i32;
    /// The float32 fraction field of the largest element (the ceil rule
    /// compares the block maximum's fraction with it).
    const MAX_FRAC: u32;
    /// The element code of the float32 `q` (bits, already scaled), saturated,
    /// and whether it clipped.
    fn encode(q: u32) -> (u32, bool);
    /// The value of an element code as float32 bits (exact: every element
    /// value is a float32).
    fn decode(c: u32) -> u32;
}

/// A float element format: the saturating float32 conversion of the cast
/// kernels, clipping decided on the scaled magnitude.
pub(crate) struct FloatElem<F: Fmt, const BITS: u32, const EMAX: i32>(core::marker::PhantomData<F>);

impl<F: Fmt, const BITS: u32, const EMAX: i32> Elem for FloatElem<F, BITS, EMAX> {
    const BITS: u32 = BITS;
    const EMAX: i32 = EMAX;
    const MAX_FRAC: u32 = {
        // The largest finite value's fraction bits, moved to float32's place.
        let f = F::F;
        (f.max_code() & f.man_mask()) << (23 - f.man_bits)
    };
    #[inline(always)]
    fn encode(q: u32) -> (u32, bool) {
        // Saturation changes the result from the midpoint between the
        // largest value and the next (unbounded) one up, or from that
        // midpoint itself when the largest code is odd (the tie goes up).
        const fn threshold(f: crate::format::Format) -> u32 {
            let e = f.max_code() >> f.man_bits; // biased exponent of the maximum
            let frac = (f.max_code() & f.man_mask()) << (23 - f.man_bits);
            let max_bits = ((e as i32 - f.bias + 127) as u32) << 23 | frac;
            // + half an ulp of the element format, in float32 bits.
            let t = max_bits + (1 << (22 - f.man_bits));
            t + (f.max_code() & 1 == 0) as u32
        }
        let thr: u32 = const { threshold(F::F) };
        (enc_scaled::<F>(q), (q & 0x7fff_ffff) >= thr)
    }
    #[inline(always)]
    fn decode(c: u32) -> u32 {
        ck::dec_f32::<F>(c)
    }
}

/// The saturating float32 → `F` conversion of the cast kernels
/// ([`ck::enc_f32`] with saturation) for the finite scaled values of an MX
/// block (a block holding a NaN or an infinity never gets here): the same
/// rounding (ties to even; the floating-point unit rounds to the subnormal
/// quantum), without the NaN and payload handling, so fewer operations per
/// lane.
#[inline(always)]
fn enc_scaled<F: Fmt>(q: u32) -> u32 {
    let f = F::F;
    let m = f.man_bits;
    let shift = 23 - m;
    let neg = q >> 31;
    let a = q & 0x7fff_ffff;
    let emin = 1 - f.bias;
    let normal_min = ((emin + 127) as u32) << 23;
    let r = a.wrapping_add((1u32 << (shift - 1)) - 1 + ((a >> shift) & 1));
    let cn = (r >> shift).wrapping_sub(((127 - f.bias) as u32) << m);
    let magic: u32 = const {
        // 2^(emin − m + 23): adding it rounds to the subnormal quantum.
        let f = F::F;
        ((1 - f.bias - f.man_bits as i32 + 23 + 127) as u32) << 23
    };
    let cs = (f32::from_bits(a) + f32::from_bits(magic))
        .to_bits()
        .wrapping_sub(magic);
    let mag = if a < normal_min { cs } else { cn };
    mag.min(f.max_code()) | neg << (f.exp_bits + f.man_bits)
}

/// MXINT8: `round(q · 64)` ties to even, clamped to −128 … 127.
pub(crate) struct Int8Elem;

impl Elem for Int8Elem {
    const BITS: u32 = 8;
    const EMAX: i32 = 0;
    // 127/64 = 1.984375: fraction 0b1111110 · 2^16.
    const MAX_FRAC: u32 = 0x7e << 16;
    #[inline(always)]
    fn encode(q: u32) -> (u32, bool) {
        // |q · 64| < 2^9: adding 1.5 · 2^23 rounds it to an integer, ties to
        // even (in the default rounding mode), held in the low bits of the
        // sum's pattern.
        const MAGIC: f32 = 12_582_912.0;
        let n = ((f32::from_bits(q) * 64.0 + MAGIC).to_bits() as i32)
            .wrapping_sub(MAGIC.to_bits() as i32);
        let c = n.clamp(-128, 127);
        (c as u32 & 0xff, c != n)
    }
    #[inline(always)]
    fn decode(c: u32) -> u32 {
        // At most 8 significant bits times 2^-6: exact.
        ((c as u8 as i8) as f32 / 64.0).to_bits()
    }
}

pub(crate) type E4M3 = FloatElem<ck::E4M3FN, 8, 8>;
pub(crate) type E5M2 = FloatElem<ck::E5M2, 8, 15>;
pub(crate) type E3M2 = FloatElem<ck::F6E3M2, 6, 4>;
pub(crate) type E2M3 = FloatElem<ck::F6E2M3, 6, 2>;
pub(crate) type E2M1 = FloatElem<ck::F4E2M1, 4, 2>;

/// The E8M0 scale exponent (−127 … 127) of a block whose largest magnitude
/// has the float32 bits `a` (finite; 0 gives −127, the scale code 0 of an
/// all-zero block).
#[inline(always)]
fn scale_exp<E: Elem, const CEIL: bool>(a: u32) -> i32 {
    if a == 0 {
        return -127;
    }
    // floor(log2 a) and the fraction normalised to 23 bits.
    let (lg, frac) = if a >= 0x0080_0000 {
        ((a >> 23) as i32 - 127, a & 0x7f_ffff)
    } else {
        let lz = a.leading_zeros(); // 9 … 31
        (-149 + 31 - lz as i32, (a << (lz - 8)) & 0x7f_ffff)
    };
    let k = lg - E::EMAX + (CEIL && frac > E::MAX_FRAC) as i32;
    k.clamp(-127, 127)
}

/// `2^−k` as float32 for `k` in −127 … 127 (`2^−127` is subnormal, exact).
#[inline(always)]
fn inv_pow2(k: i32) -> f32 {
    if k == 127 {
        f32::from_bits(0x0040_0000)
    } else {
        f32::from_bits(((127 - k) as u32) << 23)
    }
}

/// Packs 32 element codes of `bits` bits, least-significant bit first.
#[inline(always)]
fn pack_block(c: &[u32; MX_BLOCK], bits: u32, out: &mut [u8]) {
    match bits {
        8 => {
            for (d, s) in out.iter_mut().zip(c) {
                *d = *s as u8;
            }
        }
        6 => {
            // Four codes make 24 bits; eight such groups, three 64-bit words.
            let mut g = [0u64; 8];
            for (w, s) in g.iter_mut().zip(c.chunks_exact(4)) {
                *w = (s[0] | s[1] << 6 | s[2] << 12 | s[3] << 18) as u64;
            }
            let w0 = g[0] | g[1] << 24 | g[2] << 48;
            let w1 = g[2] >> 16 | g[3] << 8 | g[4] << 32 | g[5] << 56;
            let w2 = g[5] >> 8 | g[6] << 16 | g[7] << 40;
            out[..8].copy_from_slice(&w0.to_le_bytes());
            out[8..16].copy_from_slice(&w1.to_le_bytes());
            out[16..24].copy_from_slice(&w2.to_le_bytes());
        }
        _ => {
            for (d, s) in out.iter_mut().zip(c.chunks_exact(2)) {
                *d = (s[0] | s[1] << 4) as u8;
            }
        }
    }
}

/// The instruction set a kernel instantiation was compiled for, as a
/// constant its generic body can branch on (the branches not taken are
/// removed): the portable body, or the AVX2 / AVX-512 helpers below, which
/// only the instantiations with those features call.
pub(crate) const PORTABLE: u8 = 0;
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX2: u8 = 1;
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX512: u8 = 2;

/// The largest magnitude pattern (float32 bits, sign cleared) of each of the
/// whole blocks of `B` elements of `x` into `out`: an integer maximum that
/// orders every finite float32 and puts infinities and NaNs above them.
/// `SIMD` picks the AVX2 / AVX-512 helpers, which reduce 8 / 16 blocks at a
/// time in registers (a tree of lane shuffles) instead of one horizontal
/// reduction per block.
#[inline(always)]
fn block_amax<const B: usize, const SIMD: u8>(x: &[f32], out: &mut [u32]) {
    let nb = x.len() / B;
    let done = match SIMD {
        // SAFETY: only the instantiations compiled with AVX2 / AVX-512 pass
        // these levels.
        #[cfg(target_arch = "x86_64")]
        AVX2 => unsafe { block_amax_avx2::<B>(x, out) },
        #[cfg(target_arch = "x86_64")]
        AVX512 => unsafe { block_amax_avx512::<B>(x, out) },
        _ => 0,
    };
    for (o, b) in out[done..nb].iter_mut().zip(x[done * B..].chunks_exact(B)) {
        let mut m = 0u32;
        for v in b {
            m = m.max(v.to_bits() & 0x7fff_ffff);
        }
        *o = m;
    }
}

/// [`block_amax`] for blocks of `b` (16 or 32) at instruction-set level
/// `SIMD`, for tests (which check the level is available first).
#[cfg(test)]
pub(crate) fn block_amax_on<const SIMD: u8>(b: usize, x: &[f32], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn with_avx2(b: usize, x: &[f32], out: &mut [u32]) {
        if b == 16 {
            block_amax::<16, AVX2>(x, out)
        } else {
            block_amax::<32, AVX2>(x, out)
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2")]
    unsafe fn with_avx512(b: usize, x: &[f32], out: &mut [u32]) {
        if b == 16 {
            block_amax::<16, AVX512>(x, out)
        } else {
            block_amax::<32, AVX512>(x, out)
        }
    }
    match SIMD {
        // SAFETY: the test checked the path is available.
        #[cfg(target_arch = "x86_64")]
        AVX2 => unsafe { with_avx2(b, x, out) },
        #[cfg(target_arch = "x86_64")]
        AVX512 => unsafe { with_avx512(b, x, out) },
        _ if b == 16 => block_amax::<16, PORTABLE>(x, out),
        _ => block_amax::<32, PORTABLE>(x, out),
    }
}

/// [`block_amax`] of 8 blocks at a time with AVX2; returns the blocks done.
///
/// # Safety
/// AVX2 is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn block_amax_avx2<const B: usize>(x: &[f32], out: &mut [u32]) -> usize {
    use core::arch::x86_64::*;
    let nb = x.len() / B / 8 * 8;
    let mask = _mm256_set1_epi32(0x7fff_ffff);
    let order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
    for g in (0..nb).step_by(8) {
        // v[j]: eight partial maxima of block g + j.
        let mut v = [_mm256_setzero_si256(); 8];
        for (j, vj) in v.iter_mut().enumerate() {
            let p = x.as_ptr().add((g + j) * B) as *const __m256i;
            let mut m = _mm256_and_si256(_mm256_loadu_si256(p), mask);
            for h in 1..B / 8 {
                m = _mm256_max_epu32(m, _mm256_and_si256(_mm256_loadu_si256(p.add(h)), mask));
            }
            *vj = m;
        }
        // Halves: m[k] holds blocks 2k (low 128 bits) and 2k + 1 (high), four
        // partial maxima each.
        let mut m = [_mm256_setzero_si256(); 4];
        for (k, mk) in m.iter_mut().enumerate() {
            let (a, b) = (v[2 * k], v[2 * k + 1]);
            *mk = _mm256_max_epu32(
                _mm256_permute2x128_si256::<0x20>(a, b),
                _mm256_permute2x128_si256::<0x31>(a, b),
            );
        }
        // Quarters: each 128-bit half holds two blocks, two partials each.
        let mut n = [_mm256_setzero_si256(); 2];
        for (k, nk) in n.iter_mut().enumerate() {
            let (a, b) = (m[2 * k], m[2 * k + 1]);
            *nk = _mm256_max_epu32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
        }
        // Full maxima in adjacent lane pairs, interleaved, then in order.
        let s0 = _mm256_max_epu32(n[0], _mm256_shuffle_epi32::<0xB1>(n[0]));
        let s1 = _mm256_max_epu32(n[1], _mm256_shuffle_epi32::<0xB1>(n[1]));
        let r = _mm256_permutevar8x32_epi32(_mm256_blend_epi32::<0b1010_1010>(s0, s1), order);
        _mm256_storeu_si256(out.as_mut_ptr().add(g) as *mut __m256i, r);
    }
    nb
}

/// [`block_amax`] of 16 blocks at a time with AVX-512; returns the blocks
/// done.
///
/// # Safety
/// AVX-512 F is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn block_amax_avx512<const B: usize>(x: &[f32], out: &mut [u32]) -> usize {
    use core::arch::x86_64::*;
    let nb = x.len() / B / 16 * 16;
    let mask = _mm512_set1_epi32(0x7fff_ffff);
    let order = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15);
    for g in (0..nb).step_by(16) {
        let mut v = [_mm512_setzero_si512(); 16];
        for (j, vj) in v.iter_mut().enumerate() {
            let p = x.as_ptr().add((g + j) * B) as *const __m512i;
            let mut m = _mm512_and_si512(_mm512_loadu_si512(p), mask);
            for h in 1..B / 16 {
                m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(p.add(h)), mask));
            }
            *vj = m;
        }
        // Halves: w[k] holds blocks 2k (chunks 0, 1) and 2k + 1 (2, 3).
        let mut w = [_mm512_setzero_si512(); 8];
        for (k, wk) in w.iter_mut().enumerate() {
            let (a, b) = (v[2 * k], v[2 * k + 1]);
            *wk = _mm512_max_epu32(
                _mm512_shuffle_i32x4::<0x44>(a, b),
                _mm512_shuffle_i32x4::<0xEE>(a, b),
            );
        }
        // Quarters: x4[k] holds blocks 4k … 4k + 3, one per 128-bit chunk.
        let mut q = [_mm512_setzero_si512(); 4];
        for (k, qk) in q.iter_mut().enumerate() {
            let (a, b) = (w[2 * k], w[2 * k + 1]);
            *qk = _mm512_max_epu32(
                _mm512_shuffle_i32x4::<0x88>(a, b),
                _mm512_shuffle_i32x4::<0xDD>(a, b),
            );
        }
        // Eighths: chunk c of y[k] holds blocks (8k + c) and (8k + 4 + c),
        // two partials each.
        let mut y = [_mm512_setzero_si512(); 2];
        for (k, yk) in y.iter_mut().enumerate() {
            let (a, b) = (q[2 * k], q[2 * k + 1]);
            *yk = _mm512_max_epu32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
        }
        let s0 = _mm512_max_epu32(y[0], _mm512_shuffle_epi32::<0xB1>(y[0]));
        let s1 = _mm512_max_epu32(y[1], _mm512_shuffle_epi32::<0xB1>(y[1]));
        // Chunk c: blocks c, 8 + c, 4 + c, 12 + c; then in order.
        let z = _mm512_mask_blend_epi32(0xAAAA, s0, s1);
        let r = _mm512_permutexvar_epi32(order, z);
        _mm512_storeu_si512(out.as_mut_ptr().add(g) as *mut __m512i, r);
    }
    nb
}

/// Packs 32 element codes (each below 2^bits) of `bits` = 4 or 6 bits,
/// least-significant bit first, with AVX2: the codes narrowed to bytes, then
/// pairs (and, for 6 bits, pairs of pairs) combined by multiply-adds, the
/// bytes of each group gathered by a byte shuffle.
///
/// # Safety
/// AVX2 is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pack_block_avx2(c: &[u32; MX_BLOCK], bits: u32, out: &mut [u8]) {
    use core::arch::x86_64::*;
    let p = c.as_ptr() as *const __m256i;
    let (c0, c1, c2, c3) = (
        _mm256_loadu_si256(p),
        _mm256_loadu_si256(p.add(1)),
        _mm256_loadu_si256(p.add(2)),
        _mm256_loadu_si256(p.add(3)),
    );
    // Bytes in 128-bit-lane order, then in element order.
    let b = _mm256_packus_epi16(_mm256_packus_epi32(c0, c1), _mm256_packus_epi32(c2, c3));
    let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if bits == 4 {
        // c[2i] + 16 · c[2i + 1] in 16-bit lanes, narrowed to bytes.
        let w = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x1001));
        let n = _mm256_packus_epi16(w, w);
        let n = _mm256_permute4x64_epi64::<0b1000>(n);
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, _mm256_castsi256_si128(n));
    } else {
        // c[2i] + 64 · c[2i + 1] (12 bits), then pairs of those: 24 bits in
        // each 32-bit lane, whose three low bytes are gathered.
        let w = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x4001));
        let d = _mm256_madd_epi16(w, _mm256_set1_epi32(0x1000_0001));
        let g = _mm256_shuffle_epi8(
            d,
            _mm256_setr_epi8(
                0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9, 10,
                12, 13, 14, -1, -1, -1, -1,
            ),
        );
        let g = _mm256_permutevar8x32_epi32(g, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, _mm256_castsi256_si128(g));
        _mm_storel_epi64(
            out.as_mut_ptr().add(16) as *mut __m128i,
            _mm256_extracti128_si256::<1>(g),
        );
    }
}

/// MX quantization of whole blocks of float32 (`src.len()` a multiple of 32,
/// `blocks` and `scales` sized for it); with `STATS`, the error statistics
/// of each element against its exact dequantized value go to `acc`.
#[inline(always)]
fn mx_f32_body<E: Elem, const CEIL: bool, const STATS: bool, const SIMD: u8>(
    src: &[f32],
    blocks: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
    cast_stats: impl Fn(&[f32], &[f32], &mut ErrLanes),
) -> BlockCounts {
    /// Blocks per group: the statistics of a group whose dequantized values
    /// are all exact in float32 are taken in one pass of `cast_stats`
    /// ([`ErrLanes::cast_slices`] with no limit).
    const GROUP: usize = 32;
    let bb = MX_BLOCK * E::BITS as usize / 8;
    let mut counts = BlockCounts::default();
    let mut a = *acc;
    for ((xg, outg), scg) in src
        .chunks(GROUP * MX_BLOCK)
        .zip(blocks.chunks_mut(GROUP * bb))
        .zip(scales.chunks_mut(GROUP))
    {
        // 32-bit codes, as wide as the float32 lanes they come from.
        let mut codes = [0u32; GROUP * MX_BLOCK];
        // The scale exponent of each block (`None`: the NaN scale).
        let mut ks = [None; GROUP];
        // The blocks' largest magnitudes first, several blocks at a time.
        let mut amaxes = [0u32; GROUP];
        let mut clips = [0u32; MX_BLOCK];
        block_amax::<MX_BLOCK, SIMD>(xg, &mut amaxes);
        for (b, ((x, out), scale)) in xg
            .chunks_exact(MX_BLOCK)
            .zip(outg.chunks_exact_mut(bb))
            .zip(scg.iter_mut())
            .enumerate()
        {
            let x: &[f32; MX_BLOCK] = x.try_into().expect("whole blocks");
            let amax = amaxes[b];
            if amax >= 0x7f80_0000 {
                // A NaN or an infinity: the NaN scale, zero elements.
                *scale = E8M0_NAN;
                out.fill(0);
                counts.nan_blocks += 1;
                continue;
            }
            let k = scale_exp::<E, CEIL>(amax);
            *scale = (k + 127) as u8;
            ks[b] = Some(if amax == 0 { 0 } else { k });
            let inv = inv_pow2(k);
            let codes: &mut [u32; MX_BLOCK] = (&mut codes[b * MX_BLOCK..][..MX_BLOCK])
                .try_into()
                .expect("a block");
            // Clip counts per lane, added up once per group (no reduction
            // per block).
            for ((c, v), n) in codes.iter_mut().zip(x).zip(clips.iter_mut()) {
                let (code, clip) = E::encode((v * inv).to_bits());
                *c = code;
                *n += clip as u32;
            }
            match (SIMD, E::BITS) {
                // SAFETY: the AVX2 and AVX-512 instantiations have AVX2.
                #[cfg(target_arch = "x86_64")]
                (AVX2 | AVX512, 4 | 6) => unsafe { pack_block_avx2(codes, E::BITS, out) },
                _ => pack_block(codes, E::BITS, out),
            }
        }
        counts.clipped += clips.iter().map(|c| *c as u64).sum::<u64>();
        if STATS {
            // X · P_i: an element value (at most 7 significant bits, between
            // 2^-16 and 2^16 in magnitude) times 2^k is a normal float32 for
            // k in −110 … 111 (an all-zero block counts as k = 0).
            let n = xg.len();
            if ks[..n / MX_BLOCK]
                .iter()
                .all(|k| matches!(k, Some(-110..=111)))
            {
                let mut ys = [0f32; GROUP * MX_BLOCK];
                for (b, (y, c)) in ys[..n]
                    .chunks_exact_mut(MX_BLOCK)
                    .zip(codes.chunks_exact(MX_BLOCK))
                    .enumerate()
                {
                    let k = ks[b].unwrap_or(0);
                    let sx = f32::from_bits(((k + 127) as u32) << 23);
                    for (y, c) in y.iter_mut().zip(c) {
                        *y = f32::from_bits(E::decode(*c)) * sx;
                    }
                }
                // No original is beyond a limit and no value is infinite:
                // the pairs of a finite block as `ErrLanes::finite` takes them.
                cast_stats(xg, &ys[..n], &mut a);
            } else {
                for (b, x) in xg.chunks_exact(MX_BLOCK).enumerate() {
                    let Some(k) = ks[b] else {
                        a.nan_block(x);
                        continue;
                    };
                    let sx = pow2_f64(k);
                    let c = &codes[b * MX_BLOCK..][..MX_BLOCK];
                    for h in 0..MX_BLOCK / LANES {
                        let mut xv = [0f64; LANES];
                        let mut yv = [0f64; LANES];
                        for l in 0..LANES {
                            xv[l] = x[h * LANES + l] as f64;
                            yv[l] = f32::from_bits(E::decode(c[h * LANES + l])) as f64 * sx;
                        }
                        a.finite8(&xv, &yv);
                    }
                }
            }
        }
    }
    *acc = a;
    counts
}

/// A float type NVFP4 blocks are read from.
pub(crate) trait Nv: Copy {
    /// The largest magnitude's bit pattern (signs cleared), widened.
    fn block_amax(x: &[Self; NVFP4_BLOCK]) -> u64;
    /// [`Nv::block_amax`] of each whole block of `x` into `out` (`SIMD`: see
    /// [`block_amax`]).
    #[inline(always)]
    fn block_amaxes<const SIMD: u8>(x: &[Self], out: &mut [u64]) {
        for (o, b) in out.iter_mut().zip(x.chunks_exact(NVFP4_BLOCK)) {
            *o = Self::block_amax(b.try_into().expect("a block"));
        }
    }
    /// The magnitude pattern of +inf: every larger-or-equal pattern is not finite.
    const INF: u64;
    /// The value of a magnitude pattern, exactly.
    fn mag_f64(m: u64) -> f64;
    /// The value, exactly.
    fn to_f64(self) -> f64;
    /// Whether a block of largest magnitude pattern `a` (finite) under block
    /// scale code `sc` has elements beyond the clipping boundary.
    #[inline(always)]
    fn clips(a: u64, t: &NvTable, sc: usize) -> bool {
        Self::mag_f64(a) > t.elem[sc][7]
    }
    /// Packs the element codes of the block `x` under block scale code `sc`
    /// into `out` (8 bytes, the first element in the low nibble); returns
    /// the number of clipped elements with `CLIP` (0 without: for a block
    /// whose largest magnitude is below the clipping boundary).
    fn elements<const CLIP: bool, const SIMD: u8>(
        x: &[Self; NVFP4_BLOCK],
        t: &NvTable,
        sc: usize,
        out: &mut [u8],
    ) -> u64;
}

/// [`Nv::elements`] of float32 with AVX-512: the element code of each lane
/// is the number of boundaries of `t` below its magnitude (three steps of a
/// binary search, with lane-wise lookups of the boundaries), the sign moved
/// to bit 3,
/// pairs of codes combined in 64-bit lanes and narrowed to bytes.
///
/// # Safety
/// AVX-512 F is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn nv_elements_f32_avx512<const CLIP: bool>(
    x: &[f32; NVFP4_BLOCK],
    t: &[f32; 8],
    out: &mut [u8],
) -> u64 {
    use core::arch::x86_64::*;
    let v = _mm512_loadu_si512(x.as_ptr() as *const __m512i);
    let a = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(0x7fff_ffff)));
    // A binary search over the seven sorted boundaries, each step a lookup
    // in the row held in a register: code = 4·(a > B3), then + 2·(a >
    // B[code + 1]), then + (a > B[code]).
    let row = _mm512_castps256_ps512(_mm256_loadu_ps(t.as_ptr()));
    let one = _mm512_set1_epi32(1);
    let k = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, _mm512_set1_ps(t[3]));
    let m = _mm512_maskz_mov_epi32(k, _mm512_set1_epi32(4));
    let b = _mm512_permutexvar_ps(_mm512_add_epi32(m, one), row);
    let k = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b);
    let m = _mm512_mask_add_epi32(m, k, m, _mm512_set1_epi32(2));
    let b = _mm512_permutexvar_ps(m, row);
    let k = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b);
    let m = _mm512_mask_add_epi32(m, k, m, one);
    let sign = _mm512_and_si512(_mm512_srli_epi32::<28>(v), _mm512_set1_epi32(8));
    let c = _mm512_or_si512(m, sign);
    // Each 64-bit lane holds codes 2i and 2i + 1: shifted right by 28, the
    // second lands on bits 4–7 of the first.
    let p = _mm512_or_si512(c, _mm512_srli_epi64::<28>(c));
    _mm_storel_epi64(out.as_mut_ptr() as *mut __m128i, _mm512_cvtepi64_epi8(p));
    if CLIP {
        _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, _mm512_set1_ps(t[7])).count_ones() as u64
    } else {
        0
    }
}

/// [`Nv::elements`] of float32 with AVX2, eight lanes at a time: the binary
/// search of [`nv_elements_f32_avx512`] with lookups by
/// `_mm256_permutevar8x32_ps`, the sign moved to bit 3, pairs of codes
/// combined in 64-bit lanes and their low bytes gathered.
///
/// # Safety
/// AVX2 is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn nv_elements_f32_avx2<const CLIP: bool>(
    x: &[f32; NVFP4_BLOCK],
    t: &[f32; 8],
    out: &mut [u8],
) -> u64 {
    use core::arch::x86_64::*;
    let row = _mm256_loadu_ps(t.as_ptr());
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let one = _mm256_set1_epi32(1);
    let b3 = _mm256_set1_ps(t[3]);
    let clip_at = _mm256_set1_ps(t[7]);
    // Byte 0 of each 64-bit lane to bytes 0, 1 (low half) and 2, 3 (high).
    let gather = _mm256_setr_epi8(
        0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 8, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let mut clip = 0u32;
    for h in 0..2 {
        let v = _mm256_loadu_si256(x.as_ptr().add(8 * h) as *const __m256i);
        let a = _mm256_castsi256_ps(_mm256_and_si256(v, abs));
        let gt = |b: __m256| _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(a, b));
        let m = _mm256_and_si256(gt(b3), _mm256_set1_epi32(4));
        let b = _mm256_permutevar8x32_ps(row, _mm256_add_epi32(m, one));
        let m = _mm256_add_epi32(m, _mm256_and_si256(gt(b), _mm256_set1_epi32(2)));
        let b = _mm256_permutevar8x32_ps(row, m);
        let m = _mm256_sub_epi32(m, gt(b));
        let sign = _mm256_and_si256(_mm256_srli_epi32::<28>(v), _mm256_set1_epi32(8));
        let c = _mm256_or_si256(m, sign);
        let p = _mm256_shuffle_epi8(_mm256_or_si256(c, _mm256_srli_epi64::<28>(c)), gather);
        let q = _mm_or_si128(_mm256_castsi256_si128(p), _mm256_extracti128_si256::<1>(p));
        let w = _mm_cvtsi128_si32(q) as u32;
        out[4 * h..4 * h + 4].copy_from_slice(&w.to_le_bytes());
        if CLIP {
            clip +=
                (_mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(a, clip_at)) as u32).count_ones();
        }
    }
    clip as u64
}

impl Nv for f32 {
    /// On the patterns: for a float32 `a`, `a > T` exactly when `a >
    /// RD32(T)`, and non-negative float32 values order as their patterns.
    #[inline(always)]
    fn clips(a: u64, t: &NvTable, sc: usize) -> bool {
        a as u32 > t.elem32[sc][7].to_bits()
    }
    #[inline(always)]
    fn block_amax(x: &[f32; NVFP4_BLOCK]) -> u64 {
        let mut m = 0u32;
        for v in x {
            m = m.max(v.to_bits() & 0x7fff_ffff);
        }
        m as u64
    }
    #[inline(always)]
    fn block_amaxes<const SIMD: u8>(x: &[f32], out: &mut [u64]) {
        let mut m = [0u32; 256];
        for (xs, os) in x.chunks(256 * NVFP4_BLOCK).zip(out.chunks_mut(256)) {
            let n = os.len();
            block_amax::<NVFP4_BLOCK, SIMD>(xs, &mut m[..n]);
            for (o, v) in os.iter_mut().zip(&m[..n]) {
                *o = *v as u64;
            }
        }
    }
    const INF: u64 = 0x7f80_0000;
    #[inline(always)]
    fn mag_f64(m: u64) -> f64 {
        f32::from_bits(m as u32) as f64
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn elements<const CLIP: bool, const SIMD: u8>(
        x: &[f32; NVFP4_BLOCK],
        t: &NvTable,
        sc: usize,
        out: &mut [u8],
    ) -> u64 {
        // float32 lanes against the boundaries rounded down to float32:
        // for a float32 `a`, `a > T` exactly when `a > RD32(T)`.
        let t = &t.elem32[sc];
        #[cfg(target_arch = "x86_64")]
        if SIMD == AVX512 {
            // SAFETY: only the AVX-512 instantiation passes this level.
            return unsafe { nv_elements_f32_avx512::<CLIP>(x, t, out) };
        }
        #[cfg(target_arch = "x86_64")]
        if SIMD == AVX2 {
            // SAFETY: only the AVX2 instantiation passes this level.
            return unsafe { nv_elements_f32_avx2::<CLIP>(x, t, out) };
        }
        let mut codes = [0u32; NVFP4_BLOCK];
        let mut clip = 0u32;
        for (c, v) in codes.iter_mut().zip(x) {
            let a = f32::from_bits(v.to_bits() & 0x7fff_ffff);
            let mut m = 0u32;
            for b in &t[..7] {
                m += (a > *b) as u32;
            }
            if CLIP {
                clip += (a > t[7]) as u32;
            }
            *c = m | (v.to_bits() >> 31) << 3;
        }
        for (o, p) in out.iter_mut().zip(codes.chunks_exact(2)) {
            *o = (p[0] | p[1] << 4) as u8;
        }
        clip as u64
    }
}

impl Nv for f64 {
    #[inline(always)]
    fn block_amax(x: &[f64; NVFP4_BLOCK]) -> u64 {
        let mut m = 0u64;
        for v in x {
            m = m.max(v.to_bits() & 0x7fff_ffff_ffff_ffff);
        }
        m
    }
    const INF: u64 = 0x7ff0_0000_0000_0000;
    #[inline(always)]
    fn mag_f64(m: u64) -> f64 {
        f64::from_bits(m)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn elements<const CLIP: bool, const SIMD: u8>(
        x: &[f64; NVFP4_BLOCK],
        t: &NvTable,
        sc: usize,
        out: &mut [u8],
    ) -> u64 {
        let t = &t.elem[sc];
        // 64-bit codes and counts, as wide as the float64 lanes.
        let mut codes = [0u64; NVFP4_BLOCK];
        let mut clip = 0u64;
        for (c, v) in codes.iter_mut().zip(x) {
            let a = f64::from_bits(v.to_bits() & 0x7fff_ffff_ffff_ffff);
            let mut m = 0u64;
            for b in &t[..7] {
                m += (a > *b) as u64;
            }
            if CLIP {
                clip += (a > t[7]) as u64;
            }
            *c = m | (v.to_bits() >> 63) << 3;
        }
        for (o, p) in out.iter_mut().zip(codes.chunks_exact(2)) {
            *o = (p[0] | p[1] << 4) as u8;
        }
        clip
    }
}

/// The largest float32 at most `t` (+inf stays +inf).
#[inline(always)]
fn round_down_f32(t: f64) -> f32 {
    let r = t as f32;
    if r as f64 > t {
        r.next_down()
    } else {
        r
    }
}

/// The NVFP4 boundaries of one call (one tensor scale `s2`), as products
/// that are exact in float64 (see the module documentation), every "at
/// least" comparison turned into "greater than" the next float64 down.
pub(crate) struct NvTable {
    /// `1 / (6 · s2)`, for a first estimate of the block scale code.
    inv_d6: f64,
    /// `scale[j + 1]`: the block maximum above which the block scale code
    /// exceeds `j` (the midpoint between float8_e4m3fn codes `j` and `j + 1`
    /// times `6 · s2`; ties go to the even code); `scale[0]` is −inf,
    /// `scale[127]` and `scale[128]` are +inf (the code saturates at 126,
    /// 448).
    scale: [f64; 129],
    /// `elem[c]`: for block scale code `c` with `d = e4m3(c) · s2`, the
    /// float4_e2m1fn boundaries `B · d` (0.25, 0.75, 1.25, 1.75, 2.5, 3.5,
    /// 5; ties to the even code) and the clipping bound `7 · d`; all +inf
    /// when `d` is zero (such a block stores zeros).
    elem: [[f64; 8]; 128],
    /// `elem` rounded down to float32, for float32 inputs.
    elem32: [[f32; 8]; 128],
}

impl NvTable {
    #[inline(always)]
    fn new(s2: f32) -> NvTable {
        let s2 = s2 as f64;
        let e4m3 = |c: u32| f32::from_bits(ck::dec_f32::<ck::E4M3FN>(c)) as f64;
        let d6 = 6.0 * s2;
        let mut scale = [f64::INFINITY; 129];
        scale[0] = f64::NEG_INFINITY;
        // Boundaries between codes 0 … 126 (448); larger values saturate.
        for j in 0..126 {
            // Midpoint: at most 5 significant bits; times 6 · s2: exact.
            let m = (e4m3(j) + e4m3(j + 1)) / 2.0 * d6;
            scale[j as usize + 1] = if j % 2 == 1 { m.next_down() } else { m };
        }
        let mut elem = [[f64::INFINITY; 8]; 128];
        for (c, e) in elem.iter_mut().enumerate().take(127) {
            let d = e4m3(c as u32) * s2;
            if d == 0.0 {
                continue;
            }
            // Ties at 0.25, 1.25, 2.5, 5 go down; at 0.75, 1.75, 3.5 up;
            // 7 and beyond clip.
            *e = [
                0.25 * d,
                (0.75 * d).next_down(),
                1.25 * d,
                (1.75 * d).next_down(),
                2.5 * d,
                (3.5 * d).next_down(),
                5.0 * d,
                (7.0 * d).next_down(),
            ];
        }
        let elem32 = elem.map(|e| e.map(round_down_f32));
        NvTable {
            inv_d6: 1.0 / d6,
            scale,
            elem,
            elem32,
        }
    }

    /// The block scale code of a block of largest magnitude `amax` (finite):
    /// the number of scale boundaries below it. The float64 estimate
    /// `amax · (1 / (6 · s2))` is within a relative 2^−52 of the exact
    /// quotient, so its saturating float8_e4m3fn conversion is the right
    /// code or a neighbour; one comparison with each adjacent boundary
    /// settles it.
    #[inline(always)]
    fn scale_code(&self, amax: f64) -> usize {
        let c = ck::enc_f64::<ck::E4M3FN, true>((amax * self.inv_d6).to_bits()) as usize;
        let c = c.min(126);
        c + (amax > self.scale[c + 1]) as usize - (amax <= self.scale[c]) as usize
    }
}

/// NVFP4 quantization of whole blocks of 16 (`packed` and `scales` sized for
/// them); returns the number of clipped elements. With `STATS`, the error
/// statistics of each element against its exact dequantized value go to
/// `acc`, a group of blocks at a time (still in the cache).
#[inline(always)]
fn nvfp4_body<T: Nv, const STATS: bool, const SIMD: u8>(
    src: &[T],
    s2: f32,
    packed: &mut [u8],
    scales: &mut [u8],
    acc: &mut ErrLanes,
    finite_stats: impl Fn(&[T], &[f64], &mut ErrLanes),
    fill: impl Fn(&mut [f64; NVFP4_BLOCK], &[u8; NVFP4_BLOCK / 2], f64),
) -> u64 {
    const GROUP: usize = 256 * NVFP4_BLOCK;
    let table = NvTable::new(s2);
    let mut clipped = 0u64;
    for ((src, packed), scales) in src
        .chunks(GROUP)
        .zip(packed.chunks_mut(GROUP / 2))
        .zip(scales.chunks_mut(GROUP / NVFP4_BLOCK))
    {
        clipped += nvfp4_blocks::<T, SIMD>(src, &table, packed, scales);
        if STATS {
            nvfp4_stats(src, s2, packed, scales, acc, &finite_stats, &fill);
        }
    }
    clipped
}

/// [`nvfp4_body`]'s quantization of whole blocks (at most 256) with the
/// boundaries of `table`, in three passes over the group: the blocks'
/// largest magnitudes (several blocks at a time), their scale codes (each
/// independent of the others, so the scalar work of consecutive blocks
/// overlaps), then the elements.
#[inline(always)]
fn nvfp4_blocks<T: Nv, const SIMD: u8>(
    src: &[T],
    table: &NvTable,
    packed: &mut [u8],
    scales: &mut [u8],
) -> u64 {
    const MAX: usize = 256;
    let nb = src.len() / NVFP4_BLOCK;
    debug_assert!(nb <= MAX);
    let mut amax = [0u64; MAX];
    T::block_amaxes::<SIMD>(src, &mut amax[..nb]);
    // Without branches, so the blocks' codes are computed several at a time:
    // at least code 1 (2^-9); an all-zero block gets 1.0 (ModelOpt's
    // conventions: no block reads back as zero through its scale); the NaN
    // scale for a block holding a NaN or an infinity (whose code computed
    // here, from an infinite or NaN magnitude, is replaced).
    for (scale, &a) in scales.iter_mut().zip(&amax[..nb]) {
        let c = table.scale_code(T::mag_f64(a)).max(1);
        let c = if a == 0 {
            super::NVFP4_ZERO_BLOCK_SCALE as usize
        } else {
            c
        };
        *scale = if a >= T::INF { 0x7f } else { c as u8 };
    }
    let mut clipped = 0u64;
    for (((x, out), &sc), &a) in src
        .chunks_exact(NVFP4_BLOCK)
        .zip(packed.chunks_exact_mut(NVFP4_BLOCK / 2))
        .zip(scales.iter())
        .zip(&amax[..nb])
    {
        let x: &[T; NVFP4_BLOCK] = x.try_into().expect("whole blocks");
        if sc == 0x7f {
            out.fill(0);
            continue;
        }
        let sc = sc as usize;
        // Only a block whose largest magnitude is beyond the clipping
        // boundary has elements to count there.
        clipped += if T::clips(a, table, sc) {
            T::elements::<true, SIMD>(x, table, sc, out)
        } else {
            T::elements::<false, SIMD>(x, table, sc, out)
        };
    }
    clipped
}

/// The error statistics of NVFP4 blocks (`packed`, `scales`, tensor scale
/// `s2`) against their originals `src`, added to `acc`: each value
/// `e2m1 · e4m3 · s2` is exact in float64; a block with the NaN scale
/// `0x7f` reads back as NaN.
#[inline(always)]
fn nvfp4_stats<T: Nv>(
    src: &[T],
    s2: f32,
    packed: &[u8],
    scales: &[u8],
    acc: &mut ErrLanes,
    finite_stats: &impl Fn(&[T], &[f64], &mut ErrLanes),
    fill: &impl Fn(&mut [f64; NVFP4_BLOCK], &[u8; NVFP4_BLOCK / 2], f64),
) {
    /// Blocks per pass of `finite_stats` (when none has the NaN scale).
    const SUB: usize = 64;
    let mut ys = [0f64; SUB * NVFP4_BLOCK];
    for ((xg, pg), sg) in src
        .chunks(SUB * NVFP4_BLOCK)
        .zip(packed.chunks(SUB * NVFP4_BLOCK / 2))
        .zip(scales.chunks(SUB))
    {
        if sg.contains(&0x7f) {
            nvfp4_stats_blocks(xg, s2, pg, sg, acc);
            continue;
        }
        for ((y, p), &sc) in ys
            .chunks_exact_mut(NVFP4_BLOCK)
            .zip(pg.chunks_exact(NVFP4_BLOCK / 2))
            .zip(sg)
        {
            let d = f32::from_bits(ck::dec_f32::<ck::E4M3FN>(sc as u32)) as f64 * s2 as f64;
            let y: &mut [f64; NVFP4_BLOCK] = y.try_into().expect("a block");
            fill(y, p.try_into().expect("a block"), d);
        }
        finite_stats(xg, &ys[..xg.len()], acc);
    }
}

/// The values of one NVFP4 block's packed elements `p` (low nibble first)
/// with the block's scale `d` (`e4m3 · s2`): each `±e2m1 · d`, exact in
/// float64.
#[inline(always)]
fn nvfp4_values(y: &mut [f64; NVFP4_BLOCK], p: &[u8; NVFP4_BLOCK / 2], d: f64) {
    let vals: [f64; 16] = core::array::from_fn(|c| E2M1_SIGNED[c] * d);
    for (y, b) in y.chunks_exact_mut(2).zip(p) {
        y[0] = vals[(b & 0xf) as usize];
        y[1] = vals[(b >> 4) as usize];
    }
}

/// [`nvfp4_values`] with AVX2: the float4_e2m1fn magnitudes looked up in
/// one register by the codes' low three bits (`VPERMPS`), the sign bit moved
/// into place, the float32 values widened and multiplied by `d`.
///
/// # Safety
/// AVX2 is available on this CPU.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn nvfp4_values_avx2(y: &mut [f64; NVFP4_BLOCK], p: &[u8; NVFP4_BLOCK / 2], d: f64) {
    use core::arch::x86_64::*;
    let mags = _mm256_setr_ps(0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0);
    let b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.as_ptr().cast()));
    let lo = _mm256_and_si256(b, _mm256_set1_epi32(0xf));
    let hi = _mm256_srli_epi32::<4>(b);
    // Codes in element order: byte i gives elements 2i (low) and 2i + 1.
    let (ul, uh) = (_mm256_unpacklo_epi32(lo, hi), _mm256_unpackhi_epi32(lo, hi));
    let codes = [
        _mm256_permute2x128_si256::<0x20>(ul, uh),
        _mm256_permute2x128_si256::<0x31>(ul, uh),
    ];
    let dv = _mm256_set1_pd(d);
    for (k, c) in codes.into_iter().enumerate() {
        let m = _mm256_permutevar8x32_ps(mags, c);
        let sign = _mm256_slli_epi32::<28>(_mm256_and_si256(c, _mm256_set1_epi32(8)));
        let v = _mm256_xor_ps(m, _mm256_castsi256_ps(sign));
        let lo = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), dv);
        let hi = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), dv);
        _mm256_storeu_pd(y.as_mut_ptr().add(8 * k), lo);
        _mm256_storeu_pd(y.as_mut_ptr().add(8 * k + 4), hi);
    }
}

/// [`nvfp4_stats`] block by block: a block with the NaN scale counts its
/// finite originals as non-finite.
fn nvfp4_stats_blocks<T: Nv>(src: &[T], s2: f32, packed: &[u8], scales: &[u8], acc: &mut ErrLanes) {
    let mut a = ExactAcc {
        err: acc.err,
        sq: acc.sq,
        max: acc.max,
        flushed: [0; LANES],
    };
    let mut nonfin = 0u64;
    for ((x, p), &sc) in src
        .chunks_exact(NVFP4_BLOCK)
        .zip(packed.chunks_exact(NVFP4_BLOCK / 2))
        .zip(scales)
    {
        if sc == 0x7f {
            nonfin += x
                .iter()
                .filter(|v| T::to_f64(**v).abs() < f64::INFINITY)
                .count() as u64;
            continue;
        }
        let d = f32::from_bits(ck::dec_f32::<ck::E4M3FN>(sc as u32)) as f64 * s2 as f64;
        // The block's 16 values, signs included.
        let vals: [f64; 16] = core::array::from_fn(|c| E2M1_SIGNED[c] * d);
        for h in 0..NVFP4_BLOCK / LANES {
            let mut xv = [0f64; LANES];
            let mut yv = [0f64; LANES];
            for i in 0..LANES / 2 {
                let b = p[h * LANES / 2 + i];
                yv[2 * i] = vals[(b & 0xf) as usize];
                yv[2 * i + 1] = vals[(b >> 4) as usize];
            }
            for l in 0..LANES {
                xv[l] = T::to_f64(x[h * LANES + l]);
            }
            a.add(&xv, &yv);
        }
    }
    (acc.err, acc.sq, acc.max) = (a.err, a.sq, a.max);
    acc.nonfin[0] += nonfin;
    for l in 0..LANES {
        acc.flushed[l] += a.flushed[l] as u64;
    }
}

/// The float4_e2m1fn values of the 16 codes, signs included.
const E2M1_SIGNED: [f64; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

/// The accumulators of [`nvfp4_stats`] (finite pairs), with 32-bit counts
/// (a call covers one group of blocks).
struct ExactAcc {
    err: [f64; LANES],
    sq: [f64; LANES],
    max: [f64; LANES],
    flushed: [u32; LANES],
}

impl ExactAcc {
    /// Eight finite pairs, one per lane ([`ErrLanes::finite`]).
    #[inline(always)]
    fn add(&mut self, x: &[f64; LANES], y: &[f64; LANES]) {
        for l in 0..LANES {
            let (x, y) = (x[l], y[l]);
            let e = (y - x).abs();
            self.flushed[l] += ((x != 0.0) & (y == 0.0)) as u32;
            self.max[l] = if e > self.max[l] { e } else { self.max[l] };
            self.err[l] += e * e;
            self.sq[l] += x * x;
        }
    }
}

/// FP8 quantization of float32 with a scale per segment of `seg` elements
/// (see `mx::fp8_quantize`): each quotient in float64, rounded once by the
/// saturating float8_e4m3fn conversion of the cast kernels; with `STATS`,
/// the error statistics of each element against its dequantized value
/// (`e4m3 · s`, exact in float64) go to `acc`, a part of 512 elements at a
/// time (element `i` in lane `i % 8`).
#[inline(always)]
fn fp8_body<const STATS: bool>(
    src: &[f32],
    seg: usize,
    scales: &[f64],
    out: &mut [u8],
    acc: &mut ErrLanes,
    finite_stats: impl Fn(&[f32], &[f64], &mut ErrLanes),
) -> u64 {
    const PART: usize = 512;
    let mut clipped = 0u64;
    let mut ys = [0f64; PART];
    let mut i0 = 0;
    while i0 < src.len() {
        let i1 = (i0 + PART).min(src.len());
        let mut finite = true;
        let mut a = i0;
        while a < i1 {
            let j = a / seg;
            let b = ((j + 1) * seg).min(i1);
            let (c, f) = fp8_run::<STATS>(
                &src[a..b],
                scales[j],
                &mut out[a..b],
                &mut ys[a - i0..b - i0],
            );
            clipped += c as u64;
            finite &= f;
            a = b;
        }
        if STATS {
            let (x, y) = (&src[i0..i1], &ys[..i1 - i0]);
            let n8 = x.len() / LANES * LANES;
            if finite {
                finite_stats(&x[..n8], &y[..n8], acc);
            } else {
                for i in 0..n8 {
                    acc.exact(i % LANES, x[i] as f64, y[i]);
                }
            }
            for i in n8..x.len() {
                acc.exact(i % LANES, x[i] as f64, y[i]);
            }
        }
        i0 = i1;
    }
    clipped
}

/// One run of elements sharing the scale `s`: codes to `out`, with `STATS`
/// the dequantized values to `ys`; returns the clipped count and whether
/// every element was finite.
///
/// The quotient is `x · r` in float32 with `r = 1/s` rounded to float32,
/// converted by the saturating float32 → float8_e4m3fn conversion of the
/// cast kernels: within two float32 ulps of the exact `x / s`, which is
/// either exactly a rounding boundary of float8_e4m3fn or at least 2^-29 of
/// its magnitude away from every one (see `mx::fp8_quantize_on`), so it
/// rounds as the exact quotient does unless it falls within a few ulps of a
/// boundary (its bits below the tie bit all but the tie pattern) or in the
/// subnormal range (whose boundaries sit elsewhere). Those lanes, rare, are
/// divided in float64 and converted from there; a scale whose reciprocal is
/// not a normal float32 takes that path for every lane.
#[inline(always)]
fn fp8_run<const STATS: bool>(x: &[f32], s: f64, out: &mut [u8], ys: &mut [f64]) -> (u32, bool) {
    /// The float32 bits below float8_e4m3fn's rounding bit, and the tie.
    const LOW: u32 = (1 << 20) - 1;
    const TIE: u32 = 1 << 19;
    /// float32 ulps around a tie treated as ties.
    const NEAR: u32 = 4;
    /// 2^-6, float8_e4m3fn's smallest normal, as float32 bits.
    const NORMAL_MIN: u32 = 0x3c80_0000;
    let r64 = 1.0 / s;
    let r = r64 as f32;
    let exact_only = !(r.is_normal() && r.is_finite());
    // Two light passes (the codes; then the checks and counts) rather than
    // one heavy one, which spills AVX2's sixteen registers.
    for (v, o) in x.iter().zip(out.iter_mut()) {
        *o = ck::enc_f32::<ck::E4M3FN, true>((v * r).to_bits()) as u8;
    }
    let mut clip = 0u32;
    let mut n_hard = 0u32;
    let mut n_finite = 0u32;
    for v in x {
        let q = v * r;
        let a = q.to_bits() & 0x7fff_ffff;
        let near = (a & LOW).wrapping_sub(TIE - NEAR) < 2 * NEAR;
        n_hard += (near | ((a < NORMAL_MIN) & (a != 0))) as u32;
        let finite = v.abs() < f32::INFINITY;
        clip += (finite & (q.abs() > 464.0)) as u32;
        n_finite += finite as u32;
    }
    let all = n_finite as usize == x.len();
    if n_hard > 0 || exact_only {
        for (v, o) in x.iter().zip(out.iter_mut()) {
            let q = v * r;
            let a = q.to_bits() & 0x7fff_ffff;
            let near = (a & LOW).wrapping_sub(TIE - NEAR) < 2 * NEAR;
            if near || (a < NORMAL_MIN && a != 0) || exact_only {
                let finite = v.abs() < f32::INFINITY;
                clip -= (finite & (q.abs() > 464.0)) as u32;
                let e = *v as f64 / s;
                clip += (finite & (e.abs() > 464.0)) as u32;
                *o = ck::enc_f64::<ck::E4M3FN, true>(e.to_bits()) as u8;
            }
        }
    }
    if STATS {
        for (y, o) in ys.iter_mut().zip(out.iter()) {
            *y = f32::from_bits(ck::dec_f32::<ck::E4M3FN>(*o as u32)) as f64 * s;
        }
    }
    (clip, all)
}

/// The NVFP4 block values of a kernel path: AVX2's for the paths with AVX2,
/// [`nvfp4_values`] for the portable one.
macro_rules! values {
    () => {
        nvfp4_values
    };
    ($feat:literal) => {
        // SAFETY: the paths with features have AVX2.
        |y: &mut [f64; NVFP4_BLOCK], p: &[u8; NVFP4_BLOCK / 2], d: f64| unsafe {
            nvfp4_values_avx2(y, p, d)
        }
    };
}

/// Instantiates the block kernels for one instruction set (as
/// `cast::kernels` does for the conversions).
macro_rules! instantiate {
    ($modname:ident, $level:expr, $($feat:literal)?) => {
        #[allow(clippy::missing_safety_doc)]
        pub(crate) mod $modname {
            use super::*;

            // SAFETY (both functions): compiled with the target features
            // above; callers only call them after runtime detection confirmed
            // those features (`Path::is_available`). The bodies are safe Rust.
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn mx_f32<E: Elem, const CEIL: bool, const STATS: bool>(
                src: &[f32],
                blocks: &mut [u8],
                scales: &mut [u8],
                acc: &mut ErrLanes,
            ) -> BlockCounts {
                // SAFETY: `cast_stats` needs the features of this function.
                let stats = |x: &[f32], y: &[f32], a: &mut ErrLanes| unsafe {
                    cast_stats(x, y, f64::INFINITY, false, a)
                };
                mx_f32_body::<E, CEIL, STATS, { $level }>(src, blocks, scales, acc, stats)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn nvfp4<T: Nv, const STATS: bool>(
                src: &[T],
                s2: f32,
                packed: &mut [u8],
                scales: &mut [u8],
                acc: &mut ErrLanes,
            ) -> u64 {
                // SAFETY: `finite_stats` needs the features of this function.
                let stats = |x: &[T], y: &[f64], a: &mut ErrLanes| unsafe { finite_stats(x, y, a) };
                nvfp4_body::<T, STATS, { $level }>(
                    src,
                    s2,
                    packed,
                    scales,
                    acc,
                    stats,
                    values!($($feat)?),
                )
            }
            // Not inlined: `nvfp4` calls it once per group of blocks, with
            // its own registers.
            #[inline(never)]
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn finite_stats<T: Nv>(xs: &[T], ys: &[f64], acc: &mut ErrLanes) {
                acc.finite_slices(xs, ys)
            }
            // Not inlined: `mx_f32` calls it once per group of blocks, with
            // its own registers.
            #[inline(never)]
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn cast_stats(
                xs: &[f32],
                ys: &[f32],
                thr: f64,
                tie: bool,
                acc: &mut ErrLanes,
            ) {
                acc.cast_slices(xs, ys, thr, tie)
            }
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn fp8_f32<const STATS: bool>(
                src: &[f32],
                seg: usize,
                scales: &[f64],
                out: &mut [u8],
                acc: &mut ErrLanes,
            ) -> u64 {
                // SAFETY: `finite_stats` needs the features of this function.
                let stats = |x: &[f32], y: &[f64], a: &mut ErrLanes| unsafe { finite_stats(x, y, a) };
                fp8_body::<STATS>(src, seg, scales, out, acc, stats)
            }
            #[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn finite_amax(x: &[f32]) -> f32 {
                finite_amax_body(x)
            }
            #[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn segment_amax(x: &[f32], seg: usize, out: &mut [f32]) {
                for (o, c) in out.iter_mut().zip(x.chunks(seg)) {
                    *o = finite_amax_body(c);
                }
            }
            #[cfg_attr(not(feature = "safetensors"), allow(dead_code))]
            $(#[target_feature(enable = $feat)])?
            pub(crate) unsafe fn exact_stats(xs: &[f64], ys: &[f64], acc: &mut ErrLanes) {
                acc.exact_slices(xs, ys)
            }
        }
    };
}

instantiate!(portable, PORTABLE,);
#[cfg(target_arch = "x86_64")]
instantiate!(avx2, AVX2, "avx2,fma,f16c,bmi1,bmi2,popcnt");
#[cfg(target_arch = "x86_64")]
instantiate!(
    avx512,
    AVX512,
    "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c,bmi1,bmi2,popcnt"
);
