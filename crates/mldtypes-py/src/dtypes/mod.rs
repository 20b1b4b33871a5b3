//! The scalar types and their NumPy dtypes: the list and what NumPy assigned
//! to each ([`registry`]); the float formats as data, one implementation
//! driven by each format's descriptor ([`float`]); the sub-byte integers and
//! complex types compiled per type ([`types`], [`scalar`], [`arrfuncs`]);
//! text ([`fmt`]); casts ([`casts`]); finfo/iinfo tables ([`info`]).

pub(crate) mod arrfuncs;
pub(crate) mod castlevel;
pub(crate) mod casts;
pub(crate) mod float;
pub(crate) mod fmt;
pub(crate) mod info;
pub(crate) mod registry;
pub(crate) mod scalar;
pub(crate) mod types;
