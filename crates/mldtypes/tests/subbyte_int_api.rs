//! Checked, wrapping and saturating arithmetic and the `num_traits` traits
//! of the sub-byte integers, over every pair of values, against `i64`
//! arithmetic.

use mldtypes::int::SubByteIntError;
use mldtypes::{int1, int2, int4, uint1, uint2, uint4};
use num_traits::{
    CheckedAdd, CheckedDiv, CheckedMul, CheckedNeg, CheckedRem, CheckedSub, Num, SaturatingAdd,
    SaturatingMul, SaturatingSub, WrappingAdd, WrappingMul, WrappingNeg, WrappingSub,
};

macro_rules! exhaustive {
    ($t:ident) => {{
        let (lo, hi) = ($t::MIN.to_i32() as i64, $t::MAX.to_i32() as i64);
        let fits = |v: i64| (lo..=hi).contains(&v);
        let clamp = |v: i64| v.clamp(lo, hi);
        let val = |x: Option<$t>| x.map(|x| x.to_i32() as i64);
        let n = 1u8 << $t::BITS;
        for a in 0..n {
            let x = $t::from_bits(a);
            let xi = x.to_i32() as i64;
            assert_eq!(val(x.checked_neg()), Some(-xi).filter(|v| fits(*v)));
            assert_eq!(x.saturating_neg().to_i32() as i64, clamp(-xi));
            assert_eq!(CheckedNeg::checked_neg(&x), x.checked_neg());
            assert_eq!(WrappingNeg::wrapping_neg(&x), -x);
            for b in 0..n {
                let y = $t::from_bits(b);
                let yi = y.to_i32() as i64;
                for (got, exact) in [
                    (x.checked_add(y), xi + yi),
                    (x.checked_sub(y), xi - yi),
                    (x.checked_mul(y), xi * yi),
                ] {
                    assert_eq!(val(got), Some(exact).filter(|v| fits(*v)), "{xi} {yi}");
                }
                assert_eq!(x.saturating_add(y).to_i32() as i64, clamp(xi + yi));
                assert_eq!(x.saturating_sub(y).to_i32() as i64, clamp(xi - yi));
                assert_eq!(x.saturating_mul(y).to_i32() as i64, clamp(xi * yi));
                assert_eq!(CheckedAdd::checked_add(&x, &y), x.checked_add(y));
                assert_eq!(CheckedSub::checked_sub(&x, &y), x.checked_sub(y));
                assert_eq!(CheckedMul::checked_mul(&x, &y), x.checked_mul(y));
                assert_eq!(WrappingAdd::wrapping_add(&x, &y), x + y);
                assert_eq!(WrappingSub::wrapping_sub(&x, &y), x - y);
                assert_eq!(WrappingMul::wrapping_mul(&x, &y), x * y);
                assert_eq!(SaturatingAdd::saturating_add(&x, &y), x.saturating_add(y));
                assert_eq!(SaturatingSub::saturating_sub(&x, &y), x.saturating_sub(y));
                assert_eq!(SaturatingMul::saturating_mul(&x, &y), x.saturating_mul(y));
                if yi == 0 {
                    assert_eq!(CheckedDiv::checked_div(&x, &y), None);
                    assert_eq!(CheckedRem::checked_rem(&x, &y), None);
                    assert!(x.saturating_div(y).is_err());
                } else {
                    let q = (xi as f64 / yi as f64).floor() as i64;
                    assert_eq!(
                        val(CheckedDiv::checked_div(&x, &y)),
                        Some(q).filter(|v| fits(*v))
                    );
                    assert_eq!(val(CheckedRem::checked_rem(&x, &y)), Some(xi - q * yi));
                    assert_eq!(x.saturating_div(y).map(|v| v.to_i32() as i64), Ok(clamp(q)));
                }
            }
        }
    }};
}

#[test]
fn checked_wrapping_saturating_on_every_pair() {
    exhaustive!(int1);
    exhaustive!(int2);
    exhaustive!(int4);
    exhaustive!(uint1);
    exhaustive!(uint2);
    exhaustive!(uint4);
}

#[test]
fn fixed_examples() {
    let i = |v: i64| int4::from_i64_wrapping(v);
    assert_eq!(i(7).checked_add(i(1)), None);
    assert_eq!(i(7).wrapping_add(i(1)), i(-8));
    assert_eq!(i(7).saturating_add(i(1)), i(7));
    assert_eq!(i(-8).checked_neg(), None);
    assert_eq!(i(-8).saturating_neg(), i(7));
    assert_eq!(i(-8).saturating_div(i(-1)), Ok(i(7)));
    assert_eq!(i(-8).checked_div(i(-1)), Ok(i(-8))); // wrapping floor division
    assert_eq!(CheckedDiv::checked_div(&i(-8), &i(-1)), None);
    assert_eq!(uint4::MAX.saturating_mul(uint4::MAX), uint4::MAX);
    assert_eq!(uint2::from_bits(1).checked_neg(), None);
    assert_eq!(uint2::from_bits(1).saturating_neg(), uint2::ZERO);
}

#[test]
fn num_from_str_radix() {
    assert_eq!(int4::from_str_radix("-8", 10), Ok(int4::MIN));
    assert_eq!(int4::from_str_radix("-1000", 2), Ok(int4::MIN));
    assert_eq!(uint4::from_str_radix("f", 16), Ok(uint4::MAX));
    assert_eq!(uint4::from_str_radix("+F", 16), Ok(uint4::MAX));
    assert_eq!(int2::from_str_radix("1", 36), Ok(int2::MAX));
    assert!(matches!(
        uint4::from_str_radix("10", 16),
        Err(SubByteIntError::OutOfRange { .. })
    ));
    assert!(matches!(
        uint4::from_str_radix("99999999999999999999999999999999999999999999", 10),
        Err(SubByteIntError::OutOfRange { .. })
    ));
    for (text, radix) in [
        ("12", 2),
        ("", 10),
        ("-", 10),
        ("1", 1),
        ("1", 37),
        ("0x1", 16),
        (" 1", 10),
    ] {
        assert!(
            matches!(
                uint4::from_str_radix(text, radix),
                Err(SubByteIntError::Invalid { .. })
            ),
            "{text:?} {radix}"
        );
    }
    // Generic numeric code over `Num`.
    fn parse_and_double<T: Num + Copy>(s: &str) -> Option<T> {
        let x = T::from_str_radix(s, 10).ok()?;
        Some(x + x)
    }
    assert_eq!(
        parse_and_double::<int4>("3"),
        Some(int4::from_i64_wrapping(6))
    );
    assert_eq!(parse_and_double::<uint2>("2"), Some(uint2::ZERO)); // wraps
}

#[test]
fn sum_and_product_wrap() {
    let xs = [int4::from_i64_wrapping(5); 3];
    assert_eq!(xs.iter().sum::<int4>(), int4::from_i64_wrapping(15)); // −1
    assert_eq!(xs.into_iter().sum::<int4>().to_i32(), -1);
    assert_eq!(xs.iter().product::<int4>(), int4::from_i64_wrapping(125));
    let empty: [uint4; 0] = [];
    assert_eq!(empty.iter().sum::<uint4>(), uint4::ZERO);
    assert_eq!(empty.iter().product::<uint4>(), uint4::ONE);
    assert_eq!([uint1::ONE; 3].iter().sum::<uint1>(), uint1::ONE);
}
