#include "device/worker/fault.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gemmprof::worker {
namespace {

constexpr char kForms[] =
    "exit-at-start[:N], hang@SEQ, crash@SEQ, kill@SEQ, exit@SEQ, illegal-address@SEQ, "
    "context-lost@SEQ, refuse@SEQ, each @SEQ form with an optional :once";

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

// A whole non-negative number, or nullopt.
std::optional<int32_t> ParseCount(absl::string_view text) {
  int32_t n = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0) return std::nullopt;
  return n;
}

absl::StatusOr<WorkerFault> ParseOne(absl::string_view entry) {
  constexpr absl::string_view kExitAtStart = "exit-at-start";
  if (entry == kExitAtStart) return WorkerFault{WorkerFault::Kind::kExitAtStart, -1};
  if (absl::ConsumePrefix(&entry, "exit-at-start:")) {
    const std::optional<int32_t> n = ParseCount(entry);
    if (!n || *n < 1) return Bad(absl::StrCat("exit-at-start:", entry), "needs a count >= 1");
    WorkerFault f{WorkerFault::Kind::kExitAtStart, -1};
    f.starts = *n;
    return f;
  }
  const absl::string_view whole = entry;
  const bool once = absl::ConsumeSuffix(&entry, ":once");
  const size_t at = entry.find('@');
  if (at == absl::string_view::npos) return Bad(whole, "is not a fault");
  const absl::string_view name = entry.substr(0, at);
  const std::optional<int32_t> seq = ParseCount(entry.substr(at + 1));
  if (!seq) return Bad(whole, "needs an item seq >= 0 after '@' (then :once or nothing)");
  for (const auto& [known, kind] : kPerItem) {
    if (name != known) continue;
    WorkerFault f{kind, *seq};
    f.once = once;
    return f;
  }
  return Bad(whole, "is not a fault");
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

bool ExitsAtStart(const std::vector<WorkerFault>& faults, int64_t start) {
  for (const WorkerFault& f : faults) {
    if (f.kind == WorkerFault::Kind::kExitAtStart && (f.starts == 0 || start <= f.starts)) {
      return true;
    }
  }
  return false;
}

std::string WorkerFault::ToString() const {
  if (kind == Kind::kExitAtStart) {
    return starts > 0 ? absl::StrCat("exit-at-start:", starts) : "exit-at-start";
  }
  for (const auto& [name, k] : kPerItem) {
    if (k == kind) return absl::StrCat(name, "@", seq, once ? ":once" : "");
  }
  return "?";
}

bool ClaimFault(const WorkerFault& fault, const std::string& state_dir, int64_t daemon_pid) {
  if (!fault.once) return true;
  const std::string marker =
      absl::StrCat(state_dir, "/gemmprof-fault-", daemon_pid, "-", fault.ToString());
  const int fd = open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;  // fired before (EEXIST), or no marker can be made
  close(fd);
  return true;
}

}  // namespace gemmprof::worker
