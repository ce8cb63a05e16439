// gemmprof_quant_bench: bandwidth of the quantization kernels against a device-to-device
// copy of the same tensor, measured in the same run.
//
//   gemmprof_quant_bench [--csv PATH] [--rows 15872] [--cols 4096] [--iters 100]
//                        [--warmup 20] [--set all|rowwise|layer]
//                        [--l2 hot|cold|clean|both|all]
//
// Each case: warm-up launches, then `iters` launches each timed with its own pair of
// cudaEvents; the median is reported. --l2 cold writes a buffer of twice the L2 size
// (cudaMemsetAsync, outside the events) before each timed launch, as the daemon's cold L2
// policy does, so the input comes from device memory, and leaves the L2 full of dirty
// lines that the timed launch writes back; clean does the same write, then reads a second
// buffer of twice the L2 size (Amax over it), so those lines are written back before the
// events and the timed launch starts from a clean L2; hot (the default) leaves in L2 what
// the previous launch left there, which for a tensor smaller than L2 is the whole input.
// both: every case hot, then every case cold; all: hot, cold, then clean; each against
// the copy of its own policy.
// Bytes are the minimal traffic (bytes read + bytes written). A case's "% of copy" is
// against the copy measured last before it: --set all (every kernel at --rows x --cols)
// has one copy first; --set rowwise (fp8-rowwise at the per-token activation shapes
// M = 1024, 4096, 15872 x K = 4096, 14336 and a per-channel weight [14336, 4096];
// --rows/--cols ignored) times a copy of each shape before it. Exit status 0 whether
// targets are met or missed (it is a measurement), 1 on a CUDA or argument error.
// --set layer (bench/gpu/quant_layer.cc): every recipe's quantization of one seed 5B layer
// as the daemon's training step runs it, each tensor and the layer against its bandwidth
// floor (--rows/--cols/--l2/--warmup ignored).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/quant/quant.h"
#include "core/status.h"
#include "kernels/quant/quantize.h"

// Turns a failed CUDA runtime call into an Internal status naming file, line and call.
#define RETURN_IF_CUDA_ERROR(call)                                                        \
  do {                                                                                    \
    const cudaError_t bench_err_ = (call);                                                \
    if (bench_err_ != cudaSuccess) {                                                      \
      return absl::InternalError(absl::StrCat(__FILE__, ":", __LINE__, ": ", #call, ": ", \
                                              cudaGetErrorName(bench_err_), " (",         \
                                              cudaGetErrorString(bench_err_), ")"));      \
    }                                                                                     \
  } while (0)

namespace gemmprof::bench {

absl::Status RunLayerSet(int iters, const std::string& csv_path);  // quant_layer.cc

namespace {

namespace k = kernels;
namespace q = core::quant;

struct Options {
  int64_t rows = 15872;
  int64_t cols = 4096;
  int iters = 100;
  int warmup = 20;
  std::string csv_path;
  std::string set = "all";
  std::string l2 = "hot";  // hot | cold | clean | both | all
};

// One measured case.
struct Row {
  std::string kernel;
  double runtime_ms = 0;
  double bytes = 0;
  double target_pct = 0;   // 0: no target
  bool is_copy = false;    // the baseline of the cases after it
  std::string l2 = "hot";  // the L2 policy it was timed under
  double gbps() const { return bytes / (runtime_ms * 1e6); }
};

// Device buffers of the benchmark; freed on destruction (move-only by being held once).
class Buffers {
 public:
  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    for (void* p : owned_) cudaFree(p);
  }

  absl::Status Alloc(void** p, size_t bytes) {
    RETURN_IF_CUDA_ERROR(cudaMalloc(p, bytes));
    owned_.push_back(*p);
    return absl::OkStatus();
  }

  __nv_bfloat16* x = nullptr;
  void* copy = nullptr;
  uint8_t *out = nullptr, *out_t = nullptr, *scales = nullptr, *scales_t = nullptr;
  float *scale_inv = nullptr, *scale_inv_t = nullptr;
  float *amax = nullptr, *scale = nullptr, *tensor_scale = nullptr;
  float *current = nullptr, *workspace = nullptr;  // amax/scale/scale_inv of the fused launch

