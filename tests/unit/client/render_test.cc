// Numbers and prose of the report renderers, checked against values computed by hand
// from the fixtures (the golden tests pin the layout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "client/render/format.h"
#include "client/render/listings.h"
#include "client/render/model_label.h"
#include "client/render/report_charts.h"
#include "client/render/report_context.h"
#include "client/render/report_document.h"
#include "client/render/text_table.h"
#include "report/analysis.h"
#include "report/notices.h"
#include "report/report_csv.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
using report::CsvField;
using report::RenderReportCsv;
using report::ReportCsvColumns;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReportTableTest, HostReferenceBannerLeadsTheTable) {
  EXPECT_THAT(RenderReportTable(report::testing::HostReferenceReport()),
              HasSubstr(report::kHostReferenceBanner));
}

// Dynamic mode is a mode like the others: its own overhead table against prequant, which
// says what its timing holds.
TEST(ReportTableTest, DynamicModeGetsItsOwnOverheadTable) {
  core::Report r = report::testing::BothModesReport();
  for (core::Mode& m : r.job.spec.modes) {
    if (m == core::Mode::kAutocast) m = core::Mode::kDynamic;
  }
  for (core::ItemRecord& item : r.items) {
    if (item.item.mode == core::Mode::kAutocast) item.item.mode = core::Mode::kDynamic;
  }
  const std::string table = RenderReportTable(r);
  EXPECT_THAT(table, HasSubstr("Dynamic (inference: activations quantized inside the timing, "
                               "weights before it) vs prequant (GEMM only)"));
  EXPECT_THAT(table, HasSubstr("dynamic per-layer ms"));
  EXPECT_THAT(table, Not(HasSubstr("Autocast (quantization timed) vs prequant")));
  EXPECT_THAT(RenderReportTable(report::testing::BothModesReport()),
              HasSubstr("Autocast (quantization timed) vs prequant"));
}

// A variant with items of its own in a pass gets its own column in that pass's table; in
// a pass it shares, the caption says which column it runs.
TEST(ReportTableTest, FastAccumVariantHasAColumnWhereItRunsItsOwnItems) {
  const std::string table = RenderReportTable(report::testing::FastAccumVariantReport());
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = table.find(what); at != std::string::npos; at = table.find(what, at + 1)) ++n;
    return n;
  };
  // Fprop shares fp8-current's items; dgrad and wgrad have the variant's own column.
  EXPECT_EQ(count("fp8-current+fast-accum:all runs the fp8-current column here"), 1u) << table;
  EXPECT_EQ(count("fp8-current+fast-accum:all ms"), 2u) << table;
}

TEST(ReportTableTest, IncompleteRecipesShowNoTotals) {
  const std::string text = RenderReportTable(report::testing::FailedItemReport());
  EXPECT_THAT(text, HasSubstr("failed"));
  EXPECT_THAT(text, HasSubstr("pending"));
  // fp8-block has 0 of 2 results: dashes, never a partial sum.
  EXPECT_THAT(text, ::testing::ContainsRegex("fp8-block +- +- +- +0/2"));
}

TEST(ReportSweepTest, ForwardTimePerMInsteadOfLayerSums) {
  const core::Report report = report::testing::SweepReport();
  const report::Analysis a(report);
  const double expected = *a.SweepModelMs(16, {Recipe::kBf16, Mode::kAutocast});
  const std::string text = RenderReportTable(report);
  EXPECT_THAT(text, HasSubstr("Inference sweep: full-model forward time per M"));
  const size_t row = text.find("\n  16 ");
  ASSERT_NE(row, std::string::npos);
  EXPECT_THAT(text.substr(row, text.find('\n', row + 1) - row), HasSubstr(FormatMs(expected)));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("Per layer and full model")));
}

