#include "client/connection.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "client/config_file.h"
#include "client/server_address.h"
#include "client/tls_files.h"

namespace gemmprof::client {
namespace {

// Token files and PEM files are small; a guard against pointing a flag at a big file.
constexpr off_t kMaxTokenFileBytes = 64 << 10;
constexpr off_t kMaxPemFileBytes = 1 << 20;
constexpr size_t kMaxTokenChars = 4096;

// One setting and where it came from ("--tls-ca", "GEMMPROF_TLS_CA", "tls_ca (path:3)").
struct Setting {
  std::string value;
  std::string source;
};

// The flag, else the environment variable, else the config file's key.
std::optional<Setting> Pick(const std::optional<std::string>& flag, std::string_view flag_name,
                            const Environment& env, const char* env_name, const ConfigFile& file,
                            std::string_view key) {
  if (flag) return Setting{*flag, std::string(flag_name)};
  if (auto v = env(env_name)) return Setting{*v, env_name};
  if (auto it = file.entries.find(key); it != file.entries.end())
    return Setting{it->second.value, file.Source(key)};
  return std::nullopt;
}

absl::Status Invalid(const Setting& s, std::string_view why) {
  return absl::InvalidArgumentError(s.source + ": " + std::string(why));
}

// Reads a whole (small) file; errors name the setting and the path.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, std::string_view source,
                                          off_t max_bytes, struct stat* st_out = nullptr) {
  const std::string where = std::string(source) + ": \"" + path + "\"";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return absl::InvalidArgumentError(where + " cannot be read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(where + " is a directory");
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(where + " is not a regular file");
  if (st.st_size > max_bytes)
    return absl::InvalidArgumentError(where + " is larger than " + std::to_string(max_bytes) +
                                      " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(where + " cannot be read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (st_out != nullptr) *st_out = st;
  return text.str();
}

std::string Where(const Setting& s) { return s.source + ": \"" + s.value + "\""; }

absl::StatusOr<int> ParseTimeout(const Setting& s) {
  int v = 0;
  const char* end = s.value.data() + s.value.size();
  const auto r = std::from_chars(s.value.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || v < 1 || v > kMaxTimeoutS)
    return Invalid(s, "\"" + s.value + "\" is not a whole number of seconds in 1.." +
                          std::to_string(kMaxTimeoutS));
  return v;
}

absl::StatusOr<bool> ParseBool(const Setting& s) {
  if (s.value == "1" || s.value == "true") return true;
  if (s.value == "0" || s.value == "false") return false;
  return Invalid(s, "\"" + s.value + "\" is not one of 1, 0, true, false");
}

// Which config file, if any: --config, GEMMPROF_CONFIG (must exist), else the default.
absl::StatusOr<ConfigFile> LoadConfig(const ConnectionFlags& flags, const Environment& env) {
  const std::optional<std::string> home = env("HOME");
  if (flags.config) {
    if (flags.config->empty()) return absl::InvalidArgumentError("--config: the path is empty");
    return LoadConfigFile(*flags.config, /*must_exist=*/true, home);
  }
  if (auto path = env(kEnvConfig)) return LoadConfigFile(*path, /*must_exist=*/true, home);
  if (auto path = DefaultConfigPath(env("XDG_CONFIG_HOME"), home))
    return LoadConfigFile(*path, /*must_exist=*/false, home);
  return ConfigFile{};
}

// TLS settings: on/off, roots, client certificate, name override.
absl::Status ResolveTls(const ConnectionFlags& flags, const Environment& env,
                        const ConfigFile& file, ConnectionSettings& out) {
  std::optional<Setting> tls = flags.tls ? std::optional<Setting>(Setting{"true", "--tls"})
                                         : Pick(std::nullopt, "", env, kEnvTls, file, "tls");
  if (tls) {
    ASSIGN_OR_RETURN(out.tls, ParseBool(*tls));
  }
  const auto ca = Pick(flags.tls_ca, "--tls-ca", env, kEnvTlsCa, file, "tls_ca");
  const auto cert = Pick(flags.tls_cert, "--tls-cert", env, kEnvTlsCert, file, "tls_cert");
  const auto key = Pick(flags.tls_key, "--tls-key", env, kEnvTlsKey, file, "tls_key");
  const auto name = Pick(flags.tls_server_name, "--tls-server-name", env, kEnvTlsServerName, file,
                         "tls_server_name");
  if (cert.has_value() != key.has_value()) {
    const Setting& given = cert ? *cert : *key;
    return Invalid(given, std::string("a client certificate needs its key and the key its "
                                      "certificate; give both --tls-cert and --tls-key "
                                      "(GEMMPROF_TLS_CERT / GEMMPROF_TLS_KEY, or tls_cert / "
                                      "tls_key in the config file), or neither"));
  }
  if (ca) {
    ASSIGN_OR_RETURN(out.tls_ca_pem, ReadSmallFile(ca->value, ca->source, kMaxPemFileBytes));
    RETURN_IF_ERROR(CheckCertificates(out.tls_ca_pem, Where(*ca)));
  }
  if (cert) {
    ASSIGN_OR_RETURN(out.tls_cert_pem, ReadSmallFile(cert->value, cert->source, kMaxPemFileBytes));
    RETURN_IF_ERROR(CheckCertificates(out.tls_cert_pem, Where(*cert)));
    ASSIGN_OR_RETURN(out.tls_key_pem, ReadSmallFile(key->value, key->source, kMaxPemFileBytes));
    RETURN_IF_ERROR(CheckKeyPair(out.tls_cert_pem, out.tls_key_pem, Where(*key)));
  }
  out.tls = out.tls || ca.has_value() || cert.has_value();
  if (name) {
    if (!out.tls)
      return Invalid(*name, "a TLS server name needs TLS; add --tls or --tls-ca CA.pem");
    out.tls_server_name = name->value;
  }
  return absl::OkStatus();
}

// The token: --token-file > GEMMPROF_TOKEN > GEMMPROF_TOKEN_FILE > token_file.
absl::Status ResolveToken(const ConnectionFlags& flags, const Environment& env,
                          const ConfigFile& file, std::ostream& warnings, ConnectionSettings& out) {
  std::optional<Setting> token_file;
  if (flags.token_file) {
    token_file = Setting{*flags.token_file, "--token-file"};
  } else if (auto token = env(kEnvToken)) {
    RETURN_IF_ERROR(CheckToken(*token, kEnvToken));
    out.token = *token;
    out.token_source = kEnvToken;
    return absl::OkStatus();
  } else {
    token_file = Pick(std::nullopt, "", env, kEnvTokenFile, file, "token_file");
  }
  if (!token_file) return absl::OkStatus();
  ASSIGN_OR_RETURN(out.token, ReadTokenFile(token_file->value, token_file->source, warnings));
  out.token_source = token_file->source + " " + token_file->value;
  return absl::OkStatus();
}

}  // namespace

Environment ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

bool IsLoopbackAddress(std::string_view address) {
  const size_t colon = address.rfind(':');
  std::string_view host = address.substr(0, colon == std::string_view::npos ? 0 : colon);
  if (host == "[::1]") return true;
  std::string lower(host);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost") return true;
  // 127.0.0.0/8, written as a full dotted quad.
  int octets = 0, first = -1;
  for (size_t start = 0; start <= host.size(); ++octets) {
    const size_t dot = std::min(host.find('.', start), host.size());
    int v = -1;
    const auto r = std::from_chars(host.data() + start, host.data() + dot, v);
    if (r.ec != std::errc() || r.ptr != host.data() + dot || dot == start || v > 255) return false;
    if (first < 0) first = v;
    start = dot + 1;
  }
  return octets == 4 && first == 127;
}

absl::Status CheckToken(std::string_view token, std::string_view source) {
  const std::string where(source);
  if (token.empty()) return absl::InvalidArgumentError(where + ": the token is empty");
  if (token.size() > kMaxTokenChars)
    return absl::InvalidArgumentError(where + ": the token is longer than " +
                                      std::to_string(kMaxTokenChars) + " characters");
  for (char c : token) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      return absl::InvalidArgumentError(
          where + ": holds more than one token (whitespace inside); keep exactly one token");
    if (c < 0x21 || c > 0x7e)
      return absl::InvalidArgumentError(
          where + ": the token has a character a token cannot have (printable ASCII only)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path, std::string_view source,
                                          std::ostream& warnings) {
  struct stat st;
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, source, kMaxTokenFileBytes, &st));
  const std::string where = std::string(source) + ": \"" + path + "\"";
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return absl::InvalidArgumentError(where + " is empty");
  text = text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
  RETURN_IF_ERROR(CheckToken(text, where));
  if ((st.st_mode & 0044) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    warnings << "gemmprof: warning: token file " << path << " can be read by others (mode " << mode
             << "); run chmod 600 " << path << "\n";
  }
  return text;
}

absl::StatusOr<ConnectionSettings> ResolveConnection(const ConnectionFlags& flags,
                                                     const Environment& env,
                                                     std::ostream& warnings) {
  ASSIGN_OR_RETURN(const ConfigFile file, LoadConfig(flags, env));
  ConnectionSettings out;
  const Setting server = Pick(flags.server, "--server", env, kEnvServer, file, "server")
                             .value_or(Setting{kDefaultServer, "--server"});
  ASSIGN_OR_RETURN(out.address, ParseServerAddress(server.value, server.source));
  if (flags.timeout_s) {
    ASSIGN_OR_RETURN(out.timeout_s, ParseTimeout({std::to_string(*flags.timeout_s), "--timeout"}));
  } else if (auto t = Pick(std::nullopt, "", env, kEnvTimeout, file, "timeout")) {
    ASSIGN_OR_RETURN(out.timeout_s, ParseTimeout(*t));
  }
  RETURN_IF_ERROR(ResolveTls(flags, env, file, out));
  RETURN_IF_ERROR(ResolveToken(flags, env, file, warnings, out));
  if (!out.token.empty() && !out.tls && !IsLoopbackAddress(out.address))
    return absl::InvalidArgumentError(
        "refusing to send the token from " + out.token_source + " in plaintext to " + out.address +
        " (not a loopback address); turn TLS on with --tls-ca CA.pem (or --tls "
        "for a publicly trusted certificate), or reach the daemon through an SSH tunnel to "
        "localhost");
  return out;
}

}  // namespace gemmprof::client
