#!/usr/bin/env bash
# Release wheels of the Python package `mldtypes` for Linux x86_64, and its sdist, into dist/.
#
#   bash tools/build-wheels.sh [PYTHON ...]
#
# One wheel per CPython: the interpreters given, or else every pyenv CPython 3.11+ found plus
# the free-threaded ones named in $MLDTYPES_FT_PYTHONS (space-separated paths, e.g. a
# `./configure --disable-gil` build's bin/python3.14t; PyO3 0.30 refuses 3.13t). Each wheel is
# built with the Cargo profile `dist` (fat LTO, one codegen unit, no debug info, stripped) and
# linked by zig against glibc 2.28 (maturin --zig, with `ziglang` from PyPI), so it installs on manylinux_2_28
# systems, and zipped with deflate at level 9 (the standard zip method every installer reads;
# its highest level, about 3 % smaller than maturin's default 6 on this wheel); `auditwheel show` checks every wheel's tag and the script fails on a newer one or on
# a wheel over $MLDTYPES_MAX_WHEEL_BYTES (3 MB). The build tools (maturin, ziglang,
# auditwheel) go into their own virtual environment, $MLDTYPES_TOOLS_VENV
# (target/wheel-tools-venv); nothing else is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

tools=${MLDTYPES_TOOLS_VENV:-target/wheel-tools-venv}
max_bytes=${MLDTYPES_MAX_WHEEL_BYTES:-3000000}
out=${MLDTYPES_DIST:-dist}
compat=manylinux_2_28

[ -x "$tools/bin/python" ] || python3 -m venv "$tools"
"$tools/bin/python" -m pip install --quiet maturin==1.16.0 ziglang==0.17.0 auditwheel==6.8.2
tools=$(realpath "$tools")
export PATH="$tools/bin:$PATH"
# maturin runs zig as `python -m ziglang` with the tools' interpreter.
export ZIG_COMMAND="$tools/bin/python -m ziglang"

pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for p in "$root"/versions/3.*/bin/python3; do
    [ -x "$p" ] || continue
    if "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then pythons+=("$p"); fi
  done
  for p in ${MLDTYPES_FT_PYTHONS:-}; do pythons+=("$p"); done
fi
[ ${#pythons[@]} -gt 0 ] || { echo "build-wheels: no CPython 3.11+ found" >&2; exit 1; }

mkdir -p "$out"
out=$(realpath "$out")
args=()
for p in "${pythons[@]}"; do args+=(-i "$p"); done
(
  cd crates/mldtypes-py
  maturin build --profile dist --strip --zig --compatibility "$compat" --compression-level 9 \
    "${args[@]}" --out "$out"
  maturin sdist --out "$out"
)

status=0
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
printf '%-60s %10s  %s\n' wheel bytes "auditwheel"
for whl in "$out"/mldtypes-"$version"-*.whl; do
  bytes=$(stat -c %s "$whl")
  shown=$(auditwheel show "$whl" 2>&1 || true)
  tag=$(grep -o 'manylinux_2_[0-9]*_x86_64' <<<"$shown" | head -1 || true)
  printf '%-60s %10s  %s\n' "$(basename "$whl")" "$bytes" "${tag:-REFUSED}"
  if [ -z "$tag" ] || [ "$(cut -d_ -f3 <<<"$tag")" -gt 28 ]; then
    echo "build-wheels: $whl is not manylinux_2_28 or older:" >&2
    echo "$shown" >&2
    status=1
  fi
  if [ "$bytes" -gt "$max_bytes" ]; then
    echo "build-wheels: $whl is $bytes bytes, over $max_bytes" >&2
    status=1
  fi
done
ls -l "$out"/mldtypes-"$version".tar.gz
exit $status
