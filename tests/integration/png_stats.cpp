// png_stats FILE [RRGGBB ...]: what the browser test needs to know about a screenshot, without
// an image library: size, how many pixels are not white, how many distinct colours, and how many
// pixels are near (each channel within 6: anti-aliased edges do not count) each colour given.
//   width=1280 height=4000 nonwhite=812345 colours=4211 16a34a=5120
// Reads 8-bit RGB or RGBA PNGs without interlacing (what Chromium writes); zlib inflates.
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "png_stats: %s\n", message.c_str());
  std::exit(2);
}

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: png_stats FILE [RRGGBB ...]");
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  static constexpr unsigned char kSignature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(std::begin(kSignature), std::end(kSignature), file.begin()))
    die(std::string(argv[1]) + ": not a PNG file");

  std::uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<unsigned char> compressed;
  for (std::size_t at = 8; at + 12 <= file.size();) {
    const std::uint32_t length = be32(&file[at]);
    if (at + 12 + length > file.size()) die("truncated chunk");
    const std::string type(file.begin() + static_cast<long>(at) + 4,
                           file.begin() + static_cast<long>(at) + 8);
    const unsigned char* data = &file[at + 8];
    if (type == "IHDR") {
      width = be32(data);
      height = be32(data + 4);
      if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0)
        die("only 8-bit RGB/RGBA PNGs without interlacing are read");
      channels = data[9] == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), data, data + length);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (!width || !height || compressed.empty()) die("no image data");

  const std::size_t stride = std::size_t{width} * channels;
  std::vector<unsigned char> raw((stride + 1) * height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, compressed.data(), compressed.size()) != Z_OK ||
      raw_size != raw.size())
    die("cannot inflate the image data");

  std::vector<unsigned char> pixels(stride * height);
  for (std::size_t y = 0; y < height; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* line = &raw[y * (stride + 1) + 1];
    unsigned char* out = &pixels[y * stride];
    const unsigned char* up = y ? &pixels[(y - 1) * stride] : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? out[i - channels] : 0;
      const int b = up ? up[i] : 0;
      const int c = up && i >= static_cast<std::size_t>(channels) ? up[i - channels] : 0;
      int predicted = 0;
      switch (filter) {
        case 0: break;
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: predicted = paeth(a, b, c); break;
        default: die("bad filter type");
      }
      out[i] = static_cast<unsigned char>(line[i] + predicted);
    }
  }

  std::vector<std::array<int, 3>> wanted;
  for (int i = 2; i < argc; ++i) {
    const long rgb = std::strtol(argv[i], nullptr, 16);
    wanted.push_back(
        {static_cast<int>(rgb >> 16 & 255), static_cast<int>(rgb >> 8 & 255), static_cast<int>(rgb & 255)});
  }
  std::vector<std::size_t> near(wanted.size(), 0);
  std::size_t nonwhite = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t p = 0; p < std::size_t{width} * height; ++p) {
    const unsigned char* px = &pixels[p * channels];
    if (px[0] < 250 || px[1] < 250 || px[2] < 250) ++nonwhite;
    colours.insert(std::uint32_t{px[0]} << 16 | std::uint32_t{px[1]} << 8 | px[2]);
    for (std::size_t w = 0; w < wanted.size(); ++w)
      if (std::abs(px[0] - wanted[w][0]) <= 6 && std::abs(px[1] - wanted[w][1]) <= 6 &&
          std::abs(px[2] - wanted[w][2]) <= 6)
        ++near[w];
  }
  std::printf("width=%u height=%u nonwhite=%zu colours=%zu", width, height, nonwhite, colours.size());
  for (std::size_t w = 0; w < wanted.size(); ++w) std::printf(" %s=%zu", argv[w + 2], near[w]);
  std::printf("\n");
  return 0;
}
