// Prometheus text exposition format 0.0.4: metric families rendered as the text that
// /metrics serves, and a histogram with fixed buckets.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gemmprof::metrics {

// Label names and values in the order they are printed.
using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

// One line: the family name plus `suffix` ("", "_bucket", "_sum", "_count").
struct Sample {
  std::string suffix;
  Labels labels;
  double value = 0;
};

// A metric family: one HELP and one TYPE line, then its samples.
struct MetricFamily {
  std::string name;  // counters end in _total; base units in the name (_seconds, _watts)
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// The text of `families`, in order, each ending in '\n'. Families without samples are
// left out (an absent device gauge, not a misleading zero).
std::string RenderText(const std::vector<MetricFamily>& families);

// A sample value as the format wants it: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// A label value with '\\', '"' and newlines escaped.
std::string EscapeLabelValue(std::string_view value);

// Cumulative histogram with fixed upper bounds (seconds, or whatever unit the family
// names). Thread-safe.
class Histogram {
 public:
  // `upper_bounds` ascending; +Inf is implied.
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);
  // Appends the _bucket (with le, cumulative, ending at +Inf), _sum and _count samples.
  void AppendTo(MetricFamily& family, const Labels& labels = {}) const;

 private:
  const std::vector<double> upper_bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace gemmprof::metrics
