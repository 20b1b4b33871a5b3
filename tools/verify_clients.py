"""Checks that the checkpoints `mldtypes convert` writes with its quantization
recipes load in the real clients, and compares them with what NVIDIA ModelOpt
writes for the same models.

Not part of the test suite (it needs torch and the clients). Run it in its own
virtual environment with the pinned clients:

    python -m venv /work/venvs/clients
    /work/venvs/clients/bin/pip install torch==2.15.0 transformers==5.24.0 \\
        nvidia-modelopt==0.47.0 compressed-tensors==0.20.0 accelerate requests
    cargo build --release -p mldtypes-cli
    /work/venvs/clients/bin/python tools/verify_clients.py [--work DIR] [--json OUT] \
        [--models llama,...] [--recipes nvfp4,fp8,...] [--rounding MODE [--seed S]]

``--rounding`` quantizes with another rounding mode (``--seed`` for the
stochastic ones): the files have the same layout, so every client check
applies, except that ModelOpt's own (nearest-even) quantization then differs
from ours wherever the mode rounds otherwise.

What it does, on CPU, with tiny random models saved by transformers in
bfloat16 (gpt-oss with hidden 64 / intermediate 96 and 4 experts, the same with
hidden = 2 x intermediate, a Llama, a Qwen3-MoE and a Mixtral):

- transformers: each model is converted with each recipe and format, then
  loaded with the matching quantization config (``Mxfp4Config(dequantize=True)``,
  ``FineGrainedFP8Config(dequantize=True)``, ``CompressedTensorsConfig(
  run_compressed=False)``); it counts the missing, unexpected and mismatched
  keys, compares every loaded parameter bit for bit with ``mldtypes convert
  QUANTIZED --to float32`` (our own dequantization), and compares the logits
  with the original model's and with those of our dequantized checkpoint.
  Recipes transformers has no loader for (ModelOpt's ``quant_method``,
  pre-quantized NVFP4, MX formats of other architectures) are reported as such.
- ModelOpt 0.47: quantizes the same models with ``W4A16_NVFP4_CFG`` and its
  weight-only FP8 configurations (``FP8_DEFAULT_CFG`` with the input
  quantizers off, ``FP8_PER_CHANNEL_PER_TOKEN_CFG``,
  ``FP8_2D_BLOCKWISE_WEIGHT_ONLY_CFG``), exports them, and compares with ours:
  the file set, tensor names, dtypes, shapes, ``hf_quant_config.json`` and
  ``quantization_config`` (the producer aside), then every byte, each
  differing byte explained from the exact arithmetic; and cross-dequantizes
  both ways (ModelOpt's formulas on our tensors, ``mldtypes convert --to
  float32`` on ModelOpt's).
- compressed-tensors 0.20: decompresses our FP8 checkpoints with its
  ``FloatQuantizationCompressor`` and compares them bit for bit with ours;
  builds the ``quantization_config`` llm-compressor would write for the same
  scheme (``ModelCompressor.update_config``) and compares it with ours.
"""

import argparse
import fractions
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
PINS = {"transformers": "5.24.0", "nvidia-modelopt": "0.47.0", "compressed-tensors": "0.20.0"}

# ---------------------------------------------------------------------------
# Models and conversions
# ---------------------------------------------------------------------------

MODELS = {
    "gpt_oss": dict(model_type="gpt_oss", num_hidden_layers=2, hidden_size=64,
                    intermediate_size=96, num_local_experts=4, num_experts_per_tok=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128,
                    layer_types=["sliding_attention", "full_attention"]),
    "gpt_oss_h2i": dict(model_type="gpt_oss", num_hidden_layers=2, hidden_size=64,
                        intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                        vocab_size=128, layer_types=["sliding_attention", "full_attention"]),
    "llama": dict(model_type="llama", num_hidden_layers=2, hidden_size=256,
                  intermediate_size=384, num_attention_heads=4, num_key_value_heads=2,
                  vocab_size=128),
    "qwen3_moe": dict(model_type="qwen3_moe", num_hidden_layers=2, hidden_size=256,
                      intermediate_size=384, moe_intermediate_size=128, num_experts=4,
                      num_experts_per_tok=2, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=64, vocab_size=128),
    "mixtral": dict(model_type="mixtral", num_hidden_layers=2, hidden_size=256,
                    intermediate_size=384, num_local_experts=4, num_experts_per_tok=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=128),
}

