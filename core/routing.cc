#include "core/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gemmprof::core {
namespace {

absl::Status Bad(const std::string& field, const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", text, "' ", why, " (forms: ", kMoeRoutingForms, ")"));
}

// `share` split over `experts` as evenly as integers allow, into counts[first..].
void Spread(int64_t share, int64_t experts, int64_t first, std::vector<int64_t>& counts) {
  for (int64_t e = 0; e < experts; ++e) {
    counts[first + e] = share / experts + (e < share % experts ? 1 : 0);
  }
}

// A uniform double in [0, 1) from the generator's 53 high bits (the same on every
// platform, unlike std::uniform_real_distribution).
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::vector<int64_t> ZipfCounts(double a, int64_t num_experts, int64_t top_k, int64_t tokens,
                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Which expert holds which rank: a seeded shuffle (Fisher-Yates on the portable draw).
  std::vector<int64_t> rank(num_experts);
  std::iota(rank.begin(), rank.end(), 0);
  for (int64_t i = num_experts - 1; i > 0; --i) {
    std::swap(rank[i], rank[static_cast<int64_t>(Uniform(rng) * static_cast<double>(i + 1))]);
  }
  std::vector<double> log_weight(num_experts);
  for (int64_t e = 0; e < num_experts; ++e) {
    log_weight[e] = -a * std::log(static_cast<double>(rank[e] + 1));
  }
  // Each token's top_k experts without replacement, weighted: the top_k largest of
  // log(w) + Gumbel noise (the Gumbel top-k trick draws exactly that).
  std::vector<int64_t> counts(num_experts, 0);
  std::vector<std::pair<double, int64_t>> keys(num_experts);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t e = 0; e < num_experts; ++e) {
      const double u = std::max(Uniform(rng), 0x1.0p-60);
      keys[e] = {log_weight[e] - std::log(-std::log(u)), e};
    }
    std::partial_sort(keys.begin(), keys.begin() + top_k, keys.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first; });
    for (int64_t i = 0; i < top_k; ++i) ++counts[keys[i].second];
  }
  return counts;
}

}  // namespace

absl::StatusOr<MoeRouting> ParseMoeRouting(const std::string& text, const std::string& field) {
  MoeRouting r;
  if (text.empty() || text == "uniform") return r;
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  auto number = [&](const std::string& part, double* out) -> absl::Status {
    if (!absl::SimpleAtod(part, out) || !std::isfinite(*out)) {
      return Bad(field, text, absl::StrCat("has '", part, "' where a number goes"));
    }
    return absl::OkStatus();
  };
  if (parts[0] == "skew" && parts.size() == 2) {
    r.kind = MoeRouting::Kind::kSkew;
    RETURN_IF_ERROR(number(parts[1], &r.skew));
    if (r.skew < 1.0) return Bad(field, text, "has S below 1 (S = 1 is uniform)");
    return r;
  }
  if (parts[0] == "zipf" && parts.size() == 2) {
    r.kind = MoeRouting::Kind::kZipf;
    RETURN_IF_ERROR(number(parts[1], &r.zipf_a));
    if (!(r.zipf_a > 0.0 && r.zipf_a <= 4.0)) {
      return Bad(field, text, "has A outside (0, 4] (A near 1 is typical of real traffic)");
    }
    return r;
  }
  if (parts[0] == "hot" && parts.size() == 3) {
    r.kind = MoeRouting::Kind::kHot;
    if (!absl::SimpleAtoi(parts[1], &r.hot_experts) || r.hot_experts < 1) {
      return Bad(field, text, "has K that is not a whole number of experts >= 1");
    }
    RETURN_IF_ERROR(number(parts[2], &r.hot_fraction));
    if (!(r.hot_fraction > 0.0 && r.hot_fraction < 1.0)) {
      return Bad(field, text, "has F outside (0, 1)");
    }
    return r;
  }
  return Bad(field, text, "is not a routing");
}

absl::Status CheckMoeRouting(const MoeRouting& r, int64_t num_experts, int64_t top_k,
                             const std::string& field) {
  const std::string text = ToString(r);
  switch (r.kind) {
    case MoeRouting::Kind::kUniform:
    case MoeRouting::Kind::kZipf:
      return absl::OkStatus();
    case MoeRouting::Kind::kSkew:
      if (r.skew > static_cast<double>(num_experts)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": ", text, " asks S above num_experts (", num_experts, ")"));
      }
      return absl::OkStatus();
    case MoeRouting::Kind::kHot:
      if (r.hot_experts >= num_experts) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": ", text, " asks K = ", r.hot_experts, " hot experts of ",
                         num_experts, "; give 1..", num_experts - 1));
      }
      if (r.hot_fraction * static_cast<double>(top_k) > static_cast<double>(r.hot_experts)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": ", text, " gives ", r.hot_experts, " experts more than every token (F * ",
            top_k, " experts per token > K); at most F = ",
            static_cast<double>(r.hot_experts) / static_cast<double>(top_k)));
      }
      if ((1.0 - r.hot_fraction) * static_cast<double>(top_k) >
          static_cast<double>(num_experts - r.hot_experts)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": ", text, " leaves the other ", num_experts - r.hot_experts,
            " experts more than every token ((1 - F) * ", top_k, " > ", num_experts, " - K)"));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

