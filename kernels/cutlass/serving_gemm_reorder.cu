// ReorderW4 (serving_gemm_kernels.h): INT4 weights from rule I4's packing into the layout
// the w4a16 kernels read.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {
namespace {

// One thread per element: its nibble goes to the element the reordered layout gives
// (coordinate (row, k, 0)), ORed into a zeroed 32-bit word (two elements share a byte).
__global__ void ReorderW4Kernel(const uint8_t* packed, uint32_t* out, int32_t n, int32_t k,
                                W4Layout layout) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(n) * k) return;
  const int32_t row = static_cast<int32_t>(i / k), col = static_cast<int32_t>(i % k);
  const uint32_t nibble = (packed[i / 2] >> ((col & 1) * 4)) & 0xFu;
  const int64_t e = layout(row, col, 0);
  atomicOr(out + e / 8, nibble << ((e % 8) * 4));
}

}  // namespace

cudaError_t ReorderW4(const void* packed, void* out, int32_t n, int32_t k, cudaStream_t stream) {
  if (k % 2 != 0 || (static_cast<int64_t>(n) * k) % 8 != 0) return cudaErrorInvalidValue;
  const int64_t count = static_cast<int64_t>(n) * k;
  cudaError_t e = cudaMemsetAsync(out, 0, count / 2, stream);
  if (e != cudaSuccess) return e;
  constexpr int kThreads = 256;
  ReorderW4Kernel<<<static_cast<unsigned>((count + kThreads - 1) / kThreads), kThreads, 0,
                    stream>>>(static_cast<const uint8_t*>(packed), static_cast<uint32_t*>(out), n,
                              k, MakeW4Layout(n, k));
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels::cutlass_gemm
