// pmqa check: run a built-in suite through every subject and compare each with the fp64 oracle.
// Subjects: the fp32 reference itself, and each kernel path on each executor asked for (host at
// wave sizes 64 and 32; the GPU when present). One row per case, one column per subject; each cell
// is checks::judge_case, the step the quick suite check (unit tests, gauntlet) takes per case.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "pmqa/checks/judge.hpp"
#include "pmqa/dispatch/device_check.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/kernels/run_decision.hpp"
#include "pmqa/reference/compare.hpp"
#include "progress.hpp"
#include "pmqa/cases/results.hpp"
#include "shard_option.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace {

using cases::Result;
using cases::write_json;
using cases::write_junit;

struct CheckOptions {
  std::string suite = "quick";
  std::vector<std::string> cases;
  std::string executor = "auto";
  std::vector<std::string> paths{"fused", "two-stage"};
  std::string junit, json;
  bool verbose = false;
  // The GPU runner's claim (issue 4): the device must be this arch, and the policy must pick this path.
  std::string expect_arch, expect_path;
  dispatch::Context context;
  std::string shard;  // --shard K/N
};

// --expect-arch: a job that claims gfx950 but landed on gfx942 hardware fails loudly (exit 1);
// no GPU at all is exit 2. Returns the exit status, or -1 to go on with the suite.
int check_expected_arch(const CheckOptions& o) {
  if (o.expect_arch.empty()) {
    if (!o.expect_path.empty()) throw UsageError("--expect-path needs --expect-arch");
    return -1;
  }
  const auto gpu = kernels::find_gpu();
  std::optional<std::string> device;
  if (gpu) device = gpu->arch;
  std::optional<Path> path;
  if (!o.expect_path.empty()) path = parse_path(o.expect_path);
  const auto result = dispatch::check_device_arch(device, o.expect_arch, path, o.context);
  std::printf("%s\n", result.message.c_str());
  if (!gpu && !kernels::gpu_support_built()) std::printf("(this pmqa was built without a GPU executor)\n");
  return result.exit_code() == 0 ? -1 : result.exit_code();
}

std::vector<std::shared_ptr<kernels::Executor>> executors(const std::string& which) {
  std::vector<std::shared_ptr<kernels::Executor>> list;
  if (which == "host" || which == "auto") {
    list.push_back(kernels::make_host_executor({.warp_size = 64}));
    list.push_back(kernels::make_host_executor({.warp_size = 32}));
  }
  if (which == "gpu" || which == "auto") {
    if (kernels::find_gpu()) {
      list.push_back(kernels::make_gpu_executor());
    } else if (which == "gpu") {
      throw UsageError(kernels::gpu_support_built() ? "--executor gpu: no GPU found on this machine"
                                                    : "--executor gpu: this pmqa was built without a GPU executor");
    }
  }
  return list;
}

// --expect-arch (on the device it names): each case as the engine would run it there. The policy
// decides for the device's arch and the case's shape, and run_decision runs the decided kernel
// family, the trace noting what ran. A case in another fp8 format or KV layout than the decision's,
// or in a shape the decided kernels do not take, is not taken (skipped, with the reason).
checks::Subject decided_subject(const CheckOptions& o) {
  std::shared_ptr<kernels::Executor> gpu = kernels::make_gpu_executor();
  const std::string arch = gpu->arch();
  checks::Subject s{"decided/" + gpu->name(), true, [gpu, arch, context = o.context](const Case& c) {
                      dispatch::Context ctx = context;
                      ctx.block_size = c.block_size;
                      ctx.next_n = c.next_n;
                      ctx.heads = c.heads;
                      const dispatch::Decision d = dispatch::select(arch, ctx);
                      kernels::RunResult run;
                      try {
                        run = kernels::run_decision(*gpu, d, c);
                      } catch (const kernels::DecisionNotRunnable& e) {
                        throw checks::CaseNotTaken(e.what());
                      }
                      checks::SubjectOutput out;
                      out.judging = checks::kernel_judging(run);
                      out.kernel = std::string(to_string(run.kernel));
                      out.out = std::move(run.out);
                      return out;
                    }};
  s.names_kernel = true;
  return s;
}

std::vector<checks::Subject> subjects(const CheckOptions& o) {
  std::vector<checks::Subject> list{checks::reference_subject()};
  for (const auto& exec : executors(o.executor))
    for (const auto& p : o.paths) list.push_back(checks::kernel_subject(exec, parse_path(p)));
  if (!o.expect_arch.empty()) list.push_back(decided_subject(o));
  return list;
}

// The suite's cases (only --case's, in the suite's order when given); --shard then takes its part.
std::vector<fixtures::SuiteCase> pick_cases(const CheckOptions& o) {
  auto cases = fixtures::suite(o.suite);
  if (o.cases.empty()) return cases;
  std::vector<fixtures::SuiteCase> picked;
  for (const auto& name : o.cases) {
    auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
    if (it == cases.end()) throw UsageError("suite " + o.suite + " has no case '" + name + "' (see pmqa gen --list)");
    picked.push_back(*it);
  }
  return picked;
}

