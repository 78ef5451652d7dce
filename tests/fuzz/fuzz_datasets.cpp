// libFuzzer harness: the readers of the public datasets (alibaba, tencent
// with its .tgz archives, systor17, k5cloud; tests/fuzz/test_fuzz.h).
#include "tests/fuzz/test_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks strict or --skip-bad reading and the format; the
  // reader reads all of the input (the byte too: a bad first line counts).
  using blkrr::InputFormat;
  constexpr InputFormat kFormats[] = {InputFormat::kAlibaba, InputFormat::kTencent,
                                      InputFormat::kSystor, InputFormat::kK5cloud};
  const uint8_t pick = size > 0 ? data[0] : 0;
  blkrr::fuzz::read_all(data, size, kFormats[(pick >> 1) & 3], pick & 1);
  return 0;
}
