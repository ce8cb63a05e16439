// `gemmprof token new`: makes a bearer token for a user of gemmprofd and the line the
// daemon's --tokens file needs (it holds only the token's SHA-256). Needs no server.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

// The roles a token can have, weakest first, as the daemon's tokens file names them.
inline constexpr const char* kTokenRoles[] = {"read", "submit", "admin"};

// Checks a token's name: 1..64 characters of A-Z a-z 0-9 . _ @ -.
// Errors: InvalidArgument naming --name, the value and the rule.
absl::Status CheckTokenName(std::string_view name);
// Checks a role: read, submit or admin. Errors: InvalidArgument naming --role.
absl::Status CheckTokenRole(std::string_view role);

class TokenCommand : public Command {
 public:
  // Registers `token` and its subcommand `new` on `parent`.
  explicit TokenCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  CLI::App* new_;
  std::string name_;
  std::string role_;
  std::string format_ = "text";
};

}  // namespace gemmprof::client
