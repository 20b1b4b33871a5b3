//! `promote`, `table` and `lattice`: JAX type promotion queries.

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use mldtypes::dtype::DType;
use serde_json::{json, Value};

use crate::backend::{self, Config, Node, Operand, PromotionFailure, System};
use crate::error::{usage, CliError, Result};

/// Arguments of `mldtypes promote`.
#[derive(Args, Debug)]
pub struct PromoteArgs {
    /// Strict promotion mode (`jax_numpy_dtype_promotion=strict`).
    #[arg(long)]
    strict: bool,
    /// 32-bit mode (`jax_enable_x64=False`): 64-bit types canonicalize to 32 bits.
    #[arg(long)]
    x32: bool,
    /// Print `{"dtype": NAME, "weak": BOOL}` (or `{"error": {...}}`) per result.
    #[arg(long)]
    json: bool,
    /// Also print the lattice path from each operand to the result.
    #[arg(long)]
    explain: bool,
    /// Read one whitespace-separated operand list per line from standard input.
    #[arg(long, conflicts_with = "operands")]
    stdin: bool,
    /// Operands: dtype names, `i*`/`f*`/`c*`, or `weak:DTYPE`.
    #[arg(
        value_name = "OPERAND",
        required_unless_present = "stdin",
        allow_hyphen_values = true
    )]
    operands: Vec<String>,
}

/// Parses one promotion operand.
pub fn parse_operand(s: &str) -> Result<Operand> {
    Ok(match s {
        "i*" => Operand::PyInt,
        "f*" => Operand::PyFloat,
        "c*" => Operand::PyComplex,
        _ => match s.strip_prefix("weak:") {
            Some(d) => Operand::Weak(backend::parse_dtype(d)?),
            None => Operand::Strong(backend::parse_dtype(s)?),
        },
    })
}

/// Outcome of one promotion query line.
enum Outcome {
    Ok((DType, bool), Option<Vec<Vec<String>>>),
    Failed(PromotionFailure),
    Usage(String),
}

fn query(words: &[String], cfg: Config, explain: bool) -> Outcome {
    let ops: Result<Vec<Operand>> = words.iter().map(|w| parse_operand(w)).collect();
    let ops = match ops {
        Ok(o) if o.is_empty() => return Outcome::Usage("no operands given".into()),
        Ok(o) => o,
        Err(e) => return Outcome::Usage(e.to_string()),
    };
    match backend::result_type(&ops, cfg) {
        Ok(r) => {
            let paths = if explain {
                backend::explain(&ops, cfg).ok()
            } else {
                None
            };
            Outcome::Ok(r, paths)
        }
        Err(f) => Outcome::Failed(f),
    }
}

fn render(words: &[String], outcome: &Outcome, json: bool) -> String {
    match (outcome, json) {
        (Outcome::Ok((d, weak), paths), true) => {
            let mut v = json!({"dtype": d.name(), "weak": weak});
            if let Some(p) = paths {
                v["paths"] = json!(words
                    .iter()
                    .zip(p)
                    .map(|(w, p)| json!({"operand": w, "path": p}))
                    .collect::<Vec<_>>());
            }
            v.to_string()
        }
        (Outcome::Ok((d, weak), paths), false) => {
            let mut s = d.name().to_string();
            if *weak {
                s.push_str(" (weak)");
            }
            if let Some(p) = paths {
                for (w, p) in words.iter().zip(p) {
                    let _ = write!(s, "\n  {w}: {}", p.join(" -> "));
                }
            }
            s
        }
        (Outcome::Failed(f), true) => {
            json!({"error": {"kind": f.kind, "message": f.message}}).to_string()
        }
        (Outcome::Failed(f), false) => format!("{}: {}", f.kind, f.message),
        (Outcome::Usage(m), true) => {
            json!({"error": {"kind": "UsageError", "message": m}}).to_string()
        }
        (Outcome::Usage(m), false) => format!("UsageError: {m}"),
    }
}