std::string ToString(const MoeRouting& r) {
  switch (r.kind) {
    case MoeRouting::Kind::kUniform:
      return "uniform";
    case MoeRouting::Kind::kSkew:
      return absl::StrCat("skew:", r.skew);
    case MoeRouting::Kind::kZipf:
      return absl::StrCat("zipf:", r.zipf_a);
    case MoeRouting::Kind::kHot:
      return absl::StrCat("hot:", r.hot_experts, ":", r.hot_fraction);
  }
  return "uniform";
}

MoeRouting RoutingOf(const std::string& moe_routing, double moe_skew) {
  if (!moe_routing.empty()) {
    absl::StatusOr<MoeRouting> r = ParseMoeRouting(moe_routing, "moe_routing");
    if (r.ok()) return *r;
  }
  MoeRouting r;
  // NaN and infinity (unvalidated callers) count as skew: the hot expert is capped at
  // every token.
  if (!(moe_skew <= 1.0)) {
    r.kind = MoeRouting::Kind::kSkew;
    r.skew = moe_skew;
  }
  return r;
}

std::vector<int64_t> ExpertTokenCounts(const MoeRouting& r, int64_t num_experts, int64_t top_k,
                                       int64_t tokens, uint64_t seed) {
  std::vector<int64_t> counts(num_experts, 0);
  const int64_t routed = tokens * top_k;
  switch (r.kind) {
    case MoeRouting::Kind::kUniform:
      Spread(routed, num_experts, 0, counts);
      break;
    case MoeRouting::Kind::kSkew: {
      const int64_t balanced = (routed + num_experts - 1) / num_experts;
      // The epsilon keeps an exact product (496 * 1.5 = 744) from rounding up to 745.
      const double want = std::ceil(static_cast<double>(balanced) * r.skew - 1e-9);
      int64_t hot = want < static_cast<double>(tokens) ? static_cast<int64_t>(want) : tokens;
      hot = std::min(hot, routed);
      // The others take the rest, no more than every token each: what they cannot take
      // stays with the hot expert's bound (it is at most tokens by then).
      const int64_t rest = routed - hot;
      counts[0] = hot;
      if (num_experts > 1) Spread(rest, num_experts - 1, 1, counts);
      break;
    }
    case MoeRouting::Kind::kZipf:
      return ZipfCounts(r.zipf_a, num_experts, top_k, tokens, seed);
    case MoeRouting::Kind::kHot: {
      const int64_t hot_share =
          static_cast<int64_t>(std::llround(r.hot_fraction * static_cast<double>(routed)));
      Spread(hot_share, r.hot_experts, 0, counts);
      Spread(routed - hot_share, num_experts - r.hot_experts, r.hot_experts, counts);
      break;
    }
  }
  // No expert sees a token twice (the checks above keep every form inside this).
  for (int64_t& c : counts) c = std::min(c, tokens);
  return counts;
}

absl::StatusOr<MoeLayout> ResolveMoeLayout(const std::string& layout, int64_t tokens,
                                           const std::string& field) {
  if (layout.empty()) {
    return tokens <= kMaskedLayoutMaxTokens ? MoeLayout::kMasked : MoeLayout::kContiguous;
  }
  if (std::optional<MoeLayout> l = ParseMoeLayout(layout); l.has_value()) return *l;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", layout, "' is not a layout (contiguous or masked)"));
}

TokenSpread SpreadOf(const std::vector<int64_t>& counts) {
  TokenSpread s;
  if (counts.empty()) return s;
  std::vector<int64_t> sorted = counts;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = sorted[(sorted.size() - 1) / 2];
  s.zero = std::count(sorted.begin(), sorted.end(), int64_t{0});
  return s;
}

std::string ExpertsNote(const GemmOp& op) {
  if (op.group_tokens.empty()) return "";
  const TokenSpread s = SpreadOf(op.group_tokens);
  int64_t total = 0;
  for (int64_t t : op.group_tokens) total += t;
  return absl::StrCat("experts: ", total,
                      op.pass == Pass::kWgrad ? " tokens (each expert's padded to 16)" : " tokens",
                      " routed, per expert min ", s.min, " / median ", s.median, " / max ", s.max,
                      s.zero > 0 ? absl::StrCat(" (", s.zero, " without tokens)") : "",
                      ", capacity ", op.TokenDim(), ", ", std::string(ToString(op.layout)),
                      " layout",
                      op.pass == Pass::kWgrad
                          ? "; wgrad runs every expert at the capacity K (zeros past its tokens)"
                          : "");
}

}  // namespace gemmprof::core
