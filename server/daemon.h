// gemmprofd: flags, logging, signals and the wiring of store, runners, queue and
// server. main.cc only calls into here.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace gemmprof::daemon {

struct Options {
  std::string listen = "127.0.0.1:50051";
  std::string db = "gemmprof.db";  // SQLite path or postgresql:// URI
  std::string node;                // empty: the host name
  std::string backend = "auto";    // auto | cuda | host
  std::string log_level = "info";
  std::string log_file;   // empty: stderr
  std::string port_file;  // written with the bound port once serving
  // HTTP: /metrics, the JSON API and the dashboard page (server/http/); empty: off.
  std::string http;            // host:port, port 0 picks one
  std::string http_port_file;  // written with the bound HTTP port once serving
  double shutdown_grace_s = 5;
  // Security: TLS (reloaded on SIGHUP), plaintext on the network only with --insecure,
  // bearer tokens with roles (reloaded on SIGHUP).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;  // set: client certificates required (mTLS)
  bool insecure = false;
  std::string tokens;  // NAME ROLE SHA256HEX per line; empty: every call allowed
  // Limits.
  int64_t max_queued_jobs = 1000;  // queued + running
  int64_t max_items_per_job = 100000;
  int batch_groups = 6;  // measurement groups timed in one set of rounds (queue::PackBatches)
  int max_watches_per_client = 32;  // per token name, or per peer host without tokens
  int host_devices = 1;             // --backend host: emulated devices, one worker each
  double item_timeout_s = 0;        // 0: derived from each item (device/worker/item_deadline.h)
  // --host-model: the host backend's device name (a test hook for fleets of models).
  std::string host_model;
  // The cluster queue (a PostgreSQL store): a claimed batch's lease, in seconds.
  double lease_seconds = 30;
  // --drain-after: seconds after which the daemon drains and exits (0: never).
  double drain_after_s = 0;
  // --drain: instead of serving, ask the daemon of --node on --db to drain, and wait
  // until it has stopped.
  bool drain = false;
  // Worker mode (hidden flags): the daemon re-executes itself with these to host one
  // device's runner; see device/worker/.
  int worker_fd = -1;
  int worker_query_fd = -1;
  int device = 0;
};

// Parses argv. Returns -1 to go on, otherwise the exit code (0 after --help).
int ParseFlags(int argc, char** argv, Options* options);

// Runs until SIGTERM or SIGINT; SIGHUP reloads the TLS files and the tokens file.
// Returns the process exit code.
int Run(const Options& options);

}  // namespace gemmprof::daemon
