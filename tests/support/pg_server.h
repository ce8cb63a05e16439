// A throwaway PostgreSQL 15 server for tests: initdb into a temporary directory, listen
// on 127.0.0.1 at a free port (unix socket in the same directory), removed afterwards.
// When the test runs as root the server runs as `nobody` (initdb refuses root).
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace gemmprof::testing {

class PgServer {
 public:
  // initdb + start. Errors: FailedPrecondition naming what is missing when the
  // PostgreSQL 15 server binaries are not installed ($GEMMPROF_PG_BIN overrides
  // /usr/lib/postgresql/15/bin); Internal with the server log's tail otherwise.
  static absl::StatusOr<std::unique_ptr<PgServer>> Start();
  // One server for the whole test binary, started on first use and removed at exit.
  // Tests FAIL (never skip) when it cannot start.
  static absl::StatusOr<PgServer*> Shared();

  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;
  ~PgServer();  // stops the server and removes its directory

  // Stops / starts the same server again (same data, same port), to test reconnects.
  absl::Status Stop();
  absl::Status Restart();

  // Creates an empty database and returns its URI postgresql://USER@127.0.0.1:PORT/NAME.
  absl::StatusOr<std::string> NewDatabase();
  std::string Uri(const std::string& database) const;
  int port() const { return port_; }

 private:
  PgServer() = default;
  absl::Status Run(const std::string& command) const;

  std::string bin_;
  std::string dir_;
  int port_ = 0;
  bool as_nobody_ = false;
  bool running_ = false;
  int databases_ = 0;
};

}  // namespace gemmprof::testing
