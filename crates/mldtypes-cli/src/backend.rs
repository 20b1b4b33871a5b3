//! The one place where the command line talks to the `mldtypes` library.
//!
//! Every subcommand calls the functions of this module, never the library
//! directly, so the rest of the crate is written against stable internal names.
//! Sections marked `TEMPORARY` stand in for library APIs that are not available
//! yet and are replaced by the real calls as they appear.

use mldtypes::dtype::{DType, Kind};
use mldtypes::format::{Format, Overflow};

use crate::error::{usage, Result};

// ---------------------------------------------------------------------------
// DType names
// ---------------------------------------------------------------------------

/// Parses a dtype name, NumPy code or alias.
///
/// TEMPORARY: canonical names, NumPy itemsize codes and a few aliases, until
/// `DType: FromStr` lands.
pub fn parse_dtype(s: &str) -> Result<DType> {
    let t = s.trim().trim_start_matches(['<', '=', '|']);
    if let Some(d) = DType::ALL.iter().find(|d| d.name() == t) {
        return Ok(*d);
    }
    let d = match t {
        "?" | "b1" | "bool_" => DType::Bool,
        "i1" => DType::Int8,
        "i2" => DType::Int16,
        "i4" => DType::Int32,
        "i8" => DType::Int64,
        "u1" => DType::UInt8,
        "u2" => DType::UInt16,
        "u4" => DType::UInt32,
        "u8" => DType::UInt64,
        "bf" | "bf16" => DType::BFloat16,
        "f2" | "fp16" | "half" | "e" => DType::Float16,
        "f4" | "float" | "fp32" | "f" => DType::Float32,
        "f8" | "double" | "fp64" | "d" => DType::Float64,
        "c8" | "F" => DType::Complex64,
        "c16" | "D" => DType::Complex128,
        _ => {
            let mut near: Vec<&str> = DType::ALL
                .iter()
                .map(|d| d.name())
                .filter(|n| n.starts_with(t.get(..3).unwrap_or(t)))
                .collect();
            near.truncate(4);
            return Err(if near.is_empty() {
                usage!("unknown dtype {s:?}")
            } else {
                usage!("unknown dtype {s:?}; did you mean {}?", near.join(", "))
            });
        }
    };
    Ok(d)
}

// ---------------------------------------------------------------------------
// Scalar codec
// ---------------------------------------------------------------------------

/// The format descriptor of a real float dtype narrower than float32.
pub fn small_float_format(d: DType) -> Option<Format> {
    if d.is_float() {
        d.format()
    } else {
        None
    }
}

