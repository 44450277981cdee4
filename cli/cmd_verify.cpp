// pmqa verify FILE...: judge the logits a kernel stored in case files against the fp64 oracle.
// Every input is checked even after a failure, so one run reports them all; the exit status is the
// worst seen: 2 (invalid input) over 1 (mismatch) over 0 (all pass).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "pmqa/model/tolerance.hpp"
#include "printable.hpp"
#include "progress.hpp"
#include "results.hpp"
#include "verify_case.hpp"
#include "verify_inputs.hpp"
#include "verify_map.hpp"

namespace pmqa::cli {
namespace {

struct VerifyArgs {
  std::vector<std::string> files;
  std::string contract;   // empty: each file's own
  std::string tolerance;  // empty: each file's "tolerance" metadata, else fp32
  std::string nan;        // empty: each file's "nan" metadata, else propagate
  std::string junit, json;
  std::string map;  // --map: the SVG error map (a folder of them for several inputs)
  std::string cases;  // --cases: the inputs of logits-only result files
};

VerifyOptions parse_options(const VerifyArgs& a) {
  VerifyOptions o;
  if (!a.contract.empty()) {
    try {
      o.contract = parse_contract(a.contract);
    } catch (const std::invalid_argument&) {
      throw UsageError("--contract " + a.contract + ": expected clean or valid-only");
    }
  }
  if (!a.tolerance.empty()) {
    try {
      o.tolerance = Tolerance::named(a.tolerance).name;
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--tolerance: ") + e.what());
    }
  }
  if (!a.nan.empty()) {
    try {
      o.nan = parse_nan_rule(a.nan);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--nan: ") + e.what());
    }
  }
  if (!a.cases.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(a.cases, ec))
      throw UsageError("--cases " + a.cases + ": not a directory (the folder of the case files the run read)");
    o.cases = a.cases;
  }
  return o;
}

int run_verify(const VerifyArgs& a) {
  const VerifyOptions options = parse_options(a);
  if (a.files.empty())
    throw UsageError("verify: no input files (give case files, or directories holding *.safetensors files)");
  const auto [inputs, notes] = expand_verify_inputs(a.files);
  for (const auto& note : notes) std::printf("%s\n", printable(note).c_str());

  std::vector<Result> results;
  int status = kExitPass, passed = 0, failed = 0, invalid = 0, skipped = 0;
  Progress progress(inputs.size());
  for (const auto& in : inputs) {
    progress.step(printable(in.path.string(), false));
    VerifyOptions file_options = options;
    if (!a.map.empty()) file_options.map = map_file_for(a.map, in.path, inputs.size());
    using Kind = VerifyInput::Kind;
    const Verdict v = in.kind == Kind::judge    ? verify_case_file(in.path, file_options)
                      : in.kind == Kind::failed ? recorded_failure(in.path, in.error, in.suite, in.name)
                      : in.kind == Kind::skipped ? recorded_skip(in.path, in.error, in.suite, in.name)
                                                 : invalid_input(in.path, in.error, in.suite, in.name);
    progress.clear();
    // Everything printed passes through printable(): no control character from a file reaches the
    // terminal, and a NUL cannot cut a report short.
    const std::string line = printable(v.line) + "\n" + printable(v.report);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    (v.result.skipped ? skipped : v.status == kExitPass ? passed : v.status == kExitMismatch ? failed : invalid)++;
    status = std::max(status, v.status);
    results.push_back(v.result);
  }
  progress.clear();
  std::printf("pmqa verify: %zu file(s): %d passed, %d failed, %d invalid%s\n", inputs.size(), passed, failed, invalid,
              skipped ? (", " + std::to_string(skipped) + " skipped").c_str() : "");
  if (!a.junit.empty()) write_junit(a.junit, "pmqa verify", results);
  if (!a.json.empty()) write_json(a.json, "pmqa verify", results);
  return status;
}

}  // namespace

Command add_verify_command(CLI::App& parent) {
  auto args = std::make_shared<VerifyArgs>();
  Command cmd;
  cmd.app = parent.add_subcommand("verify", "Check the logits stored in case files against the fp64 reference");
  cmd.app->footer(
      "Exit status: 0 all pass, 1 any mismatch, 2 any invalid input or usage error.\n"
      "A cell holding the sentinel NaN 0x7FF0CAFE counts as never written.");
  // Not ->required(): no files is answered with pmqa's own message and exit status 2.
  cmd.app->add_option("files", args->files, "case files (*.safetensors) or directories of them");
  cmd.app->add_option("--contract", args->contract, "clean | valid-only (default: each file's own contract)");
  cmd.app->add_option("--tolerance", args->tolerance,
                      "fp32 | matrix-unit | bf16-output | matrix-unit-bf16 (default: the file's \"tolerance\" "
                      "metadata, else fp32)");
  cmd.app->add_option("--nan", args->nan,
                      "propagate | relu-clamp: the NaN behaviour accepted (default: the file's \"nan\" metadata, "
                      "else propagate)");
  cmd.app->add_option("--junit", args->junit, "write JUnit XML here");
  cmd.app->add_option("--json", args->json, "write a JSON report here");
  cmd.app->add_option("--cases", args->cases,
                      "the folder of the input case files: a logits-only result file (pmqa-run --logits-only) is "
                      "judged against the input it names, whose sha256 must match");
  cmd.app->add_option("--map", args->map,
                      "draw each file's error map (rows x logical blocks, coloured by the worst error over the "
                      "limit) as SVG: this file for one input, else a folder mirroring the inputs' paths");
  cmd.run = [args] { return run_verify(*args); };
  return cmd;
}

}  // namespace pmqa::cli
