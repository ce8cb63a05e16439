// Jobs and their items: what a user asked for and how far it got.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/enums.h"
#include "core/gemm.h"
#include "core/model_config.h"
#include "core/placement.h"
#include "core/recipe_variant.h"
#include "core/result.h"

namespace gemmprof::core {

// Timing options of a job. All of them are part of the result-cache key.
struct TimingOptions {
  int32_t warmup_iters = 10;  // per item, like the seed tool
  // 0: noise-aware (rounds until the 95% interval of every figure compared is within
  // +-precision_target, or item_budget_s per distinct member is spent); N: exactly N
  // interleaved rounds, one sample per member each (specs stored before hold 100).
  int32_t timed_iters = 0;
  L2Policy l2 = L2Policy::kHot;
  int32_t autotune_k = 1;  // heuristic candidates timed; 1 = take cuBLASLt's first
  uint64_t seed = 1234;    // random-normal input seed
  Accounting accounting = Accounting::kTrainingStep;
  FastAccum fast_accum = FastAccum::kDefault;
  int32_t amax_history_len = 1024;  // delayed scaling, TE's default
  AmaxAlgo amax_algo = AmaxAlgo::kMax;
  double gpu_warmup_s = 1.0;       // time-based GPU warm-up before a job
  double precision_target = 0.01;  // relative 95% half-width to stop at (noise-aware)
  double item_budget_s = 2.0;      // rounds' time budget per distinct member (noise-aware)
  int32_t b2b_count = 0;           // back-to-back GEMMs per graph; 0 = chosen per group
  // kKernels also takes, per iteration, the time the device ran the kernels the iteration
  // launches (CUPTI; overlapping kernels counted once), stored beside the events figure
  // (Measurement.kernel).
  TimingBackend timing_backend = TimingBackend::kEvents;
  // Which GEMMs share an item's batch (`submit --context`); the item's own context is in
  // its cache key (ContextOf, core/group.h).
  MeasureContext context = MeasureContext::kWorkload;
  // `submit --energy`: after its rounds, each distinct member's back-to-back graph runs
  // for an energy window read from the board's energy counter (Measurement.energy).
  bool energy = false;
  // `submit --w4-group`: K elements sharing one scale of a w4a16 weight (64 or 128).
  int32_t w4_group = 128;

