"""Opt-in JAX promotion inside NumPy (mldtypes.set_numpy_promotion / numpy_promotion).

With the switch on, np.result_type, np.promote_types and binary ufuncs between one of our
dtypes and a NumPy dtype (or a Python scalar, or another of our dtypes) must give jax 0.10.2's
standard x64 lattice result, taken from the engine's jax vectors
(crates/mldtypes/tests/vectors/promote/pairs.json); with it off, every such operation must
give exactly what it gave before the switch was ever turned on.
"""
import json
import os

import numpy as np
import pytest

import mldtypes

M = mldtypes if hasattr(mldtypes, "set_numpy_promotion") else mldtypes._core

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.path.join(HERE, "..", "..", "mldtypes", "tests", "vectors", "promote", "pairs.json")

OURS = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
        "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn",
        "float6_e3m2fn", "float4_e2m1fn", "int1", "int2", "int4", "uint1", "uint2", "uint4"]
PY_SCALARS = {"i*": 3, "f*": 1.5, "c*": 2j}


@pytest.fixture(scope="module")
def standard_x64():
    with open(PAIRS) as f:
        v = json.load(f)
    messages = v["messages"]
    cfg = next(c for c in v["configs"] if c["mode"] == "standard" and c["x64"])
    nodes = v["nodes"]

    def cell(a, b):
        c = cfg["promote_types"][nodes.index(a)][nodes.index(b)]
        if isinstance(c, dict):
            return {"error": c["error"], "message": messages[c["m"]]}
        return c
    return nodes, cell


@pytest.fixture(autouse=True)
def numpy_mode_off():
    M.set_numpy_promotion("numpy")
    yield
    M.set_numpy_promotion("numpy")


def sort_inputs(msg):
    head = "Input dtypes ("
    assert msg.startswith(head) and ") have no" in msg, msg
    inner, rest = msg[len(head):].split(") have no", 1)
    return head + ", ".join(sorted(inner.split(", "))) + ") have no" + rest


def dt(name):
    return np.dtype(getattr(mldtypes, name)) if name in OURS else np.dtype(name)


def outcome(f):
    """A comparable record of what an operation gives: its dtype, or its exception."""
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 - the exception class is the outcome
        return ("raise", type(e).__name__)
    return ("dtype", str(getattr(r, "dtype", r)))


def operations(nodes):
    """Every operation the switch may change, between one of our dtypes and another node."""
    ops = []
    for a in OURS:
        for b in nodes:
            if b in PY_SCALARS:
                x = PY_SCALARS[b]
                ops.append((f"{a}+{b}", lambda a=a, x=x: np.ones(2, dt(a)) + x))
                ops.append((f"{b}+{a}", lambda a=a, x=x: x + np.ones(2, dt(a))))
                ops.append((f"result_type({a},{b})",
                            lambda a=a, x=x: np.result_type(np.ones(2, dt(a)), x)))
                continue
            if a == b:
                continue
            ops.append((f"result_type({a},{b})", lambda a=a, b=b: np.result_type(dt(a), dt(b))))
            ops.append((f"promote_types({a},{b})",
                        lambda a=a, b=b: np.promote_types(dt(a), dt(b))))
            ops.append((f"{a}+{b}", lambda a=a, b=b: np.ones(2, dt(a)) + np.ones(2, dt(b))))
            ops.append((f"{a}<{b}", lambda a=a, b=b: np.ones(2, dt(a)) < np.ones(2, dt(b))))
    return ops


def test_jax_mode_follows_the_lattice_and_off_restores_numpy(standard_x64):
    nodes, cell = standard_x64
    ops = operations(nodes)
    assert M.get_numpy_promotion() == "numpy"
    before = [outcome(f) for _, f in ops]

    M.set_numpy_promotion("jax")
    assert M.get_numpy_promotion() == "jax"
    checked = 0
    for a in OURS:
        for b in nodes:
            if a == b:
                continue
            ab, ba = cell(a, b), cell(b, a)
            if b in PY_SCALARS:
                x = PY_SCALARS[b]
                calls = [(lambda: np.result_type(np.ones(2, dt(a)), x), ab),
                         (lambda: (np.ones(2, dt(a)) + x).dtype, ab),
                         (lambda: (x + np.ones(2, dt(a))).dtype, ba)]
            else:
                calls = [(lambda: np.result_type(dt(a), dt(b)), ab),
                         (lambda: np.promote_types(dt(b), dt(a)), ba),
                         (lambda: (np.ones(2, dt(a)) + np.ones(2, dt(b))).dtype, ab),
                         (lambda: (np.ones(2, dt(b)) * np.ones(2, dt(a))).dtype, ba)]
            for call, want in calls:
                if isinstance(want, dict):
                    with pytest.raises(M.TypePromotionError) as info:
                        call()
                    # NumPy may ask the two DTypes in either order: the inputs are
                    # compared as a set.
                    assert sort_inputs(str(info.value)) == sort_inputs(want["message"]), (a, b)
                else:
                    assert call() == np.dtype(want), (a, b, want)
                checked += 1
    # 18 of our lattice dtypes x 34 other nodes, 3-4 operations each.
    assert checked == 18 * 31 * 4 + 18 * 3 * 3

    M.set_numpy_promotion("numpy")
    after = [outcome(f) for _, f in ops]
    assert after == before
    M.set_numpy_promotion("jax")
    M.set_numpy_promotion("numpy")
    assert [outcome(f) for _, f in ops] == before


