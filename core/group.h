// A measurement group: the items a report compares with each other (the recipes and
// modes of one GEMM), measured together in interleaved rounds by Runner::MeasureGroup.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/progress.h"
#include "core/result.h"
#include "core/status.h"

namespace gemmprof::core {

// What items of one group share: pass, M, K, N and groups (the report row's identity
// less the op name, so same-shape ops of one job are compared together too).
std::string GroupKey(const GemmOp& op);

// Item indexes (into `items`) grouped by GroupKey, groups in order of their first item,
// items in their order within a group.
std::vector<std::vector<size_t>> GroupItems(const std::vector<WorkItem>& items);

// An item's measurement context (docs/measurement.md "Contexts"): items of equal context
// may share a batch. --context workload: "workload: training step" (a model job without
// --sweep-m: every GEMM of the step), "workload: m=<M>" (one step of a sweep, at M tokens,
// its expert GEMMs included; or the GEMMs of a shape list with that M); --context
// isolated: "isolated" (every GEMM its own batch). Part of the item's cache key.
std::string ContextOf(const JobSpec& spec, const GemmOp& op);

// The GEMMs of a batch, for the record: each distinct GroupKey once, in order of first
// occurrence, "16x4096x14336, 16x14336x4096" (the pass is named unless fprop, " g<N>" for
// grouped GEMMs).
std::string BatchGemms(const std::vector<WorkItem>& items);

struct GroupRequest {
  std::string group_uid;  // unique, e.g. "<device uuid>/j<job>/s<first seq>/<unix ms>"
  // >= 1 items: one GroupKey, or a batch of several timed in one set of rounds
  // (docs/measurement.md "Batches"); results of one set of rounds share group_uid.
  std::vector<WorkItem> items;
  TimingOptions timing;
  bool share_identical_work = true;  // false: identical work timed separately (benchmarks)
  int64_t deadline_unix_ms = 0;      // rounds end by then ("deadline"); 0 = none
  // Nsight mode (JobSpec.profile): after the rounds, each member's timed graph runs once
  // more between cudaProfilerStart/Stop inside an NVTX range named after the item.
  bool profile = false;
  // Not sent anywhere: the caller's watchdog (core/progress.h). Runners report their
  // steps to it and stop at a step boundary when it asks; null: nobody watches.
  MeasureProgress* progress = nullptr;
  // Not sent anywhere: polled by a runner that forwards the call (the remote runner)
  // while it waits; true asks the call to stop (a cancelled job). Empty: never.
  std::function<bool()> cancelled;
};

// One item's outcome. A refusal of this item alone (FailedPrecondition / Unimplemented
// = not supported here) or a failure of this item alone comes back here; a failure of
// the group (device error, lost worker) is MeasureGroup's own status.
struct ItemOutcome {
  int64_t item_id = 0;
  absl::Status status;
  std::optional<Measurement> measurement;  // with an OK status
};

struct GroupResult {
  std::vector<ItemOutcome> outcomes;  // one per request item, same order
  int32_t rounds = 0;
  std::string stop_reason;
};

}  // namespace gemmprof::core
