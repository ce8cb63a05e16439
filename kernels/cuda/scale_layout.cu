// Scale-tensor layout conversion for cuBLASLt and the NVFP4 alpha (device_kernels.h).
// The quantization kernels write scales row-major, one per block; cuBLASLt reads the
// 1D/2D block scales of Hopper and the MX/NVFP4 scales of Blackwell in its own layouts
// (cuBLAS docs, "Scaling factors layouts").
#include "kernels/cuda/device_kernels.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int Blocks(int64_t n) {
  const int64_t b = CeilDiv(n, kThreads);
  return static_cast<int>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

// Group g's tensor starts g * kb * stride floats into `out`.
__global__ void Vec128Kernel(const float* in, int64_t groups, int64_t rows, int64_t kb,
                             int64_t stride, float* out) {
  const int64_t per_group = kb * stride;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < groups * per_group;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t g = i / per_group, b = i % per_group / stride, r = i % stride;
    // Padding rows are never read by the GEMM; 1 keeps them harmless if they were.
    out[i] = r < rows ? in[(g * rows + r) * kb + b] : 1.0f;
  }
}

// The groups' row-major grids back to back are one [groups * rb, kb] grid, and their
// tensors back to back one tensor of groups * rb rows: one pass converts them all.
__global__ void Blk128Kernel(const float* in, int64_t rb, int64_t kb, int64_t stride, float* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rb * stride;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / stride, b = i % stride;
    out[i] = b < kb ? in[r * kb + b] : 1.0f;
  }
}

// 128x4 tiles, tiles row-block major; inside a tile, row r and column c land at
// (r % 32) * 16 + (r / 32) * 4 + c.
__global__ void SwizzleKernel(const uint8_t* in, int64_t rows, int64_t sc, int64_t padded_rows,
                              int64_t padded_cols, uint8_t* out) {
  const int64_t col_tiles = padded_cols / 4;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < padded_rows * padded_cols;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / padded_cols, c = i % padded_cols;
    const int64_t tile = (r / 128) * col_tiles + c / 4;
    const int64_t rr = r % 128;
    const int64_t off = tile * 512 + (rr % 32) * 16 + (rr / 32) * 4 + (c % 4);
    out[off] = (r < rows && c < sc) ? in[r * sc + c] : uint8_t{0};
  }
}

__global__ void AlphaKernel(const float* sa, const float* sb, float* alpha) {
  *alpha = 1.0f / (*sa * *sb);
}

}  // namespace

int64_t Vec128RowStride(int64_t rows) { return CeilDiv(rows, 4) * 4; }
int64_t Blk128Stride(int64_t cols) { return CeilDiv(CeilDiv(cols, 128), 4) * 4; }
int64_t Vec128ScaleFloats(int64_t rows, int64_t cols) {
  return CeilDiv(cols, 128) * Vec128RowStride(rows);
}
int64_t Blk128ScaleFloats(int64_t rows, int64_t cols) {
  return CeilDiv(rows, 128) * Blk128Stride(cols);
}
int64_t SwizzledScaleBytes(int64_t rows, int64_t scale_cols) {
  return CeilDiv(rows, 128) * 128 * CeilDiv(scale_cols, 4) * 4;
}

cudaError_t ToVec128Layout(const float* in, int64_t groups, int64_t rows, int64_t cols, float* out,
                           cudaStream_t stream) {
  const int64_t kb = CeilDiv(cols, 128), stride = Vec128RowStride(rows);
  Vec128Kernel<<<Blocks(groups * kb * stride), kThreads, 0, stream>>>(in, groups, rows, kb, stride,
                                                                      out);
  return cudaGetLastError();
}

cudaError_t ToBlk128Layout(const float* in, int64_t groups, int64_t rows, int64_t cols, float* out,
                           cudaStream_t stream) {
  const int64_t rb = groups * CeilDiv(rows, 128), kb = CeilDiv(cols, 128),
                stride = Blk128Stride(cols);
  Blk128Kernel<<<Blocks(rb * stride), kThreads, 0, stream>>>(in, rb, kb, stride, out);
  return cudaGetLastError();
}

cudaError_t SwizzleBlockScales(const uint8_t* in, int64_t rows, int64_t scale_cols, uint8_t* out,
                               cudaStream_t stream) {
  const int64_t pr = CeilDiv(rows, 128) * 128, pc = CeilDiv(scale_cols, 4) * 4;
  SwizzleKernel<<<Blocks(pr * pc), kThreads, 0, stream>>>(in, rows, scale_cols, pr, pc, out);
  return cudaGetLastError();
}

cudaError_t Nvfp4Alpha(const float* sa, const float* sb, float* alpha, cudaStream_t stream) {
  AlphaKernel<<<1, 1, 0, stream>>>(sa, sb, alpha);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
