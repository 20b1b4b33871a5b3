#!/usr/bin/env bash
# Checkpoint conversion speed and memory against the I/O bound, in one run.
#
# Builds a synthetic sharded checkpoint of about SIZE_GB gigabytes from
# MiniLM's real float32 tensors repeated (scripts/fetch-example-model.sh; a
# synthetic float32 model when that fails), then for `--to bfloat16` and
# `--to float8_e4m3fn`, with 1 and 2 threads, times `mldtypes convert` and
# the I/O bound: reading the input (`cat` into /dev/null) plus writing the
# output's size (`dd` from /dev/zero), both with a warm page cache, as the
# conversion sees it. Peak memory is the maximum resident set size from
# `/usr/bin/time -v` (the input is read chunk by chunk with positioned reads,
# so it counts only what the conversion holds).
#
# Each row alternates RUNS conversions with RUNS measurements of the bound
# (in either order, so a drift in the load of a shared machine falls on
# both; each starts after a `sync`, with no dirty pages of earlier runs being
# written back), after one warm-up conversion, and prints the medians and
# the best times, the ratio of the best times, and the median of the per-run
# ratios with their spread (smallest–largest). The write half of the bound
# varies several-fold between runs on a shared machine (page cache and
# writeback state), which the best-of ratio is least sensitive to.
#
# Usage: tools/bench_checkpoint.sh [SIZE_GB] [WORKDIR] [RUNS]   (default 3, a
# temp dir, 5)
#        tools/bench_checkpoint.sh --recipes [SIZE_GB] [WORKDIR] [RUNS] [THREADS]
#   --recipes: every quantization recipe (the MX formats, nvfp4, fp8,
#   fp8_channel, fp8_block) against a plain `--to float8_e4m3fn` conversion of
#   the same model, alternating RUNS times each on THREADS threads (default
#   1), printing the medians and best times and their ratios; the target is
#   a ratio of at most 1.5. RECIPE_DTYPE=bfloat16 converts the tiled model to
#   bfloat16 first (as most checkpoints ship).
# MLDTYPES_BIN=PATH times another build of the command (e.g. an older one, for
# a before/after comparison on the same model in the same session).
set -euo pipefail

recipes=0
if [[ "${1:-}" == "--recipes" ]]; then
    recipes=1
    shift
fi
size_gb="${1:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${2:-$(mktemp -d)}"
runs="${3:-5}"
mkdir -p "$work"
bin="${MLDTYPES_BIN:-$root/target/release/mldtypes}"

if [[ -z "${MLDTYPES_BIN:-}" ]]; then
    (cd "$root" && nice -n 10 cargo build --release -q -p mldtypes-cli)
fi
bash "$root/scripts/fetch-example-model.sh" >/dev/null 2>&1 || true
src="$root/examples-data/all-MiniLM-L6-v2.safetensors"

model="$work/model"
if [[ ! -f "$model/model.safetensors.index.json" ]]; then
    rm -rf "$model"
    python3 - "$src" "$model" "$size_gb" <<'PY'
import json, os, struct, sys
src, out, size_gb = sys.argv[1], sys.argv[2], float(sys.argv[3])
os.makedirs(out)
target = int(size_gb * 1e9)
shard_target = 500_000_000
if os.path.exists(src):
    with open(src, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    tensors = [(k, v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
               for k, v in sorted(header.items())]
    origin = "MiniLM (all-MiniLM-L6-v2) tensors repeated"
else:
    import random
    rnd = random.Random(1)
    vals = struct.pack("<%df" % (1 << 20), *[rnd.gauss(0, 0.05) for _ in range(1 << 20)])
    tensors = [("layer.weight", "F32", [1024, 1024], vals)]
    origin = "synthetic float32 tensors"

def write_shard(path, items):
    hdr, off = {}, 0
    for name, dt, shape, d in items:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(d)]}
        off += len(d)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, _, d in items:
            f.write(d)

total, rep, shard, items, size = 0, 0, [], [], 0
weight_map, shards = {}, []
while total < target:
    for name, dt, shape, d in tensors:
        items.append((f"copy{rep}.{name}", dt, shape, d))
        size += len(d)
        total += len(d)
    rep += 1
    if size >= shard_target or total >= target:
        shards.append(items)
        items, size = [], 0
names = [f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]
for fname, its in zip(names, shards):
    write_shard(os.path.join(out, fname), its)
    for name, *_ in its:
        weight_map[name] = fname
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump({"torch_dtype": "float32"}, f)
print(f"built {out}: {len(shards)} shards, {total / 1e9:.2f} GB of {origin}", file=sys.stderr)
PY
fi

