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
        v = a.view(theirs)
        assert np.shares_memory(v, a) and v.dtype.type is theirs, n
    assert _twins.register(ml_dtypes) == 0, "registered once"
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
