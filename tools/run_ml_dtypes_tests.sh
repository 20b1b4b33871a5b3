#!/usr/bin/env bash
# Runs ml_dtypes 0.6.0's own Python test suite (ml_dtypes/tests/*.py from its PyPI sdist, with
# its pytest.ini: filterwarnings = error) against mldtypes, through the MLDTYPES_AS_ML_DTYPES=1
# switch. A reference check like the vector generators; not part of scripts/test-all.sh.
#
# The venv it uses has mldtypes (built from this checkout) and NOT ml_dtypes.
#
# Usage: tools/run_ml_dtypes_tests.sh [WORK_DIR]   (default: target/ml_dtypes-suite)
#   MLDTYPES_WHEEL=path.whl   install this wheel instead of building crates/mldtypes-py
#   Extra pytest arguments: PYTEST_ARGS="-x -k bfloat16"
#
# Deselected: the tests asserting `type.__module__ == "ml_dtypes"` (custom_float_test
# testModuleName, intn_test testModuleName, custom_complex_test test_module_name). mldtypes'
# types live in the module `mldtypes` (so that pickles name it), a documented difference.
# They are run separately afterwards and their failures reported apart from the suite's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:-$ROOT/target/ml_dtypes-suite}"
VERSION=0.6.0
NUMPY=2.4.6
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
VENV="$WORK/venv"
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
fi
"$PY" -m pip install -q "numpy==$NUMPY" pytest absl-py

# mldtypes, built from this checkout (or a given wheel); never ml_dtypes
if [ -n "${MLDTYPES_WHEEL:-}" ]; then
    "$PY" -m pip install -q --force-reinstall --no-deps "$MLDTYPES_WHEEL"
else
    # build with the project's test venv when there is one (its interpreter is the one the
    # warm target/ was built for), else with this venv
    BUILD_PY="$ROOT/target/py-venv/bin/python"
    [ -x "$BUILD_PY" ] || BUILD_PY="$PY"
    "$BUILD_PY" -m pip install -q "maturin>=1.9,<2"
    rm -rf "$WORK/wheels"
    (cd "$ROOT/crates/mldtypes-py" &&
        "$BUILD_PY" -m maturin build -q --release -i "$BUILD_PY" -o "$WORK/wheels")
    "$PY" -m pip install -q --force-reinstall --no-deps "$WORK"/wheels/mldtypes-*.whl
fi
if "$PY" -m pip show -q ml_dtypes >/dev/null 2>&1; then
    echo "error: ml_dtypes is installed in $VENV; this check needs a venv without it" >&2
    exit 1
fi

# ml_dtypes' sdist (only the source archive: --no-binary for ml_dtypes itself, its build
# requirements as wheels since pip prepares its metadata)
SRC="$WORK/ml_dtypes-$VERSION"
if [ ! -d "$SRC/ml_dtypes/tests" ]; then
    "$PY" -m pip download -q --no-deps --no-binary ml_dtypes -d "$WORK" "ml_dtypes==$VERSION"
    tar -xzf "$WORK/ml_dtypes-$VERSION.tar.gz" -C "$WORK"
fi

# Only the Python tests and the pytest configuration, in a directory that is not a package
# (so `import ml_dtypes` cannot find the sdist's own sources).
TESTS="$WORK/suite"
rm -rf "$TESTS"
mkdir -p "$TESTS/tests"
cp "$SRC/pytest.ini" "$TESTS/"
cp "$SRC"/ml_dtypes/tests/*.py "$TESTS/tests/"

MODULE_TESTS=(-k "testModuleName or test_module_name")
cd "$TESTS"
set +e
MLDTYPES_AS_ML_DTYPES=1 "$PY" -m pytest -q -p no:cacheprovider tests \
    -k "not testModuleName and not test_module_name" ${PYTEST_ARGS:-} | tee "$WORK/suite.log"
status=${PIPESTATUS[0]}
echo
echo "== __module__ tests (expected to fail: the types live in module 'mldtypes') =="
MLDTYPES_AS_ML_DTYPES=1 "$PY" -m pytest -q -p no:cacheprovider tests "${MODULE_TESTS[@]}" \
    | tail -n 1
set -e
echo
echo "== ml_dtypes $VERSION suite on mldtypes: $(tail -n 1 "$WORK/suite.log") =="
exit "$status"
