"""`mldtypes.convert_checkpoint` / `mldtypes.inspect_checkpoint`: the library's checkpoint
engine seen from Python.

Inputs are tiny float32 safetensors files written here (an 8-byte little-endian header length,
a JSON header, the raw bytes). Expected outputs are NumPy casts through mldtypes' dtypes
(round-to-nearest-even, as ml_dtypes) and, for MXFP4, the OCP MX v1.0 rule worked out by hand:
scale X = 2^(floor(log2(amax)) - 2) as the E8M0 code log2(X) + 127, elements V / X as
float4_e2m1fn packed two to a byte, lowest bits first (`mldtypes.pack`).
"""

import json
import os
import struct
import warnings

import numpy as np
import pytest

import mldtypes

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "I32": np.int32, "U8": np.uint8, "BF16": np.uint16,
             "F16": np.float16, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8}


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: ndarray} (float32 or int32) as a safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        tag = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32"}[a.dtype]
        raw = a.tobytes()
        header[name] = {"dtype": tag, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """Returns ({name: (tag, shape, ndarray of the raw codes)}, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        raw = data[8 + n + a:8 + n + b]
        out[name] = (h["dtype"], h["shape"], np.frombuffer(raw, ST_DTYPES[h["dtype"]]))
    return out, metadata


def codes(x, dtype):
    """The codes of float32 values cast to `dtype` (round-to-nearest-even)."""
    a = np.asarray(x, np.float32).astype(dtype)
    return a.view(np.uint16 if a.itemsize == 2 else np.uint8).ravel()


W = np.array([[1.0, 0.1, -3.0, 1e-3, 2.5, -0.7, 100.0, 1 / 3]], np.float32).reshape(2, 4)
BIAS = np.array([0.5, -1.25], np.float32)
IDS = np.array([1, 2, 3], np.int32)


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "model.safetensors"
    write_safetensors(p, {"w": W, "bias": BIAS, "ids": IDS}, {"format": "pt"})
    return p


def leftovers(d):
    return sorted(n for n in os.listdir(d) if n.endswith(".mldtypes-partial") or n.startswith("."))


def test_bfloat16_codes_and_summary(model, tmp_path):
    dst = tmp_path / "out.safetensors"
    s = mldtypes.convert_checkpoint(model, dst, "bf16")
    out, meta = read_safetensors(dst)
    assert out["w"][0] == "BF16" and out["w"][1] == [2, 4]
    np.testing.assert_array_equal(out["w"][2], codes(W, mldtypes.bfloat16))
    np.testing.assert_array_equal(out["bias"][2], codes(BIAS, mldtypes.bfloat16))
    assert out["ids"][0] == "I32"
    np.testing.assert_array_equal(out["ids"][2].view(np.int32), IDS)
    assert meta.get("format") == "pt"

    assert s["target"] == "bfloat16"
    # A single-file conversion names its one shard as the input does.
    assert s["files"] == ["model.safetensors"]
    assert s["copied"] == ["ids"]
    assert s["input"] == str(model) and s["output"] == str(dst)
    assert s["bytes_written"] == os.path.getsize(dst)
    assert s["bytes_read"] == W.nbytes + BIAS.nbytes + IDS.nbytes
    assert s["warnings"] == []
    assert s["seconds"] >= 0.0
    by_name = {t["name"]: t for t in s["tensors"]}
    assert sorted(by_name) == ["bias", "w"]
    t = by_name["w"]
    assert (t["file"], t["shape"], t["from"], t["to"], t["action"]) == (
        "model.safetensors", [2, 4], "float32", "bfloat16", "convert")
    got = W.astype(mldtypes.bfloat16).astype(np.float64)
    err = np.abs(got - W.astype(np.float64))
    assert t["elements"] == 8
    assert t["max_abs_error"] == err.max()
    assert t["rel_rms_error"] == pytest.approx(
        np.sqrt((err ** 2).sum() / (W.astype(np.float64) ** 2).sum()), rel=1e-12)
    assert t["clipped"] == t["overflow_to_nonfinite"] == t["flushed_to_zero"] == 0
    # bias is exact in bfloat16: SQNR is infinite (a float, not JSON's null).
    assert by_name["bias"]["max_abs_error"] == 0.0
    assert by_name["bias"]["sqnr_db"] == float("inf")
    assert s["total"]["elements"] == 10
    assert s["total"]["max_abs_error"] == t["max_abs_error"]


@pytest.mark.parametrize("to", ["float8_e4m3fn", mldtypes.float8_e4m3fn,
                                np.dtype(mldtypes.float8_e4m3fn)])
def test_float8_target_as_name_type_or_dtype(model, tmp_path, to):
    dst = tmp_path / "out.safetensors"
    s = mldtypes.convert_checkpoint(model, dst, to)
    out, _ = read_safetensors(dst)
    assert out["w"][0] == "F8_E4M3"
    np.testing.assert_array_equal(out["w"][2], codes(W, mldtypes.float8_e4m3fn))
    assert s["target"] == "float8_e4m3fn"


def test_numpy_float16_target(model, tmp_path):
    dst = tmp_path / "out.safetensors"
    mldtypes.convert_checkpoint(model, dst, np.float16)
    out, _ = read_safetensors(dst)
    assert out["w"][0] == "F16"
    np.testing.assert_array_equal(out["w"][2], W.astype(np.float16).ravel())


def test_overflow_warns_and_saturate_clamps(tmp_path):
    src = tmp_path / "big.safetensors"
    x = np.array([[1000.0, 1.0]], np.float32)
    write_safetensors(src, {"x": x})
    with pytest.warns(RuntimeWarning, match="overflowed"):
        s = mldtypes.convert_checkpoint(src, tmp_path / "a.safetensors", "float8_e4m3fn")
    t = s["tensors"][0]
    assert (t["clipped"], t["overflow_to_nonfinite"]) == (1, 1)
    out, _ = read_safetensors(tmp_path / "a.safetensors")
    np.testing.assert_array_equal(out["x"][2], codes(x, mldtypes.float8_e4m3fn))
    assert out["x"][2][0] == 0x7F  # NaN, as ml_dtypes' non-saturating cast

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = mldtypes.convert_checkpoint(src, tmp_path / "b.safetensors", "float8_e4m3fn",
                                        saturate=True)
    t = s["tensors"][0]
    assert (t["clipped"], t["overflow_to_nonfinite"]) == (1, 0)
    out, _ = read_safetensors(tmp_path / "b.safetensors")
    assert list(out["x"][2]) == [0x7E, 0x38]  # 448, 1.0
    assert t["max_abs_error"] == 0.0  # clipped values are left out of the error sums


def test_only_glob_selects_tensors(model, tmp_path):
    dst = tmp_path / "out.safetensors"
    s = mldtypes.convert_checkpoint(model, dst, "bfloat16", only="b*")
    out, _ = read_safetensors(dst)
    assert [t["name"] for t in s["tensors"]] == ["bias"]
    assert out["w"][0] == "F32"
    np.testing.assert_array_equal(out["w"][2], W.ravel())
    assert sorted(s["copied"]) == ["ids", "w"]


def mxfp4_expected(v):
    """Blocks and scale codes of one row of 32 values per OCP MX v1.0 §6.3, for values whose
    scaled magnitudes stay within float4_e2m1fn's range (no clipping)."""
    v = np.asarray(v, np.float64).reshape(-1, 32)
    blocks, scales = [], []
    for b in v:
        e = int(np.floor(np.log2(np.abs(b).max()))) - 2  # emax of E2M1 is 2
        blocks.append(mldtypes.pack((b / 2.0 ** e).astype(np.float32)
                                    .astype(mldtypes.float4_e2m1fn)))
        scales.append(e + 127)
    return np.concatenate(blocks), np.array(scales, np.uint8)


def test_mxfp4_blocks_scales_and_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((2, 64)) * [[1.0] * 32 + [0.01] * 32]).astype(np.float32)
    w[1, :32] = 0.0  # an all-zero block: scale code 0
    w[1, 32:] *= 1e3
    src, dst = tmp_path / "in.safetensors", tmp_path / "mx.safetensors"
    write_safetensors(src, {"w": w, "norm": BIAS})
    s = mldtypes.convert_checkpoint(src, dst, "mxfp4")
    out, meta = read_safetensors(dst)
    assert sorted(out) == ["norm", "w_blocks", "w_scales"]
    assert (out["w_blocks"][0], out["w_blocks"][1]) == ("U8", [2, 2, 16])
    assert (out["w_scales"][0], out["w_scales"][1]) == ("U8", [2, 2])
    exp_blocks, exp_scales = [], []
    for r, row in enumerate(w):
        for k in range(2):
            blk = row[32 * k:32 * (k + 1)]
            if not blk.any():
                exp_blocks.append(np.zeros(16, np.uint8))
                exp_scales.append(np.uint8(0))
                continue
            b, sc = mxfp4_expected(blk)
            exp_blocks.append(b)
            exp_scales.append(sc[0])
    np.testing.assert_array_equal(out["w_blocks"][2], np.concatenate(exp_blocks))
    np.testing.assert_array_equal(out["w_scales"][2], np.array(exp_scales, np.uint8))
    np.testing.assert_array_equal(out["norm"][2].view(np.float32), BIAS)
    record = json.loads(meta["mldtypes.quantization"])
    assert record["w"] == {"format": "mxfp4", "block_size": 32, "scale_rule": "floor"}

    t = s["tensors"][0]
    assert (t["name"], t["from"], t["to"], t["action"]) == ("w", "float32", "mxfp4", "quantize")
    assert s["copied"] == ["norm"]

    # Back to float32: the exact dequantization, element x 2^(scale - 127).
    back = tmp_path / "back.safetensors"
    s2 = mldtypes.convert_checkpoint(dst, back, "float32")
    out2, _ = read_safetensors(back)
    elems = mldtypes.unpack(out["w_blocks"][2].tobytes(), mldtypes.float4_e2m1fn, (2, 2, 32))
    scale = 2.0 ** (out["w_scales"][2].astype(np.float64).reshape(2, 2, 1) - 127)
    scale[out["w_scales"][2].reshape(2, 2, 1) == 0] = 2.0 ** -127
    expect = (elems.astype(np.float64) * scale).astype(np.float32).reshape(2, 64)
    assert out2["w"][1] == [2, 64]
    np.testing.assert_array_equal(out2["w"][2].reshape(2, 64), expect)
    assert s2["tensors"][0]["action"] == "dequantize"
    assert t["max_abs_error"] == np.abs(expect.astype(np.float64) - w).max()


