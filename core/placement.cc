#include "core/placement.h"

#include <cctype>

namespace gemmprof::core {
namespace {

absl::Status Bad(std::string_view field, std::string_view text, std::string_view why) {
  std::string message(field);
  message += ": '";
  message += text;
  message += "' ";
  message += why;
  message += "; give ";
  message += kPlacementForms;
  return absl::InvalidArgumentError(message);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

absl::StatusOr<Placement> ParsePlacement(std::string_view field, std::string_view text) {
  Placement p;
  if (text.empty()) return p;
  if (text == "this-node") {
    p.kind = PlacementKind::kThisNode;
    return p;
  }
  if (text == "any") {
    p.kind = PlacementKind::kAny;
    return p;
  }
  std::string_view rest = text;
  if (rest.starts_with("model:")) {
    p.kind = PlacementKind::kModel;
    rest.remove_prefix(6);
  } else if (rest.starts_with("node:")) {
    p.kind = PlacementKind::kNode;
    rest.remove_prefix(5);
  } else {
    return Bad(field, text, "is not a placement");
  }
  rest = Trim(rest);
  if (rest.empty()) return Bad(field, text, "names no model or node after the colon");
  if (rest.size() > 200) {
    return Bad(field, text, "names a model or node longer than 200 characters");
  }
  if (rest.find(',') != std::string_view::npos) {
    return Bad(field, text, "names more than one target (a campaign is one job per model)");
  }
  p.name = std::string(rest);
  return p;
}

std::string ToString(const Placement& p) {
  switch (p.kind) {
    case PlacementKind::kDefault:
      return "";
    case PlacementKind::kThisNode:
      return "this-node";
    case PlacementKind::kAny:
      return "any";
    case PlacementKind::kModel:
      return "model:" + p.name;
    case PlacementKind::kNode:
      return "node:" + p.name;
  }
  return "";
}

}  // namespace gemmprof::core
