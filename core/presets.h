// Built-in models, so `gemmprof submit --model llama-3.1-8b` needs no file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/model_config.h"
#include "core/status.h"

namespace gemmprof::core {

// The preset's config. The Hugging Face presets (llama-3.1-8b, llama-3.1-70b,
// qwen2.5-7b, mixtral-8x7b, deepseek-v3) are their published config.json text run
// through ParseHfConfigJson (the same path as a user's file), with micro_batch_size 1
// and sequence_length 4096. codonfm-5b is the seed tutorial's model: hidden 4096,
// intermediate 16384, 32 heads, 24 layers, micro_batch_size 31, sequence_length 512,
// plain (ungated) MLP, no LM head. Not modeled for deepseek-v3: its multi-token-
// prediction layer (num_nextn_predict_layers). Errors: NotFound listing the valid names.
// Thread-safe.
absl::StatusOr<ModelConfig> FindPreset(std::string_view name);

// The embedded config.json text of a Hugging Face preset (so a client can show or
// save it). Errors: NotFound for codonfm-5b (not a Hugging Face model) and unknown names.
// Thread-safe.
absl::StatusOr<std::string_view> PresetConfigJson(std::string_view name);

// Names of every preset, in a stable order.
std::vector<std::string> PresetNames();

}  // namespace gemmprof::core