 private:
  std::vector<void*> owned_;
};

absl::Status ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(a, ": needs a value"));
    const std::string v = argv[++i];
    if (a == "--csv") {
      o->csv_path = v;
    } else if (a == "--rows") {
      o->rows = std::atoll(v.c_str());
    } else if (a == "--cols") {
      o->cols = std::atoll(v.c_str());
    } else if (a == "--iters") {
      o->iters = std::atoi(v.c_str());
    } else if (a == "--warmup") {
      o->warmup = std::atoi(v.c_str());
    } else if (a == "--set") {
      if (v != "all" && v != "rowwise" && v != "layer") {
        return absl::InvalidArgumentError(absl::StrCat("--set ", v, ": not all, rowwise or layer"));
      }
      o->set = v;
    } else if (a == "--l2") {
      if (v != "hot" && v != "cold" && v != "clean" && v != "both" && v != "all") {
        return absl::InvalidArgumentError(
            absl::StrCat("--l2 ", v, ": not hot, cold, clean, both or all"));
      }
      o->l2 = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", a));
    }
  }
  if (o->rows <= 0 || o->cols <= 0 || o->iters < 50 || o->warmup < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rows ", o->rows, " --cols ", o->cols, " --iters ", o->iters, " --warmup ",
                     o->warmup, ": sizes must be > 0, iters >= 50, warmup >= 1"));
  }
  return absl::OkStatus();
}

// Random normal BF16 (seed 1234), uploaded to b->x; every other buffer allocated.
absl::Status Setup(const Options& o, Buffers* b) {
  const size_t n = static_cast<size_t>(o.rows * o.cols);
  std::vector<uint16_t> host(n);
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& h : host) h = q::FloatToBf16Bits(normal(rng));
  const size_t grid128 = static_cast<size_t>(((o.rows + 127) / 128) * ((o.cols + 127) / 128));
  const size_t scales_1x128 = static_cast<size_t>(
      std::max(o.rows * ((o.cols + 127) / 128), o.cols * ((o.rows + 127) / 128)));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->x), n * 2));
  RETURN_IF_ERROR(b->Alloc(&b->copy, n * 2));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->out), n));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->out_t), n));
  // Room for the row-major byte scales and for cuBLASLt's swizzle (512 bytes per 128x128
  // for MXFP8; NVFP4's 1x16 scales padded to 128-row x 4-block tiles).
  const size_t nvfp4_swizzled = static_cast<size_t>(((o.rows + 127) / 128) * 128) *
                                static_cast<size_t>(((o.cols + 63) / 64) * 4);
  const size_t byte_scales = std::max({n / 16 + 64, grid128 * 512, nvfp4_swizzled});
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->scales), byte_scales));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->scales_t), byte_scales));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->scale_inv),
                           4 * (std::max(scales_1x128, grid128) + 4096)));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->scale_inv_t),
                           4 * (std::max(scales_1x128, grid128) + 4096)));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->amax), 4));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->scale), 4));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->tensor_scale), 4));
  RETURN_IF_ERROR(b->Alloc(reinterpret_cast<void**>(&b->current), 64));
  RETURN_IF_ERROR(
      b->Alloc(reinterpret_cast<void**>(&b->workspace), 4 * k::kCurrentScalingWorkspaceFloats));
  RETURN_IF_CUDA_ERROR(cudaMemcpy(b->x, host.data(), n * 2, cudaMemcpyHostToDevice));
  // Scales the timed kernels read: the tensor's own current-scaling scale and amax.
  RETURN_IF_CUDA_ERROR(k::Amax(b->x, static_cast<int64_t>(n), b->amax, nullptr));
  RETURN_IF_CUDA_ERROR(k::ComputeScale(b->amax, q::Fp8Format::kE4M3, b->scale, nullptr, nullptr));
  RETURN_IF_CUDA_ERROR(cudaDeviceSynchronize());
  return absl::OkStatus();
}

