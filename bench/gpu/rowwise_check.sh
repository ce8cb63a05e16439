#!/usr/bin/env bash
# fp8-rowwise against PyTorch's row-wise torch._scaled_mm, in one device call: gemmprof
# (gemmprof_gpu_bench --rowwise) and PyTorch (torch_baseline.py --set rowwise) take turns,
# ours, torch, ours, torch, so a clock drift of the power-capped GPU falls on both alike;
# rowwise_compare.py pairs each of our runs with the torch runs right after it. PyTorch
# runs twice per round: as a burst per GEMM (torch_baseline.py's default) and after
# SUSTAIN_S seconds of replays per GEMM (--sustain-s, default 1), the clocks
# of sustained load that gemmprof's items are measured at (the target is judged against
# that one; see rowwise_compare.py). First, gemmprof_quant_bench --set rowwise --l2 both.
# usage: bench/gpu/rowwise_check.sh BUNDLE_DIR OUT_DIR [ROUNDS (default 2)] [BENCH ARGS...]
#   e.g. ... 1 --autotune 8: our items choose among cuBLASLt's top 8 candidates by timing
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: rowwise_check.sh BUNDLE_DIR OUT_DIR [ROUNDS]}
out=${2:?usage: rowwise_check.sh BUNDLE_DIR OUT_DIR [ROUNDS]}
rounds=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true
# SM clock and power of GPU 0 (the one both benchmarks use) every 100 ms for the whole
# comparison, with the start of each run.
: > "$out/runs.txt"
nvidia-smi -i 0 --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 \
  > "$out/clocks.csv" 2>/dev/null &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
mark() { echo "$(date '+%Y/%m/%d %H:%M:%S.%3N'), start $1" >> "$out/runs.txt"; }
rc=0
# The per-token quantization kernel against a copy of the same tensor, with L2 hot and
# cold (the bandwidth target is for M >= 1024).
"$bundle/bin/gemmprof_quant_bench" --set rowwise --l2 both --csv "$out/quant_rowwise.csv" \
  > "$out/quant_rowwise.txt" 2>&1 || rc=1
for r in $(seq 1 "$rounds"); do
  mark "ours_$r"
  "$bundle/bin/gemmprof_gpu_bench" --rowwise --gpu-warmup-s 2 --csv "$out/ours_$r.csv" "$@" \
    > "$out/ours_$r.log" 2>&1 || rc=1
  mark "torch_$r"
  python3 "$here/torch_baseline.py" --set rowwise --csv "$out/torch_$r.csv" \
    > "$out/torch_$r.log" 2>&1 || rc=1
  mark "torch_sustained_$r"
  python3 "$here/torch_baseline.py" --set rowwise --sustain-s "${SUSTAIN_S:-1}" \
    --csv "$out/torch_sustained_$r.csv" > "$out/torch_sustained_$r.log" 2>&1 || rc=1
done
mark end
kill $sampler 2>/dev/null
wait $sampler 2>/dev/null
python3 "$here/rowwise_compare.py" "$out" "$rounds" 2>&1 | tee "$out/compare.txt"
exit $(( rc || PIPESTATUS[0] ))
