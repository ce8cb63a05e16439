// gemmprof_w4a16_decode_bench: every w4a16 form (the CUTLASS mixed-input GEMM's four
// schedules and gemmprof's decode kernel) against cuBLAS's BF16 GEMM of the same
// dequantized weight, measured in the same run, at Llama-3.1-8B's fprop shapes (qkv,
// attn_out, mlp_up, mlp_down, lm_head) and one M.
//
//   gemmprof_w4a16_decode_bench [--m 16] [--group 128] [--rounds 6] [--l2 both]
//
// A round times every form once, in a shuffled order: hot, 20 back-to-back launches
// between two events (the weight of a small GEMM then stays in L2); cold, 5 launches each
// after a 2x-L2 memset outside its events (every weight byte from device memory, as a
// decode step reads them; the memset's dirty lines are written back inside the events),
// their median; clean, the same with the 2x-L2 buffer read instead of written (nothing
// to write back, as a decode step finds the L2). Figures are medians over rounds. Every form's
// output is checked against a double host GEMM of the activations and the BF16-rounded
// dequantized weight on sampled columns (relative error printed; above 2% the program
// exits 1). The per-layer line adds the
// four layer GEMMs, each form's best of the CUTLASS schedules and the decode kernel as
// the runner's choice would keep it. Exit 0 when every form ran and verified, 1 on a
// failure, 2 on a bad flag.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/quant/quant.h"
#include "core/status.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/w4a16_decode.h"
#include "kernels/cutlass/cutlass_gemm.h"

namespace gemmprof::bench {
namespace {

namespace k = kernels;
namespace q = core::quant;

struct Options {
  int64_t m = 16;
  int64_t group = 128;
  int rounds = 6;
  std::string l2 = "both";  // hot | cold | clean | both (hot and cold)
  bool help = false;
};

constexpr char kUsage[] =
    "usage: gemmprof_w4a16_decode_bench [--m 16] [--group 128] [--rounds 6] [--l2 both]\n"
    "  --m       tokens, 1 to 8192 (the decode kernel takes up to 16; above, it is not run)\n"
    "  --group   K elements per INT4 scale: 64 or 128\n"
    "  --rounds  rounds of every form, 1 to 100\n"
    "  --l2      hot (back-to-back launches), cold (L2 flushed before each by writing it),\n"
    "            clean (flushed by reading it: no dirty line to write back, as gemmprof\n"
    "            submit --l2 clean), or both (hot and cold)\n";

struct Shape {
  const char* name;
  int64_t k, n;
  bool layer;  // one of the four per-layer GEMMs (lm_head runs once per step)
};
constexpr Shape kShapes[] = {{"qkv", 4096, 6144, true},
                             {"attn_out", 4096, 4096, true},
                             {"mlp_up", 4096, 28672, true},
                             {"mlp_down", 14336, 4096, true},
                             {"lm_head", 4096, 128256, false}};

absl::Status ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o->help = true;
      return absl::OkStatus();
    }
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(a, ": needs a value"));
    const std::string v = argv[++i];
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    const bool number = !v.empty() && *end == '\0';
    if (a == "--m") {
      if (!number || x < 1 || x > 8192) {
        return absl::InvalidArgumentError(absl::StrCat("--m ", v, ": an integer 1 to 8192"));
      }
      o->m = x;
    } else if (a == "--group") {
      if (!number || (x != 64 && x != 128)) {
        return absl::InvalidArgumentError(absl::StrCat("--group ", v, ": 64 or 128"));
      }
      o->group = x;
    } else if (a == "--rounds") {
      if (!number || x < 1 || x > 100) {
        return absl::InvalidArgumentError(absl::StrCat("--rounds ", v, ": an integer 1 to 100"));
      }
      o->rounds = static_cast<int>(x);
    } else if (a == "--l2") {
      if (v != "hot" && v != "cold" && v != "clean" && v != "both") {
        return absl::InvalidArgumentError(absl::StrCat("--l2 ", v, ": hot, cold, clean or both"));
      }
      o->l2 = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", a));
    }
  }
  return absl::OkStatus();
}

// One form's figures over the rounds.
struct Form {
  std::string name;
  std::function<absl::Status(cudaStream_t)> run;
  std::vector<double> hot, cold;
  double rel_error = 0;
  bool decode = false, bf16 = false;
};

