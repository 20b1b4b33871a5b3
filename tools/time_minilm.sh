#!/usr/bin/env bash
# Wall time of `mldtypes convert` against the Python reference conversion
# (tools/convert_minilm_reference.py: safetensors + ml_dtypes astype), on the
# all-MiniLM-L6-v2 checkpoint, measured side by side in one run: the two
# commands alternate, RUNS times per target format, and the medians and their
# ratio are printed. Each converted checkpoint is then verified bit for bit
# with tools/verify_minilm.py.
#
# Usage: tools/time_minilm.sh [PYTHON] [RUNS]
#   PYTHON: an interpreter with ml_dtypes==0.6.0, numpy, safetensors (default python3)
#   Needs: scripts/fetch-example-model.sh run first; a release build
#   (cargo build --release -p mldtypes-cli).
set -euo pipefail

python="${1:-python3}"
runs="${2:-5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="$root/examples-data/all-MiniLM-L6-v2.safetensors"
bin="$root/target/release/mldtypes"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

[[ -f "$model" ]] || { echo "run scripts/fetch-example-model.sh first" >&2; exit 1; }
[[ -x "$bin" ]] || { echo "build first: cargo build --release -p mldtypes-cli" >&2; exit 1; }

# Seconds of wall time of one command, output discarded.
wall() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-16s %10s %10s %8s\n' target ours_s python_s ratio
for target in bfloat16 float8_e4m3fn float8_e5m2; do
    : > "$tmp/ours"; : > "$tmp/py"
    for _ in $(seq "$runs"); do
        wall "$bin" convert "$model" "$tmp/ours.safetensors" --to "$target" >> "$tmp/ours"
        wall "$python" "$root/tools/convert_minilm_reference.py" "$model" "$tmp/py.safetensors" "$target" >> "$tmp/py"
    done
    o=$(median < "$tmp/ours"); p=$(median < "$tmp/py")
    printf '%-16s %10.3f %10.3f %8.2f\n' "$target" "$o" "$p" "$(echo "$p / $o" | bc -l)"
    "$python" "$root/tools/verify_minilm.py" "$model" "$tmp/ours.safetensors" "$target" | tail -n 1
done
