#include "kernels/quant/operand_quantizer.h"

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

using core::Recipe;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool IsTensorScaled(Recipe r) { return r == Recipe::kFp8Current || r == Recipe::kFp8Delayed; }

// Sizes of the scale buffers: row-major as written, and in cuBLASLt's layout.
struct ScaleSizes {
  int64_t raw = 0, raw_t = 0, gemm = 0;  // bytes
  int64_t gemm_t = 0;  // fp8-block (one group), mxfp8: the transposed copy's, cuBLASLt's layout
};

// Of one group.
ScaleSizes GroupScaleBytes(const OperandConfig& c) {
  ScaleSizes s;
  const int64_t r = c.rows, k = c.cols;
  switch (c.recipe) {
    case Recipe::kFp8Block: {
      const int64_t br = c.weight ? 128 : 1;
      s.raw = CeilDiv(r, br) * CeilDiv(k, 128) * 4;
      s.raw_t = c.weight ? s.raw : k * CeilDiv(r, 128) * 4;
      s.gemm = (c.weight ? Blk128ScaleFloats(r, k) : Vec128ScaleFloats(r, k)) * 4;
      if (c.groups == 1)
        s.gemm_t = (c.weight ? Blk128ScaleFloats(k, r) : Vec128ScaleFloats(k, r)) * 4;
      break;
    }
    case Recipe::kMxfp8:
      s.raw = r * CeilDiv(k, 32);
      s.raw_t = k * CeilDiv(r, 32);
      s.gemm = SwizzledScaleBytes(r, CeilDiv(k, 32));
      s.gemm_t = SwizzledScaleBytes(k, CeilDiv(r, 32));
      break;
    case Recipe::kNvfp4:
      s.raw = r * CeilDiv(k, 16);
      s.gemm = SwizzledScaleBytes(r, CeilDiv(k, 16));
      break;
    case Recipe::kFp8Rowwise:
      // cuBLASLt's outer-vector scales are the plain per-row vector: no second layout.
      s.raw = r * 4;
      break;
    case Recipe::kInt8Rowwise:
      s.raw = r * 4;
      break;
    case Recipe::kW8a16:
      s.raw = r * 2;
      break;
    case Recipe::kW4a16:
      s.raw = r * CeilDiv(k, c.w4_group) * 2;
      break;
    default:
      break;
  }
  return s;
}

// Of all groups: each buffer holds one group's scales after the other.
ScaleSizes ScaleBytes(const OperandConfig& c) {
  ScaleSizes s = GroupScaleBytes(c);
  s.raw *= c.groups;
  s.raw_t *= c.groups;
  s.gemm *= c.groups;
  return s;
}

int64_t DataBytes(const OperandConfig& c) {
  if (c.recipe == Recipe::kNvfp4 || c.recipe == Recipe::kW4a16) {
    return c.groups * c.rows * CeilDiv(c.cols, 2);
  }
  return c.groups * c.rows * c.cols;
}

}  // namespace

absl::Status CheckGroupedRecipe(core::Recipe recipe, int64_t groups, const std::string& what) {
  if (groups < 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": groups = ", groups, "; must be >= 1"));
  }
  if (groups == 1 ||
      (recipe != Recipe::kMxfp8 && recipe != Recipe::kNvfp4 && !core::IsServingRecipe(recipe))) {
    return absl::OkStatus();
  }
  return absl::UnimplementedError(absl::StrCat(std::string(core::ToString(recipe)),
                                               ": grouped GEMMs (groups = ", groups,
                                               ") are not implemented in the CUDA runner"));
}

int64_t OperandQuantizer::ExtraBytes(const OperandConfig& c, bool with_transpose) {
  if (c.recipe == Recipe::kBf16) return 0;
  const ScaleSizes s = ScaleBytes(c);
  const int64_t data = DataBytes(c);
  const int64_t workspace = c.recipe == Recipe::kFp8Current ? kCurrentScalingWorkspaceFloats : 0;
  return data + (with_transpose ? data + s.raw_t + s.gemm_t : 0) + s.raw + s.gemm +
         (c.amax_history_len + c.groups + 48 + workspace) * 4;
}

