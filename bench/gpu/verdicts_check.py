#!/usr/bin/env python3
"""Checks the verdict bars from what bench/gpu/verdicts.sh wrote into OUT_DIR; prints one
table per bar and exits 1 if any bar fails.

  identical work   every pair of items with the same work key in the 5B job shares one
                   measurement or agrees within 2%
  same job twice   per-layer totals (every recipe x mode) of two back-to-back jobs within 0.5%
  decode b2b       gemmprof's back-to-back figure within 3% of PyTorch's (10 calls in one
                   graph, one graph after the other) running the same GEMM kernel
                   (torch.matmul through cuBLAS or cuBLASLt, torch._scaled_mm), PyTorch run
                   before and after gemmprof; PyTorch's same graphs timed in interleaved
                   rounds (and after sustained load, where it ran) printed beside it
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


def first_kernel(names):
    """The first kernel of a "name xN; ..." list (the GEMM), without "void ", template
    arguments or parameters, so gemmprof's CUPTI names and PyTorch's profiler names compare."""
    first = (names or "").split(";")[0].strip()
    first = first.rsplit(" x", 1)[0] if " x" in first else first
    if first.startswith("void "):
        first = first[5:]
    for cut in ("(", "<"):
        first = first.split(cut)[0]
    return first.strip()


def decode(ours, before, after, ours_kernels):
    """gemmprof's back-to-back figure against PyTorch running the same GEMM kernel.

    PyTorch's decode baseline times torch.matmul with cuBLAS (its default) and with
    cuBLASLt, and torch._scaled_mm (cuBLASLt); each row names the kernels one call ran.
    A gemmprof item is held to the PyTorch backend that ran its GEMM kernel (gemmprof's
    kernel names come from the same shapes run with --timing kernels); where no backend
    ran it, to PyTorch's default, and the row says "different kernel". PyTorch's default
    figure is printed beside it either way."""
    ok = True
    ref = defaultdict(lambda: defaultdict(dict))
    for name, table in (("before", before), ("after", after)):
        for r in table:
            key = (r["recipe"], int(r["m"]), int(r["k"]), int(r["n"]))
            t = ref[key][r.get("backend", "default")]
            t[name] = f(r["b2b_ms"])
            t[name + "_rounds"] = f(r.get("b2b_rounds_ms"))
            t[name + "_sustained"] = f(r.get("b2b_sustained_ms"))
            t[name + "_mhz"] = f(r.get("sm_clock_mhz"))
            t["kernel"] = first_kernel(r.get("kernels", ""))
            t.setdefault("kernel_ms", []).append(f(r.get("kernel_ms")))
    names, kernel_ms = {}, {}
    for r in ours_kernels:
        if r["status"] == "done":
            key = (r["recipe"], int(r["m"]), int(r["k"]), int(r["n"]))
            names[key] = first_kernel(r.get("kernel_names"))
            kernel_ms[key] = f(r.get("kernel_median_ms"))
    default_backend = {"bf16": "cublas"}
    print("\n## decode sizes, back to back (10 per graph): gemmprof vs PyTorch running the same "
          "kernel, within 3%")
    print("(torch before/after: PyTorch's graphs timed one after the other, each a burst after "
          "the graph before it; torch sustained (where torch_decode.py ran with --sustain-s), "
          "torch rounds: the mean of before and after timed after sustained load and in "
          "interleaved rounds, not judged; kernel us: the kernels' own "
          "durations, gemmprof's from CUPTI in the --timing kernels job, which records its "
          "isolated launches (one GEMM per graph launch), PyTorch's from torch.profiler over "
          "20 eager calls back to back: taken under different conditions, so their "
          "difference is not the gap between a graph's launches; MHz ours/torch: the median SM "
          "clock of gemmprof's measurement group and of PyTorch's before and after bursts)")
    print(f"{'recipe':12s} {'shape':18s} {'gemmprof us':>11s} {'torch before':>12s} "
          f"{'torch after':>11s} {'vs mean':>8s} {'against':>9s} {'torch default':>13s} "
          f"{'vs default':>10s} {'torch sustained':>15s} {'vs sust.':>8s} {'torch rounds':>12s} {'vs rounds':>9s} {'kernel us ours/torch':>21s} {'MHz ours/torch':>14s}  "
          "gemmprof's GEMM kernel")
    for r in ours:
        if r["status"] != "done":
            print(f"{r['recipe']:12s} {r['m']}x{r['k']}x{r['n']}: {r['status']} {r.get('error', '')}")
            ok = False
            continue
        key = (r["recipe"], int(r["m"]), int(r["k"]), int(r["n"]))
        backends = {b: t for b, t in ref.get(key, {}).items() if "before" in t and "after" in t}
        if not backends:
            print(f"{key}: no PyTorch figure")
            ok = False
            continue
        default = default_backend.get(key[0], "cublaslt")
        if default not in backends:
            default = next(iter(backends))
        kernel = names.get(key, "")
        same = [b for b, t in backends.items() if kernel and t["kernel"] == kernel]
        against = default if default in same or not same else same[0]
        t = backends[against]
        mean = (t["before"] + t["after"]) / 2
        ours_ms = f(r["b2b_ms"])
        d = ours_ms / mean - 1
        dt = backends[default]
        d_default = ours_ms / ((dt["before"] + dt["after"]) / 2) - 1
        ok &= abs(d) <= 0.03
        def reference_col(figure, width, vs_width):
            """PyTorch's `figure` (the mean of the before and after runs that have it) and
            gemmprof against it, or dashes where neither run has it."""
            have = [x for x in (t.get("before_" + figure, 0), t.get("after_" + figure, 0))
                    if x > 0]
            if not have:
                return f"{'-':>{width}s} {'-':>{vs_width}s}"
            ref_ms = sum(have) / len(have)
            return f"{ref_ms * 1e3:{width}.2f} {ours_ms / ref_ms - 1:+{vs_width}.2%}"

        unjudged_cols = f"{reference_col('sustained', 15, 8)} {reference_col('rounds', 12, 9)}"
        torch_kernel = [x for x in t.get("kernel_ms", []) if x > 0]
        kernels = (f"{kernel_ms.get(key, 0) * 1e3:.2f}/{sum(torch_kernel) / len(torch_kernel) * 1e3:.2f}"
                   if kernel_ms.get(key) and torch_kernel else "-")
        torch_mhz = [x for x in (t.get("before_mhz", 0), t.get("after_mhz", 0)) if x > 0]
        clocks = (f"{f(r.get('sm_clock_mhz')):.0f}/{sum(torch_mhz) / len(torch_mhz):.0f}"
                  if f(r.get("sm_clock_mhz")) and torch_mhz else "-")
        print(f"{key[0]:12s} {key[1]}x{key[2]}x{key[3]:<8d} {ours_ms * 1e3:11.2f} "
              f"{t['before'] * 1e3:12.2f} {t['after'] * 1e3:11.2f} {d:+8.2%} {against:>9s} "
              f"{(dt['before'] + dt['after']) / 2 * 1e3:13.2f} {d_default:+10.2%} {unjudged_cols} "
              f"{kernels:>21s} {clocks:>14s}  "
              f"{kernel or '(no names)'}{'' if same else '  [different kernel]'}"
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
        "decode b2b vs PyTorch": decode(
            rows(os.path.join(out, "report_decode.csv")),
            rows(os.path.join(out, "torch_decode_before.csv")),
            rows(os.path.join(out, "torch_decode_after.csv")),
            rows(os.path.join(out, "report_decode_kernels.csv"))
            if os.path.exists(os.path.join(out, "report_decode_kernels.csv")) else []),
        "wall time": wall(out),
    }
    precision(run1)
    print("\n" + "\n".join(f"{k}: {'PASS' if v else 'FAIL'}" for k, v in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
