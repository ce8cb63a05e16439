#include "kernels/cutlass/cutlass_gemm.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cutlass/block_gemm_kernels.h"
#include "kernels/cutlass/cutlass_gemm_internal.h"

namespace gemmprof::kernels {
namespace {

using core::quant::Fp8Format;

const char* FormatName(Fp8Format f) { return f == Fp8Format::kE4M3 ? "e4m3" : "e5m2"; }

// `what`: "block-scaled", "row-wise".
absl::Status CheckSizes(const std::vector<BlockGemmGroup>& groups, const char* what) {
  if (groups.empty()) return absl::InvalidArgumentError("grouped GEMM: no groups");
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  for (size_t i = 0; i < groups.size(); ++i) {
    const BlockGemmGroup& g = groups[i];
    if (g.m < 0 || g.n < 1 || g.k < 1) {
      return absl::InvalidArgumentError(absl::StrCat("grouped GEMM: group ", i, " has size ", g.m,
                                                     "x", g.k, "x", g.n, " (m >= 0, n, k >= 1)"));
    }
    if (g.m > kMax || g.n > kMax || g.k > kMax) {
      return absl::FailedPreconditionError(absl::StrCat("CUTLASS ", what, " GEMM: group ", i, " (",
                                                        g.m, "x", g.k, "x", g.n,
                                                        ") has a size over 2^31"));
    }
    // 16-byte accesses: FP8 rows of A and B^T, BF16 rows of C.
    if (g.k % 16 != 0 || g.n % 8 != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("CUTLASS ", what, " GEMM needs K % 16 == 0 and N % 8 == 0; group ", i,
                       " is ", g.m, "x", g.k, "x", g.n));
    }
  }
  return absl::OkStatus();
}

// The batched forms read group g at a fixed stride from group 0: every group the same
// size, its operands, output and scales right after the previous group's (a_scale_floats
// and bt_scale_floats on).
absl::Status CheckBatch(const std::vector<BlockGemmGroup>& groups, int64_t a_scale_floats,
                        int64_t bt_scale_floats, const char* what) {
  const BlockGemmGroup& f = groups.front();
  for (size_t i = 1; i < groups.size(); ++i) {
    const BlockGemmGroup& g = groups[i];
    const int64_t gi = static_cast<int64_t>(i);
    const bool packed = g.m == f.m && g.n == f.n && g.k == f.k &&
                        g.a == static_cast<const uint8_t*>(f.a) + gi * f.m * f.k &&
                        g.bt == static_cast<const uint8_t*>(f.bt) + gi * f.n * f.k &&
                        g.c == f.c + gi * f.m * f.n &&
                        g.a_scales == f.a_scales + gi * a_scale_floats &&
                        g.bt_scales == f.bt_scales + gi * bt_scale_floats;
    if (!packed) {
      return absl::FailedPreconditionError(
          absl::StrCat("the batched CUTLASS ", what,
                       " GEMM needs groups of one size stored back to back; group ", i, " is not"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBlockBatch(const BlockGemmSpec& spec) {
  const BlockGemmGroup& f = spec.groups.front();
  const int64_t kb = (f.k + 127) / 128;
  const int64_t bt_scale_rows = spec.bt_128x128 ? (f.n + 127) / 128 : f.n;
  return CheckBatch(spec.groups, f.m * kb, bt_scale_rows * kb, "block-scaled");
}

}  // namespace

const char* RowwiseGemmScheduleName(RowwiseGemmSchedule schedule) {
  switch (schedule) {
    case RowwiseGemmSchedule::kTile64:
      return "pingpong 64x128";
    case RowwiseGemmSchedule::kTile128:
      return "pingpong 128x128";
    case RowwiseGemmSchedule::kTile128Swizzle8:
      return "pingpong 128x128 swizzle 8";
    case RowwiseGemmSchedule::kTile128N:
      return "pingpong 128x128 cluster 1x2";
    case RowwiseGemmSchedule::kCooperative:
      return "cooperative 128x128";
    case RowwiseGemmSchedule::kGrouped:
      return "grouped";
    case RowwiseGemmSchedule::kCooperativeSolo:
      return "cooperative 128x128 no cluster";
    case RowwiseGemmSchedule::kTile128Solo:
      return "pingpong 128x128 no cluster";
    case RowwiseGemmSchedule::kPromoted:
      return "pingpong 64x128 scales at promotion";
    case RowwiseGemmSchedule::kPromotedConcurrent:
      return "concurrent 64x128 scales at promotion";
    case RowwiseGemmSchedule::kOneKTile:
      return "pingpong 128x128 one K tile";
    case RowwiseGemmSchedule::kOneKTileCooperative:
      return "cooperative 256x128 one K tile";
  }
  return "?";
}

const char* BlockGemmScheduleName(BlockGemmSchedule schedule) {
  switch (schedule) {
    case BlockGemmSchedule::kGrouped:
      return "grouped";
    case BlockGemmSchedule::kBatched:
      return "batched";
    case BlockGemmSchedule::kBatchedPingpong:
      return "batched pingpong";
    case BlockGemmSchedule::kBatchedOverlapped:
      return "batched overlapped";
    case BlockGemmSchedule::kBatchedOverlappedPingpong:
      return "batched overlapped pingpong";
    case BlockGemmSchedule::kBatchedConcurrentPingpong:
      return "batched concurrent pingpong";
  }
  return "?";
}

CutlassGemm::CutlassGemm(CutlassGemm&&) noexcept = default;
CutlassGemm& CutlassGemm::operator=(CutlassGemm&&) noexcept = default;
CutlassGemm::~CutlassGemm() = default;

#ifdef GEMMPROF_WITH_CUTLASS
namespace {

// The kernel instance of `schedule` for `spec`'s groups (sizes and formats checked).
absl::StatusOr<cutlass_gemm::Made> MakeBlockGemm(const BlockGemmSpec& spec,
                                                 BlockGemmSchedule schedule, bool blackwell,
                                                 int device) {
  std::vector<cutlass_gemm::Group> groups;
  for (const BlockGemmGroup& g : spec.groups) {
    cutlass_gemm::Group out;
    out.m = static_cast<int32_t>(g.m);
    out.n = static_cast<int32_t>(g.n);
    out.k = static_cast<int32_t>(g.k);
    out.a = g.a;
    out.bt = g.bt;
    out.c = g.c;
    out.a_scales = g.a_scales;
    out.bt_scales = g.bt_scales;
    groups.push_back(out);
  }
  cutlass_gemm::Made made;
  const bool blk = spec.bt_128x128;
  const int count = static_cast<int>(groups.size());
  switch (schedule) {
    case BlockGemmSchedule::kGrouped:
      if (blackwell) {
        made = blk ? cutlass_gemm::MakeSm100Blk128Grouped(groups, device)
                   : cutlass_gemm::MakeSm100Vec128Grouped(groups, device);
      } else {
        made = blk ? cutlass_gemm::MakeBlk128Grouped(groups, device)
                   : cutlass_gemm::MakeVec128Grouped(groups, device);
      }
      break;
    case BlockGemmSchedule::kBatched:
      RETURN_IF_ERROR(CheckBlockBatch(spec));
      made = blk ? cutlass_gemm::MakeBlk128Batched(groups.front(), count, device)
                 : cutlass_gemm::MakeVec128Batched(groups.front(), count, device);
      break;
    case BlockGemmSchedule::kBatchedPingpong:
      RETURN_IF_ERROR(CheckBlockBatch(spec));
      made = blk ? cutlass_gemm::MakeBlk128BatchedPingpong(groups.front(), count, device)
                 : cutlass_gemm::MakeVec128BatchedPingpong(groups.front(), count, device);
      break;
    case BlockGemmSchedule::kBatchedOverlapped:
      if (!blk) {
        return absl::FailedPreconditionError(
            "the CUTLASS batched overlapped (cooperative) block-scaled GEMM is built for "
            "128x128 B^T scales only; 1x128 ones run its pingpong form");
      }
      RETURN_IF_ERROR(CheckBlockBatch(spec));
      made = cutlass_gemm::MakeBlk128BatchedOverlapped(groups.front(), count, device);
      break;
    case BlockGemmSchedule::kBatchedOverlappedPingpong:
      RETURN_IF_ERROR(CheckBlockBatch(spec));
      made = blk ? cutlass_gemm::MakeBlk128BatchedOverlappedPingpong(groups.front(), count, device)
                 : cutlass_gemm::MakeVec128BatchedOverlappedPingpong(groups.front(), count, device);
      break;
    case BlockGemmSchedule::kBatchedConcurrentPingpong:
      if (blk) {
        return absl::FailedPreconditionError(
            "the CUTLASS batched concurrent pingpong block-scaled GEMM is built for 1x128 B^T "
            "scales only (its K loops run at once only where they fit half the stages: wgrad's "
            "short ones); 128x128 ones run the overlapped forms");
      }
      RETURN_IF_ERROR(CheckBlockBatch(spec));
      made = cutlass_gemm::MakeVec128BatchedConcurrentPingpong(groups.front(), count, device);
      break;
  }
  return made;
}

}  // namespace
#endif

absl::StatusOr<CutlassGemm> CutlassGemm::Create(const BlockGemmSpec& spec,
                                                BlockGemmSchedule schedule, int device, int sm) {
#ifndef GEMMPROF_WITH_CUTLASS
  (void)spec;
  (void)schedule;
  (void)device;
  (void)sm;
  return absl::FailedPreconditionError(
      "this build has no CUTLASS kernels (CMake did not find CUTLASS: run "
      "deploy/install_cutlass.sh and rebuild)");
#else
  RETURN_IF_ERROR(CheckSizes(spec.groups, "grouped block-scaled"));
  // Blackwell has the grouped form only (its sm_100a build); everything else is sm_90a.
  const bool blackwell = sm == 100 && schedule == BlockGemmSchedule::kGrouped;
  if (sm != 90 && !blackwell) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUTLASS ", BlockGemmScheduleName(schedule), " block-scaled GEMM is built for ",
        schedule == BlockGemmSchedule::kGrouped ? "sm_90a and sm_100a" : "sm_90a",
        " only; this is sm_", sm));
  }
  if (spec.a_format != Fp8Format::kE4M3 || spec.bt_format != Fp8Format::kE4M3) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUTLASS grouped block-scaled GEMM is instantiated for A ", FormatName(spec.a_format),
        " x B^T ", FormatName(spec.bt_format), " (fp8-block is e4m3 x e4m3)"));
  }
  ASSIGN_OR_RETURN(cutlass_gemm::Made made, MakeBlockGemm(spec, schedule, blackwell, device));
  RETURN_IF_ERROR(cutlass_gemm::MadeStatus(made, "CUTLASS grouped block-scaled GEMM"));
  CutlassGemm gemm;
  gemm.instance_ = std::move(made.instance);
  gemm.description_ = absl::StrCat(
      "CUTLASS ", GEMMPROF_CUTLASS_VERSION, blackwell ? " sm100a " : " sm90a ",
      BlockGemmScheduleName(schedule), " FP8 blockwise (", FormatName(spec.a_format), " x ",
      FormatName(spec.bt_format), ", B^T ", spec.bt_128x128 ? "128x128" : "1x128", " scales; ",
      gemm.instance_->Config(), "), ", spec.groups.size(),
      spec.groups.size() == 1 ? " group" : " groups", " in one launch");
  return gemm;
