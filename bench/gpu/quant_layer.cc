// gemmprof_quant_bench --set layer: every recipe's quantization of one seed 5B layer
// (hidden 4096, intermediate 16384, M = 31 x 512 = 15872 tokens) as the daemon's training
// step runs it, through the runner's own OperandQuantizer, against its bandwidth floor.
//
// Per layer a training step quantizes, for each of QKV [12288, 4096], proj [4096, 4096],
// fc1 [16384, 4096] and fc2 [4096, 16384]: X [M, K] and W [N, K] in fprop and dY [M, N] in
// dgrad, each with its transposed copy (fp8-current, fp8-delayed, fp8-block, MXFP8; NVFP4
// has no transposed output here); fp8-rowwise quantizes both operands of each of the 12
// GEMMs again from BF16, without transposes. The floor of a quantization is the bytes it
// must move (core/quant/scale_bytes.h's QuantizationFloorBytes, which the report's floor
// sums too: the BF16 input once, twice for the recipes that need the amax before the cast
// (fp8-current, NVFP4), plus each quantized copy with its scales;
// the "w/o scales" column leaves the scales out, as the floor did before) at the copy
// bandwidth measured in the same run (a device-to-device copy of X). Each figure is the
// median over graph launches of 10 back-to-back quantizations of one tensor, per
// quantization; the layer's figure is their sum. Forms this commit replaced are timed
// beside it (their names say "before") so the change is measured in one run, and
// fp8-block's row-major form, what an item whose GEMM runs on CUTLASS quantizes with.
// The input is random normal BF16: the kernels are partly ALU-bound, and on a
// power-capped GPU constant data ran them up to 7% faster than random data.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/quant/quant.h"
#include "core/quant/scale_bytes.h"
#include "core/status.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/quant/quantize.h"

namespace gemmprof::bench {

using core::Recipe;
using kernels::OperandConfig;
using kernels::OperandQuantizer;

namespace {

constexpr int64_t kTokens = 15872, kHidden = 4096, kInter = 16384;
constexpr int kPerGraph = 10;

struct Tensor {
  std::string name;
  int64_t rows, cols;
  bool weight;
};

// What the step quantizes per layer with transposed copies (fprop X, W; dgrad dY).
std::vector<Tensor> StepTensors() {
  struct Linear {
    const char* name;
    int64_t n, k;
  };
  const Linear linears[] = {{"qkv", 3 * kHidden, kHidden},
                            {"proj", kHidden, kHidden},
                            {"fc1", kInter, kHidden},
                            {"fc2", kHidden, kInter}};
  std::vector<Tensor> out;
  for (const Linear& l : linears) {
    out.push_back({absl::StrCat(l.name, " X"), kTokens, l.k, false});
    out.push_back({absl::StrCat(l.name, " W"), l.n, l.k, true});
    out.push_back({absl::StrCat(l.name, " dY"), kTokens, l.n, false});
  }
  return out;
}

// fp8-rowwise: both operands of every GEMM, [rows, K] with K the GEMM's contraction.
std::vector<Tensor> RowwiseTensors() {
  std::vector<Tensor> out;
  for (const Tensor& t : StepTensors()) {
    if (t.name.find(" X") != std::string::npos) {
      const int64_t k = t.cols;
      const std::string l = t.name.substr(0, t.name.find(' '));
      const int64_t n = l == "qkv" ? 3 * kHidden : l == "fc1" ? kInter : kHidden;
      out.push_back({l + " fprop X", kTokens, k, false});
      out.push_back({l + " fprop W", n, k, true});
      out.push_back({l + " dgrad dY", kTokens, n, false});
      out.push_back({l + " dgrad W^T", k, n, true});
      out.push_back({l + " wgrad X^T", k, kTokens, false});
      out.push_back({l + " wgrad dY^T", n, kTokens, false});
    }
  }
  return out;
}

struct Form {
  std::string name;
  Recipe recipe;
  bool before = false;  // a form this commit replaced
  OperandQuantizer::BlockScaleForm block_form = OperandQuantizer::BlockScaleForm::kCublasLtDirect;
};

// Median ms per launch of `launch`, captured kPerGraph times in one graph.
absl::StatusOr<double> TimeGraph(cudaStream_t s, int iters,
                                 const std::function<absl::Status(cudaStream_t)>& launch) {
  cudaGraph_t graph = nullptr;
  CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  absl::Status st;
  for (int i = 0; i < kPerGraph && st.ok(); ++i) st = launch(s);
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  RETURN_IF_ERROR(st);
  CUDA_RETURN_IF_ERROR(end);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_RETURN_IF_ERROR(inst);
  std::vector<float> ms(iters);
  cudaEvent_t a = nullptr, b = nullptr;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&a));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, s));
  for (int i = 0; i < iters; ++i) {
    CUDA_RETURN_IF_ERROR(cudaEventRecord(a, s));
    CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, s));
    CUDA_RETURN_IF_ERROR(cudaEventRecord(b, s));
    CUDA_RETURN_IF_ERROR(cudaEventSynchronize(b));
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms[i], a, b));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(exec);
  std::sort(ms.begin(), ms.end());
  return ms[iters / 2] / kPerGraph;
}

