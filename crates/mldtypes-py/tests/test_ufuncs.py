"""Every NumPy ufunc on every type, against ml_dtypes 0.6.0 (vectors/ufuncs.npz / .json.gz).

Unary ufuncs run over the type's code set (every code of the ≤ 8-bit types), binary ufuncs over
every ordered pair of a sample (every code of the ≤ 6-bit types; specials included otherwise).
The output dtypes must be ml_dtypes', the outputs equal bit for bit: `test_ufunc_values` treats
any two NaNs as equal, `test_ufunc_nan_bits` then checks the NaN bit patterns too. Where
ml_dtypes has no loop (the call raises), ours raises the same exception.

`float_power` follows ml_dtypes' main branch (after 0.6.0), which registers it for the float
and complex types with `power`'s functor: its expected outputs are the vectors' `power` outputs,
in the type itself (ml_dtypes 0.6.0 has no loop and computes in float64 or complex128).

Every table-driven loop (the one-operand ufuncs, and the two-operand ones of the one-byte
formats) is compared with its scalar path on every input, results and floating-point flags
(`test_table_path_equals_scalar_path`).
"""

import warnings

import numpy as np
import pytest

import npversions
from conftest import BITS, COMPLEX, FLOATS, OURS, from_codes, load_format_npy, load_json, \
    load_npz, to_codes

META = load_json("ufuncs")
ARR = load_npz("ufuncs")
CASES = [(t, u) for t in OURS for u in sorted(META["types"][t])]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ufuncs whose expected outputs are another ufunc's vectors (see the module docstring): loops
# ml_dtypes' main branch (b793a6e) adds with the functor of a ufunc ml_dtypes 0.6.0 has, and
# mldtypes with it (ml_dtypes 0.6.0 has no loop there and lets NumPy compute in float64 or
# complex128).
FOLLOWS = {"float_power": "power"}


def source(name, ufunc):
    """The ufunc whose vectors give `ufunc`'s expected outputs on `name`."""
    return FOLLOWS.get(ufunc, ufunc) if name in FLOATS or name in COMPLEX else ufunc


def record(name, ufunc):
    """The vectors' record of `ufunc` on `name` (see `source`)."""
    return META["types"][name][source(name, ufunc)]


def inputs(name, ufunc):
    u = getattr(np, ufunc)
    if u.nin == 1:
        codes = ARR[f"{name}__unary_in"]
        return (from_codes(name, codes),), codes
    s = ARR[f"{name}__binary_in"]
    a = np.repeat(s, len(s))
    b = np.tile(s, len(s))
    pair = (a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)
    return (from_codes(name, a), from_codes(name, b)), pair


def result_bits(dtype_name, arr):
    if dtype_name in OURS:
        return to_codes(dtype_name, arr)
    if arr.dtype.kind == "c":
        f = arr.view(np.float32 if arr.dtype.itemsize == 8 else np.float64)
        return f.view(np.uint32 if arr.dtype.itemsize == 8 else np.uint64)
    return arr.view(UNSIGNED[arr.dtype.itemsize])


def nan_mask(dtype_name, bits):
    """True where the bit pattern is a NaN of dtype_name."""
    if dtype_name in FLOATS:
        cls = load_format_npy(f"codes_{dtype_name}_class")[0]
        return cls[bits.astype(np.int64)] == 4
    if dtype_name in COMPLEX:
        part = "bfloat16" if dtype_name == "bcomplex32" else None
        lo, hi = bits & 0xFFFF, bits >> 16
        if part:
            cls = load_format_npy("codes_bfloat16_class")[0]
            return (cls[lo.astype(np.int64)] == 4) | (cls[hi.astype(np.int64)] == 4)
        f = np.stack([lo, hi]).astype(np.uint16).view(np.float16)
        return np.isnan(f).any(axis=0)
    dt = np.dtype(dtype_name)
    if dt.kind == "f":
        return np.isnan(bits.view(dt))
    if dt.kind == "c":
        part = np.float32 if dt.itemsize == 8 else np.float64
        return np.isnan(bits.view(part)).reshape(-1, 2).any(axis=1).repeat(2)
    return np.zeros(bits.shape, dtype=bool)


