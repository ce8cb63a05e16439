// gemmprof_stream_state_bench: what a context's second stream costs each kernel. Decode
// GEMMs (ten cuBLASLt calls captured in one graph, bf16 and fp8 tensor-scaled) are timed
// in interleaved rounds on one stream, then --launches N empty kernels run on a second
// stream, and the same graphs are timed again in the same way: the baseline and the
// figure after it come from one process, seconds apart. The state is the context's for
// good, so a count that does not change it (4 on an H100 with driver 580) is seen by
// running again with that count; --launches 0 times both phases on one stream, for the
// drift between them. CudaRunner measures after 32 such launches (docs/measurement.md,
// "One stream or several").
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "core/result.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/quant/quantize.h"
#include "kernels/timing/iteration_timer.h"
#include "measure/round_order.h"

namespace gemmprof::bench {
namespace {

using kernels::CudaGraphExec;
using kernels::DeviceBuffer;

constexpr int kRepeat = 10;           // GEMMs per graph, as PyTorch's decode reference
constexpr int kSamplesPerVisit = 20;  // graph launches per visit
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

struct Shape {
  bool fp8;
  int64_t m, k, n;
};

// One GEMM's operands and its ten-call graph.
struct Case {
  Shape shape;
  DeviceBuffer a, bt, c, a_q, bt_q, scales, scale_inv_a, scale_inv_bt, quant_ws;
  CudaGraphExec graph;
  std::vector<double> rounds[2];  // per phase: the visits' medians (us per GEMM)
};

double MedianOf(const std::vector<double>& v) {
  return core::SampleStats::FromSamples(v).median_ms;
}

absl::Status Build(Case& g, cublasLtHandle_t lt, void* workspace, cudaStream_t st) {
  const Shape& s = g.shape;
  ASSIGN_OR_RETURN(g.a, DeviceBuffer::Create(s.m * s.k * 2));
  ASSIGN_OR_RETURN(g.bt, DeviceBuffer::Create(s.n * s.k * 2));
  ASSIGN_OR_RETURN(g.c, DeviceBuffer::Create(s.m * s.n * 2));
  auto* a = static_cast<__nv_bfloat16*>(g.a.get());
  auto* bt = static_cast<__nv_bfloat16*>(g.bt.get());
  CUDA_RETURN_IF_ERROR(kernels::FillRandomNormalBf16(a, s.m * s.k, 1234, 1, st));
  CUDA_RETURN_IF_ERROR(kernels::FillRandomNormalBf16(bt, s.n * s.k, 1234, 2, st));
  kernels::MatmulSpec spec;
  spec.m = s.m;
  spec.n = s.n;
  spec.k = s.k;
  spec.a = a;
  spec.bt = bt;
  spec.c = g.c.get();
  spec.workspace = workspace;
  spec.workspace_bytes = kWorkspaceBytes;
  if (s.fp8) {
    // E4M3 operands with current (tensor) scales, fast accumulation: fp8-current prequant.
    ASSIGN_OR_RETURN(g.a_q, DeviceBuffer::Create(s.m * s.k));
    ASSIGN_OR_RETURN(g.bt_q, DeviceBuffer::Create(s.n * s.k));
    // amax and scale per operand in one buffer; each scale_inv (what cuBLASLt reads) in
    // an allocation of its own (cuBLASLt refused the split-K plan with the two in one
    // small buffer, 12 bytes apart).
    ASSIGN_OR_RETURN(g.scales, DeviceBuffer::Create(4 * sizeof(float)));
    ASSIGN_OR_RETURN(g.scale_inv_a, DeviceBuffer::Create(sizeof(float)));
    ASSIGN_OR_RETURN(g.scale_inv_bt, DeviceBuffer::Create(sizeof(float)));
    ASSIGN_OR_RETURN(g.quant_ws,
                     DeviceBuffer::Create(kernels::kCurrentScalingWorkspaceFloats * sizeof(float)));
    float* f = static_cast<float*>(g.scales.get());
    float* inv_a = static_cast<float*>(g.scale_inv_a.get());
    float* inv_bt = static_cast<float*>(g.scale_inv_bt.get());
    float* ws = static_cast<float*>(g.quant_ws.get());
    auto* a_q = static_cast<uint8_t*>(g.a_q.get());
    auto* bt_q = static_cast<uint8_t*>(g.bt_q.get());
    CUDA_RETURN_IF_ERROR(kernels::CurrentScaling(a, s.m, s.k, kernels::Fp8Format::kE4M3, a_q,
                                                 nullptr, f, f + 1, inv_a, ws, st));
    CUDA_RETURN_IF_ERROR(kernels::CurrentScaling(bt, s.n, s.k, kernels::Fp8Format::kE4M3, bt_q,
                                                 nullptr, f + 2, f + 3, inv_bt, ws, st));
    spec.a = a_q;
    spec.bt = bt_q;
    spec.a_type = spec.bt_type = CUDA_R_8F_E4M3;
    spec.a_scale_mode = spec.bt_scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    spec.a_scale = inv_a;
    spec.bt_scale = inv_bt;
    spec.fast_accum = true;
  }
  ASSIGN_OR_RETURN(kernels::MatmulPlan plan, kernels::MatmulPlan::Create(lt, spec, 1));
  ASSIGN_OR_RETURN(g.graph, kernels::IterationTimer::Capture(
                                st, [&](cudaStream_t q) { return plan.Enqueue(q); }, kRepeat));
  return kernels::IterationTimer::WarmUp(st, g.graph, 20, kernels::TimerOptions{});
}

// `rounds` rounds over every case (Williams order), each visit one untimed launch and
// kSamplesPerVisit timed ones; appends each visit's median to the case's `phase` series.
absl::Status TimePhase(std::vector<Case>& cases, int phase, int rounds,
                       const kernels::IterationTimer& timer, cudaStream_t st) {
  for (int r = 0; r < rounds; ++r) {
    const std::vector<int> order = measure::RoundOrder(static_cast<int>(cases.size()), r);
    std::vector<kernels::Visit> visits;
    for (int i : order) visits.push_back({&cases[i].graph, kSamplesPerVisit, kRepeat, true});
    std::string notes;
    ASSIGN_OR_RETURN(std::vector<std::vector<double>> samples,
                     timer.TimeVisits(st, visits, kernels::TimerOptions{}, &notes));
    for (size_t v = 0; v < visits.size(); ++v) {
      cases[order[v]].rounds[phase].push_back(MedianOf(samples[v]) * 1e3);
    }
  }
  return absl::OkStatus();
}

absl::Status Run(int launches, int rounds) {
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  cudaDeviceProp p{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, device));
  int driver = 0;
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  std::printf("device: %s, CUDA driver API %d, cuBLASLt %zu\n", p.name, driver,
              cublasLtGetVersion());
  ASSIGN_OR_RETURN(kernels::CudaStream stream, kernels::CudaStream::Create());
  ASSIGN_OR_RETURN(kernels::LtHandle lt, kernels::LtHandle::Create());
  ASSIGN_OR_RETURN(DeviceBuffer workspace, DeviceBuffer::Create(kWorkspaceBytes));
  ASSIGN_OR_RETURN(kernels::IterationTimer timer, kernels::IterationTimer::Create());
  const cudaStream_t st = stream.get();
  std::vector<Case> cases;
  for (const Shape& s : std::vector<Shape>{{true, 16, 14336, 4096},
                                           {false, 16, 14336, 4096},
                                           {true, 128, 8192, 8192},
                                           {false, 128, 8192, 8192},
                                           {true, 16, 8192, 8192},
                                           {false, 16, 8192, 8192},
                                           {true, 64, 4096, 14336},
                                           {false, 64, 4096, 14336}}) {
    cases.push_back(Case{s});
  }
  for (Case& g : cases) RETURN_IF_ERROR(Build(g, lt.get(), workspace.get(), st));
  RETURN_IF_ERROR(TimePhase(cases, 0, rounds, timer, st));
  ASSIGN_OR_RETURN(kernels::CudaStream second, kernels::CudaStream::Create());
  for (int i = 0; i < launches; ++i) {
    CUDA_RETURN_IF_ERROR(kernels::LaunchEmptyKernel(second.get()));
  }
  RETURN_IF_ERROR(second.Synchronize());
  RETURN_IF_ERROR(TimePhase(cases, 1, rounds, timer, st));
  std::printf("%d rounds per phase; %d empty kernels on a second stream between the phases\n",
              rounds, launches);
  std::printf("%-6s %-18s %12s %12s %9s %8s\n", "recipe", "MxKxN", "before us", "after us",
              "after-us", "ratio");
  for (const Case& g : cases) {
    const double before = MedianOf(g.rounds[0]);
    const double after = MedianOf(g.rounds[1]);
    const std::string shape = std::to_string(g.shape.m) + "x" + std::to_string(g.shape.k) + "x" +
                              std::to_string(g.shape.n);
    std::printf("%-6s %-18s %12.2f %12.2f %+9.2f %8.4f\n", g.shape.fp8 ? "fp8" : "bf16",
                shape.c_str(), before, after, after - before, after / before);
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  int launches = 32, rounds = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if ((arg == "--launches" || arg == "--rounds") && has_value) {
      int v = 0;
      const int lo = arg == "--launches" ? 0 : 1;
      if (!absl::SimpleAtoi(argv[++i], &v) || v < lo || v > 100000) {
        std::fprintf(stderr, "%s: '%s' is not a whole number from %d to 100000\n", arg.c_str(),
                     argv[i], lo);
        return 2;
      }
      (arg == "--launches" ? launches : rounds) = v;
    } else {
      std::fprintf(stderr,
                   "usage: gemmprof_stream_state_bench [--launches N (32)] [--rounds R (20)]\n"
                   "Times ten-GEMM decode graphs on one stream, launches N empty kernels on a\n"
                   "second stream, and times them again (the per-kernel cost of a context's\n"
                   "second stream). The state lasts for the process: to try another N, run\n"
                   "again.\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  absl::Status st = Run(launches, rounds);
  if (!st.ok()) {
    std::fprintf(stderr, "gemmprof_stream_state_bench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace gemmprof::bench

int main(int argc, char** argv) { return gemmprof::bench::Main(argc, argv); }
