"""Mixed-package NumPy operations against single-package ones, over every ordered pair of names.

Run in a process where ``ml_dtypes`` (the real package, or the stub of test_twins.py) and
``mldtypes`` are both importable::

    python twins_check.py mldtypes     # import mldtypes first, then ml_dtypes
    python twins_check.py ml_dtypes    # the other order

For each ordered pair (X, Z) of the 20 type names and each operation below, the result with an
mldtypes X operand and an ml_dtypes Z operand (and the other way round) is compared with the
result with both operands mldtypes': the same output bytes and dtype name, the same boolean or
dtype name, or the same exception type. Prints one JSON line: the counts, the cast level of twins,
the time ``_twins.register`` took (or the import of mldtypes, when second), and the first
mismatches. Between twins (X == Z) the expectation is that "no" casting fails and "equiv"
holds (when ``_core._twin_state()["casting"]`` is "equiv"). Exit status 1 on any mismatch.
"""

import collections
import json
import sys
import time
import warnings

import numpy as np

first = sys.argv[1] if len(sys.argv) > 1 else "mldtypes"
timing = {}
if first == "mldtypes":
    import mldtypes
    from mldtypes import _twins

    _register = _twins.register

    def _timed(module):
        t0 = time.perf_counter()
        try:
            return _register(module)
        finally:
            timing["register_s"] = time.perf_counter() - t0

    _twins.register = _timed
    import ml_dtypes
else:
    import ml_dtypes

    t0 = time.perf_counter()
    import mldtypes
    from mldtypes import _twins

    timing["mldtypes_import_s"] = time.perf_counter() - t0

NAMES = list(_twins.NAMES)
BITS = {"int1": 1, "uint1": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4,
        "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
N = 24


def sample(t, shift):
    """N elements of scalar type t: a spread of bit patterns valid for its width."""
    d = np.dtype(t)
    raw = ((np.arange(N, dtype=np.uint64) * 40503 + 7 + shift) % (1 << (8 * d.itemsize)))
    raw = raw.astype("u%d" % d.itemsize)
    bits = BITS.get(str(d))
    if bits:
        raw &= (1 << bits) - 1
    return raw.view(t)


def outcome(fn):
    """A comparable summary of fn(): result bytes and dtype name, or the exception type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                r = fn()
    except Exception as e:  # noqa: BLE001 (compared by type)
        return ("raise", type(e).__name__)
    if isinstance(r, (np.ndarray, np.generic)):
        a = np.ascontiguousarray(r)
        return ("array", str(a.dtype), a.shape, a.view(np.uint8).tobytes())
    if isinstance(r, np.dtype):
        return ("dtype", str(r))
    return ("value", repr(r))


def copyto(b_type, casting):
    def run(a, b):
        out = np.zeros(N, b_type)
        np.copyto(out, a, casting=casting)
        return out
    return run


def ops(A, B):
    """(name, function of (a, b)) for scalar types A (of a) and B (of b)."""
    yield "astype", lambda a, b: exact(a.astype(B), B, a)
    yield "astype_nocopy", lambda a, b: exact(a.astype(B, copy=False), B, a)
    yield "asarray", lambda a, b: exact(np.asarray(a, dtype=B), B, a)
    yield "array", lambda a, b: exact(np.array(a, dtype=B), B, a)
    yield "copyto", copyto(B, "same_kind")
    yield "copyto_unsafe", copyto(B, "unsafe")
    for c in CASTINGS:
        yield f"can_cast_{c}", (lambda c: lambda a, b: np.can_cast(A, B, c))(c)
    yield "promote_types", lambda a, b: np.promote_types(A, B)
    yield "result_type", lambda a, b: np.result_type(a, b)
    for u in ("add", "subtract", "multiply", "maximum", "equal", "less"):
        yield u, (lambda f: lambda a, b: f(a, b))(getattr(np, u))
    yield "add_out", lambda a, b: np.add(a, b, out=np.zeros(N, B))
    yield "concatenate", lambda a, b: np.concatenate([a, b])
    yield "setitem", lambda a, b: _setitem(a, b)


def exact(r, B, a):
    """r, after checking that its dtype is B's own (not the other package's twin) and that it
    is a view of a only when a has that same dtype."""
    if r.dtype.type is not B:
        raise AssertionError(f"dtype {r.dtype.type} instead of {B}")
    if np.shares_memory(r, a) and r.dtype != a.dtype:
        raise AssertionError("a view with another dtype")
    return r


def _setitem(a, b):
    out = b.copy()
    out[:] = a
    return out


def main():
    equiv = dict(mldtypes._core._twin_state())["casting"] == "equiv"
    checks = 0
    mismatches = []
    pairs = 0
    against_theirs = 0
    for x in NAMES:
        for z in NAMES:
            pairs += 1
            ox, oz = getattr(mldtypes, x), getattr(mldtypes, z)
            tx, tz = getattr(ml_dtypes, x), getattr(ml_dtypes, z)
            a_o, b_o = sample(ox, 0), sample(oz, 3)
            a_t, b_t = sample(tx, 0), sample(tz, 3)
            ref = {name: outcome(lambda f=f: f(a_o, b_o)) for name, f in ops(ox, oz)}
            if x == z:
                # twins are two dtypes: "no" casting never holds between them; "equiv" holds
                # when the twin casts are "equiv" (see _core._twin_state())
                ref["can_cast_no"] = ("value", "False")
                ref["can_cast_equiv"] = ("value", repr(equiv))
            ref_t = {name: outcome(lambda f=f: f(a_t, b_t)) for name, f in ops(tx, tz)}
            for label, (A, B, a, b) in (("ours->theirs", (ox, tz, a_o, b_t)),
                                        ("theirs->ours", (tx, oz, a_t, b_o))):
                for name, f in ops(A, B):
                    got = outcome(lambda: f(a, b))
                    checks += 1
                    if got != ref[name]:
                        if got == ref_t[name]:
                            against_theirs += 1
                            continue
                        mismatches.append([x, z, label, name, str(got)[:120],
                                           str(ref[name])[:120]])
    state = dict(mldtypes._core._twin_state())
    print(json.dumps({"first": first, "numpy": np.__version__, "pairs": pairs, "checks": checks,
                      "passed": checks - len(mismatches),
                      "matched_ml_dtypes_own_result": against_theirs,
                      "mismatches": len(mismatches), "twin_state": state, **timing,
                      "by_operation": dict(collections.Counter(m[3] for m in mismatches)),
                      "first_mismatches": mismatches[:10]}))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
