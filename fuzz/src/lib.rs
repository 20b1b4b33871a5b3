//! The fuzzed entry points, shared by the cargo-fuzz targets
//! (`fuzz_targets/*.rs`, run by `tools/fuzz.sh`) and by the replay test of
//! the normal test run (`crates/mldtypes-cli/tests/cli.rs`, which includes
//! `entries.rs` and feeds it the committed corpus and generated inputs).

include!("entries.rs");
