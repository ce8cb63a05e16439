#include "client/commands/token_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "wire/token.h"

namespace gemmprof::client {
namespace {

constexpr size_t kMaxNameChars = 64;

bool NameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '@' || c == '-';
}

}  // namespace

absl::Status CheckTokenName(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= kMaxNameChars &&
                  std::all_of(name.begin(), name.end(), NameChar);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError("--name: \"" + std::string(name) +
                                    "\" must be 1..64 characters of A-Z a-z 0-9 . _ @ -");
}

absl::Status CheckTokenRole(std::string_view role) {
  for (const char* r : kTokenRoles)
    if (role == r) return absl::OkStatus();
  return absl::InvalidArgumentError("--role: \"" + std::string(role) +
                                    "\" is not a role; valid: read, submit, admin");
}

TokenCommand::TokenCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("token", "Make bearer tokens for gemmprofd users");
  app_->require_subcommand(1);
  new_ = app_->add_subcommand("new", "Print a fresh token and its line for the daemon's --tokens");
  new_->add_option("--name", name_, "Who the token is for: 1..64 of A-Z a-z 0-9 . _ @ -")
      ->required();
  new_->add_option("--role", role_, "read (look), submit (and run jobs), admin (everything)")
      ->required();
  new_->add_option("--format", format_, "text (default): token, then the tokens-file line; json");
  const char* footer = R"(Example:
  gemmprof token new --name alice --role submit
Prints the token on the first line and `NAME ROLE SHA256HEX` on the second: add that
line to the file gemmprofd reads with --tokens, and give the token to its user
(GEMMPROF_TOKEN, or a file for --token-file readable by them alone). Hints go to
stderr, so `gemmprof token new ... | head -1 > token` keeps only the token.
No server is contacted; the token is stored nowhere.)";
  app_->footer(footer);
  new_->footer(footer);
}

absl::Status TokenCommand::Run(CommandContext& ctx) {
  RETURN_IF_ERROR(CheckTokenName(name_));
  RETURN_IF_ERROR(CheckTokenRole(role_));
  if (format_ != "text" && format_ != "json")
    return absl::InvalidArgumentError("--format: unknown format \"" + format_ +
                                      "\"; valid: text, json");
  ASSIGN_OR_RETURN(const std::string token, wire::NewToken());
  const std::string line = name_ + " " + role_ + " " + wire::TokenSha256Hex(token);
  if (format_ == "json") {
    const nlohmann::json j = {{"name", name_},
                              {"role", role_},
                              {"token", token},
                              {"sha256", wire::TokenSha256Hex(token)},
                              {"tokens_file_line", line}};
    ctx.out << j.dump(2) << "\n";
    return absl::OkStatus();
  }
  ctx.out << token << "\n" << line << "\n";
  ctx.err << "gemmprof: line 1 is the token: give it to " << name_
          << " (GEMMPROF_TOKEN, or a file for --token-file, chmod 600).\n"
          << "gemmprof: line 2 goes into the daemon's --tokens file; it holds only the "
             "token's SHA-256.\n";
  return absl::OkStatus();
}

}  // namespace gemmprof::client
