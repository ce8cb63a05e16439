#include "server/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "device/discovery.h"
#include "device/worker/item_deadline.h"
#include "device/worker/remote_runner.h"
#include "device/worker/worker_main.h"
#include "server/api/server.h"
#include "server/http/http_server.h"
#include "server/metrics/daemon_metrics.h"
#include "server/queue/daemon_heartbeat.h"
#include "server/queue/job_queue.h"
#include "server/security/daemon_security.h"
#include "server/security/listen_policy.h"
#include "server/security/watch_limiter.h"
#include "server/storage/open_store.h"
#ifdef GEMMPROF_HAVE_CUDA
#include "kernels/runner/cuda_runner_factory.h"
#endif

namespace gemmprof::daemon {
namespace {

constexpr char kFooter[] = R"(
Examples:
  gemmprofd --listen 0.0.0.0:50051 --db /var/lib/gemmprof/results.db
  gemmprofd --listen 127.0.0.1:0 --port-file /tmp/gemmprofd.port --backend host
  gemmprofd --db postgresql://gemmprof@db-host:5432/gemmprof --node gpu-node-7
  gemmprofd --listen 0.0.0.0:50051 --tls-cert server.pem --tls-key server.key \
            --tokens /etc/gemmprof/tokens
  gemmprofd --listen 127.0.0.1:50051 --http 127.0.0.1:9464
      curl -s localhost:9464/metrics                      Prometheus text (gemmprof_*)
      curl -s localhost:9464/api/v1/jobs?state=running    jobs as JSON (state, node, campaign,
                                                          page_size, page_token)
      curl -s localhost:9464/api/v1/jobs/42/report        = gemmprof report 42 --format json
      curl -s localhost:9464/api/v1/jobs/42/report.csv    = gemmprof report 42 --format csv
      curl -s 'localhost:9464/api/v1/history?recipe=fp8-block&shape=4096x4096x4096&since=7d'
                                                          stored results (also device, node, pass,
                                                          mode, job, until, page_size, page_token)
      curl -s 'localhost:9464/api/v1/history.csv?since=7d'  the same as CSV (next page's token in
                                                          the X-Next-Page-Token header)
      open http://localhost:9464/#job=42                  the dashboard page (no external assets;
                                                          #campaign=C: a campaign's devices)

Backends: 'cuda' measures on every visible GPU (one worker each); 'host' is the CPU
reference runner (numerics emulated, labeled host-reference, never a GPU figure);
'auto' takes cuda when a GPU is present, host otherwise. Each device's runner lives in a
worker process of its own: a crash, CUDA fault or hang there costs the batch in flight,
which is measured again on the restarted worker (submit --retries); a fault that comes
back fails only the GEMM that brings it. A measurement that makes no progress for 10 s
(or 20x its slowest round) is a hang; --item-timeout bounds an item.
Jobs and results live in the SQLite file given by --db, or in a PostgreSQL database
(--db postgresql://USER@HOST:PORT/DB, password from PGPASSFILE/PGPASSWORD) that daemons
of many nodes share: results measured on any node answer the cache, each daemon runs
(and resumes after a restart) the jobs it accepted. A job spreads over every idle GPU of
its model (gemmprof submit --devices pins). SIGTERM/SIGINT stop it cleanly.
Listening on anything but loopback needs TLS (--tls-cert, --tls-key) or --insecure.
A tokens file holds one 'NAME ROLE SHA256HEX' per line: roles read, submit, admin; the
digest is the token's SHA-256 in hex (printf %s "$TOKEN" | sha256sum). Clients send
'authorization: Bearer <token>'. SIGHUP rereads the certificate, key, client CA and
tokens file; running jobs and open calls go on.
--http follows the same security: HTTPS with --tls-cert/--tls-key (read once at start:
SIGHUP reloads them for gRPC only), 'Authorization: Bearer <token>' (role read) on
/metrics and /api/ when --tokens is set (the page at / is static and asks for the token),
and a non-loopback --http needs TLS or --insecure.)";

absl::Status SetUpLogging(const Options& o, const std::string& name) {
  auto level = spdlog::level::from_str(o.log_level);
  if (level == spdlog::level::off && o.log_level != "off") {
    return absl::InvalidArgumentError("--log-level: unknown value '" + o.log_level +
                                      "' (valid: trace, debug, info, warn, error, critical, off)");
  }
  std::shared_ptr<spdlog::logger> logger;
  if (o.log_file.empty()) {
    logger = spdlog::stderr_color_mt(name);
  } else {
    try {
      logger = spdlog::basic_logger_mt(name, o.log_file);
    } catch (const spdlog::spdlog_ex& e) {
      return absl::InvalidArgumentError("--log-file: cannot open '" + o.log_file +
                                        "': " + e.what());
    }
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

// The CUDA runner's entry points in a CUDA build; none otherwise.
device::CudaBackend Cuda() {
#ifdef GEMMPROF_HAVE_CUDA
  return kernels::CudaEntryPoints();
#else
  return {};
#endif
}

device::DiscoveryOptions DiscoveryOf(const Options& o) {
  device::DiscoveryOptions d;
  d.backend = o.backend;
  d.host_devices = o.host_devices;
  d.item_timeout_s = o.item_timeout_s;
  d.worker_args = {"--log-level", o.log_level};
  if (!o.host_model.empty())
    d.worker_args.insert(d.worker_args.end(), {"--host-model", o.host_model});
  if (!o.log_file.empty()) d.worker_args.insert(d.worker_args.end(), {"--log-file", o.log_file});
  return d;
}

// Worker mode: this process hosts one device's runner for the daemon that started it.
int RunWorkerMode(const Options& o) {
  return worker::RunWorker(o.worker_fd, o.worker_query_fd,
                           device::WorkerHooksFor(o.backend, o.device, Cuda(), o.host_model));
}

// Holds an exclusive flock on "<db>.lock" for the daemon's lifetime: two daemons on one
// database would both recover and run the same unfinished jobs.
class DatabaseLock {
 public:
  static absl::StatusOr<DatabaseLock> Acquire(const std::string& db) {
    DatabaseLock lock;
    // A shared PostgreSQL store is meant for many daemons: each owns its node's jobs.
    if (db == ":memory:" || storage::IsPostgresUri(db)) return lock;
    const std::string path = db + ".lock";
    lock.fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock.fd_ < 0) {
      return absl::InvalidArgumentError("--db: cannot create '" + path + "': " + strerror(errno));
    }
    if (flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
      return absl::FailedPreconditionError("--db: '" + db +
                                           "' is in use by another gemmprofd (lock " + path + ")");
    }
    return lock;
  }
  DatabaseLock(DatabaseLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  DatabaseLock& operator=(DatabaseLock&&) = delete;
  ~DatabaseLock() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  DatabaseLock() = default;
  int fd_ = -1;
};

// Blocks SIGINT/SIGTERM/SIGHUP/SIGUSR1 in every thread created after this call, so sigwait
// sees them.
sigset_t BlockDaemonSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// --node: 1..64 of [A-Za-z0-9._-], default the host name.
absl::Status ResolveNode(std::string* node) {
  if (node->empty()) {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
      return absl::FailedPreconditionError("--node: the host name cannot be read; give --node");
    }
    // The whole name: gpu1.rack-a and gpu1.rack-b are two nodes.
    *node = buf;
  }
  constexpr size_t kMaxNode = 64;
  if (node->size() > kMaxNode) {
    return absl::InvalidArgumentError("--node: '" + *node + "' is longer than " +
                                      std::to_string(kMaxNode) + " characters");
  }
  for (char c : *node) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError("--node: '" + *node +
                                        "' may hold only letters, digits, '.', '_' and '-'");
    }
  }
  return absl::OkStatus();
}

security::SecurityOptions SecurityOptionsOf(const Options& o) {
  return {o.listen, {o.tls_cert, o.tls_key, o.tls_client_ca}, o.insecure, o.tokens};
}

absl::Status WritePortFile(const std::string& flag, const std::string& path, int port) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream out(path);
  out << port << "\n";
  if (!out.flush()) return absl::InvalidArgumentError(flag + ": cannot write '" + path + "'");
  return absl::OkStatus();
}

