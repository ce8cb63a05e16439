#!/usr/bin/env python3
"""What a "w4a16 N times faster than bf16" target asks of this GPU, measured in one process.

For each M (--ms), PyTorch's BF16 GEMM (torch.matmul(x, w.t()), cuBLAS) times Llama-3.1-8B's
four per-layer fprop GEMMs (qkv 4096x6144, attn_out 4096x4096, mlp_up 4096x28672,
mlp_down 14336x4096) with a clean L2 (a read of twice the L2 before each sample, as
`gemmprof submit --l2 clean`); their sum is the layer. A w4a16 layer --speedup times
faster must then take layer / speedup, and this script prints what that time asks:

  need_tflops   the layer's 2*M*K*N over that time. A w4a16 GEMM multiplies BF16 operands
                (the activations and the weight turned into BF16), so it cannot run above
                the rate the device's best BF16 GEMM reaches
  need_tbps     the INT4 weight and its BF16 scales (group 128) over that time. It cannot
                read them faster than the device copies memory

and the two ceilings, measured in the same process: the BF16 rate of a large square GEMM
(--big, default 8192; back to back and with a clean L2, the better kept) and the device's
copy bandwidth (a 2 GiB device-to-device copy, bytes read plus written over time). A
target above a ceiling is beyond the device: no kernel of that kind reaches it here.

Samples are medians over --rounds rounds; each round visits every GEMM in a shuffled
order. Output: one CSV line per M on stdout after two comment lines with the ceilings.
Exit 0; 2 on a bad argument.
"""
import argparse
import math
import random
import statistics
import sys

from serving_peers import SHAPES  # (name, K, N) of the layer's four fprop GEMMs
GROUP = 128


def layer_work(gemms):
    """(2*M*K*N summed, the INT4 weight's and its BF16 scales' bytes summed) of [(m, k, n)]."""
    flops = sum(2.0 * m * k * n for m, k, n in gemms)
    w4_bytes = sum(k * n / 2 + k // GROUP * n * 2 for _, k, n in gemms)
    return flops, w4_bytes


def what_it_needs(gemms, bf16_layer_ms, speedup, tflops_ceiling, tbps_ceiling):
    """What a w4a16 layer `speedup` times faster than bf16_layer_ms asks: the time, the BF16
    rate and the weight bandwidth it needs, and whether they are above the ceilings."""
    flops, w4_bytes = layer_work(gemms)
    target = bf16_layer_ms / speedup
    need_tflops = flops / target / 1e9
    need_tbps = w4_bytes / target / 1e9
    beyond = []
    if need_tflops > tflops_ceiling:
        beyond.append("BF16 rate")
    if need_tbps > tbps_ceiling:
        beyond.append("copy bandwidth")
    verdict = ("beyond the device's " + " and ".join(beyond)) if beyond else "within the ceilings"
    return {"target_ms": target, "need_tflops": need_tflops, "need_tbps": need_tbps,
            "verdict": verdict}


def positive_ints(text):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers")
    for i, v in enumerate(values):
        if v < 1 or v > 65536:
            raise argparse.ArgumentTypeError(f"M = {v} is outside 1..65536")
        if v in values[:i]:
            raise argparse.ArgumentTypeError(f"M = {v} is given twice")
    return values


def bounded(lo, hi, kind=int):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number")
        if not math.isfinite(v) or v < lo or v > hi:
            raise argparse.ArgumentTypeError(f"{v} is outside {lo}..{hi}")
        return v
    return parse


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    p.add_argument("--ms", type=positive_ints, default=[16, 128], help="tokens (default 16,128)")
    p.add_argument("--speedup", type=bounded(1.0, 100.0, float), default=2.0,
                   help="the target w4a16 / bf16 speed-up (default 2)")
    p.add_argument("--rounds", type=bounded(1, 1000), default=40, help="rounds (default 40)")
    p.add_argument("--big", type=bounded(1024, 16384), default=8192,
                   help="the square BF16 GEMM that gives the rate ceiling (default 8192)")
    args = p.parse_args()
    try:
        import torch  # after the arguments: --help and their errors need no PyTorch
    except ImportError:
        print("w4a16_ceiling.py: PyTorch is not installed (python3 -c 'import torch' fails)",
              file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("w4a16_ceiling.py: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 0) or 64 << 20
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev).fill_(1)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn, clean, reps=1):
        fn()
        if clean:
            flush.max()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps

    cases = []  # (m, k, n, fn)
    for m in args.ms:
        for _, k, n in SHAPES:
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
            cases.append((m, k, n, lambda x=x, w=w: torch.matmul(x, w.t())))
    b = args.big
    xa = torch.randn(b, b, device=dev, dtype=torch.bfloat16)
    xb = torch.randn(b, b, device=dev, dtype=torch.bfloat16)
    src = torch.empty(1 << 30, dtype=torch.int16, device=dev).fill_(3)
    dst = torch.empty_like(src)
    samples = {i: [] for i in range(len(cases))}
    big_clean, big_burst, copies = [], [], []
    rng = random.Random(4321)
    for _ in range(args.rounds):
        order = list(range(len(cases)))
        rng.shuffle(order)
        for i in order:
            samples[i].append(timed(cases[i][3], clean=True))
        big_clean.append(timed(lambda: torch.matmul(xa, xb), clean=True))
        big_burst.append(timed(lambda: torch.matmul(xa, xb), clean=False, reps=5))
        copies.append(timed(lambda: dst.copy_(src), clean=False))
    big_ms = min(statistics.median(big_clean), statistics.median(big_burst))
    rate = 2.0 * b ** 3 / big_ms / 1e9
    copy_tbps = 2.0 * src.numel() * src.element_size() / statistics.median(copies) / 1e9
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    print(f"# ceilings: BF16 {b}^3 GEMM {rate:.0f} TFLOP/s; copy {copy_tbps:.2f} TB/s")
    print("m,bf16_layer_ms,target_ms,need_tflops,need_tbps,tflops_ceiling,tbps_ceiling,verdict")
    for m in args.ms:
        idx = [i for i, c in enumerate(cases) if c[0] == m]
        layer = sum(statistics.median(samples[i]) for i in idx)
        need = what_it_needs([(m, cases[i][1], cases[i][2]) for i in idx], layer, args.speedup,
                             rate, copy_tbps)
        print(f"{m},{layer:.5f},{need['target_ms']:.5f},{need['need_tflops']:.0f},"
              f"{need['need_tbps']:.2f},{rate:.0f},{copy_tbps:.2f},{need['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
