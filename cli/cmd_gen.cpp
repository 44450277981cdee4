// pmqa gen: write a suite's cases as case files (inputs for a kernel runner in any language), or
// list the suites. The same suite gives byte-identical files on every machine: the generator is
// seeded and the writer is deterministic.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "gen_list.hpp"
#include "pmqa/fixtures/case_file.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/reference/reference.hpp"
#include "progress.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace {

struct GenArgs {
  std::string suite;
  std::string out;
  std::vector<std::string> cases;
  bool list = false;
  bool with_reference = false;
  bool include_large = false;
};

std::vector<fixtures::SuiteCase> pick_cases(const GenArgs& a) {
  auto all = fixtures::suite(a.suite);
  if (a.cases.empty()) return all;
  std::vector<fixtures::SuiteCase> picked;
  for (const auto& name : a.cases) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
    if (it == all.end()) throw UsageError("suite " + a.suite + " has no case '" + name + "' (see pmqa gen --list --suite " + a.suite + ")");
    picked.push_back(*it);
  }
  return picked;
}

CaseFile case_file_for(const fixtures::SuiteCase& sc, bool with_reference) {
  CaseFile f;
  f.c = fixtures::make_case(sc.spec);  // carries suite and seed into the metadata
  f.contract = Contract::clean;
  f.producer = "pmqa gen";
  if (with_reference) {
    // The fp32 reference's own output: a file `pmqa verify` must pass, for trying a pipeline out.
    f.logits = dense_logits(compute_reference(f.c, {.precision = Precision::fp32, .with_noise = false}));
    f.extra["logits_from"] = "pmqa reference (fp32)";
  }
  return f;
}

int run_gen(const GenArgs& a) {
  if (a.list) {
    print_suite_list(stdout, a.suite);
    return kExitPass;
  }
  if (a.suite.empty()) throw UsageError("gen: --suite is required (one of quick, standard, nightly; see pmqa gen --list)");
  if (a.out.empty()) throw UsageError("gen: --out DIR is required");
  const auto cases = pick_cases(a);
  const std::filesystem::path dir(a.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("gen: --out " + a.out + ": cannot create the directory: " + ec.message());

  int written = 0, skipped = 0;
  Progress progress(cases.size());
  for (const auto& sc : cases) {
    progress.step(sc.name);
    if (sc.large && !a.include_large) {
      progress.clear();
      std::printf("skipped %s: a large case (gigabytes of buffers); --include-large writes it\n", sc.name.c_str());
      ++skipped;
      continue;
    }
    const CaseFile f = case_file_for(sc, a.with_reference);
    const auto path = dir / (sc.name + ".safetensors");
    write_case_file(path, f);
    progress.clear();
    std::printf("wrote %s  %s%s\n", path.string().c_str(), shape_summary(f.c).c_str(),
                a.with_reference ? "  (with reference logits)" : "");
    std::fflush(stdout);
    ++written;
  }
  progress.clear();
  std::printf("pmqa gen --suite %s: %d file(s) written to %s, %d large case(s) skipped\n", a.suite.c_str(), written,
              dir.string().c_str(), skipped);
  return kExitPass;
}

}  // namespace

Command add_gen_command(CLI::App& parent) {
  auto args = std::make_shared<GenArgs>();
  Command cmd;
  cmd.app = parent.add_subcommand("gen", "Write a suite's cases as case files (safetensors), or list the suites");
  cmd.app->add_option("--suite", args->suite, "quick | standard | nightly");
  cmd.app->add_option("--out", args->out, "directory to write <case>.safetensors files into (created if missing)");
  cmd.app->add_option("--case", args->cases, "only these cases of the suite (repeatable)");
  cmd.app->add_flag("--list", args->list, "list the suites and their cases (only --suite's with --suite)");
  cmd.app->add_flag("--with-reference", args->with_reference,
                    "also store the fp32 reference's logits (a file pmqa verify passes)");
  cmd.app->add_flag("--include-large", args->include_large, "also write the large (gigabyte) cases");
  cmd.run = [args] { return run_gen(*args); };
  return cmd;
}

}  // namespace pmqa::cli
