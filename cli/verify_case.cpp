#include "verify_case.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/error_map_picture.hpp"
#include "pmqa/cases/logits_file.hpp"
#include "pmqa/cases/run_gates.hpp"
#include "pmqa/cases/verdict.hpp"
#include "pmqa/reference/compare.hpp"
#include "table.hpp"
#include "verify_map.hpp"

namespace pmqa::cli {
namespace fs = std::filesystem;
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// JUnit's classname: the case's suite (the one shape pmqa-run writes too), "pmqa" without one.
std::string suite_of(const std::string& suite) { return suite.empty() ? "pmqa" : suite; }

// JUnit's name: the case's, or the file's stem when there is no case to name it.
std::string name_of(const std::string& name, const fs::path& file) {
  return name.empty() ? file.stem().string() : name;
}

// One time the runner stored ("kernel_ms", "bench_ms" metadata) as "<ms> ms", or "" when absent. A
// value that is not a number is shown as it is rather than dropped, so a runner's bug stays visible.
std::string stored_ms(const cases::CaseFile& f, const char* key) {
  const auto it = f.extra.find(key);
  if (it == f.extra.end()) return "";
  const std::string v = it->second.substr(0, 32);
  char* end = nullptr;
  const double ms = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(ms)) return v + " ms";
  return std::string(key) + " \"" + v + "\"";
}

// The op's times as pmqa-run stored them: its kernels' device time (what the speed gate judges)
// beside its wall time, "0.061 ms kernels, 0.080 ms wall"; the wall time alone from a runner that
// recorded no kernel time.
std::string kernel_time(const cases::CaseFile& f) {
  const std::string kernels = stored_ms(f, "kernel_ms"), wall = stored_ms(f, "bench_ms");
  if (kernels.empty()) return wall;
  return kernels + " kernels" + (wall.empty() ? "" : ", " + wall + " wall");
}

// What pmqa-run recorded about the run beside the logits: the path the kernels it saw mean
// (--expect-path) and the time over the byte floor (--max-floor-ratio).
std::string run_facts(const cases::CaseFile& f) {
  std::string out;
  if (const auto it = f.extra.find("floor_ratio"); it != f.extra.end()) out += " x" + it->second.substr(0, 16) + " floor";
  if (const auto it = f.extra.find("path"); it != f.extra.end()) out += " path " + it->second.substr(0, 16);
  return out;
}

std::string verdict_line(const char* verdict, const std::string& time, const cases::CaseFile& f, const Report& rep,
                         const cases::RunGates& gates, const fs::path& file) {
  std::string line = verdict;
  if (!time.empty()) line += " " + time;
  line += run_facts(f);
  const double region = std::max({rep.block.worst, rep.row.worst, rep.global.worst});
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-26s %-34s err/bound %-8s region %-8s bias %-8s calc_diff %-9s", f.c.name.c_str(),
                shape_summary(f.c).c_str(), format_g(rep.worst_bound_ratio).c_str(), format_g(region).c_str(),
                format_g(rep.bias.worst).c_str(), rep.calc_diff ? format_g(*rep.calc_diff).c_str() : "n/a");
  line += buf;
  if (rep.nan_seen.cells > 0) line += " nan " + rep.nan_seen.describe();
  if (!rep.passed()) {
    line += " " + std::to_string(rep.failing_cells()) + " failing cell(s)";
    if (rep.failing_regions() > 0) line += ", " + std::to_string(rep.failing_regions()) + " region(s)";
    line += " [" + rep.broken() + "]";
  }
  for (const auto& gate : gates.failed()) line += " [" + gate + " gate failed]";
  line += "  " + file.string();
  return line;
}

// A case file as it is, or a logits-only result file joined with its input (found in --cases by
// name, its sha256 checked). Both strict: structure, metadata, then validate().
cases::CaseFile read_for_verify(const fs::path& file, const std::optional<fs::path>& cases) {
  if (!cases::is_logits_file(file)) return cases::read_case_file(file);
  if (!cases)
    throw cases::CaseFileError(file.string(), "file",
                        "holds logits only (content logits-only, from pmqa.run --logits-only): give --cases DIR, the "
                        "folder of the case files the run read");
  return cases::join_logits_file(cases::read_logits_file(file), file, *cases);
}

}  // namespace

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./-+=:,@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

