// How long the daemon waits for a worker before it declares the work hung, kills the
// worker and fails the item (--item-timeout; 0 derives a bound from each item).
#pragma once

#include <string>

#include "core/job.h"
#include "core/status.h"

namespace gemmprof::worker {

// A derived bound is never below this: process start-up, cuBLASLt heuristics and
// telemetry make even the smallest item take a noticeable moment.
inline constexpr double kMinDerivedTimeoutS = 60;
// The largest --item-timeout accepted: one week.
inline constexpr double kMaxItemTimeoutS = 7 * 24 * 3600;

// OK for a finite value in [0, kMaxItemTimeoutS]; InvalidArgument naming the flag,
// the value and the range otherwise.
absl::Status ValidateItemTimeout(double seconds);

// Seconds item `item` may take: `configured_s` when > 0; otherwise four times a
// pessimistic estimate, at least kMinDerivedTimeoutS. The estimate counts every
// iteration the runner makes (warm-up, timed, the quantization-only pass, autotune
// rounds, verification) at a throughput far below the device's (20 TFLOP/s on a GPU, 0.2 GFLOP/s
// for the host reference, which also caps its iterations).
double ItemTimeoutSeconds(const core::WorkItem& item, const core::TimingOptions& timing,
                          bool host_backend, double configured_s);

// Seconds a job's device warm-up may take: timing.gpu_warmup_s plus `configured_s`
// (kMinDerivedTimeoutS when 0).
double BeginJobTimeoutSeconds(const core::TimingOptions& timing, double configured_s);

// "60", "1.5", "0.25": seconds for messages.
std::string FormatSeconds(double seconds);

}  // namespace gemmprof::worker
