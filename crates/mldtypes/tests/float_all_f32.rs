//! Converts every one of the 2^32 float32 bit patterns to every float format
//! and compares with an independent reference written here: rounding done by
//! the FPU's own round-to-nearest-even in `f64` (adding and subtracting a
//! power of two), values of codes computed from the textbook formula, and
//! the special-value rules of ml_dtypes 0.6.0 stated as a table. Both
//! `encode_f32` and `encode_f64` (of the widened input) must round every
//! input correctly, except in the one place ml_dtypes 0.6.0 and PyTorch do
//! not: float8_e8m0fnu from float32 subnormals in (2^-127, 1.5·2^-127),
//! which they round up to 2^-126 and `encode_f32` follows (`encode_f64`
//! rounds to nearest). The sweep counts those inputs.
//!
//! Two references: `Reference::expect` rounds each input on its own (used
//! by the sampled test that runs every time), and `Sweep` walks all inputs
//! of one sign in increasing order past the midpoints between consecutive
//! values (used by the exhaustive test).
//!
//! The exhaustive test is ignored by default (2^32 × 12 × 2 conversions); run with
//! `cargo test --release -p mldtypes --test float_all_f32 -- --ignored --nocapture`.

use mldtypes::float::core::{encode_f32, encode_f64};
use mldtypes::format::{Format, NanEncoding, NonFinite, Overflow, ALL};

/// `2^k` for a normal `f64` exponent.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// One format's reference data.
struct Reference {
    fmt: Format,
    /// Positive finite values in increasing order, with their codes.
    values: Vec<(f64, u32)>,
    max: f64,
    sign: u32,
}

impl Reference {
    fn new(fmt: Format) -> Self {
        let m = fmt.man_bits as i32;
        let e_bits = fmt.exp_bits;
        let sign = if fmt.signed {
            1u32 << (e_bits + fmt.man_bits)
        } else {
            0
        };
        let mut values = Vec::new();
        for e in 0..(1u32 << e_bits) {
            for f in 0..(1u32 << m) {
                let code = (e << m) | f;
                // Textbook value of a code with biased exponent e, fraction f.
                let v = if e == 0 && fmt.has_zero {
                    f as f64 * 2f64.powi(1 - fmt.bias - m)
                } else {
                    (1.0 + f as f64 / 2f64.powi(m)) * 2f64.powi(e as i32 - fmt.bias)
                };
                let top_exp = e == (1 << e_bits) - 1;
                let special = match (fmt.non_finite, fmt.nan_encoding) {
                    (NonFinite::Ieee, _) => top_exp,
                    (NonFinite::NanOnly, NanEncoding::AllOnes) => top_exp && f == (1 << m) - 1,
                    _ => false,
                };
                if !special {
                    values.push((v, code));
                }
            }
        }
        values.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let max = values.last().unwrap().0;
        Reference {
            fmt,
            values,
            max,
            sign,
        }
    }

    fn sign_if(&self, neg: bool) -> u32 {
        if neg {
            self.sign
        } else {
            0
        }
    }

    /// What a NaN input gives (ml_dtypes 0.6.0, probed per format).
    fn nan(&self, neg: bool) -> u32 {
        let f = &self.fmt;
        match (f.non_finite, f.nan_encoding, f.signed) {
            (NonFinite::Ieee, _, _) => {
                self.sign_if(neg)
                    | (((1 << f.exp_bits) - 1) << f.man_bits)
                    | (1 << (f.man_bits - 1))
            }
            (NonFinite::NanOnly, NanEncoding::AllOnes, true) => self.sign_if(neg) | (self.sign - 1),
            (NonFinite::NanOnly, NanEncoding::AllOnes, false) => 0xff,
            (NonFinite::NanOnly, _, _) => 0x80,
            // float6/float4: +NaN → −0, −NaN → +0.
            (NonFinite::FiniteOnly, _, _) => self.sign_if(!neg),
            (NonFinite::InfAtMax, _, _) => unreachable!("the named formats only"),
        }
    }