# (target, --format or None)
RECIPES = [
    ("mxfp4", None),
    ("nvfp4", None),
    ("fp8", None), ("fp8", "modelopt"),
    ("fp8_channel", None), ("fp8_channel", "modelopt"),
    ("fp8_block", None), ("fp8_block", "compressed-tensors"), ("fp8_block", "modelopt"),
]

# ModelOpt configuration of each (target, format) it writes.
MODELOPT = {
    ("nvfp4", None): "W4A16_NVFP4_CFG",
    ("fp8", "modelopt"): "FP8_WEIGHT_ONLY",
    ("fp8_channel", "modelopt"): "FP8_PER_CHANNEL_PER_TOKEN_CFG",
    ("fp8_block", "modelopt"): "FP8_2D_BLOCKWISE_WEIGHT_ONLY_CFG",
}


def make_model(name, out):
    from transformers import AutoConfig, AutoModelForCausalLM
    kw = dict(MODELS[name])
    torch.manual_seed(1234)
    cfg = AutoConfig.for_model(kw.pop("model_type"), **kw)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    # Random biases (transformers initializes them to zero) so they are tested too.
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n.endswith("bias") or n.endswith("sinks"):
                p.normal_(0, 0.02)
    model.save_pretrained(out)


def convert(binary, src, dst, to, fmt=None, extra=()):
    args = [str(binary), "convert", str(src), str(dst), "--to", to, "--json", "--overwrite",
            *extra]
    if fmt:
        args += ["--format", fmt]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr}")
    return json.loads(r.stdout)


def tensors(d):
    from safetensors import safe_open
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(d, f), "pt") as s:
                for k in s.keys():
                    out[k] = s.get_tensor(k)
    return out


def bits(t):
    """The tensor's bytes, for bit-for-bit comparisons."""
    return t.detach().reshape(-1).contiguous().view(torch.uint8)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


# ---------------------------------------------------------------------------
# transformers
# ---------------------------------------------------------------------------

def quant_config_for(path):
    """The transformers quantization config loading `path`, or (None, reason)."""
    import transformers as tf
    q = json.load(open(os.path.join(path, "config.json")))["quantization_config"]
    m = q["quant_method"]
    if m == "mxfp4":
        return tf.Mxfp4Config(dequantize=True), None
    if m == "fp8":
        return tf.FineGrainedFP8Config(dequantize=True,
                                       weight_block_size=tuple(q["weight_block_size"])), None
    if m == "compressed-tensors":
        return tf.CompressedTensorsConfig(run_compressed=False), None
    if m == "modelopt":
        return None, ("transformers 5.24 has no loader for quant_method \"modelopt\" "
                      "(AUTO_QUANTIZER_MAPPING)")
    if m == "mx":
        return None, "transformers has no loader for mldtypes' MX record (not gpt-oss MXFP4)"
    return None, f"no transformers loader for {m}"


def logits_of(model, ids):
    with torch.no_grad():
        return model(ids).logits.float()


def check_transformers(orig, quant, ours_f32, ids, ours_bf16=None):
    """Loads `quant` with its config class; returns a result dict (an error
    the client raises is reported, not raised)."""
    try:
        return load_and_compare(orig, quant, ours_f32, ids, ours_bf16)
    except Exception as e:  # noqa: BLE001 - the client's own failure is the result
        why = f"error: {type(e).__name__}: {str(e)[:300]}"
        known = known_limitation(quant)
        return {"loads": False, "why": f"{known} ({why})" if known else why}


def known_limitation(quant):
    """A client limitation that explains a failed load of `quant`, if one
    applies (the load is still attempted, so a client that lifts it shows)."""
    q = json.load(open(os.path.join(quant, "config.json")))["quantization_config"]
    if q.get("quant_method") != "compressed-tensors":
        return None
    strategies = {g["weights"].get("strategy") for g in q["config_groups"].values()}
    experts = any(".experts.0." in k for k in tensors_names(quant))
    if "block" in strategies and experts:
        # transformers/integrations/compressed_tensors.py, CompressedTensorsDequantize:
        # MoE experts' FP8 weights are multiplied by their scale as is, which
        # broadcasts per-tensor and per-channel scales but not 128 x 128 blocks.
        return ("transformers 5.24 limitation: its compressed-tensors MoE expert loader "
                "multiplies each expert's FP8 weight by its scale without expanding "
                "128x128 block scales")
    return None


