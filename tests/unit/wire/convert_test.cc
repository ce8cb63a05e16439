#include "wire/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "core/presets.h"

namespace gemmprof::wire {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ConvertTest, ModelConfigRoundTripsEveryField) {
  auto preset = core::FindPreset("deepseek-v3");
  ASSERT_TRUE(preset.ok()) << preset.status();
  core::ModelConfig m = *preset;
  m.sweep_m = {1, 16, 4096};
  m.tensor_parallel = 8;
  m.sequence_parallel = true;
  m.moe_skew = 1.5;
  const core::ModelConfig back = FromProto(ToProto(m));
  EXPECT_EQ(back.kv_lora_rank, m.kv_lora_rank);
  EXPECT_GT(back.kv_lora_rank, 0);
  EXPECT_EQ(back.q_lora_rank, m.q_lora_rank);
  EXPECT_EQ(back.qk_nope_head_dim, m.qk_nope_head_dim);
  EXPECT_EQ(back.qk_rope_head_dim, m.qk_rope_head_dim);
  EXPECT_EQ(back.v_head_dim, m.v_head_dim);
  EXPECT_EQ(back.sweep_m, m.sweep_m);
  EXPECT_EQ(back.num_experts, m.num_experts);
  EXPECT_EQ(back.first_dense_layers, m.first_dense_layers);
  EXPECT_EQ(back.tensor_parallel, 8);
  EXPECT_TRUE(back.sequence_parallel);
  EXPECT_DOUBLE_EQ(back.moe_skew, 1.5);
  EXPECT_EQ(back.name, m.name);
}

TEST(ConvertTest, ModelConfigCarriesRoutingSeedAndLayout) {
  core::ModelConfig m;
  m.moe_routing = "zipf:1.2";
  m.moe_seed = 42;
  m.moe_layout = "masked";
  core::ModelConfig back = FromProto(ToProto(m));
  EXPECT_EQ(back.moe_routing, "zipf:1.2");
  EXPECT_EQ(back.moe_seed, 42);
  EXPECT_EQ(back.moe_layout, "masked");
  // Unset on the wire: the defaults (proto3 cannot tell a seed of 0 from unset).
  back = FromProto(v1::ModelConfig());
  EXPECT_EQ(back.moe_routing, "");
  EXPECT_EQ(back.moe_seed, 1);
  EXPECT_EQ(back.moe_layout, "");
  // The text travels as given; the server's validation names a bad value.
  v1::ModelConfig odd;
  odd.set_moe_routing("random");
  odd.set_moe_layout("packed");
  back = FromProto(odd);
  EXPECT_EQ(back.moe_routing, "random");
  EXPECT_EQ(back.moe_layout, "packed");
}

core::GemmOp GroupedOp() {
  core::GemmOp op{"experts_up", core::Pass::kFprop, {8, 7168, 4096}, 3, 58, true};
  op.group_tokens = {3, 0, 5};
  op.layout = core::MoeLayout::kMasked;
  return op;
}

TEST(ConvertTest, GroupedOpRoundTripsItsTokensAndLayout) {
  const core::GemmOp op = GroupedOp();
  const v1::GemmOp wire = ToProto(op);
  EXPECT_EQ(wire.layout(), "masked");
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, op);
  core::Plan plan;
  plan.ops = {op, core::GemmOp{"qkv", core::Pass::kWgrad, {4096, 16, 12288}, 1, 61, true}};
  auto plan_back = FromProto(ToProto(plan, {}, {}, 0));
  ASSERT_TRUE(plan_back.ok()) << plan_back.status();
  EXPECT_EQ(plan_back->ops, plan.ops);
  // An op from before layouts: contiguous, every group at the whole shape.
  v1::GemmOp old = wire;
  old.clear_layout();
  old.clear_group_tokens();
  back = FromProto(old);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->layout, core::MoeLayout::kContiguous);
  EXPECT_TRUE(back->group_tokens.empty());
}

TEST(ConvertTest, BadGroupedOpIsInvalidArgumentNamingTheField) {
  v1::GemmOp wire = ToProto(GroupedOp());
  wire.set_layout("packed");
  EXPECT_EQ(
      FromProto(wire).status(),
      absl::InvalidArgumentError("op.layout: unknown value 'packed' (valid: contiguous, masked)"));
  wire = ToProto(GroupedOp());
  wire.add_group_tokens(1);
  EXPECT_EQ(FromProto(wire).status(),
            absl::InvalidArgumentError(
                "op.group_tokens: 4 counts for 3 groups (one per group, or none)"));
  wire = ToProto(GroupedOp());
  wire.set_group_tokens(1, -1);
  EXPECT_EQ(FromProto(wire).status(),
            absl::InvalidArgumentError(
                "op.group_tokens[1]: -1 is outside 0..8 (the shape's token dimension)"));
  wire.set_group_tokens(1, 9);
  EXPECT_EQ(FromProto(wire).status().code(), absl::StatusCode::kInvalidArgument);
  wire.set_group_tokens(1, 8);
  EXPECT_TRUE(FromProto(wire).ok()) << "the capacity itself is a valid count";
  // The item around it fails the same way.
  v1::Item item;
  *item.mutable_op() = ToProto(GroupedOp());
  item.mutable_op()->set_layout("packed");
  item.set_recipe("bf16");
  item.set_mode("autocast");
  item.set_status("queued");
  EXPECT_THAT(std::string(FromProto(item).status().message()),
              StartsWith("op.layout: unknown value"));
}