  // Canonical text of every option, used inside the cache key.
  std::string CacheText() const;
  friend bool operator==(const TimingOptions&, const TimingOptions&) = default;
};

// What a user submits.
struct JobSpec {
  std::optional<ModelConfig> model;  // exactly one of model / shapes is set
  std::vector<GemmShape> shapes;
  std::vector<Recipe> recipes;  // empty means "all" (when `variants` is empty too)
  // Recipes with a precision per pass ("fp8-rowwise+wgrad:bf16"), each composite. They add
  // the items of the recipes their passes run (the whole recipes' items where those run
  // too) and are reported beside the whole recipes, composed from those items.
  std::vector<RecipeVariant> variants;
  std::vector<Mode> modes;  // empty means {autocast}
  TimingOptions timing;
  bool force = false;  // bypass the result cache
  std::string label;   // free text for humans
  // Indexes of this node's GPUs the job may spread over (`submit --devices 0,1`); empty
  // means every available GPU of the job's device model.
  std::vector<int32_t> devices;
  // Nsight mode (`submit --profile`): after warm-up, every item's timed graph runs once more
  // between cudaProfilerStart/Stop inside an NVTX range "pass op MxKxN recipe mode", so
  // `nsys profile --capture-range=cudaProfilerApi` captures exactly the benchmarked work.
  // Such results are never used as cached results (and a profile job never reads the cache).
  bool profile = false;
  // `submit --retries N`: times a batch whose worker died, hung or lost its device
  // context is measured again before it is split to find the group at fault
  // (docs/measurement.md "Faults"); 0: its items fail at the first fault.
  int32_t retries = 1;
  // `submit --where`: this node, or the cluster queue (core/placement.h).
  Placement where;
  // `submit --priority` (admins): the cluster queue hands out higher first.
  int32_t priority = 0;
  // `submit --where model:A,model:B`: the jobs of one comparison share this id
  // (`report --campaign`); empty for a job of its own.
  std::string campaign;
};
// The largest --retries accepted.
inline constexpr int32_t kMaxRetries = 3;
// The longest campaign name (JobSpec::campaign, and a campaign filter) accepted.
inline constexpr size_t kMaxCampaignChars = 64;
// The group sizes w4a16 takes (TimingOptions::w4_group).
inline constexpr int32_t kW4Groups[] = {64, 128};

// The recipes and modes a spec stands for: empty recipes mean all (none when the spec
// names only variants); empty modes mean dynamic for an inference sweep (model.sweep_m
// set), autocast otherwise.
std::vector<Recipe> EffectiveRecipes(const JobSpec& spec);
// The whole recipes, then the variants: what a report of the job shows, in that order.
std::vector<RecipeVariant> ReportedRecipes(const JobSpec& spec);
std::vector<Mode> EffectiveModes(const JobSpec& spec);

// One unit of work: one GEMM op x recipe x mode.
struct WorkItem {
  int64_t id = 0;  // assigned by the store
  int64_t job_id = 0;
  int32_t seq = 0;  // order within the job
  GemmOp op;
  Recipe recipe = Recipe::kBf16;
  Mode mode = Mode::kAutocast;
  // kDefault: the job's --fast-accum. kOn / kOff: the item's own setting, for a variant
  // that names fast accumulation per pass ("fp8-current+fast-accum:all") where that
  // differs from what the job's option gives the pass (core::ItemFor).
  FastAccum fast_accum = FastAccum::kDefault;
};

// The fast-accumulation option `item` runs under: its own setting when it has one, else
// the job's.
FastAccum EffectiveFastAccum(const WorkItem& item, FastAccum job_option);

// "fprop qkv 15872x4096x12288 fp8-current autocast": how the daemon names an item in the
// errors it stores and logs (shape lists name an op by its shape, said once).
std::string DescribeItem(const WorkItem& item);

// What an item's timed region quantizes and how its operands were quantized, in words,
// for the item's notes: dynamic mode names the operands quantized inside the timing and
// says the weight was quantized before it; fp8-rowwise dgrad/wgrad say each operand was
// quantized again from BF16 along this GEMM's own K; bf16 in dynamic says it times the
// GEMM alone. Empty when there is nothing to say (autocast and prequant are explained by
// the report's legend).
std::string QuantizationNote(const WorkItem& item);

struct JobRecord {
  int64_t id = 0;
  JobSpec spec;
  Plan plan;  // the derived GEMMs the items came from
  JobState state = JobState::kQueued;
  std::string error;        // why it failed, if it did
  int64_t created_ms = 0;   // unix epoch milliseconds
  int64_t started_ms = 0;   // 0 until it starts
  int64_t finished_ms = 0;  // 0 until it ends
  int32_t total_items = 0;
  int32_t finished_items = 0;  // items in a final state
  int32_t failed_items = 0;
  DeviceInfo device;  // the device the job runs on
  // Name of the token that submitted the job (gemmprofd --tokens); empty when the daemon
  // ran without tokens or the job predates them.
  std::string submitted_by;
  // The daemon (gemmprofd --node, default the host name) that accepted the job and runs
  // it on its own GPUs. Empty for jobs stored before nodes were recorded.
  std::string node;
  // A running cluster job: the nodes holding a live lease on one of its batches, that is,
  // measuring it now (sorted). Empty otherwise.
  std::vector<std::string> measuring_nodes;
};

struct ItemRecord {
  WorkItem item;
  ItemStatus status = ItemStatus::kQueued;
  std::string error;                  // failure or not-supported reason
  bool cached = false;                // answered from the result cache
  int64_t measured_ms = 0;            // when the measurement was made (cache: its original time)
  std::optional<Measurement> result;  // set for kDone
  // Where the measurement was made (cache: the original's node and GPU); empty until
  // measured, and for results stored before nodes were recorded.
  std::string measured_node;
  std::string device_uuid;
};

// A job with everything needed to render it.
struct Report {
  JobRecord job;
  std::vector<ItemRecord> items;
};

}  // namespace gemmprof::core
