// proto <-> domain conversion, the only place where gemmprof.v1 messages and core
// types meet. Used by the daemon's service and by the client's transport.
// From-proto functions validate the enum-like strings and return InvalidArgument
// naming the field, the value and the valid names; they do not check ranges (that is
// core/validation's job).
#pragma once

#include "gemmprof/v1/gemmprof.pb.h"
#include "core/job.h"
#include "core/status.h"

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

v1::PlanJobResponse ToProto(const core::Plan& plan, const std::vector<core::Recipe>& recipes,
                            const std::vector<core::Mode>& modes, int32_t total_items);
absl::StatusOr<core::Plan> FromProto(const v1::PlanJobResponse& plan);

v1::Device ToProto(const core::DeviceInfo& d);
absl::StatusOr<core::DeviceInfo> FromProto(const v1::Device& d);

v1::Measurement ToProto(const core::Measurement& m);
absl::StatusOr<core::Measurement> FromProto(const v1::Measurement& m);

v1::Job ToProto(const core::JobRecord& job);
absl::StatusOr<core::JobRecord> FromProto(const v1::Job& job);

v1::Item ToProto(const core::ItemRecord& item);
absl::StatusOr<core::ItemRecord> FromProto(const v1::Item& item);

v1::Report ToProto(const core::Report& report);
absl::StatusOr<core::Report> FromProto(const v1::Report& report);

}  // namespace gemmprof::wire
