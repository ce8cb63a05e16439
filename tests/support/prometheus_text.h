// A strict reader of the Prometheus text exposition format 0.0.4, for tests of /metrics
// (promtool is not a Debian package): every line is a HELP or TYPE line, another
// comment, or `name{labels} value`; every sample belongs to a family declared with TYPE
// before it; a family's samples are contiguous; histograms have cumulative buckets per
// label set ending at le="+Inf" with _count equal to it and a _sum; counters are
// non-negative and named *_total; no series appears twice.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace gemmprof::testing {

struct PromSample {
  std::string name;  // as written, suffix included
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromFamily {
  std::string type;  // counter, gauge, histogram, summary, untyped
  std::string help;
  std::vector<PromSample> samples;
};

struct PromExposition {
  std::map<std::string, PromFamily> families;
  // The value of the sample `name` whose labels include `labels`; NotFound otherwise,
  // InvalidArgument when several match.
  absl::StatusOr<double> Value(const std::string& name,
                               const std::map<std::string, std::string>& labels = {}) const;
};

// InvalidArgument naming the line number and the rule broken.
absl::StatusOr<PromExposition> ParsePrometheusText(const std::string& text);

}  // namespace gemmprof::testing
