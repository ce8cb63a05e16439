#include "kernels/runner/cuda_runner.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/error_detail.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/runner/recipe_rules.h"
#include "kernels/timing/cupti_tracer.h"
#include "kernels/timing/energy_window.h"

namespace gemmprof::kernels {
namespace {

using core::Recipe;

// cuBLASLt's recommendation for Hopper (and what TE uses): 32 MiB.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string UuidString(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  return absl::StrFormat("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                         b[12], b[13], b[14], b[15]);
}

std::string CudaVersionString(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

absl::StatusOr<std::unique_ptr<CudaRunner>> CudaRunner::Create(int device_ordinal) {
  std::unique_ptr<CudaRunner> r(new CudaRunner());
  r->ordinal_ = device_ordinal;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_ordinal));
  RETURN_IF_ERROR(r->InitDeviceInfo());
  ASSIGN_OR_RETURN(r->stream_, CudaStream::Create());
  // Applications launch kernels from more than one stream (a framework's default stream,
  // the stream its CUDA graphs replay on, communication), and once a context has launched
  // a few kernels on a second stream, every kernel it launches after starts later than in
  // a one-stream context (docs/measurement.md, "One stream or several";
  // gemmprof_stream_state_bench measures it). Measure in the state applications run in:
  // 32 empty kernels on a second stream, once.
  constexpr int kSecondStreamLaunches = 32;
  ASSIGN_OR_RETURN(r->second_stream_, CudaStream::Create());
  for (int i = 0; i < kSecondStreamLaunches; ++i) {
    CUDA_RETURN_IF_ERROR(LaunchEmptyKernel(r->second_stream_.get()));
  }
  RETURN_IF_ERROR(r->second_stream_.Synchronize());
  ASSIGN_OR_RETURN(r->lt_, LtHandle::Create());
  ASSIGN_OR_RETURN(r->workspace_, DeviceBuffer::Create(kWorkspaceBytes));
  ASSIGN_OR_RETURN(IterationTimer timer, IterationTimer::Create());
  r->timer_ = std::make_unique<IterationTimer>(std::move(timer));
  return r;
}

absl::Status CudaRunner::InitDeviceInfo() {
  cudaDeviceProp p{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, ordinal_));
  int driver = 0, runtime = 0;
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&runtime));
  sm_ = p.major * 10 + p.minor;
  l2_bytes_ = p.l2CacheSize;
  info_.backend = "cuda";
  info_.name = p.name;
  info_.uuid = UuidString(p.uuid);
  info_.sm = sm_;
  info_.sm_count = p.multiProcessorCount;
  info_.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  info_.cuda_version = CudaVersionString(runtime);
  const size_t lt = cublasLtGetVersion();
  info_.cublaslt_version = absl::StrCat(lt / 10000, ".", (lt % 10000) / 100, ".", lt % 100);
  info_.gemmprof_version = GEMMPROF_VERSION;
  absl::StatusOr<std::unique_ptr<NvmlDevice>> nvml = NvmlDevice::Open(info_.uuid);
  if (nvml.ok()) {
    nvml_ = std::move(*nvml);
    absl::StatusOr<std::string> v = nvml_->DriverVersion();
    info_.driver_version = v.ok() ? *v : "";
  } else {
    nvml_note_ = absl::StrCat("no NVML telemetry: ", nvml.status().message());
  }
  if (info_.driver_version.empty()) {
    info_.driver_version = absl::StrCat("CUDA driver API ", CudaVersionString(driver));
  }
  info_.recipes.clear();
  for (Recipe r : core::AllRecipes()) info_.recipes.push_back(Supports(r));
  return absl::OkStatus();
}

core::RecipeSupport CudaRunner::Supports(core::Recipe recipe) const {
  core::RecipeSupport s;
  s.recipe = recipe;
  const std::string name(core::ToString(recipe));
  // The device code is built for sm_90a and sm_100a only (CMake CUDA_ARCHITECTURES);
  // arch-specific cubins run on no other chip.
  if (sm_ != 90 && sm_ != 100) {
    s.reason =
        absl::StrCat("gemmprof's kernels are built for sm_90a and sm_100a, this is sm_", sm_);
    return s;
  }
  if (core::IsServingRecipe(recipe)) {
    // CUTLASS's INT8 and mixed-input GEMMs, built for sm_90a only (no cuBLASLt form).
#ifndef GEMMPROF_WITH_CUTLASS
    s.reason = absl::StrCat(name,
                            ": its GEMMs are CUTLASS kernels and this build has no CUTLASS (run "
                            "deploy/install_cutlass.sh and rebuild)");
    return s;
#else
    if (sm_ != 90) {
      s.reason = absl::StrCat(name, ": not supported on sm_", sm_,
                              " (its CUTLASS kernels are built for sm_90a only)");
      return s;
    }
    s.supported = true;
    return s;
#endif
  }
  const bool microscaled = recipe == Recipe::kMxfp8 || recipe == Recipe::kNvfp4;
  const int need = microscaled ? 100 : 90;
  if (sm_ < need) {
    s.reason = absl::StrCat(name, " needs sm_", need, "+, this is sm_", sm_);
    return s;
  }
  s.supported = true;
  return s;
}

