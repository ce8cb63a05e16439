// --shapes and --sweep-m text (core/shape_parser.h): an accepted list holds only shapes
// inside the limits, and never more than the expansion cap.
#include "core/limits.h"
#include "core/shape_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace gemmprof::core {
namespace {

bool InRange(int64_t d) { return d >= 1 && d <= kMaxDim; }

}  // namespace
}  // namespace gemmprof::core

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof::core;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto shapes = ParseShapeList(text); shapes.ok()) {
    FUZZ_CHECK(!shapes->empty());
    FUZZ_CHECK(static_cast<int64_t>(shapes->size()) <= kMaxExpandedShapes ||
               text.find(':') == std::string_view::npos);
    for (const GemmShape& s : *shapes) {
      FUZZ_CHECK(InRange(s.m) && InRange(s.k) && InRange(s.n));
      int64_t mk = 0, mkn = 0;
      FUZZ_CHECK(MulFits(s.m, s.k, &mk) && MulFits(mk, s.n, &mkn));
    }
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(shapes.status()));
  }
  constexpr int64_t kLimit = 64;
  if (auto sizes = ParseSizeRange(text, kLimit); sizes.ok()) {
    FUZZ_CHECK(!sizes->empty() && static_cast<int64_t>(sizes->size()) <= kLimit);
    for (int64_t s : *sizes) FUZZ_CHECK(InRange(s));
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(sizes.status()));
  }
  return 0;
}
