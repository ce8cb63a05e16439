#include "server/http/api_routes.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/enums.h"
#include "core/utf8.h"
#include "report/figures.h"
#include "report/json_document.h"
#include "report/record_json.h"
#include "report/report_csv.h"
#include "wire/round_trip.h"

namespace gemmprof::http {
namespace {

using nlohmann::ordered_json;

constexpr int32_t kMaxJobsPage = 1000;
constexpr int32_t kMaxHistoryPage = 10000;
constexpr size_t kMaxNode = 64;
constexpr size_t kMaxValue = 1024;

// The one value of `name`, if given. InvalidArgument when repeated or over-long.
absl::StatusOr<std::optional<std::string>> One(const QueryParams& params, const std::string& name) {
  const auto [first, last] = params.equal_range(name);
  if (first == last) return std::nullopt;
  if (std::next(first) != last) {
    return absl::InvalidArgumentError("query parameter '" + name + "' is given " +
                                      std::to_string(std::distance(first, last)) +
                                      " times; give it at most once");
  }
  if (first->second.size() > kMaxValue) {
    return absl::InvalidArgumentError(
        "query parameter '" + name + "' is " + std::to_string(first->second.size()) +
        " characters long; the limit is " + std::to_string(kMaxValue));
  }
  return first->second;
}

// Every name and value is text: the errors below quote them, and a JSON reply can hold
// only UTF-8.
absl::Status AllText(const QueryParams& params) {
  for (const auto& [name, value] : params) {
    RETURN_IF_ERROR(core::CheckUtf8("a query parameter's name", name));
    RETURN_IF_ERROR(core::CheckUtf8(name, value));
  }
  return absl::OkStatus();
}

absl::Status OnlyKnown(const QueryParams& params, const std::set<std::string>& known) {
  for (const auto& [name, value] : params) {
    if (known.count(name) == 0) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return absl::InvalidArgumentError("unknown query parameter '" + name + "' (valid: " + list +
                                        ")");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseInt(std::string_view name, std::string_view text, int64_t lo,
                                 int64_t hi) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return absl::InvalidArgumentError(std::string(name) + "='" + std::string(text) +
                                      "': expected an integer from " + std::to_string(lo) + " to " +
                                      std::to_string(hi));
  }
  return v;
}

absl::Status CheckNode(const std::string& node) {
  bool ok = !node.empty() && node.size() <= kMaxNode;
  for (char c : node) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError("node='" + node + "': expected 1 to " +
                                    std::to_string(kMaxNode) + " letters, digits, '.', '_' or '-'");
}

template <typename Enum, typename ParseFn>
absl::Status SetEnum(const QueryParams& params, const std::string& name, ParseFn parse,
                     std::string_view valid, std::optional<Enum>* out) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, One(params, name));
  if (!text) return absl::OkStatus();
  *out = parse(*text);
  if (!*out) {
    return absl::InvalidArgumentError(name + "='" + *text +
                                      "': unknown value (valid: " + std::string(valid) + ")");
  }
  return absl::OkStatus();
}

// "1731000000000" (unix ms) or an age before now: "30m", "12h", "7d", "90s".
absl::StatusOr<int64_t> ParseTime(const std::string& name, const std::string& text,
                                  int64_t now_ms) {
  const std::string help = name + "='" + text +
                           "': expected unix milliseconds or an age such as 30m, 12h, 7d "
                           "(at most 36500d)";
  if (text.empty()) return absl::InvalidArgumentError(help);
  const char unit = text.back();
  const int64_t scale = unit == 's'   ? 1000
                        : unit == 'm' ? 60000
                        : unit == 'h' ? 3600000
                        : unit == 'd' ? 86400000
                                      : 0;
  if (scale == 0) {
    auto ms = ParseInt(name, text, 0, int64_t{1} << 50);
    if (!ms.ok()) return absl::InvalidArgumentError(help);
    return *ms;
  }
  auto n = ParseInt(name, std::string_view(text).substr(0, text.size() - 1), 0,
                    int64_t{36500} * 86400000 / scale);
  if (!n.ok()) return absl::InvalidArgumentError(help);
  // An age reaching before 1970 means "from the start".
  return std::max<int64_t>(0, now_ms - *n * scale);
}

