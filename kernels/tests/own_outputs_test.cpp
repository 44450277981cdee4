// pmqa's own kernels on the host executor, judged as the real-world corpus is: every output of
// the quick suite passes under its kernel's profile (fp32 for the portable kernels, matrix-unit for
// the emulated tensor-core ones), and the planted mutants of each output fail.
#include <gtest/gtest.h>

#include "own_outputs.hpp"
#include "pmqa/fixtures/suites.hpp"

namespace pmqa {
namespace {

TEST(HostOwnOutputs, PassWithHeadroomAndTheirMutantsFail) {
  struct Config {
    kernels::HostExecutorOptions executor;
    Path path;
    kernels::RunOptions options;
  };
  // fused-mfma on a wave-64 host with MFMA in both formats; fused-mma's kernels at wave 32.
  const DeviceCaps mfma = kernels::host_caps_for(KernelId::fused_mfma);
  const Config configs[] = {
      {{.warp_size = 64}, Path::fused, {.kernel = KernelId::fused_scalar}},
      {{.warp_size = 64}, Path::two_stage, {}},
      {{.emulate = mfma}, Path::fused, {.kernel = KernelId::fused_mfma}},
      {{.warp_size = 32}, Path::fused, {.kernel = KernelId::fused_mma_sync}},
      {{.warp_size = 32}, Path::fused, {.kernel = KernelId::fused_wgmma}},
  };
  std::map<std::string, testing_support::OwnOutputs> rows;
  for (const auto& sc : fixtures::suite("quick")) {
    if (sc.large) continue;
    const Case c = fixtures::make_case(sc.spec);
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
    for (const auto& k : configs) {
      kernels::RunResult run;
      try {
        run = kernels::make_host_executor(k.executor)->run(k.path, c, k.options);
      } catch (const kernels::KernelError&) {
        continue;  // a kernel that does not take this case (its shape or format)
      }
      testing_support::judge_own_output(sc.name, c, oracle, run, rows, {.cells_per_kind = 32});
    }
  }
  testing_support::print_own_outputs("pmqa's kernels on the host executor, quick suite", rows);
  ASSERT_GE(rows.size(), 4u) << "fewer kernels ran than configured";
  for (const auto& [kernel, row] : rows) {
    EXPECT_EQ(row.passed, row.outputs) << kernel << ": " << (row.failures.empty() ? "" : row.failures.front());
    for (int i = 0; i < 4; ++i) EXPECT_LE(row.worst[i], 0.1) << kernel << " sits within 10x of a gate";
    // A mean's chance term shrinks only as 1/sqrt(cells) (the corpus test says the same).
    EXPECT_LE(row.worst[4], 0.15) << kernel << " sits within 6.7x of the bias gate";
    for (const auto& t : row.tallies) {
      if (t.name.find("every row") != std::string::npos) continue;  // rates, reported
      if (t.name.rfind("cell", 0) == 0) EXPECT_GE(t.rate(), 0.95) << kernel << ": " << t.name;
      else EXPECT_TRUE(t.whole()) << kernel << ": " << t.name << " passed " << t.tried - t.caught << " of " << t.tried;
    }
  }
}

}  // namespace
}  // namespace pmqa
