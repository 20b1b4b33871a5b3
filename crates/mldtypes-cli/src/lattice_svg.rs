//! The promotion lattice as an SVG picture, laid out without crossings of
//! boxes: the JAX page's 18 nodes at the positions of the page's generator
//! code (seed 002: `pos = {'b1': [0, 0], …}`), any other node set in layers
//! (each node one column right of its highest lower neighbour; an edge that
//! skips columns passes through a reserved slot in each column it crosses).

use std::fmt::Write as _;

use mldtypes::dtype::DType;
use mldtypes::promote::JaxType;

/// Seed 002's `pos` for the page's 18 nodes: (x, y) with y upward.
fn seed_position(n: JaxType) -> Option<(f64, f64)> {
    use DType::*;
    Some(match n {
        JaxType::Strong(Bool) => (0.0, 0.0),
        JaxType::Strong(UInt8) => (2.0, 0.0),
        JaxType::Strong(UInt16) => (3.0, 0.0),
        JaxType::Strong(UInt32) => (4.0, 0.0),
        JaxType::Strong(UInt64) => (5.0, 0.0),
        JaxType::WeakInt => (1.0, 1.0),
        JaxType::Strong(Int8) => (2.0, 2.0),
        JaxType::Strong(Int16) => (3.0, 2.0),
        JaxType::Strong(Int32) => (4.0, 2.0),
        JaxType::Strong(Int64) => (5.0, 2.0),
        JaxType::WeakFloat => (6.0, 1.0),
        JaxType::Strong(BFloat16) => (7.5, 0.6),
        JaxType::Strong(Float16) => (7.5, 1.4),
        JaxType::Strong(Float32) => (9.0, 1.0),
        JaxType::Strong(Float64) => (10.0, 1.0),
        JaxType::WeakComplex => (7.0, 2.0),
        JaxType::Strong(Complex64) => (10.0, 2.0),
        JaxType::Strong(Complex128) => (11.0, 2.0),
        _ => return None,
    })
}

/// Vertical order inside a column of the layered layout (top first): the
/// seed's rows (signed integers and complex on top, unsigned at the bottom),
/// sub-byte integers beside their 8-bit row, the small floats below the
/// 16-bit ones in `DType` order.
fn row_key(n: JaxType) -> f64 {
    if let Some((_, y)) = seed_position(n) {
        return 2.0 - y;
    }
    match n {
        JaxType::Strong(d) if d.is_integer() && d.kind() == mldtypes::dtype::Kind::Signed => {
            -1.0 + d.bits() as f64 / 10.0 - 1.0
        }
        JaxType::Strong(d) if d.is_integer() => 2.0 + d.bits() as f64 / 10.0,
        JaxType::Strong(d) => {
            3.0 + DType::ALL.iter().position(|x| *x == d).unwrap_or(0) as f64 / 100.0
        }
        _ => 1.0,
    }
}

const CHAR_W: f64 = 7.8;
const BOX_H: f64 = 26.0;
const MARGIN: f64 = 20.0;

fn box_width(label: &str) -> f64 {
    CHAR_W * label.chars().count() as f64 + 16.0
}

/// A placed node: centre and width.
struct Placed {
    node: JaxType,
    x: f64,
    y: f64,
    w: f64,
}

/// Draws `nodes` with `edges` (lower → higher). With `page_layout` (the
/// standard x64 lattice's 18 nodes of the JAX page, whose picture the seed's
/// positions were made for) at the page's positions; otherwise, and for any
/// other node set, in layers.
pub fn svg(
    nodes: &[JaxType],
    edges: &[(JaxType, JaxType)],
    title: &str,
    page_layout: bool,
) -> String {
    let doc = page_layout && nodes.iter().all(|n| seed_position(*n).is_some());
    let (placed, routes) = if doc {
        seed_layout(nodes, edges)
    } else {
        layered_layout(nodes, edges)
    };
    render(&placed, &routes, title)
}

