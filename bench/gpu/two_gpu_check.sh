#!/usr/bin/env bash
# One job over two GPUs of one node, in one device call (issue: every GPU of a node):
#  the seed 5B job in both modes (bf16, fp8-current, fp8-delayed, fp8-block; default
#  noise-aware timing; --force, so nothing comes from the cache) through one gemmprofd,
#  pinned to GPU 0, spread over GPUs 0 and 1, pinned to GPU 1, spread again — the one-
#  and two-GPU runs alternate so that clock drift falls on both. Then two_gpu_compare.py:
#  wall time of the two-GPU job against the one-GPU job (bar: at most 0.6x), and per-layer
#  totals of GPU 0 against GPU 1 and of the spread jobs against the pinned ones (bar: 2%).
# usage: bench/gpu/two_gpu_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: two_gpu_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: two_gpu_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true

work=$(mktemp -d)
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
  --node two-gpu-node --port-file "$work/port" --log-file "$out/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
cli="$bundle/bin/gemmprof"
"$cli" devices | tee "$out/devices.txt"
seed_model=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
            --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512)
: >"$out/wall.txt"
run=0
for devices in 0 0,1 1 0,1; do
  run=$((run + 1))
  start=$(date +%s%N)
  job=$("$cli" submit "${seed_model[@]}" --mode both --recipes bf16,fp8-current,fp8-delayed,fp8-block \
        --force --devices "$devices" --label "5B both modes, devices $devices")
  "$cli" watch "$job" >"$out/watch_$run.txt"
  rc=$?
  echo "run$run devices=$devices job=$job $(( ($(date +%s%N) - start) / 1000000 )) ms watch_rc=$rc" |
    tee -a "$out/wall.txt"
  "$cli" report "$job" --format json >"$out/report_$run.json"
  "$cli" report "$job" >"$out/report_$run.txt"
done
"$cli" jobs >"$out/jobs.txt"
kill -TERM $daemon; wait $daemon; trap - EXIT
python3 "$here/two_gpu_compare.py" "$out" 2>&1 | tee "$out/two_gpu.txt"
exit "${PIPESTATUS[0]}"
