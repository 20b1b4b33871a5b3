"""Converts a sharded safetensors checkpoint with one Ray task per shard.

Every task converts one shard with ``mldtypes.convert_checkpoint_shard``;
when all are done, ``mldtypes.finish_checkpoint_shards`` checks the shards,
removes the temporaries killed or failed tasks left, and writes the index,
``config.json`` (and a recipe's files, such as ModelOpt's
``hf_quant_config.json``) and the model directory's other files. The output
is byte-identical to ``mldtypes.convert_checkpoint(src, dst, to)`` on one
machine. Input and output must be on storage every Ray worker sees (a shared
filesystem) when the cluster has several machines.

An existing output is refused, shard by shard and at the end, unless
``--overwrite`` is given; with it, each task first removes the output's old
index, so an index is present only while the shards match it.

Usage::

    python examples/convert_on_ray.py MODEL_DIR OUT_DIR --to nvfp4
    python examples/convert_on_ray.py MODEL_DIR OUT_DIR --to fp8_block --address auto
    python examples/convert_on_ray.py MODEL_DIR OUT_DIR --to mxfp4 --overwrite

Ray is not a dependency of mldtypes: ``pip install ray mldtypes``.
"""

import argparse
import json
import sys

import ray

import mldtypes


@ray.remote(num_cpus=1)
def convert_shard(src, dst, shard, to, options):
    """One shard, on one Ray worker; returns its summary dict."""
    return mldtypes.convert_checkpoint_shard(src, dst, shard, to, threads=1, **options)


def convert_on_ray(src, dst, to, **options):
    """Converts every shard of ``src`` in its own Ray task, then finishes the
    output directory; returns the per-shard summaries and the final one.
    ``options`` are those of ``mldtypes.convert_checkpoint_shard``."""
    shards = mldtypes.checkpoint_shards(src)
    parts = ray.get([convert_shard.remote(str(src), str(dst), s, to, options) for s in shards])
    finish = {k: v for k, v in options.items() if k != "fsync"}
    done = mldtypes.finish_checkpoint_shards(src, dst, to, **finish)
    return parts, done


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", help="the model directory or its model.safetensors.index.json")
    p.add_argument("dst", help="the output directory")
    p.add_argument("--to", required=True,
                   help="a float dtype, or a recipe: an MX format, nvfp4, fp8, fp8_channel, "
                        "fp8_block")
    p.add_argument("--only", help="convert only the tensors matching this glob")
    p.add_argument("--exclude", help="leave the tensors matching this glob unconverted")
    p.add_argument("--format", choices=["modelopt", "compressed-tensors", "fp8"],
                   help="a recipe's checkpoint format (default: the recipe's)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace existing shards, index and files in the output directory")
    p.add_argument("--address", help="a running Ray cluster (default: start a local one)")
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of a local cluster")
    args = p.parse_args(argv)
    options = {k: v for k, v in (("only", args.only), ("exclude", args.exclude),
                                 ("format", args.format)) if v is not None}
    options["overwrite"] = args.overwrite
    if args.address:
        ray.init(address=args.address)
    else:
        # A local cluster on the loopback interface only, no dashboard.
        ray.init(num_cpus=args.num_cpus, include_dashboard=False,
                 _node_ip_address="127.0.0.1")
    try:
        parts, done = convert_on_ray(args.src, args.dst, args.to, **options)
    finally:
        ray.shutdown()
    tensors = sum(len(s["tensors"]) for s in parts)
    print(json.dumps({"target": done["target"], "format": done["format"],
                      "files": done["files"], "copied_files": done["copied_files"],
                      "removed_partials": done["removed_partials"], "tensors": tensors}))
    for w in done["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
