#include "client/global_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "client/commands/follow_job.h"
#include "client/server_address.h"

namespace gemmprof::client {
namespace {

constexpr std::string_view kValuedFlags[] = {"--server",     "--config",  "--tls-ca",
                                             "--tls-cert",   "--tls-key", "--tls-server-name",
                                             "--token-file", "--timeout"};

constexpr char kFooter[] = R"(Examples:
  gemmprof submit --shapes 4096,8192 --recipes bf16,fp8-current --wait
  gemmprof jobs
  gemmprof report 42 --format markdown
  gemmprof --server gpu-node:50051 --tls-ca ca.pem --token-file ~/.gemmprof-token devices
Run `gemmprof COMMAND --help` for each command's flags and examples.

Connection settings come from flags, else environment variables [in brackets above],
else the config file: $XDG_CONFIG_HOME/gemmprof/config.toml (~/.config/gemmprof/config.toml),
or the file --config / GEMMPROF_CONFIG names. Its keys: server, tls, tls_ca, tls_cert,
tls_key, tls_server_name, token_file (paths relative to the file), timeout; e.g.
  server = "gpu-node.example.com:50051"
  tls_ca = "ca.pem"
  token_file = "token"
A token is sent only over TLS or to a loopback address (localhost, 127.0.0.0/8, ::1).

Exit codes:
  0  success
  1  failure: daemon unreachable, server error, job failed
  2  usage: bad flags, environment or config file; nothing was sent
  3  watch / submit --wait: the job ended partial (some items failed)
  4  watch / submit --wait: the job was cancelled)";

}  // namespace

std::optional<std::string> GlobalFlags::Text::Given() const {
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return value;
}

void GlobalFlags::Add(CLI::App& cli, const char* name, const char* type, Text& text,
                      const std::string& help) {
  text.option = cli.add_option(name, text.value, help)->type_name(type);
}

void GlobalFlags::Register(CLI::App& cli) {
  const auto env = [](const char* name) { return std::string(" [") + name + "]"; };
  Add(cli, "--server", "HOST:PORT", server_,
      std::string("gemmprofd address (default ") + kDefaultServer + ")" + env(kEnvServer));
  Add(cli, "--config", "PATH", config_,
      "Config file (default $XDG_CONFIG_HOME/gemmprof/config.toml)" + env(kEnvConfig));
  cli.add_flag("--tls", tls_, "TLS, verifying the daemon with the system's CAs [GEMMPROF_TLS=1]");
  Add(cli, "--tls-ca", "PATH", tls_ca_,
      "TLS, verifying the daemon with this CA certificate (PEM)" + env(kEnvTlsCa));
  Add(cli, "--tls-cert", "PATH", tls_cert_,
      "Client certificate (PEM) for daemons that require one; with --tls-key" + env(kEnvTlsCert));
  Add(cli, "--tls-key", "PATH", tls_key_, "Its private key (PEM)" + env(kEnvTlsKey));
  Add(cli, "--tls-server-name", "NAME", tls_server_name_,
      "Name the daemon's certificate must hold, when it differs from HOST (SSH tunnel)" +
          env(kEnvTlsServerName));
  Add(cli, "--token-file", "PATH", token_file_,
      "File holding the bearer token [" + std::string(kEnvTokenFile) + "; " + kEnvToken +
          " holds the token itself]");
  timeout_ =
      cli.add_option("--timeout", timeout_s_,
                     "Seconds each call may take (default " + std::to_string(kDefaultTimeoutS) +
                         ", at most " + std::to_string(kMaxTimeoutS) + ")" + env(kEnvTimeout))
          ->type_name("SECONDS")
          ->check(ExactInteger(true).description(""))
          ->check(CLI::Range(1, kMaxTimeoutS).description(""));
}

ConnectionFlags GlobalFlags::Flags() const {
  ConnectionFlags f;
  f.server = server_.Given();
  f.config = config_.Given();
  f.tls = tls_;
  f.tls_ca = tls_ca_.Given();
  f.tls_cert = tls_cert_.Given();
  f.tls_key = tls_key_.Given();
  f.tls_server_name = tls_server_name_.Given();
  f.token_file = token_file_.Given();
  if (timeout_ != nullptr && timeout_->count() > 0) f.timeout_s = timeout_s_;
  return f;
}

bool GlobalFlags::TakesValue(std::string_view arg) {
  return std::find(std::begin(kValuedFlags), std::end(kValuedFlags), arg) != std::end(kValuedFlags);
}

std::string_view GlobalHelpFooter() { return kFooter; }

}  // namespace gemmprof::client
