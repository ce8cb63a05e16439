#!/usr/bin/env bash
# The cluster queue on one node of two GPUs, in one device call (issue: a fleet):
# PostgreSQL 15 on loopback, two gemmprofd daemons each given one GPU
# (CUDA_VISIBLE_DEVICES), the seed 5B job in both modes (bf16, fp8-current, fp8-delayed,
# fp8-block; --force) submitted to the first daemon --where node:gpu0 (one daemon),
# --where any (both), --where node:gpu1, --where any again: the one- and two-daemon runs
# alternate so that clock drift falls on both. two_gpu_compare.py then checks the bars:
# the two-daemon job in at most 0.6x the one-daemon time, per-layer totals within 2%.
# PostgreSQL: $PG_BIN (default /usr/lib/postgresql/15/bin), with $PG_LIBS added to its
# library path (a copied server tree on a GPU node without postgresql-15); run as nobody
# when root.
# usage: bench/gpu/fleet_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: fleet_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: fleet_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
# A smoke run without GPUs: GEMMPROF_BACKEND=host FLEET_WORKLOAD="--shapes 64 --recipes bf16".
backend=${GEMMPROF_BACKEND:-cuda}
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true

work=$(mktemp -d)
chmod 777 "$work"
as_db=()
[ "$(id -u)" = 0 ] && as_db=(runuser -u nobody --)
port=$((20000 + RANDOM % 20000))
as_db+=(env "LD_LIBRARY_PATH=${PG_LIBS:+$PG_LIBS:}$LD_LIBRARY_PATH")
"${as_db[@]}" "$pg_bin/initdb" -D "$work/pg" -U gemmprof --auth=trust -E UTF8 --locale=C \
  >"$out/initdb.txt" 2>&1 ||
  { echo "initdb failed"; tail -20 "$out/initdb.txt"; exit 1; }
"${as_db[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -w -l "$work/pg.log" \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null ||
  { echo "PostgreSQL did not start"; tail -20 "$work/pg.log"; exit 1; }
uri="postgresql://gemmprof@127.0.0.1:$port/postgres"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  "${as_db[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -m fast stop >/dev/null 2>&1
}
trap cleanup EXIT
for gpu in 0 1; do
  CUDA_VISIBLE_DEVICES=$gpu "$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$uri" \
    --backend "$backend" --node "gpu$gpu" --port-file "$work/port$gpu" \
    --log-file "$out/gemmprofd_gpu$gpu.log" &
  pids+=($!)
done
for gpu in 0 1; do
  for _ in $(seq 600); do [ -s "$work/port$gpu" ] && break; sleep 0.1; done
done
export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port0")"
cli="$bundle/bin/gemmprof"
sleep 1
"$cli" cluster | tee "$out/cluster_before.txt"
seed_model=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
            --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512
            --mode both --recipes bf16,fp8-current,fp8-delayed,fp8-block)
# shellcheck disable=SC2206
[ -n "${FLEET_WORKLOAD:-}" ] && seed_model=($FLEET_WORKLOAD)
: >"$out/wall.txt"
run=0
# FLEET_CYCLES repeats the four runs (more runs of each kind: less noise in the ratio).
for where in $(for _ in $(seq "${FLEET_CYCLES:-1}"); do echo node:gpu0 any node:gpu1 any; done); do
  run=$((run + 1))
  case $where in node:gpu0) devices=0 ;; node:gpu1) devices=1 ;; *) devices=0,1 ;; esac
  start=$(date +%s%N)
  job=$("$cli" submit "${seed_model[@]}" --force --where "$where" --label "5B both modes, --where $where")
  "$cli" watch "$job" >"$out/watch_$run.txt"
  rc=$?
  echo "run$run devices=$devices job=$job $(( ($(date +%s%N) - start) / 1000000 )) ms watch_rc=$rc where=$where" |
    tee -a "$out/wall.txt"
  "$cli" report "$job" --format json >"$out/report_$run.json"
  "$cli" report "$job" >"$out/report_$run.txt"
done
"$cli" cluster | tee "$out/cluster_after.txt"
"$cli" jobs >"$out/jobs.txt"
grep -h "claimed batch\|lease of node" "$out"/gemmprofd_gpu*.log | wc -l | sed 's/^/claim log lines: /'
cleanup
trap - EXIT
python3 "$here/two_gpu_compare.py" "$out" 2>&1 | tee "$out/fleet.txt"
exit "${PIPESTATUS[0]}"
