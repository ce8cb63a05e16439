// A libpq connection that reconnects by itself: results, parameters, transactions and
// the mapping of PostgreSQL failures to absl::Status.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"
#include "server/storage/postgres/pg_uri.h"
#include "server/storage/row_view.h"

struct pg_conn;
struct pg_result;

namespace gemmprof::storage {

// A query parameter: NULL, bigint, double precision or text.
using PgParam = std::variant<std::monostate, int64_t, double, std::string>;

// The rows of one query, freed on destruction.
class PgResult {
 public:
  explicit PgResult(pg_result* result);
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  ~PgResult();

  int Rows() const;
  // Rows affected by an INSERT / UPDATE / DELETE.
  int64_t Affected() const;
  class Row : public RowView {
   public:
    Row(const pg_result* result, int row) : result_(result), row_(row) {}
    bool IsNull(int column) const override;
    int64_t Int64(int column) const override;
    std::string Text(int column) const override;

   private:
    const pg_result* result_;
    int row_;
  };
  Row At(int row) const { return Row(result_, row); }

 private:
  pg_result* result_ = nullptr;
};

// One connection to one database. Not thread-safe (PgStore serializes calls).
//
// When the server goes away, the statement that notices fails with Unavailable ("the
// call can be retried") and the connection is dropped; the next Exec connects again.
class PgConnection {
 public:
  // Connects now. Errors: Unavailable naming HOST:PORT when the server cannot be
  // reached or refuses the login.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Open(PgTarget target);
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection();

  // Runs one statement; `sql` uses ? placeholders (replaced by $1, $2, ... here).
  // Errors: Unavailable when the connection is lost, Aborted for serialization failures
  // and deadlocks, AlreadyExists for unique violations, Internal otherwise.
  absl::StatusOr<PgResult> Exec(std::string_view sql, const std::vector<PgParam>& params = {});

  // Starts counting statements for one store call; see LostOnFirstStatement.
  void BeginCall() {
    statements_in_call_ = 0;
    lost_on_first_ = false;
  }
  // Whether the connection was found dead by the first statement of this call, so the
  // server never saw it and the call may be run again on a new connection.
  bool LostOnFirstStatement() const { return lost_on_first_; }

  const PgTarget& target() const { return target_; }
  bool connected() const { return conn_ != nullptr; }

  // Runs after every reconnect, before the call's own statement (session state such as
  // advisory locks dies with a connection). Its error fails that call and drops the
  // connection again.
  void SetOnConnect(std::function<absl::Status(PgConnection&)> on_connect) {
    on_connect_ = std::move(on_connect);
  }

 private:
  explicit PgConnection(PgTarget target) : target_(std::move(target)) {}
  absl::Status Connect();
  absl::Status ConnectionLost(std::string_view reason);

  PgTarget target_;
  pg_conn* conn_ = nullptr;
  int statements_in_call_ = 0;
  bool lost_on_first_ = false;
  std::function<absl::Status(PgConnection&)> on_connect_;
};

// ? placeholders to $1, $2, ...; ?s inside quoted literals stay. Exposed for tests.
std::string NumberPlaceholders(std::string_view sql);

// BEGIN on construction; ROLLBACK on destruction unless Commit succeeded.
class PgTransaction {
 public:
  static absl::StatusOr<PgTransaction> Begin(PgConnection& conn);
  PgTransaction(PgTransaction&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  PgTransaction& operator=(PgTransaction&&) = delete;
  ~PgTransaction();
  absl::Status Commit();

 private:
  explicit PgTransaction(PgConnection* conn) : conn_(conn) {}
  PgConnection* conn_;
};

}  // namespace gemmprof::storage