def test_mx_rest_and_scale_rule(tmp_path):
    # floor: X = 1 and 7 (a tie between 6 and 8) clips to 6; ceil: X = 2, 3.5 ties to even 4.
    w = np.full((1, 32), 7.0, np.float32)
    src = tmp_path / "in.safetensors"
    write_safetensors(src, {"w": w, "norm": BIAS})
    s = mldtypes.convert_checkpoint(src, tmp_path / "f.safetensors", "mxfp4", rest="bfloat16")
    by_name = {t["name"]: t for t in s["tensors"]}
    assert (by_name["norm"]["action"], by_name["norm"]["to"]) == ("convert", "bfloat16")
    assert (by_name["w"]["clipped"], by_name["w"]["max_abs_error"]) == (32, 1.0)
    assert s["copied"] == []
    out, _ = read_safetensors(tmp_path / "f.safetensors")
    assert out["norm"][0] == "BF16"
    np.testing.assert_array_equal(out["norm"][2], codes(BIAS, mldtypes.bfloat16))
    assert list(out["w_scales"][2]) == [127]
    s = mldtypes.convert_checkpoint(src, tmp_path / "c.safetensors", "mxfp4",
                                    mx_scale="ceil", rest=mldtypes.bfloat16)
    w_report = {t["name"]: t for t in s["tensors"]}["w"]
    assert (w_report["clipped"], w_report["max_abs_error"]) == (0, 1.0)
    out, meta = read_safetensors(tmp_path / "c.safetensors")
    assert list(out["w_scales"][2]) == [128]
    assert json.loads(meta["mldtypes.quantization"])["w"]["scale_rule"] == "ceil"
    # torchao's even (7 = 1.75·4 rounds up to 8 at one mantissa bit) and rceil
    # (ceil(log2(7/6)) = 1) both pick X = 2.
    for rule in ("even", "rceil"):
        s = mldtypes.convert_checkpoint(src, tmp_path / f"{rule}.safetensors", "mxfp4",
                                        mx_scale=rule)
        w_report = {t["name"]: t for t in s["tensors"]}["w"]
        assert (w_report["clipped"], w_report["max_abs_error"]) == (0, 1.0)
        out, meta = read_safetensors(tmp_path / f"{rule}.safetensors")
        assert list(out["w_scales"][2]) == [128]
        assert json.loads(meta["mldtypes.quantization"])["w"]["scale_rule"] == rule
    with pytest.raises(ValueError, match="rceil"):
        mldtypes.convert_checkpoint(src, tmp_path / "bad.safetensors", "mxfp4", mx_scale="round")


