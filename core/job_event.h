// One progress event of a job: what the queue publishes, the watch stream carries and the
// CLI shows.
#pragma once

#include <optional>

#include "core/job.h"

namespace gemmprof::core {

struct JobEvent {
  enum class Kind { kSnapshot, kItemStarted, kItemFinished, kItemFailed, kJobFinished };
  Kind kind = Kind::kSnapshot;
  JobRecord job;                   // state and counters after the event
  std::optional<ItemRecord> item;  // the item concerned, for item events
};

}  // namespace gemmprof::core
