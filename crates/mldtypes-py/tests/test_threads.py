"""Several threads converting and computing at once give the single-threaded results."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import FLOATS, INTS, T, to_codes

NAMES = FLOATS + INTS + ["complex32"]


@pytest.mark.parametrize("name", NAMES)
def test_threads_agree(name):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(200_000) * 8).astype(np.float32)
    if name in INTS:
        x = np.round(x)
    if name == "complex32":
        x = x.astype(np.complex64)

    def work(_):
        a = x.astype(T(name))
        b = np.multiply(a, a)
        return to_codes(name, a), to_codes(name, b), a.astype(x.dtype)

    ref = work(0)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(8)))
    for r in results:
        for got, want in zip(r, ref):
            assert np.array_equal(got, want, equal_nan=True), name
