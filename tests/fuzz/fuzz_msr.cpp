// libFuzzer harness: the msr reader (tests/fuzz/test_fuzz.h).
#include "tests/fuzz/test_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks strict or --skip-bad reading (both paths count).
  bool skip_bad = size > 0 && (data[0] & 1);
  blkrr::fuzz::read_all(data, size, blkrr::InputFormat::kMsrCsv, skip_bad);
  return 0;
}
