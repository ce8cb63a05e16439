// How `gemmprof` reaches gemmprofd: the address, TLS, the bearer token and the call
// deadline, resolved from flags, then environment variables, then the config file
// (config_file.h), each setting on its own. Resolved only when a command needs the
// daemon, so `plan` or `token new` never read a token or a config file.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::client {

// Deadline of every unary call unless --timeout says otherwise, and the largest allowed.
inline constexpr int kDefaultTimeoutS = 60;
inline constexpr int kMaxTimeoutS = 3600;

// The environment variables gemmprof reads (besides XDG_CONFIG_HOME and HOME).
inline constexpr char kEnvServer[] = "GEMMPROF_SERVER";
inline constexpr char kEnvConfig[] = "GEMMPROF_CONFIG";
inline constexpr char kEnvTls[] = "GEMMPROF_TLS";
inline constexpr char kEnvTlsCa[] = "GEMMPROF_TLS_CA";
inline constexpr char kEnvTlsCert[] = "GEMMPROF_TLS_CERT";
inline constexpr char kEnvTlsKey[] = "GEMMPROF_TLS_KEY";
inline constexpr char kEnvTlsServerName[] = "GEMMPROF_TLS_SERVER_NAME";
inline constexpr char kEnvToken[] = "GEMMPROF_TOKEN";
inline constexpr char kEnvTokenFile[] = "GEMMPROF_TOKEN_FILE";
inline constexpr char kEnvTimeout[] = "GEMMPROF_TIMEOUT";

// The connection flags as given on the command line; nullopt / false: not given.
struct ConnectionFlags {
  std::optional<std::string> server;
  std::optional<std::string> config;
  bool tls = false;
  std::optional<std::string> tls_ca;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> tls_server_name;
  std::optional<std::string> token_file;
  std::optional<int> timeout_s;
};

// Looks up an environment variable; nullopt when it is unset or empty.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
// The process's environment (getenv).
Environment ProcessEnvironment();

// Everything the transport needs, files already read.
struct ConnectionSettings {
  std::string address;  // HOST:PORT, checked
  bool tls = false;
  std::string tls_ca_pem;       // roots that verify the daemon; empty: the system's roots
  std::string tls_cert_pem;     // client certificate chain (mTLS); set with tls_key_pem
  std::string tls_key_pem;      // its private key
  std::string tls_server_name;  // name the daemon's certificate must hold; empty: the host
  std::string token;            // bearer token; empty: none. A secret: never print it
  std::string token_source;     // where the token came from, for messages ("GEMMPROF_TOKEN")
  int timeout_s = kDefaultTimeoutS;
};

// Resolves the settings: flags > environment > config file > defaults. The config file
// is --config, else GEMMPROF_CONFIG (both must exist), else the default path (may be
// missing). TLS is on with --tls / GEMMPROF_TLS / tls = true, or when a CA or client
// certificate is given. The token is --token-file, else GEMMPROF_TOKEN (the token
// itself), else GEMMPROF_TOKEN_FILE, else token_file. Warnings (a token file others can
// read) go to `warnings`. Errors: InvalidArgument naming the flag, variable or config
// line: bad values, unreadable files, half-given mTLS, and a token that would travel in
// plaintext to a host that is not loopback.
absl::StatusOr<ConnectionSettings> ResolveConnection(const ConnectionFlags& flags,
                                                     const Environment& env,
                                                     std::ostream& warnings);

// True when the host of HOST:PORT is loopback: localhost, 127.0.0.0/8 or [::1].
bool IsLoopbackAddress(std::string_view address);

// Reads a token file: surrounding whitespace (the trailing newline) is dropped; the
// rest must be one token. `source` names the setting in errors ("--token-file"); the
// token never appears in them. Warns when group or others may read the file.
// Errors: InvalidArgument for a missing, unreadable, empty or multi-token file.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path, std::string_view source,
                                          std::ostream& warnings);

// Checks that `token` is one token a header can carry (printable ASCII, no spaces).
absl::Status CheckToken(std::string_view token, std::string_view source);

}  // namespace gemmprof::client
