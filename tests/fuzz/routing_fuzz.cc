// --moe-routing text and the counts it gives (core/routing.h). The first six bytes pick
// the experts (1..1024), the experts per token and the tokens (0..4095); the rest is the
// routing text. A routing that parses and passes its model check gives counts that sum
// to tokens * top_k with none above tokens, and prints as text that parses back.
#include <numeric>

#include "core/routing.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof::core;
  gemmprof::fuzz::InputReader in(data, size);
  const int64_t experts = 1 + in.U16() % 1024;
  const int64_t top_k = 1 + in.Byte() % experts;
  const int64_t tokens = in.U16() % 4096;
  const uint64_t seed = in.Byte();
  const std::string text(in.Rest());
  auto routing = ParseMoeRouting(text, "moe_routing");
  if (!routing.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(routing.status()));
    FUZZ_CHECK(routing.status().message().find("moe_routing") != absl::string_view::npos);
    return 0;
  }
  auto printed = ParseMoeRouting(ToString(*routing), "moe_routing");
  FUZZ_CHECK(printed.ok());
  FUZZ_CHECK(printed->kind == routing->kind);
  if (!CheckMoeRouting(*routing, experts, top_k, "moe_routing").ok()) return 0;
  const std::vector<int64_t> counts = ExpertTokenCounts(*routing, experts, top_k, tokens, seed);
  FUZZ_CHECK(static_cast<int64_t>(counts.size()) == experts);
  for (int64_t c : counts) FUZZ_CHECK(c >= 0 && c <= tokens);
  // Every form but skew places all tokens * top_k; skew caps its hot expert at every
  // token and spreads the rest, which can leave some unplaced only when the others are
  // full too.
  const int64_t placed = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (routing->kind != MoeRouting::Kind::kSkew) FUZZ_CHECK(placed == tokens * top_k);
  FUZZ_CHECK(placed <= tokens * top_k);
  const TokenSpread spread = SpreadOf(counts);
  FUZZ_CHECK(spread.min <= spread.median && spread.median <= spread.max);
  return 0;
}
