#!/usr/bin/env bash
# Faults through the real CUDA runner, in one device call (docs/benchmarks.md "A fault
# costs only what it must"). Each scenario starts gemmprofd (cuda backend, a fresh
# database) with a GEMMPROF_WORKER_FAULT and runs the 16-item job: 4 GEMMs of one M
# (one batch of 4 measurement groups) x bf16, fp8-current x autocast, prequant.
#   transient   illegal-address@SEQ:once   a sticky CUDA fault, gone on the retry
#   repeating   illegal-address@SEQ        back on the retry: the batch is bisected
#   hang        hang@SEQ                   a kernel that never ends; the next job after it
#   cancel      hang@SEQ, cancelled while hung
#   start       exit-at-start:4            unavailable, then back
# fault_summary.py prints each scenario's item states, errors, retry notes and seconds
# (from the daemon's log: fault injected -> detected -> next worker ready).
# With BACKEND=host the same scenarios run on the host reference runner (small shapes,
# context-lost for the CUDA fault), for the CPU figures.
# usage: [BACKEND=host] bench/gpu/fault_check.sh BUNDLE OUT_DIR [SEQ]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: fault_check.sh BUNDLE OUT_DIR [SEQ]}
out=${2:?usage: fault_check.sh BUNDLE OUT_DIR [SEQ]}
seq=${3:-9}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader >"$out/gpu.txt" 2>&1
cli="$bundle/bin/gemmprof"
backend=${BACKEND:-cuda}
if [ "$backend" = host ]; then
  sticky=context-lost
  job=(--shapes 128x64x128,128x72x128,128x80x128,128x88x128 --recipes bf16,fp8-current
       --mode both --num-warmup 0 --num-iters 2 --force)
  small=(--shapes 64x64x64 --recipes bf16 --num-iters 2 --force)
else
  sticky=illegal-address
  job=(--shapes 4096x4096x4096,4096x8192x4096,4096x4096x8192,4096x2048x4096
       --recipes bf16,fp8-current --mode both --devices 0 --force)
  small=(--shapes 1024x1024x1024 --recipes bf16 --devices 0 --force)
fi

# start NAME FAULT: a daemon with that fault; sets $daemon, $work, GEMMPROF_SERVER.
start() {
  work=$(mktemp -d)
  GEMMPROF_WORKER_FAULT=$2 "$bundle/bin/gemmprofd" --listen 127.0.0.1:0 \
    --db "$work/results.db" --backend "$backend" --port-file "$work/port" \
    --log-file "$out/$1.log" &
  daemon=$!
  for _ in $(seq 600); do [ -s "$work/port" ] && break; sleep 0.1; done
  export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
}
stop() { kill -TERM "$daemon"; wait "$daemon"; rm -rf "$work"; }
ms() { date +%s%3N; }
# run NAME ARGS...: submit, watch, keep the report; appends "NAME job J wall_ms" to wall.txt.
run() {
  local name=$1 t0 id; shift
  t0=$(ms)
  id=$("$cli" submit "$@" --label "$name")
  "$cli" watch "$id" >/dev/null 2>&1
  echo "$name job $id $(( $(ms) - t0 ))" >>"$out/wall.txt"
  "$cli" report "$id" --format json >"$out/$name.json"
}

start transient "$sticky@$seq:once"; run transient "${job[@]}"; stop
start repeating "$sticky@$seq"; run repeating "${job[@]}"; stop
start hang "hang@$seq"; run hang "${job[@]}"; run hang_next "${small[@]}"; stop

start cancel "hang@$seq"
id=$("$cli" submit "${job[@]}" --label cancel)
# Wait for the hang: the worker logs the injected fault.
for _ in $(seq 600); do grep -q "injecting a fault" "$out/cancel.log" && break; sleep 0.1; done
sleep 1
t0=$(ms)
"$cli" cancel "$id" >"$out/cancel_cli.txt" 2>&1
rc=$?
echo "cancel job $id cancel_cli_ms $(( $(ms) - t0 )) rc $rc" >>"$out/wall.txt"
"$cli" report "$id" --format json >"$out/cancel.json"
run cancel_next "${small[@]}"
stop

start start "exit-at-start:4"
t0=$(ms)
"$cli" devices >"$out/start_devices_first.txt" 2>&1
for _ in $(seq 600); do grep -q "is available again" "$out/start.log" && break; sleep 0.1; done
echo "start available_after_ms $(( $(ms) - t0 ))" >>"$out/wall.txt"
"$cli" devices >"$out/start_devices_after.txt" 2>&1
run start_job "${small[@]}"
stop

python3 "$here/fault_summary.py" "$out" | tee "$out/summary.txt"
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