/// Decodes one code of `fmt` exactly to `f64`.
///
/// TEMPORARY: decodes from the descriptor until `float::core::decode_f64` lands.
pub fn decode_f64(fmt: &Format, code: u32) -> f64 {
    let code = code & fmt.code_mask();
    if fmt.is_nan_code(code) {
        return f64::NAN;
    }
    let neg = code & fmt.sign_mask() != 0;
    let mag = code & !fmt.sign_mask();
    let e = (mag & fmt.exp_mask()) >> fmt.man_bits;
    let m = mag & fmt.man_mask();
    if fmt.has_infinity() && e == fmt.max_biased_exp() {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let scale = 2f64.powi(-(fmt.man_bits as i32));
    let v = if e == 0 && fmt.has_zero {
        m as f64 * scale * 2f64.powi(1 - fmt.bias)
    } else {
        (1.0 + m as f64 * scale) * 2f64.powi(e as i32 - fmt.bias)
    };
    if neg {
        -v
    } else {
        v
    }
}

/// Rounds `x` to the nearest code of `fmt` (round-to-nearest-even).
///
/// TEMPORARY: only bfloat16 and float16 (through `half`) until
/// `float::core::encode_f64` lands; other formats report a usage error.
pub fn encode_f64(fmt: &Format, x: f64, ov: Overflow) -> Result<u32> {
    let code = match fmt.name {
        "float16" => half::f16::from_f64(x).to_bits() as u32,
        "bfloat16" => half::bf16::from_f32(x as f32).to_bits() as u32,
        other => {
            return Err(usage!(
                "conversion to {other} is not available in this build"
            ))
        }
    };
    Ok(saturate(fmt, code, x, ov))
}

/// Rounds the float32 `x` to the nearest code of `fmt`.
///
/// TEMPORARY: see [`encode_f64`].
pub fn encode_f32(fmt: &Format, x: f32, ov: Overflow) -> Result<u32> {
    let code = match fmt.name {
        "float16" => half::f16::from_f32(x).to_bits() as u32,
        "bfloat16" => half::bf16::from_f32(x).to_bits() as u32,
        other => {
            return Err(usage!(
                "conversion to {other} is not available in this build"
            ))
        }
    };
    Ok(saturate(fmt, code, x as f64, ov))
}

/// TEMPORARY: saturation on top of the `half` conversions.
fn saturate(fmt: &Format, code: u32, x: f64, ov: Overflow) -> u32 {
    if ov == Overflow::Saturating
        && x.is_finite()
        && Some(code & !fmt.sign_mask()) == fmt.inf_code()
    {
        (code & fmt.sign_mask()) | fmt.max_code()
    } else {
        code
    }
}

// ---------------------------------------------------------------------------
// Bulk conversion
// ---------------------------------------------------------------------------

/// Number of bytes `n` elements of `d` occupy in safetensors storage
/// (bit-packed for 4- and 6-bit floats), or `None` if `n` elements cannot be
/// packed into whole bytes.
pub fn storage_bytes(d: DType, n: usize) -> Option<usize> {
    match d.bits() {
        4 if d.is_float() => (n % 2 == 0).then_some(n / 2),
        6 if d.is_float() => (n % 4 == 0).then_some(n / 4 * 3),
        _ => Some(n * d.itemsize()),
    }
}

/// Converts `src` (elements of `from`, in safetensors storage) into `dst`
/// (elements of `to`, in safetensors storage, bit-packed where the tag is).
///
/// TEMPORARY: float32/float64/float16/bfloat16 sources, float32/float16/bfloat16
/// targets, element by element, until `cast::cast_bytes` and packing land.
pub fn cast_storage(
    src: &[u8],
    from: DType,
    dst: &mut [u8],
    to: DType,
    ov: Overflow,
) -> Result<()> {
    let n = src.len() / from.itemsize();
    let read = |i: usize| -> Result<f32> {
        let b = &src[i * from.itemsize()..(i + 1) * from.itemsize()];
        Ok(match from {
            DType::Float32 => f32::from_le_bytes(b.try_into().unwrap()),
            DType::Float64 => f64::from_le_bytes(b.try_into().unwrap()) as f32,
            DType::Float16 => half::f16::from_le_bytes(b.try_into().unwrap()).to_f32(),
            DType::BFloat16 => half::bf16::from_le_bytes(b.try_into().unwrap()).to_f32(),
            _ => {
                return Err(usage!(
                    "conversion from {from} is not available in this build"
                ))
            }
        })
    };
    for i in 0..n {
        let x = read(i)?;
        match to {
            DType::Float32 => dst[i * 4..i * 4 + 4].copy_from_slice(&x.to_le_bytes()),
            DType::Float16 | DType::BFloat16 => {
                let code = encode_f32(&to.format().unwrap(), x, ov)? as u16;
                dst[i * 2..i * 2 + 2].copy_from_slice(&code.to_le_bytes());
            }
            _ => return Err(usage!("conversion to {to} is not available in this build")),
        }
    }
    Ok(())
}

/// Whether converting tensors from `from` to `to` is supported.
pub fn can_cast(from: DType, to: DType) -> bool {
    matches!(
        from,
        DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16
    ) && matches!(to, DType::Float32 | DType::Float16 | DType::BFloat16)
}

// ---------------------------------------------------------------------------
// finfo / iinfo
// ---------------------------------------------------------------------------

/// One field of finfo/iinfo: its ml_dtypes name and value.
#[derive(Clone, Debug, PartialEq)]
pub enum InfoValue {
    /// An integer field (`bits`, `nmant`, `min` of iinfo, …).
    Int(i128),
    /// A float field (`eps`, `max`, …), exact in f64.
    Float(f64),
    /// A text field (`dtype`, `kind`).
    Text(String),
}

/// finfo (floats) or iinfo (integers, bool excluded) of `d`, as ordered fields.
///
/// TEMPORARY: derived from the format descriptor until `mldtypes::info` lands.
pub fn info(d: DType) -> Result<Vec<(&'static str, InfoValue)>> {
    use InfoValue::*;
    match d.kind() {
        Kind::Signed | Kind::Unsigned => {
            let bits = d.bits();
            let (min, max) = if d.kind() == Kind::Signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            Ok(vec![
                ("dtype", Text(d.name().into())),
                ("kind", Text(if min < 0 { "i" } else { "u" }.into())),
                ("bits", Int(bits as i128)),
                ("min", Int(min)),
                ("max", Int(max)),
            ])
        }
        Kind::Float => {
            let fmt = match d {
                DType::Float32 => {
                    return Err(usage!("finfo(float32) is not available in this build"))
                }
                DType::Float64 => {
                    return Err(usage!("finfo(float64) is not available in this build"))
                }
                _ => d.format().unwrap(),
            };
            Ok(vec![
                ("dtype", Text(d.name().into())),
                ("bits", Int(fmt.bits() as i128)),
                ("eps", Float(fmt.epsilon())),
                ("max", Float(fmt.max_finite())),
                (
                    "min",
                    Float(if fmt.signed {
                        -fmt.max_finite()
                    } else {
                        fmt.min_positive_normal()
                    }),
                ),
                ("smallest_normal", Float(fmt.min_positive_normal())),
                ("smallest_subnormal", Float(fmt.min_positive_subnormal())),
                ("nmant", Int(fmt.man_bits as i128)),
                ("nexp", Int(fmt.exp_bits as i128)),
                ("maxexp", Int(fmt.max_exp() as i128 + 1)),
                ("minexp", Int(fmt.min_exp() as i128)),
            ])
        }
        _ => Err(usage!("{d} has neither finfo nor iinfo")),
    }
}

// ---------------------------------------------------------------------------
// Type promotion
// ---------------------------------------------------------------------------

/// An operand of a promotion query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A strongly typed value of a dtype.
    Strong(DType),
    /// A weakly typed value of a dtype (`weak:DTYPE`).
    Weak(DType),
    /// A Python `int` scalar (`i*`).
    PyInt,
    /// A Python `float` scalar (`f*`).
    PyFloat,
    /// A Python `complex` scalar (`c*`).
    PyComplex,
}

