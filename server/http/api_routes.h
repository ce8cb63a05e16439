// The read-only JSON API of gemmprofd --http, as functions from a request's path
// parameters and query to a reply, so they are tested without a socket.
//
//   GET /api/v1/jobs?state=&node=&campaign=&page_size=&page_token=     newest first
//   GET /api/v1/jobs/{id}/report   the document of `gemmprof report ID --format json`
//   GET /api/v1/history?recipe=&shape=MxKxN&device=&since=&until=&node=&pass=&mode=
//                      &job=&page_size=&page_token=           stored results
//   GET /api/v1/jobs/{id}/report.csv   `gemmprof report ID --format csv`, byte for byte
//   GET /api/v1/history.csv?...        the history page as CSV: the JSON's fields as
//                      columns (device.name as device_name), the next page's token in the
//                      X-Next-Page-Token header (absent on the last page)
//
// Errors are JSON {"error": {"code": "invalid_argument", "message": "..."}} with the
// HTTP status of the code: 400 naming the parameter, its value and the limit; 404 for an
// unknown job; 401/403 for tokens; 503 when the store is unreachable. The CSV routes
// answer errors the same way (JSON, with the status), so a client sees them as errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "server/storage/result_store.h"

namespace gemmprof::http {

// A query string, decoded (the shape of httplib::Params).
using QueryParams = std::multimap<std::string, std::string>;

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
};

// The JSON error reply of `status` (which must not be OK).
HttpReply ErrorReply(const absl::Status& status);

// The HTTP status of an absl status code: 400, 401, 403, 404, 409, 429, 503, 500.
int HttpStatusOf(absl::StatusCode code);

// /api/v1/jobs query: state (a job state), node (1..64 of [A-Za-z0-9._-]), campaign (1..64
// characters: that campaign's jobs), page_size (1..1000, default 50), page_token. InvalidArgument
// naming the parameter otherwise, also for unknown or repeated parameters.
absl::StatusOr<storage::JobFilter> ParseJobsQuery(const QueryParams& params);

// /api/v1/history query: recipe, pass, mode (their names), shape (MxKxN, positive),
// device (exact device name), node, job (a job id), since / until (unix milliseconds or
// an age such as 30m, 12h, 7d before `now_ms`), page_size (1..10000, default 100),
// page_token.
absl::StatusOr<storage::ResultFilter> ParseHistoryQuery(const QueryParams& params, int64_t now_ms);

HttpReply JobsRoute(storage::ResultStore& store, const QueryParams& params);
// `job_id` is the path segment as sent; the body is byte for byte what
// `gemmprof report ID --format json` prints for the same job.
HttpReply ReportRoute(storage::ResultStore& store, std::string_view job_id);
HttpReply HistoryRoute(storage::ResultStore& store, const QueryParams& params, int64_t now_ms);
// The CSV forms (text/csv): the report as `gemmprof report ID --format csv` prints it, the
// history page with the columns of HistoryCsvColumns().
HttpReply ReportCsvRoute(storage::ResultStore& store, std::string_view job_id);
HttpReply HistoryCsvRoute(storage::ResultStore& store, const QueryParams& params, int64_t now_ms);
// The history CSV's header: a result's JSON fields in order, device's as device_*.
std::vector<std::string> HistoryCsvColumns();

}  // namespace gemmprof::http
