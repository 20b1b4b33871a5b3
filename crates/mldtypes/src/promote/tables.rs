//! The other promotion systems of the seeds, as table literals exactly as the
//! seeds print them, and cell-by-cell comparison between systems.
//!
//! The literals are the JEP 9407 appendix tables (NumPy, TensorFlow, PyTorch,
//! jax.numpy, jax.lax; bit naming `b u8 … bf16 f16 … c128 i* f* c*`) and JAX's
//! 2020 table (legacy naming). A `-` cell is undefined: the system raises an
//! error. Current JAX ([`System::Jax`], [`System::JaxStrict`]) is not a literal
//! but the join table of the lattices in [`super::jax`].
//!
//! # Examples
//!
//! ```
//! use mldtypes::dtype::DType;
//! use mldtypes::promote::jax::{JaxType, PromotionConfig};
//! use mldtypes::promote::tables::{table, System};
//! let numpy = table(System::NumPy, PromotionConfig::DEFAULT);
//! let i32_ = JaxType::Strong(DType::Int32);
//! let f32_ = JaxType::Strong(DType::Float32);
//! assert_eq!(numpy.get(&i32_, &f32_), Some(Some(&JaxType::Strong(DType::Float64))));
//! ```

use std::fmt;
use std::sync::OnceLock;

use super::jax::{JaxType, PromotionConfig, PromotionMode};
use super::lattice::BinaryTable;
use crate::dtype::{DType, Naming, ParseDTypeError};

/// NumPy's value-independent promotion table (JEP 9407 appendix, bit naming):
/// Python scalars as `i*`/`f*`/`c*` with array-scalar semantics; `bf16` undefined.
pub const NUMPY_TABLE: &str = "\
b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* | |
b | b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | - | f16 | f32 | f64 | c64 | c128 | i64 | f64 | c128 |
u8 | u8 | u8 | u16 | u32 | u64 | i16 | i16 | i32 | i64 | - | f16 | f32 | f64 | c64 | c128 | u8 | f64 | c128 |
u16 | u16 | u16 | u16 | u32 | u64 | i32 | i32 | i32 | i64 | - | f32 | f32 | f64 | c64 | c128 | u16 | f64 | c128 |
u32 | u32 | u32 | u32 | u32 | u64 | i64 | i64 | i64 | i64 | - | f64 | f64 | f64 | c128 | c128 | u32 | f64 | c128 |
u64 | u64 | u64 | u64 | u64 | u64 | f64 | f64 | f64 | f64 | - | f64 | f64 | f64 | c128 | c128 | u64 | f64 | c128 |
i8 | i8 | i16 | i32 | i64 | f64 | i8 | i16 | i32 | i64 | - | f16 | f32 | f64 | c64 | c128 | i8 | f64 | c128 |
i16 | i16 | i16 | i32 | i64 | f64 | i16 | i16 | i32 | i64 | - | f32 | f32 | f64 | c64 | c128 | i16 | f64 | c128 |
i32 | i32 | i32 | i32 | i64 | f64 | i32 | i32 | i32 | i64 | - | f64 | f64 | f64 | c128 | c128 | i32 | f64 | c128 |
i64 | i64 | i64 | i64 | i64 | f64 | i64 | i64 | i64 | i64 | - | f64 | f64 | f64 | c128 | c128 | i64 | f64 | c128 |
bf16 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
f16 | f16 | f16 | f32 | f64 | f64 | f16 | f32 | f64 | f64 | - | f16 | f32 | f64 | c64 | c128 | f16 | f16 | c64 |
f32 | f32 | f32 | f32 | f64 | f64 | f32 | f32 | f64 | f64 | - | f32 | f32 | f64 | c64 | c128 | f32 | f32 | c64 |
f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | - | f64 | f64 | f64 | c128 | c128 | f64 | f64 | c128 |
c64 | c64 | c64 | c64 | c128 | c128 | c64 | c64 | c128 | c128 | - | c64 | c64 | c128 | c64 | c128 | c64 | c64 | c64 |
c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | - | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 |
i* | i64 | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | - | f16 | f32 | f64 | c64 | c128 | i64 | f64 | c128 |
f* | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | - | f16 | f32 | f64 | c64 | c128 | f64 | f64 | c128 |
c* | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | - | c64 | c64 | c128 | c64 | c128 | c128 | c128 | c128 |
";

