// The one template behind block_gemm_kernels.h: CUTLASS's Hopper warp-specialized
// grouped GEMM with blockwise scaling (pointer-array TMA mainloop, cooperative schedule,
// FP8 blockwise promotion), BF16 out, no source operand. Included by one .cu per
// instantiation so each compiles on its own (about a minute and 4 GB of host memory each).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/blockwise_scale_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"
#include "kernels/cutlass/block_gemm_kernels.h"
#include "kernels/cutlass/deferred_store_epilogue.cuh"
#include "kernels/cutlass/overlapped_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

// Owns one cudaMalloc'd array of T.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  cudaError_t Upload(const std::vector<T>& host) {
    if (host.empty()) return cudaSuccess;
    cudaError_t e = cudaMalloc(&ptr_, host.size() * sizeof(T));
    if (e != cudaSuccess) return e;
    return cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  cudaError_t Allocate(size_t bytes) { return bytes == 0 ? cudaSuccess : cudaMalloc(&ptr_, bytes); }
  T* get() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// The operands every FP8 GEMM here shares: e4m3 x e4m3, both K-major (A row-major, B^T
// column-major), BF16 D row-major, 16-byte aligned loads (8 BF16 for D).
#define GEMMPROF_CUTLASS_E4M3_OPERANDS          \
  using ElementA = cutlass::float_e4m3_t;       \
  using ElementB = cutlass::float_e4m3_t;       \
  using ElementD = cutlass::bfloat16_t;         \
  using LayoutA = cutlass::layout::RowMajor;    \
  using LayoutB = cutlass::layout::ColumnMajor; \
  using LayoutD = cutlass::layout::RowMajor;    \
  static constexpr int kAlignA = 16, kAlignB = 16, kAlignD = 8

// The scale layout of an instantiation whose B^T scales are ScaleN rows tall: A's 1x128, B^T's
// 1x128 (ScaleN 1) or 128x128 (128), K-major as the block-quantization kernels write them
// (block_gemm_kernels.h). kRowScales: fp8-rowwise's vectors (one scale per row of A and of
// B^T) read as 1x128 scales equal along K: MN-major, whose K-block stride is a runtime value
// (RowScaleLayout sets it to 0), so each K tile's promotion applies the row's and the
// column's scale.
inline constexpr int kRowScales = 0;
template <int ScaleN>
struct BlockScaleConfig {
  using type = cutlass::detail::Sm90BlockwiseScaleConfig<1, ScaleN, 128, cute::GMMA::Major::K,
                                                         cute::GMMA::Major::K>;
};
template <>
struct BlockScaleConfig<kRowScales> {
  using type = cutlass::detail::Sm90BlockwiseScaleConfig<1, 1, 128, cute::GMMA::Major::MN,
                                                         cute::GMMA::Major::MN>;
};

// What every block-scaled instantiation shares: the operands above (A [m, k], B [k, n]
// stored as B^T [n, k], out [m, n]); tile TileM x 128 x 128, cluster 1x2x1 (1xClusterN in the
// _IN form: the overlapped forms run without a cluster); the scales of BlockScaleConfig<ScaleN>
// (128: a weight's 128x128 blocks, 1: a gradient's 1x128, kRowScales). Schedule: Cooperative (TileM
// = 128, two consumer warp groups on one tile) or Pingpong (TileM = 64, the two warp groups
// alternate tiles, so one's epilogue overlaps the other's mainloop; their mainloops, block-scale
// promotion included, take turns). M, N of one group need not be multiples of the tile
// (predicated). Macros, not templates: the host compiler rejects CUTLASS's collective builders in a
// dependent context, so each .cu spells its struct out at namespace scope.
#define GEMMPROF_CUTLASS_BLOCK_GEMM_COMMON(ScaleN, TileM, Schedule) \
  GEMMPROF_CUTLASS_BLOCK_GEMM_COMMON_IN(ScaleN, TileM, Schedule, 2)
#define GEMMPROF_CUTLASS_BLOCK_GEMM_COMMON_IN(ScaleN, TileM, Schedule, ClusterN)                  \
  GEMMPROF_CUTLASS_E4M3_OPERANDS;                                                                 \
  static constexpr const char* kSchedule = #Schedule;                                             \
  using TileShape = cute::Shape<cute::Int<TileM>, cute::_128, cute::_128>;                        \
  using ClusterShape = cute::Shape<cute::_1, cute::Int<ClusterN>, cute::_1>;                      \
  static constexpr bool kRowwiseScales = ScaleN == ::gemmprof::kernels::cutlass_gemm::kRowScales; \
  using ScaleConfig = typename ::gemmprof::kernels::cutlass_gemm::BlockScaleConfig<ScaleN>::type; \
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());                                    \
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB())

