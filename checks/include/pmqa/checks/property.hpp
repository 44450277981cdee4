// The kernel-vs-reference property (spec §5): a generated case, one path on one executor launched
// twice (bitwise identical), compared with the fp64 reference under the profile of the kernel that
// ran. kernel_property_case is the body; property_tests/kernels runs it under rc::check (random
// seed, shrinking, a reproduce line), kernel_property runs it with a fixed seed and no shrinking,
// counting the cases to the first failure (the gauntlet). Needs RapidCheck (target
// pmqa_checks_property); the rest of pmqa::checks does not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/random_spec.hpp"

namespace pmqa::checks {

// The ranges the property draws cases from (max_model_len 300, work 4e6); for a kernel, inside the
// shapes it takes (kernels::kernel_shapes: the matrix-unit kernels' D 128 and heads 32/64/128).
fixtures::SpecRanges property_ranges();
fixtures::SpecRanges property_ranges(KernelId kernel);

struct PropertyCaseOptions {
  JudgeOptions judge;
  bool reuse_cases = false;  // keep generated cases and their references for the next subject
};

// One path on one executor.
struct PropertyRun {
  kernels::Executor* executor = nullptr;
  Path path = Path::fused;
  std::string* kernel_ran = nullptr;  // set to the kernel that ran, when given
};

// One property case inside a RapidCheck property: draws a case, runs it on each run in turn, fails
// the property on a difference between the two launches or a failed comparison. Returns the kernel
// that ran last (for RC_TAG).
std::string kernel_property_case(const std::vector<PropertyRun>& runs, const PropertyCaseOptions& options = {},
                                 const fixtures::SpecRanges& ranges = property_ranges());

// The property's configurations: checks::kernel_configs() with seeded schedules, so a race shows up
// between launches. Each draws its cases inside its kernel's shapes.
std::vector<KernelConfig> property_configs();

struct PropertyOptions {
  std::uint64_t seed = 0x6761756e746c6574;  // fixed: counts reproduce
  int cases = 100;  // per configuration (RapidCheck's default)
  std::vector<KernelConfig> configs = property_configs();
  bool every_config_per_case = false;  // each generated case runs every config (one finding for all)
  PropertyCaseOptions per_case{.judge = {}, .reuse_cases = true};
};

// The property over `cases` generated cases per configuration: one finding per configuration.
std::vector<Finding> kernel_property(const KernelFactory& make, const PropertyOptions& options = {});

}  // namespace pmqa::checks
