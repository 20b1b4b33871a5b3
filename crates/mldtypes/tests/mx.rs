//! MX and NVFP4 block quantization against an independent implementation in
//! exact rational arithmetic (big integers): element values enumerated from
//! their bit fields, scales from the definitions of OCP MX v1.0 §6.3 and of
//! NVFP4, round-to-nearest-even decided by exact comparison.

use mldtypes::mx::{self, MxFormat, ScaleRule};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// An exact rational `n / d`, `d > 0`.
#[derive(Clone, Debug)]
struct Q {
    n: BigInt,
    d: BigInt,
}

impl Q {
    fn int(v: i64) -> Q {
        Q {
            n: BigInt::from(v),
            d: BigInt::one(),
        }
    }
    fn pow2(e: i32) -> Q {
        if e >= 0 {
            Q {
                n: BigInt::one() << e as usize,
                d: BigInt::one(),
            }
        } else {
            Q {
                n: BigInt::one(),
                d: BigInt::one() << (-e) as usize,
            }
        }
    }
    /// The exact value of a finite f64.
    fn of(x: f64) -> Q {
        let bits = x.abs().to_bits();
        let e = (bits >> 52) as i32;
        let m = bits & ((1 << 52) - 1);
        let (m, e) = if e == 0 {
            (m, -1074)
        } else {
            (m | 1 << 52, e - 1075)
        };
        let q = Q::pow2(e).mul(&Q::int(m as i64));
        if x < 0.0 {
            q.neg()
        } else {
            q
        }
    }
    fn mul(&self, o: &Q) -> Q {
        Q {
            n: &self.n * &o.n,
            d: &self.d * &o.d,
        }
    }
    fn div(&self, o: &Q) -> Q {
        let (n, d) = (&self.n * &o.d, &self.d * &o.n);
        if d.is_negative() {
            Q { n: -n, d: -d }
        } else {
            Q { n, d }
        }
    }
    fn add(&self, o: &Q) -> Q {
        Q {
            n: &self.n * &o.d + &o.n * &self.d,
            d: &self.d * &o.d,
        }
    }
    fn neg(&self) -> Q {
        Q {
            n: -&self.n,
            d: self.d.clone(),
        }
    }
    fn abs(&self) -> Q {
        Q {
            n: self.n.abs(),
            d: self.d.clone(),
        }
    }
    fn cmp(&self, o: &Q) -> std::cmp::Ordering {
        (&self.n * &o.d).cmp(&(&o.n * &self.d))
    }
    fn is_zero(&self) -> bool {
        self.n.is_zero()
    }
    /// floor(log2(self)) for self > 0.
    fn ilog2(&self) -> i32 {
        let mut e = self.n.bits() as i32 - self.d.bits() as i32;
        while self.cmp(&Q::pow2(e)).is_lt() {
            e -= 1;
        }
        while self.cmp(&Q::pow2(e + 1)).is_ge() {
            e += 1;
        }
        e
    }
}

/// A small float format from its bit fields: (exp bits, mantissa bits, bias,
/// largest finite code's magnitude bits).
struct Elem {
    e: u32,
    m: u32,
    bias: i32,
    max_code: u32,
}

impl Elem {
    fn value(&self, code: u32) -> Q {
        let ef = (code >> self.m) & ((1 << self.e) - 1);
        let mf = code & ((1 << self.m) - 1);
        let v = if ef == 0 {
            Q::int(mf as i64).mul(&Q::pow2(1 - self.bias - self.m as i32))
        } else {
            Q::int(((1 << self.m) + mf) as i64).mul(&Q::pow2(ef as i32 - self.bias - self.m as i32))
        };
        if code >> (self.e + self.m) & 1 == 1 {
            v.neg()
        } else {
            v
        }
    }
    /// Round-to-nearest-even, saturating, sign kept (−0 for negatives that
    /// round to zero).
    fn round(&self, q: &Q) -> u32 {
        let neg = q.n.is_negative();
        let a = q.abs();
        let mut best = 0u32;
        for c in 1..=self.max_code {
            let (dc, db) = (
                self.value(c).add(&a.neg()).abs(),
                self.value(best).add(&a.neg()).abs(),
            );
            match dc.cmp(&db) {
                std::cmp::Ordering::Less => best = c,
                std::cmp::Ordering::Equal if c % 2 == 0 => best = c,
                _ => {}
            }
        }
        best | if neg { 1 << (self.e + self.m) } else { 0 }
    }
}

