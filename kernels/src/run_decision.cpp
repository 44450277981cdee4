#include "pmqa/kernels/run_decision.hpp"

#include <string>

#include "pmqa/dispatch/trace.hpp"

namespace pmqa::kernels {
namespace {

// The decided family's first kernel that fits, or nullopt with why none does.
std::optional<KernelId> decided_kernel(const dispatch::Decision& d, const std::vector<KernelFit>& fits, std::string& why) {
  for (const KernelFit& f : fits) {
    if (!d.kernel.empty() && family_name(f.kernel) != d.kernel) continue;
    if (f.fits()) return f.kernel;
    why += (why.empty() ? "" : "; ") + std::string(to_string(f.kernel)) + " does not fit: " + f.unfit;
  }
  return std::nullopt;
}

}  // namespace

RunResult run_decision(Executor& executor, const dispatch::Decision& d, const Case& c, const DecisionOptions& o) {
  if (o.run.kernel) throw KernelError("run_decision: the decision picks the kernel; leave RunOptions::kernel unset");
  if (!is_kernel_path(d.path))
    throw DecisionNotRunnable("the decision is " + d.summary() + ", not a path of pmqa's kernels (" + d.reason + ")");
  if (d.fp8 && value_format_of(*d.fp8) != c.format)
    throw DecisionNotRunnable("the decision reads " + std::string(to_string(*d.fp8)) + " and the case is " + std::string(to_string(c.format)));
  if (d.layout && *d.layout != c.layout)
    throw DecisionNotRunnable("the decision reads the " + std::string(dispatch::message_name(*d.layout)) + " layout and the case is " +
                      std::string(dispatch::message_name(c.layout)));
  std::string why;
  RunOptions ro = o.run;
  ro.kernel = decided_kernel(d, kernel_fits(d.path, c, executor.caps()), why);
  std::string stood_in;
  if (!ro.kernel) {
    const std::string missing = d.kernel.empty() ? std::string(to_string(d.path)) : d.kernel;
    if (!o.stand_in) throw DecisionNotRunnable("the decision's " + missing + " cannot run on " + executor.name() + ": " + why);
    stood_in = " (standing in: the decision's " + missing + " does not fit here: " + why + ")";
  }
  RunResult run = executor.run(d.path, c, ro);
  if (!stood_in.empty()) run.kernel_reason += stood_in;
  if (d.trace_id != 0) dispatch::Trace::global().note_executor(d.trace_id, executor.name() + " ran " + std::string(to_string(run.kernel)));
  return run;
}

}  // namespace pmqa::kernels
