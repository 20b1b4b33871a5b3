//! An exact, independent oracle for the IEEE P3109 family: values of codes
//! and round-to-nearest-even encodings computed from K, P, signedness and
//! domain with big-integer arithmetic, without the crate's descriptors or
//! core (the interim report's rules, as gfloat 0.5.2 implements them).
//!
//! - value of code `c` (magnitude `c` without the sign bit), `t = P − 1`,
//!   bias `2^(K−P−1)` signed / `2^(K−P)` unsigned: `e = c >> t`,
//!   `f = c mod 2^t`; `f · 2^(1−bias−t)` if `e = 0`, else
//!   `(2^t + f) · 2^(e−bias−t)`;
//! - NaN: `2^(K−1)` signed, `2^K − 1` unsigned; extended domain: ±inf at
//!   magnitude `2^(K−1) − 1` signed, `+inf` at `2^K − 2` unsigned;
//! - rounding: to the nearest value, ties to the even code, with an
//!   unbounded exponent above the largest value (so the overflow threshold
//!   is the midpoint after it, a tie going to the even code); overflow gives
//!   ±inf (extended) or NaN (finite); no −0; unsigned formats give +0 for
//!   a negative value whose magnitude rounds to zero and NaN for any other
//!   negative value or −inf.
#![allow(dead_code)]

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// A member: width, precision, signed, extended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub k: u32,
    pub p: u32,
    pub signed: bool,
    pub extended: bool,
}

/// An exact binary rational `n · 2^e` (n may be zero or negative).
#[derive(Clone, Debug)]
pub struct Exact {
    pub n: BigInt,
    pub e: i64,
}

impl Exact {
    /// Exponent of the leading bit (`None` for zero).
    fn lead(&self) -> Option<i64> {
        if self.n.is_zero() {
            None
        } else {
            Some(self.e + self.n.bits() as i64 - 1)
        }
    }

    fn cmp_abs(&self, o: &Exact) -> std::cmp::Ordering {
        // Different leading exponents decide without aligning (cheap for
        // the wide formats' far-apart exponents).
        match (self.lead(), o.lead()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(a), Some(b)) if a != b => return a.cmp(&b),
            _ => {}
        }
        let e = self.e.min(o.e);
        let a: BigInt = self.n.abs() << (self.e - e) as usize;
        let b: BigInt = o.n.abs() << (o.e - e) as usize;
        a.cmp(&b)
    }
}

/// Classes of a code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Zero,
    Subnormal,
    Normal,
    Inf,
    Nan,
}

impl Member {
    pub fn t(self) -> u32 {
        self.p - 1
    }
    pub fn bias(self) -> i64 {
        if self.signed {
            1i64 << (self.k - self.p - 1)
        } else {
            1i64 << (self.k - self.p)
        }
    }
    pub fn mag_bits(self) -> u32 {
        if self.signed {
            self.k - 1
        } else {
            self.k
        }
    }
    pub fn nan(self) -> u32 {
        if self.signed {
            1 << (self.k - 1)
        } else {
            (1 << self.k) - 1
        }
    }
    /// Magnitude of the +inf code (extended only).
    pub fn inf_mag(self) -> Option<u32> {
        if !self.extended {
            None
        } else if self.signed {
            Some((1 << (self.k - 1)) - 1)
        } else {
            Some((1 << self.k) - 2)
        }
    }
    /// The largest finite magnitude.
    pub fn max_mag(self) -> u32 {
        let top = if self.signed {
            (1 << (self.k - 1)) - 1
        } else {
            (1 << self.k) - 2 // below the NaN
        };
        if self.extended {
            top - 1
        } else {
            top
        }
    }
    /// The exact value of a finite magnitude code.
    pub fn mag_value(self, c: u32) -> Exact {
        let t = self.t();
        let e = (c >> t) as i64;
        let f = (c & ((1 << t) - 1)) as i64;
        if e == 0 {
            Exact {
                n: BigInt::from(f),
                e: 1 - self.bias() - t as i64,
            }
        } else {
            Exact {
                n: BigInt::from((1i64 << t) + f),
                e: e - self.bias() - t as i64,
            }
        }
    }
    pub fn sign_bit(self) -> u32 {
        if self.signed {
            1 << (self.k - 1)
        } else {
            0
        }
    }
    /// Class and (for finite codes) exact signed value of a code.
    pub fn decode(self, code: u32) -> (Class, Option<Exact>) {
        if code == self.nan() {
            return (Class::Nan, None);
        }
        let neg = self.signed && code & self.sign_bit() != 0;
        let mag = code & !self.sign_bit();
        if Some(mag) == self.inf_mag() {
            return (Class::Inf, None);
        }
        let mut v = self.mag_value(mag);
        if neg {
            v.n = -v.n;
        }
        let class = if mag == 0 {
            Class::Zero
        } else if mag >> self.t() == 0 {
            Class::Subnormal
        } else {
            Class::Normal
        };
        (class, Some(v))
    }

