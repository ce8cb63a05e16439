#include "kernels/timing/cupti_tracer.h"

#include <cupti_activity.h>
#include <cupti_version.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace gemmprof::kernels {

struct CuptiTracer::Api {
  CUptiResult (*get_version)(uint32_t*) = nullptr;
  CUptiResult (*result_string)(CUptiResult, const char**) = nullptr;
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                    CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*push_external)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult (*pop_external)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
};

namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr CUpti_ExternalCorrelationKind kTagKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
// The kinds a session collects. External correlations tie the graph launches to their
// tags; runtime API records are what the correlations attach to.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_RUNTIME};

// What the completed-buffer callback gathered (CUPTI may call it on its own thread).
struct Collected {
  std::mutex mu;
  std::map<uint32_t, std::vector<KernelRecord>> kernels;  // by correlation id
  std::map<uint32_t, uint64_t> tag_of;                    // correlation id -> tag
  const CuptiTracer::Api* api = nullptr;
};
Collected& Sink() {
  static Collected* c = new Collected();
  return *c;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collected& c = Sink();
  std::lock_guard<std::mutex> lock(c.mu);
  CUpti_Activity* record = nullptr;
  while (c.api != nullptr && c.api->next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      c.kernels[k->correlationId].push_back({ShortKernelName(k->name), k->start, k->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == kTagKind) c.tag_of[e->correlationId] = e->externalId;
    }
  }
  std::free(buffer);
}

template <typename F>
bool Resolve(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

// The entry points of the CUPTI at `path` (a dlopen name or path), its version checked.
absl::StatusOr<std::unique_ptr<CuptiTracer::Api>> Open(const std::string& path) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel-only timing needs CUPTI (libcupti.so.13: the CUDA toolkit's, the bundle's "
        "lib/, or $GEMMPROF_CUPTI_LIBRARY), which this node cannot load: ",
        dlerror()));
  }
  auto api = std::make_unique<CuptiTracer::Api>();
  const bool ok = Resolve(lib, "cuptiGetVersion", &api->get_version) &&
                  Resolve(lib, "cuptiGetResultString", &api->result_string) &&
                  Resolve(lib, "cuptiActivityRegisterCallbacks", &api->register_callbacks) &&
                  Resolve(lib, "cuptiActivityEnable", &api->enable) &&
                  Resolve(lib, "cuptiActivityDisable", &api->disable) &&
                  Resolve(lib, "cuptiActivityFlushAll", &api->flush_all) &&
                  Resolve(lib, "cuptiActivityGetNextRecord", &api->next_record) &&
                  Resolve(lib, "cuptiActivityPushExternalCorrelationId", &api->push_external) &&
                  Resolve(lib, "cuptiActivityPopExternalCorrelationId", &api->pop_external);
  if (!ok) {
    dlclose(lib);
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel-only timing: ", path, " lacks the activity API entry points it needs"));
  }
  uint32_t version = 0;
  // Records are read with this build's structs (CUPTI 13): a different major CUPTI lays
  // them out differently.
  if (api->get_version(&version) != CUPTI_SUCCESS || version / 10000 != CUPTI_API_VERSION / 10000) {
    dlclose(lib);
    return absl::FailedPreconditionError(
        absl::StrCat("kernel-only timing: CUPTI API version ", version, " (", path, ") is not the ",
                     CUPTI_API_VERSION / 10000, ".x this build reads"));
  }
  return api;
}

// Where CUPTI is looked for, in order: $GEMMPROF_CUPTI_LIBRARY alone when set; else
// libcupti.so.13 on the library path (the node's toolkit through LD_LIBRARY_PATH, then
// the bundle's lib/ through RUNPATH), then the toolkit's extras/CUPTI folder, where
// older layouts keep it.
absl::StatusOr<CuptiTracer::Api*> Load() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("GEMMPROF_CUPTI_LIBRARY"); env != nullptr && *env != 0) {
    paths.push_back(env);
  } else {
    paths = {"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  }
  std::unique_ptr<CuptiTracer::Api> api;
  absl::Status first_failure;  // names the usual place; later ones only the fallbacks
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<CuptiTracer::Api>> tried = Open(path);
    if (tried.ok()) {
      api = std::move(*tried);
      break;
    }
    if (first_failure.ok()) first_failure = tried.status();
  }
  if (api == nullptr) return first_failure;
  Sink().api = api.get();
  if (api->register_callbacks(BufferRequested, BufferCompleted) != CUPTI_SUCCESS) {
    Sink().api = nullptr;
    return absl::FailedPreconditionError(
        "kernel-only timing: CUPTI refused its activity buffer callbacks");
  }
  return api.release();  // lives as long as the process, as the callbacks do
}

}  // namespace

