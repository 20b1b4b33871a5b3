//! The scalar types and their NumPy dtypes: what each type is ([`types`]),
//! what NumPy assigned to it ([`registry`]), its Python scalar type
//! ([`scalar`], [`fmt`]), the array functions NumPy calls on its elements
//! ([`arrfuncs`]), its casts ([`casts`]) and its finfo/iinfo tables
//! ([`info`]).

pub(crate) mod arrfuncs;
pub(crate) mod casts;
pub(crate) mod fmt;
pub(crate) mod info;
pub(crate) mod registry;
pub(crate) mod scalar;
pub(crate) mod types;