/// An edge: its start, then each next point with whether the leg to it is an
/// S-curve (between columns) or a straight run (inside a column).
type Route = Vec<(f64, f64, bool)>;

fn seed_layout(nodes: &[JaxType], edges: &[(JaxType, JaxType)]) -> (Vec<Placed>, Vec<Route>) {
    const UX: f64 = 120.0;
    const UY: f64 = 62.0;
    let placed: Vec<Placed> = nodes
        .iter()
        .map(|&n| {
            let (x, y) = seed_position(n).unwrap_or((0.0, 0.0));
            let w = box_width(&n.to_string());
            Placed {
                node: n,
                x: MARGIN + 50.0 + x * UX,
                y: MARGIN + BOX_H / 2.0 + (2.0 - y) * UY,
                w,
            }
        })
        .collect();
    let at = |n: JaxType| placed.iter().position(|p| p.node == n);
    let routes = edges
        .iter()
        .filter_map(|(a, b)| {
            let (p, q) = (&placed[at(*a)?], &placed[at(*b)?]);
            Some(vec![
                (p.x + p.w / 2.0, p.y, false),
                (q.x - q.w / 2.0, q.y, true),
            ])
        })
        .collect();
    (placed, routes)
}

fn layered_layout(nodes: &[JaxType], edges: &[(JaxType, JaxType)]) -> (Vec<Placed>, Vec<Route>) {
    // Column: longest path from a minimal node.
    let mut layer = vec![0usize; nodes.len()];
    let idx = |n: JaxType| nodes.iter().position(|m| *m == n);
    for _ in 0..nodes.len() {
        let mut changed = false;
        for (a, b) in edges {
            if let (Some(i), Some(j)) = (idx(*a), idx(*b)) {
                if layer[j] < layer[i] + 1 {
                    layer[j] = layer[i] + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let columns = layer.iter().max().map_or(1, |m| m + 1);
    // Slots of each column: nodes, and one reserved slot per edge passing
    // through, each ordered by its row key.
    #[derive(Clone, Copy)]
    enum Slot {
        Node(usize),
        Pass(usize),
    }
    let mut slots: Vec<Vec<(f64, Slot)>> = vec![Vec::new(); columns];
    for (i, n) in nodes.iter().enumerate() {
        slots[layer[i]].push((row_key(*n), Slot::Node(i)));
    }
    for (e, (a, b)) in edges.iter().enumerate() {
        if let (Some(i), Some(j)) = (idx(*a), idx(*b)) {
            let (ka, kb) = (row_key(*a), row_key(*b));
            let span = (layer[j] - layer[i]) as f64;
            for (k, col) in slots
                .iter_mut()
                .enumerate()
                .take(layer[j])
                .skip(layer[i] + 1)
            {
                let t = (k - layer[i]) as f64 / span;
                col.push((ka + (kb - ka) * t, Slot::Pass(e)));
            }
        }
    }
    for col in &mut slots {
        col.sort_by(|x, y| x.0.total_cmp(&y.0));
    }
    // Column widths and x centres; rows 40 px apart, columns centred vertically.
    const DY: f64 = 40.0;
    const GAP: f64 = 70.0;
    let width_of = |s: &Slot| match s {
        Slot::Node(i) => box_width(&nodes[*i].to_string()),
        Slot::Pass(_) => 0.0,
    };
    let col_w: Vec<f64> = slots
        .iter()
        .map(|c| c.iter().map(|(_, s)| width_of(s)).fold(0.0, f64::max))
        .collect();
    let mut xs = Vec::with_capacity(columns);
    let mut x = MARGIN;
    for w in &col_w {
        xs.push(x + w / 2.0);
        x += w + GAP;
    }
    let tallest = slots.iter().map(|c| c.len()).max().unwrap_or(1) as f64;
    let mut placed = Vec::new();
    let mut pass: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); edges.len()];
    for (c, col) in slots.iter().enumerate() {
        let top = MARGIN + BOX_H / 2.0 + (tallest - col.len() as f64) * DY / 2.0;
        for (k, (_, s)) in col.iter().enumerate() {
            let y = top + k as f64 * DY;
            match *s {
                Slot::Node(i) => placed.push(Placed {
                    node: nodes[i],
                    x: xs[c],
                    y,
                    w: width_of(s),
                }),
                Slot::Pass(e) => pass[e].push((c, xs[c], y)),
            }
        }
    }
    let at = |n: JaxType| placed.iter().position(|p| p.node == n);
    let col_of = |n: JaxType| idx(n).map(|i| layer[i]);
    let routes = edges
        .iter()
        .enumerate()
        .filter_map(|(e, (a, b))| {
            let (p, q) = (&placed[at(*a)?], &placed[at(*b)?]);
            let (ca, cb) = (col_of(*a)?, col_of(*b)?);
            // Straight out of the source's column, S-curves between columns,
            // straight through reserved slots and into the target's column.
            let mut r = vec![(p.x + p.w / 2.0, p.y, false)];
            r.push((xs[ca] + col_w[ca] / 2.0, p.y, false));
            let mut through = pass[e].clone();
            through.sort_by_key(|t| t.0);
            for (c, x, y) in through {
                let half = col_w[c] / 2.0;
                r.push((x - half, y, true));
                r.push((x + half, y, false));
            }
            r.push((xs[cb] - col_w[cb] / 2.0, q.y, true));
            r.push((q.x - q.w / 2.0, q.y, false));
            Some(r)
        })
        .collect();
    (placed, routes)
}

fn render(placed: &[Placed], routes: &[Route], title: &str) -> String {
    let w = placed.iter().map(|p| p.x + p.w / 2.0).fold(0.0, f64::max) + MARGIN;
    let h = placed.iter().map(|p| p.y + BOX_H / 2.0).fold(0.0, f64::max) + MARGIN;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"13\">"
    );
    let _ = writeln!(s, "<title>{title}</title>");
    s.push_str("<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"6\" refX=\"8\" refY=\"3\" orient=\"auto\"><path d=\"M0,0 L8,3 L0,6 z\" fill=\"#555\"/></marker></defs>\n");
    s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    // Edges first, boxes on top. Each leg between columns is an S-curve;
    // straight runs through reserved slots.
    s.push_str("<g fill=\"none\" stroke=\"#555\" stroke-width=\"1.3\">\n");
    for r in routes {
        let mut d = format!("M{:.1},{:.1}", r[0].0, r[0].1);
        for pair in r.windows(2) {
            let ((x0, y0, _), (x1, y1, curve)) = (pair[0], pair[1]);
            if (x1 - x0).abs() < 0.05 && (y1 - y0).abs() < 0.05 {
                continue;
            }
            if curve {
                let m = (x0 + x1) / 2.0;
                let _ = write!(d, " C{m:.1},{y0:.1} {m:.1},{y1:.1} {x1:.1},{y1:.1}");
            } else {
                let _ = write!(d, " L{x1:.1},{y1:.1}");
            }
        }
        let _ = writeln!(s, "<path d=\"{d}\" marker-end=\"url(#arrow)\"/>");
    }
    s.push_str("</g>\n");
    for p in placed {
        let label = p.node.to_string();
        let fill = if p.node.is_weak() {
            "#e8eef8"
        } else {
            "#eeeeee"
        };
        let _ = writeln!(
            s,
            "<g><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BOX_H}\" rx=\"6\" fill=\"{fill}\" stroke=\"#333\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"central\">{label}</text></g>",
            p.x - p.w / 2.0,
            p.y - BOX_H / 2.0,
            p.w,
            p.x,
            p.y
        );
    }
    s.push_str("</svg>\n");
    s
}
