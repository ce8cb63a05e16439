// The CLI through the App object, without a server: every flag with bad values fails
// with exit code 2, one `gemmprof: ...` line naming the flag, and no connection
// attempt; good flags reach a fake client with the right JobSpec.
#include "client/app.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app_harness.h"
#include "png_reader.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using testing::AppTest;
using testing::BadCase;
using testing::ExpectUsageError;
using testing::kNowMs;
using testing::kSeed;
using testing::Result;

TEST_F(AppTest, BadWorkloadFlags) {
  const std::vector<BadCase> cases = {
      {Seed({"--hidden_size", "0"}), "--hidden_size"},
      {Seed({"--hidden_size=-1"}), "--hidden_size"},
      {Seed({"--hidden_size", "99999999999999999999"}), "--hidden_size"},
      {Seed({"--hidden_size", "2147483648"}), "--hidden_size"},
      {Seed({"--hidden_size", "4k"}), "--hidden_size"},
      {Seed({"--intermediate_size", "0"}), "--intermediate_size"},
      {Seed({"--num_attention_heads=-3"}), "--num_attention_heads"},
      {Seed({"--num_hidden_layers", "0"}), "--num_hidden_layers"},
      {Seed({"--num_hidden_layers", "10001"}), "--num_hidden_layers"},
      {Seed({"--micro_batch_size", "0"}), "--micro_batch_size"},
      {Seed({"--sequence_length", "abc"}), "--sequence_length"},
      {Seed({"--num_attention_heads", "33"}), "hidden_size"},  // 4096 % 33 != 0
      {{"submit", "--hidden_size", "4096"}, "missing: --intermediate_size"},
      {Seed({"--shapes", "1024"}), "mutually exclusive"},
      {{"submit", "--shapes", "12x"}, "--shapes"},
      {{"submit", "--shapes", "0"}, "--shapes"},
      {{"submit", "--shapes", "-4"}, "--shapes"},
      {{"submit", "--shapes", "axbxc"}, "--shapes"},
      {{"submit", "--shapes", "99999999999"}, "--shapes"},
      {{"submit", "--shapes", ""}, "--shapes"},
      {{"submit"}, "no workload"},
      {Seed({"--recipes", "fp9"}),
       "bf16, fp8-current, fp8-delayed, fp8-block, mxfp8, nvfp4, fp8-rowwise"},
      {Seed({"--recipes", "bf16,bf16"}), "listed twice"},
      {Seed({"--recipes", ","}), "--recipes"},
      {Seed({"--recipes", "mxfp8", "--no-fp8"}), "no recipe left"},
      {Seed({"--mode", "fast"}), "--mode"},
      {Seed({"--mode", "dynamic,dynamic"}), "listed twice"},
      {Seed({"--mode", "autocast,infer"}), "unknown value \"infer\""},
      {Seed({"--mode", ","}), "--mode: empty list"},
      {Seed({"--pre-quantize", "--mode", "dynamic"}), "--pre-quantize"},
      {Seed({"--recipes", "fp8-rowwis"}), "unknown recipe \"fp8-rowwis\""},
      {Seed({"--recipes", "fp8-rowwise", "--no-fp8-rowwise"}), "no recipe left"},
      {Seed({"--timing", "cupti"}), "--timing"},
      {Seed({"--context", "mixed"}),
       "--context: unknown value \"mixed\"; valid: workload, isolated"},
      {Seed({"--context", ""}), "--context"},
      {Seed({"--energy=maybe"}), "--energy"},
      {Seed({"--label", "bad\x90label"}), "label: byte 0x90 at offset 3 is not UTF-8; give text"},
      {Seed({"--retries", "4"}), "--retries: 4 is out of range; give 0 (no retry) to 3"},
      {Seed({"--retries", "-1"}), "--retries: -1 is out of range"},
      {Seed({"--retries", "once"}), "--retries"},
      {Seed({"--where", "gpu:h200"}),
       "--where: 'gpu:h200' is not a placement; give this-node, any, model:NAME or node:NAME"},
      {Seed({"--where", "model:"}), "--where: 'model:' names no model or node after the colon"},
      {Seed({"--where", "model:a,,model:b"}), "--where: 'model:a,,model:b' has an empty part"},
      {Seed({"--where", "model:a,any"}), "several targets make a campaign"},
      {Seed({"--where", "model:a,model:a"}), "--where: model:a is listed twice"},
      {Seed({"--where", "any", "--devices", "0"}),
       "--devices: names GPUs of one node, but --where any hands the job to the cluster queue"},
      {Seed({"--priority", "11"}), "--priority: 11 is out of range; give -10..10"},
      {Seed({"--priority", "-11"}), "--priority: -11 is out of range"},
      {Seed({"--priority", "high"}), "--priority"},
      {Seed({"--campaign", ""}), "--campaign: '' must be 1..64 characters"},
      {Seed({"--campaign", std::string(65, 'c')}), "must be 1..64 characters"},
      {Seed({"--where", "this-node", "--campaign", "c1"}),
       "campaign: a campaign's jobs run through the cluster queue, not where this-node"},
      {Seed({"--pre-quantize", "--mode", "autocast"}), "--pre-quantize"},
      {Seed({"--accounting", "per-step"}), "--accounting"},
      {Seed({"--l2", "warm"}), "--l2: unknown value \"warm\"; valid: hot, cold, clean"},
      {Seed({"--fast-accum", "maybe"}), "--fast-accum"},
      {Seed({"--autotune", "0"}), "--autotune"},
      {Seed({"--autotune", "65"}), "--autotune"},
      {Seed({"--seed", "abc"}), "--seed"},
      {Seed({"--seed=-1"}), "--seed"},
      {Seed({"--seed", "18446744073709551616"}), "--seed"},
      {Seed({"--num-warmup=-1"}), "--num-warmup"},
      {Seed({"--num-warmup", "10001"}), "--num-warmup"},
      {Seed({"--num-iters", "0"}), "--num-iters"},  // more in timing_flags_test.cc
      {Seed({"--autotune", "4294967297"}), "--autotune"},
      {Seed({"--gpu-warmup=-1"}), "--gpu-warmup"},
      {Seed({"--gpu-warmup", "601"}), "--gpu-warmup"},
      {Seed({"--tp", "0"}), "--tp"},
      {Seed({"--tp", "3"}), "tensor_parallel"},
      {Seed({"--moe-skew", "0.5"}), "--moe-skew"},
      {Seed({"--moe-skew", "abc"}), "--moe-skew"},
      {Seed({"--moe-skew", "2"}), "moe_skew"},  // the seed's model is dense
      {{"submit", "--shapes", "64", "--moe-skew", "2"}, "need a model"},
      {Seed({"--moe-routing", "zipf:x"}), "--moe-routing: 'zipf:x' has 'x' where a number goes"},
      {Seed({"--moe-routing", "zipf:-1"}), "--moe-routing: 'zipf:-1' has A outside (0, 4]"},
      {Seed({"--moe-routing", "hot:4"}), "--moe-routing: 'hot:4' is not a routing (forms: "},
      {Seed({"--moe-routing", "hot:0:0.5"}), "--moe-routing: 'hot:0:0.5' has K"},
      {Seed({"--moe-routing", "skew:"}), "--moe-routing: 'skew:'"},
      {Seed({"--moe-routing", "random"}),
       "--moe-routing: 'random' is not a routing (forms: uniform, skew:S, zipf:A or hot:K:F)"},
      {Seed({"--moe-routing", "zipf:1.2"}), "moe_routing"},  // the seed's model is dense
      {{"submit", "--preset", "mixtral-8x7b", "--moe-routing", "skew:2", "--moe-skew", "2"},
       "--moe-skew and --moe-routing: give one: --moe-skew S is --moe-routing skew:S"},
      {{"submit", "--shapes", "64", "--moe-routing", "uniform"}, "need a model"},
      {Seed({"--moe-layout", "packed"}),
       "--moe-layout: unknown value \"packed\"; valid: contiguous, masked"},
      {Seed({"--moe-layout", ""}), "--moe-layout: unknown value \"\""},
      {{"submit", "--shapes", "64", "--moe-layout", "masked"}, "need a model"},
      {Seed({"--moe-seed", "-1"}), "--moe-seed: Value -1 not in range"},
      {Seed({"--moe-seed", "0"}), "--moe-seed: Value 0 not in range"},
      {Seed({"--moe-seed", "x"}), "--moe-seed: value x is not an integer"},
      {Seed({"--moe-seed", "99999999999999999999"}), "--moe-seed: value 99999999999999999999"},
      {{"submit", "--shapes", "64", "--moe-seed", "3"}, "need a model"},
      {Seed({"--sweep-m", "0"}), "--sweep-m"},
      {Seed({"--sweep-m", "1,x"}), "--sweep-m"},
      {Seed({"--sweep-m", "1:1000:1"}), "--sweep-m: '1:1000:1' expands to 1000 values"},
      {Seed({"--sweep-m", "1:64:1,2"}), "--sweep-m: 65 values, above the limit of 64"},
      {Seed({"--sweep-m", "16:1:*2"}), "whose START 16 is above its END 1"},
      {{"submit", "--shapes", "1:100000:1x8x8"}, "limit of 4096"},
      {{"submit", "--preset", "gpt-9"}, "codonfm-5b"},
      {{"submit", "--preset", "codonfm-5b", "--model", "x.json"}, "mutually exclusive"},
      {{"submit", "--model", "/nonexistent/config.json"}, "--model"},
      {{"submit", "--shapes", "64", "--tp", "2"}, "need a model"},
      {{"plan", "--hidden_size", "0"}, "--hidden_size"},
      {{"plan", "--shapes", "1x2x3x4"}, "--shapes"},
      {{"submit", "--bogus"}, "--bogus"},
      {Seed({"--force=maybe"}), "--force"},
      {Seed({"--sp=maybe"}), "--sp"},
      {Seed({"--split-gate-up"}), "split_gate_up"},  // the seed's MLP is not gated
      {{"submit", "--shapes", "64", "--sp"}, "need a model"},
      {{"submit", "--shapes", "64", "--sweep-m", "1"}, "mutually exclusive"},
      {{"submit", "--model", "BAD_JSON"}, "--model"},
      {Seed({"--devices", "x"}), "--devices: 'x' is not a device index (0..1023"},
      {Seed({"--devices", "-1"}), "--devices: '-1'"},
      {Seed({"--devices", "1024"}), "--devices: '1024'"},
      {Seed({"--devices", "0,,1"}), "--devices: ''"},
      {Seed({"--devices", ""}), "--devices: ''"},
      {Seed({"--devices", "0,1,0"}), "--devices: device 0 is listed twice"},
  };
  const std::string bad_json = ::testing::TempDir() + "/gemmprof_bad.json";
  std::ofstream(bad_json) << R"({"hidden_size": 1024, "intermediate_size": )";
  for (BadCase c : cases) {
    for (auto& a : c.args)
      if (a == "BAD_JSON") a = bad_json;
    ExpectUsageError(Run(c.args), c);
  }
}

