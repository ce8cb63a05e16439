// The user's config file: connection defaults for `gemmprof`, so a laptop need not repeat
// --server, --tls-ca and --token-file on every command. TOML, top-level keys only:
//
//   server = "gpu-node.example.com:50051"
//   tls_ca = "certs/ca.pem"          # relative to this file's folder; "~/" is expanded
//   token_file = "~/.config/gemmprof/token"
//
// Values here lose to the environment, which loses to flags (see connection.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gemmprof::client {

// The keys a config file may hold, each with the TOML type it must have.
struct ConfigKey {
  std::string_view name;
  enum class Type { kString, kPath, kBool, kInteger } type;
};
const std::vector<ConfigKey>& ConfigKeys();

// One value read from the file, as text (a path already absolute, a bool "true"/"false",
// an integer in decimal), with its line for error messages.
struct ConfigEntry {
  std::string value;
  int line = 0;
};

// What a config file holds: key -> entry. Empty when no file was read.
struct ConfigFile {
  std::string path;  // the file read; empty when none
  std::map<std::string, ConfigEntry, std::less<>> entries;

  // "tls_ca (/home/u/.config/gemmprof/config.toml:3)": where a key came from.
  std::string Source(std::string_view key) const;
};

// The default location: $XDG_CONFIG_HOME/gemmprof/config.toml when XDG_CONFIG_HOME is
// an absolute path, else $HOME/.config/gemmprof/config.toml; nullopt when neither is set.
std::optional<std::string> DefaultConfigPath(const std::optional<std::string>& xdg_config_home,
                                             const std::optional<std::string>& home);

// Expands a leading "~/" with `home` and makes a relative path absolute against `base_dir`.
// Errors: InvalidArgument when the path starts with "~/" and `home` is unknown, or with
// "~user" (not supported).
absl::StatusOr<std::string> ResolveConfigPath(std::string_view path, std::string_view base_dir,
                                              const std::optional<std::string>& home);

// Reads and checks the file at `path`. A missing file is an empty ConfigFile unless
// `must_exist` (a path the user named). Errors (InvalidArgument) name the file, the line
// and the key: unreadable file, TOML syntax, unknown key (listing the valid ones), a
// value of the wrong type, an empty string.
absl::StatusOr<ConfigFile> LoadConfigFile(const std::string& path, bool must_exist,
                                          const std::optional<std::string>& home);

// Parses file text; `path` names it in errors and anchors relative paths.
absl::StatusOr<ConfigFile> ParseConfigFile(std::string_view text, const std::string& path,
                                           const std::optional<std::string>& home);

}  // namespace gemmprof::client
