// The templates behind the row-wise GEMMs of block_gemm_kernels.h: CUTLASS's
// warp-specialized FP8 GEMM (e4m3 x e4m3, fp32 accumulation) with an epilogue that
// multiplies each output element by its row's A scale and its column's B^T scale
// (fp8-rowwise: per token x per output channel) and writes BF16; batched (groups of one
// size back to back) and grouped (pointer arrays, any size per group). Included by one
// .cu per instantiation.
#pragma once

#include <string>
#include <vector>

#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "kernels/cutlass/block_gemm_impl.cuh"
#include "kernels/cutlass/overlapped_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

// The epilogue's computation, D = bf16(a_scale[m] * (b_scale[n] * acc)), for TileShape.
// Scale is `float` for one vector per batch (its L stride given at run time) or `float*`
// for one pointer per group (grouped GEMMs). A's scales are a column vector over M (any
// M: unvectorized), B^T's a row vector over N.
template <class TileShape, class Scale, class ElementD, class StrideL>
struct RowwiseEpilogueOf {
  static constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;
  using AScale =
      cutlass::epilogue::fusion::Sm90ColBroadcast<0, TileShape, Scale, float,
                                                  cute::Stride<cute::_1, cute::_0, StrideL>, 1>;
  using BScale =
      cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, Scale, float,
                                                  cute::Stride<cute::_0, cute::_1, StrideL>>;
  using ByColumn = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, float, float, kRound>, BScale,
      cutlass::epilogue::fusion::Sm90AccFetch>;
  using Fusion = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, ElementD, float, kRound>, AScale,
      ByColumn>;
};

// The types of one batched instantiation, as a plain struct named `Name` (a macro for the
// reason block_gemm_impl.cuh gives): tile TileM x 128 x 128, cluster ClusterM x ClusterN
// x 1, Schedule Cooperative or Pingpong with EpilogueSchedule to match
// (TmaWarpSpecializedCooperative, TmaWarpSpecialized); Accum FP8FastAccum, or empty for
// CUTLASS's FP8 mainloop that promotes partial sums into fp32. The _IN form takes the
// epilogue's store piece, EpilogueTile (EpilogueTileAuto: CUTLASS's choice).
#define GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(Name, TileM, ClusterM, ClusterN, Schedule, \
                                            EpilogueSchedule, Accum)                   \
  GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES_IN(Name, TileM, ClusterM, ClusterN, Schedule,    \
                                         EpilogueSchedule, Accum,                      \
                                         cutlass::epilogue::collective::EpilogueTileAuto)
#define GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES_IN(Name, TileM, ClusterM, ClusterN, Schedule,          \
                                               EpilogueSchedule, Accum, EpilogueTile)              \
  struct Name {                                                                                    \
    GEMMPROF_CUTLASS_E4M3_OPERANDS;                                                                \
    static constexpr const char* kSchedule = #Schedule;                                            \
    using TileShape = cute::Shape<cute::Int<TileM>, cute::_128, cute::_128>;                       \
    using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;          \
    using Fusion = typename RowwiseEpilogueOf<TileShape, float, ElementD, int64_t>::Fusion;        \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                             \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,              \
        EpilogueTile, float, float, void, LayoutD, kAlignD, ElementD, LayoutD, kAlignD,            \
        cutlass::epilogue::EpilogueSchedule, Fusion>::CollectiveOp;                                \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignA, ElementB, \
        LayoutB, kAlignB, float, TileShape, ClusterShape,                                          \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelTmaWarpSpecialized##Schedule##Accum>::CollectiveOp;                   \
    using Kernel =                                                                                 \
        cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>; \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

// A grouped instantiation: pointer arrays per group, each group's scales by pointer.
// Arch Sm90 (Schedule Pingpong or Cooperative; Accum as above) or Sm100 (Schedule 1SmSm100
// with EpilogueSchedule 1Sm, Accum empty). The _IN form takes EpilogueTile as above.
#define GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES(Name, Arch, TileM, ClusterM, ClusterN,        \
                                                    Schedule, EpilogueSchedule, Accum)            \
  GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES_IN(Name, Arch, TileM, ClusterM, ClusterN, Schedule, \
                                                 EpilogueSchedule, Accum,                         \
                                                 cutlass::epilogue::collective::EpilogueTileAuto)
