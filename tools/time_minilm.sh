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
#        tools/time_minilm.sh --blocks [RUNS]
#   --blocks: the block-scaled targets instead (every MX format and nvfp4), each
#   against float8_e4m3fn, one thread (`--threads 1`), alternating RUNS times;
#   prints the medians and the ratio to float8_e4m3fn. No Python needed.
#   Needs: scripts/fetch-example-model.sh run first; a release build
#   (cargo build --release -p mldtypes-cli).
set -euo pipefail

blocks=0
if [[ "${1:-}" == "--blocks" ]]; then
    blocks=1
    shift
    set -- python3 "$@"
fi
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

if [[ "$blocks" == 1 ]]; then
    printf '%-16s %10s %10s %8s\n' target ours_s fp8_s ratio
    for target in mxfp8_e4m3 mxfp8_e5m2 mxfp6_e3m2 mxfp6_e2m3 mxfp4 mxint8 nvfp4; do
        : > "$tmp/ours"; : > "$tmp/fp8"
        for _ in $(seq "$runs"); do
            wall "$bin" convert "$model" "$tmp/o.safetensors" --to "$target" --threads 1 >> "$tmp/ours"
            wall "$bin" convert "$model" "$tmp/f.safetensors" --to float8_e4m3fn --threads 1 >> "$tmp/fp8"
        done
        o=$(median < "$tmp/ours"); f=$(median < "$tmp/fp8")
        printf '%-16s %10.3f %10.3f %8.2f\n' "$target" "$o" "$f" "$(echo "$o / $f" | bc -l)"
    done
    exit 0
fi

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
