"""Checks the checkpoints `mldtypes convert` writes with its quantization
recipes against vLLM's checkpoint parsing, without running vLLM.

vLLM needs a CUDA (or ROCm, XPU, TPU) build and a matching torch, so it is not
run here. Instead this script reads vLLM's source (the wheel, unpacked) and:

- runs vLLM's own name-matching functions on our configurations, taken
  verbatim out of its source with `ast` (`is_equal_or_regex_match` and
  `find_matching_patterns` from `quantization/utils/config_utils.py`,
  `is_layer_skipped` from `quantization/utils/quant_utils.py`,
  `should_ignore_layer` from `quantization/compressed_tensors/utils.py`,
  `ModelOptQuantConfigBase.is_layer_excluded`, `.from_config` and
  `._extract_modelopt_quant_algo`, `ModelOptNvFp4Config._from_config`,
  `CompressedTensorsConfig._is_fp8_w8a8`), and its tables (`LINEAR_ALGOS`,
  `QuantizationMethods`) with `ast.literal_eval`;
- transcribes what is too entangled with the rest of vLLM to lift out
  (marked "transcribed" below, each with the file it comes from): where the
  configuration is read from, which method claims it, `Fp8Config`'s checks,
  the compressed-tensors scheme map (parsed with compressed-tensors 0.17,
  the version vLLM pins, when `--ct` points at it), the weight-name mapping
  of gpt-oss, and the parameter shapes each method creates;
- for every module of every checkpoint, decides as vLLM would whether the
  module is quantized or skipped, and requires that decision to agree with
  the checkpoint (a quantized module has its scales; a skipped one is
  floating point), the shards vLLM fuses (q/k/v, gate/up) to agree, and
  every quantized tensor and scale to have the dtype and shape vLLM
  allocates for it.

Usage (after `tools/verify_clients.py --work DIR`, whose converted
checkpoints `DIR/q-*` it reads):

    pip download vllm==0.33.0 --no-deps -d /work/venvs/vllm-src
    unzip -q /work/venvs/vllm-src/vllm-0.33.0-*.whl 'vllm/*.py' 'vllm/**/*.py' \\
        -d /work/venvs/vllm-src/src
    pip install --no-deps --target /work/venvs/ct017 compressed-tensors==0.17.0
    /work/venvs/clients/bin/python tools/check_vllm_configs.py \\
        --vllm-src /work/venvs/vllm-src/src --ct /work/venvs/ct017 DIR

Not part of the test suite.
"""

import argparse
import ast
import fnmatch as _fnmatch
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

Q = "vllm/model_executor/layers/quantization"


# ---------------------------------------------------------------------------
# vLLM's own code, lifted out of its source


def _source(root, rel):
    return (Path(root) / rel).read_text()


def _find(tree, path):
    """The FunctionDef at `path` ("f" or "Class.f") in a module's AST."""
    node = tree
    for part in path.split("."):
        node = next(n for n in node.body if getattr(n, "name", None) == part)
    return node


def lift(root, rel, path, ns):
    """Compiles the function `path` of file `rel` into `ns`, its decorators
    dropped (a classmethod then takes its class as an ordinary argument)."""
    src = _source(root, rel)
    fn = _find(ast.parse(src), path)
    fn.decorator_list = []
    code = compile(ast.Module(body=[fn], type_ignores=[]), f"{rel}:{path}", "exec")
    exec(code, ns)
    return ns[fn.name]