/// TensorFlow's implicit promotion table (JEP 9407 appendix, bit naming):
/// asymmetric, row = `x`, column = `y` of `tf.add(x, y)`.
pub const TENSORFLOW_TABLE: &str = "\
b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* | |
b | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u8 | - | u8 | - | - | - | - | - | - | - | - | - | - | - | - | - | u8 | - | - |
u16 | - | - | u16 | - | - | - | - | - | - | - | - | - | - | - | - | u16 | - | - |
u32 | - | - | - | u32 | - | - | - | - | - | - | - | - | - | - | - | u32 | - | - |
u64 | - | - | - | - | u64 | - | - | - | - | - | - | - | - | - | - | u64 | - | - |
i8 | - | - | - | - | - | i8 | - | - | - | - | - | - | - | - | - | i8 | - | - |
i16 | - | - | - | - | - | - | i16 | - | - | - | - | - | - | - | - | i16 | - | - |
i32 | - | - | - | - | - | - | - | i32 | - | - | - | - | - | - | - | i32 | - | - |
i64 | - | - | - | - | - | - | - | - | i64 | - | - | - | - | - | - | i64 | - | - |
bf16 | - | - | - | - | - | - | - | - | - | bf16 | - | - | - | - | - | bf16 | bf16 | - |
f16 | - | - | - | - | - | - | - | - | - | - | f16 | - | - | - | - | f16 | f16 | - |
f32 | - | - | - | - | - | - | - | - | - | - | - | f32 | - | - | - | f32 | f32 | - |
f64 | - | - | - | - | - | - | - | - | - | - | - | - | f64 | - | - | f64 | f64 | - |
c64 | - | - | - | - | - | - | - | - | - | - | - | - | - | c64 | - | c64 | c64 | c64 |
c128 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | c128 | c128 | c128 | c128 |
i* | - | - | - | - | - | - | - | i32 | - | - | - | - | - | - | - | i32 | - | - |
f* | - | - | - | - | - | - | - | - | - | - | - | f32 | - | - | - | f32 | f32 | - |
c* | - | - | - | - | - | - | - | - | - | - | - | - | - | - | c128 | c128 | c128 | c128 |
";

/// PyTorch's promotion table (JEP 9407 appendix, bit naming): no unsigned
/// types wider than uint8.
pub const PYTORCH_TABLE: &str = "\
b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* | |
b | b | u8 | - | - | - | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i64 | f32 | c64 |
u8 | u8 | u8 | - | - | - | i16 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | u8 | f32 | c64 |
u16 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u32 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u64 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
i8 | i8 | i16 | - | - | - | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i8 | f32 | c64 |
i16 | i16 | i16 | - | - | - | i16 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i16 | f32 | c64 |
i32 | i32 | i32 | - | - | - | i32 | i32 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i32 | f32 | c64 |
i64 | i64 | i64 | - | - | - | i64 | i64 | i64 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i64 | f32 | c64 |
bf16 | bf16 | bf16 | - | - | - | bf16 | bf16 | bf16 | bf16 | bf16 | f32 | f32 | f64 | c64 | c128 | bf16 | bf16 | c64 |
f16 | f16 | f16 | - | - | - | f16 | f16 | f16 | f16 | f32 | f16 | f32 | f64 | c64 | c128 | f16 | f16 | c64 |
f32 | f32 | f32 | - | - | - | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f64 | c64 | c128 | f32 | f32 | c64 |
f64 | f64 | f64 | - | - | - | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | c128 | c128 | f64 | f64 | c128 |
c64 | c64 | c64 | - | - | - | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c128 | c64 | c128 | c64 | c64 | c64 |
c128 | c128 | c128 | - | - | - | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 |
i* | i64 | u8 | - | - | - | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i64 | f32 | c64 |
f* | f32 | f32 | - | - | - | f32 | f32 | f32 | f32 | bf16 | f16 | f32 | f64 | c64 | c128 | f32 | f64 | c64 |
c* | c64 | c64 | - | - | - | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c128 | c64 | c128 | c64 | c64 | c128 |
";

