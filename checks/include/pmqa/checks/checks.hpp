// pmqa's ordinary checks, each written once as a function of the thing it checks (its subject), so
// the suites users run and the gauntlet that plants bugs in their subjects run the same code. Each
// returns Findings (finding.hpp); a caught finding is a failure of the subject.
//
//   check                 subject            called by
//   kernel_property       KernelFactory      property_tests/kernels (KernelVsReference, through the
//                         (property.hpp)     shared body, with shrinking); the gauntlet (fixed seed)
//   quick_suite           KernelFactory      kernels/tests (QuickSuiteOnHost); the gauntlet.
//                                            pmqa check judges each of its cells with the same
//                                            judge_case (judge.hpp)
//   relaunch              KernelFactory      kernels/tests (HostExecutor.RelaunchesAreBitwiseIdentical);
//                                            the gauntlet
//   output_past_2g        KernelFactory      kernels/tests/large_output_test.cpp (label slow); the
//                                            gauntlet (mutants that need gigabytes)
//   arch_matrix           dispatch::Policy   property_tests/arch_matrix; the gauntlet
//   planted_corpus        Checker            reference/tests/compare_test.cpp; the gauntlet
//   device_arch           CiJob              checks/tests; the gauntlet (pmqa check --expect-arch
//                                            calls the same dispatch::check_device_arch)
//
// The kernel checks judge with pmqa's compare() unless JudgeOptions says otherwise: a judge passed
// in is how a test shows that weakening an ordinary check lets the gauntlet's mutants through.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/checks/finding.hpp"
#include "pmqa/checks/judge.hpp"
#include "pmqa/checks/subject.hpp"
#include "pmqa/dispatch/policy.hpp"
#include "pmqa/fixtures/generate.hpp"

namespace pmqa::checks {

// A host executor configuration of a kernel check: the device the host emulates so that `kernel`
// is its path's first choice wherever the case is in the kernel's shapes (kernels::host_caps_for:
// the kernel's matrix instruction alone, at that instruction's wave size, else at warp_size); the
// cases outside them run what that device runs next (fused-scalar on the fused path).
struct KernelConfig {
  KernelId kernel = KernelId::fused_scalar;
  int warp_size = 64;               // for a kernel without a matrix instruction
  std::uint64_t schedule_seed = 0;  // non-zero: shuffled block and fiber order

  Path path() const noexcept { return path_of(kernel); }
  kernels::HostExecutorOptions executor_options() const;
};
std::string config_name(const KernelConfig& k);  // "fused-mfma on host-w64"

// One configuration per kernel of the kernel table (model/kernel_id.hpp), in its order, plus the
// kernels without a matrix instruction at wave 32 as well (an RDNA or NVIDIA warp): a new kernel is
// checked by the quick suite, the property and the gauntlet without a line here.
std::vector<KernelConfig> kernel_configs(std::uint64_t schedule_seed_w64 = 0, std::uint64_t schedule_seed_w32 = 0);
// The quick suite's configurations: kernel_configs() without shuffled schedules.
std::vector<KernelConfig> quick_suite_configs();

// Every case of the built-in quick suite that the host runs (not the gigabyte ones), on each
// configuration, judged against the fp64 reference under the profile of the kernel that ran. One
// finding per configuration, stopping at its first failing case.
std::vector<Finding> quick_suite(const KernelFactory& make, const JudgeOptions& judge = {},
                                 const std::vector<KernelConfig>& configs = quick_suite_configs());

// The quick suite's first case, fused at wave 64, schedule seed 99, three launches: all three ran
// and are bitwise identical. Judges no value, so no JudgeOptions.
Finding relaunch(const KernelFactory& make);

// Output rows past 2^31 bytes: 64 rows of 64 columns with a row stride of ceil(2^29 / 62) floats
// (RunOptions::row_pad), so rows 62 and 63 start past 2^31 bytes; both paths. Needs ~4.2 GiB (the
// 2.07 GiB output on the host side and its device copy).
struct LargeOutputShape {
  std::int64_t heads = 4;
  std::int64_t head_dim = 32;
  int warp_size = 64;
};
Finding output_past_2g(const KernelFactory& make, const JudgeOptions& judge = {}, const LargeOutputShape& shape = {});

// fixtures/arch_matrix.json (built in) against the policy: every row's decision.
Finding arch_matrix(const dispatch::Policy& policy);

// Planted outputs on a small case (one wrong page, the other fp8 format, one key too many or too
// few, an unwritten row, a write past the row end, a single NaN, numbers where the reference is
// NaN, all zeros, an all-masked case): a correct output must pass, every defective one must fail.
// Each is judged under the clean contract and the tolerance (fp32 unless given).
Finding planted_corpus(const Checker& checker, const std::optional<Tolerance>& tolerance = {});
std::int64_t planted_corpus_size();
// The small case most planted outputs are written for (3 sequences, next_n 2, one row with E = 0);
// the comparison's own tests plant their finer defects in it too.
fixtures::CaseSpec planted_corpus_spec();

// A CI job: the arch (and path) it claims to test, and the gcnArchName / sm_XY its device reports.
struct CiJob {
  std::string claimed_arch;
  std::optional<Path> claimed_path;
  std::string device_arch;
};
// pmqa check --expect-arch <claimed> [--expect-path <path>] on the job's device.
Finding device_arch(const CiJob& job);

}  // namespace pmqa::checks
