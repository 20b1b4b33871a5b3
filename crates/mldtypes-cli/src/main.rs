//! The `mldtypes` command line.
fn main() {}
