// pmqa verify FILE...: judge the logits a kernel stored in case files against the fp64 oracle.
// Every input is checked even after a failure, so one run reports them all; the exit status is the
// worst seen: 2 (invalid input) over 1 (mismatch) over 0 (all pass).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/model/tolerance.hpp"
#include "pmqa/cases/printable.hpp"
#include "progress.hpp"
#include "pmqa/cases/results.hpp"
#include "shard_option.hpp"
#include "table.hpp"
#include "verify_case.hpp"
#include "verify_inputs.hpp"
#include "verify_map.hpp"

namespace pmqa::cli {
namespace {

using cases::printable;
using cases::write_json;
using cases::write_junit;

struct VerifyArgs {
  std::vector<std::string> files;
  std::string contract;   // empty: each file's own
  std::string tolerance;  // empty: each file's "tolerance" metadata, else fp32
  std::string nan;        // empty: each file's "nan" metadata, else propagate
  std::string junit, json;
  std::string map;  // --map: the SVG error map (a folder of them for several inputs)
  std::string cases;  // --cases: the inputs of logits-only result files
  std::string shard;  // --shard K/N
  int jobs = 0;       // -j N: files judged at once (0: the cores available)
};

VerifyOptions parse_options(const VerifyArgs& a) {
  VerifyOptions o;
  if (!a.contract.empty()) {
    try {
      o.judging.contract = parse_contract(a.contract);
    } catch (const std::invalid_argument&) {
      throw UsageError("--contract " + a.contract + ": expected " + joined(contract_names(), " or "));
    }
  }
  if (!a.tolerance.empty()) {
    try {
      o.judging.tolerance = Tolerance::named(a.tolerance);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--tolerance: ") + e.what());
    }
  }
  if (!a.nan.empty()) {
    try {
      o.judging.nan = parse_nan_rule(a.nan);
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

// One input's verdict (what -j 1 and every worker of -j N do).
Verdict judge_input(const VerifyInput& in, const VerifyOptions& options, const VerifyArgs& a, std::size_t inputs) {
  VerifyOptions file_options = options;
  if (!a.map.empty()) file_options.map = map_file_for(a.map, in.path, inputs);
  using Kind = VerifyInput::Kind;
  try {
    return in.kind == Kind::judge    ? verify_case_file(in.path, file_options)
           : in.kind == Kind::failed ? recorded_failure(in.path, in.error, in.suite, in.name)
           : in.kind == Kind::skipped ? recorded_skip(in.path, in.error, in.suite, in.name)
                                      : invalid_input(in.path, in.error, in.suite, in.name);
  } catch (const std::exception& e) {  // verify_case_file catches its own; this is for what it cannot
    return invalid_input(in.path, in.path.string() + ": " + e.what());
  }
}

// The inputs shard K takes, split by each input's case name and work (the folder's run record's, else
// the file header's): a folder of `pmqa gen --suite S` files splits as gen --shard splits suite S.
std::vector<VerifyInput> take_shard(std::vector<VerifyInput> inputs, const std::optional<Shard>& shard,
                                    const VerifyOptions& options) {
  if (!shard) return inputs;
  std::vector<ShardItem> items;
  for (const auto& in : inputs) {
    ShardItem item = shard_item_of_file(in.path, options.cases);
    if (!in.record_name.empty()) item.name = in.record_name;
    if (in.record_work > 0) item.work = in.record_work;
    items.push_back(std::move(item));
  }
  const auto keep = in_shard(items, shard);
  std::vector<VerifyInput> kept;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (keep[i]) kept.push_back(std::move(inputs[i]));
  return kept;
}

int run_verify(const VerifyArgs& a) {
  // Line-buffered stdout, even into a pipe or a file (fully buffered there by default): a verify that
  // is killed (a CI timeout, kill -9) leaves every line it printed, its notes before the first verdict
  // too, never an empty log.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  VerifyOptions options = parse_options(a);
  const auto shard = shard_option(a.shard, "verify");
  if (a.jobs < 0) throw UsageError("verify: -j " + std::to_string(a.jobs) + ": expected a number of files at once, 1 or more (0: the cores available)");
  if (a.files.empty())
    throw UsageError("verify: no input files (give case files, or directories holding *.safetensors files)");
  auto [all_inputs, notes] = expand_verify_inputs(a.files);
  for (const auto& note : notes) std::printf("%s\n", printable(note).c_str());
  const std::size_t total = all_inputs.size();
  const std::vector<VerifyInput> inputs = take_shard(std::move(all_inputs), shard, options);

  // -j N: N files judged at once, each by a worker that loads one file at a time (so at most N are
  // in memory), the verdicts printed in the inputs' order as that order's next one completes. Each
  // file's oracle keeps every core: the system shares them while N files are in flight, and the
  // largest file, started first, is not left on cores/N threads once the small ones are done (with
  // the cores split N ways, -j 16 took 2.5x -j 1's wall time on an H200 host's 16 cores over the
  // nightly outputs: the 32k-context case alone on one thread).
  const int cores = available_cores();
  const std::size_t jobs =
      std::min<std::size_t>(static_cast<std::size_t>(a.jobs > 0 ? a.jobs : cores), std::max<std::size_t>(inputs.size(), 1));

  std::vector<std::optional<Verdict>> done(inputs.size());
  std::mutex mutex;
  std::condition_variable ready;
  std::vector<std::jthread> workers;
  if (jobs > 1) {
    // The heaviest first (the work the shards weigh by), so a large file does not start last.
    std::vector<std::uint64_t> work(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) work[i] = shard_item_of_file(inputs[i].path, options.cases).work;
    auto order = std::make_shared<std::vector<std::size_t>>(inputs.size());
    std::iota(order->begin(), order->end(), std::size_t{0});
    std::stable_sort(order->begin(), order->end(), [&](std::size_t x, std::size_t y) { return work[x] > work[y]; });
    auto next = std::make_shared<std::atomic<std::size_t>>(0);
    for (std::size_t w = 0; w < jobs; ++w)
      workers.emplace_back([&, order, next] {
        for (std::size_t k; (k = next->fetch_add(1)) < order->size();) {
          const std::size_t i = (*order)[k];
          Verdict v = judge_input(inputs[i], options, a, total);
          const std::lock_guard lock(mutex);
          done[i] = std::move(v);
          ready.notify_all();
        }
      });
  }

  std::vector<Result> results;
  int status = kExitPass, passed = 0, failed = 0, invalid = 0, skipped = 0, written = 0, judge_failed = 0, gate_failed = 0;
  Progress progress(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    Verdict v;
    if (jobs > 1) {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return done[i].has_value(); });
      v = std::move(*done[i]);
      done[i].reset();
    } else {
      progress.step(printable(in.path.string(), false));
      v = judge_input(in, options, a, total);
    }
    if (jobs > 1) progress.step(printable(in.path.string(), false));
    progress.clear();
    // Everything printed passes through printable(): no control character from a file reaches the
    // terminal, and a NUL cannot cut a report short.
    const std::string line = printable(v.line) + "\n" + printable(v.report);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
    (v.result.skipped ? skipped : v.status == kExitPass ? passed : v.status == kExitMismatch ? failed : invalid)++;
    written += v.judged;
    judge_failed += v.judge_failed;
    gate_failed += v.gate_failed;
    status = std::max(status, v.status);
    results.push_back(std::move(v.result));
  }
  workers.clear();  // joins them (every one has finished: each verdict was taken)
  progress.clear();
  const std::string counted =
      shard ? shard_words(shard, inputs.size(), total, "file(s)") : std::to_string(inputs.size()) + " file(s)";
  // Then the result files judged (written by the run, or given), and why those that failed failed: by
  // the oracle's comparison of their numbers, or by a gate their run recorded (a file can fail both).
  std::printf("pmqa verify: %s: %d passed, %d failed, %d invalid%s; of %d written: %d failed by the judge, %d failed by "
              "a gate\n",
              counted.c_str(), passed, failed, invalid, skipped ? (", " + std::to_string(skipped) + " skipped").c_str() : "",
              written, judge_failed, gate_failed);
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
  cmd.app->add_option("--contract", args->contract, joined(contract_names()) + " (default: each file's own contract)");
  cmd.app->add_option("--tolerance", args->tolerance,
                      joined(Tolerance::names()) + " (default: the file's \"tolerance\" metadata, else fp32)");
  cmd.app->add_option("--nan", args->nan,
                      joined(nan_rule_names()) + ": the NaN behaviour accepted (default: the file's \"nan\" metadata, "
                      "else propagate)");
  cmd.app->add_option("--junit", args->junit, "write JUnit XML here");
  cmd.app->add_option("--json", args->json, "write a JSON report here");
  cmd.app->add_option("--cases", args->cases,
                      "the folder of the input case files: a logits-only result file (pmqa-run --logits-only) is "
                      "judged against the input it names, whose sha256 must match");
  cmd.app->add_option("--map", args->map,
                      "draw each file's error map (rows x logical blocks, coloured by the worst error over the "
                      "limit) as SVG: this file for one input, else a folder mirroring the inputs' paths");
  cmd.app->add_option("--shard", args->shard,
                      "K/N: verify only shard K of N (1-based) of the inputs, split by each file's case name and "
                      "shape (a folder of a whole suite's files splits as pmqa gen --shard splits the suite)");
  cmd.app->add_option("-j,--jobs", args->jobs,
                      "files judged at once (default 0: the cores this process may use); the report's order and the "
                      "exit status are those of -j 1, and at most N files are in memory at once");
  cmd.run = [args] { return run_verify(*args); };
  return cmd;
}

}  // namespace pmqa::cli
