// Running a dispatch decision: the kernels carry out what the policy decided for an arch, on an
// executor, and the dispatch trace records what ran where. Used by `pmqa check --expect-arch`, the
// arch matrix's numeric half, and any user asserting that an arch takes the path it should.
//
//   const auto d = dispatch::default_policy().select(dispatch::parse_arch("gfx950"), ctx);
//   const RunResult run = run_decision(*executor, d, c);  // KernelError if it cannot run as decided
#pragma once

#include "pmqa/dispatch/policy.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa::kernels {

struct DecisionOptions {
  RunOptions run{};  // its `kernel` is decided here and must be left unset
  // The executor stands in for the decision's arch (a GPU checking another arch's numbers): where
  // the decided kernel family does not fit it, the path's first fitting kernel runs and the reason
  // says so. Without it that is a KernelError: the arch would not run what it should.
  bool stand_in = false;
};

// The decision cannot be carried out on this case here: it is no kernel path (unsupported, the
// reference fallback), it reads another fp8 format or KV layout than the case, or no kernel of the
// decided family takes the case on this device. A caller running a suite skips such a case with
// what() as the reason; any other KernelError is a failure of the run.
class DecisionNotRunnable : public KernelError {
 public:
  using KernelError::KernelError;
};

// Runs the decided path on the case with the kernel family the decision names (its first kernel
// that fits the executor's device and the case), and notes "<executor> ran <kernel>" on the
// decision's trace entry. Throws DecisionNotRunnable when the decision is not a kernel path
// (unsupported, the reference fallback), when the case is not in the decision's fp8 format and KV
// layout, or when no kernel of the decided family fits (unless stand_in).
RunResult run_decision(Executor& executor, const dispatch::Decision& decision, const Case& c, const DecisionOptions& options = {});

}  // namespace pmqa::kernels
