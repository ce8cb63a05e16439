#include "core/gemm.h"

namespace gemmprof::core {

std::string GemmShape::ToString() const {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

}  // namespace gemmprof::core
