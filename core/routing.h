// How a step's tokens reach an MoE layer's experts, and the per-expert token counts
// that follow (README.md, "Routed experts: routing and layouts").
//
// Each of `tokens` tokens picks `top_k` distinct experts of `num_experts`, so the
// counts sum to tokens * top_k and none exceeds tokens. The forms:
//  * uniform     every expert the same share (the remainder of tokens * top_k /
//                num_experts to the first experts, one each);
//  * skew:S      the first expert S times the uniform share (rounded up, at most
//                tokens), the others the rest evenly; S in [1, num_experts];
//  * zipf:A      expert e (in an order drawn from the seed) chosen with weight
//                1 / (rank + 1)^A, each token drawing its top_k experts without
//                replacement from those weights (seeded: the same seed gives the same
//                counts); A in (0, 4];
//  * hot:K:F     the first K experts take fraction F of the assignments evenly, the
//                others the rest evenly; K in [1, num_experts - 1], F in (0, 1), and
//                neither side may need more than one pick per token per expert
//                (F * top_k <= K, (1 - F) * top_k <= num_experts - K).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.h"
#include "core/gemm.h"
#include "core/status.h"

namespace gemmprof::core {

struct MoeRouting {
  enum class Kind { kUniform, kSkew, kZipf, kHot };
  Kind kind = Kind::kUniform;
  double skew = 1.0;        // kSkew
  double zipf_a = 0.0;      // kZipf
  int64_t hot_experts = 0;  // kHot
  double hot_fraction = 0;  // kHot
};

// The forms the parsers accept, for error messages and --help.
inline constexpr char kMoeRoutingForms[] = "uniform, skew:S, zipf:A or hot:K:F";

// Parses `text` (one of the forms above; "" is uniform). InvalidArgument naming `field`
// (a flag or config field), the value and the forms or the limit it breaks. Limits that
// need the model (S <= num_experts, K < num_experts, the F bounds) are checked by
// CheckMoeRouting.
absl::StatusOr<MoeRouting> ParseMoeRouting(const std::string& text, const std::string& field);
// The limits that depend on the model; InvalidArgument naming `field` and the value.
absl::Status CheckMoeRouting(const MoeRouting& routing, int64_t num_experts, int64_t top_k,
                             const std::string& field);
// "uniform", "skew:1.5", "zipf:1.2", "hot:4:0.5".
std::string ToString(const MoeRouting& routing);

// The model's routing: moe_routing when set, otherwise skew:moe_skew when moe_skew > 1,
// otherwise uniform (`moe_routing` and `moe_skew` as in ModelConfig; already checked).
MoeRouting RoutingOf(const std::string& moe_routing, double moe_skew);

// Tokens per expert for one step of `tokens` tokens (see above). num_experts >= 1,
// 1 <= top_k <= num_experts, tokens >= 0, the routing checked.
std::vector<int64_t> ExpertTokenCounts(const MoeRouting& routing, int64_t num_experts,
                                       int64_t top_k, int64_t tokens, uint64_t seed);

// The layout for `layout` ("" chooses: masked at or below kMaskedLayoutMaxTokens tokens
// per step, contiguous above). InvalidArgument naming `field` for other text.
inline constexpr int64_t kMaskedLayoutMaxTokens = 256;
absl::StatusOr<MoeLayout> ResolveMoeLayout(const std::string& layout, int64_t tokens,
                                           const std::string& field);

// min / median / max of per-expert token counts (median of an even count: the lower of
// the middle two, so it is a count some expert got).
struct TokenSpread {
  int64_t min = 0, median = 0, max = 0;
  int64_t zero = 0;  // experts that got no token
};
TokenSpread SpreadOf(const std::vector<int64_t>& counts);

// An item note for a grouped op whose experts' tokens differ: "experts: 4096 tokens
// routed, per expert min 3 / median 15 / max 97 (2 without tokens), capacity 97,
// masked layout" (wgrad adds its padding); "" for other ops.
std::string ExpertsNote(const GemmOp& op);

}  // namespace gemmprof::core
