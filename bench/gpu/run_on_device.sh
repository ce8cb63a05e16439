#!/usr/bin/env bash
# One device session's work: the gpu tests of this bundle, then the benchmark with its
# comparison (run_bench.sh). Full logs land in OUT_DIR.
# usage: bench/gpu/run_on_device.sh BUNDLE_DIR OUT_DIR [--quick]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: run_on_device.sh BUNDLE_DIR OUT_DIR [--quick]}
out=${2:?usage: run_on_device.sh BUNDLE_DIR OUT_DIR [--quick]}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
for t in gpu_cuda_runner_test gpu_cuda_cross_check_test; do
  timeout 100 "$bundle/bin/$t" --gtest_brief=0 >"$out/$t.log" 2>&1
  echo "$t exit $?: $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/$t.log" | head -3 | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|Failure|error' "$out/$t.log" | head -20
done
# At most 8 files come back from a device run: the benchmark writes ours.csv, torch.csv,
# ours.log, torch.log, compare.txt and gpu_state.txt; the combined log stays local.
timeout 300 "$here/run_bench.sh" "$bundle" "$out" ${3:-} >/tmp/bench_all.log 2>&1
echo "run_bench exit $?"
tail -40 /tmp/bench_all.log
