#include "tests/integration/grafana/grafana_sql.h"

#include <time.h>

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gemmprof::testing {
namespace {

// This project's Abseil has its own string_view, which takes no std::string_view.
absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

std::string_view Strip(std::string_view s) {
  absl::string_view out = absl::StripAsciiWhitespace(Sv(s));
  return {out.data(), out.size()};
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out;
}

// The text Grafana's PostgreSQL data source puts in place of a variable.
std::string Render(const GrafanaVariable& var) {
  if (!var.multi) return var.values.empty() ? "" : Escape(var.values.front());
  std::vector<std::string> quoted;
  for (const std::string& v : var.values) quoted.push_back(absl::StrCat("'", Escape(v), "'"));
  return absl::StrJoin(quoted, ",");
}

absl::StatusOr<std::string> Variable(std::string_view name, const GrafanaRequest& request) {
  if (name == "__interval") return request.interval;
  if (name == "__interval_ms") {
    ASSIGN_OR_RETURN(int64_t ms, ParseGrafanaInterval(request.interval));
    return std::to_string(ms);
  }
  auto it = request.variables.find(std::string(name));
  if (it == request.variables.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("variable '", Sv(name), "' is not a dashboard variable the expander knows"));
  }
  return Render(it->second);
}

// Pass 1, Grafana's frontend: variables. `$__name` that is not a global variable is
// left for pass 2 (a macro, or an error there).
absl::StatusOr<std::string> ExpandVariables(std::string_view sql, const GrafanaRequest& request) {
  std::string out;
  for (size_t i = 0; i < sql.size();) {
    if (sql.substr(i, 2) == "[[") {
      size_t end = sql.find("]]", i);
      if (end == sql.npos) return absl::InvalidArgumentError("unterminated [[ in query");
      ASSIGN_OR_RETURN(std::string v, Variable(sql.substr(i + 2, end - i - 2), request));
      out += v;
      i = end + 2;
    } else if (sql.substr(i, 2) == "${") {
      size_t end = sql.find('}', i);
      if (end == sql.npos) return absl::InvalidArgumentError("unterminated ${ in query");
      std::string_view name = sql.substr(i + 2, end - i - 2);
      if (name.find(':') != name.npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("variable format '${", Sv(name), "}' is not supported by the expander"));
      }
      ASSIGN_OR_RETURN(std::string v, Variable(name, request));
      out += v;
      i = end + 1;
    } else if (sql[i] == '$') {
      size_t end = i + 1;
      while (end < sql.size() && IsIdentChar(sql[end])) ++end;
      std::string_view name = sql.substr(i + 1, end - i - 1);
      if (name.empty()) return absl::InvalidArgumentError("a '$' that names nothing in query");
      if (name.starts_with("__") && name != "__interval" && name != "__interval_ms") {
        out.append(sql.substr(i, end - i));  // a macro: pass 2
      } else {
        ASSIGN_OR_RETURN(std::string v, Variable(name, request));
        out += v;
      }
      i = end;
    } else {
      out += sql[i++];
    }
  }
  return out;
}

std::string Rfc3339(int64_t ms) {
  const time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  if (ms % 1000 == 0) return absl::StrCat("'", buf, "Z'");
  return absl::StrFormat("'%s.%03dZ'", buf, static_cast<int>(ms % 1000));
}

absl::StatusOr<std::string> Macro(std::string_view name, const std::vector<std::string>& args,
                                  const GrafanaRequest& request) {
  auto want = [&](size_t n) -> absl::Status {
    if (args.size() == n) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("macro $", Sv(name), " takes ", n, " argument(s), got ", args.size()));
  };
  if (name == "__timeFrom" || name == "__timeTo") {
    RETURN_IF_ERROR(want(0));
    return Rfc3339(name == "__timeFrom" ? request.from_ms : request.to_ms);
  }
  if (name == "__timeFilter") {
    RETURN_IF_ERROR(want(1));
    return absl::StrCat(args[0], " BETWEEN ", Rfc3339(request.from_ms), " AND ",
                        Rfc3339(request.to_ms));
  }
  if (name == "__timeGroup" || name == "__timeGroupAlias") {
    RETURN_IF_ERROR(want(2));
    ASSIGN_OR_RETURN(int64_t ms, ParseGrafanaInterval(args[1]));
    const std::string secs =
        ms % 1000 == 0 ? std::to_string(ms / 1000) : absl::StrFormat("%g", ms / 1000.0);
    std::string group = absl::StrCat("floor(extract(epoch from ", args[0], ")/", secs, ")*", secs);
    return name == "__timeGroup" ? group : absl::StrCat(group, " AS \"time\"");
  }
  return absl::InvalidArgumentError(absl::StrCat("macro $", Sv(name), " is not supported"));
}

// Pass 2, Grafana's backend: macros; then nothing that starts with '$' may be left.
absl::StatusOr<std::string> ExpandMacros(std::string_view sql, const GrafanaRequest& request) {
  std::string out;
  for (size_t i = 0; i < sql.size();) {
    if (sql[i] != '$') {
      out += sql[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < sql.size() && IsIdentChar(sql[end])) ++end;
    std::string_view name = sql.substr(i + 1, end - i - 1);
    if (end >= sql.size() || sql[end] != '(') {
      return absl::InvalidArgumentError(
          absl::StrCat("'$", Sv(name), "' is neither a variable nor a macro call"));
    }
    size_t close = sql.find(')', end);
    if (close == sql.npos) {
      return absl::InvalidArgumentError(absl::StrCat("macro $", Sv(name), " is not closed"));
    }
    std::string_view inner = sql.substr(end + 1, close - end - 1);
    if (inner.find('(') != inner.npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("macro $", Sv(name), "(", Sv(inner),
                       ") has parentheses in its arguments, which Grafana cuts at the first ')'"));
    }
    std::vector<std::string> args;
    if (!Strip(inner).empty()) {
      for (absl::string_view a : absl::StrSplit(Sv(inner), ',')) {
        args.emplace_back(Strip(std::string_view(a.data(), a.size())));
      }
    }
    ASSIGN_OR_RETURN(std::string expanded, Macro(name, args, request));
    out += expanded;
    i = close + 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> ParseGrafanaInterval(std::string_view interval) {
  std::string_view s = Strip(interval);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  int64_t count = 0;
  if (digits == 0 || !absl::SimpleAtoi(Sv(s.substr(0, digits)), &count) || count <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("interval '", Sv(interval), "' is not N<unit>"));
  }
  static const std::map<std::string_view, int64_t> kUnits = {
      {"ms", 1},        {"s", 1000},       {"m", 60'000},
      {"h", 3'600'000}, {"d", 86'400'000}, {"w", 7 * 86'400'000LL}};
  auto unit = kUnits.find(s.substr(digits));
  if (unit == kUnits.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval '", Sv(interval), "': unit must be one of ms, s, m, h, d, w"));
  }
  return count * unit->second;
}

absl::StatusOr<std::string> ExpandGrafanaSql(std::string_view sql, const GrafanaRequest& request) {
  ASSIGN_OR_RETURN(std::string with_variables, ExpandVariables(sql, request));
  return ExpandMacros(with_variables, request);
}

}  // namespace gemmprof::testing