def expected(name, ufunc, k):
    """ml_dtypes' output bits, with ours where the vectors record a deliberate difference
    (`__ours_idx` / `__ours_code`; none at present)."""
    ufunc = source(name, ufunc)
    want = ARR[f"{name}__{ufunc}__{k}"].ravel().copy()
    idx = ARR.get(f"{name}__{ufunc}__{k}__ours_idx")
    if idx is not None:
        want[idx] = ARR[f"{name}__{ufunc}__{k}__ours_code"]
    return want


def _run(name, ufunc):
    args, keys = inputs(name, ufunc)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = getattr(np, ufunc)(*args)  # NumPy's default errstate, as in the generator
    res = res if isinstance(res, tuple) else (res,)
    return res, keys, w


def _report(name, ufunc, k, keys, want, got, nin, limit=8):
    bad = np.nonzero(want != got)[0]
    if keys.size != want.size:  # complex outputs as float pairs
        keys = np.repeat(keys, want.size // keys.size)
    lines = [f"{ufunc} on {name}, output {k}: {len(bad)} of {want.size} differ"]
    for j in bad[:limit]:
        if nin == 2:
            a, b = int(keys[j]) >> 32, int(keys[j]) & 0xFFFFFFFF
            where = f"inputs ({a:#x}, {b:#x})"
        else:
            where = f"input {int(keys[j]):#x}"
        lines.append(f"  {where}: expected {int(want[j]):#x}, got {int(got[j]):#x}")
    return "\n".join(lines)


def _check_counterpart(name, ufunc, res):
    """This NumPy differs from the vectors' (see npversions): the outputs must be NumPy's own
    for the same values as int8/uint8, dtype and bits (NaN sign included)."""
    args, _ = inputs(name, ufunc)
    ref = npversions.counterpart_results(name, ufunc, args)
    assert [str(r.dtype) for r in res] == [str(r.dtype) for r in ref], (name, ufunc)
    for r, w in zip(res, ref):
        assert r.tobytes() == w.tobytes(), f"{ufunc} on {name}: {r!r} != NumPy's {w!r}"


@pytest.mark.parametrize("name,ufunc", CASES, ids=[f"{t}-{u}" for t, u in CASES])
def test_ufunc_values(name, ufunc):
    rec = record(name, ufunc)
    if "error" in rec:
        args, _ = inputs(name, ufunc)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = getattr(np, ufunc)(*args)
        except Exception as e:  # noqa: BLE001
            assert type(e).__name__ == rec["error"], (
                f"{ufunc} on {name} raised {type(e).__name__}, ml_dtypes {rec['error']}")
            return
        r = r if isinstance(r, tuple) else (r,)
        pytest.fail(f"{ufunc} on {name} returned {[str(x.dtype) for x in r]}: ml_dtypes raises "
                    f"{rec['error']} (no loop)")
    res, keys, _ = _run(name, ufunc)
    if npversions.int_ufunc_follows_counterpart(name, ufunc):
        return _check_counterpart(name, ufunc, res)
    assert [str(r.dtype) for r in res] == rec["out_dtypes"], (
        f"{ufunc} on {name}: output dtypes {[str(r.dtype) for r in res]}, "
        f"ml_dtypes {rec['out_dtypes']}")
    for k, r in enumerate(res):
        dn = rec["out_dtypes"][k]
        want = expected(name, source(name, ufunc), k)
        got = result_bits(dn, r).ravel()
        both_nan = nan_mask(dn, want) & nan_mask(dn, got)
        want_v = np.where(both_nan, 0, want)
        got_v = np.where(both_nan, 0, got)
        if not np.array_equal(want_v, got_v):
            pytest.fail(_report(name, ufunc, k, keys, want_v, got_v, rec["nin"]))


@pytest.mark.parametrize("name,ufunc", CASES, ids=[f"{t}-{u}" for t, u in CASES])
def test_ufunc_nan_bits(name, ufunc):
    rec = record(name, ufunc)
    if "error" in rec:
        return
    res, keys, _ = _run(name, ufunc)
    if npversions.int_ufunc_follows_counterpart(name, ufunc):
        return _check_counterpart(name, ufunc, res)
    for k, r in enumerate(res):
        dn = rec["out_dtypes"][k]
        want = expected(name, source(name, ufunc), k)
        got = result_bits(dn, r).ravel()
        if dn not in OURS and got.shape == want.shape:
            want = _builtin_nan_bits(name, ufunc, k, dn, want)
        if got.shape == want.shape and not np.array_equal(want, got):
            pytest.fail(_report(name, ufunc, k, keys, want, got, rec["nin"]))


def _builtin_nan_bits(name, ufunc, k, dn, want):
    """`want` with each NaN replaced by the NaN that NumPy's own `dn` loop gives on this machine.

    A NaN in an output of a NumPy builtin dtype (e.g. float16 for the sub-byte integers'
    transcendental ufuncs) is computed by NumPy's loop for that dtype, whose NaN sign depends on
    the SIMD kernels NumPy dispatches to (its AVX-512 and AVX2 float16 `log10` give NaNs of
    opposite sign). The reference for those bits is therefore NumPy itself, on the inputs
    converted to `dn`, as ml_dtypes' loops convert them.
    """
    if not nan_mask(dn, want).any():
        return want
    args, _ = inputs(name, ufunc)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = getattr(np, ufunc)(*(a.astype(dn) for a in args))
    local = local if isinstance(local, tuple) else (local,)
    local_bits = result_bits(dn, local[k]).ravel()
    if local_bits.shape != want.shape:
        return want
    swap = nan_mask(dn, want) & nan_mask(dn, local_bits)
    return np.where(swap, local_bits, want)


@pytest.mark.parametrize("name,ufunc", CASES, ids=[f"{t}-{u}" for t, u in CASES])
def test_ufunc_warnings(name, ufunc):
    """No RuntimeWarning where ml_dtypes emits none (over the same inputs)."""
    rec = record(name, ufunc)
    if "error" in rec:
        return
    _, _, w = _run(name, ufunc)
    want = {c for c, _ in rec.get("warnings", [])}
    got = sorted({(x.category.__name__, str(x.message)) for x in w})
    if "RuntimeWarning" not in want:
        assert not [g for g in got if g[0] == "RuntimeWarning"], (
            f"{ufunc} on {name}: spurious {got}")


@pytest.mark.parametrize("name", [n for n in OURS if "int_exponent_out_dtype" in
                                  META["types"][n].get("ldexp", {})])
def test_ldexp_int_exponent(name):
    rec = META["types"][name]["ldexp"]
    x = from_codes(name, ARR[f"{name}__unary_in"])
    e = ARR[f"{name}__ldexp_int__in"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.ldexp(x, e)
    assert str(r.dtype) == rec["int_exponent_out_dtype"]
    want = ARR[f"{name}__ldexp_int__0"]
    got = result_bits(str(r.dtype), r)
    both_nan = nan_mask(str(r.dtype), want) & nan_mask(str(r.dtype), got)
    bad = np.nonzero((want != got) & ~both_nan)[0]
    assert len(bad) == 0, (f"ldexp({name}, int32): {len(bad)} differ, e.g. input "
                           f"{int(ARR[name + '__unary_in'][bad[0]]):#x} exp {int(e[bad[0]])}: "
                           f"expected {int(want[bad[0]]):#x}, got {int(got[bad[0]]):#x}")


def test_every_type_has_arithmetic():
    for name in OURS:
        assert "add" in META["types"][name] and "error" not in META["types"][name]["add"]


@pytest.mark.parametrize("name", [n for n in OURS if BITS[n] <= 8 and n not in COMPLEX])
def test_ufunc_on_strided_and_2d(name):
    """Loops handle non-contiguous and multi-dimensional operands like the contiguous case."""
    codes = ARR[f"{name}__unary_in"]
    x = from_codes(name, codes)
    # The inputs include each format's largest values: x + x overflows (and
    # warns, as tested elsewhere) alike on every layout.
    with np.errstate(over="ignore"):
        flat = np.add(x, x)
        y = np.zeros(2 * len(x), dtype=x.dtype)
        y[::2] = x
        assert np.array_equal(to_codes(name, np.add(y[::2], y[::2])), to_codes(name, flat))
        if len(x) % 2 == 0:
            m = x.reshape(2, -1)
            assert np.array_equal(to_codes(name, np.add(m, m)).ravel(), to_codes(name, flat))


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("ufunc", ["add", "multiply", "less", "maximum"])
def test_ufunc_broadcasting(name, ufunc):
    """Broadcast operands (outer shapes) give the same bits as the flat pairs of the vectors."""
    rec = META["types"][name].get(ufunc)
    if rec is None or "error" in rec:
        pytest.skip(f"ml_dtypes has no {ufunc} loop for {name}")
    s = from_codes(name, ARR[f"{name}__binary_in"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outer = getattr(np, ufunc)(s[:, None], s[None, :])
        flat = getattr(np, ufunc)(np.repeat(s, len(s)), np.tile(s, len(s)))
    dn = rec["out_dtypes"][0]
    assert np.array_equal(result_bits(dn, np.ascontiguousarray(outer)).ravel(),
                          result_bits(dn, flat).ravel()), f"{ufunc} on {name}"


FULL = [(n, u) for n in OURS if BITS[n] == 8 and n in FLOATS for u in META["full_pair_ufuncs"]]


@pytest.mark.parametrize("name,ufunc", FULL, ids=[f"{n}-{u}" for n, u in FULL])
def test_arithmetic_every_code_pair(name, ufunc):
    """add/subtract/multiply/divide over all 65,536 ordered code pairs of the 8-bit floats
    (any NaN equals any NaN here; the NaN bits are checked on the sample above)."""
    codes = np.arange(256, dtype=np.uint8)
    a, b = np.repeat(codes, 256), np.tile(codes, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = getattr(np, ufunc)(from_codes(name, a), from_codes(name, b))
    assert str(r.dtype) == name
    key = f"{name}__full__{ufunc}__0"
    want = ARR[key].copy()
    idx = ARR.get(key + "__ours_idx")
    if idx is not None:
        want[idx] = ARR[key + "__ours_code"]
    got = to_codes(name, r)
    both_nan = nan_mask(name, want) & nan_mask(name, got)
    want_v, got_v = np.where(both_nan, 0, want), np.where(both_nan, 0, got)
    if not np.array_equal(want_v, got_v):
        keys = (a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)
        pytest.fail(_report(name, ufunc, 0, keys, want_v, got_v, 2))


# The bfloat16 kernels that run straight on the arrays (packed, or every second element of a
# packed array) and the chunked path for every other layout.
BF16_KERNEL_UFUNCS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax",
                      "fmin", "equal", "not_equal", "less", "less_equal", "greater",
                      "greater_equal"]


def _bf16_pairs(ufunc):
    (a, b), _ = inputs("bfloat16", ufunc)
    dn = META["types"]["bfloat16"][ufunc]["out_dtypes"][0]
    return a, b, dn, expected("bfloat16", ufunc, 0)


def _spread(x, step, offset=0):
    """`x` as every `step`-th element of a larger zeroed array, from `offset`."""
    buf = np.zeros(len(x) * step + offset, dtype=x.dtype)
    buf[offset::step][:len(x)] = x
    return buf[offset::step][:len(x)]


def _misaligned(x):
    """A copy of `x` at an odd address."""
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    y = raw[1:].view(x.dtype)
    y[...] = x
    return y


def _layouts(a, b):
    """(label, a, b) for each input layout the loops tell apart."""
    yield "packed", a, b
    yield "every second", _spread(a, 2), _spread(b, 2)
    # The last element is the last code of the buffer: the 32-bit loads must stop before it.
    yield "every second, odd start", _spread(a, 2, 1), _spread(b, 2, 1)
    yield "step 3", _spread(a, 3), _spread(b, 3)
    yield "reversed", a[::-1].copy()[::-1], b[::-1].copy()[::-1]
    yield "mixed packed and every second", a, _spread(b, 2)
    yield "misaligned", _misaligned(a), _misaligned(b)
    yield "broadcast scalar", a, np.broadcast_to(b[7], b.shape)


@pytest.mark.parametrize("ufunc", BF16_KERNEL_UFUNCS)
def test_bfloat16_kernel_layouts(ufunc):
    """Every operand layout gives the vectors' bits (NaN payloads and signs included)."""
    a, b, dn, want = _bf16_pairs(ufunc)
    f = getattr(np, ufunc)
    with np.errstate(all="ignore"):
        for label, x, y in _layouts(a, b):
            if label == "broadcast scalar":
                w = result_bits(dn, f(a, np.full_like(b, b[7]))).ravel()
            else:
                w = want
            got = result_bits(dn, f(x, y)).ravel()
            assert np.array_equal(got, w), f"{ufunc}, {label}"
        # Strided and misaligned outputs.
        for out in (np.empty(2 * len(a), dtype=dn)[::2], _misaligned(np.empty(len(a), dtype=dn))):
            f(a, b, out=out)
            assert np.array_equal(result_bits(dn, out).ravel(), want), f"{ufunc}, out= {out}"


@pytest.mark.parametrize("ufunc", BF16_KERNEL_UFUNCS[:8])
def test_bfloat16_kernel_in_place(ufunc):
    """`a op= b` and an output aliasing the second input, packed and every second element."""
    a, b, dn, want = _bf16_pairs(ufunc)
    f = getattr(np, ufunc)
    with np.errstate(all="ignore"):
        for spread in (lambda x: x.copy(), lambda x: _spread(x, 2)):
            x, y = spread(a), spread(b)
            f(x, y, out=x)
            assert np.array_equal(to_codes("bfloat16", x), want), f"{ufunc}, out is a"
            x, y = spread(a), spread(b)
            f(x, y, out=y)
            assert np.array_equal(to_codes("bfloat16", y), want), f"{ufunc}, out is b"
        # An output overlapping an input shifted by one element: element by element.
        buf = np.concatenate([a, a[:1]])
        x = buf[1:].copy()
        f(buf[1:], b, out=buf[:-1])
        step = result_bits(dn, f(x, b)).ravel()
        assert np.array_equal(to_codes("bfloat16", buf[:-1]), step), f"{ufunc}, shifted"


@pytest.mark.parametrize("ufunc", BF16_KERNEL_UFUNCS)
def test_bfloat16_kernel_lengths(ufunc):
    """Lengths around the vector width (16 elements) and offsets into a group: the vector
    part and the element-by-element remainder agree with the vectors."""
    a, b, dn, want = _bf16_pairs(ufunc)
    f = getattr(np, ufunc)
    with np.errstate(all="ignore"):
        for start in (0, 5, 16):
            for n in list(range(0, 40)) + [63, 64, 65]:
                sl = slice(start, start + n)
                got = result_bits(dn, f(a[sl], b[sl])).ravel()
                assert np.array_equal(got, want[sl]), f"{ufunc}, [{start}:{start + n}]"
                got = result_bits(dn, f(_spread(a[sl], 2), _spread(b[sl], 2))).ravel()
                assert np.array_equal(got, want[sl]), f"{ufunc}, [{start}:{start + n}], step 2"


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return sorted({str(x.message) for x in w if x.category is RuntimeWarning})


# float32 values (exact in bfloat16) and the flags ml_dtypes' float32 arithmetic raises on them.
BF16_FLAG_CASES = [
    ("multiply", 3e38, 3e38, ["overflow encountered in multiply"]),
    ("add", 3e38, 3e38, ["overflow encountered in add"]),
    ("subtract", np.inf, np.inf, ["invalid value encountered in subtract"]),
    ("divide", 1.0, 0.0, ["divide by zero encountered in divide"]),
    ("divide", 0.0, 0.0, ["invalid value encountered in divide"]),
    ("add", np.nan, 1.0, []),
    ("maximum", 1.0, np.nan, ["invalid value encountered in maximum"]),
    ("maximum", np.nan, 1.0, []),
    ("fmax", np.nan, 1.0, ["invalid value encountered in fmax"]),
    ("less", np.nan, 1.0, ["invalid value encountered in less"]),
    ("equal", np.nan, 1.0, []),
]


@pytest.mark.parametrize("ufunc,x,y,flags", BF16_FLAG_CASES)
def test_bfloat16_kernel_flags(ufunc, x, y, flags):
    """One special pair among ordinary values raises the same warnings wherever it sits: in a
    vector group, in the remainder, packed or every second element; ordinary values alone raise
    nothing."""
    bf = from_codes("bfloat16", np.zeros(1, dtype=np.uint16)).dtype
    f = getattr(np, ufunc)
    a, b = np.full(40, 1.5, dtype=bf), np.full(40, 0.75, dtype=bf)
    assert _warnings_of(lambda: f(a, b)) == []
    for pos in (0, 9, 31, 32, 39):
        p, q = a.copy(), b.copy()
        p[pos], q[pos] = x, y
        for label, u, v in (("packed", p, q), ("every second", _spread(p, 2), _spread(q, 2))):
            got = _warnings_of(lambda: f(u, v))
            want = npversions.fp_warnings(ufunc, flags)
            assert got == want, f"{ufunc}({x}, {y}) at {pos}, {label}: {got}"


def test_bfloat16_kernel_signalling_nan():
    """A signalling NaN operand raises the invalid flag in every kernel (ml_dtypes reads it as
    float32), wherever it sits, reported as this NumPy reports it (npversions.fp_warnings);
    the result NaN is quiet, with the operand's sign."""
    bf = from_codes("bfloat16", np.zeros(1, dtype=np.uint16)).dtype
    for code in (0x7F81, 0xFFBF):
        for ufunc in BF16_KERNEL_UFUNCS:
            f = getattr(np, ufunc)
            for pos in (3, 35):
                a = np.full(40, 1.5, dtype=bf)
                a.view(np.uint16)[pos] = code
                b = np.full(40, 0.75, dtype=bf)
                got = _warnings_of(lambda: f(a, b))
                want = npversions.fp_warnings(ufunc, [f"invalid value encountered in {ufunc}"])
                assert got == want, (ufunc, hex(code), pos)
                if ufunc in ("add", "subtract", "multiply", "divide"):
                    with np.errstate(all="ignore"):
                        r = f(a, b).view(np.uint16)[pos]
                    assert r == (code & 0x8000) | 0x7FC0, (ufunc, hex(code), hex(r))


@pytest.mark.parametrize("ufunc", ["add", "divide", "maximum", "fmin", "less", "not_equal"])
def test_bfloat16_kernel_large(ufunc):
    """Outputs of 16 MiB and more (stored with non-temporal stores after an unaligned head):
    the vectors' pairs repeated, at an unaligned output address, in place and every second
    element give the same bits."""
    a, b, dn, want = _bf16_pairs(ufunc)
    f = getattr(np, ufunc)
    reps = (16 << 20) // len(a) + 3
    big_a, big_b, big_want = np.tile(a, reps), np.tile(b, reps), np.tile(want, reps)
    with np.errstate(all="ignore"):
        assert np.array_equal(result_bits(dn, f(big_a, big_b)).ravel(), big_want), ufunc
        buf = np.empty(len(big_a) + 3, dtype=dn)
        out = buf[3:]
        f(big_a, big_b, out=out)
        assert np.array_equal(result_bits(dn, out).ravel(), big_want), f"{ufunc}, out= at +3"
        if dn == "bfloat16":
            x = big_a.copy()
            f(x, big_b, out=x)
            assert np.array_equal(to_codes("bfloat16", x), big_want), f"{ufunc}, in place"
            half = len(big_a) // 2
            got = f(_spread(big_a[:half], 2), _spread(big_b[:half], 2))
            assert np.array_equal(to_codes("bfloat16", got), big_want[:half]), f"{ufunc}, step 2"
