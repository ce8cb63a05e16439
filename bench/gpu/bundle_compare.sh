#!/usr/bin/env bash
# Two builds of gemmprof measured against each other in one device call: the seed 5B job
# in both modes (bf16, fp8-current, fp8-delayed, fp8-block) and the Llama-3.1-8B decode
# sweep (dynamic mode, M = 1, 16, 64, 128; bf16, fp8-current, fp8-rowwise), each through
# gemmprofd as a user runs it, the bundles in the order A B B A so drift between runs
# falls on both alike. Prints each per-layer total of A and B, B over A, and how far each
# bundle's two runs are apart (the noise a difference must be compared with). The job set
# `moe` runs instead the Qwen3-30B-A3B experts at 4096 tokens (prequant; bf16, fp8-current,
# fp8-rowwise; the grouped expert items compared one by one), for kernel changes there.
# usage: bench/gpu/bundle_compare.sh BUNDLE_A BUNDLE_B OUT_DIR [seed|decode|both|moe]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
a=${1:?usage: bundle_compare.sh BUNDLE_A BUNDLE_B OUT_DIR [seed|decode|both|moe]}
b=${2:?usage: bundle_compare.sh BUNDLE_A BUNDLE_B OUT_DIR [seed|decode|both|moe]}
out=${3:?usage: bundle_compare.sh BUNDLE_A BUNDLE_B OUT_DIR [seed|decode|both|moe]}
what=${4:-both}
# SEED_RECIPES overrides the seed job's recipes (bench/gpu/quant_check.sh adds fp8-rowwise).
seed_recipes=${SEED_RECIPES:-bf16,fp8-current,fp8-delayed,fp8-block}
case $what in seed|decode|both|moe) ;; *) echo "bundle_compare: unknown job set '$what'" >&2; exit 2 ;; esac
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee -a "$out/gpu_state.txt" || true

# One run: a daemon of `bundle` on a fresh database, the jobs, the reports as JSON.
run() {
  local bundle=$1 tag=$2 work daemon
  work=$(mktemp -d)
  "$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
    --port-file "$work/port" --log-file "$out/gemmprofd_$tag.log" &
  daemon=$!
  for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
  export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
  local cli="$bundle/bin/gemmprof" job
  if [ "$what" = moe ]; then
    job=$("$cli" submit --model "$here/configs/qwen3-30b-a3b.json" --micro_batch_size 1 \
          --sequence_length 4096 --mode prequant --recipes bf16,fp8-current,fp8-rowwise \
          --item-budget 1 --devices 0 --label "moe $tag")
    "$cli" watch "$job" >/dev/null
    "$cli" report "$job" --format json >"$out/moe_$tag.json"
  fi
  if [ "$what" = seed ] || [ "$what" = both ]; then
    job=$("$cli" submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
          --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --mode both \
          --recipes "$seed_recipes" --devices 0 --label "seed $tag")
    "$cli" watch "$job" >/dev/null
    "$cli" report "$job" --format json >"$out/seed_$tag.json"
  fi
  if [ "$what" = decode ] || [ "$what" = both ]; then
    job=$("$cli" submit --preset llama-3.1-8b --sweep-m 1,16,64,128 \
          --recipes bf16,fp8-current,fp8-rowwise --devices 0 --label "decode $tag")
    "$cli" watch "$job" >/dev/null
    "$cli" report "$job" --format json >"$out/decode_$tag.json"
  fi
  kill -TERM $daemon; wait $daemon
  rm -rf "$work"
}

start=$(date +%s)
run "$a" a1
run "$b" b1
run "$b" b2
run "$a" a2
echo "four runs in $(( $(date +%s) - start )) s"
python3 "$here/bundle_compare.py" "$out" | tee "$out/compare.txt"
