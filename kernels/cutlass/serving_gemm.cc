// CutlassGemm's serving-recipe constructors (cutlass_gemm.h): int8-rowwise on the INT8
// GEMM, w8a16 / w4a16 on the mixed-input GEMM (serving_gemm_kernels.h).
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/w4a16_decode.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/cutlass/cutlass_gemm_internal.h"
#include "kernels/cutlass/serving_gemm_kernels.h"

namespace gemmprof::kernels {

const char* Int8RowwiseScheduleName(Int8RowwiseSchedule schedule) {
  switch (schedule) {
    case Int8RowwiseSchedule::kTile64:
      return "pingpong 64x128";
    case Int8RowwiseSchedule::kTile128:
      return "pingpong 128x128";
    case Int8RowwiseSchedule::kCooperative256:
      return "cooperative 128x256";
  }
  return "?";
}

const char* WeightOnlyScheduleName(WeightOnlySchedule schedule) {
  switch (schedule) {
    case WeightOnlySchedule::kTile16:
      return "128x16 tokens";
    case WeightOnlySchedule::kTile16StreamK:
      return "128x16 tokens stream-K";
    case WeightOnlySchedule::kTile64:
      return "128x64 tokens";
    case WeightOnlySchedule::kTile64StreamK:
      return "128x64 tokens stream-K";
    case WeightOnlySchedule::kTile128:
      return "128x128 tokens";
    case WeightOnlySchedule::kTile128StreamK:
      return "128x128 tokens stream-K";
    case WeightOnlySchedule::kDecode:
      return "decode 256x16";
    case WeightOnlySchedule::kDecodeCluster:
      return "decode 256x16 cluster";
  }
  return "?";
}

bool IsCutlassSchedule(WeightOnlySchedule schedule) {
  return schedule != WeightOnlySchedule::kDecode && schedule != WeightOnlySchedule::kDecodeCluster;
}

namespace {

// What every serving GEMM needs before an instantiation is tried: CUTLASS in the build, an
// sm_90 device, sizes in range.
absl::Status CheckServing(int64_t m, int64_t n, int64_t k, int sm, const char* what) {
#ifndef GEMMPROF_WITH_CUTLASS
  (void)m;
  (void)n;
  (void)k;
  (void)sm;
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   ": this build has no CUTLASS kernels (CMake did not find CUTLASS: run "
                   "deploy/install_cutlass.sh and rebuild)"));
#else
  if (m < 1 || n < 1 || k < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": size ", m, "x", k, "x", n, " (m, n, k >= 1)"));
  }
  if (sm != 90) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the CUTLASS kernel is built for sm_90a only; this is sm_", sm));
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (m > kMax || n > kMax || k > kMax) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": size ", m, "x", k, "x", n, " has a dimension over 2^31"));
  }
  if (k % 16 != 0 || n % 8 != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the CUTLASS kernel needs K % 16 == 0 and N % 8 == 0; this is ", m,
                     "x", k, "x", n));
  }
  return absl::OkStatus();
#endif
}

}  // namespace

absl::StatusOr<CutlassGemm> CutlassGemm::CreateInt8Rowwise(const RowwiseGemmSpec& spec,
                                                           Int8RowwiseSchedule schedule, int device,
                                                           int sm) {
  if (spec.groups.size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "int8-rowwise: the CUTLASS INT8 GEMM takes one group; this item has ", spec.groups.size()));
  }
  const BlockGemmGroup& g = spec.groups.front();
  RETURN_IF_ERROR(CheckServing(g.m, g.n, g.k, sm, "int8-rowwise"));