/// The jax.numpy table of the JEP 9407 appendix (bit naming); equal to
/// JAX's standard lattice restricted to these 18 nodes.
pub const JAX_NUMPY_TABLE: &str = "\
b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* | |
b | b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* |
u8 | u8 | u8 | u16 | u32 | u64 | i16 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | u8 | f* | c* |
u16 | u16 | u16 | u16 | u32 | u64 | i32 | i32 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | u16 | f* | c* |
u32 | u32 | u32 | u32 | u32 | u64 | i64 | i64 | i64 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | u32 | f* | c* |
u64 | u64 | u64 | u64 | u64 | u64 | f* | f* | f* | f* | bf16 | f16 | f32 | f64 | c64 | c128 | u64 | f* | c* |
i8 | i8 | i16 | i32 | i64 | f* | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i8 | f* | c* |
i16 | i16 | i16 | i32 | i64 | f* | i16 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i16 | f* | c* |
i32 | i32 | i32 | i32 | i64 | f* | i32 | i32 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i32 | f* | c* |
i64 | i64 | i64 | i64 | i64 | f* | i64 | i64 | i64 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i64 | f* | c* |
bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | bf16 | f32 | f32 | f64 | c64 | c128 | bf16 | bf16 | c64 |
f16 | f16 | f16 | f16 | f16 | f16 | f16 | f16 | f16 | f16 | f32 | f16 | f32 | f64 | c64 | c128 | f16 | f16 | c64 |
f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f32 | f64 | c64 | c128 | f32 | f32 | c64 |
f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | c128 | c128 | f64 | f64 | c128 |
c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c128 | c64 | c128 | c64 | c64 | c64 |
c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 |
i* | i* | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* |
f* | f* | f* | f* | f* | f* | f* | f* | f* | f* | bf16 | f16 | f32 | f64 | c64 | c128 | f* | f* | c* |
c* | c* | c* | c* | c* | c* | c* | c* | c* | c* | c64 | c64 | c64 | c128 | c64 | c128 | c* | c* | c* |
";

/// The jax.lax table of the JEP 9407 appendix (bit naming): no implicit
/// promotion beyond equal types and a few weak/64-bit pairs.
pub const JAX_LAX_TABLE: &str = "\
b | u8 | u16 | u32 | u64 | i8 | i16 | i32 | i64 | bf16 | f16 | f32 | f64 | c64 | c128 | i* | f* | c* | |
b | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u8 | - | u8 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u16 | - | - | u16 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u32 | - | - | - | u32 | - | - | - | - | - | - | - | - | - | - | - | - | - | - |
u64 | - | - | - | - | u64 | - | - | - | - | - | - | - | - | - | - | - | - | - |
i8 | - | - | - | - | - | i8 | - | - | - | - | - | - | - | - | - | - | - | - |
i16 | - | - | - | - | - | - | i16 | - | - | - | - | - | - | - | - | - | - | - |
i32 | - | - | - | - | - | - | - | i32 | - | - | - | - | - | - | - | - | - | - |
i64 | - | - | - | - | - | - | - | - | i64 | - | - | - | - | - | - | i64 | - | - |
bf16 | - | - | - | - | - | - | - | - | - | bf16 | - | - | - | - | - | - | - | - |
f16 | - | - | - | - | - | - | - | - | - | - | f16 | - | - | - | - | - | - | - |
f32 | - | - | - | - | - | - | - | - | - | - | - | f32 | - | - | - | - | - | - |
f64 | - | - | - | - | - | - | - | - | - | - | - | - | f64 | - | - | - | f64 | - |
c64 | - | - | - | - | - | - | - | - | - | - | - | - | - | c64 | - | - | - | - |
c128 | - | - | - | - | - | - | - | - | - | - | - | - | - | - | c128 | - | - | c128 |
i* | - | - | - | - | - | - | - | - | i64 | - | - | - | - | - | - | i* | - | - |
f* | - | - | - | - | - | - | - | - | - | - | - | - | f64 | - | - | - | f* | - |
c* | - | - | - | - | - | - | - | - | - | - | - | - | - | - | c128 | - | - | c* |
";