absl::StatusOr<OperandQuantizer> OperandQuantizer::Create(DevicePool& pool,
                                                          const OperandConfig& config,
                                                          const __nv_bfloat16* source,
                                                          bool with_transpose) {
  RETURN_IF_ERROR(CheckGroupedRecipe(config.recipe, config.groups, "operand " + config.slot));
  OperandQuantizer q;
  q.config_ = config;
  q.source_ = source;
  q.data_ = source;
  if (config.recipe == Recipe::kBf16) return q;
  const std::string& p = config.slot;
  const ScaleSizes s = ScaleBytes(config);
  ASSIGN_OR_RETURN(q.q_, pool.GetAs<uint8_t>(p + ".q", DataBytes(config)));
  q.data_ = q.q_;
  if (with_transpose && config.recipe != Recipe::kNvfp4 && config.recipe != Recipe::kFp8Rowwise &&
      !core::IsServingRecipe(config.recipe)) {
    ASSIGN_OR_RETURN(q.q_t_, pool.GetAs<uint8_t>(p + ".qt", DataBytes(config)));
    if (s.raw_t > 0) {
      ASSIGN_OR_RETURN(q.raw_scales_t_, pool.Get(p + ".st", s.raw_t));
    }
    if (s.gemm_t > 0) {
      ASSIGN_OR_RETURN(q.gemm_scales_t_, pool.Get(p + ".sgt", s.gemm_t));
    }
  }
  // One small buffer for the scalars: amax, scale, scale_inv, then the history, each on its own
  // 64-byte boundary: cuBLASLt refuses (NOT_SUPPORTED at launch, seen on H200 with cuBLASLt 13.1) a
  // per-tensor scale pointer that is only 8-byte aligned.
  constexpr int kStride = 16;  // floats
  const int64_t history = std::max(1, config.amax_history_len);
  ASSIGN_OR_RETURN(float* scalars,
                   pool.GetAs<float>(p + ".scalars", 3 * kStride + history + config.groups));
  q.amax_ = scalars;
  q.scale_ = scalars + kStride;
  q.scale_inv_ = scalars + 2 * kStride;
  q.history_ = scalars + 3 * kStride;
  q.group_amax_ = q.history_ + history;
  if (config.recipe == Recipe::kFp8Current) {
    ASSIGN_OR_RETURN(q.workspace_, pool.GetAs<float>(p + ".ws", kCurrentScalingWorkspaceFloats));
  }
  if (IsTensorScaled(config.recipe)) q.gemm_scale_ = q.scale_inv_;
  if (s.raw > 0) {
    ASSIGN_OR_RETURN(q.raw_scales_, pool.Get(p + ".s", s.raw));
    q.gemm_scale_ = q.raw_scales_;
  }
  if (s.gemm > 0) {
    ASSIGN_OR_RETURN(q.gemm_scales_, pool.Get(p + ".sg", s.gemm));
    q.gemm_scale_ = q.gemm_scales_;
  }
  return q;
}

cudaDataType_t OperandQuantizer::data_type() const {
  switch (config_.recipe) {
    case Recipe::kBf16:
      return CUDA_R_16BF;
    case Recipe::kNvfp4:
      return CUDA_R_4F_E2M1;
    case Recipe::kInt8Rowwise:
    case Recipe::kW8a16:
      return CUDA_R_8I;
    case Recipe::kW4a16:
      return CUDA_R_4I;
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      return config_.format == core::quant::Fp8Format::kE5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    default:
      return CUDA_R_8F_E4M3;
  }
}

std::optional<cublasLtMatmulMatrixScale_t> OperandQuantizer::scale_mode() const {
  switch (config_.recipe) {
    case Recipe::kBf16:
      return std::nullopt;
    case Recipe::kFp8Block:
      return config_.weight ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                            : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case Recipe::kMxfp8:
      return CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    case Recipe::kNvfp4:
      return CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    case Recipe::kFp8Rowwise:
      return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    default:
      return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  }
}