// --http: the address parses and plaintext stays on loopback unless --insecure.
absl::Status CheckHttpFlags(const Options& o) {
  if (o.http.empty()) {
    if (!o.http_port_file.empty()) {
      return absl::InvalidArgumentError("--http-port-file needs --http");
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(http::ParseHttpAddress(o.http).status());
  if (o.tls_cert.empty() && !o.insecure && !security::IsLoopbackListen(o.http)) {
    return absl::FailedPreconditionError(
        "--http " + o.http +
        ": not a loopback address, and TLS is off; give --tls-cert and --tls-key (HTTPS "
        "then uses them too), or --insecure to serve plaintext to the network anyway");
  }
  return absl::OkStatus();
}

// The /metrics sources: the queue, each device's worker counters and the telemetry.
metrics::MetricSources MetricSourcesOf(
    const queue::JobQueue& queue, const std::vector<std::unique_ptr<worker::RemoteRunner>>& runners,
    device::DeviceTelemetry* telemetry) {
  metrics::MetricSources sources;
  sources.queue_counts = [&queue] { return queue.Counts(); };
  sources.cluster = [&queue] { return queue.Cluster(); };
  sources.devices = [&runners, &queue] {
    std::vector<metrics::DeviceCounters> out;
    for (size_t i = 0; i < runners.size(); ++i) {
      const core::DeviceInfo& info = runners[i]->Info();
      out.push_back({static_cast<int>(i), info.uuid, info.name, runners[i]->restarts(),
                     runners[i]->busy_seconds(), runners[i]->hangs(), queue.Retries(i)});
    }
    return out;
  };
  sources.telemetry = telemetry;
  return sources;
}

// `gemmprofd --drain`: asks through the store, then follows the daemon's record until it
// reads stopped (exit 0) or lost (exit 1).
int RunDrain(const Options& o) {
  storage::StoreOptions store_options;  // no --node: this process does not claim the name
  auto store = storage::OpenResultStore(o.db, store_options);
  if (!store.ok()) {
    std::cerr << "gemmprofd --drain: " << store.status().message() << "\n";
    return 1;
  }
  if (absl::Status s = (*store)->RequestDrain(o.node); !s.ok()) {
    std::cerr << "gemmprofd --drain: " << s.message() << "\n";
    return absl::IsNotFound(s) || absl::IsFailedPrecondition(s) ? 2 : 1;
  }
  std::cout << "node " << o.node << ": drain asked; waiting for it to stop" << std::endl;
  int32_t last_busy = -1;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto daemons = (*store)->ListDaemons();
    if (!daemons.ok()) continue;  // the store away: ask again
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    for (const core::DaemonRecord& d : *daemons) {
      if (d.node != o.node) continue;
      switch (core::DaemonStateOf(d, now)) {
        case core::DaemonState::kStopped:
          std::cout << "node " << o.node << ": drained and stopped" << std::endl;
          return 0;
        case core::DaemonState::kLost:
          std::cerr << "gemmprofd --drain: node " << o.node
                    << " stopped writing its heartbeat before it said it stopped (it died or "
                       "lost the store); its batches go back to the queue when their leases "
                       "lapse\n";
          return 1;
        case core::DaemonState::kServing:
          if (d.busy != last_busy) {
            std::cout << "node " << o.node << ": draining, " << d.busy << " of " << d.devices
                      << " devices busy" << std::endl;
            last_busy = d.busy;
          }
          break;
      }
    }
  }
}

absl::Status Serve(const Options& o, const security::DaemonSecurity& sec) {
  const sigset_t signals = BlockDaemonSignals();
  ASSIGN_OR_RETURN(DatabaseLock db_lock, DatabaseLock::Acquire(o.db));
  storage::StoreOptions store_options;
  store_options.node = o.node;
  ASSIGN_OR_RETURN(auto store, storage::OpenResultStore(o.db, store_options));
  ASSIGN_OR_RETURN(auto runners, device::StartWorkers(DiscoveryOf(o), Cuda()));
  std::vector<device::Runner*> raw;
  for (auto& r : runners) {
    // An unavailable device has said why already.
    if (r->Availability().ok()) {
      spdlog::info("device: {} [{}] sm {}", r->Info().name, r->Info().backend, r->Info().sm);
    }
    raw.push_back(r.get());
  }
  queue::QueueLimits limits{o.max_queued_jobs, o.max_items_per_job, o.node,
                            static_cast<size_t>(o.batch_groups)};
  limits.lease_ms = static_cast<int64_t>(o.lease_seconds * 1000);
  queue::JobQueue queue(*store, raw, limits);
  RETURN_IF_ERROR(queue.Start());
  // This daemon's record for `gemmprof cluster`, kept fresh while it serves.
  queue::DaemonHeartbeat heartbeat(
      *store, queue::DaemonRecordOf(o.node, raw), [&queue] { return queue.BusyDevices(); },
      [] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      });
  heartbeat.Start();
  // `gemmprofd --drain` asks through the store: a request newer than this one drains.
  const int64_t drain_seen = store->DrainRequest(o.node).value_or(0);
  ASSIGN_OR_RETURN(
      auto server,
      api::Server::Start({o.listen, sec.tls, sec.access, o.max_watches_per_client}, queue));
  spdlog::info("gemmprofd {} listening on {} (port {}), database {}", GEMMPROF_VERSION, o.listen,
               server->port(), o.db);
  // Only with --http: its bus listener makes every item event read the job back.
  std::unique_ptr<device::DeviceTelemetry> telemetry;
  std::optional<metrics::DaemonMetrics> daemon_metrics;
  std::unique_ptr<http::HttpServer> http_server;
  if (!o.http.empty()) {
    telemetry = device::MakeTelemetry(runners, Cuda());
    daemon_metrics.emplace(queue.events(), MetricSourcesOf(queue, runners, telemetry.get()));
    http::HttpOptions http_options{o.http,          o.tls_cert, o.tls_key,
                                   o.tls_client_ca, o.insecure, sec.access};
    ASSIGN_OR_RETURN(http_server,
                     http::HttpServer::Start(
                         http_options, {store.get(), [&] { return daemon_metrics->Render(); }}));
    spdlog::info("http: {} on {} (port {}): /metrics, /api/v1/, dashboard at /",
                 http_server->tls() ? "https" : "http", o.http, http_server->port());
    RETURN_IF_ERROR(WritePortFile("--http-port-file", o.http_port_file, http_server->port()));
  }
  RETURN_IF_ERROR(WritePortFile("--port-file", o.port_file, server->port()));
  // SIGHUP reloads; SIGUSR1 (or --drain-after) drains: no new work, and once the devices
  // hold nothing the daemon stops as on SIGTERM.
  const auto started = std::chrono::steady_clock::now();
  bool draining = false;
  for (int tick = 1;; ++tick) {
    const timespec half_second{0, 500 * 1000 * 1000};
    const int sig = sigtimedwait(&signals, nullptr, &half_second);
    if (sig == SIGHUP) {
      // Failures are logged inside; the daemon goes on with what it had.
      (void)security::ReloadSecurity(sec);
      continue;
    }
    const bool due = o.drain_after_s > 0 && std::chrono::steady_clock::now() - started >=
                                                std::chrono::duration<double>(o.drain_after_s);
    // Every 2 s: a drain asked through the store (gemmprofd --drain).
    const bool asked =
        !draining && tick % 4 == 0 && store->DrainRequest(o.node).value_or(drain_seen) > drain_seen;
    if (!draining && (sig == SIGUSR1 || due || asked)) {
      spdlog::info("draining ({}): finishing what the devices hold, then stopping",
                   sig == SIGUSR1 ? "SIGUSR1"
                   : asked        ? "gemmprofd --drain"
                                  : "--drain-after");
      draining = true;
      queue.RequestDrain();
    }
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("received {}: no new jobs; finishing the running item", strsignal(sig));
      break;
    }
    if (draining && queue.Drained()) {
      spdlog::info("drained: the devices hold nothing; stopping");
      break;
    }
  }
  queue.RequestStop();
  if (http_server) http_server->Stop();
  server->Shutdown(std::chrono::milliseconds(static_cast<int64_t>(o.shutdown_grace_s * 1000)));
  queue.Stop();
  heartbeat.Stop();
  spdlog::info("stopped cleanly");
  return absl::OkStatus();
}