// The grouped form, as a plain struct named `Name`: per-group pointer arrays, any size
// per group.
#define GEMMPROF_CUTLASS_BLOCK_GEMM_TYPES(Name, ScaleN, TileM, Schedule)                           \
  struct Name {                                                                                    \
    GEMMPROF_CUTLASS_BLOCK_GEMM_COMMON(ScaleN, TileM, Schedule);                                   \
    static_assert(!kRowwiseScales, "row-wise scales are read by the batched forms only");          \
    using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;             \
    using Epilogue = cutlass::epilogue::collective::CollectiveBuilder<                             \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,              \
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD*, kAlignD,    \
        ElementD, LayoutD*, kAlignD, cutlass::epilogue::PtrArrayTmaWarpSpecialized##Schedule,      \
        cutlass::epilogue::fusion::LinearCombination<ElementD, float, void, float>>::CollectiveOp; \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA,                             \
        cute::tuple<LayoutA*, LayoutSFA*>, kAlignA, ElementB, cute::tuple<LayoutB*, LayoutSFB*>,   \
        kAlignB, float, TileShape, ClusterShape,                                                   \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelPtrArrayTmaWarpSpecialized##Schedule##FP8Blockwise>::CollectiveOp;    \
    using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;         \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

// "tile 128x128x128, cluster 1x2x1, Cooperative, 6 stages" of an instantiation `T`.
template <class T>
std::string ConfigOf() {
  return "tile " + std::to_string(cute::size<0>(typename T::TileShape{})) + "x" +
         std::to_string(cute::size<1>(typename T::TileShape{})) + "x" +
         std::to_string(cute::size<2>(typename T::TileShape{})) + ", cluster " +
         std::to_string(cute::size<0>(typename T::ClusterShape{})) + "x" +
         std::to_string(cute::size<1>(typename T::ClusterShape{})) + "x1, " + T::kSchedule + ", " +
         std::to_string(T::Mainloop::DispatchPolicy::Stages) + " stages";
}

// What both forms share: the CUTLASS device adapter, its workspace, the launch, and
// the checks and initialization that end their preparation.
template <class Gemm>
class AdapterInstance : public Instance {
 public:
  cudaError_t Run(cudaStream_t stream) override {
    const cutlass::Status s = gemm_.run(stream);
    if (s != cutlass::Status::kSuccess) {
      const cudaError_t e = cudaGetLastError();
      return e != cudaSuccess ? e : cudaErrorLaunchFailure;
    }
    return cudaSuccess;
  }

 protected:
  static cutlass::KernelHardwareInfo HardwareInfo(int device) {
    cutlass::KernelHardwareInfo hw;
    hw.device_id = device;
    hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    return hw;
  }

  // can_implement, the workspace, initialize: "" when ready, else what stopped it
  // (*unsupported: CUTLASS refused `what`, e.g. "these groups").
  std::string Initialize(const typename Gemm::Arguments& args, const char* what,
                         bool* unsupported) {
    cutlass::Status s = gemm_.can_implement(args);
    if (s != cutlass::Status::kSuccess) {
      *unsupported = true;
      return std::string("CUTLASS cannot implement ") + what + ": " +
             cutlass::cutlassGetStatusString(s);
    }
    cudaError_t e = workspace_.Allocate(Gemm::get_workspace_size(args));
    if (e != cudaSuccess) return std::string("allocating the workspace: ") + cudaGetErrorName(e);
    s = gemm_.initialize(args, workspace_.get());
    if (s != cutlass::Status::kSuccess) {
      e = cudaGetLastError();
      return std::string("initializing the kernel: ") + cutlass::cutlassGetStatusString(s) +
             (e != cudaSuccess ? std::string(" (") + cudaGetErrorName(e) + ")" : "");
    }
    return "";
  }

  Gemm gemm_;
  DeviceArray<uint8_t> workspace_;
};

// A prepared grouped GEMM of the instantiation `T` (a GEMMPROF_CUTLASS_BLOCK_GEMM_TYPES
// struct).
template <class T>
class BlockGemm final : public AdapterInstance<typename T::Gemm> {
  using ElementA = typename T::ElementA;
  using ElementB = typename T::ElementB;
  using ElementD = typename T::ElementD;
  using ScaleConfig = typename T::ScaleConfig;
  using LayoutSFA = typename T::LayoutSFA;
  using LayoutSFB = typename T::LayoutSFB;
  using Gemm = typename T::Gemm;
  using StrideA = typename T::Kernel::InternalStrideA;
  using StrideB = typename T::Kernel::InternalStrideB;
  using StrideD = typename T::Kernel::InternalStrideD;
  using Problem = typename T::ProblemShape::UnderlyingProblemShape;

 public:
  static Made Make(const std::vector<Group>& groups, int device) {
    Made made;
    auto gemm = std::unique_ptr<BlockGemm>(new BlockGemm());
    made.error = gemm->Prepare(groups, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  std::string Config() const override { return ConfigOf<T>(); }

 private:
  BlockGemm() = default;

  // Returns "" when ready, else what stopped it (*unsupported: CUTLASS refused).
  std::string Prepare(const std::vector<Group>& groups, int device, bool* unsupported) {
    const int count = static_cast<int>(groups.size());
    std::vector<Problem> problems;
    std::vector<const ElementA*> a;
    std::vector<const ElementB*> b;
    std::vector<ElementD*> d;
    std::vector<StrideA> stride_a;
    std::vector<StrideB> stride_b;
    std::vector<StrideD> stride_d;
    std::vector<const float*> sfa, sfb;
    std::vector<LayoutSFA> layout_sfa;
    std::vector<LayoutSFB> layout_sfb;
    for (const Group& g : groups) {
      problems.push_back(Problem(g.m, g.n, g.k));
      a.push_back(static_cast<const ElementA*>(g.a));
      b.push_back(static_cast<const ElementB*>(g.bt));
      d.push_back(static_cast<ElementD*>(g.c));
      stride_a.push_back(cutlass::make_cute_packed_stride(StrideA{}, {g.m, g.k, 1}));
      stride_b.push_back(cutlass::make_cute_packed_stride(StrideB{}, {g.n, g.k, 1}));
      stride_d.push_back(cutlass::make_cute_packed_stride(StrideD{}, {g.m, g.n, 1}));
      sfa.push_back(g.a_scales);
      sfb.push_back(g.bt_scales);
      // The kernel derives these from the problem size itself; they are passed as its
      // interface asks.
      layout_sfa.push_back(ScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(g.m, g.n, g.k, 1)));
      layout_sfb.push_back(ScaleConfig::tile_atom_to_shape_SFB(cute::make_shape(g.m, g.n, g.k, 1)));
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
    if (e == cudaSuccess) e = sfa_.Upload(sfa);
    if (e == cudaSuccess) e = sfb_.Upload(sfb);
    if (e == cudaSuccess) e = layout_sfa_.Upload(layout_sfa);
    if (e == cudaSuccess) e = layout_sfb_.Upload(layout_sfb);
    if (e != cudaSuccess)
      return std::string("preparing the argument arrays: ") + cudaGetErrorName(e);

    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGrouped,
                                  {count, problems_.get(), host_problems_.data()},
                                  {a_.get(), stride_a_.get(), b_.get(), stride_b_.get(), sfa_.get(),
                                   layout_sfa_.get(), sfb_.get(), layout_sfb_.get()},
                                  {{}, nullptr, stride_d_.get(), d_.get(), stride_d_.get()},
                                  this->HardwareInfo(device)};
    auto& fusion = args.epilogue.thread;
    fusion.alpha = 1.0f;
    fusion.beta = 0.0f;
    fusion.alpha_ptr = nullptr;
    fusion.beta_ptr = nullptr;
    fusion.alpha_ptr_array = nullptr;
    fusion.beta_ptr_array = nullptr;
    fusion.dAlpha = {cute::_0{}, cute::_0{}, 0};
    fusion.dBeta = {cute::_0{}, cute::_0{}, 0};

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
  DeviceArray<const float*> sfa_, sfb_;
  DeviceArray<LayoutSFA> layout_sfa_;
  DeviceArray<LayoutSFB> layout_sfb_;
};

// The batched form, for groups of one size stored back to back: CUTLASS's Hopper
// warp-specialized blockwise-scaled GEMM with a batch count L (no per-group pointer
// arrays or TMA descriptor updates between groups). The scales of group g follow group
// g-1's, as the quantization kernels write them. EpilogueSchedule: TmaWarpSpecialized
// for Pingpong, TmaWarpSpecializedCooperative for Cooperative.
#define GEMMPROF_CUTLASS_BATCHED_BLOCK_GEMM_TYPES(Name, ScaleN, TileM, Schedule, EpilogueSchedule) \
  GEMMPROF_CUTLASS_BATCHED_BLOCK_GEMM_TYPES_IN(Name, ScaleN, TileM, Schedule, EpilogueSchedule, 2, \
                                               cutlass::epilogue::collective::EpilogueTileAuto,    \
                                               AsBuilt)
// The epilogue CUTLASS's builder makes, unchanged.
template <class Epilogue>
using AsBuilt = Epilogue;
// An epilogue piece of 64x128, the EpilogueTile of the 64-row pingpong forms that store a
// warp group's whole tile at once (one shared-memory buffer and one TMA store per tile
// rather than CUTLASS's four 64x32 pieces: their tiles end after a few K tiles, so the
// epilogue is as long as the mainloop; the grouped row-wise form measured slower with it:
// docs/benchmarks.md, "MoE as servers run it") and of the 128-row one-K-tile pingpong form
// (half its tile at a time: CUTLASS's pingpong epilogue takes 64 rows).
using Epilogue64x128 = cute::Shape<cute::_64, cute::_128>;
// EpilogueTile: how much of the tile the epilogue stores at a time (EpilogueTileAuto: CUTLASS's
// choice, 64x32 for pingpong and 128x32 for cooperative). EpilogueOf: the epilogue used, given
// the one CUTLASS's builder makes (AsBuilt, or PingpongDeferredStoreEpilogue of
// deferred_store_epilogue.cuh); the mainloop's stages fit around its shared memory.
#define GEMMPROF_CUTLASS_BATCHED_BLOCK_GEMM_TYPES_IN(                                              \
    Name, ScaleN, TileM, Schedule, EpilogueSchedule, ClusterN, EpilogueTile, EpilogueOf)           \
  struct Name {                                                                                    \
    GEMMPROF_CUTLASS_BLOCK_GEMM_COMMON_IN(ScaleN, TileM, Schedule, ClusterN);                      \
    using Epilogue = EpilogueOf<typename cutlass::epilogue::collective::CollectiveBuilder<         \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,              \
        EpilogueTile, float, float, void, LayoutD, kAlignD, ElementD, LayoutD, kAlignD,            \
        cutlass::epilogue::EpilogueSchedule,                                                       \
        cutlass::epilogue::fusion::LinearCombination<ElementD, float, void,                        \
                                                     float>>::CollectiveOp>;                       \
    using Mainloop = cutlass::gemm::collective::CollectiveBuilder<                                 \
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA,                             \
        cute::tuple<LayoutA, LayoutSFA>, kAlignA, ElementB, cute::tuple<LayoutB, LayoutSFB>,       \
        kAlignB, float, TileShape, ClusterShape,                                                   \
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(                        \
            sizeof(typename Epilogue::SharedStorage))>,                                            \
        cutlass::gemm::KernelTmaWarpSpecialized##Schedule##FP8Blockwise>::CollectiveOp;            \
    using Kernel =                                                                                 \
        cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>; \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

// The batched form above with the consumer mainloop of overlapped_mainloop.cuh (each K
// block's promotion overlapped with the next block's MMAs), and no cluster (1x1x1): pairing
// CTAs costs the expert GEMMs more than the operand multicast saves (docs/benchmarks.md,
// "Kernel forms"); the rest is the base's. EpilogueTile and EpilogueOf as in the _IN
// form; Note ("" or e.g. ", epilogue tile 64x128") ends its description.
#define GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(                        \
    Name, ScaleN, TileM, Schedule, EpilogueSchedule, EpilogueTile, EpilogueOf, Note) \
  GEMMPROF_CUTLASS_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(                                \
      Name, ScaleN, TileM, Schedule, EpilogueSchedule, EpilogueTile, EpilogueOf,     \
      OverlappedBlockwiseMainloop, ", promotion overlapped" Note)
// The same with the pingpong mainloops run at the same time (concurrent_mainloop.cuh, which
// the .cu using it includes).
#define GEMMPROF_CUTLASS_CONCURRENT_BATCHED_BLOCK_GEMM_TYPES(Name, ScaleN, EpilogueTile, \
                                                             EpilogueOf, Note)           \
  GEMMPROF_CUTLASS_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(                                    \
      Name, ScaleN, 64, Pingpong, TmaWarpSpecialized, EpilogueTile, EpilogueOf,          \
      ConcurrentBlockwiseMainloop, ", promotion overlapped, mainloops concurrent" Note)
// MainloopOf: the consumer mainloop wrapped around CUTLASS's collective.
#define GEMMPROF_CUTLASS_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(                                        \
    Name, ScaleN, TileM, Schedule, EpilogueSchedule, EpilogueTile, EpilogueOf, MainloopOf, Note)   \
  GEMMPROF_CUTLASS_BATCHED_BLOCK_GEMM_TYPES_IN(Name##Base, ScaleN, TileM, Schedule,                \
                                               EpilogueSchedule, 1, EpilogueTile, EpilogueOf);     \
  struct Name : Name##Base {                                                                       \
    /* the base's name is replaced (and referenced here, or nvcc warns it is unused) */            \
    static_assert(Name##Base::kSchedule != nullptr);                                               \
    static constexpr const char* kSchedule = #Schedule Note;                                       \
    using Mainloop = MainloopOf<Name##Base::Mainloop>;                                             \
    using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, \
                                                        Name##Base::Epilogue>;                     \
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;                              \
  }

