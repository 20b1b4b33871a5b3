"""The stubs type-check a user program with ``mypy --strict`` (skipped without mypy).

``tests/typing/user_program.py`` uses ml_dtypes' API the way its users do: scalar
construction and arithmetic, finfo/iinfo, the promotion functions and context managers.
It must also run.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "typing", "user_program.py")


def test_user_program_runs():
    proc = subprocess.run([sys.executable, PROGRAM], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_user_program_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path), PROGRAM],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
