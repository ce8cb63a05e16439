// The one JSON mapping of core's records, in both forms: what the forms share and the
// differences record_json.h names.
#include "report/record_json.h"

#include <gtest/gtest.h>

#include <limits>

#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report {
namespace {

// The keys of `object` in order.
std::vector<std::string> Keys(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

TEST(RecordJsonTest, NonFiniteNumbersAreStringsInTheStoreNullInDocuments) {
  core::TimingOptions t;
  t.gpu_warmup_s = std::numeric_limits<double>::quiet_NaN();
  t.precision_target = std::numeric_limits<double>::infinity();
  t.item_budget_s = -std::numeric_limits<double>::infinity();
  const Json stored = TimingJson(t, JsonForm::kStore);
  EXPECT_EQ(stored["gpu_warmup_s"], "nan");
  EXPECT_EQ(stored["precision_target"], "inf");
  EXPECT_EQ(stored["item_budget_s"], "-inf");
  const std::string doc = TimingJson(t, JsonForm::kDocument).dump();
  EXPECT_NE(doc.find("\"gpu_warmup_s\":null"), std::string::npos) << doc;
}

TEST(RecordJsonTest, TimingKeysOfEachForm) {
  core::TimingOptions t;
  t.timing_backend = core::TimingBackend::kKernels;
  const std::vector<std::string> doc = {
      "warmup_iters",     "timed_iters", "gpu_warmup_s",     "l2_policy",
      "accounting",       "seed",        "fast_accum",       "autotune_k",
      "amax_history_len", "amax_algo",   "precision_target", "item_budget_s",
      "b2b_count",        "context",     "energy",           "w4_group"};
  EXPECT_EQ(Keys(TimingJson(t, JsonForm::kDocument)), doc);
  const Json stored = TimingJson(t, JsonForm::kStore);
  EXPECT_FALSE(stored.contains("l2_policy"));
  EXPECT_EQ(stored["l2"], "hot");
  EXPECT_EQ(stored["timing_backend"], "kernels");
  EXPECT_EQ(stored["context"], "workload");
  EXPECT_EQ(stored["energy"], false);
}

TEST(RecordJsonTest, StoredMeasurementKeepsEveryFieldAndKernelFiguresOnlyWhereMeasured) {
  core::Measurement m;
  m.time.count = 7;
  m.telemetry.sm_clock_mhz_mean = 1500;
  Json stored = StoredMeasurementJson(m);
  EXPECT_EQ(stored["time"]["count"], 7);
  EXPECT_EQ(stored["telemetry"]["sm_clock_mhz_mean"], 1500.0);
  // An absent estimate is still written, so it reads back.
  EXPECT_EQ(stored["isolated"]["rounds"], 0);
  EXPECT_FALSE(stored["isolated"].contains("rel_half_width"));
  EXPECT_FALSE(stored.contains("kernel"));
  EXPECT_FALSE(stored.contains("profiled"));
  m.kernel_samples = 3;
  m.kernel.count = 3;
  m.profiled = true;
  stored = StoredMeasurementJson(m);
  EXPECT_EQ(stored["kernel"]["count"], 3);
  EXPECT_EQ(stored["kernel_samples"], 3);
  EXPECT_EQ(stored["profiled"], true);
}

TEST(RecordJsonTest, DocumentItemIsFlatWithDerivedFigures) {
  const core::Report report = testing::HopperReport();
  const core::ItemRecord* done = nullptr;
  for (const auto& item : report.items)
    if (item.result && !done) done = &item;
  ASSERT_NE(done, nullptr);
  const Json item = ItemJson(*done, report.job.device);
  EXPECT_EQ(Keys(Pick(item, {"seq", "op", "result"})),
            (std::vector<std::string>{"seq", "op", "result"}));
  const Json& result = item["result"];
  EXPECT_EQ(result["samples"], done->result->time.count);
  EXPECT_FALSE(result.contains("time"));
  EXPECT_GT(result["tflops"].get<double>(), 0);
  EXPECT_TRUE(result["isolated"].is_null());  // stored before rounds
  EXPECT_TRUE(result["kernel"].is_null());
  EXPECT_EQ(result["profiled"], false);
  EXPECT_FALSE(result["telemetry"].contains("sm_clock_mhz_mean"));
  core::ItemRecord queued = *done;
  queued.result.reset();
  EXPECT_TRUE(ItemJson(queued, report.job.device)["result"].is_null());
}

// Routed experts: group_tokens only where set and layout only for grouped ops, after
// groups; a dense item's keys are as they always were.
TEST(RecordJsonTest, WorkItemNamesRoutedTokensAndLayoutWhereTheyApply) {
  core::WorkItem item;
  item.op = {"experts_up", core::Pass::kFprop, {8, 7168, 4096}, 3, 58, true};
  const std::vector<std::string> dense_keys = {
      "seq", "id", "op", "pass", "m", "k", "n", "groups", "layers", "per_layer", "recipe", "mode"};
  std::vector<std::string> grouped_keys = dense_keys;
  grouped_keys.insert(grouped_keys.begin() + 8, "layout");
  EXPECT_EQ(Keys(WorkItemJson(item)), grouped_keys);
  EXPECT_EQ(WorkItemJson(item)["layout"], "contiguous");
  item.op.group_tokens = {3, 0, 5};
  item.op.layout = core::MoeLayout::kMasked;
  const Json routed = WorkItemJson(item);
  EXPECT_EQ(routed["group_tokens"], Json::array({3, 0, 5}));
  EXPECT_EQ(routed["layout"], "masked");
  EXPECT_EQ(Keys(routed)[8], "group_tokens");
  core::WorkItem dense;
  dense.op.layout = core::MoeLayout::kMasked;  // no layout without groups
  EXPECT_EQ(Keys(WorkItemJson(dense)), dense_keys);
  core::Plan plan;
  plan.ops = {item.op, dense.op};
  const Json ops = PlanJson(plan)["ops"];
  EXPECT_EQ(ops[0]["group_tokens"], Json::array({3, 0, 5}));
  EXPECT_EQ(ops[0]["layout"], "masked");
  EXPECT_FALSE(ops[1].contains("group_tokens"));
  EXPECT_FALSE(ops[1].contains("layout"));
}

TEST(RecordJsonTest, PickKeepsTheGivenOrderAndLeavesOutAbsentKeys) {
  const Json device = DeviceJson(testing::HopperReport().job.device);
  EXPECT_EQ(Keys(Pick(device, {"uuid", "no_such_key", "name"})),
            (std::vector<std::string>{"uuid", "name"}));
  EXPECT_EQ(Keys(device).front(), "backend");
  EXPECT_EQ(Keys(device).back(), "recipes");
}

}  // namespace
}  // namespace gemmprof::report