    /// Round-to-nearest-even code of the exact nonzero magnitude `x`,
    /// before overflow: a magnitude up to `max_mag + 1` (the latter meaning
    /// overflow).
    fn round_mag(self, x: &Exact) -> u32 {
        // The largest code at or below x (binary search on magnitudes).
        let max = self.max_mag();
        let (mut lo, mut hi) = (0u32, max);
        if self.mag_value(max).cmp_abs(x) != std::cmp::Ordering::Greater {
            lo = max;
        } else {
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if self.mag_value(mid).cmp_abs(x) != std::cmp::Ordering::Greater {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        let below = self.mag_value(lo);
        if below.cmp_abs(x) == std::cmp::Ordering::Equal {
            return lo;
        }
        // The next value up: the next code's value by the same formula, which
        // past the largest finite code is the next value of an unbounded
        // exponent (codes are contiguous magnitudes).
        let next = lo + 1;
        let above = self.mag_value(next);
        // Compare 2x with below + above.
        let e = x.e.min(below.e).min(above.e);
        let sx: BigInt = (x.n.abs() << (x.e - e) as usize) * 2;
        let sm: BigInt =
            (below.n.abs() << (below.e - e) as usize) + (above.n.abs() << (above.e - e) as usize);
        match sx.cmp(&sm) {
            std::cmp::Ordering::Less => lo,
            std::cmp::Ordering::Greater => next,
            // Ties to the even code (the magnitude's parity; the sign bit
            // is the top bit and does not change it).
            std::cmp::Ordering::Equal => {
                if lo % 2 == 0 {
                    lo
                } else {
                    next
                }
            }
        }
    }

    /// The code of the float64 `x` rounded to nearest even, non-saturating.
    pub fn encode_f64(self, x: f64) -> u32 {
        if x.is_nan() {
            return self.nan();
        }
        let neg = x.is_sign_negative();
        if !self.signed && neg {
            if x == 0.0 {
                return 0;
            }
            if x.is_infinite() {
                return self.nan();
            }
            let m = self.round_mag(&exact_f64(-x));
            return if m == 0 { 0 } else { self.nan() };
        }
        let sign = if neg { self.sign_bit() } else { 0 };
        if x.is_infinite() {
            return match self.inf_mag() {
                Some(i) => i | sign,
                None => self.nan(),
            };
        }
        if x == 0.0 {
            return 0;
        }
        let m = self.round_mag(&exact_f64(x.abs()));
        if m > self.max_mag() {
            return match self.inf_mag() {
                Some(i) => i | sign,
                None => self.nan(),
            };
        }
        if m == 0 {
            0
        } else {
            m | sign
        }
    }
}

/// Whether two exact values are equal.
pub fn same_value(a: &Exact, b: &Exact) -> bool {
    a.n.is_negative() == b.n.is_negative() && a.cmp_abs(b) == std::cmp::Ordering::Equal
}

/// The exact value of a finite float64.
pub fn exact_f64(x: f64) -> Exact {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let e = ((b >> 52) & 0x7ff) as i64;
    let m = b & ((1 << 52) - 1);
    let (n, e) = if e == 0 {
        (m, -1074)
    } else {
        (m | (1 << 52), e - 1075)
    };
    let n = BigInt::from(n);
    Exact {
        n: if neg { -n } else { n },
        e,
    }
}

/// `v` rounded to the nearest binary64 (ties to even), with gradual
/// underflow and overflow to ±inf; zero keeps the sign `neg_zero`.
pub fn to_f64(v: &Exact, neg_zero: bool) -> f64 {
    round_binary(v, neg_zero, 53, -1074, 1023)
}

/// `v` rounded to the nearest binary32.
pub fn to_f32(v: &Exact, neg_zero: bool) -> f32 {
    round_binary(v, neg_zero, 24, -149, 127) as f32
}

/// Rounds `v` to a binary format with `prec` significant bits, smallest
/// subnormal `2^qmin`, largest exponent `emax`; returns the value as f64
/// (exact for binary32 and binary64 results).
fn round_binary(v: &Exact, neg_zero: bool, prec: u32, qmin: i64, emax: i64) -> f64 {
    let neg = v.n.is_negative();
    let mag = v.n.abs();
    if mag.is_zero() {
        return if neg_zero { -0.0 } else { 0.0 };
    }
    let bits = mag.bits() as i64;
    let lead = v.e + bits - 1; // exponent of the leading bit
                               // The quantum of the result: 2^(lead − prec + 1), at least 2^qmin.
    let q = (lead - prec as i64 + 1).max(qmin);
    let shift = q - v.e;
    let (mut kept, round_up) = if shift <= 0 {
        (mag << (-shift) as usize, false)
    } else {
        let s = shift as usize;
        let kept: BigInt = &mag >> s;
        let rem: BigInt = &mag - (&kept << s);
        let half: BigInt = BigInt::one() << (s - 1);
        let up = rem > half || (rem == half && (&kept % 2u32) == BigInt::one());
        (kept, up)
    };
    if round_up {
        kept += 1;
    }
    if kept.is_zero() {
        return if neg { -0.0 } else { 0.0 };
    }
    let kb = kept.bits() as i64;
    let lead = q + kb - 1;
    if lead > emax {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // kept < 2^54: exact as f64 after scaling by 2^q (q >= -1074 and the
    // value fits, so the product is exact).
    let k: u64 = kept.try_into().expect("at most 54 bits");
    let mut x = k as f64;
    // Scale in steps that stay exact.
    let mut q = q;
    while q > 0 {
        let s = q.min(1000);
        x *= 2f64.powi(s as i32);
        q -= s;
    }
    while q < 0 {
        let s = (-q).min(1000);
        // Exact as long as the result is representable (it is: prec bits at
        // or above 2^qmin).
        x /= 2f64.powi(s as i32);
        q += s;
    }
    if neg {
        -x
    } else {
        x
    }
}
