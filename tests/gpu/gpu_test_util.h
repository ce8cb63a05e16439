// Helpers shared by the CUDA runner's gpu tests: copies back to the host, the relative
// error, and the runner fixture that fails (never skips) without a GPU.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "device/runner.h"
#include "gtest/gtest.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/runner/cuda_runner_factory.h"

namespace gemmprof::kernels::testing {

template <typename T>
std::vector<T> ToHost(const void* d, int64_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

inline std::vector<float> Bf16ToHostFloat(const __nv_bfloat16* d, int64_t n) {
  std::vector<__nv_bfloat16> h = ToHost<__nv_bfloat16>(d, n);
  std::vector<float> f(n);
  for (int64_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// ||out - ref||_F / ||ref||_F in double.
template <typename A, typename B>
double RelError(const std::vector<A>& out, const std::vector<B>& ref) {
  double d = 0, r = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    d += (double(out[i]) - double(ref[i])) * (double(out[i]) - double(ref[i]));
    r += double(ref[i]) * double(ref[i]);
  }
  return std::sqrt(d / r);
}

// One CUDA runner on device 0 per test suite.
class RunnerSuite : public ::testing::Test {
 protected:
  // No assertions here: a failure in SetUpTestSuite makes gtest skip the suite, and
  // without a GPU every test must fail instead (SetUp below).
  static void SetUpTestSuite() {
    auto r = MakeCudaRunner(0);
    if (r.ok())
      runner_ = std::move(*r);
    else
      setup_error_ = std::string(r.status().message());
  }
  static void TearDownTestSuite() { runner_.reset(); }
  void SetUp() override {
    ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
    ASSERT_NE(runner_, nullptr) << setup_error_;
  }

  // Short timing for tests that check what an item measures, not how fast: 3 warm-up and
  // 10 timed iterations, no GPU warm-up.
  static core::TimingOptions FastTiming() {
    core::TimingOptions t;
    t.warmup_iters = 3;
    t.timed_iters = 10;
    t.gpu_warmup_s = 0;
    return t;
  }

  static inline std::unique_ptr<device::Runner> runner_;
  static inline std::string setup_error_;
};

// A stream, a cuBLASLt handle and a 32 MiB workspace on device 0, for the tests that call
// cuBLASLt themselves. `Base` is ::testing::Test or a ::testing::TestWithParam<...>.
template <typename Base>
class LtSuite : public Base {
 protected:
  void SetUp() override {
    ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    auto s = CudaStream::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    stream_ = std::move(*s);
    auto lt = LtHandle::Create();
    ASSERT_TRUE(lt.ok()) << lt.status();
    lt_ = std::move(*lt);
    auto ws = DeviceBuffer::Create(size_t{32} << 20);
    ASSERT_TRUE(ws.ok()) << ws.status();
    workspace_ = std::move(*ws);
  }

  CudaStream stream_;
  LtHandle lt_;
  DeviceBuffer workspace_;
};

}  // namespace gemmprof::kernels::testing