fn elem(f: MxFormat) -> Option<Elem> {
    Some(match f {
        MxFormat::Fp8E4M3 => Elem {
            e: 4,
            m: 3,
            bias: 7,
            max_code: 0x7e,
        },
        MxFormat::Fp8E5M2 => Elem {
            e: 5,
            m: 2,
            bias: 15,
            max_code: 0x7b,
        },
        MxFormat::Fp6E3M2 => Elem {
            e: 3,
            m: 2,
            bias: 3,
            max_code: 0x1f,
        },
        MxFormat::Fp6E2M3 => Elem {
            e: 2,
            m: 3,
            bias: 1,
            max_code: 0x1f,
        },
        MxFormat::Fp4 => Elem {
            e: 2,
            m: 1,
            bias: 1,
            max_code: 0x7,
        },
        MxFormat::Int8 => return None,
    })
}

/// Rounds `q` to the nearest even integer.
fn round_int(q: &Q) -> BigInt {
    let two = BigInt::from(2);
    let fl = num_integer_floor(&q.n, &q.d);
    let rem = Q {
        n: &q.n - &fl * &q.d,
        d: q.d.clone(),
    };
    match rem.cmp(&Q {
        n: BigInt::one(),
        d: two.clone(),
    }) {
        std::cmp::Ordering::Less => fl,
        std::cmp::Ordering::Greater => fl + 1,
        std::cmp::Ordering::Equal => {
            if (&fl % &two).is_zero() {
                fl
            } else {
                fl + 1
            }
        }
    }
}

fn num_integer_floor(n: &BigInt, d: &BigInt) -> BigInt {
    let q = n / d;
    if (n.is_negative() != d.is_negative()) && !(n % d).is_zero() {
        q - 1
    } else {
        q
    }
}

/// The reference MX block: (scale code, element codes).
fn reference_mx(x: &[f32], f: MxFormat, rule: ScaleRule) -> (u8, Vec<u8>) {
    if x.iter().any(|v| !v.is_finite()) {
        return (0xff, vec![0; 32]);
    }
    let amax = x
        .iter()
        .map(|v| Q::of(*v as f64).abs())
        .fold(Q::int(0), |m, v| if v.cmp(&m).is_gt() { v } else { m });
    let emax = f.emax();
    let max_elem = match elem(f) {
        Some(e) => e.value(e.max_code),
        None => Q {
            n: BigInt::from(127),
            d: BigInt::from(64),
        },
    };
    let k = if amax.is_zero() {
        -127
    } else {
        let k = match rule {
            ScaleRule::Floor => amax.ilog2() - emax,
            ScaleRule::Ceil => {
                let mut k = amax.ilog2() - emax - 2;
                while amax.div(&Q::pow2(k)).cmp(&max_elem).is_gt() {
                    k += 1;
                }
                k
            }
            // torchao's EVEN: amax rounded to m fraction bits, ties away
            // from zero, then floor.
            ScaleRule::Even => {
                let e = amax.ilog2();
                let m = elem(f).map_or(6, |el| el.m as i32);
                let t = Q::int(2).add(&Q::pow2(-(m + 1)).neg());
                if amax.div(&Q::pow2(e)).cmp(&t).is_ge() {
                    e + 1 - emax
                } else {
                    e - emax
                }
            }
            // torchao's RCEIL: d = amax / max_elem rounded to float32, then
            // ceil(log2 d).
            ScaleRule::Rceil => {
                let fmax = Q::of(f32::MAX as f64);
                let d = round_float(&amax.div(&max_elem), 24, -126, &fmax);
                if d.is_zero() {
                    -127
                } else {
                    let e = d.ilog2();
                    if d.cmp(&Q::pow2(e)).is_eq() {
                        e
                    } else {
                        e + 1
                    }
                }
            }
        };
        k.clamp(-127, 127)
    };
    let codes = x
        .iter()
        .map(|v| {
            let q = Q::of(*v as f64).div(&Q::pow2(k));
            match elem(f) {
                Some(e) => {
                    if q.is_zero() && v.is_sign_negative() {
                        (1u32 << (e.e + e.m)) as u8
                    } else {
                        e.round(&q) as u8
                    }
                }
                None => {
                    let r = round_int(&q.mul(&Q::int(64)));
                    let r: i64 = r
                        .clamp(BigInt::from(-128), BigInt::from(127))
                        .try_into()
                        .unwrap();
                    r as i8 as u8
                }
            }
        })
        .collect();
    ((k + 127) as u8, codes)
}

