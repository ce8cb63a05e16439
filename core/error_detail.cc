#include "core/error_detail.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gemmprof::core {

absl::Status WithSource(absl::Status status, absl::string_view where) {
  if (status.ok()) return status;
  status.SetPayload(kSourcePayloadUrl, absl::Cord(where));
  return status;
}

std::string SourceOf(const absl::Status& status) {
  auto payload = status.GetPayload(kSourcePayloadUrl);
  return payload.has_value() ? std::string(*payload) : "";
}

absl::Status MarkContextLost(absl::Status status) {
  if (status.ok()) return status;
  status.SetPayload(kContextLostPayloadUrl, absl::Cord("1"));
  return status;
}

bool IsContextLost(const absl::Status& status) {
  return status.GetPayload(kContextLostPayloadUrl).has_value();
}

absl::Status MarkInFlight(absl::Status status, int64_t item_id) {
  if (status.ok() || item_id == 0) return status;
  status.SetPayload(kInFlightPayloadUrl, absl::Cord(absl::StrCat(item_id)));
  return status;
}

int64_t InFlightItem(const absl::Status& status) {
  const auto payload = status.GetPayload(kInFlightPayloadUrl);
  int64_t id = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &id)) return 0;
  return id;
}

absl::Status AppendToMessage(const absl::Status& status, absl::string_view suffix) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(status.message(), suffix));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

absl::Status WhileDoing(const absl::Status& status, absl::string_view activity) {
  return AppendToMessage(status, absl::StrCat(" while ", activity));
}

}  // namespace gemmprof::core
