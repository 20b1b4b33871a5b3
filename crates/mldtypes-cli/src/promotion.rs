//! `promote`, `table` and `lattice`: JAX type promotion queries, on the
//! promotion engine of `mldtypes::promote`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use mldtypes::dtype::{DType, Naming};
use mldtypes::promote::{
    diff_view, promote_types_dtype, table as system_table, JaxType, Operand, PromotionConfig,
    PromotionMode, PyScalar, System, TypePromotionError, View,
};
use serde_json::{json, Value};

use crate::error::{usage, CliError, Result};
use crate::output;

/// The promotion configuration of the `--strict` / `--x32` flags (x64 is on
/// unless `--x32` is given).
pub fn config(strict: bool, x32: bool) -> PromotionConfig {
    PromotionConfig {
        mode: if strict {
            PromotionMode::Strict
        } else {
            PromotionMode::Standard
        },
        x64: !x32,
    }
}

/// Arguments of `mldtypes promote`.
#[derive(Args, Debug)]
pub struct PromoteArgs {
    /// Strict promotion mode (`jax_numpy_dtype_promotion=strict`).
    #[arg(long)]
    strict: bool,
    /// 32-bit mode (`jax_enable_x64=False`): 64-bit types canonicalize to 32 bits.
    #[arg(long)]
    x32: bool,
    /// Print `{"dtype": NAME, "weak": BOOL}` (or `{"error": {"kind", "message"}}`);
    /// with `--stdin`, one compact object per input line (`null` for a blank line).
    #[arg(long)]
    json: bool,
    /// Also print the lattice path from each operand to the result.
    #[arg(long)]
    explain: bool,
    /// Read one operand list (separated by spaces or commas) per line from
    /// standard input and answer each line with one line, blank lines included.
    #[arg(long, conflicts_with = "operands")]
    stdin: bool,
    /// Operands: dtype names, `i*`/`f*`/`c*`, or `weak:DTYPE`.
    #[arg(
        value_name = "OPERAND",
        required_unless_present = "stdin",
        allow_negative_numbers = true
    )]
    operands: Vec<String>,
}

/// Parses one promotion operand: a dtype in the command line's vocabulary
/// (strong), `i*` / `f*` / `c*` (a Python int / float / complex scalar),
/// `weak:DTYPE`, or a Python literal (`True`, `1`, `1.5`, `1j`).
pub fn parse_operand(s: &str) -> Result<Operand> {
    Operand::parse_name(s).map_err(|e| CliError::Usage(e.to_string()))
}

/// Outcome of one promotion query line.
enum Outcome {
    Ok((DType, bool), Option<Vec<Vec<String>>>),
    Failed(TypePromotionError),
    Usage(String),
}

fn query(words: &[String], cfg: PromotionConfig, explain: bool) -> Outcome {
    let ops: Result<Vec<Operand>> = words.iter().map(|w| parse_operand(w)).collect();
    let ops = match ops {
        Ok(o) if o.is_empty() => return Outcome::Usage("no operands given".into()),
        Ok(o) => o,
        Err(e) => return Outcome::Usage(e.to_string()),
    };
    match cfg.result_type(&ops) {
        Ok(r) => {
            let paths = explain.then(|| {
                let nodes: Result<Vec<JaxType>, _> =
                    ops.iter().map(|o| cfg.lattice_node(*o)).collect();
                match nodes.and_then(|n| cfg.explain(&n)) {
                    Ok(e) => e
                        .paths
                        .iter()
                        .map(|p| p.iter().map(|n| n.to_string()).collect())
                        .collect(),
                    Err(_) => Vec::new(),
                }
            });
            Outcome::Ok(r, paths)
        }
        Err(e) => Outcome::Failed(e),
    }
}

fn promotion_error_json(e: &TypePromotionError) -> Value {
    output::error_json(e.python_exception(), &e.to_string())
}

