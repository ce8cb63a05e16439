#include "client/config_file.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gemmprof::client {
namespace {

namespace fs = std::filesystem;

// Larger than any sensible config; a guard against pointing --config at a big file.
constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;

std::string_view TypeName(toml::node_type t) {
  switch (t) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

std::string_view Expected(ConfigKey::Type t) {
  switch (t) {
    case ConfigKey::Type::kString:
      return "a string in quotes";
    case ConfigKey::Type::kPath:
      return "a path in quotes";
    case ConfigKey::Type::kBool:
      return "true or false";
    case ConfigKey::Type::kInteger:
      return "a whole number";
  }
  return "";
}

std::string ValidKeys() {
  std::string s;
  for (const ConfigKey& k : ConfigKeys()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

absl::Status Bad(const std::string& path, int line, std::string_view what) {
  return absl::InvalidArgumentError("config file " + path + ":" + std::to_string(line) + ": " +
                                    std::string(what));
}

const ConfigKey* FindKey(std::string_view name) {
  for (const ConfigKey& k : ConfigKeys())
    if (k.name == name) return &k;
  return nullptr;
}

// The node's value as text when it has the key's type.
absl::StatusOr<std::string> ValueText(const ConfigKey& key, const toml::node& node,
                                      const std::string& path, int line,
                                      const std::optional<std::string>& home) {
  const std::string wrong = std::string(key.name) + " must be " + std::string(Expected(key.type)) +
                            ", not " + std::string(TypeName(node.type()));
  switch (key.type) {
    case ConfigKey::Type::kBool:
      if (!node.is_boolean()) return Bad(path, line, wrong);
      return std::string(node.as_boolean()->get() ? "true" : "false");
    case ConfigKey::Type::kInteger:
      if (!node.is_integer()) return Bad(path, line, wrong);
      return std::to_string(node.as_integer()->get());
    case ConfigKey::Type::kString:
    case ConfigKey::Type::kPath:
      break;
  }
  if (!node.is_string()) return Bad(path, line, wrong);
  const std::string& text = node.as_string()->get();
  if (text.empty()) return Bad(path, line, std::string(key.name) + " is empty");
  if (key.type == ConfigKey::Type::kString) return text;
  auto resolved = ResolveConfigPath(text, fs::path(path).parent_path().string(), home);
  if (!resolved.ok())
    return Bad(path, line, std::string(key.name) + ": " + std::string(resolved.status().message()));
  return resolved;
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  using T = ConfigKey::Type;
  static const std::vector<ConfigKey> keys = {
      {"server", T::kString},   {"tls", T::kBool},        {"tls_ca", T::kPath},
      {"tls_cert", T::kPath},   {"tls_key", T::kPath},    {"tls_server_name", T::kString},
      {"token_file", T::kPath}, {"timeout", T::kInteger},
  };
  return keys;
}

std::string ConfigFile::Source(std::string_view key) const {
  const auto it = entries.find(key);
  const int line = it == entries.end() ? 0 : it->second.line;
  return std::string(key) + " (" + path + ":" + std::to_string(line) + ")";
}

std::optional<std::string> DefaultConfigPath(const std::optional<std::string>& xdg_config_home,
                                             const std::optional<std::string>& home) {
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (xdg_config_home && !xdg_config_home->empty() && xdg_config_home->front() == '/')
    return (fs::path(*xdg_config_home) / "gemmprof" / "config.toml").string();
  if (home && !home->empty()) return (fs::path(*home) / ".config/gemmprof/config.toml").string();
  return std::nullopt;
}

absl::StatusOr<std::string> ResolveConfigPath(std::string_view path, std::string_view base_dir,
                                              const std::optional<std::string>& home) {
  if (path == "~" || path.starts_with("~/")) {
    if (!home || home->empty())
      return absl::InvalidArgumentError("\"" + std::string(path) +
                                        "\" starts with ~ but HOME is not set");
    return (fs::path(*home) / std::string(path.substr(path.size() > 1 ? 2 : 1))).string();
  }
  if (path.starts_with("~"))
    return absl::InvalidArgumentError("\"" + std::string(path) +
                                      "\": ~user paths are not supported; write the full path");
  const fs::path p(path);
  if (p.is_absolute()) return p.string();
  return (fs::path(base_dir) / p).lexically_normal().string();
}

absl::StatusOr<ConfigFile> LoadConfigFile(const std::string& path, bool must_exist,
                                          const std::optional<std::string>& home) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    if (!must_exist) return ConfigFile{};
    return absl::InvalidArgumentError("config file " + path + " does not exist");
  }
  if (fs::is_directory(st))
    return absl::InvalidArgumentError("config file " + path + " is a directory, not a file");
  if (!fs::is_regular_file(st))
    return absl::InvalidArgumentError("config file " + path + " is not a regular file");
  if (fs::file_size(path, ec) > kMaxConfigBytes)
    return absl::InvalidArgumentError("config file " + path + " is larger than 1 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError("config file " + path +
                                      " cannot be read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return ParseConfigFile(text.str(), path, home);
}

absl::StatusOr<ConfigFile> ParseConfigFile(std::string_view text, const std::string& path,
                                           const std::optional<std::string>& home) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Bad(path, static_cast<int>(e.source().begin.line),
               std::string(e.description()) + " (TOML syntax; e.g. server = \"host:50051\")");
  }
  ConfigFile file;
  file.path = path;
  for (auto&& [name, node] : table) {
    const int line = static_cast<int>(node.source().begin.line);
    const ConfigKey* key = FindKey(name.str());
    if (key == nullptr)
      return Bad(path, line,
                 "unknown key \"" + std::string(name.str()) + "\"; valid keys: " + ValidKeys());
    ASSIGN_OR_RETURN(std::string value, ValueText(*key, node, path, line, home));
    file.entries[std::string(key->name)] = ConfigEntry{std::move(value), line};
  }
  return file;
}

}  // namespace gemmprof::client
