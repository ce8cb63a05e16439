// Watch events, job and result filters and stored result rows, both ways, and what a bad
// value in a request or a reply becomes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "wire/convert.h"
#include "wire/round_trip.h"

namespace gemmprof::wire {
namespace {

using ::testing::HasSubstr;

core::ItemRecord DoneItem() {
  core::ItemRecord item;
  item.item.id = 11;
  item.item.job_id = 3;
  item.item.seq = 2;
  item.item.op = {"qkv", core::Pass::kDgrad, {8, 16, 32}, 1, 4, true};
  item.item.recipe = core::Recipe::kFp8Block;
  item.item.mode = core::Mode::kPrequant;
  item.status = core::ItemStatus::kDone;
  item.result = core::Measurement{};
  item.result->time.median_ms = 1.25;
  item.measured_node = "node-a";
  return item;
}

TEST(JobEventConvertTest, EveryKindRoundTripsWithItsJobAndItem) {
  using Kind = core::JobEvent::Kind;
  for (Kind kind : {Kind::kSnapshot, Kind::kItemStarted, Kind::kItemFinished, Kind::kItemFailed,
                    Kind::kJobFinished}) {
    core::JobEvent e;
    e.kind = kind;
    e.job.id = 3;
    e.job.state = core::JobState::kRunning;
    e.job.finished_items = 4;
    if (kind != Kind::kSnapshot && kind != Kind::kJobFinished) e.item = DoneItem();
    auto back = FromProto(ToProto(e));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->kind, kind);
    EXPECT_EQ(back->job.id, 3);
    EXPECT_EQ(back->job.finished_items, 4);
    ASSERT_EQ(back->item.has_value(), e.item.has_value());
    if (back->item) {
      EXPECT_EQ(back->item->item.op, e.item->item.op);
      EXPECT_DOUBLE_EQ(back->item->result->time.median_ms, 1.25);
    }
  }
}

TEST(JobEventConvertTest, UnknownKindIsASnapshotAndBadJobsOrItemsAreRefused) {
  v1::JobEvent p = ToProto(core::JobEvent{});
  p.set_kind(static_cast<v1::JobEvent::Kind>(99));
  auto unknown = FromProto(p);
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ(unknown->kind, core::JobEvent::Kind::kSnapshot);

  v1::JobEvent bad_job = ToProto(core::JobEvent{});
  bad_job.mutable_job()->set_state("exploded");
  auto refused = FromProto(bad_job);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("job.state: unknown value 'exploded'"));

  core::JobEvent with_item;
  with_item.kind = core::JobEvent::Kind::kItemFinished;
  with_item.item = DoneItem();
  v1::JobEvent bad_item = ToProto(with_item);
  bad_item.mutable_item()->set_recipe("fp3");
  EXPECT_THAT(FromProto(bad_item).status().message(), HasSubstr("item.recipe: unknown value"));
}

TEST(JobFilterConvertTest, RoundTripsAndEmptyFieldsMatchEverything) {
  core::JobFilter f;
  f.state = core::JobState::kPartial;
  f.node = "gpu-node-2";
  f.campaign = "h100-vs-h200";
  f.page_size = 7;
  f.page_token = "t";
  auto back = FromProto(ToProto(f));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->state, core::JobState::kPartial);
  EXPECT_EQ(back->node, "gpu-node-2");
  EXPECT_EQ(back->campaign, "h100-vs-h200");
  EXPECT_EQ(back->page_size, 7);
  EXPECT_EQ(back->page_token, "t");
  auto any = FromProto(v1::ListJobsRequest());
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->state.has_value());
  EXPECT_FALSE(any->node.has_value());
  EXPECT_FALSE(any->campaign.has_value());
  EXPECT_EQ(any->page_size, 50);  // 0: the default
}

TEST(JobFilterConvertTest, OverLongCampaignIsRefusedNamingTheLimit) {
  v1::ListJobsRequest p;
  p.set_campaign(std::string(65, 'c'));
  auto f = FromProto(p);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status().message(),
              HasSubstr("campaign: 65 characters, more than the limit of 64"));
  p.set_campaign(std::string(64, 'c'));
  EXPECT_TRUE(FromProto(p).ok());
}

TEST(JobFilterConvertTest, UnknownStateIsRefusedNamingTheValidOnes) {
  v1::ListJobsRequest p;
  p.set_state("done");
  auto f = FromProto(p);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status().message(),
              HasSubstr("state: unknown value 'done' (valid: queued, running, succeeded"));
}

