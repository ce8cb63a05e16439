#include "device/worker/protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error_detail.h"

namespace gemmprof::worker {
namespace {

TEST(ProtocolTest, StatusesKeepCodeMessageSourceAndContextLoss) {
  EXPECT_TRUE(FromProto(ToProto(absl::OkStatus())).ok());
  const absl::Status lost = core::MarkContextLost(core::WithSource(
      absl::InternalError("CUDA error 700 (cudaErrorIllegalAddress: an illegal memory access)"),
      "kernels/runner/cuda_runner.cc:9: cudaStreamSynchronize(s)"));
  const absl::Status back = FromProto(ToProto(lost));
  EXPECT_EQ(back.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(back.message(), lost.message());
  EXPECT_EQ(core::SourceOf(back), "kernels/runner/cuda_runner.cc:9: cudaStreamSynchronize(s)");
  EXPECT_TRUE(core::IsContextLost(back));
  const absl::Status plain = FromProto(ToProto(absl::FailedPreconditionError("no")));
  EXPECT_EQ(plain.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(core::SourceOf(plain), "");
  EXPECT_FALSE(core::IsContextLost(plain));
}

TEST(ProtocolTest, ItemsAndTimingRoundTrip) {
  core::WorkItem item;
  item.id = 41;
  item.job_id = 7;
  item.seq = 12;
  item.op.name = "mlp_up";
  item.op.pass = core::Pass::kWgrad;
  item.op.shape = {4096, 16384, 11008};
  item.op.groups = 8;
  item.op.layers = 32;
  item.recipe = core::Recipe::kFp8Block;
  item.mode = core::Mode::kPrequant;
  core::TimingOptions timing;
  timing.warmup_iters = 0;
  timing.timed_iters = 7;
  timing.l2 = core::L2Policy::kCold;
  timing.autotune_k = 4;
  timing.seed = 99;
  timing.gpu_warmup_s = 0;
  core::WorkItem other;
  other.id = 43;
  other.seq = 3;
  other.recipe = core::Recipe::kBf16;
  std::vector<core::WorkItem> items_back;
  core::TimingOptions timing_back;
  ASSERT_TRUE(FromFitCall(ToFitCall({item, other}, timing), &items_back, &timing_back).ok());
  ASSERT_EQ(items_back.size(), 2u);
  EXPECT_EQ(items_back[1].id, 43);
  EXPECT_EQ(items_back[1].recipe, core::Recipe::kBf16);
  const core::WorkItem& item_back = items_back[0];
  EXPECT_EQ(item_back.id, item.id);
  EXPECT_EQ(item_back.job_id, item.job_id);
  EXPECT_EQ(item_back.seq, item.seq);
  EXPECT_EQ(item_back.op, item.op);
  EXPECT_EQ(item_back.recipe, item.recipe);
  EXPECT_EQ(item_back.mode, item.mode);
  EXPECT_EQ(timing_back, timing);
}

TEST(ProtocolTest, BadItemsAreRefusedNamingTheItem) {
  wp::FitCall call = ToFitCall({core::WorkItem{}, core::WorkItem{}}, core::TimingOptions{});
  call.mutable_items(1)->set_recipe("fp16");
  std::vector<core::WorkItem> items;
  core::TimingOptions timing;
  const absl::Status s = FromFitCall(call, &items, &timing);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("items[1]: "), std::string::npos) << s;
}

core::GroupRequest Group() {
  core::GroupRequest request;
  request.group_uid = "GPU-1/j7/s12/1700000000000";
  for (int i = 0; i < 3; ++i) {
    core::WorkItem& item = request.items.emplace_back();
    item.id = 40 + i;
    item.job_id = 7;
    item.seq = 12 + i;
    item.op.name = "mlp_up";
    item.op.shape = {4096, 16384, 11008};
    item.recipe = i == 0 ? core::Recipe::kBf16 : core::Recipe::kFp8Block;
    item.mode = i == 2 ? core::Mode::kPrequant : core::Mode::kAutocast;
  }
  request.timing.timed_iters = 30;
  request.timing.precision_target = 0.02;
  request.timing.item_budget_s = 4;
  request.timing.b2b_count = 8;
  request.share_identical_work = false;
  request.deadline_unix_ms = 1700000123456;
  request.profile = true;
  return request;
}

core::GroupResult Answered(const core::GroupRequest& request) {
  core::GroupResult result;
  for (const core::WorkItem& item : request.items) {
    core::ItemOutcome& o = result.outcomes.emplace_back();
    o.item_id = item.id;
    o.measurement.emplace();
    o.measurement->isolated = {0.5, 0.49, 0.51, 30, 24};
    o.measurement->round_ms = {0.5, 0.49, 0.51};
    o.measurement->group_uid = request.group_uid;
  }
  result.outcomes[1].status = absl::FailedPreconditionError("fp8-block needs a k multiple of 128");
  result.outcomes[1].measurement.reset();
  result.rounds = 30;
  result.stop_reason = "fixed 30 rounds";
  return result;
}

TEST(ProtocolTest, GroupCallsRoundTrip) {
  const core::GroupRequest request = Group();
  absl::StatusOr<core::GroupRequest> back = FromGroupCall(ToGroupCall(request));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->group_uid, request.group_uid);
  ASSERT_EQ(back->items.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->items[i].id, request.items[i].id);
    EXPECT_EQ(back->items[i].job_id, 7);
    EXPECT_EQ(back->items[i].seq, request.items[i].seq);
    EXPECT_EQ(back->items[i].op, request.items[i].op);
    EXPECT_EQ(back->items[i].recipe, request.items[i].recipe);
    EXPECT_EQ(back->items[i].mode, request.items[i].mode);
  }
  EXPECT_EQ(back->timing, request.timing);
  EXPECT_FALSE(back->share_identical_work);
  EXPECT_EQ(back->deadline_unix_ms, request.deadline_unix_ms);
  EXPECT_TRUE(back->profile);
}

TEST(ProtocolTest, ABadGroupItemIsNamedByItsIndex) {
  wp::GroupCall call = ToGroupCall(Group());
  call.mutable_items(2)->set_mode("eager");
  const absl::Status s = FromGroupCall(call).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("items[2]: item.mode: unknown value 'eager'"));
  call = ToGroupCall(Group());
  call.mutable_timing()->set_item_budget_s(-1);
  EXPECT_THAT(std::string(FromGroupCall(call).status().message()),
              ::testing::StartsWith("timing.item_budget_s: -1"));
}