/// Promotion mode and x64 flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// `jax_numpy_dtype_promotion=strict`.
    pub strict: bool,
    /// `jax_enable_x64`.
    pub x64: bool,
}

/// A promotion that has no result: JAX's error class name and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromotionFailure {
    /// The exception class, e.g. `TypePromotionError`.
    pub kind: String,
    /// The message text.
    pub message: String,
}

/// The promotion systems of `table --system`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum System {
    /// jax.numpy, standard mode (the current JAX page).
    Jax,
    /// jax.numpy, strict mode.
    JaxStrict,
    /// JAX's table of 2020 (no weak types).
    #[value(name = "jax-2020")]
    Jax2020,
    /// jax.lax (no implicit promotion).
    JaxLax,
    /// NumPy's value-independent table (JEP 9407 appendix).
    Numpy,
    /// PyTorch (JEP 9407 appendix).
    Torch,
    /// TensorFlow (JEP 9407 appendix).
    Tensorflow,
}

/// A lattice node: a dtype or one of the weak kinds `i*`, `f*`, `c*`.
///
/// TEMPORARY lattice, transcribed from the JAX lattice of the promotion issue,
/// until `mldtypes::promote` lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A strong dtype.
    D(DType),
    /// `i*`.
    I,
    /// `f*`.
    F,
    /// `c*`.
    C,
}

impl Node {
    /// Name as in the seed page's table (`i*` etc.) or the dtype's canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Node::D(d) => d.name(),
            Node::I => "i*",
            Node::F => "f*",
            Node::C => "c*",
        }
    }
}

fn lattice_edges(cfg: Config) -> Vec<(Node, Node)> {
    use DType::*;
    use Node::*;
    let mut e = Vec::new();
    let small = [
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
    ];
    if cfg.strict {
        for d in [
            Int1, Int2, Int4, Int8, Int16, Int32, Int64, UInt1, UInt2, UInt4, UInt8, UInt16,
            UInt32, UInt64,
        ] {
            e.push((I, D(d)));
        }
        e.push((I, F));
        for d in small {
            e.push((F, D(d)));
        }
        e.push((F, C));
        e.push((C, D(Complex64)));
        e.push((C, D(Complex128)));
        return e;
    }
    e.push((D(Bool), I));
    for d in [UInt8, UInt2, UInt4, UInt1, Int8, Int2, Int4, Int1] {
        e.push((I, D(d)));
    }
    e.extend([
        (D(UInt8), D(Int16)),
        (D(UInt8), D(UInt16)),
        (D(UInt16), D(Int32)),
        (D(UInt16), D(UInt32)),
        (D(UInt32), D(if cfg.x64 { Int64 } else { Int32 })),
        (D(UInt32), D(UInt64)),
        (D(UInt64), F),
        (D(Int8), D(Int16)),
        (D(Int16), D(Int32)),
        (D(Int32), D(Int64)),
        (D(Int64), F),
    ]);
    for d in &small[..13] {
        e.push((F, D(*d)));
    }
    e.push((F, C));
    e.extend([
        (D(BFloat16), D(Float32)),
        (D(Float16), D(Float32)),
        (D(Float32), D(Float64)),
        (D(Float32), D(Complex64)),
        (D(Float64), D(Complex128)),
        (C, D(Complex64)),
        (D(Complex64), D(Complex128)),
    ]);
    e
}

