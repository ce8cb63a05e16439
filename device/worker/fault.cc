#include "device/worker/fault.h"

#include <charconv>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gemmprof::worker {
namespace {

constexpr char kForms[] =
    "exit-at-start, hang@SEQ, crash@SEQ, kill@SEQ, exit@SEQ, illegal-address@SEQ, "
    "context-lost@SEQ, refuse@SEQ";

constexpr std::pair<absl::string_view, WorkerFault::Kind> kPerItem[] = {
    {"hang", WorkerFault::Kind::kHang},
    {"crash", WorkerFault::Kind::kCrash},
    {"kill", WorkerFault::Kind::kKill},
    {"exit", WorkerFault::Kind::kExit},
    {"illegal-address", WorkerFault::Kind::kIllegalAddress},
    {"context-lost", WorkerFault::Kind::kContextLost},
    {"refuse", WorkerFault::Kind::kRefuse},
};

absl::Status Bad(absl::string_view entry, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(kFaultEnvVar, ": '", entry, "' ", why, " (valid: ", kForms, ")"));
}

absl::StatusOr<WorkerFault> ParseOne(absl::string_view entry) {
  if (entry == "exit-at-start") return WorkerFault{WorkerFault::Kind::kExitAtStart, -1};
  const size_t at = entry.find('@');
  if (at == absl::string_view::npos) return Bad(entry, "is not a fault");
  const absl::string_view name = entry.substr(0, at), seq_text = entry.substr(at + 1);
  int32_t seq = -1;
  const auto [end, ec] = std::from_chars(seq_text.data(), seq_text.data() + seq_text.size(), seq);
  if (ec != std::errc() || end != seq_text.data() + seq_text.size() || seq < 0) {
    return Bad(entry, "needs an item seq >= 0 after '@'");
  }
  for (const auto& [known, kind] : kPerItem) {
    if (name == known) return WorkerFault{kind, seq};
  }
  return Bad(entry, "is not a fault");
}

}  // namespace

absl::StatusOr<std::vector<WorkerFault>> ParseWorkerFaults(const std::string& spec) {
  std::vector<WorkerFault> faults;
  for (absl::string_view entry : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(WorkerFault f, ParseOne(absl::StripAsciiWhitespace(entry)));
    faults.push_back(f);
  }
  return faults;
}

std::optional<WorkerFault> FaultForItem(const std::vector<WorkerFault>& faults, int32_t seq) {
  for (const WorkerFault& f : faults) {
    if (f.kind != WorkerFault::Kind::kExitAtStart && f.seq == seq) return f;
  }
  return std::nullopt;
}

std::optional<WorkerFault> FaultForGroup(const std::vector<WorkerFault>& faults,
                                         const std::vector<int32_t>& seqs) {
  for (int32_t seq : seqs) {
    for (const WorkerFault& f : faults) {
      if (f.seq == seq && f.kind != WorkerFault::Kind::kExitAtStart &&
          f.kind != WorkerFault::Kind::kRefuse) {
        return f;
      }
    }
  }
  return std::nullopt;
}

bool Refuses(const std::vector<WorkerFault>& faults, int32_t seq) {
  for (const WorkerFault& f : faults) {
    if (f.kind == WorkerFault::Kind::kRefuse && f.seq == seq) return true;
  }
  return false;
}

bool ExitsAtStart(const std::vector<WorkerFault>& faults) {
  for (const WorkerFault& f : faults) {
    if (f.kind == WorkerFault::Kind::kExitAtStart) return true;
  }
  return false;
}

}  // namespace gemmprof::worker