/// Element `i` of an LSB-first bit stream of `w`-bit codes.
fn unpack(b: &[u8], w: usize, i: usize) -> u8 {
    let mut v = 0u32;
    for j in 0..w {
        let bit = i * w + j;
        v |= ((b[bit / 8] >> (bit % 8)) as u32 & 1) << j;
    }
    v as u8
}

fn check_mx(x: &[f32], f: MxFormat, rule: ScaleRule) {
    let (mut b, mut s) = (vec![0u8; f.block_bytes()], [0u8]);
    mx::quantize(x, f, rule, &mut b, &mut s).unwrap();
    let (rs, rc) = reference_mx(x, f, rule);
    assert_eq!(s[0], rs, "{f:?} {rule:?} scale of {x:?}");
    if rs == 0xff {
        return;
    }
    for i in 0..32 {
        assert_eq!(
            unpack(&b, f.bits(), i),
            rc[i],
            "{f:?} {rule:?} element {i} = {} of {x:?}",
            x[i]
        );
    }
}

/// A deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f32(&mut self) -> f32 {
        // Random sign, exponent in a range around 1, random mantissa.
        let e = 127 - 20 + (self.next() % 40) as u32;
        let m = (self.next() as u32) & 0x7f_ffff;
        f32::from_bits((self.next() as u32 & 0x8000_0000) | e << 23 | m)
    }
}

#[test]
fn mx_random_blocks_match_the_exact_reference() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for f in MxFormat::ALL {
        for rule in ScaleRule::ALL {
            for _ in 0..150 {
                let x: Vec<f32> = (0..32).map(|_| r.f32()).collect();
                check_mx(&x, f, rule);
            }
        }
    }
}

/// The boundaries of `even` (amax / 2^e at 2 − 2^−(m+1)) and of `rceil` and
/// `ceil` (amax = max_elem · 2^k), with their float32 neighbours, at every
/// binade from subnormal to the largest float32, under every rule.
#[test]
fn mx_scale_rule_boundaries_match_the_exact_reference() {
    let mut r = Rng(0x2606);
    for f in MxFormat::ALL {
        let m = match f {
            MxFormat::Fp8E4M3 | MxFormat::Fp6E2M3 => 3,
            MxFormat::Fp8E5M2 | MxFormat::Fp6E3M2 => 2,
            MxFormat::Fp4 => 1,
            MxFormat::Int8 => 6,
        };
        let mut amaxes = Vec::new();
        for e in (-149..=127).step_by(7) {
            let t = 2f64.powi(e) * (2.0 - 2f64.powi(-(m + 1)));
            let b = (f.max_elem() * 2f64.powi(e)) as f32;
            for a in [t as f32, b] {
                if a.is_finite() && a > 0.0 {
                    amaxes.extend([
                        f32::from_bits(a.to_bits() - 1),
                        a,
                        f32::from_bits(a.to_bits() + 1),
                    ]);
                }
            }
        }
        for rule in ScaleRule::ALL {
            for &a in &amaxes {
                let mut x: Vec<f32> = (0..32).map(|j| a * (j as f32 - 15.5) / 40.0).collect();
                x[r.next() as usize % 32] = if r.next() & 1 == 1 { -a } else { a };
                check_mx(&x, f, rule);
            }
        }
    }
}