// A batched row-wise problem as the batched block forms take it: its first group, the
// scale vectors as its scales (kRowScales instantiations).
inline Group RowwiseAsGroup(const RowwiseProblem& p) {
  return Group{p.m, p.n, p.k, p.a, p.bt, p.c, p.a_scales, p.bt_scales};
}

// The concurrent forms' refusal: their warp groups' K loops run at once only where two tiles'
// K loops fit the stages (concurrent_mainloop.cuh); the kernel does not check.
inline Made RefusedConcurrentK(int k, int max_k_tiles) {
  Made refused;
  refused.unsupported = true;
  refused.error =
      "its warp groups' K loops run at once only up to K = " + std::to_string(max_k_tiles * 128) +
      " (" + std::to_string(max_k_tiles) + " K tiles, half its stages); this K is " +
      std::to_string(k);
  return refused;
}

// The one-K-tile forms' refusal (overlapped_mainloop.cuh, OneKTile; the kernel does not
// check).
inline Made RefusedOneKTile(int k) {
  Made refused;
  refused.unsupported = true;
  refused.error =
      "it takes one K tile per output tile: K up to 128; this K is " + std::to_string(k);
  return refused;
}

// A row-wise scale vector per group seen as the MN-major blockwise layout `compact` (of
// BlockScaleConfig<kRowScales>): the same scale for every K block (stride 0), group l's
// `rows` scales after group l-1's. Batched forms only (BlockGemm, the grouped form, reads
// the block quantizers' layouts).
template <class Layout>
Layout RowScaleLayout(const Layout& compact, int32_t rows) {
  return Layout(cute::shape(compact),
                cute::make_stride(cute::get<0>(cute::stride(compact)),
                                  cute::make_stride(cute::_0{}, int32_t{0}), rows));
}

