#!/usr/bin/env python3
"""Issue 12's bars from the reports moe_check.sh writes (qwen, deepseek, skew, dense .json):
 * grouped expert GEMMs (groups > 1), prequant, summed per recipe: fp8-block at least
   1.3x faster than bf16 and at least 0.85x the speed of fp8-current;
 * skewed routing: every fp8-block item done and verified;
 * dense fp8-block: per item, the library the runner kept against cuBLASLt, both timed in
   the same interleaved rounds (the item's "GEMM library chosen by measurement" note):
   the kept one is never slower than cuBLASLt by more than 1%.
usage: moe_compare.py OUT_DIR"""
import json
import re
import sys

out = sys.argv[1]
CHOICE = re.compile(r"chosen by measurement: ([\w ]+?) \(([^)]*) per GEMM")
FIGURE = re.compile(r"([\w ]+?) ([0-9.e+-]+) ms")
CONTEST = re.compile(r"kept after the item's own rounds: ([\w ]+?) \(")


def load(name):
    return json.load(open(f"{out}/{name}.json"))


def library(result):
    return "CUTLASS" if "CUTLASS" in result["algorithm"] else "cuBLASLt"


def kept(result):
    """The candidate the item kept ("CUTLASS batched pingpong") and every candidate's
    figure in the choice burst, from its choice note (the form kept after the item's own
    rounds where close forms contended there); the library and "" where it has none."""
    m = CHOICE.search(result["notes"])
    if not m:
        return (library(result), "")
    contest = CONTEST.search(result["notes"])
    return (contest.group(1) if contest else m.group(1), m.group(2))


def grouped(name, title):
    report = load(name)
    d = report["device"]
    print(f"\n### {title}: {d['name']}, driver {d['driver_version']}, gemmprof {d['gemmprof_version']}\n")
    print("| pass | op | MxKxN x groups | recipe | ms | TFLOP/s | library | verified |")
    print("|---|---|---|---|---:|---:|---|---|")
    sums = {}
    choices = []
    per_item = {}  # (pass, op) -> {recipe: ms}
    for it in report["items"]:
        r = it.get("result")
        if it["groups"] <= 1 or it["mode"] != "prequant" or not r:
            continue
        per_item.setdefault((it["pass"], it["op"]), {})[it["recipe"]] = r["median_ms"]
        s = sums.setdefault(it["recipe"], [0.0, 0.0, 0])
        s[0] += r["median_ms"]
        s[1] += r["flops"]
        s[2] += 1
        print(f"| {it['pass']} | {it['op']} | {it['m']}x{it['k']}x{it['n']} x{it['groups']} | "
              f"{it['recipe']} | {r['median_ms']:.4f} | {r['flops'] / r['median_ms'] / 1e9:.0f} | "
              f"{kept(r)[0]} | {r['verification']} |")
        if kept(r)[1]:
            choices.append(f"{it['pass']} {it['op']}: {kept(r)[1]}")
    if choices:
        print("\nCandidates timed for each fp8-block item (ms per GEMM, interleaved rounds):\n")
        for line in choices:
            print(f"- {line}")
    print(f"\n| grouped expert GEMMs, prequant, sum of items | items | ms | TFLOP/s | vs bf16 |")
    print("|---|---:|---:|---:|---:|")
    for recipe in ("bf16", "fp8-current", "fp8-block"):
        if recipe in sums:
            ms, flops, n = sums[recipe]
            print(f"| {recipe} | {n} | {ms:.3f} | {flops / ms / 1e9:.0f} | "
                  f"{sums['bf16'][0] / ms:.2f}x |")
    # Where fp8-block's time over fp8-current's goes, item by item.
    rows = [(k, v) for k, v in per_item.items() if "fp8-block" in v and "fp8-current" in v]
    if rows:
        excess = sum(v["fp8-block"] - v["fp8-current"] for _, v in rows)
        print("\n| item | fp8-block / fp8-current | fp8-block ms over fp8-current | share |")
        print("|---|---:|---:|---:|")
        for (pass_, op), v in rows:
            over = v["fp8-block"] - v["fp8-current"]
            share = f"{over / excess:.0%}" if excess > 0 else "-"
            print(f"| {pass_} {op} | {v['fp8-block'] / v['fp8-current']:.2f}x | {over:+.4f} | "
                  f"{share} |")
    ok = all(r in sums for r in ("bf16", "fp8-current", "fp8-block"))
    vs_bf16 = sums["bf16"][0] / sums["fp8-block"][0] if ok else float("nan")
    vs_cur = sums["fp8-current"][0] / sums["fp8-block"][0] if ok else float("nan")
    print(f"\n{title}: fp8-block {vs_bf16:.2f}x bf16 -> {'PASS' if vs_bf16 >= 1.3 else 'FAIL'} "
          f"(bar 1.3x); {vs_cur:.2f}x the speed of fp8-current -> "
          f"{'PASS' if vs_cur >= 0.85 else 'FAIL'} (bar 0.85x)")


grouped("qwen", "Qwen3-30B-A3B experts (128, 8 active), 1 x 8192 tokens")
grouped("deepseek", "DeepSeek-V3 experts (256, 8 active), 1 x 4096 tokens")

skew = load("skew")
items = [it for it in skew["items"] if it["recipe"] == "fp8-block"]
bad = [it for it in items if it["status"] != "done" or (it.get("result") or {}).get("verification") != "passed"]
print(f"\nQwen3 --moe-skew 4, fp8-block, both modes: {len(items)} items, {len(bad)} not done "
      f"or not verified -> {'PASS' if items and not bad else 'FAIL'}")
for it in bad:
    print(f"  {it['pass']} {it['op']} {it['mode']}: {it['status']} {it['error'][:120]}")

dense = load("dense")
print("\n### Seed 5B, fp8-block: the library each item kept, timed against cuBLASLt\n")
print("| pass | op | MxKxN | mode | kept | candidates (ms per GEMM) | kept / cuBLASLt |")
print("|---|---|---|---|---|---|---:|")
worst = 0.0
missing = 0
for it in dense["items"]:
    r = it.get("result")
    if not r or r.get("shared_with_item"):
        continue
    m = CHOICE.search(r["notes"])
    if not m:
        missing += 1
        print(f"| {it['pass']} | {it['op']} | {it['m']}x{it['k']}x{it['n']} | {it['mode']} | "
              f"{library(r)} | - | no choice note |")
        continue
    kept = m.group(1)
    figures = {name.strip(", "): float(ms) for name, ms in FIGURE.findall(m.group(2))}
    ratio = figures[kept] / figures["cuBLASLt"]
    worst = max(worst, ratio)
    print(f"| {it['pass']} | {it['op']} | {it['m']}x{it['k']}x{it['n']} | {it['mode']} | {kept} | "
          f"{m.group(2)} | {ratio:.3f} |")
print(f"\ndense fp8-block: worst kept/cuBLASLt {worst:.3f}, {missing} items without a choice "
      f"-> {'PASS' if worst <= 1.01 and not missing else 'FAIL'} (bar: never slower by > 1%)")
