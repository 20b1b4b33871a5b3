//! The value rule of safe casts ([`Format::fits_in`]) against a conversion
//! of every code, and JAX promotion of the IEEE P3109 members (as JAX
//! promotes its float8 types).

use mldtypes::dtype::DType;
use mldtypes::float::core::{self, value_parts, CodeValue};
use mldtypes::format::{self, Format, Overflow, P3109};
use mldtypes::promote::jax::{
    JaxType, NoPathReason, Operand, PromotionConfig, PromotionMode, PyScalar, TypePromotionError,
};

/// Whether every code of `a` converts to `b` and back to the same value
/// (the definition `fits_in` is computed without).
fn fits_by_conversion(a: &Format, b: &Format) -> bool {
    (0..a.code_count()).all(|c| {
        let d = core::convert(a, b, c, Overflow::NonSaturating);
        match (value_parts(a, c), value_parts(b, d)) {
            (CodeValue::Nan, CodeValue::Nan) => true,
            (x, y) => x.eq_value(&y),
        }
    })
}

trait EqValue {
    fn eq_value(&self, o: &Self) -> bool;
}

impl EqValue for CodeValue {
    fn eq_value(&self, o: &Self) -> bool {
        match (*self, *o) {
            (
                CodeValue::Finite {
                    negative: n1,
                    significand: s1,
                    exponent: e1,
                },
                CodeValue::Finite {
                    negative: n2,
                    significand: s2,
                    exponent: e2,
                },
            ) => {
                if s1 == 0 || s2 == 0 {
                    return s1 == s2 && n1 == n2;
                }
                let e = e1.min(e2);
                n1 == n2 && (s1 as u128) << (e1 - e) == (s2 as u128) << (e2 - e)
            }
            (a, b) => a == b,
        }
    }
}

#[test]
fn safe_casts_follow_the_values_of_every_code() {
    let mut formats: Vec<Format> = format::ALL.to_vec();
    formats.extend(P3109::all().filter(|m| m.k() <= 8).map(|m| m.format()));
    let wide: Vec<Format> = [
        (10, 3, true, true),
        (12, 8, false, false),
        (16, 8, true, true),
        (16, 11, true, true),
        (16, 1, true, true),
    ]
    .iter()
    .map(|&(k, p, s, e)| Format::p3109(k, p, s, e).unwrap())
    .collect();
    let mut safe = 0;
    for a in &formats {
        for b in formats.iter().chain(&wide) {
            let want = fits_by_conversion(a, b);
            assert_eq!(a.fits_in(b), want, "{} into {}", a.name, b.name);
            safe += want as usize;
        }
    }
    for a in &wide {
        for b in formats.iter().chain(&wide).step_by(3) {
            assert_eq!(
                a.fits_in(b),
                fits_by_conversion(a, b),
                "{} into {}",
                a.name,
                b.name
            );
        }
    }
    assert!(safe > 1000, "{safe}");
}

#[test]
fn safe_casts_between_dtypes() {
    let p = |k, p, s, e| DType::p3109(k, p, s, e).unwrap();
    // Within the family: more precision and range, same domain or wider.
    assert_eq!(
        p(8, 3, true, true).is_safe_cast_to(p(16, 8, true, true)),
        Some(true)
    );
    // The finite member's largest value 57344 is the extended one's +inf code.
    assert_eq!(
        p(8, 3, true, false).is_safe_cast_to(p(8, 3, true, true)),
        Some(false)
    );
    assert_eq!(
        p(8, 3, true, true).is_safe_cast_to(p(8, 3, true, false)),
        Some(false)
    ); // ±inf
    assert_eq!(
        p(8, 3, false, true).is_safe_cast_to(p(8, 3, true, true)),
        Some(false)
    ); // range
    assert_eq!(
        p(8, 4, true, false).is_safe_cast_to(DType::Float8E4M3FNUZ),
        Some(true)
    );
    assert_eq!(
        p(8, 4, true, true).is_safe_cast_to(DType::BFloat16),
        Some(true)
    );
    assert_eq!(
        p(16, 7, true, true).is_safe_cast_to(DType::Float32),
        Some(false)
    ); // 9 exponent bits
    assert_eq!(
        p(16, 9, true, true).is_safe_cast_to(DType::Float32),
        Some(true)
    ); // 7 exponent bits
    assert_eq!(
        p(16, 7, true, true).is_safe_cast_to(DType::Float64),
        Some(true)
    );
    assert_eq!(
        DType::Float64.is_safe_cast_to(p(16, 1, true, true)),
        Some(false)
    );
}

