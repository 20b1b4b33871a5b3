//! Standard output without panics: every command writes through [`print()`],
//! which reports a failed write (a full disk, `> /dev/full`, a closed
//! descriptor) as [`CliError::Write`] instead of panicking as `println!` does.
//! A reader that goes away (`| head`) ends the process quietly through the
//! default SIGPIPE disposition set in `main`.
//!
//! JSON output follows one style in every command: one pretty-printed JSON
//! document per invocation (an object for one answer, an array for several),
//! except the line-oriented `promote --stdin --json`, which prints one compact
//! object per input line (JSON Lines). Errors under `--json` are the object
//! `{"error": {"kind": KIND, "message": TEXT}}`.

use std::io::Write;

use serde_json::Value;

use crate::error::{CliError, Result};

/// The error of a failed write to standard output.
pub fn stdout_error(e: std::io::Error) -> CliError {
    CliError::Write {
        path: "<stdout>".into(),
        message: e.to_string(),
    }
}

/// Writes `text` to standard output and flushes it.
///
/// # Errors
///
/// [`CliError::Write`] if the write or the flush fails.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes `v` pretty-printed (two-space indentation) and a newline.
///
/// # Errors
///
/// [`CliError::Write`] if the write fails.
pub fn print_json(v: &Value) -> Result<()> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| CliError::Write {
        path: "<stdout>".into(),
        message: e.to_string(),
    })?;
    s.push('\n');
    print(&s)
}

/// The JSON form of an error: `{"error": {"kind": KIND, "message": TEXT}}`.
pub fn error_json(kind: &str, message: &str) -> Value {
    serde_json::json!({"error": {"kind": kind, "message": message}})
}