TEST(ResultFilterConvertTest, EveryFieldRoundTrips) {
  core::ResultFilter f;
  f.device_name = "NVIDIA H100 80GB HBM3";
  f.recipe = core::Recipe::kMxfp8;
  f.pass = core::Pass::kWgrad;
  f.mode = core::Mode::kAutocast;
  f.m = 1;
  f.k = 2;
  f.n = 3;
  f.since_ms = 4;
  f.until_ms = 5;
  f.job_id = 6;
  f.node = "n";
  f.page_size = 250;
  f.page_token = "p";
  auto back = FromProto(ToProto(f));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device_name, f.device_name);
  EXPECT_EQ(back->recipe, f.recipe);
  EXPECT_EQ(back->pass, f.pass);
  EXPECT_EQ(back->mode, f.mode);
  EXPECT_EQ(back->m, 1);
  EXPECT_EQ(back->k, 2);
  EXPECT_EQ(back->n, 3);
  EXPECT_EQ(back->since_ms, 4);
  EXPECT_EQ(back->until_ms, 5);
  EXPECT_EQ(back->job_id, 6);
  EXPECT_EQ(back->node, "n");
  EXPECT_EQ(back->page_size, 250);
  EXPECT_EQ(back->page_token, "p");
  // Unset fields stay unset: 0 and "" mean any on the wire.
  auto any = FromProto(ToProto(core::ResultFilter{}));
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->device_name || any->recipe || any->m || any->since_ms || any->node);
  EXPECT_EQ(any->page_size, 100);
}

TEST(ResultFilterConvertTest, BadValuesNameTheField) {
  const std::vector<std::pair<std::function<void(v1::QueryResultsRequest&)>, std::string>> bad = {
      {[](auto& p) { p.set_recipe("fp3"); }, "recipe: unknown value 'fp3'"},
      {[](auto& p) { p.set_pass("backward"); }, "pass: unknown value 'backward'"},
      {[](auto& p) { p.set_mode("eager"); }, "mode: unknown value 'eager'"},
      {[](auto& p) { p.set_m(-1); }, "m: -1 is negative (0 means any)"},
      {[](auto& p) { p.set_n(-3); }, "n: -3 is negative"},
      {[](auto& p) { p.set_since_ms(-4); }, "since_ms: -4 is negative"},
      {[](auto& p) { p.set_until_ms(-5); }, "until_ms: -5 is negative"},
      {[](auto& p) { p.set_job_id(-6); }, "job_id: -6 is negative"},
      {[](auto& p) { p.set_page_size(-1); }, "page_size: -1 is negative (0 means the default"},
  };
  for (const auto& [mutate, message] : bad) {
    v1::QueryResultsRequest p;
    mutate(p);
    auto f = FromProto(p);
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(f.status().message(), HasSubstr(message));
  }
}

core::ResultRow Row() {
  core::ResultRow row;
  row.result_id = 100;
  row.job_id = 3;
  row.item_id = 11;
  row.measured_ms = 1795000061000;
  row.node = "node-a";
  row.device.backend = "cuda";
  row.device.name = "NVIDIA H100 80GB HBM3";
  row.device.uuid = "GPU-1";
  row.item = DoneItem().item;
  row.timing.timed_iters = 9;
  row.measurement = DoneItem().result;
  row.cached = true;
  return row;
}

TEST(ResultRowConvertTest, RoundTripsAsADoneItemOfItsJob) {
  const core::ResultRow row = Row();
  const v1::Result p = ToProto(row);
  EXPECT_EQ(p.item().status(), "done");
  EXPECT_EQ(p.item().measured_node(), "node-a");
  EXPECT_EQ(p.item().device_uuid(), "GPU-1");
  auto back = FromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->result_id, 100);
  EXPECT_EQ(back->job_id, 3);
  EXPECT_EQ(back->item_id, 11);
  EXPECT_EQ(back->measured_ms, row.measured_ms);
  EXPECT_EQ(back->node, "node-a");
  EXPECT_EQ(back->device.name, row.device.name);
  EXPECT_EQ(back->item.op, row.item.op);
  EXPECT_EQ(back->item.recipe, core::Recipe::kFp8Block);
  EXPECT_EQ(back->timing.timed_iters, 9);
  ASSERT_TRUE(back->measurement.has_value());
  EXPECT_DOUBLE_EQ(back->measurement->time.median_ms, 1.25);
  EXPECT_TRUE(back->cached);
}

TEST(ResultRowConvertTest, AReplyWithoutAMeasurementHasNoneAndBadValuesAreRefused) {
  v1::Result p = ToProto(Row());
  p.mutable_item()->clear_result();
  auto bare = FromProto(p);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_FALSE(bare->measurement.has_value());

  v1::Result bad_mode = ToProto(Row());
  bad_mode.mutable_item()->set_mode("eager");
  EXPECT_THAT(FromProto(bad_mode).status().message(), HasSubstr("item.mode: unknown value"));
  v1::Result bad_bytes = ToProto(Row());
  bad_bytes.mutable_item()->mutable_result()->set_quant_bytes(-1);
  EXPECT_THAT(FromProto(bad_bytes).status().message(), HasSubstr("measurement.quant_bytes"));
}

TEST(RoundTripTest, AReportComesBackAsTheClientReceivesIt) {
  core::Report report;
  report.job.id = 5;
  report.job.state = core::JobState::kSucceeded;
  report.items = {DoneItem()};
  auto back = RoundTrip(report);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->job.id, 5);
  ASSERT_EQ(back->items.size(), 1u);
  EXPECT_DOUBLE_EQ(back->items[0].result->time.median_ms, 1.25);
  // What the wire refuses is refused here too.
  report.items[0].result->round_ms = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_EQ(RoundTrip(report).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gemmprof::wire
