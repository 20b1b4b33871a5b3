#!/usr/bin/env bash
# Every test of the project: the Rust workspace, then the Python package's pytest suite.
# Needs only a Rust toolchain and Python 3.11+ with pip; the Python packages the suite
# needs (numpy, maturin, pytest) are installed into a virtual environment of its own,
# target/py-venv, so nothing outside the repository is touched.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace

if [ -d crates/mldtypes-py ]; then
  venv=target/py-venv
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -r crates/mldtypes-py/requirements-test.txt
  "$venv/bin/python" -m pip install --quiet --no-build-isolation ./crates/mldtypes-py
  "$venv/bin/python" -m pytest -q crates/mldtypes-py/tests
fi
