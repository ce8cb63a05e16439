#include "server/worker/protocol.h"

#include <gtest/gtest.h>

#include "core/error_detail.h"

namespace gemmprof::worker {
namespace {

TEST(ProtocolTest, StatusesKeepCodeMessageSourceAndContextLoss) {
  EXPECT_TRUE(FromProto(ToProto(absl::OkStatus())).ok());
  const absl::Status lost = core::MarkContextLost(core::WithSource(
      absl::InternalError("CUDA error 700 (cudaErrorIllegalAddress: an illegal memory access)"),
      "kernels/cuda_runner.cc:9: cudaStreamSynchronize(s)"));
  const absl::Status back = FromProto(ToProto(lost));
  EXPECT_EQ(back.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(back.message(), lost.message());
  EXPECT_EQ(core::SourceOf(back), "kernels/cuda_runner.cc:9: cudaStreamSynchronize(s)");
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
  core::WorkItem item_back;
  core::TimingOptions timing_back;
  ASSERT_TRUE(FromItemCall(ToItemCall(item, timing), &item_back, &timing_back).ok());
  EXPECT_EQ(item_back.id, item.id);
  EXPECT_EQ(item_back.job_id, item.job_id);
  EXPECT_EQ(item_back.seq, item.seq);
  EXPECT_EQ(item_back.op, item.op);
  EXPECT_EQ(item_back.recipe, item.recipe);
  EXPECT_EQ(item_back.mode, item.mode);
  EXPECT_EQ(timing_back, timing);
}

TEST(ProtocolTest, BadItemsAreRefused) {
  wp::ItemCall call = ToItemCall(core::WorkItem{}, core::TimingOptions{});
  call.mutable_item()->set_recipe("fp16");
  core::WorkItem item;
  core::TimingOptions timing;
  EXPECT_EQ(FromItemCall(call, &item, &timing).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gemmprof::worker
