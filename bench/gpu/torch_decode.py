#!/usr/bin/env python3
"""PyTorch baseline for gemmprof's back-to-back figure at decode sizes: M = 16, 64, 128
tokens against (K, N) = (4096, 14336), (14336, 4096), (8192, 8192) (or the --gemms given),
in BF16 (torch.matmul), FP8 tensor-scaled prequant and FP8 row-wise prequant
(torch._scaled_mm, E4M3, fast accumulation as gemmprof's fprop; row-wise: one fp32 scale
per row of A and per output channel). Ten calls are captured back to back in one CUDA
graph; a sample is one replay between two CUDA events, divided by 10, queued behind the
same blocking kernel torch_baseline.py uses. Each graph is timed two or three ways:

  b2b_ms            one graph after the other, --iters samples each (the decode bar's
                    reference: a burst per graph, after whatever ran before it);
  b2b_sustained_ms  with --sustain-s S only: the same after S seconds of replaying that
                    graph (torch_baseline.py's sustained load: the clocks a power-capped
                    GPU holds under continuous load);
  b2b_rounds_ms     in interleaved rounds over every (shape, recipe, backend) of the run, as
                    gemmprof times its items: --rounds rounds, each visiting every graph
                    once in a shuffled order (one untimed replay, then --iters / --rounds
                    samples), so every figure is taken at the same mix of work; how far it
                    differs from b2b_ms is how far the order alone moves PyTorch's figure.

Medians of the samples. sm_clock_mhz is the median SM clock during the b2b_ms burst
(nvidia-smi sampling every 10 ms while the script runs; empty where it could not), to set
beside the SM clock gemmprof reports for each item's measurement group: on a power-capped
GPU a burst's clocks depend on what ran before it.

The kernels of each graph are named from torch.profiler, by default only after every
timing above (--profile after), so that no figure is taken in a process the profiler has
run in (Kineto may leave CUPTI attached after a session). On an H100 with PyTorch 2.11 it
made no difference: --profile between (each graph profiled right after its burst, this
script's order before) and --retime (every burst timed again after all the profiling,
column b2b_after_profile_ms) agreed within 0.3% (the lab notebook's "One stream or
several": git show e95989d:bench/gpu/RESULTS.md). Column profiled_before counts the
profiler sessions the process had run before each b2b_ms burst (0 throughout with
--profile after).

torch.matmul runs twice: with PyTorch's default BLAS library (cuBLAS, backend "cublas")
and with torch.backends.cuda.preferred_blas_library("cublaslt") (backend "cublaslt",
PyTorch's cuBLASLt workspace); torch._scaled_mm always runs cuBLASLt. Each row names the
CUDA kernels one call ran and their summed duration (torch.profiler, 20 calls), so a
comparison can tell whether gemmprof and PyTorch ran the same kernel, and compare kernel
time apart from the gaps between launches.
"""
import argparse
import datetime
import random
import statistics
import subprocess
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import torch_baseline as tb

MS = (16, 64, 128)
KNS = ((4096, 14336), (14336, 4096), (8192, 8192))
REPEAT = 10


def with_blas(backend, fn):
    """fn run with `backend` as PyTorch's preferred BLAS library (restored after)."""
    def run():
        before = torch.backends.cuda.preferred_blas_library()
        torch.backends.cuda.preferred_blas_library(backend)
        try:
            return fn()
        finally:
            torch.backends.cuda.preferred_blas_library(before)
    return run


def name_kernels(row, fn):
    """Adds the kernels of one call of fn and their summed duration to `row`."""
    names, kernel_ms = kernels_of(fn)
    row["kernel_ms"] = f"{kernel_ms:.6f}"
    row["kernels"] = names


