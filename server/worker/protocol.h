// Conversions between the worker protocol (proto/gemmprof/v1/worker.proto) and the
// domain: statuses with their payloads, items with their timing options.
#pragma once

#include "core/job.h"
#include "core/status.h"
#include "gemmprof/v1/worker.pb.h"

namespace gemmprof::worker {

namespace wp = ::gemmprof::v1::worker;

// Code, message, source payload and context-lost mark.
wp::Status ToProto(const absl::Status& status);
absl::Status FromProto(const wp::Status& status);

wp::ItemCall ToItemCall(const core::WorkItem& item, const core::TimingOptions& timing);
// InvalidArgument for enum-like strings that do not parse.
absl::Status FromItemCall(const wp::ItemCall& call, core::WorkItem* item,
                          core::TimingOptions* timing);

}  // namespace gemmprof::worker