// What the flushed figures are called: "clean" under --l2 clean, else "cold".
const char* FlushedName(const Options& o) { return o.l2 == "clean" ? "clean" : "cold"; }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The operands of one shape and every form made for them.
absl::Status RunShape(const Options& o, const Shape& s, int sm, cublasHandle_t blas,
                      const k::DeviceBuffer& flush, std::map<std::string, double>* hot_sum,
                      std::map<std::string, double>* cold_sum, bool* all_ok) {
  const int64_t m = o.m, n = s.n, kk = s.k, groups = kk / o.group;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> a(m * kk), scales(groups * n);
  std::vector<uint8_t> w(n * kk / 2);
  for (uint16_t& x : a) x = q::FloatToBf16Bits(normal(rng));
  for (uint8_t& x : w) x = static_cast<uint8_t>(rng());
  for (uint16_t& x : scales) x = q::FloatToBf16Bits(0.01f * (1.0f + (rng() % 100) / 100.0f));
  // The dequantized weight rounded to BF16: cuBLAS's operand, and the reference's (so the
  // forms that round q * s to BF16 as CUTLASS's do read lower errors here than the decode
  // kernel, which does not; against the exact product it is the other way round,
  // gpu_cuda_serving_test).
  std::vector<uint16_t> wb(n * kk);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < kk; ++c) {
      const uint8_t byte = w[r * (kk / 2) + c / 2];
      const int nib = (c % 2 == 0 ? byte : byte >> 4) & 0xF;
      wb[r * kk + c] = q::FloatToBf16Bits((nib >= 8 ? nib - 16 : nib) *
                                          q::Bf16BitsToFloat(scales[(c / o.group) * n + r]));
    }
  }
  ASSIGN_OR_RETURN(k::DeviceBuffer da, k::DeviceBuffer::Create(a.size() * 2));
  ASSIGN_OR_RETURN(k::DeviceBuffer dw, k::DeviceBuffer::Create(w.size()));
  ASSIGN_OR_RETURN(k::DeviceBuffer ds, k::DeviceBuffer::Create(scales.size() * 2));
  ASSIGN_OR_RETURN(k::DeviceBuffer dwb, k::DeviceBuffer::Create(wb.size() * 2));
  ASSIGN_OR_RETURN(k::DeviceBuffer dc, k::DeviceBuffer::Create(m * n * 2));
  CUDA_RETURN_IF_ERROR(cudaMemcpy(da.get(), a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_RETURN_IF_ERROR(cudaMemcpy(dw.get(), w.data(), w.size(), cudaMemcpyHostToDevice));
  CUDA_RETURN_IF_ERROR(
      cudaMemcpy(ds.get(), scales.data(), scales.size() * 2, cudaMemcpyHostToDevice));
  CUDA_RETURN_IF_ERROR(cudaMemcpy(dwb.get(), wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));

  k::WeightOnlyGemmSpec spec;
  spec.int4 = true;
  spec.m = m;
  spec.n = n;
  spec.k = kk;
  spec.a = da.as<__nv_bfloat16>();
  spec.w = dw.get();
  spec.scales = ds.as<__nv_bfloat16>();
  spec.group = o.group;
  spec.c = dc.as<__nv_bfloat16>();
  ASSIGN_OR_RETURN(spec.w4_reordered, k::CutlassGemm::ReorderW4(spec, 0, sm, nullptr));
  std::vector<k::CutlassGemm> gemms;
  std::vector<Form> forms;
  for (k::WeightOnlySchedule f : k::kWeightOnlySchedules) {
    absl::StatusOr<k::CutlassGemm> g = k::CutlassGemm::CreateWeightOnly(spec, f, 0, sm);
    if (absl::IsFailedPrecondition(g.status())) {
      std::printf("%-9s %s: not run: %s\n", s.name, k::WeightOnlyScheduleName(f),
                  std::string(g.status().message()).c_str());
      continue;
    }
    RETURN_IF_ERROR(g.status());
    gemms.push_back(*std::move(g));
    Form form;
    form.name = k::IsCutlassSchedule(f) ? absl::StrCat("CUTLASS ", k::WeightOnlyScheduleName(f))
                                        : absl::StrCat("gemmprof ", k::WeightOnlyScheduleName(f));
    form.decode = !k::IsCutlassSchedule(f);
    forms.push_back(std::move(form));
  }
  for (size_t i = 0; i < gemms.size(); ++i) {
    const k::CutlassGemm* g = &gemms[i];
    forms[i].run = [g](cudaStream_t st) { return g->Enqueue(st); };
  }
  {
    Form bf16;
    bf16.name = "cuBLAS bf16";
    bf16.bf16 = true;
    const float alpha = 1.0f, beta = 0.0f;
    bf16.run = [&, alpha, beta](cudaStream_t) -> absl::Status {
      const cublasStatus_t st =
          cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                       static_cast<int>(kk), &alpha, dwb.get(), CUDA_R_16BF, static_cast<int>(kk),
                       da.get(), CUDA_R_16BF, static_cast<int>(kk), &beta, dc.get(), CUDA_R_16BF,
                       static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      if (st != CUBLAS_STATUS_SUCCESS) {
        return absl::InternalError(absl::StrCat("cublasGemmEx: status ", static_cast<int>(st)));
      }
      return absl::OkStatus();
    };
    forms.push_back(std::move(bf16));
  }

  // Verification: every form, on 64 columns out of each 1,024, and the first 16 rows and
  // the last.
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < std::min<int64_t>(m, 16); ++r) rows.push_back(r);
  if (m > 16) rows.push_back(m - 1);
  for (Form& f : forms) {
    CUDA_RETURN_IF_ERROR(cudaMemset(dc.get(), 0xFF, m * n * 2));  // NaN until written
    RETURN_IF_ERROR(f.run(nullptr));
    CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
    std::vector<uint16_t> c(m * n);
    CUDA_RETURN_IF_ERROR(cudaMemcpy(c.data(), dc.get(), c.size() * 2, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int64_t col = 0; col < n; col += (col % 64 == 63 ? 961 : 1)) {
      for (int64_t r : rows) {
        double ref = 0;
        for (int64_t x = 0; x < kk; ++x) {
          ref += static_cast<double>(q::Bf16BitsToFloat(a[r * kk + x])) *
                 q::Bf16BitsToFloat(wb[col * kk + x]);
        }
        const double got = q::Bf16BitsToFloat(c[r * n + col]);
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
    }
    f.rel_error = std::sqrt(num / den);
    if (!(f.rel_error < 2e-2)) *all_ok = false;  // NaN fails too
  }

  cudaEvent_t e0, e1;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&e0));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&e1));
  const auto elapsed = [&]() -> absl::StatusOr<double> {
    CUDA_RETURN_IF_ERROR(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, e0, e1));
    return static_cast<double>(ms);
  };
  std::vector<size_t> order(forms.size());
  std::iota(order.begin(), order.end(), 0);
  for (int round = 0; round < o.rounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      Form& f = forms[i];
      if (o.l2 == "hot" || o.l2 == "both") {
        RETURN_IF_ERROR(f.run(nullptr));
        CUDA_RETURN_IF_ERROR(cudaEventRecord(e0));
        for (int l = 0; l < 20; ++l) RETURN_IF_ERROR(f.run(nullptr));
        CUDA_RETURN_IF_ERROR(cudaEventRecord(e1));
        ASSIGN_OR_RETURN(const double ms, elapsed());
        f.hot.push_back(ms / 20);
      }
      if (o.l2 != "hot") {  // cold or clean
        std::vector<double> one;
        for (int l = 0; l < 5; ++l) {
          if (o.l2 == "clean") {
            CUDA_RETURN_IF_ERROR(k::ReadThroughL2(flush.get(), flush.bytes(), nullptr));
          } else {
            CUDA_RETURN_IF_ERROR(cudaMemsetAsync(flush.get(), l, flush.bytes()));
          }
          CUDA_RETURN_IF_ERROR(cudaEventRecord(e0));
          RETURN_IF_ERROR(f.run(nullptr));
          CUDA_RETURN_IF_ERROR(cudaEventRecord(e1));
          ASSIGN_OR_RETURN(const double ms, elapsed());
          one.push_back(ms);
        }
        f.cold.push_back(Median(one));
      }
    }
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);

  const double bf16_hot = Median(forms.back().hot), bf16_cold = Median(forms.back().cold);
  const double weight_bytes = static_cast<double>(n * kk / 2 + groups * n * 2);
  double best_cutlass_hot = 0, best_cutlass_cold = 0, decode_hot = 0, decode_cold = 0;
  for (const Form& f : forms) {
    const double h = Median(f.hot), c = Median(f.cold);
    std::printf("%-9s %5lldx%5lldx%6lld %-32s rel %.2e", s.name, static_cast<long long>(m),
                static_cast<long long>(kk), static_cast<long long>(n), f.name.c_str(), f.rel_error);
    if (h > 0) std::printf("  hot %.4f ms (%.2fx bf16)", h, bf16_hot / h);
    if (c > 0) {
      std::printf("  %s %.4f ms (%.2fx bf16", FlushedName(o), c, bf16_cold / c);
      if (!f.bf16) std::printf(", %.2f TB/s of int4 weight", weight_bytes / c / 1e9);
      std::printf(")");
    }
    std::printf("\n");
    if (f.bf16) continue;
    if (f.decode) {  // the better of the decode kernel's reductions, as the runner keeps it
      if (decode_hot == 0 || h < decode_hot) decode_hot = h;
      if (decode_cold == 0 || c < decode_cold) decode_cold = c;
    } else {
      if (best_cutlass_hot == 0 || h < best_cutlass_hot) best_cutlass_hot = h;
      if (best_cutlass_cold == 0 || c < best_cutlass_cold) best_cutlass_cold = c;
    }
  }
  if (s.layer) {
    const auto best = [](double x, double y) { return y > 0 && y < x ? y : x; };
    (*hot_sum)["cuBLAS bf16"] += bf16_hot;
    (*cold_sum)["cuBLAS bf16"] += bf16_cold;
    (*hot_sum)["best CUTLASS"] += best_cutlass_hot;
    (*cold_sum)["best CUTLASS"] += best_cutlass_cold;
    (*hot_sum)["best of all"] += best(best_cutlass_hot, decode_hot);
    (*cold_sum)["best of all"] += best(best_cutlass_cold, decode_cold);
  }
  return absl::OkStatus();
}