absl::Status OperandQuantizer::SeedHistory(cudaStream_t stream) const {
  if (config_.recipe != Recipe::kFp8Delayed) return absl::OkStatus();
  const int64_t n = config_.groups * config_.rows * config_.cols;
  CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(history_, 0, sizeof(float) * config_.amax_history_len, stream));
  CUDA_RETURN_IF_ERROR(Amax(source_, n, amax_, stream));
  CUDA_RETURN_IF_ERROR(RollAmaxHistory(history_, config_.amax_history_len, amax_, stream));
  // The scale the first step casts with (DelayedCastTranspose reads it and leaves the next),
  // and the amax it expects at 0.
  CUDA_RETURN_IF_ERROR(ScaleFromHistory(history_, config_.amax_history_len, config_.amax_algo,
                                        config_.format, scale_, scale_inv_, stream));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(amax_, 0, sizeof(float), stream));
  return absl::OkStatus();
}

absl::Status OperandQuantizer::CastGroups(cudaStream_t stream, uint8_t* out_t,
                                          float* amax_out) const {
  const OperandConfig& c = config_;
  if (out_t == nullptr || c.groups == 1) {
    // Without transposes the groups are one [groups*rows, cols] tensor: the cast is
    // element-wise with one scale, so one launch does every group.
    CUDA_RETURN_IF_ERROR(CastTranspose(source_, c.groups * c.rows, c.cols, scale_, c.format, q_,
                                       out_t, amax_out, stream));
    return absl::OkStatus();
  }
  // The transposed copy of [groups*rows, cols] is not the per-group transpose, so each
  // group is its own launch; the fused amax goes per group and is reduced after.
  const int64_t n = c.rows * c.cols;
  for (int64_t g = 0; g < c.groups; ++g) {
    CUDA_RETURN_IF_ERROR(CastTranspose(source_ + g * n, c.rows, c.cols, scale_, c.format,
                                       q_ + g * n, out_t + g * n,
                                       amax_out != nullptr ? group_amax_ + g : nullptr, stream));
  }
  if (amax_out != nullptr) CUDA_RETURN_IF_ERROR(MaxOf(group_amax_, c.groups, amax_out, stream));
  return absl::OkStatus();
}

absl::Status OperandQuantizer::EnqueueTensorScaled(cudaStream_t stream, bool with_transpose) const {
  const OperandConfig& c = config_;
  uint8_t* out_t = with_transpose ? q_t_ : nullptr;
  if (c.recipe == Recipe::kFp8Current && (out_t == nullptr || c.groups == 1)) {
    // One tensor: amax, scale and cast (+transpose) in CurrentScaling's fastest form.
    CUDA_RETURN_IF_ERROR(CurrentScaling(source_, c.groups * c.rows, c.cols, c.format, q_, out_t,
                                        amax_, scale_, scale_inv_, workspace_, stream));
    return absl::OkStatus();
  }
  if (c.recipe == Recipe::kFp8Current) {
    CUDA_RETURN_IF_ERROR(Amax(source_, c.groups * c.rows * c.cols, amax_, stream));
    CUDA_RETURN_IF_ERROR(ComputeScale(amax_, c.format, scale_, scale_inv_, stream));
    return CastGroups(stream, out_t, nullptr);
  }
  // Delayed: the scale comes from past steps; this step's amax is fused into the cast
  // and pushed into the history for the next one by a one-block launch that depends on
  // the cast programmatically, where the operand is one launch.
  if (out_t == nullptr || c.groups == 1) {
    CUDA_RETURN_IF_ERROR(DelayedCastTranspose(source_, c.groups * c.rows, c.cols, c.format,
                                              history_, c.amax_history_len, c.amax_algo, scale_,
                                              scale_inv_, q_, out_t, amax_, stream));
    return absl::OkStatus();
  }
  CUDA_RETURN_IF_ERROR(ScaleFromHistory(history_, c.amax_history_len, c.amax_algo, c.format, scale_,
                                        scale_inv_, stream));
  RETURN_IF_ERROR(CastGroups(stream, out_t, amax_));
  CUDA_RETURN_IF_ERROR(RollAmaxHistory(history_, c.amax_history_len, amax_, stream));
  return absl::OkStatus();
}

