#include "pmqa/gauntlet/checks.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include <rapidcheck.h>

#include "pmqa/dispatch/device_check.hpp"
#include "pmqa/dispatch/matrix.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rapidcheck.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/gauntlet/sandbox.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/fp8.hpp"

namespace pmqa::gauntlet {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string config_name(const KernelConfig& k) {
  return "host-w" + std::to_string(k.warp_size) + " " + std::string(kernels::to_string(k.path));
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += (i ? "\n" : "") + line;
  return out;
}

// A generated or suite case with its fp64 reference, kept for the next subject (every mutant sees
// the same cases, so the reference is computed once).
struct Prepared {
  Case c;
  Reference ref;
};

std::shared_ptr<const Prepared> prepare(const fixtures::CaseSpec& spec, bool reuse) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Prepared>> cache;
  std::ostringstream key;
  key << spec;
  if (reuse) {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key.str()); it != cache.end()) return it->second;
  }
  auto p = std::make_shared<Prepared>();
  p->c = fixtures::make_case(spec);
  p->ref = compute_reference(p->c, {.precision = Precision::fp64});
  if (reuse) {
    const std::lock_guard lock(mutex);
    if (cache.size() >= 4096) cache.clear();
    cache.emplace(key.str(), p);
  }
  return p;
}

Finding kernel_finding(std::string check, std::string source, std::string config, std::string unit) {
  Finding f;
  f.check = std::move(check);
  f.source = std::move(source);
  f.config = std::move(config);
  f.unit = std::move(unit);
  return f;
}

// RapidCheck's default listener remembers failures and prints a reproduce line at exit; a planted
// mutant failing is the expected outcome here, so the gauntlet listens to nothing.
class SilentListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// RapidCheck prints "Using configuration: seed=..." to stderr when it first loads its settings;
// the gauntlet passes its own seed, so that line would only mislead.
void load_rapidcheck_quietly() {
  static const bool loaded = [] {
    std::streambuf* saved = std::cerr.rdbuf(nullptr);
    (void)rc::detail::configuration();
    std::cerr.rdbuf(saved);  // also clears the badbit the swallowed line set
    return true;
  }();
  (void)loaded;
}

// The profile a check compares under: the one asked for, else the kernel's own.
Tolerance judged_under(const std::optional<Tolerance>& asked, const kernels::RunResult& run) {
  return asked ? *asked : kernels::tolerance_for(run);
}

constexpr const char* kPropertySource = "property_tests/kernels/kernel_properties_test.cpp (KernelVsReference)";

}  // namespace

std::vector<KernelConfig> property_configs() {
  return {{kernels::Path::fused, 64}, {kernels::Path::two_stage, 64}, {kernels::Path::fused, 32}, {kernels::Path::two_stage, 32}};
}

std::vector<KernelConfig> quick_suite_configs() {
  return {{kernels::Path::fused, 64}, {kernels::Path::fused, 32}, {kernels::Path::two_stage, 64}, {kernels::Path::two_stage, 32}};
}

fixtures::SpecRanges property_ranges() {
  fixtures::SpecRanges r;
  r.max_model_len = 300;
  r.max_work = 4'000'000;
  return r;
}

