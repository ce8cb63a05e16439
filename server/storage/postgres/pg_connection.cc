#include "server/storage/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {
namespace {

// Type oids (pg_type.h) so PostgreSQL need not guess a parameter's type.
constexpr Oid kInt8Oid = 20;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kTextOid = 25;

std::string FirstLine(std::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// SQLSTATE classes that mean the connection or the server went away.
bool IsConnectionState(std::string_view state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

struct EncodedParams {
  std::vector<Oid> types;
  std::vector<std::string> text;
  std::vector<const char*> values;
};

EncodedParams Encode(const std::vector<PgParam>& params) {
  EncodedParams out;
  out.types.reserve(params.size());
  out.text.reserve(params.size());
  for (const PgParam& p : params) {
    if (const auto* i = std::get_if<int64_t>(&p)) {
      out.types.push_back(kInt8Oid);
      out.text.push_back(absl::StrCat(*i));
    } else if (const auto* d = std::get_if<double>(&p)) {
      out.types.push_back(kFloat8Oid);
      // Every digit a double has (StrCat keeps six): SQLite's REAL keeps them too.
      out.text.push_back(absl::StrFormat("%.17g", *d));
    } else if (const auto* s = std::get_if<std::string>(&p)) {
      out.types.push_back(kTextOid);
      out.text.push_back(*s);
    } else {
      out.types.push_back(0);
      out.text.emplace_back();
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    out.values.push_back(std::holds_alternative<std::monostate>(params[i]) ? nullptr
                                                                           : out.text[i].c_str());
  }
  return out;
}

}  // namespace

std::string NumberPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 1;
  char quote = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      absl::StrAppend(&out, "$", next++);
      continue;
    }
    out.push_back(c);
  }
  return out;
}

PgResult::PgResult(pg_result* result) : result_(result) {}
PgResult::PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}
PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}
int PgResult::Rows() const { return PQntuples(result_); }
int64_t PgResult::Affected() const { return std::strtoll(PQcmdTuples(result_), nullptr, 10); }

bool PgResult::Row::IsNull(int column) const { return PQgetisnull(result_, row_, column) != 0; }
int64_t PgResult::Row::Int64(int column) const {
  return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10);
}
std::string PgResult::Row::Text(int column) const {
  return std::string(PQgetvalue(result_, row_, column),
                     static_cast<size_t>(PQgetlength(result_, row_, column)));
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Open(PgTarget target) {
  std::unique_ptr<PgConnection> conn(new PgConnection(std::move(target)));
  RETURN_IF_ERROR(conn->Connect());
  return conn;
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::Connect() {
  if (conn_ != nullptr) PQfinish(conn_);
  // Keywords before the URI are defaults that the URI's own parameters override.
  // TCP keepalives and a user timeout: a database host that vanishes without a reset
  // (a network partition) fails the call in about 30 s, not the kernel's 15 minutes.
  const char* keys[] = {"connect_timeout",
                        "application_name",
                        "keepalives",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "tcp_user_timeout",
                        "dbname",
                        nullptr};
  const char* values[] = {"5",     "gemmprofd",         "1",    "10", "5", "3",
                          "30000", target_.uri.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn_ == nullptr) return ConnectionLost("out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) return ConnectionLost(PQerrorMessage(conn_));
  // NOTICEs (e.g. "already exists, skipping" from the migration) would go to stderr.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  return absl::OkStatus();
}

absl::Status PgConnection::ConnectionLost(std::string_view reason_view) {
  // `reason` often points into the connection's own error buffer, which PQfinish frees.
  const std::string reason(reason_view);
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  return absl::UnavailableError(absl::StrCat("PostgreSQL at ", target_.endpoint,
                                             " is unreachable: ", FirstLine(reason),
                                             "; the call can be retried"));
}

absl::StatusOr<PgResult> PgConnection::Exec(std::string_view sql,
                                            const std::vector<PgParam>& params) {
  const bool first = statements_in_call_++ == 0;
  if (conn_ == nullptr) {
    RETURN_IF_ERROR(Connect());
    if (on_connect_) {
      // Its statements are not the call's first (LostOnFirstStatement).
      const int saved = statements_in_call_;
      statements_in_call_ = 1;
      absl::Status claimed = on_connect_(*this);
      statements_in_call_ = saved;
      if (!claimed.ok()) {
        if (conn_ != nullptr) PQfinish(conn_);
        conn_ = nullptr;
        return claimed;
      }
    }
  }
  const std::string text = NumberPlaceholders(sql);
  EncodedParams encoded = Encode(params);
  // Without parameters PQexec runs scripts of several statements (migrations).
  pg_result* raw =
      params.empty()
          ? PQexec(conn_, text.c_str())
          : PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), encoded.types.data(),
                         encoded.values.data(), nullptr, nullptr, 0);
  PgResult owned(raw);
  const ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return owned;
  const char* state_field = raw != nullptr ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const std::string state = state_field != nullptr ? state_field : "";
  const std::string message =
      FirstLine(raw != nullptr ? PQresultErrorMessage(raw) : PQerrorMessage(conn_));
  if (PQstatus(conn_) != CONNECTION_OK || IsConnectionState(state)) {
    lost_on_first_ = first;
    return ConnectionLost(message.empty() ? PQerrorMessage(conn_) : message);
  }
  const std::string what = absl::StrCat("PostgreSQL (", state, "): ", message, " in: ", text);
  if (state == "40001" || state == "40P01") return absl::AbortedError(what);
  if (state == "23505") return absl::AlreadyExistsError(what);
  return absl::InternalError(what);
}

absl::StatusOr<PgTransaction> PgTransaction::Begin(PgConnection& conn) {
  RETURN_IF_ERROR(conn.Exec("BEGIN").status());
  return PgTransaction(&conn);
}

PgTransaction::~PgTransaction() {
  // A lost connection already ended the transaction on the server's side.
  if (conn_ != nullptr && conn_->connected()) conn_->Exec("ROLLBACK").IgnoreError();
}

absl::Status PgTransaction::Commit() {
  PgConnection* conn = conn_;
  conn_ = nullptr;
  return conn->Exec("COMMIT").status();
}

}  // namespace gemmprof::storage
