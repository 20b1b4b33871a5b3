#!/usr/bin/env python3
# requirements: jax==0.10.2 jaxlib==0.10.2 numpy==2.4.6 ml_dtypes==0.6.0
"""Generate the Python-level JAX type-promotion vectors for the `mldtypes` package tests.

The lattice itself (every ordered pair of the 35 lattice nodes, operand lists, invalid
dtypes, canonicalization) is covered by tools/gen_promotion_vectors.py, whose vectors
the Python suite reads as well. This script records what is specific to Python callers
of jax.dtypes.result_type and jax.numpy.promote_types: how each kind of argument is
interpreted (np.dtype objects, dtype names and aliases, scalar types, NumPy arrays and
scalars, Python values and the types int/float/complex, None, weakly typed values),
the x64-disabled canonicalization of each, and the exception class and text for every
invalid argument.

Writes crates/mldtypes-py/tests/vectors/promotion/python.json:

* "result_type": list of {"args": [operand, ...], "configs": [cell x 4]}
* "promote_types": list of {"args": [operand, operand], "configs": [cell x 4]}

A cell is [dtype name, weak flag] (result_type), a dtype name (promote_types), or
{"error": exception class name, "message": text}. The four configurations are, in order,
(standard, x64 off), (strict, x64 off), (standard, x64 on), (strict, x64 on).

An operand is a JSON list [form, value]:
  ["dtype", name]    np.dtype(name)            ["str", text]    the string itself
  ["type", name]     the scalar type (np.int8, ml_dtypes.bfloat16)
  ["array", name]    np.zeros(2, dtype)        ["scalar", name] np.dtype(name).type(0)
  ["weak", name]     a weakly typed value of that dtype (a traced jax value here;
                     mldtypes.weak(name) in the tests)
  ["py", value]      a Python bool/int/float, or {"complex": [re, im]}
  ["pytype", name]   the Python type bool/int/float/complex
  ["none", null]     None                      ["opaque", null] an object with no dtype
                     whose repr is "<opaque>"
  ["list", [..]]     a Python list

x64 must be fixed before JAX is used, so each x64 setting runs in its own subprocess.
JAX's warning about truncated 64-bit dtypes (x64 disabled) is not recorded.

Usage: /path/to/python tools/gen_py_promotion_vectors.py [OUTDIR]
"""
import json
import os
import random
import subprocess
import sys
import warnings

# The pins, the lattice's 32 dtypes (in JAX's enumeration order) and the version check
# are the promotion-vector generator's, beside this script.
import gen_promotion_vectors as base

PINS = base.PINS
LATTICE = base.DTYPES
check_versions = base.check_versions
OUTSIDE = ["complex32", "bcomplex32"]
ALL = LATTICE + OUTSIDE
FORMS = ["dtype", "str", "type", "array", "scalar", "weak"]
# NumPy spellings of the builtin dtypes (type codes, sized codes, aliases).
ALIASES = [
    "?", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "e", "f", "d", "F", "D",
    "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16",
    "<f4", ">f4", "=i8", "|b1", "b1", "int", "float", "complex", "bool", "double",
    "single", "half", "longlong", "ulonglong", "intp", "uintp", "int_", "uint", "byte",
    "ubyte", "short", "ushort", "intc", "uintc", "long", "ulong", "cdouble", "csingle",
    "float_", "bool_", "BFLOAT16",
]
# Specifiers NumPy understands but JAX rejects, and text NumPy rejects.
INVALID_STR = ["longdouble", "g", "G", "U3", "S2", "V4", "O", "object", "datetime64[s]",
               "m8", "M8[ns]", "nonsense", "bf16", "float8", ""]
PY_VALUES = [True, False, 0, 1, -7, 2 ** 40, 2 ** 70, 0.5, -1e300, float("inf"),
             {"complex": [0.0, 1.0]}, {"complex": [2.5, -1.0]}]
N_MIXED = 600


def make_cases():
    """Deterministic operand lists (the same in every worker)."""
    rt, pt = [], []
    for name in ALL:
        for form in FORMS:
            rt.append([[form, name]])
    for s in ALIASES + INVALID_STR:
        rt.append([["str", s]])
        rt.append([["str", s], ["dtype", "bfloat16"]])
        pt.append([["str", s], ["dtype", "int8"]])
        pt.append([["dtype", "float16"], ["str", s]])
    for v in PY_VALUES:
        rt.append([["py", v]])
        for other in ["int8", "uint32", "bfloat16", "float8_e5m2", "float64", "complex64", "bool"]:
            rt.append([["py", v], ["array", other]])
            rt.append([["scalar", other], ["py", v]])
    for t in ["bool", "int", "float", "complex"]:
        rt.append([["pytype", t]])
        for other in ["int8", "uint64", "bfloat16", "float4_e2m1fn", "float32", "complex128",
                      "bool", "int4"]:
            rt.append([["pytype", t], ["dtype", other]])
            pt.append([["pytype", t], ["dtype", other]])
            pt.append([["type", other], ["pytype", t]])
        for u in ["bool", "int", "float", "complex"]:
            rt.append([["pytype", t], ["pytype", u]])
            pt.append([["pytype", t], ["pytype", u]])
    for extra in [[["none", None]], [["none", None], ["dtype", "int8"]],
                  [["none", None], ["weak", "bfloat16"]], [["opaque", None]],
                  [["opaque", None], ["dtype", "int8"]], [["list", [1, 2]]],
                  [["list", [1.5]]], [["list", []]]]:
        rt.append(extra)
    for a in [["none", None], ["opaque", None], ["py", 1], ["py", 1.5], ["py", True],
              ["list", [1, 2]], ["array", "int8"], ["scalar", "float32"]]:
        pt.append([a, ["dtype", "int8"]])
        pt.append([["dtype", "bfloat16"], a])
    for name in OUTSIDE:
        for form in ["dtype", "str", "type"]:
            for other in [["dtype", "int8"], ["pytype", "float"], ["dtype", name]]:
                pt.append([[form, name], other])
                pt.append([other, [form, name]])
            rt.append([[form, name], ["dtype", "float32"]])
            rt.append([["py", 1.5], [form, name]])
    rng = random.Random(20260)
    simple = [["py", v] for v in PY_VALUES] + [["pytype", t] for t in
                                               ["bool", "int", "float", "complex"]]
    for _ in range(N_MIXED):
        ops = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.2:
                ops.append(rng.choice(simple))
            else:
                ops.append([rng.choice(FORMS), rng.choice(LATTICE)])
        rt.append(ops)
    return rt, pt


