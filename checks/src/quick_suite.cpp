// The quick suite and the relaunch check: kernel subjects on the built-in quick cases.
#include <exception>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "support.hpp"

namespace pmqa::checks {

std::string config_name(const KernelConfig& k) {
  return "host-w" + std::to_string(k.warp_size) + " " + std::string(kernels::to_string(k.path));
}

std::vector<KernelConfig> quick_suite_configs() {
  return {{kernels::Path::fused, 64}, {kernels::Path::fused, 32}, {kernels::Path::two_stage, 64}, {kernels::Path::two_stage, 32}};
}

std::vector<Finding> quick_suite(const KernelFactory& make, const JudgeOptions& judge, const std::vector<KernelConfig>& configs) {
  std::vector<Finding> out;
  std::vector<Subject> subjects;
  for (const auto& k : configs) {
    out.push_back(detail::finding("quick suite", "checks::quick_suite: kernels/tests (QuickSuiteOnHost); cells of pmqa check",
                                  config_name(k), "suite cases"));
    subjects.push_back(kernel_subject(make({.warp_size = k.warp_size, .schedule_seed = k.schedule_seed}), k.path));
  }
  std::int64_t index = 0;
  for (const auto& sc : fixtures::suite("quick")) {
    if (sc.large) continue;
    ++index;
    std::shared_ptr<const detail::Prepared> p;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      Finding& f = out[k];
      if (f.caught) continue;
      const auto t0 = detail::Clock::now();
      if (!p) p = detail::prepare(sc.spec, true);
      ++f.cases_run;
      try {
        const CaseJudgement j = judge_case(subjects[k], p->c, p->oracle, judge);
        if (!j.verdict.pass) {
          f.caught = true;
          f.first_detection = index;
          f.evidence = sc.name + " (" + j.produced.kernel + "): " + detail::first_lines(j.verdict.text, 8);
        }
      } catch (const HarnessError&) {
        throw;
      } catch (const std::exception& e) {
        f.caught = true;
        f.first_detection = index;
        f.evidence = sc.name + ": the run threw: " + e.what();
      }
      f.seconds += detail::seconds_since(t0);
    }
  }
  return out;
}

Finding relaunch(const KernelFactory& make) {
  Finding f = detail::finding("relaunch determinism",
                              "checks::relaunch: kernels/tests (HostExecutor.RelaunchesAreBitwiseIdentical)",
                              "host-w64 fused, schedule seed 99, 3 launches", "relaunched cases");
  const auto t0 = detail::Clock::now();
  const auto sc = fixtures::suite("quick").at(0);
  f.cases_run = 1;
  constexpr int kLaunches = 3;
  try {
    const auto run = make({.warp_size = 64, .schedule_seed = 99})
                         ->run(kernels::Path::fused, fixtures::make_case(sc.spec), {.launches = kLaunches});
    if (run.launches != kLaunches) {
      f.caught = true;  // an executor that ignores relaunches would pass the comparison below vacuously
      f.evidence = sc.name + ": " + std::to_string(run.launches) + " launches ran, " + std::to_string(kLaunches) + " asked for";
    } else if (!run.deterministic()) {
      f.caught = true;
      f.evidence = sc.name + ": " + std::to_string(run.differing_cells) + " cells differ between launches (first at storage index " +
                   std::to_string(run.first_differing) + ")";
    }
  } catch (const HarnessError&) {
    throw;
  } catch (const std::exception& e) {
    f.caught = true;
    f.evidence = sc.name + ": the run threw: " + e.what();
  }
  if (f.caught) f.first_detection = 1;
  f.seconds = detail::seconds_since(t0);
  return f;
}

}  // namespace pmqa::checks