    fn max_code(&self) -> u32 {
        self.values.last().unwrap().1
    }

    /// What a too-large finite value gives without saturation.
    fn overflow(&self, neg: bool) -> u32 {
        let f = &self.fmt;
        match f.non_finite {
            NonFinite::Ieee => self.sign_if(neg) | (((1 << f.exp_bits) - 1) << f.man_bits),
            NonFinite::NanOnly => self.nan(neg),
            NonFinite::FiniteOnly => self.sign_if(neg) | self.max_code(),
            NonFinite::InfAtMax => unreachable!("the named formats only"),
        }
    }

    /// The code of the positive format value `v`, read off `v`'s own
    /// `f64` exponent and leading fraction bits.
    fn code_of(&self, v: f64) -> u32 {
        let f = &self.fmt;
        let b = v.to_bits();
        let e = ((b >> 52) as i32) - 1023;
        let emin = if f.has_zero { 1 - f.bias } else { -f.bias };
        let code = if e < emin {
            // Subnormal: a multiple of the smallest subnormal.
            (v / pow2(emin - f.man_bits as i32)) as u32
        } else {
            let frac = ((b >> (52 - f.man_bits)) & ((1 << f.man_bits) - 1)) as u32;
            (((e + f.bias) as u32) << f.man_bits) | frac
        };
        debug_assert_eq!(
            self.values[self.values.partition_point(|p| p.0 < v)].1,
            code
        );
        code
    }

    /// The expected `encode_f32` code for `x`: [`Self::expect`], except
    /// that in a format without zero (float8_e8m0fnu) a float32 subnormal
    /// above the smallest value becomes the next value (2^-126), as
    /// ml_dtypes 0.6.0 and PyTorch convert it.
    fn expect_f32(&self, x: f32) -> u32 {
        if !self.fmt.has_zero && x.is_subnormal() && x > 0.0 && (x as f64) > self.values[0].0 {
            return self.values[1].1;
        }
        self.expect(x)
    }

    /// The expected (correctly rounded) code for `x`.
    fn expect(&self, x: f32) -> u32 {
        let f = &self.fmt;
        let neg = x.is_sign_negative();
        if x.is_nan() {
            return self.nan(neg);
        }
        if !f.signed && (neg || x == 0.0) {
            return self.nan(neg);
        }
        if x.is_infinite() {
            return self.overflow(neg);
        }
        if x == 0.0 {
            return if f.nan_encoding == NanEncoding::NegativeZero {
                0
            } else {
                self.sign_if(neg)
            };
        }
        let a = (x as f64).abs();
        let e = ((a.to_bits() >> 52) as i32) - 1023;
        let emin = if f.has_zero { 1 - f.bias } else { -f.bias };
        let q = pow2(e.max(emin) - f.man_bits as i32);
        let y = a / q; // exact: q is a power of two
        const BIG: f64 = 4503599627370496.0; // 2^52
        let nearest_even = (y + BIG) - BIG;
        // Formats without mantissa bits round ties away from zero.
        let tie_away = f.man_bits == 0 && y - y.floor() == 0.5;
        let r = if tie_away { y.ceil() } else { nearest_even } * q;
        if r == 0.0 {
            return if !f.has_zero {
                self.values[0].1
            } else if f.nan_encoding == NanEncoding::NegativeZero {
                0
            } else {
                self.sign_if(neg)
            };
        }
        if r > self.max {
            return self.overflow(neg);
        }
        self.sign_if(neg) | self.code_of(r)
    }
}

/// (from_f32 mismatches, from_f64 mismatches, inputs where ml_dtypes'
/// float32 rounding, which `encode_f32` follows, differs from the nearest
/// value, examples).
type SweepResult = (u64, u64, u64, Vec<String>);

