//! The `mldtypes` command line: JAX type promotion queries and tables, the
//! promotion lattice as a picture, ML number-format facts and code points,
//! scalar casts, and safetensors checkpoint conversion and inspection.
//!
//! Exit codes: see [`EXIT_CODES`].

mod backend;
mod bench;
mod error;
mod formats;
mod lattice_svg;
mod output;
mod promotion;
mod tensors;
mod vocabulary;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::Result;

/// The exit codes, as `--help` prints them.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  a type promotion error (jax's TypePromotionError), or writing the output failed
  2  a usage error (unknown dtype, bad value, bad option) or an unusable input file

With --json, results and errors are JSON on standard output; errors are
{\"error\": {\"kind\": KIND, \"message\": TEXT}}. `mldtypes dtypes` lists every dtype
name, alias and seed-table code.";

/// ML number formats (bit-exact with ml_dtypes) and JAX type promotion.
#[derive(Parser, Debug)]
#[command(name = "mldtypes", version, about, long_about = None, after_help = EXIT_CODES)]
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
    /// Every dtype name, alias and seed-table code, with the dtype it means.
    Dtypes(vocabulary::DtypesArgs),
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
        Command::Dtypes(a) => vocabulary::dtypes(a),
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
    // `--json` anywhere before a `--` asks for errors as JSON too.
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if json && e.use_stderr() => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            let message = first.strip_prefix("error: ").unwrap_or(first).to_string();
            let _ = output::print_json(&output::error_json("UsageError", &message));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Promotion errors were already reported, next to the results.
            if !matches!(e, error::CliError::Promotion(_)) {
                if json && !matches!(e, error::CliError::Write { .. }) {
                    let _ = output::print_json(&output::error_json(e.kind(), &e.to_string()));
                } else {
                    use std::io::Write;
                    let _ = writeln!(std::io::stderr(), "mldtypes: error: {e}");
                }
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