absl::Status SetShape(const std::string& text, storage::ResultFilter& f) {
  int64_t dims[3] = {};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    const size_t x = i < 2 ? rest.find('x') : rest.size();
    auto d = ParseInt("shape", rest.substr(0, x), 1, int64_t{1} << 31);
    if (x == std::string_view::npos || !d.ok()) {
      return absl::InvalidArgumentError("shape='" + text +
                                        "': expected MxKxN with each of M, K, N from 1 to "
                                        "2147483648, e.g. 4096x4096x4096");
    }
    dims[i] = *d;
    rest.remove_prefix(std::min(rest.size(), x + 1));
  }
  f.m = dims[0];
  f.k = dims[1];
  f.n = dims[2];
  return absl::OkStatus();
}

// A job of /api/v1/jobs: the report's job fields the API carries, in its order, with who
// submitted it and a short device.
ordered_json JobJson(const core::JobRecord& j) {
  const ordered_json job = report::JobJson(j);
  ordered_json out = report::Pick(job, {"id", "state", "error", "label"});
  // The API names the model the job was submitted with; the report names the plan's.
  out["model_name"] = j.spec.model ? j.spec.model->name : "shapes";
  out["node"] = job["node"];
  out["submitted_by"] = j.submitted_by;
  out["where"] = core::ToString(j.spec.where);
  out["campaign"] = j.spec.campaign;
  out["measuring_nodes"] = j.measuring_nodes;
  out.update(
      report::Pick(job, {"requested_recipes", "created_unix_ms", "started_unix_ms",
                         "finished_unix_ms", "total_items", "finished_items", "failed_items"}));
  out["device"] = report::Pick(report::DeviceJson(j.device), {"name", "backend", "uuid"});
  return out;
}

// A stored result of /api/v1/history: where and when it was measured, what ran, and its
// headline time.
ordered_json ResultJson(const storage::ResultRow& r) {
  // The store reads every row with its measurement.
  const core::Measurement m = r.measurement.value_or(core::Measurement{});
  const double ms = report::HeadlineMs(m);
  ordered_json out = {{"result_id", r.result_id},
                      {"job_id", r.job_id},
                      {"measured_unix_ms", r.measured_ms},
                      {"node", r.node}};
  out["device"] = report::Pick(
      report::DeviceJson(r.device),
      {"name", "uuid", "backend", "driver_version", "cuda_version", "cublaslt_version"});
  out.update(
      report::Pick(report::WorkItemJson(r.item), {"op", "pass", "m", "k", "n", "recipe", "mode"}));
  out["time_ms"] = ms;
  // The API's throughput is the measurement's flops over the headline time; the report's
  // (report::TflopsOf) is over the median.
  out["tflops"] = ms > 0 ? m.flops / (ms * 1e9) : 0.0;
  out["verification"] = core::ToString(m.verification);
  out["cached"] = r.cached;
  return out;
}

HttpReply JsonReply(const ordered_json& doc) {
  return {200, "application/json", doc.dump(2) + "\n"};
}

constexpr char kCsvType[] = "text/csv; charset=utf-8";

// A result's JSON fields flattened to CSV columns: nested objects' keys as parent_key.
void Flatten(const ordered_json& doc, const std::string& prefix,
             std::vector<std::pair<std::string, const ordered_json*>>& out) {
  for (const auto& [key, value] : doc.items()) {
    if (value.is_object()) {
      Flatten(value, prefix + key + "_", out);
    } else {
      out.emplace_back(prefix + key, &value);
    }
  }
}

std::string CsvCell(const ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) return report::CsvNumber(v.get<double>());
  if (v.is_string()) return report::CsvField(v.get<std::string>());
  return report::CsvField(v.dump());
}

