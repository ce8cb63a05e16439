// Routed experts, as the report's "Routed experts" section and `gemmprof plan` show them:
// for each grouped op (MoE experts) the routing that gave its tokens, the tokens per
// expert (min / median / max, experts without tokens), the capacity and the layout. Pure.
#pragma once

#include <optional>
#include <vector>

#include "client/render/document.h"
#include "core/job.h"
#include "nlohmann/json.hpp"
#include "report/analysis.h"

namespace gemmprof::client::render {

// The table of `ops`' grouped ops (each pass and name once), captioned with the model's
// routing; nullopt when none is grouped.
std::optional<Block> ExpertsBlock(const std::vector<core::GemmOp>& ops,
                                  const std::optional<core::ModelConfig>& model);
// The same as JSON: one object per grouped op with every expert's count
// ({"pass", "op", "experts", "tokens", "min", "median", "max", "without_tokens",
// "capacity", "layout", "group_tokens"}); an empty array when none is grouped.
nlohmann::ordered_json ExpertsJson(const std::vector<core::GemmOp>& ops);

// The report's section; nullopt when the job has no grouped op.
std::optional<Section> ExpertsSection(const report::Analysis& analysis);

}  // namespace gemmprof::client::render
