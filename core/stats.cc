#include "core/stats.h"

namespace gemmprof::core::stats {}  // namespace gemmprof::core::stats
