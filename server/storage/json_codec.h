// JSON text for the core structs the store keeps whole (job spec, plan, device,
// timing options, measurement). Encoding is the one mapping of report/record_json.h in
// its store form: enums as their core::ToString names, non-finite doubles as the strings
// "nan", "inf", "-inf" (JSON has no such numbers), keys sorted.
//
// Decoding accepts a missing field as its default, so rows written by an older
// gemmprof still load; a field of the wrong type or an unknown enum name is an error.
// Every function is thread-safe (pure).
#pragma once

#include <string>
#include <string_view>

#include "core/daemon_record.h"
#include "core/gemm.h"
#include "core/job.h"
#include "core/result.h"
#include "core/status.h"

namespace gemmprof::storage {

std::string EncodeJobSpec(const core::JobSpec& spec);
std::string EncodePlan(const core::Plan& plan);
std::string EncodeDeviceInfo(const core::DeviceInfo& device);
std::string EncodeTimingOptions(const core::TimingOptions& timing);
std::string EncodeMeasurement(const core::Measurement& measurement);
std::string EncodeDaemon(const core::DaemonRecord& daemon);

// Errors: DataLoss naming the struct, the field and what was wrong, when `json` is not
// valid JSON, a field has the wrong type, or an enum name is unknown.
absl::StatusOr<core::JobSpec> DecodeJobSpec(std::string_view json);
absl::StatusOr<core::Plan> DecodePlan(std::string_view json);
absl::StatusOr<core::DeviceInfo> DecodeDeviceInfo(std::string_view json);
absl::StatusOr<core::TimingOptions> DecodeTimingOptions(std::string_view json);
absl::StatusOr<core::Measurement> DecodeMeasurement(std::string_view json);
absl::StatusOr<core::DaemonRecord> DecodeDaemon(std::string_view json);

}  // namespace gemmprof::storage