TEST_F(AppTest, BadFlagsOfTheOtherCommands) {
  const std::vector<BadCase> cases = {
      {{"jobs", "--state", "done"}, "--state"},
      {{"jobs", "--limit", "0"}, "--limit"},
      {{"jobs", "--limit", "1001"}, "--limit"},
      {{"watch", "abc"}, "JOB"},
      {{"watch", "0"}, "JOB"},
      {{"watch"}, "JOB"},
      {{"cancel", "-1"}, "JOB"},
      {{"report", "9223372036854775808"}, "JOB"},
      {{"report", "99999999999999999999999"}, "JOB"},
      {{"report", "7", "--format", "xml"}, "table, csv, json, markdown"},
      {{"jobs", "--format", "xml"},
       "--format: unknown format \"xml\"; valid: table, csv, json, markdown"},
      {{"history", "--format", "tsv"}, "--format: unknown format \"tsv\""},
      {{"devices", "--format", ""}, "--format: unknown format \"\""},
      {{"compare", "7", "8", "--format", "JSON"}, "--format: unknown format \"JSON\""},
      {{"plan", "--shapes", "64x64x64", "--format", "yaml"}, "--format: unknown format \"yaml\""},
      {{"report", "7", "--format", "csv", "--chart"}, "--chart"},
      {{"report"}, "report: give a JOB id or --campaign NAME (exactly one of them)"},
      {{"report", "7", "--campaign", "c1"}, "exactly one of them"},
      {{"report", "--campaign", std::string(65, 'c')}, "is longer than 64 characters"},
      {{"jobs", "--campaign", std::string(65, 'c')},
       "--campaign: '" + std::string(65, 'c') + "' is longer than 64 characters"},
      {{"submit", "--shapes", "64", "--recipes", "w4a16", "--w4-group", "32"},
       "--w4-group: 32 is not a w4a16 group size; give 64 or 128"},
      {{"submit", "--shapes", "64", "--recipes", "fp8-rowwise+wgrad:bf17"},
       "--recipes: \"+wgrad:bf17\" in \"fp8-rowwise+wgrad:bf17\": unknown recipe \"bf17\" for "
       "wgrad; valid: bf16"},
      {{"submit", "--shapes", "64", "--recipes", "fp8-current+fast-accum:fprop/dgrd"},
       "--recipes: \"+fast-accum:fprop/dgrd\" in \"fp8-current+fast-accum:fprop/dgrd\": unknown "
       "pass \"dgrd\"; valid: fprop, dgrad, wgrad joined by \"/\", or all, or none"},
      {{"submit", "--shapes", "64", "--recipes", "bf16+fast-accum:all"},
       "--recipes: \"+fast-accum:all\" in \"bf16+fast-accum:all\": fprop runs bf16, which has "
       "no FP8 accumulation setting"},
      {{"submit", "--shapes", "64", "--recipes",
        "fp8-current+fast-accum:all,fp8-current+fast-accum:fprop/dgrad/wgrad"},
       "--recipes: \"fp8-current+fast-accum:fprop/dgrad/wgrad\" is listed twice"},
      {{"submit", "--shapes", "64", "--recipes", "bf16+dgrad:int8-rowwise"},
       "--recipes: \"+dgrad:int8-rowwise\" in \"bf16+dgrad:int8-rowwise\": int8-rowwise is a "
       "serving recipe: fprop only"},
      {{"submit", "--shapes", "64", "--recipes", "fp8-rowwise+wgrad:bf16,fp8-rowwise+wgrad:bf16"},
       "--recipes: \"fp8-rowwise+wgrad:bf16\" is listed twice"},
      {{"plan", "--preset", "llama-3.1-8b", "--recipes", "fp8-block+wgrad"},
       "--recipes: \"+wgrad\" in \"fp8-block+wgrad\": a role needs a recipe after \":\""},
      {{"plan", "--preset", "llama-3.1-8b", "--recipes", "fp8-rowwis+wgrad:bf16"},
       "--recipes: unknown recipe \"fp8-rowwis\" in \"fp8-rowwis+wgrad:bf16\""},
      {{"report", "7", "--chart=maybe"}, "--chart"},
      {{"compare", "7", "8", "--fail-on-regression=maybe"}, "--fail-on-regression"},
      {{"submit", "--shapes", "64", "--wait=maybe"}, "--wait"},
      {{"plot", "7", "-o", "x.svg", "--kind", "pie"},
       "layer, modes, tflops, speedup, roofline, energy, all"},
      {{"plot", "7"}, "--output"},
      {{"history", "--m", "0"}, "--m"},
      {{"history", "--k=-2"}, "--k"},
      {{"history", "--n", "x"}, "--n"},
      {{"history", "--shape", "1x2"}, "--shape"},
      {{"history", "--shape", "1x2x3", "--m", "1"}, "mutually exclusive"},
      {{"history", "--pass", "backward"}, "--pass"},
      {{"history", "--recipe", "int8"}, "--recipe"},
      {{"history", "--mode", "eager"}, "--mode"},
      {{"history", "--since", "yesterday"}, "--since"},
      {{"history", "--since", "2026-13-01"}, "--since"},
      {{"history", "--since", "0d"}, "--since"},
      {{"history", "--limit", "0"}, "--limit"},
      {{"compare", "7"}, "JOB_B"},
      {{"compare", "7", "x"}, "JOB_B"},
      {{"--server", "nonsense", "jobs"}, "--server"},
      {{"--server", "host:0", "jobs"}, "--server"},
      {{"--server", "host:70000", "jobs"}, "--server"},
      {{"--server", ":50051", "jobs"}, "--server"},
      {{"--server", "bad host:1", "jobs"}, "--server"},
      {{"frobnicate"}, "unknown command \"frobnicate\""},
      {{"--server", "h:1", "frobnicate", "7"}, "unknown command \"frobnicate\""},
      {{}, "subcommand"},
  };
  for (const BadCase& c : cases) ExpectUsageError(Run(c.args), c);
}

