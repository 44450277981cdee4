// Kernels against the reference over generated cases, on every executor present: every kernel of
// the kernel table on the host device that runs it first always, the GPU when one is found
// (skipped, never passed, without one). Same-bytes bound (spec §5), clean contract, guard cells,
// every valid cell written, relaunches bitwise identical.
#include <cctype>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "pmqa/checks/property.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rapidcheck.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa {
namespace {

fixtures::SpecRanges ranges() { return checks::property_ranges(); }

// The reference's layout with another run's values: lets compare() check one kernel path
// against another with the same bound (the other run's own error enters as an fp32 reference's).
Reference as_reference(const OutputBuffer& out, const Reference& oracle) {
  Reference r = oracle;
  r.precision = Precision::fp32;
  for (std::int64_t row = 0; row < r.rows; ++row)
    for (std::int64_t j = 0; j < r.valid(row); ++j) r.values[static_cast<std::size_t>(r.row_begin[row] + j)] = out.at(row, j);
  return r;
}

enum class ExecutorKind { host_w64, host_w32, gpu };

std::string executor_name(ExecutorKind k) {
  return k == ExecutorKind::host_w64 ? "host_w64" : k == ExecutorKind::host_w32 ? "host_w32" : "gpu";
}

std::unique_ptr<kernels::Executor> make(ExecutorKind k) {
  switch (k) {
    case ExecutorKind::host_w64: return kernels::make_host_executor({.warp_size = 64, .schedule_seed = 0x5EED64});
    case ExecutorKind::host_w32: return kernels::make_host_executor({.warp_size = 32, .schedule_seed = 0x5EED32});
    case ExecutorKind::gpu: return kernels::find_gpu() ? kernels::make_gpu_executor() : nullptr;
  }
  return nullptr;
}

std::string test_name(std::string text) {
  for (char& ch : text)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

// checks::kernel_property_case under rc::check (a random seed, shrinking and a reproduce line), on
// each of the property's configurations: every kernel of the kernel table on the host device that
// runs it first (checks::property_configs), drawing inside its shapes. The same configurations the
// gauntlet runs its mutants through.
class KernelVsReference : public ::testing::TestWithParam<checks::KernelConfig> {};

TEST_P(KernelVsReference, SameBytesBoundAndCleanContract) {
  const checks::KernelConfig k = GetParam();
  const auto exec = kernels::make_host_executor(k.executor_options());
  std::set<std::string> ran;
  const bool ok = rc::check(checks::config_name(k) + " vs reference", [&] {
    std::string kernel;
    RC_TAG(checks::kernel_property_case({{exec.get(), k.path(), &kernel}}, {}, checks::property_ranges(k.kernel)));
    ran.insert(kernel);
  });
  EXPECT_TRUE(ok);
  EXPECT_TRUE(ran.contains(std::string(to_string(k.kernel)))) << checks::config_name(k) << " never ran its kernel";
}

INSTANTIATE_TEST_SUITE_P(Host, KernelVsReference, ::testing::ValuesIn(checks::property_configs()),
                         [](const auto& p) { return test_name(checks::config_name(p.param)); });

// The same on the GPU when one is found (skipped, never passed, without one): each path, and each
// fused kernel the device runs, drawing inside that kernel's shapes.
struct GpuParam {
  Path path;
  std::optional<KernelId> kernel{};  // absent: the path's first kernel that fits, over the unrestricted ranges
};

class GpuKernelVsReference : public ::testing::TestWithParam<GpuParam> {};

TEST_P(GpuKernelVsReference, SameBytesBoundAndCleanContract) {
  const auto exec = make(ExecutorKind::gpu);
  if (!exec) GTEST_SKIP() << "no GPU found: the GPU half of this property did not run";
  const GpuParam g = GetParam();
  if (g.kernel && !exec->caps().has(kernel_info(*g.kernel).matrix)) GTEST_SKIP() << exec->caps().describe();
  const fixtures::SpecRanges r = g.kernel ? checks::property_ranges(*g.kernel) : ranges();
  const std::string label = exec->name() + " " + (g.kernel ? std::string(to_string(*g.kernel)) : std::string(to_string(g.path)));
  const bool ok = rc::check(label + " vs reference", [&] {
    const Case c = fixtures::make_case(*fixtures::gen_case_spec(r));
    if (g.kernel) {  // the kernel asked for takes the case (wgmma: OCP only), or the case is discarded
      bool fits = false;
      for (const auto& f : kernels::kernel_fits(g.path, c, exec->caps())) fits = fits || (f.kernel == *g.kernel && f.fits());
      RC_PRE(fits);
    }
    const auto run = exec->run(g.path, c, {.kernel = g.kernel, .launches = 2});
    RC_ASSERT(run.deterministic());
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out,
                               {.judging = {.tolerance = kernels::tolerance_for(run)}});
    if (!rep.passed()) RC_FAIL(rep.to_text());
  });
  EXPECT_TRUE(ok);
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuKernelVsReference,
                         ::testing::Values(GpuParam{Path::fused}, GpuParam{Path::two_stage},
                                           GpuParam{Path::fused, KernelId::fused_wgmma},
                                           GpuParam{Path::fused, KernelId::fused_mma_sync},
                                           GpuParam{Path::fused, KernelId::fused_mfma}),
                         [](const auto& p) {
                           return test_name(p.param.kernel ? std::string(to_string(*p.param.kernel)) : std::string(to_string(p.param.path)));
                         });

class FusedVsTwoStage : public ::testing::TestWithParam<ExecutorKind> {};

TEST_P(FusedVsTwoStage, AgreeWithinTheBound) {
  const auto exec = make(GetParam());
  if (!exec) GTEST_SKIP() << "no GPU found: the GPU half of this property did not run";
  const bool ok = rc::check(exec->name() + " fused == two-stage", [&] {
    const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
    const auto fused = exec->run(Path::fused, c);
    const auto two = exec->run(Path::two_stage, c);
    const Report rep = compare(c, as_reference(two.out, oracle), fused.out, {.judging = {.tolerance = kernels::tolerance_for(fused)}});
    if (!rep.passed()) RC_FAIL(rep.to_text());
  });
  EXPECT_TRUE(ok);
}

INSTANTIATE_TEST_SUITE_P(Executors, FusedVsTwoStage,
                         ::testing::Values(ExecutorKind::host_w64, ExecutorKind::host_w32, ExecutorKind::gpu),
                         [](const auto& p) { return executor_name(p.param); });

}  // namespace
}  // namespace pmqa
