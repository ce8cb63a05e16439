#include "client/render/roofline_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "client/render/format.h"
#include "client/render/recipe_style.h"
#include "client/render/svg_chart.h"
#include "core/device_peaks.h"
#include "report/figures.h"

namespace gemmprof::client::render {
namespace {

constexpr double kWidth = 900, kHeight = 560;
constexpr double kLeft = 90, kRight = 230, kTop = 70, kBottom = 80;
constexpr char kFont[] = "font-family=\"DejaVu Sans, Arial, sans-serif\"";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string Text(double x, double y, const std::string& s, const char* anchor, int size,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\" fill=\"#222222\" " + kFont + extra + ">" +
         XmlEscape(s) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& color,
                 const std::string& extra = "") {
  return "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
         Num(y2) + "\" stroke=\"" + color + "\"" + extra + "/>\n";
}

std::string Decade(double e) {
  char buf[32];
  const double v = std::pow(10.0, e);
  std::snprintf(buf, sizeof(buf), v >= 1 ? "%.0f" : "%g", v);
  return buf;
}

struct Point {
  double x, y;  // FLOP/byte, TFLOP/s
  core::Recipe recipe;
  bool hollow;
};

// A log10 axis over whole decades that holds [lo, hi].
struct LogAxis {
  double lo_e, hi_e;
  LogAxis(double lo, double hi)
      : lo_e(std::floor(std::log10(lo))), hi_e(std::ceil(std::log10(hi))) {
    if (hi_e <= lo_e) hi_e = lo_e + 1;
  }
  double Frac(double v) const { return (std::log10(v) - lo_e) / (hi_e - lo_e); }
};

// What a roofline shows of a report: a point per measured item, the recipes, the median
// SM clock and the copy bandwidth measured, and one ceiling per distinct dense peak.
struct Roofline {
  std::vector<Point> points;
  std::vector<core::Recipe> recipes;  // canonical order
  double clock = 0;                   // MHz, median over the items; 0: none sampled
  double copy = 0;                    // bytes/s; 0: not measured
  bool host = false;
  std::map<double, std::vector<core::Recipe>> ceilings;  // TFLOP/s -> recipes
};

Roofline Collect(const core::Report& report) {
  const core::DeviceInfo& device = report.job.device;
  Roofline r;
  std::vector<double> clocks;
  for (const core::ItemRecord& item : report.items) {
    if (!item.result || item.result->bytes <= 0) continue;
    const double tflops = report::TflopsOf(item);
    if (tflops <= 0) continue;
    const double flops = item.result->flops > 0 ? item.result->flops : item.item.op.Flops();
    r.points.push_back({flops / item.result->bytes, tflops, item.item.recipe,
                        item.item.mode == core::Mode::kPrequant});
    if (const double c = core::ItemSmClockMhz(item.result->telemetry); c > 0) clocks.push_back(c);
    r.copy = std::max(r.copy, item.result->copy_bytes_per_s);
    if (std::find(r.recipes.begin(), r.recipes.end(), item.item.recipe) == r.recipes.end())
      r.recipes.push_back(item.item.recipe);
  }
  std::sort(r.recipes.begin(), r.recipes.end());
  r.host = device.backend == "host-reference";
  if (!clocks.empty()) {
    std::nth_element(clocks.begin(), clocks.begin() + clocks.size() / 2, clocks.end());
    r.clock = clocks[clocks.size() / 2];
  }
  if (!r.host) {
    for (core::Recipe recipe : r.recipes) {
      const double peak = core::DensePeakFlops(device.sm, device.sm_count, r.clock, recipe) / 1e12;
      if (peak > 0) r.ceilings[peak].push_back(recipe);
    }
  }
  return r;
}

// The plot area and its log axes, holding every point and ceiling.
struct Plot {
  LogAxis ax, ay;
  double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  double X(double v) const { return kLeft + pw * ax.Frac(v); }
  double Y(double v) const { return kTop + ph - ph * ay.Frac(v); }
};

Plot PlotOf(const Roofline& r) {
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const Point& p : r.points) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  for (const auto& [peak, rs] : r.ceilings) y_hi = std::max(y_hi, peak);
  return {LogAxis(x_lo / 2, x_hi * 2), LogAxis(y_lo / 2, y_hi * 1.5)};
}

// Decade grid lines, tick labels, the axes and their titles.
std::string Axes(const Plot& p) {
  std::string out;
  for (double e = p.ax.lo_e; e <= p.ax.hi_e; e += 1) {
    const double x = kLeft + p.pw * (e - p.ax.lo_e) / (p.ax.hi_e - p.ax.lo_e);
    out += Line(x, kTop, x, kTop + p.ph, "#e4e4e4");
    out += Text(x, kTop + p.ph + 18, Decade(e), "middle", 12);
  }
  for (double e = p.ay.lo_e; e <= p.ay.hi_e; e += 1) {
    const double y = kTop + p.ph - p.ph * (e - p.ay.lo_e) / (p.ay.hi_e - p.ay.lo_e);
    out += Line(kLeft, y, kLeft + p.pw, y, "#e4e4e4");
    out += Text(kLeft - 8, y + 4, Decade(e), "end", 12);
  }
  out += Line(kLeft, kTop, kLeft, kTop + p.ph, "#333333");
  out += Line(kLeft, kTop + p.ph, kLeft + p.pw, kTop + p.ph, "#333333");
  out += Text(kLeft + p.pw / 2, kTop + p.ph + 44, "arithmetic intensity (FLOP per byte moved)",
              "middle", 13);
  const double cy = kTop + p.ph / 2;
  out += Text(24, cy, "achieved TFLOP/s", "middle", 13,
              " transform=\"rotate(-90 24 " + Num(cy) + ")\"");
  return out;
}

// The memory slope (TFLOP/s = intensity x bandwidth, clipped to the plot), the compute
// ceilings and a mark per item.
std::string Roofs(const Roofline& r, const Plot& p) {
  std::string out;
  const double x_min = std::pow(10.0, p.ax.lo_e), x_max = std::pow(10.0, p.ax.hi_e);
  const double y_min = std::pow(10.0, p.ay.lo_e), y_max = std::pow(10.0, p.ay.hi_e);
  if (!r.host && r.copy > 0) {
    const double bw = r.copy / 1e12;  // TFLOP/s per FLOP/byte
    const double xa = std::max(x_min, y_min / bw), xb = std::min(x_max, y_max / bw);
    if (xa < xb) {
      out += Line(p.X(xa), p.Y(xa * bw), p.X(xb), p.Y(xb * bw), "#555555",
                  " stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
    }
  }
  for (const auto& [peak, rs] : r.ceilings) {
    const double knee = r.copy > 0 ? std::max(x_min, peak / (r.copy / 1e12)) : x_min;
    out += Line(p.X(std::min(knee, x_max)), p.Y(peak), kLeft + p.pw, p.Y(peak),
                RecipeColor(rs.front()), " stroke-width=\"1.5\"");
    std::string names;
    for (core::Recipe recipe : rs)
      names += (names.empty() ? "" : ", ") + std::string(core::ToString(recipe));
    out += Text(kLeft + p.pw - 4, p.Y(peak) - 5, names + " peak " + FormatTflops(peak), "end", 10);
  }
  for (const Point& point : r.points) {
    const std::string c = RecipeColor(point.recipe);
    out += "<circle cx=\"" + Num(p.X(point.x)) + "\" cy=\"" + Num(p.Y(point.y)) +
           "\" r=\"4\" fill=\"" + (point.hollow ? std::string("#ffffff") : c) + "\" stroke=\"" + c +
           "\" stroke-width=\"1.5\"/>\n";
  }
  return out;
}

// The recipes' colours and what the marks and lines mean, right of the plot.
std::string Legend(const Roofline& r) {
  std::string out;
  double ly = kTop;
  const double lx = kWidth - kRight + 20;
  for (core::Recipe recipe : r.recipes) {
    out += "<circle cx=\"" + Num(lx + 6) + "\" cy=\"" + Num(ly + 6) + "\" r=\"5\" fill=\"" +
           RecipeColor(recipe) + "\"/>\n";
    out += Text(lx + 18, ly + 10, std::string(core::ToString(recipe)), "start", 12);
    ly += 20;
  }
  ly += 10;
  std::vector<std::string> key = {"filled: quantization timed", "hollow: prequant (GEMM only)"};
  if (!r.host) {
    if (r.copy > 0) key.push_back("dashed: copy bandwidth");
    key.push_back("lines: dense peak at the");
    key.push_back("measured clock (" + (r.clock > 0
                                            ? std::to_string(static_cast<int>(r.clock)) + " MHz)"
                                            : std::string("none sampled)")));
  }
  for (const std::string& line : key) {
    out += Text(lx, ly + 10, line, "start", 11);
    ly += 16;
  }
  return out;
}

}  // namespace

std::string RenderRooflineSvg(const core::Report& report) {
  const core::DeviceInfo& device = report.job.device;
  const Roofline r = Collect(report);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) + "\" height=\"" +
         Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) + "\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + Num(kWidth) + "\" height=\"" + Num(kHeight) +
         "\" fill=\"#ffffff\"/>\n";
  out += Text(kLeft, 26, "Roofline", "start", 16, " font-weight=\"bold\"");
  out += Text(kLeft, 46,
              (device.name.empty() ? "unknown device" : device.name) + " | job " +
                  std::to_string(report.job.id),
              "start", 12);
  if (r.points.empty()) {
    out += Text(kWidth / 2, kHeight / 2, "no measured item to plot", "middle", 14);
    return out + "</svg>\n";
  }
  const Plot plot = PlotOf(r);
  out += Axes(plot) + Roofs(r, plot) + Legend(r);
  if (r.host) {
    out +=
        Text(kLeft, kHeight - 10,
             "host reference: no GPU, so no compute ceiling or memory slope is drawn", "start", 12);
  }
  return out + "</svg>\n";
}

}  // namespace gemmprof::client::render
