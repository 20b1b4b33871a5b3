"""set_numpy_promotion is safe to call from signal handlers and threads, and cheap to start.

The switch holds no lock while Python code runs: a signal handler that calls it while
another call is in progress, and 8 threads toggling it at once, finish (each case runs in a
subprocess with a time limit, so a deadlock fails the test instead of hanging it). Its first
call reads NumPy's already imported core module only: it imports no module.
"""

import subprocess
import sys
import textwrap

import numpy as np

import mldtypes

TIME_LIMIT = 600  # generous: a deadlock never ends, a loaded machine is slow


def run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=TIME_LIMIT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_first_call_imports_no_module():
    out = run("""
        import sys
        import numpy as np
        import mldtypes
        before = set(sys.modules)
        mldtypes.set_numpy_promotion("jax")
        mldtypes.set_numpy_promotion("numpy")
        print(len(set(sys.modules) - before))
    """)
    assert int(out.split()[-1]) == 0


def test_signal_handler_reenters_the_switch():
    out = run("""
        import signal, sys
        import numpy as np
        import mldtypes
        calls = {"handler": 0, "switch": 0}
        def handler(signum, frame):
            calls["handler"] += 1
            # (handlers nest when the timer fires inside one: no assertion on the mode here)
            mldtypes.set_numpy_promotion("jax" if calls["handler"] % 2 else "numpy")
        import time
        t = time.perf_counter()
        mldtypes.set_numpy_promotion("jax")
        mldtypes.set_numpy_promotion("numpy")
        pair = time.perf_counter() - t
        signal.signal(signal.SIGALRM, handler)
        # signals land inside the main loop's switches; handlers mostly finish before the
        # next one (handlers interrupted by the next signal nest, as Python allows)
        signal.setitimer(signal.ITIMER_REAL, 0.0005, max(0.001, 2 * pair))
        try:
            while calls["handler"] < 30:
                for mode in ("jax", "numpy"):
                    mldtypes.set_numpy_promotion(mode)
                    calls["switch"] += 1
                with mldtypes.numpy_promotion("jax"):
                    pass  # (a handler may switch the mode inside the block)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)  # drop a signal still pending
        mldtypes.set_numpy_promotion("jax")
        assert mldtypes.get_numpy_promotion() == "jax"
        assert np.result_type(mldtypes.bfloat16, np.float16) == np.float32
        mldtypes.set_numpy_promotion("numpy")
        assert mldtypes.get_numpy_promotion() == "numpy"
        a = np.zeros(2, mldtypes.bfloat16)
        print(calls["handler"], calls["switch"], (a + np.zeros(2, np.float16)).dtype)
    """)
    handled, switched, dtype = out.split()
    assert int(handled) >= 30 and int(switched) > 0
    assert dtype == "float32"  # NumPy's own promotion is back (ml_dtypes gives float32)


def test_eight_threads_toggle_without_deadlock():
    out = run("""
        import threading
        import numpy as np
        import mldtypes
        a = np.ones(16, mldtypes.bfloat16)
        b = np.ones(16, np.int32)
        errors = []
        def work(i):
            try:
                for k in range(20):
                    mldtypes.set_numpy_promotion("jax" if (i + k) % 2 else "numpy")
                    with mldtypes.numpy_promotion("jax"):
                        pass
                    d = (a + b).dtype
                    assert d in (np.dtype(mldtypes.bfloat16), np.dtype(np.float64)), d
            except BaseException as e:
                errors.append(repr(e))
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        mldtypes.set_numpy_promotion("numpy")
        print(len(errors), errors[:1], (a + b).dtype)
    """)
    assert out.split()[0] == "0", out
    assert out.split()[-1] == str((np.ones(1, mldtypes.bfloat16) + np.ones(1, np.int32)).dtype)