absl::Status CudaRunner::CheckMemory(const core::WorkItem& item,
                                     const core::TimingOptions& timing) const {
  size_t free_bytes = 0, total_bytes = 0;
  RETURN_IF_ERROR(core::WhileDoing(CUDA_STATUS(cudaMemGetInfo(&free_bytes, &total_bytes)),
                                   "reading the free device memory"));
  // Buffers this runner already holds are reused, so they count as available.
  const double available = static_cast<double>(free_bytes) + pool_.HeldBytes();
  // The verification's fp32 copies are allocated while the measurement's buffers are
  // still held, so both count.
  const double need =
      static_cast<double>(MeasurementBytes(item, timing, kWorkspaceBytes, l2_bytes_)) +
      static_cast<double>(VerificationBytes(item.op.shape, item.op.groups));
  if (need <= available) return absl::OkStatus();
  const std::string groups =
      item.op.groups > 1 ? absl::StrCat(" x ", item.op.groups, " groups") : "";
  return absl::ResourceExhaustedError(
      absl::StrFormat("shape %s%s (%s, %s) needs %.1f GiB of device memory; %.1f GiB free",
                      item.op.shape.ToString(), groups, core::ToString(item.op.pass),
                      core::ToString(item.recipe), need / kGiB, available / kGiB));
}

bool CudaRunner::MembersFit(const core::GroupRequest& request,
                            const std::vector<measure::MemberItems>& members) const {
  if (members.size() <= 1) return true;
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return false;
  const double available = static_cast<double>(free_bytes) + pool_.HeldBytes();
  // The workspace and the flush buffer are shared by every member, the BF16 sources and
  // the output by the members of one measurement group (GroupKey), the verification
  // buffers are reused member after member: count each once, and each member's quantized
  // copies on top.
  const double fixed =
      kWorkspaceBytes + (core::FlushesL2(request.timing.l2) ? 2.0 * l2_bytes_ : 0.0);
  double need = fixed, verification = 0;
  std::vector<std::string> counted;
  for (const measure::MemberItems& m : members) {
    const core::WorkItem& item = request.items[m.items.front()];
    const core::GemmShape& s = item.op.shape;
    const double shared = 2.0 * (s.m * s.k + s.n * s.k + s.m * s.n) * item.op.groups;
    need +=
        static_cast<double>(MeasurementBytes(item, request.timing, kWorkspaceBytes, l2_bytes_)) -
        shared - fixed;
    const std::string key = core::GroupKey(item.op);
    if (std::find(counted.begin(), counted.end(), key) == counted.end()) {
      counted.push_back(key);
      need += shared;
    }
    verification =
        std::max(verification, static_cast<double>(VerificationBytes(s, item.op.groups)));
  }
  // 5% headroom for the allocator's rounding (2 MiB grains) and cuBLASLt.
  return (need + verification) * 1.05 <= available;
}

