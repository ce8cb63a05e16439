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

// A dimension: a plain size, START:END:STEP (arithmetic, END included when reached) or
// START:END:*F (geometric, F >= 2).
struct DimRange {
  int64_t start = 0, end = 0, step = 1;
  bool geometric = false;

  int64_t Count() const {
    if (!geometric) return (end - start) / step + 1;
    int64_t n = 0;
    for (int64_t v = start; v <= end; v *= step) {
      ++n;
      if (v > end / step) break;  // the next value passes END (no overflow)
    }
    return n;
  }
  std::vector<int64_t> Values() const {
    std::vector<int64_t> out;
    for (int64_t v = start; v <= end; v = geometric ? v * step : v + step) {
      out.push_back(v);
      if (geometric ? v > end / step : v > end - step) break;
    }
    return out;
  }
};

absl::StatusOr<DimRange> ParseRange(std::string_view dim, std::string_view item, size_t position) {
  const std::vector<std::string_view> parts = Split(dim, ":");
  if (parts.size() == 1) {
    ASSIGN_OR_RETURN(int64_t v, ParseDim(dim, item, position));
    return DimRange{v, v, 1, false};
  }
  if (parts.size() != 3) {
    return ItemError(item, position,
                     absl::StrCat("has range '", Escaped(dim),
                                  "'; a range is START:END:STEP or START:END:*FACTOR"));
  }
  DimRange r;
  ASSIGN_OR_RETURN(r.start, ParseDim(parts[0], item, position));
  ASSIGN_OR_RETURN(r.end, ParseDim(parts[1], item, position));
  std::string_view step = parts[2];
  r.geometric = !step.empty() && step.front() == '*';
  if (r.geometric) step.remove_prefix(1);
  ASSIGN_OR_RETURN(r.step, ParseDim(step, item, position));
  if (r.start > r.end) {
    return ItemError(item, position,
                     absl::StrCat("has range '", Escaped(dim), "' whose START ", r.start,
                                  " is above its END ", r.end));
  }
  if (r.geometric && r.step < 2) {
    return ItemError(item, position,
                     absl::StrCat("has range '", Escaped(dim), "' with factor ", r.step,
                                  "; a geometric range needs *2 or more"));
  }
  return r;
}

// The shapes of one item, appended to `out`; `budget` is how many more may be added.
absl::Status ParseItem(std::string_view item, size_t position, int64_t budget,
                       std::vector<GemmShape>* out) {
  if (item.empty()) return ItemError(item, position, "is empty");
  std::vector<std::string_view> dims = Split(item, "xX");
  if (dims.size() != 1 && dims.size() != 3) {
    return ItemError(
        item, position,
        absl::StrCat("has ", dims.size(), " dimensions; expected MxKxN or one square size"));
  }
  std::vector<DimRange> ranges;
  int64_t count = 1;
  for (std::string_view dim : dims) {
    ASSIGN_OR_RETURN(DimRange r, ParseRange(dim, item, position));
    // Counted before anything is expanded: a huge range is refused at once.
    if (!MulFits(count, r.Count(), &count) || count > budget) {
      return ItemError(item, position,
                       absl::StrCat("expands to more shapes than the limit of ", kMaxExpandedShapes,
                                    " for all items together (", budget, " left for this item)"));
    }
    ranges.push_back(r);
  }
  const std::vector<int64_t> ms = ranges[0].Values();
  const std::vector<int64_t> ks = dims.size() == 3 ? ranges[1].Values() : std::vector<int64_t>{0};
  const std::vector<int64_t> ns = dims.size() == 3 ? ranges[2].Values() : std::vector<int64_t>{0};
  for (int64_t m : ms) {
    for (int64_t k : ks) {
      for (int64_t n : ns) {
        GemmShape shape{m, dims.size() == 3 ? k : m, dims.size() == 3 ? n : m};
        int64_t mk = 0;
        int64_t mkn = 0;
        if (!MulFits(shape.m, shape.k, &mk) || !MulFits(mk, shape.n, &mkn)) {
          return ItemError(item, position,
                           absl::StrCat("has M*K*N above the int64 limit ", kMaxInt64));
        }
        out->push_back(shape);
      }
    }
  }
  return absl::OkStatus();
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
    const int64_t budget = kMaxExpandedShapes - static_cast<int64_t>(shapes.size());
    RETURN_IF_ERROR(ParseItem(Trim(raw), position, budget, &shapes));
  }
  return shapes;
}

absl::StatusOr<std::vector<int64_t>> ParseSizeRange(std::string_view text, int64_t limit) {
  const std::string_view item = Trim(text);
  ASSIGN_OR_RETURN(DimRange r, ParseRange(item, item, 1));
  if (r.Count() > limit) {
    return absl::InvalidArgumentError(absl::StrCat("'", Escaped(item), "' expands to ", r.Count(),
                                                   " values, above the limit of ", limit));
  }
  return r.Values();
}

}  // namespace gemmprof::core