def tensors_names(d):
    from safetensors import safe_open
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(d, f), "pt") as s:
                out.extend(s.keys())
    return out


def load_and_compare(orig, quant, ours_f32, ids, ours_bf16):
    from transformers import AutoModelForCausalLM
    qc, why = quant_config_for(quant)
    if qc is None:
        return {"loads": False, "why": why}
    model, info = AutoModelForCausalLM.from_pretrained(
        quant, quantization_config=qc, dtype=torch.float32, output_loading_info=True)
    res = {"loads": True, "missing": len(info["missing_keys"]),
           "unexpected": len(info["unexpected_keys"]),
           "mismatched": len(info["mismatched_keys"]),
           "missing_keys": sorted(info["missing_keys"])[:5],
           "unexpected_keys": sorted(info["unexpected_keys"])[:5]}
    # Our dequantization, loaded the same way (transformers fuses per-expert
    # weights into its own layout as it loads; both go through it).
    # A client may dequantize in the scales' dtype (compressed-tensors' dense
    # modules: e4m3 * bfloat16 scale rounded to bfloat16) or in float32
    # (transformers' compressed-tensors MoE experts): each parameter is
    # compared with our dequantization to float32, else to bfloat16.
    sd = model.state_dict()
    deq = AutoModelForCausalLM.from_pretrained(ours_f32, dtype=torch.float32)
    ref32 = deq.state_dict()
    ref16 = (AutoModelForCausalLM.from_pretrained(ours_bf16, dtype=torch.float32).state_dict()
             if ours_bf16 is not None else {})
    equal32 = [k for k, v in ref32.items() if k in sd and same_bits(sd[k], v)]
    equal16 = [k for k, v in ref16.items()
               if k in sd and k not in equal32 and same_bits(sd[k], v)]
    compared = [k for k in ref32 if k in sd]
    diff = [k for k in compared if k not in equal32 and k not in equal16]
    res["params_compared"] = len(compared)
    res["params_equal_to_float32"] = len(equal32)
    res["params_equal_to_bfloat16"] = len(equal16)
    res["params_differing"] = len(diff)
    res["differing"] = diff[:5]
    res["absent"] = [k for k in ref32 if k not in sd][:5]
    base = AutoModelForCausalLM.from_pretrained(orig, dtype=torch.float32)
    lq, lo = logits_of(model, ids), logits_of(base, ids)
    res["logits_max_abs_vs_original"] = (lq - lo).abs().max().item()
    res["logits_rel_rms_vs_original"] = ((lq - lo).pow(2).mean().sqrt() /
                                         lo.pow(2).mean().sqrt()).item()
    # The same weights give the same logits: ours loaded with each parameter as
    # the client dequantized it.
    mixed = {k: (ref16[k] if k in equal16 else ref32[k]) for k in ref32}
    deq.load_state_dict(mixed)
    res["logits_identical_to_ours"] = torch.equal(lq, logits_of(deq, ids))
    return res


# ---------------------------------------------------------------------------
# ModelOpt
# ---------------------------------------------------------------------------

def modelopt_export(src, cfg_name, out):
    import copy
    import modelopt.torch.quantization as mtq
    from modelopt.torch.export import export_hf_checkpoint
    from transformers import AutoModelForCausalLM
    if cfg_name == "FP8_WEIGHT_ONLY":
        cfg = copy.deepcopy(mtq.FP8_DEFAULT_CFG)
        cfg["quant_cfg"].append({"quantizer_name": "*input_quantizer", "enable": False})
    else:
        cfg = getattr(mtq, cfg_name)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.bfloat16)
    torch.manual_seed(7)

    def loop(m):
        for _ in range(2):
            m(torch.randint(0, 128, (1, 16)))
    model = mtq.quantize(model, cfg, loop)
    export_hf_checkpoint(model, export_dir=out)


def without_producer(j):
    j = json.loads(json.dumps(j))
    for d in (j, j.get("quantization_config", {})):
        if isinstance(d, dict):
            d.pop("producer", None)
    return j


F = fractions.Fraction