struct Buffers {
  kernels::DevicePool pool;
  __nv_bfloat16* x = nullptr;  // the largest tensor; smaller ones use a prefix
  // The pre-change delayed step's own state (ScaleFromHistory, cast, roll).
  float* scalars = nullptr;  // scale, scale_inv, amax, history
  uint8_t *out = nullptr, *out_t = nullptr;
};

constexpr int32_t kHistory = 1024;

absl::StatusOr<double> TimeForm(Buffers& b, cudaStream_t s, const Form& f, const Tensor& t,
                                int iters, bool transposes) {
  if (f.recipe == Recipe::kFp8Delayed && f.before) {
    float* scale = b.scalars;
    float* hist = b.scalars + 48;
    return TimeGraph(s, iters, [&](cudaStream_t q) -> absl::Status {
      CUDA_RETURN_IF_ERROR(kernels::ScaleFromHistory(hist, kHistory, core::AmaxAlgo::kMax,
                                                     core::quant::Fp8Format::kE4M3, scale,
                                                     scale + 16, q));
      CUDA_RETURN_IF_ERROR(kernels::CastTranspose(b.x, t.rows, t.cols, scale,
                                                  core::quant::Fp8Format::kE4M3, b.out,
                                                  transposes ? b.out_t : nullptr, scale + 32, q));
      CUDA_RETURN_IF_ERROR(kernels::RollAmaxHistory(hist, kHistory, scale + 32, q));
      return absl::OkStatus();
    });
  }
  if (f.recipe == Recipe::kMxfp8 && f.before) {
    // Row-major scales, then the swizzle launch (what the operand ran before).
    const int64_t sc = (t.cols + 31) / 32, sc_t = (t.rows + 31) / 32;
    ASSIGN_OR_RETURN(void* raw, b.pool.Get("before.mx", t.rows * sc + t.cols * sc_t));
    ASSIGN_OR_RETURN(void* sw, b.pool.Get("before.mx_sw", kernels::SwizzledScaleBytes(t.rows, sc)));
    auto* r = static_cast<uint8_t*>(raw);
    return TimeGraph(s, iters, [&](cudaStream_t q) -> absl::Status {
      CUDA_RETURN_IF_ERROR(
          kernels::Mxfp8Quantize(b.x, t.rows, t.cols, b.out, r, b.out_t, r + t.rows * sc, q));
      CUDA_RETURN_IF_ERROR(
          kernels::SwizzleBlockScales(r, t.rows, sc, static_cast<uint8_t*>(sw), q));
      return absl::OkStatus();
    });
  }
  if (f.recipe == Recipe::kNvfp4 && f.before) {
    // Row-major scales, then the swizzle launch (what the operand ran before).
    const int64_t sc = (t.cols + 15) / 16;
    ASSIGN_OR_RETURN(void* raw, b.pool.Get("before.nv", t.rows * sc));
    ASSIGN_OR_RETURN(void* sw, b.pool.Get("before.nv_sw", kernels::SwizzledScaleBytes(t.rows, sc)));
    float* amax = b.scalars;
    float* tensor_scale = b.scalars + 16;
    return TimeGraph(s, iters, [&](cudaStream_t q) -> absl::Status {
      CUDA_RETURN_IF_ERROR(kernels::Amax(b.x, t.rows * t.cols, amax, q));
      CUDA_RETURN_IF_ERROR(kernels::Nvfp4Quantize(b.x, t.rows, t.cols, amax, b.out,
                                                  static_cast<uint8_t*>(raw), tensor_scale, q));
      CUDA_RETURN_IF_ERROR(kernels::SwizzleBlockScales(static_cast<uint8_t*>(raw), t.rows, sc,
                                                       static_cast<uint8_t*>(sw), q));
      return absl::OkStatus();
    });
  }
  OperandConfig c;
  c.slot = "layer";
  c.rows = t.rows;
  c.cols = t.cols;
  c.recipe = f.recipe;
  c.weight = t.weight;
  c.amax_history_len = kHistory;
  b.pool.BeginUse();
  ASSIGN_OR_RETURN(OperandQuantizer q, OperandQuantizer::Create(b.pool, c, b.x, transposes));
  if (f.recipe == Recipe::kFp8Block) q.set_block_scale_form(f.block_form);
  RETURN_IF_ERROR(q.SeedHistory(s));
  return TimeGraph(s, iters, [&](cudaStream_t q_s) { return q.Enqueue(q_s, transposes); });
}

}  // namespace

