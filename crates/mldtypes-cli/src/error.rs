//! Typed errors of the command line and their exit codes.

use std::path::PathBuf;

/// Every way a command can fail. The exit code is chosen by [`CliError::exit_code`]:
/// 2 for usage errors and unusable input (the convention of clap and of the Unix
/// tools), 1 for a well-formed request whose answer is an error (a type promotion
/// error) and for failures while writing output.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A malformed argument: an unknown dtype name, an unparsable value, an
    /// unsupported combination of options.
    #[error("{0}")]
    Usage(String),
    /// An input file that cannot be used: truncated, corrupt header, offsets
    /// out of range, an unknown dtype tag.
    #[error("{path}: {message}")]
    BadInput {
        /// The offending file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Reading an input file failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing an output file failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// One or more type promotions failed (already reported on stdout/stderr).
    #[error("{0}")]
    Promotion(String),
}

impl CliError {
    /// The `kind` of the error's JSON form (`{"error": {"kind": …}}`).
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::Usage(_) => "UsageError",
            CliError::BadInput { .. } => "InputError",
            CliError::Read { .. } => "ReadError",
            CliError::Write { .. } => "WriteError",
            CliError::Promotion(_) => "TypePromotionError",
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) | CliError::BadInput { .. } | CliError::Read { .. } => 2,
            CliError::Write { .. } | CliError::Promotion(_) => 1,
        }
    }
}

/// Shorthand for results of the command implementations.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// A usage error with a formatted message.
macro_rules! usage {
    ($($arg:tt)*) => { $crate::error::CliError::Usage(format!($($arg)*)) };
}
pub(crate) use usage;