TEST_F(AppTest, ServerFromEnvironmentIsValidatedToo) {
  env_["GEMMPROF_SERVER"] = "no-port";
  const Result bad = Run({"jobs"});
  env_["GEMMPROF_SERVER"] = "gpu-node:6000";
  const Result good = Run({"jobs"});
  ExpectUsageError(bad, {{}, "GEMMPROF_SERVER: \"no-port\" has no port"});
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(last_address_, "gpu-node:6000");
  const Result flag = Run({"--server", "[::1]:50051", "jobs"});
  EXPECT_EQ(flag.code, 0) << flag.err;
  EXPECT_EQ(last_address_, "[::1]:50051");
}

TEST_F(AppTest, SubmitPrintsOnlyTheJobIdAndSendsTheSpec) {
  const Result r = Run(Seed({"--no-fp8", "--no-fp4", "--no-fp8-rowwise", "--pre-quantize",
                             "--num-iters", "50", "--l2", "cold", "--label", "x"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "100\n");
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(fake_.submitted.size(), 1u);
  const core::JobSpec& s = fake_.submitted[0];
  ASSERT_TRUE(s.model.has_value());
  EXPECT_EQ(s.model->micro_batch_size, 31);
  EXPECT_EQ(s.recipes,
            (std::vector<core::Recipe>{core::Recipe::kBf16, core::Recipe::kFp8Current,
                                       core::Recipe::kFp8Delayed, core::Recipe::kFp8Block}));
  EXPECT_EQ(s.modes, std::vector<core::Mode>{core::Mode::kPrequant});
  EXPECT_EQ(s.timing.timed_iters, 50);
  EXPECT_EQ(s.timing.l2, core::L2Policy::kCold);
  EXPECT_EQ(s.label, "x");
}

TEST_F(AppTest, TheCleanL2PolicyReachesTheSpec) {
  ASSERT_EQ(Run(Seed({"--l2", "clean"})).code, 0);
  ASSERT_EQ(fake_.submitted.size(), 1u);
  EXPECT_EQ(fake_.submitted[0].timing.l2, core::L2Policy::kClean);
}

TEST_F(AppTest, WherePriorityAndCampaignReachTheSpec) {
  ASSERT_EQ(Run(Seed({"--where", "model:NVIDIA H200", "--priority", "3"})).code, 0);
  ASSERT_EQ(fake_.submitted.size(), 1u);
  EXPECT_EQ(fake_.submitted[0].where.kind, core::PlacementKind::kModel);
  EXPECT_EQ(fake_.submitted[0].where.name, "NVIDIA H200");
  EXPECT_EQ(fake_.submitted[0].priority, 3);
  EXPECT_EQ(fake_.submitted[0].campaign, "");
  ASSERT_EQ(Run(Seed({})).code, 0);
  EXPECT_EQ(fake_.submitted[1].where.kind, core::PlacementKind::kDefault) << "the daemon decides";

  // Several models: one job each under one campaign, after the cluster has been asked.
  fake_.daemons.now_unix_ms = 1000000;
  for (const char* model : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    core::DaemonRecord d;
    d.node = model;
    d.models = {{model, 1, 0}};
    d.heartbeat_unix_ms = 999000;
    fake_.daemons.daemons.push_back(d);
  }
  const Result campaign = Run(Seed(
      {"--where", "model:nvidia h200,model:NVIDIA H100 80GB HBM3", "--campaign", "h100-vs-h200"}));
  ASSERT_EQ(campaign.code, 0) << campaign.err;
  ASSERT_EQ(fake_.submitted.size(), 4u);
  EXPECT_EQ(fake_.submitted[2].where.name, "nvidia h200");
  EXPECT_EQ(fake_.submitted[3].where.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(fake_.submitted[2].campaign, "h100-vs-h200");
  EXPECT_EQ(fake_.submitted[3].campaign, "h100-vs-h200");
  EXPECT_NE(campaign.err.find("campaign h100-vs-h200: gemmprof report --campaign h100-vs-h200"),
            std::string::npos)
      << campaign.err;
  // A model no serving daemon has: nothing is submitted.
  const Result refused = Run(Seed({"--where", "model:NVIDIA H200,model:NVIDIA B200"}));
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("model:NVIDIA B200: no serving daemon of the cluster has this "
                             "device model; the cluster has NVIDIA H100 80GB HBM3, NVIDIA H200; "
                             "no job was submitted"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(fake_.submitted.size(), 4u);
}

TEST_F(AppTest, ModesTimingAndProfileReachTheSpec) {
  const Result r = Run(
      Seed({"--mode", "dynamic,prequant", "--recipes", "fp8-rowwise,bf16", "--timing", "events"}));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(fake_.submitted.size(), 1u);
  // A copy: the runs below add to `submitted`, which may move its elements.
  const core::JobSpec s = fake_.submitted[0];
  EXPECT_EQ(s.modes, (std::vector<core::Mode>{core::Mode::kDynamic, core::Mode::kPrequant}));
  EXPECT_EQ(s.recipes, (std::vector<core::Recipe>{core::Recipe::kFp8Rowwise, core::Recipe::kBf16}));
  EXPECT_EQ(s.timing.timing_backend, core::TimingBackend::kEvents);
  EXPECT_FALSE(s.profile);
  ASSERT_EQ(Run(Seed({"--timing", "kernels", "--profile"})).code, 0);
  EXPECT_EQ(fake_.submitted.back().timing.timing_backend, core::TimingBackend::kKernels);
  EXPECT_TRUE(fake_.submitted.back().profile);
  const Result bad = Run(Seed({"--timing", "cupti"}));
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--timing: unknown value \"cupti\"; valid: events, kernels"));

  EXPECT_EQ(s.timing.context, core::MeasureContext::kWorkload) << "the default";
  EXPECT_FALSE(s.timing.energy);
  ASSERT_EQ(Run(Seed({"--context", "isolated", "--energy"})).code, 0);
  EXPECT_EQ(fake_.submitted.back().timing.context, core::MeasureContext::kIsolated);
  EXPECT_TRUE(fake_.submitted.back().timing.energy);
  EXPECT_EQ(s.retries, 1) << "the default";
  ASSERT_EQ(Run(Seed({"--retries", "0"})).code, 0);
  EXPECT_EQ(fake_.submitted.back().retries, 0);
  ASSERT_EQ(Run(Seed({"--retries", "3"})).code, 0);
  EXPECT_EQ(fake_.submitted.back().retries, 3);
  const Result bad_context = Run(Seed({"--context", "mixed"}));
  EXPECT_EQ(bad_context.code, kExitUsage);
  EXPECT_THAT(bad_context.err,
              HasSubstr("--context: unknown value \"mixed\"; valid: workload, isolated"));

  ASSERT_EQ(Run(Seed({"--mode", "all"})).code, 0);
  EXPECT_EQ(fake_.submitted.back().modes,
            (std::vector<core::Mode>{core::Mode::kAutocast, core::Mode::kPrequant,
                                     core::Mode::kDynamic}));
}

TEST_F(AppTest, MoeRoutingFlagsReachTheModelConfig) {
  const Result r = Run({"submit", "--preset", "mixtral-8x7b", "--moe-routing", "zipf:1.2",
                        "--moe-seed", "7", "--moe-layout", "masked"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fake_.submitted.back().model.has_value());
  const core::ModelConfig& m = *fake_.submitted.back().model;
  EXPECT_EQ(m.moe_routing, "zipf:1.2");
  EXPECT_EQ(m.moe_seed, 7);
  EXPECT_EQ(m.moe_layout, "masked");
  EXPECT_EQ(m.moe_skew, 1.0);

  for (const std::string routing : {"uniform", "skew:1.5", "hot:4:0.5"}) {
    ASSERT_EQ(Run({"submit", "--preset", "mixtral-8x7b", "--moe-routing", routing}).code, 0)
        << routing;
    EXPECT_EQ(fake_.submitted.back().model->moe_routing, routing);
  }
  ASSERT_EQ(
      Run({"submit", "--preset", "mixtral-8x7b", "--moe-seed", "7", "--moe-layout", "contiguous"})
          .code,
      0);
  EXPECT_EQ(fake_.submitted.back().model->moe_seed, 7);
  EXPECT_EQ(fake_.submitted.back().model->moe_layout, "contiguous");
  // Unset: the defaults (uniform, seed 1, the layout chosen by the tokens per step).
  ASSERT_EQ(Run({"submit", "--preset", "mixtral-8x7b"}).code, 0);
  EXPECT_EQ(fake_.submitted.back().model->moe_routing, "");
  EXPECT_EQ(fake_.submitted.back().model->moe_seed, 1);
  EXPECT_EQ(fake_.submitted.back().model->moe_layout, "");
  const Result help = Run({"submit", "--help"});
  EXPECT_THAT(help.out, HasSubstr("uniform, skew:S, zipf:A or hot:K:F"));
  EXPECT_THAT(help.out, HasSubstr("masked at or below 256 tokens per step"));
}

TEST_F(AppTest, ExplicitFlagsOverridePresetAndFileValues) {
  const Result r =
      Run({"submit", "--preset", "codonfm-5b", "--num_hidden_layers", "2", "--mode", "both"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(fake_.submitted.size(), 1u);
  EXPECT_EQ(fake_.submitted[0].model->num_hidden_layers, 2);
  EXPECT_EQ(fake_.submitted[0].model->hidden_size, 4096);
  EXPECT_EQ(fake_.submitted[0].modes.size(), 2u);

  const std::string path = ::testing::TempDir() + "/gemmprof_cfg.json";
  std::ofstream(path) << R"({"hidden_size": 1024, "intermediate_size": 4096,
    "num_attention_heads": 16, "num_hidden_layers": 4, "vocab_size": 32000,
    "model_type": "llama", "hidden_act": "silu", "frobnication_depth": 3})";
  const Result f = Run({"submit", "--model", path, "--micro_batch_size", "2", "--sequence_length",
                        "128", "--hidden_size", "2048"});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(std::count(f.err.begin(), f.err.end(), '\n'), 1) << f.err;
  EXPECT_THAT(f.err, HasSubstr("warning"));
  EXPECT_THAT(f.err, HasSubstr("frobnication_depth"));
  EXPECT_EQ(fake_.submitted[1].model->hidden_size, 2048);
  EXPECT_EQ(fake_.submitted[1].model->num_hidden_layers, 4);
}

TEST_F(AppTest, SubmitWaitFollowsThenPrintsTheReport) {
  fake_.next_job_id = 7;
  const Result piped = Run(Seed({"--wait"}));
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_THAT(piped.out, HasSubstr("job 7 running: 0/90 items\njob 7 running: 1/90 items; done "
                                   "fprop qkv 8192x4096x12288 bf16/autocast 1.374 ms\n"));
  EXPECT_THAT(piped.out, HasSubstr("\njob 7 succeeded: 90/90 items\n"));
  EXPECT_THAT(piped.out, HasSubstr("gemmprof report: job 7"));
  EXPECT_EQ(piped.out.find('\r'), std::string::npos);
  fake_.next_job_id = 7;
  const Result tty = Run(Seed({"--wait"}), /*tty=*/true);
  EXPECT_THAT(tty.out, HasSubstr("\r["));
}

TEST_F(AppTest, JobOutcomeSetsTheExitCodeOfWatchAndSubmitWait) {
  struct Case {
    core::JobState state;
    int32_t finished, failed;
    std::string error;
    int code;
    std::string line;  // the stderr line; empty for success
    bool report;       // submit --wait prints the report
  };
  const std::vector<Case> cases = {
      {core::JobState::kSucceeded, 90, 0, "", kExitOk, "", true},
      {core::JobState::kPartial, 90, 2, "", kExitPartial,
       "gemmprof: job 30 ended partial: 2 of 90 items failed\n", true},
      {core::JobState::kCancelled, 10, 0, "cancelled by request", kExitCancelled,
       "gemmprof: job 30 was cancelled; 10 of 90 items had finished\n", true},
      {core::JobState::kFailed, 0, 0, "device warm-up failed", kExitFailure,
       "gemmprof: job 30 failed: device warm-up failed\n", false},
      {core::JobState::kFailed, 3, 0, "store failure", kExitFailure,
       "gemmprof: job 30 failed: store failure\n", true},
  };
  for (const Case& c : cases) {
    const std::string name(core::ToString(c.state));
    core::Report r = report::testing::HopperReport();
    r.job.id = 30;
    r.job.state = c.state;
    r.job.finished_items = c.finished;
    r.job.failed_items = c.failed;
    r.job.error = c.error;
    r.items.resize(static_cast<size_t>(c.finished));
    fake_.reports[30] = r;
    const Result watch = Run({"watch", "30"});
    EXPECT_EQ(watch.code, c.code) << name << watch.err;
    EXPECT_EQ(watch.err, c.line) << name;
    EXPECT_THAT(watch.out, HasSubstr("job 30 " + name + ": ")) << name;
    fake_.next_job_id = 30;
    const Result wait = Run(Seed({"--wait"}));
    EXPECT_EQ(wait.code, c.code) << name << wait.err;
    EXPECT_EQ(wait.err, c.line) << name;
    EXPECT_EQ(wait.out.find("gemmprof report: job 30") != std::string::npos, c.report) << name;
  }
}

TEST_F(AppTest, ExitCodesAreInTheHelp) {
  const Result r = Run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("Exit codes:\n  0  success\n  1  failure"));
  EXPECT_THAT(r.out, HasSubstr("  2  usage"));
  EXPECT_THAT(r.out, HasSubstr("  3  watch / submit --wait: the job ended partial"));
  EXPECT_THAT(r.out, HasSubstr("  4  watch / submit --wait: the job was cancelled"));
  for (const char* cmd : {"watch", "submit"})
    EXPECT_THAT(Run({cmd, "--help"}).out, HasSubstr("3 partial")) << cmd;
}

TEST_F(AppTest, ReportInEveryFormat) {
  for (const char* f : {"table", "csv", "json", "markdown"}) {
    const Result r = Run({"report", "21", "--format", f});
    EXPECT_EQ(r.code, 0) << f << r.err;
    EXPECT_FALSE(r.out.empty()) << f;
  }
  EXPECT_THAT(Run({"report", "21", "--chart"}).out, HasSubstr("# Fprop+Dgrad"));
  const Result missing = Run({"report", "99"});
  EXPECT_EQ(missing.code, kExitFailure);
  EXPECT_EQ(missing.err, "gemmprof: job 99 not found\n");  // the server's message as is
}

TEST_F(AppTest, PlotWritesSvgAndFailsClearlyOnUnwritablePath) {
  const std::string path = ::testing::TempDir() + "/gemmprof_plot.svg";
  std::filesystem::remove(path);
  const Result ok = Run({"plot", "21", "-o", path, "--kind", "all"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  std::ifstream in(path);
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_THAT(svg.str(), HasSubstr("<svg"));
  const Result bad = Run({"plot", "21", "-o", "/nonexistent-dir/x.svg"});
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, StartsWith("gemmprof: -o: cannot write \"/nonexistent-dir/x.svg\""));
}

// PNG: the SVG rendered by rsvg-convert; a valid PNG whose pixels are not all one colour.
TEST_F(AppTest, PlotWritesPngByExtensionOrFlag) {
  for (const auto& [name, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"gemmprof_plot.png", {}}, {"gemmprof_plot_png.img", {"--format", "png"}}}) {
    const std::string path = ::testing::TempDir() + "/" + name;
    std::filesystem::remove(path);
    std::vector<std::string> args = {"plot", "21", "-o", path};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result ok = Run(args);
    ASSERT_EQ(ok.code, 0) << ok.err;
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const auto img = testing::DecodePng(bytes.str());
    ASSERT_TRUE(img.ok()) << img.status();
    EXPECT_GT(img->width, 300);
    EXPECT_GT(img->height, 300);
    std::set<uint32_t> colours;
    for (int y = 0; y < img->height; y += 4) {
      for (int x = 0; x < img->width; x += 4) {
        const uint8_t* p = img->Pixel(x, y);
        colours.insert(uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]);
      }
    }
    EXPECT_GT(colours.size(), 3u) << "a chart, not a blank page";
  }
  const std::vector<BadCase> bad = {
      {{"plot", "21", "-o", "x.jpg"}, "cannot tell the format from the extension"},
      {{"plot", "21", "-o", "x.png", "--format", "gif"}, "--format: unknown value \"gif\""},
  };
  for (const BadCase& c : bad) ExpectUsageError(Run(c.args), c);
}

// Splits RFC 4180 CSV into rows of fields (quoted fields may hold commas, quotes, newlines).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  if (rows.back().size() == 1 && rows.back().front().empty()) rows.pop_back();
  return rows;
}

