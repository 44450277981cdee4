// The portable kernels on e2m1 (MXFP4) cases, on the host executor at both wave sizes: every case of
// e2m1_cases.hpp through fused-scalar and two-stage, judged as `pmqa verify` judges a result (the
// fp64 oracle with its noise estimate, the kernel's fp32 profile, clean contract). And the matrix-unit
// kernels refuse e2m1 with a reason that says so, leaving the fused path to fused-scalar.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"
#include "e2m1_cases.hpp"

namespace pmqa {
namespace {

Report judge(const Case& c, const Reference& oracle, const kernels::RunResult& run) {
  return compare(c, oracle, run.out, {.judging = {.tolerance = kernels::tolerance_for(run)}});
}

class Fp4KernelsOnHost : public ::testing::TestWithParam<int> {};  // the wave size

TEST_P(Fp4KernelsOnHost, EveryCaseMatchesTheReference) {
  const auto exec = kernels::make_host_executor({.warp_size = GetParam()});
  int ran = 0;
  for (const auto& spec : test::e2m1_specs()) {
    const Case c = fixtures::make_case(spec);
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64, .with_noise = true});
    for (const KernelId kernel : {KernelId::fused_scalar, KernelId::two_stage}) {
      const auto run = exec->run(path_of(kernel), c, {.kernel = kernel, .launches = 2});
      ASSERT_EQ(run.kernel, kernel) << spec.name;
      EXPECT_EQ(kernels::tolerance_for(run).name, Tolerance::fp32().name);
      EXPECT_EQ(run.differing_cells, 0) << spec.name << " (" << to_string(kernel) << "): launches differ";
      const Report rep = judge(c, oracle, run);
      EXPECT_TRUE(rep.passed()) << spec.name << " (" << to_string(kernel) << ", wave " << GetParam() << ")\n" << rep.to_text();
      ++ran;
    }
  }
  EXPECT_GE(ran, 2 * 19);
}

INSTANTIATE_TEST_SUITE_P(Waves, Fp4KernelsOnHost, ::testing::Values(32, 64));

// At head_dim 64 a scale word's bytes 2 and 3 are padding nobody reads: with them set to the NaN
// byte 0xFF in every key and every q row, the logits must not change.
TEST(Fp4KernelsOnHost, HeadDim64ReadsNoPaddingScaleByte) {
  auto spec = test::e2m1_specs().front();
  ASSERT_EQ(spec.head_dim, 64);
  const Case c = fixtures::make_case(spec);
  Case poisoned = c;
  const std::int64_t value_bytes = c.value_bytes_per_block();
  for (std::int64_t p = 0; p < c.num_blocks; ++p)
    for (std::int64_t t = 0; t < c.block_size; ++t)
      for (const std::int64_t byte : {2, 3})
        poisoned.kv_cache[static_cast<std::size_t>(p * c.block_stride + value_bytes + 4 * t + byte)] = 0xFF;
  for (std::size_t i = 0; i < poisoned.q_scales.size(); i += 4) poisoned.q_scales[i + 2] = poisoned.q_scales[i + 3] = 0xFF;
  const auto exec = kernels::make_host_executor({.warp_size = 32});
  for (const KernelId kernel : {KernelId::fused_scalar, KernelId::two_stage}) {
    const auto clean = exec->run(path_of(kernel), c, {.kernel = kernel});
    const auto padded = exec->run(path_of(kernel), poisoned, {.kernel = kernel});
    const auto& a = clean.out.storage();
    const auto& b = padded.out.storage();  // bitwise: the guards hold a NaN sentinel
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << to_string(kernel);
  }
}

// Every matrix-unit kernel refuses e2m1 on a device it would run on, naming the format; the fused
// path then runs fused-scalar.
TEST(Fp4KernelsOnHost, MatrixUnitKernelsRefuseE2m1) {
  const Case c = fixtures::make_case(test::e2m1_specs().at(1));
  for (const KernelId kernel : {KernelId::fused_wgmma, KernelId::fused_mma_sync, KernelId::fused_mfma}) {
    const DeviceCaps device = kernels::host_caps_for(kernel);
    bool seen = false;
    for (const auto& f : kernels::kernel_fits(Path::fused, c, device)) {
      if (f.kernel != kernel) continue;
      seen = true;
      EXPECT_FALSE(f.fits()) << to_string(kernel);
      EXPECT_NE(f.unfit.find("e2m1"), std::string::npos) << to_string(kernel) << ": " << f.unfit;
    }
    EXPECT_TRUE(seen) << to_string(kernel);
    const auto exec = kernels::make_host_executor({.warp_size = kernel == KernelId::fused_mfma ? 64 : 32, .emulate = device});
    const auto run = exec->run(Path::fused, c, {});
    EXPECT_EQ(run.kernel, KernelId::fused_scalar) << run.kernel_reason;
    EXPECT_NE(run.kernel_reason.find("e2m1"), std::string::npos) << run.kernel_reason;
    EXPECT_THROW(exec->run(Path::fused, c, {.kernel = kernel}), kernels::KernelError) << to_string(kernel);
  }
}

}  // namespace
}  // namespace pmqa
