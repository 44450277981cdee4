#include "pmqa/cases/results.hpp"

#include <cstdio>
#include <stdexcept>

#include "pmqa/cases/atomic_file.hpp"
#include "pmqa/cases/printable.hpp"

namespace pmqa::cases {
namespace {

// Printable (printable.hpp), then XML-escaped; in attributes newlines and tabs are escaped too.
std::string xml(const std::string& s, bool attribute = true) {
  std::string out;
  for (char ch : printable(s, !attribute)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

void write_or_throw(const std::filesystem::path& path, const std::string& text) {
  try {
    write_file_atomically(path, text);
  } catch (const std::system_error& e) {
    throw std::runtime_error("cannot write " + printable(path.string(), false) + ": " + describe_write_error(e.code()));
  }
}

}  // namespace

Result run_case_result(std::string_view status, std::string suite, std::string name, std::string file,
                       const std::string& message, double seconds) {
  Result r;
  r.suite = std::move(suite);
  r.name = std::move(name);
  r.file = std::move(file);
  r.seconds = seconds;
  if (status == "ok") {
    r.passed = true;
  } else if (status == "unsupported") {
    r.skipped = true;
  } else if (status == "invalid" || status == "not-run") {
    r.error = true;
  } else if (status != "failed") {
    throw std::invalid_argument("run_case_result: status \"" + std::string(status) +
                                "\" is not ok, failed, invalid, unsupported or not-run");
  }
  if (r.passed) return r;
  r.message = message.empty() ? std::string(status) : message.substr(0, message.find('\n'));
  r.details = message;
  return r;
}

std::string junit_text(const std::string& producer, const std::vector<Result>& results, const Properties& properties) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const auto& r : results) {
    failures += !r.passed && !r.skipped && !r.error;
    errors += r.error;
    skipped += r.skipped;
    seconds += r.seconds;
  }
  const std::string counts = " tests=\"" + std::to_string(results.size()) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
                             "\" time=\"" + seconds_text(seconds) + "\"";
  std::string f = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  f += "<testsuites name=\"" + xml(producer) + "\"" + counts + ">\n";
  f += "  <testsuite name=\"" + xml(producer) + "\"" + counts + ">\n";
  if (!properties.empty()) {
    f += "    <properties>\n";
    for (const auto& [key, value] : properties)
      f += "      <property name=\"" + xml(key) + "\" value=\"" + xml(value) + "\" />\n";
    f += "    </properties>\n";
  }
  for (const auto& r : results) {
    f += "    <testcase classname=\"" + xml(r.suite.empty() ? "pmqa" : r.suite) + "\" name=\"" + xml(r.name) +
         "\" time=\"" + seconds_text(r.seconds) + "\"";
    if (!r.file.empty()) f += " file=\"" + xml(r.file) + "\"";
    if (r.passed && !r.skipped) {
      f += " />\n";
      continue;
    }
    f += ">\n";
    if (r.skipped) f += "      <skipped message=\"" + xml(r.message) + "\" />\n";
    else if (r.error) f += "      <error message=\"" + xml(r.message) + "\">" + xml(r.details, false) + "</error>\n";
    else f += "      <failure message=\"" + xml(r.message) + "\">" + xml(r.details, false) + "</failure>\n";
    f += "    </testcase>\n";
  }
  f += "  </testsuite>\n</testsuites>\n";
  return f;
}

void write_junit(const std::filesystem::path& path, const std::string& producer, const std::vector<Result>& results,
                 const Properties& properties) {
  write_or_throw(path, junit_text(producer, results, properties));
}

void write_json(const std::filesystem::path& path, const std::string& command, const std::vector<Result>& results) {
  nlohmann::json j;
  j["command"] = command;
  auto& list = j["results"] = nlohmann::json::array();
  int passed = 0, failed = 0, errors = 0, skipped = 0;
  for (const auto& r : results) {
    passed += r.passed && !r.skipped;
    skipped += r.skipped;
    errors += r.error;
    failed += !r.passed && !r.skipped && !r.error;
    list.push_back({{"suite", r.suite}, {"name", r.name}, {"passed", r.passed}, {"skipped", r.skipped},
                    {"error", r.error}, {"seconds", r.seconds}, {"message", r.message}, {"report", r.json}});
    if (!r.file.empty()) list.back()["file"] = r.file;
  }
  j["summary"] = {{"passed", passed}, {"failed", failed}, {"errors", errors}, {"skipped", skipped}};
  // Invalid UTF-8 (a file name, a runner's metadata) is replaced, never a reason to lose the report.
  write_or_throw(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace pmqa::cases
