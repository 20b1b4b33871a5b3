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

use std::path::Path;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::error::{usage, Result};

/// The exit codes, as `--help` prints them.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  a type promotion error (jax's TypePromotionError), or writing the output failed
  2  a usage error (unknown dtype, bad value, bad option) or an unusable input file
`promote --stdin` answers every line, then exits 2 if a line had invalid operands,
else 1 if a promotion failed, else 0.

With --json, results and errors are JSON on standard output; errors are
{\"error\": {\"kind\": KIND, \"message\": TEXT}}. `mldtypes dtypes` lists every dtype
name, alias and seed-table code.

Options may follow operands (`mldtypes promote int8 bfloat16 --x32`). Negative decimal
numbers are values; other values that start with `-` (`-inf`, `-nan`, `-0x1p-3`) go
after `--`: `mldtypes cast --to bfloat16 -- -inf`.";

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
    /// Every dtype name, alias and seed-table code, with the dtype it means
    /// (the IEEE P3109 family's 510 formats among them).
    Dtypes(vocabulary::DtypesArgs),
    /// finfo / iinfo of a dtype, every field (limits beyond float64, of the
    /// widest IEEE P3109 formats, as exact hexadecimal-float text).
    Info {
        /// The dtype.
        dtype: String,
        /// Print JSON with ml_dtypes' field names.
        #[arg(long)]
        json: bool,
    },
    /// Every code point of a format: bits, value, class.
    Values {
        /// A floating-point dtype of at most 16 bits (an IEEE P3109 format
        /// such as p3109_k8p3se or binary8p3se too; values beyond float64 are
        /// printed as exact hexadecimal-float text).
        dtype: String,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Converts decimal or hex-float values to a format (every float dtype,
    /// the IEEE P3109 formats included).
    Cast(formats::CastArgs),
    /// Converts a safetensors checkpoint (a file, a model directory or a
    /// sharded model's index) to a float dtype, or quantizes it with a recipe
    /// (MX formats, ModelOpt NVFP4, FP8 with scales) as serving stacks load it.
    Convert(tensors::ConvertArgs),
    /// Lists the tensors of a safetensors checkpoint with statistics.
    Inspect(tensors::InspectArgs),
    /// Measures the bulk conversion kernels (ns per element).
    Bench(bench::BenchArgs),
    /// Prints a shell completion script: `mldtypes completions bash >
    /// ~/.local/share/bash-completion/completions/mldtypes`.
    Completions {
        /// The shell: bash, zsh, fish, powershell or elvish.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Prints the manual page (roff): `mldtypes man | man -l -`, or the page
    /// of one command (`mldtypes man convert`).
    Man {
        /// A command of mldtypes (default: the page of mldtypes itself).
        command: Option<String>,
    },
}

/// The completion script for `shell`, generated from the argument
/// definitions (commands, options, value choices).
fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "mldtypes", &mut out);
    output::print(&String::from_utf8_lossy(&out))
}

/// The roff manual page of mldtypes, or of one of its commands
/// (`mldtypes-convert(1)`).
fn man(command: Option<&str>) -> Result<()> {
    let mut cmd = Cli::command();
    cmd.build();
    let page = match command {
        None => cmd,
        Some(name) => {
            let sub = cmd
                .get_subcommands()
                .find(|c| c.get_name() == name)
                .cloned()
                .ok_or_else(|| {
                    let names: Vec<&str> = cmd
                        .get_subcommands()
                        .map(|c| c.get_name())
                        .filter(|&n| n != "help")
                        .collect();
                    usage!(
                        "{} is not a command of mldtypes; the commands are {}",
                        mldtypes::dtype::echo(name),
                        names.join(", ")
                    )
                })?;
            let page_name = format!("mldtypes-{}", sub.get_name());
            sub.display_name(page_name)
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .source(concat!("mldtypes ", env!("CARGO_PKG_VERSION")))
        .render(&mut out)
        .map_err(output::stdout_error)?;
    output::print(&String::from_utf8_lossy(&out))
}

/// Refuses `-` as a checkpoint path: `convert` and `inspect` memory-map and
/// seek in their inputs and write their outputs by renaming a finished
/// temporary into place, which standard input and output cannot do.
fn refuse_stdio(matches: &ArgMatches) -> Result<()> {
    const READS: &str = "reads a file, a model directory or an index file, not a stream; \
                         save the data to a file first";
    let checks: [(&str, &str, &str); 3] = [
        ("convert", "input", READS),
        (
            "convert",
            "output",
            "writes a file or a directory (renamed into place when complete), not a stream; \
             name the output file",
        ),
        ("inspect", "file", READS),
    ];
    for (command, arg, needs) in checks {
        let dash = matches
            .subcommand_matches(command)
            .and_then(|m| m.try_get_raw(arg).ok().flatten())
            .and_then(|mut v| v.next())
            .is_some_and(|v| Path::new(v) == Path::new("-"));
        if dash {
            return Err(usage!(
                "`-` (standard {}) is not supported: {command} {needs} (write `./-` for a file \
                 named `-`)",
                if arg == "output" { "output" } else { "input" }
            ));
        }
    }
    Ok(())
}

fn run(cli: Cli) -> Result<ExitCode> {
    let done = match cli.command {
        Command::Promote(a) => return promotion::promote(a),
        Command::Table(a) => promotion::table(a),
        Command::Lattice(a) => promotion::lattice(a),
        Command::Dtypes(a) => vocabulary::dtypes(a),
        Command::Info { dtype, json } => formats::info(&dtype, json),
        Command::Values { dtype, json } => formats::values(&dtype, json),
        Command::Cast(a) => formats::cast(a),
        Command::Convert(a) => tensors::convert(a),
        Command::Inspect(a) => tensors::inspect(a),
        Command::Bench(a) => bench::bench(a),
        Command::Completions { shell } => completions(shell),
        Command::Man { command } => man(command.as_deref()),
    };
    done.map(|()| ExitCode::SUCCESS)
}

/// The positional lists whose values may start with `-`: (command, argument).
const SIGNED_VALUES: [(&str, &str); 2] = [("cast", "values"), ("promote", "operands")];

/// Parses the command line. Options may follow operands, and negative
/// decimal numbers (`-1.5`, `-2e3`) are values wherever they stand. Other
/// values that start with `-` (`-inf`, `-nan`, `-0x1p-3`) are values when
/// no option follows them: after an unknown-argument error the arguments are
/// parsed a second time with every argument from the first value on taken
/// as a value, which is kept only if no `--option` was taken that way;
/// otherwise the error says to put the options first or the values after
/// `--`.
fn parse(args: Vec<std::ffi::OsString>) -> std::result::Result<ArgMatches, clap::Error> {
    let first = match Cli::command().try_get_matches_from(&args) {
        Ok(m) => return Ok(m),
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => e,
        Err(e) => return Err(e),
    };
    let mut lenient = Cli::command();
    for (command, arg) in SIGNED_VALUES {
        lenient =
            lenient.mut_subcommand(command, |c| c.mut_arg(arg, |a| a.allow_hyphen_values(true)));
    }
    let Ok(m) = lenient.try_get_matches_from(&args) else {
        return Err(first);
    };
    for (command, arg) in SIGNED_VALUES {
        let Some(values) = m
            .subcommand_matches(command)
            .and_then(|s| s.try_get_raw(arg).ok().flatten())
        else {
            continue;
        };
        let values: Vec<String> = values.map(|v| v.to_string_lossy().into_owned()).collect();
        let Some(option) = values.iter().find(|v| v.starts_with("--")) else {
            continue;
        };
        // An option after such a value: say which, in words, instead of
        // clap's error about the value's first letter.
        let value = values
            .iter()
            .find(|v| v.starts_with('-') && !v.starts_with("--"));
        return Err(match value {
            Some(value) => clap::Error::raw(
                clap::error::ErrorKind::UnknownArgument,
                format!(
                    "{value} is a value that starts with `-`, so every argument after it is \
                     taken as a value too, {option} included: put the options before {value}, \
                     or the values after `--` (`mldtypes {command} [OPTIONS] -- {value}`)\n"
                ),
            ),
            None => first,
        });
    }
    Ok(m)
}

/// The text of a clap usage error for `--json`: the error line and its tips,
/// without the `error: ` prefix, the usage line and the pointer to `--help`.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut parts = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        parts.push(line.strip_prefix("error: ").unwrap_or(line));
    }
    parts.join("; ")
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
    let parsed = parse(std::env::args_os().collect())
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let cli = match parsed {
        Ok((cli, matches)) => match refuse_stdio(&matches) {
            Ok(()) => Ok(cli),
            Err(e) => Err(e),
        },
        Err(e) if json && e.use_stderr() => {
            let _ = output::print_json(&output::error_json("UsageError", &clap_message(&e)));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    match cli.and_then(run) {
        Ok(code) => code,
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