/// Nodes and "immediately higher" edges of the JAX lattice for `cfg`.
pub fn lattice(cfg: Config) -> (Vec<Node>, Vec<(Node, Node)>) {
    let edges = lattice_edges(cfg);
    let mut nodes: Vec<Node> = vec![Node::I, Node::F, Node::C];
    nodes.extend(
        DType::ALL
            .iter()
            .filter(|d| !matches!(d, DType::Complex32 | DType::BComplex32))
            .map(|d| Node::D(*d)),
    );
    (nodes, edges)
}

fn upper(cfg: Config, n: Node) -> Vec<Node> {
    let edges = lattice_edges(cfg);
    let mut seen = vec![n];
    let mut i = 0;
    while i < seen.len() {
        let cur = seen[i];
        for (a, b) in &edges {
            if *a == cur && !seen.contains(b) {
                seen.push(*b);
            }
        }
        i += 1;
    }
    seen
}

fn canonical(d: DType, x64: bool) -> DType {
    if x64 {
        return d;
    }
    match d {
        DType::Int64 => DType::Int32,
        DType::UInt64 => DType::UInt32,
        DType::Float64 => DType::Float32,
        DType::Complex128 => DType::Complex64,
        d => d,
    }
}

fn weak_default(n: Node, x64: bool) -> DType {
    match n {
        Node::I => canonical(DType::Int64, x64),
        Node::F => canonical(DType::Float64, x64),
        Node::C => canonical(DType::Complex128, x64),
        Node::D(d) => d,
    }
}

fn weak_node(d: DType) -> Node {
    match d.kind() {
        Kind::Bool => Node::D(DType::Bool),
        Kind::Signed | Kind::Unsigned => Node::I,
        Kind::Float => Node::F,
        Kind::Complex => Node::C,
    }
}

fn failure(ops: &[Operand], cfg: Config) -> PromotionFailure {
    let names: Vec<String> = ops
        .iter()
        .map(|o| format!("'{}'", operand_dtype(*o, cfg.x64).0))
        .collect();
    let list = if names.len() == 1 {
        format!("({},)", names[0])
    } else {
        format!("({})", names.join(", "))
    };
    let message = if cfg.strict {
        format!("Input dtypes {list} have no available implicit dtype promotion path when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.")
    } else {
        format!("Input dtypes {list} have no available implicit dtype promotion path. Try explicitly casting inputs to the desired output type.")
    };
    PromotionFailure {
        kind: "TypePromotionError".into(),
        message,
    }
}

fn operand_dtype(o: Operand, x64: bool) -> (DType, bool) {
    match o {
        Operand::Strong(d) => (canonical(d, x64), false),
        Operand::Weak(d) => (canonical(d, x64), d != DType::Bool),
        Operand::PyInt => (canonical(DType::Int64, x64), true),
        Operand::PyFloat => (canonical(DType::Float64, x64), true),
        Operand::PyComplex => (canonical(DType::Complex128, x64), true),
    }
}

fn join(cfg: Config, nodes: &[Node]) -> Option<Node> {
    let mut common = upper(cfg, nodes[0]);
    for n in &nodes[1..] {
        let u = upper(cfg, *n);
        common.retain(|x| u.contains(x));
    }
    common.iter().copied().find(|c| {
        let u = upper(cfg, *c);
        common.iter().all(|x| u.contains(x))
    })
}