/// `mldtypes promote`.
pub fn promote(a: PromoteArgs) -> Result<()> {
    let cfg = Config {
        strict: a.strict,
        x64: !a.x32,
    };
    if !a.stdin {
        return match query(&a.operands, cfg, a.explain) {
            Outcome::Usage(m) => Err(CliError::Usage(m)),
            o @ Outcome::Ok(..) => {
                println!("{}", render(&a.operands, &o, a.json));
                Ok(())
            }
            o @ Outcome::Failed(_) => {
                let line = render(&a.operands, &o, a.json);
                if a.json {
                    println!("{line}");
                } else {
                    eprintln!("{line}");
                }
                Err(CliError::Promotion("type promotion failed".into()))
            }
        };
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let (mut failed, mut bad) = (0usize, 0usize);
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| usage!("cannot read standard input: {e}"))?;
        let words: Vec<String> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        if words.is_empty() {
            continue;
        }
        let o = query(&words, cfg, a.explain);
        match o {
            Outcome::Failed(_) => failed += 1,
            Outcome::Usage(_) => bad += 1,
            Outcome::Ok(..) => {}
        }
        writeln!(out, "{}", render(&words, &o, a.json)).map_err(|e| CliError::Write {
            path: "<stdout>".into(),
            message: e.to_string(),
        })?;
    }
    if bad > 0 {
        Err(CliError::Usage(format!(
            "{bad} line(s) had invalid operands"
        )))
    } else if failed > 0 {
        Err(CliError::Promotion(format!("{failed} promotion(s) failed")))
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// table
// ---------------------------------------------------------------------------

/// Output formats of `mldtypes table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// Aligned plain text; cells that differ from `--diff` in brackets.
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

/// Arguments of `mldtypes table`.
#[derive(Args, Debug)]
pub struct TableArgs {
    /// The promotion system.
    #[arg(long, value_enum, default_value = "jax")]
    system: System,
    /// 32-bit mode (`jax_enable_x64=False`).
    #[arg(long)]
    x32: bool,
    /// `doc` (the 18 types of the JAX page), `all` (adds every ml_dtypes type),
    /// or a comma-separated list of operands.
    #[arg(long, default_value = "doc")]
    types: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: TableFormat,
    /// The system whose differing cells are marked.
    #[arg(long, value_enum, default_value = "numpy")]
    diff: System,
}

/// The 18 types of the JAX page's table, in its order.
pub fn doc_types() -> Vec<Operand> {
    use DType::*;
    let mut v: Vec<Operand> = [
        Bool, UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64, BFloat16, Float16, Float32,
        Float64, Complex64, Complex128,
    ]
    .into_iter()
    .map(Operand::Strong)
    .collect();
    v.extend([Operand::PyInt, Operand::PyFloat, Operand::PyComplex]);
    v
}

/// Every type of the JAX lattice: the doc types plus every ml_dtypes type.
pub fn all_types() -> Vec<Operand> {
    use DType::*;
    let mut v: Vec<Operand> = [
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
    .map(Operand::Strong)
    .collect();
    v.extend([Operand::PyInt, Operand::PyFloat, Operand::PyComplex]);
    v
}

/// The JAX page's short name of a dtype (`b1`, `u4`, `bf`, `c16`), or the
/// canonical name for dtypes the page does not show.
pub fn short_name(d: DType) -> &'static str {
    use DType::*;
    match d {
        Bool => "b1",
        UInt8 => "u1",
        UInt16 => "u2",
        UInt32 => "u4",
        UInt64 => "u8",
        Int8 => "i1",
        Int16 => "i2",
        Int32 => "i4",
        Int64 => "i8",
        BFloat16 => "bf",
        Float16 => "f2",
        Float32 => "f4",
        Float64 => "f8",
        Complex64 => "c8",
        Complex128 => "c16",
        d => d.name(),
    }
}

fn operand_label(o: Operand, short: bool) -> String {
    match o {
        Operand::Strong(d) if short => short_name(d).into(),
        Operand::Strong(d) => d.name().into(),
        Operand::Weak(d) if short => format!("weak:{}", short_name(d)),
        Operand::Weak(d) => format!("weak:{}", d.name()),
        Operand::PyInt => "i*".into(),
        Operand::PyFloat => "f*".into(),
        Operand::PyComplex => "c*".into(),
    }
}

fn result_label(d: DType, weak: bool, short: bool) -> String {
    if weak {
        use mldtypes::dtype::Kind;
        match d.kind() {
            Kind::Signed | Kind::Unsigned => return "i*".into(),
            Kind::Float => return "f*".into(),
            Kind::Complex => return "c*".into(),
            Kind::Bool => {}
        }
    }
    if short {
        short_name(d).into()
    } else {
        d.name().into()
    }
}

type Cell = std::result::Result<(DType, bool), PromotionFailure>;

/// `mldtypes table`.
pub fn table(a: TableArgs) -> Result<()> {
    let x64 = !a.x32;
    let types = match a.types.as_str() {
        "doc" => doc_types(),
        "all" => all_types(),
        list => list
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .map(parse_operand)
            .collect::<Result<Vec<_>>>()?,
    };
    if types.is_empty() {
        return Err(usage!("--types lists no operands"));
    }
    let mut cells: Vec<Vec<(Cell, bool)>> = Vec::with_capacity(types.len());
    for &r in &types {
        let mut row = Vec::with_capacity(types.len());
        for &c in &types {
            let cell = backend::table_cell(a.system, x64, r, c)?;
            let differs = a.system != a.diff && backend::differs(a.system, a.diff, x64, r, c)?;
            row.push((cell, differs));
        }
        cells.push(row);
    }
    let short = true;
    let label = |c: &Cell| match c {
        Ok((d, w)) => result_label(*d, *w, short),
        Err(_) => "-".to_string(),
    };
    let heads: Vec<String> = types.iter().map(|t| operand_label(*t, short)).collect();
    let mut out = String::new();
    match a.format {
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
                    let _ = write!(out, "<td{class}>{}</td>", label(c));
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
                            format!(" **{}** ", label(c))
                        } else {
                            format!(" {} ", label(c))
                        }
                    })
                    .collect();
                let _ = writeln!(out, "| **{h}** |{}|", cols.join("|"));
            }
        }
        TableFormat::Csv => {
            let _ = writeln!(out, ",{}", heads.join(","));
            for (h, row) in heads.iter().zip(&cells) {
                let cols: Vec<String> = row.iter().map(|(c, _)| label(c)).collect();
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
                                format!("[{}]", label(c))
                            } else {
                                label(c)
                            }
                        })
                        .collect()
                })
                .collect();
            let w = grid
                .iter()
                .flatten()
                .chain(heads.iter())
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(1);
            let _ = write!(out, "{:>w$}", "");
            for h in &heads {
                let _ = write!(out, " {h:>w$}");
            }
            out.push('\n');
            for (h, row) in heads.iter().zip(&grid) {
                let _ = write!(out, "{h:>w$}");
                for c in row {
                    let _ = write!(out, " {c:>w$}");
                }
                out.push('\n');
            }
        }
        TableFormat::Json => {
            let mut arr = Vec::new();
            for (r, row) in types.iter().zip(&cells) {
                for (c, (cell, _)) in types.iter().zip(row) {
                    let (an, bn) = (operand_label(*r, false), operand_label(*c, false));
                    arr.push(match cell {
                        Ok((d, w)) => json!({"a": an, "b": bn, "dtype": d.name(), "weak": w}),
                        Err(f) => json!({"a": an, "b": bn, "error": {"kind": f.kind, "message": f.message}}),
                    });
                }
            }
            out = serde_json::to_string_pretty(&Value::Array(arr)).expect("JSON values serialize");
            out.push('\n');
        }
    }
    print!("{out}");
    Ok(())
}