TEST(ReportCsvTest, EveryRowHasEveryColumn) {
  const core::Report report = report::testing::HopperReport();
  std::istringstream csv(RenderReportCsv(report));
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) {
    size_t commas = 0;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++commas;
    }
    EXPECT_EQ(commas + 1, ReportCsvColumns().size()) << line;
    ++rows;
  }
  EXPECT_EQ(rows, static_cast<int>(report.items.size()) + 1);
  EXPECT_EQ(CsvField("a,\"b\""), "\"a,\"\"b\"\"\"");
}

// Routed experts: the last columns but one hold an op's per-group tokens and a grouped
// op's layout, the last an item's own fast accumulation; each empty where it does not
// apply, with or without a result.
TEST(ReportCsvTest, RoutedOpsAndOwnFastAccumulationFillTheLastColumns) {
  core::Report report = report::testing::HopperReport();
  ASSERT_GE(report.items.size(), 4u);
  ASSERT_EQ(ReportCsvColumns()[ReportCsvColumns().size() - 3], "group_tokens");
  ASSERT_EQ(ReportCsvColumns()[ReportCsvColumns().size() - 2], "moe_layout");
  ASSERT_EQ(ReportCsvColumns().back(), "fast_accum_own");
  core::GemmOp& routed = report.items[0].item.op;
  routed.shape.m = 8;
  routed.groups = 3;
  routed.group_tokens = {3, 0, 5};
  routed.layout = core::MoeLayout::kMasked;
  report.items[1].item.op.groups = 8;  // uniform: every group at the whole shape
  report.items[1].result.reset();
  report.items[3].item.fast_accum = core::FastAccum::kOff;
  std::istringstream csv(RenderReportCsv(report));
  std::string header, first, second, third, fourth;
  std::getline(csv, header);
  std::getline(csv, first);
  std::getline(csv, second);
  std::getline(csv, third);
  std::getline(csv, fourth);
  EXPECT_THAT(first, ::testing::EndsWith(",3;0;5,masked,")) << first;
  EXPECT_THAT(second, ::testing::EndsWith(",,contiguous,")) << second;
  EXPECT_THAT(third, ::testing::EndsWith(",,,")) << third;
  EXPECT_THAT(fourth, ::testing::EndsWith(",,,off")) << fourth;
  EXPECT_EQ(report.items[2].item.op.groups, 1);
}

// `--timing kernels`: the kernel figures get their own table beside the events figure,
// the context says which backend made which number, and CSV carries them raw (the JSON
// document: tests/unit/report/json_document_test.cc).
TEST(ReportKernelTimingTest, TableContextAndCsv) {
  core::Report report = report::testing::HopperReport();
  EXPECT_EQ(RenderReportTable(report).find("Kernel-only timing"), std::string::npos)
      << "no kernel figures, no section";
  report.job.spec.timing.timing_backend = core::TimingBackend::kKernels;
  report::testing::AddKernelFigures(report);
  const std::string table = RenderReportTable(report);
  EXPECT_THAT(table, HasSubstr("Kernel-only timing (CUPTI)"));
  EXPECT_THAT(table, HasSubstr("0.980"));  // kernel/events
  EXPECT_THAT(table, HasSubstr("nvjet_sm90_gemm x1; RowwiseQuantize<128> x2"));
  EXPECT_THAT(table, HasSubstr("kernel timing:"));
  const std::string csv = RenderReportCsv(report);
  EXPECT_THAT(csv, HasSubstr(",kernel_median_ms,kernel_quant_ms,kernel_samples,kernel_names,"
                             "profiled,batch_id,"));
  EXPECT_THAT(csv, HasSubstr(",0.05,3,nvjet_sm90_gemm x1; RowwiseQuantize<128> x2,false,"));
}

TEST(TextTableTest, AlignsUtf8AndEscapesMarkdown) {
  TextTable t({"name", "ms"});
  t.AddRow({"µ|x", "1.5"});
  t.AddRow({"long name", "10.25"});
  EXPECT_EQ(t.RenderText(0),
            "name          ms\n---------  -----\nµ|x          1.5\nlong name  10.25\n");
  EXPECT_THAT(t.RenderMarkdown(), HasSubstr("| µ\\|x | 1.5 |"));
}

