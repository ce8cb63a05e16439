// PNG charts: the SVG of a chart rendered by librsvg's command-line renderer (Debian's
// librsvg2-bin, `rsvg-convert`), so there is one chart implementation and the client
// links no graphics library (its bundle stays small). A missing renderer is a clear error.
#pragma once

#include <string>

#include "core/status.h"

namespace gemmprof::client::render {

// Writes `svg` rendered as PNG to `png_path`. FailedPrecondition when rsvg-convert is
// not installed (naming the package); Internal when it fails (with its stderr's first
// line); DataLoss when it leaves no valid PNG behind.
absl::Status WritePngFromSvg(const std::string& svg, const std::string& png_path);

}  // namespace gemmprof::client::render
