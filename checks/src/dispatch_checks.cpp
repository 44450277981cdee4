// The checks whose subject is a dispatch decision: the arch matrix (of a policy) and the device
// arch check (of a CI job).
#include "pmqa/checks/checks.hpp"
#include "pmqa/dispatch/device_check.hpp"
#include "pmqa/dispatch/matrix.hpp"
#include "support.hpp"

namespace pmqa::checks {

Finding arch_matrix(const dispatch::Policy& policy) {
  Finding f = detail::finding("arch matrix", "checks::arch_matrix: property_tests/arch_matrix; pmqa matrix", "", "matrix rows");
  const auto t0 = detail::Clock::now();
  const auto report = dispatch::check_matrix(dispatch::ArchMatrix::builtin(), policy);
  f.cases_run = static_cast<std::int64_t>(report.results.size());
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    if (report.results[i].pass) continue;
    f.caught = true;
    f.first_detection = static_cast<std::int64_t>(i) + 1;
    f.evidence = std::to_string(report.failures()) + " of " + std::to_string(report.results.size()) +
                 " rows fail; first: " + report.results[i].message + "\n" + report.failure_text();
    break;
  }
  f.seconds = detail::seconds_since(t0);
  return f;
}

Finding device_arch(const CiJob& job) {
  Finding f = detail::finding("device-arch check", "checks::device_arch: checks/tests; pmqa check --expect-arch", "", "CI jobs");
  const auto t0 = detail::Clock::now();
  const auto r = dispatch::check_device_arch(job.device_arch, job.claimed_arch, job.claimed_path);
  f.cases_run = 1;
  f.caught = r.exit_code() != 0;
  if (f.caught) f.first_detection = 1;
  f.evidence = "exit " + std::to_string(r.exit_code()) + ": " + r.message;
  f.seconds = detail::seconds_since(t0);
  return f;
}

}  // namespace pmqa::checks