def round_float(q, p, emin, maxv):
    """q >= 0 rounded to `p` significant bits (minimum exponent `emin`),
    nearest-even, saturated at `maxv` (Fractions)."""
    if q == 0:
        return F(0)
    e = max(math.floor(math.log2(q)), emin)
    while F(2) ** e > q:
        e -= 1
    while F(2) ** (e + 1) <= q:
        e += 1
    e = max(e, emin)
    quantum = F(2) ** (e - (p - 1))
    n = q / quantum
    r = math.floor(n)
    d = n - r
    if d > F(1, 2) or (d == F(1, 2) and r % 2 == 1):
        r += 1
    return min(F(r) * quantum, F(maxv))


E4M3 = [float(v) for v in torch.arange(256, dtype=torch.int32).to(torch.uint8)
        .view(torch.float8_e4m3fn).float().tolist()]
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def explain_nvfp4(x, ours, theirs):
    """Reasons for the differing codes of one NVFP4 weight, as rows of blocks
    of 16: `x` the original values [.., K], `ours` / `theirs` (element codes
    [.., K], block scale codes [.., K/16], weight_scale_2). Returns
    {reason: count} over elements and block scales."""
    reasons = {}

    def add(r, n=1):
        reasons[r] = reasons.get(r, 0) + n
    (ea, sa, s2a), (eb, sb, s2b) = ours, theirs
    if s2a != s2b:
        add("weight_scale_2 differs")
        return reasons
    s2 = F(s2a)
    xs = x.double().reshape(-1, 16)
    ea, eb = ea.reshape(-1, 16).tolist(), eb.reshape(-1, 16).tolist()
    sa, sb = sa.reshape(-1).tolist(), sb.reshape(-1).tolist()
    for b in range(xs.shape[0]):
        if sa[b] == sb[b] and ea[b] == eb[b]:
            continue
        amax = F(xs[b].abs().max().item())
        if sa[b] != sb[b]:
            exact = max(round_float(amax / (6 * s2), 4, -6, 448), F(2) ** -9) if amax else F(1)
            f32 = np.float32(np.float32(float(amax)) /
                             np.float32(np.float32(6.0) * np.float32(s2a)))
            twice = max(round_float(F(float(f32)), 4, -6, 448), F(2) ** -9)
            ours_ok = F(E4M3[sa[b]]) == exact
            theirs_ok = F(E4M3[sb[b]]) == twice
            add("block scale: ours e4m3(amax/(6*s2)) rounded once; ModelOpt rounds the "
                "quotient to float32 first" if ours_ok and theirs_ok else
                f"block scale: unexplained (ours ok {ours_ok}, theirs ok {theirs_ok})")
            n = sum(1 for i in range(16) if ea[b][i] != eb[b][i])
            if n:
                add("element: follows its block's different scale", n)
            continue
        d = F(E4M3[sa[b]]) * s2
        for i in range(16):
            ca, cb = ea[b][i], eb[b][i]
            if ca == cb:
                continue
            xv = xs[b, i].item()
            v = F(xv)
            exact = round_float(abs(v) / d, 2, 0, 6)
            q32 = np.float32(np.float32(xv) /
                             np.float32(np.float32(E4M3[sa[b]]) * np.float32(s2a)))
            twice = round_float(abs(F(float(q32))), 2, 0, 6)
            if ca & 7 == cb & 7 and v == 0:
                add("element -0.0: ours keeps the sign bit, ModelOpt writes +0")
            elif F(abs(E2M1[ca])) == exact and F(abs(E2M1[cb])) == twice:
                add("element: ours e2m1(x/(scale*s2)) rounded once; ModelOpt computes "
                    "scale*s2 and the quotient in float32 first")
            else:
                add(f"element: unexplained (x={xv}, ours {ca}, theirs {cb})")
    return reasons


def codes_of(packed):
    """Element codes (one per element) of NVFP4 bytes packed along the last
    axis, low nibble first."""
    e = torch.stack([packed & 0xF, packed >> 4], dim=-1)
    return e.reshape(*packed.shape[:-1], 2 * packed.shape[-1])