absl::StatusOr<std::vector<absl::Status>> CudaRunner::CanImplement(
    const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const {
  return device::CheckEach(*this, items,
                           [&](const core::WorkItem& item) { return CheckItem(item, timing); });
}

absl::Status CudaRunner::CheckItem(const core::WorkItem& item,
                                   const core::TimingOptions& timing) const {
  const core::GemmShape& s = item.op.shape;
  if (s.m <= 0 || s.k <= 0 || s.n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", s.ToString(), ": every dimension must be positive"));
  }
  RETURN_IF_ERROR(CheckGroups(item));
  if (item.recipe != Recipe::kBf16) {
    // FP8 rows must be 16-byte aligned for cuBLASLt (K: A and B^T rows; N: C rows and
    // the weight's rows); packed FP4 needs 32 elements for 16 bytes.
    const int64_t align = item.recipe == Recipe::kNvfp4 || item.recipe == Recipe::kMxfp8 ? 32 : 16;
    const std::string recipe(core::ToString(item.recipe));
    if (s.k % align != 0) {
      return absl::FailedPreconditionError(absl::StrCat(recipe, " needs K to be a multiple of ",
                                                        align, "; shape ", s.ToString(),
                                                        " has K=", s.k));
    }
    if (s.n % 16 != 0) {
      return absl::FailedPreconditionError(absl::StrCat(recipe, " needs N to be a multiple of 16; ",
                                                        "shape ", s.ToString(), " has N=", s.n));
    }
  }
  if (timing.timing_backend == core::TimingBackend::kKernels) {
    // Events would still measure; the figure asked for could not be taken.
    RETURN_IF_ERROR(CuptiTracer::Get().status());
  }
  if (absl::Status st = CUDA_STATUS(cudaSetDevice(ordinal_)); !st.ok()) return st;
  return CheckMemory(item, timing);
}

absl::Status CudaRunner::BeginJob(const core::TimingOptions& timing) {
  // What the board draws at rest before the job runs anything: reported beside energy
  // figures, never subtracted.
  if (timing.energy && nvml_ != nullptr) {
    absl::StatusOr<double> idle = RestingPowerW(*nvml_);
    idle_power_w_ = idle.ok() ? *idle : 0;
  }
  RETURN_IF_ERROR(core::WhileDoing(WarmUp(timing), "warming up the GPU"));
  if (copy_bytes_per_s_ > 0) return absl::OkStatus();
  return core::WhileDoing(MeasureCopyBandwidth(), "measuring the copy bandwidth");
}

absl::Status CudaRunner::MeasureCopyBandwidth() {
  // The bandwidth floor of a quantization is its bytes over what a plain device-to-device
  // copy achieves here (not the datasheet's peak). 256 MiB each way is far beyond L2.
  constexpr size_t kBytes = size_t{256} << 20;
  ASSIGN_OR_RETURN(DeviceBuffer src, DeviceBuffer::Create(kBytes));
  ASSIGN_OR_RETURN(DeviceBuffer dst, DeviceBuffer::Create(kBytes));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(src.get(), 1, kBytes, stream_.get()));
  TimerOptions options;
  options.warmup_iters = 3;
  options.timed_iters = 20;
  ASSIGN_OR_RETURN(TimerResult r,
                   timer_->Time(
                       stream_.get(),
                       [&](cudaStream_t q) -> absl::Status {
                         CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst.get(), src.get(), kBytes,
                                                              cudaMemcpyDeviceToDevice, q));
                         return absl::OkStatus();
                       },
                       options));
  const double ms = core::SampleStats::FromSamples(r.samples_ms).median_ms;
  if (ms > 0) copy_bytes_per_s_ = 2.0 * kBytes / (ms / 1e3);
  return absl::OkStatus();
}

absl::Status CudaRunner::WarmUp(const core::TimingOptions& timing) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  if (timing.gpu_warmup_s <= 0) return absl::OkStatus();
  // A square BF16 GEMM large enough to load every SM raises clocks and temperature to
  // their working level before the first measured item.
  constexpr int64_t kN = 4096;
  ASSIGN_OR_RETURN(auto* a, pool_.GetAs<__nv_bfloat16>("warmup.a", kN * kN));
  ASSIGN_OR_RETURN(auto* b, pool_.GetAs<__nv_bfloat16>("warmup.b", kN * kN));
  ASSIGN_OR_RETURN(auto* c, pool_.GetAs<__nv_bfloat16>("warmup.c", kN * kN));
  const cudaStream_t s = stream_.get();
  CUDA_RETURN_IF_ERROR(FillRandomNormalBf16(a, kN * kN, timing.seed, 101, s));
  CUDA_RETURN_IF_ERROR(FillRandomNormalBf16(b, kN * kN, timing.seed, 102, s));
  MatmulSpec spec;
  spec.m = spec.n = spec.k = kN;
  spec.a = a;
  spec.bt = b;
  spec.c = c;
  spec.workspace = workspace_.get();
  spec.workspace_bytes = workspace_.bytes();
  ASSIGN_OR_RETURN(MatmulPlan plan, MatmulPlan::Create(lt_.get(), spec, 1));
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         timing.gpu_warmup_s) {
    for (int i = 0; i < 20; ++i) RETURN_IF_ERROR(plan.Enqueue(s));
    RETURN_IF_ERROR(stream_.Synchronize());
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
