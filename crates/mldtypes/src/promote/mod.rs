//! Type promotion: a generic lattice engine, JAX lattices, weak types, `result_type`.