std::vector<Finding> kernel_property(const KernelFactory& make, const PropertyOptions& o) {
  std::vector<std::vector<KernelConfig>> groups;
  if (o.every_config_per_case) groups.push_back(o.configs);
  else
    for (const auto& k : o.configs) groups.push_back({k});

  load_rapidcheck_quietly();
  const fixtures::SpecRanges ranges = property_ranges();
  std::vector<Finding> out;
  for (const auto& group : groups) {
    std::string label;
    std::vector<std::unique_ptr<kernels::Executor>> execs;
    for (const auto& k : group) {
      label += (label.empty() ? "" : ", ") + config_name(k);
      execs.push_back(make({.warp_size = k.warp_size}));
    }
    Finding f = kernel_finding("kernel-vs-reference property", kPropertySource, label, "generated cases");
    const auto t0 = Clock::now();
    std::int64_t ran = 0;
    std::exception_ptr harness_error;
    SilentListener listener;
    rc::detail::TestParams params;
    params.seed = o.seed;
    params.maxSuccess = o.cases;
    params.disableShrinking = true;
    rc::detail::TestMetadata meta;
    meta.id = meta.description = "gauntlet: kernel vs reference, " + label;
    const rc::detail::TestResult result = rc::detail::checkProperty(
        rc::detail::toProperty([&] {
          const auto spec = *fixtures::gen_case_spec(ranges);
          ++ran;
          const auto p = prepare(spec, o.reuse_cases);
          for (std::size_t i = 0; i < group.size(); ++i) {
            kernels::RunResult run;
            try {
              run = execs[i]->run(group[i].path, p->c);
            } catch (const SandboxError&) {
              harness_error = std::current_exception();  // not the kernel's fault: rethrown below
              throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, "harness error");
            }
            const Report rep = compare(p->c, p->ref, run.out, {.tolerance = judged_under(o.tolerance, run)});
            if (!rep.passed()) {
              std::ostringstream msg;
              msg << config_name(group[i]) << " (" << to_string(run.kernel) << "), case " << spec << "\n" << rep.to_text();
              throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, msg.str());  // RC_FAIL without file:line
            }
          }
        }),
        meta, params, listener);
    if (harness_error) std::rethrow_exception(harness_error);
    rc::detail::FailureResult failure;
    rc::detail::GaveUpResult gave_up;
    rc::detail::Error error;
    if (result.match(failure)) {
      f.caught = true;
      f.first_detection = failure.numSuccess + 1;
      f.evidence = first_lines(failure.description, 8);
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
    f.seconds = seconds_since(t0);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> quick_suite(const KernelFactory& make, const std::optional<Tolerance>& tolerance) {
  const auto configs = quick_suite_configs();
  std::vector<Finding> out;
  std::vector<std::unique_ptr<kernels::Executor>> execs;
  for (const auto& k : configs) {
    out.push_back(kernel_finding("quick suite", "pmqa check --suite quick --executor host; kernels/tests/executor_test.cpp (QuickSuiteOnHost)",
                                 config_name(k), "suite cases"));
    execs.push_back(make({.warp_size = k.warp_size}));
  }
  std::int64_t index = 0;
  for (const auto& sc : fixtures::suite("quick")) {
    if (sc.large) continue;
    ++index;
    std::shared_ptr<const Prepared> p;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      Finding& f = out[k];
      if (f.caught) continue;
      const auto t0 = Clock::now();
      if (!p) p = prepare(sc.spec, true);
      ++f.cases_run;
      try {
        const auto run = execs[k]->run(configs[k].path, p->c);
        const Report rep = compare(p->c, p->ref, run.out, {.tolerance = judged_under(tolerance, run)});
        if (!rep.passed()) {
          f.caught = true;
          f.first_detection = index;
          f.evidence = sc.name + ": " + first_lines(rep.to_text(), 8);
        }
      } catch (const SandboxError&) {
        throw;
      } catch (const std::exception& e) {
        f.caught = true;
        f.first_detection = index;
        f.evidence = sc.name + ": the run threw: " + e.what();
      }
      f.seconds += seconds_since(t0);
    }
  }
  return out;
}

Finding relaunch(const KernelFactory& make) {
  Finding f = kernel_finding("relaunch determinism",
                             "kernels/tests/executor_test.cpp (HostExecutor.RelaunchesAreBitwiseIdentical)",
                             "host-w64 fused, schedule seed 99, 3 launches", "relaunched cases");
  const auto t0 = Clock::now();
  const auto sc = fixtures::suite("quick").at(0);
  f.cases_run = 1;
  try {
    const auto run = make({.warp_size = 64, .schedule_seed = 99})->run(kernels::Path::fused, fixtures::make_case(sc.spec),
                                                                       {.launches = 3});
    if (!run.deterministic()) {
      f.caught = true;
      f.evidence = sc.name + ": " + std::to_string(run.differing_cells) + " cells differ between launches (first at storage index " +
                   std::to_string(run.first_differing) + ")";
    }
  } catch (const SandboxError&) {
    throw;
  } catch (const std::exception& e) {
    f.caught = true;
    f.evidence = sc.name + ": the run threw: " + e.what();
  }
  if (f.caught) f.first_detection = 1;
  f.seconds = seconds_since(t0);
  return f;
}