#define GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES_IN(                                         \
    Name, Arch, TileM, ClusterM, ClusterN, Schedule, EpilogueSchedule, Accum, EpilogueTile)     \
  struct Name {                                                                                 \
    GEMMPROF_CUTLASS_E4M3_OPERANDS;                                                             \
    static constexpr const char* kSchedule = #Schedule;                                         \
    using TileShape = cute::Shape<cute::Int<TileM>, cute::_128, cute::_128>;                    \
    using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;       \
    using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;          \
    using Fusion = typename RowwiseEpilogueOf<TileShape, float*, ElementD, cute::_0>::Fusion;   \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                          \
        cutlass::arch::Arch, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,           \
        EpilogueTile, float, float, void, LayoutD*, kAlignD, ElementD, LayoutD*, kAlignD,       \
        cutlass::epilogue::PtrArrayTmaWarpSpecialized##EpilogueSchedule, Fusion>::CollectiveOp; \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                              \
        cutlass::arch::Arch, cutlass::arch::OpClassTensorOp, ElementA, LayoutA*, kAlignA,       \
        ElementB, LayoutB*, kAlignB, float, TileShape, ClusterShape,                            \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                     \
            sizeof(typename Epilogue::SharedStorage))>,                                         \
        cutlass::gemm::KernelPtrArrayTmaWarpSpecialized##Schedule##Accum>::CollectiveOp;        \
    using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;      \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                           \
  }

// The problem shape of the batched forms (M, N, K, batch).
using BatchedProblemShape = cute::Shape<int, int, int, int>;

// The forms above that promote partial sums into fp32 (Accum empty), with the consumer
// mainloop of overlapped_mainloop.cuh: each K tile's promotion overlapped with the next
// tile's MMAs, the same sums as CUTLASS's FP8 mainloop computes. The third accumulator
// set it needs fits a 64-row warp-group tile (pingpong 64x128, cooperative 128x128), not
// pingpong's 128x128 (ptxas then serializes the WGMMAs). EpilogueTile as in the _IN forms;
// Note (e.g. ", epilogue tile 64x128", or "") ends the description.
#define GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_GEMM_TYPES(Name, TileM, ClusterM, ClusterN, Schedule, \
                                                       EpilogueSchedule, EpilogueTile, Note)      \
  GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES_IN(Name##Base, TileM, ClusterM, ClusterN, Schedule,         \
                                         EpilogueSchedule, , EpilogueTile);                       \
  GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_OF(Name, BatchedProblemShape, Schedule, Note)
#define GEMMPROF_CUTLASS_OVERLAPPED_GROUPED_ROWWISE_GEMM_TYPES(                               \
    Name, TileM, ClusterM, ClusterN, Schedule, EpilogueSchedule, EpilogueTile, Note)          \
  GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES_IN(Name##Base, Sm90, TileM, ClusterM, ClusterN, \
                                                 Schedule, EpilogueSchedule, , EpilogueTile); \
  GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_OF(Name, Name##Base::ProblemShape, Schedule, Note)
#define GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_OF(Name, Problem, Schedule, Note)                     \
  struct Name : Name##Base {                                                                      \
    /* the base's name is replaced (and referenced here, or nvcc warns it is unused) */           \
    static_assert(Name##Base::kSchedule != nullptr);                                              \
    static constexpr const char* kSchedule = #Schedule ", promotion overlapped" Note;             \
    using Mainloop = OverlappedPromotionMainloop<Name##Base::Mainloop>;                           \
    using Kernel = cutlass::gemm::kernel::GemmUniversal<Problem, Mainloop, Name##Base::Epilogue>; \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                             \
  }

// A prepared batched row-wise GEMM of the instantiation `T`.
template <class T>
class RowwiseGemm final : public AdapterInstance<typename T::Gemm> {
  using Gemm = typename T::Gemm;

 public:
  static Made Make(const RowwiseProblem& p, int device, const char* accumulation) {
    Made made;
    auto gemm = std::unique_ptr<RowwiseGemm>(new RowwiseGemm());
    gemm->accumulation_ = accumulation;
    made.error = gemm->Prepare(p, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  std::string Config() const override {
    return ConfigOf<T>() + (swizzle_ > 1 ? ", swizzle " + std::to_string(swizzle_) : "") + ", " +
           accumulation_ + (groups_ > 1 ? ", groups as one batch" : "");
  }

 private:
  RowwiseGemm() = default;

  int swizzle_ = 1;
  int groups_ = 1;
  const char* accumulation_ = "";

  std::string Prepare(const RowwiseProblem& p, int device, bool* unsupported) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return std::string("selecting the device: ") + cudaGetErrorName(e);
    using StrideA = typename T::Kernel::StrideA;
    using StrideB = typename T::Kernel::StrideB;
    using StrideD = typename T::Kernel::StrideD;
    const int l = p.groups;
    const auto stride_a =
        cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(p.m, p.k, l));
    const auto stride_b =
        cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(p.n, p.k, l));
    const auto stride_d =
        cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(p.m, p.n, l));
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {p.m, p.n, p.k, l},
        {static_cast<const typename T::ElementA*>(p.a), stride_a,
         static_cast<const typename T::ElementB*>(p.bt), stride_b},
        {{}, nullptr, stride_d, static_cast<typename T::ElementD*>(p.c), stride_d},
        this->HardwareInfo(device)};
    // {A's scales, {B^T's scales, acc, multiply}, multiply}; group g's scales follow
    // group g-1's (m and n floats on).
    const cute::Stride<cute::_1, cute::_0, int64_t> a_scale_stride{{}, {}, p.m};
    const cute::Stride<cute::_0, cute::_1, int64_t> bt_scale_stride{{}, {}, p.n};
    args.epilogue.thread = {
        {p.a_scales, 0.0f, a_scale_stride}, {{p.bt_scales, 0.0f, bt_scale_stride}, {}, {}}, {}};
    args.scheduler.max_swizzle_size = p.swizzle;
    swizzle_ = p.swizzle;
    groups_ = l;
    return this->Initialize(args, "this GEMM", unsupported);
  }
};

