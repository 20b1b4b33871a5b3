//! Every promotion table printed in the seed documents, reproduced cell for
//! cell; the seeds' green cells as system diffs; lattice properties.
//!
//! The seed files are read at test time from the copies committed under
//! `tests/vectors/promote/seeds/`.

use mldtypes::dtype::{DType, Naming};
use mldtypes::promote::jax::{JaxType, PromotionConfig, PromotionMode};
use mldtypes::promote::lattice::{BinaryTable, Lattice};
use mldtypes::promote::tables::{diff_view, parse_cell, parse_table, table, System, View};

fn seed(prefix: &str) -> String {
    let dir = format!("{}/tests/vectors/promote/seeds", env!("CARGO_MANIFEST_DIR"));
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("seed {prefix} missing"));
    std::fs::read_to_string(entry).unwrap()
}

const X64: PromotionConfig = PromotionConfig {
    mode: PromotionMode::Standard,
    x64: true,
};

/// Parses the `<table id="types">` HTML of seeds 000/002: the table and its
/// green (`class="d"`) cells.
fn parse_html(text: &str, naming: Naming) -> (BinaryTable<JaxType>, Vec<(JaxType, JaxType)>) {
    let mut rows: Vec<Vec<(String, bool)>> = Vec::new();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("<tr>"))
    {
        let mut cells = Vec::new();
        for piece in line.split("<t").skip(1) {
            if !(piece.starts_with('d') || piece.starts_with('h')) {
                continue;
            }
            let open_end = piece.find('>').unwrap();
            let body = &piece[open_end + 1..];
            let text = &body[..body.find('<').unwrap()];
            cells.push((text.to_string(), piece[..open_end].contains("class=\"d\"")));
        }
        rows.push(cells);
    }
    let labels: Vec<JaxType> = rows[0][1..]
        .iter()
        .map(|(c, _)| parse_cell(c, naming).unwrap().unwrap())
        .collect();
    let mut cells = Vec::new();
    let mut green = Vec::new();
    for (r, row) in rows[1..].iter().enumerate() {
        assert_eq!(parse_cell(&row[0].0, naming).unwrap(), Some(labels[r]));
        assert_eq!(row.len(), labels.len() + 1);
        for (c, (text, g)) in row[1..].iter().enumerate() {
            cells.push(parse_cell(text, naming).unwrap());
            if *g {
                green.push((labels[r], labels[c]));
            }
        }
    }
    (
        BinaryTable::new(labels, cells).expect("square table"),
        green,
    )
}

fn assert_same(got: &BinaryTable<JaxType>, want: &BinaryTable<JaxType>, what: &str) -> usize {
    assert_eq!(got.nodes(), want.nodes(), "{what}: labels");
    for (k, (g, w)) in got.cells().iter().zip(want.cells()).enumerate() {
        let n = want.nodes().len();
        assert_eq!(
            g,
            w,
            "{what}: row {} col {}",
            want.nodes()[k / n],
            want.nodes()[k % n]
        );
    }
    want.cells().len()
}

fn green_of(system: System, numpy_nodes: &[JaxType]) -> Vec<(JaxType, JaxType)> {
    let mut d: Vec<(JaxType, JaxType)> = diff_view(system, System::NumPy, X64, View::PromoteTypes)
        .into_iter()
        .filter(|c| numpy_nodes.contains(&c.row) && numpy_nodes.contains(&c.col))
        .map(|c| (c.row, c.col))
        .collect();
    d.sort();
    d
}

#[test]
fn seed_002_current_jax_table_and_green_cells() {
    let (want, mut green) = parse_html(&seed("002_"), Naming::Bytes);
    assert_eq!(want.nodes().len(), 18);
    let got = table(System::Jax, X64).restrict(want.nodes());
    let n = assert_same(&got, &want, "seed 002");
    // The green cells are exactly where jnp.promote_types differs from
    // np.promote_types (or bfloat16 is involved, which NumPy lacks).
    green.sort();
    assert_eq!(green_of(System::Jax, want.nodes()), green);
    eprintln!("seed 002: {n} cells, {} green cells", green.len());
}

#[test]
fn seed_000_and_004_jax_2020_table() {
    let (want, mut green) = parse_html(&seed("000_"), Naming::Legacy2020);
    assert_eq!(want.nodes().len(), 15);
    let n0 = assert_same(&table(System::Jax2020, X64), &want, "seed 000");
    green.sort();
    assert_eq!(green_of(System::Jax2020, want.nodes()), green);
    let text = seed("004_");
    let start = text.find("b1 | u1").unwrap();
    let end = text.find("Jax’s type promotion rules differ").unwrap();
    let rendered = parse_table(&text[start..end], Naming::Legacy2020).unwrap();
    let n4 = assert_same(&table(System::Jax2020, X64), &rendered, "seed 004");
    eprintln!(
        "seed 000: {n0} cells, {} green; seed 004: {n4} cells",
        green.len()
    );
}