#ifdef GEMMPROF_WITH_CUTLASS
  cutlass_gemm::RowwiseProblem p;
  p.m = static_cast<int32_t>(g.m);
  p.n = static_cast<int32_t>(g.n);
  p.k = static_cast<int32_t>(g.k);
  p.a = g.a;
  p.bt = g.bt;
  p.c = g.c;
  p.a_scales = g.a_scales;
  p.bt_scales = g.bt_scales;
  cutlass_gemm::Made made;
  switch (schedule) {
    case Int8RowwiseSchedule::kTile64:
      made = cutlass_gemm::MakeInt8RowwiseTile64(p, device);
      break;
    case Int8RowwiseSchedule::kTile128:
      made = cutlass_gemm::MakeInt8RowwiseTile128(p, device);
      break;
    case Int8RowwiseSchedule::kCooperative256:
      made = cutlass_gemm::MakeInt8RowwiseCooperative256(p, device);
      break;
  }
  RETURN_IF_ERROR(cutlass_gemm::MadeStatus(made, "CUTLASS INT8 GEMM"));
  CutlassGemm gemm;
  gemm.instance_ = std::move(made.instance);
  gemm.description_ =
      absl::StrCat("CUTLASS ", GEMMPROF_CUTLASS_VERSION,
                   " sm90a INT8 GEMM, per-token and per-channel scales in the epilogue (int8 x "
                   "int8; ",
                   gemm.instance_->Config(), ")");
  return gemm;
#else
  (void)schedule;
  (void)device;
  return absl::InternalError("unreachable");
#endif
}

namespace {

// The w8a16 / w4a16 preconditions both ReorderW4 and CreateWeightOnly check.
absl::Status CheckWeightOnly(const WeightOnlyGemmSpec& spec, int sm) {
  const char* what = spec.int4 ? "w4a16" : "w8a16";
  RETURN_IF_ERROR(CheckServing(spec.m, spec.n, spec.k, sm, what));
  const int64_t group = spec.int4 ? spec.group : spec.k;
  if (group != spec.k && (group % 64 != 0 || spec.k % 64 != 0)) {
    return absl::FailedPreconditionError(
        absl::StrCat(what,
                     ": the CUTLASS mixed-input GEMM needs K and the group multiples of its "
                     "64-wide K tile (or one group of K); K = ",
                     spec.k, ", group ", group));
  }
  // The weight must be 16-byte aligned per row for TMA: K % 32 for INT4, % 16 for INT8.
  if (spec.int4 && spec.k % 32 != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": the CUTLASS mixed-input GEMM needs K % 32 == 0 for INT4 rows; K = ", spec.k));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const void>> CutlassGemm::ReorderW4(const WeightOnlyGemmSpec& spec,
                                                                   int device, int sm,
                                                                   cudaStream_t stream) {
  if (!spec.int4) {
    return absl::InvalidArgumentError("w8a16: its INT8 weight is read as it is, not reordered");
  }
  RETURN_IF_ERROR(CheckWeightOnly(spec, sm));
#ifdef GEMMPROF_WITH_CUTLASS
  void* reordered = nullptr;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMalloc(&reordered, static_cast<size_t>(spec.n * spec.k / 2));
  if (e != cudaSuccess) {
    return absl::ResourceExhaustedError(
        absl::StrCat("w4a16: allocating the reordered weight: ", cudaGetErrorName(e)));
  }
  std::shared_ptr<const void> owned(reordered,
                                    [](const void* q) { (void)cudaFree(const_cast<void*>(q)); });
  e = cutlass_gemm::ReorderW4(spec.w, reordered, static_cast<int32_t>(spec.n),
                              static_cast<int32_t>(spec.k), stream);
  if (e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("w4a16: reordering the weight: ", cudaGetErrorName(e)));
  }
  return owned;
#else
  (void)device;
  (void)stream;
  return absl::InternalError("unreachable");
#endif
}

#ifdef GEMMPROF_WITH_CUTLASS
namespace {

// The project's decode kernel behind the instance interface the CUTLASS forms share.
class DecodeInstance final : public cutlass_gemm::Instance {
 public:
  explicit DecodeInstance(W4a16Decode d) : d_(std::move(d)) {}
  cudaError_t Run(cudaStream_t stream) override { return d_.Run(stream); }
  std::string Config() const override { return d_.Config(); }

 private:
  W4a16Decode d_;
};

}  // namespace
#endif

absl::StatusOr<CutlassGemm> CutlassGemm::CreateWeightOnly(const WeightOnlyGemmSpec& spec,
                                                          WeightOnlySchedule schedule, int device,
                                                          int sm, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckWeightOnly(spec, sm));
