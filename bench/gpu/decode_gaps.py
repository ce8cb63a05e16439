#!/usr/bin/env python3
"""Where PyTorch's back-to-back decode figure differs from gemmprof's: the same GEMM, N
calls in one CUDA graph (torch_decode.py's method, N = 10 there), N = 10 and 40, with
two output policies:

  alloc   each call returns a new tensor (torch_decode.py, what a model's graph does)
  out1    every call writes one preallocated output (gemmprof's back-to-back graph)

and, per case, the CUDA work inside 20 graph replays as torch.profiler sees it: device
records per replay, median kernel duration, median gap from one kernel's end to the next
one's start within a replay, and the replay's span (first start to last end) against
its event-timed figure: what the events hold beyond the kernels and the gaps between
them (profiled replays run slower than unprofiled ones, so that difference is only a
rough sign). µs per GEMM unless said, medians of --iters samples (one replay each,
divided by N).
"""
import argparse
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import torch_baseline as tb

SHAPES = ((16, 14336, 4096), (128, 14336, 4096), (128, 8192, 8192), (64, 4096, 14336))
REPEATS = (10, 40)


def kernel_gaps(graph, replays=20):
    """Device records per replay, median record duration, median end-to-start gap inside
    one replay, median replay span (µs). Each replay is synchronized on its own, so the
    replays' records are told apart by the idle time between them."""
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            graph.replay()
            torch.cuda.synchronize()
    spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                   if e.device_type.name == "CUDA")
    if not spans:
        return 0, float("nan"), float("nan"), float("nan")
    groups = [[spans[0]]]
    for span in spans[1:]:
        if span[0] - groups[-1][-1][1] > 20.0:  # idle: the next replay
            groups.append([span])
        else:
            groups[-1].append(span)
    durs = [end - start for start, end in spans]
    gaps = [g[i][0] - g[i - 1][1] for g in groups for i in range(1, len(g))]
    widths = [g[-1][1] - g[0][0] for g in groups]
    return (round(len(spans) / len(groups)), statistics.median(durs),
            statistics.median(gaps) if gaps else float("nan"), statistics.median(widths))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    tb.HOLD = tb.StreamHold()
    print(f"stream hold: {tb.HOLD.mode}; torch {torch.__version__} on "
          f"{torch.cuda.get_device_name()}")
    gen = torch.Generator(device="cuda").manual_seed(1234)
    tb.warm_up(gen)
    torch.backends.cuda.preferred_blas_library("cublaslt")
    print(f"{'recipe':5s} {'MxKxN':16s} {'N':>3s} {'policy':6s} {'us/GEMM':>8s} {'recs':>4s} "
          f"{'kernel':>7s} {'gap':>5s} {'span us':>8s} {'events us':>9s} {'beyond':>7s}")
    for m, k, n in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        qa, sa = tb.to_fp8(a, torch.float8_e4m3fn)
        qb, sb = tb.to_fp8(bt, torch.float8_e4m3fn)
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def fp8(out=None):
            kw = {"out": out} if out is not None else {}
            return torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=True, **kw)

        def bf16(out=None):
            if out is None:
                return torch.matmul(a, bt.t())
            return torch.matmul(a, bt.t(), out=out)

        for recipe, fn in (("fp8", fp8), ("bf16", bf16)):
            for reps in REPEATS:
                policies = {
                    "alloc": lambda fn=fn, reps=reps: [fn() for _ in range(reps)],
                    "out1": lambda fn=fn, reps=reps: [fn(out) for _ in range(reps)],
                }
                for policy, body in policies.items():
                    try:
                        stream = torch.cuda.Stream()
                        graph = tb.capture_graph(body, stream, args.warmup)
                        samples = [s / reps for s in tb.time_replays(graph, stream, args.iters)]
                        recs, dur, gap, width = kernel_gaps(graph)
                    except Exception as e:  # noqa: BLE001 - report and go on
                        print(f"{recipe:5s} {m}x{k}x{n:<8d} {reps:3d} {policy:6s} failed: {e}")
                        continue
                    per = statistics.median(samples) * 1000
                    print(f"{recipe:5s} {f'{m}x{k}x{n}':16s} {reps:3d} {policy:6s} {per:8.2f} "
                          f"{recs:4d} {dur:7.2f} {gap:5.2f} {width:8.1f} {per * reps:9.1f} "
                          f"{per * reps - width:7.1f}")
        del a, bt, qa, qb, out
    return 0


if __name__ == "__main__":
    sys.exit(main())