/// The pipe tables of seed 003 (JEP 9407): Python's, then NumPy, TensorFlow,
/// PyTorch, jax.numpy, jax.lax.
fn jep_tables() -> (String, Vec<String>) {
    let text = seed("003_");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_end().ends_with('|') && !l.starts_with("---"))
        .collect();
    assert_eq!(lines.len(), 4 + 5 * 19);
    let python = lines[..4].join("\n");
    let tables = lines[4..].chunks(19).map(|c| c.join("\n")).collect();
    (python, tables)
}

#[test]
fn seed_003_jep_appendix_tables() {
    let (python, tables) = jep_tables();
    // Python's int/float/complex table is the join table of int -> float -> complex.
    let l = Lattice::new_complete(&[("int", vec!["float"]), ("float", vec!["complex"])]).unwrap();
    let mut rows = python.lines().skip(1);
    for a in ["int", "float", "complex"] {
        let cells: Vec<&str> = rows
            .next()
            .unwrap()
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells[0], a);
        for (b, want) in ["int", "float", "complex"].iter().zip(&cells[1..]) {
            assert_eq!(l.join(&a, b), Some(*want));
        }
    }
    let mut total = 9;
    for (text, system) in tables.iter().zip([
        System::NumPy,
        System::TensorFlow,
        System::Torch,
        System::Jax,
        System::JaxLax,
    ]) {
        let want = parse_table(text, Naming::Bits).unwrap();
        let got = table(system, X64).restrict(want.nodes());
        total += assert_same(&got, &want, &format!("seed 003 {system}"));
    }
    eprintln!("seed 003: {total} cells");
}

#[test]
fn numpy_table_is_not_associative() {
    let t = table(System::NumPy, X64);
    let i8_ = JaxType::Strong(DType::Int8);
    let u8_ = JaxType::Strong(DType::UInt8);
    let f16 = JaxType::Strong(DType::Float16);
    let bad = t.non_associative_triples();
    // (int8 + uint8) + float16 = float32, int8 + (uint8 + float16) = float16.
    assert!(bad.contains(&(i8_, u8_, f16)), "{} triples", bad.len());
    assert!(t.non_commutative_pairs().is_empty());
    // bfloat16 is undefined in NumPy; Python scalars combine to 64-bit types.
    assert_eq!(
        t.non_idempotent(),
        vec![
            JaxType::Strong(DType::BFloat16),
            JaxType::WeakInt,
            JaxType::WeakFloat,
            JaxType::WeakComplex
        ]
    );
    // TensorFlow's table is asymmetric, as the JEP says.
    assert!(!table(System::TensorFlow, X64)
        .non_commutative_pairs()
        .is_empty());
    eprintln!("numpy: {} non-associative triples", bad.len());
}

#[test]
fn jax_lattices_have_lattice_properties() {
    for mode in [PromotionMode::Standard, PromotionMode::Strict] {
        for x64 in [false, true] {
            let t = PromotionConfig { mode, x64 }.lattice().table();
            assert_eq!(t.nodes().len(), 35);
            assert_eq!(t.non_commutative_pairs(), vec![], "{mode:?} x64={x64}");
            assert_eq!(t.non_idempotent(), vec![], "{mode:?} x64={x64}");
            assert_eq!(t.non_associative_triples(), vec![], "{mode:?} x64={x64}");
        }
    }
    for s in [System::Jax2020, System::Torch] {
        let t = table(s, X64);
        assert!(t.non_commutative_pairs().is_empty(), "{s}");
    }
}

#[test]
fn seed_lattice_picture_edges() {
    // The standard lattice restricted to seed 002's 18 nodes has exactly the
    // picture's edges (the dict in seed 002's figure code) as its covering
    // relation.
    let picture: &[(&str, &[&str])] = &[
        ("b1", &["i*"]),
        ("u1", &["u2", "i2"]),
        ("u2", &["i4", "u4"]),
        ("u4", &["u8", "i8"]),
        ("u8", &["f*"]),
        ("i*", &["u1", "i1"]),
        ("i1", &["i2"]),
        ("i2", &["i4"]),
        ("i4", &["i8"]),
        ("i8", &["f*"]),
        ("f*", &["c*", "f2", "bf"]),
        ("bf", &["f4"]),
        ("f2", &["f4"]),
        ("f4", &["c8", "f8"]),
        ("f8", &["c16"]),
        ("c*", &["c8"]),
        ("c8", &["c16"]),
    ];
    let edges: Vec<(JaxType, Vec<JaxType>)> = picture
        .iter()
        .map(|(a, ups)| {
            let p = |s: &str| parse_cell(s, Naming::Bytes).unwrap().unwrap();
            (p(a), ups.iter().map(|u| p(u)).collect())
        })
        .collect();
    let pic = Lattice::new_complete(&edges).unwrap().table();
    let ours = table(System::Jax, X64).restrict(pic.nodes());
    assert_same(&ours, &pic, "seed 002 picture");
}
