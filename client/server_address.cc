#include "client/server_address.h"

#include <cctype>

namespace gemmprof::client {
namespace {

absl::Status Invalid(std::string_view source, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(std::string(source) + ": \"" + std::string(text) + "\" " +
                                    std::string(why) + "; expected HOST:PORT, e.g. " +
                                    kDefaultServer);
}

}  // namespace

absl::StatusOr<std::string> ParseServerAddress(std::string_view text, std::string_view source) {
  const auto Bad = [source](std::string_view text, std::string_view why) {
    return Invalid(source, text, why);
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Bad(text, "has no port");
  const std::string_view host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.empty()) return Bad(text, "has no host");
  if (port.empty() || port.size() > 5) return Bad(text, "has no valid port");
  int value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return Bad(text, "has a non-numeric port");
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return Bad(text, "has a port outside 1..65535");
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return Bad(text, "has an unclosed IPv6 literal");
    for (char c : host.substr(1, host.size() - 2))
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return Bad(text, "has an invalid IPv6 literal");
    return std::string(text);
  }
  for (char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      return Bad(text, "has an invalid host name");
  return std::string(text);
}

}  // namespace gemmprof::client
