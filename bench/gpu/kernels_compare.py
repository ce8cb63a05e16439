#!/usr/bin/env python3
"""Kernel-only vs events per item, from `gemmprof report --format json` of the jobs that
kernels_check.sh runs. Bars: seed prequant items agree within 2%; M = 16 items have
kernel-only <= events. Prints a Markdown table and one verdict line per bar.
usage: kernels_compare.py SEED.json DECODE.json"""
import json
import sys


def rows(path):
    report = json.load(open(path))
    out = []
    for it in report["items"]:
        m = it.get("result") or {}
        k = m.get("kernel")
        if not k or m.get("shared_with_item"):
            continue
        out.append((it, m["median_ms"], k["median_ms"], k["quant_ms"], k["samples"], k["names"]))
    return report, out


def table(title, report, items):
    d = report["device"]
    print(f"\n### {title}: {d['name']}, driver {d['driver_version']}, gemmprof {d['gemmprof_version']}\n")
    print("| pass | op | MxKxN | recipe | mode | events ms | kernel ms | kernel/events | launches | kernels |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---|")
    for it, ev, ke, q, n, names in items:
        print(f"| {it['pass']} | {it['op']} | {it['m']}x{it['k']}x{it['n']} | {it['recipe']} | "
              f"{it['mode']} | {ev:.4f} | {ke:.4f} | {ke / ev:.3f} | {n} | {names[:70]} |")


seed_report, seed = rows(sys.argv[1])
decode_report, decode = rows(sys.argv[2])
table("Seed 5B, prequant", seed_report, seed)
table("Llama-3.1-8B decode, M = 16, dynamic", decode_report, decode)
worst = max((abs(ke / ev - 1) for _, ev, ke, *_ in seed), default=float("nan"))
over = [it for it, ev, ke, *_ in decode if ke > ev]
print(f"\nseed prequant: {len(seed)} items, worst |kernel/events - 1| = {100 * worst:.2f}% "
      f"-> {'PASS' if seed and worst <= 0.02 else 'FAIL'} (bar: within 2%)")
print(f"decode M=16: {len(decode)} items, {len(over)} with kernel > events "
      f"-> {'PASS' if decode and not over else 'FAIL'} (bar: kernel-only <= events)")
