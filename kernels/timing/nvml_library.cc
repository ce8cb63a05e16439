#include "kernels/timing/nvml_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"

namespace gemmprof::kernels {

// nvmlReturn_t is an int enum, nvmlDevice_t an opaque pointer.
struct NvmlDevice::Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*by_uuid)(const char*, void**) = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*power)(void*, unsigned*) = nullptr;
  int (*temperature)(void*, int, unsigned*) = nullptr;
  int (*reasons)(void*, unsigned long long*) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*energy)(void*, unsigned long long*) = nullptr;  // optional
};

namespace {

constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;
constexpr int kNvmlErrorNotSupported = 3;

template <typename F>
bool Resolve(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

}  // namespace

#define NVML_RETURN_IF_ERROR(call)                                                            \
  do {                                                                                        \
    const int nvml_ret_ = (call);                                                             \
    RETURN_IF_ERROR(::gemmprof::kernels::NvmlStatus(nvml_ret_, api_->error_string(nvml_ret_), \
                                                    #call, __FILE__, __LINE__));              \
  } while (0)

absl::StatusOr<std::unique_ptr<NvmlDevice>> NvmlDevice::Open(const std::string& uuid) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return absl::UnavailableError(absl::StrCat("NVML not loadable: ", dlerror()));
  std::unique_ptr<NvmlDevice> d(new NvmlDevice());
  d->lib_ = lib;
  d->api_ = std::make_unique<Api>();
  Api& a = *d->api_;
  // The _v2 names are the current ABI; the clocks-event query kept its older name as an
  // alias, which every driver since r530 exports.
  const bool ok = Resolve(lib, "nvmlInit_v2", &a.init) &&
                  Resolve(lib, "nvmlShutdown", &a.shutdown) &&
                  Resolve(lib, "nvmlErrorString", &a.error_string) &&
                  Resolve(lib, "nvmlDeviceGetHandleByUUID", &a.by_uuid) &&
                  Resolve(lib, "nvmlDeviceGetClockInfo", &a.clock) &&
                  Resolve(lib, "nvmlDeviceGetPowerUsage", &a.power) &&
                  Resolve(lib, "nvmlDeviceGetTemperature", &a.temperature) &&
                  Resolve(lib, "nvmlSystemGetDriverVersion", &a.driver_version) &&
                  (Resolve(lib, "nvmlDeviceGetCurrentClocksEventReasons", &a.reasons) ||
                   Resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &a.reasons));
  if (!ok) return absl::UnavailableError("NVML lacks an entry point gemmprof needs");
  // The energy counter is optional: without it only energy figures are missing.
  Resolve(lib, "nvmlDeviceGetTotalEnergyConsumption", &a.energy);
  const int init = a.init();
  if (init != 0) {
    a.init = nullptr;  // nothing to shut down
    return NvmlStatus(init, a.error_string(init), "nvmlInit_v2()", __FILE__, __LINE__);
  }
  const int found = a.by_uuid(uuid.c_str(), &d->device_);
  if (found != 0) {
    return NvmlStatus(found, a.error_string(found),
                      absl::StrCat("nvmlDeviceGetHandleByUUID(", uuid, ")"), __FILE__, __LINE__);
  }
  return d;
}

NvmlDevice::~NvmlDevice() {
  if (api_ && api_->init != nullptr && api_->shutdown != nullptr) api_->shutdown();
  if (lib_ != nullptr) dlclose(lib_);
}

absl::StatusOr<NvmlSample> NvmlDevice::Sample() const {
  NvmlSample s;
  unsigned sm = 0, mem = 0, mw = 0, temp = 0;
  unsigned long long reasons = 0;
  NVML_RETURN_IF_ERROR(api_->clock(device_, kClockSm, &sm));
  NVML_RETURN_IF_ERROR(api_->clock(device_, kClockMem, &mem));
  NVML_RETURN_IF_ERROR(api_->power(device_, &mw));
  NVML_RETURN_IF_ERROR(api_->temperature(device_, kTemperatureGpu, &temp));
  NVML_RETURN_IF_ERROR(api_->reasons(device_, &reasons));
  s.sm_clock_mhz = sm;
  s.mem_clock_mhz = mem;
  s.power_w = mw / 1000.0;
  s.temp_c = temp;
  s.clocks_event_reasons = reasons;
  return s;
}

absl::StatusOr<double> NvmlDevice::PowerW() const {
  unsigned mw = 0;
  NVML_RETURN_IF_ERROR(api_->power(device_, &mw));
  return mw / 1000.0;
}

absl::StatusOr<uint64_t> NvmlDevice::TotalEnergyMj() const {
  if (api_->energy == nullptr)
    return absl::UnimplementedError(
        "this driver's NVML has no nvmlDeviceGetTotalEnergyConsumption");
  unsigned long long mj = 0;
  const int ret = api_->energy(device_, &mj);
  if (ret == kNvmlErrorNotSupported)
    return absl::UnimplementedError("this board has no energy counter (NVML: not supported)");
  NVML_RETURN_IF_ERROR(ret);
  return static_cast<uint64_t>(mj);
}

absl::StatusOr<std::string> NvmlDevice::DriverVersion() const {
  char buf[96] = {};
  NVML_RETURN_IF_ERROR(api_->driver_version(buf, sizeof(buf)));
  return std::string(buf);
}

}  // namespace gemmprof::kernels
