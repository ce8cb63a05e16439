// The CUTLASS GEMMs (kernels/cutlass/) as the runner uses them, each an alternative to
// an item's cuBLASLt call that the runner times against it (per-item choice):
//  * fp8-block: an item's groups (MoE experts; one group for a dense GEMM) in ONE launch,
//    per group C_g = A_g * B^T_g^T with 1x128 scales on A and 128x128 (weights) or 1x128
//    (wgrad's dY^T) scales on B^T, BF16 out, the block scales applied per K block in
//    fp32 (promotion). It reads the block scales as the quantization kernels write them
//    (row-major, before cuBLASLt's layout conversion), so either library can run an
//    item's operands. Instantiated for what fp8-block makes: e4m3 x e4m3 with 128x128
//    B^T scales (fprop, dgrad: B^T is the weight) and 1x128 (wgrad: B^T is dY^T).
//  * fp8-rowwise: an item's groups in ONE launch (batched, or grouped with any size per
//    group) with a per-row scale on A and on B^T applied in the epilogue, FP8 fast
//    accumulation (fprop's setting) or partial sums promoted to fp32 (dgrad's, wgrad's).
// Both read the operands and write the output where cuBLASLt does.
//
// Built only for sm_90a (Hopper), only when CMake found CUTLASS (deploy/install_cutlass.sh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/quant/quant.h"

