//! Exchange with other array libraries: DLPack capsules ([`dlpack`]) and
//! ml_dtypes' own types loaded in the same process ([`twins`]).

pub(crate) mod dlpack;
pub(crate) mod twins;
