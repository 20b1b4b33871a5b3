#!/usr/bin/env python3
# requirements: jax==0.10.2 jaxlib==0.10.2 numpy==2.4.6 ml_dtypes==0.6.0
"""Generate JAX type-promotion reference vectors for the mldtypes promotion tests.

Writes JSON files under crates/mldtypes/tests/vectors/promote/:

* pairs.json   -- every ordered pair of the 35 lattice nodes (32 JAX dtypes plus the
                  weak types i*, f*, c*) under the four configurations
                  (standard/strict x x64 off/on): jax.dtypes.result_type with the weak
                  flag, jax.dtypes.lattice_result_type, and jax.numpy.promote_types,
                  each as [dtype, weak] / dtype or {"error": kind, "message": text}.
* lists.json   -- deterministic pseudo-random operand lists of length 1..5 mixing strong
                  dtypes, weakly typed arrays and Python scalars, under the four
                  configurations.
* invalid.json -- dtypes outside the lattice (complex32, bcomplex32) passed to
                  jax.numpy.promote_types and jax.dtypes.result_type.
* canonicalize.json -- jax.dtypes.canonicalize_dtype for every dtype, x64 off/on.

Error texts are stored once per file in "messages"; an error cell is
{"error": exception class name, "m": index into "messages"}.

x64 must be fixed before JAX is used, so each x64 setting runs in its own subprocess
(JAX_ENABLE_X64); strict mode is entered with jax.numpy_dtype_promotion('strict').
PYTHONHASHSEED is pinned so that the order of dtypes inside error messages (JAX lists
them in Python set order for n-ary promotion) is reproducible.

Usage: /path/to/python tools/gen_promotion_vectors.py [OUTDIR]
"""
import json
import os
import random
import subprocess
import sys
import warnings

PINS = {"jax": "0.10.2", "jaxlib": "0.10.2", "numpy": "2.4.6", "ml_dtypes": "0.6.0"}

# The 32 dtypes of JAX's promotion lattice, in JAX's own enumeration order, then the
# three weak types.
DTYPES = [
    "bool",
    "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "bfloat16",
    "float16", "float32", "float64",
    "complex64", "complex128",
]
WEAK = ["i*", "f*", "c*"]
NODES = DTYPES + WEAK
MODES = ["standard", "strict"]
N_LISTS = 400


def check_versions():
    import jax
    import jaxlib
    import ml_dtypes
    import numpy
    got = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
           "numpy": numpy.__version__, "ml_dtypes": ml_dtypes.__version__}
    if got != PINS:
        sys.exit(f"version mismatch: need {PINS}, have {got}")
    return got


def make_lists():
    rng = random.Random(9407)
    kinds = ["strong", "weak", "py"]
    py = ["bool", "int", "float", "complex"]
    lists = []
    for _ in range(N_LISTS):
        n = rng.randint(1, 5)
        ops = []
        for _ in range(n):
            k = rng.choice(kinds)
            if k == "py":
                ops.append({"py": rng.choice(py)})
            else:
                ops.append({k: rng.choice(DTYPES)})
        lists.append(ops)
    return lists


