// The smaller commands' listings: plan, jobs, devices, history (and compare, in
// comparison.h). Each is built once as a Listing, then rendered in the format the user
// asked for. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/render/document.h"
#include "client/render/records.h"
#include "core/daemon_record.h"
#include "core/gemm.h"
#include "core/job.h"
#include "core/query.h"

namespace gemmprof::client::render {

// `--format` of every listing command.
enum class ListingFormat { kTable, kCsv, kJson, kMarkdown };
inline constexpr char kListingFormats[] = "table, csv, json, markdown";
std::optional<ListingFormat> ParseListingFormat(std::string_view name);

// One listing in every form. `doc` gives table (aligned text) and markdown; `records`
// gives CSV and, under the key `rows_key`, JSON's rows. `summary` holds JSON-only
// fields (totals, context) written before the rows; with an empty `rows_key` the JSON is
// `summary` alone (devices nests one object per device there). `empty_text` replaces the table
// form when there are no rows (CSV keeps its header, JSON an empty array).
struct Listing {
  Document doc;
  Records records;
  std::string rows_key;
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  std::string empty_text;
};

// The listing in `format`; JSON is one object ending in a newline.
std::string RenderListing(const Listing& listing, ListingFormat format);

// `gemmprof plan`: pass, op, MxKxN, groups, layers, GFLOP per call and per model, with
// the item count (ops x recipes x modes) of the spec.
Listing PlanListing(const core::Plan& plan, const core::JobSpec& spec);
// `gemmprof jobs`: id, state, items, failed, model, label, node, device, by (the token
// name that submitted the job, "-" when none), created (UTC), and where any listed job has
// one its campaign and the daemons measuring it now ("measuring on": a running cluster
// job's live leases).
Listing JobsListing(const std::vector<core::JobRecord>& jobs);
// `gemmprof devices`: one section per device with its recipes and why any is
// unsupported; CSV has a row per device and recipe, JSON one object per device.
Listing DevicesListing(const std::vector<core::DeviceInfo>& devices);
// `gemmprof history`: measured (UTC), job, device, pass, op, MxKxN, recipe, mode,
// median ms, TFLOP/s, samples, cached, and where any result has one its energy (mJ per
// GEMM, TFLOP/J); CSV/JSON also carry the context. A row without a measurement leaves its
// figures empty.
Listing HistoryListing(const std::vector<core::ResultRow>& rows);
// `gemmprof cluster`: the daemons sharing the store, by node: state (serving, stopped, or
// lost: no heartbeat for kDaemonLostPeriods periods of the answering daemon's clock),
// devices by model, busy of them, backend, version, last heartbeat's age, start (UTC).
Listing ClusterListing(const core::DaemonListing& listing);

}  // namespace gemmprof::client::render
