#!/usr/bin/env python3
"""The serving recipes' decode/prefill table from one device call: a gemmprof report CSV of
the Llama-3.1-8B serving job (bench/gpu/serving_check.sh) and serving_peers.py's CSV(s)
timed in the same call. Prints markdown:

  * per M, per fprop GEMM, each recipe's time (the item's interleaved-rounds median, iso_ms)
    and the CUTLASS form or cuBLASLt algorithm it kept; the four per-layer GEMMs' total and
    each recipe's speed-up over bf16 on that total (lm_head, once per step, shown apart);
  * int8-rowwise against PyTorch's torch._int_mm (B column-major) with its scale epilogue,
    eager and compiled, at the M the peers ran (the mean of the peer files given).

Usage: serving_table.py REPORT_CSV PEERS_CSV [PEERS_CSV ...] [--mode prequant]
"""
import argparse
import collections
import csv
import statistics
import sys

LAYER_OPS = ("qkv", "attn_out", "mlp_up", "mlp_down")
RECIPES = ("bf16", "fp8-rowwise", "int8-rowwise", "w8a16", "w4a16")


def kept(row):
    """"CUTLASS tile 128x16x64 stream-K", "gemmprof decode, K split 11 ways[, cluster]" or
    "cuBLASLt"."""
    alg = row["algorithm"]
    if "w4a16 decode GEMM" in alg:
        split = next((p.strip() for p in alg.split(",") if "K split" in p or "K whole" in p), "")
        return ("gemmprof decode" + (", " + split.split(" (")[0] if split else "") +
                (", cluster" if "in a cluster" in alg else ""))
    if "CUTLASS" not in alg:
        return "cuBLASLt"
    tile = next((p.strip() for p in alg.replace(";", ",").split(",") if "tile " in p), "")
    return "CUTLASS " + tile + (" stream-K" if "stream-K" in alg else "")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("report")
    p.add_argument("peers", nargs="+")
    p.add_argument("--mode", default="prequant")
    a = p.parse_args()
    items = {}  # (m, op, recipe) -> row
    for r in csv.DictReader(open(a.report)):
        if r.get("mode") != a.mode or r.get("status") != "done" or r.get("pass") != "fprop":
            continue
        op = r["op"].split("@")[0]
        items[(int(r["m"]), op, r["recipe"])] = r
    if not items:
        print(f"no measured fprop items in mode {a.mode}", file=sys.stderr)
        return 1
    first = next(iter(items.values()))
    print(f"Device {first['device_name']}, driver {first['driver_version']}, "
          f"gemmprof {first['gemmprof_version']}, mode {a.mode}; ms per GEMM "
          "(interleaved-rounds median)\n")
    ms_of = lambda r: float(r["iso_ms"] or r["median_ms"])
    for m in sorted({k[0] for k in items}):
        print(f"### M = {m}\n")
        print("| GEMM (MxKxN) | " + " | ".join(RECIPES) + " |")
        print("|---|" + "---:|" * len(RECIPES))
        totals = collections.defaultdict(float)
        for op in LAYER_OPS + ("lm_head",):
            cells, shape = [], ""
            for rec in RECIPES:
                r = items.get((m, op, rec))
                if r is None:
                    cells.append("-")
                    continue
                shape = f"{r['m']}x{r['k']}x{r['n']}"
                ok = "" if r["verification"] == "passed" else f" ({r['verification']})"
                cells.append(f"{ms_of(r):.4f}{ok}")
                if op in LAYER_OPS:
                    totals[rec] += ms_of(r)
            print(f"| {op} {shape} | " + " | ".join(cells) + " |")
        base = totals.get("bf16")
        print("| **layer total** | " + " | ".join(
            f"**{totals[r]:.4f}**" + (f" ({base / totals[r]:.2f}x)" if base and totals[r] else "")
            for r in RECIPES) + " |")
        print()
        for rec in RECIPES:
            forms = [f"{op}: {kept(items[(m, op, rec)])}" for op in LAYER_OPS + ("lm_head",)
                     if (m, op, rec) in items]
            print(f"- {rec} kept: " + "; ".join(forms))
        print()
    # int8-rowwise against PyTorch's INT8 peers.
    peers = collections.defaultdict(list)  # (name, m, k, n, peer) -> [ms]
    for path in a.peers:
        for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
            if r["median_ms"]:
                peers[(r["shape"], int(r["m"]), int(r["k"]), int(r["n"]), r["peer"])].append(
                    float(r["median_ms"]))
    print("### int8-rowwise against torch._int_mm (B column-major) + its scale epilogue\n")
    print("| GEMM | gemmprof int8-rowwise | _int_mm alone | + epilogue eager | + epilogue compiled"
          " | gemmprof / best peer with epilogue |")
    print("|---|---:|---:|---:|---:|---:|")
    for (name, m, k, n, peer), v in sorted(peers.items()):
        if peer != "int8_mm":
            continue
        ours = items.get((m, name, "int8-rowwise"))
        if ours is None:
            continue
        get = lambda p: statistics.mean(peers[(name, m, k, n, p)]) if peers.get(
            (name, m, k, n, p)) else None
        eager, comp = get("int8_rowwise"), get("int8_rowwise_compiled")
        best = min(x for x in (eager, comp) if x is not None)
        fmt = lambda x: f"{x:.4f}" if x is not None else "-"
        print(f"| {name} {m}x{k}x{n} | {ms_of(ours):.4f} | {fmt(statistics.mean(v))} | {fmt(eager)}"
              f" | {fmt(comp)} | {ms_of(ours) / best:.2f} (speed {best / ms_of(ours):.2f}x) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
