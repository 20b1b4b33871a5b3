#!/usr/bin/env bash
# Runs ml_dtypes' own Python test suite (ml_dtypes/tests/*.py and its pytest.ini:
# filterwarnings = error) against mldtypes, through the MLDTYPES_AS_ML_DTYPES=1 switch: by
# default the 0.6.0 release (its PyPI sdist), or with --rev any git revision of ml_dtypes'
# repository (a commit, tag or branch; e.g. main's tests, ahead of the release). A reference
# check like the vector generators; not part of scripts/test-all.sh.
#
# The venv it uses has mldtypes (built from this checkout) and NOT ml_dtypes.
#
# Usage: tools/run_ml_dtypes_tests.sh [--rev REV] [WORK_DIR]
#   default WORK_DIR: target/ml_dtypes-suite (0.6.0), target/ml_dtypes-suite-REV (--rev)
#   --rev REV                  the tests of git revision REV of ml_dtypes, fetched from
#                              ML_DTYPES_REPO (default https://github.com/jax-ml/ml_dtypes.git;
#                              a local clone or mirror path works too)
#   PYTHON=python3.13          the interpreter of the venv (default python3); the wheel is built
#                              for it
#   NUMPY=2.5.5                the NumPy of the venv (default 2.4.6, the vectors' NumPy)
#   MLDTYPES_WHEEL=path.whl    install this wheel instead of building crates/mldtypes-py
#   PYTEST_ARGS="-x -k bfloat16"   extra pytest arguments
#
# Deselected: the tests asserting `type.__module__ == "ml_dtypes"` (custom_float_test
# testModuleName, intn_test testModuleName, custom_complex_test test_module_name). mldtypes'
# types live in the module `mldtypes` (so that pickles name it), a documented difference.
# They are run separately afterwards and their failures reported apart from the suite's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=0.6.0
REV=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rev) REV="$2"; shift 2 ;;
        --rev=*) REV="${1#--rev=}"; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        -*) echo "unknown option: $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
REPO="${ML_DTYPES_REPO:-https://github.com/jax-ml/ml_dtypes.git}"
NUMPY="${NUMPY:-2.4.6}"
if [ -n "$REV" ]; then
    DEFAULT_WORK="$ROOT/target/ml_dtypes-suite-$(echo "$REV" | tr -c 'A-Za-z0-9._\n-' '_')"
else
    DEFAULT_WORK="$ROOT/target/ml_dtypes-suite"
fi
WORK="${1:-$DEFAULT_WORK}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
VENV="$WORK/venv"
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    "${PYTHON:-python3}" -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
fi
"$PY" -m pip install -q "numpy==$NUMPY" pytest absl-py

# mldtypes, built from this checkout (or a given wheel); never ml_dtypes
if [ -n "${MLDTYPES_WHEEL:-}" ]; then
    "$PY" -m pip install -q --force-reinstall --no-deps "$MLDTYPES_WHEEL"
else
    # maturin from the project's test venv when there is one (its interpreter is the one the
    # warm target/ was built for), else from this venv; the wheel is for this venv's Python
    BUILD_PY="$ROOT/target/py-venv/bin/python"
    [ -x "$BUILD_PY" ] || BUILD_PY="$PY"
    "$BUILD_PY" -m pip install -q "maturin>=1.9,<2"
    rm -rf "$WORK/wheels"
    (cd "$ROOT/crates/mldtypes-py" &&
        "$BUILD_PY" -m maturin build -q --release -i "$PY" -o "$WORK/wheels")
    "$PY" -m pip install -q --force-reinstall --no-deps "$WORK"/wheels/mldtypes-*.whl
fi
if "$PY" -m pip show -q ml_dtypes >/dev/null 2>&1; then
    echo "error: ml_dtypes is installed in $VENV; this check needs a venv without it" >&2
    exit 1
fi

if [ -z "$REV" ]; then
    # ml_dtypes' sdist (only the source archive: --no-binary for ml_dtypes itself, its build
    # requirements as wheels since pip prepares its metadata)
    SRC="$WORK/ml_dtypes-$VERSION"
    if [ ! -d "$SRC/ml_dtypes/tests" ]; then
        "$PY" -m pip download -q --no-deps --no-binary ml_dtypes -d "$WORK" "ml_dtypes==$VERSION"
        tar -xzf "$WORK/ml_dtypes-$VERSION.tar.gz" -C "$WORK"
    fi
    LABEL="ml_dtypes $VERSION"
else
    # the repository (bare, kept in WORK), the revision's tests and pytest.ini only
    GIT="$WORK/ml_dtypes.git"
    [ -d "$GIT" ] || git init -q --bare "$GIT"
    if ! git -C "$GIT" rev-parse -q --verify "$REV^{commit}" >/dev/null; then
        git -C "$GIT" fetch -q --tags "$REPO" \
            "+refs/heads/*:refs/heads/*" 2>/dev/null || true
        git -C "$GIT" rev-parse -q --verify "$REV^{commit}" >/dev/null ||
            git -C "$GIT" fetch -q "$REPO" "$REV"
    fi
    COMMIT="$(git -C "$GIT" rev-parse "$REV^{commit}" 2>/dev/null ||
        git -C "$GIT" rev-parse FETCH_HEAD)"
    SRC="$WORK/ml_dtypes-${COMMIT:0:12}"
    if [ ! -d "$SRC/ml_dtypes/tests" ]; then
        mkdir -p "$SRC"
        git -C "$GIT" archive "$COMMIT" pytest.ini ml_dtypes/tests | tar -x -C "$SRC"
    fi
    LABEL="ml_dtypes $REV (${COMMIT:0:12})"
fi

# Only the Python tests and the pytest configuration, in a directory that is not a package
# (so `import ml_dtypes` cannot find the sources).
TESTS="$WORK/suite"
rm -rf "$TESTS"
mkdir -p "$TESTS/tests"
cp "$SRC/pytest.ini" "$TESTS/"
cp "$SRC"/ml_dtypes/tests/*.py "$TESTS/tests/"

MODULE_TESTS=(-k "testModuleName or test_module_name")
cd "$TESTS"
set +e
# shellcheck disable=SC2086
MLDTYPES_AS_ML_DTYPES=1 "$PY" -m pytest -q -p no:cacheprovider tests \
    -k "not testModuleName and not test_module_name" ${PYTEST_ARGS:-} | tee "$WORK/suite.log"
status=${PIPESTATUS[0]}
echo
echo "== __module__ tests (expected to fail: the types live in module 'mldtypes') =="
MLDTYPES_AS_ML_DTYPES=1 "$PY" -m pytest -q -p no:cacheprovider tests "${MODULE_TESTS[@]}" \
    | tail -n 1
set -e
echo
echo "== $LABEL suite on mldtypes, NumPy $("$PY" -c 'import numpy; print(numpy.__version__)'): $(tail -n 1 "$WORK/suite.log") =="
exit "$status"
