#!/usr/bin/env bash
# Fast accumulation per pass (issue 42's "+fast-accum:PASSES"), in one device call:
# gemmprofd (CUDA backend) runs one training job of Llama-3.1-8B (1 x 4096 tokens),
# prequant, with fp8-current and fp8-rowwise whole (the job's --fast-accum default:
# fprop fast, dgrad and wgrad split) and as variants "fp8-current+fast-accum:all" (its
# dgrad and wgrad are items of their own, fast) and "fp8-rowwise+fast-accum:none" (its
# fprop is an item of its own, split). Each GEMM's items are interleaved in one batch,
# so the variant's own items and the recipe's pair by rounds. Writes the text and JSON
# reports and the plan; the report's recipe table holds the per-layer totals. Then
# PyTorch's peer in the same call (torch_baseline.py --set fast-accum: torch._scaled_mm
# with use_fast_accum True and False on the same GEMMs) and, per pass, split / fast time
# from both.
# usage: bench/gpu/fast_accum_check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=${1:?usage: fast_accum_check.sh BUNDLE_DIR OUT_DIR}
out=${2:?usage: fast_accum_check.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
g="$bundle/bin/gemmprof"
job=(--preset llama-3.1-8b --micro_batch_size 1 --sequence_length 4096 --mode prequant
  --recipes fp8-current,fp8-current+fast-accum:all,fp8-rowwise,fp8-rowwise+fast-accum:none)

"$g" plan "${job[@]}" > "$out/fast_accum_plan.txt"
rm -f "$out/fast_accum.port"
"$bundle/bin/gemmprofd" --listen 127.0.0.1:0 --port-file "$out/fast_accum.port" \
  --db "$out/fast_accum.db" --backend cuda > "$out/fast_accum_daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do [ -s "$out/fast_accum.port" ] && break; sleep 0.2; done
export GEMMPROF_SERVER=127.0.0.1:$(cat "$out/fast_accum.port")
id=$("$g" submit "${job[@]}" --label "fast accumulation per pass")
"$g" watch "$id" > /dev/null
echo "fast-accum job $id, watch exit $?"
"$g" report "$id" > "$out/fast_accum.txt"
"$g" report "$id" --format json > "$out/fast_accum.json"
kill "$daemon"
wait "$daemon" 2>/dev/null
here=$(cd "$(dirname "$0")" && pwd)
(cd "$here" && timeout 300 python3 torch_baseline.py --set fast-accum --iters 50 \
  --csv "$out/torch_fast_accum.csv" > "$out/torch_fast_accum.txt" 2>&1)
echo "torch peer: rc=$?"
python3 - "$out/fast_accum.json" "$out/torch_fast_accum.csv" <<'PY'
import csv, json, os, sys
r = json.load(open(sys.argv[1]))
items = r["items"]
bad = [i for i in items if i.get("status") != "done" or
       (i.get("result") or {}).get("verification") != "passed"]
own = [i for i in items if "fast_accum_own" in i]
print(f"items: {len(items)}, own fast-accumulation items: {len(own)}, "
      f"not done or not verified: {len(bad)}")
for i in own:
    res = i.get("result") or {}
    print(f"  {i['pass']} {i['op']} {i['recipe']} own={i['fast_accum_own']} "
          f"ran fast={res.get('fast_accum')} verification={res.get('verification')}")
per_layer = {t["recipe"]: t["per_layer"] for t in r["totals"] if t["mode"] == "prequant"}
torch_sums = {}
if os.path.exists(sys.argv[2]):
    for row in csv.DictReader(open(sys.argv[2])):
        key = (row["impl"], row["pass"])
        torch_sums[key] = torch_sums.get(key, 0.0) + float(row["median_ms"])
print("split / fast accumulation, per-layer sum of the pass (gemmprof: the variant's own "
      "items against the recipe's; PyTorch: torch._scaled_mm)")
for recipe, variant, kind, passes, split_is_variant in (
        ("fp8-current", "fp8-current+fast-accum:all", "tensorwise", ("dgrad", "wgrad"), False),
        ("fp8-rowwise", "fp8-rowwise+fast-accum:none", "rowwise", ("fprop",), True)):
    for p in passes:
        base, var = per_layer[recipe][p + "_ms"], per_layer[variant][p + "_ms"]
        ours = var / base if split_is_variant else base / var
        tf = torch_sums.get((f"torch._scaled_mm {kind} fast", p))
        ts = torch_sums.get((f"torch._scaled_mm {kind} split", p))
        peer = f"{ts / tf:.3f}" if tf and ts else "not run"
        print(f"  {recipe:12s} {p:5s} gemmprof {ours:.3f}   PyTorch {peer}")
PY
