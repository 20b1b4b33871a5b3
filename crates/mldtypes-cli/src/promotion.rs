//! `promote`, `table` and `lattice`: JAX type promotion queries, on the
//! promotion engine of `mldtypes::promote`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use mldtypes::dtype::{DType, Naming};
use mldtypes::promote::{
    diff_view, table as system_table, JaxType, Operand, PromotionConfig, PromotionMode, System,
    TypePromotionError, View,
};
use serde_json::{json, Value};

use crate::error::{usage, CliError, Result};

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

/// Parses one promotion operand: a dtype (strong), `i*` / `f*` / `c*` (a
/// Python int / float / complex scalar), `weak:DTYPE`, or a Python literal
/// (`True`, `1`, `1.5`, `1j`).
pub fn parse_operand(s: &str) -> Result<Operand> {
    s.parse::<Operand>()
        .map_err(|e| CliError::Usage(e.to_string()))
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

fn error_json(e: &TypePromotionError) -> Value {
    json!({"error": {"kind": e.python_exception(), "message": e.to_string()}})
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
        (Outcome::Failed(e), true) => error_json(e).to_string(),
        (Outcome::Failed(e), false) => format!("{}: {e}", e.python_exception()),
        (Outcome::Usage(m), true) => {
            json!({"error": {"kind": "UsageError", "message": m}}).to_string()
        }
        (Outcome::Usage(m), false) => format!("UsageError: {m}"),
    }
}

/// `mldtypes promote`.
pub fn promote(a: PromoteArgs) -> Result<()> {
    let cfg = config(a.strict, a.x32);
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

fn parse_system(s: &str) -> std::result::Result<System, String> {
    s.parse::<System>().map_err(|e| e.to_string())
}

/// Arguments of `mldtypes table`.
#[derive(Args, Debug)]
pub struct TableArgs {
    /// The promotion system: jax, jax-strict, jax-2020, jax-lax, numpy, torch, tensorflow.
    #[arg(long, default_value = "jax", value_parser = parse_system)]
    system: System,
    /// 32-bit mode (`jax_enable_x64=False`).
    #[arg(long)]
    x32: bool,
    /// `doc` (the 18 types of the JAX page, or the system's own table), `all`
    /// (adds every ml_dtypes type), or a comma-separated list of types.
    #[arg(long, default_value = "doc")]
    types: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: TableFormat,
    /// The system whose differing cells are marked (compared as the seeds'
    /// generator code does: `jnp.promote_types` vs `np.promote_types`).
    #[arg(long, default_value = "numpy", value_parser = parse_system)]
    diff: System,
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

/// `mldtypes table`.
pub fn table(a: TableArgs) -> Result<()> {
    let cfg = PromotionConfig {
        mode: PromotionMode::Standard,
        x64: !a.x32,
    };
    let t = system_table(a.system, cfg);
    let is_jax = matches!(a.system, System::Jax | System::JaxStrict);
    // The seed tables' short codes for the page's own rows; canonical names
    // once ml_dtypes types join in (`u1` = uint8 beside `uint1` would mislead).
    let naming = (!is_jax || a.types == "doc").then(|| a.system.naming());
    let types: Vec<JaxType> = match a.types.as_str() {
        "doc" if is_jax => doc_types(),
        "all" if is_jax => all_types(),
        "doc" | "all" => t.nodes.clone(),
        list => list
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .map(|w| {
                let n = match w {
                    "i*" | "f*" | "c*" => w
                        .parse::<JaxType>()
                        .map_err(|e| CliError::Usage(e.to_string())),
                    _ => DType::parse_code(w, a.system.naming())
                        .or_else(|_| w.parse::<DType>())
                        .map(JaxType::Strong)
                        .map_err(|e| CliError::Usage(e.to_string())),
                }?;
                if !t.nodes.contains(&n) {
                    return Err(usage!("{w} is not in the {} table", a.system));
                }
                Ok(n)
            })
            .collect::<Result<Vec<_>>>()?,
    };
    if types.is_empty() {
        return Err(usage!("--types lists no types"));
    }
    let marked: HashSet<(JaxType, JaxType)> = if a.diff == a.system {
        HashSet::new()
    } else {
        diff_view(a.system, a.diff, cfg, View::PromoteTypes)
            .into_iter()
            .map(|c| (c.row, c.col))
            .collect()
    };
    // Each cell: the result node (None: undefined) and whether it is marked.
    let cells: Vec<Vec<(Option<JaxType>, bool)>> = types
        .iter()
        .map(|r| {
            types
                .iter()
                .map(|c| (t.get(r, c).flatten().copied(), marked.contains(&(*r, *c))))
                .collect()
        })
        .collect();
    let cell_label = |c: &Option<JaxType>| c.map_or("-".to_string(), |n| label(n, naming));
    let heads: Vec<String> = types.iter().map(|n| label(*n, naming)).collect();
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
            // Each column as wide as its widest entry; row labels likewise.
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
            let _ = write!(out, "{:>lw$}", "");
            for (h, w) in heads.iter().zip(&widths) {
                let _ = write!(out, " {h:>w$}");
            }
            out.push('\n');
            for (h, row) in heads.iter().zip(&grid) {
                let _ = write!(out, "{h:>lw$}");
                for (c, w) in row.iter().zip(&widths) {
                    let _ = write!(out, " {c:>w$}");
                }
                out.push('\n');
            }
        }
        TableFormat::Json => {
            let mode_cfg = PromotionConfig {
                mode: if a.system == System::JaxStrict {
                    PromotionMode::Strict
                } else {
                    PromotionMode::Standard
                },
                ..cfg
            };
            let mut arr = Vec::new();
            for (r, row) in types.iter().zip(&cells) {
                for (c, (cell, _)) in types.iter().zip(row) {
                    let (an, bn) = (r.to_string(), c.to_string());
                    arr.push(match cell {
                        Some(JaxType::Strong(d)) => json!({"a": an, "b": bn, "dtype": d.name(), "weak": false}),
                        Some(weak) => json!({
                            "a": an, "b": bn,
                            "dtype": cfg.canonicalize_dtype(weak.numpy_dtype()).name(),
                            "weak": true,
                        }),
                        None if is_jax => match mode_cfg.join(*r, *c) {
                            Err(e) => json!({"a": an, "b": bn, "error": error_json(&e)["error"]}),
                            Ok(j) => json!({"a": an, "b": bn, "error": {
                                "kind": "Undefined",
                                "message": format!("the table has no cell for {r} and {c} (join {j})"),
                            }}),
                        },
                        None => json!({"a": an, "b": bn, "error": {
                            "kind": "Undefined",
                            "message": format!("{r} and {c} have no promotion in the {} table", a.system),
                        }}),
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
    let l = config(a.strict, a.x32).lattice();
    let nodes: Vec<JaxType> = l.nodes().to_vec();
    let edges: Vec<(JaxType, JaxType)> = nodes
        .iter()
        .flat_map(|n| l.immediately_higher(n).into_iter().map(move |h| (*n, h)))
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

fn lattice_svg(nodes: &[JaxType], edges: &[(JaxType, JaxType)]) -> String {
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
            let label = n.to_string();
            let size = Point::new(12.0 + 9.0 * label.len() as f64, 34.0);
            let shape = ShapeKind::new_box(&label);
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
