#include "core/gemm.h"

namespace gemmprof::core {

std::string GemmShape::ToString() const {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

double GemmOp::Flops() const {
  if (group_tokens.empty()) return static_cast<double>(groups) * shape.Flops();
  double tokens = 0;
  for (int64_t t : group_tokens) tokens += static_cast<double>(t);
  // The shape's flops scale with its token dimension.
  return shape.Flops() * tokens / static_cast<double>(TokenDim());
}

}  // namespace gemmprof::core
