// Fuzzed entry points: each takes arbitrary bytes and must return without
// panicking, whatever the input. Errors are fine; panics, overflows and
// out-of-bounds accesses are the bugs these look for. Where a result can be
// checked cheaply (a parsed name prints back, a packed buffer unpacks to the
// codes), it is.

use mldtypes::cast::{self, pack};
use mldtypes::dtype::{DType, Naming};
use mldtypes::format::{self, Overflow};
use mldtypes::promote::tables::{parse_table, System};
use mldtypes::promote::{JaxType, Operand, PromotionConfig, PromotionMode};

/// Inputs longer than this are cut (the parsers are linear; longer inputs
/// only slow the fuzzer down).
const MAX_INPUT: usize = 4096;

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(&data[..data.len().min(MAX_INPUT)]).into_owned()
}

const CONFIGS: [PromotionConfig; 4] = [
    PromotionConfig {
        mode: PromotionMode::Standard,
        x64: true,
    },
    PromotionConfig {
        mode: PromotionMode::Standard,
        x64: false,
    },
    PromotionConfig {
        mode: PromotionMode::Strict,
        x64: true,
    },
    PromotionConfig {
        mode: PromotionMode::Strict,
        x64: false,
    },
];

/// Every dtype-name parser: the command line's vocabulary, NumPy's reading,
/// each seed naming, lattice nodes and system names. A parsed dtype's name
/// parses back to it.
pub fn dtype_names(data: &[u8]) {
    let s = text(data);
    if let Ok(d) = DType::parse_name(&s) {
        assert_eq!(DType::parse_name(d.name()), Ok(d));
    }
    if let Ok(d) = s.parse::<DType>() {
        assert_eq!(d.name().parse::<DType>(), Ok(d));
    }
    for n in Naming::ALL {
        if let Ok(d) = DType::parse_code(&s, n) {
            assert_eq!(DType::parse_code(d.code(n), n), Ok(d));
        }
    }
    let _ = s.parse::<JaxType>();
    let _ = s.parse::<System>();
    if let Err(e) = DType::parse_name(&s) {
        // Messages stay short whatever the input.
        assert!(e.to_string().len() < 1000);
    }
}

/// The number parser of every format (decimal and hex-float text) and the
/// shortest round-trip printer: a parsed code prints as text that parses
/// back to the same code.
pub fn numbers(data: &[u8]) {
    let s = text(data);
    for f in format::ALL {
        if let Ok(code) = mldtypes::float::parse::parse_code(f, &s) {
            assert!(code <= f.code_mask(), "{}: {code:#x}", f.name);
        }
    }
    if let Ok(x) = s.parse::<mldtypes::bfloat16>() {
        let back: mldtypes::bfloat16 = x.to_string().parse().expect("printed text parses");
        assert!(back.to_bits() == x.to_bits() || x.is_nan());
    }
    if let Ok(x) = s.parse::<mldtypes::float8_e4m3fn>() {
        let back: mldtypes::float8_e4m3fn = x.to_string().parse().expect("printed text parses");
        assert!(back.to_bits() == x.to_bits() || x.is_nan());
    }
}

/// Operand lists (split at spaces and commas) through `result_type` and
/// `lattice_result_type` under the four configurations; the result does not
/// depend on the operands' order except for the error's input list.
pub fn operands(data: &[u8]) {
    let s = text(data);
    let ops: Vec<Operand> = s
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .take(64)
        .filter_map(|w| Operand::parse_name(w).ok().or_else(|| w.parse().ok()))
        .collect();
    for cfg in CONFIGS {
        let r = cfg.result_type(&ops);
        let _ = cfg.lattice_result_type(&ops);
        let mut rev = ops.clone();
        rev.reverse();
        assert_eq!(r.is_ok(), cfg.result_type(&rev).is_ok());
        if let (Ok(a), Ok(b)) = (&r, cfg.result_type(&rev)) {
            assert_eq!(*a, b);
        }
        for pair in ops.windows(2) {
            if let (Ok(a), Ok(b)) = (cfg.lattice_node(pair[0]), cfg.lattice_node(pair[1])) {
                let _ = cfg.join(a, b);
                let _ = cfg.promote_types(a, b);
                let _ = cfg.explain(&[a, b]);
            }
        }
    }
}

/// The pipe-separated promotion-table parser in every naming; a parsed table
/// answers every lookup of its labels.
pub fn tables(data: &[u8]) {
    let s = text(data);
    for n in Naming::ALL {
        if let Ok(t) = parse_table(&s, n) {
            let nodes = t.nodes().to_vec();
            assert_eq!(t.cells().len(), nodes.len() * nodes.len());
            for a in nodes.iter().take(8) {
                for b in nodes.iter().take(8) {
                    assert!(t.get(a, b).is_some());
                }
            }
            let _ = t.non_commutative_pairs();
            let _ = t.non_idempotent();
        }
    }
}

/// Picks a dtype from one byte.
fn dtype_of(b: u8) -> DType {
    DType::ALL[b as usize % DType::ALL.len()]
}

/// `cast_bytes` between any two dtypes (supported or not), with buffers of
/// any length (matching or not), both overflow modes.
pub fn cast_bytes(data: &[u8]) {
    let [a, b, c, rest @ ..] = data else { return };
    let (from, to) = (dtype_of(*a), dtype_of(*b));
    let ov = if c & 1 == 0 {
        Overflow::NonSaturating
    } else {
        Overflow::Saturating
    };
    let src = &rest[..rest.len().min(1 << 16)];
    // A destination of the right length for the element count, or off by
    // the low bits of `c` to exercise the length checks.
    let n = src.len() / from.itemsize();
    let want = n * to.itemsize();
    let len = if c & 2 == 0 {
        want
    } else {
        want + (*c as usize >> 2) % 5
    };
    let mut dst = vec![0u8; len];
    let r = cast::cast_bytes(src, from, &mut dst, to, ov);
    if r.is_ok() {
        assert!(cast::is_supported(from, to));
    }
}

/// `pack` / `unpack` of the sub-byte dtypes at any length and with
/// destinations of the wrong length; `packed_len` near `usize::MAX`.
pub fn pack(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let d = dtype_of(*a);
    let n = rest.len().min(1 << 16);
    let Ok(len) = pack::packed_len(d, n) else {
        let _ = pack::pack(&rest[..n], d, &mut []);
        return;
    };
    let extra = (*b as usize) % 3;
    let mut packed = vec![0u8; len + extra];
    let r = pack::pack(&rest[..n], d, &mut packed);
    if extra > 0 {
        // A destination of the wrong length is refused.
        assert!(r.is_err());
    }
    let mut codes = vec![0u8; n];
    let _ = pack::unpack(&packed[..len], d, &mut codes);
    let _ = pack::unpack(&packed, d, &mut codes);
    // Huge element counts never overflow.
    let _ = pack::packed_len(d, usize::MAX - n);
}
