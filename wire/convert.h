// proto <-> domain conversion, the only place where gemmprof.v1 messages and core
// types meet. Used by the daemon's service and by the client's transport.
// From-proto functions validate the enum-like strings and return InvalidArgument
// naming the field, the value and the valid names. They check ranges only where no
// later check does: the measurement fields of interleaved rounds (finite, non-negative
// times, counts and rates; ci_low_ms <= ci_high_ms) and the noise-aware timing options
// (a set precision_target / item_budget_s finite and > 0, b2b_count >= 0); other ranges
// are core/validation's job. Measurement conversion lives in measurement_convert.cc; watch
// events, filters and result rows in query_convert.cc.
#pragma once

#include "core/daemon_record.h"
#include "core/job.h"
#include "core/job_event.h"
#include "core/query.h"
#include "core/status.h"
#include "gemmprof/v1/gemmprof.pb.h"

namespace gemmprof::wire {

namespace v1 = ::gemmprof::v1;

v1::ModelConfig ToProto(const core::ModelConfig& m);
core::ModelConfig FromProto(const v1::ModelConfig& m);

// Defaults are applied for zero / empty fields (see the proto comments).
v1::TimingOptions ToProto(const core::TimingOptions& t);
absl::StatusOr<core::TimingOptions> FromProto(const v1::TimingOptions& t);

v1::SubmitJobRequest ToProto(const core::JobSpec& spec);
absl::StatusOr<core::JobSpec> FromProto(const v1::SubmitJobRequest& req);

v1::GemmOp ToProto(const core::GemmOp& op);
absl::StatusOr<core::GemmOp> FromProto(const v1::GemmOp& op);

// `recipes`: the whole recipes, then the variants (core::ReportedRecipes), by name.
v1::PlanJobResponse ToProto(const core::Plan& plan, const std::vector<core::RecipeVariant>& recipes,
                            const std::vector<core::Mode>& modes, int32_t total_items);
absl::StatusOr<core::Plan> FromProto(const v1::PlanJobResponse& plan);

v1::Device ToProto(const core::DeviceInfo& d);
absl::StatusOr<core::DeviceInfo> FromProto(const v1::Device& d);
v1::Daemon ToProto(const core::DaemonRecord& d);
core::DaemonRecord FromProto(const v1::Daemon& d);

v1::Measurement ToProto(const core::Measurement& m);
// InvalidArgument naming the field (e.g. "measurement.round_ms[3]") and the value for a
// NaN, infinite or negative time, count, byte count or rate, or an interval whose low
// end is above its high end.
absl::StatusOr<core::Measurement> FromProto(const v1::Measurement& m);

v1::Job ToProto(const core::JobRecord& job);
absl::StatusOr<core::JobRecord> FromProto(const v1::Job& job);

v1::Item ToProto(const core::ItemRecord& item);
absl::StatusOr<core::ItemRecord> FromProto(const v1::Item& item);

v1::Report ToProto(const core::Report& report);
absl::StatusOr<core::Report> FromProto(const v1::Report& report);

v1::JobEvent ToProto(const core::JobEvent& event);
// A kind this side does not know reads as a snapshot. InvalidArgument as the job's and the
// item's conversions.
absl::StatusOr<core::JobEvent> FromProto(const v1::JobEvent& event);

v1::ListJobsRequest ToProto(const core::JobFilter& filter);
// Empty state and node match every job; page_size 0 takes the default. InvalidArgument
// naming the valid states for an unknown one. Ranges are the store's to check.
absl::StatusOr<core::JobFilter> FromProto(const v1::ListJobsRequest& request);

v1::QueryResultsRequest ToProto(const core::ResultFilter& filter);
// Empty names and zero sizes, times and ids match everything; page_size 0 takes the
// default. InvalidArgument naming the field for an unknown recipe, pass or mode name and
// for a negative size, time, job id or page size.
absl::StatusOr<core::ResultFilter> FromProto(const v1::QueryResultsRequest& request);

// A stored result travels as a done item of its job.
v1::Result ToProto(const core::ResultRow& row);
// A result whose item carries no measurement converts to a row without one.
// InvalidArgument as the device's, the item's and the timing's conversions.
absl::StatusOr<core::ResultRow> FromProto(const v1::Result& result);

}  // namespace gemmprof::wire
