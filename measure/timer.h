// The narrow interface between the measurement engine and whatever runs the work: the
// CUDA runner's graphs, the host runner's CPU loops, or a scripted fake in tests. The
// engine decides what to time, in which order, how often and when to stop; a Timer only
// runs what it is asked and returns the samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/status.h"

namespace gemmprof::measure {

// One way of timing one member (a distinct piece of work of a measured batch).
enum class UnitKind {
  kIsolated,      // one iteration per launch: the headline figure
  kBackToBack,    // `repeat` iterations in one launch, as a training step runs them
  kQuantization,  // the member's timed quantization alone (autocast and dynamic modes)
};

struct UnitId {
  size_t member = 0;
  UnitKind kind = UnitKind::kIsolated;
  // 0: the member's own GEMM; c + 1: its contender c (another kernel that may replace it,
  // see MemberSpec::contenders). Quantization units are always form 0.
  size_t form = 0;
  friend bool operator==(const UnitId&, const UnitId&) = default;
};

struct Visit {
  UnitId unit;
  int32_t samples = 1;  // timed launches, one sample each
  int32_t repeat = 1;   // iterations per launch (back to back): a sample is ms per iteration
  // A visit of the rounds, where other units ran just before it: a timer may launch the
  // unit once, untimed, before its samples (with a hot L2 the unit before evicted this
  // one's operands). The pilot's visits are not.
  bool interleaved = false;
};

// Runs the engine's requests. Not thread-safe; the engine calls it from one thread.
class Timer {
 public:
  static constexpr int32_t kUnbounded = std::numeric_limits<int32_t>::max();

  virtual ~Timer() = default;

  // `launches` untimed launches of the visit's unit (visit.samples is ignored); the
  // timer may cap or skip them (the host runner does).
  virtual absl::Status WarmUp(const Visit& visit, int32_t launches) = 0;

  // Makes member `member`'s back-to-back units (every form) hold `repeat` iterations per
  // launch. Called once per member, after the pilot and before the first round.
  virtual absl::Status PrepareBackToBack(size_t member, int32_t repeat) = 0;

  // Times the visits in order: result[v] holds visit v's samples (visits[v].samples of
  // them), in ms per iteration. An error fails the whole measurement.
  virtual absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(
      const std::vector<Visit>& visits) = 0;

  // How many rounds, each visiting `round` (every unit once), one TimeVisits call may
  // take; at least 1. The CUDA timer is bounded by its launch queue.
  virtual int32_t MaxRoundsPerCall(const std::vector<Visit>& round) const {
    (void)round;
    return kUnbounded;
  }
};

// How long a device was busy with a set of kernels, each given as its [start, end) in ns:
// the length of the union of the intervals, in ms. Kernels that run one after another add
// up; overlapping ones count once (a programmatic dependent launch starts while the kernel
// it depends on ends, and CUPTI's records of the two overlap). An interval that ends before
// it starts counts as empty.
double BusyMs(std::vector<std::pair<uint64_t, uint64_t>> intervals);

// Time as the engine reads it: a steady clock for the budget, the wall clock for a
// request's deadline. Tests script both.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double NowS() const = 0;     // steady, seconds from any origin
  virtual int64_t UnixMs() const = 0;  // wall clock, ms since the epoch
};

// The process's clocks.
class SystemClock final : public Clock {
 public:
  double NowS() const override;
  int64_t UnixMs() const override;
};

}  // namespace gemmprof::measure