// Every listing command in every format: CSV is rectangular with a header, JSON parses
// and holds the rows, table and markdown are not empty; nothing connects more than once.
TEST_F(AppTest, EveryListingInEveryFormat) {
  core::Report other = report::testing::BothModesReport();
  other.job.id = 22;
  for (auto& item : other.items) item.result->time.median_ms *= 1.01;
  fake_.reports[22] = other;
  std::vector<std::string> plan = {"plan"};
  plan.insert(plan.end(), kSeed.begin(), kSeed.end());
  struct Listing {
    std::vector<std::string> args;
    std::string rows_key;  // JSON key of the rows ("" = devices, an array of objects)
    size_t min_rows;
  };
  const std::vector<Listing> listings = {{{"jobs"}, "jobs", 2},
                                         {{"history"}, "results", 50},
                                         {{"devices"}, "devices", 1},
                                         {plan, "gemms", 12},
                                         {{"compare", "21", "22"}, "items", 72}};
  for (const Listing& l : listings) {
    const std::string what = l.args.front();
    auto run = [&](const char* format) {
      std::vector<std::string> args = l.args;
      args.insert(args.end(), {"--format", format});
      Result r = Run(args);
      EXPECT_EQ(r.code, 0) << what << " " << format << ": " << r.err;
      return r.out;
    };
    const auto csv = ParseCsv(run("csv"));
    ASSERT_GE(csv.size(), l.min_rows + 1) << what;
    for (const auto& row : csv) EXPECT_EQ(row.size(), csv.front().size()) << what;
    const auto json = nlohmann::json::parse(run("json"), nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(json.is_discarded()) << what;
    ASSERT_TRUE(json.contains(l.rows_key)) << what << ": " << json.dump();
    EXPECT_GE(json[l.rows_key].size(), l.min_rows) << what;
    EXPECT_THAT(run("markdown"), ::testing::ContainsRegex("\n\\| :?---:? \\|")) << what;
    EXPECT_EQ(run("table"), Run(l.args).out) << what << ": table is the default";
  }
  // The table of each listing stays what it was.
  EXPECT_THAT(Run({"jobs", "--format", "table"}).out, StartsWith("id  state"));
}

TEST_F(AppTest, CompareFailsOnRegressionOnlyWhenAsked) {
  core::Report slower = report::testing::BothModesReport();
  slower.job.id = 22;
  for (auto& item : slower.items) item.result->time.median_ms *= 1.2;
  fake_.reports[22] = slower;
  const Result plain = Run({"compare", "21", "22"});
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("0 faster, 0 same, 72 slower in B"));
  const Result gate = Run({"compare", "21", "22", "--fail-on-regression"});
  EXPECT_EQ(gate.code, kExitFailure);
  EXPECT_EQ(gate.err, "gemmprof: 72 of 72 items are slower in job 22 than in job 21\n");
  EXPECT_EQ(Run({"compare", "21", "21", "--fail-on-regression"}).code, 0);
}

