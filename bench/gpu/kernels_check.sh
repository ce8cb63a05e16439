#!/usr/bin/env bash
# Kernel-only timing and Nsight mode on a GPU node, in one device call:
#  1. gemmprofd (CUDA backend) runs the seed 5B layer in prequant and a Llama-3.1-8B
#     decode step (M = 16, dynamic) with --timing kernels; kernels_compare.py prints each
#     item's events and kernel-only medians and checks the bars (seed: within 2%;
#     M = 16: kernel-only <= events);
#  2. a second gemmprofd runs under `ncu --profile-from-start off` and a small job is
#     submitted with --profile: ncu's log lists the kernels it captured, which must be
#     the profiled items' own (nsys is used instead when the node has it).
# usage: bench/gpu/kernels_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=${1:?usage: kernels_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: kernels_check.sh BUNDLE_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
g="$bundle/bin/gemmprof"

start_daemon() {  # NAME [PROFILER ARGS...]: a daemon on a free port, its pid in $daemon
  local name=$1; shift
  rm -f "$out/$name.port"
  "$@" "$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$out/$name.port" \
    --db "$out/$name.db" --backend cuda > "$out/$name.log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 300); do [ -s "$out/$name.port" ] && break; sleep 0.2; done
  export GEMMPROF_SERVER=127.0.0.1:$(cat "$out/$name.port")
}

start_daemon kernels
seed=$("$g" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
  --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --mode prequant \
  --recipes bf16,fp8-current,fp8-delayed,fp8-block,fp8-rowwise --timing kernels \
  --item-budget 0.5 --label "kernels seed")
decode=$("$g" submit --preset llama-3.1-8b --sweep-m 16 --recipes bf16,fp8-current,fp8-rowwise \
  --timing kernels --item-budget 0.5 --label "kernels decode M=16")
"$g" watch "$seed" > /dev/null; "$g" watch "$decode" > /dev/null
for j in seed decode; do
  id=${!j}
  "$g" report "$id" > "$out/$j.txt"
  "$g" report "$id" --format json > "$out/$j.json"
done
kill "$daemon"; wait "$daemon" 2>/dev/null
python3 "$here/kernels_compare.py" "$out/seed.json" "$out/decode.json" | tee "$out/compare.txt"

# Nsight mode under a profiler. The workers are the daemon's children: both profilers
# follow them.
if command -v nsys > /dev/null; then
  start_daemon profiled nsys profile --capture-range=cudaProfilerApi --capture-range-end=repeat \
    --trace=cuda,nvtx -o "$out/profiled" --force-overwrite true
else
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  start_daemon profiled "$ncu" --profile-from-start off --target-processes all \
    --metrics gpu__time_duration.sum --csv --log-file "$out/ncu.csv"
fi
prof=$("$g" submit --shapes 4096x4096x4096,16x4096x4096 --recipes bf16,fp8-current \
  --mode autocast,prequant --profile --item-budget 0.2 --label "profiled")
"$g" watch "$prof" > /dev/null
"$g" report "$prof" > "$out/profiled.txt"
"$g" report "$prof" --format json > "$out/profiled.json"
kill -TERM "$(pgrep -o -x gemmprofd)" 2>/dev/null
wait "$daemon" 2>/dev/null
python3 - "$out/profiled.json" "$out/ncu.csv" <<'PY' | tee "$out/profiled_summary.txt"
import collections, csv, json, os, sys
r = json.load(open(sys.argv[1]))
items = [it for it in r["items"] if (it.get("result") or {}).get("profiled")]
own = [it for it in items if not it["result"].get("shared_with_item")]
print(f"{len(items)} items profiled, {len(own)} distinct launches (shared work launches once)")
if os.path.exists(sys.argv[2]):
    rows = [l for l in open(sys.argv[2]) if l.startswith('"')]
    names = collections.Counter(row["Kernel Name"] for row in csv.DictReader(rows)
                                if row.get("Metric Name") == "gpu__time_duration.sum")
    print(f"ncu captured {sum(names.values())} kernels:")
    for n, c in names.most_common():
        print(f"  {c:3d} x {n[:110]}")
PY