/// JAX's October 2020 `jnp.promote_types` table (seeds 000/004, legacy
/// naming: `c4` = complex64, `c8` = complex128), before weak types.
pub const JAX_2020_TABLE: &str = "\
b1 | u1 | u2 | u4 | u8 | i1 | i2 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 | |
b1 | b1 | u1 | u2 | u4 | u8 | i1 | i2 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
u1 | u1 | u1 | u2 | u4 | u8 | i2 | i2 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
u2 | u2 | u2 | u2 | u4 | u8 | i4 | i4 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
u4 | u4 | u4 | u4 | u4 | u8 | i8 | i8 | i8 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
u8 | u8 | u8 | u8 | u8 | u8 | f8 | f8 | f8 | f8 | bf | f2 | f4 | f8 | c4 | c8 |
i1 | i1 | i2 | i4 | i8 | f8 | i1 | i2 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
i2 | i2 | i2 | i4 | i8 | f8 | i2 | i2 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
i4 | i4 | i4 | i4 | i8 | f8 | i4 | i4 | i4 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
i8 | i8 | i8 | i8 | i8 | f8 | i8 | i8 | i8 | i8 | bf | f2 | f4 | f8 | c4 | c8 |
bf | bf | bf | bf | bf | bf | bf | bf | bf | bf | bf | f4 | f4 | f8 | c4 | c8 |
f2 | f2 | f2 | f2 | f2 | f2 | f2 | f2 | f2 | f2 | f4 | f2 | f4 | f8 | c4 | c8 |
f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f4 | f8 | c4 | c8 |
f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | f8 | c8 | c8 |
c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c4 | c8 | c4 | c8 |
c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 | c8 |
";

/// A promotion system whose binary table the seeds describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum System {
    /// `jax.numpy` today (jax 0.10.2): the standard lattice, 35 nodes; x64 from
    /// the configuration.
    Jax,
    /// `jax.numpy` with `jax_numpy_dtype_promotion='strict'`.
    JaxStrict,
    /// `jax.numpy.promote_types` as of October 2020 (seeds 000/004).
    Jax2020,
    /// `jax.lax` (JEP 9407 appendix).
    JaxLax,
    /// NumPy, value-independent (JEP 9407 appendix).
    NumPy,
    /// PyTorch (JEP 9407 appendix).
    Torch,
    /// TensorFlow (JEP 9407 appendix).
    TensorFlow,
}

impl System {
    /// Every system.
    pub const ALL: [System; 7] = [
        System::Jax,
        System::JaxStrict,
        System::Jax2020,
        System::JaxLax,
        System::NumPy,
        System::Torch,
        System::TensorFlow,
    ];

    /// The command-line name: `jax`, `jax-strict`, `jax-2020`, `jax-lax`,
    /// `numpy`, `torch`, `tensorflow`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::tables::System;
    /// assert_eq!(System::JaxStrict.name(), "jax-strict");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            System::Jax => "jax",
            System::JaxStrict => "jax-strict",
            System::Jax2020 => "jax-2020",
            System::JaxLax => "jax-lax",
            System::NumPy => "numpy",
            System::Torch => "torch",
            System::TensorFlow => "tensorflow",
        }
    }

    /// The naming the seeds print this system's table in.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::dtype::Naming;
    /// use mldtypes::promote::tables::System;
    /// assert_eq!(System::Jax2020.naming(), Naming::Legacy2020);
    /// ```
    pub const fn naming(self) -> Naming {
        match self {
            System::Jax | System::JaxStrict => Naming::Bytes,
            System::Jax2020 => Naming::Legacy2020,
            _ => Naming::Bits,
        }
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown system name; lists the valid ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSystemError(pub String);

impl fmt::Display for ParseSystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = System::ALL.iter().map(|s| s.name()).collect();
        write!(
            f,
            "unknown promotion system {:?}; expected one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for ParseSystemError {}

impl std::str::FromStr for System {
    type Err = ParseSystemError;

    /// Parses [`System::name`] (also `pytorch`, `tf`, `np`, `lax`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let alias = match t.as_str() {
            "pytorch" => Some(System::Torch),
            "tf" => Some(System::TensorFlow),
            "np" => Some(System::NumPy),
            "lax" => Some(System::JaxLax),
            _ => None,
        };
        alias
            .or_else(|| System::ALL.iter().copied().find(|x| x.name() == t))
            .ok_or_else(|| ParseSystemError(s.to_string()))
    }
}

