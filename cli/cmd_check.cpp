// pmqa check: run the built-in suite through every subject and compare each with the reference.
// Subjects today: the fp32 reference itself, checked against the fp64 oracle within the spec §5
// bound. (The kernels issue adds the kernels on each executor.)
#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "command.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/reference/compare.hpp"
#include "progress.hpp"
#include "results.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace {

struct CheckOptions {
  std::string suite = "quick";
  std::vector<std::string> cases;
  std::string junit, json;
  bool verbose = false;
};

OutputBuffer reference_fp32_output(const Case& c) {
  const Reference r = compute_reference(c, {.precision = Precision::fp32, .with_magnitude = false});
  OutputBuffer out(c.rows(), c.max_model_len);
  for (std::int64_t row = 0; row < c.rows(); ++row)
    for (std::int64_t j = 0; j < c.max_model_len; ++j) out.at(row, j) = static_cast<float>(r.at(row, j));
  return out;
}

int run_check(const CheckOptions& o) {
  auto cases = fixtures::suite(o.suite);
  if (!o.cases.empty()) {
    std::vector<fixtures::SuiteCase> picked;
    for (const auto& name : o.cases) {
      auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
      if (it == cases.end()) throw UsageError("suite " + o.suite + " has no case '" + name + "' (see pmqa gen --list)");
      picked.push_back(*it);
    }
    cases = picked;
  }

  Table table({"case", "shape", "subject", "cells", "err/bound", "calc_diff", "ms", "verdict"});
  std::vector<Result> results;
  Progress progress(cases.size());
  for (const auto& sc : cases) {
    progress.step(sc.name);
    if (sc.large) {
      results.push_back({o.suite, sc.name + " [reference-fp32]", false, true, false, 0,
                         "large case: GPU runs only", "", {}});
      table.row({sc.name, "-", "reference-fp32", "-", "-", "-", "-", "SKIP (large)"});
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const Case c = fixtures::make_case(sc.spec);
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
    Report rep = compare(c, oracle, reference_fp32_output(c));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rep.reproduce = "pmqa check --suite " + o.suite + " --case " + sc.name;
    Result res{o.suite, sc.name + " [reference-fp32]", rep.passed(), false, false, seconds,
               rep.passed() ? "" : std::to_string(rep.failures()) + " failing cells", rep.to_text(), rep.to_json()};
    table.row({sc.name, shape_summary(c), "reference-fp32", std::to_string(rep.cells_checked),
               format_g(rep.worst_bound_ratio), rep.calc_diff ? format_g(*rep.calc_diff) : "n/a",
               format_fixed(seconds * 1e3, 0), rep.passed() ? "PASS" : "FAIL"});
    if (!rep.passed() || o.verbose) {
      progress.clear();
      std::fputs(rep.to_text().c_str(), stdout);
    }
    results.push_back(std::move(res));
  }
  progress.clear();
  table.print(stdout);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) (r.skipped ? skipped : r.passed ? passed : failed)++;
  std::printf("\npmqa check --suite %s: %d passed, %d failed, %d skipped\n", o.suite.c_str(), passed, failed, skipped);
  if (!o.junit.empty()) write_junit(o.junit, "pmqa check", results);
  if (!o.json.empty()) write_json(o.json, "pmqa check --suite " + o.suite, results);
  return failed ? kExitMismatch : kExitPass;
}

}  // namespace

Command add_check_command(CLI::App& parent) {
  auto opts = std::make_shared<CheckOptions>();
  Command cmd;
  cmd.app = parent.add_subcommand("check", "Run a built-in suite and compare every subject with the reference");
  cmd.app->add_option("--suite", opts->suite, "quick | standard | nightly")->capture_default_str();
  cmd.app->add_option("--case", opts->cases, "only these cases of the suite (repeatable)");
  cmd.app->add_option("--junit", opts->junit, "write JUnit XML here");
  cmd.app->add_option("--json", opts->json, "write a JSON report here");
  cmd.app->add_flag("-v,--verbose", opts->verbose, "print every report, not only failing ones");
  cmd.run = [opts] { return run_check(*opts); };
  return cmd;
}

}  // namespace pmqa::cli