// An item's own fast accumulation travels only when set; a stranger value is refused.
TEST(ConvertTest, ItemCarriesItsOwnFastAccumulation) {
  core::ItemRecord rec;
  rec.item.op.name = "qkv";
  rec.item.op.shape = {16, 32, 48};
  rec.item.recipe = core::Recipe::kFp8Current;
  rec.item.mode = core::Mode::kPrequant;
  v1::Item wire = ToProto(rec);
  EXPECT_EQ(wire.fast_accum(), "");
  absl::StatusOr<core::ItemRecord> back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->item.fast_accum, core::FastAccum::kDefault);
  rec.item.fast_accum = core::FastAccum::kOff;
  wire = ToProto(rec);
  EXPECT_EQ(wire.fast_accum(), "off");
  back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->item.fast_accum, core::FastAccum::kOff);
  wire.set_fast_accum("sometimes");
  EXPECT_EQ(FromProto(wire).status(),
            absl::InvalidArgumentError(
                "item.fast_accum: unknown value 'sometimes' (valid: default, on, off)"));
}

TEST(ConvertTest, JobSpecAndTimingRoundTrip) {
  core::JobSpec spec;
  spec.shapes = {{1, 2, 3}, {4, 5, 6}};
  spec.recipes = {core::Recipe::kFp8Block, core::Recipe::kNvfp4};
  spec.modes = {core::Mode::kPrequant};
  spec.timing.warmup_iters = 0;
  spec.timing.timed_iters = 7;
  spec.timing.l2 = core::L2Policy::kCold;
  spec.timing.autotune_k = 8;
  spec.timing.accounting = core::Accounting::kPerGemm;
  spec.timing.fast_accum = core::FastAccum::kOff;
  spec.timing.amax_algo = core::AmaxAlgo::kMostRecent;
  spec.timing.gpu_warmup_s = 0;
  spec.timing.precision_target = 0.005;
  spec.timing.item_budget_s = 7.5;
  spec.timing.b2b_count = 32;
  spec.timing.context = core::MeasureContext::kIsolated;
  spec.timing.energy = true;
  spec.force = true;
  spec.label = "x";
  spec.retries = 0;
  auto back = FromProto(ToProto(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shapes, spec.shapes);
  EXPECT_EQ(back->recipes, spec.recipes);
  EXPECT_EQ(back->modes, spec.modes);
  EXPECT_EQ(back->timing, spec.timing);
  EXPECT_TRUE(back->force);
  EXPECT_EQ(back->label, "x");
  EXPECT_EQ(back->retries, 0) << "0 (no retry) is kept, not taken for unset";
  v1::SubmitJobRequest unset = ToProto(spec);
  unset.clear_retries();
  EXPECT_EQ(FromProto(unset)->retries, 1) << "unset: the default";
}

TEST(ConvertTest, JobKeepsItsSubmitter) {
  core::JobRecord job;
  job.id = 3;
  job.spec.shapes = {{8, 8, 8}};
  job.submitted_by = "alice";
  v1::Job wire = ToProto(job);
  EXPECT_EQ(wire.submitted_by(), "alice");
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->submitted_by, "alice");
  job.submitted_by.clear();
  back = FromProto(ToProto(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->submitted_by, "");
}

TEST(ConvertTest, UnknownNamesAreInvalidArgumentListingTheValidOnes) {
  v1::SubmitJobRequest req;
  req.mutable_shapes()->add_shapes();
  req.add_recipes("fp6");
  auto r = FromProto(req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("recipes[0]: unknown value 'fp6'"), std::string::npos);
  EXPECT_NE(r.status().message().find("nvfp4"), std::string::npos);

  // A recipe with a recipe per pass: a malformed part is named with the field.
  v1::SubmitJobRequest per_role;
  per_role.mutable_shapes()->add_shapes();
  per_role.add_recipes("bf16");
  per_role.add_recipes("fp8-rowwise+wgard:bf16");
  r = FromProto(per_role);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("recipes[1]: \"+wgard:bf16\" in \"fp8-rowwise+wgard:bf16\": "
                                      "unknown role \"wgard\""),
            std::string::npos)
      << r.status();
  per_role.set_recipes(1, "fp8-current+fast-accum:fprop/bogus");
  r = FromProto(per_role);
  EXPECT_NE(r.status().message().find("recipes[1]: \"+fast-accum:fprop/bogus\" in "
                                      "\"fp8-current+fast-accum:fprop/bogus\": unknown pass "
                                      "\"bogus\""),
            std::string::npos)
      << r.status();
  per_role.set_recipes(1, "fp8-current+fast-accum:dgrad");
  r = FromProto(per_role);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->variants.size(), 1u);
  EXPECT_EQ(r->variants[0].Name(), "fp8-current+fast-accum:dgrad");
  per_role.set_recipes(1, "fp8-rowwise+wgrad:bf16");
  r = FromProto(per_role);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->recipes, std::vector<core::Recipe>{core::Recipe::kBf16});
  ASSERT_EQ(r->variants.size(), 1u);
  EXPECT_EQ(r->variants[0].Name(), "fp8-rowwise+wgrad:bf16");
  // And back: whole recipes, then the variants, by name.
  const v1::SubmitJobRequest again = ToProto(*r);
  ASSERT_EQ(again.recipes_size(), 2);
  EXPECT_EQ(again.recipes(1), "fp8-rowwise+wgrad:bf16");

  v1::TimingOptions t;
  t.set_accounting("per-step");
  EXPECT_EQ(FromProto(t).status().code(), absl::StatusCode::kInvalidArgument);
  t.set_accounting("");
  t.set_amax_algo("mean");
  EXPECT_EQ(FromProto(t).status().code(), absl::StatusCode::kInvalidArgument);
  t.set_amax_algo("");
  t.set_context("mixed");
  EXPECT_EQ(FromProto(t).status().message(),
            "timing.context: unknown value 'mixed' (valid: workload, isolated)");
  t.set_context("");
  EXPECT_EQ(FromProto(t)->context, core::MeasureContext::kWorkload) << "empty: the default";
  t.set_l2("flushed");
  EXPECT_EQ(FromProto(t).status().message(),
            "timing.l2: unknown value 'flushed' (valid: hot, cold, clean)");
  t.set_l2("clean");
  EXPECT_EQ(FromProto(t)->l2, core::L2Policy::kClean);
  EXPECT_EQ(ToProto(*FromProto(t)).l2(), "clean");
  EXPECT_EQ(FromProto(v1::SubmitJobRequest()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertTest, UnsetTimingTakesTheDefaults) {
  auto t = FromProto(v1::TimingOptions());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, core::TimingOptions());
  v1::TimingOptions zero;
  zero.set_warmup_iters(0);
  zero.set_gpu_warmup_s(0);
  auto z = FromProto(zero);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->warmup_iters, 0);
  EXPECT_EQ(z->gpu_warmup_s, 0);
}

