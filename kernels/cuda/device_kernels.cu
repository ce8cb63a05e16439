// Random inputs, dequantization, error sums and the blocking kernel (device_kernels.h).
#include <cuda_fp8.h>

#include <cmath>

#include "kernels/cuda/device_kernels.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;

int GridFor(int64_t work, int per_thread = 1) {
  const int64_t blocks =
      (work + int64_t{kThreads} * per_thread - 1) / (int64_t{kThreads} * per_thread);
  // A grid-stride loop covers the rest; 65535*8 blocks keep every SM busy.
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
struct Philox {
  __device__ static uint4 Round(uint4 c, uint2 k) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    return make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  __device__ static uint4 Generate(uint4 c, uint2 k) {
#pragma unroll
    for (int i = 0; i < 10; ++i) {
      c = Round(c, k);
      k.x += 0x9E3779B9u;
      k.y += 0xBB67AE85u;
    }
    return c;
  }
};

__device__ float2 BoxMuller(uint32_t a, uint32_t b) {
  // Offsets by half a step keep u1 away from 0 so log() stays finite.
  const float u1 = (static_cast<float>(a) + 0.5f) * 2.3283064365386963e-10f;
  const float u2 = (static_cast<float>(b) + 0.5f) * 2.3283064365386963e-10f;
  const float r = sqrtf(-2.0f * logf(u1));
  float s, c;
  sincospif(2.0f * u2, &s, &c);
  return make_float2(r * c, r * s);
}

__global__ void RandomNormalKernel(__nv_bfloat16* x, int64_t n, uint64_t seed, uint32_t id) {
  const uint2 key = make_uint2(static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const uint4 r = Philox::Generate(
        make_uint4(static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), id, 0u), key);
    const float2 a = BoxMuller(r.x, r.y), b = BoxMuller(r.z, r.w);
    const float v[4] = {a.x, a.y, b.x, b.y};
    for (int j = 0; j < 4; ++j) {
      const int64_t i = g * 4 + j;
      if (i < n) x[i] = __float2bfloat16_rn(v[j]);
    }
  }
}

__global__ void Bf16ToFloatKernel(const __nv_bfloat16* x, int64_t n, float* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = __bfloat162float(x[i]);
}

__device__ float DecodeE4m3(uint8_t b) {
  __nv_fp8_e4m3 v;
  v.__x = b;
  return static_cast<float>(v);
}
__device__ float DecodeE5m2(uint8_t b) {
  __nv_fp8_e5m2 v;
  v.__x = b;
  return static_cast<float>(v);
}

__global__ void DequantTensorKernel(const uint8_t* q, int64_t n, bool e5m2, const float* scale_inv,
                                    float* out) {
  const float s = *scale_inv;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = (e5m2 ? DecodeE5m2(q[i]) : DecodeE4m3(q[i])) * s;
}

__global__ void DequantBlockKernel(const uint8_t* q, int64_t groups, int64_t rows, int64_t cols,
                                   int32_t block_rows, const float* scale_inv, float* out) {
  const int64_t kb = (cols + 127) / 128;
  const int64_t grid = (rows + block_rows - 1) / block_rows * kb, n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < groups * n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t g = i / n, r = i % n / cols, c = i % cols;
    out[i] = DecodeE4m3(q[i]) * scale_inv[g * grid + (r / block_rows) * kb + c / 128];
  }
}

__global__ void DequantRowKernel(const uint8_t* q, int64_t rows, int64_t cols,
                                 const float* scale_inv, float* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = DecodeE4m3(q[i]) * scale_inv[i / cols];
}

__global__ void DequantMxKernel(const uint8_t* q, int64_t rows, int64_t cols, const uint8_t* scales,
                                float* out) {
  const int64_t sc = (cols + 31) / 32;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    out[i] = DecodeE4m3(q[i]) * ldexpf(1.0f, static_cast<int>(scales[r * sc + c / 32]) - 127);
  }
}

__device__ float DecodeE2m1(uint8_t nib) {
  const float kMag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  const float v = kMag[nib & 7];
  return (nib & 8) ? -v : v;
}

__global__ void DequantNvfp4Kernel(const uint8_t* q, int64_t rows, int64_t cols,
                                   const uint8_t* scales, const float* tensor_scale, float* out) {
  const int64_t packed = (cols + 1) / 2, sc = (cols + 15) / 16;
  const float s = *tensor_scale;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    const uint8_t byte = q[r * packed + c / 2];
    const float v = DecodeE2m1((c & 1) ? (byte >> 4) : (byte & 0xF));
    out[i] = (v * DecodeE4m3(scales[r * sc + c / 16])) / s;
  }
}

__global__ void ErrorSumsKernel(const __nv_bfloat16* out, const float* ref, int64_t n,
                                double* sums) {
  double diff2 = 0, ref2 = 0, bad = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const double o = __bfloat162float(out[i]), r = ref[i];
    if (!isfinite(o)) bad += 1;
    diff2 += (o - r) * (o - r);
    ref2 += r * r;
  }
  __shared__ double sh[3][kThreads];
  sh[0][threadIdx.x] = diff2;
  sh[1][threadIdx.x] = ref2;
  sh[2][threadIdx.x] = bad;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int j = 0; j < 3; ++j) sh[j][threadIdx.x] += sh[j][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int j = 0; j < 3; ++j) atomicAdd(&sums[j], sh[j][0]);
}

