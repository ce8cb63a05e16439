#include "server/storage/json_reader.h"

#include <climits>
#include <limits>

#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {

using nlohmann::json;

JsonReader::JsonReader(const json& object, std::string path, absl::Status* status)
    : object_(object), path_(std::move(path)), status_(status) {
  if (!object_.is_object()) Fail(path_, "is not an object");
}

void JsonReader::Int(const char* key, int64_t* out) {
  const json* v = Find(key);
  if (v == nullptr) return;
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
    Fail(Name(key), "is out of range for int64");
  } else if (v->is_number_integer()) {
    *out = v->get<int64_t>();
  } else {
    Fail(Name(key), "is not an integer");
  }
}

void JsonReader::Int(const char* key, int32_t* out) {
  int64_t wide = *out;
  Int(key, &wide);
  if (wide < INT32_MIN || wide > INT32_MAX) return Fail(Name(key), "is out of range for int32");
  *out = static_cast<int32_t>(wide);
}

void JsonReader::Uint(const char* key, uint64_t* out) {
  const json* v = Find(key);
  if (v == nullptr) return;
  if (!v->is_number_unsigned()) return Fail(Name(key), "is not an unsigned integer");
  *out = v->get<uint64_t>();
}

void JsonReader::Bool(const char* key, bool* out) {
  const json* v = Find(key);
  if (v == nullptr) return;
  if (!v->is_boolean()) return Fail(Name(key), "is not a boolean");
  *out = v->get<bool>();
}

void JsonReader::Str(const char* key, std::string* out) {
  const json* v = Find(key);
  if (v == nullptr) return;
  if (!v->is_string()) return Fail(Name(key), "is not a string");
  *out = v->get<std::string>();
}

void JsonReader::Double(const char* key, double* out) {
  const json* v = Find(key);
  if (v == nullptr) return;
  if (!ReadNumber(*v, out)) Fail(Name(key), "is not a number");
}

void JsonReader::IntList(const char* key, std::vector<int64_t>* out) {
  const json* v = Array(key);
  if (v == nullptr) return;
  out->clear();
  for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_number_integer() ||
        (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t{INT64_MAX})) {
      return Fail(absl::StrCat(Name(key), "[", i, "]"), "is not an int64");
    }
    out->push_back(e.get<int64_t>());
  }
}

void JsonReader::DoubleList(const char* key, std::vector<double>* out) {
  const json* v = Array(key);
  if (v == nullptr) return;
  out->clear();
  out->reserve(v->size());
  for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
    double d = 0;
    if (!ReadNumber((*v)[i], &d)) {
      return Fail(absl::StrCat(Name(key), "[", i, "]"), "is not a number");
    }
    out->push_back(d);
  }
}

std::optional<JsonReader> JsonReader::Child(const char* key) {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return JsonReader(*v, Name(key), status_);
}

const json* JsonReader::Find(const char* key) {
  if (!status_->ok() || !object_.is_object()) return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const json* JsonReader::Array(const char* key) {
  const json* v = Find(key);
  if (v != nullptr && !v->is_array()) {
    Fail(Name(key), "is not an array");
    return nullptr;
  }
  return v;
}

bool JsonReader::ReadNumber(const json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "inf") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-inf") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

void JsonReader::Fail(const std::string& name, std::string_view what) {
  if (status_->ok()) *status_ = absl::DataLossError(absl::StrCat(name, " ", AbslSv(what)));
}

}  // namespace gemmprof::storage