#[test]
fn mx_edge_cases_match_the_exact_reference() {
    for f in MxFormat::ALL {
        for rule in ScaleRule::ALL {
            // All zeros (with −0s): scale code 0, signs kept.
            let mut z = [0.0f32; 32];
            z[3] = -0.0;
            check_mx(&z, f, rule);
            // One huge element: the others flush.
            let mut h = [1e-3f32; 32];
            h[5] = f32::MAX;
            h[6] = -1.0;
            check_mx(&h, f, rule);
            // Subnormal inputs: the scale clamps at 2^-127.
            let s: Vec<f32> = (0..32)
                .map(|i| f32::from_bits(1 + i * 977) * if i % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            check_mx(&s, f, rule);
            // NaN / inf blocks.
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut n = [1.0f32; 32];
                n[31] = bad;
                check_mx(&n, f, rule);
            }
            // Ties at every element boundary: with the block's amax at the
            // element maximum the scale is 1, and each midpoint between
            // adjacent element values is a tie.
            if let Some(e) = elem(f) {
                let vals: Vec<f64> = (0..=e.max_code)
                    .map(|c| {
                        let q = e.value(c);
                        q.n.to_string().parse::<f64>().unwrap()
                            / q.d.to_string().parse::<f64>().unwrap()
                    })
                    .collect();
                let mids: Vec<f32> = vals
                    .windows(2)
                    .map(|w| ((w[0] + w[1]) / 2.0) as f32)
                    .collect();
                for chunk in mids.chunks(30) {
                    let mut x = vec![0.0f32; 32];
                    x[0] = vals[vals.len() - 1] as f32;
                    x[1] = -(vals[vals.len() - 1] as f32);
                    for (i, m) in chunk.iter().enumerate() {
                        x[2 + i] = if i % 2 == 0 { *m } else { -*m };
                    }
                    check_mx(&x, f, rule);
                }
                // Beyond the maximum under the floor rule: clipping.
                let mut c = vec![1.0f32; 32];
                c[0] = (2f64.powi(f.emax() + 1) * 0.999) as f32;
                check_mx(&c, f, rule);
            } else {
                // MXINT8 ties: k/128 for odd k.
                let x: Vec<f32> = (0..32)
                    .map(|i: i32| (2 * i - 31) as f32 / 128.0 * 2.0)
                    .collect();
                check_mx(&x, f, rule);
            }
        }
    }
}

#[test]
fn mx_dequantize_is_exact() {
    let mut r = Rng(42);
    for f in MxFormat::ALL {
        let x: Vec<f32> = (0..64).map(|_| r.f32()).collect();
        let nb = 2;
        let (mut b, mut s) = (vec![0u8; nb * f.block_bytes()], vec![0u8; nb]);
        mx::quantize(&x, f, ScaleRule::Floor, &mut b, &mut s).unwrap();
        let mut y = vec![0f64; 64];
        mx::dequantize_f64(&b, &s, f, &mut y).unwrap();
        for (i, v) in y.iter().enumerate() {
            let code = unpack(&b[i / 32 * f.block_bytes()..], f.bits(), i % 32);
            let ev = match elem(f) {
                Some(e) => e.value(code as u32),
                None => Q {
                    n: BigInt::from(code as i8),
                    d: BigInt::from(64),
                },
            };
            let want = ev.mul(&Q::pow2(s[i / 32] as i32 - 127));
            assert!(
                Q::of(*v).cmp(&want).is_eq()
                    && !(v.is_sign_negative() != want.n.is_negative() && *v != 0.0)
            );
        }
    }
    // Scale 0xFF reads back as NaN.
    let mut y = vec![0f64; 32];
    mx::dequantize_f64(&[0u8; 16], &[0xff], MxFormat::Fp4, &mut y).unwrap();
    assert!(y.iter().all(|v| v.is_nan()));
    // Wrong lengths are errors, not panics.
    assert!(mx::quantize(
        &[0f32; 31],
        MxFormat::Fp4,
        ScaleRule::Floor,
        &mut [0; 16],
        &mut [0]
    )
    .is_err());
    assert!(mx::quantize(
        &[0f32; 32],
        MxFormat::Fp4,
        ScaleRule::Floor,
        &mut [0; 15],
        &mut [0]
    )
    .is_err());
    assert!(mx::dequantize_f64(&[0u8; 16], &[0, 0], MxFormat::Fp4, &mut y).is_err());
}

// ---------------------------------------------------------------------------
// NVFP4
// ---------------------------------------------------------------------------

/// Rounds q ≥ 0 to a binary float with `p` significant bits, minimum normal
/// exponent `emin`, saturating at `max` (round-to-nearest-even).
fn round_float(q: &Q, p: i32, emin: i32, max: &Q) -> Q {
    if q.is_zero() {
        return Q::int(0);
    }
    let e = q.ilog2().max(emin);
    let quantum = Q::pow2(e - (p - 1));
    let n = round_int(&q.div(&quantum));
    let r = Q {
        n: n * &quantum.n,
        d: quantum.d.clone(),
    };
    if r.cmp(max).is_gt() {
        max.clone()
    } else {
        r
    }
}

