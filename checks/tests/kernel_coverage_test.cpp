// The kernel checks reach every kernel of the kernel table: the quick suite and the property run
// each kernel on the device that takes it first (checks::kernel_configs), and each configuration
// actually ran the kernel it is named for. A kernel added to the table without a way onto a host
// device, or a configuration whose cases all fall outside its kernel's shapes, fails here.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/checks/checks.hpp"
#include "pmqa/checks/property.hpp"

namespace pmqa::checks {
namespace {

// Every kernel of the table appears in `ran`, and each finding ran its configuration's kernel.
void expect_every_kernel(const std::vector<Finding>& findings, const std::string& check) {
  std::set<std::string> ran;
  for (const Finding& f : findings) {
    EXPECT_FALSE(f.caught) << check << " [" << f.config << "]: " << f.evidence;
    ran.insert(f.kernels.begin(), f.kernels.end());
    ASSERT_TRUE(f.first_choice.has_value()) << check << " [" << f.config << "]";
    const std::string own(to_string(*f.first_choice));
    EXPECT_TRUE(std::find(f.kernels.begin(), f.kernels.end(), own) != f.kernels.end())
        << check << " [" << f.config << "] never ran " << own;
  }
  for (const KernelId id : kAllKernels)
    EXPECT_TRUE(ran.contains(std::string(to_string(id)))) << check << " never ran " << to_string(id);
}

TEST(KernelCoverage, TheQuickSuiteRunsEveryKernel) {
  expect_every_kernel(quick_suite(host_factory()), "quick suite");
}

TEST(KernelCoverage, ThePropertyRunsEveryKernel) {
  PropertyOptions o;
  o.cases = 8;
  expect_every_kernel(kernel_property(host_factory(), o), "kernel-vs-reference property");
}

// The configurations come from the table: one per kernel, the portable ones at wave 32 as well.
TEST(KernelCoverage, ConfigurationsComeFromTheKernelTable) {
  std::set<KernelId> configured;
  for (const KernelConfig& k : quick_suite_configs()) {
    configured.insert(k.kernel);
    EXPECT_EQ(k.executor_options().emulate->wave_size, k.executor_options().warp_size) << config_name(k);
  }
  EXPECT_EQ(configured.size(), kAllKernels.size());
  EXPECT_EQ(config_name({KernelId::fused_mfma}), "fused-mfma on host-w64");
  EXPECT_EQ(config_name({KernelId::fused_wgmma}), "fused-mma/wgmma on host-w32");
  EXPECT_EQ(property_configs().size(), quick_suite_configs().size());
}

// A matrix-unit kernel's property cases are drawn inside its shapes, so its own kernel runs them.
TEST(KernelCoverage, AMatrixKernelsPropertyDrawsInsideItsShapes) {
  const fixtures::SpecRanges r = property_ranges(KernelId::fused_mfma);
  EXPECT_EQ(r.head_dims, std::vector<std::int64_t>{128});
  EXPECT_EQ(r.heads_in, (std::vector<std::int64_t>{32, 64, 128}));
  EXPECT_EQ(r.block_stride_multiple, 4);
  const fixtures::SpecRanges any = property_ranges(KernelId::fused_scalar);
  EXPECT_TRUE(any.heads_in.empty());
  EXPECT_EQ(any.head_dims.size(), 3u);
}

}  // namespace
}  // namespace pmqa::checks
