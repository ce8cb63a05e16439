#!/usr/bin/env python3
"""PyTorch baseline for gemmprof_gpu_bench: the seed's 12 GEMMs of the 5B model timed
the way the CUDA runner times them.

  * torch.matmul in BF16: C[m, n] = A[m, k] @ Bt[n, k].T (both K-major, TN, like ours).
  * torch._scaled_mm on FP8 operands quantized once before timing (prequant) with
    tensor-wise scales: E4M3, E5M2 for gradients (dgrad A = dY, wgrad B^T = dY^T), fast
    accumulation in fprop only (Transformer Engine's default, as ours).

With --set fast-accum: Llama-3.1-8B's per-layer training GEMMs at 4096 tokens (fprop,
dgrad, wgrad of qkv, attn_out, mlp_up, mlp_down), each timed with use_fast_accum True and
False back to back, tensor-wise (E4M3, E5M2 for the gradient operands, as the seed) and
row-wise (E4M3): the peer of gemmprof's "+fast-accum" variants
(bench/gpu/fast_accum_check.sh).

With --set rowwise: PyTorch's row-wise torch._scaled_mm (E4M3, one fp32 scale per row of
A and per row of B^T = per output channel, BF16 out, fast accumulation in fprop) and its
tensor-wise one, on the seed layer and on Llama-3.1-8B's fprop GEMMs at M = 16, 128, 1024,
8192 (gemmprof_gpu_bench --rowwise measures the same sets).

Random normal inputs (never constant fills). One call is captured in a CUDA graph; each
sample is one graph replay between two CUDA events, and each batch of samples is queued
behind a one-thread kernel that spins on a pinned host flag until Python has queued
the whole batch (gemmprof's own method, compiled here through CuPy), so the GPU never
waits on Python between events and never idles longer than the queuing takes. Without
CuPy it falls back to torch.cuda._sleep (said in the output). Median of --iters
samples after --warmup replays.

--sustain-s S replays each GEMM for S seconds before its samples (in chunks of 50
replays, synchronizing after each; for the smallest GEMMs the host's relaunch gaps are a
sizeable part of that time), so they are taken at the clocks of sustained load, as
gemmprof's are (its items run back to back after a 2 s warm-up). Without it (the
default) each GEMM's samples are a burst of a few milliseconds after the host's gaps
between GEMMs, which a power-capped GPU may run at higher clocks than it can sustain.
"""
import argparse
import csv
import statistics
import sys
import time

import torch

HIDDEN, INTERMEDIATE, TOKENS = 4096, 16384, 31 * 512
BATCH = 64

_HOLD_SRC = r"""
extern "C" __global__ void hold_until_flag(const volatile int* flag, int* timed_out,
                                           unsigned long long timeout_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) { *timed_out = 1; return; }
  }
}
"""


class StreamHold:
    """Holds a stream while the host queues a batch of samples."""

    def __init__(self):
        self.mode = "torch.cuda._sleep (CuPy unavailable)"
        self.timeouts = 0
        try:
            import cupy
            import numpy
            self.cupy, self.numpy = cupy, numpy
            self.kernel = cupy.RawKernel(_HOLD_SRC, "hold_until_flag")
            self.kernel.compile()  # fail here, not in the middle of a timing batch
            # Pinned memory is mapped at the same address on the device (UVA).
            self.flag = torch.zeros(2, dtype=torch.int32).pin_memory()
            self.mode = "blocking kernel on a pinned host flag"
        except Exception as e:  # noqa: BLE001 - any CuPy problem means the fallback
            self.mode += f": {e}"
            self.kernel = None

    def hold(self, stream):
        if self.kernel is None:
            torch.cuda._sleep(2_000_000)
            return
        self.flag[0] = 0
        self.flag[1] = 0
        ptr = self.flag.data_ptr()
        with self.cupy.cuda.ExternalStream(stream.cuda_stream):
            self.kernel((1,), (1,), (self.numpy.uint64(ptr), self.numpy.uint64(ptr + 4),
                                     self.numpy.uint64(2_000_000_000)))

    def release(self):
        if self.kernel is not None:
            self.flag[0] = 1

    def check(self):
        if self.kernel is not None and int(self.flag[1]) != 0:
            self.timeouts += 1


HOLD = None


def training_ops(linears, tokens):
    """(pass, name, (m, k, n)) of each linear (name, in, out) in fprop, dgrad and wgrad."""
    ops = []
    for pass_ in ("fprop", "dgrad", "wgrad"):
        for name, fin, fout in linears:
            shape = {"fprop": (tokens, fin, fout), "dgrad": (tokens, fout, fin),
                     "wgrad": (fin, tokens, fout)}[pass_]
            ops.append((pass_, name, shape))
    return ops