Verdict invalid_input(const fs::path& file, const std::string& message, const std::string& suite,
                      const std::string& name) {
  Verdict v;
  v.status = kExitInvalid;
  v.line = "ERROR " + message;
  v.result = {suite_of(suite), name_of(name, file), false, false, true, 0, message, message,
              {{"file", file.string()}, {"error", message}}, file.string()};
  return v;
}

Verdict recorded_failure(const fs::path& file, const std::string& message, const std::string& suite,
                         const std::string& name) {
  Verdict v;
  v.status = kExitMismatch;
  v.line = "FAIL " + message;
  v.result = {suite_of(suite), name_of(name, file), false, false, false, 0, message, message,
              {{"file", file.string()}, {"failure", message}}, file.string()};
  return v;
}

Verdict recorded_skip(const fs::path& file, const std::string& message, const std::string& suite,
                      const std::string& name) {
  Verdict v;
  v.status = kExitPass;
  v.line = "SKIP " + name_of(name, file) + ": " + message + "  " + file.string();
  v.result = {suite_of(suite), name_of(name, file), false, true, false, 0, message, message,
              {{"file", file.string()}, {"skipped", message}}, file.string()};
  return v;
}

Verdict verify_case_file(const fs::path& file, const VerifyOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const cases::CaseFile f = read_for_verify(file, options.cases);
    // The file's judging is resolved once, inside judge_case_file; the reproduce line and the
    // messages below read what the report recorded.
    Report rep = cases::judge_case_file(f, file.string(), {.judging = options.judging, .threads = options.reference_threads},
                                 /*with_map=*/true);
    const Judging& judged = rep.judging;
    rep.reproduce = "pmqa verify " + shell_quote(file.string()) + " --contract " +
                    std::string(to_string(judged.contract)) + " --tolerance " + judged.tolerance.name + " --nan " +
                    std::string(to_string(judged.nan)) +
                    (f.extra.count("logits_file") && options.cases ? " --cases " + shell_quote(options.cases->string()) : "");

    // The run's own gates, re-judged from what the file records (the floor recomputed from the case):
    // a run that failed its speed or path gate wrote its files all the same, and they must not pass here.
    const cases::RunGates gates = cases::judge_recorded_gates(f, file.string());

    Verdict v;
    v.judged = true;
    v.judge_failed = !rep.passed();
    v.gate_failed = !gates.passed();
    const bool ok = !v.judge_failed && !v.gate_failed;
    v.status = ok ? kExitPass : kExitMismatch;
    v.line = verdict_line(ok ? "PASS" : "FAIL", kernel_time(f), f, rep, gates, file);
    if (v.judge_failed) v.report = rep.to_text() + cases::error_map_block(*rep.map);  // where the errors sit, at a glance
    v.report += gates.failure_text();
    if (options.map) write_error_map(*options.map, rep, file);
    nlohmann::json j = rep.to_json();
    j["file"] = file.string();
    for (const char* key : {"bench_ms", "kernel_ms", "floor_ratio", "floor_ratio_wall", "floor_basis", "floor_ms", "path",
                            "kernels"})
      if (const auto it = f.extra.find(key); it != f.extra.end()) j[key] = it->second;
    j["run_gates"] = gates.to_json();
    j["failed_gates"] = gates.failed();
    std::string message = "worst error/bound " + format_g(rep.worst_bound_ratio);
    if (v.judge_failed)
      message = std::to_string(rep.failing_cells()) + " failing cell(s), " + std::to_string(rep.failing_regions()) +
                " region(s) over their limit (" + rep.broken() + ") under " + judged.describe();
    if (v.gate_failed) message = (v.judge_failed ? message + "; " : "") + gates.summary();
    v.result = {suite_of(f.c.suite), name_of(f.c.name, file), ok, false, false, seconds_since(t0), message,
                ok ? rep.to_text() : v.report, std::move(j), file.string()};
    return v;
  } catch (const cases::CaseFileError& e) {
    return invalid_input(file, e.what());
  } catch (const CaseError& e) {
    return invalid_input(file, file.string() + ": case: " + e.what());
  } catch (const std::bad_alloc&) {
    return invalid_input(file, file.string() + ": file: not enough memory to verify it");
  } catch (const std::exception& e) {
    return invalid_input(file, file.string() + ": " + e.what());
  }
}

}  // namespace pmqa::cli
