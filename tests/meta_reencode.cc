// meta_reencode VERSION — reads one metadata blob on stdin and writes it
// again, as metadata version VERSION (2, 3 or 4), on stdout: for tests that
// need the profile an older build would have written
// (tests/fuzz/meta_v3_to_v2.py).  A blob that does not decode is an error.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "core/metadata.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: meta_reencode VERSION < BLOB > BLOB\n");
    return 2;
  }
  const unsigned long version = std::strtoul(argv[1], nullptr, 10);
  if (version < 2 || version > 4) {
    std::fprintf(stderr, "meta_reencode: version %s: not 2, 3 or 4\n",
                 argv[1]);
    return 2;
  }
  const std::string in((std::istreambuf_iterator<char>(std::cin)),
                       std::istreambuf_iterator<char>());
  ballarus::TranslationUnit tu;
  const ballarus::DecodeResult r = ballarus::DecodeMetadata(
      reinterpret_cast<const uint8_t*>(in.data()), in.size(), &tu);
  if (!r.ok) {
    std::fprintf(stderr, "meta_reencode: stdin: %s\n", r.error.c_str());
    return 1;
  }
  const std::vector<uint8_t> out =
      ballarus::EncodeMetadata(tu, static_cast<uint32_t>(version));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
