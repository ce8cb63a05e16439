#include "core/cache_key.h"

#include <sstream>
#include <string>

namespace gemmprof::core {

std::string GemmEngine() {
#ifdef GEMMPROF_CUTLASS_VERSION
  return std::to_string(kGemmEngineRevision) + "+cutlass-" + GEMMPROF_CUTLASS_VERSION;
#else
  return std::to_string(kGemmEngineRevision);
#endif
}

std::string CacheKey(const DeviceInfo& device, const WorkItem& item, const TimingOptions& timing,
                     const std::string& context) {
  std::ostringstream os;
  os << "backend=" << device.backend << "|device=" << device.name << "|sm=" << device.sm
     << "|driver=" << device.driver_version << "|cublaslt=" << device.cublaslt_version
     << "|engine=" << GemmEngine() << "|shape=" << item.op.shape.ToString()
     << "|groups=" << item.op.groups << "|pass=" << ToString(item.op.pass)
     << "|recipe=" << ToString(item.recipe) << "|mode=" << ToString(item.mode) << "|"
     << timing.CacheText() << "|context=" << context;
  return os.str();
}

}  // namespace gemmprof::core