/// `jax.dtypes.result_type(*ops, return_weak_type_flag=True)`.
///
/// TEMPORARY: see [`Node`].
pub fn result_type(ops: &[Operand], cfg: Config) -> Result<(DType, bool), PromotionFailure> {
    if ops.is_empty() {
        return Err(PromotionFailure {
            kind: "ValueError".into(),
            message: "at least one array or dtype is required".into(),
        });
    }
    for o in ops {
        if let Operand::Strong(d) | Operand::Weak(d) = o {
            if matches!(d, DType::Complex32 | DType::BComplex32) {
                return Err(PromotionFailure {
                    kind: "TypeError".into(),
                    message: format!("{d} is not a valid dtype for JAX type promotion."),
                });
            }
        }
    }
    let pairs: Vec<(DType, bool)> = ops.iter().map(|o| operand_dtype(*o, cfg.x64)).collect();
    let (d, w) = if pairs.len() == 1 {
        pairs[0]
    } else if pairs.iter().all(|p| p.0 == pairs[0].0) && !pairs.iter().all(|p| p.1) {
        (pairs[0].0, false)
    } else if pairs.iter().all(|p| p.1) {
        let nodes: Vec<Node> = pairs.iter().map(|p| Node::D(p.0)).collect();
        match join(cfg, &nodes) {
            Some(Node::D(d)) => (d, true),
            Some(n) => (weak_default(n, cfg.x64), true),
            None => return Err(failure(ops, cfg)),
        }
    } else {
        let nodes: Vec<Node> = pairs
            .iter()
            .map(|p| if p.1 { weak_node(p.0) } else { Node::D(p.0) })
            .collect();
        match join(cfg, &nodes) {
            Some(Node::D(d)) => (d, false),
            Some(n) => (weak_default(n, cfg.x64), true),
            None => return Err(failure(ops, cfg)),
        }
    };
    Ok((canonical(d, cfg.x64), w && d != DType::Bool))
}

/// For each operand, the lattice path (node names) from its node up to the
/// node of the result.
///
/// TEMPORARY: see [`Node`].
pub fn explain(ops: &[Operand], cfg: Config) -> Result<Vec<Vec<String>>, PromotionFailure> {
    let (d, weak) = result_type(ops, cfg)?;
    let target = if weak { weak_node(d) } else { Node::D(d) };
    let edges = lattice_edges(cfg);
    Ok(ops
        .iter()
        .map(|o| {
            let (od, ow) = operand_dtype(*o, cfg.x64);
            let start = if ow { weak_node(od) } else { Node::D(od) };
            // Breadth-first search for a shortest path.
            let mut prev: Vec<(Node, Option<Node>)> = vec![(start, None)];
            let mut i = 0;
            while i < prev.len() && prev[i].0 != target {
                let cur = prev[i].0;
                for (a, b) in &edges {
                    if *a == cur && !prev.iter().any(|p| p.0 == *b) {
                        prev.push((*b, Some(cur)));
                    }
                }
                i += 1;
            }
            let mut path = vec![target.name().to_string()];
            let mut cur = target;
            while let Some(p) = prev.iter().find(|p| p.0 == cur).and_then(|p| p.1) {
                path.push(p.name().to_string());
                cur = p;
            }
            path.reverse();
            path
        })
        .collect())
}

/// One cell of `system`'s binary promotion table: the result dtype and weak
/// flag, or the failure (`-` cells of the seed tables).
///
/// TEMPORARY: only the two jax.numpy systems until `mldtypes::promote` lands.
pub fn table_cell(
    system: System,
    x64: bool,
    a: Operand,
    b: Operand,
) -> Result<Result<(DType, bool), PromotionFailure>> {
    let strict = match system {
        System::Jax => false,
        System::JaxStrict => true,
        other => {
            return Err(usage!(
                "the {} table is not available in this build",
                clap::ValueEnum::to_possible_value(&other)
                    .unwrap()
                    .get_name()
            ))
        }
    };
    Ok(result_type(&[a, b], Config { strict, x64 }))
}

/// Whether `system` and `other` disagree on the cell `(a, b)` (a cell missing
/// from one of them counts as different).
///
/// TEMPORARY: systems without a table in this build never differ.
pub fn differs(system: System, other: System, x64: bool, a: Operand, b: Operand) -> Result<bool> {
    let x = table_cell(system, x64, a, b)?;
    Ok(match table_cell(other, x64, a, b) {
        Ok(y) => x != y,
        Err(_) => false,
    })
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

/// ns per element for each benchmarked conversion.
///
/// TEMPORARY: times [`cast_storage`] for the conversions it supports until
/// `cast::bench::run` lands.
pub fn bench(n: usize) -> Result<Vec<(DType, DType, f64)>> {
    let mut v = Vec::new();
    for to in [DType::BFloat16, DType::Float16] {
        v.push((
            DType::Float32,
            to,
            crate::bench::time_cast(DType::Float32, to, n)?,
        ));
    }
    Ok(v)
}
