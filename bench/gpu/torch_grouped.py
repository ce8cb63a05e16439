#!/usr/bin/env python3
"""PyTorch's grouped BF16 GEMM (torch._grouped_mm) on the expert items of gemmprof
reports, the peer figure for gemmprof's bf16 grouped items: for every grouped bf16 item
(groups > 1) of each REPORT.json, the same per-expert token counts (the item's
group_tokens, or groups x its token dimension), the same M/K/N and pass:
  fprop, dgrad  2D x 3D: A [sum of tokens, K] (experts back to back) times B [E, K, N]
                (stored [E, N, K], K-major, as the weights are), offs = the experts' ends;
  wgrad         2D x 2D: A [M, sum of tokens] times B [sum of tokens, N], offs along K.
Ten calls are captured back to back in one CUDA graph, the graph replayed --iters times
between CUDA events (torch_baseline.py's timing), median per call. A shape
torch._grouped_mm refuses is reported with its error, not timed.
usage: torch_grouped.py OUT.csv REPORT.json [REPORT.json ...]"""
import csv
import json
import statistics
import sys

import torch

import torch_baseline as tb

REPEAT = 10


def counts(item):
    tokens = item.get("group_tokens") or []
    if tokens:
        return tokens
    dim = item["k"] if item["pass"] == "wgrad" else item["m"]
    return [dim] * item["groups"]


def grouped_fn(item, gen):
    c = counts(item)
    e, m, k, n = item["groups"], item["m"], item["k"], item["n"]
    total = sum(c)
    offs = torch.tensor(c, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    if item["pass"] == "wgrad":
        a = torch.randn(m, total, generator=gen, **bf)
        b = torch.randn(n, total, generator=gen, **bf).t()
    else:
        a = torch.randn(total, k, generator=gen, **bf)
        b = torch.randn(e, n, k, generator=gen, **bf).transpose(-2, -1)

    def fn():
        for _ in range(REPEAT):
            torch._grouped_mm(a, b, offs=offs)

    return fn, total


def main():
    out_csv, reports = sys.argv[1], sys.argv[2:]
    tb.HOLD = tb.StreamHold()
    gen = torch.Generator(device="cuda").manual_seed(1)
    tb.warm_up(gen)
    rows = []
    for path in reports:
        report = json.load(open(path))
        for item in report["items"]:
            if item["groups"] <= 1 or item["recipe"] != "bf16" or item["mode"] != "prequant":
                continue
            row = {"report": path, "op": item["op"], "pass": item["pass"],
                   "shape": f"{item['m']}x{item['k']}x{item['n']}", "groups": item["groups"],
                   "tokens": sum(counts(item)), "ms": "", "tflops": "", "error": ""}
            try:
                fn, total = grouped_fn(item, gen)
                samples = tb.time_graph(fn, warmup=20, iters=200)
                ms = statistics.median(samples) / REPEAT
                flops = 2.0 * total * (item["n"] * item["k"] if item["pass"] != "wgrad"
                                       else item["m"] * item["n"])
                row.update(ms=f"{ms:.5f}", tflops=f"{flops / ms / 1e9:.0f}")
            except Exception as e:  # a refusal is a figure too
                row["error"] = str(e).splitlines()[0][:200]
            rows.append(row)
            print(row, flush=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["report"])
        w.writeheader()
        w.writerows(rows)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
