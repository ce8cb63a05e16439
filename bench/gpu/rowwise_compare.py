#!/usr/bin/env python3
"""Pairs rowwise_check.sh's runs: for each op set (the seed layer, Llama-3.1-8B fprop at
each M), the total of gemmprof's fp8-rowwise prequant medians against PyTorch's row-wise
_scaled_mm run right after it, and the same for tensor-wise. Target: torch / ours >= 0.97
(ours at least 0.97x PyTorch's speed) in the mean over pairs; every item verified.

usage: rowwise_compare.py OUT_DIR ROUNDS   (exit 1 when a target is missed)
"""
import csv
import statistics
import sys
from collections import defaultdict


def totals(path, key, libraries=None):
    """Per config: the sum of its items' medians and the count of items not done or not
    verified; `libraries` (optional) counts, per config, the items each GEMM library ran."""
    sums, bad = defaultdict(float), defaultdict(int)
    with open(path) as f:
        for row in csv.DictReader(f):
            name = row[key]
            if row.get("status", "done") != "done" or row.get("verification",
                                                                "passed") != "passed":
                bad[name] += 1
                continue
            sums[name] += float(row["median_ms"])
            if libraries is not None:
                lib = "CUTLASS" if "CUTLASS" in row.get("algorithm", "") else "cuBLASLt"
                libraries[name][lib] += 1
    return sums, bad


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    sets = ["seed"] + [f"llama8b M={m}" for m in (16, 128, 1024, 8192)]
    pairs = (("fp8-rowwise prequant", "torch._scaled_mm rowwise"),
             ("fp8-current prequant", "torch._scaled_mm tensorwise e4m3"))
    ratios = defaultdict(list)
    unverified = 0
    libraries = defaultdict(lambda: defaultdict(int))
    for r in range(1, rounds + 1):
        ours, bad = totals(f"{out}/ours_{r}.csv", "config", libraries)
        torch, _ = totals(f"{out}/torch_{r}.csv", "impl")
        unverified += sum(bad.values())
        for s in sets:
            for mine, theirs in pairs:
                o, t = ours.get(f"{s} {mine}"), torch.get(f"{s} {theirs}")
                if o and t:
                    ratios[(s, mine)].append((o, t, t / o))
    print(f"{'op set':16s} {'recipe':22s} {'ours ms':>10s} {'torch ms':>10s} "
          f"{'torch/ours per pair':>24s} {'mean':>7s}  target")
    ok = unverified == 0
    for s in sets:
        for mine, _ in pairs:
            v = ratios.get((s, mine), [])
            if not v:
                print(f"{s:16s} {mine:22s} MISSING")
                ok = False
                continue
            mean = statistics.mean(x[2] for x in v)
            target = mine.startswith("fp8-rowwise")
            verdict = ("PASS" if mean >= 0.97 else "FAIL") if target else "(reference)"
            ok = ok and (mean >= 0.97 or not target)
            print(f"{s:16s} {mine:22s} {statistics.mean(x[0] for x in v):10.4f} "
                  f"{statistics.mean(x[1] for x in v):10.4f} "
                  f"{' '.join(f'{x[2]:.3f}' for x in v):>24s} {mean:7.3f}  {verdict}")
    print(f"items not done or not verified: {unverified}")
    print("fp8-rowwise items by the GEMM library that ran them (all rounds):")
    for s in sets:
        counts = libraries.get(f"{s} fp8-rowwise prequant", {})
        print(f"  {s:16s} " + ", ".join(f"{lib} {n}" for lib, n in sorted(counts.items())))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
