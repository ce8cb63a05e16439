// How long the daemon waits for a worker before it declares the work hung, kills the
// worker and fails the item or group (--item-timeout; 0 derives a bound from each item).
#pragma once

#include <string>
#include <vector>

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

// Beyond its items' bounds a group gets this much: setting up and tearing down the
// rounds, and a round still running when the budget runs out.
inline constexpr double kGroupSlackS = 5;

// Seconds a measurement group of `items` may take: the sum of ItemTimeoutSeconds over
// its items, plus timing.item_budget_s per item for noise-aware timing (timed_iters 0:
// the rounds run for their budget, not for a number of iterations), plus kGroupSlackS.
double GroupTimeoutSeconds(const std::vector<core::WorkItem>& items,
                           const core::TimingOptions& timing, bool host_backend,
                           double configured_s);

// A MeasureGroup call that makes no progress (core/progress.h: no step) for this long
// after its first round, or kSlowestStepFactor x its slowest round step if longer, is
// hung (docs/measurement.md "Faults").
inline constexpr double kMinNoProgressS = 10;
inline constexpr double kSlowestStepFactor = 20;

// Seconds a call may go without a step before its first round (while its members are
// set up: warm-up, autotune, the GEMM library's choice burst): kSafetyFactor x a
// pessimistic estimate of the set-up of its heaviest item, never below kMinNoProgressS,
// rounded up to whole seconds (as NoProgressSeconds' answers are).
double SetupStepSeconds(const std::vector<core::WorkItem>& items, const core::TimingOptions& timing,
                        bool host_backend);

// The no-progress bound in force: SetupStepSeconds' `setup_s` while no round step was
// seen (slowest_step_ms 0), else max(kMinNoProgressS, kSlowestStepFactor x the slowest).
double NoProgressSeconds(double slowest_step_ms, double setup_s);

// Seconds a job's device warm-up may take: timing.gpu_warmup_s plus `configured_s`
// (kMinDerivedTimeoutS when 0).
double BeginJobTimeoutSeconds(const core::TimingOptions& timing, double configured_s);

// "60", "1.5", "0.25": seconds for messages.
std::string FormatSeconds(double seconds);

}  // namespace gemmprof::worker
