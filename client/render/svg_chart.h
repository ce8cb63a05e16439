// A small, self-contained SVG bar-chart renderer: groups of bars, each bar a stack of
// segments, a y axis with units and "nice" ticks, a legend, an optional reference line.
// No fonts or scripts are embedded beyond a generic font family. Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gemmprof::client::render {

struct BarSegment {
  double value = 0;   // in the y axis' unit; negative values are drawn as 0
  std::string color;  // "#rrggbb"
  double opacity = 1.0;
};

struct Bar {
  std::string label;  // small text under the bar (may be empty)
  std::vector<BarSegment> segments;
  std::string annotation;  // text above the bar, e.g. "1.52x"
  // A 95% interval of the bar's total, drawn as a whisker (low, high in the y unit).
  std::optional<std::pair<double, double>> whisker;
  // A second figure of the same bar, drawn as a short horizontal tick (e.g. the
  // back-to-back time next to the one-GEMM-per-launch bar).
  std::optional<double> marker;
};

struct BarGroup {
  std::string label;  // text under the group
  std::vector<Bar> bars;
};

// A line of a line chart over the chart's x categories (BarChart.x_categories): one
// value per category (nullopt: no point there), each with an optional range drawn as a
// whisker (e.g. p20..p80).
struct LineSeries {
  std::string color;
  // SVG stroke-dasharray ("" solid, "6 3" dashed, "2 3" dotted): tells apart series of
  // one colour (e.g. the modes of one recipe); dashed series get hollow markers.
  std::string dash;
  std::vector<std::optional<double>> values;
  std::vector<std::optional<std::pair<double, double>>> ranges;
};

struct LegendEntry {
  std::string color;
  double opacity = 1.0;
  std::string text;
};

struct BarChart {
  std::string title;
  std::string subtitle;
  std::string y_label;  // with its unit, e.g. "per-layer GEMM time (ms)"
  std::string x_label;
  std::vector<BarGroup> groups;
  // A line chart instead of bars when `lines` is not empty: categories along x, evenly
  // spaced (M values of a sweep), a marker per point, lines between neighbours.
  std::vector<std::string> x_categories;
  std::vector<LineSeries> lines;
  std::vector<LegendEntry> legend;
  std::optional<double> reference_line;  // e.g. 1.0 on a speedup chart
  std::string empty_message;             // shown instead of bars when there are none
};

// The chart's natural size in px: wider with more bars, so labels stay legible.
double ChartWidth(const BarChart& chart);
inline constexpr double kChartHeight = 520;

// The chart as an SVG <g> translated to (x, y), `width` x kChartHeight.
std::string RenderBarChartGroup(const BarChart& chart, double x, double y, double width);
// Complete SVG documents: one chart, or several stacked vertically on a white page.
std::string RenderSvg(const BarChart& chart);
std::string RenderSvgStack(const std::vector<BarChart>& charts);
// Escapes &, <, >, " for SVG text and attributes.
std::string XmlEscape(const std::string& s);

}  // namespace gemmprof::client::render