absl::Status RunLayerSet(int iters, const std::string& csv_path) {
  Buffers b;
  const int64_t max_n = kTokens * kInter;
  ASSIGN_OR_RETURN(void* x, b.pool.Get("x", max_n * 2));
  b.x = static_cast<__nv_bfloat16*>(x);
  ASSIGN_OR_RETURN(void* out, b.pool.Get("before.out", max_n));
  ASSIGN_OR_RETURN(void* out_t, b.pool.Get("before.out_t", max_n));
  ASSIGN_OR_RETURN(void* scalars, b.pool.Get("before.scalars", (48 + kHistory) * 4));
  b.out = static_cast<uint8_t*>(out);
  b.out_t = static_cast<uint8_t*>(out_t);
  b.scalars = static_cast<float*>(scalars);
  cudaStream_t s = nullptr;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Random normal BF16 (seed 1234): 16 Mi values uploaded once, repeated over the buffer.
  {
    constexpr int64_t kChunk = int64_t{1} << 24;
    std::vector<uint16_t> host(kChunk);
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& h : host) h = core::quant::FloatToBf16Bits(normal(rng));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(b.x, host.data(), kChunk * 2, cudaMemcpyHostToDevice));
    for (int64_t at = kChunk; at < max_n; at += kChunk) {
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.x + at, b.x, std::min(kChunk, max_n - at) * 2,
                                           cudaMemcpyDeviceToDevice, s));
    }
  }
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b.scalars, 0, (48 + kHistory) * 4, s));
  // The copy bandwidth: X of the QKV GEMM copied device to device, read + written bytes.
  const int64_t copy_n = kTokens * kHidden;
  ASSIGN_OR_RETURN(void* dst, b.pool.Get("copy", copy_n * 2));
  ASSIGN_OR_RETURN(
      const double copy_ms, TimeGraph(s, iters, [&](cudaStream_t q) -> absl::Status {
        CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, b.x, copy_n * 2, cudaMemcpyDeviceToDevice, q));
        return absl::OkStatus();
      }));
  const double copy_bps = 4.0 * copy_n / (copy_ms * 1e-3);
  b.pool.Release("copy");

  const std::vector<Form> forms = {
      {"fp8-current", Recipe::kFp8Current},
      {"fp8-delayed (before: 3 launches)", Recipe::kFp8Delayed, true},
      {"fp8-delayed", Recipe::kFp8Delayed},
      {"fp8-block (before: + layout launch)", Recipe::kFp8Block, true,
       OperandQuantizer::BlockScaleForm::kConverted},
      {"fp8-block", Recipe::kFp8Block},
      {"fp8-block (CUTLASS items: row-major)", Recipe::kFp8Block, false,
       OperandQuantizer::BlockScaleForm::kRowMajor},
      {"fp8-rowwise", Recipe::kFp8Rowwise},
      {"mxfp8 (before: + swizzle launch)", Recipe::kMxfp8, true},
      {"mxfp8", Recipe::kMxfp8},
      {"nvfp4 (before: + swizzle launch)", Recipe::kNvfp4, true},
      {"nvfp4", Recipe::kNvfp4},
  };
  std::printf(
      "gemmprof_quant_bench --set layer: seed 5B layer (M = %lld), median of %d graph "
      "launches x %d quantizations; copy %.1f GB/s (floor = bytes / copy)\n",
      static_cast<long long>(kTokens), iters, kPerGraph, copy_bps / 1e9);
  std::printf("%-36s %-14s %16s %10s %10s %10s %8s %10s\n", "form", "tensor", "shape", "ms",
              "floor ms", "GB/s", "x floor", "w/o scales");
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && csv == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--csv ", csv_path, ": cannot open"));
  }
  if (csv) std::fprintf(csv, "form,tensor,rows,cols,ms,floor_ms,gbps,ratio,ratio_without_scales\n");
  std::vector<std::string> summary;
  for (const Form& f : forms) {
    const bool rowwise = f.recipe == Recipe::kFp8Rowwise;
    const bool transposes = !rowwise && f.recipe != Recipe::kNvfp4;
    double sum_ms = 0, sum_floor = 0, sum_floor_data = 0;
    for (const Tensor& t : rowwise ? RowwiseTensors() : StepTensors()) {
      const absl::StatusOr<double> timed = TimeForm(b, s, f, t, iters, transposes);
      if (!timed.ok()) {
        return absl::Status(timed.status().code(),
                            absl::StrCat(f.name, " ", t.name, ": ", timed.status().message()));
      }
      const double ms = *timed;
      const core::quant::QuantizationBytes floor =
          core::quant::QuantizationFloorBytes(f.recipe, t.rows, t.cols, t.weight, transposes);
      const double data_bytes = floor.data, bytes = floor.data + floor.scales;
      const double floor_ms = 1e3 * bytes / copy_bps;
      const double data_floor_ms = 1e3 * data_bytes / copy_bps;
      sum_ms += ms;
      sum_floor += floor_ms;
      sum_floor_data += data_floor_ms;
      const std::string shape = absl::StrCat(t.rows, "x", t.cols);
      std::printf("%-36s %-14s %16s %10.4f %10.4f %10.1f %8.3f %10.3f\n", f.name.c_str(),
                  t.name.c_str(), shape.c_str(), ms, floor_ms, bytes / (ms * 1e6), ms / floor_ms,
                  ms / data_floor_ms);
      if (csv)
        std::fprintf(csv, "%s,%s,%lld,%lld,%.6f,%.6f,%.3f,%.4f,%.4f\n", f.name.c_str(),
                     t.name.c_str(), static_cast<long long>(t.rows), static_cast<long long>(t.cols),
                     ms, floor_ms, bytes / (ms * 1e6), ms / floor_ms, ms / data_floor_ms);
    }
    summary.push_back(absl::StrCat(
        f.name, ": ", absl::SixDigits(sum_ms), " ms per layer, floor ", absl::SixDigits(sum_floor),
        " ms, ", absl::SixDigits(sum_ms / sum_floor), "x floor (",
        absl::SixDigits(sum_ms / sum_floor_data), "x without the scales)"));
  }
  std::printf("\nper layer:\n");
  for (const std::string& line : summary) std::printf("  %s\n", line.c_str());
  if (csv) std::fclose(csv);
  CUDA_RETURN_IF_ERROR(cudaStreamDestroy(s));
  return absl::OkStatus();
}

}  // namespace gemmprof::bench
