//! The strict safetensors reader of `mldtypes::checkpoint` on arbitrary
//! bytes: it must return an error or a file the `safetensors` crate also
//! accepts, never panic. Replayed in the normal tests by
//! `crates/mldtypes/tests/checkpoint.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mldtypes::checkpoint::SafetensorsFile;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = SafetensorsFile::from_vec("fuzz".as_ref(), data.to_vec()) {
        assert!(safetensors::SafeTensors::deserialize(data).is_ok());
        for t in f.tensors() {
            let _ = f.tensor_data(t);
        }
    }
});
