#!/usr/bin/env bash
# MoE experts as inference servers run them (issue 39's GPU bars), in one device call.
# gemmprofd (CUDA backend) runs, each job's recipes interleaved per GEMM:
#  1. Qwen3-30B-A3B (bench/gpu/configs/qwen3-30b-a3b.json) and DeepSeek-V3 (preset), 1 x
#     4096 tokens, prequant, bf16 / fp8-current / fp8-block / fp8-rowwise, uniform routing
#     (the contiguous layout): the six expert items per recipe;
#  2. DeepSeek-V3 and Qwen3 decode: --sweep-m 64,256 --moe-routing zipf:1.2
#     --moe-layout masked, every recipe with a grouped form, prequant (fprop);
#  3. PyTorch's torch._grouped_mm (bf16) on the same per-expert counts as every bf16
#     grouped item of those reports (torch_grouped.py), in the same call.
# moe_serving_compare.py then prints the expert and decode tables with the bars' verdicts.
# Steps (default all, in this order): qwen deepseek deepseek_decode qwen_decode torch
# compare; name some to run part of it (a device call has ten minutes), e.g.
# "qwen deepseek" in one call and "deepseek_decode qwen_decode torch compare" in the next
# with the same OUT_DIR.
# usage: bench/gpu/moe_serving_check.sh BUNDLE_DIR OUT_DIR [STEP ...]
set -uo pipefail
bundle=${1:?usage: moe_serving_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: moe_serving_check.sh BUNDLE_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
shift 2
steps=" ${*:-qwen deepseek deepseek_decode qwen_decode torch compare} "
want() { [[ $steps == *" $1 "* ]]; }
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
g="$bundle/bin/gemmprof"

rm -f "$out/serving.port"
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$out/serving.port" \
  --db "$out/serving.db" --backend cuda > "$out/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do [ -s "$out/serving.port" ] && break; sleep 0.2; done
export GEMMPROF_SERVER=127.0.0.1:$(cat "$out/serving.port")

qwen=(--model "$here/configs/qwen3-30b-a3b.json")
deepseek=(--preset deepseek-v3)
recipes=(--recipes bf16,fp8-current,fp8-block,fp8-rowwise --mode prequant --item-budget 1)
decode=(--sweep-m 64,256 --moe-routing zipf:1.2 --moe-layout masked)
declare -A args=(
  [qwen]="${qwen[*]} --micro_batch_size 1 --sequence_length 4096"
  [deepseek]="${deepseek[*]} --micro_batch_size 1 --sequence_length 4096"
  [deepseek_decode]="${deepseek[*]} ${decode[*]}"
  [qwen_decode]="${qwen[*]} ${decode[*]}"
)
for name in qwen deepseek deepseek_decode qwen_decode; do
  want "$name" || continue
  # shellcheck disable=SC2086  # the model flags are words
  id=$("$g" submit ${args[$name]} "${recipes[@]}" --label "moe serving: $name")
  "$g" watch "$id" > /dev/null
  echo "$name: job $id, watch exit $?"
  "$g" report "$id" > "$out/$name.txt"
  "$g" report "$id" --format json > "$out/$name.json"
done
kill "$daemon"; wait "$daemon" 2>/dev/null
if want torch; then
  reports=()
  for name in qwen deepseek deepseek_decode qwen_decode; do
    [ -s "$out/$name.json" ] && reports+=("$out/$name.json")
  done
  (cd "$here" && python3 torch_grouped.py "$out/torch_grouped.csv" "${reports[@]}") \
    > "$out/torch_grouped.log" 2>&1
  echo "torch: exit $?"
fi
if want compare; then python3 "$here/moe_serving_compare.py" "$out" | tee "$out/compare.txt"; fi
