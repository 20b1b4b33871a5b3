"""Eight threads at once: casts, ufuncs, scalars and promotion queries give the single-threaded
results. On a free-threaded CPython (3.14t and later; PyO3 0.30 builds no free-threaded 3.13
module) the threads really run in parallel, and importing mldtypes leaves the GIL disabled (the
module declares ``gil_used = false``); on a regular build the same test runs, lighter, with the
GIL serializing the threads."""

import sys
import sysconfig
import threading

import numpy as np
import pytest

import mldtypes
from conftest import FLOATS, INTS, T, to_codes

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
GIL_ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()
THREADS = 8
ROUNDS = 40 if FREE_THREADED else 6


def run_threads(work):
    """Runs `work(i)` on THREADS threads released together; re-raises the first failure."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def main(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=main, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.skipif(not FREE_THREADED, reason="needs a free-threaded CPython")
def test_import_keeps_the_gil_disabled():
    # A module without the free-threading declaration would have re-enabled the GIL on import.
    assert not GIL_ENABLED


@pytest.mark.skipif(not FREE_THREADED, reason="needs a free-threaded CPython")
def test_numpy_promotion_switch_is_refused_on_free_threaded_builds():
    with pytest.raises(RuntimeError, match="free-threaded"):
        mldtypes.set_numpy_promotion("jax")
    with pytest.raises(RuntimeError, match="free-threaded"):
        mldtypes.numpy_promotion("jax")
    assert mldtypes.get_numpy_promotion() == "numpy"
    mldtypes.set_numpy_promotion("numpy")  # the default: nothing to switch, allowed
    with mldtypes.numpy_promotion("numpy"):
        assert mldtypes.get_numpy_promotion() == "numpy"


def test_casts_and_ufuncs_from_eight_threads():
    names = FLOATS + INTS + ["complex32"]
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(20_000) * 8).astype(np.float32)
    inputs = {n: (np.round(x) if n in INTS else x.astype(np.complex64) if n == "complex32"
                  else x) for n in names}

    def compute(name):
        a = inputs[name].astype(T(name))
        s = np.add(a, a)
        m = np.multiply(a, a)
        back = a.astype(inputs[name].dtype)
        return to_codes(name, a), to_codes(name, s), to_codes(name, m), back

    reference = {n: compute(n) for n in names}

    def work(i):
        for r in range(ROUNDS):
            name = names[(i + r) % len(names)]
            for got, want in zip(compute(name), reference[name]):
                assert np.array_equal(got, want, equal_nan=True), (name, i, r)

    run_threads(work)


def test_scalars_from_eight_threads():
    def work(i):
        for _ in range(ROUNDS * 25):
            assert float(mldtypes.float8_e4m3fn(464.0)) == 448.0  # tie to even
            assert np.isnan(float(mldtypes.float8_e4m3fn(464.01)))  # overflow: NaN
            assert float(mldtypes.bfloat16(0.1)) == 0.10009765625
            assert str(mldtypes.bfloat16(0.1)) == "0.100098"
            assert float(mldtypes.bfloat16(3.0) * mldtypes.bfloat16(1.5)) == 4.5
            assert int(mldtypes.int4(7) + mldtypes.int4(1)) == -8  # wraps
            assert mldtypes.finfo(mldtypes.float8_e5m2).max == 57344.0
            assert mldtypes.iinfo(mldtypes.uint4).max == 15

    run_threads(work)


def test_promotion_queries_from_eight_threads():
    bf16, i16, f16 = mldtypes.bfloat16, np.int16, np.float16

    def work(i):
        # Half the threads use strict promotion, the other half enable x64: the settings are
        # thread-local, so neither half sees the other's.
        strict = i % 2 == 0
        for _ in range(ROUNDS * 5):
            assert mldtypes.promote_types(bf16, f16) == np.dtype("float32")
            assert mldtypes.result_type(i16, 2.5, return_weak_type_flag=True) == (
                np.dtype("float32"), True)
            if strict:
                with mldtypes.numpy_dtype_promotion("strict"):
                    with pytest.raises(mldtypes.TypePromotionError):
                        mldtypes.result_type(np.float32, np.int32)
                    assert mldtypes.result_type(np.float64) == np.dtype("float32")
                assert mldtypes.result_type(np.float32, np.int32) == np.dtype("float32")
            else:
                with mldtypes.enable_x64():
                    assert mldtypes.result_type(np.float64) == np.dtype("float64")
                    assert mldtypes.result_type(np.int64, 2.5) == np.dtype("float64")
                assert mldtypes.result_type(np.float64) == np.dtype("float32")
                assert mldtypes.result_type(np.int64, 2.5) == np.dtype("float32")

    run_threads(work)
