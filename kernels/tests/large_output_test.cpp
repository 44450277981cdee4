// Output rows past 2^31 bytes on the host executor (bug class 5): only 64-bit offsets reach them.
// 64 rows with a row stride of ceil(2^29 / 62) floats put rows 62 and 63 at or past 2^31 bytes;
// the buffer is 2.2 GB (plus the executor's copy), so this test is labelled slow and holds the
// host-gigabytes resource lock.
#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa {
namespace {

void expect_rows_past_2g_written(std::int64_t heads, std::int64_t head_dim, int warp_size) {
  fixtures::CaseSpec s;
  s.name = "output-past-2g-host";
  s.seed = 631;
  s.batch = 64;
  s.heads = heads;
  s.head_dim = head_dim;
  s.block_size = 16;
  s.max_model_len = 64;
  for (std::int64_t b = 0; b < s.batch; ++b) s.context_lens.push_back(static_cast<std::int32_t>(b % 3 == 0 ? 64 : 40 + b % 17));
  const Case c = fixtures::make_case(s);
  const Reference ref = compute_reference(c, {.precision = Precision::fp64});
  const std::int64_t stride = ((std::int64_t{1} << 29) + 61) / 62;
  ASSERT_GE(62 * stride * 4, std::int64_t{1} << 31);  // row 62 starts past 2^31 bytes
  const auto exec = kernels::make_host_executor({.warp_size = warp_size});
  for (const auto path : {kernels::Path::fused, kernels::Path::two_stage}) {
    const auto run = exec->run(path, c, {.row_pad = stride - s.max_model_len});
    const Report rep = compare(c, ref, run.out, {.tolerance = kernels::tolerance_for(run)});
    EXPECT_TRUE(rep.passed()) << to_string(run.kernel) << " on " << exec->name() << "\n" << rep.to_text();
  }
}

TEST(HostExecutorLargeOffsets, OutputRowsPastTwoGigabytesPortableKernels) { expect_rows_past_2g_written(4, 32, 64); }
TEST(HostExecutorLargeOffsets, OutputRowsPastTwoGigabytesFusedMma) { expect_rows_past_2g_written(64, 128, 32); }

}  // namespace
}  // namespace pmqa