fn render_json(words: &[String], outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Ok((d, weak), paths) => {
            let mut v = json!({"dtype": d.name(), "weak": weak});
            if let Some(p) = paths {
                v["paths"] = json!(words
                    .iter()
                    .zip(p)
                    .map(|(w, p)| json!({"operand": w, "path": p}))
                    .collect::<Vec<_>>());
            }
            v
        }
        Outcome::Failed(e) => promotion_error_json(e),
        Outcome::Usage(m) => output::error_json("UsageError", m),
    }
}

fn render_text(words: &[String], outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ok((d, weak), paths) => {
            let mut s = d.name().to_string();
            if *weak {
                s.push_str(" (weak)");
            }
            if let Some(p) = paths {
                for (w, p) in words.iter().zip(p) {
                    let _ = write!(s, "\n  {}: {}", echo_word(w), p.join(" -> "));
                }
            }
            s
        }
        Outcome::Failed(e) => format!("{}: {e}", e.python_exception()),
        Outcome::Usage(m) => format!("UsageError: {m}"),
    }
}

/// An operand as echoed in output, cut short if very long.
fn echo_word(w: &str) -> String {
    let e = mldtypes::dtype::echo(w);
    if e.len() == w.len() + 2 {
        w.to_string()
    } else {
        e
    }
}

/// `mldtypes promote`. Returns the exit code of a run whose outcome was
/// reported in full on standard output (`--stdin`: 2 if a line had invalid
/// operands, else 1 if a promotion failed, else 0).
pub fn promote(a: PromoteArgs) -> Result<ExitCode> {
    let cfg = config(a.strict, a.x32);
    if !a.stdin {
        let o = query(&a.operands, cfg, a.explain);
        return match o {
            Outcome::Usage(m) => Err(CliError::Usage(m)),
            Outcome::Ok(..) if a.json => output::print_json(&render_json(&a.operands, &o)),
            Outcome::Ok(..) => output::print(&(render_text(&a.operands, &o) + "\n")),
            Outcome::Failed(_) => {
                if a.json {
                    output::print_json(&render_json(&a.operands, &o))?;
                } else {
                    let _ = writeln!(std::io::stderr(), "{}", render_text(&a.operands, &o));
                }
                Err(CliError::Promotion("type promotion failed".into()))
            }
        }
        .map(|()| ExitCode::SUCCESS);
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let (mut failed, mut bad) = (0usize, 0usize);
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => number += 1,
            Err(e) => {
                // The answers so far stand. Under --json the failure is one
                // more JSON line, so that the output stays JSON Lines.
                let message = format!("cannot read standard input after line {number}: {e}");
                if !a.json {
                    out.flush().map_err(output::stdout_error)?;
                    return Err(CliError::Usage(message));
                }
                let v = output::error_json("ReadError", &message);
                writeln!(out, "{v}")
                    .and_then(|()| out.flush())
                    .map_err(output::stdout_error)?;
                return Ok(ExitCode::from(2));
            }
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            bad += 1;
            let o = Outcome::Usage(format!("line {number} is not valid UTF-8"));
            let answer = if a.json {
                render_json(&[], &o).to_string()
            } else {
                render_text(&[], &o)
            };
            writeln!(out, "{answer}").map_err(output::stdout_error)?;
            continue;
        };
        let words: Vec<String> = text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        // A blank line gets a blank answer (`null` in JSON), so that output
        // line k always answers input line k.
        let answer = if words.is_empty() {
            if a.json { "null" } else { "" }.to_string()
        } else {
            let o = query(&words, cfg, a.explain);
            match o {
                Outcome::Failed(_) => failed += 1,
                Outcome::Usage(_) => bad += 1,
                Outcome::Ok(..) => {}
            }
            if a.json {
                render_json(&words, &o).to_string()
            } else {
                render_text(&words, &o)
            }
        };
        writeln!(out, "{answer}").map_err(output::stdout_error)?;
    }
    out.flush().map_err(output::stdout_error)?;
    // Every failure was answered on its own line; in text mode a summary of
    // invalid lines also goes to standard error.
    if bad > 0 && !a.json {
        let _ = writeln!(
            std::io::stderr(),
            "mldtypes: error: {bad} line(s) had invalid operands"
        );
    }
    Ok(ExitCode::from(if bad > 0 {
        2
    } else if failed > 0 {
        1
    } else {
        0
    }))
}

