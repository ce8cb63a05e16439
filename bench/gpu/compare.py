#!/usr/bin/env python3
"""Prints the comparison table of run_bench.sh from the two CSVs and checks the targets.

usage: compare.py OURS_CSV TORCH_CSV   (exit status 1 when a target is missed)
"""
import csv
import sys
from collections import defaultdict


def layer_sums(path, key):
    sums, counts, bad = defaultdict(float), defaultdict(int), defaultdict(int)
    with open(path) as f:
        for row in csv.DictReader(f):
            k = row[key]
            if row.get("status", "done") != "done":
                bad[k] += 1
                continue
            if row.get("verification", "passed") != "passed":
                bad[k] += 1
            sums[k] += float(row["median_ms"])
            counts[k] += 1
    return sums, counts, bad


def main():
    ours, ours_n, ours_bad = layer_sums(sys.argv[1], "config")
    torch, torch_n, _ = layer_sums(sys.argv[2], "impl")
    rows = []

    def ratio(label, num, den, target, higher_is_better=True):
        if num is None or den is None or den == 0:
            rows.append((label, "n/a", (">= " if higher_is_better else "<= ") + f"{target:.2f}",
                         "MISSING"))
            return
        r = num / den
        ok = r >= target if higher_is_better else r <= target
        rows.append((label, f"{r:.4f}", (">= " if higher_is_better else "<= ") + f"{target:.2f}",
                     "PASS" if ok else "FAIL"))

    g = lambda d, k: d.get(k)
    ratio("BF16 torch.matmul / ours (autotune 1)", g(torch, "torch.matmul bf16"),
          g(ours, "bf16 autotune 1"), 0.98)
    ratio("BF16 torch.matmul / ours (autotune 8)", g(torch, "torch.matmul bf16"),
          g(ours, "bf16 autotune 8"), 1.00)
    ratio("fp8-current prequant: _scaled_mm / ours", g(torch, "torch._scaled_mm fp8-current prequant"),
          g(ours, "fp8-current prequant"), 0.98)
    ratio("fp8-current autocast per-gemm / prequant", g(ours, "fp8-current autocast per-gemm"),
          g(ours, "fp8-current prequant"), 1.15, higher_is_better=False)
    ratio("fp8-delayed autocast training-step / prequant",
          g(ours, "fp8-delayed autocast training-step"), g(ours, "fp8-delayed prequant"), 1.12,
          higher_is_better=False)
    blk_ok = ours_n.get("fp8-block prequant", 0) == 12 and ours_bad.get("fp8-block prequant", 0) == 0
    rows.append(("fp8-block prequant runs (12 items verified)",
                 f"{ours_n.get('fp8-block prequant', 0)} done", "12 verified",
                 "PASS" if blk_ok else "FAIL"))
    for base in ("bf16 autotune 1", "fp8-current prequant"):
        a, b = g(ours, base), g(ours, base + " (repeat)")
        if a and b:
            d = abs(b - a) / a
            rows.append((f"same job twice: {base}", f"{100 * d:.2f}%", "<= 1%",
                         "PASS" if d <= 0.01 else "FAIL"))
        else:
            rows.append((f"same job twice: {base}", "n/a", "<= 1%", "MISSING"))

    print("\nper-layer sums (ms):")
    for k in ours:
        print(f"  ours  {k:40s} {ours[k]:10.4f}  ({ours_n[k]} items, {ours_bad[k]} failed/unverified)")
    for k in torch:
        print(f"  torch {k:40s} {torch[k]:10.4f}  ({torch_n[k]} items)")
    print(f"\n{'check':50s} {'value':>10s} {'target':>12s}  result")
    for label, value, target, result in rows:
        print(f"{label:50s} {value:>10s} {target:>12s}  {result}")
    failed = [r for r in rows if r[3] != "PASS"]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} targets met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
