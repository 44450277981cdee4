#include "pmqa/checks/property.hpp"

#include <algorithm>
#include <exception>
#include <iostream>
#include <sstream>
#include <utility>

#include <rapidcheck.h>

#include "pmqa/fixtures/rapidcheck.hpp"
#include "support.hpp"

namespace pmqa::checks {
namespace {

// A failure without RC_FAIL's file:line: the report is the message.
[[noreturn]] void fail(const std::string& message) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, message);
}

// RapidCheck's default listener remembers failures and prints a reproduce line at exit; for a
// driver counting cases to a failure (a planted bug failing is the expected outcome) that line only
// misleads, so it listens to nothing.
class SilentListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// RapidCheck prints "Using configuration: seed=..." to stderr when it first loads its settings;
// the driver passes its own seed, so that line would mislead too.
void load_rapidcheck_quietly() {
  static const bool loaded = [] {
    std::streambuf* saved = std::cerr.rdbuf(nullptr);
    (void)rc::detail::configuration();
    std::cerr.rdbuf(saved);  // also clears the badbit the swallowed line set
    return true;
  }();
  (void)loaded;
}

}  // namespace

fixtures::SpecRanges property_ranges() {
  fixtures::SpecRanges r;
  r.max_model_len = 300;
  r.max_work = 4'000'000;
  return r;
}

fixtures::SpecRanges property_ranges(KernelId kernel) {
  fixtures::SpecRanges r = property_ranges();
  const KernelShapes shapes = kernels::kernel_shapes(kernel);
  if (!shapes.head_dims.empty()) r.head_dims = shapes.head_dims;
  r.heads_in = shapes.heads;
  r.block_stride_multiple = shapes.block_stride_multiple;
  return r;
}

std::vector<KernelConfig> property_configs() { return kernel_configs(0x5EED64, 0x5EED32); }

std::string kernel_property_case(const std::vector<PropertyRun>& runs, const PropertyCaseOptions& o,
                                 const fixtures::SpecRanges& ranges) {
  const auto spec = *fixtures::gen_case_spec(ranges);
  const auto p = detail::prepare(spec, o.reuse_cases);
  std::string kernel;
  for (const PropertyRun& r : runs) {
    std::int64_t differing = 0;
    const Subject subject{std::string(to_string(r.path)) + "/" + r.executor->name(), false, [&](const Case& c) {
                            // Relaunches must be bitwise identical (spec §5).
                            auto run = r.executor->run(r.path, c, {.launches = 2});
                            differing = run.differing_cells;
                            SubjectOutput out;
                            out.judging = kernel_judging(run);
                            out.out = std::move(run.out);
                            out.kernel = std::string(to_string(run.kernel));
                            return out;
                          }};
    const CaseJudgement j = judge_case(subject, p->c, p->oracle, o.judge);
    std::ostringstream where;
    where << subject.name << " (" << j.produced.kernel << "), case " << spec;
    if (r.kernel_ran) *r.kernel_ran = j.produced.kernel;
    if (differing != 0) fail(where.str() + ": " + std::to_string(differing) + " cells differ between launches");
    if (!j.verdict.pass) fail(where.str() + "\n" + j.verdict.text);
    kernel = j.produced.kernel;
  }
  return kernel;
}

std::vector<Finding> kernel_property(const KernelFactory& make, const PropertyOptions& o) {
  std::vector<std::vector<KernelConfig>> groups;
  if (o.every_config_per_case) groups.push_back(o.configs);
  else
    for (const auto& k : o.configs) groups.push_back({k});

  load_rapidcheck_quietly();
  std::vector<Finding> out;
  for (const auto& group : groups) {
    std::string label;
    std::vector<std::unique_ptr<kernels::Executor>> execs;
    std::vector<PropertyRun> runs;
    std::vector<std::string> ran_last(group.size());  // each run's kernel on the current case
    for (std::size_t i = 0; i < group.size(); ++i) {
      label += (label.empty() ? "" : ", ") + config_name(group[i]);
      execs.push_back(make(group[i].executor_options()));
      runs.push_back({execs.back().get(), group[i].path(), &ran_last[i]});
    }
    // A configuration of one kernel draws inside its shapes; several share the unrestricted ranges.
    const fixtures::SpecRanges ranges = group.size() == 1 ? property_ranges(group.front().kernel) : property_ranges();
    Finding f = detail::finding("kernel-vs-reference property",
                                "checks::kernel_property_case: property_tests/kernels (KernelVsReference)", label,
                                "generated cases");
    if (group.size() == 1) f.first_choice = group.front().kernel;
    const auto t0 = detail::Clock::now();
    std::int64_t ran = 0;
    std::string failing_kernel;
    std::exception_ptr harness_error;
    SilentListener listener;
    rc::detail::TestParams params;
    params.seed = o.seed;
    params.maxSuccess = o.cases;
    params.disableShrinking = true;
    rc::detail::TestMetadata meta;
    meta.id = meta.description = "kernel vs reference, " + label;
    const rc::detail::TestResult result = rc::detail::checkProperty(
        rc::detail::toProperty([&] {
          ++ran;
          // The kernels that ran count whether the case then passed or failed; of a failing case, the
          // last that ran is the one that failed (the runs stop there).
          auto note_kernels = [&](bool failed) {
            for (auto& k : ran_last) {
              if (k.empty()) continue;
              if (failed) failing_kernel = k;
              f.ran(std::exchange(k, {}));
            }
          };
          try {
            (void)kernel_property_case(runs, o.per_case, ranges);
            note_kernels(false);
          } catch (const HarnessError&) {
            harness_error = std::current_exception();  // not the subject's fault: rethrown below
            fail("harness error");
          } catch (...) {
            note_kernels(true);
            throw;
          }
        }),
        meta, params, listener);
    if (harness_error) std::rethrow_exception(harness_error);
    rc::detail::FailureResult failure;
    rc::detail::GaveUpResult gave_up;
    rc::detail::Error error;
    if (result.match(failure)) {
      f.caught = true;
      f.caught_on = failing_kernel;
      f.first_detection = failure.numSuccess + 1;
      f.evidence = detail::first_lines(failure.description, 8);
    } else if (result.match(gave_up)) {
      f.caught = true;  // cannot happen (no RC_PRE); a property that gives up is not a pass
      f.first_detection = gave_up.numSuccess + 1;
      f.evidence = "RapidCheck gave up: " + gave_up.description;
    } else if (result.match(error)) {
      f.caught = true;
      f.first_detection = ran;
      f.evidence = "RapidCheck error: " + error.description;
    }
    // After a failure RapidCheck evaluates the failing case once more for its report: the cases the
    // check needed are the passes before it and the failing one.
    f.cases_run = f.caught ? std::min<std::int64_t>(ran, f.first_detection) : ran;
    f.seconds = detail::seconds_since(t0);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace pmqa::checks
