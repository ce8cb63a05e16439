// Helpers shared by the storage tests: a unique temporary directory and realistic
// jobs, items, devices and measurements.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "gtest/gtest.h"

namespace gemmprof::storage::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "gemmprof_storage_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline core::DeviceInfo H100() {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-1234";
  d.sm = 90;
  d.sm_count = 132;
  d.memory_bytes = int64_t{80} << 30;
  d.driver_version = "580.65.06";
  d.cuda_version = "13.0";
  d.cublaslt_version = "13.1.0";
  d.gemmprof_version = "0.1.0";
  d.recipes = {{core::Recipe::kBf16, true, ""},
               {core::Recipe::kMxfp8, false, "mxfp8 needs sm_100+, this is sm_90"}};
  return d;
}

inline core::JobRecord SeedJob(const std::string& label = "seed") {
  core::JobRecord job;
  core::ModelConfig model;
  model.hidden_size = 4096;
  model.intermediate_size = 16384;
  model.num_attention_heads = 32;
  model.num_hidden_layers = 24;
  model.micro_batch_size = 31;
  model.sequence_length = 512;
  job.spec.model = model;
  job.spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Current};
  job.spec.modes = {core::Mode::kAutocast, core::Mode::kPrequant};
  job.spec.label = label;
  job.plan.model_name = "custom";
  job.plan.num_layers = 24;
  job.device = H100();
  return job;
}

// `count` items cycling through passes, recipes and modes, with shape (m, k, n) varied.
inline std::vector<core::WorkItem> SeedItems(int count, int64_t m = 15872) {
  std::vector<core::WorkItem> items;
  const core::Pass passes[] = {core::Pass::kFprop, core::Pass::kDgrad, core::Pass::kWgrad};
  const core::Recipe recipes[] = {core::Recipe::kBf16, core::Recipe::kFp8Current,
                                  core::Recipe::kFp8Block};
  for (int i = 0; i < count; ++i) {
    core::WorkItem item;
    item.op.name = i % 2 == 0 ? "qkv" : "mlp_up";
    item.op.pass = passes[i % 3];
    item.op.shape = {m, 4096, 4096 + 1024 * (i % 4)};
    item.op.layers = 24;
    item.recipe = recipes[(i / 3) % 3];
    item.mode = i % 2 == 0 ? core::Mode::kAutocast : core::Mode::kPrequant;
    items.push_back(item);
  }
  return items;
}

// Routed experts: a grouped fprop op of 3 experts at capacity 8 whose tokens routing
// left uneven (3, 0 and 5), in the masked layout.
inline core::WorkItem RoutedItem() {
  core::WorkItem item;
  item.op = {"experts_up", core::Pass::kFprop, {8, 7168, 4096}, 3, 58, true};
  item.op.group_tokens = {3, 0, 5};
  item.op.layout = core::MoeLayout::kMasked;
  item.recipe = core::Recipe::kFp8Block;
  item.mode = core::Mode::kAutocast;
  return item;
}

inline core::Measurement SampleMeasurement(double median_ms) {
  core::Measurement m;
  m.time = core::SampleStats::FromSamples({median_ms * 0.98, median_ms, median_ms * 1.05});
  m.quant_ms = median_ms * 0.1;
  m.flops = 2.0 * 15872 * 4096 * 4096;
  m.bytes = 3.0e8;
  m.algorithm = "algo=21 tile=128x256";
  m.verification = core::Verification::kPassed;
  m.rel_error = 1.5e-3;
  m.error_threshold = 2e-2;
  m.telemetry.sm_clock_mhz_max = 1980;
  m.telemetry.telemetry_samples = 3;
  return m;
}

}  // namespace gemmprof::storage::testing
