#!/usr/bin/env bash
# MoE expert GEMMs in FP8 block scaling on a GPU node (issue 12's bars), in one device
# call. gemmprofd (CUDA backend) runs, each job's recipes interleaved per GEMM:
#  1. Qwen3-30B-A3B (bench/gpu/configs/qwen3-30b-a3b.json: 128 experts, 8 active, hidden
#     2048, expert intermediate 768), 1 x 8192 tokens (512 rows per expert), prequant,
#     bf16 / fp8-current / fp8-block;
#  2. DeepSeek-V3 (preset: 256 experts, 8 active, hidden 7168, expert intermediate 2048),
#     1 x 4096 tokens (128 rows per expert), the same;
#  3. Qwen3 with --moe-skew 4, fp8-block, both modes (runs and verifies);
#  4. the seed 5B layer, fp8-block, both modes (dense: the per-item library choice).
# moe_compare.py then prints the grouped sums with TFLOP/s and the bars' verdicts.
# usage: bench/gpu/moe_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=${1:?usage: moe_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: moe_check.sh BUNDLE_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
g="$bundle/bin/gemmprof"

rm -f "$out/moe.port"
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$out/moe.port" --db "$out/moe.db" \
  --backend cuda > "$out/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do [ -s "$out/moe.port" ] && break; sleep 0.2; done
export GEMMPROF_SERVER=127.0.0.1:$(cat "$out/moe.port")

qwen=(--model "$here/configs/qwen3-30b-a3b.json" --micro_batch_size 1 --sequence_length 8192)
recipes=(--recipes bf16,fp8-current,fp8-block --mode prequant --item-budget 1)
jobs=(
  qwen "$("$g" submit "${qwen[@]}" "${recipes[@]}" --label "qwen3-moe experts")"
  deepseek "$("$g" submit --preset deepseek-v3 --micro_batch_size 1 --sequence_length 4096 \
    "${recipes[@]}" --label "deepseek-v3 experts")"
  skew "$("$g" submit "${qwen[@]}" --moe-skew 4 --recipes fp8-block --mode both \
    --item-budget 0.5 --label "qwen3-moe skew 4")"
  dense "$("$g" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
    --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --recipes fp8-block \
    --mode both --item-budget 1 --label "seed 5B fp8-block")"
)
for ((i = 0; i < ${#jobs[@]}; i += 2)); do
  name=${jobs[i]} id=${jobs[i + 1]}
  "$g" watch "$id" > /dev/null
  echo "$name: job $id, watch exit $?"
  "$g" report "$id" > "$out/$name.txt"
  "$g" report "$id" --format json > "$out/$name.json"
done
kill "$daemon"; wait "$daemon" 2>/dev/null
python3 "$here/moe_compare.py" "$out" | tee "$out/compare.txt"
