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

}  // namespace

std::string RenderRooflineSvg(const core::Report& report) {
  const core::DeviceInfo& device = report.job.device;
  std::vector<Point> points;
  std::vector<double> clocks;
  double copy = 0;
  std::vector<core::Recipe> recipes;
  for (const core::ItemRecord& item : report.items) {
    if (!item.result || item.result->bytes <= 0) continue;
    const double tflops = report::TflopsOf(item);
    if (tflops <= 0) continue;
    const double flops = item.result->flops > 0 ? item.result->flops : item.item.op.Flops();
    points.push_back({flops / item.result->bytes, tflops, item.item.recipe,
                      item.item.mode == core::Mode::kPrequant});
    if (const double c = core::ItemSmClockMhz(item.result->telemetry); c > 0) clocks.push_back(c);
    copy = std::max(copy, item.result->copy_bytes_per_s);
    if (std::find(recipes.begin(), recipes.end(), item.item.recipe) == recipes.end())
      recipes.push_back(item.item.recipe);
  }
  std::sort(recipes.begin(), recipes.end());
  const bool host = device.backend == "host-reference";
  double clock = 0;
  if (!clocks.empty()) {
    std::nth_element(clocks.begin(), clocks.begin() + clocks.size() / 2, clocks.end());
    clock = clocks[clocks.size() / 2];
  }
  // Ceilings: one per distinct dense peak among the recipes shown.
  std::map<double, std::vector<core::Recipe>> ceilings;
  if (!host) {
    for (core::Recipe r : recipes) {
      const double peak = core::DensePeakFlops(device.sm, device.sm_count, clock, r) / 1e12;
      if (peak > 0) ceilings[peak].push_back(r);
    }
  }
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const Point& p : points) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  for (const auto& [peak, rs] : ceilings) y_hi = std::max(y_hi, peak);
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
  if (points.empty()) {
    out += Text(kWidth / 2, kHeight / 2, "no measured item to plot", "middle", 14);
    return out + "</svg>\n";
  }
  const LogAxis ax(x_lo / 2, x_hi * 2), ay(y_lo / 2, y_hi * 1.5);
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double v) { return kLeft + pw * ax.Frac(v); };
  auto Y = [&](double v) { return kTop + ph - ph * ay.Frac(v); };
  for (double e = ax.lo_e; e <= ax.hi_e; e += 1) {
    const double x = kLeft + pw * (e - ax.lo_e) / (ax.hi_e - ax.lo_e);
    out += Line(x, kTop, x, kTop + ph, "#e4e4e4");
    out += Text(x, kTop + ph + 18, Decade(e), "middle", 12);
  }
  for (double e = ay.lo_e; e <= ay.hi_e; e += 1) {
    const double y = kTop + ph - ph * (e - ay.lo_e) / (ay.hi_e - ay.lo_e);
    out += Line(kLeft, y, kLeft + pw, y, "#e4e4e4");
    out += Text(kLeft - 8, y + 4, Decade(e), "end", 12);
  }
  out += Line(kLeft, kTop, kLeft, kTop + ph, "#333333");
  out += Line(kLeft, kTop + ph, kLeft + pw, kTop + ph, "#333333");
  out += Text(kLeft + pw / 2, kTop + ph + 44, "arithmetic intensity (FLOP per byte moved)",
              "middle", 13);
  const double cy = kTop + ph / 2;
  out += Text(24, cy, "achieved TFLOP/s", "middle", 13,
              " transform=\"rotate(-90 24 " + Num(cy) + ")\"");
  // The memory slope: TFLOP/s = intensity x bandwidth, clipped to the plot.
  const double x_min = std::pow(10.0, ax.lo_e), x_max = std::pow(10.0, ax.hi_e);
  const double y_min = std::pow(10.0, ay.lo_e), y_max = std::pow(10.0, ay.hi_e);
  if (!host && copy > 0) {
    const double bw = copy / 1e12;  // TFLOP/s per FLOP/byte
    const double xa = std::max(x_min, y_min / bw), xb = std::min(x_max, y_max / bw);
    if (xa < xb) {
      out += Line(X(xa), Y(xa * bw), X(xb), Y(xb * bw), "#555555",
                  " stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
    }
  }
  for (const auto& [peak, rs] : ceilings) {
    const double knee = copy > 0 ? std::max(x_min, peak / (copy / 1e12)) : x_min;
    out += Line(X(std::min(knee, x_max)), Y(peak), kLeft + pw, Y(peak), RecipeColor(rs.front()),
                " stroke-width=\"1.5\"");
    std::string names;
    for (core::Recipe r : rs) names += (names.empty() ? "" : ", ") + std::string(core::ToString(r));
    out += Text(kLeft + pw - 4, Y(peak) - 5, names + " peak " + FormatTflops(peak), "end", 10);
  }
  for (const Point& p : points) {
    const std::string c = RecipeColor(p.recipe);
    out += "<circle cx=\"" + Num(X(p.x)) + "\" cy=\"" + Num(Y(p.y)) + "\" r=\"4\" fill=\"" +
           (p.hollow ? std::string("#ffffff") : c) + "\" stroke=\"" + c +
           "\" stroke-width=\"1.5\"/>\n";
  }
  double ly = kTop;
  const double lx = kWidth - kRight + 20;
  for (core::Recipe r : recipes) {
    out += "<circle cx=\"" + Num(lx + 6) + "\" cy=\"" + Num(ly + 6) + "\" r=\"5\" fill=\"" +
           RecipeColor(r) + "\"/>\n";
    out += Text(lx + 18, ly + 10, std::string(core::ToString(r)), "start", 12);
    ly += 20;
  }
  ly += 10;
  std::vector<std::string> key = {"filled: quantization timed", "hollow: prequant (GEMM only)"};
  if (!host) {
    if (copy > 0) key.push_back("dashed: copy bandwidth");
    key.push_back("lines: dense peak at the");
    key.push_back("measured clock (" + (clock > 0
                                            ? std::to_string(static_cast<int>(clock)) + " MHz)"
                                            : std::string("none sampled)")));
  }
  for (const std::string& line : key) {
    out += Text(lx, ly + 10, line, "start", 11);
    ly += 16;
  }
  if (host) {
    out +=
        Text(kLeft, kHeight - 10,
             "host reference: no GPU, so no compute ceiling or memory slope is drawn", "start", 12);
  }
  return out + "</svg>\n";
}

}  // namespace gemmprof::client::render