// The report of job `job_id` as the CLI receives it.
absl::StatusOr<core::Report> LoadReport(storage::ResultStore& store, std::string_view job_id) {
  ASSIGN_OR_RETURN(const int64_t id, ParseInt("job id", job_id, 1, INT64_MAX));
  core::Report report;
  ASSIGN_OR_RETURN(report.job, store.GetJob(id));
  ASSIGN_OR_RETURN(report.items, store.GetItems(id));
  // The CLI renders what came through the wire; the same round trip here keeps the
  // documents byte-identical whatever the conversion drops or normalizes.
  return wire::RoundTrip(report);
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpReply ErrorReply(const absl::Status& status) {
  ordered_json doc = {{"error",
                       {{"code", absl::AsciiStrToLower(absl::StatusCodeToString(status.code()))},
                        {"message", std::string(status.message())}}}};
  // replace: a message that quotes bytes which are not UTF-8 still makes a JSON reply.
  return {HttpStatusOf(status.code()), "application/json",
          doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n"};
}

absl::StatusOr<storage::JobFilter> ParseJobsQuery(const QueryParams& params) {
  RETURN_IF_ERROR(AllText(params));
  RETURN_IF_ERROR(OnlyKnown(params, {"state", "node", "campaign", "page_size", "page_token"}));
  storage::JobFilter f;
  RETURN_IF_ERROR(SetEnum(params, "state", core::ParseJobState,
                          "queued, running, succeeded, partial, failed, cancelled", &f.state));
  ASSIGN_OR_RETURN(std::optional<std::string> node, One(params, "node"));
  if (node) {
    RETURN_IF_ERROR(CheckNode(*node));
    f.node = *node;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> campaign, One(params, "campaign"));
  if (campaign) {
    if (campaign->empty() || campaign->size() > core::kMaxCampaignChars) {
      return absl::InvalidArgumentError("campaign='" + *campaign + "': expected 1 to " +
                                        std::to_string(core::kMaxCampaignChars) + " characters");
    }
    f.campaign = *campaign;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> size, One(params, "page_size"));
  if (size) {
    ASSIGN_OR_RETURN(const int64_t n, ParseInt("page_size", *size, 1, kMaxJobsPage));
    f.page_size = static_cast<int32_t>(n);
  }
  ASSIGN_OR_RETURN(std::optional<std::string> token, One(params, "page_token"));
  if (token) f.page_token = *token;
  return f;
}

absl::StatusOr<storage::ResultFilter> ParseHistoryQuery(const QueryParams& params, int64_t now_ms) {
  RETURN_IF_ERROR(AllText(params));
  RETURN_IF_ERROR(OnlyKnown(params, {"recipe", "pass", "mode", "shape", "device", "node", "job",
                                     "since", "until", "page_size", "page_token"}));
  storage::ResultFilter f;
  RETURN_IF_ERROR(SetEnum(params, "recipe", core::ParseRecipe, core::RecipeList(), &f.recipe));
  RETURN_IF_ERROR(SetEnum(params, "pass", core::ParsePass, "fprop, dgrad, wgrad", &f.pass));
  RETURN_IF_ERROR(SetEnum(params, "mode", core::ParseMode, "autocast, prequant", &f.mode));
  ASSIGN_OR_RETURN(std::optional<std::string> shape, One(params, "shape"));
  if (shape) RETURN_IF_ERROR(SetShape(*shape, f));
  ASSIGN_OR_RETURN(std::optional<std::string> device, One(params, "device"));
  if (device) f.device_name = *device;
  ASSIGN_OR_RETURN(std::optional<std::string> node, One(params, "node"));
  if (node) {
    RETURN_IF_ERROR(CheckNode(*node));
    f.node = *node;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> job, One(params, "job"));
  if (job) {
    ASSIGN_OR_RETURN(f.job_id, ParseInt("job", *job, 1, INT64_MAX));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> since, One(params, "since"));
  if (since) {
    ASSIGN_OR_RETURN(f.since_ms, ParseTime("since", *since, now_ms));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> until, One(params, "until"));
  if (until) {
    ASSIGN_OR_RETURN(f.until_ms, ParseTime("until", *until, now_ms));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> size, One(params, "page_size"));
  if (size) {
    ASSIGN_OR_RETURN(const int64_t n, ParseInt("page_size", *size, 1, kMaxHistoryPage));
    f.page_size = static_cast<int32_t>(n);
  }
  ASSIGN_OR_RETURN(std::optional<std::string> token, One(params, "page_token"));
  if (token) f.page_token = *token;
  return f;
}

HttpReply JobsRoute(storage::ResultStore& store, const QueryParams& params) {
  auto filter = ParseJobsQuery(params);
  if (!filter.ok()) return ErrorReply(filter.status());
  auto page = store.ListJobs(*filter);
  if (!page.ok()) return ErrorReply(page.status());
  ordered_json jobs = ordered_json::array();
  for (const core::JobRecord& j : page->items) jobs.push_back(JobJson(j));
  return JsonReply({{"jobs", std::move(jobs)}, {"next_page_token", page->next_page_token}});
}

HttpReply ReportRoute(storage::ResultStore& store, std::string_view job_id) {
  auto report = LoadReport(store, job_id);
  if (!report.ok()) return ErrorReply(report.status());
  return {200, "application/json", report::JsonDocument(*report)};
}

HttpReply ReportCsvRoute(storage::ResultStore& store, std::string_view job_id) {
  auto report = LoadReport(store, job_id);
  if (!report.ok()) return ErrorReply(report.status());
  return {200, kCsvType, report::RenderReportCsv(*report)};
}

std::vector<std::string> HistoryCsvColumns() {
  const ordered_json row = ResultJson(storage::ResultRow{});
  std::vector<std::pair<std::string, const ordered_json*>> cells;
  Flatten(row, "", cells);
  std::vector<std::string> names;
  for (const auto& [name, value] : cells) names.push_back(name);
  return names;
}

HttpReply HistoryCsvRoute(storage::ResultStore& store, const QueryParams& params, int64_t now_ms) {
  auto filter = ParseHistoryQuery(params, now_ms);
  if (!filter.ok()) return ErrorReply(filter.status());
  auto page = store.QueryResults(*filter);
  if (!page.ok()) return ErrorReply(page.status());
  const std::vector<std::string> columns = HistoryCsvColumns();
  std::string body;
  for (size_t c = 0; c < columns.size(); ++c) body += (c ? "," : "") + columns[c];
  body += "\n";
  for (const storage::ResultRow& r : page->items) {
    const ordered_json doc = ResultJson(r);
    std::vector<std::pair<std::string, const ordered_json*>> cells;
    Flatten(doc, "", cells);
    // By name, so a field a row lacks leaves its cell empty instead of shifting the rest.
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto it = std::find_if(cells.begin(), cells.end(),
                                   [&](const auto& cell) { return cell.first == columns[c]; });
      body += (c ? "," : "") + (it == cells.end() ? std::string() : CsvCell(*it->second));
    }
    body += "\n";
  }
  HttpReply reply{200, kCsvType, std::move(body)};
  if (!page->next_page_token.empty()) {
    reply.headers.emplace_back("X-Next-Page-Token", page->next_page_token);
  }
  return reply;
}

HttpReply HistoryRoute(storage::ResultStore& store, const QueryParams& params, int64_t now_ms) {
  auto filter = ParseHistoryQuery(params, now_ms);
  if (!filter.ok()) return ErrorReply(filter.status());
  auto page = store.QueryResults(*filter);
  if (!page.ok()) return ErrorReply(page.status());
  ordered_json results = ordered_json::array();
  for (const storage::ResultRow& r : page->items) results.push_back(ResultJson(r));
  return JsonReply({{"results", std::move(results)}, {"next_page_token", page->next_page_token}});
}

}  // namespace gemmprof::http
