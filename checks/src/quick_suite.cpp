// The quick suite and the relaunch check: kernel subjects on the built-in quick cases.
#include <exception>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "support.hpp"

namespace pmqa::checks {

kernels::HostExecutorOptions KernelConfig::executor_options() const {
  kernels::HostExecutorOptions o;
  o.emulate = kernels::host_caps_for(kernel, warp_size);
  o.warp_size = o.emulate->wave_size;
  o.schedule_seed = schedule_seed;
  return o;
}

std::string config_name(const KernelConfig& k) {
  return std::string(to_string(k.kernel)) + " on host-w" + std::to_string(k.executor_options().warp_size);
}

std::vector<KernelConfig> kernel_configs(std::uint64_t seed_w64, std::uint64_t seed_w32) {
  std::vector<KernelConfig> out;
  auto add = [&](KernelId id, int wave) { out.push_back({id, wave, wave == 64 ? seed_w64 : seed_w32}); };
  for (const KernelInfo& k : kKernelTable) {
    const int wave = k.matrix == MatrixKind::none ? 64 : wave_size_of(k.matrix);
    add(k.id, wave);
  }
  for (const KernelInfo& k : kKernelTable)
    if (k.matrix == MatrixKind::none) add(k.id, 32);
  return out;
}

std::vector<KernelConfig> quick_suite_configs() { return kernel_configs(); }

std::vector<Finding> quick_suite(const KernelFactory& make, const JudgeOptions& judge, const std::vector<KernelConfig>& configs) {
  std::vector<Finding> out;
  std::vector<Subject> subjects;
  for (const auto& k : configs) {
    out.push_back(detail::finding("quick suite", "checks::quick_suite: kernels/tests (QuickSuiteOnHost); cells of pmqa check",
                                  config_name(k), "suite cases"));
    out.back().first_choice = k.kernel;
    subjects.push_back(kernel_subject(make(k.executor_options()), k.path()));
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
        f.ran(j.produced.kernel);
        if (!j.verdict.pass) {
          f.caught = true;
          f.first_detection = index;
          f.caught_on = j.produced.kernel;
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
  const KernelConfig k{KernelId::fused_scalar, 64, 99};
  Finding f = detail::finding("relaunch determinism",
                              "checks::relaunch: kernels/tests (HostExecutor.RelaunchesAreBitwiseIdentical)",
                              config_name(k) + ", schedule seed 99, 3 launches", "relaunched cases");
  f.first_choice = k.kernel;
  const auto t0 = detail::Clock::now();
  const auto sc = fixtures::suite("quick").at(0);
  f.cases_run = 1;
  constexpr int kLaunches = 3;
  try {
    const auto run = make(k.executor_options())
                         ->run(k.path(), fixtures::make_case(sc.spec), {.launches = kLaunches});
    f.ran(std::string(to_string(run.kernel)));
    if (run.launches != kLaunches) {
      f.caught = true;  // an executor that ignores relaunches would pass the comparison below vacuously
      f.evidence = sc.name + ": " + std::to_string(run.launches) + " launches ran, " + std::to_string(kLaunches) + " asked for";
    } else if (!run.deterministic()) {
      f.caught = true;
      f.caught_on = to_string(run.kernel);
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