def explain_fp8(x, ca, cb, sa, sb):
    """Reasons for differing FP8 codes: `x` the originals, `ca` / `cb` the
    codes, `sa` / `sb` each element's scale (flat arrays)."""
    reasons = {}
    for i in np.nonzero(ca != cb)[0]:
        if sa[i] != sb[i]:
            r = "element: follows its different scale"
        else:
            v = F(float(x[i]))
            exact = round_float(abs(v) / F(float(sa[i])), 4, -6, 448)
            q32 = abs(F(float(np.float32(np.float32(float(x[i])) / np.float32(sa[i])))))
            twice = round_float(q32, 4, -6, 448)
            # A bfloat16 weight over a 0-d float32 scale divides in bfloat16
            # (PyTorch's type promotion): x/s rounded to bfloat16 first. (Fused
            # experts divide by a one-element 1-d scale, in float32.)
            q16 = (torch.tensor([float(x[i])], dtype=torch.bfloat16) /
                   torch.tensor(float(sa[i]), dtype=torch.float32)).float().item()
            thrice = round_float(abs(F(q16)), 4, -6, 448)
            if F(abs(E4M3[ca[i]])) == exact and F(abs(E4M3[cb[i]])) == twice:
                r = ("element: ours e4m3(x/s) rounded once; ModelOpt rounds x/s to float32 "
                     "first")
            elif F(abs(E4M3[ca[i]])) == exact and F(abs(E4M3[cb[i]])) == thrice:
                r = ("element: ours e4m3(x/s) rounded once; ModelOpt divides the bfloat16 "
                     "weight by the 0-d scale in bfloat16 (x/s rounded to bfloat16 first)")
            else:
                r = f"element: unexplained (x={float(v)}, ours {ca[i]}, theirs {cb[i]})"
        reasons[r] = reasons.get(r, 0) + 1
    return reasons


def expert_scales(w, s):
    """Each element's scale of ModelOpt's FP8 fused experts `w` [E, in, out]
    (gpt-oss): `s` one scale over all experts, [E] one per expert, or
    [E, out/128, 1, in/128, 1] 128 x 128 blocks of each expert's transpose
    [out, in]; as a tensor of `w`'s shape."""
    e, i, o = w.shape
    if s.numel() == 1:
        return s.reshape(1, 1, 1).expand(e, i, o)
    if s.dim() == 1:
        return s.reshape(e, 1, 1).expand(e, i, o)
    st = s[:, :, 0, :, 0]
    st = st.repeat_interleave(128, 1)[:, :o].repeat_interleave(128, 2)[:, :, :i]
    return st.transpose(1, 2)


def element_scales(w, s):
    """Each element's scale of an FP8 weight `w` [N, K] with scale tensor `s`
    (per tensor, per channel, or 128 x 128 blocks), or of fused experts
    (`expert_scales`), flat."""
    s = s.float()
    if w.dim() == 3:
        return expert_scales(w, s).reshape(-1).numpy()
    if s.numel() == 1:
        return s.reshape(1).expand(w.numel()).numpy()
    if s.dim() == 4:
        s = s.squeeze(-1).squeeze(1)
    n, k = w.shape
    if s.numel() == n:
        return s.reshape(n, 1).expand(n, k).reshape(-1).numpy()
    return (s.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
            .reshape(-1).numpy())


def modelopt_dequant(name, t, group):
    """ModelOpt's own dequantization formula for tensor `name` of a checkpoint
    (float32): NVFP4QTensor.dequantize, or FP8 weight * scale."""
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    w = t[name]
    if w.dtype == torch.uint8:
        scale = t[group["scale"]]
        s2 = t[group["scale_2"]]
        cols = group["columns"]
        if cols:
            w, scale = w.transpose(-1, -2).contiguous(), scale.transpose(-1, -2).contiguous()
        shape = list(w.shape)
        shape[-1] *= 2
        q = NVFP4QTensor(torch.Size(shape), torch.float32, w)
        y = q.dequantize(dtype=torch.float32, scale=scale, double_scale=s2,
                         block_sizes={-1: 16})
        return y.transpose(-1, -2).contiguous() if cols else y
    s = t[group["scale"]].float()
    x = w.float()
    if x.dim() == 3:       # fused experts [E, in, out]
        return x * expert_scales(x, s)
    if s.dim() == 4:       # FP8_PB_WO [ob, 1, ib, 1]
        s = s.squeeze(-1).squeeze(1)
    if s.dim() == 2 and s.shape != (x.shape[0], 1):
        s = s.repeat_interleave(128, 0)[: x.shape[0]].repeat_interleave(128, 1)[:, : x.shape[1]]
    elif s.dim() == 1 and s.numel() == x.shape[0] and x.shape[0] > 1:
        s = s[:, None]
    return x * s


