// Checks a PostgreSQL connection URI (gemmprofd --db postgresql://USER@HOST:PORT/DB)
// before any connection is attempted.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::storage {

// A validated URI and the names errors use for the server.
struct PgTarget {
  std::string uri;       // as given (it carries no password)
  std::string endpoint;  // "HOST:PORT" for messages
  std::string database;
};

// Errors: InvalidArgument, one line, when the URI holds a password (which must come from
// PGPASSFILE / PGPASSWORD; the message never repeats it) or libpq cannot parse it.
absl::StatusOr<PgTarget> ParsePgUri(std::string_view uri);

}  // namespace gemmprof::storage
