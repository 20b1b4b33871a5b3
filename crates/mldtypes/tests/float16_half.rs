//! `mldtypes::float16` against `half::f16` 2.7 (a dev-dependency): every
//! code point, rounding from float32 (a strided sweep of all bit patterns
//! here, every pattern in the ignored test) and from float64, the
//! constants, and the API both share.
//!
//! Agreement is bit for bit except where `half` does not round correctly or
//! quiets NaNs, which the tests state: `half::f16::from_f64` rounds through
//! float32 on x86 with F16C (twice) and its software fallback
//! (`from_f64_const`) ignores the low 29 bits of the float64, so float64
//! inputs are compared where `half` is exact and otherwise against the
//! correctly rounded result; NaN payloads follow NumPy (no quiet bit
//! forced), where `half`'s hardware path sets the quiet bit.

use half::f16;
use mldtypes::float16;
use num_traits::{Float, FloatConst};

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

/// NaNs compare by class and sign; quiet NaNs (`half` leaves those alone)
/// bit for bit.
fn same_nan_aware(ours: u32, theirs: u32, quiet_bit: u32) -> bool {
    ours == theirs || (ours | quiet_bit) == theirs
}

#[test]
fn every_code_point_decodes_as_half_does() {
    for c in 0..=u16::MAX {
        let (a, b) = (float16::from_bits(c), f16::from_bits(c));
        let (x, y) = (a.to_f32(), b.to_f32());
        if b.is_nan() {
            assert!(
                x.is_nan() && x.is_sign_negative() == y.is_sign_negative(),
                "{c:#06x}"
            );
            // Quiet NaNs are the same; a signalling NaN keeps its payload
            // here (NumPy), where half's hardware path quiets it.
            assert!(
                same_nan_aware(x.to_bits(), y.to_bits(), 0x0040_0000),
                "{c:#06x}"
            );
        } else {
            assert!(same_f32(x, y), "{c:#06x}: {x} vs {y}");
            assert_eq!(a.to_f64().to_bits(), b.to_f64().to_bits(), "{c:#06x}");
        }
        assert_eq!(a.is_nan(), b.is_nan(), "{c:#06x}");
        assert_eq!(a.is_infinite(), b.is_infinite(), "{c:#06x}");
        assert_eq!(a.is_finite(), b.is_finite(), "{c:#06x}");
        assert_eq!(a.is_normal(), b.is_normal(), "{c:#06x}");
        assert_eq!(a.classify(), b.classify(), "{c:#06x}");
        assert_eq!(a.is_sign_negative(), b.is_sign_negative(), "{c:#06x}");
        assert_eq!(a.to_string(), b.to_string(), "{c:#06x}");
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{c:#06x}");
        assert_eq!(format!("{a:e}"), format!("{b:e}"), "{c:#06x}");
        assert_eq!(format!("{a:x}"), format!("{b:x}"), "{c:#06x}");
        assert_eq!(format!("{a:b}"), format!("{b:b}"), "{c:#06x}");
        if !b.is_nan() {
            assert_eq!(a.signum().to_bits(), b.signum().to_bits(), "{c:#06x}");
            assert_eq!((-a).to_bits(), (-b).to_bits(), "{c:#06x}");
            assert_eq!(a.abs().to_bits(), Float::abs(b).to_bits(), "{c:#06x}");
        }
        // total_cmp against every 257th code.
        let o = f16::from_bits(c.wrapping_mul(257));
        let p = float16::from_bits(o.to_bits());
        assert_eq!(a.total_cmp(&p), b.total_cmp(&o), "{c:#06x}");
        assert_eq!(a.partial_cmp(&p), b.partial_cmp(&o), "{c:#06x}");
    }
}

fn check_f32(bits: u32) {
    let x = f32::from_bits(bits);
    let (a, b) = (float16::from_f32(x), f16::from_f32(x));
    if x.is_nan() {
        // NaN stays NaN with its sign; the payload is NumPy's (top 10 bits,
        // 1 if they are all zero), where half's hardware path quiets it.
        assert!(
            a.is_nan() && a.is_sign_negative() == b.is_sign_negative(),
            "{bits:#010x}"
        );
        let p = (bits & 0x7f_ffff) >> 13;
        assert_eq!(a.to_bits() & 0x3ff, p.max(1) as u16, "{bits:#010x}");
    } else {
        assert_eq!(a.to_bits(), b.to_bits(), "{bits:#010x} ({x:e})");
    }
}

#[test]
fn rounding_from_float32_matches_half() {
    // Every 61st bit pattern, and every pattern around float16's rounding
    // boundaries (exponents -26 .. 16, all mantissas of the low 13 bits near
    // 0 and the tie).
    for b in (0..=u32::MAX).step_by(61) {
        check_f32(b);
    }
    for e in (127 - 26)..=(127 + 16u32) {
        for m in (0..(1 << 23))
            .step_by(4093)
            .chain([0x0fff, 0x1000, 0x1001, 0x2fff, 0x3000, 0x3001])
        {
            check_f32((e << 23) | m);
            check_f32((e << 23) | m | 0x8000_0000);
        }
    }
}

#[test]
#[ignore = "all 2^32 float32 bit patterns (about a minute); run with --ignored"]
fn rounding_from_every_float32_matches_half() {
    for b in 0..=u32::MAX {
        check_f32(b);
    }
}

#[test]
fn rounding_from_float64_is_correct_and_matches_half_where_half_is() {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut differ = 0;
    for i in 0..2_000_000u64 {
        let x = if i % 2 == 0 {
            // Around float16's range, with random low bits (non-float32 values).
            let e = (next() % 50) as i32 - 30;
            f64::from_bits((next() >> 12) | (((e + 1023) as u64) << 52))
        } else {
            f64::from_bits(next())
        };
        let ours = float16::from_f64(x);
        // The correctly rounded result: an exact f32 route when x is a
        // float32, otherwise through float32 with a sticky bit (round to odd),
        // which rounds once.
        let y = x as f32;
        let sticky = if (y as f64) == x || x.is_nan() {
            y
        } else {
            let b = y.to_bits();
            let toward = if (y as f64).abs() > x.abs() { b - 1 } else { b };
            f32::from_bits(toward | 1)
        };
        let want = f16::from_f32(sticky);
        if x.is_nan() {
            assert!(ours.is_nan());
            continue;
        }
        assert_eq!(
            ours.to_bits(),
            want.to_bits(),
            "{x:e} ({:#018x})",
            x.to_bits()
        );
        if (y as f64) == x {
            assert_eq!(ours.to_bits(), f16::from_f64(x).to_bits(), "{x:e}");
        } else if ours.to_bits() != f16::from_f64(x).to_bits() {
            differ += 1;
        }
    }
    // half double-rounds near ties; a random sample hits a few.
    println!("half::f16::from_f64 differs from the correct rounding on {differ} of 1M non-float32 inputs");
    // A documented case: 1 + 2^-11 + 2^-40 is above the tie between 1 and
    // 1 + 2^-10; rounding through float32 loses 2^-40 and rounds the tie to
    // even (1.0).
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(float16::from_f64(x).to_f64(), 1.0 + 2f64.powi(-10));
    assert_eq!(f16::from_f64(x).to_f64(), 1.0);
}

#[test]
fn constants_are_halfs() {
    macro_rules! same {
        ($($c:ident)*) => {$(
            assert_eq!(float16::$c.to_bits(), f16::$c.to_bits(), stringify!($c));
        )*};
    }
    same!(E PI FRAC_1_PI FRAC_1_SQRT_2 FRAC_2_PI FRAC_2_SQRT_PI FRAC_PI_2 FRAC_PI_3 FRAC_PI_4
        FRAC_PI_6 FRAC_PI_8 LN_10 LN_2 LOG10_E LOG10_2 LOG2_E LOG2_10 SQRT_2 EPSILON INFINITY MAX
        MIN MIN_POSITIVE MIN_POSITIVE_SUBNORMAL MAX_SUBNORMAL NAN NEG_INFINITY ONE ZERO NEG_ZERO
        NEG_ONE);
    assert_eq!(float16::DIGITS, f16::DIGITS);
    assert_eq!(float16::MANTISSA_DIGITS, f16::MANTISSA_DIGITS);
    assert_eq!(float16::MAX_10_EXP, f16::MAX_10_EXP);
    assert_eq!(float16::MIN_10_EXP, f16::MIN_10_EXP);
    assert_eq!(float16::MAX_EXP, f16::MAX_EXP);
    assert_eq!(float16::MIN_EXP, f16::MIN_EXP);
    assert_eq!(float16::RADIX, f16::RADIX);
    assert_eq!(float16::TAU.to_f32(), 6.28125); // half has no TAU; FloatConst's
    assert_eq!(<float16 as FloatConst>::PI().to_bits(), f16::PI.to_bits());
    // The same integer constants for bfloat16 as half::bf16, and float32's
    // rule applied to float32 would give f32's.
    use half::bf16;
    use mldtypes::bfloat16;
    assert_eq!(bfloat16::DIGITS, bf16::DIGITS);
    assert_eq!(bfloat16::MAX_10_EXP, bf16::MAX_10_EXP);
    assert_eq!(bfloat16::MIN_10_EXP, bf16::MIN_10_EXP);
    assert_eq!(bfloat16::MAX_EXP, bf16::MAX_EXP);
    assert_eq!(bfloat16::MIN_EXP, bf16::MIN_EXP);
    assert_eq!(<bfloat16 as FloatConst>::PI().to_bits(), bf16::PI.to_bits());
    assert_eq!(bfloat16::NEG_ONE.to_bits(), bf16::NEG_ONE.to_bits());
}

#[test]
fn shared_api() {
    let a = float16::from_f32(1.5);
    let b = f16::from_f32(1.5);
    assert_eq!(a.to_le_bytes(), b.to_le_bytes());
    assert_eq!(
        float16::from_be_bytes(b.to_be_bytes()).to_bits(),
        b.to_bits()
    );
    assert_eq!((a * a + a).to_bits(), (b * b + b).to_bits());
    assert_eq!(
        (a / float16::from_f32(3.0)).to_bits(),
        (b / f16::from_f32(3.0)).to_bits()
    );
    assert_eq!(a.clamp(float16::ZERO, float16::ONE), float16::ONE);
    assert_eq!(b.clamp(f16::ZERO, f16::ONE), f16::ONE);
    assert_eq!(float16::from(7u8).to_bits(), f16::from(7u8).to_bits());
    assert_eq!(float16::from(-7i8).to_bits(), f16::from(-7i8).to_bits());
    assert_eq!(f16::from(a), b);
    assert_eq!(float16::from(b), a);
    const C: float16 = float16::from_f32_const(0.333);
    assert_eq!(C.to_bits(), f16::from_f32_const(0.333).to_bits());
    assert_eq!(C.to_f32_const(), f16::from_f32(0.333).to_f32_const());
    assert_eq!(float16::MAX.to_f64_const(), 65504.0);
    assert_eq!("1.5".parse::<float16>().unwrap(), a);
    // num-traits, bytemuck, serde
    assert_eq!(Float::sqrt(a).to_bits(), Float::sqrt(b).to_bits());
    assert_eq!(bytemuck::bytes_of(&a), bytemuck::bytes_of(&b));
    assert_eq!(serde_json::to_string(&a).unwrap(), "1.5");
    let r: float16 = serde_json::from_str("65520").unwrap();
    assert!(r.is_infinite());
    // Slices, with the dispatched kernels.
    use mldtypes::float::{FloatSliceExt, FloatVecExt};
    let xs: Vec<f32> = (0..10_000).map(|i| (i as f32 - 5000.0) * 0.37).collect();
    let v = Vec::<float16>::from_f32_slice(&xs);
    assert!(v
        .iter()
        .zip(&xs)
        .all(|(a, &x)| a.to_bits() == f16::from_f32(x).to_bits()));
    let back = v.to_f32_vec();
    assert!(back.iter().zip(&v).all(|(y, a)| *y == a.to_f32()));
    // Sum accumulates in float32 (half's Sum adds in f16 and stalls).
    let ones = vec![float16::ONE; 4096];
    assert_eq!(ones.iter().sum::<float16>().to_f32(), 4096.0);
    assert_eq!(mldtypes::cast::reduce::sum(&ones).unwrap().to_f32(), 4096.0);
}
