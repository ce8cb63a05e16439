#include "core/shape_parser.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/limits.h"

namespace gemmprof::core {
namespace {

// Debian's Abseil has its own string_view type, so these stay in std::string_view.
std::string_view Trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, std::string_view separators) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || separators.find(s[i]) != std::string_view::npos) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::string Escaped(std::string_view s) {
  return absl::CHexEscape(absl::string_view(s.data(), s.size()));
}

absl::Status ItemError(std::string_view item, size_t position, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("shapes: item ", position, " '", Escaped(item), "' ", why));
}

// One dimension: digits only, 1..kMaxDim. `item`/`position` are for the message.
absl::StatusOr<int64_t> ParseDim(std::string_view dim, std::string_view item, size_t position) {
  if (dim.empty()) return ItemError(item, position, "has an empty dimension");
  if (dim.front() == '+' || dim.front() == '-') {
    return ItemError(item, position,
                     absl::StrCat("has a signed dimension '", Escaped(dim),
                                  "'; dimensions are plain positive integers"));
  }
  int64_t value = 0;
  for (char c : dim) {
    if (c < '0' || c > '9') {
      return ItemError(item, position,
                       absl::StrCat("has '", Escaped(std::string_view(&c, 1)), "' in dimension '",
                                    Escaped(dim), "'; dimensions are decimal digits only"));
    }
    // Stop accumulating as soon as the limit is passed, so long digit runs never overflow.
    value = value * 10 + (c - '0');
    if (value > kMaxDim) {
      return ItemError(
          item, position,
          absl::StrCat("has dimension '", Escaped(dim), "' above the limit ", kMaxDim));
    }
  }
  if (value == 0) {
    return ItemError(item, position, "has a zero dimension; dimensions must be >= 1");
  }
  return value;
}

absl::StatusOr<GemmShape> ParseItem(std::string_view item, size_t position) {
  if (item.empty()) return ItemError(item, position, "is empty");
  std::vector<std::string_view> dims = Split(item, "xX");
  if (dims.size() != 1 && dims.size() != 3) {
    return ItemError(
        item, position,
        absl::StrCat("has ", dims.size(), " dimensions; expected MxKxN or one square size"));
  }
  std::vector<int64_t> values;
  for (std::string_view dim : dims) {
    ASSIGN_OR_RETURN(int64_t v, ParseDim(dim, item, position));
    values.push_back(v);
  }
  GemmShape shape;
  shape.m = values[0];
  shape.k = dims.size() == 3 ? values[1] : values[0];
  shape.n = dims.size() == 3 ? values[2] : values[0];
  int64_t mk = 0;
  int64_t mkn = 0;
  if (!MulFits(shape.m, shape.k, &mk) || !MulFits(mk, shape.n, &mkn)) {
    return ItemError(item, position, absl::StrCat("has M*K*N above the int64 limit ", kMaxInt64));
  }
  return shape;
}

}  // namespace

absl::StatusOr<std::vector<GemmShape>> ParseShapeList(std::string_view text) {
  if (Trim(text).empty()) {
    return absl::InvalidArgumentError(
        "shapes: empty; expected comma-separated MxKxN items or square sizes, e.g. "
        "'4096x4096x4096,1024'");
  }
  std::vector<GemmShape> shapes;
  size_t position = 0;
  for (std::string_view raw : Split(text, ",")) {
    ++position;
    ASSIGN_OR_RETURN(GemmShape shape, ParseItem(Trim(raw), position));
    shapes.push_back(shape);
  }
  return shapes;
}

}  // namespace gemmprof::core
