// Renders every chart kind to PNG with rsvg-convert and checks the picture itself:
// not blank, and exactly the recipes of the data present in their fixed colours. The
// PNGs stay in GEMMPROF_CHART_OUT_DIR for a human to look at.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/render/recipe_style.h"
#include "client/render/report_charts.h"
#include "png_reader.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::client {
namespace {

using core::Recipe;
using render::ChartKind;
using ::testing::HasSubstr;
using ::testing::Not;

// Pixels of one exact colour needed to count it: more than a legend swatch (14x14).
constexpr int kMinPixelsPerColour = 250;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Renders `svg` to PNG; fails the test (never skips) when rsvg-convert is missing.
testing::Image Rasterize(const std::string& svg, const std::string& name) {
  const std::filesystem::path dir = GEMMPROF_CHART_OUT_DIR;
  std::filesystem::create_directories(dir);
  const std::string svg_path = (dir / (name + ".svg")).string();
  const std::string png_path = (dir / (name + ".png")).string();
  std::ofstream(svg_path) << svg;
  std::filesystem::remove(png_path);
  const std::string cmd = "rsvg-convert -f png -o '" + png_path + "' '" + svg_path + "'";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << " failed; rsvg-convert (Debian librsvg2-bin) is required";
  auto img = testing::DecodePng(ReadAll(png_path));
  EXPECT_TRUE(img.ok()) << img.status();
  return img.ok() ? *img : testing::Image{};
}

// Recipes whose exact colour covers at least kMinPixelsPerColour opaque pixels.
std::vector<Recipe> RecipesInPixels(const testing::Image& img) {
  std::vector<Recipe> out;
  for (Recipe r : core::AllRecipes()) {
    const render::Rgb c = render::RecipeRgb(r);
    int n = 0;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        const uint8_t* p = img.Pixel(x, y);
        n += p[3] == 255 && p[0] == c.r && p[1] == c.g && p[2] == c.b;
      }
    if (n >= kMinPixelsPerColour) out.push_back(r);
  }
  return out;
}

double NonWhiteFraction(const testing::Image& img) {
  int64_t n = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const uint8_t* p = img.Pixel(x, y);
      n += p[3] > 0 && (p[0] < 245 || p[1] < 245 || p[2] < 245);
    }
  return static_cast<double>(n) / (static_cast<double>(img.width) * img.height);
}

struct ChartCase {
  const char* name;
  core::Report (*make)();
  ChartKind kind;
  std::vector<Recipe> expected;
};

class ChartTest : public ::testing::TestWithParam<ChartCase> {};

TEST_P(ChartTest, RendersTheRecipesOfTheData) {
  const ChartCase& c = GetParam();
  const auto svg = render::RenderChartSvg(c.make(), c.kind);
  ASSERT_TRUE(svg.ok()) << svg.status();
  const testing::Image img = Rasterize(*svg, c.name);
  ASSERT_GT(img.width, 0);
  EXPECT_GT(NonWhiteFraction(img), 0.02) << "chart looks blank";
  EXPECT_EQ(RecipesInPixels(img), c.expected);
}

const std::vector<Recipe> kHopper = {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                     Recipe::kFp8Block};
const std::vector<Recipe> kBoth = {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Block};

