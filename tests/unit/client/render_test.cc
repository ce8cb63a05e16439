// Numbers and prose of the report renderers, checked against values computed by hand
// from the fixtures (the golden tests pin the layout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "client/render/format.h"
#include "client/render/listings.h"
#include "client/render/model_label.h"
#include "client/render/report_analysis.h"
#include "client/render/report_charts.h"
#include "client/render/report_context.h"
#include "client/render/report_csv.h"
#include "client/render/report_document.h"
#include "client/render/report_findings.h"
#include "client/render/report_json.h"
#include "client/render/report_notes.h"
#include "client/render/text_table.h"
#include "report_fixtures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
using ::testing::HasSubstr;
using ::testing::Not;

bool AnyContains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

// Per-layer and full-model bf16 time of the Hopper fixture, from first principles.
TEST(ReportAnalysisTest, TotalsFollowLayersAndOncePerModelOps) {
  const core::Report report = testing::HopperReport();
  const ReportAnalysis a(report);
  double layer = 0, once = 0;
  for (const core::GemmOp& op : report.job.plan.ops) {
    double ms = testing::MsAt(op.Flops(), 600);
    if (op.pass == core::Pass::kDgrad) ms *= 1.08;
    (op.per_layer ? layer : once) += ms;
  }
  const Totals* t = a.FindTotals({Recipe::kBf16, Mode::kAutocast});
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->complete());
  EXPECT_NEAR(t->LayerMs(), layer, 1e-9);
  EXPECT_NEAR(t->once_ms, once, 1e-9);
  EXPECT_NEAR(t->ModelMs(), layer * 2 + once, 1e-9);  // 2 layers + the LM head once
  const Totals* mx = a.FindTotals({Recipe::kMxfp8, Mode::kAutocast});
  ASSERT_NE(mx, nullptr);
  EXPECT_FALSE(mx->complete());
  EXPECT_EQ(a.CompleteRecipes(Mode::kAutocast),
            (std::vector<Recipe>{Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                 Recipe::kFp8Block}));
  const auto s = a.ModelSpeedup(Recipe::kFp8Current, Recipe::kBf16, Mode::kAutocast);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(*s, t->ModelMs() / a.FindTotals({Recipe::kFp8Current, Mode::kAutocast})->ModelMs(),
              1e-12);
  EXPECT_GT(*s, 1.0);
}

TEST(ReportAnalysisTest, GroupedOpsCountOnceAndLayersMultiply) {
  core::Report r;
  r.job.plan.num_layers = 4;
  core::GemmOp experts{"expert_up", core::Pass::kFprop, {128, 64, 256}, 8, 3, true};
  core::GemmOp dense{"mlp_up", core::Pass::kFprop, {128, 64, 256}, 1, 1, true};
  for (const auto& op : {experts, dense}) {
    core::ItemRecord item;
    item.item.op = op;
    item.status = core::ItemStatus::kDone;
    item.result = core::Measurement{};
    item.result->time.median_ms = op.groups > 1 ? 2.0 : 1.0;
    r.items.push_back(item);
  }
  const ReportAnalysis a(r);
  const Totals* t = a.FindTotals({Recipe::kBf16, Mode::kAutocast});
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->ModelMs(), 2.0 * 3 + 1.0 * 1);
  EXPECT_DOUBLE_EQ(t->LayerMs(), (2.0 * 3 + 1.0) / 4);  // the average layer
}

TEST(ReportNotesTest, HopperNoticesNameEveryTrustIssue) {
  const core::Report report = testing::HopperReport();
  const std::vector<std::string> n = BuildNotices(ReportAnalysis(report));
  EXPECT_TRUE(
      AnyContains(n, "not supported: mxfp8 (15 items): mxfp8 needs sm_100+, this is sm_90"));
  EXPECT_TRUE(AnyContains(n, "not supported: nvfp4"));
  EXPECT_TRUE(AnyContains(n,
                          "throttled: 1 of 60 measured items ran with clocks held back (sw thermal "
                          "slowdown; 3 of 20 telemetry samples): wgrad qkv 4096x8192x12288 "
                          "bf16/autocast; the GPU ran hot"));
  EXPECT_TRUE(AnyContains(n,
                          "high spread: 1 of 60 measured items have stdev or p20-p80 above 5.0% "
                          "of their median"));
  EXPECT_TRUE(AnyContains(n,
                          "worst: fprop mlp_down 8192x16384x4096 fp8-delayed/autocast (p20-p80 "
                          "1.0%, stdev 7.0% of median)"));
  EXPECT_TRUE(AnyContains(n, "3 of 60 results come from the result cache"));
  EXPECT_TRUE(AnyContains(n, "(3d 1h before this job)"));
  EXPECT_FALSE(AnyContains(n, kHostReferenceBanner));
}