def test_inspect_checkpoint(tmp_path):
    src = tmp_path / "in.safetensors"
    x = np.array([1.0, -2.0, np.nan, 4.0], np.float32)
    write_safetensors(src, {"x": x, "ids": IDS, "empty": np.zeros((0, 3), np.float32)})
    rows = mldtypes.inspect_checkpoint(src)
    assert [r["name"] for r in rows] == ["empty", "ids", "x"]
    r = rows[2]
    assert (r["file"], r["dtype"], r["shape"]) == ("in.safetensors", "F32", [4])
    assert (r["min"], r["max"], r["mean"], r["nan_count"]) == (-2.0, 4.0, 1.0, 1)
    assert (rows[1]["min"], rows[1]["max"], rows[1]["mean"]) == (1.0, 3.0, 2.0)
    assert rows[0]["shape"] == [0, 3] and rows[0]["min"] is None and rows[0]["nan_count"] is None


def test_corrupt_file_is_a_checkpoint_error_and_leaves_nothing(tmp_path):
    src = tmp_path / "bad.safetensors"
    src.write_bytes(struct.pack("<Q", 1000) + b"{not json")
    dst = tmp_path / "out.safetensors"
    with pytest.raises(mldtypes.CheckpointError, match="bad.safetensors") as e:
        mldtypes.convert_checkpoint(src, dst, "bfloat16")
    assert isinstance(e.value, ValueError)
    assert not dst.exists()
    assert leftovers(tmp_path) == []
    with pytest.raises(mldtypes.CheckpointError, match="bad.safetensors"):
        mldtypes.inspect_checkpoint(src)


def test_data_shorter_than_header_says_is_an_error(tmp_path, model):
    src = tmp_path / "short.safetensors"
    src.write_bytes(model.read_bytes()[:-4])
    dst = tmp_path / "out"
    with pytest.raises(mldtypes.CheckpointError, match="short.safetensors"):
        mldtypes.convert_checkpoint(src, dst, "bfloat16")
    assert not dst.exists() and leftovers(tmp_path) == []


def test_missing_input_is_file_not_found(tmp_path):
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(FileNotFoundError, match="nope.safetensors") as e:
        mldtypes.convert_checkpoint(missing, tmp_path / "out.safetensors", "bfloat16")
    assert e.value.filename == str(missing)
    assert os.listdir(tmp_path) == []
    with pytest.raises(FileNotFoundError):
        mldtypes.inspect_checkpoint(str(missing))


@pytest.mark.parametrize("to, message", [
    ("bfloat17", "bfloat17"),
    ("int8", "not a floating-point dtype"),
    (np.int32, "not a floating-point dtype"),
])
def test_bad_target_is_value_error(model, tmp_path, to, message):
    with pytest.raises(ValueError, match=message):
        mldtypes.convert_checkpoint(model, tmp_path / "out.safetensors", to)
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors"]


def test_bad_arguments(model, tmp_path):
    dst = tmp_path / "out.safetensors"
    with pytest.raises(ValueError, match="mx_scale"):
        mldtypes.convert_checkpoint(model, dst, "mxfp4", mx_scale="round")
    with pytest.raises(ValueError, match="glob"):
        mldtypes.convert_checkpoint(model, dst, "bfloat16", only="w[")
    with pytest.raises(TypeError, match="to must be"):
        mldtypes.convert_checkpoint(model, dst, object())
    with pytest.raises(ValueError):
        mldtypes.convert_checkpoint(model, model, "bfloat16")
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors"]
    with pytest.raises(TypeError):
        mldtypes.convert_checkpoint(model, dst, "bfloat16", True)  # keyword-only options


def test_overwrite_in_place(model):
    mldtypes.convert_checkpoint(model, model, "bfloat16", overwrite=True, fsync=True, threads=1)
    out, _ = read_safetensors(model)
    np.testing.assert_array_equal(out["w"][2], codes(W, mldtypes.bfloat16))
    assert leftovers(model.parent) == []


def write_sharded(d, corrupt_second=False):
    d.mkdir()
    write_safetensors(d / "model-00001-of-00002.safetensors", {"a": W})
    write_safetensors(d / "model-00002-of-00002.safetensors", {"b": BIAS, "ids": IDS})
    if corrupt_second:
        p = d / "model-00002-of-00002.safetensors"
        p.write_bytes(p.read_bytes()[:-4])
    index = {"metadata": {"total_size": W.nbytes + BIAS.nbytes + IDS.nbytes},
             "weight_map": {"a": "model-00001-of-00002.safetensors",
                            "b": "model-00002-of-00002.safetensors",
                            "ids": "model-00002-of-00002.safetensors"}}
    (d / "model.safetensors.index.json").write_text(json.dumps(index))
    (d / "config.json").write_text(json.dumps({"torch_dtype": "float32"}))


