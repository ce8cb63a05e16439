// The one JSON mapping of core's records: devices, timing options, measurements, items,
// jobs, specs and plans under their keys. Three writers use it: the report's JSON
// document (REPORT_JSON.md), the store's JSON codec (server/storage/json_codec.h) and the
// daemon's HTTP API (server/http/api_routes.h). Where they differ, the difference is
// named here, never hidden in a copy:
//  - numbers: the store writes a non-finite number as the string "nan", "inf" or "-inf",
//    so it reads back; documents write JSON numbers (a non-finite one prints as null);
//  - estimates: the store writes every estimate; documents write null for an absent one
//    and add its rel_half_width;
//  - fields the report schema (schema_version 1) does not carry but the store keeps:
//    timing_backend, telemetry.sm_clock_mhz_mean; the timing's L2 policy is "l2" in the
//    store and "l2_policy" in documents;
//  - a measurement's layout: the store nests its sample statistics under "time" and keeps
//    kernel figures only where measured; the document's "result" is flat, adds figures
//    derived from the item and its device (tflops, efficiency), and has "kernel" (null
//    where not measured) and "profiled" always;
//  - the HTTP API's job and result rows are short forms: Pick takes their keys from the
//    mappings here, in the API's order (api_routes.cc adds what only the API says).
// Keys are written in the document's order; the store dumps them sorted (nlohmann::json).
// Pure; thread-safe.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/daemon_record.h"
#include "core/job.h"

namespace gemmprof::report {

using Json = nlohmann::ordered_json;

// Who reads a record's JSON; see the file comment for what differs.
enum class JsonForm {
  kDocument,  // the report document and the HTTP API
  kStore,     // the store's persisted text, read back by storage::Decode*
};

// A device: backend, name, uuid, sm, sm_count, memory_bytes, the versions and recipes
// [{recipe, supported, reason}]. The same in both forms; live state (unavailable) is never
// part of it.
// A daemon's record as the store keeps it (core/daemon_record.h).
Json DaemonJson(const core::DaemonRecord& d);
Json DeviceJson(const core::DeviceInfo& device);

// A job's timing options.
Json TimingJson(const core::TimingOptions& timing, JsonForm form);

// The store's form of a measurement: every field.
Json StoredMeasurementJson(const core::Measurement& m);

// The work an item stands for: seq, id, op, pass, m, k, n, groups, group_tokens (only
// when set), layout (only when groups > 1), layers, per_layer, recipe, mode.
Json WorkItemJson(const core::WorkItem& item);

// One item of a job as the report document lists it (REPORT_JSON.md "items"): the work,
// its status and where it was measured, and "result": its measurement with the figures
// derived from the op and `device` (null without a result).
Json ItemJson(const core::ItemRecord& item, const core::DeviceInfo& device);

// A job as the report document gives it (REPORT_JSON.md "job").
Json JobJson(const core::JobRecord& job);

// The store's form of what a user submitted and of the GEMMs derived from it.
Json JobSpecJson(const core::JobSpec& spec);
Json PlanJson(const core::Plan& plan);

// The members of `object` named in `keys`, in that order; absent ones are left out.
Json Pick(const Json& object, std::initializer_list<std::string_view> keys);

}  // namespace gemmprof::report