// ---------------------------------------------------------------------------
// lattice
// ---------------------------------------------------------------------------

/// Output formats of `mldtypes lattice`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LatticeFormat {
    /// SVG laid out by layout-rs (no Graphviz needed).
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
    /// Write to FILE (atomically: a temporary file renamed into place) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `mldtypes lattice`.
pub fn lattice(a: LatticeArgs) -> Result<()> {
    let (nodes, edges) = backend::lattice(Config {
        strict: a.strict,
        x64: !a.x32,
    });
    let idx = |n: Node| {
        nodes
            .iter()
            .position(|m| *m == n)
            .expect("edge endpoints are nodes")
    };
    let mut out = String::new();
    match a.format {
        LatticeFormat::Dot => {
            out.push_str("digraph lattice {\n  rankdir=BT;\n  node [shape=box, style=rounded];\n");
            for n in &nodes {
                let _ = writeln!(out, "  \"{}\";", n.name());
            }
            for (lo, hi) in &edges {
                let _ = writeln!(out, "  \"{}\" -> \"{}\";", lo.name(), hi.name());
            }
            out.push_str("}\n");
        }
        LatticeFormat::Mermaid => {
            out.push_str("flowchart BT\n");
            for (i, n) in nodes.iter().enumerate() {
                let _ = writeln!(out, "  n{i}[\"{}\"]", n.name());
            }
            for (lo, hi) in &edges {
                let _ = writeln!(out, "  n{} --> n{}", idx(*lo), idx(*hi));
            }
        }
        LatticeFormat::Svg => out = lattice_svg(&nodes, &edges),
    }
    match a.output {
        None => {
            print!("{out}");
            Ok(())
        }
        Some(path) => write_atomically(&path, out.as_bytes()),
    }
}

fn lattice_svg(nodes: &[Node], edges: &[(Node, Node)]) -> String {
    use layout::backends::svg::SVGWriter;
    use layout::core::base::Orientation;
    use layout::core::geometry::Point;
    use layout::core::style::{LineStyleKind, StyleAttr};
    use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
    use layout::topo::layout::VisualGraph;

    // Laid out top to bottom with every edge drawn from the higher type down to
    // the lower one and the arrow head at the start, so arrows point upward.
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let handles: Vec<_> = nodes
        .iter()
        .map(|n| {
            let label = n.name();
            let size = Point::new(12.0 + 9.0 * label.len() as f64, 34.0);
            let shape = ShapeKind::new_box(label);
            vg.add_node(Element::create(
                shape,
                StyleAttr::simple(),
                Orientation::LeftToRight,
                size,
            ))
        })
        .collect();
    for (lo, hi) in edges {
        let l = nodes.iter().position(|m| m == lo).expect("node");
        let h = nodes.iter().position(|m| m == hi).expect("node");
        let arrow = Arrow::new(
            LineEndKind::Arrow,
            LineEndKind::None,
            LineStyleKind::Normal,
            "",
            &StyleAttr::simple(),
            &None,
            &None,
        );
        vg.add_edge(arrow, handles[h], handles[l]);
    }
    let mut svg = SVGWriter::new();
    vg.do_it(false, false, false, &mut svg);
    svg.finalize()
}

/// Writes `data` to `path` through a temporary file in the same directory,
/// renamed into place, so `path` is never left partially written.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let err = |m: String| CliError::Write {
        path: path.to_path_buf(),
        message: m,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(e.to_string()))?;
    tmp.write_all(data).map_err(|e| err(e.to_string()))?;
    tmp.persist(path).map_err(|e| err(e.error.to_string()))?;
    Ok(())
}
