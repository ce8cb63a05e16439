#!/usr/bin/env python3
"""Reads what bench/gpu/two_gpu_check.sh wrote into OUT_DIR and checks the two-GPU bars:

  wall time   the seed 5B job spread over GPUs 0,1 in at most 0.6x the time of the same job
              on one GPU (mean of the two runs of each)
  agreement   per-layer totals (every recipe x mode) within 2%: GPU 0's job against GPU 1's,
              and each spread job against the mean of the pinned ones
Exits 1 if a bar fails.
"""
import json
import os
import sys
from collections import Counter

WALL_RATIO = 0.6
AGREE = 0.02


def load(out):
    runs = []
    with open(os.path.join(out, "wall.txt")) as fh:
        for n, line in enumerate(fh, 1):
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            ms = int(line.split()[3])
            with open(os.path.join(out, f"report_{n}.json")) as rf:
                report = json.load(rf)
            runs.append({"devices": fields["devices"], "ms": ms, "report": report,
                         "watch_rc": int(fields["watch_rc"])})
    return runs


def totals(report):
    t = {}
    for row in report["totals"]:
        if row.get("per_layer"):
            t[(row["recipe"], row["mode"])] = row["per_layer"]["total_ms"]
    return t


def gpus(report):
    return Counter((i.get("device_uuid") or "-")[:12] for i in report["items"])


def agree(name_a, ta, name_b, tb):
    ok = True
    print(f"\n## per-layer totals, {name_a} vs {name_b}: within {AGREE:.0%}")
    print(f"{'recipe':12s} {'mode':9s} {name_a:>12s} {name_b:>12s} {'diff':>8s}")
    for key in sorted(ta):
        if key not in tb:
            print(f"{key[0]:12s} {key[1]:9s} missing in {name_b}  FAIL")
            ok = False
            continue
        d = tb[key] / ta[key] - 1
        ok &= abs(d) <= AGREE
        print(f"{key[0]:12s} {key[1]:9s} {ta[key]:12.4f} {tb[key]:12.4f} {d:+8.2%}"
              f"{'' if abs(d) <= AGREE else '  FAIL'}")
    return ok


def main(out):
    runs = load(out)
    ok = True
    print("## runs")
    for n, r in enumerate(runs, 1):
        job = r["report"]["job"]
        print(f"run {n}: devices {r['devices']:4s} job {job['id']} {job['state']:9s} "
              f"{r['ms'] / 1000:6.1f} s, watch exit {r['watch_rc']}, items per GPU "
              f"{dict(gpus(r['report']))}")
        ok &= job["state"] == "succeeded" and r["watch_rc"] == 0
    one = [r for r in runs if "," not in r["devices"]]
    two = [r for r in runs if "," in r["devices"]]
    one_s = sum(r["ms"] for r in one) / len(one) / 1000
    two_s = sum(r["ms"] for r in two) / len(two) / 1000
    ratio = two_s / one_s
    print(f"\n## wall time: one GPU {one_s:.1f} s (mean of {len(one)}), two GPUs {two_s:.1f} s "
          f"(mean of {len(two)}): {ratio:.2f}x (bar <= {WALL_RATIO}x)"
          f"{'' if ratio <= WALL_RATIO else '  FAIL'}")
    ok &= ratio <= WALL_RATIO
    # Every spread job must really have used both GPUs.
    for r in two:
        used = [g for g in gpus(r["report"]) if g != "-"]
        if len(used) < 2:
            print(f"devices {r['devices']}: measured on {len(used)} GPU(s) only  FAIL")
            ok = False
    by_dev = {r["devices"]: totals(r["report"]) for r in one}
    ok &= agree("GPU 0", by_dev["0"], "GPU 1", by_dev["1"])
    pinned = {k: (by_dev["0"][k] + by_dev["1"].get(k, by_dev["0"][k])) / 2 for k in by_dev["0"]}
    for n, r in enumerate(two, 1):
        ok &= agree("one GPU", pinned, f"spread {n}", totals(r["report"]))
    print("\nall bars pass" if ok else "\nSOME BARS FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
