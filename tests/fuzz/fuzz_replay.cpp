// libFuzzer harness: replay results as `blkrr report` reads them (the load
// lines, INFO/SUMMARY lines with their JSON), tests/fuzz/test_fuzz.h.
#include "report/dataset.h"
#include "tests/fuzz/test_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto d = blkrr::report::load_dataset(blkrr::fuzz::scratch_path(data, size), "fuzz");
  (void)d;
  return 0;
}
