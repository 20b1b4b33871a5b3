#!/usr/bin/env bash
# Runs jax's own tests/dtypes_test.py (taken from a jax git tag) twice in one venv that has jax,
# jaxlib, ml_dtypes and mldtypes installed: on mldtypes through the MLDTYPES_AS_ML_DTYPES=1
# switch, then on the real ml_dtypes, and prints both pytest summaries (they should be equal).
# A reference check like tools/run_ml_dtypes_tests.sh; not part of scripts/test-all.sh.
#
# Usage: tools/run_jax_dtypes_test.sh PYTHON [TAG] [WORK_DIR]
#   PYTHON     the venv's interpreter (e.g. /work/venvs/np25-frameworks/bin/python)
#   TAG        the jax tag whose tests run (default jax-v0.11.0: jax's 0.12.0.1 sdist ships
#              no tests)
#   WORK_DIR   default target/jax-dtypes-test
#   JAX_REPO=URL_OR_PATH    where the tag is fetched from (default
#                           https://github.com/jax-ml/jax.git); a local clone or mirror that
#                           has the tag is read in place
#   MLDTYPES_WHEEL=path.whl install this wheel into the venv first
#   PYTEST_ARGS="-x"        extra pytest arguments
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:?usage: tools/run_jax_dtypes_test.sh PYTHON [TAG] [WORK_DIR]}"
TAG="${2:-jax-v0.11.0}"
WORK="${3:-$ROOT/target/jax-dtypes-test}"
REPO="${JAX_REPO:-https://github.com/jax-ml/jax.git}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"

if [ -n "${MLDTYPES_WHEEL:-}" ]; then
    "$PY" -m pip install -q --force-reinstall --no-deps "$MLDTYPES_WHEEL"
fi
"$PY" -c 'import jax, numpy, ml_dtypes, mldtypes' || {
    echo "error: $PY needs jax, jaxlib, numpy, ml_dtypes and mldtypes installed" >&2
    exit 1
}

# the tag's test file only: read from a local repository as it is, else a shallow fetch of
# the one tag into a bare repository kept in WORK
if [ -d "$REPO" ] && git -C "$REPO" rev-parse -q --verify "refs/tags/$TAG" >/dev/null; then
    GIT="$REPO"
else
    GIT="$WORK/jax.git"
    [ -d "$GIT" ] || git init -q --bare "$GIT"
    if ! git -C "$GIT" rev-parse -q --verify "refs/tags/$TAG" >/dev/null; then
        git -C "$GIT" fetch -q --depth 1 "$REPO" "refs/tags/$TAG:refs/tags/$TAG"
    fi
fi
TESTS="$WORK/tests-$TAG"
rm -rf "$TESTS"
mkdir -p "$TESTS"
git -C "$GIT" show "refs/tags/$TAG:tests/dtypes_test.py" > "$TESTS/dtypes_test.py"

versions() {
    "$PY" -c 'import jax, numpy, ml_dtypes; print(f"jax {jax.__version__}, NumPy {numpy.__version__}, ml_dtypes {ml_dtypes.__version__} ({ml_dtypes.bfloat16.__module__})")'
}
cd "$TESTS"
set +e
# shellcheck disable=SC2086
MLDTYPES_AS_ML_DTYPES=1 "$PY" -m pytest -q -p no:cacheprovider dtypes_test.py ${PYTEST_ARGS:-} \
    | tee "$WORK/mldtypes.log"
s1=${PIPESTATUS[0]}
# shellcheck disable=SC2086
"$PY" -m pytest -q -p no:cacheprovider dtypes_test.py ${PYTEST_ARGS:-} | tee "$WORK/ml_dtypes.log"
s2=${PIPESTATUS[0]}
set -e
echo
echo "== $TAG tests/dtypes_test.py"
echo "   on mldtypes  ($(MLDTYPES_AS_ML_DTYPES=1 versions)): $(tail -n 1 "$WORK/mldtypes.log")"
echo "   on ml_dtypes ($(versions)): $(tail -n 1 "$WORK/ml_dtypes.log")"
[ "$s1" = 0 ] && [ "$s2" = 0 ]
