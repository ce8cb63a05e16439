#!/usr/bin/env bash
# Measurement contexts and energy on one GPU, in one device call (docs/benchmarks.md
# "Measured as the workload runs"):
#   contexts  the decode GEMMs 16x4096x14336, 16x14336x4096, 128x8192x8192 in bf16,
#             fp8-current and fp8-rowwise (prequant) as a job of their own ("alone") and
#             in a job that also has 1024x4096x14336, 4000x4000x4000, 3072x5120x7168 and
#             8192x8192x8192 ("mixed"), in the order alone mixed mixed alone, every job
#             --force; with BEFORE given, the mixed job on that build too (its batches
#             mixed M); then PyTorch CUDA graphs of the same GEMMs (torch_decode.py).
#   energy    the seed 5B job (autocast, bf16 fp8-current fp8-delayed fp8-block) with
#             --energy, twice (--force), and once without it, for the wall time.
# Then context_compare.py prints the tables.
# usage: bench/gpu/context_check.sh AFTER_BUNDLE OUT_DIR [contexts|energy|both] [BEFORE_BUNDLE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: context_check.sh AFTER_BUNDLE OUT_DIR [contexts|energy|both] [BEFORE_BUNDLE]"
after=${1:?$usage}
out=${2:?$usage}
what=${3:-both}
before=${4:-}
case $what in contexts|energy|both) ;; *) echo "context_check: unknown set '$what'" >&2; exit 2 ;; esac
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee -a "$out/gpu_state.txt" || true

decode=16x4096x14336,16x14336x4096,128x8192x8192
large=1024x4096x14336,4000x4000x4000,3072x5120x7168,8192x8192x8192
seed=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
      --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512
      --recipes bf16,fp8-current,fp8-delayed,fp8-block)

# A daemon of `bundle` on a fresh database; `jobs` is a list of "TAG|submit arguments".
run() {
  local bundle=$1; shift
  local work daemon cli="$bundle/bin/gemmprof" job tag args start
  work=$(mktemp -d)
  "$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
    --port-file "$work/port" --log-file "$out/gemmprofd_$(basename "$bundle").log" &
  daemon=$!
  for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
  export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
  for spec in "$@"; do
    tag=${spec%%|*}
    read -r -a args <<<"${spec#*|}"
    start=$(date +%s%N)
    job=$("$cli" submit "${args[@]}" --devices 0 --force --label "$tag")
    "$cli" watch "$job" >/dev/null
    echo "$tag: job $job in $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/wall.txt"
    "$cli" report "$job" --format json >"$out/$tag.json"
    "$cli" report "$job" >"$out/$tag.txt"
  done
  kill -TERM $daemon; wait $daemon
  rm -rf "$work"
}

if [ "$what" != energy ]; then
  shapes="--recipes bf16,fp8-current,fp8-rowwise --mode prequant --shapes"
  [ -n "$before" ] && run "$before" "before_mixed|$shapes $decode,$large"
  run "$after" "alone1|$shapes $decode" "mixed1|$shapes $decode,$large" \
      "mixed2|$shapes $decode,$large" "alone2|$shapes $decode"
  python3 "$here/torch_decode.py" --gemms "$decode" --csv "$out/torch_decode.csv" \
    >"$out/torch_decode.log" 2>&1 || tail -5 "$out/torch_decode.log"
fi
if [ "$what" != contexts ]; then
  run "$after" "seed_energy1|${seed[*]} --energy" "seed_energy2|${seed[*]} --energy" \
      "seed_plain|${seed[*]}"
fi
python3 "$here/context_compare.py" "$out" | tee "$out/compare.txt"
# A device call brings back few files: the reports and logs as one archive beside the tables.
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
