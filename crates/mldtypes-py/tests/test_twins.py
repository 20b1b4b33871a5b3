"""Casts between mldtypes' dtypes and their twins of the same names in another package.

The twin package is a stub named ``ml_dtypes`` made in a temporary directory: a copy of our
compiled ``_core`` extension (a second dlopen of another path has its own statics, so it
registers a second set of 20 dtypes with NumPy) and a one-line ``__init__``. Each scenario runs
in a subprocess, in both import orders.
"""

import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import mldtypes

NAMES = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
         "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
         "float4_e2m1fn", "float8_e8m0fnu", "int1", "uint1", "int2", "uint2", "int4", "uint4",
         "bcomplex32", "complex32"]


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("twin")
    pkg = root / "ml_dtypes"
    pkg.mkdir()
    (core,) = glob.glob(os.path.join(os.path.dirname(mldtypes._core.__file__), "_core*.so"))
    shutil.copy(core, pkg / os.path.basename(core))
    (pkg / "__init__.py").write_text("from ml_dtypes._core import *  # noqa: F401,F403\n")
    return str(root)


CHECKS = textwrap.dedent("""
    import sys
    import numpy as np
    from mldtypes import _twins
    names = {names!r}
    assert _twins._finder not in sys.meta_path, "the import hook is removed once used"
    for n in names:
        ours, theirs = getattr(mldtypes, n), getattr(ml_dtypes, n)
        assert ours is not theirs and np.dtype(ours) != np.dtype(theirs), n
        assert str(np.dtype(ours)) == str(np.dtype(theirs)) == n
        size = np.dtype(ours).itemsize
        raw = (np.arange(64, dtype=np.uint32) * 40503 + 7).astype("u%d" % size)
        if size == 1:
            raw &= (1 << {bits!r}[n]) - 1
        a = raw.view(ours)
        b = a.astype(theirs)
        assert b.dtype.type is theirs, n
        assert (b.view(raw.dtype) == raw).all(), n
        c = b.astype(ours)
        assert c.dtype.type is ours and (c.view(raw.dtype) == raw).all(), n
        d = np.asarray(a, dtype=theirs)
        assert d.dtype.type is theirs and (d.view(raw.dtype) == raw).all(), n
        e = np.asarray(b, dtype=ours)
        assert e.dtype.type is ours and (e.view(raw.dtype) == raw).all(), n
        assert np.can_cast(ours, theirs, "safe") and np.can_cast(theirs, ours, "safe"), n
        for x, y in ((ours, theirs), (theirs, ours)):
            assert np.can_cast(x, y, "equiv") and not np.can_cast(x, y, "no"), n
        # "equiv" never makes NumPy alias an array under the other package's dtype
        for src, to in ((a, theirs), (b, ours)):
            for r in (src.astype(to, copy=False), np.asarray(src, dtype=to),
                      np.array(src, dtype=to, copy=None)):
                assert r.dtype.type is to and not np.shares_memory(r, src), n
                assert (r.view(raw.dtype) == raw).all(), n
        v = a.view(theirs)
        assert np.shares_memory(v, a) and v.dtype.type is theirs, n
    assert _twins.register(ml_dtypes) == 0, "registered once"
    state = mldtypes._core._twin_state()
    assert state == {{"pairs": 20, "casts": 672, "promotion": True, "casting": "equiv"}}, state
    print("OK", len(names))
""")


