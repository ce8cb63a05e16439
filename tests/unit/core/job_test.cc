// TimingOptions::CacheText: the timing part of the result-cache key.
#include "core/job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/cache_key.h"

namespace gemmprof::core {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(CacheTextTest, PinsEveryOptionAndTheMethod) {
  EXPECT_EQ(TimingOptions{}.CacheText(),
            "warmup=10;iters=0;l2=hot;autotune=1;seed=1234;acct=training-step;"
            "fastacc=default;amaxlen=1024;amaxalgo=max;prec=0.01;budget=2;b2b=0;"
            "method=rounds1");
}

TEST(CacheTextTest, EveryNewOptionChangesTheKey) {
  const std::string base = TimingOptions{}.CacheText();
  const std::vector<std::function<void(TimingOptions&)>> edits = {
      [](TimingOptions& t) { t.timed_iters = 100; },
      [](TimingOptions& t) { t.timing_backend = TimingBackend::kKernels; },
      [](TimingOptions& t) { t.precision_target = 0.005; },
      // Values that print alike at six digits must still differ.
      [](TimingOptions& t) { t.precision_target = 0.0100000001; },
      [](TimingOptions& t) { t.item_budget_s = 0.5; },
      [](TimingOptions& t) { t.b2b_count = 10; },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    TimingOptions t;
    edits[i](t);
    EXPECT_NE(t.CacheText(), base) << i;
  }
}

// Results cached before interleaved rounds have keys without the method marker, so an
// old row never answers a request made now, even with every old option equal.
TEST(CacheTextTest, OldKeysNeverMatch) {
  const std::string old_text =
      "warmup=10;iters=100;l2=hot;autotune=1;seed=1234;acct=training-step;"
      "fastacc=default;amaxlen=1024;amaxalgo=max";
  const TimingOptions now;
  EXPECT_NE(now.CacheText(), old_text);
  EXPECT_THAT(now.CacheText(), EndsWith(";method=rounds1"));
  WorkItem item;
  item.op.shape = {64, 64, 64};
  EXPECT_THAT(CacheKey(DeviceInfo{}, item, now, "isolated"), HasSubstr("|" + now.CacheText()));
}

// A result measured before the CUTLASS candidates existed (its key has no engine
// revision, or an older one) is not served: the item may run a faster kernel now.
TEST(CacheKeyTest, NamesTheGemmEngineRevision) {
  WorkItem item;
  item.op.shape = {64, 64, 64};
  const std::string key = CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated");
  EXPECT_THAT(key, HasSubstr("|engine=" + GemmEngine() + "|"));
  EXPECT_THAT(GemmEngine(), ::testing::StartsWith(std::to_string(kGemmEngineRevision)));
  EXPECT_GE(kGemmEngineRevision, 2);
}

// A GEMM measured beside the GEMMs of another workload (another M, or alone) ran in
// another power state: its key names the context, and results stored before contexts
// (no context in the key) are never served.
TEST(CacheKeyTest, NamesTheMeasurementContextAndEnergy) {
  WorkItem item;
  item.op.shape = {16, 4096, 4096};
  const TimingOptions timing;
  const std::string decode = CacheKey(DeviceInfo{}, item, timing, "workload: m=16");
  EXPECT_THAT(decode, EndsWith("|context=workload: m=16"));
  EXPECT_NE(decode, CacheKey(DeviceInfo{}, item, timing, "isolated"));
  EXPECT_NE(decode, CacheKey(DeviceInfo{}, item, timing, "workload: training step"));
  TimingOptions energy;
  energy.energy = true;
  EXPECT_THAT(energy.CacheText(), EndsWith(";energy"));
  EXPECT_NE(decode, CacheKey(DeviceInfo{}, item, energy, "workload: m=16"));
}

// The w4a16 group size is in w4a16 items' keys only: a bf16 result answers jobs of either.
TEST(CacheKeyTest, NamesTheW4GroupOfW4a16ItemsOnly) {
  WorkItem item;
  item.op.shape = {16, 4096, 4096};
  TimingOptions g64;
  g64.w4_group = 64;
  EXPECT_EQ(CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated"),
            CacheKey(DeviceInfo{}, item, g64, "isolated"));
  item.recipe = Recipe::kW4a16;
  const std::string key = CacheKey(DeviceInfo{}, item, g64, "isolated");
  EXPECT_THAT(key, EndsWith("|w4_group=64"));
  EXPECT_NE(key, CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated"));
}

// An item's own fast accumulation is in its key; items without one keep the key they had.
TEST(CacheKeyTest, NamesAnItemsOwnFastAccumulationOnly) {
  WorkItem item;
  item.op.shape = {16, 4096, 4096};
  item.recipe = Recipe::kFp8Current;
  const std::string whole = CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated");
  EXPECT_EQ(whole.find("item_fastacc"), std::string::npos);
  item.fast_accum = FastAccum::kOn;
  const std::string on = CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated");
  EXPECT_THAT(on, EndsWith("|item_fastacc=on"));
  item.fast_accum = FastAccum::kOff;
  const std::string off = CacheKey(DeviceInfo{}, item, TimingOptions{}, "isolated");
  EXPECT_NE(on, whole);
  EXPECT_NE(off, whole);
  EXPECT_NE(on, off);
  EXPECT_EQ(EffectiveFastAccum(item, FastAccum::kOn), FastAccum::kOff);
  item.fast_accum = FastAccum::kDefault;
  EXPECT_EQ(EffectiveFastAccum(item, FastAccum::kOn), FastAccum::kOn);
}

// Routed experts: results of one shape at other per-expert tokens or in the other layout
// never answer each other; dense and uniform ops keep the keys they always had.
TEST(CacheKeyTest, NamesRoutedTokensAndTheMaskedLayout) {
  WorkItem item;
  item.op.shape = {8, 7168, 4096};
  item.op.groups = 3;
  const TimingOptions timing;
  const std::string uniform = CacheKey(DeviceInfo{}, item, timing, "isolated");
  EXPECT_EQ(uniform, "backend=|device=|sm=0|driver=|cublaslt=|engine=" + GemmEngine() +
                         "|shape=8x7168x4096|groups=3|pass=fprop|recipe=bf16|mode=autocast|" +
                         timing.CacheText() + "|context=isolated");
  WorkItem routed = item;
  routed.op.group_tokens = {3, 0, 5};
  const std::string contiguous = CacheKey(DeviceInfo{}, routed, timing, "isolated");
  EXPECT_THAT(contiguous, HasSubstr("|groups=3|group_tokens=3,0,5|pass=fprop|"));
  routed.op.layout = MoeLayout::kMasked;
  const std::string masked = CacheKey(DeviceInfo{}, routed, timing, "isolated");
  EXPECT_THAT(masked, HasSubstr("|group_tokens=3,0,5|layout=masked|"));
  WorkItem other = routed;
  other.op.group_tokens = {5, 0, 3};
  WorkItem uniform_masked = item;
  uniform_masked.op.layout = MoeLayout::kMasked;
  const std::vector<std::string> keys = {
      uniform, contiguous, masked, CacheKey(DeviceInfo{}, other, timing, "isolated"),
      CacheKey(DeviceInfo{}, uniform_masked, timing, "isolated")};
  for (size_t i = 0; i < keys.size(); ++i)
    for (size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << i << " " << j;
  // A dense op's layout is not part of its work.
  WorkItem dense;
  dense.op.shape = {8, 7168, 4096};
  const std::string dense_key = CacheKey(DeviceInfo{}, dense, timing, "isolated");
  dense.op.layout = MoeLayout::kMasked;
  EXPECT_EQ(CacheKey(DeviceInfo{}, dense, timing, "isolated"), dense_key);
}

}  // namespace
TEST(EffectiveModesTest, SweepsDefaultToDynamicOthersToAutocast) {
  JobSpec spec;
  spec.shapes = {{16, 4096, 4096}};
  EXPECT_EQ(EffectiveModes(spec), std::vector<Mode>{Mode::kAutocast});
  spec.shapes.clear();
  spec.model.emplace();
  EXPECT_EQ(EffectiveModes(spec), std::vector<Mode>{Mode::kAutocast});
  spec.model->sweep_m = {1, 16};
  EXPECT_EQ(EffectiveModes(spec), std::vector<Mode>{Mode::kDynamic});
  spec.modes = {Mode::kPrequant};
  EXPECT_EQ(EffectiveModes(spec), std::vector<Mode>{Mode::kPrequant});
}

WorkItem ItemOf(Pass pass, Recipe recipe, Mode mode) {
  WorkItem item;
  item.op.pass = pass;
  item.op.shape = {16, 4096, 4096};
  item.recipe = recipe;
  item.mode = mode;
  return item;
}

TEST(QuantizationNoteTest, SaysWhatTheTimingQuantized) {
  EXPECT_EQ(QuantizationNote(ItemOf(Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast)), "");
  EXPECT_EQ(QuantizationNote(ItemOf(Pass::kFprop, Recipe::kFp8Rowwise, Mode::kPrequant)), "");
  EXPECT_THAT(QuantizationNote(ItemOf(Pass::kFprop, Recipe::kFp8Current, Mode::kDynamic)),
              HasSubstr("the activation X quantized inside the timing; the weight quantized "
                        "once, before it"));
  EXPECT_THAT(QuantizationNote(ItemOf(Pass::kDgrad, Recipe::kFp8Block, Mode::kDynamic)),
              HasSubstr("the gradient dY quantized inside the timing"));
  EXPECT_THAT(QuantizationNote(ItemOf(Pass::kWgrad, Recipe::kNvfp4, Mode::kDynamic)),
              HasSubstr("both operands"));
  // bf16 has nothing to quantize: labelled, not refused.
  EXPECT_THAT(QuantizationNote(ItemOf(Pass::kFprop, Recipe::kBf16, Mode::kDynamic)),
              HasSubstr("bf16 quantizes nothing, so the GEMM alone is timed"));
  EXPECT_THAT(QuantizationNote(ItemOf(Pass::kWgrad, Recipe::kFp8Rowwise, Mode::kPrequant)),
              HasSubstr("fp8-rowwise wgrad: each operand quantized again from BF16"));
}

}  // namespace gemmprof::core
