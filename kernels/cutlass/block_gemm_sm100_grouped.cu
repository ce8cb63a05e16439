// CUTLASS FP8 block-scaled grouped GEMMs for Blackwell (sm_100a), e4m3 x e4m3: CUTLASS's
// sm100 pointer-array blockwise-scaled collective (UMMA, one SM per tile, tile 128x128x128,
// cluster 1x1), BF16 out, A's scales 1x128 and B^T's 128x128 (Blk128: fprop, dgrad) or
// 1x128 (Vec128: wgrad), both K-major as the block-quantization kernels write them. Built
// for sm_100a only; no Blackwell GPU has run them (cutlass_gemm.cc gates them by sm).
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {

#define GEMMPROF_CUTLASS_SM100_BLOCK_GEMM_TYPES(Name, ScaleN)                                      \
  struct Name {                                                                                    \
    GEMMPROF_CUTLASS_E4M3_OPERANDS;                                                                \
    static constexpr const char* kSchedule = "1-SM UMMA";                                          \
    using TileShape = cute::Shape<cute::_128, cute::_128, cute::_128>;                             \
    using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;                                \
    using ScaleConfig =                                                                            \
        cutlass::detail::Sm100BlockwiseScaleConfig<1, ScaleN, 128, cute::UMMA::Major::K,           \
                                                   cute::UMMA::Major::K>;                          \
    using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());                                   \
    using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());                                   \
    using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;             \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                             \
        cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,             \
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD*, kAlignD,    \
        ElementD, LayoutD*, kAlignD, cutlass::epilogue::PtrArrayTmaWarpSpecialized1Sm,             \
        cutlass::epilogue::fusion::LinearCombination<ElementD, float, void, float>>::CollectiveOp; \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm100, cutlass::arch::OpClassTensorOp, ElementA,                            \
        cute::tuple<LayoutA*, LayoutSFA*>, kAlignA, ElementB, cute::tuple<LayoutB*, LayoutSFB*>,   \
        kAlignB, float, TileShape, ClusterShape,                                                   \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelPtrArrayTmaWarpSpecializedBlockwise1SmSm100>::CollectiveOp;           \
    using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;         \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

GEMMPROF_CUTLASS_SM100_BLOCK_GEMM_TYPES(Sm100Blk128Grouped, 128);
GEMMPROF_CUTLASS_SM100_BLOCK_GEMM_TYPES(Sm100Vec128Grouped, 1);

}  // namespace

Made MakeSm100Blk128Grouped(const std::vector<Group>& groups, int device) {
  return BlockGemm<Sm100Blk128Grouped>::Make(groups, device);
}

Made MakeSm100Vec128Grouped(const std::vector<Group>& groups, int device) {
  return BlockGemm<Sm100Vec128Grouped>::Make(groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