def literal(root, rel, name):
    """The value of the top-level assignment `name` of file `rel`."""
    tree = ast.parse(_source(root, rel))
    for n in tree.body:
        targets = n.targets if isinstance(n, ast.Assign) else [getattr(n, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            v = n.value
            if isinstance(v, ast.Subscript):  # Literal[...]
                v = v.slice
            return ast.literal_eval(v)
    raise KeyError(name)


class Vllm:
    def __init__(self, root, have_ct):
        try:
            import regex as rx  # what vLLM imports as re
        except ImportError:
            rx = re
        ns = {"re": rx, "fnmatch": _fnmatch.fnmatch, "MappingProxyType": MappingProxyType,
              "Mapping": Mapping, "Iterable": Iterable, "Literal": Literal, "Any": Any}
        self.ns = ns
        lift(root, f"{Q}/utils/config_utils.py", "is_equal_or_regex_match", ns)
        lift(root, f"{Q}/utils/config_utils.py", "find_matching_patterns", ns)
        self.is_layer_skipped = lift(root, f"{Q}/utils/quant_utils.py", "is_layer_skipped", ns)
        self.should_ignore_layer = lift(
            root, f"{Q}/compressed_tensors/utils.py", "should_ignore_layer", ns)
        self.is_layer_excluded = lift(
            root, f"{Q}/modelopt.py", "ModelOptQuantConfigBase.is_layer_excluded", ns)
        self.extract_algo = lift(
            root, f"{Q}/modelopt.py", "ModelOptQuantConfigBase._extract_modelopt_quant_algo", ns)
        self.linear_algos = literal(root, f"{Q}/modelopt.py", "LINEAR_ALGOS")
        ns["QUANT_ALGOS"] = [*self.linear_algos, "MIXED_PRECISION"]
        self.modelopt_from_config = lift(
            root, f"{Q}/modelopt.py", "ModelOptQuantConfigBase.from_config", ns)
        self.nvfp4_from_config = lift(root, f"{Q}/modelopt.py", "ModelOptNvFp4Config._from_config",
                                      ns)
        self.get_from_keys = lift(root, f"{Q}/base_config.py",
                                  "QuantizationConfig.get_from_keys", ns)
        self.methods = list(literal(root, f"{Q}/__init__.py", "QuantizationMethods"))
        self.is_fp8_w8a8 = None
        if have_ct:
            from compressed_tensors.quantization import QuantizationStrategy, QuantizationType
            ns["QuantizationStrategy"], ns["QuantizationType"] = (
                QuantizationStrategy, QuantizationType)
            ns["QuantizationArgs"] = object
            self.is_fp8_w8a8 = lift(root, f"{Q}/compressed_tensors/compressed_tensors.py",
                                    "CompressedTensorsConfig._is_fp8_w8a8", ns)

    def modelopt_config(self, config):
        """`ModelOptQuantConfigBase.from_config` as ModelOptFp8Config /
        ModelOptNvFp4Config run it; returns (owner, quant_algo, exclude)."""
        v = self

        class Cls:
            get_from_keys = staticmethod(v.get_from_keys)

            @classmethod
            def _from_config(cls, *, quant_method, kv_cache_quant_method, exclude_modules,
                             original_config, group_size):
                owner = v.linear_algos[quant_method][0]
                if owner == "modelopt_fp4":
                    captured = {}

                    class Nv:
                        def __new__(c, *args, **kw):
                            captured["args"] = args
                            return captured

                    v.nvfp4_from_config(Nv, quant_method=quant_method,
                                        kv_cache_quant_method=kv_cache_quant_method,
                                        exclude_modules=exclude_modules,
                                        original_config=original_config,
                                        group_size=group_size)
                    quant_method = captured["args"][0]
                return owner, quant_method, exclude_modules

        return v.modelopt_from_config(Cls, config)


# ---------------------------------------------------------------------------
# Transcribed


def read_quant_config(d):
    """vllm/transformers_utils/config.py (get_config): `quantization_config`
    of config.json, else hf_quant_config.json (ModelOpt <= 0.29)."""
    cfg = json.loads((d / "config.json").read_text())
    q = cfg.get("quantization_config")
    if q is None and (d / "hf_quant_config.json").exists():
        q = json.loads((d / "hf_quant_config.json").read_text())
    return cfg, q


def claimed_method(v, q, model_type):
    """vllm/config/model.py (_verify_quantization) with the
    override_quantization_method of each config class that claims our
    checkpoints (modelopt.py, mxfp4.py): the method vLLM selects."""
    algo = v.extract_algo(q)
    if algo is not None and ("NVFP4" in algo or "FP4" in algo):
        return "modelopt_fp4"
    if algo is not None and algo == "FP8":
        return "modelopt"
    if q.get("quant_method") in ("mxfp4", "gpt_oss_mxfp4") and model_type == "gpt_oss":
        return "gpt_oss_mxfp4"
    return q.get("quant_method")


def gpt_oss_map(name):
    """vllm/model_executor/models/gpt_oss.py, hf_to_vllm_mapper on module
    names (the substring rule; the suffix rules only rename parameters)."""
    return name.replace(".self_attn.", ".attn.")


PACKED = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]}


def packed_mapping(model_type):
    """`packed_modules_mapping` of vLLM's model classes (llama.py,
    qwen3_moe.py, mixtral.py, gpt_oss.py)."""
    if model_type in ("llama", "qwen3_moe"):
        return PACKED
    return {"qkv_proj": PACKED["qkv_proj"]}


def ckpt_expert_names(model_type):
    """The checkpoint names of the expert projections (FusedMoEFactory's
    `ckpt_names`: mixtral.py passes w1/w2/w3, the others the default)."""
    return ("w1", "w2", "w3") if model_type == "mixtral" else ("gate_proj", "down_proj", "up_proj")


