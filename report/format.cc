#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace gemmprof::report {

std::string FormatFixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string FormatCount(int64_t count) {
  std::string digits = std::to_string(count < 0 ? -count : count);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return count < 0 ? "-" + digits : digits;
}

std::string FormatMs(double ms) {
  const double a = std::fabs(ms);
  if (a >= 100) return FormatFixed(ms, 1);
  if (a >= 10) return FormatFixed(ms, 2);
  if (a >= 1) return FormatFixed(ms, 3);
  return FormatFixed(ms, 4);
}

std::string FormatRatio(double ratio) { return FormatFixed(ratio, 2) + "x"; }

std::string FormatPercent(double percent, bool with_sign) {
  std::string s = FormatFixed(percent, 1) + "%";
  if (with_sign && percent >= 0) s = "+" + s;
  return s;
}

namespace {

// `unix_ms` in UTC by strftime's `pattern`; `none` for 0 or less.
std::string UtcTime(int64_t unix_ms, const char* pattern, const char* none) {
  if (unix_ms <= 0) return none;
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), pattern, &tm);
  return buf;
}

}  // namespace

std::string FormatUtc(int64_t unix_ms) { return UtcTime(unix_ms, "%Y-%m-%d %H:%M:%S UTC", "-"); }

std::string FormatIsoUtc(int64_t unix_ms) { return UtcTime(unix_ms, "%Y-%m-%dT%H:%M:%SZ", ""); }

std::string FormatJoules(double joules) {
  if (joules >= 1) return FormatFixed(joules, 3) + " J";
  if (joules >= 1e-3) return FormatFixed(joules * 1e3, 3) + " mJ";
  return FormatFixed(joules * 1e6, 3) + " uJ";
}

std::string FormatDuration(int64_t duration_ms) {
  const int64_t s = std::max<int64_t>(0, duration_ms / 1000);
  const int64_t d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
  if (d > 0) return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m " + std::to_string(sec) + "s";
  return std::to_string(sec) + "s";
}

std::string FormatRatioCi(const core::stats::Interval& r) {
  std::string s = FormatRatio(r.center);
  if (!r.valid) return s;
  // A third decimal when two would print a tight interval as a single point.
  const int d = FormatFixed(r.low, 2) == FormatFixed(r.high, 2) && r.low != r.high ? 3 : 2;
  return s + " [" + FormatFixed(r.low, d) + "\u2013" + FormatFixed(r.high, d) + "]";
}

std::string FormatMsCi(const core::stats::Interval& ms) {
  std::string s = FormatMs(ms.center) + " ms";
  if (ms.valid) s += " [" + FormatMs(ms.low) + "\u2013" + FormatMs(ms.high) + "]";
  return s;
}

std::string FormatPlusMinus(double rel_half_width) {
  return "\u00b1" + FormatFixed(100 * rel_half_width, 1) + "%";
}

std::string OpLabel(const core::GemmOp& op) {
  std::string s = std::string(core::ToString(op.pass)) + " " + op.name;
  if (op.name != op.shape.ToString()) s += " " + op.shape.ToString();
  if (op.groups > 1) s += " x" + std::to_string(op.groups) + " groups";
  return s;
}

std::string RecipeLabel(const core::WorkItem& item) {
  std::string recipe(core::ToString(item.recipe));
  if (item.fast_accum != core::FastAccum::kDefault)
    recipe += " (fast accumulation " + std::string(core::ToString(item.fast_accum)) + ")";
  return recipe;
}

std::string ItemLabel(const core::ItemRecord& item) {
  return OpLabel(item.item.op) + " " + RecipeLabel(item.item) + "/" +
         std::string(core::ToString(item.item.mode));
}

}  // namespace gemmprof::report
