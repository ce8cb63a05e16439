#!/usr/bin/env bash
# The serving recipes' bars in one device call: PyTorch's peers (serving_peers.py), the
# Llama-3.1-8B serving job through a fresh gemmprofd (fprop at M = 16, 128, 1024, 8192;
# bf16, fp8-rowwise, int8-rowwise, w8a16, w4a16; MODES, default prequant, as the peers
# run: weights and int8 activations ready), PyTorch's peers
# again (so a clock drift of the power-capped GPU between the two shows in the peers' two
# runs), then serving_table.py's markdown tables.
# usage: bench/gpu/serving_check.sh BUNDLE_DIR OUT_DIR [PEER_ROUNDS (default 20)] [MODES]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: serving_check.sh BUNDLE_DIR OUT_DIR [PEER_ROUNDS]}
out=${2:?usage: serving_check.sh BUNDLE_DIR OUT_DIR [PEER_ROUNDS]}
rounds=${3:-20}
modes=${4:-prequant}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv \
  2>&1 | tee "$out/gpu_state.txt" || true
peers() {
  timeout 240 python3 "$here/serving_peers.py" --rounds "$rounds" > "$out/peers$1.csv" \
    2> "$out/peers$1.err"
  echo "peers $1: rc=$?"
}
peers 1
work=$(mktemp -d)
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$work/port" --db "$work/r.db" \
  > "$out/gemmprofd.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null' EXIT
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.2; done
g=("$bundle/bin/gemmprof" --server "127.0.0.1:$(head -1 "$work/port")")
start=$(date +%s)
timeout "${JOB_TIMEOUT_S:-400}" "${g[@]}" submit --preset llama-3.1-8b --sweep-m 16,128,1024,8192 \
  --recipes bf16,fp8-rowwise,int8-rowwise,w8a16,w4a16 --mode "$modes" \
  --label llama-serving --wait > "$out/submit.txt" 2>&1
echo "job: rc=$? in $(( $(date +%s) - start )) s"
"${g[@]}" report 1 > "$out/report.txt" 2>&1
"${g[@]}" report 1 --format csv > "$out/report.csv" 2>&1
kill $daemon 2>/dev/null; wait $daemon 2>/dev/null
peers 2
python3 "$here/serving_table.py" "$out/report.csv" "$out/peers1.csv" "$out/peers2.csv" \
  > "$out/table.md" 2>&1
case $modes in *dynamic*)
  python3 "$here/serving_table.py" "$out/report.csv" "$out/peers1.csv" "$out/peers2.csv" \
    --mode dynamic > "$out/table_dynamic.md" 2>&1 ;;
esac
cat "$out/table.md"
