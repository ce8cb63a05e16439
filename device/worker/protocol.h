// Conversions between the worker protocol (proto/gemmprof/v1/worker.proto) and the
// domain: statuses with their payloads, items with their timing options, measurement
// groups with their outcomes, fit checks with their answers.
#pragma once

#include <vector>

#include "core/group.h"
#include "core/job.h"
#include "core/status.h"
#include "gemmprof/v1/worker.pb.h"

namespace gemmprof::worker {

namespace wp = ::gemmprof::v1::worker;

// Code, message, source payload and context-lost mark.
wp::Status ToProto(const absl::Status& status);
absl::Status FromProto(const wp::Status& status);

// The items of one CanImplement question and their timing options.
wp::FitCall ToFitCall(const std::vector<core::WorkItem>& items, const core::TimingOptions& timing);
// InvalidArgument for enum-like strings that do not parse, naming the item
// ("items[2]: item.recipe: ...") or the timing field.
absl::Status FromFitCall(const wp::FitCall& call, std::vector<core::WorkItem>* items,
                         core::TimingOptions* timing);

wp::GroupCall ToGroupCall(const core::GroupRequest& request);
// InvalidArgument for enum-like strings that do not parse, naming the item
// ("items[2]: item.recipe: ...") or the timing field.
absl::StatusOr<core::GroupRequest> FromGroupCall(const wp::GroupCall& call);

// Outcomes keep their order; each status goes through ToProto(absl::Status), each
// measurement is sent only with an OK status.
wp::GroupResult ToProto(const core::GroupResult& result);
// The worker's answer to `request`, checked against it: Internal naming what mismatched
// when the outcome count differs from the item count, an outcome's item id is not its
// request item's, an OK outcome lacks its measurement, or a measurement does not convert.
absl::StatusOr<core::GroupResult> FromGroupResult(const wp::GroupResult& result,
                                                  const core::GroupRequest& request);

}  // namespace gemmprof::worker
