"""Shows where NVIDIA ModelOpt 0.47's FP8_PB_WO export puts the block scales
of fused [E, in, out] experts (gpt-oss) when both `in` and `out` exceed one
128-wide block, and compares `mldtypes convert --to fp8_block --format
modelopt` of the same model.

Not part of the test suite (it needs torch, transformers and ModelOpt). Run
it in the clients' virtual environment (see tools/verify_clients.py):

    /work/venvs/clients/bin/python tools/modelopt_expert_blocks.py [--mldtypes BIN]

A tiny random gpt-oss (hidden 256, intermediate 256, 2 experts: gate_up_proj
[2, 256, 512], 2 x 4 blocks of 128 x 128 in its transpose [2, 512, 256]) is
quantized with ``FP8_2D_BLOCKWISE_WEIGHT_ONLY_CFG`` and exported. ModelOpt
calibrates the experts through their transpose and writes
``gate_up_proj_weight_scale`` [E, out/128, 1, in/128, 1]: the scale of out
block o and in block i at [e, o, 0, i, 0] (checked against the amax of that
block). Its export then quantizes the stored [E, in, out] elements with the
scale tensor reshaped, not transposed, to [E, in/128, out/128]
(``FP8QTensor.quantize`` reshapes a scale of the right element count), so
each element is divided by another block's scale; the script checks that
ModelOpt's codes are exactly e4m3(x / reshaped scale) and not e4m3(x / own
block's scale), and that mldtypes' codes use each block's own scale (its
scale tensor equals ModelOpt's).
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mldtypes", default=str(ROOT / "target" / "release" / "mldtypes"))
    a = p.parse_args(argv)
    import modelopt.torch.quantization as mtq
    from modelopt.torch.export import export_hf_checkpoint
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForCausalLM

    work = Path(tempfile.mkdtemp(prefix="modelopt-expert-blocks-"))
    torch.manual_seed(1234)
    cfg = AutoConfig.for_model(
        "gpt_oss", num_hidden_layers=1, hidden_size=256, intermediate_size=256,
        num_local_experts=2, num_experts_per_tok=1, num_attention_heads=4,
        num_key_value_heads=2, head_dim=64, vocab_size=128, layer_types=["full_attention"])
    AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).save_pretrained(work / "src")
    model = AutoModelForCausalLM.from_pretrained(work / "src", dtype=torch.bfloat16)
    model = mtq.quantize(model, mtq.FP8_2D_BLOCKWISE_WEIGHT_ONLY_CFG,
                         lambda m: m(torch.randint(0, 128, (1, 8))))
    export_hf_checkpoint(model, export_dir=work / "modelopt")
    subprocess.run([a.mldtypes, "convert", str(work / "src"), str(work / "ours"), "--to",
                    "fp8_block", "--format", "modelopt"], check=True, capture_output=True)

    k = "model.layers.0.mlp.experts.gate_up_proj"
    x = load_file(work / "src" / "model.safetensors")[k].float()
    mo = load_file(work / "modelopt" / "model.safetensors")
    ours = load_file(work / "ours" / "model.safetensors")
    e, i, o = x.shape
    s = mo[k + "_weight_scale"]
    ob, ib = s.shape[1], s.shape[3]
    print(f"{k}: stored {list(x.shape)}, scale {list(s.shape)} (out blocks {ob}, in blocks {ib})")
    xt = x.transpose(1, 2)                                   # [E, out, in]
    amax = xt.reshape(e, ob, 128, ib, 128).abs().amax(dim=(2, 4))
    print("scale [e, o, 0, i, 0] = amax of out block o, in block i / 448:",
          torch.equal(s[:, :, 0, :, 0], amax / 448))
    print("mldtypes' scale tensor equals ModelOpt's:", torch.equal(ours[k + "_weight_scale"], s))
    own = s[:, :, 0, :, 0].repeat_interleave(128, 1).repeat_interleave(128, 2).transpose(1, 2)
    moved = s.reshape(e, ib, ob).repeat_interleave(128, 1).repeat_interleave(128, 2)

    def codes(scale):
        return (x / scale).to(torch.float8_e4m3fn).view(torch.uint8)
    mo_codes = mo[k].view(torch.uint8)
    print("ModelOpt's codes = e4m3(x / scale reshaped to [E, in/128, out/128]):",
          torch.equal(mo_codes, codes(moved)))
    print("ModelOpt's codes = e4m3(x / own block's scale):", torch.equal(mo_codes, codes(own)))
    print("elements whose scale ModelOpt takes from another block:",
          int((own != moved).sum()), "of", x.numel())
    for who, c in (("ModelOpt", mo_codes), ("mldtypes", ours[k].view(torch.uint8))):
        y = c.view(torch.float8_e4m3fn).float() * own
        err = ((y - x).abs() / x.abs().max()).max().item()
        print(f"{who}: max |dequantized - x| / amax, with the scale tensor as it is laid out: "
              f"{err:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
