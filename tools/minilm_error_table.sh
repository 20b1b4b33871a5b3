#!/usr/bin/env bash
# The README's MiniLM error table: converts all-MiniLM-L6-v2 (fetched by
# scripts/fetch-example-model.sh) to every float, MX and NVFP4 target with
# `mldtypes convert --json` (the FP8 recipes too) and prints the totals as a
# Markdown table.
#
# Usage: tools/minilm_error_table.sh [EXTRA CONVERT ARGS...]   (e.g. --mx-scale ceil)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/target/release/mldtypes"
(cd "$root" && nice -n 10 cargo build --release -q -p mldtypes-cli)
bash "$root/scripts/fetch-example-model.sh" >/dev/null
model="$root/examples-data/all-MiniLM-L6-v2.safetensors"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| target | tensors | max abs error | relative RMS error | SQNR (dB) | clipped | flushed to zero | size (MB) |"
echo "|---|---|---|---|---|---|---|---|"
for to in bfloat16 float8_e4m3fn float8_e5m2 mxfp8_e4m3 mxfp8_e5m2 mxfp6_e3m2 mxfp6_e2m3 mxfp4 mxint8 nvfp4 fp8 fp8_channel fp8_block; do
    "$bin" convert "$model" "$work/out.safetensors" --to "$to" --json "$@" > "$work/s.json" 2>/dev/null
    size=$(wc -c < "$work/out.safetensors")
    python3 - "$to" "$size" "$work/s.json" <<'PY'
import json, sys
to, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = json.load(open(path))
t = s["total"]
sq = "inf" if t["sqnr_db"] is None else f"{t['sqnr_db']:.2f}"
print(f"| {to} | {len(s['tensors'])} | {t['max_abs_error']:.3e} | {t['rel_rms_error']:.3e} | {sq} | "
      f"{t['clipped']:,} | {t['flushed_to_zero']:,} | {size / 1e6:.1f} |")
PY
done
