#include "pmqa/cases/run_report.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "pmqa/cases/atomic_file.hpp"
#include "pmqa/cases/results.hpp"

namespace pmqa::cases {
namespace fs = std::filesystem;
namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string resume_hint(const RunRecord& record) {
  return "`pmqa-run --resume --out " + record.folder.string() + "`";
}

// text padded with spaces to `width` characters (UTF-8 code points, as Python's format counts them);
// right: aligned to the right.
std::string padded(const std::string& text, std::size_t width, bool right = false) {
  const auto chars = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
  const std::string pad(chars < width ? width - chars : 0, ' ');
  return right ? pad + text : text + pad;
}

// Every line after the first indented by four spaces.
std::string indented(const std::string& text) {
  std::string out;
  for (const char ch : text) out += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
  return out;
}

}  // namespace

std::string case_line(const CaseOutcome& c) {
  const std::string label = "case " + c.name + " (" + c.path + ")" + (c.device.empty() ? "" : " on device " + c.device);
  const std::string where = c.convention + " on " + c.platform;
  if (c.status == "ok") {
    std::string bench = c.bench_ms.empty() ? "" : padded(c.bench_ms, 9, true) + " ms";
    if (!c.kernel_ms.empty()) bench = padded(c.kernel_ms, 9, true) + " ms kernels, " + c.bench_ms + " ms wall";
    const std::string ratio =
        c.floor_ratio.empty() ? "" : "  x" + c.floor_ratio + " floor" + (c.floor_gated ? "" : " (not gated)");
    const std::string path = c.kernel_path.empty() ? "" : "  path " + c.kernel_path;
    const std::string on = c.device.empty() ? "" : "  [" + c.device + "]";
    return "ok       " + padded(c.name, 26) + " " + padded(c.shape, 34) + " " + bench + ratio + path + on + "  " +
           c.out_path;
  }
  if (c.status == "unsupported") {
    if (c.skip_unsupported)
      return "SKIP     " + padded(c.name, 26) + " " + padded(c.shape, 34) + " unsupported by " + where + ": " + c.message;
    return "UNSUPPORTED " + label + ": " + where + ": " + c.message;
  }
  if (c.status == "failed")
    return indented("FAIL     " + label + (c.floor_ratio.empty() ? "" : " [x" + c.floor_ratio + " floor]") + ": " +
                    c.message);
  if (c.status == "not-written") return indented("ERROR    " + label + ": " + c.message);
  return indented("ERROR    " + c.message);
}

std::vector<std::string> run_summary_lines(const RunRecord& record, const RunSummaryFacts& facts) {
  std::map<std::string, std::size_t> count;
  std::map<std::string, std::size_t> limits;
  for (const auto& c : record.cases) {
    ++count[c.status];
    if (c.status == "unsupported") ++limits[c.limit];
  }
  const std::size_t not_run = count["pending"], not_written = count["not-written"];
  const std::string and_not_written = not_written ? ", " + std::to_string(not_written) + " not written" : "";
  std::vector<std::string> lines;
  if (record.cases.empty()) lines.push_back("pmqa-run: error: no case matched --case " + join(facts.case_filter, " "));
  const std::string cases = std::to_string(record.cases.size()) + " case(s)";
  const std::string shard = record.shard.empty() ? cases
                                                 : "shard " + record.shard + ": " + std::to_string(record.cases.size()) +
                                                       " of " + std::to_string(record.shard_of) + " case(s)";
  lines.push_back("pmqa-run: " + shard + ": " + std::to_string(count["ok"]) + " written, " +
                  std::to_string(count["failed"]) + " failed, " + std::to_string(count["unsupported"]) +
                  " unsupported (" + (facts.skip_unsupported ? "skipped" : "refused") + "), " +
                  std::to_string(count["invalid"]) + " invalid" + and_not_written +
                  (not_run ? ", " + std::to_string(not_run) + " not run" : "") + " (exit " +
                  std::to_string(facts.status) + ")");
  if (!limits.empty()) {
    // The limit that refused most first; ties by the limit's id.
    std::vector<std::pair<std::string, std::size_t>> by_count(limits.begin(), limits.end());
    std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> parts;
    for (const auto& [id, n] : by_count) parts.push_back(id + " " + std::to_string(n));
    lines.push_back("pmqa-run: unsupported by limit: " + join(parts, ", "));
  }
  // One worker per device is the plan; more means a fault ended one and a fresh one took over.
  if (facts.workers_started > static_cast<int>(std::max<std::size_t>(1, facts.devices)))
    lines.push_back("pmqa-run: " + std::to_string(facts.workers_started) + " worker processes (" +
                    (facts.devices ? std::to_string(facts.devices) + " device(s), " : "") +
                    "a fresh one after each fault)");
  if (!record.stopped.empty()) {
    std::size_t kept = 0;
    std::error_code ec;
    for (const auto& c : record.cases) kept += c.written && fs::is_regular_file(record.folder / c.result, ec);
    lines.push_back("pmqa-run: the run stopped early (" + record.stopped + "): " + std::to_string(kept) +
                    " result file(s) kept in " + record.folder.string() + ", " + std::to_string(not_run) +
                    " case(s) not run" + and_not_written + "; " + resume_hint(record) + " finishes it");
  } else if (not_written) {
    lines.push_back("pmqa-run: " + std::to_string(not_written) +
                    " result file(s) not written (the system refused them: not the op's failure); " +
                    resume_hint(record) + " runs those cases again");
  }
  return lines;
}

std::string run_record_junit_text(const RunRecord& record, const std::vector<std::string>& faults) {
  const std::string not_run =
      record.stopped.empty()
          ? "not run: pmqa-run has not reached this case: the run is still going, or was interrupted or killed "
            "before it (" + resume_hint(record) + " finishes the run)"
          : "not run: the run stopped before this case: " + record.stopped;
  Properties properties{{"run_id", record.run_id},
                        {"producer", record.producer},
                        {"op", record.op},
                        {"convention", record.convention},
                        {"complete", record.complete ? "true" : "false"}};
  if (!record.stopped.empty()) properties.emplace_back("stopped", record.stopped);
  std::vector<Result> results;
  for (const auto& c : record.cases) {
    const bool finished = c.finished();
    results.push_back(run_case_result(finished ? c.status : "not-run", c.suite, c.name, c.file,
                                      finished || c.status == "not-written" ? c.message : not_run, c.seconds));
  }
  for (const auto& fault : faults)
    results.push_back(run_case_result("invalid", "pmqa-run", "pmqa-run worker answers", "", fault, 0.0));
  return junit_text("pmqa-run " + record.convention, results, properties);
}

void write_run_record_junit(const fs::path& path, const RunRecord& record, const std::vector<std::string>& faults) {
  write_file_atomically(path, run_record_junit_text(record, faults));
}

}  // namespace pmqa::cases
