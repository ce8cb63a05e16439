#include "client/render/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace gemmprof::client::render {
namespace {

constexpr double kLeft = 90, kRight = 220, kTop = 70, kBottom = 110;
constexpr double kBarWidth = 18, kMaxBarWidth = 56, kGroupGap = 24, kMinWidth = 760;
// Approximate width of one character of 12 px label text.
constexpr double kCharWidth = 7.5;
constexpr char kFont[] = "font-family=\"DejaVu Sans, Arial, sans-serif\"";
constexpr char kInk[] = "#222222";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// A tick step of 1, 2 or 5 x 10^k giving about five ticks up to `max`.
double NiceStep(double max) {
  if (max <= 0) return 1;
  const double raw = max / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (raw <= f * mag) return f * mag;
  return 10 * mag;
}

std::string TickLabel(double v, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string Text(double x, double y, const std::string& s, const char* anchor, int size,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\" fill=\"" + kInk + "\" " + kFont + extra +
         ">" + XmlEscape(s) + "</text>\n";
}

std::string Rect(double x, double y, double w, double h, const std::string& color, double opacity) {
  std::string s = "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) +
                  "\" height=\"" + Num(h) + "\" fill=\"" + color + "\"";
  if (opacity < 1) s += " fill-opacity=\"" + Num(opacity) + "\"";
  return s + "/>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& color,
                 const std::string& extra = "") {
  return "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
         Num(y2) + "\" stroke=\"" + color + "\"" + extra + "/>\n";
}

double MaxValue(const BarChart& c) {
  double max = c.reference_line.value_or(0);
  for (const LineSeries& l : c.lines) {
    for (const auto& v : l.values) max = std::max(max, v.value_or(0));
    for (const auto& r : l.ranges) max = std::max(max, r ? r->second : 0.0);
  }
  for (const auto& g : c.groups)
    for (const auto& b : g.bars) {
      double sum = 0;
      for (const auto& s : b.segments) sum += std::max(0.0, s.value);
      max = std::max(max, sum);
      if (b.whisker) max = std::max(max, b.whisker->second);
      if (b.marker) max = std::max(max, *b.marker);
    }
  return max;
}

std::string Axes(const BarChart& c, double plot_w, double plot_h, double max, double step) {
  std::string out;
  for (double v = 0; v <= max * (1 + 1e-9); v += step) {
    const double y = kTop + plot_h - plot_h * v / max;
    out += Line(kLeft, y, kLeft + plot_w, y, "#dddddd");
    out += Text(kLeft - 8, y + 4, TickLabel(v, step), "end", 12);
  }
  out += Line(kLeft, kTop, kLeft, kTop + plot_h, "#333333");
  out += Line(kLeft, kTop + plot_h, kLeft + plot_w, kTop + plot_h, "#333333");
  const double cy = kTop + plot_h / 2;
  out += Text(24, cy, c.y_label, "middle", 13, " transform=\"rotate(-90 24 " + Num(cy) + ")\"");
  out += Text(kLeft + plot_w / 2, kTop + plot_h + kBottom - 12, c.x_label, "middle", 13);
  return out;
}

// Each group gets an equal slot of the plot width; bars are centred in it, at most
// kMaxBarWidth wide, so few bars do not leave the plot half empty.
std::string Bars(const BarChart& c, double plot_w, double plot_h, double max) {
  std::string out;
  const double slot = plot_w / static_cast<double>(c.groups.size());
  const bool rotate = c.groups.size() > 8;
  for (size_t gi = 0; gi < c.groups.size(); ++gi) {
    const BarGroup& g = c.groups[gi];
    const double n = static_cast<double>(std::max<size_t>(1, g.bars.size()));
    const double bar_w = std::min(kMaxBarWidth, (slot - kGroupGap) / n);
    const double center = kLeft + slot * (static_cast<double>(gi) + 0.5);
    double x = center - bar_w * n / 2;
    for (const Bar& b : g.bars) {
      double top = kTop + plot_h;
      for (const BarSegment& s : b.segments) {
        const double h = plot_h * std::max(0.0, s.value) / max;
        top -= h;
        out += Rect(x + 1, top, bar_w - 2, h, s.color, s.opacity);
      }
      const double mid = x + bar_w / 2;
      auto y_of = [&](double v) { return kTop + plot_h - plot_h * std::max(0.0, v) / max; };
      if (b.whisker) {
        const double lo = y_of(b.whisker->first), hi = y_of(b.whisker->second);
        out += Line(mid, lo, mid, hi, "#222222", " stroke-width=\"1.2\"");
        out += Line(mid - 4, lo, mid + 4, lo, "#222222", " stroke-width=\"1.2\"");
        out += Line(mid - 4, hi, mid + 4, hi, "#222222", " stroke-width=\"1.2\"");
        top = std::min(top, hi);
      }
      if (b.marker) {
        const double y = y_of(*b.marker);
        out += Line(x + 1, y, x + bar_w - 1, y, "#222222",
                    " stroke-width=\"2\" stroke-dasharray=\"3 2\"");
      }
      if (!b.annotation.empty()) out += Text(mid, top - 4, b.annotation, "middle", 10);
      if (!b.label.empty()) out += Text(x + bar_w / 2, kTop + plot_h + 12, b.label, "middle", 9);
      x += bar_w;
    }
    const double gy = kTop + plot_h + 28;
    out += rotate ? Text(center, gy, g.label, "end", 11,
                         " transform=\"rotate(-35 " + Num(center) + " " + Num(gy) + ")\"")
                  : Text(center, gy, g.label, "middle", 12);
  }
  return out;
}

std::string Lines(const BarChart& c, double plot_w, double plot_h, double max) {
  std::string out;
  const size_t n = c.x_categories.size();
  const double slot = plot_w / static_cast<double>(std::max<size_t>(1, n));
  auto x_of = [&](size_t i) { return kLeft + slot * (static_cast<double>(i) + 0.5); };
  auto y_of = [&](double v) { return kTop + plot_h - plot_h * std::max(0.0, v) / max; };
  for (size_t i = 0; i < n; ++i) {
    out += Text(x_of(i), kTop + plot_h + 20, c.x_categories[i], "middle", 12);
  }
  for (const LineSeries& l : c.lines) {
    const std::string stroke =
        " stroke-width=\"2\"" +
        (l.dash.empty() ? std::string() : " stroke-dasharray=\"" + l.dash + "\"");
    std::optional<size_t> prev;
    for (size_t i = 0; i < n && i < l.values.size(); ++i) {
      if (!l.values[i]) continue;
      if (prev)
        out +=
            Line(x_of(*prev), y_of(*l.values[*prev]), x_of(i), y_of(*l.values[i]), l.color, stroke);
      prev = i;
    }
    for (size_t i = 0; i < n && i < l.values.size(); ++i) {
      if (!l.values[i]) continue;
      if (i < l.ranges.size() && l.ranges[i]) {
        out += Line(x_of(i), y_of(l.ranges[i]->first), x_of(i), y_of(l.ranges[i]->second), l.color,
                    " stroke-width=\"1.2\"");
      }
      out += "<circle cx=\"" + Num(x_of(i)) + "\" cy=\"" + Num(y_of(*l.values[i])) +
             "\" r=\"3.5\" fill=\"" + (l.dash.empty() ? l.color : std::string("#ffffff")) +
             "\" stroke=\"" + l.color + "\" stroke-width=\"1.5\"/>\n";
    }
  }
  return out;
}

std::string Legend(const BarChart& c, double x) {
  std::string out;
  double y = kTop;
  for (const LegendEntry& e : c.legend) {
    if (!e.color.empty()) out += Rect(x, y, 14, 14, e.color, e.opacity);
    out += Text(e.color.empty() ? x : x + 20, y + 11, e.text, "start", 12);
    y += 20;
  }
  return out;
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

double ChartWidth(const BarChart& chart) {
  // Rotated labels (many groups) need no horizontal room; upright ones do.
  const bool rotate = chart.groups.size() > 8;
  double slot = 0;
  for (const auto& g : chart.groups) {
    slot = std::max(slot, kBarWidth * static_cast<double>(g.bars.size()) + kGroupGap);
    if (!rotate) slot = std::max(slot, kCharWidth * static_cast<double>(g.label.size()) + 16);
  }
  const double bars = slot * static_cast<double>(chart.groups.size());
  const double points = 64.0 * static_cast<double>(chart.x_categories.size());
  return std::max(kMinWidth, kLeft + std::max(bars, points) + kRight);
}

std::string RenderBarChartGroup(const BarChart& c, double x, double y, double width) {
  const double plot_w = width - kLeft - kRight;
  const double plot_h = kChartHeight - kTop - kBottom;
  std::string out = "<g transform=\"translate(" + Num(x) + "," + Num(y) + ")\">\n";
  out += Text(kLeft, 26, c.title, "start", 16, " font-weight=\"bold\"");
  out += Text(kLeft, 46, c.subtitle, "start", 12);
  const double max_value = MaxValue(c);
  if ((c.groups.empty() && c.lines.empty()) || max_value <= 0) {
    out += Text(kLeft + plot_w / 2, kTop + plot_h / 2,
                c.empty_message.empty() ? "no data" : c.empty_message, "middle", 14);
    return out + "</g>\n";
  }
  const double step = NiceStep(max_value * 1.08);
  const double max = std::ceil(max_value * 1.08 / step) * step;
  out += Axes(c, plot_w, plot_h, max, step);
  out += c.lines.empty() ? Bars(c, plot_w, plot_h, max) : Lines(c, plot_w, plot_h, max);
  if (c.reference_line) {
    const double ry = kTop + plot_h - plot_h * *c.reference_line / max;
    out += Line(kLeft, ry, kLeft + plot_w, ry, "#000000", " stroke-dasharray=\"6 4\"");
  }
  out += Legend(c, width - kRight + 20);
  return out + "</g>\n";
}

std::string RenderSvgStack(const std::vector<BarChart>& charts) {
  double width = kMinWidth;
  for (const auto& c : charts) width = std::max(width, ChartWidth(c));
  const double height = kChartHeight * static_cast<double>(std::max<size_t>(1, charts.size()));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) + "\" height=\"" +
         Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) + "\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + Num(width) + "\" height=\"" + Num(height) +
         "\" fill=\"#ffffff\"/>\n";
  for (size_t i = 0; i < charts.size(); ++i)
    out += RenderBarChartGroup(charts[i], 0, kChartHeight * static_cast<double>(i), width);
  return out + "</svg>\n";
}

std::string RenderSvg(const BarChart& chart) { return RenderSvgStack({chart}); }

}  // namespace gemmprof::client::render