// A job submitted with the seed tool's six size flags (plan name "custom").
core::Report SeedStyleReport() {
  core::Report r = report::testing::BothModesReport();
  r.job.plan.model_name = "custom";
  core::ModelConfig m;
  m.hidden_size = 4096;
  m.intermediate_size = 16384;
  m.num_attention_heads = 32;
  m.num_hidden_layers = 2;
  m.micro_batch_size = 31;
  m.sequence_length = 512;
  r.job.spec.model = m;
  return r;
}

std::string ContextValue(const core::Report& r, const std::string& key) {
  for (const auto& [k, v] : ContextFields(report::Analysis(r)))
    if (k == key) return v;
  return "";
}

TEST(ModelLabelTest, SeedStyleModelsShowTheirSizes) {
  core::Report r = SeedStyleReport();
  EXPECT_EQ(ContextValue(r, "model"),
            "seed-style model: hidden 4096, intermediate 16384, heads 32, 2 layers, "
            "M = 31 x 512 = 15872 tokens");
  EXPECT_EQ(BuildChart(report::Analysis(r), ChartKind::kLayer).subtitle,
            "NVIDIA H100 80GB HBM3 | h4096 i16384, 2 layers | job 21 | autocast");
  r.job.spec.model->num_key_value_heads = 8;
  r.job.spec.model->tensor_parallel = 2;
  EXPECT_EQ(ModelLine(r.job, 2),
            "seed-style model: hidden 4096, intermediate 16384, heads 32, kv heads 8, 2 layers, "
            "tp 2, M = 31 x 512 = 15872 tokens");
  r.job.spec.model->sweep_m = {1, 16};
  EXPECT_THAT(ModelLine(r.job, 2), ::testing::EndsWith("tp 2, M swept over 1, 16"));
}

TEST(ModelLabelTest, PresetsAndFilesKeepTheirNames) {
  core::Report r = SeedStyleReport();
  r.job.plan.model_name = "llama-3.1-8b";
  EXPECT_EQ(ContextValue(r, "model"), "llama-3.1-8b, 2 layers");
  EXPECT_EQ(ModelShortLine(r.job, 2), "llama-3.1-8b, 2 layers");
  // Without the spec's sizes there is nothing better than the name.
  r.job.plan.model_name = "custom";
  r.job.spec.model.reset();
  EXPECT_EQ(ModelLine(r.job, 24), "custom, 24 layers");
  EXPECT_EQ(ContextValue(report::testing::FailedItemReport(), "model"), "shape list, 2 GEMMs");
}

}  // namespace
}  // namespace gemmprof::client::render