// A buffer whose writing evicts the L2 (twice its size), for --l2 cold; for clean, a
// second one of the same size read after the write.
struct L2Flush {
  void* buffer = nullptr;
  void* clean = nullptr;  // null: leave the written lines dirty
  size_t bytes = 0;
};

// Median runtime in ms of `launch` (which returns the launch status) on `stream`; with a
// flush buffer, it is written before each timed launch, outside the events.
absl::Status TimeMedian(const Options& o, cudaStream_t stream, const L2Flush* flush,
                        const std::function<cudaError_t()>& launch, double* median_ms) {
  for (int i = 0; i < o.warmup; ++i) RETURN_IF_CUDA_ERROR(launch());
  std::vector<cudaEvent_t> events(2 * o.iters);
  for (auto& e : events) RETURN_IF_CUDA_ERROR(cudaEventCreate(&e));
  for (int i = 0; i < o.iters; ++i) {
    if (flush != nullptr) {
      RETURN_IF_CUDA_ERROR(cudaMemsetAsync(flush->buffer, 0, flush->bytes, stream));
      if (flush->clean != nullptr) {
        // A read-only sweep (one float written) evicts the dirty lines before the events.
        RETURN_IF_CUDA_ERROR(k::Amax(static_cast<const __nv_bfloat16*>(flush->clean),
                                     static_cast<int64_t>(flush->bytes / 2),
                                     static_cast<float*>(flush->buffer), stream));
      }
    }
    RETURN_IF_CUDA_ERROR(cudaEventRecord(events[2 * i], stream));
    RETURN_IF_CUDA_ERROR(launch());
    RETURN_IF_CUDA_ERROR(cudaEventRecord(events[2 * i + 1], stream));
  }
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  std::vector<double> ms(o.iters);
  for (int i = 0; i < o.iters; ++i) {
    float t = 0;
    RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]));
    ms[i] = t;
  }
  for (auto& e : events) RETURN_IF_CUDA_ERROR(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  *median_ms = o.iters % 2 ? ms[o.iters / 2] : 0.5 * (ms[o.iters / 2 - 1] + ms[o.iters / 2]);
  return absl::OkStatus();
}

struct Case {
  std::string kernel;
  double bytes;
  double target_pct;
  std::function<cudaError_t()> launch;
  bool is_copy = false;
};

Case CopyCase(const Buffers& b, int64_t r, int64_t c, cudaStream_t s, std::string name) {
  return {std::move(name), 4.0 * static_cast<double>(r * c), 0,
          [=, &b] {
            return cudaMemcpyAsync(b.copy, b.x, static_cast<size_t>(r * c) * 2,
                                   cudaMemcpyDeviceToDevice, s);
          },
          /*is_copy=*/true};
}

// fp8-rowwise shapes of issue 15: per-token activations [M, K] and a per-channel weight
// [N, K] (the same kernel on the weight's rows), each after a copy of its own size so
// the small shapes are not held to the copy bandwidth of a large one.
inline constexpr int64_t kRowwiseMaxRows = 15872, kRowwiseMaxCols = 14336;
std::vector<Case> RowwiseCases(const Buffers& b, cudaStream_t s) {
  struct Shape {
    int64_t r, c;
    const char* what;
  };
  std::vector<Shape> shapes;
  for (int64_t c : {int64_t{4096}, kRowwiseMaxCols}) {
    for (int64_t r : {int64_t{1024}, int64_t{4096}, kRowwiseMaxRows}) {
      shapes.push_back({r, c, "per token"});
    }
  }
  shapes.push_back({14336, 4096, "per channel"});
  std::vector<Case> cases;
  for (const Shape& sh : shapes) {
    const int64_t r = sh.r, c = sh.c;
    const std::string dims = absl::StrCat(r, "x", c);
    cases.push_back(CopyCase(b, r, c, s, absl::StrCat("copy ", dims)));
    // BF16 read, FP8 written, one fp32 scale per row.
    cases.push_back({absl::StrCat("Rowwise E4M3 ", dims, " ", sh.what),
                     3.0 * static_cast<double>(r * c) + 4.0 * static_cast<double>(r), 80, [=, &b] {
                       return k::RowwiseQuantize(b.x, r, c, q::Fp8Format::kE4M3, b.out, b.scale_inv,
                                                 s);
                     }});
  }
  return cases;
}

