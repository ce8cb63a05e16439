// Reading the JSON the store keeps (server/storage/json_codec.h) field by field, with
// every problem reported as DataLoss naming the field's path.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace gemmprof::storage {

// Reads fields of one JSON object; remembers the first problem instead of throwing,
// so decoders read straight through and report once. Missing fields keep defaults.
// Numbers may also be the strings "nan", "inf" and "-inf" (JSON has no such numbers).
// Not thread-safe; cheap to make, one per object read.
class JsonReader {
 public:
  // `path` names the object in messages ("measurement.time"); `status` receives the
  // first problem (DataLoss "<path>.<key> <what was wrong>") and must outlive the reader.
  JsonReader(const nlohmann::json& object, std::string path, absl::Status* status);

  void Int(const char* key, int64_t* out);
  void Int(const char* key, int32_t* out);
  void Uint(const char* key, uint64_t* out);
  void Bool(const char* key, bool* out);
  void Str(const char* key, std::string* out);
  void Double(const char* key, double* out);
  template <typename E>
  void Enum(const char* key, E* out, std::optional<E> (*parse)(std::string_view));
  template <typename E>
  void EnumList(const char* key, std::vector<E>* out, std::optional<E> (*parse)(std::string_view));
  void IntList(const char* key, std::vector<int64_t>* out);
  // Numbers, or the non-finite strings; anything else is "<path>[i] is not a number".
  void DoubleList(const char* key, std::vector<double>* out);
  // Calls `read(JsonReader&, T*)` on each element of the array at `key`.
  template <typename T, typename F>
  void List(const char* key, std::vector<T>* out, F read);
  // Reader over the object at `key`, or nullopt when the key is absent or null.
  std::optional<JsonReader> Child(const char* key);
  // Marks the value at `key` bad (DataLoss naming it) when a check beyond its type fails.
  void Invalid(const char* key, std::string_view what) { Fail(Name(key), what); }

 private:
  const nlohmann::json* Find(const char* key);
  const nlohmann::json* Array(const char* key);
  // Reads `v` as a number or a non-finite string into `out`; false when it is neither.
  static bool ReadNumber(const nlohmann::json& v, double* out);
  template <typename E>
  void ParseEnum(const std::string& name, const std::string& text, E* out,
                 std::optional<E> (*parse)(std::string_view));
  std::string Name(const char* key) const { return absl::StrCat(path_, ".", key); }
  void Fail(const std::string& name, std::string_view what);

  const nlohmann::json& object_;
  std::string path_;
  absl::Status* status_;
};

template <typename E>
void JsonReader::Enum(const char* key, E* out, std::optional<E> (*parse)(std::string_view)) {
  std::string text;
  if (Find(key) == nullptr) return;
  Str(key, &text);
  if (!status_->ok()) return;
  ParseEnum(Name(key), text, out, parse);
}

template <typename E>
void JsonReader::EnumList(const char* key, std::vector<E>* out,
                          std::optional<E> (*parse)(std::string_view)) {
  const nlohmann::json* v = Array(key);
  if (v == nullptr) return;
  out->clear();
  for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
    const std::string name = absl::StrCat(Name(key), "[", i, "]");
    if (!(*v)[i].is_string()) return Fail(name, "is not a string");
    E e{};
    ParseEnum(name, (*v)[i].template get<std::string>(), &e, parse);
    out->push_back(e);
  }
}

template <typename T, typename F>
void JsonReader::List(const char* key, std::vector<T>* out, F read) {
  const nlohmann::json* v = Array(key);
  if (v == nullptr) return;
  out->clear();
  for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
    JsonReader element((*v)[i], absl::StrCat(Name(key), "[", i, "]"), status_);
    T value{};
    read(element, &value);
    out->push_back(std::move(value));
  }
}

template <typename E>
void JsonReader::ParseEnum(const std::string& name, const std::string& text, E* out,
                           std::optional<E> (*parse)(std::string_view)) {
  std::optional<E> e = parse(text);
  if (!e.has_value()) return Fail(name, absl::StrCat("has unknown value '", text, "'"));
  *out = *e;
}

}  // namespace gemmprof::storage
