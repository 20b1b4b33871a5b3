//! Type promotion: a generic lattice engine, JAX's promotion lattices with weak
//! types (`result_type`, `promote_types`), and the other systems' tables.
//!
//! - [`lattice`]: [`lattice::Lattice`], built from "immediately higher" edges,
//!   with a dense join table, n-ary join, `explain`, and property checks on any
//!   [`lattice::BinaryTable`].
//! - [`jax`]: JAX 0.10.2's standard and strict lattices (x64 on/off),
//!   [`jax::PromotionConfig`], [`jax::result_type`], [`jax::promote_types`] and
//!   JAX's exact error texts.
//! - [`tables`]: NumPy, TensorFlow, PyTorch, jax.lax, jax.numpy (JEP 9407) and
//!   JAX 2020 tables as printed in the seeds, and [`tables::diff`].
//!
//! # Examples
//!
//! ```
//! use mldtypes::dtype::DType;
//! use mldtypes::promote::{promote_types, JaxType};
//! assert_eq!(promote_types(DType::Int8.into(), DType::UInt8.into()), Ok(DType::Int16));
//! assert_eq!(promote_types(DType::Int8.into(), JaxType::WeakFloat), Ok(DType::Float64));
//! ```

pub mod jax;
pub mod lattice;
pub mod tables;

pub use jax::{
    canonicalize_dtype, enable_x64, lattice_result_type, numpy_dtype_promotion, promote_types,
    result_type, ConfigGuard, JaxType, NoPathReason, Operand, PromotionConfig, PromotionMode,
    PyScalar, TypePromotionError,
};
pub use lattice::{BinaryTable, Explanation, Lattice, LatticeError};
pub use tables::{
    diff, diff_view, promote, promote_types_dtype, table, DiffCell, System, UndefinedPromotion,
    View,
};
