// gemmprofd --tokens files (server/security/tokens.h): text gives a token table or one
// InvalidArgument "<source>:<line>: ..." that never quotes a digest the file holds; an
// accepted table holds only valid names and lower-case 64-digit digests, and looks up
// any token without trouble.
#include <cctype>

#include "server/security/tokens.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Every run of 64 hex digits in `text` (what a digest looks like).
std::vector<std::string_view> DigestLike(std::string_view text) {
  std::vector<std::string_view> found;
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    run = IsHex(text[i]) ? run + 1 : 0;
    if (run >= 64) found.push_back(text.substr(i + 1 - 64, 64));
  }
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gemmprof::security::TokenTable;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = TokenTable::Parse(text, "tokens");
  if (!table.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(table.status()));
    const std::string message(table.status().message());
    FUZZ_CHECK(message.rfind("tokens:", 0) == 0);
    for (std::string_view digest : DigestLike(text)) {
      FUZZ_CHECK(message.find(digest) == std::string::npos);
    }
    return 0;
  }
  FUZZ_CHECK(!table->entries().empty());
  for (const auto& entry : table->entries()) {
    FUZZ_CHECK(!entry.name.empty() && entry.name.size() <= gemmprof::security::kMaxTokenNameLength);
    FUZZ_CHECK(entry.sha256_hex.size() == 64);
    for (char c : entry.sha256_hex) FUZZ_CHECK(IsHex(c) && !std::isupper(static_cast<unsigned char>(c)));
    FUZZ_CHECK(entry.line >= 1);
  }
  (void)table->Find(text);
  (void)table->Find("");
  FUZZ_CHECK(!table->Summary().empty());
  return 0;
}
