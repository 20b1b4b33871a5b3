"""The panic guard of the Python boundary: a Rust panic inside a function of the extension module
reaches Python as RuntimeError carrying the panic message, never as pyo3's PanicException (a
BaseException that ``except Exception`` does not catch). ``mldtypes._core._panic_for_test`` is a
test-only hook that panics inside Rust through the same guard as every function."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mldtypes
from mldtypes import _core


def test_a_panic_becomes_runtime_error_with_its_message():
    with pytest.raises(RuntimeError) as e:
        _core._panic_for_test("the panic message, with its details: 42")
    assert type(e.value) is RuntimeError
    assert str(e.value) == ("internal error in mldtypes (please report it): "
                            "the panic message, with its details: 42")


def test_default_message_and_except_exception_catches_it():
    try:
        _core._panic_for_test()
    except Exception as e:  # noqa: BLE001 -- the point: a plain `except Exception` sees it
        caught = e
    assert isinstance(caught, RuntimeError)
    assert str(caught).endswith("deliberate panic for a test")


def test_the_module_keeps_working_after_a_panic():
    for _ in range(3):
        with pytest.raises(RuntimeError):
            _core._panic_for_test("again")
    a = np.array([1, 2, 3], dtype=mldtypes.bfloat16)
    assert float(mldtypes.sum(a)) == 6.0
    assert mldtypes.promote_types("int8", "bfloat16") == np.dtype(mldtypes.bfloat16)


def test_a_panic_in_another_thread_is_also_runtime_error():
    import threading

    seen = []

    def worker():
        try:
            _core._panic_for_test("from a thread")
        except RuntimeError as e:
            seen.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["internal error in mldtypes (please report it): from a thread"] * 4


def test_the_process_survives_and_exits_cleanly():
    # In a child process: the panic is caught, the interpreter goes on and exits 0; the panic
    # hook's report (with the source location) goes to standard error.
    code = textwrap.dedent("""
        from mldtypes import _core
        try:
            _core._panic_for_test("child panic")
        except RuntimeError as e:
            print("caught:", e)
        print("still alive")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "caught: internal error in mldtypes (please report it): child panic", "still alive"]
    assert "child panic" in r.stderr