def quant_groups(t):
    """The quantized tensors of a ModelOpt-format checkpoint: weight name ->
    its scale names and layout."""
    g = {}
    for k, v in t.items():
        if v.dtype == torch.uint8:
            sn = k + "_scale" if k.endswith("weight") else k + "_weight_scale"
            if sn in t:
                cols = v.dim() >= 2 and t[sn].shape[-1] == v.shape[-1] and \
                    t[sn].shape[-2] * 8 == v.shape[-2]
                g[k] = {"scale": sn, "scale_2": sn + "_2", "columns": cols}
        elif v.dtype == torch.float8_e4m3fn:
            sn = k + "_scale" if k.endswith("weight") else k + "_weight_scale"
            if sn in t:
                g[k] = {"scale": sn}
    return g


def check_modelopt(binary, orig, mo_dir, ours_dir, work):
    os.makedirs(work, exist_ok=True)
    res = {}
    fa, fb = sorted(os.listdir(ours_dir)), sorted(os.listdir(mo_dir))
    res["files_equal"] = fa == fb
    ta, tb = tensors(ours_dir), tensors(mo_dir)
    res["names_equal"] = set(ta) == set(tb)
    res["names_only_ours"] = sorted(set(ta) - set(tb))[:5]
    res["names_only_modelopt"] = sorted(set(tb) - set(ta))[:5]
    common = sorted(set(ta) & set(tb))
    res["dtype_shape_diffs"] = [(k, str(ta[k].dtype), list(ta[k].shape), str(tb[k].dtype),
                                 list(tb[k].shape)) for k in common
                                if ta[k].dtype != tb[k].dtype or ta[k].shape != tb[k].shape][:5]
    for f in ("config.json", "hf_quant_config.json"):
        if os.path.exists(os.path.join(ours_dir, f)) and os.path.exists(os.path.join(mo_dir, f)):
            ja = without_producer(json.load(open(os.path.join(ours_dir, f))))
            jb = without_producer(json.load(open(os.path.join(mo_dir, f))))
            res[f + "_equal_but_producer"] = ja == jb
            if ja != jb:
                res[f + "_ours"], res[f + "_modelopt"] = ja, jb
    nbytes = ndiff = 0
    reasons = {}
    src = tensors(orig)
    for k in common:
        a, b = bits(ta[k]), bits(tb[k])
        if a.shape != b.shape:
            continue
        nbytes += a.numel()
        ndiff += int((a != b).sum())
    groups = quant_groups(tb)
    for k, g in groups.items():
        if k not in ta or k not in src or ta[k].dtype != tb[k].dtype:
            continue
        x = src[k].float()
        if ta[k].dtype == torch.uint8:
            sa, sb = bits(ta[g["scale"]]).reshape(ta[g["scale"]].shape), \
                bits(tb[g["scale"]]).reshape(tb[g["scale"]].shape)
            if g["columns"]:
                # Blocks along the second-to-last axis: as rows.
                x = x.transpose(-1, -2).contiguous()
                ea, eb = repack_columns(ta[k]), repack_columns(tb[k])
                sa, sb = sa.transpose(-1, -2).contiguous(), sb.transpose(-1, -2).contiguous()
            else:
                ea, eb = codes_of(ta[k]), codes_of(tb[k])
            if torch.equal(ea, eb) and torch.equal(sa, sb):
                continue
            r = explain_nvfp4(x, (ea, sa, ta[g["scale_2"]].item()),
                              (eb, sb, tb[g["scale_2"]].item()))
        else:
            ca, cb = bits(ta[k]).numpy(), bits(tb[k]).numpy()
            sa, sb = ta[g["scale"]].float(), tb[g["scale"]].float()
            r = {}
            if sa.shape != sb.shape or not torch.equal(sa, sb):
                n = int((sa != sb).sum()) if sa.shape == sb.shape else sa.numel()
                r["scale: differs" + ("" if sa.shape == sb.shape else " in shape")] = n
            if not (ca == cb).all():
                ea = element_scales(ta[k], sa) if sa.shape == sb.shape else None
                eb = element_scales(tb[k], sb) if sa.shape == sb.shape else None
                if ea is None:
                    r["element: follows its different scale"] = int((ca != cb).sum())
                else:
                    for key, n in explain_fp8(x.reshape(-1).numpy(), ca, cb, ea, eb).items():
                        r[key] = r.get(key, 0) + n
        for key, n in r.items():
            reasons[key] = reasons.get(key, 0) + n
    res["bytes"] = nbytes
    res["bytes_differing"] = ndiff
    res["reasons"] = reasons
    # Cross-dequantization: ModelOpt's formulas on our tensors against our own
    # dequantization, and ours on ModelOpt's against its formulas.
    for who, qdir, t in (("ours", ours_dir, ta), ("modelopt", mo_dir, tb)):
        deq = os.path.join(work, f"deq-{who}")
        convert(binary, qdir, deq, "float32")
        mine = tensors(deq)
        g = quant_groups(t)
        n = nd = unexplained = 0
        for k, grp in g.items():
            y = modelopt_dequant(k, t, grp).float()
            m = mine[k].float()
            n += y.numel()
            d = y != m
            nd += int(d.sum())
            if d.any() and t[k].dtype == torch.uint8:
                # ModelOpt rounds e4m3 * s2 to float32, then the product with
                # the e2m1 value: two roundings where ours has one.
                unexplained += int((d & (twice_rounded(k, t, grp) != y)).sum())
            elif d.any():
                unexplained += int(d.sum())
        res[f"cross_dequant_{who}_elements"] = n
        res[f"cross_dequant_{who}_differing"] = nd
        res[f"cross_dequant_{who}_unexplained"] = unexplained
    return res