INSTANTIATE_TEST_SUITE_P(
    Kinds, ChartTest,
    ::testing::Values(
        ChartCase{"hopper_layer", report::testing::HopperReport, ChartKind::kLayer, kHopper},
        ChartCase{"hopper_tflops", report::testing::HopperReport, ChartKind::kTflops, kHopper},
        // bf16 is the dashed reference line of a speedup chart, not a bar.
        ChartCase{"hopper_speedup",
                  report::testing::HopperReport,
                  ChartKind::kSpeedup,
                  {Recipe::kFp8Current, Recipe::kFp8Delayed, Recipe::kFp8Block}},
        ChartCase{"both_modes", report::testing::BothModesReport, ChartKind::kModes, kBoth},
        ChartCase{"hopper_roofline", report::testing::HopperReport, ChartKind::kRoofline, kHopper},
        ChartCase{"both_all", report::testing::BothModesReport, ChartKind::kAll, kBoth},
        // fp8-current is incomplete (a failed item elsewhere is fp8-block's): only the
        // complete bf16 shows per layer.
        ChartCase{
            "failed_layer", report::testing::FailedItemReport, ChartKind::kLayer, {Recipe::kBf16}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ChartKindTest, ParsesEveryKindAndRejectsOthers) {
  for (const char* k : {"layer", "modes", "tflops", "speedup", "roofline", "all"})
    EXPECT_TRUE(render::ParseChartKind(k).has_value()) << k;
  EXPECT_FALSE(render::ParseChartKind("pie").has_value());
}

TEST(ChartTest, NothingToPlotIsAnError) {
  core::Report r = report::testing::FailedItemReport();
  for (auto& item : r.items) item.status = core::ItemStatus::kQueued;
  const auto svg = render::RenderChartSvg(r, ChartKind::kLayer);
  EXPECT_EQ(svg.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ChartTest, SweepsOnlyPlotThroughput) {
  EXPECT_EQ(
      render::RenderChartSvg(report::testing::SweepReport(), ChartKind::kLayer).status().code(),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(render::RenderChartSvg(report::testing::SweepReport(), ChartKind::kTflops).ok());
}

// Every measured item is a mark; each recipe type's dense peak at the measured clock is a
// ceiling; the host draws marks only and says why.
TEST(ChartTest, RooflineHasAMarkPerItemCeilingsAndASlope) {
  core::Report r = report::testing::HopperReport();
  for (auto& item : r.items) {
    if (item.result) item.result->copy_bytes_per_s = 3e12;
  }
  const auto svg = render::RenderChartSvg(r, ChartKind::kRoofline);
  ASSERT_TRUE(svg.ok()) << svg.status();
  size_t items = 0;
  for (const auto& item : r.items) items += item.result.has_value() && item.result->bytes > 0;
  size_t circles = 0;
  for (size_t at = svg->find("<circle"); at != std::string::npos; at = svg->find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, items + 4) << "one mark per item, one legend dot per recipe";
  EXPECT_THAT(*svg, HasSubstr("bf16 peak"));
  EXPECT_THAT(*svg, HasSubstr("fp8-current, fp8-delayed, fp8-block peak"));
  EXPECT_THAT(*svg, HasSubstr("stroke-dasharray=\"6 4\""));  // the copy-bandwidth slope
  const auto host =
      render::RenderChartSvg(report::testing::HostReferenceReport(), ChartKind::kRoofline);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_THAT(*host, HasSubstr("host reference: no GPU"));
  EXPECT_THAT(*host, Not(HasSubstr("peak")));
  EXPECT_THAT(*host, Not(HasSubstr("stroke-dasharray")));
}

// Per-layer joules by recipe and mode, with whiskers and the energy ratio vs bf16; a job
// without energy figures is refused, naming --energy.
TEST(ChartTest, EnergyChartDrawsJoulesAndRefusesAJobWithoutThem) {
  core::Report r = report::testing::BothModesReport();
  const auto none = render::RenderChartSvg(r, ChartKind::kEnergy);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("--energy"));
  for (auto& item : r.items) {
    if (!item.result) continue;
    core::Energy& e = item.result->energy;
    // bf16 at 600 W over its time, the FP8 recipes at half that energy per ms.
    const double per_ms = item.item.recipe == core::Recipe::kBf16 ? 0.6 : 0.3;
    e.joules = per_ms * item.result->time.median_ms;
    e.joules_low = 0.99 * e.joules;
    e.joules_high = 1.01 * e.joules;
    e.period_joules.assign(10, e.joules);
    e.n_eff = 10;
    e.window_s = 1;
  }
  const auto svg = render::RenderChartSvg(r, ChartKind::kEnergy);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("Per-layer GEMM energy by recipe"));
  EXPECT_THAT(*svg, HasSubstr("whisker: 95% interval"));
  EXPECT_THAT(*svg, HasSubstr("fp8-current"));
}

TEST(ChartTest, ModeLettersNameTheJobsModesDynamicIncluded) {
  // The both-modes report with its autocast items made dynamic: prequant and dynamic.
  core::Report r = report::testing::BothModesReport();
  for (auto& item : r.items)
    if (item.item.mode == core::Mode::kAutocast) item.item.mode = core::Mode::kDynamic;
  const render::BarChart c = render::BuildChart(report::Analysis(r), ChartKind::kSpeedup);
  ASSERT_FALSE(c.groups.empty());
  std::vector<std::string> labels;
  for (const render::Bar& b : c.groups.front().bars) labels.push_back(b.label);
  EXPECT_THAT(labels, ::testing::ElementsAre("P", "D"));
  EXPECT_EQ(c.groups.front().bars[0].segments[0].opacity, 1.0) << "the first mode is solid";
  EXPECT_LT(c.groups.front().bars[1].segments[0].opacity, 1.0);
  EXPECT_THAT(c.x_label, HasSubstr("P: prequant, D: dynamic"));
  std::vector<std::string> legend;
  for (const auto& l : c.legend) legend.push_back(l.text);
  EXPECT_THAT(legend, ::testing::IsSupersetOf({"solid: prequant", "light: dynamic"}));
}

// vLLM's figure: TFLOP/s against M, one line per recipe x mode, a point per M.
TEST(ChartTest, SweepThroughputIsALineAgainstM) {
  const auto svg = render::RenderChartSvg(report::testing::SweepReport(), ChartKind::kTflops);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("Throughput against M"));
  EXPECT_THAT(*svg, HasSubstr(">16</text>"));
  EXPECT_THAT(*svg, HasSubstr("bf16 autocast"));
  EXPECT_THAT(*svg, HasSubstr("fp8-current autocast"));
  size_t circles = 0;
  for (size_t at = svg->find("<circle"); at != std::string::npos; at = svg->find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 4u) << "2 recipes x 1 mode x 2 values of M";
  // A line between the two points of each series.
  EXPECT_THAT(*svg, HasSubstr("stroke-width=\"2\""));
}

TEST(ChartTest, SvgIsSelfContainedAndTitled) {
  const auto svg = render::RenderChartSvg(report::testing::HopperReport(), ChartKind::kLayer);
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find("NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(svg->find("tiny-llm"), std::string::npos);
  EXPECT_NE(svg->find("(ms)"), std::string::npos);
  EXPECT_EQ(svg->find("href"), std::string::npos);  // nothing external
  EXPECT_EQ(svg->find("<script"), std::string::npos);
}

}  // namespace
}  // namespace gemmprof::client