fn e4m3_value(c: u8) -> Q {
    Elem {
        e: 4,
        m: 3,
        bias: 7,
        max_code: 0x7e,
    }
    .value(c as u32)
}

fn e2m1_value(c: u8) -> Q {
    Elem {
        e: 2,
        m: 1,
        bias: 1,
        max_code: 7,
    }
    .value(c as u32)
}

fn check_nvfp4(x: &[f32]) {
    let amax = x
        .iter()
        .map(|v| Q::of(*v as f64).abs())
        .fold(Q::int(0), |m, v| if v.cmp(&m).is_gt() { v } else { m });
    let fmax = Q::of(f32::MAX as f64);
    let s2_ref = if amax.is_zero() {
        Q::int(1)
    } else {
        round_float(&amax.div(&Q::int(2688)), 24, -126, &fmax)
    };
    let s2 = mx::nvfp4_tensor_scale(x.iter().fold(0f64, |m, v| m.max(v.abs() as f64)));
    assert!(Q::of(s2 as f64).cmp(&s2_ref).is_eq(), "s2 of {x:?}");
    let n = x.len();
    let (mut p, mut s) = (vec![0u8; n / 2], vec![0u8; n / 16]);
    mx::nvfp4_quantize(x, s2, &mut p, &mut s).unwrap();
    let s2q = Q::of(s2 as f64);
    for (b, block) in x.chunks(16).enumerate() {
        let bamax = block
            .iter()
            .map(|v| Q::of(*v as f64).abs())
            .fold(Q::int(0), |m, v| if v.cmp(&m).is_gt() { v } else { m });
        // e4m3(amax / (6·s2)), at least 2^-9; 1 for an all-zero block
        // (ModelOpt's conventions).
        let bs = if bamax.is_zero() {
            Q::int(1)
        } else {
            let r = round_float(&bamax.div(&Q::int(6).mul(&s2q)), 4, -6, &Q::int(448));
            if r.cmp(&Q::pow2(-9)).is_lt() {
                Q::pow2(-9)
            } else {
                r
            }
        };
        assert!(
            e4m3_value(s[b]).cmp(&bs).is_eq(),
            "block scale {b} of {block:?}"
        );
        for (i, v) in block.iter().enumerate() {
            let code = unpack(&p, 4, b * 16 + i);
            let want = round_float(&Q::of(*v as f64).abs().div(&bs.mul(&s2q)), 2, 0, &Q::int(6));
            assert!(
                e2m1_value(code).abs().cmp(&want).is_eq(),
                "element {i} = {v} of block {b}"
            );
            assert_eq!(code >> 3 == 1, v.is_sign_negative(), "sign of {v}");
        }
    }
    // Dequantization: the exact product, rounded once.
    let mut y = vec![0f64; n];
    mx::nvfp4_dequantize_f64(&p, &s, s2, &mut y).unwrap();
    for (i, v) in y.iter().enumerate() {
        let want = e2m1_value(unpack(&p, 4, i))
            .mul(&e4m3_value(s[i / 16]))
            .mul(&s2q);
        assert!(Q::of(*v).cmp(&want).is_eq());
    }
}

#[test]
fn nvfp4_matches_the_exact_reference() {
    let mut r = Rng(7);
    for _ in 0..60 {
        let x: Vec<f32> = (0..64).map(|_| r.f32()).collect();
        check_nvfp4(&x);
    }
    // All zeros, one huge element, subnormals, exact multiples.
    check_nvfp4(&[0.0; 16]);
    let mut h = [1e-3f32; 32];
    h[0] = 3e38;
    check_nvfp4(&h);
    let s: Vec<f32> = (0..16).map(|i| f32::from_bits(3 + i * 101)).collect();
    check_nvfp4(&s);
    // A block far below the tensor's largest: its scale would round to zero
    // and is held at 2^-9, its elements quantized with it.
    let mut tiny = [1e-7f32; 32];
    tiny[0] = 1000.0;
    tiny[17] = -3e-7;
    check_nvfp4(&tiny);
    let t: Vec<f32> = (0..32).map(|i| (i as f32 - 16.0) * 0.25).collect();
    check_nvfp4(&t);
    // Ties at every e2m1 boundary and their float32 neighbours: with amax
    // 2688 the tensor scale is 1 and the block scale 448, so V = t · 448.
    let ties = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
    let mut x = vec![2688.0f32];
    for t in ties {
        let v = t * 448.0;
        x.extend([
            v,
            -f32::from_bits(v.to_bits() + 1),
            f32::from_bits(v.to_bits() - 1),
        ]);
    }
    x.resize(32, -0.0);
    check_nvfp4(&x);
    // A NaN block gets the NaN scale.
    let mut n = [1.0f32; 16];
    n[2] = f32::NAN;
    let (mut p, mut s) = ([0u8; 8], [0u8; 1]);
    mx::nvfp4_quantize(&n, 1.0, &mut p, &mut s).unwrap();
    assert_eq!(s[0], 0x7f);
}

