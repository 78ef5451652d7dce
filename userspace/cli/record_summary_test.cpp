#include "cli/record_summary.h"

#include <gtest/gtest.h>

namespace blkrr::cli {
namespace {

// Only what is not zero, unless -v: fourteen "=0" say nothing.
TEST(RecordSummary, DropsListOnlyWhatIsNotZero) {
  Counters c = {{"ringbuf_reserve_failed", 0},
                {"requeues", 2},
                {"inflight_map_full", 0},
                {"own_io_left_out", 5},
                {"issues", 100}};
  EXPECT_EQ(drops_text(c, false),
            "drops and anomalies: requeues=2 own_io_left_out=5 (the recorder's own writes)");
  EXPECT_EQ(drops_text({{"ringbuf_reserve_failed", 0}}, false), "drops and anomalies: none");
  std::string all = drops_text(c, true);
  EXPECT_NE(all.find(" ringbuf_reserve_failed=0 "), std::string::npos) << all;
  EXPECT_NE(all.find(" devstate_map_full=0"), std::string::npos) << all;
  EXPECT_NE(all.find(" requeues=2 "), std::string::npos) << all;
}

}  // namespace
}  // namespace blkrr::cli