def test_sharded_directory(tmp_path):
    src, dst = tmp_path / "model", tmp_path / "out"
    write_sharded(src)
    s = mldtypes.convert_checkpoint(src, dst, "bfloat16", threads=2)
    assert sorted(s["files"]) == ["model-00001-of-00002.safetensors",
                                  "model-00002-of-00002.safetensors"]
    assert sorted(os.listdir(dst)) == ["config.json", "model-00001-of-00002.safetensors",
                                       "model-00002-of-00002.safetensors",
                                       "model.safetensors.index.json"]
    index = json.loads((dst / "model.safetensors.index.json").read_text())
    assert index["metadata"]["total_size"] == 2 * W.size + 2 * BIAS.size + IDS.nbytes
    assert index["weight_map"]["a"] == "model-00001-of-00002.safetensors"
    assert json.loads((dst / "config.json").read_text())["torch_dtype"] == "bfloat16"
    a, _ = read_safetensors(dst / "model-00001-of-00002.safetensors")
    np.testing.assert_array_equal(a["a"][2], codes(W, mldtypes.bfloat16))
    rows = mldtypes.inspect_checkpoint(dst / "model.safetensors.index.json")
    assert [(r["file"], r["name"], r["dtype"]) for r in rows] == [
        ("model-00001-of-00002.safetensors", "a", "BF16"),
        ("model-00002-of-00002.safetensors", "b", "BF16"),
        ("model-00002-of-00002.safetensors", "ids", "I32")]


def test_corrupt_shard_leaves_nothing_behind(tmp_path):
    src, dst = tmp_path / "model", tmp_path / "out"
    write_sharded(src, corrupt_second=True)
    with pytest.raises(mldtypes.CheckpointError, match="model-00002-of-00002"):
        mldtypes.convert_checkpoint(src, dst, "mxfp4")
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_concurrent_calls_from_threads(model, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    def run(i):
        return mldtypes.convert_checkpoint(model, tmp_path / f"o{i}.safetensors", "bfloat16")

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(run, range(8)))
    assert all(r["total"]["elements"] == 10 for r in results)
    for i in range(8):
        out, _ = read_safetensors(tmp_path / f"o{i}.safetensors")
        np.testing.assert_array_equal(out["w"][2], codes(W, mldtypes.bfloat16))


# ---------------------------------------------------------------------------
# Reproducible output, the per-shard API (Ray), hostile inputs and signals.

import pathlib  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]


def files_of(d):
    return {n: (d / n).read_bytes() for n in sorted(os.listdir(d))}


def write_sharded_meta(d):
    """Two shards with `__metadata__` keys out of sorted order, config keys too."""
    d.mkdir()
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((64, 64), dtype=np.float32)
    w2 = rng.standard_normal((32, 128), dtype=np.float32)
    meta = {"format": "pt", "zeta": "1", "alpha": "2"}
    write_safetensors(d / "model-00001-of-00002.safetensors", {"l0.weight": w1, "n": BIAS}, meta)
    write_safetensors(d / "model-00002-of-00002.safetensors", {"l1.weight": w2, "ids": IDS}, meta)
    index = {"metadata": {"total_size": 0},
             "weight_map": {"l0.weight": "model-00001-of-00002.safetensors",
                            "n": "model-00001-of-00002.safetensors",
                            "l1.weight": "model-00002-of-00002.safetensors",
                            "ids": "model-00002-of-00002.safetensors"}}
    (d / "model.safetensors.index.json").write_text(json.dumps(index))
    (d / "config.json").write_text(
        '{"vocab_size": 10, "torch_dtype": "float32", "architectures": ["X"]}')
    (d / "tokenizer.json").write_text("{}")


@pytest.mark.parametrize("to", ["bfloat16", "float8_e4m3fn", "mxfp4", "mxfp8_e4m3", "nvfp4"])
def test_output_is_byte_identical_across_runs_and_threads(tmp_path, to):
    src = tmp_path / "model"
    write_sharded_meta(src)
    outs = []
    for i, threads in enumerate([1, 2, 1, 2, 4]):
        dst = tmp_path / f"out{i}"
        mldtypes.convert_checkpoint(src, dst, to, threads=threads)
        outs.append(files_of(dst))
    assert all(o == outs[0] for o in outs[1:])
    raw = outs[0]["model-00001-of-00002.safetensors"]
    (n,) = struct.unpack("<Q", raw[:8])
    keys = list(json.loads(raw[8:8 + n])["__metadata__"])
    extra = ["mldtypes.quantization"] if to.startswith(("mx", "nv")) else []
    assert keys == ["format", "zeta", "alpha"] + extra
    # A plain conversion sets transformers 4's torch_dtype and 5's dtype (added last).
    assert list(json.loads(outs[0]["config.json"])) == ["vocab_size", "torch_dtype",
                                                         "architectures"] + (
        ["quantization_config"] if extra else ["dtype"])


@pytest.mark.parametrize("to", ["bfloat16", "mxfp4", "nvfp4", "fp8_block"])
def test_per_shard_functions_match_the_local_conversion(tmp_path, to):
    src, local, spread = tmp_path / "model", tmp_path / "local", tmp_path / "spread"
    write_sharded_meta(src)
    whole = mldtypes.convert_checkpoint(src, local, to)
    shards = mldtypes.checkpoint_shards(src)
    assert shards == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    parts = [mldtypes.convert_checkpoint_shard(src, spread, s, to) for s in reversed(shards)]
    assert sum(len(p["tensors"]) for p in parts) == len(whole["tensors"])
    done = mldtypes.finish_checkpoint_shards(src, spread, to)
    assert done["files"] == shards
    extra = ["hf_quant_config.json"] if to == "nvfp4" else []
    assert done["copied_files"] == whole["copied_files"] == sorted(
        ["config.json", "tokenizer.json"] + extra)
    assert (done["removed_partials"], done["warnings"]) == ([], [])
    assert files_of(local) == files_of(spread)
    with pytest.raises(mldtypes.CheckpointError, match="is not the shard"):
        mldtypes.finish_checkpoint_shards(src, spread, "float16", overwrite=True)
    with pytest.raises(ValueError, match="has no shard"):
        mldtypes.convert_checkpoint_shard(src, spread, "x.safetensors", to)