def twice_rounded(k, t, grp):
    """ModelOpt's NVFP4 dequantization as float32 arithmetic: f32(f32(e4m3 * s2)
    * e2m1), for explaining its differences from the exact product."""
    w, sc, s2 = t[k], t[grp["scale"]].float(), t[grp["scale_2"]].float()
    if grp["columns"]:
        e = repack_columns(w)
        sc = sc.transpose(-1, -2)
    else:
        e = codes_of(w)
    vals = torch.tensor(E2M1, dtype=torch.float32)[e.long()]
    bs = (sc * s2).to(torch.float32)
    y = (vals.reshape(*vals.shape[:-1], -1, 16) * bs.unsqueeze(-1)).reshape(vals.shape)
    return y.transpose(-1, -2).contiguous() if grp["columns"] else y


def repack_columns(p):
    """Element codes (uint8, one per element) of a column-packed NVFP4 tensor
    [.., K/2, N], as rows [.., N, K]."""
    lo, hi = p & 0xF, p >> 4
    k2 = p.shape[-2]
    e = torch.stack([lo, hi], dim=-2)                 # [.., K/2, 2, N]
    e = e.reshape(*p.shape[:-2], 2 * k2, p.shape[-1])  # [.., K, N]
    return e.transpose(-1, -2).contiguous()


# ---------------------------------------------------------------------------
# compressed-tensors
# ---------------------------------------------------------------------------

def check_compressed_tensors(quant, ours_deq_dir):
    import compressed_tensors as ct
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.compressors.naive_quantized.base import FloatQuantizationCompressor
    from compressed_tensors.quantization import QuantizationConfig, QuantizationScheme
    cfg = json.load(open(os.path.join(quant, "config.json")))["quantization_config"]
    res = {"version": ct.__version__}
    qc = QuantizationConfig.model_validate(cfg)
    scheme = qc.config_groups["group_0"]
    # The config llm-compressor writes for this scheme and ignore list.
    theirs = QuantizationConfig(config_groups={"group_0": QuantizationScheme.model_validate(
        scheme.model_dump())}, ignore=cfg["ignore"], format="float-quantized",
        quantization_status="compressed")
    with tempfile.TemporaryDirectory() as d:
        json.dump({}, open(os.path.join(d, "config.json"), "w"))
        ModelCompressor(quantization_config=theirs).update_config(d)
        written = json.load(open(os.path.join(d, "config.json")))["quantization_config"]
    res["config_equal_to_update_config"] = written == cfg
    if written != cfg:
        res["config_theirs"], res["config_ours"] = written, cfg
    t = tensors(quant)
    mine = tensors(ours_deq_dir)
    same = diff = 0
    for k, v in t.items():
        if v.dtype != torch.float8_e4m3fn:
            continue
        sd = {"weight": v, "weight_scale": t[k + "_scale"]}
        y = FloatQuantizationCompressor.decompress(sd, scheme)["weight"]
        if torch.equal(bits(y), bits(mine[k].to(y.dtype))):
            same += 1
        else:
            diff += 1
    res["decompressed_identical"], res["decompressed_differing"] = same, diff
    return res