namespace gemmprof::kernels {

namespace cutlass_gemm {
class Instance;
}

// One group's operands, as block_gemm_kernels.h describes them: A [m, k] and B^T [n, k]
// FP8, C [m, n] BF16, row-major; a_scales [m, ceil(k/128)]; bt_scales [ceil(n/128),
// ceil(k/128)] (128x128) or [n, ceil(k/128)] (1x128), row-major.
struct BlockGemmGroup {
  int64_t m = 0, n = 0, k = 0;  // m may be 0 (an expert with no tokens); n, k >= 1
  const void* a = nullptr;
  const void* bt = nullptr;
  __nv_bfloat16* c = nullptr;
  const float* a_scales = nullptr;
  const float* bt_scales = nullptr;
};

struct BlockGemmSpec {
  core::quant::Fp8Format a_format = core::quant::Fp8Format::kE4M3;
  core::quant::Fp8Format bt_format = core::quant::Fp8Format::kE4M3;
  bool bt_128x128 = true;  // B^T scales 128x128 (a weight); false: 1x128
  std::vector<BlockGemmGroup> groups;
};

// The forms instantiated; which is fastest depends on the shape (the runner times them
// all). Cooperative: tile 128x128x128, both consumer warp groups on one tile. Pingpong:
// tile 64x128x128, the warp groups alternate tiles so one's epilogue overlaps the
// other's MMAs (wins short K loops, as in wgrad, and small GEMMs). Overlapped: each K
// block's scale promotion runs while the next block's MMAs do (CUTLASS's own mainloop
// waits for a block's MMAs, then promotes, then issues the next block's): cooperative
// for 128x128 B^T scales, pingpong for both. Concurrent: the overlapped pingpong form
// with the two warp groups' K loops running at once rather than in turns where they fit
// half the pipeline's stages (wgrad's short K loops), for 1x128 B^T scales.
enum class BlockGemmSchedule {
  kGrouped,                    // any size per group: pointer arrays, TMA descriptors per group
  kBatched,                    // groups of one size stored back to back: one batched GEMM
  kBatchedPingpong,            // kBatched, pingpong
  kBatchedOverlapped,          // kBatched, promotion overlapped (128x128 B^T scales)
  kBatchedOverlappedPingpong,  // kBatchedPingpong, promotion overlapped
  kBatchedConcurrentPingpong,  // kBatchedOverlappedPingpong, the warp groups' K loops at once
                               // (1x128 B^T scales)
};
inline constexpr BlockGemmSchedule kBlockGemmSchedules[] = {
    BlockGemmSchedule::kGrouped,
    BlockGemmSchedule::kBatched,
    BlockGemmSchedule::kBatchedPingpong,
    BlockGemmSchedule::kBatchedOverlapped,
    BlockGemmSchedule::kBatchedOverlappedPingpong,
    BlockGemmSchedule::kBatchedConcurrentPingpong};

// "grouped", "batched", "batched pingpong", "batched overlapped", "batched overlapped
// pingpong", "batched concurrent pingpong".
const char* BlockGemmScheduleName(BlockGemmSchedule schedule);

// fp8-rowwise: per group C [m, n] = a_scales[m] * bt_scales[n] * A [m, k] * B^T [n, k]^T,
// BF16 out. A dense GEMM is one group; MoE experts are one group each (m may be 0: an
// expert that got no tokens). A group's a_scales hold m floats and its bt_scales n.
struct RowwiseGemmSpec {
  core::quant::Fp8Format a_format = core::quant::Fp8Format::kE4M3;
  core::quant::Fp8Format bt_format = core::quant::Fp8Format::kE4M3;
  std::vector<BlockGemmGroup> groups;
  bool fast_accum = true;  // false: partial sums promoted to fp32 (the Split instantiations)
};

// Pingpong and cooperative forms (block_gemm_kernels.h says which serves what). The tile
// forms run the groups as one batch (one size, stored back to back); kGrouped takes any
// size per group.
enum class RowwiseGemmSchedule {
  kTile64,           // tile 64x128x128, cluster 1x2x1: small M
  kTile128,          // tile 128x128x128, cluster 2x1x1
  kTile128Swizzle8,  // kTile128, the tile scheduler's swizzle 8 (L2 reuse on big problems)
  kTile128N,         // tile 128x128x128, cluster 1x2x1 (experts of one M tile)
  kCooperative,      // cooperative 128x128x128, cluster 1x2x1
  kGrouped,          // pointer arrays, tile 64x128x128 (sm_100a: its own form); groups > 1
  kCooperativeSolo,  // cooperative 128x128x128, no cluster
  kTile128Solo,      // tile 128x128x128, no cluster; FP8 fast accumulation only
  // Promoted accumulation only (fast_accum false), batched: the scales applied at each K
  // tile's promotion, a plain epilogue (block_gemm_kernels.h, "Promoted").
  kPromoted,             // pingpong 64x128x128, no cluster
  kPromotedConcurrent,   // the same, the warp groups' K loops at once (K <= 512)
  kOneKTile,             // K <= 128: pingpong 128x128x128, no partial accumulator
  kOneKTileCooperative,  // K <= 128: cooperative 256x128x128
};
inline constexpr RowwiseGemmSchedule kRowwiseGemmSchedules[] = {
    RowwiseGemmSchedule::kTile64,          RowwiseGemmSchedule::kTile128,
    RowwiseGemmSchedule::kTile128Swizzle8, RowwiseGemmSchedule::kTile128N,
    RowwiseGemmSchedule::kCooperative,     RowwiseGemmSchedule::kGrouped,
    RowwiseGemmSchedule::kCooperativeSolo, RowwiseGemmSchedule::kTile128Solo,
    RowwiseGemmSchedule::kPromoted,        RowwiseGemmSchedule::kPromotedConcurrent,
    RowwiseGemmSchedule::kOneKTile,        RowwiseGemmSchedule::kOneKTileCooperative};
// The forms that apply the scales at promotion (promoted accumulation only).
inline constexpr bool IsPromotedRowwise(RowwiseGemmSchedule schedule) {
  return schedule == RowwiseGemmSchedule::kPromoted ||
         schedule == RowwiseGemmSchedule::kPromotedConcurrent ||
         schedule == RowwiseGemmSchedule::kOneKTile ||
         schedule == RowwiseGemmSchedule::kOneKTileCooperative;
}
// The forms instantiated with FP8 fast accumulation only (promoted accumulation refused).
inline constexpr bool IsFastOnlyRowwise(RowwiseGemmSchedule schedule) {
  return schedule == RowwiseGemmSchedule::kTile128Solo;
}
// "pingpong 64x128", "pingpong 128x128", "pingpong 128x128 swizzle 8", "pingpong 128x128
// cluster 1x2", "cooperative 128x128", "grouped", "cooperative 128x128 no cluster",
// "pingpong 128x128 no cluster", "pingpong 64x128 scales at promotion",
// "concurrent 64x128 scales at promotion", "pingpong 128x128 one K tile", "cooperative
// 256x128 one K tile".
const char* RowwiseGemmScheduleName(RowwiseGemmSchedule schedule);

// int8-rowwise (serving_gemm_kernels.h): a RowwiseGemmSpec of one group whose operands
// are INT8 (the formats and fast_accum ignored); exact INT32 accumulation.
enum class Int8RowwiseSchedule {
  kTile64,          // pingpong 64x128x128, cluster 1x2x1: decode-size M
  kTile128,         // pingpong 128x128x128, cluster 2x1x1
  kCooperative256,  // cooperative 128x256x128, cluster 2x1x1: large M
};
inline constexpr Int8RowwiseSchedule kInt8RowwiseSchedules[] = {
    Int8RowwiseSchedule::kTile64, Int8RowwiseSchedule::kTile128,
    Int8RowwiseSchedule::kCooperative256};
// "pingpong 64x128", "pingpong 128x128", "cooperative 128x256".
const char* Int8RowwiseScheduleName(Int8RowwiseSchedule schedule);

// w8a16 / w4a16 (serving_gemm_kernels.h): C [m, n] = A [m, k] * W'^T, A BF16, W' = the
// INT8 or INT4 weight [n, k] (row-major; INT4 packed two per byte, low nibble first) times
// its BF16 scales [ceil(k / group), n] (n fastest; w8a16: group = k).
struct WeightOnlyGemmSpec {
  bool int4 = true;  // w4a16; false: w8a16
  int64_t m = 0, n = 0, k = 0;
  const __nv_bfloat16* a = nullptr;
  const void* w = nullptr;
  const __nv_bfloat16* scales = nullptr;
  int64_t group = 128;
  __nv_bfloat16* c = nullptr;
  // w4a16: `w` in the kernels' layout (CutlassGemm::ReorderW4), made once and shared by
  // every form made from the spec; required for INT4, unused for INT8.
  std::shared_ptr<const void> w4_reordered;
};
// CUTLASS: cooperative, tile 128 weight rows x N tokens x 64.
// kTile16StreamK, kTile64StreamK, kTile128StreamK: the 16-, 64- and 128-token tiles with
// K split across CTAs (stream-K), for outputs of fewer tiles than the device has SMs or a
// part-empty last wave.
// kDecode: not CUTLASS but the project's own w4a16 decode kernel (kernels/cuda/
// w4a16_decode.h): up to 16 tokens, INT4 only, made beside the CUTLASS forms so the
// per-item choice measures it against them; its K splits add with atomics.
// kDecodeCluster: the same kernel with the K splits of a column block as one cluster,
// adding through distributed shared memory.
enum class WeightOnlySchedule {
  kTile16,
  kTile16StreamK,
  kTile64,
  kTile64StreamK,
  kTile128,
  kTile128StreamK,
  kDecode,
  kDecodeCluster
};
inline constexpr WeightOnlySchedule kWeightOnlySchedules[] = {
    WeightOnlySchedule::kTile16,  WeightOnlySchedule::kTile16StreamK,
    WeightOnlySchedule::kTile64,  WeightOnlySchedule::kTile64StreamK,
    WeightOnlySchedule::kTile128, WeightOnlySchedule::kTile128StreamK,
    WeightOnlySchedule::kDecode,  WeightOnlySchedule::kDecodeCluster};
// "128x16 tokens", "128x16 tokens stream-K", "128x64 tokens", "128x64 tokens stream-K",
// "128x128 tokens", "128x128 tokens stream-K", "decode 256x16", "decode 256x16 cluster".
const char* WeightOnlyScheduleName(WeightOnlySchedule schedule);
// Whether the schedule is a CUTLASS instantiation (the decode ones are not).
bool IsCutlassSchedule(WeightOnlySchedule schedule);

class CutlassGemm {
 public:
  // Prepares the kernel for `spec` on CUDA device `device` (compute capability `sm`, e.g.
  // 90). FailedPrecondition, with the reason, when it cannot run here: a build without
  // CUTLASS, a device other than sm_90 (sm_100: kGrouped only, with the sm_100a build of
  // the grouped form, which no Blackwell GPU has run), a type combination that is not
  // instantiated, or groups CUTLASS cannot implement (K % 16, N % 8, sizes over 2^31),
  // kBatched for groups of different sizes or not stored back to back; InvalidArgument for
  // no groups or negative sizes; a CUDA failure as Internal.
  static absl::StatusOr<CutlassGemm> Create(const BlockGemmSpec& spec, BlockGemmSchedule schedule,
                                            int device, int sm);
  // fp8-rowwise. FailedPrecondition, with the reason, as above (sm_100: kGrouped only;
  // kGrouped for one group: the batched forms run it); InvalidArgument for no groups or
  // negative sizes.
  static absl::StatusOr<CutlassGemm> CreateRowwise(const RowwiseGemmSpec& spec,
                                                   RowwiseGemmSchedule schedule, int device,
                                                   int sm);