/// FP8 with scales against exact rational arithmetic: each code is the
/// exact quotient `x / s` rounded once to float8_e4m3fn (4 significant
/// bits, smallest normal 2^-6, saturated at 448), its sign the input's; each
/// scale `amax / 448` rounded once to float32 or bfloat16.
#[test]
fn fp8_with_scales_matches_the_exact_reference() {
    let mut r = Rng(11);
    let mut x: Vec<f32> = (0..4096).map(|_| r.f32()).collect();
    // Exact ties s · t and their neighbours for s = 3 · 2^-10.
    let s_tie = 3.0 * 2f64.powi(-10);
    for code in 0..126u8 {
        let lo = mldtypes::float8_e4m3fn::from_bits(code).to_f64();
        let hi = mldtypes::float8_e4m3fn::from_bits(code + 1).to_f64();
        let v = ((lo + hi) / 2.0 * s_tie) as f32;
        x.extend([
            v,
            -v,
            f32::from_bits(v.to_bits() + 1),
            f32::from_bits(v.to_bits() - 1),
        ]);
    }
    x.extend([0.0, -0.0, 464.0 * s_tie as f32, 1e30, -1e-30]);
    while !x.len().is_multiple_of(64) {
        x.push(0.5);
    }
    for (scales, seg) in [
        (vec![s_tie; x.len() / 64], 64),
        (
            x.chunks(64)
                .map(|c| {
                    mx::fp8_scale(
                        c.iter().fold(0f64, |m, v| m.max(v.abs() as f64)),
                        mldtypes::dtype::DType::Float32,
                    )
                })
                .collect(),
            64,
        ),
    ] {
        let mut codes = vec![0u8; x.len()];
        let clipped = mx::fp8_quantize(&x, seg, &scales, &mut codes).unwrap();
        let mut want_clipped = 0;
        for (i, (v, c)) in x.iter().zip(&codes).enumerate() {
            let q = Q::of(*v as f64).abs().div(&Q::of(scales[i / seg]));
            if q.cmp(&Q::int(464)).is_gt() {
                want_clipped += 1;
            }
            let want = round_float(&q, 4, -6, &Q::int(448));
            assert!(
                e4m3_value(c & 0x7f).cmp(&want).is_eq(),
                "element {i} = {v} / {}: code {c:#04x}",
                scales[i / seg]
            );
            assert_eq!(c >> 7 == 1, v.is_sign_negative(), "sign of {v}");
        }
        assert_eq!(clipped, want_clipped);
    }
    // The scales: amax / 448 rounded once to the scale's dtype.
    for amax in [1.0f64, 3e-39, 0.123456789, 65504.0, 1e-45] {
        let exact = Q::of(amax).div(&Q::int(448));
        let f32_max = Q::of(f32::MAX as f64);
        let want = round_float(&exact, 24, -126, &f32_max);
        let got = mx::fp8_scale(amax, mldtypes::dtype::DType::Float32);
        let want = if want.is_zero() { Q::pow2(-149) } else { want };
        assert!(Q::of(got).cmp(&want).is_eq(), "float32 scale of {amax}");
        let want16 = round_float(&exact, 8, -126, &f32_max);
        let got16 = mx::fp8_scale(amax, mldtypes::dtype::DType::BFloat16);
        let want16 = if want16.is_zero() {
            Q::pow2(-133)
        } else {
            want16
        };
        assert!(
            Q::of(got16).cmp(&want16).is_eq(),
            "bfloat16 scale of {amax}"
        );
    }
    assert_eq!(mx::fp8_scale(0.0, mldtypes::dtype::DType::Float32), 1.0);
}