def seed_layer_ops(hidden, intermediate, tokens):
    return training_ops([("qkv", hidden, 3 * hidden), ("attn_out", hidden, hidden),
                         ("mlp_up", hidden, intermediate), ("mlp_down", intermediate, hidden)],
                        tokens)


def sustain(graph, stream, seconds):
    """Replays `graph` for `seconds`, synchronizing after each chunk of replays so the
    queue stays short."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(50):
            graph.replay()
        stream.synchronize()


def capture_graph(fn, stream, warmup=0):
    """fn captured into a CUDA graph on `stream` (one eager call first, so cuBLAS picks and
    caches its algorithm outside the capture), then `warmup` replays."""
    with torch.cuda.stream(stream):
        fn()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn()
        for _ in range(warmup):
            graph.replay()
    torch.cuda.synchronize()
    return graph


def time_graph(fn, warmup, iters, sustain_s=0.0):
    stream = torch.cuda.Stream()
    return time_replays(capture_graph(fn, stream, warmup), stream, iters, sustain_s)


def time_replays(graph, stream, iters, sustain_s=0.0):
    """`iters` samples (ms) of one replay of `graph` each, after `sustain_s` seconds of
    replays when given."""
    with torch.cuda.stream(stream):
        if sustain_s > 0:
            sustain(graph, stream, sustain_s)
        samples = []
        done = 0
        while done < iters:
            count = min(BATCH, iters - done)
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(count)]
            HOLD.hold(stream)
            for start, stop in events:
                start.record(stream)
                graph.replay()
                stop.record(stream)
            HOLD.release()
            stream.synchronize()
            HOLD.check()
            samples += [start.elapsed_time(stop) for start, stop in events]
            done += count
    return samples


def warm_up(gen):
    """Raises clocks and temperature to their working level, like the runner's BeginJob."""
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, generator=gen)
    for _ in range(200):
        w @ w
    torch.cuda.synchronize()


def llama8b_fprop_ops(m):
    return [("fprop", name, (m, fin, fout)) for name, fin, fout in
            (("qkv", 4096, 6144), ("attn_out", 4096, 4096), ("gate_up", 4096, 28672),
             ("down", 14336, 4096))]


def to_fp8_rows(x):
    """E4M3 with one scale per row: scale_inv [rows, 1] fp32 (= amax / 448)."""
    fmax = torch.finfo(torch.float8_e4m3fn).max
    amax = x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12)
    scale = fmax / amax
    q = (x.float() * scale).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    return q, (1.0 / scale).float()


def time_set(label, ops, make_fn, args, gen, rows):
    total = 0.0
    print(f"\n== {label} ==")
    for pass_, name, (m, k, n) in ops:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        fn = make_fn(pass_, a, bt)
        samples = time_graph(fn, args.warmup, args.iters, args.sustain_s)
        med = statistics.median(samples)
        total += med
        tflops = 2.0 * m * k * n / (med * 1e9)
        print(f"  {pass_:5s} {name:8s} {m}x{k}x{n:<8d} {med:8.4f} ms {tflops:7.1f} TFLOP/s")
        rows.append({"impl": label, "pass": pass_, "op": name, "m": m, "k": k, "n": n,
                     "median_ms": f"{med:.6f}", "min_ms": f"{min(samples):.6f}",
                     "count": len(samples)})
        del a, bt
    print(f"  total: {total:.4f} ms")


def matmul_fn(pass_, a, bt):
    return lambda: torch.matmul(a, bt.t())


def seed_scaled_fn(pass_, a, bt):
    """Tensor-wise FP8 as the seed's training step: E5M2 for the gradient operands."""
    qa, sa = to_fp8(a, torch.float8_e5m2 if pass_ == "dgrad" else torch.float8_e4m3fn)
    qb, sb = to_fp8(bt, torch.float8_e5m2 if pass_ == "wgrad" else torch.float8_e4m3fn)
    fast = pass_ == "fprop"
    return lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=fast)


def rowwise_fn(pass_, a, bt):
    qa, sa = to_fp8_rows(a)
    qb, sb = to_fp8_rows(bt)
    sb = sb.reshape(1, -1)
    fast = pass_ == "fprop"
    return lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=fast)


def tensorwise_fn(pass_, a, bt):
    qa, sa = to_fp8(a, torch.float8_e4m3fn)
    qb, sb = to_fp8(bt, torch.float8_e4m3fn)
    fast = pass_ == "fprop"
    return lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=fast)


