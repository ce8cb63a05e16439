// What Grafana does to a PostgreSQL panel query before the database sees it, for the
// test that runs every query of deploy/grafana/dashboards/gemmprof.json. Supported, and
// nothing else (anything else that starts with '$' or '[[' is an error, so a dashboard
// query using an unknown macro fails its test instead of being skipped):
//   ${var}, $var, [[var]]   dashboard variables. A multi-value or All variable becomes a
//                           quoted list ('a','b'); a single-value one its raw text
//                           (quotes doubled), as Grafana's PostgreSQL data source does.
//   $__interval, $__interval_ms     the panel's interval ("1h", 3600000).
//   $__timeFilter(col)      col BETWEEN 'FROM' AND 'TO' (RFC 3339, UTC).
//   $__timeFrom(), $__timeTo()      'FROM', 'TO'.
//   $__timeGroup(col, iv), $__timeGroupAlias(col, iv)
//                           floor(extract(epoch from col)/S)*S, the latter AS "time";
//                           iv is a Grafana interval (500ms, 30s, 5m, 1h, 1d, 1w),
//                           quoted or not; no fill argument.
// Macro arguments may not contain parentheses: Grafana's macro parser ends the argument
// list at the first ')', so `$__timeFilter(to_timestamp(x))` would reach the database
// mangled. Queries name such an expression in a subquery instead.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gemmprof::testing {

// One dashboard variable's current selection.
struct GrafanaVariable {
  std::vector<std::string> values;
  bool multi = false;  // multi-value or include-All: rendered as a quoted list
};

// The request a panel query is expanded for.
struct GrafanaRequest {
  std::map<std::string, GrafanaVariable> variables;
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  std::string interval = "1h";  // $__interval
};

// `sql` with variables and macros replaced. InvalidArgument naming the macro or
// variable for anything outside the supported set above.
absl::StatusOr<std::string> ExpandGrafanaSql(std::string_view sql, const GrafanaRequest& request);

// A Grafana interval ("5m") in milliseconds; InvalidArgument for anything else.
absl::StatusOr<int64_t> ParseGrafanaInterval(std::string_view interval);

}  // namespace gemmprof::testing
