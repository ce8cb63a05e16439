#include "server/metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/prometheus_text.h"

namespace gemmprof::metrics {
namespace {

using testing::ParsePrometheusText;

TEST(FormatValueTest, SpecialValuesAndShortestDecimals) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(12345678), "12345678");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
}

TEST(EscapeLabelValueTest, EscapesBackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3");
}

TEST(RenderTextTest, WritesHelpTypeAndSamplesAndSkipsEmptyFamilies) {
  std::vector<MetricFamily> families = {
      {"x_total", "Things.\nMore", MetricType::kCounter, {{"", {{"a", "1"}, {"b", "q\""}}, 3}}},
      {"empty", "Nothing.", MetricType::kGauge, {}},
      {"g", "A gauge.", MetricType::kGauge, {{"", {}, 0.5}}},
  };
  EXPECT_EQ(RenderText(families),
            "# HELP x_total Things.\\nMore\n"
            "# TYPE x_total counter\n"
            "x_total{a=\"1\",b=\"q\\\"\"} 3\n"
            "# HELP g A gauge.\n"
            "# TYPE g gauge\n"
            "g 0.5\n");
}

TEST(HistogramTest, BucketsAreCumulativeAndEndAtInf) {
  Histogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.Observe(v);
  MetricFamily f{"d_seconds", "Durations.", MetricType::kHistogram, {}};
  h.AppendTo(f, {{"k", "v"}});
  ASSERT_EQ(f.samples.size(), 6u);
  const std::vector<std::pair<std::string, double>> want = {
      {"0.1", 2}, {"1", 3}, {"10", 4}, {"+Inf", 5}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(f.samples[i].suffix, "_bucket");
    EXPECT_EQ(f.samples[i].labels.back().second, want[i].first);
    EXPECT_EQ(f.samples[i].labels.front().second, "v");
    EXPECT_EQ(f.samples[i].value, want[i].second);
  }
  EXPECT_DOUBLE_EQ(f.samples[4].value, 55.65);
  EXPECT_EQ(f.samples[5].value, 5);
  auto parsed = ParsePrometheusText(RenderText({f}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed->Value("d_seconds_bucket", {{"le", "1"}}), 3);
}

TEST(HistogramTest, EmptyHistogramStillHasEveryBucket) {
  Histogram h({1, 2});
  MetricFamily f{"e_seconds", "Empty.", MetricType::kHistogram, {}};
  h.AppendTo(f);
  auto parsed = ParsePrometheusText(RenderText({f}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed->Value("e_seconds_count"), 0);
  EXPECT_EQ(*parsed->Value("e_seconds_bucket", {{"le", "+Inf"}}), 0);
}

// The checker used on /metrics must be able to fail.
TEST(PrometheusTextParserTest, RejectsWhatTheFormatForbids) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"no TYPE", "x 1\n"},
      {"no newline at end", "# TYPE x gauge\nx 1"},
      {"bad value", "# TYPE x gauge\nx one\n"},
      {"bad label", "# TYPE x gauge\nx{a=1} 1\n"},
      {"bad escape", "# TYPE x gauge\nx{a=\"\\t\"} 1\n"},
      {"two spaces", "# TYPE x gauge\nx  1\n"},
      {"duplicate series", "# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n"},
      {"counter without _total", "# TYPE c counter\nc 1\n"},
      {"negative counter", "# TYPE c_total counter\nc_total -1\n"},
      {"not contiguous", "# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"y\"} 1\n"},
      {"second TYPE", "# TYPE a gauge\n# TYPE a counter\na 1\n"},
      {"unknown type", "# TYPE a meter\na 1\n"},
      {"empty line", "# TYPE a gauge\n\na 1\n"},
      {"no +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"},
      {"not cumulative",
       "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"},
      {"count differs", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n"},
      {"no sum", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"},
  };
  for (const auto& [why, text] : bad) {
    EXPECT_FALSE(ParsePrometheusText(text).ok()) << why;
  }
  auto good = ParsePrometheusText(
      "# HELP a A.\n# TYPE a gauge\na{x=\"q\\\"\\n\"} 1.5e3 1700000000000\n# a comment\n");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(*good->Value("a", {{"x", "q\"\n"}}), 1500);
}

}  // namespace
}  // namespace gemmprof::metrics