// ---------------------------------------------------------------------------
// table
// ---------------------------------------------------------------------------

/// Output formats of `mldtypes table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// Aligned plain text with a header and a legend; cells that differ from
    /// `--diff` in brackets; wrapped into panels of columns to fit `--width`.
    Text,
    /// A Markdown table; differing cells in bold.
    Markdown,
    /// The JAX page's HTML markup, `class="d"` on differing cells.
    Html,
    /// Comma-separated values.
    Csv,
    /// An array of `{"a", "b", "dtype", "weak"}` / `{"a", "b", "error"}` objects.
    Json,
}

/// What a cell of the JAX tables shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableView {
    /// `jax.dtypes.result_type(a, b)` (as `promote` answers): under `--x32`
    /// inputs and results are canonicalized to 32 bits; a weakly typed result
    /// is shown as `i*` / `f*` / `c*`.
    Result,
    /// The raw lattice join of the two nodes, without canonicalization (the
    /// lattice's own table; equal to `result` when x64 is on).
    Join,
}

fn parse_system(s: &str) -> std::result::Result<System, String> {
    s.parse::<System>().map_err(|e| e.to_string())
}

/// Arguments of `mldtypes table`.
#[derive(Args, Debug)]
pub struct TableArgs {
    /// The promotion system: jax, jax-strict, jax-2020, jax-lax, numpy, torch,
    /// tensorflow. All but jax and jax-strict are the seeds' tables as printed
    /// (torch: the JEP 9407 snapshot of about 2021, see the header).
    #[arg(long, default_value = "jax", value_parser = parse_system)]
    system: System,
    /// 32-bit mode (`jax_enable_x64=False`), for jax and jax-strict: the cells
    /// are what jax's result_type gives, as `promote --x32`.
    #[arg(long)]
    x32: bool,
    /// What the cells of the jax / jax-strict tables show.
    #[arg(long, value_enum, default_value = "result")]
    view: TableView,
    /// `doc` (the 18 types of the JAX page, or the system's own table), `all`
    /// (adds every ml_dtypes type), or a comma-separated list of dtype names,
    /// `i*`/`f*`/`c*`, and this table's own short codes (`mldtypes dtypes`).
    #[arg(long, default_value = "doc")]
    types: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: TableFormat,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// The system whose differing cells are marked (compared as the seeds'
    /// generator code does: `jnp.promote_types` vs `np.promote_types`).
    /// Default: numpy, except under --x32 (where canonicalization alone would
    /// mark most cells): no marks.
    #[arg(long, value_parser = parse_system)]
    diff: Option<System>,
    /// Text format: wrap columns into panels at most this many characters
    /// wide (0: never wrap). Default: $COLUMNS, else 120.
    #[arg(long)]
    width: Option<usize>,
}

/// The 18 types of the JAX page's table, in its order.
pub fn doc_types() -> Vec<JaxType> {
    use DType::*;
    let mut v: Vec<JaxType> = [
        Bool, UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32,
        Float64, Complex64, Complex128,
    ]
    .into_iter()
    .map(JaxType::Strong)
    .collect();
    v.extend([JaxType::WeakInt, JaxType::WeakFloat, JaxType::WeakComplex]);
    v
}

