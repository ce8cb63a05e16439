#!/usr/bin/env python3
"""PyTorch's peers of gemmprof's serving recipes, timed in one process in interleaved rounds
at Llama-3.1-8B's fprop shapes (qkv 4096x6144, attn_out 4096x4096, mlp_up 4096x28672,
mlp_down 14336x4096) and M = 16, 128, 1024, 8192 (or --ms):

  bf16           torch.matmul(x, w.t())
  int8_mm        torch._int_mm(a_int8 [M, K], b_int8 as a column-major [K, N]: cuBLASLt's
                 fast INT8 layout), INT32 out
  int8_rowwise   int8_mm plus its scale epilogue in PyTorch (acc * a_scale * b_scale -> bf16),
                 eager (three elementwise kernels)
  int8_rowwise_compiled
                 int8_mm plus the same epilogue through torch.compile (one fused kernel: the
                 best a PyTorch user gets without a fused-epilogue GEMM); compiled before
                 any timing
  w4a16_torch    torch._weight_int4pack_mm (BF16 activations, INT4 weights, group 128),
                 weights packed once before any timing

A sample is one call between two CUDA events after an untimed call; each round visits
every (shape, M, peer) once in a shuffled order; medians over --rounds rounds. A peer
PyTorch refuses at a shape (torch._int_mm wants M > 16) is printed with its error, never
a number. Output: CSV on stdout (shape, m, peer, median_ms, tflops, error).
"""
import argparse
import random
import statistics
import sys

# The layer's shapes are shared with w4a16_ceiling.py, which imports them without PyTorch:
# torch is imported where it is used.
SHAPES = (("qkv", 4096, 6144), ("attn_out", 4096, 4096), ("mlp_up", 4096, 28672),
          ("mlp_down", 14336, 4096))


def peers(m, k, n, dev):
    """name -> zero-argument callable, or name -> error text."""
    import torch
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    out = {"bf16": lambda: torch.matmul(x, w.t())}
    a8 = torch.randint(-127, 128, (m, k), device=dev, dtype=torch.int8)
    b8 = torch.randint(-127, 128, (n, k), device=dev, dtype=torch.int8).t()  # [K, N] col-major
    sa = torch.rand(m, 1, device=dev, dtype=torch.float32)
    sb = torch.rand(1, n, device=dev, dtype=torch.float32)
    try:
        torch._int_mm(a8, b8)
        out["int8_mm"] = lambda: torch._int_mm(a8, b8)
        out["int8_rowwise"] = lambda: (torch._int_mm(a8, b8).float() * sa * sb).to(torch.bfloat16)
        try:
            epilogue = torch.compile(lambda acc, x, y: (acc.float() * x * y).to(torch.bfloat16))
            epilogue(torch._int_mm(a8, b8), sa, sb)
            out["int8_rowwise_compiled"] = lambda: epilogue(torch._int_mm(a8, b8), sa, sb)
        except Exception as e:  # torch.compile needs Triton and a compiler on the node
            out["int8_rowwise_compiled"] = str(e).splitlines()[0]
    except RuntimeError as e:
        out["int8_mm"] = out["int8_rowwise"] = out["int8_rowwise_compiled"] = str(e).splitlines()[0]
    try:
        wq = torch.randint(0, 16, (n, k), device=dev, dtype=torch.int32)
        packed = torch.ops.aten._convert_weight_to_int4pack(
            ((wq[:, ::2] << 4) | wq[:, 1::2]).to(torch.uint8), 8)
        scales = torch.rand(k // 128, n, 2, device=dev, dtype=torch.bfloat16)
        torch._weight_int4pack_mm(x, packed, 128, scales)
        out["w4a16_torch"] = lambda: torch._weight_int4pack_mm(x, packed, 128, scales)
    except (RuntimeError, AttributeError) as e:
        out["w4a16_torch"] = str(e).splitlines()[0]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ms", default="16,128,1024,8192")
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args()
    import torch
    dev = torch.device("cuda")
    cases = []  # (shape name, m, k, n, peer, callable or error)
    for m in (int(v) for v in args.ms.split(",")):
        for name, k, n in SHAPES:
            for peer, fn in peers(m, k, n, dev).items():
                cases.append((name, m, k, n, peer, fn))
    samples = {i: [] for i in range(len(cases))}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rng = random.Random(1234)
    for _ in range(args.rounds):
        order = [i for i, c in enumerate(cases) if callable(c[5])]
        rng.shuffle(order)
        for i in order:
            fn = cases[i][5]
            fn()
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples[i].append(start.elapsed_time(end))
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    print("shape,m,k,n,peer,median_ms,tflops,error")
    for i, (name, m, k, n, peer, fn) in enumerate(cases):
        if callable(fn):
            ms = statistics.median(samples[i])
            print(f"{name},{m},{k},{n},{peer},{ms:.5f},{2.0 * m * k * n / ms / 1e9:.1f},")
        else:
            print(f"{name},{m},{k},{n},{peer},,,\"{fn}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