# ---------------------------------------------------------------------------


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mldtypes", default=str(ROOT / "target" / "release" / "mldtypes"))
    p.add_argument("--work", help="work directory (default: a temporary one, removed)")
    p.add_argument("--json", help="write the results as JSON to this file")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--recipes", default=None,
                   help="comma-separated targets of RECIPES to run (default: all)")
    p.add_argument("--rounding", default=None,
                   help="quantize with this rounding mode (mldtypes convert --rounding); the "
                        "ModelOpt rows then compare ModelOpt's nearest-even quantization with "
                        "ours and differ where the mode rounds otherwise")
    p.add_argument("--seed", type=int, default=None, help="seed of a stochastic --rounding")
    a = p.parse_args(argv)
    extra = []
    if a.rounding:
        extra += ["--rounding", a.rounding]
    if a.seed is not None:
        extra += ["--seed", str(a.seed)]
    wanted = set(a.recipes.split(",")) if a.recipes else None
    from importlib.metadata import version
    for pkg, pin in PINS.items():
        if version(pkg) != pin:
            print(f"warning: {pkg} {version(pkg)} (pinned: {pin})", file=sys.stderr)
    work = Path(a.work or tempfile.mkdtemp(prefix="verify-clients-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    torch.manual_seed(99)
    ids = torch.randint(0, 128, (2, 24))
    for name in a.models.split(","):
        orig = work / name
        if not (orig / "config.json").exists():
            make_model(name, orig)
        for to, fmt in RECIPES:
            if wanted is not None and to not in wanted:
                continue
            tag = f"{name}-{to}-{fmt or 'default'}"
            q = work / f"q-{tag}"
            summary = convert(a.mldtypes, orig, q, to, fmt, extra)
            deq = work / f"d-{tag}"
            convert(a.mldtypes, q, deq, "float32")
            row = {"model": name, "recipe": to, "format": summary["format"],
                   "quantized": len(summary["tensors"])}
            deq16 = work / f"b-{tag}"
            convert(a.mldtypes, q, deq16, "bfloat16")
            row["transformers"] = check_transformers(orig, q, deq, ids, deq16)
            if (to, fmt) in MODELOPT:
                mo = work / f"mo-{tag}"
                if not (mo / "config.json").exists():
                    modelopt_export(orig, MODELOPT[(to, fmt)], mo)
                row["modelopt"] = check_modelopt(a.mldtypes, orig, mo, q, work / f"x-{tag}")
            if summary["format"] == "compressed-tensors":
                row["compressed_tensors"] = check_compressed_tensors(q, deq)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    print_table(rows)
    if not a.work:
        shutil.rmtree(work)
    return 0


def print_table(rows):
    print("\n| model | recipe | format | transformers: missing / unexpected / mismatched | "
          "weights = ours (bits) | logits vs original (max abs, rel RMS) | logits = ours "
          "dequantized | ModelOpt: files, names, dtypes, shapes, configs | bytes differing | "
          "compressed-tensors |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["transformers"]
        if t["loads"]:
            keys = f"{t['missing']} / {t['unexpected']} / {t['mismatched']}"
            w = f"{t['params_compared'] - t['params_differing']}/{t['params_compared']}"
            if t["params_equal_to_bfloat16"]:
                w += f" ({t['params_equal_to_bfloat16']} as our bfloat16)"
            lg = (f"{t['logits_max_abs_vs_original']:.2e}, "
                  f"{t['logits_rel_rms_vs_original']:.2e}")
            eq = "yes" if t["logits_identical_to_ours"] else "no"
        else:
            keys, w, lg, eq = f"no loader ({t['why']})", "-", "-", "-"
        m = r.get("modelopt")
        if m:
            same = all([m["files_equal"], m["names_equal"], not m["dtype_shape_diffs"],
                        m.get("config.json_equal_but_producer", False),
                        m.get("hf_quant_config.json_equal_but_producer", False)])
            mo = "equal" if same else "DIFFER"
            by = f"{m['bytes_differing']} of {m['bytes']}"
        else:
            mo, by = "-", "-"
        c = r.get("compressed_tensors")
        ct = (f"{c['decompressed_identical']} identical, {c['decompressed_differing']} "
              f"differing; config {'=' if c['config_equal_to_update_config'] else '!='} "
              f"update_config" if c else "-")
        print(f"| {r['model']} | {r['recipe']} | {r['format']} | {keys} | {w} | {lg} | {eq} | "
              f"{mo} | {by} | {ct} |")


if __name__ == "__main__":
    sys.exit(main())