/// Every type of the JAX lattice: the doc types plus every ml_dtypes type.
pub fn all_types() -> Vec<JaxType> {
    use DType::*;
    let mut v: Vec<JaxType> = [
        Bool,
        UInt1,
        UInt2,
        UInt4,
        UInt8,
        UInt16,
        UInt32,
        UInt64,
        Int1,
        Int2,
        Int4,
        Int8,
        Int16,
        Int32,
        Int64,
        Float4E2M1FN,
        Float6E2M3FN,
        Float6E3M2FN,
        Float8E3M4,
        Float8E4M3,
        Float8E8M0FNU,
        Float8E4M3B11FNUZ,
        Float8E4M3FN,
        Float8E4M3FNUZ,
        Float8E5M2,
        Float8E5M2FNUZ,
        BFloat16,
        Float16,
        Float32,
        Float64,
        Complex64,
        Complex128,
    ]
    .into_iter()
    .map(JaxType::Strong)
    .collect();
    v.extend([JaxType::WeakInt, JaxType::WeakFloat, JaxType::WeakComplex]);
    v
}

/// A node in a system's naming (`b1`, `bf`, `i*` for the JAX page), or its
/// canonical name (`int8`, `bfloat16`, `i*`) when `naming` is `None`.
fn label(n: JaxType, naming: Option<Naming>) -> String {
    match (n, naming) {
        (JaxType::Strong(d), Some(naming)) => d.code(naming).to_string(),
        (n, _) => n.to_string(),
    }
}

/// The operand a table row or column stands for: a strongly typed dtype, or
/// a Python scalar for `i*` / `f*` / `c*` (as the seeds' generator code and
/// the committed jax vectors use them).
fn operand_of(n: JaxType) -> Operand {
    match n {
        JaxType::Strong(d) => Operand::Strong(d),
        JaxType::WeakInt => Operand::Scalar(PyScalar::Int),
        JaxType::WeakFloat => Operand::Scalar(PyScalar::Float),
        JaxType::WeakComplex => Operand::Scalar(PyScalar::Complex),
    }
}

/// One computed table cell.
#[derive(Clone, Debug)]
enum Cell {
    /// A result: the node shown (weak results as `i*`/`f*`/`c*`) and, for
    /// JSON, the dtype and weak flag.
    Value(JaxType, DType, bool),
    /// No promotion: the JSON error kind and message.
    Error(String, String),
}

/// Parses `--types`: `doc`, `all`, or a list.
fn table_types(a: &TableArgs, t_nodes: &[JaxType], is_jax: bool) -> Result<Vec<JaxType>> {
    let naming = a.system.naming();
    let types: Vec<JaxType> = match a.types.as_str() {
        "doc" if is_jax => doc_types(),
        "all" if is_jax => all_types(),
        "doc" | "all" => t_nodes.to_vec(),
        list => list
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .map(|w| {
                let n = match w {
                    "i*" | "f*" | "c*" => w
                        .parse::<JaxType>()
                        .map_err(|e| CliError::Usage(e.to_string()))?,
                    _ => match naming.codes().iter().find(|(c, _)| *c == w) {
                        Some((_, d)) => JaxType::Strong(*d),
                        None => DType::parse_name(w)
                            .map(JaxType::Strong)
                            .map_err(|e| CliError::Usage(e.to_string()))?,
                    },
                };
                if !t_nodes.contains(&n) {
                    return Err(usage!(
                        "{} is not in the {} table",
                        mldtypes::dtype::echo(w),
                        a.system
                    ));
                }
                Ok(n)
            })
            .collect::<Result<Vec<_>>>()?,
    };
    if types.is_empty() {
        return Err(usage!("--types lists no types"));
    }
    Ok(types)
}

/// The note printed above the torch table.
pub const TORCH_NOTE: &str = "the JEP 9407 appendix snapshot of PyTorch's promotion (about 2021); \
PyTorch 2.15 differs in 45 of its 324 cells: it now has uint16, uint32 and uint64, a float \
Python scalar with a float one gives float32, and float16 with a complex scalar gives complex32";