def kernels_of(fn, calls=20):
    """The CUDA kernels of one call of fn ("name xN; ..." in launch order) and their summed
    duration per call in ms (the mean over `calls` profiled calls)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    counts, total_us = {}, 0.0
    for e in prof.events():
        if e.device_type.name == "CUDA":
            counts[e.name] = counts.get(e.name, 0) + 1
            total_us += e.device_time
    names = "; ".join(f"{name} x{n // calls}" for name, n in counts.items())
    return names, total_us / calls / 1000


class ClockLog:
    """The SM clock of this process's GPU, sampled by nvidia-smi every 10 ms from creation
    to stop() (into a file: a pipe left unread would stall it)."""

    def __init__(self):
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        uuid = getattr(props, "uuid", None)  # printed without nvidia-smi's "GPU-"
        target = ("GPU-" + str(uuid).removeprefix("GPU-") if uuid is not None
                  else str(torch.cuda.current_device()))
        self.out = tempfile.TemporaryFile(mode="w+")
        self.samples = []
        try:
            self.proc = subprocess.Popen(
                ["nvidia-smi", "-i", target, "--query-gpu=timestamp,clocks.sm",
                 "--format=csv,noheader,nounits", "-lms", "10"],
                stdout=self.out, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.proc = None

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
        self.out.seek(0)
        for line in self.out:
            try:
                stamp, mhz = (x.strip() for x in line.split(","))
                self.samples.append(
                    (datetime.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f"), float(mhz)))
            except ValueError:
                continue

    def median_mhz(self, start, end):
        """The median sample from `start` to `end` (local datetimes, as nvidia-smi stamps
        them), or None."""
        within = [mhz for t, mhz in self.samples if start <= t <= end]
        return statistics.median(within) if within else None


def time_rounds(graphs, rounds, per_visit, seed):
    """Samples (ms per replay) of every graph, taken in interleaved rounds: each round
    visits every graph once in a shuffled order; a visit is one untimed replay (the graph
    before it evicted this one's operands from L2) and `per_visit` timed replays, queued
    behind the stream hold."""
    stream = torch.cuda.Stream()
    rng = random.Random(seed)
    samples = [[] for _ in graphs]
    order = list(range(len(graphs)))
    with torch.cuda.stream(stream):
        for _ in range(rounds):
            rng.shuffle(order)
            for i in order:
                events = [(torch.cuda.Event(enable_timing=True),
                           torch.cuda.Event(enable_timing=True)) for _ in range(per_visit)]
                tb.HOLD.hold(stream)
                graphs[i].replay()
                for start, stop in events:
                    start.record(stream)
                    graphs[i].replay()
                    stop.record(stream)
                tb.HOLD.release()
                stream.synchronize()
                tb.HOLD.check()
                samples[i] += [start.elapsed_time(stop) for start, stop in events]
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--gemms", default="",
                    help="MxKxN list to time instead of every M x (K, N) above, e.g. "
                    "16x4096x14336,128x8192x8192")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sustain-s", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--profile", choices=("after", "between"), default="after",
                    help="name the kernels after all timing (default) or right after each "
                    "graph's burst")
    ap.add_argument("--retime", action="store_true",
                    help="time every burst again after the profiling (b2b_after_profile_ms)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_decode: no CUDA device", file=sys.stderr)
        return 1
    tb.HOLD = tb.StreamHold()
    print(f"stream hold: {tb.HOLD.mode}; torch {torch.__version__} on "
          f"{torch.cuda.get_device_name()}")
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    tb.warm_up(gen)
    rows, graphs, streams, fns, keep, windows = [], [], [], [], [], []
    profiled = 0  # torch.profiler sessions run in this process so far
    clock = ClockLog()
    gemms = ([tuple(int(x) for x in g.split("x")) for g in args.gemms.split(",")]
             if args.gemms else [(m, k, n) for m in MS for k, n in KNS])
    for m, k, n in gemms:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        qa, sa = tb.to_fp8(a, torch.float8_e4m3fn)
        qb, sb = tb.to_fp8(bt, torch.float8_e4m3fn)
        ra, rsa = tb.to_fp8_rows(a)
        rb, rsb = tb.to_fp8_rows(bt)
        rsb = rsb.reshape(1, -1)
        keep.append((a, bt, qa, sa, qb, sb, ra, rsa, rb, rsb))
        impls = {
            ("bf16", "cublas"): with_blas("cublas", lambda a=a, bt=bt: torch.matmul(a, bt.t())),
            ("bf16", "cublaslt"): with_blas("cublaslt",
                                            lambda a=a, bt=bt: torch.matmul(a, bt.t())),
            ("fp8-current", "cublaslt"): lambda qa=qa, qb=qb, sa=sa, sb=sb: torch._scaled_mm(
                qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                use_fast_accum=True),
            ("fp8-rowwise", "cublaslt"): lambda ra=ra, rb=rb, rsa=rsa, rsb=rsb:
                torch._scaled_mm(ra, rb.t(), scale_a=rsa, scale_b=rsb,
                                 out_dtype=torch.bfloat16, use_fast_accum=True),
        }
        for (recipe, backend), fn in impls.items():
            def ten(fn=fn):
                for _ in range(REPEAT):
                    fn()
            # One graph per call list: timed as a burst, after sustained load, and
            # in the interleaved rounds below.
            stream = torch.cuda.Stream()
            graph = tb.capture_graph(ten, stream, args.warmup)
            start = datetime.datetime.now()
            samples = [s / REPEAT for s in tb.time_replays(graph, stream, args.iters)]
            windows.append((start, datetime.datetime.now()))
            med = statistics.median(samples)
            sustained = {}
            if args.sustain_s > 0:
                sustained["b2b_sustained_ms"] = "{:.6f}".format(statistics.median(
                    s / REPEAT
                    for s in tb.time_replays(graph, stream, args.iters, args.sustain_s)))
            graphs.append(graph)
            streams.append(stream)
            fns.append(fn)
            rows.append({"recipe": recipe, "backend": backend, "m": m, "k": k, "n": n,
                         "b2b_ms": f"{med:.6f}", "count": len(samples), **sustained,
                         "profiled_before": profiled})
            if args.profile == "between":
                name_kernels(rows[-1], fn)
                profiled += 1
    per_visit = max(1, args.iters // max(args.rounds, 1))
    for row, samples in zip(rows, time_rounds(graphs, args.rounds, per_visit, args.seed)):
        med = statistics.median(s / REPEAT for s in samples)
        row["b2b_rounds_ms"] = f"{med:.6f}"
        row["count_rounds"] = len(samples)
    if args.profile == "after":
        for row, fn in zip(rows, fns):
            name_kernels(row, fn)
    if args.retime:
        for row, graph, stream in zip(rows, graphs, streams):
            row["b2b_after_profile_ms"] = "{:.6f}".format(statistics.median(
                s / REPEAT for s in tb.time_replays(graph, stream, args.iters)))
    print(f"interleaved: {args.rounds} rounds over {len(graphs)} graphs, {per_visit} samples "
          "per visit")
    for row in rows:
        print(f"  {row['recipe']:12s} {row['backend']:9s} {row['m']}x{row['k']}x{row['n']:<6d} "
              f"{float(row['b2b_ms']) * 1e3:9.2f} us per GEMM as a burst, "
              + (f"{float(row['b2b_sustained_ms']) * 1e3:9.2f} after sustained load, "
                 if "b2b_sustained_ms" in row else "")
              + f"{float(row['b2b_rounds_ms']) * 1e3:9.2f} interleaved "
              f"({REPEAT} back to back in one graph); "
              + (f"{float(row['b2b_after_profile_ms']) * 1e3:9.2f} after the profiler; "
                 if "b2b_after_profile_ms" in row else "")
              + "kernels "
              f"{float(row['kernel_ms']) * 1e3:.2f} us: {row['kernels']}")
    clock.stop()
    for row, window in zip(rows, windows):
        mhz = clock.median_mhz(*window)
        row["sm_clock_mhz"] = f"{mhz:.0f}" if mhz is not None else ""
    print(f"SM clock during each burst ({len(clock.samples)} nvidia-smi samples): "
          + ", ".join(f"{r['recipe']} {r['backend']} {r['m']}x{r['k']}x{r['n']} "
                      f"{r['sm_clock_mhz'] or '-'}" for r in rows))
    tb.finish(rows, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
