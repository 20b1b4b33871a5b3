//! `dtypes`: the command line's one dtype vocabulary (`DType::parse_name`)
//! and the seed tables' short codes, listed with the dtype each means.

use std::fmt::Write as _;

use clap::Args;
use mldtypes::dtype::{DType, Kind, Naming, SpellingKind};
use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::output;

/// Arguments of `mldtypes dtypes`.
#[derive(Args, Debug)]
pub struct DtypesArgs {
    /// Print a JSON array with one object per dtype.
    #[arg(long)]
    json: bool,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "bool",
        Kind::Signed => "signed",
        Kind::Unsigned => "unsigned",
        Kind::Float => "float",
        Kind::Complex => "complex",
    }
}

/// The spellings of `d` of one kind.
fn spellings(d: DType, kind: SpellingKind) -> Vec<&'static str> {
    DType::vocabulary()
        .into_iter()
        .filter(|s| s.dtype == d && s.kind == kind)
        .map(|s| s.text)
        .collect()
}

/// `d`'s code in `naming`, if the naming has one.
fn code(d: DType, naming: Naming) -> Option<&'static str> {
    naming
        .codes()
        .iter()
        .filter(|(_, x)| *x == d)
        .map(|(c, _)| *c)
        .next()
}

/// The header of the text listing: how each column is read.
const HEADER: &str = "\
# Names, aliases and shorthands mean the same dtype in every command.
# NumPy codes need a byte-order prefix (<, >, =, |): <f4, =i8, |b1, =f.
# Seed-table codes are read only by `table --types` of their own table, since the
# same code means different dtypes in different tables (i8: int64 in bytes, int8 in bits):
#   bytes  NumPy kind + bytes codes: the current JAX page (table --system jax, jax-strict)
#   bits   kind + bits codes: the JEP 9407 appendix (numpy, torch, tensorflow, jax-lax)
#   2020   the October 2020 JAX table (jax-2020; s2 = int16, c4 = complex64, c8 = complex128)
";

/// `mldtypes dtypes`.
pub fn dtypes(a: DtypesArgs) -> Result<()> {
    if a.json {
        let arr: Vec<Value> = DType::every()
            .map(|d| {
                let mut codes = Map::new();
                for n in Naming::ALL {
                    if let Some(c) = code(d, n) {
                        codes.insert(n.id().to_string(), json!(c));
                    }
                }
                json!({
                    "name": d.name(),
                    "kind": kind_name(d.kind()),
                    "bits": d.bits(),
                    "itemsize": d.itemsize(),
                    "aliases": spellings(d, SpellingKind::Alias),
                    "shorthands": spellings(d, SpellingKind::Width),
                    "numpy_codes": spellings(d, SpellingKind::NumPy),
                    "table_codes": codes,
                })
            })
            .collect();
        return output::print_json(&Value::Array(arr));
    }
    let mut out = String::from(HEADER);
    let rows: Vec<[String; 8]> = DType::every()
        .map(|d| {
            let mut aliases = spellings(d, SpellingKind::Alias);
            aliases.extend(spellings(d, SpellingKind::Width));
            let dash = |c: Option<&str>| c.unwrap_or("-").to_string();
            [
                d.name().to_string(),
                kind_name(d.kind()).to_string(),
                d.bits().to_string(),
                if aliases.is_empty() {
                    "-".into()
                } else {
                    aliases.join(" ")
                },
                {
                    let numpy = spellings(d, SpellingKind::NumPy).join(" ");
                    if numpy.is_empty() {
                        "-".into()
                    } else {
                        numpy
                    }
                },
                dash(code(d, Naming::Bytes)),
                dash(code(d, Naming::Bits)),
                dash(code(d, Naming::Legacy2020)),
            ]
        })
        .collect();
    let head = [
        "name",
        "kind",
        "bits",
        "aliases, shorthands",
        "numpy",
        "bytes",
        "bits",
        "2020",
    ]
    .map(String::from);
    let widths: Vec<usize> = (0..8)
        .map(|j| {
            rows.iter()
                .chain([&head])
                .map(|r| r[j].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in [&head].into_iter().chain(&rows) {
        let mut line = String::new();
        for (j, (cell, w)) in r.iter().zip(&widths).enumerate() {
            if j == 2 {
                let _ = write!(line, "{cell:>w$}  ");
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    output::print(&out)
}
