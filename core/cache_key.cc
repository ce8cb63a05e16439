#include "core/cache_key.h"

#include <sstream>
#include <string>

#include "absl/strings/str_join.h"

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
     << "|groups=" << item.op.groups;
  // Routed experts: uneven tokens and the masked layout run other kernels on other data.
  // Written only where set, so the keys of dense and uniform ops stay as they were.
  if (!item.op.group_tokens.empty()) {
    os << "|group_tokens=" << absl::StrJoin(item.op.group_tokens, ",");
  }
  if (item.op.groups > 1 && item.op.layout == MoeLayout::kMasked) os << "|layout=masked";
  os << "|pass=" << ToString(item.op.pass) << "|recipe=" << ToString(item.recipe)
     << "|mode=" << ToString(item.mode) << "|" << timing.CacheText() << "|context=" << context;
  // The w4a16 group size matters to w4a16 items only.
  if (item.recipe == Recipe::kW4a16) os << "|w4_group=" << timing.w4_group;
  // A variant's item with its own fast accumulation (written only where set, so other
  // items' keys stay as they were).
  if (item.fast_accum != FastAccum::kDefault) os << "|item_fastacc=" << ToString(item.fast_accum);
  return os.str();
}

}  // namespace gemmprof::core
