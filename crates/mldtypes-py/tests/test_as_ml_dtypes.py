"""mldtypes loaded as `ml_dtypes` by libraries that import it by name (jax, onnx, tensorstore):
`mldtypes.install_as_ml_dtypes()` and the `MLDTYPES_AS_ML_DTYPES=1` start-up switch (the
`mldtypes_as_ml_dtypes.pth` file the wheel installs).

Each case runs in a fresh interpreter: a small stand-in library module imports `ml_dtypes`,
checks its version as jax does (at least 0.5), and uses its types, `finfo` and `iinfo`.
"""

import json
import os
import pickle
import site
import subprocess
import sys
import textwrap

import pytest

import mldtypes
from conftest import load_json

FAKE_LIBRARY = textwrap.dedent('''
    """A stand-in for a library such as jax that imports ml_dtypes by name."""
    import ml_dtypes
    import numpy as np

    _version = tuple(int(p) for p in ml_dtypes.__version__.split(".")[:2])
    if _version < (0, 5):
        raise ImportError(f"fakelib needs ml_dtypes >= 0.5, found {ml_dtypes.__version__}")


    def run():
        bf = np.array([1, 2], ml_dtypes.bfloat16) + ml_dtypes.bfloat16(1)
        f8 = np.array([448, 464, 465], np.float32).astype(ml_dtypes.float8_e4m3fn)
        i4 = np.array([7, -8], np.int8).astype(ml_dtypes.int4)
        return {
            "version": ml_dtypes.__version__,
            "bf": bf.astype(np.float32).tolist(),
            "bf_dtype": str(bf.dtype),
            "f8": [None if v != v else v for v in f8.astype(np.float32).tolist()],
            "eps": float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps),
            "f8_max": float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max),
            "i4": [ml_dtypes.iinfo(ml_dtypes.int4).min, ml_dtypes.iinfo(ml_dtypes.int4).max],
            "i4_values": i4.astype(np.int8).tolist(),
            "module": ml_dtypes.bfloat16.__module__,
            "is_mldtypes": ml_dtypes.bfloat16 is __import__("mldtypes").bfloat16,
        }
''')

EXPECTED = {
    "version": "0.6.0",
    "bf": [2.0, 3.0],
    "bf_dtype": "bfloat16",
    "f8": [448.0, 448.0, None],
    "eps": 0.0078125,
    "f8_max": 448.0,
    "i4": [-8, 7],
    "i4_values": [7, -8],
    "module": "mldtypes",
    "is_mldtypes": True,
}

RUN_FAKE = "import json, fakelib; print(json.dumps(fakelib.run()))"


@pytest.fixture
def libdir(tmp_path):
    (tmp_path / "fakelib.py").write_text(FAKE_LIBRARY)
    return tmp_path


def run(code, path, env_switch=None):
    env = {k: v for k, v in os.environ.items() if k != "MLDTYPES_AS_ML_DTYPES"}
    if env_switch is not None:
        env["MLDTYPES_AS_ML_DTYPES"] = env_switch
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=str(path[0]), timeout=120)


def pth_installed():
    return any(os.path.exists(os.path.join(d, "mldtypes_as_ml_dtypes.pth"))
               for d in site.getsitepackages())


needs_pth = pytest.mark.skipif(
    not pth_installed(),
    reason="mldtypes_as_ml_dtypes.pth is not in site-packages (mldtypes not pip-installed)")


def test_function_makes_import_ml_dtypes_return_mldtypes(libdir):
    r = run("import mldtypes; m = mldtypes.install_as_ml_dtypes(); "
            "assert mldtypes.install_as_ml_dtypes() is m; " + RUN_FAKE, [libdir])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == EXPECTED


