#include "capture/verifier_stats.h"

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

TEST(VerifierStats, ProcessedInstructionsFromTheStatisticsLine) {
  EXPECT_EQ(processed_insns("verification time 812 usec\nstack depth 0+64\n"
                            "processed 1234 insns (limit 1000000) max_states_per_insn 4 "
                            "total_states 99 peak_states 99 mark_read 12\n"),
            1234u);
  // Kernels before 5.13 print "processed N insns" without the limit.
  EXPECT_EQ(processed_insns("processed 77 insns, stack depth 16\n"), 77u);
}

TEST(VerifierStats, NoStatisticsGivesNothing) {
  EXPECT_FALSE(processed_insns(""));
  EXPECT_FALSE(processed_insns("processed insns"));
  EXPECT_FALSE(processed_insns("processed 12 states"));
  EXPECT_FALSE(processed_insns("processed 99999999999999999999999 insns"));
}

}  // namespace
}  // namespace blkrr::capture