// Current scaling as three stream operations: amax (with its reset), scale, cast.
cudaError_t CurrentSeparate(const Buffers& b, int64_t r, int64_t c, bool transpose,
                            cudaStream_t s) {
  cudaError_t err = k::Amax(b.x, r * c, b.current, s);
  if (err == cudaSuccess) {
    err = k::ComputeScale(b.current, q::Fp8Format::kE4M3, b.current + 1, b.current + 2, s);
  }
  if (err == cudaSuccess) {
    err = k::CastTranspose(b.x, r, c, b.current + 1, q::Fp8Format::kE4M3, b.out,
                           transpose ? b.out_t : nullptr, nullptr, s);
  }
  return err;
}

std::vector<Case> MakeCases(const Options& o, const Buffers& b, cudaStream_t s) {
  const int64_t r = o.rows, c = o.cols;
  const double n = static_cast<double>(r * c);
  const double g128 = static_cast<double>(((r + 127) / 128) * ((c + 127) / 128));
  const double scales_1x128 = static_cast<double>(r * ((c + 127) / 128) + c * ((r + 127) / 128));
  const double mx_scales = static_cast<double>(r * ((c + 31) / 32) + c * ((r + 31) / 32));
  std::vector<Case> cases = {
      CopyCase(b, r, c, s, "copy (cudaMemcpyAsync D2D)"),
      {"Amax", 2 * n + 4, 80, [=, &b] { return k::Amax(b.x, r * c, b.amax, s); }},
      // fp8-rowwise: a scale per row (per token of an activation, per output channel of a
      // weight [N, K]): BF16 read, FP8 written, one fp32 scale per row.
      {"RowwiseQuantize E4M3 (per row)", 3 * n + 4.0 * r, 80,
       [=, &b] {
         return k::RowwiseQuantize(b.x, r, c, q::Fp8Format::kE4M3, b.out, b.scale_inv, s);
       }},
      // The serving recipes' quantizers (rules I2-I4 of core/quant/integer_quant.h):
      // int8-rowwise's per-token activation, timed per call in autocast and dynamic modes;
      // the weight-only recipes' weights, prepared once outside any timing (each row or
      // group read twice: amax, then the cast), listed for their bandwidth only.
      {"Int8RowwiseQuantize (per token)", 3 * n + 4.0 * r, 80,
       [=, &b] {
         return k::Int8RowwiseQuantize(b.x, r, c, reinterpret_cast<int8_t*>(b.out), b.scale_inv, s);
       }},
      {"W8Quantize (per channel; offline)", 3 * n + 2.0 * r, 0,
       [=, &b] {
         return k::W8Quantize(b.x, r, c, reinterpret_cast<int8_t*>(b.out),
                              reinterpret_cast<__nv_bfloat16*>(b.scales), s);
       }},
      {"CastTranspose E4M3 +T +amax", 4 * n + 8, 80,
       [=, &b] {
         return k::CastTranspose(b.x, r, c, b.scale, q::Fp8Format::kE4M3, b.out, b.out_t, b.amax,
                                 s);
       }},
      // The whole current-scaling step: separate launches (Amax, ComputeScale, cast) and
      // the fused cooperative launch. Both count the same bytes (the input read twice),
      // so their GB/s compare directly; above 100% of copy means the second read was
      // served on chip.
      {"Current E4M3 separate", 5 * n + 8, 0,
       [=, &b] { return CurrentSeparate(b, r, c, /*transpose=*/false, s); }},
      {"Current E4M3 fused", 5 * n + 8, 0,
       [=, &b] {
         return k::CurrentScalingQuantize(b.x, r, c, q::Fp8Format::kE4M3, b.out, nullptr, b.current,
                                          b.current + 1, b.current + 2, b.workspace, s);
       }},
      {"Current E4M3 +T separate", 6 * n + 8, 0,
       [=, &b] { return CurrentSeparate(b, r, c, /*transpose=*/true, s); }},
      {"Current E4M3 +T fused", 6 * n + 8, 0,
       [=, &b] {
         return k::CurrentScalingQuantize(b.x, r, c, q::Fp8Format::kE4M3, b.out, b.out_t, b.current,
                                          b.current + 1, b.current + 2, b.workspace, s);
       }},
      {"BlockQuantize 1x128 +T", 4 * n + 4 * scales_1x128, 80,
       [=, &b] {
         return k::BlockQuantize(b.x, r, c, 1, true, b.out, b.scale_inv, b.out_t, b.scale_inv_t, s);
       }},
      {"BlockQuantize 128x128 +T", 4 * n + 8 * g128, 80,
       [=, &b] {
         return k::BlockQuantize(b.x, r, c, 128, true, b.out, b.scale_inv, b.out_t, b.scale_inv_t,
                                 s);
       }},
      {"BlockQuantize 1x128 +T cuBLASLt lay.", 4 * n + 4 * scales_1x128, 80,
       [=, &b] {
         k::BlockScaleOutputs so;
         so.gemm = b.scale_inv;
         so.gemm_stride = (r + 3) / 4 * 4;
         so.gemm_t = b.scale_inv_t;
         so.gemm_stride_t = (c + 3) / 4 * 4;
         return k::BlockQuantize(b.x, r, c, 1, true, b.out, b.out_t, so, s);
       }},
      {"Mxfp8Quantize +T", 4 * n + mx_scales, 0,
       [=, &b] { return k::Mxfp8Quantize(b.x, r, c, b.out, b.scales, b.out_t, b.scales_t, s); }},
      {"Mxfp8Quantize +T swizzled", 4 * n + mx_scales, 0,
       [=, &b] {
         k::MxScaleOutputs so;
         so.swizzled = b.scales;
         so.swizzled_t = b.scales_t;
         return k::Mxfp8Quantize(b.x, r, c, b.out, b.out_t, so, s);
       }},
      {"Nvfp4Quantize", 2 * n + n / 2 + n / 16 + 8, 0,
       [=, &b] { return k::Nvfp4Quantize(b.x, r, c, b.amax, b.out, b.scales, b.tensor_scale, s); }},
      {"Nvfp4Quantize swizzled", 2 * n + n / 2 + n / 16 + 8, 0,
       [=, &b] {
         k::Nvfp4ScaleOutputs so;
         so.swizzled = b.scales;
         so.tensor_scale = b.tensor_scale;
         return k::Nvfp4Quantize(b.x, r, c, b.amax, b.out, so, s);
       }},
  };
  // Packed INT4 rows take an even length (two per byte).
  if (c % 2 == 0) {
    cases.push_back(
        {"W4Quantize group 128 (offline)", 2.5 * n + 2.0 * r * ((c + 127) / 128), 0, [=, &b] {
           return k::W4Quantize(b.x, r, c, 128, b.out, reinterpret_cast<__nv_bfloat16*>(b.scales),
                                s);
         }});
  }
  return cases;
}