absl::Status Run(const Options& o, bool* all_ok) {
  int device_sm = 0, major = 0, minor = 0, l2_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  device_sm = major * 10 + minor;
  cudaDeviceProp prop{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "gemmprof_w4a16_decode_bench: %s (sm_%d), M = %lld, group %lld, %d rounds, L2 %s; "
      "ms per GEMM, medians over rounds\n",
      prop.name, device_sm, static_cast<long long>(o.m), static_cast<long long>(o.group), o.rounds,
      o.l2.c_str());
  cublasHandle_t blas = nullptr;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError("cublasCreate failed");
  }
  ASSIGN_OR_RETURN(k::DeviceBuffer flush,
                   k::DeviceBuffer::Create(2 * static_cast<size_t>(l2_bytes)));
  std::map<std::string, double> hot_sum, cold_sum;
  absl::Status status;
  for (const Shape& s : kShapes) {
    status = RunShape(o, s, device_sm, blas, flush, &hot_sum, &cold_sum, all_ok);
    if (!status.ok()) break;
  }
  cublasDestroy(blas);
  RETURN_IF_ERROR(status);
  for (const char* what : {"cuBLAS bf16", "best CUTLASS", "best of all"}) {
    std::printf("layer (qkv + attn_out + mlp_up + mlp_down) %-13s", what);
    if (hot_sum[what] > 0) {
      std::printf("  hot %.4f ms (%.2fx bf16)", hot_sum[what],
                  hot_sum["cuBLAS bf16"] / hot_sum[what]);
    }
    if (cold_sum[what] > 0) {
      std::printf("  %s %.4f ms (%.2fx bf16)", FlushedName(o), cold_sum[what],
                  cold_sum["cuBLAS bf16"] / cold_sum[what]);
    }
    std::printf("\n");
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace gemmprof::bench

int main(int argc, char** argv) {
  gemmprof::bench::Options o;
  if (absl::Status s = gemmprof::bench::ParseArgs(argc, argv, &o); !s.ok()) {
    std::fprintf(stderr, "gemmprof_w4a16_decode_bench: %s\n%s", std::string(s.message()).c_str(),
                 gemmprof::bench::kUsage);
    return 2;
  }
  if (o.help) {
    std::fputs(gemmprof::bench::kUsage, stdout);
    return 0;
  }
  bool all_ok = true;
  if (absl::Status s = gemmprof::bench::Run(o, &all_ok); !s.ok()) {
    std::fprintf(stderr, "gemmprof_w4a16_decode_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (!all_ok) {
    std::fprintf(stderr, "gemmprof_w4a16_decode_bench: a form's relative error is above 2%%\n");
    return 1;
  }
  return 0;
}