/// The header lines of the text table: what the cells are and which naming.
fn table_header(
    a: &TableArgs,
    cfg: PromotionConfig,
    naming: Option<Naming>,
    types: &[JaxType],
) -> String {
    let mut h = String::new();
    let x64 = if cfg.x64 {
        "x64 enabled"
    } else {
        "x64 disabled (--x32): 64-bit inputs and results canonicalize to 32 bits"
    };
    match a.system {
        System::Jax | System::JaxStrict => {
            let mode = if a.system == System::Jax {
                "standard"
            } else {
                "strict"
            };
            let what = match a.view {
                TableView::Result => "jax 0.10.2 result_type(row, column)",
                TableView::Join => "the raw lattice join of row and column (--view join)",
            };
            let _ = writeln!(h, "# {what}; {mode} promotion; {x64}");
        }
        System::Torch => {
            let _ = writeln!(h, "# torch: {TORCH_NOTE}");
        }
        System::Jax2020 => {
            let _ = writeln!(
                h,
                "# jax-2020: jax.numpy.promote_types as of October 2020 (seeds 000, 004)"
            );
        }
        s => {
            let _ = writeln!(h, "# {s}: the JEP 9407 appendix table");
        }
    }
    match naming {
        Some(n) => {
            let mut codes: Vec<String> = Vec::new();
            for t in types {
                if let JaxType::Strong(d) = t {
                    let c = d.code(n);
                    if c != d.name() && !codes.iter().any(|x| x.starts_with(&format!("{c} "))) {
                        codes.push(format!("{c} {d}"));
                    }
                }
            }
            let _ = writeln!(
                h,
                "# names: {} (all names: `mldtypes dtypes`):",
                n.description()
            );
            let mut line = String::from("#  ");
            for c in codes {
                if line.len() + c.len() + 2 > 96 {
                    h.push_str(line.trim_end_matches(','));
                    h.push('\n');
                    line = String::from("#  ");
                }
                let _ = write!(line, " {c},");
            }
            h.push_str(line.trim_end_matches(','));
            h.push('\n');
        }
        None => h.push_str("# names: canonical dtype names\n"),
    }
    h
}

/// The legend printed below the text table.
fn table_legend(a: &TableArgs, cfg: PromotionConfig, marked: Option<System>) -> String {
    let mut l = String::from("# legend:\n");
    let weak = if cfg.x64 {
        "int64 / float64 / complex128"
    } else {
        "int32 / float32 / complex64"
    };
    let is_jax = matches!(a.system, System::Jax | System::JaxStrict);
    if is_jax {
        let _ = writeln!(
            l,
            "#   i* f* c*  weakly typed int / float / complex (Python scalars); as a result: weakly typed {weak}"
        );
        l.push_str("#   -         no implicit promotion: jax raises TypePromotionError\n");
    } else {
        l.push_str("#   i* f* c*  Python int / float / complex scalars\n");
        l.push_str("#   -         the table defines no promotion\n");
    }
    if let Some(d) = marked {
        let _ = writeln!(l, "#   [..]      differs from {d}'s promote_types (--diff)");
    }
    l
}