def worker(x64):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax._src import dtypes

    assert jax.config.jax_enable_x64 == x64

    class Opaque:
        def __repr__(self):
            return "<opaque>"

    def scalar_type(name):
        return getattr(ml_dtypes, name, None) or np.dtype(name).type

    def npdt(name):
        return np.dtype(scalar_type(name))

    def build(op, tracer):
        form, v = op
        if form == "dtype":
            return npdt(v)
        if form == "str":
            return v
        if form == "type":
            return scalar_type(v)
        if form == "array":
            return np.zeros(2, npdt(v))
        if form == "scalar":
            return npdt(v).type(0)
        if form == "weak":
            return tracer
        if form == "py":
            return complex(*v["complex"]) if isinstance(v, dict) else v
        if form == "pytype":
            return {"bool": bool, "int": int, "float": float, "complex": complex}[v]
        if form == "none":
            return None
        if form == "opaque":
            return Opaque()
        if form == "list":
            return list(v)
        raise AssertionError(form)

    def run(ops, fn):
        weak = [op for op in ops if op[0] == "weak"]
        try:
            structs = [jax.ShapeDtypeStruct((), npdt(op[1]), weak_type=True) for op in weak]
        except Exception as e:  # noqa: BLE001 - recorded as reference data
            return {"error": type(e).__name__, "message": str(e), "setup": True}
        box = []

        def traced(*tracers):
            it = iter(tracers)
            args = [build(op, next(it) if op[0] == "weak" else None) for op in ops]
            try:
                box.append(fn(*args))
            except Exception as e:  # noqa: BLE001
                box.append({"error": type(e).__name__, "message": str(e)})
            return jnp.zeros(())

        if structs:
            jax.eval_shape(traced, *structs)
        else:
            traced()
        return box[0]

    def rt(*args):
        d, w = dtypes.result_type(*args, return_weak_type_flag=True)
        return [str(d), bool(w)]

    def pt(a, b):
        return str(jnp.promote_types(a, b))

    rt_cases, pt_cases = make_cases()
    out = {"result_type": [], "promote_types": []}
    for mode in ["standard", "strict"]:
        with jax.numpy_dtype_promotion(mode):
            out["result_type"].append([run(ops, rt) for ops in rt_cases])
            out["result_type_empty"] = None
            out["promote_types"].append([run(ops, pt) for ops in pt_cases])
            try:
                dtypes.result_type()
            except Exception as e:  # noqa: BLE001
                out["result_type_empty"] = {"error": type(e).__name__, "message": str(e)}
    return out


def main():
    versions = check_versions()
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "crates", "mldtypes-py", "tests",
        "vectors", "promotion")
    os.makedirs(outdir, exist_ok=True)
    results = {}
    for x64 in (False, True):
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", PYTHONHASHSEED="0",
                   JAX_PLATFORMS="cpu")
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(int(x64))],
                           env=env, capture_output=True, text=True, check=True)
        results[x64] = json.loads(p.stdout)
    rt_cases, pt_cases = make_cases()
    configs = [(False, 0), (False, 1), (True, 0), (True, 1)]
    obj = {
        "generator": "tools/gen_py_promotion_vectors.py",
        "versions": versions,
        "configs": [{"mode": ["standard", "strict"][m], "x64": x} for x, m in configs],
        "result_type_empty": results[False]["result_type_empty"],
        "result_type": [{"args": ops, "configs": [results[x]["result_type"][m][i] for x, m in configs]}
                        for i, ops in enumerate(rt_cases)],
        "promote_types": [{"args": ops, "configs": [results[x]["promote_types"][m][i] for x, m in configs]}
                          for i, ops in enumerate(pt_cases)],
    }
    path = os.path.join(outdir, "python.json")
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path}: {len(rt_cases)} result_type and {len(pt_cases)} promote_types cases x 4")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        json.dump(worker(bool(int(sys.argv[2]))), sys.stdout)
    else:
        main()