std::string Verdict(const Row& row, double copy_gbps) {
  if (row.target_pct == 0 || row.is_copy) return "-";
  return 100.0 * row.gbps() / copy_gbps >= row.target_pct ? "PASS" : "MISS";
}

// The GB/s of the copy measured last before each row (the row itself for a copy).
std::vector<double> CopyBaselines(const std::vector<Row>& rows) {
  std::vector<double> base;
  double copy_gbps = 0;
  for (const Row& row : rows) {
    if (row.is_copy) copy_gbps = row.gbps();
    base.push_back(copy_gbps);
  }
  return base;
}

absl::Status Report(const Options& o, const std::vector<Row>& rows) {
  const std::vector<double> copy = CopyBaselines(rows);
  if (o.set == "rowwise") {
    std::printf(
        "gemmprof_quant_bench --set rowwise: BF16, median of %d runs after %d warm-up, "
        "L2 %s\n",
        o.iters, o.warmup, o.l2.c_str());
  } else {
    std::printf(
        "gemmprof_quant_bench: %lld x %lld BF16, median of %d runs after %d warm-up, "
        "L2 %s\n",
        static_cast<long long>(o.rows), static_cast<long long>(o.cols), o.iters, o.warmup,
        o.l2.c_str());
  }
  std::printf("%-36s %5s %10s %14s %10s %8s %7s %6s\n", "kernel", "L2", "ms", "bytes", "GB/s",
              "%copy", "target", "result");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const std::string target = row.target_pct > 0 ? absl::StrCat(row.target_pct, "%") : "-";
    std::printf("%-36s %5s %10.4f %14.0f %10.1f %7.1f%% %7s %6s\n", row.kernel.c_str(),
                row.l2.c_str(), row.runtime_ms, row.bytes, row.gbps(), 100.0 * row.gbps() / copy[i],
                target.c_str(), Verdict(row, copy[i]).c_str());
  }
  if (o.csv_path.empty()) return absl::OkStatus();
  FILE* f = std::fopen(o.csv_path.c_str(), "w");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--csv ", o.csv_path, ": cannot open"));
  }
  std::fprintf(f, "kernel,l2,runtime_ms,bytes,gbps,pct_of_copy,target_pct,result\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::fprintf(f, "%s,%s,%.6f,%.0f,%.3f,%.3f,%.0f,%s\n", row.kernel.c_str(), row.l2.c_str(),
                 row.runtime_ms, row.bytes, row.gbps(), 100.0 * row.gbps() / copy[i],
                 row.target_pct, Verdict(row, copy[i]).c_str());
  }
  std::fclose(f);
  return absl::OkStatus();
}

