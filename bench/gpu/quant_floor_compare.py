#!/usr/bin/env python3
"""Quantization overhead against its bandwidth floor, per recipe, from the seed 5B reports
that bench/gpu/bundle_compare.sh wrote (seed_a1/b1/b2/a2.json, A = before, B = after):
each run's autocast and prequant per-layer ms, overhead (autocast - prequant), floor and
overhead / floor, then each bundle's mean over its two runs.

usage: quant_floor_compare.py OUT_DIR
"""
import json
import math
import os
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for e in doc.get("quantization_overhead", []):
        floor = e.get("bandwidth_floor_ms")
        rows[e["recipe"]] = {
            "autocast": e["autocast_per_layer_ms"],
            "prequant": e["prequant_per_layer_ms"],
            "overhead": e["overhead_per_layer_ms"],
            "floor": floor,
        }
    return rows


def main():
    out = sys.argv[1]
    runs = {}
    for tag in ("a1", "b1", "b2", "a2"):
        path = os.path.join(out, f"seed_{tag}.json")
        if os.path.exists(path):
            runs[tag] = load(path)
    if not runs:
        print("no seed_*.json in", out)
        return 1
    recipes = sorted({r for rows in runs.values() for r in rows})
    print("| recipe | run | autocast ms/layer | prequant ms/layer | overhead ms | floor ms | overhead / floor |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in recipes:
        for tag, rows in runs.items():
            e = rows.get(r)
            if not e:
                continue
            if not e["floor"]:
                continue
            ratio = e["overhead"] / e["floor"]
            print(f"| {r} | {tag} | {e['autocast']:.4f} | {e['prequant']:.4f} | "
                  f"{e['overhead']:.4f} | {e['floor'] or 0:.4f} | {ratio:.3f} |")
    print()
    # A's own floor is what its build counted; when the builds count different bytes (the
    # floor gained the scales on 2026-11-30), "A / B's floor" compares both on B's bytes.
    print("| recipe | before (A) overhead / floor | A / B's floor | after (B) overhead / floor | "
          "autocast after / before |")
    print("|---|---:|---:|---:|---:|")
    for r in recipes:
        def mean(tags, key):
            vals = [runs[t][r][key] for t in tags if t in runs and r in runs[t]]
            vals = [v for v in vals if v is not None]
            return sum(vals) / len(vals) if vals else float("nan")
        floor = mean(("a1", "a2", "b1", "b2"), "floor")
        if math.isnan(floor) or floor <= 0:  # bf16: nothing quantized
            continue
        a_ratio = mean(("a1", "a2"), "overhead") / mean(("a1", "a2"), "floor")
        a_on_b = mean(("a1", "a2"), "overhead") / mean(("b1", "b2"), "floor")
        b_ratio = mean(("b1", "b2"), "overhead") / mean(("b1", "b2"), "floor")
        auto = mean(("b1", "b2"), "autocast") / mean(("a1", "a2"), "autocast")
        print(f"| {r} | {a_ratio:.3f} | {a_on_b:.3f} | {b_ratio:.3f} | {auto:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