Finding arch_matrix(const dispatch::Policy& policy) {
  Finding f = kernel_finding("arch matrix", "fixtures/arch_matrix.json via property_tests/arch_matrix; pmqa matrix", "",
                             "matrix rows");
  const auto t0 = Clock::now();
  const auto report = dispatch::check_matrix(dispatch::ArchMatrix::builtin(), policy);
  f.cases_run = static_cast<std::int64_t>(report.results.size());
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    if (report.results[i].pass) continue;
    f.caught = true;
    f.first_detection = static_cast<std::int64_t>(i) + 1;
    f.evidence = std::to_string(report.failures()) + " of " + std::to_string(report.results.size()) +
                 " rows fail; first: " + report.results[i].message;
    break;
  }
  f.seconds = seconds_since(t0);
  return f;
}

namespace {

struct Planted {
  std::string name;
  std::shared_ptr<const Prepared> subject;  // the case and reference the output is judged against
  OutputBuffer out;
  bool defective = true;
};

// The output a correct kernel writes: the fp32 reference, -inf past E_r.
OutputBuffer correct_output(const Case& c) {
  return as_output(compute_reference(c, {.precision = Precision::fp32, .with_noise = false}));
}

std::shared_ptr<const Prepared> prepared_case(Case c) {
  auto p = std::make_shared<Prepared>();
  p->c = std::move(c);
  p->ref = compute_reference(p->c, {.precision = Precision::fp64});
  return p;
}

// reference/tests/compare_test.cpp's case and planted defects, in its order.
const std::vector<Planted>& planted_defects() {
  static const std::vector<Planted> corpus = [] {
    fixtures::CaseSpec s;
    s.name = "compare";
    s.seed = 11;
    s.batch = 3;
    s.next_n = 2;
    s.heads = 8;
    s.head_dim = 64;
    s.block_size = 16;
    s.max_model_len = 120;
    s.context_lens = {120, 50, 1};
    const auto base = prepared_case(fixtures::make_case(s));
    const Case& c = base->c;
    std::vector<Planted> v;
    v.push_back({"correct output", base, correct_output(c), false});

    Case wrong_page = c;
    wrong_page.block_table[3] = wrong_page.block_table[1];
    v.push_back({"one wrong page", base, correct_output(wrong_page), true});

    Case other_format = c;
    for (auto& b : other_format.q)
      b = encode_fp8(Fp8Format::e4m3fn, decode_fp8(Fp8Format::e4m3fnuz, b), Fp8Overflow::saturate);
    v.push_back({"q decoded with the other format", base, correct_output(other_format), true});

    OutputBuffer extra = correct_output(c);
    extra.at(2, c.valid_keys(2)) = 0.5f;
    v.push_back({"one key too many", base, std::move(extra), true});
    OutputBuffer short_row = correct_output(c);
    short_row.at(2, c.valid_keys(2) - 1) = -INFINITY;
    v.push_back({"one key too few", base, std::move(short_row), true});

    OutputBuffer unwritten = correct_output(c);
    for (std::int64_t j = 0; j < c.max_model_len; ++j) unwritten.at(1, j) = sentinel();
    v.push_back({"unwritten row", base, std::move(unwritten), true});

    OutputBuffer past_end = correct_output(c);
    past_end.at(0, c.max_model_len) = 1.0f;
    v.push_back({"write one past the row end", base, std::move(past_end), true});

    OutputBuffer nan = correct_output(c);
    nan.at(1, 7) = NAN;
    v.push_back({"single NaN", base, std::move(nan), true});

    Case nan_case = c;
    nan_case.q[0] = 0x7F;  // row 0, head 0: row 0 is NaN wherever valid
    v.push_back({"numbers where the reference is NaN", prepared_case(nan_case), correct_output(c), true});

    OutputBuffer zeros(c.rows(), c.max_model_len);
    for (std::int64_t r = 0; r < c.rows(); ++r)
      for (std::int64_t j = 0; j < c.max_model_len; ++j) zeros.at(r, j) = 0.0f;
    v.push_back({"all-zero output", base, std::move(zeros), true});

    fixtures::CaseSpec m;
    m.batch = 2;
    m.next_n = 2;
    m.context_lens = {0, 0};
    const auto masked = prepared_case(fixtures::make_case(m));
    OutputBuffer all_inf(masked->c.rows(), masked->c.max_model_len);
    for (std::int64_t r = 0; r < masked->c.rows(); ++r)
      for (std::int64_t j = 0; j < masked->c.max_model_len; ++j) all_inf.at(r, j) = -INFINITY;
    OutputBuffer one_zero = all_inf;
    v.push_back({"all-masked case, all -inf", masked, std::move(all_inf), false});
    one_zero.at(0, 0) = 0.0f;
    v.push_back({"all-masked case, a 0 written", masked, std::move(one_zero), true});
    return v;
  }();
  return corpus;
}

}  // namespace

