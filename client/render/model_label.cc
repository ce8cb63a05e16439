#include "client/render/model_label.h"

#include <vector>

namespace gemmprof::client::render {
namespace {

std::string Layers(int64_t num_layers) {
  return std::to_string(num_layers) + (num_layers == 1 ? " layer" : " layers");
}

std::string NamedLine(const core::JobRecord& job, int64_t num_layers) {
  return (job.plan.model_name.empty() ? "custom" : job.plan.model_name) + ", " + Layers(num_layers);
}

// "M = 31 x 512 = 15872 tokens", "M swept over 1, 16", or "" when neither is known.
std::string TokensPart(const core::ModelConfig& m) {
  if (!m.sweep_m.empty()) {
    std::string s = "M swept over ";
    for (size_t i = 0; i < m.sweep_m.size(); ++i)
      s += (i ? ", " : "") + std::to_string(m.sweep_m[i]);
    return s;
  }
  if (m.micro_batch_size <= 0 || m.sequence_length <= 0) return "";
  return "M = " + std::to_string(m.micro_batch_size) + " x " + std::to_string(m.sequence_length) +
         " = " + std::to_string(m.micro_batch_size * m.sequence_length) + " tokens";
}

}  // namespace

bool IsSeedStyleModel(const core::JobRecord& job) {
  return job.spec.model.has_value() &&
         (job.plan.model_name.empty() || job.plan.model_name == "custom");
}

std::string ModelLine(const core::JobRecord& job, int64_t num_layers) {
  if (!IsSeedStyleModel(job)) return NamedLine(job, num_layers);
  const core::ModelConfig& m = *job.spec.model;
  std::vector<std::string> parts = {"hidden " + std::to_string(m.hidden_size),
                                    "intermediate " + std::to_string(m.intermediate_size),
                                    "heads " + std::to_string(m.num_attention_heads)};
  if (m.num_key_value_heads > 0 && m.num_key_value_heads != m.num_attention_heads)
    parts.push_back("kv heads " + std::to_string(m.num_key_value_heads));
  if (m.num_experts > 0)
    parts.push_back(std::to_string(m.num_experts) + " experts (top " +
                    std::to_string(m.experts_per_token) + ")");
  parts.push_back(Layers(num_layers));
  if (m.tensor_parallel > 1) parts.push_back("tp " + std::to_string(m.tensor_parallel));
  if (std::string tokens = TokensPart(m); !tokens.empty()) parts.push_back(std::move(tokens));
  std::string line = "seed-style model: ";
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  return line;
}

std::string ModelShortLine(const core::JobRecord& job, int64_t num_layers) {
  if (!IsSeedStyleModel(job)) return NamedLine(job, num_layers);
  const core::ModelConfig& m = *job.spec.model;
  return "h" + std::to_string(m.hidden_size) + " i" + std::to_string(m.intermediate_size) + ", " +
         Layers(num_layers);
}

}  // namespace gemmprof::client::render
