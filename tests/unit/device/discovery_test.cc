// device/discovery.h: which backend and how many devices each --backend gives, with and
// without CUDA in the build; what a worker hosts; telemetry without CUDA devices.
#include "device/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gemmprof::device {
namespace {

using ::testing::HasSubstr;

// A CUDA build on a machine with `gpus` GPUs; the runner and telemetry are never made here.
CudaBackend CudaWith(int gpus) {
  CudaBackend cuda;
  cuda.device_count = [gpus] { return gpus; };
  cuda.make_runner = [](int) -> absl::StatusOr<std::unique_ptr<Runner>> {
    return absl::UnavailableError("no runner in this test");
  };
  cuda.inject_illegal_address = [](int) { return absl::InternalError("not in this test"); };
  return cuda;
}

DiscoveryOptions Asked(const std::string& backend, int host_devices = 1) {
  DiscoveryOptions o;
  o.backend = backend;
  o.host_devices = host_devices;
  return o;
}

TEST(ResolveBackend, AutoTakesEveryGpuWhenThereIsOneAndTheHostOtherwise) {
  std::string backend;
  int devices = -1;
  ASSERT_TRUE(ResolveBackend(Asked("auto"), CudaWith(2), &backend, &devices).ok());
  EXPECT_EQ(backend, "cuda");
  EXPECT_EQ(devices, 2);
  ASSERT_TRUE(ResolveBackend(Asked("auto"), CudaWith(0), &backend, &devices).ok());
  EXPECT_EQ(backend, "host");
  EXPECT_EQ(devices, 1);
  ASSERT_TRUE(ResolveBackend(Asked("auto", 3), CudaBackend{}, &backend, &devices).ok());
  EXPECT_EQ(backend, "host");
  EXPECT_EQ(devices, 3);
}

TEST(ResolveBackend, HostIsTheHostEvenWithGpus) {
  std::string backend;
  int devices = -1;
  ASSERT_TRUE(ResolveBackend(Asked("host", 2), CudaWith(4), &backend, &devices).ok());
  EXPECT_EQ(backend, "host");
  EXPECT_EQ(devices, 2);
}

TEST(ResolveBackend, CudaWithoutAGpuOrWithoutCudaOrWithHostDevicesIsRefusedNamingTheFlag) {
  std::string backend;
  int devices = 0;
  absl::Status none = ResolveBackend(Asked("cuda"), CudaWith(0), &backend, &devices);
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition) << none;
  EXPECT_EQ(none.message(), "--backend cuda: no CUDA device found");
  absl::Status unbuilt = ResolveBackend(Asked("cuda"), CudaBackend{}, &backend, &devices);
  EXPECT_EQ(unbuilt.code(), absl::StatusCode::kFailedPrecondition) << unbuilt;
  EXPECT_THAT(std::string(unbuilt.message()), HasSubstr("built without CUDA"));
  absl::Status both = ResolveBackend(Asked("cuda", 2), CudaWith(1), &backend, &devices);
  EXPECT_EQ(both.code(), absl::StatusCode::kInvalidArgument) << both;
  EXPECT_THAT(std::string(both.message()), HasSubstr("--host-devices: only for the host backend"));
}

TEST(WorkerHooksFor, HostHostsTheReferenceRunnerAndHasNoCudaFault) {
  worker::WorkerHooks hooks = WorkerHooksFor("host", 1, CudaWith(2));
  auto runner = hooks.make_runner();
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ((*runner)->Info().backend, "host-reference");
  EXPECT_FALSE(static_cast<bool>(hooks.illegal_address));
}

TEST(WorkerHooksFor, CudaHostsTheCudaRunnerOfItsOrdinal) {
  CudaBackend cuda = CudaWith(2);
  int asked = -1;
  cuda.make_runner = [&asked](int ordinal) -> absl::StatusOr<std::unique_ptr<Runner>> {
    asked = ordinal;
    return absl::UnavailableError("no runner in this test");
  };
  worker::WorkerHooks hooks = WorkerHooksFor("cuda", 1, cuda);
  EXPECT_EQ(hooks.make_runner().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(static_cast<bool>(hooks.illegal_address));
}

TEST(WorkerHooksFor, AnotherBackendOrCudaWithoutCudaFailsSayingWhichBackends) {
  for (const std::string backend : {"auto", "tpu"}) {
    auto made = WorkerHooksFor(backend, 0, CudaWith(1)).make_runner();
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument) << made.status();
    EXPECT_EQ(made.status().message(), "--backend " + backend + ": a worker takes cuda or host");
  }
  auto unbuilt = WorkerHooksFor("cuda", 0, CudaBackend{}).make_runner();
  EXPECT_EQ(unbuilt.status().code(), absl::StatusCode::kInvalidArgument) << unbuilt.status();
}

TEST(MakeTelemetry, WithoutCudaDevicesItReadsNothing) {
  std::vector<std::unique_ptr<worker::RemoteRunner>> none;
  EXPECT_TRUE(MakeTelemetry(none, CudaWith(1))->Read().empty());
  EXPECT_TRUE(MakeTelemetry(none, CudaBackend{})->Read().empty());
}

}  // namespace
}  // namespace gemmprof::device
