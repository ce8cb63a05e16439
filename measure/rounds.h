// The measurement engine: a batch's members measured together in interleaved rounds.
//
// The protocol, the same for every runner: warm-up; a pilot that sizes each visit (about
// 1 ms of samples) and each group's back-to-back count (a launch of about 2 ms); then
// rounds, each visiting every unit once in a balanced order that changes from round to
// round (round_order.h), so clock and power drift falls on every member alike; a unit's
// round value is the median of its visit's samples. Rounds stop at a fixed count, or
// when in every group each member's isolated figure and each pair's paired ratio are
// within the precision target, or at the time budget, or at the request's deadline
// (stop_rule.h). A member with contenders (other kernels for the same work) times them
// as units of their own, and the fastest by paired ratio over the same rounds is kept.
//
// What a runner brings: its members (MemberSpec) and a Timer that runs the units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/progress.h"
#include "core/status.h"
#include "measure/stop_rule.h"
#include "measure/timer.h"

namespace gemmprof::measure {

// One distinct piece of work of the batch.
struct MemberSpec {
  // Its measurement group (the items a report compares: one GroupKey) in the batch. Any
  // numbering: groups are told apart by value. Members of one group share their
  // back-to-back count, and their paired ratios gate the stop rule.
  size_t group = 0;
  bool quantization = false;  // has a quantization-alone unit
  // forms[0] names the member's own GEMM; each further name is a contender timed in the
  // rounds beside it (isolated and back to back). Empty: one unnamed form.
  std::vector<std::string> forms;
};

struct RoundsOptions {
  StopOptions stop;
  int64_t deadline_unix_ms = 0;       // rounds end by then ("deadline"); 0 = none
  int32_t warmup_launches = 10;       // per isolated unit, each form
  int32_t quant_warmup_launches = 2;  // per quantization unit
  // With a pilot, visits are sized to about 1 ms of samples and, for a noise-aware run,
  // back to back of GEMMs of 1 ms or more is visited every second round. Without one,
  // every visit is one sample and every unit is visited every round.
  bool pilot = true;
  // > 0: iterations per back-to-back launch; 0: sized from the pilot (2..10, a launch of
  // about 2 ms from the group's shortest isolated time; 2 without a pilot).
  int32_t b2b_count = 0;
  // The call's watchdog: each timer call is a step; a cancel ends the rounds (Cancelled)
  // before the next. May be null.
  core::MeasureProgress* progress = nullptr;
};

// The stop rule of a GPU measurement of `members` members under `timing`: fixed rounds
// when timing.timed_iters > 0, else the precision target within a budget of
// timing.item_budget_s per member.
StopOptions StopOptionsFor(const core::TimingOptions& timing, size_t members);

// What the rounds gave one member.
struct MemberRounds {
  std::vector<double> iso_rounds;    // per round, ms per iteration
  std::vector<double> iso_samples;   // every isolated sample, in order
  std::vector<double> b2b_rounds;    // per visited round
  std::vector<double> quant_rounds;  // per round; empty without a quantization unit
  int32_t b2b_count = 0;             // iterations per back-to-back launch
  int32_t b2b_every = 1;             // back to back visited every this many rounds
  std::string stop_reason;           // its group's, with its group's precision
  size_t kept_form = 0;              // the form the series above are of (contest)
  // With contenders: what the contest kept and every contender's paired ratio.
  std::string contest_note;
};

struct RoundsResult {
  int32_t rounds = 0;
  std::string stop_reason;  // the batch's
  bool deadline = false;    // the request's deadline ended the rounds
  std::vector<MemberRounds> members;
};

// Measures `members` through `timer`. A timer error is returned as is (the runner
// decides what it means for the batch); InvalidArgument for no members.
absl::StatusOr<RoundsResult> MeasureRounds(const std::vector<MemberSpec>& members,
                                           const RoundsOptions& options, Timer& timer,
                                           const Clock& clock);

}  // namespace gemmprof::measure
