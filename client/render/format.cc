#include "client/render/format.h"

#include <cmath>

namespace gemmprof::client::render {

std::string FormatTflops(double tflops) {
  // Host-reference numbers are tiny; one decimal would print them all as 0.0.
  if (std::fabs(tflops) < 1) return FormatFixed(tflops, 4);
  return FormatFixed(tflops, 1);
}

std::string FormatGib(int64_t bytes) {
  return FormatFixed(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 1) + " GiB";
}

std::string_view PassTitle(core::Pass pass) {
  switch (pass) {
    case core::Pass::kFprop:
      return "Fprop";
    case core::Pass::kDgrad:
      return "Dgrad";
    case core::Pass::kWgrad:
      return "Wgrad";
  }
  return "?";
}

}  // namespace gemmprof::client::render