namespace gemmprof::client::render {
namespace {

TEST(ClusterListingTest, EachDaemonWithItsStateDevicesAndHeartbeat) {
  core::DaemonListing l;
  l.now_unix_ms = 1'800'000'100'000;
  core::DaemonRecord a;
  a.node = "gpu-a";
  a.version = "0.1.0";
  a.backend = "cuda";
  a.models = {{"NVIDIA H200", 2, 0}};
  a.devices = 2;
  a.busy = 1;
  a.started_unix_ms = 1'800'000'000'000;
  a.heartbeat_unix_ms = l.now_unix_ms - 4'000;
  core::DaemonRecord b = a;
  b.node = "gpu-b";
  b.models = {{"NVIDIA H100 80GB HBM3", 1, 1}};
  b.devices = 1;
  b.busy = 0;
  b.heartbeat_unix_ms = l.now_unix_ms - 45'000;  // more than 3 periods: lost
  core::DaemonRecord c = a;
  c.node = "gpu-c";
  c.stopped = true;
  c.busy = 0;
  l.daemons = {a, b, c};
  const std::string table = RenderListing(ClusterListing(l), ListingFormat::kTable);
  EXPECT_THAT(table, HasSubstr("gpu-a"));
  EXPECT_THAT(table, HasSubstr("serving"));
  EXPECT_THAT(table, HasSubstr("2x NVIDIA H200"));
  EXPECT_THAT(table, HasSubstr("1 of 2"));
  EXPECT_THAT(table, HasSubstr("4s ago"));
  EXPECT_THAT(table, HasSubstr("lost"));
  EXPECT_THAT(table, HasSubstr("1x NVIDIA H100 80GB HBM3 (1 unavailable)"));
  EXPECT_THAT(table, HasSubstr("stopped"));
  const std::string csv = RenderListing(ClusterListing(l), ListingFormat::kCsv);
  EXPECT_EQ(csv.rfind("node,state,backend,version,devices,busy,models,unavailable,", 0), 0u) << csv;
  EXPECT_THAT(csv, HasSubstr("gpu-b,lost,cuda,0.1.0,1,0,1x NVIDIA H100 80GB HBM3 (1 "
                             "unavailable),1,"));
  const auto json = nlohmann::json::parse(RenderListing(ClusterListing(l), ListingFormat::kJson));
  EXPECT_EQ(json["now_unix_ms"], l.now_unix_ms);
  ASSERT_EQ(json["daemons"].size(), 3u);
  EXPECT_EQ(json["daemons"][2]["state"], "stopped");
  EXPECT_DOUBLE_EQ(json["daemons"][0]["heartbeat_age_s"].get<double>(), 4.0);
  EXPECT_THAT(RenderListing(ClusterListing({}), ListingFormat::kTable),
              HasSubstr("no daemon has written its record"));
}

TEST(DevicesTest, UnavailableDevicesSayWhy) {
  core::DeviceInfo up;
  up.backend = "cuda";
  up.name = "NVIDIA H100 80GB HBM3";
  up.sm = 90;
  up.recipes = {{core::Recipe::kBf16, true, ""}};
  core::DeviceInfo lost = up;  // its worker died later: what it was stays known
  lost.name = "NVIDIA H100 80GB HBM3 #2";
  lost.unavailable = true;
  lost.unavailable_reason = "its worker failed to start 3 times in a row";
  core::DeviceInfo never;  // no worker ever started: a name only
  never.backend = "cuda";
  never.name = "CUDA device 2";
  never.unavailable = true;
  never.unavailable_reason =
      "its worker failed to start 3 times in a row (last: worker exited "
      "with status 3)";
  const std::string out = RenderListing(DevicesListing({up, lost, never}), ListingFormat::kTable);
  const size_t lost_at = out.find("NVIDIA H100 80GB HBM3 #2");
  const size_t never_at = out.find("CUDA device 2");
  ASSERT_NE(lost_at, std::string::npos) << out;
  ASSERT_NE(never_at, std::string::npos) << out;
  EXPECT_EQ(out.substr(0, lost_at).find("UNAVAILABLE"), std::string::npos)
      << "the available device says nothing";
  const std::string lost_text = out.substr(lost_at, never_at - lost_at);
  EXPECT_NE(lost_text.find("\n  - UNAVAILABLE: its worker failed to start 3 times in a row\n"),
            std::string::npos)
      << lost_text;
  EXPECT_NE(lost_text.find("bf16"), std::string::npos) << "what it was stays shown";
  EXPECT_EQ(out.substr(never_at),
            "CUDA device 2 (cuda)\n--------------------\n  - UNAVAILABLE: its worker failed to "
            "start 3 times in a row (last: worker exited with status 3)\n");
}

}  // namespace
}  // namespace gemmprof::client::render