fn cfg(mode: PromotionMode) -> PromotionConfig {
    PromotionConfig { mode, x64: true }
}

#[test]
fn jax_promotion_treats_members_as_float8() {
    let k8 = DType::p3109(8, 3, true, true).unwrap();
    let k6 = DType::p3109(6, 3, true, false).unwrap();
    let k5 = DType::p3109(5, 2, false, true).unwrap();
    let k16 = DType::p3109(16, 8, true, true).unwrap();
    let std = cfg(PromotionMode::Standard);
    let strict = cfg(PromotionMode::Strict);
    // Weak types (and, in the standard lattice, bool and the integers) join
    // into the member, as into float8_e4m3fn.
    for c in [std, strict] {
        let ops = [Operand::Strong(k8), Operand::Scalar(PyScalar::Float)];
        assert_eq!(c.result_type(&ops), Ok((k8, false)));
        let ops = [Operand::Strong(k16), Operand::Scalar(PyScalar::Int)];
        assert_eq!(c.result_type(&ops), Ok((k16, false)));
        assert_eq!(c.promote_types(k8.into(), k8.into()), Ok(k8));
        assert_eq!(c.promote_types(k8.into(), JaxType::WeakFloat), Ok(k8));
    }
    for other in [DType::Bool, DType::Int8, DType::UInt64] {
        let f8 = std.promote_types(DType::Float8E4M3FN.into(), other.into());
        assert_eq!(f8, Ok(DType::Float8E4M3FN), "{other}");
        assert_eq!(
            std.promote_types(k8.into(), other.into()),
            Ok(k8),
            "{other}"
        );
        assert!(
            strict.promote_types(k8.into(), other.into()).is_err(),
            "{other}"
        );
    }
    // The sub-byte integers are sinks in JAX's lattice: no join either way.
    assert!(std
        .promote_types(DType::Float8E4M3FN.into(), DType::Int4.into())
        .is_err());
    assert!(std.promote_types(k8.into(), DType::Int4.into()).is_err());
    // No implicit promotion with any other float, as for float8.
    for other in [
        DType::Float32,
        DType::BFloat16,
        DType::Float8E4M3FN,
        k16,
        DType::Complex64,
    ] {
        let e = std.promote_types(k8.into(), other.into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "Input dtypes ('p3109_k8p3se', '{other}') have no available implicit dtype \
                 promotion path. To avoid unintended promotion, 8-bit floats do not support \
                 implicit promotion. If you'd like your inputs to be promoted to another type, \
                 you can do so explicitly using e.g. x.astype('float32')"
            )
        );
        // The same text JAX gives for float8_e4m3fn.
        let f8 = std.promote_types(DType::Float8E4M3FN.into(), other.into());
        if other != DType::Float8E4M3FN {
            assert!(f8
                .unwrap_err()
                .to_string()
                .contains("8-bit floats do not support"));
        }
    }
    let e = std
        .promote_types(k6.into(), DType::Float32.into())
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("6-bit floats do not support implicit promotion"),
        "{e}"
    );
    let e = std
        .promote_types(k5.into(), DType::Float32.into())
        .unwrap_err();
    assert!(matches!(
        e,
        TypePromotionError::NoPromotionPath {
            reason: NoPathReason::NarrowFloat(5),
            ..
        }
    ));
    assert!(
        e.to_string()
            .contains("5-bit floats do not support implicit promotion"),
        "{e}"
    );
    let e = strict
        .promote_types(k8.into(), DType::Float32.into())
        .unwrap_err();
    assert!(
        e.to_string().contains("jax_numpy_dtype_promotion=strict"),
        "{e}"
    );
    // A weakly typed member joins as a weak float.
    let ops = [Operand::Weak(k8), Operand::Strong(DType::BFloat16)];
    assert_eq!(std.result_type(&ops), Ok((DType::BFloat16, false)));
    // explain: each input's path through f*.
    let ex = std.explain(&[DType::Int8.into(), k8.into()]).unwrap();
    assert_eq!(ex.join, JaxType::Strong(k8));
    assert_eq!(ex.paths[1], vec![JaxType::Strong(k8)]);
    assert_eq!(ex.paths[0].last(), Some(&JaxType::Strong(k8)));
    assert!(ex.paths[0].contains(&JaxType::WeakFloat));
    // complex32 keeps its own error.
    assert_eq!(
        std.promote_types(k8.into(), DType::Complex32.into()),
        Err(TypePromotionError::InvalidDType(DType::Complex32))
    );
}
