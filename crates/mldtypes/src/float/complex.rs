//! Complex pairs of half-precision floats: `complex32` (two IEEE float16)
//! and `bcomplex32` (two bfloat16).
