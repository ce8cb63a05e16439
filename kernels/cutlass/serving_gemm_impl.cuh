// The templates behind serving_gemm_kernels.h: the int8-rowwise GEMM (CUTLASS's
// warp-specialized INT8 GEMM with the row-wise scale epilogue of rowwise_gemm_impl.cuh)
// and the weight-only GEMMs (CUTLASS's sm90 mixed-input mainloop, scale-only mode).
// Included by one .cu per instantiation.
#pragma once

#include <cstdint>
#include <string>

#include "cutlass/detail/layout.hpp"

// CUTLASS 4.2's mixed_dtype_utils.hpp names cutlass::int8_t and cutlass::uint8_t, which no
// CUTLASS header declares; we need only its compute_memory_reordering_atom.
namespace cutlass {
using ::int8_t;
using ::uint8_t;
}  // namespace cutlass
#include "cutlass/util/mixed_dtype_utils.hpp"
#include "kernels/cutlass/rowwise_gemm_impl.cuh"
#include "kernels/cutlass/serving_gemm_kernels.h"

namespace gemmprof::kernels::cutlass_gemm {

// An int8-rowwise instantiation: tile TileM x TileN x 128, cluster ClusterM x ClusterN x 1,
// Schedule Pingpong or Cooperative with EpilogueSchedule to match; INT32 accumulators
// (exact), the scales multiplied in fp32.
#define GEMMPROF_CUTLASS_INT8_ROWWISE_TYPES(Name, TileM, TileN, ClusterM, ClusterN, Schedule,      \
                                            EpilogueSchedule)                                      \
  struct Name {                                                                                    \
    using ElementA = int8_t;                                                                       \
    using ElementB = int8_t;                                                                       \
    using ElementD = cutlass::bfloat16_t;                                                          \
    using LayoutA = cutlass::layout::RowMajor;                                                     \
    using LayoutB = cutlass::layout::ColumnMajor;                                                  \
    using LayoutD = cutlass::layout::RowMajor;                                                     \
    static constexpr int kAlignA = 16, kAlignB = 16, kAlignD = 8;                                  \
    static constexpr const char* kSchedule = #Schedule;                                            \
    using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::_128>;                 \
    using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;          \
    using Fusion = typename RowwiseEpilogueOf<TileShape, float, ElementD, int64_t>::Fusion;        \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                             \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,              \
        cutlass::epilogue::collective::EpilogueTileAuto, int32_t, float, void, LayoutD, kAlignD,   \
        ElementD, LayoutD, kAlignD, cutlass::epilogue::EpilogueSchedule, Fusion>::CollectiveOp;    \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignA, ElementB, \
        LayoutB, kAlignB, int32_t, TileShape, ClusterShape,                                        \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelTmaWarpSpecialized##Schedule>::CollectiveOp;                          \
    using Kernel =                                                                                 \
        cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>; \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

inline constexpr const char kInt32Accumulation[] = "exact INT32 accumulation";

// The reordered INT4 layout (serving_gemm_kernels.h): one MMA atom's values per thread
// contiguous, eight nibbles in the order 0,2,4,6,1,3,5,7, tiled over [n, k, 1].
using W4ValueShuffle =
    cute::Layout<cute::Shape<cute::_2, cute::_4>, cute::Stride<cute::_4, cute::_1>>;
using W4LayoutAtom =
    decltype(cutlass::compute_memory_reordering_atom<
             cutlass::bfloat16_t, cute::Layout<cute::Shape<cute::_1, cute::_1>>, W4ValueShuffle>());
using W4StrideRowMajor = cutlass::detail::TagToStrideA_t<cutlass::layout::RowMajor>;
using W4Layout = decltype(cute::tile_to_shape(
    W4LayoutAtom{}, cute::Layout<cute::Shape<int, int, int>, W4StrideRowMajor>{}));

inline W4Layout MakeW4Layout(int n, int k) {
  return cute::tile_to_shape(W4LayoutAtom{}, cute::make_shape(n, k, 1));
}

// A weight-only instantiation: ElementQ int8_t (w8a16, row-major weight) or
// cutlass::int4b_t (w4a16, the reordered layout); tile 128 x TileN x 64, cooperative;
// kStreamK: CUTLASS's stream-K tile scheduler (K split across CTAs where the output has
// fewer tiles than the device has SMs, as decode's short N does), else the persistent one.
template <class ElementQ, int TileN, bool kStreamK = false>
struct WeightOnlyTypes {
  using ElementA = cutlass::bfloat16_t;  // the activation (the launch's second operand)
  using ElementD = cutlass::bfloat16_t;
  using ElementScale = cutlass::bfloat16_t;
  static constexpr bool kInt4 = cute::is_same_v<ElementQ, cutlass::int4b_t>;
  // The weight as the launch's first operand, K-major; the activation K-major as its
  // second; C^T column-major.
  using LayoutW = cute::conditional_t<kInt4, W4Layout, cutlass::layout::RowMajor>;
  using LayoutAct = cutlass::layout::ColumnMajor;
  using LayoutDt = cutlass::layout::ColumnMajor;
  static constexpr int kAlignW = 128 / cutlass::sizeof_bits<ElementQ>::value;
  static constexpr int kAlignAct = 8, kAlignD = 8;
  static constexpr bool kStreamKScheduler = kStreamK;
  static constexpr const char* kSchedule =
      kStreamK ? "Cooperative, stream-K (flags zeroed per launch)" : "Cooperative";
  using TileShape = cute::Shape<cute::_128, cute::Int<TileN>, cute::_64>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutDt, kAlignD,
      ElementD, LayoutDt, kAlignD, cutlass::epilogue::TmaWarpSpecializedCooperative,
      cutlass::epilogue::fusion::LinearCombination<ElementD, float, void, float>>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cute::tuple<ElementQ, ElementScale>,
      LayoutW, kAlignW, ElementA, LayoutAct, kAlignAct, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<
      cute::Shape<int, int, int, int>, Mainloop, Epilogue,
      cute::conditional_t<kStreamK, cutlass::gemm::StreamKScheduler, void>>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

// A prepared weight-only GEMM of the instantiation `T`.
template <class T>
class WeightOnlyGemm final : public AdapterInstance<typename T::Gemm> {
  using Gemm = typename T::Gemm;

 public:
  static Made Make(const WeightOnlyProblem& p, int device) {
    Made made;
    auto gemm = std::unique_ptr<WeightOnlyGemm>(new WeightOnlyGemm());
    made.error = gemm->Prepare(p, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  // CUTLASS's stream-K CTAs count their arrivals at a tile in flags in the workspace and
  // never reset them (a second launch would wait forever): each launch of a stream-K form
  // zeroes them first, one memset on the same stream, inside the timing.
  cudaError_t Run(cudaStream_t stream) override {
    if constexpr (T::kStreamKScheduler) {
      if (workspace_bytes_ > 0) {
        const cudaError_t e = cudaMemsetAsync(this->workspace_.get(), 0, workspace_bytes_, stream);
        if (e != cudaSuccess) return e;
      }
    }
    return AdapterInstance<Gemm>::Run(stream);
  }

  std::string Config() const override {
    return ConfigOf<T>() + ", weight " + (T::kInt4 ? "INT4 (reordered)" : "INT8") +
           " converted in registers, bf16 scale per " +
           (group_ == k_ ? std::string("output channel") : std::to_string(group_) + " of K");
  }

 private:
  WeightOnlyGemm() = default;

  int group_ = 0, k_ = 0;
  size_t workspace_bytes_ = 0;

  std::string Prepare(const WeightOnlyProblem& p, int device, bool* unsupported) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return std::string("selecting the device: ") + cudaGetErrorName(e);
    using StrideAct = typename T::Kernel::StrideB;
    using StrideD = typename T::Kernel::StrideD;
    using StrideS = typename T::Mainloop::StrideScale;
    const int scale_k = (p.k + p.group - 1) / p.group;
    const auto stride_act =
        cutlass::make_cute_packed_stride(StrideAct{}, cute::make_shape(p.m, p.k, 1));
    const auto stride_d =
        cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(p.n, p.m, 1));
    const auto stride_s =
        cutlass::make_cute_packed_stride(StrideS{}, cute::make_shape(p.n, scale_k, 1));
    auto layout_w = [&] {
      if constexpr (T::kInt4) {
        return MakeW4Layout(p.n, p.k);
      } else {
        return cutlass::make_cute_packed_stride(typename T::Kernel::StrideA{},
                                                cute::make_shape(p.n, p.k, 1));
      }
    }();
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {p.n, p.m, p.k, 1},
        {static_cast<const typename T::Mainloop::ElementA*>(p.w), layout_w,
         static_cast<const cutlass::bfloat16_t*>(p.a), stride_act,
         static_cast<const cutlass::bfloat16_t*>(p.scales), stride_s, p.group},
        {{1.0f, 0.0f}, nullptr, stride_d, static_cast<cutlass::bfloat16_t*>(p.c), stride_d},
        this->HardwareInfo(device)};
    group_ = p.group;
    k_ = p.k;
    workspace_bytes_ = Gemm::get_workspace_size(args);
    return this->Initialize(args, "this GEMM", unsupported);
  }
};

}  // namespace gemmprof::kernels::cutlass_gemm