def test_issue_examples():
    bf = np.ones(3, mldtypes.bfloat16)
    f16 = np.ones(3, np.float16)
    f8a = np.ones(3, mldtypes.float8_e4m3fn)
    f8b = np.ones(3, mldtypes.float8_e5m2)
    default = ((bf + 1.0).dtype, (bf + np.ones(3, np.int32)).dtype)
    c32 = outcome(lambda: np.ones(3, mldtypes.complex32) + f16)
    with pytest.raises(np.exceptions.DTypePromotionError):
        np.result_type(mldtypes.bfloat16, np.float16)
    with M.numpy_promotion("jax"):
        assert np.result_type(mldtypes.bfloat16, np.float16) == np.float32
        assert np.promote_types(np.float16, mldtypes.bfloat16) == np.float32
        assert (bf + f16).dtype == np.float32
        assert (bf + 1.0).dtype == mldtypes.bfloat16
        assert (2.5 * bf).dtype == mldtypes.bfloat16
        assert (bf + np.ones(3, np.int32)).dtype == mldtypes.bfloat16
        assert np.concatenate([bf, f16]).dtype == np.float32
        msg = ("Input dtypes ('float8_e4m3fn', 'float8_e5m2') have no available implicit "
               "dtype promotion path. To avoid unintended promotion, 8-bit floats do not "
               "support implicit promotion. If you'd like your inputs to be promoted to "
               "another type, you can do so explicitly using e.g. x.astype('float32')")
        with pytest.raises(M.TypePromotionError) as info:
            f8a + f8b
        assert str(info.value) == msg
        # From np.result_type the error is also NumPy's DTypePromotionError.
        with pytest.raises(np.exceptions.DTypePromotionError) as info:
            np.result_type(f8a, f8b)
        assert isinstance(info.value, M.TypePromotionError) and str(info.value) == msg
        # NumPy's own promotion is untouched.
        assert np.result_type(np.uint8, np.int8) == np.int16
        assert (np.ones(2, np.int8) + 1.0).dtype == np.float64
        assert np.result_type(np.float32, np.int64) == np.float64
        # complex32 / bcomplex32 are not JAX types: NumPy's rules apply.
        assert outcome(lambda: np.ones(3, mldtypes.complex32) + f16) == c32
    assert M.get_numpy_promotion() == "numpy"
    assert ((bf + 1.0).dtype, (bf + np.ones(3, np.int32)).dtype) == default


def test_switch_arguments_and_nesting():
    with pytest.raises(ValueError):
        M.set_numpy_promotion("torch")
    with pytest.raises(ValueError):
        M.numpy_promotion("strict")
    with M.numpy_promotion("jax"):
        with M.numpy_promotion("numpy"):
            assert M.get_numpy_promotion() == "numpy"
            with pytest.raises(np.exceptions.DTypePromotionError):
                np.result_type(mldtypes.bfloat16, np.float16)
        assert M.get_numpy_promotion() == "jax"
        M.set_numpy_promotion("jax")  # idempotent
        assert np.result_type(mldtypes.bfloat16, np.float16) == np.float32
    assert M.get_numpy_promotion() == "numpy"
    with pytest.raises(KeyError):
        with M.numpy_promotion():
            raise KeyError("restored on exceptions too")
    assert M.get_numpy_promotion() == "numpy"


def test_promoters_do_not_leak_into_ufunc_loops():
    n = len(np.add.types)
    before = np.add(np.ones(2, mldtypes.bfloat16), np.ones(2, np.int32)).dtype
    for _ in range(3):
        M.set_numpy_promotion("jax")
        M.set_numpy_promotion("numpy")
    assert len(np.add.types) == n
    assert np.add(np.ones(2, mldtypes.bfloat16), np.ones(2, np.int32)).dtype == before


def test_switching_from_several_threads():
    """Threads switching while others compute: no crash or deadlock, and every result is
    either NumPy's or JAX's; afterwards NumPy's defaults are back."""
    import threading

    bf = np.ones(64, mldtypes.bfloat16)
    i32 = np.ones(64, np.int32)
    default = (bf + i32).dtype
    allowed = {default, np.dtype(mldtypes.bfloat16)}
    seen = set()
    errors = []

    def switcher():
        try:
            for i in range(20):
                M.set_numpy_promotion("jax" if i % 2 == 0 else "numpy")
                with M.numpy_promotion("jax"):
                    pass
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def computer():
        try:
            for _ in range(200):
                seen.add((bf + i32).dtype)
                seen.add((bf * 2.0).dtype)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (switcher, switcher, computer, computer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert seen <= allowed | {np.dtype("float32")}
    M.set_numpy_promotion("numpy")
    assert (bf + i32).dtype == default
