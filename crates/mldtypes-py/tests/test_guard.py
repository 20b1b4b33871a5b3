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


CALLBACK_CASES = {
    # scalar type slots
    "repr": "repr(s)", "hash": "hash(s)", "float": "float(s)", "new": "m.bfloat16(2.0)",
    "complex scalar": "m.complex32(1 + 2j) * m.complex32(1)",
    # ArrFuncs
    "getitem": "a.item(0)", "setitem": "a.__setitem__(0, 5)", "argmax": "np.argmax(a)",
    "nonzero": "np.nonzero(a)", "dot": "a.dot(a)", "tolist": "a.tolist()",
    "arange": "np.arange(0, 3, dtype=m.bfloat16)", "sort": "np.sort(a)",
    "full": "np.full(3, 1.0, m.bfloat16)",
    # ufunc loops of the three families, and casts
    "float ufunc": "a * a", "float8 ufunc": "np.maximum(f8, f8)", "compare": "a < a",
    "int4 ufunc": "i4 + i4", "complex ufunc": "c + c", "cast": "a.astype(np.float32)",
    "cast to ours": "np.arange(3.0).astype(m.float8_e4m3fn)",
}


def test_a_panic_in_a_numpy_callback_raises_and_the_process_goes_on():
    # Every C callback (scalar slots, ArrFuncs, ufunc and cast loops) runs its body through
    # guard::ffi; the test hook makes each of them panic at its start. In a child process:
    # every operation raises (RuntimeError, or NumPy's SystemError chained to it where NumPy
    # itself reports a pending exception), nothing aborts, and once the hook is off the same
    # operations give their values again.
    code = textwrap.dedent("""
        import numpy as np, mldtypes as m
        from mldtypes import _core
        a = np.array([1, 2, 3], m.bfloat16); s = m.bfloat16(1.5)
        f8 = np.array([1, 2], m.float8_e4m3fn)
        i4 = np.array([1, 2], m.int4); c = np.array([1 + 2j], m.complex32)
        cases = %r
        _core._panic_in_callbacks_for_test(True)
        results = {}
        for name, expr in cases.items():
            try:
                eval(expr)
                results[name] = "no error"
            except BaseException as e:
                err = e
                while not isinstance(err, RuntimeError) and (err.__cause__ or err.__context__):
                    err = err.__cause__ or err.__context__
                results[name] = type(e).__name__ + ": " + str(err)
        _core._panic_in_callbacks_for_test(False)
        for name, r in results.items():
            print(name, "|", r)
        print("after |", (a * a).tolist(), repr(s), np.sort(a[::-1]).tolist(),
              a.astype(np.float32).tolist())
    """) % (CALLBACK_CASES,)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = dict(line.split(" | ", 1) for line in r.stdout.splitlines())
    message = "internal error in mldtypes (please report it): deliberate panic in a callback for a test"
    for name in CALLBACK_CASES:
        kind, _, text = lines[name].partition(": ")
        assert kind in ("RuntimeError", "SystemError") and text == message, (name, lines[name])
    assert lines["after"] == "[1.0, 4.0, 9.0] 1.5 [1.0, 2.0, 3.0] [1.0, 2.0, 3.0]"