template <class T>
class BatchedBlockGemm final : public AdapterInstance<typename T::Gemm> {
  using Gemm = typename T::Gemm;
  using ScaleConfig = typename T::ScaleConfig;

 public:
  static Made Make(const Group& first, int groups, int device) {
    Made made;
    auto gemm = std::unique_ptr<BatchedBlockGemm>(new BatchedBlockGemm());
    made.error = gemm->Prepare(first, groups, device, &made.unsupported);
    if (made.error.empty()) made.instance = std::move(gemm);
    return made;
  }

  std::string Config() const override { return ConfigOf<T>() + ", groups as one batch"; }

 private:
  BatchedBlockGemm() = default;

  std::string Prepare(const Group& g, int l, int device, bool* unsupported) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return std::string("selecting the device: ") + cudaGetErrorName(e);
    using StrideA = typename T::Kernel::StrideA;
    using StrideB = typename T::Kernel::StrideB;
    using StrideD = typename T::Kernel::StrideD;
    const auto stride_a =
        cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(g.m, g.k, l));
    const auto stride_b =
        cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(g.n, g.k, l));
    const auto stride_d =
        cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(g.m, g.n, l));
    auto layout_sfa = ScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(g.m, g.n, g.k, l));
    auto layout_sfb = ScaleConfig::tile_atom_to_shape_SFB(cute::make_shape(g.m, g.n, g.k, l));
    if constexpr (T::kRowwiseScales) {
      layout_sfa = RowScaleLayout(layout_sfa, g.m);
      layout_sfb = RowScaleLayout(layout_sfb, g.n);
    }
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {g.m, g.n, g.k, l},
        {static_cast<const typename T::ElementA*>(g.a), stride_a,
         static_cast<const typename T::ElementB*>(g.bt), stride_b, g.a_scales, layout_sfa,
         g.bt_scales, layout_sfb},
        {{}, nullptr, stride_d, static_cast<typename T::ElementD*>(g.c), stride_d},
        this->HardwareInfo(device)};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    return this->Initialize(args, "this batch", unsupported);
  }
};

}  // namespace gemmprof::kernels::cutlass_gemm