def test_per_shard_refusals_stale_temporaries_and_missing_shards(tmp_path):
    """The shard API refuses an existing output as convert_checkpoint does; finishing removes
    the temporaries a killed task of this conversion left (recognized by name), leaves and
    names anything else, and a missing shard is a CheckpointError naming it."""
    src, out = tmp_path / "model", tmp_path / "out"
    write_sharded_meta(src)
    shards = mldtypes.checkpoint_shards(src)
    for s in shards:
        mldtypes.convert_checkpoint_shard(src, out, s, "float8_e4m3fn")
    mldtypes.finish_checkpoint_shards(src, out, "float8_e4m3fn")
    before = files_of(out)
    with pytest.raises(ValueError, match="exists; pass --overwrite"):
        mldtypes.convert_checkpoint_shard(src, out, shards[0], "mxfp4")
    assert files_of(out) == before
    # overwrite=True: the stale index goes first.
    mldtypes.convert_checkpoint_shard(src, out, shards[0], "mxfp4", overwrite=True)
    assert not (out / "model.safetensors.index.json").exists()
    # A killed task: SIGKILL while its temporary exists.
    big, killed = tmp_path / "big", tmp_path / "killed"
    big.mkdir()
    rng = np.random.default_rng(3)
    block = rng.standard_normal((1024, 1024), dtype=np.float32)
    write_safetensors(big / "model-00001-of-00001.safetensors",
                      {f"layers.{i}.w.weight": block for i in range(48)})
    (big / "config.json").write_text("{}")
    code = """
        import sys, mldtypes
        mldtypes.convert_checkpoint_shard(sys.argv[1], sys.argv[2],
                                          "model-00001-of-00001.safetensors", "nvfp4", threads=1)
    """
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(big), str(killed)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (killed.exists() and leftovers(killed)):
            time.sleep(0.01)
        assert leftovers(killed), "the conversion never started"
    finally:
        p.kill()
        p.wait()
    stale = leftovers(killed)
    assert len(stale) == 1 and stale[0].startswith(".model-00001-of-00001.safetensors.")
    (killed / ".notes.mldtypes-partial").write_text("not ours")
    with pytest.raises(mldtypes.CheckpointError,
                       match="1 of the 1 shards is missing: model-00001-of-00001.safetensors"):
        mldtypes.finish_checkpoint_shards(big, killed, "nvfp4")
    mldtypes.convert_checkpoint_shard(big, killed, "model-00001-of-00001.safetensors", "nvfp4")
    done = mldtypes.finish_checkpoint_shards(big, killed, "nvfp4")
    assert done["removed_partials"] == stale
    assert leftovers(killed) == [".notes.mldtypes-partial"]
    assert any("left alone: .notes.mldtypes-partial" in w for w in done["warnings"])


def gpt_oss_model(d, h=64, i=96, e=2):
    """A gpt-oss-like model: experts stored [E, in, out], their biases, attention, a router,
    embeddings and the head; config.json says model_type gpt_oss."""
    d.mkdir()
    rng = np.random.default_rng(11)
    t = {
        "model.layers.0.mlp.experts.gate_up_proj": rng.standard_normal((e, h, 2 * i)),
        "model.layers.0.mlp.experts.gate_up_proj_bias": rng.standard_normal((e, 2 * i)),
        "model.layers.0.mlp.experts.down_proj": rng.standard_normal((e, i, h)),
        "model.layers.0.mlp.router.weight": rng.standard_normal((e, h)),
        "model.layers.0.self_attn.q_proj.weight": rng.standard_normal((h, h)),
        "model.embed_tokens.weight": rng.standard_normal((8, h)),
        "lm_head.weight": rng.standard_normal((8, h)),
    }
    t = {k: (v * 0.02).astype(np.float32) for k, v in t.items()}
    write_safetensors(d / "model.safetensors", t)
    (d / "config.json").write_text(json.dumps(
        {"model_type": "gpt_oss", "dtype": "bfloat16", "tie_word_embeddings": False}))
    return t


def test_gpt_oss_mxfp4_recipe_quantizes_the_experts_along_their_input(tmp_path):
    src, dst, back = tmp_path / "model", tmp_path / "q", tmp_path / "back"
    t = gpt_oss_model(src)
    s = mldtypes.convert_checkpoint(src, dst, "mxfp4")
    assert [r["name"] for r in s["tensors"]] == ["model.layers.0.mlp.experts.down_proj",
                                                 "model.layers.0.mlp.experts.gate_up_proj"]
    out, meta = read_safetensors(dst / "model.safetensors")
    name = "model.layers.0.mlp.experts.gate_up_proj"
    assert out[name + "_blocks"][1] == [2, 192, 2, 16]
    # Output row o of expert 1 holds column o of the original, blocked along the input.
    x = t[name]
    blocks = out[name + "_blocks"][2].reshape(2, 192, 32)
    scales = out[name + "_scales"][2].reshape(2, 192, 2)
    for o in (0, 7, 191):
        b, sc = mxfp4_expected(x[1, :, o])
        np.testing.assert_array_equal(blocks[1, o], b)
        np.testing.assert_array_equal(scales[1, o], sc)
    assert json.loads(meta["mldtypes.quantization"])[name]["layout"] == "transposed"
    config = json.loads((dst / "config.json").read_text())
    assert config["quantization_config"] == {
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["lm_head", "model.embed_tokens", "model.layers.*.mlp.router",
                                   "model.layers.*.self_attn"]}
    mldtypes.convert_checkpoint(dst, back, "float32")
    out2, _ = read_safetensors(back / "model.safetensors")
    assert out2[name][1] == [2, 64, 192]
    err = np.abs(out2[name][2].reshape(x.shape).astype(np.float64) - x).max()
    reported = {r["name"]: r for r in s["tensors"]}[name]["max_abs_error"]
    assert err == reported
    assert "quantization_config" not in json.loads((back / "config.json").read_text())


