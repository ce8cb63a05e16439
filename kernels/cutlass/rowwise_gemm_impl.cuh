// The template behind the row-wise GEMMs of block_gemm_kernels.h: CUTLASS's Hopper
// warp-specialized FP8 GEMM (e4m3 x e4m3, fp32 accumulation, FP8 fast accumulation) with
// an epilogue that multiplies each output element by its row's A scale and its
// column's B^T scale (fp8-rowwise: per token x per output channel) and writes BF16.
// Included by one .cu per instantiation.
#pragma once

#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

// The types of one instantiation, as a plain struct named `Name` (a macro for the reason
// block_gemm_impl.cuh gives): tile TileM x 128 x 128, cluster ClusterM x ClusterN x 1,
// Schedule Cooperative or Pingpong with EpilogueSchedule to match
// (TmaWarpSpecializedCooperative, TmaWarpSpecialized). The epilogue computes
// D = bf16(a_scale[m] * (b_scale[n] * acc)): A's scales are a column vector over M (any
// M: unvectorized), B^T's a row vector over N.
#define GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(Name, TileM, ClusterM, ClusterN, Schedule,             \
                                            EpilogueSchedule)                                      \
  struct Name {                                                                                    \
    GEMMPROF_CUTLASS_E4M3_OPERANDS;                                                                \
    static constexpr const char* kSchedule = #Schedule;                                            \
    using TileShape = cute::Shape<cute::Int<TileM>, cute::_128, cute::_128>;                       \
    using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;          \
    static constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;                     \
    using AScale = cutlass::epilogue::fusion::Sm90ColBroadcast<                                    \
        0, TileShape, float, float, cute::Stride<cute::_1, cute::_0, cute::_0>, 1>;                \
    using BScale =                                                                                 \
        cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, float, float,                    \
                                                    cute::Stride<cute::_0, cute::_1, cute::_0>>;   \
    using ByColumn = cutlass::epilogue::fusion::Sm90EVT<                                           \
        cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, float, float, kRound>, BScale, \
        cutlass::epilogue::fusion::Sm90AccFetch>;                                                  \
    using Fusion = cutlass::epilogue::fusion::Sm90EVT<                                             \
        cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, ElementD, float, kRound>,      \
        AScale, ByColumn>;                                                                         \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                             \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,              \
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlignD,     \
        ElementD, LayoutD, kAlignD, cutlass::epilogue::EpilogueSchedule, Fusion>::CollectiveOp;    \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignA, ElementB, \
        LayoutB, kAlignB, float, TileShape, ClusterShape,                                          \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelTmaWarpSpecialized##Schedule##FP8FastAccum>::CollectiveOp;            \
    using Kernel =                                                                                 \
        cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>; \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

// A prepared row-wise GEMM of the instantiation `T`.
template <class T>
class RowwiseGemm final : public AdapterInstance<typename T::Gemm> {
  using Gemm = typename T::Gemm;

 public:
  static Made Make(const RowwiseProblem& p, int device) {
    Made made;
    auto gemm = std::unique_ptr<RowwiseGemm>(new RowwiseGemm());
    made.error = gemm->Prepare(p, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  std::string Config() const override {
    return ConfigOf<T>() + (swizzle_ > 1 ? ", swizzle " + std::to_string(swizzle_) : "") +
           ", FP8 fast accumulation";
  }

 private:
  RowwiseGemm() = default;

  int swizzle_ = 1;

  std::string Prepare(const RowwiseProblem& p, int device, bool* unsupported) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return std::string("selecting the device: ") + cudaGetErrorName(e);
    using StrideA = typename T::Kernel::StrideA;
    using StrideB = typename T::Kernel::StrideB;
    using StrideD = typename T::Kernel::StrideD;
    const auto stride_a =
        cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(p.m, p.k, 1));
    const auto stride_b =
        cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(p.n, p.k, 1));
    const auto stride_d =
        cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(p.m, p.n, 1));
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {p.m, p.n, p.k, 1},
        {static_cast<const typename T::ElementA*>(p.a), stride_a,
         static_cast<const typename T::ElementB*>(p.bt), stride_b},
        {{}, nullptr, stride_d, static_cast<typename T::ElementD*>(p.c), stride_d},
        this->HardwareInfo(device)};
    // {A's scales, {B^T's scales, acc, multiply}, multiply}
    args.epilogue.thread = {{p.a_scales}, {{p.bt_scales}, {}, {}}, {}};
    args.scheduler.max_swizzle_size = p.swizzle;
    swizzle_ = p.swizzle;
    return this->Initialize(args, "this GEMM", unsupported);
  }
};

}  // namespace gemmprof::kernels::cutlass_gemm
