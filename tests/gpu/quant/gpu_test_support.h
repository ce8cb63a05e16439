// Support for the quantization kernel tests: a CUDA-checking assertion, device buffers
// owned by the fixture, poisoned outputs, BF16 test tensors with edge values at known
// positions, and byte-exact comparison with a readable report of the first mismatches.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Asserts that a CUDA runtime call succeeded, naming the call and the error.
#define CUDA_ASSERT(call)                                                     \
  do {                                                                        \
    const cudaError_t cuda_assert_err_ = (call);                              \
    ASSERT_EQ(cuda_assert_err_, cudaSuccess)                                  \
        << #call << " failed: " << cudaGetErrorName(cuda_assert_err_) << " (" \
        << cudaGetErrorString(cuda_assert_err_) << ")";                       \
  } while (0)

namespace gemmprof::kernels::testing {

// Fill bytes for outputs before a launch. Each launch runs once per poison: a value the
// kernel did not write keeps the poison and cannot match the reference both times.
inline constexpr uint8_t kPoisons[2] = {0xAB, 0x54};

// A tensor for the tests: BF16 bits for the device and the same values as fp32 for the
// host reference.
struct TestTensor {
  int64_t rows = 0, cols = 0;
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

// Random normal BF16 (fixed seed) times `stddev`; with `edges`, special values (NaN,
// +-Inf, +-0, subnormals, FP8 limits and their rounding ties, huge values) at fixed
// positions, an all-zero 128-wide row segment, a subnormal-only segment and an all-NaN
// 32-wide segment where the shape allows.
TestTensor MakeTensor(int64_t rows, int64_t cols, uint32_t seed, bool edges, float stddev = 1.0f);

// Number of positions where `got` and `want` differ; the first few are reported through
// ADD_FAILURE with their row/column in a [rows, cols] view.
int64_t CompareBytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                     int64_t cols, const std::string& what);
// Bit-exact float comparison (NaN payloads included).
int64_t CompareFloatBits(const std::vector<float>& got, const std::vector<float>& want,
                         int64_t cols, const std::string& what);

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Fixture: fails (never skips) without a GPU; owns every device allocation.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // `count` elements of T in device memory, plus `pad_bytes` so a test can offset the
  // pointer to misalign it. Null (with a recorded failure) when cudaMalloc fails.
  template <typename T>
  T* Device(size_t count, size_t pad_bytes = 0) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, count * sizeof(T) + pad_bytes + 1);
    EXPECT_EQ(err, cudaSuccess) << "cudaMalloc(" << count * sizeof(T)
                                << "): " << cudaGetErrorName(err);
    if (err != cudaSuccess) return nullptr;
    allocations_.push_back(p);
    return static_cast<T*>(p);
  }

  std::vector<void*> allocations_;
};

}  // namespace gemmprof::kernels::testing