TEST(ReportNotesTest, CachedResultsNameTheirNodeAndSpreadJobsTheirGpus) {
  core::Report report = testing::HopperReport();
  int cached = 0, measured = 0;
  for (core::ItemRecord& item : report.items) {
    if (!item.result) continue;
    if (item.cached) {
      item.measured_node = cached++ == 0 ? "node-b" : "node-a";
    } else {
      item.device_uuid = measured++ % 2 == 0 ? "GPU-aaaa" : "GPU-bbbb";
    }
  }
  ASSERT_EQ(cached, 3);
  const std::vector<std::string> n = BuildNotices(ReportAnalysis(report));
  EXPECT_TRUE(AnyContains(
      n, "3 of 60 results come from the result cache, measured on node-a (2), node-b (1)"));
  EXPECT_TRUE(AnyContains(n, "devices: measured on 2 GPUs of NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(AnyContains(n, "GPU-aaaa (29), GPU-bbbb (28)"));
  // One GPU: nothing to say.
  for (core::ItemRecord& item : report.items) item.device_uuid.clear();
  EXPECT_FALSE(AnyContains(BuildNotices(ReportAnalysis(report)), "devices: measured on"));
}

TEST(ReportNotesTest, FailedPendingWrongAndHostReference) {
  const std::vector<std::string> n = BuildNotices(ReportAnalysis(testing::FailedItemReport()));
  EXPECT_TRUE(AnyContains(n, "job is running: 2 of 6 items still pending"));
  EXPECT_TRUE(AnyContains(n, "failed: fprop 4096x4096x4096 fp8-block/autocast: cuBLASLt"));
  EXPECT_TRUE(AnyContains(n, "wrong results: fprop 4096x4096x4096 fp8-current/autocast"));
  const core::Report host = testing::HostReferenceReport();
  const std::vector<std::string> h = BuildNotices(ReportAnalysis(host));
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.front(), kHostReferenceBanner);
  EXPECT_THAT(RenderReportTable(host), HasSubstr(kHostReferenceBanner));
}

TEST(ReportFindingsTest, OverheadAsymmetryAndWinners) {
  const std::vector<std::string> f = BuildFindings(ReportAnalysis(testing::HopperReport()));
  EXPECT_TRUE(AnyContains(f,
                          "autocast: fp8-current is not faster than bf16 on fprop attn_out "
                          "8192x4096x4096"));
  EXPECT_TRUE(AnyContains(f, "quantization overhead exceeds the GEMM gain"));
  EXPECT_FALSE(AnyContains(f, "on fprop qkv"));  // qkv is large enough to gain
  EXPECT_TRUE(
      AnyContains(f, "autocast: Dgrad differs from Fprop by more than 5.0% per layer: bf16 +8.0%"));
  // Results stored before interleaved rounds have no intervals: never ranked.
  EXPECT_FALSE(AnyContains(f, "fastest"));

  const std::vector<std::string> both = BuildFindings(ReportAnalysis(testing::BothModesReport()));
  // 12 GEMMs x 0.04 ms + 3 attn_out x 0.2 ms of quantization per layer.
  EXPECT_TRUE(AnyContains(both, "fp8-current: quantization costs 1.080 ms per layer"));
  EXPECT_FALSE(AnyContains(both, "fastest"));
  EXPECT_FALSE(AnyContains(both, "prequant: fp8-current is not faster"));
}

// Dynamic mode is a mode like the others: its own overhead table against prequant, which
// says what its timing holds.
TEST(ReportTableTest, DynamicModeGetsItsOwnOverheadTable) {
  core::Report r = testing::BothModesReport();
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
  EXPECT_THAT(RenderReportTable(testing::BothModesReport()),
              HasSubstr("Autocast (quantization timed) vs prequant"));
}

TEST(ReportTableTest, IncompleteRecipesShowNoTotals) {
  const std::string text = RenderReportTable(testing::FailedItemReport());
  EXPECT_THAT(text, HasSubstr("failed"));
  EXPECT_THAT(text, HasSubstr("pending"));
  // fp8-block has 0 of 2 results: dashes, never a partial sum.
  EXPECT_THAT(text, ::testing::ContainsRegex("fp8-block +- +- +- +0/2"));
}

TEST(ReportSweepTest, ForwardTimePerMInsteadOfLayerSums) {
  const core::Report report = testing::SweepReport();
  const ReportAnalysis a(report);
  ASSERT_TRUE(a.is_sweep());
  EXPECT_EQ(a.sweep_ms(), (std::vector<int64_t>{1, 16}));
  double expected = 0;
  for (const core::GemmOp& op : report.job.plan.ops)
    if (SweepM(op.name) == 16) expected += testing::MsAt(op.Flops(), 600) * op.layers;
  const auto ms = a.SweepModelMs(16, {Recipe::kBf16, Mode::kAutocast});
  ASSERT_TRUE(ms.has_value());
  EXPECT_NEAR(*ms, expected, 1e-12);
  const std::string text = RenderReportTable(report);
  EXPECT_THAT(text, HasSubstr("Inference sweep: full-model forward time per M"));
  const size_t row = text.find("\n  16 ");
  ASSERT_NE(row, std::string::npos);
  EXPECT_THAT(text.substr(row, text.find('\n', row + 1) - row), HasSubstr(FormatMs(expected)));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("Per layer and full model")));
  EXPECT_EQ(SweepM("attn_out+mlp_down@m=16"), 16);
  EXPECT_EQ(SweepM("qkv"), std::nullopt);
}