int64_t OperandQuantizer::gemm_scale_group_floats() const {
  if (config_.recipe == Recipe::kFp8Rowwise) return config_.rows;
  return config_.recipe == Recipe::kFp8Block ? GroupScaleBytes(config_).gemm / 4 : 0;
}

const float* OperandQuantizer::block_scales() const {
  return config_.recipe == Recipe::kFp8Block ? static_cast<const float*>(raw_scales_) : nullptr;
}

int64_t OperandQuantizer::block_scale_group_floats() const {
  return config_.recipe == Recipe::kFp8Block ? GroupScaleBytes(config_).raw / 4 : 0;
}

bool OperandQuantizer::QuantizesPerGroup(bool with_transpose) const {
  const OperandConfig& c = config_;
  if (c.recipe != Recipe::kFp8Block || c.groups == 1) return false;
  return (with_transpose && q_t_ != nullptr) || (c.weight && c.rows % 128 != 0);
}

bool OperandQuantizer::DirectBlockScales() const {
  return block_scale_form_ == BlockScaleForm::kCublasLtDirect && config_.groups == 1;
}

absl::Status OperandQuantizer::EnqueueBlock(cudaStream_t stream, bool with_transpose) const {
  const OperandConfig& c = config_;
  const int32_t block_rows = c.weight ? 128 : 1;
  const bool t = with_transpose && q_t_ != nullptr;
  auto* raw = static_cast<float*>(raw_scales_);
  auto* raw_t = static_cast<float*>(raw_scales_t_);
  if (DirectBlockScales()) {
    BlockScaleOutputs s;
    s.gemm = static_cast<float*>(gemm_scales_);
    s.gemm_stride = c.weight ? Blk128Stride(c.cols) : Vec128RowStride(c.rows);
    if (t) {
      s.gemm_t = static_cast<float*>(gemm_scales_t_);
      s.gemm_stride_t = c.weight ? Blk128Stride(c.rows) : Vec128RowStride(c.cols);
    }
    CUDA_RETURN_IF_ERROR(BlockQuantize(source_, c.rows, c.cols, block_rows, /*pow2_scales=*/true,
                                       q_, t ? q_t_ : nullptr, s, stream));
    return absl::OkStatus();
  }
  if (!QuantizesPerGroup(with_transpose)) {
    // One group, or groups without transposed copies whose blocks each lie inside one
    // group: the groups' row-major grids back to back are then the grid of the stacked
    // [groups*rows, cols] tensor, so one launch quantizes them all.
    CUDA_RETURN_IF_ERROR(BlockQuantize(source_, c.groups * c.rows, c.cols, block_rows,
                                       /*pow2_scales=*/true, q_, raw, t ? q_t_ : nullptr,
                                       t ? raw_t : nullptr, stream));
  } else {
    const int64_t n = c.rows * c.cols;
    const ScaleSizes one = GroupScaleBytes(c);
    for (int64_t g = 0; g < c.groups; ++g) {
      CUDA_RETURN_IF_ERROR(BlockQuantize(source_ + g * n, c.rows, c.cols, block_rows,
                                         /*pow2_scales=*/true, q_ + g * n, raw + g * one.raw / 4,
                                         t ? q_t_ + g * n : nullptr,
                                         t ? raw_t + g * one.raw_t / 4 : nullptr, stream));
    }
  }
  if (block_scale_form_ == BlockScaleForm::kRowMajor) return absl::OkStatus();
  auto* out = static_cast<float*>(gemm_scales_);
  CUDA_RETURN_IF_ERROR(c.weight ? ToBlk128Layout(raw, c.groups, c.rows, c.cols, out, stream)
                                : ToVec128Layout(raw, c.groups, c.rows, c.cols, out, stream));
  return absl::OkStatus();
}