__device__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void BlockOnHostFlagKernel(const volatile int32_t* flag, int32_t* timed_out,
                                      uint64_t timeout_ns) {
  const uint64_t start = globaltimer_ns();
  while (*flag == 0) {
    if (globaltimer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

__global__ void EmptyKernel() {}

// The XOR of what a thread read decides a store (into the scratch buffer itself, for one
// thread in about 2^32), so the compiler keeps the loads.
__global__ void ReadThroughL2Kernel(const uint4* p, int64_t n, uint32_t never) {
  uint32_t x = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == never) *reinterpret_cast<uint32_t*>(const_cast<uint4*>(p)) = x;  // scratch
}

// One thread: n is the number of groups of a grouped GEMM (tens to a few hundred).
__global__ void MaxOfKernel(const float* x, int64_t n, float* out) {
  float m = 0.0f;
  for (int64_t i = 0; i < n; ++i) m = fmaxf(m, x[i]);  // fmaxf drops a NaN operand
  *out = m;
}

}  // namespace

cudaError_t LaunchEmptyKernel(cudaStream_t stream) {
  EmptyKernel<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t FillRandomNormalBf16(__nv_bfloat16* x, int64_t n, uint64_t seed, uint32_t tensor_id,
                                 cudaStream_t stream) {
  RandomNormalKernel<<<GridFor(n, 4), kThreads, 0, stream>>>(x, n, seed, tensor_id);
  return cudaGetLastError();
}

cudaError_t Bf16ToFloat(const __nv_bfloat16* x, int64_t n, float* out, cudaStream_t stream) {
  Bf16ToFloatKernel<<<GridFor(n), kThreads, 0, stream>>>(x, n, out);
  return cudaGetLastError();
}

cudaError_t DequantizeTensorFp8(const uint8_t* q, int64_t n, core::quant::Fp8Format f,
                                const float* scale_inv, float* out, cudaStream_t stream) {
  DequantTensorKernel<<<GridFor(n), kThreads, 0, stream>>>(q, n, f == core::quant::Fp8Format::kE5M2,
                                                           scale_inv, out);
  return cudaGetLastError();
}

cudaError_t DequantizeBlockFp8(const uint8_t* q, int64_t groups, int64_t rows, int64_t cols,
                               int32_t block_rows, const float* scale_inv, float* out,
                               cudaStream_t stream) {
  DequantBlockKernel<<<GridFor(groups * rows * cols), kThreads, 0, stream>>>(
      q, groups, rows, cols, block_rows, scale_inv, out);
  return cudaGetLastError();
}

cudaError_t DequantizeRowFp8(const uint8_t* q, int64_t rows, int64_t cols, const float* scale_inv,
                             float* out, cudaStream_t stream) {
  DequantRowKernel<<<GridFor(rows * cols), kThreads, 0, stream>>>(q, rows, cols, scale_inv, out);
  return cudaGetLastError();
}

cudaError_t DequantizeMxfp8(const uint8_t* q, int64_t rows, int64_t cols, const uint8_t* scales,
                            float* out, cudaStream_t stream) {
  DequantMxKernel<<<GridFor(rows * cols), kThreads, 0, stream>>>(q, rows, cols, scales, out);
  return cudaGetLastError();
}

cudaError_t DequantizeNvfp4(const uint8_t* q, int64_t rows, int64_t cols, const uint8_t* scales,
                            const float* tensor_scale, float* out, cudaStream_t stream) {
  DequantNvfp4Kernel<<<GridFor(rows * cols), kThreads, 0, stream>>>(q, rows, cols, scales,
                                                                    tensor_scale, out);
  return cudaGetLastError();
}

cudaError_t ErrorSums(const __nv_bfloat16* out, const float* ref, int64_t n, double* sums,
                      cudaStream_t stream) {
  // Few blocks: each adds one atomic per sum, and the pass is memory bound anyway.
  const int blocks = GridFor(n, 16) < 1024 ? GridFor(n, 16) : 1024;
  ErrorSumsKernel<<<blocks, kThreads, 0, stream>>>(out, ref, n, sums);
  return cudaGetLastError();
}

cudaError_t ReadThroughL2(const void* buffer, size_t bytes, cudaStream_t stream) {
  if (buffer == nullptr || bytes % 16 != 0 || reinterpret_cast<uintptr_t>(buffer) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  ReadThroughL2Kernel<<<1024, kThreads, 0, stream>>>(static_cast<const uint4*>(buffer),
                                                     static_cast<int64_t>(bytes / 16), 0x9E3779B9u);
  return cudaGetLastError();
}

cudaError_t MaxOf(const float* x, int64_t n, float* out, cudaStream_t stream) {
  if (n < 1 || x == nullptr || out == nullptr) return cudaErrorInvalidValue;
  MaxOfKernel<<<1, 1, 0, stream>>>(x, n, out);
  return cudaGetLastError();
}

cudaError_t BlockOnHostFlag(const volatile int32_t* flag, int32_t* timed_out, uint64_t timeout_ns,
                            cudaStream_t stream) {
  BlockOnHostFlagKernel<<<1, 1, 0, stream>>>(flag, timed_out, timeout_ns);
  return cudaGetLastError();
}

namespace {
__global__ void WriteThroughBadPointerKernel(int* p) { *p = 1; }
}  // namespace

cudaError_t WriteThroughBadPointer(cudaStream_t stream) {
  // The first page is never mapped in the unified address space.
  WriteThroughBadPointerKernel<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(uintptr_t{0x10}));
  return cudaGetLastError();
}

namespace {
// `*forever` is 1 and nothing writes it: the loop never ends, and the compiler cannot
// know that.
__global__ void NeverEndingKernel(const volatile int* forever) {
  while (*forever != 0) __nanosleep(1000);
}
}  // namespace

cudaError_t LaunchNeverEndingKernel(const int* forever, cudaStream_t stream) {
  NeverEndingKernel<<<1, 1, 0, stream>>>(forever);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
