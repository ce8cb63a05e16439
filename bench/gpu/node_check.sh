#!/usr/bin/env bash
# A GPU node as a cluster member sees it, in one device call:
#  1. the gpu-labelled tests (bundle/run_gpu_tests.sh);
#  2. gemmprofd --backend cuda --http with the seed 5B job (both modes; bf16, fp8-current,
#     fp8-delayed, fp8-block; default noise-aware timing): wall time, /metrics scraped
#     every 5 s while it runs (NVML SM clock, power, temperature; busy seconds), and
#     /api/v1/jobs/ID/report compared byte for byte with `gemmprof report ID --format json`;
#  3. which kernels PyTorch's decode GEMMs run (torch.profiler), next to gemmprof's choice.
# usage: bench/gpu/node_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: node_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: node_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true

( cd "$bundle/.." && bash "$bundle/run_gpu_tests.sh" ) >"$out/gpu_tests.log" 2>&1
tail -1 "$out/gpu_tests.log"

work=$(mktemp -d)
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
  --node gpu-node-1 --port-file "$work/port" --http 127.0.0.1:0 \
  --http-port-file "$work/http_port" --log-file "$out/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 300); do [ -s "$work/port" ] && [ -s "$work/http_port" ] && break; sleep 0.1; done
export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
http="http://127.0.0.1:$(cat "$work/http_port")"
cli="$bundle/bin/gemmprof"
get() { python3 -c 'import sys,urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' "$1"; }
start=$(date +%s%N)
job=$("$cli" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
      --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --mode both \
      --recipes bf16,fp8-current,fp8-delayed,fp8-block --label "5B both modes")
i=0
state() {
  "$cli" report "$job" --format json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["state"])'
}
while case "$(state)" in queued|running) true ;; *) false ;; esac; do
  get "$http/metrics" >"$out/metrics_$i.txt"
  i=$((i + 1))
  sleep 5
done
"$cli" watch "$job" >"$out/watch_5b.txt"
echo "5b $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee "$out/wall.txt"
get "$http/metrics" >"$out/metrics_end.txt"
get "$http/api/v1/jobs/$job/report" >"$out/api_report.json"
"$cli" report "$job" --format json >"$out/cli_report.json"
"$cli" report "$job" >"$out/report_5b.txt"
if cmp -s "$out/api_report.json" "$out/cli_report.json"; then
  echo "api report == cli report (byte for byte)" | tee -a "$out/wall.txt"
else
  echo "api report differs from cli report" | tee -a "$out/wall.txt"
fi
grep -E '^gemmprof_device_(sm_clock_hertz|power_watts|temperature_celsius|busy_seconds_total)' \
  "$out/metrics_end.txt" | tee "$out/nvml.txt"

python3 "$here/torch_kernels.py" 2>&1 | tee "$out/torch_kernels.txt"
