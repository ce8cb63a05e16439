#include "server/http/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/api_routes.h"
#include "server/http/dashboard_page.h"
#include "server/security/listen_policy.h"

namespace gemmprof::http {
namespace {

// The page runs only its own inline code and talks only to this daemon.
constexpr char kPagePolicy[] =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

int64_t SystemMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Send(const HttpReply& reply, httplib::Response& res) {
  res.status = reply.status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  res.set_content(reply.body, reply.content_type.c_str());
}

// The AccessControl method whose role a path needs: every route only reads.
std::string_view MethodOf(const std::string& path) {
  if (path.rfind("/api/v1/history", 0) == 0) return "QueryResults";
  if (path.rfind("/api/v1/jobs/", 0) == 0) return "GetReport";
  return "ListJobs";
}

}  // namespace

absl::StatusOr<HttpAddress> ParseHttpAddress(const std::string& text) {
  const absl::Status bad =
      absl::InvalidArgumentError("--http '" + text +
                                 "': expected HOST:PORT or [IPV6]:PORT with a port from 0 to 65535 "
                                 "(0: pick a free one), e.g. 127.0.0.1:9464");
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad;
  HttpAddress a;
  a.host = text.substr(0, colon);
  if (a.host.front() == '[') {
    if (a.host.size() < 3 || a.host.back() != ']') return bad;
    a.host = a.host.substr(1, a.host.size() - 2);
  } else if (a.host.find(':') != std::string::npos) {
    return bad;  // an IPv6 address needs its brackets
  }
  const std::string_view port = std::string_view(text).substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || a.port < 0 ||
      a.port > 65535) {
    return bad;
  }
  return a;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options,
                                                              HttpSources sources) {
  ASSIGN_OR_RETURN(const HttpAddress address, ParseHttpAddress(options.address));
  const bool tls = !options.tls_cert.empty();
  if (!tls && !options.insecure && !security::IsLoopbackListen(options.address)) {
    return absl::FailedPreconditionError(
        "--http " + options.address +
        ": not a loopback address, and TLS is off; give --tls-cert and --tls-key (HTTPS "
        "then uses them too), or --insecure to serve plaintext to the network anyway");
  }
  std::unique_ptr<HttpServer> s(new HttpServer());
  s->sources_ = std::move(sources);
  if (!s->sources_.now_ms) s->sources_.now_ms = SystemMs;
  s->tls_ = tls;
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert.c_str(), options.tls_key.c_str(),
        options.tls_client_ca.empty() ? nullptr : options.tls_client_ca.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError("--http: cannot serve HTTPS with --tls-cert '" +
                                        options.tls_cert + "' and its key");
    }
    s->server_ = std::move(ssl);
  } else {
    s->server_ = std::make_unique<httplib::Server>();
  }
  // httplib's default also sets SO_REUSEPORT, which would let a second daemon bind the
  // same port and take half the scrapes; SO_REUSEADDR alone allows quick restarts only.
  s->server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Every route is a GET: no request needs a body.
  s->server_->set_payload_max_length(64 * 1024);
  s->AddRoutes(options);
  const int port = address.port == 0
                       ? s->server_->bind_to_any_port(address.host)
                       : (s->server_->bind_to_port(address.host, address.port) ? address.port : -1);
  if (port <= 0) {
    return absl::FailedPreconditionError("--http " + options.address +
                                         ": cannot listen there (address in use, or not an "
                                         "address of this machine)");
  }
  s->port_ = port;
  s->thread_ = std::thread([srv = s->server_.get()] { srv->listen_after_bind(); });
  // A stop() before the loop runs would be lost and Stop would wait forever.
  for (int i = 0; i < 10000 && !s->server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!s->server_->is_running()) {
    s->thread_.join();
    return absl::InternalError("--http " + options.address + ": the listener did not start");
  }
  return s;
}

void HttpServer::AddRoutes(const HttpOptions& options) {
  httplib::Server& srv = *server_;
  // The page is static code with no data in it: it loads without a token and asks for
  // one when the API answers 401. Every data route checks the token first.
  srv.set_pre_routing_handler(
      [access = options.access](const httplib::Request& req, httplib::Response& res) {
        if (req.path == "/" || access == nullptr || !access->enabled()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        // get_header_value returns copies: keep them alive while the views are used.
        std::vector<std::string> headers;
        const size_t n = req.get_header_value_count("Authorization");
        for (size_t i = 0; i < n; ++i) headers.push_back(req.get_header_value("Authorization", i));
        const std::vector<std::string_view> values(headers.begin(), headers.end());
        auto caller = access->Authorize(values, MethodOf(req.path));
        if (caller.ok()) return httplib::Server::HandlerResponse::Unhandled;
        if (absl::IsUnauthenticated(caller.status())) {
          res.set_header("WWW-Authenticate", "Bearer realm=\"gemmprofd\"");
        }
        Send(ErrorReply(caller.status()), res);
        return httplib::Server::HandlerResponse::Handled;
      });
  srv.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", kPagePolicy);
    Send({200, "text/html; charset=utf-8", std::string(DashboardPage())}, res);
  });
  srv.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Send({200, "text/plain; version=0.0.4; charset=utf-8",
          sources_.metrics ? sources_.metrics() : std::string()},
         res);
  });
  srv.Get("/api/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    Send(JobsRoute(*sources_.store, req.params), res);
  });
  srv.Get(R"(/api/v1/jobs/([^/]+)/report)",
          [this](const httplib::Request& req, httplib::Response& res) {
            Send(ReportRoute(*sources_.store, req.matches[1].str()), res);
          });
  srv.Get(R"(/api/v1/jobs/([^/]+)/report\.csv)",
          [this](const httplib::Request& req, httplib::Response& res) {
            Send(ReportCsvRoute(*sources_.store, req.matches[1].str()), res);
          });
  srv.Get("/api/v1/history", [this](const httplib::Request& req, httplib::Response& res) {
    Send(HistoryRoute(*sources_.store, req.params, sources_.now_ms()), res);
  });
  srv.Get("/api/v1/history.csv", [this](const httplib::Request& req, httplib::Response& res) {
    Send(HistoryCsvRoute(*sources_.store, req.params, sources_.now_ms()), res);
  });
  srv.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const int status = res.status;
    if (status == 404) {
      Send(ErrorReply(absl::NotFoundError(
               "no route " + req.method + " " + req.path +
               " (routes: GET /, /metrics, /api/v1/jobs, /api/v1/jobs/ID/report, "
               "/api/v1/jobs/ID/report.csv, /api/v1/history, /api/v1/history.csv)")),
           res);
      return;
    }
    Send(ErrorReply(absl::InvalidArgumentError("the request was refused: HTTP status " +
                                               std::to_string(status))),
         res);
    res.status = status;
  });
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace gemmprof::http
