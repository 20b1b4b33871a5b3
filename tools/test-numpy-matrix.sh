#!/usr/bin/env bash
# The Python test suite on every NumPy minor release from 2.0 to the newest, on every CPython
# that release supports here.
#
#   tools/test-numpy-matrix.sh [--jobs N] [--numpy "2.0 2.1 ..."] [--python "3.11.7 ..."]
#                              [--build-only | --no-build | --table-only] [--quick]
#
# 1. Builds the release wheel of crates/mldtypes-py once per CPython (pyenv interpreters
#    ~/.pyenv/versions/<version>/bin/python; `maturin` from target/py-venv).
# 2. For each NumPy minor, finds the newest patch that PyPI has as a wheel for each CPython
#    (`pip download --only-binary`; a minor without a wheel for a CPython is "n/a": NumPy does
#    not support that CPython).
# 3. For each cell, a fresh venv gets the wheel, that NumPy and pytest (from
#    requirements-test.txt), and runs crates/mldtypes-py/tests from the source tree
#    (N cells at a time, default 2).
#    --quick runs only the files that exercise what differs between NumPy versions
#    (test_numpy_versions, test_promotion_numpy, test_promotion_switch, test_info,
#    test_readme) and marks the cells "quick".
# 4. Prints the table NumPy x CPython -> "passed N" / "FAILED f of N" / "n/a"; the logs are in
#    target/numpy-matrix/. Exit status 1 if any cell failed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/numpy-matrix"
JOBS=2
NUMPY_MINORS="2.0 2.1 2.2 2.3 2.4 2.5"
PYTHONS="3.11.7 3.12.1 3.13.0"
BUILD=1
TEST=1
QUICK=0
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) JOBS="$2"; shift 2 ;;
        --numpy) NUMPY_MINORS="$2"; shift 2 ;;
        --python) PYTHONS="$2"; shift 2 ;;
        --build-only) TEST=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --table-only) BUILD=0; TEST=2; shift ;;
        --quick) QUICK=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

MATURIN="$ROOT/target/py-venv/bin/maturin"
[ -x "$MATURIN" ] || { echo "no $MATURIN: run scripts/test-all.sh once (it creates target/py-venv)" >&2; exit 2; }
PYTEST_PIN="$(grep -E '^pytest==' "$ROOT/crates/mldtypes-py/requirements-test.txt")"
mkdir -p "$OUT/wheels" "$OUT/numpy" "$OUT/logs"

# 1. one wheel per CPython
for pyv in $PYTHONS; do
    [ "$BUILD" = 1 ] || break
    py="$HOME/.pyenv/versions/$pyv/bin/python"
    [ -x "$py" ] || { echo "no CPython $pyv at $py" >&2; exit 2; }
    tag="cp$(echo "$pyv" | cut -d. -f1,2 | tr -d .)"
    rm -f "$OUT/wheels/"*"-$tag-$tag-"*.whl
    echo "== building the wheel for CPython $pyv"
    (cd "$ROOT/crates/mldtypes-py" && "$MATURIN" build --release --quiet -i "$py" -o "$OUT/wheels") \
        > "$OUT/logs/build-$pyv.log" 2>&1 || { cat "$OUT/logs/build-$pyv.log" >&2; exit 1; }
done
[ "$TEST" = 0 ] && exit 0

if [ "$TEST" = 1 ]; then
# 2. the newest NumPy wheel of each minor for each CPython
newest_numpy() {  # python minor -> version or empty
    local py="$1" minor="$2" dir="$OUT/numpy/$3"
    mkdir -p "$dir"
    if "$py" -m pip download -q --no-deps --only-binary :all: -d "$dir" "numpy==$minor.*" \
        > /dev/null 2>&1; then
        ls "$dir" | grep -E "^numpy-$minor\.[0-9]+-" | sed -E 's/^numpy-([0-9.]+)-.*/\1/' \
            | sort -V | tail -1
    fi
}

CELLS="$OUT/cells-$$.txt"
: > "$CELLS"
for minor in $NUMPY_MINORS; do
    for pyv in $PYTHONS; do
        py="$HOME/.pyenv/versions/$pyv/bin/python"
        v="$(newest_numpy "$py" "$minor" "$pyv")"
        echo "$minor $pyv ${v:-n/a}" >> "$CELLS"
    done
done

# 3. one fresh venv per cell
run_cell() {
    local minor="$1" pyv="$2" npv="$3"
    local suffix=""
    [ "$QUICK" = 1 ] && suffix=".quick"
    local result="$OUT/logs/$minor-$pyv.result$suffix" log="$OUT/logs/$minor-$pyv.log$suffix"
    if [ "$npv" = "n/a" ]; then echo "n/a" > "$result"; return 0; fi
    local py="$HOME/.pyenv/versions/$pyv/bin/python"
    local tag="cp$(echo "$pyv" | cut -d. -f1,2 | tr -d .)"
    local venv="$OUT/venv-$minor-$pyv$suffix"
    local tests="$ROOT/crates/mldtypes-py/tests"
    local targets="$tests"
    if [ "$QUICK" = 1 ]; then
        targets=""
        for f in test_numpy_versions test_promotion_numpy test_promotion_switch test_info \
                 test_readme; do
            [ -f "$tests/$f.py" ] && targets="$targets $tests/$f.py"
        done
    fi
    rm -rf "$venv"
    {
        "$py" -m venv "$venv" &&
        "$venv/bin/pip" install -q --find-links "$OUT/numpy/$pyv" "numpy==$npv" "$PYTEST_PIN" &&
        "$venv/bin/pip" install -q --no-deps "$OUT/wheels/"mldtypes-*"-$tag-$tag-"*.whl &&
        # shellcheck disable=SC2086
        (cd "$OUT" && nice "$venv/bin/python" -m pytest -q -p no:cacheprovider $targets)
    } > "$log" 2>&1
    local summary
    summary="$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^(=+ )?[0-9]+ failed|error' "$log" | tail -1 || true)"
    local passed failed errors
    passed="$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)"
    failed="$(echo "$summary" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)"
    errors="$(echo "$summary" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+' || echo 0)"
    if [ "${failed:-0}" = 0 ] && [ "${errors:-0}" = 0 ] && [ "${passed:-0}" != 0 ]; then
        echo "passed $passed ($npv${suffix:+, quick})" > "$result"
    else
        echo "FAILED $((failed + errors)) of $((passed + failed + errors)) ($npv${suffix:+, quick})" > "$result"
    fi
    rm -rf "$venv"
}
export -f run_cell
export OUT ROOT PYTEST_PIN QUICK
echo "== running $(grep -vc 'n/a$' "$CELLS") cells, $JOBS at a time"
xargs -P "$JOBS" -L 1 bash -c 'run_cell "$@"' _ < "$CELLS"
fi

# 4. the table
{
    printf '| NumPy |'
    for pyv in $PYTHONS; do printf ' CPython %s |' "$(echo "$pyv" | cut -d. -f1,2)"; done
    printf '\n|---|'
    for _ in $PYTHONS; do printf -- '---|'; done
    printf '\n'
    for minor in $NUMPY_MINORS; do
        printf '| %s.x |' "$minor"
        for pyv in $PYTHONS; do
            r="$OUT/logs/$minor-$pyv.result"
            if [ -f "$r" ]; then printf ' %s |' "$(cat "$r")"
            elif [ -f "$r.quick" ]; then printf ' %s |' "$(cat "$r.quick")"
            else printf ' not run |'; fi
        done
        printf '\n'
    done
} | tee "$OUT/table.md"
! grep -q FAILED "$OUT/table.md"