namespace gemmprof::client::render {
namespace {

// The sweep fixture with its "qkv" ops turned into routed experts: 4 experts at 3, 0, 5
// and 1 tokens at M = 16 (capacity 5), uniform 1 each at M = 1.
core::Report ExpertSweepReport() {
  core::Report r = report::testing::SweepReport();
  core::ModelConfig m;
  m.moe_routing = "zipf:1.2";
  m.moe_seed = 7;
  r.job.spec.model = m;
  for (core::ItemRecord& item : r.items) {
    core::GemmOp& op = item.item.op;
    if (op.name.rfind("qkv", 0) != 0) continue;
    const bool step16 = op.name == "qkv@m=16";
    op.name = step16 ? "expert_up@m=16" : "expert_up@m=1";
    op.groups = 4;
    op.shape.m = step16 ? 5 : 1;
    if (step16) {
      op.group_tokens = {3, 0, 5, 1};
      op.layout = core::MoeLayout::kMasked;
    }
    if (item.result.has_value()) item.result->flops = op.Flops();
  }
  return r;
}

TEST(ReportExpertsTest, RoutedExpertsShowTheirTokensAndSweepThroughput) {
  const core::Report r = ExpertSweepReport();
  const std::string text = RenderReportTable(r);
  EXPECT_THAT(text, HasSubstr("Routed experts"));
  EXPECT_THAT(text, HasSubstr("Routing zipf:1.2 (seed 7)"));
  // 3, 0, 5, 1: 9 tokens, min 0, lower median 1, max 5, one expert empty, capacity 5.
  EXPECT_THAT(text, ::testing::ContainsRegex("expert_up@m=16 +4 +9 +0 / 1 / 5 +1 +5 +masked"));
  EXPECT_THAT(text, ::testing::ContainsRegex("expert_up@m=1 +4 +4 +1 / 1 / 1 +0 +1 +contiguous"));
  // Expert TFLOP/s per step: flops x layers over median x layers, by hand.
  EXPECT_THAT(text, HasSubstr("Expert GEMMs' TFLOP/s per step"));
  const report::Analysis a(r);
  for (const core::ItemRecord& item : r.items) {
    if (item.item.op.name != "expert_up@m=16" || item.item.recipe != Recipe::kBf16) continue;
    const double tflops = item.result->flops / (item.result->time.median_ms * 1e9);
    const size_t table = text.find("tokens per step");
    ASSERT_NE(table, std::string::npos);
    EXPECT_THAT(text.substr(table, text.find("Inference sweep") - table),
                ::testing::ContainsRegex(" 16 +" + report::FormatFixed(tflops, 0) + " "));
  }
  // The tflops chart adds the experts' own line chart, x = tokens per step (not capacity).
  auto svg = RenderChartSvg(r, ChartKind::kTflops);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, HasSubstr("Routed experts: throughput against tokens per step"));
  EXPECT_THAT(*svg, Not(HasSubstr(">5<")));  // the capacity is no M category
  // A report without grouped ops has no such section.
  EXPECT_THAT(RenderReportTable(report::testing::SweepReport()), Not(HasSubstr("Routed experts")));
}

TEST(PlanListingTest, RoutedExpertsAreListedWithEveryCount) {
  core::Plan plan;
  plan.model_name = "moe";
  core::GemmOp op{"expert_up", core::Pass::kFprop, {5, 64, 32}, 4, 2, true};
  op.group_tokens = {3, 0, 5, 1};
  plan.ops.push_back(op);
  core::JobSpec spec;
  spec.model = core::ModelConfig{};
  spec.model->moe_routing = "hot:1:0.5";
  const Listing l = PlanListing(plan, spec);
  const std::string text = RenderText(l.doc);
  EXPECT_THAT(text, HasSubstr("Routing hot:1:0.5."));
  EXPECT_THAT(text, ::testing::ContainsRegex("expert_up +4 +9 +0 / 1 / 5 +1 +5 +contiguous"));
  ASSERT_TRUE(l.summary.contains("experts"));
  EXPECT_EQ(l.summary["experts"][0]["group_tokens"], nlohmann::ordered_json({3, 0, 5, 1}));
  EXPECT_EQ(l.summary["experts"][0]["without_tokens"], 1);
}

}  // namespace
}  // namespace gemmprof::client::render