TEST(ReportCsvTest, EveryRowHasEveryColumn) {
  const core::Report report = testing::HopperReport();
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

TEST(ReportJsonTest, SchemaVersionItemsAndTotals) {
  const core::Report report = testing::BothModesReport();
  const auto j = nlohmann::json::parse(RenderReportJson(report));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["items"].size(), report.items.size());
  EXPECT_EQ(j["job"]["id"], 21);
  EXPECT_EQ(j["totals"].size(), 6u);  // 3 recipes x 2 modes
  EXPECT_EQ(j["quantization_overhead"].size(), 3u);
  const auto& fp8 = j["quantization_overhead"][1];
  EXPECT_EQ(fp8["recipe"], "fp8-current");
  EXPECT_NEAR(fp8["overhead_per_layer_ms"].get<double>(), 1.08, 1e-9);
  // Every ordered pair of complete recipes, per mode.
  EXPECT_EQ(j["speedups"].size(), 2u * 3 * 2);
}

// `--timing kernels`: the kernel figures get their own table beside the events figure,
// the context says which backend made which number, and CSV/JSON carry them raw.
TEST(ReportKernelTimingTest, TableContextCsvAndJson) {
  core::Report report = testing::HopperReport();
  EXPECT_EQ(RenderReportTable(report).find("Kernel-only timing"), std::string::npos)
      << "no kernel figures, no section";
  report.job.spec.timing.timing_backend = core::TimingBackend::kKernels;
  core::ItemRecord* measured = nullptr;
  for (auto& item : report.items) {
    if (item.result && !measured) measured = &item;
  }
  ASSERT_NE(measured, nullptr);
  core::Measurement& m = *measured->result;
  m.kernel = core::SampleStats::FromSamples(
      {0.98 * m.time.median_ms, 0.99 * m.time.median_ms, 0.97 * m.time.median_ms});
  m.kernel_samples = 3;
  m.kernel_quant_ms = 0.05;
  m.kernel_names = "nvjet_sm90_gemm x1; RowwiseQuantize<128> x2";
  const std::string table = RenderReportTable(report);
  EXPECT_THAT(table, HasSubstr("Kernel-only timing (CUPTI)"));
  EXPECT_THAT(table, HasSubstr("0.980"));  // kernel/events
  EXPECT_THAT(table, HasSubstr("nvjet_sm90_gemm x1; RowwiseQuantize<128> x2"));
  EXPECT_THAT(table, HasSubstr("kernel timing:"));
  const auto j = nlohmann::json::parse(RenderReportJson(report));
  bool found = false;
  for (const auto& item : j["items"]) {
    if (item["result"].is_null()) continue;
    const auto& k = item["result"]["kernel"];
    if (k.is_null()) continue;
    found = true;
    EXPECT_EQ(k["samples"], 3);
    EXPECT_DOUBLE_EQ(k["quant_ms"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(k["median_ms"].get<double>(), m.kernel.median_ms);
  }
  EXPECT_TRUE(found);
  const std::string csv = RenderReportCsv(report);
  EXPECT_THAT(csv, HasSubstr(",kernel_median_ms,kernel_quant_ms,kernel_samples,kernel_names,"
                             "profiled\n"));
  EXPECT_THAT(csv, HasSubstr(",0.05,3,nvjet_sm90_gemm x1; RowwiseQuantize<128> x2,false\n"));
}

TEST(TextTableTest, AlignsUtf8AndEscapesMarkdown) {
  TextTable t({"name", "ms"});
  t.AddRow({"µ|x", "1.5"});
  t.AddRow({"long name", "10.25"});
  EXPECT_EQ(t.RenderText(0),
            "name          ms\n---------  -----\nµ|x          1.5\nlong name  10.25\n");
  EXPECT_THAT(t.RenderMarkdown(), HasSubstr("| µ\\|x | 1.5 |"));
}

// %-of-peak at the measured clock: H100 SXM, 132 SMs at 1500 MHz, BF16 4096 FLOP/clk/SM
// = 811.0 TFLOP/s dense; FP8 twice that.
TEST(EfficiencyTest, PeakAtTheMeasuredClockAndBandwidthFractions) {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.sm = 90;
  d.sm_count = 132;
  core::ItemRecord item;
  item.item.recipe = Recipe::kBf16;
  item.item.op.shape = {4096, 4096, 4096};
  core::Measurement m;
  m.flops = 2.0 * 4096 * 4096 * 4096;
  m.time.median_ms = 0.25;  // 549.8 TFLOP/s
  m.telemetry.sm_clock_mhz_mean = 1500;
  m.bytes = 100e6;
  m.copy_bytes_per_s = 2e12;  // 100 MB in 0.25 ms = 0.4 TB/s = 20% of copy
  m.quant_bytes = 10e6;
  m.quant_ms = 0.01;  // 1 TB/s = 50%
  item.result = m;
  const Efficiency e = EfficiencyOf(item, d);
  const double peak = 132 * 1500e6 * 4096;
  ASSERT_TRUE(e.of_peak && e.peak_tflops && e.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*e.sm_clock_mhz, 1500);
  EXPECT_NEAR(*e.peak_tflops, peak / 1e12, 1e-9);
  EXPECT_NEAR(*e.of_peak, m.flops / 0.25e-3 / peak, 1e-12);
  EXPECT_NEAR(*e.of_copy_bandwidth, 0.2, 1e-12);
  EXPECT_NEAR(*e.quant_of_copy_bandwidth, 0.5, 1e-12);
  item.item.recipe = Recipe::kFp8Rowwise;
  EXPECT_NEAR(*EfficiencyOf(item, d).of_peak, m.flops / 0.25e-3 / (2 * peak), 1e-12);
  // Results stored before the mean clock: the middle of min and max.
  item.result->telemetry.sm_clock_mhz_mean = 0;
  item.result->telemetry.sm_clock_mhz_min = 1400;
  item.result->telemetry.sm_clock_mhz_max = 1600;
  EXPECT_DOUBLE_EQ(*EfficiencyOf(item, d).sm_clock_mhz, 1500);
  // Unknown: no clock sampled, a type sm_90 lacks, the host reference.
  item.result->telemetry = {};
  EXPECT_FALSE(EfficiencyOf(item, d).of_peak);
  item.result->telemetry.sm_clock_mhz_mean = 1500;
  item.item.recipe = Recipe::kNvfp4;
  EXPECT_FALSE(EfficiencyOf(item, d).of_peak);
  d.backend = "host-reference";
  d.sm = 0;
  const Efficiency host = EfficiencyOf(item, d);
  EXPECT_FALSE(host.of_peak || host.of_copy_bandwidth || host.sm_clock_mhz);
}

TEST(FormatTest, Numbers) {
  EXPECT_EQ(FormatMs(123.456), "123.5");
  EXPECT_EQ(FormatMs(1.23456), "1.235");
  EXPECT_EQ(FormatMs(0.0123456), "0.0123");
  EXPECT_EQ(FormatRatio(1.5), "1.50x");
  EXPECT_EQ(FormatUtc(0), "-");
  EXPECT_EQ(FormatUtc(1795000000000), "2026-11-18 11:06:40 UTC");
  EXPECT_EQ(FormatDuration(3 * 86400000 + 3600000), "3d 1h");
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1842), "1,842");
  EXPECT_EQ(FormatCount(-1234567), "-1,234,567");
}

// A job submitted with the seed tool's six size flags (plan name "custom").
core::Report SeedStyleReport() {
  core::Report r = testing::BothModesReport();
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
  for (const auto& [k, v] : ContextFields(ReportAnalysis(r)))
    if (k == key) return v;
  return "";
}

TEST(ModelLabelTest, SeedStyleModelsShowTheirSizes) {
  core::Report r = SeedStyleReport();
  EXPECT_EQ(ContextValue(r, "model"),
            "seed-style model: hidden 4096, intermediate 16384, heads 32, 2 layers, "
            "M = 31 x 512 = 15872 tokens");
  EXPECT_EQ(BuildChart(ReportAnalysis(r), ChartKind::kLayer).subtitle,
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
  EXPECT_EQ(ContextValue(testing::FailedItemReport(), "model"), "shape list, 2 GEMMs");
}

}  // namespace
}  // namespace gemmprof::client::render

namespace gemmprof::client::render {
namespace {

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