TEST(ConvertTest, UnsetNoiseAwareOptionsTakeTheDefaults) {
  v1::TimingOptions p;
  p.set_timed_iters(0);
  auto t = FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->timed_iters, core::TimingOptions().timed_iters) << "0 asks for the default";
  EXPECT_EQ(t->precision_target, core::TimingOptions().precision_target);
  EXPECT_EQ(t->item_budget_s, core::TimingOptions().item_budget_s);
  EXPECT_EQ(t->b2b_count, 0);
  p.set_timed_iters(12);
  p.set_precision_target(0.02);
  p.set_item_budget_s(0.5);
  p.set_b2b_count(4);
  t = FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->timed_iters, 12);
  EXPECT_EQ(t->precision_target, 0.02);
  EXPECT_EQ(t->item_budget_s, 0.5);
  EXPECT_EQ(t->b2b_count, 4);
}

TEST(ConvertTest, BadNoiseAwareOptionsAreInvalidArgumentNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -0.01, nan, inf}) {
    v1::TimingOptions p;
    p.set_precision_target(bad);
    const absl::Status s = FromProto(p).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), StartsWith("timing.precision_target: ")) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("a finite value > 0")) << bad;
  }
  for (double bad : {0.0, -1.0, nan, -inf}) {
    v1::TimingOptions p;
    p.set_item_budget_s(bad);
    const absl::Status s = FromProto(p).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), StartsWith("timing.item_budget_s: ")) << bad;
  }
  v1::TimingOptions p;
  p.set_b2b_count(-1);
  EXPECT_EQ(FromProto(p).status().message(),
            "timing.b2b_count: -1 is negative (0 = chosen per group)");
  v1::SubmitJobRequest req;
  req.mutable_shapes()->add_shapes();
  req.mutable_timing()->set_item_budget_s(-2);
  EXPECT_EQ(FromProto(req).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConvertTest, DevicesRoundTripWithTheirAvailability) {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H200";
  d.sm = 90;
  d.recipes = {{core::Recipe::kMxfp8, false, "mxfp8 needs sm_100+, this is sm_90"}};
  d.unavailable = true;
  d.unavailable_reason = "its worker failed to start 3 times in a row";
  auto back = FromProto(ToProto(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, d.name);
  EXPECT_TRUE(back->unavailable);
  EXPECT_EQ(back->unavailable_reason, d.unavailable_reason);
  ASSERT_EQ(back->recipes.size(), 1u);
  EXPECT_EQ(back->recipes[0].reason, d.recipes[0].reason);
  auto unset = FromProto(v1::Device());
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->unavailable) << "a device from an older daemon is available";
}

}  // namespace
}  // namespace gemmprof::wire
