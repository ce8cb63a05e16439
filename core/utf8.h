// Text that crosses the wire must be well-formed UTF-8: proto3 string fields refuse
// anything else, and so does a JSON document. The checks here let a user's bad bytes be
// an error naming where they came from, instead of a failed call or a broken reply.
#pragma once

#include <string_view>

#include "core/status.h"

namespace gemmprof::core {

// The offset of the first byte of `text` that does not begin or continue a well-formed
// UTF-8 sequence (RFC 3629: no overlong forms, no UTF-16 surrogates, nothing above
// U+10FFFF), or std::string_view::npos when the whole text is well formed. Pure.
size_t FirstInvalidUtf8(std::string_view text);

// OK, or InvalidArgument "FIELD: byte 0x90 at offset 3 is not UTF-8; give text" for text
// that FirstInvalidUtf8 finds a bad byte in. The value itself is not quoted (it cannot
// be shown as text).
absl::Status CheckUtf8(std::string_view field, std::string_view text);

}  // namespace gemmprof::core
