// What every fuzz target shares: FUZZ_CHECK, which ends the run with the broken property
// and where it is (libFuzzer saves the input that did it), and a reader that splits the
// fuzzer's bytes into the values a target needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

// Aborts with the condition's text, file and line when `cond` is false.
#define FUZZ_CHECK(cond)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

// The libFuzzer entry point every target defines.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace gemmprof::fuzz {

// Reads a fuzzer input front to back: fixed-size numbers from the front, the rest as
// text. Reads past the end yield zeros, so every input is usable.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // The next byte, or 0 past the end.
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // The next two bytes as a little-endian number.
  uint16_t U16() { return static_cast<uint16_t>(Byte() | (Byte() << 8)); }
  // What is left, as text.
  std::string_view Rest() {
    std::string_view rest(reinterpret_cast<const char*>(data_) + pos_, size_ - pos_);
    pos_ = size_;
    return rest;
  }
  // Text up to the next `sep` (consumed) or the end.
  std::string_view Until(char sep) {
    const size_t start = pos_;
    while (pos_ < size_ && data_[pos_] != static_cast<uint8_t>(sep)) ++pos_;
    std::string_view part(reinterpret_cast<const char*>(data_) + start, pos_ - start);
    if (pos_ < size_) ++pos_;
    return part;
  }
  bool done() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace gemmprof::fuzz