void AddSecurityFlags(CLI::App& app, Options* o) {
  app.add_option("--tls-cert", o->tls_cert, "PEM certificate chain to serve TLS with")
      ->group("Security");
  app.add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert")->group("Security");
  app.add_option("--tls-client-ca", o->tls_client_ca,
                 "PEM CA bundle: require client certificates it signed (mTLS)")
      ->group("Security");
  app.add_flag("--insecure", o->insecure,
               "allow plaintext on a non-loopback --listen (tokens cross the network in clear)")
      ->group("Security");
  app.add_option("--tokens", o->tokens,
                 "file of 'NAME ROLE SHA256HEX' lines; every call then needs a token")
      ->group("Security");
  app.add_option("--max-queued-jobs", o->max_queued_jobs, "queued + running jobs accepted")
      ->check(CLI::Range(int64_t{1}, queue::kMaxQueuedJobsCeiling))
      ->capture_default_str()
      ->group("Limits");
  app.add_option("--max-items-per-job", o->max_items_per_job, "items one job may have")
      ->check(CLI::Range(int64_t{1}, queue::kMaxItemsPerJob))
      ->capture_default_str()
      ->group("Limits");
  app.add_option("--batch-groups", o->batch_groups,
                 "measurement groups (the recipes and modes of one GEMM shape) timed together in "
                 "one set of interleaved rounds: a power-capped GPU's clock wanders over ~0.1 s, "
                 "and longer rounds average it out sooner. 1: each shape alone (least memory; "
                 "cancel and stop wait for one shape, not a batch)")
      ->check(CLI::Range(1, queue::kMaxBatchGroups))
      ->capture_default_str()
      ->group("Measurement");
  app.add_option("--max-watches-per-client", o->max_watches_per_client,
                 "open WatchJob streams per token (per peer host without --tokens)")
      ->check(CLI::Range(1, security::kMaxWatchesPerClientCeiling))
      ->capture_default_str()
      ->group("Limits");
}

}  // namespace

