#include "tests/support/pg_server.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gemmprof::testing {
namespace {

constexpr char kUser[] = "gemmprof";
constexpr uid_t kNobody = 65534;

// A port the kernel just handed out on loopback; free unless someone races for it.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::Start() {
  std::unique_ptr<PgServer> server(new PgServer());
  const char* bin = std::getenv("GEMMPROF_PG_BIN");
  server->bin_ = bin != nullptr ? bin : "/usr/lib/postgresql/15/bin";
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    if (access((server->bin_ + "/" + tool).c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "PostgreSQL 15 server binary ", server->bin_, "/", tool,
          " not found: install postgresql-15 (deploy/install_deps.sh) or set GEMMPROF_PG_BIN"));
    }
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "gemmprof_pg_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  server->dir_ = pattern;
  server->as_nobody_ = geteuid() == 0;
  if (server->as_nobody_ && chown(server->dir_.c_str(), kNobody, kNobody) != 0) {
    return absl::InternalError(absl::StrCat("chown nobody ", server->dir_, " failed"));
  }
  server->port_ = FreePort();
  RETURN_IF_ERROR(server->Run(absl::StrCat(server->bin_, "/initdb -D ", server->dir_, "/data -U ",
                                           kUser, " --auth=trust -E UTF8 --no-sync > ",
                                           server->dir_, "/initdb.log 2>&1")));
  RETURN_IF_ERROR(server->Restart());
  return server;
}

absl::StatusOr<PgServer*> PgServer::Shared() {
  static absl::StatusOr<std::unique_ptr<PgServer>>* shared = [] {
    auto* s = new absl::StatusOr<std::unique_ptr<PgServer>>(Start());
    // Removed at exit even when a test fails.
    std::atexit([] {
      if (shared->ok()) shared->value().reset();
    });
    return s;
  }();
  if (!shared->ok()) return shared->status();
  return shared->value().get();
}

PgServer::~PgServer() {
  if (running_) Stop().IgnoreError();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

absl::Status PgServer::Run(const std::string& command) const {
  const std::string full =
      as_nobody_ ? absl::StrCat("runuser -u nobody -- sh -c '", command, "'") : command;
  const int rc = std::system(full.c_str());
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("'", command, "' exited with ", rc,
                                            "; log: ", Tail(dir_ + "/initdb.log"),
                                            Tail(dir_ + "/server.log")));
  }
  return absl::OkStatus();
}

absl::Status PgServer::Stop() {
  RETURN_IF_ERROR(
      Run(absl::StrCat(bin_, "/pg_ctl -D ", dir_, "/data -m fast -w stop > /dev/null")));
  running_ = false;
  return absl::OkStatus();
}

absl::Status PgServer::Restart() {
  // fsync off: a test server need not survive a power loss, and it makes CREATE
  // DATABASE and commits fast.
  RETURN_IF_ERROR(Run(absl::StrCat(
      bin_, "/pg_ctl -D ", dir_, "/data -l ", dir_, "/server.log -w -t 60 -o \"-p ", port_,
      " -h 127.0.0.1 -k ", dir_, " -c fsync=off -c full_page_writes=off\" start > /dev/null")));
  running_ = true;
  return absl::OkStatus();
}

std::string PgServer::Uri(const std::string& database) const {
  return absl::StrCat("postgresql://", kUser, "@127.0.0.1:", port_, "/", database);
}

absl::StatusOr<std::string> PgServer::NewDatabase() {
  const std::string name = absl::StrCat("test_", ++databases_);
  PGconn* conn = PQconnectdb(Uri("postgres").c_str());
  std::string error;
  if (PQstatus(conn) != CONNECTION_OK) {
    error = PQerrorMessage(conn);
  } else {
    PGresult* result =
        PQexec(conn, absl::StrCat("CREATE DATABASE ", name, " STRATEGY FILE_COPY").c_str());
    if (PQresultStatus(result) != PGRES_COMMAND_OK) error = PQresultErrorMessage(result);
    PQclear(result);
  }
  PQfinish(conn);
  if (!error.empty()) return absl::InternalError(absl::StrCat("CREATE DATABASE: ", error));
  return Uri(name);
}

}  // namespace gemmprof::testing
