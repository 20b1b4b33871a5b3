//! One generic minifloat type; every named format is a descriptor.
