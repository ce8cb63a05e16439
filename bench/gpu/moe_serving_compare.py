#!/usr/bin/env python3
"""Issue 39's bars from the reports moe_serving_check.sh writes:
 * qwen, deepseek (4096 tokens, prequant, uniform routing): the grouped expert items
   summed per recipe; fp8-rowwise at least 1.3x faster than bf16 and at least 0.9x the
   speed of fp8-current, every item verified; the kernel each item kept;
 * deepseek_decode, qwen_decode (--sweep-m 64,256, zipf:1.2, masked): every recipe's
   expert items verified, with the per-expert token counts (min / median / max);
 * torch_grouped.csv: torch._grouped_mm (bf16) on the same counts beside each bf16
   grouped item.
usage: moe_serving_compare.py OUT_DIR"""
import csv
import json
import os
import re
import statistics
import sys

out = sys.argv[1]
RECIPES = ("bf16", "fp8-current", "fp8-block", "fp8-rowwise")
CHOICE = re.compile(r"chosen by measurement: ([\w ]+?) \(")
CONTEST = re.compile(r"kept after the item's own rounds: ([\w ]+?) \(")
failures = []


def load(name):
    path = f"{out}/{name}.json"
    return json.load(open(path)) if os.path.exists(path) else None


def kernel(r):
    contest = CONTEST.search(r.get("notes", ""))
    if contest:
        return contest.group(1)
    m = CHOICE.search(r.get("notes", ""))
    return m.group(1) if m else ("CUTLASS" if "CUTLASS" in r["algorithm"] else "cuBLASLt")


def spread(item):
    t = sorted(item.get("group_tokens") or [])
    if not t:
        dim = item["k"] if item["pass"] == "wgrad" else item["m"]
        return f"{dim} each"
    return f"{t[0]} / {t[(len(t) - 1) // 2]} / {t[-1]} ({t.count(0)} empty)"


def header(report, title):
    d = report["device"]
    print(f"\n### {title}: {d['name']}, driver {d['driver_version']}, "
          f"gemmprof {d['gemmprof_version']}\n")


def experts(name, title):
    report = load(name)
    if report is None:
        print(f"\n({title}: not in this run)")
        return
    header(report, title)
    print("| pass | op | MxKxN x groups | recipe | ms | TFLOP/s | kernel kept | verified |")
    print("|---|---|---|---|---:|---:|---|---|")
    sums = {}
    for it in report["items"]:
        r = it.get("result")
        if it["groups"] <= 1 or it["mode"] != "prequant":
            continue
        if not r:
            failures.append(f"{name} {it['pass']} {it['op']} {it['recipe']}: {it['status']}")
            continue
        s = sums.setdefault(it["recipe"], [0.0, 0.0, 0])
        s[0] += r["median_ms"]
        s[1] += r["flops"]
        s[2] += 1
        if r["verification"] != "passed":
            failures.append(f"{name} {it['pass']} {it['op']} {it['recipe']}: {r['verification']}")
        print(f"| {it['pass']} | {it['op']} | {it['m']}x{it['k']}x{it['n']} x{it['groups']} | "
              f"{it['recipe']} | {r['median_ms']:.4f} | {r['flops'] / r['median_ms'] / 1e9:.0f} | "
              f"{kernel(r)} | {r['verification']} |")
    print("\n| expert items, prequant, sum | items | ms | TFLOP/s | vs bf16 | vs fp8-current |")
    print("|---|---:|---:|---:|---:|---:|")
    for recipe in RECIPES:
        if recipe in sums:
            ms, flops, n = sums[recipe]
            vs = lambda other: f"{sums[other][0] / ms:.2f}x" if other in sums else "-"
            print(f"| {recipe} | {n} | {ms:.3f} | {flops / ms / 1e9:.0f} | {vs('bf16')} | "
                  f"{vs('fp8-current')} |")
    if all(r in sums for r in ("bf16", "fp8-current", "fp8-rowwise")):
        vs_bf16 = sums["bf16"][0] / sums["fp8-rowwise"][0]
        vs_cur = sums["fp8-current"][0] / sums["fp8-rowwise"][0]
        ok = vs_bf16 >= 1.3 and vs_cur >= 0.9
        print(f"\nBar (fp8-rowwise >= 1.3x bf16 and >= 0.9x fp8-current): {vs_bf16:.2f}x bf16, "
              f"{vs_cur:.2f}x fp8-current: {'met' if ok else 'MISSED'}")
        if not ok:
            failures.append(f"{name}: fp8-rowwise {vs_bf16:.2f}x bf16, {vs_cur:.2f}x fp8-current")


def decode(name, title):
    report = load(name)
    if report is None:
        print(f"\n({title}: not in this run)")
        return
    header(report, title)
    print("| M | op | tokens per expert min / median / max | recipe | ms | TFLOP/s | kernel kept "
          "| verified |")
    print("|---:|---|---|---|---:|---:|---|---|")
    for it in report["items"]:
        if it["groups"] <= 1:
            continue
        r = it.get("result")
        m = it["op"].split("@m=")[-1]
        if not r:
            failures.append(f"{name} {it['op']} {it['recipe']}: {it['status']}")
            print(f"| {m} | {it['op']} | {spread(it)} | {it['recipe']} | - | - | - | "
                  f"{it['status']} |")
            continue
        if r["verification"] != "passed":
            failures.append(f"{name} {it['op']} {it['recipe']}: {r['verification']}")
        print(f"| {m} | {it['op'].split('@')[0]} | {spread(it)} | {it['recipe']} | "
              f"{r['median_ms']:.4f} | {r['flops'] / r['median_ms'] / 1e9:.0f} | {kernel(r)} | "
              f"{r['verification']} |")


def torch_peer():
    path = f"{out}/torch_grouped.csv"
    if not os.path.exists(path):
        failures.append("torch_grouped.csv missing")
        return
    ours = {}
    for name in ("qwen", "deepseek", "deepseek_decode", "qwen_decode"):
        report = load(name)
        for it in (report or {}).get("items", []):
            if it["recipe"] == "bf16" and it["groups"] > 1 and it.get("result"):
                ours[(name, it["op"], it["pass"])] = it["result"]
    print("\n### torch._grouped_mm (bf16) beside gemmprof's bf16 grouped item, same counts\n")
    print("| report | pass | op | tokens | torch ms | gemmprof ms | gemmprof / torch | "
          "gemmprof kernel |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for row in csv.DictReader(open(path)):
        name = os.path.basename(row["report"]).removesuffix(".json")
        r = ours.get((name, row["op"], row["pass"]))
        if row["error"]:
            print(f"| {name} | {row['pass']} | {row['op']} | {row['tokens']} | refused: "
                  f"{row['error']} | - | - | - |")
            continue
        g = f"{r['median_ms']:.4f}" if r else "-"
        ratio = f"{r['median_ms'] / float(row['ms']):.2f}" if r else "-"
        print(f"| {name} | {row['pass']} | {row['op']} | {row['tokens']} | {float(row['ms']):.4f} "
              f"| {g} | {ratio} | {kernel(r) if r else '-'} |")


experts("qwen", "Qwen3-30B-A3B experts, 4096 tokens, prequant")
experts("deepseek", "DeepSeek-V3 experts, 4096 tokens, prequant")
decode("deepseek_decode", "DeepSeek-V3 decode, zipf:1.2, masked")
decode("qwen_decode", "Qwen3-30B-A3B decode, zipf:1.2, masked")
torch_peer()
print("\nALL BARS MET" if not failures else "\nNOT MET:\n- " + "\n- ".join(failures))
