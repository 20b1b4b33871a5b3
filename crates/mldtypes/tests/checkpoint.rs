//! Checkpoint conversion tests.
