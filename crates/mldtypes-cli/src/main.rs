//! The `mldtypes` command line: JAX type promotion queries and tables, the
//! promotion lattice as a picture, ML number-format facts and code points,
//! scalar casts, and safetensors checkpoint conversion and inspection.
//!
//! Exit codes: 0 success; 1 a promotion error (or a failed write); 2 a usage
//! error or an unusable input file.

mod backend;
mod bench;
mod error;
mod formats;
mod promotion;
mod tensors;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::Result;

/// ML number formats (bit-exact with ml_dtypes) and JAX type promotion.
#[derive(Parser, Debug)]
#[command(name = "mldtypes", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The result of jax.dtypes.result_type for a list of operands.
    ///
    /// An OPERAND is a dtype name or alias (strongly typed), `i*` / `f*` / `c*`
    /// (a Python int / float / complex scalar), or `weak:DTYPE` (a weakly typed
    /// value of DTYPE).
    Promote(promotion::PromoteArgs),
    /// The binary promotion table of a promotion system.
    Table(promotion::TableArgs),
    /// The promotion lattice as SVG, DOT or Mermaid.
    Lattice(promotion::LatticeArgs),
    /// finfo / iinfo of a dtype, every field.
    Info {
        /// The dtype.
        dtype: String,
        /// Print JSON with ml_dtypes' field names.
        #[arg(long)]
        json: bool,
    },
    /// Every code point of a format: bits, value, class.
    Values {
        /// A floating-point dtype of at most 16 bits.
        dtype: String,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Converts decimal or hex-float values to a format.
    Cast(formats::CastArgs),
    /// Converts a safetensors checkpoint (a file, a model directory or a
    /// sharded model's index) to a float dtype, an MX format or NVFP4.
    Convert(tensors::ConvertArgs),
    /// Lists the tensors of a safetensors checkpoint with statistics.
    Inspect(tensors::InspectArgs),
    /// Measures the bulk conversion kernels (ns per element).
    Bench(bench::BenchArgs),
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Promote(a) => promotion::promote(a),
        Command::Table(a) => promotion::table(a),
        Command::Lattice(a) => promotion::lattice(a),
        Command::Info { dtype, json } => formats::info(&dtype, json),
        Command::Values { dtype, json } => formats::values(&dtype, json),
        Command::Cast(a) => formats::cast(a),
        Command::Convert(a) => tensors::convert(a),
        Command::Inspect(a) => tensors::inspect(a),
        Command::Bench(a) => bench::bench(a),
    }
}

fn main() -> ExitCode {
    // Behave like other Unix filters when the reader of our output goes away
    // (`mldtypes values bfloat16 | head`): end quietly instead of reporting a
    // failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // starts or any output is written.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !matches!(e, error::CliError::Promotion(_)) {
                eprintln!("mldtypes: error: {e}");
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