def fp8_config_check(q):
    """fp8.py, Fp8Config.from_config and __init__'s checks."""
    errs = []
    if "fp8" not in q["quant_method"]:
        errs.append("not fp8 serialized")
    if q.get("activation_scheme") not in ("static", "dynamic"):
        errs.append(f"activation_scheme {q.get('activation_scheme')!r}")
    wbs = q.get("weight_block_size")
    if wbs is not None and (len(wbs) != 2 or q.get("activation_scheme") != "dynamic"):
        errs.append(f"weight_block_size {wbs}")
    ignored = q.get("ignored_layers") or q.get("modules_to_not_convert") or []
    return errs, ignored, wbs


def ct_scheme(q):
    """compressed_tensors.py, _quantization_scheme_map_from_config: the
    config groups' arguments, validated by compressed-tensors' pydantic
    models (0.17, vLLM's pin, when importable)."""
    from compressed_tensors.quantization import QuantizationArgs
    groups = list(q["config_groups"].values())
    assert len(groups) == 1 and groups[0]["targets"] == ["Linear"], groups
    g = groups[0]
    w = QuantizationArgs.model_validate(g["weights"])
    a = QuantizationArgs.model_validate(g["input_activations"]) if g.get(
        "input_activations") else None
    return w, a


# ---------------------------------------------------------------------------
# The checkpoint


def load_tensors(d):
    """name -> (dtype, shape, raw bytes loader)."""
    import struct
    out = {}
    for f in sorted(d.glob("*.safetensors")):
        raw = f.read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        for k, h in header.items():
            if k == "__metadata__":
                continue
            a, b = h["data_offsets"]
            out[k] = (h["dtype"], h["shape"], raw[8 + n + a:8 + n + b])
    return out


