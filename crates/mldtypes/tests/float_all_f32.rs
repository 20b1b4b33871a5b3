//! Converts every one of the 2^32 float32 bit patterns to every float format
//! and compares with an independent reference written here: rounding done by
//! the FPU's own round-to-nearest-even in `f64` (adding and subtracting a
//! power of two), values of codes computed from the textbook formula, and
//! the special-value rules of ml_dtypes 0.6.0 stated as a table.
//!
//! Ignored by default (about 2^32 × 12 × 2 conversions); run with
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

    /// The expected code for `x`. With `ml_dtypes_quirk`, float32
    /// subnormals bound for a format whose normal range reaches below
    /// 2^-126 are rounded up (what ml_dtypes does for float8_e8m0fnu).
    fn expect(&self, x: f32, ml_dtypes_quirk: bool) -> u32 {
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
        // ml_dtypes rounds float32 subnormals bound for float8_e8m0fnu up;
        // formats without mantissa bits round ties away from zero.
        let quirk = ml_dtypes_quirk && x.is_subnormal() && emin < -126;
        let tie_away = f.man_bits == 0 && y - y.floor() == 0.5;
        let r = if quirk || tie_away {
            y.ceil()
        } else {
            nearest_even
        } * q;
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

#[derive(Default, Clone)]
struct Tally {
    f32_mismatch: u64,
    f64_mismatch: u64,
    quirk_inputs: u64,
    examples: Vec<String>,
}

#[test]
#[ignore = "2^32 inputs × 12 formats; run in release mode"]
fn all_f32_inputs() {
    let start = std::time::Instant::now();
    let formats: Vec<Format> = ALL
        .iter()
        .copied()
        .filter(|f| f.name != "float16")
        .collect();
    assert_eq!(formats.len(), 12);
    let refs: Vec<Reference> = formats.iter().map(|&f| Reference::new(f)).collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(2) as u64;
    let per = (1u64 << 32) / threads;
    let tallies: Vec<Vec<Tally>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let refs = &refs;
                s.spawn(move || {
                    let mut tally = vec![Tally::default(); refs.len()];
                    for bits in (t * per)..((t + 1) * per) {
                        let x = f32::from_bits(bits as u32);
                        for (r, tl) in refs.iter().zip(tally.iter_mut()) {
                            let want = r.expect(x, true);
                            let got = encode_f32(&r.fmt, x, Overflow::NonSaturating);
                            if got != want {
                                tl.f32_mismatch += 1;
                                if tl.examples.len() < 5 {
                                    tl.examples.push(format!(
                                        "f32 {bits:#010x}: got {got:#x} want {want:#x}"
                                    ));
                                }
                            }
                            let want64 = if x.is_subnormal() && !r.fmt.has_zero {
                                let w = r.expect(x, false);
                                tl.quirk_inputs += (w != want) as u64;
                                w
                            } else {
                                want
                            };
                            let got64 = encode_f64(&r.fmt, x as f64, Overflow::NonSaturating);
                            if got64 != want64 {
                                tl.f64_mismatch += 1;
                                if tl.examples.len() < 5 {
                                    tl.examples.push(format!(
                                        "f64 {bits:#010x}: got {got64:#x} want {want64:#x}"
                                    ));
                                }
                            }
                        }
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = 0;
    for (i, r) in refs.iter().enumerate() {
        let mut t = Tally::default();
        for th in &tallies {
            t.f32_mismatch += th[i].f32_mismatch;
            t.f64_mismatch += th[i].f64_mismatch;
            t.quirk_inputs += th[i].quirk_inputs;
            t.examples.extend(th[i].examples.iter().cloned());
        }
        println!(
            "{:<20} from_f32 mismatches {:>3}  from_f64 mismatches {:>3}  inputs where ml_dtypes' e8m0 subnormal rounding differs from nearest: {}",
            r.fmt.name, t.f32_mismatch, t.f64_mismatch, t.quirk_inputs
        );
        for e in t.examples.iter().take(5) {
            println!("    {e}");
        }
        total += t.f32_mismatch + t.f64_mismatch;
    }
    println!(
        "checked 2^32 float32 inputs × {} formats × (from_f32, from_f64) with {threads} threads in {:.1?}",
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
    for bits in (0..=u32::MAX)
        .step_by(4099)
        .chain([0x0040_0001, 0x005f_ffff, 0x7f7f_ffff])
    {
        let x = f32::from_bits(bits);
        for r in &refs {
            assert_eq!(
                encode_f32(&r.fmt, x, Overflow::NonSaturating),
                r.expect(x, true),
                "{} {bits:#x}",
                r.fmt.name
            );
            if !x.is_subnormal() || r.fmt.has_zero {
                assert_eq!(
                    encode_f64(&r.fmt, x as f64, Overflow::NonSaturating),
                    r.expect(x, true),
                    "{} {bits:#x}",
                    r.fmt.name
                );
            }
        }
    }
}