TEST_F(AppTest, HistoryPassesFilters) {
  const Result r = Run({"history", "--shape", "8192x4096x12288", "--recipe", "fp8-block", "--pass",
                        "fprop", "--since", "7d", "--limit", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(fake_.last_query.m, 8192);
  EXPECT_EQ(fake_.last_query.n, 12288);
  EXPECT_EQ(fake_.last_query.recipe, core::Recipe::kFp8Block);
  EXPECT_EQ(fake_.last_query.since_ms, kNowMs - 7 * 86400000LL);
  EXPECT_EQ(fake_.last_limit, 5);
  Run({"history", "--since", "2026-11-01"});
  EXPECT_EQ(fake_.last_query.since_ms, 1793491200000);
}

TEST_F(AppTest, HelpTeachesWithExamples) {
  for (const char* cmd : {"submit", "plan", "jobs", "watch", "cancel", "report", "plot", "devices",
                          "history", "compare", "token"}) {
    const Result r = Run({cmd, "--help"});
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("xample")) << cmd;
    EXPECT_EQ(r.connects, 0);
  }
}

TEST_F(AppTest, HelpShowsJobIdsWithoutCli11TypeText) {
  for (const char* cmd : {"watch", "cancel", "report", "plot", "compare"}) {
    const Result r = Run({cmd, "--help"});
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out,
                ::testing::ContainsRegex("\n  JOB(_A)? +Job id \\(from gemmprof submit / jobs\\)"))
        << r.out;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("INT"))) << r.out;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("9223372036854775807"))) << r.out;
  }
  // Options keep their type text; only positionals drop it.
  EXPECT_THAT(Run({"submit", "--help"}).out, HasSubstr("--hidden_size INT:INT in [1 - "));
  // The checks still hold.
  EXPECT_THAT(Run({"report", "0"}).err, HasSubstr("JOB: Value 0 not in range"));
  EXPECT_THAT(Run({"report", "x"}).err, HasSubstr("JOB: value x is not an integer"));
}

