#include "server/metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace gemmprof::metrics {
namespace {

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text escapes only '\\' and newlines.
std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void AppendSample(const std::string& name, const Sample& s, std::string& out) {
  out += name;
  out += s.suffix;
  if (!s.labels.empty()) {
    out += '{';
    for (size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) out += ',';
      out += s.labels[i].first;
      out += "=\"";
      out += EscapeLabelValue(s.labels[i].second);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatValue(s.value);
  out += '\n';
}

}  // namespace

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderText(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& f : families) {
    if (f.samples.empty()) continue;
    out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + std::string(TypeName(f.type)) + "\n";
    for (const Sample& s : f.samples) AppendSample(f.name, s, out);
  }
  return out;
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t bucket = 0;
  while (bucket < upper_bounds_.size() && value > upper_bounds_[bucket]) ++bucket;
  std::lock_guard lock(mu_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::AppendTo(MetricFamily& family, const Labels& labels) const {
  std::lock_guard lock(mu_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    cumulative += counts_[i];
    Labels with_le = labels;
    with_le.emplace_back("le", i < upper_bounds_.size() ? FormatValue(upper_bounds_[i]) : "+Inf");
    family.samples.push_back({"_bucket", std::move(with_le), static_cast<double>(cumulative)});
  }
  family.samples.push_back({"_sum", labels, sum_});
  family.samples.push_back({"_count", labels, static_cast<double>(count_)});
}

}  // namespace gemmprof::metrics
