#!/usr/bin/env bash
# Runs the GPU benchmark and the PyTorch baseline on the same GPU, one after the other,
# and prints the comparison table with its targets (compare.py).
# usage: bench/gpu/run_bench.sh BUNDLE_DIR OUT_DIR [--quick]
#   BUNDLE_DIR holds bin/gemmprof_gpu_bench (deploy/make_bundle.sh); OUT_DIR gets
#   ours.csv, torch.csv and the logs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: run_bench.sh BUNDLE_DIR OUT_DIR [--quick]}
out=${2:?usage: run_bench.sh BUNDLE_DIR OUT_DIR [--quick]}
quick=${3:-}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true
"$bundle/bin/gemmprof_gpu_bench" --csv "$out/ours.csv" $quick 2>&1 | tee "$out/ours.log"
ours_rc=${PIPESTATUS[0]}
python3 "$here/torch_baseline.py" --csv "$out/torch.csv" $quick 2>&1 | tee "$out/torch.log"
torch_rc=${PIPESTATUS[0]}
echo "gemmprof_gpu_bench exit $ours_rc, torch_baseline exit $torch_rc"
python3 "$here/compare.py" "$out/ours.csv" "$out/torch.csv" 2>&1 | tee "$out/compare.txt"
exit ${PIPESTATUS[0]}