absl::StatusOr<CuptiTracer*> CuptiTracer::Get() {
  static absl::StatusOr<CuptiTracer*>* loaded = [] {
    absl::StatusOr<Api*> api = Load();
    if (!api.ok()) return new absl::StatusOr<CuptiTracer*>(api.status());
    auto* t = new CuptiTracer();
    t->api_ = *api;
    return new absl::StatusOr<CuptiTracer*>(t);
  }();
  return *loaded;
}

absl::Status CuptiTracer::Begin() {
  {
    std::lock_guard<std::mutex> lock(Sink().mu);
    Sink().kernels.clear();
    Sink().tag_of.clear();
  }
  for (CUpti_ActivityKind kind : kKinds) {
    const CUptiResult r = api_->enable(kind);
    if (r != CUPTI_SUCCESS) {
      const char* text = "unknown";
      api_->result_string(r, &text);
      for (CUpti_ActivityKind k : kKinds) api_->disable(k);
      return absl::FailedPreconditionError(absl::StrCat(
          "kernel-only timing: CUPTI would not collect kernel records (", text,
          "); a profiler attached to the daemon holds it, or the driver does not allow it"));
    }
  }
  active_ = true;
  return absl::OkStatus();
}

absl::Status CuptiTracer::Mark(uint64_t id) {
  if (api_->push_external(kTagKind, id) != CUPTI_SUCCESS) {
    return absl::InternalError("CUPTI: cuptiActivityPushExternalCorrelationId failed");
  }
  return absl::OkStatus();
}

absl::Status CuptiTracer::Unmark() {
  uint64_t last = 0;
  if (api_->pop_external(kTagKind, &last) != CUPTI_SUCCESS) {
    return absl::InternalError("CUPTI: cuptiActivityPopExternalCorrelationId failed");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<uint64_t, std::vector<KernelRecord>>> CuptiTracer::End() {
  if (!active_) return absl::FailedPreconditionError("CUPTI: End without Begin");
  active_ = false;
  for (CUpti_ActivityKind kind : kKinds) api_->disable(kind);
  if (api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) {
    return absl::InternalError("CUPTI: cuptiActivityFlushAll failed");
  }
  Collected& c = Sink();
  std::lock_guard<std::mutex> lock(c.mu);
  std::map<uint64_t, std::vector<KernelRecord>> out;
  for (auto& [correlation, kernels] : c.kernels) {
    auto tag = c.tag_of.find(correlation);
    if (tag == c.tag_of.end()) continue;
    std::vector<KernelRecord>& dst = out[tag->second];
    dst.insert(dst.end(), kernels.begin(), kernels.end());
  }
  for (auto& [tag, kernels] : out) {
    std::stable_sort(
        kernels.begin(), kernels.end(),
        [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  }
  c.kernels.clear();
  c.tag_of.clear();
  return out;
}

absl::Status CuptiTracer::CheckLoadable(const std::string& path) { return Open(path).status(); }

std::string ShortKernelName(const char* mangled) {
  if (mangled == nullptr) return "?";
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  // "void ns::Kernel<256>(float const*, ...)" -> "Kernel<256>".
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0 && name.compare(i, 21, "(anonymous namespace)") != 0) {
      name.erase(i);
      break;
    }
    if (name.compare(i, 21, "(anonymous namespace)") == 0) i += 20;
  }
  name = absl::StrReplaceAll(
      name, {{"gemmprof::kernels::", ""}, {"gemmprof::", ""}, {"(anonymous namespace)::", ""}});
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  return name;
}

}  // namespace gemmprof::kernels
