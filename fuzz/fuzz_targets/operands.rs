//! cargo-fuzz target: `mldtypes_fuzz::operands` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mldtypes_fuzz::operands(data));