/// `mldtypes table`.
pub fn table(a: TableArgs) -> Result<()> {
    let format = if a.json { TableFormat::Json } else { a.format };
    let is_jax = matches!(a.system, System::Jax | System::JaxStrict);
    if !is_jax && a.x32 {
        return Err(usage!(
            "--x32 applies to the jax and jax-strict tables; the {} table is a seed table",
            a.system
        ));
    }
    if !is_jax && a.view == TableView::Join {
        return Err(usage!(
            "--view join applies to the jax and jax-strict tables only"
        ));
    }
    let cfg = PromotionConfig {
        mode: if a.system == System::JaxStrict {
            PromotionMode::Strict
        } else {
            PromotionMode::Standard
        },
        x64: !a.x32,
    };
    let t = system_table(a.system, cfg);
    let types = table_types(&a, t.nodes(), is_jax)?;
    // The seed tables' short codes for the page's own rows; canonical names
    // once ml_dtypes types or a list join in (`u1` = uint8 beside `uint1`
    // would mislead).
    let naming = (!is_jax || a.types == "doc").then(|| a.system.naming());

    let cell_of = |r: JaxType, c: JaxType| -> Cell {
        if is_jax && a.view == TableView::Result {
            return match cfg.result_type(&[operand_of(r), operand_of(c)]) {
                Ok((d, weak)) => {
                    let node = if weak {
                        JaxType::weak_of(d)
                    } else {
                        JaxType::Strong(d)
                    };
                    Cell::Value(node, d, weak)
                }
                Err(e) => Cell::Error(e.python_exception().into(), e.to_string()),
            };
        }
        match t.get(&r, &c).flatten() {
            Some(&n) => {
                let weak = n.is_weak();
                let d = if weak {
                    cfg.canonicalize_dtype(n.numpy_dtype())
                } else {
                    n.numpy_dtype()
                };
                Cell::Value(n, d, weak)
            }
            None if is_jax => match cfg.join(r, c) {
                Err(e) => Cell::Error(e.python_exception().into(), e.to_string()),
                Ok(j) => Cell::Error(
                    "Undefined".into(),
                    format!("the table has no cell for {r} and {c} (join {j})"),
                ),
            },
            None => Cell::Error(
                "Undefined".into(),
                format!("{r} and {c} have no promotion in the {} table", a.system),
            ),
        }
    };
    // Marked cells: where the row/column promote_types differs from --diff's.
    let diff = a
        .diff
        .or((!a.x32).then_some(System::NumPy))
        .filter(|d| *d != a.system);
    let marked: HashSet<(JaxType, JaxType)> =
        if let Some(diff) = diff.filter(|_| is_jax && a.view == TableView::Result && a.x32) {
            let mut m = HashSet::new();
            for &r in &types {
                for &c in &types {
                    let ours = match cell_of(r, c) {
                        Cell::Value(_, d, _) => Some(d),
                        Cell::Error(..) => None,
                    };
                    if ours != promote_types_dtype(diff, r, c, cfg) {
                        m.insert((r, c));
                    }
                }
            }
            m
        } else if let Some(diff) = diff {
            diff_view(a.system, diff, cfg, View::PromoteTypes)
                .into_iter()
                .map(|c| (c.row, c.col))
                .collect()
        } else {
            HashSet::new()
        };
    let cells: Vec<Vec<(Cell, bool)>> = types
        .iter()
        .map(|r| {
            types
                .iter()
                .map(|c| (cell_of(*r, *c), marked.contains(&(*r, *c))))
                .collect()
        })
        .collect();
    let cell_label = |c: &Cell| match c {
        Cell::Value(n, ..) => label(*n, naming),
        Cell::Error(..) => "-".to_string(),
    };
    let heads: Vec<String> = types.iter().map(|n| label(*n, naming)).collect();
    let mut out = String::new();
    match format {
        TableFormat::Html => {
            out.push_str("<table id=\"types\">\n<tr><th></th>");
            for h in &heads {
                let _ = write!(out, "<th>{h}</th>");
            }
            out.push_str("</tr>\n");
            for (h, row) in heads.iter().zip(&cells) {
                let _ = write!(out, "<tr><td>{h}</td>");
                for (c, d) in row {
                    let class = if *d { " class=\"d\"" } else { "" };
                    let _ = write!(out, "<td{class}>{}</td>", cell_label(c));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</table>\n");
        }
        TableFormat::Markdown => {
            let _ = writeln!(
                out,
                "| |{}|",
                heads
                    .iter()
                    .map(|h| format!(" {h} "))
                    .collect::<Vec<_>>()
                    .join("|")
            );
            let _ = writeln!(out, "|---|{}|", vec!["---"; heads.len()].join("|"));
            for (h, row) in heads.iter().zip(&cells) {
                let cols: Vec<String> = row
                    .iter()
                    .map(|(c, d)| {
                        if *d {
                            format!(" **{}** ", cell_label(c))
                        } else {
                            format!(" {} ", cell_label(c))
                        }
                    })
                    .collect();
                let _ = writeln!(out, "| **{h}** |{}|", cols.join("|"));
            }
        }
        TableFormat::Csv => {
            let _ = writeln!(out, ",{}", heads.join(","));
            for (h, row) in heads.iter().zip(&cells) {
                let cols: Vec<String> = row.iter().map(|(c, _)| cell_label(c)).collect();
                let _ = writeln!(out, "{h},{}", cols.join(","));
            }
        }
        TableFormat::Text => {
            let grid: Vec<Vec<String>> = cells
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|(c, d)| {
                            if *d {
                                format!("[{}]", cell_label(c))
                            } else {
                                cell_label(c)
                            }
                        })
                        .collect()
                })
                .collect();
            let width = a.width.unwrap_or_else(|| {
                std::env::var("COLUMNS")
                    .ok()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(120)
            });
            out.push_str(&table_header(&a, cfg, naming, &types));
            out.push_str(&text_grid(&heads, &grid, width));
            out.push_str(&table_legend(&a, cfg, diff.filter(|_| !marked.is_empty())));
        }
        TableFormat::Json => {
            let arr: Vec<Value> = types
                .iter()
                .zip(&cells)
                .flat_map(|(r, row)| {
                    types.iter().zip(row).map(move |(c, (cell, _))| {
                        let (an, bn) = (r.to_string(), c.to_string());
                        match cell {
                            Cell::Value(_, d, weak) => {
                                json!({"a": an, "b": bn, "dtype": d.name(), "weak": weak})
                            }
                            Cell::Error(kind, message) => json!({
                                "a": an, "b": bn,
                                "error": {"kind": kind, "message": message},
                            }),
                        }
                    })
                })
                .collect();
            return output::print_json(&Value::Array(arr));
        }
    }
    output::print(&out)
}

