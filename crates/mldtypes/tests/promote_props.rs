//! Property tests: JAX's n-ary promotion does not depend on operand order,
//! and the n-ary lattice join agrees with the least upper bound computed from
//! upper-bound sets by definition.

use mldtypes::dtype::DType;
use mldtypes::promote::jax::{JaxType, Operand, PromotionConfig, PromotionMode, PyScalar, NODES};
use proptest::prelude::*;

fn operand() -> impl Strategy<Value = Operand> {
    let dtypes: Vec<DType> = DType::ALL
        .iter()
        .copied()
        .filter(|d| !matches!(d, DType::Complex32 | DType::BComplex32))
        .collect();
    let d = proptest::sample::select(dtypes);
    prop_oneof![
        d.clone().prop_map(Operand::Strong),
        d.prop_map(Operand::Weak),
        proptest::sample::select(vec![
            PyScalar::Bool,
            PyScalar::Int,
            PyScalar::Float,
            PyScalar::Complex
        ])
        .prop_map(Operand::Scalar),
    ]
}

fn config() -> impl Strategy<Value = PromotionConfig> {
    (any::<bool>(), any::<bool>()).prop_map(|(strict, x64)| PromotionConfig {
        mode: if strict {
            PromotionMode::Strict
        } else {
            PromotionMode::Standard
        },
        x64,
    })
}

/// The error text with the listed inputs sorted (order is the only freedom).
fn normalized(
    r: Result<(DType, bool), mldtypes::promote::TypePromotionError>,
) -> Result<(DType, bool), String> {
    r.map_err(|e| {
        let s = e.to_string();
        match (s.find('('), s.find(") have")) {
            (Some(a), Some(b)) => {
                let mut items: Vec<&str> = s[a + 1..b].split(", ").collect();
                items.sort();
                format!("{}{}{}", &s[..=a], items.join(", "), &s[b..])
            }
            _ => s,
        }
    })
}

proptest! {
    #[test]
    fn result_type_ignores_operand_order(cfg in config(), ops in proptest::collection::vec(operand(), 1..6), rot in 0usize..6) {
        let mut other = ops.clone();
        other.reverse();
        let n = other.len();
        other.rotate_left(rot % n);
        prop_assert_eq!(normalized(cfg.result_type(&ops)), normalized(cfg.result_type(&other)));
    }

    #[test]
    fn join_all_is_the_least_upper_bound(strict in any::<bool>(), x64 in any::<bool>(),
                                         idx in proptest::collection::vec(0usize..35, 1..5)) {
        let mode = if strict { PromotionMode::Strict } else { PromotionMode::Standard };
        let l = PromotionConfig { mode, x64 }.lattice();
        let nodes: Vec<JaxType> = idx.iter().map(|&i| NODES[i]).collect();
        // By definition: the common upper bound that is below every other one.
        let common: Vec<JaxType> = NODES.iter().copied().filter(|c| nodes.iter().all(|n| l.le(n, c))).collect();
        let least: Vec<JaxType> = common.iter().copied().filter(|c| common.iter().all(|d| l.le(c, d))).collect();
        prop_assert_eq!(l.join_all(&nodes), least.first().copied());
        prop_assert!(least.len() <= 1);
    }
}
