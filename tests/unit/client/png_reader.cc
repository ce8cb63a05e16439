#include "png_reader.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>

namespace gemmprof::client::testing {
namespace {

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

absl::StatusOr<std::vector<uint8_t>> Inflate(const std::string& data, size_t expected) {
  std::vector<uint8_t> out(expected);
  uLongf len = static_cast<uLongf>(expected);
  if (uncompress(out.data(), &len, reinterpret_cast<const Bytef*>(data.data()), data.size()) !=
          Z_OK ||
      len != expected)
    return absl::InvalidArgumentError("png: corrupt IDAT stream");
  return out;
}

// Undoes the PNG filter of one scanline (`line` starts with the filter byte).
absl::Status Unfilter(const uint8_t* line, const std::vector<uint8_t>& prev, int channels,
                      std::vector<uint8_t>& cur) {
  const uint8_t filter = line[0];
  const uint8_t* in = line + 1;
  const size_t bpp = static_cast<size_t>(channels);
  for (size_t i = 0; i < cur.size(); ++i) {
    const int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
    int v = in[i];
    switch (filter) {
      case 0:
        break;
      case 1:
        v += a;
        break;
      case 2:
        v += b;
        break;
      case 3:
        v += (a + b) / 2;
        break;
      case 4:
        v += Paeth(a, b, c);
        break;
      default:
        return absl::InvalidArgumentError("png: bad filter type");
    }
    cur[i] = static_cast<uint8_t>(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Image> DecodePng(const std::string& bytes) {
  static const uint8_t kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSig, 8) != 0)
    return absl::InvalidArgumentError("png: bad signature");
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  Image img;
  int channels = 0;
  std::string idat;
  for (size_t pos = 8; pos + 12 <= bytes.size();) {
    const uint32_t len = Be32(p + pos);
    const std::string type(bytes.data() + pos + 4, 4);
    const uint8_t* body = p + pos + 8;
    if (pos + 12 + len > bytes.size()) return absl::InvalidArgumentError("png: truncated chunk");
    if (type == "IHDR") {
      img.width = static_cast<int>(Be32(body));
      img.height = static_cast<int>(Be32(body + 4));
      const int depth = body[8], color = body[9], interlace = body[12];
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0)
        return absl::InvalidArgumentError("png: only 8-bit RGB/RGBA non-interlaced");
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(reinterpret_cast<const char*>(body), len);
    } else if (type == "IEND") {
      break;
    }
    pos += 12 + len;
  }
  if (channels == 0 || img.width <= 0 || img.height <= 0)
    return absl::InvalidArgumentError("png: no IHDR");
  const size_t stride = size_t(img.width) * channels;
  ASSIGN_OR_RETURN(std::vector<uint8_t> raw, Inflate(idat, (stride + 1) * img.height));
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img.rgba.resize(size_t(img.width) * img.height * 4);
  for (int y = 0; y < img.height; ++y) {
    RETURN_IF_ERROR(Unfilter(&raw[y * (stride + 1)], prev, channels, cur));
    for (int x = 0; x < img.width; ++x) {
      uint8_t* px = &img.rgba[(size_t(y) * img.width + x) * 4];
      std::memcpy(px, &cur[size_t(x) * channels], 3);
      px[3] = channels == 4 ? cur[size_t(x) * channels + 3] : 255;
    }
    std::swap(prev, cur);
  }
  return img;
}

}  // namespace gemmprof::client::testing
