//! # mldtypes
//!
//! Machine-learning number formats and JAX's type promotion semantics, in Rust.
//!
//! - [`mod@format`]: format descriptors (exponent/mantissa widths, bias, non-finite
//!   behaviour, NaN encoding) for every ml_dtypes floating-point format, IEEE
//!   float16, and the 510 formats of the IEEE P3109 family ([`format::P3109`],
//!   [`format::Format::p3109`]), each built at run time.
//! - [`float`]: one generic minifloat type; `bfloat16`, IEEE `float16`, the
//!   float8 family and the MX float6/float4 formats are instances of it,
//!   bit-exact with ml_dtypes 0.6.0 (and `float16` with `half::f16`).
//! - [`int`]: the sub-byte integers int1/int2/int4 and uint1/uint2/uint4.
//! - [`info`]: `finfo` / `iinfo`, with every field of `ml_dtypes.finfo`.
//! - [`dtype`]: the [`dtype::DType`] enum: names, aliases, sizes, kinds, the IEEE
//!   P3109 family ([`dtype::DType::P3109`]), and [`dtype::DType::every`], the
//!   registry of every dtype.
//! - [`promote`]: a generic lattice engine and JAX's promotion lattices, weak
//!   types, `result_type`, and the other systems' tables.
//! - [`cast`]: bulk slice conversion kernels with runtime CPU dispatch, and
//!   [`cast::Codec`], the run-time codec of any format descriptor.
//! - [`mx`]: the OCP MX block formats (MXFP8/6/4, MXINT8) and NVFP4: block
//!   quantization and dequantization of slices.
//! - [`sort`]: order-preserving keys of codes and counting/radix sorts (NumPy's
//!   float order: NaN last, `-0 == +0`).
//! - `checkpoint` (feature `safetensors`): conversion and inspection of
//!   (sharded) safetensors checkpoints, streaming and parallel.
//!
//! Every float type implements what Rust numeric code expects (the API of
//! `half` 2.7): arithmetic (also on references), `Sum` / `Product`
//! accumulated in `f32`, `Display` of the stored value, `num_traits`
//! (`FloatCore`, `FloatConst`, `AsPrimitive`, `ToBytes`, ...), serde, and
//! [`float::MiniFloatOps`] for generic code over all formats;
//! [`float::FloatSliceExt`] converts whole slices.
//!
//! # Examples
//!
//! The README's example:
//!
//! ```
//! use mldtypes::{bfloat16, float8_e4m3fn, float8_e8m0fnu, int4};
//! use mldtypes::dtype::DType;
//! use mldtypes::promote::{result_type, Operand, PromotionConfig, PromotionMode};
//!
//! // Round to nearest, ties to even; ml_dtypes' non-saturating overflow by default.
//! assert_eq!(float8_e4m3fn::from_f32(464.0).to_f32(), 448.0);   // tie → even
//! assert!(float8_e4m3fn::from_f32(464.01).is_nan());             // overflow → NaN (fn format)
//! assert_eq!(float8_e4m3fn::from_f32_saturating(1e9).to_f32(), 448.0);
//! assert_eq!("464".parse::<float8_e4m3fn>().unwrap().to_f32(), 448.0);
//! assert!("464.0000000000000000001".parse::<float8_e4m3fn>().unwrap().is_nan()); // no double rounding
//! assert_eq!(bfloat16::from_f32(0.1).to_string(), "0.100097656"); // the stored value, as f32 prints it
//! assert_eq!(bfloat16::from_f32(0.1).shortest().to_string(), "0.1"); // shortest round-trip text
//! let xs = vec![bfloat16::from_f32(0.01); 1000];
//! assert_eq!(xs.iter().sum::<bfloat16>().to_f32(), 10.0);       // accumulated in f32, rounded once
//! assert_eq!(int4::from_i64_wrapping(9).to_i32(), -7);           // ml_dtypes' int4(9)
//!
//! // JAX: jnp.int8 array + Python float → weakly typed float, the default float dtype.
//! let cfg = PromotionConfig { mode: PromotionMode::Standard, x64: false };
//! let r = cfg.result_type(&[Operand::Strong(DType::Int8), "1.5".parse().unwrap()]).unwrap();
//! assert_eq!(r, (DType::Float32, true));
//! ```
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
pub mod sort;

pub use float::complex::{bcomplex32, complex32};
pub use int::{int1, int2, int4, uint1, uint2, uint4};

pub use float::{
    bfloat16, float16, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu,
};

/// The crate README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The repository README's Rust examples are the crate README's (which the doctests run).
#[cfg(test)]
#[test]
fn repository_readme_rust_examples_are_in_the_crate_readme() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    // The packaged crate has no repository README: nothing to compare.
    let Ok(text) = std::fs::read_to_string(root) else {
        return;
    };
    let crate_readme = include_str!("../README.md");
    let mut blocks = 0;
    for block in text.split("```rust\n").skip(1) {
        let body = block.split("```").next().unwrap_or_default();
        assert!(
            crate_readme.contains(body),
            "a Rust example of README.md is missing from crates/mldtypes/README.md:\n{body}"
        );
        blocks += 1;
    }
    assert!(blocks > 0, "README.md has no Rust example");
}
