//! Sub-byte integers: int1, int2, int4, uint1, uint2, uint4.