/// A second, sweep-based reference for one format: the midpoints between
/// consecutive positive values (and the one above the largest value, where
/// overflow starts), visited in increasing order of the input.
struct Sweep<'a> {
    r: &'a Reference,
    mids: Vec<f64>,
    /// At `mids[i]`, whether the tie goes to the larger value `i + 1`.
    tie_up: Vec<bool>,
}

impl<'a> Sweep<'a> {
    fn new(r: &'a Reference) -> Self {
        let f = &r.fmt;
        let (max, max_code) = *r.values.last().unwrap();
        let top_exp = ((max.to_bits() >> 52) as i32) - 1023;
        // The value the next code would have with an unbounded exponent.
        let beyond = (max + pow2(top_exp - f.man_bits as i32), max_code + 1);
        let vals: Vec<(f64, u32)> = r.values.iter().copied().chain([beyond]).collect();
        let mids = vals.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0).collect();
        let tie_up = vals
            .windows(2)
            .map(|w| f.man_bits == 0 || w[1].1 % 2 == 0)
            .collect();
        Sweep { r, mids, tie_up }
    }

    /// Checks every float32 of one sign; returns (from_f32 mismatches,
    /// from_f64 mismatches, inputs rounded up as ml_dtypes does, examples).
    fn run(&self, neg: bool) -> SweepResult {
        let r = self.r;
        let f = &r.fmt;
        let sign_bits = (neg as u32) << 31;
        let n = r.values.len();
        let (mut bad32, mut bad64, mut ml_dev) = (0u64, 0u64, 0u64);
        let mut examples = Vec::new();
        let mut idx = 0usize;
        let lowest = r.values[0].0;
        for mag in 0..0x8000_0000u32 {
            let bits = sign_bits | mag;
            let x = f32::from_bits(bits);
            let mut want32 = None;
            let want = if mag >= 0x7f80_0000 {
                if x.is_nan() {
                    r.nan(neg)
                } else {
                    r.overflow(neg)
                }
            } else if (neg && !f.signed) || (mag == 0 && !f.has_zero) {
                r.nan(neg)
            } else {
                let a = x.abs() as f64;
                while idx < self.mids.len() && a > self.mids[idx] {
                    idx += 1;
                }
                let i = if idx < self.mids.len() && a == self.mids[idx] && self.tie_up[idx] {
                    idx + 1
                } else {
                    idx
                };
                let w = if i == n {
                    r.overflow(neg)
                } else if r.values[i].0 == 0.0 {
                    if f.nan_encoding == NanEncoding::NegativeZero {
                        0
                    } else {
                        r.sign_if(neg)
                    }
                } else {
                    r.sign_if(neg) | r.values[i].1
                };
                // ml_dtypes' float32 path, followed by `encode_f32`: float32
                // subnormals above the smallest value of a format without
                // zero round up.
                let ml = if !f.has_zero && x.is_subnormal() && a > lowest {
                    r.values[i.max(1)].1
                } else {
                    w
                };
                ml_dev += (ml != w) as u64;
                want32 = Some(ml);
                w
            };
            let want32 = want32.unwrap_or(want);
            let got32 = encode_f32(f, x, Overflow::NonSaturating);
            if got32 != want32 {
                bad32 += 1;
                if examples.len() < 5 {
                    examples.push(format!(
                        "from_f32 {bits:#010x}: got {got32:#x} want {want32:#x}"
                    ));
                }
            }
            let got64 = encode_f64(f, x as f64, Overflow::NonSaturating);
            if got64 != want {
                bad64 += 1;
                if examples.len() < 5 {
                    examples.push(format!(
                        "from_f64 {bits:#010x}: got {got64:#x} want {want:#x}"
                    ));
                }
            }
        }
        (bad32, bad64, ml_dev, examples)
    }
}