TEST(ProtocolTest, GroupResultsRoundTripWithPerItemStatuses) {
  const core::GroupRequest request = Group();
  const core::GroupResult result = Answered(request);
  absl::StatusOr<core::GroupResult> back = FromGroupResult(ToProto(result), request);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->outcomes.size(), 3u);
  EXPECT_EQ(back->rounds, 30);
  EXPECT_EQ(back->stop_reason, "fixed 30 rounds");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back->outcomes[i].item_id, request.items[i].id);
  ASSERT_TRUE(back->outcomes[0].measurement.has_value());
  EXPECT_EQ(back->outcomes[0].measurement->isolated, result.outcomes[0].measurement->isolated);
  EXPECT_EQ(back->outcomes[0].measurement->round_ms, result.outcomes[0].measurement->round_ms);
  EXPECT_EQ(back->outcomes[0].measurement->group_uid, request.group_uid);
  EXPECT_EQ(back->outcomes[1].status, result.outcomes[1].status);
  EXPECT_FALSE(back->outcomes[1].measurement.has_value());
  EXPECT_TRUE(back->outcomes[2].status.ok());
  EXPECT_TRUE(back->outcomes[2].measurement.has_value());
}

TEST(ProtocolTest, AFailedOutcomeNeverCarriesAMeasurement) {
  const core::GroupRequest request = Group();
  core::GroupResult result = Answered(request);
  result.outcomes[1].measurement.emplace();
  EXPECT_FALSE(ToProto(result).outcomes(1).has_measurement());
}

TEST(ProtocolTest, MalformedGroupResultsAreInternalErrorsNamingTheMismatch) {
  const core::GroupRequest request = Group();
  const std::string group = "the worker's answer to group 'GPU-1/j7/s12/1700000000000'";
  wp::GroupResult fewer = ToProto(Answered(request));
  fewer.mutable_outcomes()->RemoveLast();
  absl::Status s = FromGroupResult(fewer, request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), group + " has 2 outcomes for 3 items");

  wp::GroupResult more = ToProto(Answered(request));
  *more.add_outcomes() = more.outcomes(0);
  EXPECT_EQ(FromGroupResult(more, request).status().message(),
            group + " has 4 outcomes for 3 items");

  wp::GroupResult swapped = ToProto(Answered(request));
  swapped.mutable_outcomes()->SwapElements(0, 2);
  s = FromGroupResult(swapped, request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), group + ": outcome 0 is for item 42, expected item 40");

  wp::GroupResult missing = ToProto(Answered(request));
  missing.mutable_outcomes(2)->clear_measurement();
  s = FromGroupResult(missing, request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), group + ": item 42 succeeded without a measurement");

  wp::GroupResult bad = ToProto(Answered(request));
  bad.mutable_outcomes(0)->mutable_measurement()->add_round_ms(-1);
  s = FromGroupResult(bad, request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("item 40's measurement is malformed: measurement.round_ms[3]"));
}

TEST(ProtocolTest, AContextLostOutcomeKeepsItsMark) {
  const core::GroupRequest request = Group();
  core::GroupResult result = Answered(request);
  result.outcomes[2].status = core::MarkContextLost(absl::InternalError("sticky"));
  result.outcomes[2].measurement.reset();
  absl::StatusOr<core::GroupResult> back = FromGroupResult(ToProto(result), request);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(core::IsContextLost(back->outcomes[2].status));
}

}  // namespace
}  // namespace gemmprof::worker