@needs_pth
def test_environment_variable_at_start_up(libdir):
    r = run(RUN_FAKE, [libdir], env_switch="1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == EXPECTED


@needs_pth
def test_environment_variable_wins_over_an_installed_ml_dtypes(libdir, tmp_path_factory):
    """With the variable, `import ml_dtypes` is mldtypes even when a real ml_dtypes package is
    importable (pip installs it beside jax): the switch runs before any other import."""
    stub = make_stub(tmp_path_factory)
    r = run(RUN_FAKE, [libdir, stub], env_switch="1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == EXPECTED


@needs_pth
def test_without_the_variable_nothing_is_imported(libdir):
    for value in (None, "", "0"):
        r = run("import sys; print(sorted(m for m in ('ml_dtypes', 'mldtypes', 'numpy') "
                "if m in sys.modules))", [libdir], env_switch=value)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "[]", value


def make_stub(tmp_path_factory):
    """A stand-in for the real ml_dtypes package (a directory `ml_dtypes/` on the path)."""
    root = tmp_path_factory.mktemp("stub")
    (root / "ml_dtypes").mkdir()
    (root / "ml_dtypes" / "__init__.py").write_text(
        '"""Stand-in for the real ml_dtypes."""\n__version__ = "0.6.0"\nREAL = True\n')
    return root


def test_real_ml_dtypes_imported_first_raises(libdir, tmp_path_factory):
    stub = make_stub(tmp_path_factory)
    code = textwrap.dedent("""
        import ml_dtypes, mldtypes
        assert ml_dtypes.REAL
        try:
            mldtypes.install_as_ml_dtypes()
        except ImportError as e:
            print(type(e).__name__, "|", e)
        else:
            print("no error")
        import sys
        print(sys.modules["ml_dtypes"] is ml_dtypes)
    """)
    r = run(code, [libdir, stub])
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.strip().splitlines()
    assert first.startswith("MlDtypesAlreadyImportedError | "), first
    assert issubclass(mldtypes.MlDtypesAlreadyImportedError, ImportError)
    assert "already imported" in first and "MLDTYPES_AS_ML_DTYPES" in first
    assert second == "True"  # the real module is left in place


def test_alias_module_surface():
    """In-process: the whole public API of ml_dtypes 0.6.0 (the names the surface vectors
    recorded from it), `__version__` the API version, mldtypes' own version unchanged."""
    r = run(textwrap.dedent("""
        import json, pickle, mldtypes
        own = mldtypes.__version__
        m = mldtypes.install_as_ml_dtypes()
        import ml_dtypes, ml_dtypes._finfo, ml_dtypes._iinfo
        print(json.dumps({
            "same": ml_dtypes is m,
            "version": ml_dtypes.__version__,
            "own_unchanged": mldtypes.__version__ == own,
            "names": sorted(n for n in dir(ml_dtypes) if not n.startswith("_")),
            "all": sorted(ml_dtypes.__all__),
            "identical": all(getattr(ml_dtypes, n) is getattr(mldtypes, n)
                             for n in ml_dtypes.__all__ if n != "__version__"),
            "finfo": ml_dtypes._finfo.finfo is mldtypes.finfo,
            "iinfo": ml_dtypes._iinfo.iinfo is mldtypes.iinfo,
            "pickle": pickle.dumps(ml_dtypes.bfloat16(1.5)).count(b"mldtypes") > 0,
        }))
    """), [os.getcwd()])
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    surface = load_json("surface")
    want_names = sorted(set(surface["types"]) | set(surface["functions"]))
    assert got["same"] and got["own_unchanged"] and got["identical"]
    assert got["finfo"] and got["iinfo"] and got["pickle"]
    assert got["version"] == "0.6.0"
    assert got["names"] == want_names
    assert got["all"] == sorted(["__version__"] + [n for n in want_names
                                                   if n not in ("real", "imag")])


def test_mldtypes_version_is_its_own():
    assert mldtypes.__version__ != "0.6.0"
    assert pickle.loads(pickle.dumps(mldtypes.bfloat16(2))) == 2
