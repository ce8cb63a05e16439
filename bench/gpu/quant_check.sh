#!/usr/bin/env bash
# Quantization at the bandwidth floor, one device call: the quantization gpu tests, the
# quantization kernels' bandwidth (gemmprof_quant_bench, default set under hot, cold and clean
# L2 (--l2 all: is a dirty L2 charged to the timed launch?) and --set layer: every
# recipe's quantization of one seed 5B layer against its floor, old forms beside the new),
# then the seed 5B job (bf16, fp8-current, fp8-delayed, fp8-block, fp8-rowwise, both modes)
# through a BEFORE and an AFTER build in the order A B B A, and each recipe's overhead over
# its floor from the reports (quant_floor_compare.py).
# usage: bench/gpu/quant_check.sh AFTER_BUNDLE BEFORE_BUNDLE OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
after=${1:?usage: quant_check.sh AFTER_BUNDLE BEFORE_BUNDLE OUT_DIR}
before=${2:?usage: quant_check.sh AFTER_BUNDLE BEFORE_BUNDLE OUT_DIR}
out=${3:?usage: quant_check.sh AFTER_BUNDLE BEFORE_BUNDLE OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit \
  --format=csv 2>&1 | tee "$out/gpu_state.txt"
for t in ${TESTS-gpu_quant_test}; do  # TESTS="" runs none
  "$after/bin/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
  echo "$t: exit $? ($(grep -E '^\[  (PASSED|FAILED)' "$out/$t.log" | tr '\n' ' '))"
done
"$after/bin/gemmprof_quant_bench" --l2 all --csv "$out/quant_bench.csv" | tee "$out/quant_bench.txt"
"$after/bin/gemmprof_quant_bench" --set layer --csv "$out/quant_layer.csv" \
  | tee "$out/quant_layer.txt" | tail -12
SEED_RECIPES=${SEED_RECIPES:-bf16,fp8-current,fp8-delayed,fp8-block,fp8-rowwise} \
  bash "$here/bundle_compare.sh" "$before" "$after" "$out" seed | tail -20
python3 "$here/quant_floor_compare.py" "$out" | tee "$out/floor_compare.txt"
for tag in a1 b1; do
  echo "--- per item, run $tag"
  python3 "$here/quant_items.py" "$out/seed_$tag.json" fp8-block fp8-delayed fp8-current
done