// A prepared grouped row-wise GEMM of the instantiation `T`.
template <class T>
class GroupedRowwiseGemm final : public AdapterInstance<typename T::Gemm> {
  using ElementA = typename T::ElementA;
  using ElementB = typename T::ElementB;
  using ElementD = typename T::ElementD;
  using Gemm = typename T::Gemm;
  using StrideA = typename T::Kernel::InternalStrideA;
  using StrideB = typename T::Kernel::InternalStrideB;
  using StrideD = typename T::Kernel::InternalStrideD;
  using Problem = typename T::ProblemShape::UnderlyingProblemShape;

 public:
  static Made Make(const std::vector<Group>& groups, int device, const char* accumulation) {
    Made made;
    auto gemm = std::unique_ptr<GroupedRowwiseGemm>(new GroupedRowwiseGemm());
    gemm->accumulation_ = accumulation;
    made.error = gemm->Prepare(groups, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  std::string Config() const override { return ConfigOf<T>() + ", " + accumulation_; }

 private:
  GroupedRowwiseGemm() = default;

  const char* accumulation_ = "";

  std::string Prepare(const std::vector<Group>& groups, int device, bool* unsupported) {
    std::vector<Problem> problems;
    std::vector<const ElementA*> a;
    std::vector<const ElementB*> b;
    std::vector<ElementD*> d;
    std::vector<StrideA> stride_a;
    std::vector<StrideB> stride_b;
    std::vector<StrideD> stride_d;
    std::vector<const float*> sa, sb;
    for (const Group& g : groups) {
      problems.push_back(Problem(g.m, g.n, g.k));
      a.push_back(static_cast<const ElementA*>(g.a));
      b.push_back(static_cast<const ElementB*>(g.bt));
      d.push_back(static_cast<ElementD*>(g.c));
      stride_a.push_back(cutlass::make_cute_packed_stride(StrideA{}, {g.m, g.k, 1}));
      stride_b.push_back(cutlass::make_cute_packed_stride(StrideB{}, {g.n, g.k, 1}));
      stride_d.push_back(cutlass::make_cute_packed_stride(StrideD{}, {g.m, g.n, 1}));
      sa.push_back(g.a_scales);
      sb.push_back(g.bt_scales);
    }
    host_problems_ = problems;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = problems_.Upload(problems);
    if (e == cudaSuccess) e = a_.Upload(a);
    if (e == cudaSuccess) e = b_.Upload(b);
    if (e == cudaSuccess) e = d_.Upload(d);
    if (e == cudaSuccess) e = stride_a_.Upload(stride_a);
    if (e == cudaSuccess) e = stride_b_.Upload(stride_b);
    if (e == cudaSuccess) e = stride_d_.Upload(stride_d);
    if (e == cudaSuccess) e = sa_.Upload(sa);
    if (e == cudaSuccess) e = sb_.Upload(sb);
    if (e != cudaSuccess)
      return std::string("preparing the argument arrays: ") + cudaGetErrorName(e);
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGrouped,
        {static_cast<int>(groups.size()), problems_.get(), host_problems_.data()},
        {a_.get(), stride_a_.get(), b_.get(), stride_b_.get()},
        {{}, nullptr, stride_d_.get(), d_.get(), stride_d_.get()},
        this->HardwareInfo(device)};
    args.epilogue.thread = {{sa_.get()}, {{sb_.get()}, {}, {}}, {}};
    return this->Initialize(args, "these groups", unsupported);
  }

  std::vector<Problem> host_problems_;
  DeviceArray<Problem> problems_;
  DeviceArray<const ElementA*> a_;
  DeviceArray<const ElementB*> b_;
  DeviceArray<ElementD*> d_;
  DeviceArray<StrideA> stride_a_;
  DeviceArray<StrideB> stride_b_;
  DeviceArray<StrideD> stride_d_;
  DeviceArray<const float*> sa_, sb_;
};

inline constexpr const char kFastAccumulation[] = "FP8 fast accumulation";
inline constexpr const char kPromotedAccumulation[] = "partial sums promoted to fp32";

}  // namespace gemmprof::kernels::cutlass_gemm
