// What an error carries besides its user-facing message, as absl::Status payloads:
//  * the source location and call text ("kernels/runner/cuda_runner.cc:114: cudaMemGetInfo(...)")
//    for the daemon's log only, never for users;
//  * a mark that the device's context is lost (a sticky CUDA error such as an illegal
//    address): nothing more can run in the process that saw it.
// Payloads survive copies of the Status; messages stay free of build paths.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "core/status.h"

namespace gemmprof::core {

// Type URLs of the payloads.
inline constexpr char kSourcePayloadUrl[] = "type.gemmprof/source";
inline constexpr char kContextLostPayloadUrl[] = "type.gemmprof/context-lost";
inline constexpr char kInFlightPayloadUrl[] = "type.gemmprof/in-flight-item";

// `status` with `where` ("file:line: call") attached for the log. OK stays OK.
absl::Status WithSource(absl::Status status, absl::string_view where);
// The attached source, or "" when there is none.
std::string SourceOf(const absl::Status& status);

// `status` marked: the device context that produced it is unusable. OK stays OK.
absl::Status MarkContextLost(absl::Status status);
bool IsContextLost(const absl::Status& status);

// `status` marked with the item (WorkItem id) whose measurement group was in flight when
// the call failed (a hung call: core/progress.h). OK, or item_id 0, leaves it as it is.
absl::Status MarkInFlight(absl::Status status, int64_t item_id);
// The marked item's id, 0 when there is none.
int64_t InFlightItem(const absl::Status& status);

// The same code and payloads with `suffix` appended to the message. OK stays OK.
absl::Status AppendToMessage(const absl::Status& status, absl::string_view suffix);

// The same code and payloads with " while <activity>" appended to the message, e.g.
// "CUDA out of memory (cudaErrorMemoryAllocation) while preparing the operands". OK
// stays OK.
absl::Status WhileDoing(const absl::Status& status, absl::string_view activity);
template <typename T>
absl::StatusOr<T> WhileDoing(absl::StatusOr<T> value, absl::string_view activity) {
  if (value.ok()) return value;
  return WhileDoing(value.status(), activity);
}

}  // namespace gemmprof::core
