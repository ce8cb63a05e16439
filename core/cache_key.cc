#include "core/cache_key.h"

#include <sstream>

namespace gemmprof::core {

std::string CacheKey(const DeviceInfo& device, const WorkItem& item, const TimingOptions& timing) {
  std::ostringstream os;
  os << "backend=" << device.backend << "|device=" << device.name << "|sm=" << device.sm
     << "|driver=" << device.driver_version << "|cublaslt=" << device.cublaslt_version
     << "|engine=" << kGemmEngineRevision << "|shape=" << item.op.shape.ToString()
     << "|groups=" << item.op.groups << "|pass=" << ToString(item.op.pass)
     << "|recipe=" << ToString(item.recipe) << "|mode=" << ToString(item.mode) << "|"
     << timing.CacheText();
  return os.str();
}

}  // namespace gemmprof::core