def cdiv(a, b):
    return -(-a // b)


def check(v, d, have_ct):
    cfg, q = read_quant_config(d)
    mt = cfg["model_type"]
    res = {"errors": [], "notes": []}
    err, note = res["errors"].append, res["notes"].append
    ts = load_tensors(d)
    method = claimed_method(v, q, mt)
    res["method"] = method
    if method == "mx":
        # mldtypes' own MX record (MX formats outside gpt-oss): no server
        # reads it, and it does not claim to be anything else.
        res["method"] = "none"
        note("quant_method \"mx\" (mldtypes' record) is not one of vLLM's methods: not loadable")
        return res
    if method not in v.methods:
        err(f"method {method!r} not in vLLM's QuantizationMethods")
        return res
    packed = packed_mapping(mt)
    mp = gpt_oss_map if mt == "gpt_oss" else (lambda s: s)

    # The configuration, parsed as the claiming class does.
    if method in ("modelopt", "modelopt_fp4"):
        owner, algo, exclude = v.modelopt_config(q)
        if owner != method:
            err(f"{algo} belongs to {owner}, not {method}")
        res["algo"] = algo
        if (d / "hf_quant_config.json").exists():
            legacy = json.loads((d / "hf_quant_config.json").read_text())
            lo = v.modelopt_config(legacy)
            if lo[:2] != (owner, algo) or sorted(lo[2]) != sorted(exclude):
                err(f"hf_quant_config.json parses as {lo}, config.json as {owner, algo, exclude}")
        # ModelOptQuantConfigBase.apply_vllm_mapper (transcribed): `x*` ->
        # `x`, `x.*`; then the model's mapper.
        ex = []
        for e in exclude:
            ex += [e[:-1], e[:-1] + ".*"] if len(e) >= 2 and e[-1] == "*" and e[-2] != "." else [e]
        this = type("C", (), {"exclude_modules": [mp(e) for e in ex],
                              "packed_modules_mapping": packed})()

        def skipped(prefix, kind):
            if v.is_layer_excluded(this, prefix):
                return True
            # get_quant_method's vision_tower fallback (not used by these models)
            return False
    elif method == "fp8":
        errs, ignored, wbs = fp8_config_check(q)
        for e in errs:
            err(e)
        ignored = [mp(x) for x in ignored]
        res["algo"] = f"block {wbs}" if wbs else "per-tensor"

        def skipped(prefix, kind):
            return v.is_layer_skipped(prefix, ignored, packed, match_mode="exact")
    elif method == "compressed-tensors":
        if not have_ct:
            err("compressed-tensors not importable (--ct)")
            return res
        w, a = ct_scheme(q)
        if not v.is_fp8_w8a8(w, a):
            err("not W8A8 FP8 for vLLM (_is_fp8_w8a8)")
        res["algo"] = f"W8A8 FP8, weights {getattr(w.strategy, 'value', w.strategy)}, input {getattr(a.strategy, 'value', a.strategy)} dynamic"
        ignore = [x if x.startswith("re:") or "." not in x else mp(x) for x in q.get("ignore", [])]
        names = ckpt_expert_names(mt)

        def skipped(prefix, kind):
            if kind == "experts":  # compressed_tensors_moe.py get_moe_method
                flags = [v.should_ignore_layer(f"{prefix}.0.{n}", ignore=ignore,
                                               fused_mapping=packed) for n in names]
                if len(set(flags)) != 1:
                    raise ValueError("All MoE projections need to have same scheme")
                return flags[0]
            return v.should_ignore_layer(prefix, ignore=ignore, fused_mapping=packed)
    elif method == "gpt_oss_mxfp4":
        res["algo"] = "MXFP4 experts; linear layers unquantized"

        def skipped(prefix, kind):  # mxfp4.py get_quant_method
            return kind != "experts"
    else:
        err(f"unexpected method {method}")
        return res

    # Modules as vLLM builds them: linear layers (q/k/v, gate/up fused),
    # and MoE layers.
    linear, experts = {}, {}
    for name, (dt, shape, _) in ts.items():
        m = re.match(r"(.*\.experts)\.(\d+)\.(\w+)\.weight$", name)
        if m:
            experts.setdefault(m.group(1), set()).add("per-expert")
            continue
        m = re.match(r"(.*\.experts)\.(gate_up_proj|down_proj)(_blocks)?$", name)
        if m:
            experts.setdefault(m.group(1), set()).add(m.group(2))
            continue
        if not name.endswith(".weight") or len(shape) != 2 or "embed" in name:
            continue
        mod = name[: -len(".weight")]
        last = mod.rsplit(".", 1)[-1]
        fused = next((f for f, parts in packed.items() if last in parts), None)
        prefix = mod[: -len(last)] + fused if fused else mod
        linear.setdefault(mp(prefix), []).append(mod)

    def quantized(mod):
        if f"{mod}.weight" in ts:
            return ts[f"{mod}.weight"][0] in ("F8_E4M3", "U8")
        return f"{mod}_blocks" in ts or ts.get(mod, ("",))[0] in ("F8_E4M3", "U8")

    agree = 0
    for prefix, mods in sorted(linear.items()):
        qs = {quantized(m) for m in mods}
        if len(qs) != 1:
            err(f"{prefix}: shards {mods} not all quantized alike")
            continue
        try:
            sk = skipped(prefix, "linear")
        except ValueError as e:
            err(f"{prefix}: {e}")
            continue
        q = qs.pop()
        if sk == q:
            err(f"{prefix}: vLLM {'skips' if sk else 'quantizes'} it; the checkpoint has it "
                f"{'quantized' if q else 'unquantized'}")
        else:
            agree += 1
    for prefix, projs in sorted(experts.items()):
        if "per-expert" not in projs:
            qs = {quantized(f"{prefix}.{p}") for p in projs}
        else:
            qs = {quantized(k[: -len(".weight")]) for k in ts
                  if k.startswith(prefix + ".") and k.endswith(".weight")}
        if len(qs) != 1:
            err(f"{prefix}: experts not all quantized alike")
            continue
        try:
            sk = skipped(mp(prefix), "experts")
        except ValueError as e:
            err(f"{prefix}: {e}")
            continue
        q = qs.pop()
        if sk == q:
            err(f"{prefix}: vLLM {'skips' if sk else 'quantizes'} the experts; the checkpoint "
                f"has them {'quantized' if q else 'unquantized'}")
        else:
            agree += 1
    res["modules"] = f"{agree}/{len(linear) + len(experts)}"

    # Tensors of the quantized modules, as each method allocates them
    # (transcribed from its create_weights).
    shapes_ok = 0
    for name, (dt, shape, raw) in ts.items():
        if dt not in ("F8_E4M3", "U8") or name.endswith(("_scale", "_scales", "_scale_inv")):
            continue
        base = name[: -len(".weight")] if name.endswith(".weight") else name
        want = {}
        if method == "gpt_oss_mxfp4":
            e, h, i = cfg["num_local_experts"], cfg["hidden_size"], cfg["intermediate_size"]
            if name.endswith("gate_up_proj_blocks"):
                want = {name: ("U8", [e, 2 * i, h // 32, 16]),
                        base[:-7] + "_scales": ("U8", [e, 2 * i, h // 32])}
            else:
                want = {name: ("U8", [e, h, i // 32, 16]),
                        base[:-7] + "_scales": ("U8", [e, h, i // 32])}
        elif len(shape) == 3:
            # Fused experts (gpt-oss): ModelOpt 0.47's layout, which
            # tools/verify_clients.py compares with ours.
            shapes_ok += 1
            continue
        elif method == "modelopt_fp4":
            n, k2 = shape
            want = {name: ("U8", [n, k2]), f"{base}.weight_scale": ("F8_E4M3", [n, 2 * k2 // 16]),
                    f"{base}.weight_scale_2": ("F32", [])}
        else:
            n, k = shape
            if method == "fp8" and res["algo"].startswith("block"):
                want = {f"{base}.weight_scale_inv": ("F32", [cdiv(n, 128), cdiv(k, 128)])}
            elif method == "compressed-tensors":
                st = getattr(w.strategy, "value", w.strategy)
                sh = {"tensor": [1], "channel": [n, 1], "block": [cdiv(n, 128), cdiv(k, 128)]}[st]
                want = {f"{base}.weight_scale": (None, sh)}
                if st == "block" and k % 128:
                    note("inputs not a multiple of 128 (the tiny models' 64), which vLLM's "
                         "block kernels require (real models' are)")
            elif method == "modelopt":
                algo = res["algo"]
                sh = {"FP8": [], "FP8_PER_CHANNEL_PER_TOKEN": [n],
                      "FP8_PB_WO": [cdiv(n, 128), 1, cdiv(k, 128), 1]}[algo]
                if algo == "FP8_PB_WO" and cdiv(n, 128) * cdiv(k, 128) == 1:
                    # ModelOpt 0.47 writes the scale of a one-block weight 0-d
                    # (its amax reduction squeezes one-element results); vLLM's
                    # loader copies it into its one-element parameter.
                    sh = []
                    note("one-block weights (n, k <= 128): 0-d block scale, as ModelOpt "
                         "writes it")
                want = {f"{base}.weight_scale": ("F32", sh)}
                if algo == "FP8" and f"{base}.input_scale" not in ts:
                    note("ModelOpt FP8 is W8A8 static: vLLM needs input_scale (none stored)")
                if algo == "FP8_PB_WO" and k % 128:
                    note("inputs not a multiple of 128 (the tiny models' 64), which "
                         "FP8_PB_WO requires")
        bad = False
        for t, (wdt, wsh) in want.items():
            if t not in ts:
                err(f"{t} missing")
                bad = True
            elif (wdt is not None and ts[t][0] != wdt) or list(ts[t][1]) != wsh:
                err(f"{t}: {ts[t][0]} {ts[t][1]}, vLLM allocates {wdt} {wsh}")
                bad = True
        shapes_ok += not bad
    res["tensors"] = shapes_ok

    # vLLM and SGLang fuse q/k/v and gate/up and take weight_scale_2.max():
    # the shards' must be equal (modelopt.py warns otherwise).
    if method == "modelopt_fp4":
        import struct
        for prefix, mods in linear.items():
            vals = {struct.unpack("<f", ts[f"{m}.weight_scale_2"][2])[0] for m in mods
                    if f"{m}.weight_scale_2" in ts}
            if len(vals) > 1:
                err(f"{prefix}: weight_scale_2 differs across the fused shards {vals}")
    res["notes"] = sorted(set(res["notes"]))
    return res


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vllm-src", required=True, help="unpacked vLLM wheel (holds vllm/)")
    p.add_argument("--ct", help="a directory holding compressed-tensors 0.17 (vLLM's pin)")
    p.add_argument("--json", help="write the results as JSON to this file")
    p.add_argument("work", help="tools/verify_clients.py's --work directory")
    a = p.parse_args(argv)
    if a.ct:
        sys.path.insert(0, a.ct)
    try:
        import compressed_tensors
        have_ct = True
        ct_version = compressed_tensors.__version__
    except ImportError:
        have_ct, ct_version = False, None
    v = Vllm(a.vllm_src, have_ct)
    print(f"vLLM source: {a.vllm_src}; compressed-tensors {ct_version}")
    rows = []
    for d in sorted(Path(a.work).glob("q-*")):
        r = {"checkpoint": d.name, **check(v, d, have_ct)}
        rows.append(r)
    print()
    print("| checkpoint | vLLM method | scheme | modules agreeing | quantized tensors "
          "as allocated | errors | notes |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['checkpoint'][2:]} | {r.get('method')} | {r.get('algo', '-')} | "
              f"{r.get('modules', '-')} | {r.get('tensors', '-')} | "
              f"{'; '.join(r['errors']) or 'none'} | {'; '.join(r['notes']) or '-'} |")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