#endif
}

#ifdef GEMMPROF_WITH_CUTLASS
namespace {

// The kernel instance of `schedule` for `spec`'s groups (sizes and formats checked).
absl::StatusOr<cutlass_gemm::Made> MakeRowwiseGemm(const RowwiseGemmSpec& spec,
                                                   RowwiseGemmSchedule schedule, bool blackwell,
                                                   int device) {
  const bool fast = spec.fast_accum;
  if (IsPromotedRowwise(schedule) && fast) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUTLASS ", RowwiseGemmScheduleName(schedule),
        " row-wise GEMM applies the scales as it promotes partial sums to fp32 (dgrad, wgrad); "
        "this GEMM uses FP8 fast accumulation"));
  }
  if (IsFastOnlyRowwise(schedule) && !fast) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUTLASS ", RowwiseGemmScheduleName(schedule),
                     " row-wise GEMM is built with FP8 fast accumulation only (fprop); this GEMM "
                     "promotes partial sums to fp32"));
  }
  if (schedule == RowwiseGemmSchedule::kGrouped) {
    if (spec.groups.size() == 1) {
      return absl::FailedPreconditionError(
          "the CUTLASS grouped row-wise GEMM is for several groups; one GEMM runs the tile "
          "forms");
    }
    std::vector<cutlass_gemm::Group> groups;
    for (const BlockGemmGroup& g : spec.groups) {
      groups.push_back({static_cast<int32_t>(g.m), static_cast<int32_t>(g.n),
                        static_cast<int32_t>(g.k), g.a, g.bt, g.c, g.a_scales, g.bt_scales});
    }
    if (blackwell) return cutlass_gemm::MakeSm100RowwiseGrouped(groups, device);
    return fast ? cutlass_gemm::MakeRowwiseGrouped(groups, device)
                : cutlass_gemm::MakeRowwiseGroupedSplit(groups, device);
  }
  const BlockGemmGroup& f = spec.groups.front();
  RETURN_IF_ERROR(CheckBatch(spec.groups, f.m, f.n, "row-wise"));
  if (f.m == 0) {
    return absl::FailedPreconditionError(
        "the batched CUTLASS row-wise GEMM needs rows in every group; these have none");
  }
  cutlass_gemm::RowwiseProblem p;
  p.m = static_cast<int32_t>(f.m);
  p.n = static_cast<int32_t>(f.n);
  p.k = static_cast<int32_t>(f.k);
  p.groups = static_cast<int32_t>(spec.groups.size());
  p.a = f.a;
  p.bt = f.bt;
  p.c = f.c;
  p.a_scales = f.a_scales;
  p.bt_scales = f.bt_scales;
  p.swizzle = schedule == RowwiseGemmSchedule::kTile128Swizzle8 ? 8 : 1;
  switch (schedule) {
    case RowwiseGemmSchedule::kTile64:
      return fast ? cutlass_gemm::MakeRowwiseTile64(p, device)
                  : cutlass_gemm::MakeRowwiseTile64Split(p, device);
    case RowwiseGemmSchedule::kTile128N:
      return fast ? cutlass_gemm::MakeRowwiseTile128N(p, device)
                  : cutlass_gemm::MakeRowwiseTile128NSplit(p, device);
    case RowwiseGemmSchedule::kCooperative:
      return fast ? cutlass_gemm::MakeRowwiseCooperative(p, device)
                  : cutlass_gemm::MakeRowwiseCooperativeSplit(p, device);
    case RowwiseGemmSchedule::kCooperativeSolo:
      return fast ? cutlass_gemm::MakeRowwiseCooperativeSolo(p, device)
                  : cutlass_gemm::MakeRowwiseCooperativeSplitSolo(p, device);
    case RowwiseGemmSchedule::kTile128Solo:
      return cutlass_gemm::MakeRowwiseTile128Solo(p, device);
    case RowwiseGemmSchedule::kPromoted:
      return cutlass_gemm::MakeRowwisePromotedPingpong(p, device);
    case RowwiseGemmSchedule::kPromotedConcurrent:
      return cutlass_gemm::MakeRowwisePromotedConcurrent(p, device);
    case RowwiseGemmSchedule::kOneKTile:
      return cutlass_gemm::MakeRowwiseOneKTilePingpong(p, device);
    case RowwiseGemmSchedule::kOneKTileCooperative:
      return cutlass_gemm::MakeRowwiseOneKTileCooperative(p, device);
    default:
      break;
  }
  return fast ? cutlass_gemm::MakeRowwiseTile128(p, device)
              : cutlass_gemm::MakeRowwiseTile128Split(p, device);
}

}  // namespace
#endif