absl::Status OperandQuantizer::EnqueueMicroscaled(cudaStream_t stream, bool with_transpose) const {
  const OperandConfig& c = config_;
  auto* out = static_cast<uint8_t*>(gemm_scales_);
  if (c.recipe == Recipe::kMxfp8) {
    // The kernel writes cuBLASLt's swizzle itself (the operand's and the transposed
    // copy's); Dequantize quantizes once more for the row-major grid it reads.
    const bool t = with_transpose && q_t_ != nullptr;
    MxScaleOutputs s;
    s.swizzled = out;
    s.swizzled_t = t ? static_cast<uint8_t*>(gemm_scales_t_) : nullptr;
    CUDA_RETURN_IF_ERROR(Mxfp8Quantize(source_, c.rows, c.cols, q_, t ? q_t_ : nullptr, s, stream));
    return absl::OkStatus();
  }
  // NVFP4: the kernel interface has no transposed output; a training step would run a
  // second quantization of x^T, which this runner does not model (reported in notes). The
  // kernel writes cuBLASLt's swizzle itself; Dequantize quantizes once more for the
  // row-major grid it reads.
  CUDA_RETURN_IF_ERROR(Amax(source_, c.rows * c.cols, amax_, stream));
  Nvfp4ScaleOutputs s;
  s.swizzled = out;
  s.tensor_scale = scale_;
  CUDA_RETURN_IF_ERROR(Nvfp4Quantize(source_, c.rows, c.cols, amax_, q_, s, stream));
  return absl::OkStatus();
}

absl::Status OperandQuantizer::Enqueue(cudaStream_t stream, bool with_transpose) const {
  switch (config_.recipe) {
    case Recipe::kBf16:
      return absl::OkStatus();
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      return EnqueueTensorScaled(stream, with_transpose);
    case Recipe::kFp8Block:
      return EnqueueBlock(stream, with_transpose);
    case Recipe::kMxfp8:
    case Recipe::kNvfp4:
      return EnqueueMicroscaled(stream, with_transpose);
    case Recipe::kFp8Rowwise:
      // Row scales never need a transposed copy: every GEMM that reads this tensor along
      // another dimension quantizes it again from BF16 (torchao's row-wise recipe). The
      // groups stacked are just more rows.
      CUDA_RETURN_IF_ERROR(RowwiseQuantize(source_, config_.groups * config_.rows, config_.cols,
                                           config_.format, q_, static_cast<float*>(raw_scales_),
                                           stream));
      return absl::OkStatus();
    case Recipe::kInt8Rowwise:  // one group (CheckGroupedRecipe), as are the two below
      CUDA_RETURN_IF_ERROR(Int8RowwiseQuantize(source_, config_.rows, config_.cols,
                                               reinterpret_cast<int8_t*>(q_),
                                               static_cast<float*>(raw_scales_), stream));
      return absl::OkStatus();
    case Recipe::kW8a16:
      CUDA_RETURN_IF_ERROR(W8Quantize(source_, config_.rows, config_.cols,
                                      reinterpret_cast<int8_t*>(q_),
                                      static_cast<__nv_bfloat16*>(raw_scales_), stream));
      return absl::OkStatus();
    case Recipe::kW4a16:
      CUDA_RETURN_IF_ERROR(W4Quantize(source_, config_.rows, config_.cols, config_.w4_group, q_,
                                      static_cast<__nv_bfloat16*>(raw_scales_), stream));
      return absl::OkStatus();
  }
  return absl::InternalError("unknown recipe");
}

absl::Status OperandQuantizer::Dequantize(float* out, cudaStream_t stream) const {
  return DequantizeGroups(0, config_.groups, out, stream);
}

