//! # mldtypes
//!
//! Machine-learning number formats and JAX's type promotion semantics, in Rust.
//!
//! - [`mod@format`]: format descriptors (exponent/mantissa widths, bias, non-finite
//!   behaviour, NaN encoding) for every ml_dtypes floating-point format.
//! - [`float`]: one generic minifloat type; `bfloat16`, the float8 family and the
//!   MX float6/float4 formats are instances of it, bit-exact with ml_dtypes 0.6.0.
//! - [`int`]: the sub-byte integers int1/int2/int4 and uint1/uint2/uint4.
//! - [`info`]: `finfo` / `iinfo`, with every field of `ml_dtypes.finfo`.
//! - [`dtype`]: the [`dtype::DType`] enum: names, aliases, sizes, kinds.
//! - [`promote`]: a generic lattice engine and JAX's promotion lattices, weak
//!   types, `result_type`, and the other systems' tables.
//! - [`cast`]: bulk slice conversion kernels with runtime CPU dispatch.
//! - [`mx`]: the OCP MX block formats (MXFP8/6/4, MXINT8) and NVFP4: block
//!   quantization and dequantization of slices.
//! - `checkpoint` (feature `safetensors`): conversion and inspection of
//!   (sharded) safetensors checkpoints, streaming and parallel.
#![warn(missing_docs)]

pub mod cast;
#[cfg(feature = "safetensors")]
pub mod checkpoint;
pub mod dtype;
pub mod float;
pub mod format;
pub mod info;
pub mod int;
pub mod mx;
pub mod promote;

pub use float::complex::{bcomplex32, complex32};
pub use int::{int1, int2, int4, uint1, uint2, uint4};

pub use float::{
    bfloat16, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu,
};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