/// The text grid, right-aligned columns each as wide as its widest entry,
/// split into panels of columns (each repeating the row labels) so that no
/// line is wider than `width` (0: one panel).
fn text_grid(heads: &[String], grid: &[Vec<String>], width: usize) -> String {
    let len = |s: &String| s.chars().count();
    let widths: Vec<usize> = (0..heads.len())
        .map(|j| {
            grid.iter()
                .map(|r| len(&r[j]))
                .chain([len(&heads[j])])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let lw = heads.iter().map(len).max().unwrap_or(1);
    // Panels: greedy runs of columns that fit.
    let mut panels: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    let mut used = lw;
    for (j, w) in widths.iter().enumerate() {
        if width > 0 && j > start && used + 1 + w > width {
            panels.push(start..j);
            start = j;
            used = lw;
        }
        used += 1 + w;
    }
    panels.push(start..heads.len());
    let mut out = String::new();
    for (k, p) in panels.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:>lw$}", "");
        for j in p.clone() {
            let _ = write!(out, " {:>w$}", heads[j], w = widths[j]);
        }
        out.push('\n');
        for (h, row) in heads.iter().zip(grid) {
            let _ = write!(out, "{h:>lw$}");
            for j in p.clone() {
                let _ = write!(out, " {:>w$}", row[j], w = widths[j]);
            }
            out.push('\n');
        }
    }
    out
}

// ---------------------------------------------------------------------------
// lattice
// ---------------------------------------------------------------------------

/// Output formats of `mldtypes lattice`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LatticeFormat {
    /// SVG: the JAX page's 18 nodes where its generator code places them,
    /// other node sets in layers (no Graphviz needed).
    Svg,
    /// Graphviz DOT text.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// Arguments of `mldtypes lattice`.
#[derive(Args, Debug)]
pub struct LatticeArgs {
    /// The strict-mode lattice.
    #[arg(long)]
    strict: bool,
    /// The lattice with `jax_enable_x64=False`.
    #[arg(long)]
    x32: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "svg")]
    format: LatticeFormat,
    /// `all` (every node of the lattice) or `doc` (the JAX page's 18 nodes,
    /// with the order the full lattice gives them; the standard x64 lattice
    /// at the JAX page's positions).
    #[arg(long, default_value = "all", value_parser = ["all", "doc"])]
    types: String,
    /// Write to FILE (atomically: a temporary file renamed into place) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `mldtypes lattice`.