// A recipe with a recipe per pass travels as a variant; the whole recipes stay whole (a
// list of variants only asks for no whole recipe, where an empty list means the default).
TEST_F(AppTest, RecipeVariantsReachTheSpec) {
  ASSERT_EQ(Run(Seed({"--recipes", "fp8-rowwise,fp8-rowwise+wgrad:bf16"})).code, 0);
  const core::JobSpec& s = fake_.submitted.back();
  EXPECT_EQ(s.recipes, std::vector<core::Recipe>{core::Recipe::kFp8Rowwise});
  ASSERT_EQ(s.variants.size(), 1u);
  EXPECT_EQ(s.variants[0].Name(), "fp8-rowwise+wgrad:bf16");
  ASSERT_EQ(Run(Seed({"--recipes", "fp8-current+wgrad:bf16+dgrad:fp8-block"})).code, 0);
  const core::JobSpec& only = fake_.submitted.back();
  EXPECT_TRUE(only.recipes.empty());
  ASSERT_EQ(only.variants.size(), 1u);
  EXPECT_EQ(only.variants[0].Name(), "fp8-current+dgrad:fp8-block+wgrad:bf16");
  EXPECT_TRUE(core::EffectiveRecipes(only).empty());
}

TEST_F(AppTest, PlanNeedsNoServer) {
  std::vector<std::string> args = {"plan"};
  args.insert(args.end(), kSeed.begin(), kSeed.end());
  const Result r = Run(args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.connects, 0);
  EXPECT_THAT(r.out, HasSubstr("15872x4096x12288"));
  EXPECT_THAT(r.out, HasSubstr("84 items (12 GEMMs x 7 recipes x 1 modes)"));
  const Result ranged = Run({"plan", "--shapes", "256:1024:256x512x512", "--recipes", "bf16"});
  EXPECT_EQ(ranged.code, 0) << ranged.err;
  EXPECT_THAT(ranged.out, HasSubstr("4 items (4 GEMMs x 1 recipes x 1 modes)"));
  EXPECT_THAT(ranged.out, HasSubstr("1024x512x512"));
  const Result sweep =
      Run({"plan", "--preset", "llama-3.1-8b", "--sweep-m", "1:16384:*2", "--recipes", "bf16"});
  EXPECT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_THAT(sweep.out, HasSubstr("16384x"));
  // A variant adds the items of the recipes its passes run, once per GEMM: the seed's 8
  // fprop and dgrad GEMMs run fp8-rowwise, its 4 wgrad GEMMs fp8-rowwise and bf16.
  std::vector<std::string> vargs = {"plan"};
  vargs.insert(vargs.end(), kSeed.begin(), kSeed.end());
  vargs.insert(vargs.end(), {"--recipes", "fp8-rowwise,fp8-rowwise+wgrad:bf16"});
  const Result composed = Run(vargs);
  EXPECT_EQ(composed.code, 0) << composed.err;
  EXPECT_THAT(composed.out, HasSubstr("16 items (12 GEMMs x the recipes their pass runs x 1 "
                                      "modes; a variant's pass shares the item of the recipe it "
                                      "runs, unless it names another accumulation than "
                                      "--fast-accum gives that pass)"));
  EXPECT_THAT(composed.out, HasSubstr("Variant fp8-rowwise+wgrad:bf16: fprop fp8-rowwise, dgrad "
                                      "fp8-rowwise, wgrad bf16"));
  // Fast accumulation per pass: under the default (fprop fast) "all" adds the seed's 8
  // dgrad and wgrad GEMMs as items of its own; under --fast-accum on it adds none.
  std::vector<std::string> fargs = {"plan"};
  fargs.insert(fargs.end(), kSeed.begin(), kSeed.end());
  fargs.insert(fargs.end(), {"--recipes", "fp8-current,fp8-current+fast-accum:all"});
  const Result fast = Run(fargs);
  EXPECT_EQ(fast.code, 0) << fast.err;
  EXPECT_THAT(fast.out, HasSubstr("20 items (12 GEMMs x"));
  EXPECT_THAT(fast.out, HasSubstr("Variant fp8-current+fast-accum:all: fprop fp8-current (fast "
                                  "accumulation), dgrad fp8-current (fast accumulation), wgrad "
                                  "fp8-current (fast accumulation); items of its own (another "
                                  "accumulation than --fast-accum gives): dgrad, wgrad"));
  fargs.insert(fargs.end(), {"--fast-accum", "on"});
  const Result fast_on = Run(fargs);
  EXPECT_EQ(fast_on.code, 0) << fast_on.err;
  EXPECT_THAT(fast_on.out, HasSubstr("12 items (12 GEMMs x"));
  EXPECT_THAT(fast_on.out, Not(HasSubstr("items of its own")));
  // The serving plan of issue's bar: every fprop GEMM at both M runs the three serving
  // recipes and the variant's fprop recipe.
  const Result serving =
      Run({"plan", "--preset", "llama-3.1-8b", "--sweep-m", "16,1024", "--recipes",
           "int8-rowwise,w4a16,w8a16,fp8-rowwise+wgrad:bf16", "--format", "json"});
  EXPECT_EQ(serving.code, 0) << serving.err;
  EXPECT_THAT(serving.out, HasSubstr("\"items\": 40"));
  EXPECT_THAT(serving.out, HasSubstr("\"fp8-rowwise+wgrad:bf16\""));
}

}  // namespace
}  // namespace gemmprof::client
