// pmqa's ordinary checks, runnable on any subject. Each one is the loop of an ordinary suite with
// the thing under test injected (the ordinary suites construct theirs directly), and names that
// suite in Finding::source. Keep each in step with its source:
//
//   kernel_property      property_tests/kernels/kernel_properties_test.cpp (KernelVsReference)
//   quick_suite          pmqa check --suite quick --executor host; kernels/tests/executor_test.cpp (QuickSuiteOnHost)
//   relaunch             kernels/tests/executor_test.cpp (HostExecutor.RelaunchesAreBitwiseIdentical)
//   arch_matrix          property_tests/arch_matrix (matrix rows), pmqa matrix
//   planted_corpus       reference/tests/compare_test.cpp (the planted defects)
//   device_arch          pmqa check --expect-arch (dispatch::check_device_arch)
//   output_past_2g       kernels/tests/large_output_test.cpp (output rows past 2^31 bytes, host)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pmqa/fixtures/random_spec.hpp"
#include "pmqa/gauntlet/gauntlet.hpp"

namespace pmqa::gauntlet {

struct KernelConfig {
  kernels::Path path = kernels::Path::fused;
  int warp_size = 64;
};
// The ordinary property's executors x paths, in its order: w64 fused, w64 two-stage, w32 fused, w32 two-stage.
std::vector<KernelConfig> property_configs();
// The quick suite's, in kernels/tests' order: fused w64, fused w32, two-stage w64, two-stage w32.
std::vector<KernelConfig> quick_suite_configs();

// The ranges of the ordinary kernel property (max_model_len 300, work 4e6).
fixtures::SpecRanges property_ranges();

struct PropertyOptions {
  std::uint64_t seed = GauntletOptions{}.seed;
  int cases = 100;  // per configuration
  std::vector<KernelConfig> configs = property_configs();
  bool reuse_cases = true;  // keep generated cases and their references for the next subject
  bool every_config_per_case = false;  // each generated case runs every config (the no-false-alarm run)
  std::optional<Tolerance> tolerance;  // compare under this profile instead of the kernel's own
};

// RapidCheck over fixtures::gen_case_spec(property_ranges()) with a fixed seed and no shrinking;
// each case is compared with the fp64 reference by compare() under kernels::tolerance_for(run), as
// the property does. One finding per configuration (every_config_per_case: one for all).
std::vector<Finding> kernel_property(const KernelFactory& make, const PropertyOptions& options = {});

// Every case of the quick suite that the host runs, each config, compared with the fp64 reference
// under kernels::tolerance_for(run), as pmqa check does.
std::vector<Finding> quick_suite(const KernelFactory& make, const std::optional<Tolerance>& tolerance = {});

// The quick suite's first case, fused, schedule seed 99, three launches: bitwise identical.
Finding relaunch(const KernelFactory& make);

// fixtures/arch_matrix.json (built in) against the policy: every row's decision.
Finding arch_matrix(const dispatch::Policy& policy);

// The planted defects of reference/tests/compare_test.cpp, each judged by the checker: a correct
// output must pass, every defective one must fail.
Finding planted_corpus(const Checker& checker);

// pmqa check --expect-arch <claimed> [--expect-path <path>] on the job's device.
Finding device_arch(const CiJob& job);

// kernels/tests/large_output_test.cpp (label slow): both paths on the host on 64 rows of 64 columns
// with a row stride of ceil(2^29 / 62) floats (RunOptions::row_pad), so rows 62 and 63 start past
// 2^31 bytes. Needs ~4.2 GiB (the 2.07 GiB output on the host side and its device copy).
Finding output_past_2g(const KernelFactory& make, const std::optional<Tolerance>& tolerance = {});

}  // namespace pmqa::gauntlet