int ParseFlags(int argc, char** argv, Options* o) {
  CLI::App app{
      "gemmprofd: the gemmprof daemon. Benchmarks the GEMMs of transformer models "
      "across precision recipes and serves the results over gRPC."};
  app.footer(kFooter);
  app.add_option("--listen", o->listen, "host:port to serve gRPC on (port 0: pick a free one)")
      ->capture_default_str();
  app.add_option("--db", o->db,
                 "SQLite database file (created if missing), or a PostgreSQL URI "
                 "postgresql://USER@HOST:PORT/DB shared by several daemons (password from "
                 "PGPASSFILE or PGPASSWORD)")
      ->capture_default_str();
  app.add_option("--node", o->node,
                 "this daemon's name, recorded with every job and result (default: the host "
                 "name)");
  app.add_option("--backend", o->backend, "auto | cuda | host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}))
      ->capture_default_str();
  app.add_option("--log-level", o->log_level, "trace|debug|info|warn|error|critical|off")
      ->capture_default_str();
  app.add_option("--log-file", o->log_file, "write the log to this file instead of stderr");
  app.add_option("--port-file", o->port_file, "write the bound port here once serving");
  app.add_option("--http", o->http,
                 "host:port to serve HTTP on: /metrics (Prometheus), /api/v1/ (JSON; reports and "
                 "history also as CSV) and a "
                 "dashboard page at / (port 0: pick a free one; off when not given)");
  app.add_option("--http-port-file", o->http_port_file,
                 "write the bound --http port here once serving");
  app.add_option("--shutdown-grace", o->shutdown_grace_s, "seconds in-flight calls get on SIGTERM")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  AddSecurityFlags(app, o);
  app.add_option("--host-devices", o->host_devices,
                 "with the host backend: how many emulated devices (workers) to run, to try "
                 "multi-GPU scheduling without GPUs")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--item-timeout", o->item_timeout_s,
                 "upper bound, in seconds, of one item before its worker is killed and its "
                 "GEMM fails (0: derived from the item's size and iterations, at least 60); "
                 "hangs are found sooner by progress (10 s without a step)")
      ->capture_default_str();
  app.add_option("--lease-seconds", o->lease_seconds,
                 "with a PostgreSQL store: how long a batch this daemon claimed from the cluster "
                 "queue stays its own without a renewal (renewed 3 times per period while "
                 "measured); a daemon that dies or loses the database loses its batches to "
                 "other daemons after this")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str()
      ->group("Cluster");
  app.add_option("--drain-after", o->drain_after_s,
                 "seconds after start to drain: claim and start nothing new, finish what the "
                 "devices hold, then exit 0 (a Slurm allocation's end; SIGUSR1 drains at once)")
      ->check(CLI::Range(0.0, 1e7))
      ->group("Cluster");
  app.add_flag("--drain", o->drain,
               "do not serve: ask the daemon of --node (default: this host's name) sharing "
               "--db (PostgreSQL) to drain, i.e. claim and start nothing new, finish what its "
               "devices hold and exit 0; waits until it has stopped (Ctrl-C stops waiting, "
               "not the drain)")
      ->group("Cluster");
  app.add_option("--host-model", o->host_model,
                 "with --backend host: the device name the emulated devices report (to try a "
                 "fleet of device models on one machine; results stay labeled host-reference)")
      ->group("Cluster");
  // Worker mode, for the daemon's own use (no group: hidden from --help).
  app.add_option("--worker-fd", o->worker_fd)->group("");
  app.add_option("--worker-query-fd", o->worker_query_fd)->group("");
  app.add_option("--device", o->device)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gemmprofd: " << e.what() << "\n";
    return 2;
  }
  if (absl::Status s = worker::ValidateItemTimeout(o->item_timeout_s); !s.ok()) {
    std::cerr << "gemmprofd: " << s.message() << "\n";
    return 2;
  }
  if (!o->host_model.empty() && o->backend == "cuda") {
    std::cerr << "gemmprofd: --host-model: only for the host backend (--backend host); a GPU "
                 "reports its own name\n";
    return 2;
  }
  if (o->host_model.size() > 100) {
    std::cerr << "gemmprofd: --host-model: " << o->host_model.size()
              << " characters, more than the limit of 100\n";
    return 2;
  }
  if (absl::Status s = CheckHttpFlags(*o); !s.ok()) {
    std::cerr << "gemmprofd: " << s.message() << "\n";
    return 2;
  }
  if (absl::Status s = ResolveNode(&o->node); !s.ok()) {
    std::cerr << "gemmprofd: " << s.message() << "\n";
    return 2;
  }
  return -1;
}

int Run(const Options& options) {
  if (options.drain) return RunDrain(options);
  if (options.worker_fd >= 0) {
    // Worker mode: the daemon re-executed itself to host one device's runner; it serves
    // nothing and needs no security set-up.
    if (auto s = SetUpLogging(options, "worker " + std::to_string(options.device)); !s.ok()) {
      std::cerr << "gemmprofd: " << s.message() << "\n";
      return 2;
    }
    return RunWorkerMode(options);
  }
  // Before logging is set up, so that a bad security flag is one line on stderr.
  const security::SecurityOptions security_options = SecurityOptionsOf(options);
  auto sec = security::SetUpSecurity(security_options);
  if (!sec.ok()) {
    std::cerr << "gemmprofd: " << sec.status().message() << "\n";
    return 2;
  }
  if (auto s = SetUpLogging(options, "gemmprofd"); !s.ok()) {
    std::cerr << "gemmprofd: " << s.message() << "\n";
    return 2;
  }
  security::LogSecurity(security_options, *sec);
  if (auto s = Serve(options, *sec); !s.ok()) {
    spdlog::critical("{}", std::string(s.message()));
    std::cerr << "gemmprofd: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace gemmprof::daemon
