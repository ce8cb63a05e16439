// The flags every `gemmprof` command accepts, before or after the command name: where
// gemmprofd is and how to reach it (--server, TLS, token, --config, --timeout), and
// the help footer that explains them with the environment, the config file and the
// exit codes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "client/connection.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gemmprof::client {

class GlobalFlags {
 public:
  GlobalFlags() = default;
  GlobalFlags(const GlobalFlags&) = delete;  // CLI11 holds pointers into it
  GlobalFlags& operator=(const GlobalFlags&) = delete;

  // Adds the flags to `cli` (the root app).
  void Register(CLI::App& cli);
  // What the command line gave, after parsing; unset where a flag was not given.
  ConnectionFlags Flags() const;
  // True for a global flag that takes a value as the next argument ("--server").
  static bool TakesValue(std::string_view arg);

 private:
  struct Text {
    CLI::Option* option = nullptr;
    std::string value;
    std::optional<std::string> Given() const;
  };
  void Add(CLI::App& cli, const char* name, const char* type, Text& text, const std::string& help);

  Text server_, config_, tls_ca_, tls_cert_, tls_key_, tls_server_name_, token_file_;
  bool tls_ = false;
  int timeout_s_ = kDefaultTimeoutS;
  CLI::Option* timeout_ = nullptr;
};

// The root help's footer: examples, where settings come from, the config file's keys,
// and the exit codes.
std::string_view GlobalHelpFooter();

}  // namespace gemmprof::client
