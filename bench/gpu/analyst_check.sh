#!/usr/bin/env bash
# Analyst figures on a GPU node, in one device call: gemmprofd (CUDA backend) runs the
# seed 5B layer in prequant (bf16, fp8-current, fp8-rowwise) and a Llama-3.1-8B inference
# sweep (dynamic mode, the default of --sweep-m); the reports come back as JSON with
# each item's %-of-peak at its measured SM clock, and the charts as SVG (roofline of the
# seed job, TFLOP/s against M of the sweep).
# usage: bench/gpu/analyst_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=${1:?usage: analyst_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: analyst_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$out/port" --db "$out/results.db" \
  --backend cuda > "$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null' EXIT
for _ in $(seq 1 100); do [ -s "$out/port" ] && break; sleep 0.2; done
export GEMMPROF_SERVER=127.0.0.1:$(cat "$out/port")
g="$bundle/bin/gemmprof"
seed=$("$g" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
  --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --mode prequant \
  --recipes bf16,fp8-current,fp8-rowwise --item-budget 0.5 --label "analyst seed")
sweep=$("$g" submit --preset llama-3.1-8b --sweep-m 1:16384:*4 \
  --recipes bf16,fp8-current,fp8-rowwise --item-budget 0.5 --label "analyst sweep")
"$g" watch "$seed" > /dev/null; "$g" watch "$sweep" > /dev/null
"$g" report "$seed" > "$out/seed.txt"; "$g" report "$seed" --format json > "$out/seed.json"
"$g" report "$sweep" > "$out/sweep.txt"; "$g" report "$sweep" --format json > "$out/sweep.json"
"$g" plot "$seed" --kind roofline -o "$out/seed_roofline.svg"
"$g" plot "$sweep" --kind tflops -o "$out/sweep_tflops.svg"
python3 - "$out/seed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("device:", r["device"]["name"], "driver", r["device"]["driver_version"])
for it in r["items"]:
    m = it.get("result") or {}
    e = m.get("efficiency") or {}
    print(f'{it["recipe"]:12s} {it["pass"]:5s} {it["op"]:9s} {m.get("tflops", 0):8.1f} TFLOP/s '
          f'clock {e.get("sm_clock_mhz") or 0:6.0f} MHz peak {e.get("peak_tflops") or 0:7.1f} '
          f'-> {100 * (e.get("fraction_of_peak") or 0):5.1f}% of peak')
PY
