// libFuzzer harness: the JSON header of a native trace. The input is the
// header text; the harness wraps it in a valid file (magic, length, CRC and a
// trailer) so that every input reaches the JSON parser.
#include <zlib.h>

#include "core/trace_format.h"
#include "tests/fuzz/test_fuzz.h"

namespace {
void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t crc(const std::string& s) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string json(reinterpret_cast<const char*>(data), size);
  std::string f = "BLKRRTRC";
  f += std::string("\x01\x00\x01\x00", 4);
  put32(f, static_cast<uint32_t>(json.size()));
  f += json;
  put32(f, crc(json));
  // The same text as the trailer (counters).
  put32(f, 0x524c5254);
  put32(f, static_cast<uint32_t>(json.size()));
  put32(f, crc(json));
  f += json;
  auto r = blkrr::TraceReader::open(
      blkrr::fuzz::scratch_path(reinterpret_cast<const uint8_t*>(f.data()), f.size()));
  if (!r) return 0;
  blkrr::Request q;
  while (true) {
    auto got = r->next(q);
    if (!got || !*got) break;
  }
  return 0;
}
