// How reports name a job's model: presets and config files by their name, a model given
// by the seed tool's flags ("custom") by the sizes that define it. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/job.h"

namespace gemmprof::client::render {

// True when the job's model came from the seed-style size flags rather than a preset or
// a config file, so its name says nothing about it.
bool IsSeedStyleModel(const core::JobRecord& job);

// The report header's model line. Seed-style: "seed-style model: hidden 4096,
// intermediate 16384, heads 32, 24 layers, M = 31 x 512 = 15872 tokens" (plus kv heads,
// experts and tensor parallelism where set; an inference sweep lists its M instead).
// Otherwise "llama-3.1-8b, 32 layers". `num_layers` is the plan's layer count.
std::string ModelLine(const core::JobRecord& job, int64_t num_layers);

// The same, short enough for a chart subtitle: "h4096 i16384, 24 layers" for a
// seed-style model, "llama-3.1-8b, 32 layers" otherwise.
std::string ModelShortLine(const core::JobRecord& job, int64_t num_layers);

}  // namespace gemmprof::client::render
