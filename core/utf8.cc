#include "core/utf8.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gemmprof::core {

size_t FirstInvalidUtf8(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and the range its second byte must fall in (RFC 3629's
    // table): the narrow ranges exclude overlong forms, surrogates and code points above
    // U+10FFFF.
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + 1 >= text.size() || byte(i + 1) < low || byte(i + 1) > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (i + k >= text.size() || byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

absl::Status CheckUtf8(std::string_view field, std::string_view text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": byte ",
                   absl::StrFormat("0x%02X", static_cast<unsigned char>(text[bad])),
                   " at offset ", bad, " is not UTF-8; give text"));
}

}  // namespace gemmprof::core
