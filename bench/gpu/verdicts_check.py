#!/usr/bin/env python3
"""Checks the verdict bars from what bench/gpu/verdicts.sh wrote into OUT_DIR; prints one
table per bar and exits 1 if any bar fails.

  identical work   every pair of items with the same work key in the 5B job shares one
                   measurement or agrees within 2%
  same job twice   per-layer totals (every recipe x mode) of two back-to-back jobs within 0.5%
  decode b2b       gemmprof's back-to-back figure within 3% of PyTorch's (10 calls in one
                   graph), PyTorch run before and after gemmprof
  wall time        the 5B job (both modes, 4 recipes) in at most 34.5 s (1.5 x 23 s)
"""
import csv
import os
import sys
from collections import defaultdict

WALL_LIMIT_S = 34.5


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def headline_ms(r):
    return f(r.get("iso_ms")) or f(r.get("median_ms"))


def identical(run):
    ok = True
    print("\n## identical work in one job (5B, both modes): shared, or within 2%")
    print(f"{'pass':5s} {'op':9s} {'items (recipe mode)':58s} {'how':>22s}")
    by_key = defaultdict(list)
    for r in run:
        if r["status"] == "done":
            by_key[(r["pass"], r["op"], r.get("work_key", ""))].append(r)
    for (pass_, op, key), group in sorted(by_key.items()):
        if len(group) < 2 or not key:
            continue
        first = group[0]
        names = ", ".join(f"{r['recipe']} {r['mode']}" for r in group)
        shared = [int(f(r.get("shared_with_item"))) == int(f(first["item_id"])) for r in group[1:]]
        diffs = [abs(headline_ms(r) / headline_ms(first) - 1) for r in group[1:]]
        ok &= all(s or d <= 0.02 for s, d in zip(shared, diffs))
        how = "one measurement" if all(shared) else f"max diff {max(diffs):.2%}"
        print(f"{pass_:5s} {op:9s} {names[:58]:58s} {how:>22s}")
    return ok


def layer_totals(run):
    totals = defaultdict(float)
    for r in run:
        if r["status"] != "done" or r.get("per_layer", "true") not in ("true", "1"):
            continue
        w = f(r["layers"]) / max(f(r["num_layers"]), 1)
        totals[(r["recipe"], r["mode"])] += w * headline_ms(r)
    return totals


def same_job_twice(run1, run2):
    ok = True
    t1, t2 = layer_totals(run1), layer_totals(run2)
    print("\n## the same 5B job twice, back to back: per-layer totals within 0.5%")
    print(f"{'recipe':12s} {'mode':9s} {'run 1 ms':>10s} {'run 2 ms':>10s} {'diff':>8s}")
    for key in sorted(t1):
        d = t2.get(key, 0) / t1[key] - 1
        ok &= abs(d) <= 0.005
        print(f"{key[0]:12s} {key[1]:9s} {t1[key]:10.4f} {t2.get(key, 0):10.4f} {d:+8.2%}"
              f"{'' if abs(d) <= 0.005 else '  FAIL'}")
    return ok


def decode(ours, before, after):
    ok = True
    ref = defaultdict(dict)
    for name, table in (("before", before), ("after", after)):
        for r in table:
            ref[(r["recipe"], int(r["m"]), int(r["k"]), int(r["n"]))][name] = f(r["b2b_ms"])
    print("\n## decode sizes, back to back (10 per graph): gemmprof vs PyTorch within 3%")
    print(f"{'recipe':12s} {'shape':18s} {'gemmprof us':>11s} {'torch before':>12s} "
          f"{'torch after':>11s} {'vs mean':>8s}  N  isolated us")
    for r in ours:
        if r["status"] != "done":
            print(f"{r['recipe']:12s} {r['m']}x{r['k']}x{r['n']}: {r['status']} {r.get('error', '')}")
            ok = False
            continue
        key = (r["recipe"], int(r["m"]), int(r["k"]), int(r["n"]))
        t = ref.get(key, {})
        if "before" not in t or "after" not in t:
            print(f"{key}: no PyTorch figure")
            ok = False
            continue
        mean = (t["before"] + t["after"]) / 2
        d = f(r["b2b_ms"]) / mean - 1
        ok &= abs(d) <= 0.03
        print(f"{key[0]:12s} {key[1]}x{key[2]}x{key[3]:<8d} {f(r['b2b_ms']) * 1e3:11.2f} "
              f"{t['before'] * 1e3:12.2f} {t['after'] * 1e3:11.2f} {d:+8.2%}  "
              f"{r.get('b2b_count', '')}  {headline_ms(r) * 1e3:.2f}"
              f"{'' if abs(d) <= 0.03 else '  FAIL'}")
    return ok


def wall(out):
    ok = True
    print(f"\n## wall time of the 5B job (both modes, 4 recipes): at most {WALL_LIMIT_S} s")
    with open(os.path.join(out, "wall.txt")) as fh:
        for line in fh:
            name, ms, _ = line.split()
            s = int(ms) / 1000
            print(f"{name}: {s:.1f} s")
            if name == "5b_run1":
                ok &= s <= WALL_LIMIT_S
    return ok


def precision(run):
    widths = sorted(f(r.get("iso_rel_half_width")) for r in run if r["status"] == "done")
    reasons = defaultdict(int)
    for r in run:
        if r["status"] == "done":
            reasons[r.get("stop_reason", "").split(" (")[0].split(" ±")[0]] += 1
    if widths:
        print(f"\nachieved precision (isolated, 95% half-width): median ±{widths[len(widths) // 2]:.2%}, "
              f"worst ±{widths[-1]:.2%}; stop reasons: {dict(reasons)}")


def main():
    out = sys.argv[1]
    run1 = rows(os.path.join(out, "report_5b_1.csv"))
    run2 = rows(os.path.join(out, "report_5b_2.csv"))
    results = {
        "identical work": identical(run1),
        "same job twice": same_job_twice(run1, run2),
        "decode b2b vs PyTorch": decode(rows(os.path.join(out, "report_decode.csv")),
                                         rows(os.path.join(out, "torch_decode_before.csv")),
                                         rows(os.path.join(out, "torch_decode_after.csv"))),
        "wall time": wall(out),
    }
    precision(run1)
    print("\n" + "\n".join(f"{k}: {'PASS' if v else 'FAIL'}" for k, v in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
