#!/usr/bin/env bash
# Installs a built wheel into an empty virtual environment, with no Rust toolchain on PATH,
# imports it and runs a smoke test; with --suite, also the package's pytest suite against the
# installed wheel.
#
#   bash tools/test-wheel-install.sh PYTHON WHEEL [--suite]
#
# PYTHON is the interpreter the wheel is for (e.g. ~/.pyenv/versions/3.12.1/bin/python3, or a
# free-threaded python3.13t); WHEEL a file from tools/build-wheels.sh. pip takes numpy (and,
# with --suite, pytest) from the package index; NUMPY_SPEC overrides the numpy requirement.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,10p "$0" >&2; exit 2; }
python=$1
wheel=$(realpath "$2")
suite=${3:-}
repo=$PWD

venv=$(mktemp -d "${TMPDIR:-/tmp}/mldtypes-wheel-XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"

# Only the venv and the system's basic directories: no cargo, rustc or maturin.
export PATH="$venv/bin:/usr/bin:/bin"
unset PYTHONPATH CARGO_HOME RUSTUP_HOME
for tool in cargo rustc maturin; do
  if command -v "$tool" >/dev/null; then
    echo "test-wheel-install: $tool is on PATH ($(command -v "$tool")); refusing to run" >&2
    exit 1
  fi
done

python -m pip install --quiet --disable-pip-version-check --only-binary :all: \
  "$wheel" "${NUMPY_SPEC:-numpy}"

cd "$venv"  # away from the source tree: only the installed package can be imported
python - <<'EOF'
import sys, sysconfig
import numpy as np
import mldtypes

assert mldtypes.__file__.startswith(sys.prefix), mldtypes.__file__
x = np.array([448, 464, 465, 1e-3], np.float32).astype(mldtypes.float8_e4m3fn)
assert x.view(np.uint8).tolist() == [0x7E, 0x7E, 0x7F, 0x01], x.view(np.uint8)
assert np.dtype("bfloat16").type is mldtypes.bfloat16
assert str(np.float32(0.1).astype(mldtypes.bfloat16)) == "0.100098"
assert float(mldtypes.finfo(mldtypes.bfloat16).eps) == 2.0 ** -7
assert mldtypes.iinfo(mldtypes.int4).min == -8
assert mldtypes.promote_types(mldtypes.bfloat16, np.float16) == np.dtype("float32")
v = np.full(1000, 0.25, np.float32).astype(mldtypes.bfloat16)
assert float(mldtypes.sum(v)) == 250.0
packed = mldtypes.pack(np.array([1, 2, 3, -6], np.float32).astype(mldtypes.float4_e2m1fn))
assert packed.tobytes() == b"\x42\xf5", packed.tobytes()
ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
if ft:
    assert not sys._is_gil_enabled(), "importing mldtypes re-enabled the GIL"
print(f"smoke test passed: mldtypes {mldtypes.__version__}, numpy {np.__version__}, "
      f"Python {sys.version.split()[0]}{' free-threaded' if ft else ''}")
EOF

if [ "$suite" = "--suite" ]; then
  python -m pip install --quiet --disable-pip-version-check pytest
  python -m pytest -q -p no:cacheprovider "$repo/crates/mldtypes-py/tests"
fi