#ifdef GEMMPROF_WITH_CUTLASS
  if (!IsCutlassSchedule(schedule)) {
    if (!spec.int4) {
      return absl::FailedPreconditionError("w8a16: the decode kernel reads INT4 weights only");
    }
    W4a16DecodeProblem p;
    p.m = spec.m;
    p.n = spec.n;
    p.k = spec.k;
    p.group = spec.group;
    p.a = spec.a;
    p.w = spec.w;
    p.scales = spec.scales;
    p.c = spec.c;
    int sm_count = 0;
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    ASSIGN_OR_RETURN(W4a16Decode d,
                     W4a16Decode::Create(p, device, sm, sm_count, stream,
                                         schedule == WeightOnlySchedule::kDecodeCluster
                                             ? W4a16Decode::Reduce::kCluster
                                             : W4a16Decode::Reduce::kAtomic));
    CutlassGemm gemm;
    gemm.instance_ = std::make_unique<DecodeInstance>(std::move(d));
    gemm.description_ = absl::StrCat("gemmprof sm90 w4a16 decode GEMM (bf16 x int4; ",
                                     gemm.instance_->Config(), ")");
    return gemm;
  }
  if (spec.int4 && spec.w4_reordered == nullptr) {
    return absl::InvalidArgumentError(
        "w4a16: the weight in the kernels' layout is missing (CutlassGemm::ReorderW4)");
  }
  cutlass_gemm::WeightOnlyProblem p;
  p.m = static_cast<int32_t>(spec.m);
  p.n = static_cast<int32_t>(spec.n);
  p.k = static_cast<int32_t>(spec.k);
  p.a = spec.a;
  p.w = spec.int4 ? spec.w4_reordered.get() : spec.w;
  p.scales = spec.scales;
  p.group = static_cast<int32_t>(spec.int4 ? spec.group : spec.k);
  p.c = spec.c;
  // The instantiations by schedule (kWeightOnlySchedules' order), INT4 and INT8.
  using Factory = cutlass_gemm::Made (*)(const cutlass_gemm::WeightOnlyProblem&, int);
  static constexpr Factory kW4[] = {
      cutlass_gemm::MakeW4a16Tile16,  cutlass_gemm::MakeW4a16Tile16StreamK,
      cutlass_gemm::MakeW4a16Tile64,  cutlass_gemm::MakeW4a16Tile64StreamK,
      cutlass_gemm::MakeW4a16Tile128, cutlass_gemm::MakeW4a16Tile128StreamK};
  static constexpr Factory kW8[] = {
      cutlass_gemm::MakeW8a16Tile16,  cutlass_gemm::MakeW8a16Tile16StreamK,
      cutlass_gemm::MakeW8a16Tile64,  cutlass_gemm::MakeW8a16Tile64StreamK,
      cutlass_gemm::MakeW8a16Tile128, cutlass_gemm::MakeW8a16Tile128StreamK};
  // The decode schedules, the last two, are made above.
  static_assert(std::size(kW4) + 2 == std::size(kWeightOnlySchedules) &&
                std::size(kW8) + 2 == std::size(kWeightOnlySchedules));
  const size_t form = static_cast<size_t>(schedule);
  cutlass_gemm::Made made = (spec.int4 ? kW4 : kW8)[form](p, device);
  RETURN_IF_ERROR(cutlass_gemm::MadeStatus(made, "CUTLASS mixed-input GEMM"));
  CutlassGemm gemm;
  gemm.instance_ = std::move(made.instance);
  if (spec.int4) gemm.owned_ = spec.w4_reordered;
  gemm.description_ =
      absl::StrCat("CUTLASS ", GEMMPROF_CUTLASS_VERSION, " sm90a mixed-input GEMM (bf16 x ",
                   spec.int4 ? "int4" : "int8", "; ", gemm.instance_->Config(), ")");
  return gemm;
#else
  (void)schedule;
  (void)device;
  (void)stream;
  return absl::InternalError("unreachable");
#endif
}

}  // namespace gemmprof::kernels