absl::Status Run(int argc, char** argv) {
  Options o;
  RETURN_IF_ERROR(ParseArgs(argc, argv, &o));
  if (o.set == "rowwise") {  // buffers for the largest shape; smaller ones use a prefix
    o.rows = kRowwiseMaxRows;
    o.cols = kRowwiseMaxCols;
  }
  cudaDeviceProp prop{};
  RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  if (o.set == "layer") return RunLayerSet(o.iters, o.csv_path);
  Buffers b;
  RETURN_IF_ERROR(Setup(o, &b));
  cudaStream_t stream = nullptr;
  RETURN_IF_CUDA_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::string> policies;
  if (o.l2 == "both" || o.l2 == "all") {
    policies = {"hot", "cold"};
    if (o.l2 == "all") policies.push_back("clean");
  } else {
    policies = {o.l2};
  }
  L2Flush cold, clean;
  if (o.l2 != "hot") {
    int l2_bytes = 0;
    RETURN_IF_CUDA_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
    cold.bytes = clean.bytes = 2 * static_cast<size_t>(l2_bytes);
    RETURN_IF_ERROR(b.Alloc(&cold.buffer, cold.bytes));
    clean.buffer = cold.buffer;
    if (o.l2 == "clean" || o.l2 == "all") {
      RETURN_IF_ERROR(b.Alloc(&clean.clean, clean.bytes));
      RETURN_IF_CUDA_ERROR(cudaMemset(clean.clean, 0, clean.bytes));
    }
  }
  std::vector<Row> rows;
  const std::vector<Case> cases =
      o.set == "rowwise" ? RowwiseCases(b, stream) : MakeCases(o, b, stream);
  for (const std::string& policy : policies) {
    const L2Flush* flush = policy == "cold" ? &cold : policy == "clean" ? &clean : nullptr;
    for (const Case& c : cases) {
      Row row{c.kernel, 0, c.bytes, c.target_pct, c.is_copy, policy};
      const absl::Status st = TimeMedian(o, stream, flush, c.launch, &row.runtime_ms);
      if (!st.ok()) {
        cudaStreamDestroy(stream);
        return absl::Status(st.code(), absl::StrCat(c.kernel, ": ", st.message()));
      }
      rows.push_back(row);
    }
  }
  RETURN_IF_CUDA_ERROR(cudaStreamDestroy(stream));
  return Report(o, rows);
}

}  // namespace
}  // namespace gemmprof::bench

int main(int argc, char** argv) {
  const absl::Status st = gemmprof::bench::Run(argc, argv);
  if (!st.ok()) {
    std::fprintf(stderr, "gemmprof_quant_bench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return 0;
}
