#include "server/security/access_control.h"

#include <array>
#include <utility>

namespace gemmprof::security {
namespace {

constexpr char kNoToken[] = "no token: this gemmprofd requires one (authorization: Bearer <token>)";
constexpr char kMalformed[] =
    "malformed authorization header: expected 'Bearer <token>' with a token of 1 to 1024 "
    "visible ASCII characters";

struct MethodRole {
  std::string_view method;
  Role role;
};

constexpr std::array<MethodRole, 11> kMethodRoles{{
    {"ListJobs", Role::kRead},
    {"GetJob", Role::kRead},
    {"WatchJob", Role::kRead},
    {"GetReport", Role::kRead},
    {"QueryResults", Role::kRead},
    {"StreamResults", Role::kRead},
    {"ListDevices", Role::kRead},
    {"ListDaemons", Role::kRead},
    {"PlanJob", Role::kRead},
    {"SubmitJob", Role::kSubmit},
    {"CancelJob", Role::kSubmit},
}};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string_view> BearerToken(const std::vector<std::string_view>& values) {
  if (values.empty()) return absl::UnauthenticatedError(kNoToken);
  if (values.size() > 1) {
    return absl::UnauthenticatedError(
        "several authorization headers: send exactly one (authorization: Bearer <token>)");
  }
  const std::string_view v = values.front();
  constexpr std::string_view kScheme = "bearer";
  if (v.size() <= kScheme.size() || !EqualsIgnoreCase(v.substr(0, kScheme.size()), kScheme) ||
      v[kScheme.size()] != ' ') {
    return absl::UnauthenticatedError(kMalformed);
  }
  std::string_view token = v.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  if (token.empty() || token.size() > kMaxTokenLength) {
    return absl::UnauthenticatedError(kMalformed);
  }
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) return absl::UnauthenticatedError(kMalformed);
  }
  return token;
}

Role RequiredRole(std::string_view method) {
  for (const MethodRole& m : kMethodRoles) {
    if (m.method == method) return m.role;
  }
  return Role::kAdmin;
}

absl::StatusOr<std::unique_ptr<AccessControl>> AccessControl::FromFile(std::string path) {
  if (path.empty()) return absl::InvalidArgumentError("--tokens: empty path");
  ASSIGN_OR_RETURN(TokenTable table, TokenTable::Load(path));
  auto ac = std::make_unique<AccessControl>();
  ac->path_ = std::move(path);
  ac->table_ = std::make_shared<const TokenTable>(std::move(table));
  return ac;
}

absl::StatusOr<Caller> AccessControl::Authorize(const std::vector<std::string_view>& authorization,
                                                std::string_view method) const {
  if (!enabled()) return Caller{};
  ASSIGN_OR_RETURN(std::string_view token, BearerToken(authorization));
  std::shared_ptr<const TokenTable> table;
  {
    std::lock_guard lock(mu_);
    table = table_;
  }
  const TokenEntry* entry = table->Find(token);
  if (entry == nullptr) return absl::UnauthenticatedError("unknown token");
  const Role needed = RequiredRole(method);
  if (entry->role < needed) {
    return absl::PermissionDeniedError(
        "token '" + entry->name + "' has role " + std::string(ToString(entry->role)) + "; " +
        std::string(method) + " needs role " + std::string(ToString(needed)));
  }
  return Caller{entry->name, entry->role};
}

absl::StatusOr<std::string> AccessControl::Reload() {
  if (!enabled()) return Summary();
  ASSIGN_OR_RETURN(TokenTable table, TokenTable::Load(path_));
  auto fresh = std::make_shared<const TokenTable>(std::move(table));
  std::lock_guard lock(mu_);
  table_ = std::move(fresh);
  return table_->Summary();
}

std::string AccessControl::Summary() const {
  if (!enabled()) return "no tokens file";
  std::lock_guard lock(mu_);
  return table_->Summary();
}

absl::Status CheckCanCancel(const Caller& caller, int64_t job_id, const std::string& owner) {
  if (caller.role == Role::kAdmin || caller.name.empty() || caller.name == owner) {
    return absl::OkStatus();
  }
  const std::string whose = owner.empty() ? "has no recorded submitter (it predates tokens)"
                                          : "was submitted by '" + owner + "'";
  return absl::PermissionDeniedError(
      "job " + std::to_string(job_id) + " " + whose + "; token '" + caller.name + "' has role " +
      std::string(ToString(caller.role)) + " and may cancel only its own jobs (admin cancels any)");
}

}  // namespace gemmprof::security
