#!/usr/bin/env bash
# The main job: installs what is missing, builds, starts gemmprofd on an embedded
# SQLite database, submits an example job, follows it and prints its report, then stops
# the daemon. On a machine with a GPU the job is the seed tutorial's 5B model on the
# cuda backend; without one it is a small shape list on the host reference runner, and
# the report says so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GEMMPROF_BUILD_DIR:-$root/build}
"$root/deploy/install_deps.sh"
# Only what the demo runs: the daemon and the CLI. run_tests.sh builds the rest (the
# tests and benchmarks) in the same folder, reusing these.
"$root/deploy/build.sh" --target gemmprofd --target gemmprof
bin="$build/bin"
work=${GEMMPROF_DEMO_DIR:-$root/demo}
mkdir -p "$work"
port_file="$work/gemmprofd.port"
rm -f "$port_file"
"$bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --port-file "$port_file" \
  --log-file "$work/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
[ -s "$port_file" ] || { echo "run_demo: gemmprofd did not start; see $work/gemmprofd.log" >&2; exit 1; }
export GEMMPROF_SERVER="127.0.0.1:$(cat "$port_file")"
echo "gemmprofd is serving on $GEMMPROF_SERVER (database $work/results.db, log $work/gemmprofd.log)"
"$bin/gemmprof" devices
if "$bin/gemmprof" devices | grep -q host-reference; then
  # The CPU emulates every recipe's numerics; GPU-sized shapes would take hours there.
  "$bin/gemmprof" submit --shapes 256x512x384,512 --mode both --num-warmup 1 --num-iters 3 \
    --label demo --wait
else
  "$bin/gemmprof" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
    --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --mode both \
    --label demo --wait
fi
