// A real CUDA fault inside a worker process costs one item: a kernel writes through a bad
// pointer (GEMMPROF_WORKER_FAULT=illegal-address@1), the context dies with
// cudaErrorIllegalAddress, the worker reports the item failed and exits, a fresh worker
// measures the next item. Also the CUDA check's messages: no build paths, the call in the
// source payload. Fails without a GPU.
#include <filesystem>
#include <string>

#include "core/error_detail.h"
#include "device/worker/fault.h"
#include "device/worker/remote_runner.h"
#include "device/worker/worker_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cuda/cuda_check.h"

namespace gemmprof::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The gemmprofd beside this program (a bundle on a GPU node), else the one this build made.
std::string Gemmprofd() {
  std::error_code ec;
  const auto beside =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "gemmprofd";
  return !ec && std::filesystem::exists(beside) ? beside.string() : GEMMPROFD_PATH;
}

core::WorkItem Item(int32_t seq) {
  core::WorkItem item;
  item.id = 10 + seq;
  item.seq = seq;
  item.op.name = "probe";
  item.op.shape = {512, 512, 512};
  item.recipe = core::Recipe::kBf16;
  return item;
}

TEST(CudaWorkerFaultTest, AnIllegalAddressCostsOneItemAndTheWorkerRestarts) {
  WorkerOptions o;
  o.executable = Gemmprofd();
  o.backend = "cuda";
  o.device = 0;
  o.env = EnvironmentWith(kFaultEnvVar, "illegal-address@1");
  o.first_backoff_s = 0.01;
  RemoteRunner runner(o);
  runner.Start();
  ASSERT_TRUE(runner.Availability().ok()) << runner.Availability();
  EXPECT_EQ(runner.Info().backend, "cuda");
  core::TimingOptions t;
  t.warmup_iters = 2;
  t.timed_iters = 5;
  t.gpu_warmup_s = 0.1;
  ASSERT_TRUE(runner.BeginJob(t).ok());
  auto before = device::MeasureOne(runner, Item(0), t);
  ASSERT_TRUE(before.ok()) << before.status();
  const pid_t first = runner.worker_pid();

  auto faulted = device::MeasureOne(runner, Item(1), t);
  ASSERT_FALSE(faulted.ok());
  EXPECT_EQ(faulted.status().code(), absl::StatusCode::kInternal);
  const std::string message(faulted.status().message());
  EXPECT_THAT(message, StartsWith("CUDA error 700 (cudaErrorIllegalAddress"));
  EXPECT_THAT(message, HasSubstr("; the device context is lost and the worker restarts"));
  EXPECT_EQ(message.find(".cc:"), std::string::npos) << message;
  EXPECT_THAT(core::SourceOf(faulted.status()),
              HasSubstr("kernels/runner/cuda_runner_factory.cc:"));

  auto after = device::MeasureOne(runner, Item(2), t);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->verification, core::Verification::kPassed);
  EXPECT_NE(runner.worker_pid(), first);
  EXPECT_EQ(runner.restarts(), 1);
}

TEST(CudaCheckTest, MessagesSayWhatFailedAndTheSourceGoesAside) {
  const absl::Status oom =
      kernels::CudaStatus(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "/b/kernels/x.cc", 12);
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(), "CUDA out of memory (cudaErrorMemoryAllocation)");
  EXPECT_EQ(core::SourceOf(oom), "kernels/x.cc:12: cudaMalloc(&p, n)");
  EXPECT_FALSE(core::IsContextLost(oom));

  const absl::Status fault =
      kernels::CudaStatus(cudaErrorIllegalAddress, "cudaStreamSynchronize(s)", "k.cc", 3);
  EXPECT_THAT(std::string(fault.message()),
              StartsWith("CUDA error 700 (cudaErrorIllegalAddress: "));
  EXPECT_TRUE(core::IsContextLost(fault));
  EXPECT_TRUE(kernels::CudaStatus(cudaSuccess, "f()", "k.cc", 1).ok());

  const absl::Status refused =
      kernels::CublasStatus(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul(...)", "k.cc", 4);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "cuBLASLt does not support this configuration (CUBLAS_STATUS_NOT_SUPPORTED)");
  EXPECT_EQ(core::SourceOf(refused), "k.cc:4: cublasLtMatmul(...)");
}

}  // namespace
}  // namespace gemmprof::worker
