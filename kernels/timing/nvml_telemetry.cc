#include "kernels/timing/nvml_telemetry.h"

#include <mutex>
#include <utility>

#include "kernels/timing/nvml_library.h"

namespace gemmprof::kernels {
namespace {

class NvmlTelemetry final : public device::DeviceTelemetry {
 public:
  NvmlTelemetry(std::vector<TelemetryDevice> devices, std::vector<std::string>* problems) {
    for (TelemetryDevice& d : devices) {
      auto nvml = NvmlDevice::Open(d.uuid);
      if (!nvml.ok()) {
        if (problems != nullptr) {
          problems->push_back("device " + std::to_string(d.index) + " (" + d.name +
                              "): " + std::string(nvml.status().message()));
        }
        continue;
      }
      opened_.push_back({std::move(d), *std::move(nvml)});
    }
  }

  std::vector<device::DeviceReading> Read() override {
    std::vector<device::DeviceReading> out;
    // NvmlDevice is thread-compatible; scrapes may come from several HTTP threads.
    std::lock_guard lock(mu_);
    for (const Opened& o : opened_) {
      device::DeviceReading r{o.device.index, o.device.uuid, o.device.name, {}, {}, {}};
      if (auto s = o.nvml->Sample(); s.ok()) {
        r.sm_clock_hz = s->sm_clock_mhz * 1e6;
        r.power_w = s->power_w;
        r.temperature_c = s->temp_c;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct Opened {
    TelemetryDevice device;
    std::unique_ptr<NvmlDevice> nvml;
  };
  std::mutex mu_;
  std::vector<Opened> opened_;
};

}  // namespace

std::unique_ptr<device::DeviceTelemetry> MakeNvmlTelemetry(std::vector<TelemetryDevice> devices,
                                                           std::vector<std::string>* problems) {
  return std::make_unique<NvmlTelemetry>(std::move(devices), problems);
}

}  // namespace gemmprof::kernels
