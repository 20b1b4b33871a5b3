//! cargo-fuzz target: `mldtypes_fuzz::pack` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mldtypes_fuzz::pack(data));
