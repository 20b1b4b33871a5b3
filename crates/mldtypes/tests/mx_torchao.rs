//! The MX scale rules against torchao 0.18.0's `to_mx` (CPU, eager), from the
//! vectors of `tools/gen_torchao_mx_vectors.py`: scale codes and element codes
//! for `floor`, `ceil`, `even` and `rceil` × the five MX element formats
//! torchao supports, on every path.
//!
//! torchao's documented deviations, asserted as such (see the README's MX
//! section): blocks holding an infinity (torchao: `floor`/`ceil`/`even` give
//! code `255 − emax_elem`, `rceil` 254; ours: 0xFF, the block is NaN); the
//! elements of blocks whose scale code is 0 with a non-zero amax (torchao
//! divides by 2^−126 instead of 2^−127 for `floor`/`ceil`/`even` and
//! multiplies by 1 for `rceil`); and `rceil` scales where torchao's float32
//! `log2` rounds `log2(d)` down to an integer for `d` just above a power of
//! two (ours is one more: the exact `ceil`, as `cvt.rp` computes it).
//! torchao's `CEIL` is a different rule from this crate's `ceil`
//! (`2^(ceil(log2 amax) − emax_elem)`, which can waste a binade): its vectors
//! are checked against that formula, scales only.

use std::io::Read;

use mldtypes::cast::Path;
use mldtypes::mx::{self, MxFormat, ScaleRule};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn unpack(b: &[u8], w: usize, i: usize) -> u8 {
    let bit = i * w;
    let v = (b[bit / 8] as u16) | ((*b.get(bit / 8 + 1).unwrap_or(&0) as u16) << 8);
    ((v >> (bit % 8)) & ((1 << w) - 1)) as u8
}

fn paths() -> Vec<Path> {
    [Path::Scalar, Path::Portable, Path::Avx2, Path::Avx512]
        .into_iter()
        .filter(|p| p.is_available())
        .collect()
}

#[test]
fn mx_scale_rules_match_torchao() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/torchao_mx");
    let f = std::fs::File::open(format!("{dir}/torchao_mx.json.gz")).unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(doc["torchao"], "0.18.0");
    let fmts = doc["formats"].as_object().unwrap();
    assert_eq!(fmts.len(), 5);
    let (mut blocks_checked, mut inf_blocks, mut tiny_blocks, mut log2_blocks) = (0, 0, 0, 0);
    let mut ceil_blocks = 0;
    for (name, e) in fmts {
        let fmt = MxFormat::from_name(name).unwrap();
        let x: Vec<f32> = hex(e["inputs"].as_str().unwrap())
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let nb = e["blocks"].as_u64().unwrap() as usize;
        assert_eq!(x.len(), nb * 32);
        let modes = e["modes"].as_object().unwrap();
        assert_eq!(modes.len(), 4);
        for (mode, v) in modes {
            let rule = ScaleRule::from_name(mode).unwrap();
            let ts = hex(v["scales"].as_str().unwrap());
            let tc = hex(v["codes"].as_str().unwrap());
            assert_eq!((ts.len(), tc.len()), (nb, nb * 32));
            for path in paths() {
                let mut b = vec![0u8; nb * fmt.block_bytes()];
                let mut sc = vec![0u8; nb];
                mx::quantize_on(path, &x, fmt, rule, &mut b, &mut sc).unwrap();
                for i in 0..nb {
                    let blk = &x[i * 32..(i + 1) * 32];
                    let at = format!("{name} {mode} {path:?} block {i}: {blk:?}");
                    let ours: Vec<u8> = (0..32)
                        .map(|j| unpack(&b[i * fmt.block_bytes()..], fmt.bits(), j))
                        .collect();
                    let theirs = &tc[i * 32..(i + 1) * 32];
                    if blk.iter().any(|v| v.is_nan()) {
                        assert_eq!((sc[i], ts[i]), (0xff, 0xff), "{at}");
                        continue;
                    }
                    if blk.iter().any(|v| v.is_infinite()) {
                        let t = if rule == ScaleRule::Rceil {
                            254
                        } else {
                            (255 - fmt.emax()) as u8
                        };
                        assert_eq!((sc[i], ts[i]), (0xff, t), "{at}");
                        inf_blocks += 1;
                        continue;
                    }
                    if mode == "ceil" {
                        // torchao's CEIL is 2^(ceil(log2 amax) − emax_elem),
                        // not this crate's 2^ceil(log2(amax / max_elem)).
                        let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
                        let k = if amax == 0.0 {
                            -127
                        } else {
                            let l = (amax as f64).log2();
                            let e = l.floor() as i32;
                            let e = e.max(-127); // torchao reads the f32 exponent field
                            let exact = amax.to_bits() & 0x7f_ffff == 0;
                            let e = if amax < f32::MIN_POSITIVE { -127 } else { e };
                            e + i32::from(!exact) - fmt.emax()
                        };
                        assert_eq!(ts[i] as i32, k.clamp(-127, 128) + 127, "{at}");
                        ceil_blocks += 1;
                        continue;
                    }
                    if sc[i] != ts[i] {
                        // torchao's float32 log2 rounding: d just above 2^k.
                        let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
                        let d = amax / fmt.max_elem() as f32;
                        let frac = d / 2f32.powi(d.log2().floor() as i32);
                        assert!(
                            rule == ScaleRule::Rceil
                                && sc[i] == ts[i] + 1
                                && frac > 1.0
                                && frac < 1.0 + 1e-5,
                            "{at}: scale {} vs torchao {}",
                            sc[i],
                            ts[i]
                        );
                        log2_blocks += 1;
                        continue;
                    }
                    if sc[i] == 0 && blk.iter().any(|v| *v != 0.0) {
                        tiny_blocks += 1;
                        continue;
                    }
                    assert_eq!(ours, theirs, "{at}");
                    blocks_checked += 1;
                }
            }
        }
    }
    eprintln!(
        "torchao: {blocks_checked} blocks equal, {inf_blocks} inf blocks, \
         {tiny_blocks} scale-0 blocks (scales only), {log2_blocks} rceil log2 blocks, \
         {ceil_blocks} torchao CEIL blocks"
    );
    assert!(blocks_checked >= 8_000);
}
