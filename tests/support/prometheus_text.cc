#include "tests/support/prometheus_text.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace gemmprof::testing {
namespace {

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool ValidName(const std::string& s) {
  if (s.empty() || !IsNameStart(s[0])) return false;
  for (char c : s) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool ParseValue(const std::string& s, double* v) {
  if (s == "+Inf") return *v = INFINITY, true;
  if (s == "-Inf") return *v = -INFINITY, true;
  if (s == "NaN") return *v = NAN, true;
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !std::isinf(*v) && !std::isnan(*v);
}

// name{a="x",b="y"} value
bool ParseSampleLine(const std::string& line, PromSample* out, std::string* why) {
  size_t i = 0;
  while (i < line.size() && IsNameChar(line[i])) ++i;
  out->name = line.substr(0, i);
  if (!ValidName(out->name)) return *why = "bad metric name", false;
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      size_t start = i;
      while (i < line.size() && IsNameChar(line[i])) ++i;
      const std::string label = line.substr(start, i - start);
      if (!ValidName(label) || line.substr(i, 2) != "=\"") return *why = "bad label", false;
      i += 2;
      std::string value;
      for (; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\') {
          if (++i >= line.size()) return *why = "unterminated escape", false;
          if (line[i] == 'n') {
            value += '\n';
          } else if (line[i] == '\\' || line[i] == '"') {
            value += line[i];
          } else {
            return *why = "bad escape in label value", false;
          }
        } else {
          value += line[i];
        }
      }
      if (i >= line.size()) return *why = "unterminated label value", false;
      ++i;
      if (!out->labels.emplace(label, value).second) return *why = "repeated label " + label, false;
      if (i < line.size() && line[i] == ',')
        ++i;
      else if (i >= line.size() || line[i] != '}')
        return *why = "expected ',' or '}'", false;
    }
    if (i >= line.size()) return *why = "unterminated label set", false;
    ++i;
  }
  if (i >= line.size() || line[i] != ' ')
    return *why = "expected one space before the value", false;
  std::string rest = line.substr(i + 1);
  const size_t space = rest.find(' ');
  if (space != std::string::npos) {
    // An optional integer timestamp.
    const std::string ts = rest.substr(space + 1);
    char* end = nullptr;
    std::strtoll(ts.c_str(), &end, 10);
    if (ts.empty() || end != ts.c_str() + ts.size()) return *why = "bad timestamp", false;
    rest = rest.substr(0, space);
  }
  if (!ParseValue(rest, &out->value)) return *why = "bad value '" + rest + "'", false;
  return true;
}

// The family a sample name belongs to, given the families declared so far.
std::string FamilyOf(const std::string& name, const std::map<std::string, PromFamily>& families) {
  if (families.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto it = families.find(base);
      if (it != families.end() &&
          (it->second.type == "histogram" || it->second.type == "summary")) {
        return base;
      }
    }
  }
  return "";
}

std::string SeriesKey(const std::string& name, std::map<std::string, std::string> labels,
                      bool drop_le) {
  if (drop_le) labels.erase("le");
  std::string key = name;
  for (const auto& [k, v] : labels) key += "|" + k + "=" + v;
  return key;
}

