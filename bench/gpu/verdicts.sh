#!/usr/bin/env bash
# The verdict bars on one GPU (GPU 0, also on a node of several), in one device call
# (DESIGN.md "Measurement"):
#  1. the seed 5B job in both modes (bf16, fp8-current, fp8-delayed, fp8-block), default
#     noise-aware timing, through gemmprofd as a user runs it: wall time, identical work
#     shared or within 2%; then the same job again (--force): per-layer totals within 0.5%;
#  2. decode sizes, bf16 and fp8-current prequant, --b2b 10: the back-to-back figure
#     within 3% of PyTorch's 10 calls in one CUDA graph running the same GEMM kernel
#     (torch.matmul through cuBLAS and through cuBLASLt; kernel names from the profiler
#     and from a --timing kernels job), PyTorch run before and after (its graphs timed
#     one after the other, and in interleaved rounds, printed beside; TORCH_SUSTAIN_S=S
#     also times each after S seconds of its sustained load, printed too);
#  3. identical work measured unshared in interleaved rounds (gemmprof_gpu_bench
#     --identity): each pair's paired ratio within 2%.
# usage: bench/gpu/verdicts.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: verdicts.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: verdicts.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu \
  --format=csv 2>&1 | tee "$out/gpu_state.txt" || true

decode_shapes=""
for m in 16 64 128; do
  for kn in 4096x14336 14336x4096 8192x8192; do decode_shapes+="${decode_shapes:+,}${m}x${kn}"; done
done
"$bundle/bin/gemmprof_gpu_bench" --identity 2>&1 | tee "$out/identity.txt"
identity_rc=${PIPESTATUS[0]}
python3 "$here/torch_decode.py" --sustain-s "${TORCH_SUSTAIN_S:-0}" --csv "$out/torch_decode_before.csv" 2>&1 | tee "$out/torch_decode_before.log"

work=$(mktemp -d)
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
  --port-file "$work/port" --log-file "$out/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.1; done
export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
cli="$bundle/bin/gemmprof"
seed_model=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
            --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512)
recipes=bf16,fp8-current,fp8-delayed,fp8-block
: >"$out/wall.txt"
for run in 1 2; do
  start=$(date +%s%N)
  job=$("$cli" submit "${seed_model[@]}" --mode both --recipes "$recipes" --force \
        --devices 0 --label "5B both modes, run $run")
  "$cli" watch "$job" >"$out/watch_5b_$run.txt"
  echo "5b_run$run $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/wall.txt"
  "$cli" report "$job" --format csv >"$out/report_5b_$run.csv"
  "$cli" report "$job" --format json >"$out/report_5b_$run.json"
  "$cli" report "$job" >"$out/report_5b_$run.txt"
  eval "job$run=$job"
done
"$cli" compare "$job1" "$job2" >"$out/compare_5b.txt" 2>&1
"$cli" report "$job1" --format markdown >"$out/report_5b_1.md"
"$cli" plot "$job1" -o "$out/5b_layer.svg" --kind layer

dec=$("$cli" submit --shapes "$decode_shapes" --recipes bf16,fp8-current --mode prequant \
      --b2b 10 --force --devices 0 --label "decode sizes, back to back")
"$cli" watch "$dec" >"$out/watch_decode.txt"
"$cli" report "$dec" --format csv >"$out/report_decode.csv"
"$cli" report "$dec" >"$out/report_decode.txt"
# The same shapes once more with CUPTI kernel records, for the kernel names only (the
# figures above are the events timing, without CUPTI).
names=$("$cli" submit --shapes "$decode_shapes" --recipes bf16,fp8-current --mode prequant \
        --b2b 10 --num-iters 20 --timing kernels --force --devices 0 --label "decode kernel names")
"$cli" watch "$names" >"$out/watch_decode_kernels.txt"
"$cli" report "$names" --format csv >"$out/report_decode_kernels.csv"
kill -TERM $daemon; wait $daemon; trap - EXIT

python3 "$here/torch_decode.py" --sustain-s "${TORCH_SUSTAIN_S:-0}" --csv "$out/torch_decode_after.csv" 2>&1 | tee "$out/torch_decode_after.log"
python3 "$here/verdicts_check.py" "$out" 2>&1 | tee "$out/verdicts.txt"
check_rc=${PIPESTATUS[0]}
echo "identity check (unshared identical work within 2%): exit $identity_rc"
[ "$check_rc" -eq 0 ] && [ "$identity_rc" -eq 0 ]
