#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS each (default 60).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz builds with
# sanitizer flags that need a nightly compiler; with a stable toolchain the
# script sets RUSTC_BOOTSTRAP=1 to let it use them. New inputs that reach new
# code are kept in fuzz/corpus/TARGET/ (the committed part of it is replayed
# by the normal test run); crashes are written to fuzz/artifacts/TARGET/ and
# make the script exit non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh [SECONDS] [TARGET...]" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz" >&2
  exit 2
fi
if ! rustc --version | grep -q nightly; then
  export RUSTC_BOOTSTRAP=1
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi

status=0
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  mkdir -p "fuzz/corpus/$t"
  if ! cargo fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" -- \
      -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1; then
    echo "!! $t found a crash (see fuzz/artifacts/$t)" >&2
    status=1
  fi
done
exit "$status"
