//! cargo-fuzz target: `mldtypes_fuzz::cast_bytes` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mldtypes_fuzz::cast_bytes(data));