  // int8-rowwise. FailedPrecondition, with the reason, where it cannot run here: a build
  // without CUTLASS, a device other than sm_90, more than one group, sizes CUTLASS cannot
  // implement (K % 16, N % 8); InvalidArgument for negative sizes.
  static absl::StatusOr<CutlassGemm> CreateInt8Rowwise(const RowwiseGemmSpec& spec,
                                                       Int8RowwiseSchedule schedule, int device,
                                                       int sm);
  // w4a16: a copy of spec.w in the layout the kernels read (each thread's nibbles
  // together), enqueued on `stream` after whatever wrote spec.w; outside any timing. The
  // refusals of CreateWeightOnly; ResourceExhausted when the copy does not fit;
  // InvalidArgument for an INT8 spec.
  static absl::StatusOr<std::shared_ptr<const void>> ReorderW4(const WeightOnlyGemmSpec& spec,
                                                               int device, int sm,
                                                               cudaStream_t stream);
  // w8a16 / w4a16, the same refusals, and: K and the group multiples of the kernels'
  // 64-wide K tile unless the group is K; INT4 rows 16-byte aligned (K % 32).
  // InvalidArgument for an INT4 spec without w4_reordered. kDecode: FailedPrecondition
  // for w8a16 and for what W4a16Decode::Unsupported names (more than 16 tokens, ...); it
  // repacks spec.w (not w4_reordered) into its own layout on `stream`, outside any timing.
  static absl::StatusOr<CutlassGemm> CreateWeightOnly(const WeightOnlyGemmSpec& spec,
                                                      WeightOnlySchedule schedule, int device,
                                                      int sm, cudaStream_t stream = nullptr);

  CutlassGemm(CutlassGemm&&) noexcept;
  CutlassGemm& operator=(CutlassGemm&&) noexcept;
  ~CutlassGemm();

  // Enqueues the GEMM (every group's) as one kernel launch (graph-capturable).
  absl::Status Enqueue(cudaStream_t stream) const;
  // "CUTLASS 4.2.0 sm90a grouped FP8 blockwise (e4m3 x e4m3, B^T 128x128 scales; tile
  // 128x128x128, cluster 1x2x1, Cooperative, 6 stages), 128 groups in one launch".
  std::string Description() const;

 private:
  CutlassGemm() = default;
  std::unique_ptr<cutlass_gemm::Instance> instance_;
  std::string description_;
  std::shared_ptr<const void> owned_;  // device memory it reads (w4a16's reordered weight)
};

}  // namespace gemmprof::kernels
