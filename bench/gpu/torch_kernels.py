"""Which CUDA kernels PyTorch runs for the decode GEMMs of the verdicts bench
(torch.matmul in BF16, torch._scaled_mm in E4M3 with per-tensor scales, fast accumulation),
by torch.profiler: the kernel names tell cuBLASLt's tile and split-K choice."""
import torch
from torch.profiler import ProfilerActivity, profile


def kernels(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})


def main():
    for m, k, n in [(16, 14336, 4096), (64, 14336, 4096), (128, 14336, 4096)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        qa, qb = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda", dtype=torch.float32)
        print(f"{m}x{k}x{n} bf16 matmul:", kernels(lambda: a @ b.t()))
        print(f"{m}x{k}x{n} fp8 _scaled_mm:", kernels(
            lambda: torch._scaled_mm(qa, qb.t(), scale_a=one, scale_b=one,
                                     out_dtype=torch.bfloat16, use_fast_accum=True)))


if __name__ == "__main__":
    main()
