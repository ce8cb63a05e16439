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
#include "client/render/report_csv.h"
#include "client/render/report_document.h"
#include "client/render/text_table.h"
#include "report/analysis.h"
#include "report/notices.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
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