def worker(x64):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax._src import dtypes

    assert jax.config.jax_enable_x64 == x64

    def npdt(name):
        return np.dtype(getattr(ml_dtypes, name, None) or name)

    weak_py = {"i*": 1, "f*": 1.0, "c*": 1j}
    weak_ty = {"i*": int, "f*": float, "c*": complex}
    py_val = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}

    def with_operands(specs, fn):
        # Weakly typed operands are abstract arrays (tracers) with weak_type=True, built
        # by tracing with jax.eval_shape; no computation runs, so every dtype works.
        weak = [jax.ShapeDtypeStruct((), npdt(s["weak"]), weak_type=True)
                for s in specs if "weak" in s]
        box = []

        def traced(*tracers):
            it = iter(tracers)
            args = [npdt(s["strong"]) if "strong" in s else next(it) if "weak" in s
                    else py_val[s["py"]] for s in specs]
            box.append(fn(*args))
            return jnp.zeros(())

        jax.eval_shape(traced, *weak)
        return box[0]

    def err(e):
        return {"error": type(e).__name__, "message": str(e) if not isinstance(e, KeyError) else repr(e)}

    def rt(*args):
        try:
            d, w = dtypes.result_type(*args, return_weak_type_flag=True)
            return [str(d), bool(w)]
        except Exception as e:  # noqa: BLE001 - recorded as reference data
            return err(e)

    def lrt(*args):
        try:
            d, w = dtypes.lattice_result_type(*args)
            return [str(d), bool(w)]
        except Exception as e:  # noqa: BLE001
            return err(e)

    def pt(a, b):
        try:
            return str(jnp.promote_types(a, b))
        except Exception as e:  # noqa: BLE001
            return err(e)

    def pair_operand(n):
        return weak_py[n] if n in weak_py else npdt(n)

    def pt_operand(n):
        return weak_ty[n] if n in weak_ty else npdt(n)

    lists = make_lists()
    out = {}
    for mode in MODES:
        with jax.numpy_dtype_promotion(mode):
            res = {"result_type": [], "lattice_result_type": [], "promote_types": []}
            for a in NODES:
                res["result_type"].append([rt(pair_operand(a), pair_operand(b)) for b in NODES])
                res["lattice_result_type"].append([lrt(pair_operand(a), pair_operand(b)) for b in NODES])
                res["promote_types"].append([pt(pt_operand(a), pt_operand(b)) for b in NODES])
            lres = []
            for ops in lists:
                lres.append(with_operands(
                    ops, lambda *args: {"result_type": rt(*args), "lattice_result_type": lrt(*args)}))
            inv = []
            for bad in ["complex32", "bcomplex32"]:
                for other in ["int8", "float32", "complex64", "bfloat16", "i*", "f*", bad]:
                    inv.append({"fn": "promote_types", "args": [bad, other],
                                "result": pt(npdt(bad), pt_operand(other))})
                    inv.append({"fn": "promote_types", "args": [other, bad],
                                "result": pt(pt_operand(other), npdt(bad))})
                inv.append({"fn": "result_type", "args": [bad], "result": rt(npdt(bad))})
                inv.append({"fn": "result_type", "args": [bad, "int8"], "result": rt(npdt(bad), npdt("int8"))})
            out[mode] = {"pairs": res, "lists": lres, "invalid": inv}
    canon = {n: str(dtypes.canonicalize_dtype(npdt(n))) for n in DTYPES}
    return {"x64": x64, "modes": out, "canonicalize": canon}


def intern_messages(obj):
    """Replace each error's "message" text by an index "m" into obj["messages"]
    (the same texts recur thousands of times)."""
    table, index = [], {}

    def walk(x):
        if isinstance(x, dict):
            if "error" in x and "message" in x:
                msg = x.pop("message")
                if msg not in index:
                    index[msg] = len(table)
                    table.append(msg)
                x["m"] = index[msg]
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(obj)
    obj["messages"] = table


def main():
    versions = check_versions()
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "crates", "mldtypes", "tests", "vectors", "promote")
    os.makedirs(outdir, exist_ok=True)
    results = {}
    for x64 in (False, True):
        env = dict(os.environ, JAX_ENABLE_X64="1" if x64 else "0", PYTHONHASHSEED="0",
                   JAX_PLATFORMS="cpu")
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(int(x64))],
                           env=env, capture_output=True, text=True, check=True)
        results[x64] = json.loads(p.stdout)

    def configs(key):
        return [{"mode": mode, "x64": x64, **key(results[x64]["modes"][mode])}
                for x64 in (False, True) for mode in MODES]

    meta = {"generator": "tools/gen_promotion_vectors.py", "versions": versions}
    pairs = {**meta, "nodes": NODES, "configs": configs(lambda m: m["pairs"])}
    lists = {**meta, "lists": make_lists(), "configs": configs(lambda m: {"results": m["lists"]})}
    invalid = {**meta, "configs": configs(lambda m: {"cases": m["invalid"]})}
    canon = {**meta, "x64_off": results[False]["canonicalize"], "x64_on": results[True]["canonicalize"]}
    for name, obj in [("pairs", pairs), ("lists", lists), ("invalid", invalid), ("canonicalize", canon)]:
        intern_messages(obj)
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(obj, f, separators=(",", ":"), sort_keys=False)
            f.write("\n")
        print(f"wrote {name}.json")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        json.dump(worker(bool(int(sys.argv[2]))), sys.stdout)
    else:
        main()