#[test]
#[ignore = "2^32 inputs × 12 formats × 2 conversions; run in release mode"]
fn all_f32_inputs() {
    let start = std::time::Instant::now();
    let refs: Vec<Reference> = ALL
        .iter()
        .copied()
        .filter(|f| f.name != "float16")
        .map(Reference::new)
        .collect();
    assert_eq!(refs.len(), 12);
    // One thread per sign.
    let results: Vec<Vec<SweepResult>> = std::thread::scope(|s| {
        let handles: Vec<_> = [false, true]
            .into_iter()
            .map(|neg| {
                let refs = &refs;
                s.spawn(move || refs.iter().map(|r| Sweep::new(r).run(neg)).collect())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = 0;
    for (k, r) in refs.iter().enumerate() {
        let (mut b32, mut b64, mut q) = (0, 0, 0);
        for side in &results {
            b32 += side[k].0;
            b64 += side[k].1;
            q += side[k].2;
            for e in &side[k].3 {
                println!("    {} {e}", r.fmt.name);
            }
        }
        println!(
            "{:<20} from_f32 mismatches {b32}, from_f64 mismatches {b64}, float32 inputs rounded as ml_dtypes does rather than to nearest (from_f32 only): {q}",
            r.fmt.name
        );
        // float8_e8m0fnu: bits 0x00400001..=0x005fffff.
        let expected_dev = if r.fmt.name == "float8_e8m0fnu" {
            0x1f_ffff
        } else {
            0
        };
        assert_eq!(q, expected_dev, "{}", r.fmt.name);
        total += b32 + b64;
    }
    println!(
        "all 2^32 float32 inputs × {} formats × (from_f32, from_f64) checked on 2 threads in {:.1?}",
        refs.len(),
        start.elapsed()
    );
    assert_eq!(total, 0);
}

/// A quick version of the sweep over every 4099th input, run every time.
#[test]
fn sampled_f32_inputs() {
    let refs: Vec<Reference> = ALL
        .iter()
        .copied()
        .filter(|f| f.name != "float16")
        .map(Reference::new)
        .collect();
    for bits in (0..=u32::MAX).step_by(4099).chain([
        0x0040_0000,
        0x0040_0001,
        0x005f_ffff,
        0x0060_0000,
        0x0060_0001,
        0x7f7f_ffff,
    ]) {
        let x = f32::from_bits(bits);
        for r in &refs {
            let want = r.expect(x);
            assert_eq!(
                encode_f32(&r.fmt, x, Overflow::NonSaturating),
                r.expect_f32(x),
                "{} {bits:#x}",
                r.fmt.name
            );
            assert_eq!(
                encode_f64(&r.fmt, x as f64, Overflow::NonSaturating),
                want,
                "{} {bits:#x}",
                r.fmt.name
            );
        }
    }
    // float8_e8m0fnu around 2^-127: to nearest, below the midpoint
    // 1.5·2^-127 is 2^-127 (float64 route); from float32, everything above
    // 2^-127 is 2^-126 (ml_dtypes 0.6.0 and PyTorch).
    let e8 = refs
        .iter()
        .find(|r| r.fmt.name == "float8_e8m0fnu")
        .unwrap();
    for (bits, nearest, from_f32) in [
        (0x0000_0001, 0x00, 0x00),
        (0x0040_0000, 0x00, 0x00),
        (0x0040_0001, 0x00, 0x01),
        (0x005f_ffff, 0x00, 0x01),
        (0x0060_0000, 0x01, 0x01),
        (0x007f_ffff, 0x01, 0x01),
        (0x8040_0001, 0xff, 0xff),
    ] {
        let x = f32::from_bits(bits);
        assert_eq!(e8.expect(x), nearest, "{bits:#x}");
        assert_eq!(e8.expect_f32(x), from_f32, "{bits:#x}");
        let f = &e8.fmt;
        assert_eq!(
            encode_f32(f, x, Overflow::NonSaturating),
            from_f32,
            "{bits:#x}"
        );
        assert_eq!(
            encode_f64(f, x as f64, Overflow::NonSaturating),
            nearest,
            "{bits:#x}"
        );
    }
}
