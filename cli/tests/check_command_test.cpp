// pmqa check from the command line: the suite run and the GPU runner's arch claim (issue 4).
#include <gtest/gtest.h>

#include "cli_test_support.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa::clitest {
namespace {

TEST(CheckCommand, QuickSuiteCasePassesOnTheHost) {
  const auto r = run_pmqa("check --case edge-lengths-1d --executor host");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("passed, 0 failed"), std::string::npos) << r.output;
}

// A job claiming gfx950 must fail loudly wherever it lands: with no GPU it says so (exit 2); on any
// GPU that is not gfx950 (this project's test machines: none, or an H200) it is the wrong GPU (exit 1).
TEST(CheckCommand, ExpectArchFailsOnTheWrongOrNoGpu) {
  const auto r = run_pmqa("check --expect-arch gfx950 --expect-path fused");
  if (!kernels::find_gpu()) {
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("no GPU found"), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("WRONG GPU"), std::string::npos) << r.output;
  }
}

TEST(CheckCommand, UsageErrorsExitTwo) {
  EXPECT_EQ(run_pmqa("check --executor tpu").status, 2);
  EXPECT_EQ(run_pmqa("check --case no-such-case").status, 2);
  EXPECT_EQ(run_pmqa("check --expect-path fused").status, 2);  // needs --expect-arch
}

}  // namespace
}  // namespace pmqa::clitest
