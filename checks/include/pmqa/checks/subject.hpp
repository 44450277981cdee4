// How a kernel is plugged into pmqa's checks: a Subject is a function from a Case to the output it
// wrote, with the Judging it asks for: its tolerance profile, output contract and NaN rule. pmqa check's columns,
// the quick suite and the gauntlet's kernel checks all judge Subjects (judge.hpp), so an external
// C++ kernel wrapped as one is checked exactly as pmqa's own kernels are:
//
//   checks::Subject mine{"my-kernel", false, [](const Case& c) {
//     checks::SubjectOutput o;
//     o.out = OutputBuffer(c.rows(), c.max_model_len);  // poisoned, guard cells around every row
//     my_kernel(c, o.out);
//     o.judging = {.tolerance = Tolerance::matrix_unit(), .nan = NanRule::relu_clamp};
//     return o;
//   }};
//   const auto verdict = checks::judge_case(mine, c, compute_reference(c, {.precision = Precision::fp64}));
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "pmqa/kernels/executor.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/judging.hpp"

namespace pmqa::checks {

// What a subject produced on one case, and how it asks to be judged.
struct SubjectOutput {
  OutputBuffer out;
  Judging judging{};   // its contract (§1.3), accumulator's profile (§5) and NaN rule (§1.1)
  std::string kernel;                      // what ran, for reports ("fused-mma/wgmma", "my-kernel")
};

struct Subject {
  std::string name;
  bool handles_large = false;  // may be given the gigabyte cases of a suite
  std::function<SubjectOutput(const Case&)> run;
  bool names_kernel = false;   // several kernels may serve it: reports name the one that ran
};

// Thrown by a subject that does not take a case (another fp8 format, a shape outside its kernels):
// the case is skipped with the reason, neither passed nor failed.
class CaseNotTaken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How pmqa's own kernel that ran is judged: the clean contract, its profile (tolerance_for) and
// propagate (every kernel's relu keeps NaN: kernels/device/README.md).
Judging kernel_judging(const kernels::RunResult& run);

// One path of a pmqa executor, judged under kernel_judging of the kernel that ran.
Subject kernel_subject(std::shared_ptr<kernels::Executor> executor, Path path);

// The fp32 reference itself (the oracle's own precision check).
Subject reference_subject();

// Makes the executor a kernel check runs on, from the host executor's options (warp size, schedule
// seed). The ordinary suites pass host_factory(); the gauntlet passes executors with a planted bug.
using KernelFactory = std::function<std::unique_ptr<kernels::Executor>(const kernels::HostExecutorOptions&)>;
KernelFactory host_factory();

}  // namespace pmqa::checks