int run_check(const CheckOptions& o) {
  if (o.executor != "host" && o.executor != "gpu" && o.executor != "auto")
    throw UsageError("--executor " + o.executor + ": expected host, gpu or auto");
  const auto shard = shard_option(o.shard, "check");
  if (const int status = check_expected_arch(o); status >= 0) return status;
  auto cases = pick_cases(o);
  const std::size_t total = cases.size();
  if (shard) {
    // The split is over every case of the suite (or of --case), the large ones included.
    std::vector<ShardItem> items;
    for (const auto& sc : cases)
      items.push_back({sc.name, shard_work(sc.spec.batch, sc.spec.next_n, sc.spec.heads, sc.spec.head_dim,
                                           sc.spec.max_model_len)});
    const auto keep = in_shard(items, shard);
    std::vector<fixtures::SuiteCase> kept;
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (keep[i]) kept.push_back(cases[i]);
    cases = std::move(kept);
  }
  const auto subs = subjects(o);

  std::vector<std::string> header{"case", "shape"};
  for (const auto& s : subs) header.push_back(s.name);
  Table table(header);
  std::vector<Result> results;
  Progress progress(cases.size() * subs.size());
  for (const auto& sc : cases) {
    std::vector<std::string> row{sc.name, "-"};
    std::unique_ptr<Case> c;
    std::unique_ptr<Reference> oracle;
    for (const auto& sub : subs) {
      progress.step(sc.name + " [" + sub.name + "]");
      const std::string test_name = sc.name + " [" + sub.name + "]";
      if (sc.large && !sub.handles_large) {
        results.push_back({o.suite, test_name, false, true, false, 0, "gigabyte case: fused path on a GPU only", "", {}, ""});
        row.push_back("skip");
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      if (!c) {
        c = std::make_unique<Case>(fixtures::make_case(sc.spec));
        oracle = std::make_unique<Reference>(compute_reference(*c, {.precision = Precision::fp64}));
        row[1] = shape_summary(*c);
      }
      checks::CaseJudgement judged;
      try {
        judged = checks::judge_case(sub, *c, *oracle);
      } catch (const checks::CaseNotTaken& skip) {
        results.push_back({o.suite, test_name, false, true, false, 0, skip.what(), "", {}, ""});
        row.push_back("skip");
        continue;
      }
      const checks::SubjectOutput& produced = judged.produced;
      Report& rep = *judged.verdict.report;  // pmqa's checker always reports
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rep.reproduce = "pmqa check --suite " + o.suite + " --case " + sc.name + " --executor " + o.executor;
      results.push_back({o.suite, test_name, rep.passed(), false, false, seconds,
                         rep.passed() ? "" : std::to_string(rep.failing_cells()) + " failing cell(s), " +
                                                 std::to_string(rep.failing_regions()) + " region(s) (" + rep.broken() + ")",
                         rep.to_text(), rep.to_json(), ""});
      // A subject that several kernels serve (the fused path) says which one ran.
      row.push_back((rep.passed() ? "ok " + format_g(rep.worst_bound_ratio) : "FAIL " + rep.broken()) +
                    (sub.names_kernel ? " (" + produced.kernel + ")" : std::string()));
      if (!rep.passed() || o.verbose) {
        progress.clear();
        std::printf("%s [%s]\n%s", sc.name.c_str(), sub.name.c_str(), rep.to_text().c_str());
      }
    }
    table.row(row);
  }
  progress.clear();
  table.print(stdout);
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) (r.skipped ? skipped : r.passed ? passed : failed)++;
  const std::string sharded = shard ? " (" + shard_words(shard, cases.size(), total, "case(s)") + ")" : std::string();
  std::printf("\n(cells: ok <worst |out-ref| / element limit>, or FAIL <the gates and checks it broke>)\npmqa check --suite %s%s: %d passed, %d failed, %d skipped\n",
              o.suite.c_str(), sharded.c_str(), passed, failed, skipped);
  if (!o.junit.empty()) write_junit(o.junit, "pmqa check", results);
  if (!o.json.empty()) write_json(o.json, "pmqa check --suite " + o.suite, results);
  return failed ? kExitMismatch : kExitPass;
}

}  // namespace

Command add_check_command(CLI::App& parent) {
  auto opts = std::make_shared<CheckOptions>();
  Command cmd;
  cmd.app = parent.add_subcommand("check", "Run a built-in suite through the reference and the kernels, compare each with the fp64 oracle");
  cmd.app->add_option("--suite", opts->suite, "quick | standard | nightly")->capture_default_str();
  cmd.app->add_option("--case", opts->cases, "only these cases of the suite (repeatable)");
  cmd.app->add_option("--executor", opts->executor, "host | gpu | auto (host, plus the GPU when one is found)")->capture_default_str();
  cmd.app->add_option("--path", opts->paths, "kernel paths to run: fused, two-stage (repeatable)")->capture_default_str();
  cmd.app->add_option("--junit", opts->junit, "write JUnit XML here");
  cmd.app->add_option("--json", opts->json, "write a JSON report here");
  cmd.app->add_flag("-v,--verbose", opts->verbose, "print every report, not only failing ones");
  cmd.app->add_option("--shard", opts->shard,
                      "K/N: check only shard K of N (1-based) of the cases, a stable split by case name balanced by "
                      "work: N jobs with K = 1..N together check every case once");
  cmd.app->add_option("--expect-arch", opts->expect_arch,
                      "fail unless the GPU is this arch (e.g. gfx950, sm_90), then check the policy's decision for it");
  cmd.app->add_option("--expect-path", opts->expect_path, "with --expect-arch: the path the policy must pick (fused, two-stage, ...)");
  cmd.app->add_option("--block-size", opts->context.block_size, "dispatch context for --expect-arch")->capture_default_str();
  cmd.app->add_option("--next-n", opts->context.next_n, "dispatch context for --expect-arch")->capture_default_str();
  cmd.app->add_option("--heads", opts->context.heads, "dispatch context for --expect-arch")->capture_default_str();
  cmd.app->add_flag("--no-aiter", [opts](std::int64_t) { opts->context.kernels_present = false; },
                    "dispatch context for --expect-arch: the kernel library is absent");
  cmd.run = [opts] { return run_check(*opts); };
  return cmd;
}

}  // namespace pmqa::cli