absl::Status OperandQuantizer::DequantizeGroups(int64_t first, int64_t count, float* out,
                                                cudaStream_t stream) const {
  const OperandConfig& c = config_;
  if (first < 0 || count < 1 || first + count > c.groups) {
    return absl::InvalidArgumentError(absl::StrCat("operand ", c.slot, ": groups [", first, ", ",
                                                   first + count, ") outside [0, ", c.groups, ")"));
  }
  const int64_t per_group = c.rows * c.cols;
  const int64_t n = count * per_group;
  const int64_t offset = first * per_group;  // elements (and FP8 bytes) before the range
  switch (c.recipe) {
    case Recipe::kBf16:
      CUDA_RETURN_IF_ERROR(Bf16ToFloat(source_ + offset, n, out, stream));
      break;
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      CUDA_RETURN_IF_ERROR(DequantizeTensorFp8(q_ + offset, n, c.format, scale_inv_, out, stream));
      break;
    case Recipe::kFp8Block: {
      if (DirectBlockScales()) {
        // Enqueue wrote cuBLASLt's layout only: the same quantization again (the same
        // bytes) for the row-major grid, so the check reads the scales the other way.
        CUDA_RETURN_IF_ERROR(BlockQuantize(
            source_, c.rows, c.cols, c.weight ? 128 : 1,
            /*pow2_scales=*/true, q_, static_cast<float*>(raw_scales_), nullptr, nullptr, stream));
      }
      const int64_t grid = GroupScaleBytes(c).raw / 4;  // floats of one group's grid
      CUDA_RETURN_IF_ERROR(
          DequantizeBlockFp8(q_ + offset, count, c.rows, c.cols, c.weight ? 128 : 1,
                             static_cast<const float*>(raw_scales_) + first * grid, out, stream));
      break;
    }
    case Recipe::kMxfp8:  // one group (CheckGroupedRecipe)
      CUDA_RETURN_IF_ERROR(Mxfp8Quantize(source_, c.rows, c.cols, q_,
                                         static_cast<uint8_t*>(raw_scales_), nullptr, nullptr,
                                         stream));
      CUDA_RETURN_IF_ERROR(DequantizeMxfp8(q_, c.rows, c.cols,
                                           static_cast<const uint8_t*>(raw_scales_), out, stream));
      break;
    case Recipe::kNvfp4:  // one group (CheckGroupedRecipe)
      CUDA_RETURN_IF_ERROR(Amax(source_, c.rows * c.cols, amax_, stream));
      CUDA_RETURN_IF_ERROR(Nvfp4Quantize(source_, c.rows, c.cols, amax_, q_,
                                         static_cast<uint8_t*>(raw_scales_), scale_, stream));
      CUDA_RETURN_IF_ERROR(DequantizeNvfp4(
          q_, c.rows, c.cols, static_cast<const uint8_t*>(raw_scales_), scale_, out, stream));
      break;
    case Recipe::kFp8Rowwise:
      CUDA_RETURN_IF_ERROR(DequantizeRowFp8(q_ + offset, count * c.rows, c.cols,
                                            static_cast<const float*>(raw_scales_) + first * c.rows,
                                            out, stream));
      break;
    case Recipe::kInt8Rowwise:  // one group (CheckGroupedRecipe), as are the two below
      CUDA_RETURN_IF_ERROR(DequantizeInt8Rowwise(reinterpret_cast<const int8_t*>(q_),
                                                 static_cast<const float*>(raw_scales_), c.rows,
                                                 c.cols, out, stream));
      break;
    case Recipe::kW8a16:
      CUDA_RETURN_IF_ERROR(DequantizeW8(reinterpret_cast<const int8_t*>(q_),
                                        static_cast<const __nv_bfloat16*>(raw_scales_), c.rows,
                                        c.cols, out, stream));
      break;
    case Recipe::kW4a16:
      CUDA_RETURN_IF_ERROR(DequantizeW4(q_, static_cast<const __nv_bfloat16*>(raw_scales_), c.rows,
                                        c.cols, c.w4_group, out, stream));
      break;
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
