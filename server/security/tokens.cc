#include "server/security/tokens.h"

#include <openssl/crypto.h>

#include <array>
#include <map>

#include "server/security/config_file.h"
#include "wire/token.h"

namespace gemmprof::security {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '@' || c == '+' || c == '-';
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A role field is quoted back only when it cannot be a secret pasted into the wrong
// column: short and not in the shape of a gemmprof token.
std::string QuoteRole(std::string_view role) {
  if (role.size() > 16 || role.starts_with(wire::kTokenPrefix)) return "(not shown)";
  for (char c : role) {
    if (!IsNameChar(c)) return "(not shown)";
  }
  return "'" + std::string(role) + "'";
}

class LineParser {
 public:
  explicit LineParser(std::string_view source) : source_(source) {}

  absl::Status Error(int line, std::string_view problem) const {
    return absl::InvalidArgumentError(source_ + ":" + std::to_string(line) + ": " +
                                      std::string(problem));
  }

  // Parses one non-comment line into `table`.
  absl::Status Add(int line_no, const std::vector<std::string_view>& f,
                   std::vector<TokenEntry>* table) {
    if (f.size() != 3) {
      return Error(line_no, "expected 'NAME ROLE SHA256HEX', found " + std::to_string(f.size()) +
                                " field" + (f.size() == 1 ? "" : "s"));
    }
    const std::string_view name = f[0];
    if (name.size() > kMaxTokenNameLength) {
      return Error(line_no, "name is " + std::to_string(name.size()) +
                                " characters long (at most " + std::to_string(kMaxTokenNameLength) +
                                ")");
    }
    for (char c : name) {
      if (!IsNameChar(c)) {
        return Error(line_no, "name may hold only letters, digits and . _ @ + -");
      }
    }
    const std::optional<Role> role = ParseRole(f[1]);
    if (!role) {
      return Error(line_no, "unknown role " + QuoteRole(f[1]) + " (valid: " + kValidRoles + ")");
    }
    if (!wire::IsSha256Hex(f[2])) {
      return Error(line_no,
                   "the digest must be 64 hex digits (the SHA-256 of the token), found " +
                       (f[2].size() == 64 ? std::string("a character that is not a hex digit")
                                          : std::to_string(f[2].size()) + " characters"));
    }
    if (auto it = names_.find(std::string(name)); it != names_.end()) {
      return Error(line_no, "name '" + std::string(name) + "' is already used on line " +
                                std::to_string(it->second));
    }
    std::string digest = Lower(f[2]);
    if (auto it = digests_.find(digest); it != digests_.end()) {
      return Error(line_no, "the same digest as line " + std::to_string(it->second) +
                                ": every name needs its own token");
    }
    names_.emplace(std::string(name), line_no);
    digests_.emplace(digest, line_no);
    table->push_back(TokenEntry{std::string(name), *role, std::move(digest), line_no});
    return absl::OkStatus();
  }

 private:
  std::string source_;
  std::map<std::string, int> names_;
  std::map<std::string, int> digests_;
};

}  // namespace

std::string_view ToString(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kSubmit:
      return "submit";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

std::optional<Role> ParseRole(std::string_view text) {
  for (Role r : {Role::kRead, Role::kSubmit, Role::kAdmin}) {
    if (text == ToString(r)) return r;
  }
  return std::nullopt;
}

absl::StatusOr<TokenTable> TokenTable::Parse(std::string_view text, std::string_view source) {
  LineParser parser(source);
  TokenTable table;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string_view> fields = SplitFields(line);
    if (fields.empty()) continue;
    RETURN_IF_ERROR(parser.Add(line_no, fields, &table.entries_));
  }
  if (table.entries_.empty()) {
    return absl::InvalidArgumentError(
        std::string(source) +
        ": no tokens (every call would be refused); add lines 'NAME ROLE SHA256HEX'");
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path, "--tokens"));
  return Parse(text, "--tokens " + path);
}

const TokenEntry* TokenTable::Find(std::string_view token) const {
  const std::string digest = wire::TokenSha256Hex(token);
  const TokenEntry* found = nullptr;
  for (const TokenEntry& e : entries_) {
    // CRYPTO_memcmp takes the same time wherever the first difference is.
    const bool same = CRYPTO_memcmp(digest.data(), e.sha256_hex.data(), digest.size()) == 0;
    if (same) found = &e;
  }
  return found;
}

std::string TokenTable::Summary() const {
  std::array<int, 3> counts{};
  for (const TokenEntry& e : entries_) ++counts[static_cast<int>(e.role)];
  return std::to_string(entries_.size()) + (entries_.size() == 1 ? " token (" : " tokens (") +
         std::to_string(counts[2]) + " admin, " + std::to_string(counts[1]) + " submit, " +
         std::to_string(counts[0]) + " read)";
}

}  // namespace gemmprof::security
