// Kernels against the reference over generated cases, on every executor present: the host
// executor at both wave sizes always, the GPU when one is found (skipped, never passed, without
// one). Same-bytes bound (spec §5), clean contract, guard cells, every valid cell written.
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
    // Seeded shuffled schedules (checks::property_configs'): a race shows up as a difference between launches.
    case ExecutorKind::host_w64: return kernels::make_host_executor({.warp_size = 64, .schedule_seed = 0x5EED64});
    case ExecutorKind::host_w32: return kernels::make_host_executor({.warp_size = 32, .schedule_seed = 0x5EED32});
    case ExecutorKind::gpu: return kernels::find_gpu() ? kernels::make_gpu_executor() : nullptr;
  }
  return nullptr;
}

// checks::kernel_property_case under rc::check: a random seed, shrinking and a reproduce line.
class KernelVsReference : public ::testing::TestWithParam<std::tuple<ExecutorKind, kernels::Path>> {};

TEST_P(KernelVsReference, SameBytesBoundAndCleanContract) {
  const auto exec = make(std::get<0>(GetParam()));
  if (!exec) GTEST_SKIP() << "no GPU found: the GPU half of this property did not run";
  const kernels::Path path = std::get<1>(GetParam());
  const bool ok = rc::check(exec->name() + " " + std::string(to_string(path)) + " vs reference",
                            [&] { RC_TAG(checks::kernel_property_case({{exec.get(), path}})); });
  EXPECT_TRUE(ok);
}

INSTANTIATE_TEST_SUITE_P(
    Executors, KernelVsReference,
    ::testing::Combine(::testing::Values(ExecutorKind::host_w64, ExecutorKind::host_w32, ExecutorKind::gpu),
                       ::testing::Values(kernels::Path::fused, kernels::Path::two_stage)),
    [](const auto& p) {
      return executor_name(std::get<0>(p.param)) + "_" + (std::get<1>(p.param) == kernels::Path::fused ? "fused" : "two_stage");
    });

class FusedVsTwoStage : public ::testing::TestWithParam<ExecutorKind> {};

TEST_P(FusedVsTwoStage, AgreeWithinTheBound) {
  const auto exec = make(GetParam());
  if (!exec) GTEST_SKIP() << "no GPU found: the GPU half of this property did not run";
  const bool ok = rc::check(exec->name() + " fused == two-stage", [&] {
    const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
    const auto fused = exec->run(kernels::Path::fused, c);
    const auto two = exec->run(kernels::Path::two_stage, c);
    const Report rep = compare(c, as_reference(two.out, oracle), fused.out, {.judging = {.tolerance = kernels::tolerance_for(fused)}});
    if (!rep.passed()) RC_FAIL(rep.to_text());
  });
  EXPECT_TRUE(ok);
}

INSTANTIATE_TEST_SUITE_P(Executors, FusedVsTwoStage,
                         ::testing::Values(ExecutorKind::host_w64, ExecutorKind::host_w32, ExecutorKind::gpu),
                         [](const auto& p) { return executor_name(p.param); });

// The matrix-unit kernels over generated cases in the shapes they take (D 128, N*H 64 or 128), both
// formats and layouts, special codes included: fused-mma on the host at wave 32 (wgmma and mma.sync
// emulated) and on the GPU when one is found, fused-mfma on the host at wave 64 with MFMA emulated
// in both formats. Each is judged under its matrix-unit profile (spec §5).
struct MatrixParam {
  ExecutorKind executor;
  std::optional<KernelId> kernel{};  // absent: the first fused kernel that fits (wgmma for OCP, mma.sync for FNUZ)
};

// The executor with matrix units: at wave 64 the host emulating fp8 MFMA in both formats.
std::unique_ptr<kernels::Executor> make_matrix(ExecutorKind k) {
  if (k != ExecutorKind::host_w64) return make(k);
  const kernels::DeviceCaps mfma{.target = "host", .wave_size = 64, .mfma_fnuz = true, .mfma_ocp = true};
  return kernels::make_host_executor({.emulate = mfma, .schedule_seed = 0x5EED64});
}

class FusedMmaVsReference : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(FusedMmaVsReference, SameBytesBoundAndCleanContract) {
  const auto exec = make_matrix(GetParam().executor);
  if (!exec) GTEST_SKIP() << "no GPU found: the GPU half of this property did not run";
  const std::string kernel = GetParam().kernel ? std::string(to_string(*GetParam().kernel)) : "matrix-unit kernels";
  fixtures::SpecRanges r = ranges();
  r.head_dims = {128};
  r.block_sizes = {1, 16, 64, 256};  // 1: more pages than the kernel keeps in shared memory
  r.max_work = 6'000'000;
  double worst = 0;
  std::set<std::string> instructions;  // the kernels that ran, for the summary line
  const bool ok = rc::check(exec->name() + " " + kernel + " vs reference", [&] {
    auto spec = *fixtures::gen_case_spec(r);
    static const std::vector<std::pair<std::int64_t, std::int64_t>> fits{{64, 1}, {64, 2}, {64, 3}, {64, 4}, {32, 1}, {32, 2}, {32, 3}, {32, 5}, {128, 1}, {128, 2}};
    const auto [heads, next_n] = *rc::gen::elementOf(fits);
    spec.heads = heads;
    spec.next_n = next_n;
    // The variants copy 4- or 16-byte segments: strides that are multiples of 4 (both kinds occur).
    spec.block_stride_pad = 4 * (spec.block_stride_pad % 5);
    spec.specials = *rc::gen::element(fixtures::SpecialCodes::none, fixtures::SpecialCodes::finite, fixtures::SpecialCodes::with_nan);
    // Re-derive lengths for the new next_n (the generated ones were for the drawn shape).
    spec.context_lens.resize(static_cast<std::size_t>(spec.context_lens_2d ? spec.batch * spec.next_n : spec.batch), 0);
    for (auto& L : spec.context_lens) L = static_cast<std::int32_t>(std::min<std::int64_t>(L, spec.max_model_len));
    const Case c = fixtures::make_case(spec);
    const auto run = exec->run(kernels::Path::fused, c, {.kernel = GetParam().kernel});
    RC_ASSERT(kernels::tolerance_for(run).name == Tolerance::matrix_unit().name);  // a matrix-unit kernel ran
    instructions.insert(std::string(to_string(run.kernel)));
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out,
                               {.judging = {.tolerance = Tolerance::matrix_unit()}});
    if (!rep.passed()) RC_FAIL(rep.to_text());
    worst = std::max(worst, rep.worst_bound_ratio);
  });
  EXPECT_TRUE(ok);
  std::string ran;
  for (const auto& i : instructions) ran += (ran.empty() ? "" : " + ") + i;
  std::printf("%s %s (%s): worst |out-ref| / matrix-unit bound over the property = %.3g\n", exec->name().c_str(),
              kernel.c_str(), ran.c_str(), worst);
}

INSTANTIATE_TEST_SUITE_P(Executors, FusedMmaVsReference,
                         ::testing::Values(MatrixParam{ExecutorKind::host_w32},
                                           MatrixParam{ExecutorKind::host_w32, KernelId::fused_mma_sync},
                                           MatrixParam{ExecutorKind::host_w64}, MatrixParam{ExecutorKind::gpu},
                                           MatrixParam{ExecutorKind::gpu, KernelId::fused_mma_sync}),
                         [](const auto& p) {
                           return executor_name(p.param.executor) + (p.param.kernel == KernelId::fused_mma_sync ? "_mma_sync" : "");
                         });

}  // namespace
}  // namespace pmqa
