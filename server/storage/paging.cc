#include "server/storage/paging.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {

absl::Status ValidatePageSize(int32_t page_size, int32_t max_page_size) {
  if (page_size < 1 || page_size > max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: ", page_size, " is outside 1..", max_page_size));
  }
  return absl::OkStatus();
}

std::string MakePageToken(int64_t last_id) { return absl::StrCat(last_id); }

absl::StatusOr<std::optional<int64_t>> ParsePageToken(std::string_view token) {
  if (token.empty()) return std::nullopt;
  int64_t id = 0;
  // SimpleAtoi accepts surrounding spaces and a '+'; a token we made never has them.
  const bool canonical = !token.empty() && token.front() >= '1' && token.front() <= '9';
  if (!canonical || !absl::SimpleAtoi(AbslSv(token), &id) || id < 1 || MakePageToken(id) != token) {
    return absl::InvalidArgumentError(absl::StrCat("page_token: '", absl::CHexEscape(AbslSv(token)),
                                                   "' is not a token from a previous page"));
  }
  return id;
}

}  // namespace gemmprof::storage