def llama8b_layer_ops(tokens):
    """Llama-3.1-8B's four per-layer GEMMs in each training pass, as gemmprof plans them
    (qkv with 8 KV heads, gate and up as one mlp_up)."""
    return training_ops([("qkv", 4096, 6144), ("attn_out", 4096, 4096), ("mlp_up", 4096, 28672),
                         ("mlp_down", 14336, 4096)], tokens)


def run_fast_accum_set(args, gen, rows):
    """Each GEMM with fast and split accumulation back to back; per-pass sums and their
    ratio."""
    kinds = (("tensorwise", True), ("rowwise", False))
    sums = {}
    print("\n== torch._scaled_mm, use_fast_accum True vs False ==")
    for pass_, name, (m, k, n) in llama8b_layer_ops(4096):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        for kind, tensorwise in kinds:
            if tensorwise:
                qa, sa = to_fp8(a, torch.float8_e5m2 if pass_ == "dgrad" else torch.float8_e4m3fn)
                qb, sb = to_fp8(bt, torch.float8_e5m2 if pass_ == "wgrad" else torch.float8_e4m3fn)
            else:
                qa, sa = to_fp8_rows(a)
                qb, sb = to_fp8_rows(bt)
                sb = sb.reshape(1, -1)
            for fast in (True, False):
                fn = (lambda qa=qa, qb=qb, sa=sa, sb=sb, fast=fast: torch._scaled_mm(
                    qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                    use_fast_accum=fast))
                med = statistics.median(time_graph(fn, args.warmup, args.iters, args.sustain_s))
                key = (kind, "fast" if fast else "split", pass_)
                sums[key] = sums.get(key, 0.0) + med
                rows.append({"impl": f"torch._scaled_mm {kind} {key[1]}", "pass": pass_,
                             "op": name, "m": m, "k": k, "n": n, "median_ms": f"{med:.6f}"})
        del a, bt
    for kind, _ in kinds:
        for pass_ in ("fprop", "dgrad", "wgrad"):
            f, sp = sums[(kind, "fast", pass_)], sums[(kind, "split", pass_)]
            print(f"  {kind:10s} {pass_:5s} fast {f:.4f} ms  split {sp:.4f} ms  "
                  f"split/fast {sp / f:.3f}")


def run_rowwise_set(args, gen, rows):
    sets = [("seed", seed_layer_ops(HIDDEN, INTERMEDIATE, TOKENS))]
    sets += [(f"llama8b M={m}", llama8b_fprop_ops(m)) for m in (16, 128, 1024, 8192)]
    for name, ops in sets:
        time_set(f"{name} torch._scaled_mm rowwise", ops, rowwise_fn, args, gen, rows)
        time_set(f"{name} torch._scaled_mm tensorwise e4m3", ops, tensorwise_fn, args, gen, rows)


def finish(rows, csv_path):
    """Warns about stream-hold timeouts and writes the rows as CSV (when a path is given)."""
    if HOLD.timeouts:
        print(f"warning: the stream hold timed out {HOLD.timeouts} time(s); those samples may "
              "include launch gaps")
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            wr.writeheader()
            wr.writerows(rows)


def to_fp8(x, dtype):
    amax = x.abs().max().float()
    fmax = torch.finfo(dtype).max
    scale = fmax / amax
    q = (x.float() * scale).clamp(-fmax, fmax).to(dtype)
    return q, (1.0 / scale).reshape(()).float()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default="")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--quick", action="store_true", help="shapes divided by 4")
    ap.add_argument("--sustain-s", type=float, default=0.0,
                    help="seconds of continuous replays before each GEMM's samples "
                         "(sustained-load clocks; default 0: a burst)")
    ap.add_argument("--set", choices=("seed", "rowwise", "fast-accum"), default="seed",
                    help="seed: bf16 and tensor-wise fp8 on the seed layer (default); "
                         "rowwise: row-wise vs tensor-wise _scaled_mm; fast-accum: "
                         "use_fast_accum True vs False on Llama-3.1-8B's layer (see above)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA device", file=sys.stderr)
        return 1
    global HOLD
    HOLD = StreamHold()
    print(f"stream hold: {HOLD.mode}")
    div = 4 if args.quick else 1
    ops = seed_layer_ops(HIDDEN // div, INTERMEDIATE // div, TOKENS // div)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, "
          f"cuBLAS {torch.backends.cuda.preferred_blas_library()}")
    rows = []
    warm_up(gen)
    if args.set in ("rowwise", "fast-accum"):
        (run_rowwise_set if args.set == "rowwise" else run_fast_accum_set)(args, gen, rows)
        finish(rows, args.csv)
        return 0
    for label, make_fn in (("torch.matmul bf16", matmul_fn),
                           ("torch._scaled_mm fp8-current prequant", seed_scaled_fn)):
        time_set(label, ops, make_fn, args, gen, rows)
    finish(rows, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