Finding planted_corpus(const Checker& checker) {
  Finding f = kernel_finding("planted-defect corpus", "reference/tests/compare_test.cpp (CompareTest)", "", "planted outputs");
  const auto t0 = Clock::now();
  std::int64_t misjudged = 0;
  std::string names;
  const auto& corpus = planted_defects();
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const Planted& p = corpus[i];
    ++f.cases_run;
    Verdict v;
    try {
      v = checker(p.subject->c, p.subject->ref, p.out);
    } catch (const std::exception& e) {
      v = Verdict{false, std::string("the checker threw: ") + e.what()};
    }
    if (v.pass != p.defective) continue;  // a defect failed, or a correct output passed
    ++misjudged;
    names += (names.empty() ? "" : ", ") + p.name;
    if (!f.caught) {
      f.caught = true;
      f.first_detection = static_cast<std::int64_t>(i) + 1;
    }
  }
  if (f.caught)
    f.evidence = "misjudged " + std::to_string(misjudged) + " of " + std::to_string(corpus.size()) + " planted outputs: " + names;
  f.seconds = seconds_since(t0);
  return f;
}

Finding device_arch(const CiJob& job) {
  Finding f = kernel_finding("device-arch check", "pmqa check --expect-arch (dispatch::check_device_arch)", "", "CI jobs");
  const auto t0 = Clock::now();
  const auto r = dispatch::check_device_arch(job.device_arch, job.claimed_arch, job.claimed_path);
  f.cases_run = 1;
  f.caught = r.exit_code() != 0;
  if (f.caught) f.first_detection = 1;
  f.evidence = "exit " + std::to_string(r.exit_code()) + ": " + r.message;
  f.seconds = seconds_since(t0);
  return f;
}

Finding output_past_2g(const KernelFactory& make, const std::optional<Tolerance>& tolerance) {
  Finding f = kernel_finding("output rows past 2^31 bytes (host)",
                             "kernels/tests/large_output_test.cpp (HostExecutorLargeOffsets, label slow)",
                             "host-w64 fused, two-stage", "large cases");
  const auto t0 = Clock::now();
  fixtures::CaseSpec s;
  s.name = "output-past-2g-host";
  s.seed = 631;
  s.batch = 64;
  s.next_n = 1;
  s.heads = 4;
  s.head_dim = 32;
  s.block_size = 16;
  s.max_model_len = 64;
  for (std::int64_t b = 0; b < s.batch; ++b) s.context_lens.push_back(static_cast<std::int32_t>(b % 3 == 0 ? 64 : 40 + b % 17));
  const Case c = fixtures::make_case(s);
  const Reference ref = compute_reference(c, {.precision = Precision::fp64});
  // Row stride ceil(2^29 / 62) floats: rows 62 and 63 start at or past 2^31 bytes of output.
  const std::int64_t stride = ((std::int64_t{1} << 29) + 61) / 62;
  kernels::RunOptions ro;
  ro.row_pad = stride - s.max_model_len;
  const auto exec = make({.warp_size = 64});
  for (const auto path : {kernels::Path::fused, kernels::Path::two_stage}) {
    ++f.cases_run;
    try {
      const auto run = exec->run(path, c, ro);
      const Report rep = compare(c, ref, run.out, {.tolerance = judged_under(tolerance, run)});
      if (!rep.passed()) {
        f.caught = true;
        f.first_detection = f.cases_run;
        f.evidence = std::string(kernels::to_string(path)) + ": " + first_lines(rep.to_text(), 6);
        break;
      }
    } catch (const SandboxError&) {
      throw;
    } catch (const std::exception& e) {
      f.caught = true;
      f.first_detection = f.cases_run;
      f.evidence = std::string(kernels::to_string(path)) + ": the run threw: " + e.what();
      break;
    }
  }
  f.seconds = seconds_since(t0);
  return f;
}

}  // namespace pmqa::gauntlet
