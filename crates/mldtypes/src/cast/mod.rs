//! Bulk slice conversion kernels with runtime CPU dispatch.