@pytest.mark.parametrize("to,fmt,scale,scale_tag,scale_shape,method", [
    ("fp8", None, "weight_scale", "F32", [1], "compressed-tensors"),
    ("fp8_channel", None, "weight_scale", "F32", [64, 1], "compressed-tensors"),
    ("fp8_channel", "modelopt", "weight_scale", "F32", [64], "modelopt"),
    ("fp8_block", None, "weight_scale_inv", "F32", [1, 1], "fp8"),
    ("fp8_block", "compressed-tensors", "weight_scale", "F32", [1, 1], "compressed-tensors"),
])
def test_fp8_recipes(tmp_path, to, fmt, scale, scale_tag, scale_shape, method):
    src, dst, back = tmp_path / "model", tmp_path / "q", tmp_path / "back"
    gpt_oss_model(src)
    s = mldtypes.convert_checkpoint(src, dst, to, format=fmt)
    # The linear layers only: attention, not the router, embeddings or head; the fused experts
    # only in ModelOpt's format (ModelOpt 0.47 quantizes them, the other loaders do not).
    want = ["model.layers.0.self_attn.q_proj.weight"]
    experts = "model.layers.0.mlp.experts."
    if method == "modelopt":
        want += [experts + "down_proj", experts + "gate_up_proj"]
    assert sorted(r["name"] for r in s["tensors"]) == sorted(want)
    assert s["format"] == (fmt or method)
    out, _ = read_safetensors(dst / "model.safetensors")
    if method == "modelopt":
        # Stored as transformers holds them ([E, H, 2I]), one float32 scale per expert.
        g = experts + "gate_up_proj"
        assert (out[g][0], out[g][1]) == ("F8_E4M3", [2, 64, 192])
        assert (out[g + "_weight_scale"][0], out[g + "_weight_scale"][1]) == ("F32", [2])
    w = "model.layers.0.self_attn.q_proj."
    assert (out[w + "weight"][0], out[w + "weight"][1]) == ("F8_E4M3", [64, 64])
    assert (out[w + scale][0], out[w + scale][1]) == (scale_tag, scale_shape)
    config = json.loads((dst / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == method
    assert (dst / "hf_quant_config.json").exists() == (method == "modelopt")
    s2 = mldtypes.convert_checkpoint(dst, back, "float32")
    assert [r["action"] for r in s2["tensors"] if r["name"] == w + "weight"] == ["dequantize"]
    out2, _ = read_safetensors(back / "model.safetensors")
    assert w + scale not in out2


def test_recipe_options_are_checked(model, tmp_path):
    with pytest.raises(ValueError, match="cannot be written in the modelopt format"):
        mldtypes.convert_checkpoint(model, tmp_path / "o", "mxfp4", format="modelopt")
    with pytest.raises(ValueError, match="unknown checkpoint format"):
        mldtypes.convert_checkpoint(model, tmp_path / "o", "fp8", format="gguf")
    with pytest.raises(ValueError, match="bad exclude glob"):
        mldtypes.convert_checkpoint(model, tmp_path / "o", "fp8", exclude="[")
    s = mldtypes.convert_checkpoint(model, tmp_path / "o", "nvfp4", exclude="w",
                                    fuse_scale_2=False)
    assert s["tensors"] == []


def run_ray_example(src, dst, *args):
    return subprocess.run([sys.executable, str(ROOT / "examples" / "convert_on_ray.py"),
                           str(src), str(dst), "--num-cpus", "2", *args],
                          capture_output=True, text=True, timeout=600)


def test_ray_example_matches_the_local_conversion(tmp_path):
    """examples/convert_on_ray.py on a local two-CPU Ray cluster (loopback): the output equals
    the local conversion's; a second run with another target into the same directory is
    refused without --overwrite, and with it replaces everything, the finishing step removing
    the temporary a killed task of that conversion left."""
    pytest.importorskip("ray")
    src, local, spread = tmp_path / "model", tmp_path / "local", tmp_path / "spread"
    write_sharded_meta(src)
    # A large first shard, so a task can be killed while it writes.
    rng = np.random.default_rng(5)
    block = rng.standard_normal((1024, 1024), dtype=np.float32)
    big = {f"layers.{i}.w.weight": block for i in range(16)}
    write_safetensors(src / "model-00001-of-00002.safetensors", big)
    index = json.loads((src / "model.safetensors.index.json").read_text())
    index["weight_map"] = {k: v for k, v in index["weight_map"].items()
                           if v != "model-00001-of-00002.safetensors"}
    index["weight_map"].update({k: "model-00001-of-00002.safetensors" for k in big})
    (src / "model.safetensors.index.json").write_text(json.dumps(index))
    mldtypes.convert_checkpoint(src, local, "float8_e4m3fn")
    r = run_ray_example(src, spread, "--to", "float8_e4m3fn")
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["files"] == mldtypes.checkpoint_shards(src)
    assert files_of(local) == files_of(spread)
    before = files_of(spread)
    r = run_ray_example(src, spread, "--to", "nvfp4")
    assert r.returncode != 0 and "exists; pass --overwrite" in r.stderr, r.stderr[-3000:]
    assert files_of(spread) == before
    # A task of the nvfp4 conversion killed while it writes (as Ray kills a worker).
    code = """
        import sys, mldtypes
        mldtypes.convert_checkpoint_shard(sys.argv[1], sys.argv[2],
                                          "model-00001-of-00002.safetensors", "nvfp4",
                                          threads=1, overwrite=True)
    """
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(src), str(spread)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not leftovers(spread):
            time.sleep(0.005)
    finally:
        p.kill()
        p.wait()
    stale = leftovers(spread)
    assert stale, "the task never started"
    local_nv = tmp_path / "local-nv"
    mldtypes.convert_checkpoint(src, local_nv, "nvfp4")
    r = run_ray_example(src, spread, "--to", "nvfp4", "--overwrite")
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["removed_partials"] == stale
    assert files_of(local_nv) == files_of(spread)


def run_child(code, *args, timeout=60):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def big_model(path, mib):
    """A float32 file of `mib` MiB in 4 MiB tensors."""
    n = mib // 4
    rng = np.random.default_rng(1)
    block = rng.standard_normal((1024, 1024), dtype=np.float32)
    write_safetensors(path, {f"t{i:04d}": block for i in range(n)})


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("func", ["convert", "inspect"])
def test_ctrl_c_raises_keyboard_interrupt_promptly_and_cleans_up(tmp_path, func):
    src, dst = tmp_path / "big.safetensors", tmp_path / "out.safetensors"
    big_model(src, 256)
    code = """
        import os, signal, sys, time, mldtypes
        # Python's own Ctrl-C handler, even when this process started with SIGINT ignored
        # (as a shell without job control starts background commands)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        src, dst, func = sys.argv[1:4]
        print("ready", flush=True)
        try:
            if func == "convert":
                # repeated, so that a fast build is still converting when the signal comes
                for _ in range(50):
                    mldtypes.convert_checkpoint(src, dst, "nvfp4", threads=1)
                    os.remove(dst)
            else:
                for _ in range(50):
                    mldtypes.inspect_checkpoint(src)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
    """
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(src), str(dst), func],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 30
        if func == "convert":
            while not leftovers(tmp_path) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert leftovers(tmp_path), "the conversion never started"
            # At once: the temporary output exists only while a conversion runs (a signal
            # between two conversions would find the previous, complete output).
        else:
            time.sleep(0.3)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        p.kill()
    assert out.split() == ["KeyboardInterrupt"], err
    # About half a second at most on a quiet machine; generous for a loaded one.
    assert elapsed < 2.0, elapsed
    assert not dst.exists() and leftovers(tmp_path) == []


def test_input_truncated_while_converting_is_os_error_not_a_crash(tmp_path):
    src, dst = tmp_path / "big.safetensors", tmp_path / "out.safetensors"
    big_model(src, 128)
    code = """
        import errno, os, sys, threading, time, mldtypes
        src, dst = sys.argv[1:3]
        def cut():
            while not any(n.endswith(".mldtypes-partial") for n in os.listdir(os.path.dirname(dst))):
                time.sleep(0.005)
            os.truncate(src, 4096)
        threading.Thread(target=cut, daemon=True).start()
        try:
            mldtypes.convert_checkpoint(src, dst, "nvfp4", threads=1)
            print("finished")
        except OSError as e:
            print(type(e).__name__, e.errno == errno.EIO, e.filename == src)
            print(e)
    """
    r = run_child(code, src, dst)
    assert r.returncode == 0, r.stderr  # not killed by SIGBUS
    first, message = r.stdout.splitlines()[:2]
    assert first == "OSError True True", r.stdout
    assert "truncated while being read" in message
    assert not dst.exists() and leftovers(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_fifo_inputs_are_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)
    model = tmp_path / "model"
    model.mkdir()
    write_safetensors(model / "a.safetensors", {"w": W})
    os.mkfifo(model / "vocab.txt")
    code = """
        import sys, mldtypes
        for src in sys.argv[1:3]:
            for f in (lambda: mldtypes.convert_checkpoint(src, src + ".out", "bfloat16"),
                      lambda: mldtypes.inspect_checkpoint(src)):
                try:
                    f()
                    print("accepted")
                except mldtypes.CheckpointError as e:
                    print("FIFO" in str(e))
    """
    r = run_child(code, fifo, model, timeout=30)
    assert r.stdout.split() == ["True"] * 4, r.stdout + r.stderr


def test_os_errors_carry_errno_strerror_and_filename(model, tmp_path):
    import errno
    with pytest.raises(FileExistsError) as e:
        mldtypes.convert_checkpoint(model, "/dev/full", "bfloat16")
    assert e.value.errno == errno.EEXIST and e.value.filename == "/dev/full"
    assert "refusing to replace it" in e.value.strerror and "None" not in str(e.value)
    missing = tmp_path / "no" / "out.safetensors"
    with pytest.raises(FileNotFoundError) as e:
        mldtypes.convert_checkpoint(model, missing, "bfloat16")
    assert e.value.errno == errno.ENOENT and e.value.strerror == os.strerror(errno.ENOENT)
    assert e.value.filename == str(missing)
    with pytest.raises(FileNotFoundError) as e:
        mldtypes.inspect_checkpoint(tmp_path / "nope")
    assert e.value.filename == str(tmp_path / "nope")


class FsPath:
    def __init__(self, p):
        self.p = p

    def __fspath__(self):
        return self.p


def test_path_arguments_as_open_takes_them(model, tmp_path):
    for i, dst in enumerate([str(tmp_path / "a.st"), os.fsencode(tmp_path / "b.st"),
                             tmp_path / "c.st", FsPath(str(tmp_path / "d.st"))]):
        src = [model, str(model), os.fsencode(model), FsPath(os.fsencode(model))][i]
        s = mldtypes.convert_checkpoint(src, dst, "bfloat16")
        assert s["total"]["elements"] == 10
        assert len(mldtypes.inspect_checkpoint(dst)) == 3
    for bad in [str(model) + "\0x", os.fsencode(model) + b"\0"]:
        with pytest.raises(ValueError, match="null byte"):
            mldtypes.convert_checkpoint(bad, tmp_path / "e.st", "bfloat16")
        with pytest.raises(ValueError, match="null byte"):
            mldtypes.inspect_checkpoint(bad)
    for bad in [None, 3, 1.5]:
        with pytest.raises(TypeError):
            mldtypes.convert_checkpoint(bad, tmp_path / "e.st", "bfloat16")
        with pytest.raises(TypeError):
            mldtypes.inspect_checkpoint(bad)


def test_argument_limits(model, tmp_path):
    dst = tmp_path / "out.safetensors"
    with pytest.raises(TypeError, match="not None"):
        mldtypes.convert_checkpoint(model, dst, None)
    with pytest.raises(ValueError, match="at most 1024"):
        mldtypes.convert_checkpoint(model, dst, "bfloat16", only="*" * 100000)
    # Long but accepted patterns compile or are refused, never panic.
    for pattern in ["*" * 1024, "{" * 500 + "}" * 500, "[a-z]" * 200, "?*" * 512]:
        try:
            mldtypes.convert_checkpoint(model, dst, "bfloat16", only=pattern, overwrite=True)
        except ValueError as e:
            assert "glob" in str(e)
    with pytest.raises(ValueError, match="four per available core"):
        mldtypes.convert_checkpoint(model, dst, "bfloat16", threads=10**6)
    with pytest.raises(OverflowError):
        mldtypes.convert_checkpoint(model, dst, "bfloat16", threads=-1)
    assert leftovers(tmp_path) == []


def fnv1a_64(name):
    """The 64-bit FNV-1a hash of a tensor name (the documented seed key)."""
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return h


def test_rounding_modes_and_seeds(tmp_path):
    src = tmp_path / "in.safetensors"
    rng = np.random.default_rng(4)
    w = (rng.standard_normal((64, 96)) * 30).astype(np.float32)
    write_safetensors(src, {"w": w, "bias": BIAS})
    # Seeded stochastic rounding: the same bytes on any thread count, each
    # tensor rounded as mldtypes.cast rounds it with the tensor's key.
    outs = []
    for threads in (1, 2):
        dst = tmp_path / f"sr{threads}.safetensors"
        mldtypes.convert_checkpoint(src, dst, "float8_e4m3fn", rounding="stochastic", seed=9,
                                    sr_bits=12, threads=threads)
        outs.append(read_safetensors(dst)[0])
    for name in ("w", "bias"):
        assert outs[0][name][0] == "F8_E4M3"
        np.testing.assert_array_equal(outs[0][name][2], outs[1][name][2])
    want = mldtypes.cast(w, mldtypes.float8_e4m3fn, rounding="stochastic",
                         seed=9 ^ fnv1a_64("w"), sr_bits=12)
    np.testing.assert_array_equal(outs[0]["w"][2], want.view(np.uint8).ravel())
    # A directed mode with saturation.
    dst = tmp_path / "tz.safetensors"
    mldtypes.convert_checkpoint(src, dst, "float8_e5m2", rounding="toward_zero", saturate=True)
    want = mldtypes.cast(w, mldtypes.float8_e5m2, rounding="toward_zero", saturate=True)
    np.testing.assert_array_equal(read_safetensors(dst)[0]["w"][2], want.view(np.uint8).ravel())
    # MX elements rounded stochastically: thread-independent.
    mx = []
    for threads in (1, 2):
        dst = tmp_path / f"mx{threads}.safetensors"
        mldtypes.convert_checkpoint(src, dst, "mxfp4", only="w", rounding="stochastic_fast",
                                    seed=3, threads=threads)
        mx.append(read_safetensors(dst)[0])
    np.testing.assert_array_equal(mx[0]["w_blocks"][2], mx[1]["w_blocks"][2])
    for kwargs, match in [
        (dict(rounding="stochastic"), "needs a seed"),
        (dict(rounding="toward_zero", seed=1), "deterministic"),
        (dict(rounding="upward"), "nearest_even"),
        (dict(seed=1, sr_bits=8), "deterministic"),
    ]:
        with pytest.raises(ValueError, match=match):
            mldtypes.convert_checkpoint(src, tmp_path / "bad.safetensors", "float8_e4m3fn",
                                        **kwargs)
    with pytest.raises(ValueError, match="mxint8"):
        mldtypes.convert_checkpoint(src, tmp_path / "bad.safetensors", "mxint8", only="w",
                                    rounding="toward_zero")
    assert not (tmp_path / "bad.safetensors").exists()
    # NVFP4 and FP8 elements: thread-independent with a seed; toward_zero
    # never moves a value away from zero (dequantized |y| <= |x|), and
    # toward_positive never below it unless the element saturated at the
    # format's largest magnitude (a block's largest element can exceed
    # it: the scale is rounded to nearest).
    for target in ("nvfp4", "fp8"):
        got = []
        for threads in (1, 2):
            dst = tmp_path / f"{target}{threads}.safetensors"
            mldtypes.convert_checkpoint(src, dst, target, only="w", rounding="stochastic",
                                        seed=11, threads=threads)
            got.append(read_safetensors(dst)[0])
        assert got[0].keys() == got[1].keys()
        for name in got[0]:
            np.testing.assert_array_equal(got[0][name][2], got[1][name][2])
        for mode, ok in (("toward_zero", lambda y, x: np.abs(y) <= np.abs(x)),
                         ("toward_positive", lambda y, x: y >= x),
                         ("toward_negative", lambda y, x: y <= x)):
            q = tmp_path / f"{target}_{mode}.safetensors"
            back = tmp_path / f"{target}_{mode}_f64.safetensors"
            mldtypes.convert_checkpoint(src, q, target, only="w", rounding=mode)
            raw = read_safetensors(q)[0]["w"][2]
            if target == "nvfp4":
                top = (np.stack([raw & 0xF, raw >> 4], -1).reshape(w.shape) & 7) == 7
            else:
                top = (raw.reshape(w.shape) & 0x7F) == 0x7E
            # float64 holds every dequantized product exactly
            mldtypes.convert_checkpoint(q, back, "float64")
            tag, shape, raw = read_safetensors(back)[0]["w"]
            assert tag == "F64"
            y = raw.view(np.float64).reshape(shape)
            good = ok(y, w)
            assert (good | top).all(), (target, mode)
            assert good.mean() > 0.95, (target, mode)