/// Error parsing a pipe-separated promotion table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableParseError {
    /// The text has no header line.
    Empty,
    /// A row has the wrong number of cells.
    RowLength {
        /// 1-based line number.
        line: usize,
        /// Cells expected (header labels + 1).
        expected: usize,
        /// Cells found.
        found: usize,
    },
    /// The row labels differ from the column labels.
    RowLabels,
    /// A label or cell names no dtype.
    Cell(ParseDTypeError),
}

impl fmt::Display for TableParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableParseError::Empty => f.write_str("table has no header line"),
            TableParseError::RowLength {
                line,
                expected,
                found,
            } => {
                write!(f, "line {line}: expected {expected} cells, found {found}")
            }
            TableParseError::RowLabels => f.write_str("row labels differ from column labels"),
            TableParseError::Cell(e) => write!(f, "bad cell: {e}"),
        }
    }
}

impl std::error::Error for TableParseError {}

/// Parses one label or cell in the given naming: `i*`, `f*`, `c*`, a short
/// code, or a dtype name; `-` is `None`.
///
/// # Errors
///
/// [`ParseDTypeError`] for an unknown code.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::{DType, Naming};
/// use mldtypes::promote::jax::JaxType;
/// use mldtypes::promote::tables::parse_cell;
/// assert_eq!(parse_cell("c4", Naming::Legacy2020), Ok(Some(JaxType::Strong(DType::Complex64))));
/// assert_eq!(parse_cell("-", Naming::Bits), Ok(None));
/// ```
pub fn parse_cell(s: &str, naming: Naming) -> Result<Option<JaxType>, ParseDTypeError> {
    match s.trim() {
        "-" => Ok(None),
        "i*" => Ok(Some(JaxType::WeakInt)),
        "f*" => Ok(Some(JaxType::WeakFloat)),
        "c*" => Ok(Some(JaxType::WeakComplex)),
        other => DType::parse_code(other, naming).map(|d| Some(JaxType::Strong(d))),
    }
}

/// Parses a table as the seeds render it: a header line of column labels, then
/// one line per row (row label, then one cell per column), cells separated by
/// `|`; blank lines and `---|---` rules are skipped.
///
/// # Errors
///
/// [`TableParseError`] on a malformed table.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::Naming;
/// use mldtypes::promote::tables::parse_table;
/// let t = parse_table("i8 | f16 | |\ni8 | i8 | f16 |\nf16 | f16 | f16 |", Naming::Bits).unwrap();
/// assert_eq!(t.nodes().len(), 2);
/// ```
pub fn parse_table(text: &str, naming: Naming) -> Result<BinaryTable<JaxType>, TableParseError> {
    let split = |l: &str| -> Vec<String> {
        l.split('|')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("---"));
    let (_, header) = lines.next().ok_or(TableParseError::Empty)?;
    let labels = split(header)
        .iter()
        .map(|c| parse_cell(c, naming)?.ok_or_else(|| DType::parse_code(c, naming).unwrap_err()))
        .collect::<Result<Vec<JaxType>, _>>()
        .map_err(TableParseError::Cell)?;
    let mut rows = Vec::new();
    let mut cells = Vec::new();
    for (i, line) in lines {
        let parts = split(line);
        if parts.len() != labels.len() + 1 {
            return Err(TableParseError::RowLength {
                line: i + 1,
                expected: labels.len() + 1,
                found: parts.len(),
            });
        }
        for (k, p) in parts.iter().enumerate() {
            let c = parse_cell(p, naming).map_err(TableParseError::Cell)?;
            if k == 0 {
                rows.push(c);
            } else {
                cells.push(c);
            }
        }
    }
    if rows.iter().map(|r| r.as_ref()).ne(labels.iter().map(Some)) {
        return Err(TableParseError::RowLabels);
    }
    Ok(BinaryTable::from_parts(labels, cells))
}

fn literal(system: System) -> &'static BinaryTable<JaxType> {
    static CELLS: [OnceLock<BinaryTable<JaxType>>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let (slot, text) = match system {
        System::Jax2020 => (0, JAX_2020_TABLE),
        System::JaxLax => (1, JAX_LAX_TABLE),
        System::NumPy => (2, NUMPY_TABLE),
        System::Torch => (3, PYTORCH_TABLE),
        _ => (4, TENSORFLOW_TABLE),
    };
    // The literals are fixed data verified by the tests.
    CELLS[slot]
        .get_or_init(|| parse_table(text, system.naming()).expect("seed table literal parses"))
}