absl::StatusOr<CutlassGemm> CutlassGemm::CreateRowwise(const RowwiseGemmSpec& spec,
                                                       RowwiseGemmSchedule schedule, int device,
                                                       int sm) {
#ifndef GEMMPROF_WITH_CUTLASS
  (void)spec;
  (void)schedule;
  (void)device;
  (void)sm;
  return absl::FailedPreconditionError(
      "this build has no CUTLASS kernels (CMake did not find CUTLASS: run "
      "deploy/install_cutlass.sh and rebuild)");
#else
  RETURN_IF_ERROR(CheckSizes(spec.groups, "row-wise"));
  // Blackwell has the grouped form only (its sm_100a build); everything else is sm_90a.
  const bool blackwell = sm == 100 && schedule == RowwiseGemmSchedule::kGrouped;
  if (sm != 90 && !blackwell) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUTLASS ", RowwiseGemmScheduleName(schedule), " row-wise GEMM is built for ",
        schedule == RowwiseGemmSchedule::kGrouped ? "sm_90a and sm_100a" : "sm_90a",
        " only; this is sm_", sm));
  }
  if (spec.a_format != Fp8Format::kE4M3 || spec.bt_format != Fp8Format::kE4M3) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUTLASS row-wise GEMM is instantiated for A ", FormatName(spec.a_format),
                     " x B^T ", FormatName(spec.bt_format), " (fp8-rowwise is e4m3 x e4m3)"));
  }
  ASSIGN_OR_RETURN(cutlass_gemm::Made made, MakeRowwiseGemm(spec, schedule, blackwell, device));
  RETURN_IF_ERROR(cutlass_gemm::MadeStatus(made, "CUTLASS row-wise GEMM"));
  CutlassGemm gemm;
  gemm.instance_ = std::move(made.instance);
  const size_t groups = spec.groups.size();
  gemm.description_ = absl::StrCat(
      "CUTLASS ", GEMMPROF_CUTLASS_VERSION, blackwell ? " sm100a " : " sm90a ",
      schedule == RowwiseGemmSchedule::kGrouped ? "grouped " : "", "FP8 GEMM, row-wise scales ",
      IsPromotedRowwise(schedule)
          ? "applied to the partial sums promoted to fp32 at each K tile (the recipe applies them "
            "in the epilogue: the same products in another fp32 rounding order)"
          : "in the epilogue",
      " (e4m3 x e4m3; ", gemm.instance_->Config(), ")",
      groups > 1 ? absl::StrCat(", ", groups, " groups in one launch") : "");
  return gemm;
#endif
}

absl::Status CutlassGemm::Enqueue(cudaStream_t stream) const {
  CUDA_RETURN_IF_ERROR(instance_->Run(stream));
  return absl::OkStatus();
}

std::string CutlassGemm::Description() const { return description_; }

}  // namespace gemmprof::kernels