def run(stub_dir, first):
    if first == "mldtypes":
        head = "import mldtypes\nimport ml_dtypes\n"
    else:
        head = "import ml_dtypes\nimport mldtypes\n"
    from conftest import BITS

    code = head + CHECKS.format(names=NAMES, bits=BITS)
    env = dict(os.environ, PYTHONPATH=stub_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("first", ["mldtypes", "ml_dtypes"])
def test_twin_casts_both_import_orders(stub_dir, first):
    r = run(stub_dir, first)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"OK {len(NAMES)}"


def _ml_dtypes_installed():
    import importlib.util

    return importlib.util.find_spec("ml_dtypes") is not None


@pytest.mark.skipif(_ml_dtypes_installed(), reason="needs an environment without ml_dtypes")
def test_hook_waits_without_ml_dtypes(tmp_path):
    code = textwrap.dedent("""
        import sys
        import mldtypes
        from mldtypes import _twins
        assert "ml_dtypes" not in sys.modules
        assert sys.meta_path[0] is _twins._finder
        try:
            import ml_dtypes  # not installed here
        except ImportError:
            pass
        assert _twins._finder in sys.meta_path, "still waiting after a failed import"
        assert _twins._finder.find_spec("json") is None
        print("OK")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, cwd=str(tmp_path))
    if "ModuleNotFoundError" not in r.stderr and r.returncode != 0:
        pytest.fail(r.stderr)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "OK"


def test_without_twin_casts_numpy_cannot_tell_them_apart(stub_dir):
    # The situation the twin casts fix: with registration disabled, NumPy's error names
    # both dtypes "bfloat16".
    code = textwrap.dedent("""
        import sys
        import mldtypes
        from mldtypes import _twins
        _twins.uninstall()
        import ml_dtypes
        import numpy as np
        try:
            np.zeros(2, mldtypes.bfloat16).astype(ml_dtypes.bfloat16)
        except TypeError as e:
            print(e)
    """)
    env = dict(os.environ, PYTHONPATH=stub_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Cannot cast array data from dtype(bfloat16) to dtype(bfloat16)" in r.stdout


HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("first", ["mldtypes", "ml_dtypes"])
def test_mixed_operations_match_single_package(stub_dir, first):
    # Every ordered pair of the 20 names x 44 operations (casts, can_cast under the 5
    # castings, promote_types, result_type, ufuncs, concatenate, copyto...), each with an
    # mldtypes and an ml_dtypes operand in both positions: 17,600 comparisons with the
    # single-package result.
    import json

    env = dict(os.environ, PYTHONPATH=stub_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(HERE, "twins_check.py"), first],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.stdout, r.stderr
    report = json.loads(r.stdout)
    assert report["mismatches"] == 0, report
    assert report["checks"] == 17600 and report["passed"] == 17600
    assert report["twin_state"]["casting"] == "equiv"
    assert r.returncode == 0


SWITCH = textwrap.dedent("""
    import sys
    import numpy as np
    import mldtypes
    from mldtypes import _core, _twins

    def promotions():
        # promote_types of every ordered pair, mixed against single-package: dtype name or
        # exception type.
        def one(a, b):
            try:
                return str(np.promote_types(a, b))
            except Exception as e:
                return type(e).__name__
        bad = 0
        for x in _twins.NAMES:
            for z in _twins.NAMES:
                want = one(getattr(mldtypes, x), getattr(mldtypes, z))
                bad += one(getattr(mldtypes, x), getattr(ml_dtypes, z)) != want
                bad += one(getattr(ml_dtypes, x), getattr(mldtypes, z)) != want
        return bad

    def jax_add():
        return str((np.ones(2, mldtypes.bfloat16) + np.ones(2, np.int32)).dtype)

    sequence = sys.argv[1]
    if sequence == "jax-on-then-import":
        mldtypes.set_numpy_promotion("jax")
        import ml_dtypes
        print("state", _core._twin_state()["promotion"], "jax", jax_add())
        mldtypes.set_numpy_promotion("numpy")
    elif sequence == "jax-used-before-import":
        with mldtypes.numpy_promotion("jax"):
            pass
        import ml_dtypes
        with mldtypes.numpy_promotion("jax"):
            print("state", _core._twin_state()["promotion"], "jax", jax_add())
    else:
        import ml_dtypes
        with mldtypes.numpy_promotion("jax"):
            print("state", _core._twin_state()["promotion"], "jax", jax_add())
    print("mismatches", promotions(), "numpy", jax_add())
""")


@pytest.mark.parametrize("sequence", ["jax-on-then-import", "jax-used-before-import",
                                      "import-then-jax"])
def test_twin_promotion_survives_the_jax_switch(stub_dir, sequence):
    # The JAX promotion switch and the twins' promotion order both own our DTypes'
    # common_dtype slot; in every order of switching and importing, JAX promotion works while
    # on, and once off, mixed-package promote_types equals the single-package answer for all
    # 400 ordered pairs, both ways.
    env = dict(os.environ, PYTHONPATH=stub_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", SWITCH, sequence], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == ["state True jax bfloat16", "mismatches 0 numpy float64"]


ERRORS = textwrap.dedent("""
    import ml_dtypes
    import mldtypes
    import numpy as np
    from mldtypes import _core

    q = _core._qualified_name
    assert q(mldtypes.bfloat16) == "mldtypes.bfloat16"
    assert q(ml_dtypes.bfloat16) == "ml_dtypes.bfloat16"
    assert q(np.dtype(ml_dtypes.int4)) == "ml_dtypes.int4"
    assert q(np.float32) == "numpy.float32" and q(int) == "int"

    def raises(exc, fn, *args, **kw):
        try:
            fn(*args, **kw)
        except exc as e:
            return str(e)
        raise AssertionError(f"{fn} did not raise {exc}")

    # the registration hook names both packages
    m = raises(TypeError, _core._register_twins, [(mldtypes.bfloat16, ml_dtypes.float8_e5m2)])
    assert "mldtypes.bfloat16 (2 bytes) and ml_dtypes.float8_e5m2 (1 bytes)" in m, m
    m = raises(TypeError, _core._register_twins, [(ml_dtypes.int4, mldtypes.int4)])
    assert m.startswith("ml_dtypes.int4 is not an mldtypes type"), m

    # finfo / iinfo take the twins: same format, same values
    for n in ("bfloat16", "float8_e4m3fn", "float4_e2m1fn", "float8_e8m0fnu"):
        f, g = mldtypes.finfo(getattr(ml_dtypes, n)), mldtypes.finfo(getattr(mldtypes, n))
        for k in ("bits", "eps", "max", "min", "tiny", "smallest_subnormal", "nmant", "nexp"):
            assert repr(getattr(f, k)) == repr(getattr(g, k)), (n, k)
    assert mldtypes.finfo(np.zeros(2, ml_dtypes.bfloat16)).bits == 16
    i = mldtypes.iinfo(ml_dtypes.int4)
    assert (i.min, i.max, i.bits) == (-8, 7, 4)
    assert mldtypes.iinfo(ml_dtypes.uint2).max == 3
    m = raises(ValueError, mldtypes.finfo, ml_dtypes.int4)
    assert m == "data type <class 'ml_dtypes.int4'> not inexact", m
    m = raises(ValueError, mldtypes.finfo, mldtypes.int4)
    assert m == "data type <class 'mldtypes.int4'> not inexact", m
    m = raises(ValueError, mldtypes.iinfo, ml_dtypes.bfloat16)
    assert m == "Invalid integer data type 'ml_dtypes.bfloat16'.", m

    # JAX promotion takes the twins as their formats
    assert mldtypes.promote_types(ml_dtypes.bfloat16, np.float32) == np.float32
    assert mldtypes.promote_types(ml_dtypes.int4, mldtypes.int4) == np.dtype(mldtypes.int4)
    assert mldtypes.result_type(np.zeros(2, ml_dtypes.bfloat16), np.float32) == np.float32

    # DLPack: an ml_dtypes array exports as its format (same memory)
    a = np.arange(6, dtype=np.float32).astype(mldtypes.bfloat16).astype(ml_dtypes.bfloat16)
    b = mldtypes.from_dlpack(mldtypes.to_dlpack(a))
    assert b.dtype.type is mldtypes.bfloat16 and np.shares_memory(a, b)
    assert (b.view(np.uint16) == a.view(np.uint16)).all()
    c = np.zeros(3, ml_dtypes.bcomplex32)
    m = raises(TypeError, mldtypes.to_dlpack, c)
    assert m.startswith("to_dlpack: ml_dtypes.bcomplex32 has no DLPack type code"), m
    m = raises(ValueError, mldtypes.to_dlpack, np.zeros(2, ml_dtypes.bfloat16), packed=True)
    assert m.endswith("not ml_dtypes.bfloat16"), m
    p = mldtypes.to_dlpack(np.arange(4, dtype=np.int8).astype(ml_dtypes.int4), packed=True)
    assert mldtypes.from_dlpack(p).tolist() == [0, 1, 2, 3]

    # reductions: dtype= a twin gives that dtype, the same bits
    x = np.linspace(-3, 3, 16).astype(mldtypes.bfloat16)
    s1 = mldtypes.sum(x, dtype=ml_dtypes.bfloat16)
    s2 = mldtypes.sum(x, dtype=mldtypes.bfloat16)
    assert type(s1) is ml_dtypes.bfloat16 and s1.view(np.uint16) == s2.view(np.uint16)
    m = raises(TypeError, mldtypes.dot, x, x.astype(ml_dtypes.float8_e4m3fn))
    assert m.endswith("got mldtypes.bfloat16 and ml_dtypes.float8_e4m3fn"), m
    assert mldtypes.pack(np.zeros(4, ml_dtypes.int4)).tolist() == [0, 0]
    m = raises(TypeError, mldtypes.pack, np.zeros(4, np.float32))
    assert m.endswith("got numpy.float32"), m
    packed = mldtypes.pack(np.arange(4, dtype=np.int8).astype(mldtypes.int4))
    u = mldtypes.unpack(packed, ml_dtypes.int4, 4)
    assert u.dtype.type is ml_dtypes.int4 and u.astype(np.int8).tolist() == [0, 1, 2, 3]
    m = raises(TypeError, mldtypes.unpack, packed, np.float32, 4)
    assert m.endswith("got numpy.float32"), m
    print("OK")
""")


def test_errors_name_packages_and_twins_are_accepted(stub_dir):
    env = dict(os.environ, PYTHONPATH=stub_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", ERRORS], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "OK"
