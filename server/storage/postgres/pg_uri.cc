#include "server/storage/postgres/pg_uri.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {
namespace {

constexpr std::string_view kExpected = "expected postgresql://USER@HOST:PORT/DB";

absl::Status PasswordRefused() {
  return absl::InvalidArgumentError(
      absl::StrCat("--db: the PostgreSQL URI contains a password; remove it (", AbslSv(kExpected),
                   ") and provide the password through PGPASSFILE or PGPASSWORD"));
}

// True when the user-info part (between "://" and "@") holds "user:password", or the
// query string sets password=. Checked on the raw text, before libpq sees it, so no
// parse error can echo the password.
bool HasPassword(std::string_view uri) {
  std::string_view rest = uri.substr(uri.find("://") + 3);
  // The user-info ends at the last '@' before the query; a password may itself hold '/'.
  const std::string_view before_query = rest.substr(0, rest.find('?'));
  const size_t at = before_query.rfind('@');
  if (at != std::string_view::npos &&
      before_query.substr(0, at).find(':') != std::string_view::npos) {
    return true;
  }
  const size_t query = uri.find('?');
  if (query == std::string_view::npos) return false;
  std::string_view params = uri.substr(query + 1);
  while (!params.empty()) {
    const size_t amp = params.find('&');
    const std::string_view pair = params.substr(0, amp);
    // sslpassword: the passphrase of the client key, a secret as much as password.
    if (pair.starts_with("password=") || pair == "password" || pair.starts_with("sslpassword=")) {
      return true;
    }
    params = amp == std::string_view::npos ? std::string_view() : params.substr(amp + 1);
  }
  return false;
}

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

}  // namespace

absl::StatusOr<PgTarget> ParsePgUri(std::string_view uri) {
  if (HasPassword(uri)) return PasswordRefused();
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
      PQconninfoParse(std::string(uri).c_str(), &error), PQconninfoFree);
  if (options == nullptr) {
    std::string reason = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    return absl::InvalidArgumentError(absl::StrCat("--db: '", AbslSv(uri),
                                                   "' is not a valid PostgreSQL URI (",
                                                   AbslSv(kExpected), "): ", reason));
  }
  std::string host, port, database;
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    const std::string_view key = o->keyword;
    if (o->val == nullptr) continue;
    // libpq marks its secret options ("password", "sslpassword") with dispchar '*'.
    if (o->dispchar != nullptr && o->dispchar[0] == '*' && *o->val != '\0') {
      return PasswordRefused();
    }
    if (key == "host" || (key == "hostaddr" && host.empty())) host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") database = o->val;
  }
  PgTarget target;
  target.uri = std::string(uri);
  target.endpoint = absl::StrCat(host.empty() ? EnvOr("PGHOST", "localhost") : host, ":",
                                 port.empty() ? EnvOr("PGPORT", "5432") : port);
  target.database = database;
  return target;
}

}  // namespace gemmprof::storage
