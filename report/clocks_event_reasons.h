// NVML clocks-event reasons (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*):
// the bits OR-ed into core::Telemetry::throttle_reasons, decoded for humans. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace gemmprof::report {

// nvmlClocksEventReasonGpuIdle: nothing ran, clocks dropping to idle. Not a throttle.
inline constexpr uint64_t kClocksEventGpuIdle = 0x1;

// The names of the set bits, lowest bit first and comma separated: 0x4 | 0x20 gives
// "sw power cap, sw thermal slowdown". GPU idle is left out; bits NVML had not defined
// when this was written show as hex ("0x800"). Empty when no other bit is set.
std::string ClocksEventReasonNames(uint64_t reasons);

// What the most serious of the reasons means for the medians, as a clause
// ("medians on a power-capped GPU drift by a few %"), or "" when none applies.
std::string ClocksEventImpact(uint64_t reasons);

}  // namespace gemmprof::report
