"""Per-layer totals of bundle_compare.sh's four runs (a1 b1 b2 a2): A, B, B/A, and the
spread of each bundle's own two runs; for the moe job set, each grouped expert item's
median instead of per-layer totals.

usage: python3 bench/gpu/bundle_compare.py OUT_DIR
Exit status 1 when a B/A differs from 1 by more than 1% and by more than twice the larger
of the two within-bundle spreads of that figure."""
import json
import os
import sys


def seed_totals(doc):
    """(mode, recipe) -> per-layer total ms."""
    return {(t["mode"], t["recipe"]): t["per_layer"]["total_ms"]
            for t in doc["totals"] if t.get("per_layer")}


def decode_totals(doc):
    """(M, recipe) -> the model's forward time per layer in ms."""
    layers = doc["job"].get("num_layers") or 1
    return {(f'M={s["m"]}', s["recipe"]): s["full_model_ms"] / layers
            for s in doc["sweep"] if s.get("full_model_ms") is not None}


def moe_items(doc):
    """(pass op, recipe) -> the grouped expert item's median ms."""
    return {(f'{it["pass"]} {it["op"]}', it["recipe"]): it["result"]["median_ms"]
            for it in doc["items"] if it["groups"] > 1 and it.get("result")}


def main(out):
    worst = 0
    failed = False
    for name, totals in (("seed", seed_totals), ("decode", decode_totals), ("moe", moe_items)):
        runs = {}
        for tag in ("a1", "b1", "b2", "a2"):
            path = os.path.join(out, f"{name}_{tag}.json")
            if os.path.exists(path):
                runs[tag] = totals(json.load(open(path)))
        if len(runs) < 4:
            continue
        unit = "item ms" if name == "moe" else "per-layer ms"
        print(f"{name}: {unit}   A (mean of a1, a2)   B (mean of b1, b2)   B/A   "
              f"spread A   spread B")
        for key in sorted(runs["a1"]):
            va = [runs[t][key] for t in ("a1", "a2") if key in runs[t]]
            vb = [runs[t][key] for t in ("b1", "b2") if key in runs[t]]
            if len(va) < 2 or len(vb) < 2:
                print(f"  {key}: missing in a run")
                failed = True
                continue
            ma, mb = sum(va) / 2, sum(vb) / 2
            ratio = mb / ma
            spread_a, spread_b = abs(va[1] / va[0] - 1), abs(vb[1] / vb[0] - 1)
            off = abs(ratio - 1)
            worst = max(worst, off)
            bad = off > 0.01 and off > 2 * max(spread_a, spread_b)
            failed |= bad
            print(f"  {key[0]:20s} {key[1]:12s} {ma:10.4f} {mb:10.4f}   {ratio:.4f}   "
                  f"{100 * spread_a:5.2f}%   {100 * spread_b:5.2f}%{'   <-- off' if bad else ''}")
    print(f"largest |B/A - 1|: {100 * worst:.2f}%")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