if [[ "$recipes" == 1 ]]; then
    threads="${4:-1}"
    dtype="${RECIPE_DTYPE:-float32}"
    if [[ "$dtype" != float32 ]]; then
        if [[ ! -f "$work/model-$dtype/model.safetensors.index.json" ]]; then
            "$bin" convert "$model" "$work/model-$dtype" --to "$dtype" --overwrite > /dev/null
        fi
        model="$work/model-$dtype"
    fi
    wall() { # $1 = target; prints seconds
        local out="$work/out-recipe" t0 t1
        rm -rf "$out"
        sync
        t0=$(date +%s.%N)
        "$bin" convert "$model" "$out" --to "$1" --threads "$threads" > /dev/null
        t1=$(date +%s.%N)
        rm -rf "$out"
        echo "$t1 - $t0" | bc -l
    }
    stats() { sort -g | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f", m, a[1]}'; }
    in_bytes=$(cat "$model"/*.safetensors | wc -c)
    echo "input: $(ls "$model"/*.safetensors | wc -l) shards, $((in_bytes / 1000000)) MB of $dtype; $runs runs per row, $threads thread(s)"
    echo "cpu: $(nproc) cores; $(grep -o -m1 -w "avx512f" /proc/cpuinfo || grep -o -m1 -w "avx2" /proc/cpuinfo || echo "no AVX2")"
    cat "$model"/*.safetensors > /dev/null
    printf "%-12s %16s %16s %8s %8s\n" target recipe_s fp8_s "x best" "x med"
    for to in mxfp4 mxfp6_e3m2 mxfp6_e2m3 mxfp8_e4m3 mxfp8_e5m2 mxint8 nvfp4 fp8 fp8_channel fp8_block; do
        : > "$work/r-$to"; : > "$work/f-$to"
        wall "$to" > /dev/null   # warm-up
        for i in $(seq "$runs"); do
            if (( i % 2 )); then
                wall "$to" >> "$work/r-$to"; wall float8_e4m3fn >> "$work/f-$to"
            else
                wall float8_e4m3fn >> "$work/f-$to"; wall "$to" >> "$work/r-$to"
            fi
        done
        read -r rm rb <<<"$(stats < "$work/r-$to")"
        read -r fm fb <<<"$(stats < "$work/f-$to")"
        printf "%-12s %16s %16s %8.2f %8.2f\n" "$to" "$rm ($rb)" "$fm ($fb)" \
            "$(echo "$rb / $fb" | bc -l)" "$(echo "$rm / $fm" | bc -l)"
    done
    echo "recipe_s, fp8_s: median (best) wall seconds; x best = best / best, x med = median / median."
    exit 0
fi

in_bytes=$(cat "$model"/*.safetensors | wc -c)
echo "input: $(ls "$model"/*.safetensors | wc -l) shards, $((in_bytes / 1000000)) MB; $runs runs per row"
echo "cpu: $(nproc) cores; $(grep -o -m1 -w "avx512f" /proc/cpuinfo || grep -o -m1 -w "avx2" /proc/cpuinfo || echo "no AVX2")"

now() { date +%s.%N; }

io_bound() { # $1 = output bytes; prints "read_s write_s"
    local t0 t1 t2
    sync   # no dirty pages of earlier runs to write back while timing
    t0=$(now)
    cat "$model"/*.safetensors > /dev/null
    t1=$(now)
    dd if=/dev/zero of="$work/dd.out" bs=4M count=$(( ($1 + 4194303) / 4194304 )) status=none
    t2=$(now)
    rm -f "$work/dd.out"
    echo "$t0 $t1 $t2" | awk '{printf "%.3f %.3f", $2 - $1, $3 - $2}'
}

convert_once() { # $1 = target, $2 = threads; prints "seconds peak_rss_kb out_bytes"
    local out="$work/out-$1" t0 t1 rss_kb out_bytes
    rm -rf "$out"
    sync
    t0=$(now)
    /usr/bin/time -v "$bin" convert "$model" "$out" --to "$1" --threads "$2" \
        > /dev/null 2> "$work/time.txt"
    t1=$(now)
    rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
    out_bytes=$(cat "$out"/*.safetensors | wc -c)
    rm -rf "$out"
    echo "$t0 $t1 $rss_kb $out_bytes" | awk '{printf "%.3f %d %d", $2 - $1, $3, $4}'
}

# Median, minimum and maximum of the numbers on stdin: "median min max".
stats3() { sort -g | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f", m, a[1], a[NR]}'; }

cat "$model"/*.safetensors > /dev/null   # warm the page cache
printf "%-15s %7s %15s %15s %7s %7s %13s %11s\n" target threads convert_s bound_s best med med_range peak_RSS_MB
for to in bfloat16 float8_e4m3fn; do
    for threads in 1 2; do
        runs_txt="$work/runs-$to-$threads.txt"
        : > "$runs_txt"
        out_bytes=$(convert_once "$to" "$threads" | awk '{print $3}')   # warm-up, sizes the bound
        for i in $(seq "$runs"); do
            # Conversion and bound alternate, in either order, so drifts in
            # the machine's load fall on both alike.
            if (( i % 2 )); then
                read -r conv rss _ <<<"$(convert_once "$to" "$threads")"
                read -r rd wr <<<"$(io_bound "$out_bytes")"
            else
                read -r rd wr <<<"$(io_bound "$out_bytes")"
                read -r conv rss _ <<<"$(convert_once "$to" "$threads")"
            fi
            echo "$conv $rd $wr $rss" >> "$runs_txt"
        done
        read -r c cmin _ <<<"$(awk '{print $1}' "$runs_txt" | stats3)"
        read -r b bmin _ <<<"$(awk '{print $2 + $3}' "$runs_txt" | stats3)"
        read -r q qlo qhi <<<"$(awk '{print $1 / ($2 + $3)}' "$runs_txt" | stats3)"
        rss=$(awk 'BEGIN {m = 0} {if ($4 > m) m = $4} END {print m}' "$runs_txt")
        printf "%-15s %7d %15s %15s %7.2f %7.2f %13s %11.1f\n" "$to" "$threads" "$c ($cmin)" "$b ($bmin)" \
            "$(echo "$cmin / $bmin" | bc -l)" "$q" "$qlo–$qhi" "$(echo "$rss / 1024" | bc -l)"
    done
done
echo "convert_s, bound_s: median (best) of $runs runs; bound = read time (cat) + write time (dd)."
echo "best = best convert / best bound; med = the median over the runs of convert / the bound measured"
echo "beside it (med_range: smallest–largest). Below 1.5 is the target. Per-run figures (convert, read,"
echo "write seconds, peak RSS kB): $work/runs-*.txt."
echo "peak_RSS_MB: the largest maximum resident set size (inputs are read with positioned reads, not mapped,"
echo "so it is the conversion's own, anonymous, memory plus the program's code)."
