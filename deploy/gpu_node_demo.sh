#!/usr/bin/env bash
# The service end to end on a GPU node, from a bundle (deploy/make_bundle.sh): starts
# gemmprofd on the cuda backend, runs the seed tutorial's 5B model in both modes, a GQA
# model (Llama-3.1-8B preset), two MoE models (Mixtral-8x7B, and DeepSeek-V3 with 256
# experts and MLA attention: grouped expert GEMMs), the 5B
# job again (answered from the cache), and writes reports in every format plus charts.
# usage: deploy/gpu_node_demo.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=${1:?usage: gpu_node_demo.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: gpu_node_demo.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out/files"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
work=$(mktemp -d)
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --db "$work/results.db" --backend cuda \
  --port-file "$work/port" --log-file "$out/files/gemmprofd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.1; done
export GEMMPROF_SERVER="127.0.0.1:$(cat "$work/port")"
cli="$bundle/bin/gemmprof"
f="$out/files"

"$cli" devices | tee "$f/devices.txt"
seed_model=(--hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32
            --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512)
"$cli" plan "${seed_model[@]}" >"$f/plan_5b.txt"
"$cli" plan --preset llama-3.1-8b --micro_batch_size 1 --sequence_length 8192 >"$f/plan_llama.txt"
time5b=$SECONDS
job=$("$cli" submit "${seed_model[@]}" --mode both --label "5B both modes")
"$cli" watch "$job" >"$f/watch_5b.txt"
echo "5B job $job took $((SECONDS - time5b)) s"
"$cli" report "$job" | tee "$f/report_5b.txt"
"$cli" report "$job" --format markdown >"$f/report_5b.md"
"$cli" report "$job" --format csv >"$f/report_5b.csv"
"$cli" report "$job" --format json >"$f/report_5b.json"
"$cli" report "$job" --chart >"$f/report_5b_chart.txt"
for kind in layer modes tflops speedup all; do "$cli" plot "$job" -o "$f/5b_$kind.svg" --kind "$kind"; done

llama=$("$cli" submit --preset llama-3.1-8b --micro_batch_size 1 --sequence_length 8192 \
  --recipes bf16,fp8-current,fp8-delayed,fp8-block --label "llama-3.1-8b GQA")
"$cli" watch "$llama" >/dev/null
"$cli" report "$llama" | tee "$f/report_llama.txt"
"$cli" plot "$llama" -o "$f/llama_layer.svg"

moe=$("$cli" submit --preset mixtral-8x7b --micro_batch_size 1 --sequence_length 4096 \
  --recipes bf16,fp8-current,fp8-block --label "mixtral-8x7b MoE")
"$cli" watch "$moe" >/dev/null
"$cli" report "$moe" | tee "$f/report_mixtral.txt"

deepseek=$("$cli" submit --preset deepseek-v3 --micro_batch_size 1 --sequence_length 4096 \
  --recipes bf16,fp8-current,fp8-block --label "deepseek-v3 MoE (256 experts, MLA)")
"$cli" watch "$deepseek" >/dev/null
"$cli" report "$deepseek" | tee "$f/report_deepseek.txt"

again=$("$cli" submit "${seed_model[@]}" --mode both --label "5B again (cache)")
"$cli" watch "$again" >/dev/null
"$cli" report "$again" >"$f/report_5b_cached.txt"
rerun=$("$cli" submit "${seed_model[@]}" --recipes bf16,fp8-current --force --label "5B rerun")
"$cli" watch "$rerun" >/dev/null
"$cli" compare "$job" "$rerun" | tee "$f/compare_5b.txt"
"$cli" history --recipe fp8-current --shape 15872x4096x12288 >"$f/history.txt"
"$cli" jobs | tee "$f/jobs.txt"
tar -C "$out" -czf "$out/gpu_node_demo.tar.gz" files
cp "$f/report_5b.txt" "$f/report_llama.txt" "$f/report_mixtral.txt" "$f/report_deepseek.txt" \
  "$f/compare_5b.txt" "$out/"
rm -rf "$f"
