#include "client/commands/since.h"

#include <chrono>
#include <string>

namespace gemmprof::client {
namespace {

absl::Status Bad(std::string_view text) {
  return absl::InvalidArgumentError("--since: \"" + std::string(text) +
                                    "\" is neither a date YYYY-MM-DD nor an age like 7d, 12h, 30m");
}

bool Digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseSince(std::string_view text, int64_t now_ms) {
  if (text.size() >= 2 && Digits(text.substr(0, text.size() - 1)) && text.size() <= 7) {
    const int64_t n = std::stoll(std::string(text.substr(0, text.size() - 1)));
    int64_t unit_ms = 0;
    switch (text.back()) {
      case 'd':
        unit_ms = 86400000;
        break;
      case 'h':
        unit_ms = 3600000;
        break;
      case 'm':
        unit_ms = 60000;
        break;
      default:
        return Bad(text);
    }
    if (n < 1) return Bad(text);
    return now_ms - n * unit_ms;
  }
  if (text.size() != 10 || text[4] != '-' || text[7] != '-' || !Digits(text.substr(0, 4)) ||
      !Digits(text.substr(5, 2)) || !Digits(text.substr(8, 2)))
    return Bad(text);
  using namespace std::chrono;
  const year_month_day ymd{year{std::stoi(std::string(text.substr(0, 4)))},
                           month{static_cast<unsigned>(std::stoi(std::string(text.substr(5, 2))))},
                           day{static_cast<unsigned>(std::stoi(std::string(text.substr(8, 2))))}};
  if (!ymd.ok()) return Bad(text);
  return duration_cast<milliseconds>(sys_days{ymd}.time_since_epoch()).count();
}

}  // namespace gemmprof::client