absl::Status CheckHistogram(const std::string& name, const PromFamily& f) {
  struct Series {
    std::vector<std::pair<double, double>> buckets;  // le, count
    bool has_sum = false, has_count = false;
    double count = 0;
  };
  std::map<std::string, Series> series;
  for (const PromSample& s : f.samples) {
    Series& e = series[SeriesKey(name, s.labels, true)];
    if (s.name == name + "_bucket") {
      auto le = s.labels.find("le");
      double bound = 0;
      if (le == s.labels.end() || !ParseValue(le->second, &bound)) {
        return absl::InvalidArgumentError(name + ": a bucket without a numeric le label");
      }
      e.buckets.emplace_back(bound, s.value);
    } else if (s.name == name + "_sum") {
      e.has_sum = true;
    } else if (s.name == name + "_count") {
      e.has_count = true;
      e.count = s.value;
    } else {
      return absl::InvalidArgumentError(name + ": histogram sample " + s.name +
                                        " is not _bucket, _sum or _count");
    }
  }
  for (const auto& [key, e] : series) {
    if (e.buckets.empty() || !std::isinf(e.buckets.back().first)) {
      return absl::InvalidArgumentError(key + ": buckets must end with le=\"+Inf\"");
    }
    for (size_t i = 1; i < e.buckets.size(); ++i) {
      if (e.buckets[i].first <= e.buckets[i - 1].first) {
        return absl::InvalidArgumentError(key + ": le bounds not ascending");
      }
      if (e.buckets[i].second < e.buckets[i - 1].second) {
        return absl::InvalidArgumentError(key + ": buckets not cumulative");
      }
    }
    if (!e.has_sum || !e.has_count) return absl::InvalidArgumentError(key + ": no _sum or _count");
    if (e.count != e.buckets.back().second) {
      return absl::InvalidArgumentError(key + ": _count differs from the +Inf bucket");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> PromExposition::Value(
    const std::string& name, const std::map<std::string, std::string>& labels) const {
  std::vector<double> found;
  for (const auto& [family, f] : families) {
    for (const PromSample& s : f.samples) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = s.labels.find(k);
        match = match && it != s.labels.end() && it->second == v;
      }
      if (match) found.push_back(s.value);
    }
  }
  if (found.empty()) return absl::NotFoundError("no sample " + name);
  if (found.size() > 1) return absl::InvalidArgumentError("several samples match " + name);
  return found.front();
}

absl::StatusOr<PromExposition> ParsePrometheusText(const std::string& text) {
  PromExposition out;
  if (!text.empty() && text.back() != '\n') {
    return absl::InvalidArgumentError("the text does not end with a newline");
  }
  std::istringstream in(text);
  std::string line;
  int n = 0;
  std::string current;  // the family whose samples are being read
  std::set<std::string> closed, series;
  auto fail = [&n](const std::string& why) {
    return absl::InvalidArgumentError("line " + std::to_string(n) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) return fail("empty line");
    if (line[0] == '#') {
      std::istringstream words(line.substr(1));
      std::string keyword, name;
      words >> keyword >> name;
      if (keyword != "HELP" && keyword != "TYPE") continue;  // a plain comment
      if (!ValidName(name)) return fail("bad name in " + keyword);
      if (closed.count(name) || (current == name && !out.families[name].samples.empty())) {
        return fail(keyword + " for " + name + " after its samples");
      }
      PromFamily& f = out.families[name];
      std::string rest;
      std::getline(words, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (keyword == "HELP") {
        if (!f.help.empty()) return fail("second HELP for " + name);
        f.help = rest;
      } else {
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!f.type.empty()) return fail("second TYPE for " + name);
        if (!kTypes.count(rest)) return fail("unknown TYPE '" + rest + "'");
        f.type = rest;
      }
      continue;
    }
    PromSample s;
    std::string why;
    if (!ParseSampleLine(line, &s, &why)) return fail(why);
    const std::string family = FamilyOf(s.name, out.families);
    if (family.empty() || out.families[family].type.empty()) {
      return fail(s.name + " has no TYPE line before it");
    }
    if (family != current) {
      if (closed.count(family)) return fail(family + "'s samples are not contiguous");
      if (!current.empty()) closed.insert(current);
      current = family;
    }
    if (!series.insert(SeriesKey(s.name, s.labels, false)).second) {
      return fail("series " + s.name + " appears twice");
    }
    const std::string& type = out.families[family].type;
    if (type == "counter") {
      if (s.value < 0) return fail("counter " + s.name + " is negative");
      if (s.name.size() < 6 || s.name.compare(s.name.size() - 6, 6, "_total") != 0) {
        return fail("counter " + s.name + " is not named *_total");
      }
    }
    out.families[family].samples.push_back(std::move(s));
  }
  for (const auto& [name, f] : out.families) {
    if (f.type.empty()) return absl::InvalidArgumentError(name + " has HELP but no TYPE");
    if (f.type == "histogram") RETURN_IF_ERROR(CheckHistogram(name, f));
  }
  return out;
}

}  // namespace gemmprof::testing
