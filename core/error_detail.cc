#include "core/error_detail.h"

#include "absl/strings/cord.h"
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