/// The binary promotion table of `system`: for JAX, the join table of the
/// lattice chosen by `system` and `config.x64` (35 nodes, weak results as
/// `i*`/`f*`/`c*`, as seed 002 prints); for the others, the seed literal
/// (`config` is ignored).
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{JaxType, PromotionConfig};
/// use mldtypes::promote::tables::{table, System};
/// let t = table(System::Jax, PromotionConfig { x64: true, ..PromotionConfig::DEFAULT });
/// let u64_ = JaxType::Strong(DType::UInt64);
/// let i8_ = JaxType::Strong(DType::Int8);
/// assert_eq!(t.get(&u64_, &i8_), Some(Some(&JaxType::WeakFloat)));
/// ```
pub fn table(system: System, config: PromotionConfig) -> BinaryTable<JaxType> {
    match system {
        System::Jax => PromotionConfig {
            mode: PromotionMode::Standard,
            ..config
        }
        .lattice()
        .table(),
        System::JaxStrict => PromotionConfig {
            mode: PromotionMode::Strict,
            ..config
        }
        .lattice()
        .table(),
        other => literal(other).clone(),
    }
}

/// A promotion a system's table leaves undefined (a `-` cell), or an operand
/// outside its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndefinedPromotion {
    /// The system asked.
    pub system: System,
    /// Left operand.
    pub a: JaxType,
    /// Right operand.
    pub b: JaxType,
    /// Whether both operands are in the table (so the cell is a `-`).
    pub in_table: bool,
}

impl fmt::Display for UndefinedPromotion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.in_table {
            write!(
                f,
                "{} does not define promotion of {} with {}",
                self.system, self.a, self.b
            )
        } else {
            write!(
                f,
                "{} has no table entry for {} with {}",
                self.system, self.a, self.b
            )
        }
    }
}

impl std::error::Error for UndefinedPromotion {}

/// One cell of a system's table: the result of promoting `a` with `b`.
///
/// # Errors
///
/// [`UndefinedPromotion`] for a `-` cell or an operand the table lacks.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{JaxType, PromotionConfig};
/// use mldtypes::promote::tables::{promote, System};
/// let cfg = PromotionConfig::DEFAULT;
/// let (i8_, u8_) = (JaxType::Strong(DType::Int8), JaxType::Strong(DType::UInt8));
/// assert_eq!(promote(System::Torch, i8_, u8_, cfg), Ok(JaxType::Strong(DType::Int16)));
/// assert!(promote(System::TensorFlow, i8_, u8_, cfg).is_err());
/// ```
pub fn promote(
    system: System,
    a: JaxType,
    b: JaxType,
    config: PromotionConfig,
) -> Result<JaxType, UndefinedPromotion> {
    let t = table(system, config);
    let cell = t.get(&a, &b);
    cell.flatten().copied().ok_or(UndefinedPromotion {
        system,
        a,
        b,
        in_table: cell.is_some(),
    })
}

/// How [`diff_view`] compares two systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum View {
    /// The tables as printed (weak results stay `i*`/`f*`/`c*`).
    Table,
    /// Each system's `promote_types` function, as the seeds' generator code
    /// calls it: results are dtypes (a weak result is its 64-bit NumPy dtype,
    /// like `jnp.promote_types`), and NumPy's `np.promote_types` reads the
    /// Python types `int`/`float`/`complex` as int64/float64/complex128. The
    /// green cells of seeds 000 and 002 are exactly the differences in this view.
    PromoteTypes,
}

/// One cell where two systems differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffCell {
    /// Row label (left operand).
    pub row: JaxType,
    /// Column label (right operand).
    pub col: JaxType,
    /// The first system's cell (`None`: undefined).
    pub a: Option<JaxType>,
    /// The second system's cell (`None`: undefined).
    pub b: Option<JaxType>,
}

fn view_cell(
    system: System,
    t: &BinaryTable<JaxType>,
    r: JaxType,
    c: JaxType,
    view: View,
) -> Option<JaxType> {
    match view {
        View::Table => t.get(&r, &c).flatten().copied(),
        View::PromoteTypes => {
            let (r, c) = if system == System::NumPy {
                (
                    JaxType::Strong(r.numpy_dtype()),
                    JaxType::Strong(c.numpy_dtype()),
                )
            } else {
                (r, c)
            };
            t.get(&r, &c)
                .flatten()
                .map(|x| JaxType::Strong(x.numpy_dtype()))
        }
    }
}

