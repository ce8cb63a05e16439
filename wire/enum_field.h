// Parsing of the wire's enum-like string fields, shared by the conversions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::wire {

// Parses `value` with `parse` (one of core's Parse* functions). Empty `value` gives
// `fallback` when there is one. Otherwise InvalidArgument naming the field, the value
// and the valid names.
template <typename E, typename ParseFn>
absl::StatusOr<E> ParseEnumField(std::string_view field, const std::string& value, ParseFn parse,
                                 std::string_view valid, std::optional<E> fallback = std::nullopt) {
  if (value.empty() && fallback.has_value()) return *fallback;
  if (auto v = parse(value)) return *v;
  return absl::InvalidArgumentError(std::string(field) + ": unknown value '" + value +
                                    "' (valid: " + std::string(valid) + ")");
}

}  // namespace gemmprof::wire