pub fn lattice(a: LatticeArgs) -> Result<()> {
    let l = config(a.strict, a.x32).lattice();
    let nodes: Vec<JaxType> = if a.types == "doc" {
        doc_types()
    } else {
        l.nodes().to_vec()
    };
    // "Immediately higher" within the chosen nodes: a < b with no chosen c
    // strictly between (the full lattice's own edges when all are chosen).
    let lt = |x: &JaxType, y: &JaxType| x != y && l.le(x, y);
    let edges: Vec<(JaxType, JaxType)> = nodes
        .iter()
        .flat_map(|x| {
            nodes
                .iter()
                .filter(|y| lt(x, y) && !nodes.iter().any(|c| lt(x, c) && lt(c, y)))
                .map(move |y| (*x, *y))
        })
        .collect();
    let idx = |n: JaxType| nodes.iter().position(|m| *m == n).unwrap_or(0);
    let mut out = String::new();
    match a.format {
        LatticeFormat::Dot => {
            out.push_str("digraph lattice {\n  rankdir=BT;\n  node [shape=box, style=rounded];\n");
            for n in &nodes {
                let _ = writeln!(out, "  \"{n}\";");
            }
            for (lo, hi) in &edges {
                let _ = writeln!(out, "  \"{}\" -> \"{}\";", lo, hi);
            }
            out.push_str("}\n");
        }
        LatticeFormat::Mermaid => {
            out.push_str("flowchart BT\n");
            for (i, n) in nodes.iter().enumerate() {
                let _ = writeln!(out, "  n{i}[\"{n}\"]");
            }
            for (lo, hi) in &edges {
                let _ = writeln!(out, "  n{} --> n{}", idx(*lo), idx(*hi));
            }
        }
        LatticeFormat::Svg => {
            let title = format!(
                "JAX type promotion lattice ({}, x64 {})",
                if a.strict { "strict" } else { "standard" },
                if a.x32 { "disabled" } else { "enabled" }
            );
            let page = a.types == "doc" && !a.strict && !a.x32;
            out = crate::lattice_svg::svg(&nodes, &edges, &title, page)
        }
    }
    match a.output {
        None => output::print(&out),
        Some(path) => write_atomically(&path, out.as_bytes()),
    }
}

/// Writes `data` to `path` through a temporary file in the same directory,
/// renamed into place, so `path` is never left partially written.
///
/// Only a regular file (or nothing) is replaced: a directory, device node,
/// FIFO, socket or symbolic link at `path` is refused, so that
/// `-o /dev/null` or a link never becomes a regular file.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            return Err(CliError::Write {
                path: path.to_path_buf(),
                message: "not a regular file (a directory, device, FIFO, socket or symbolic \
                          link); refusing to replace it"
                    .into(),
            });
        }
    }
    write_atomically_with(path, |tmp| {
        std::fs::write(tmp, data).map_err(|e| e.to_string())
    })
}

/// Lets `write` fill a temporary file (given its path) in `path`'s directory,
/// then renames it to `path`. On any failure the temporary file is removed
/// and `path` is untouched.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::result::Result<(), String>,
) -> Result<()> {
    let err = |m: String| CliError::Write {
        path: path.to_path_buf(),
        message: m,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".mldtypes-").suffix(".tmp");
    // Temporary files are private (0600) by default; create this one as an
    // ordinary new file is (0666 less the umask).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir).map_err(|e| err(e.to_string()))?;
    write(tmp.path()).map_err(err)?;
    // Replacing a file keeps its permissions.
    if let Ok(m) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), m.permissions()).map_err(|e| err(e.to_string()))?;
    }
    tmp.persist(path).map_err(|e| err(e.error.to_string()))?;
    Ok(())
}