/// The dtype `system`'s `promote_types` function gives for `a` and `b`
/// ([`View::PromoteTypes`]: a weak result is its 64-bit NumPy dtype; NumPy
/// reads `i*`/`f*`/`c*` as int64/float64/complex128), or `None` where the
/// system has no promotion or lacks an operand.
///
/// # Examples
///
/// ```
/// use mldtypes::dtype::DType;
/// use mldtypes::promote::jax::{JaxType, PromotionConfig};
/// use mldtypes::promote::tables::{promote_types_dtype, System};
/// let cfg = PromotionConfig::DEFAULT;
/// let (u64_, i8_) = (JaxType::Strong(DType::UInt64), JaxType::Strong(DType::Int8));
/// assert_eq!(promote_types_dtype(System::NumPy, u64_, i8_, cfg), Some(DType::Float64));
/// assert_eq!(promote_types_dtype(System::NumPy, JaxType::WeakInt, i8_, cfg), Some(DType::Int64));
/// ```
pub fn promote_types_dtype(
    system: System,
    a: JaxType,
    b: JaxType,
    config: PromotionConfig,
) -> Option<DType> {
    let t = table(system, config);
    view_cell(system, &t, a, b, View::PromoteTypes).map(JaxType::numpy_dtype)
}

/// Cell-by-cell differences between two systems over their common nodes (in
/// the first system's order), comparing in the given [`View`].
///
/// # Examples
///
/// ```
/// use mldtypes::promote::jax::PromotionConfig;
/// use mldtypes::promote::tables::{diff_view, System, View};
/// let cfg = PromotionConfig { x64: true, ..PromotionConfig::DEFAULT };
/// // Seed 000's green cells: JAX 2020 vs NumPy.
/// assert_eq!(diff_view(System::Jax2020, System::NumPy, cfg, View::PromoteTypes).len(), 57);
/// ```
pub fn diff_view(a: System, b: System, config: PromotionConfig, view: View) -> Vec<DiffCell> {
    let ta = table(a, config);
    let tb = table(b, config);
    let common: Vec<JaxType> = ta
        .nodes()
        .iter()
        .copied()
        .filter(|n| tb.nodes().contains(n))
        .collect();
    let mut out = Vec::new();
    for &row in &common {
        for &col in &common {
            let ca = view_cell(a, &ta, row, col, view);
            let cb = view_cell(b, &tb, row, col, view);
            if ca != cb {
                out.push(DiffCell {
                    row,
                    col,
                    a: ca,
                    b: cb,
                });
            }
        }
    }
    out
}

/// Cell-by-cell differences between the printed tables of two systems
/// ([`View::Table`]).
///
/// # Examples
///
/// ```
/// use mldtypes::promote::jax::PromotionConfig;
/// use mldtypes::promote::tables::{diff, System};
/// assert!(diff(System::Jax, System::Jax, PromotionConfig::DEFAULT).is_empty());
/// assert!(!diff(System::Jax, System::Torch, PromotionConfig::DEFAULT).is_empty());
/// ```
pub fn diff(a: System, b: System, config: PromotionConfig) -> Vec<DiffCell> {
    diff_view(a, b, config, View::Table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_parse_with_expected_shapes() {
        for (s, n) in [
            (System::NumPy, 18),
            (System::TensorFlow, 18),
            (System::Torch, 18),
            (System::JaxLax, 18),
            (System::Jax2020, 15),
        ] {
            assert_eq!(table(s, PromotionConfig::DEFAULT).nodes().len(), n, "{s}");
        }
        let jep = parse_table(JAX_NUMPY_TABLE, Naming::Bits).unwrap();
        assert_eq!(jep.nodes().len(), 18);
    }

    #[test]
    fn system_names_round_trip() {
        for s in System::ALL {
            assert_eq!(s.name().parse::<System>(), Ok(s));
        }
        assert!("numpyy"
            .parse::<System>()
            .unwrap_err()
            .to_string()
            .contains("jax-strict"));
    }
}
