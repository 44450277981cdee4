// Output rows past 2^31 bytes on the host executor (bug class 5): only 64-bit offsets reach them.
// checks::output_past_2g puts rows 62 and 63 of 64 at or past 2^31 bytes; the buffer is 2.2 GB
// (plus the executor's copy), so this test is labelled slow and holds the host-gigabytes resource lock.
#include <gtest/gtest.h>

#include "pmqa/checks/checks.hpp"

namespace pmqa {
namespace {

void expect_rows_past_2g_written(const checks::LargeOutputShape& shape) {
  const checks::Finding f = checks::output_past_2g(checks::host_factory(), {}, shape);
  EXPECT_EQ(f.cases_run, 2);  // both paths
  EXPECT_FALSE(f.caught) << f.config << ": " << f.evidence;
}

TEST(HostExecutorLargeOffsets, OutputRowsPastTwoGigabytesPortableKernels) {
  expect_rows_past_2g_written({.heads = 4, .head_dim = 32, .warp_size = 64});
}
TEST(HostExecutorLargeOffsets, OutputRowsPastTwoGigabytesFusedMma) {
  expect_rows_past_2g_written({.heads = 64, .head_dim = 128, .warp_size = 32});
}

}  // namespace
}  // namespace pmqa
