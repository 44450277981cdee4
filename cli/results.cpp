#include "results.hpp"

#include <fstream>
#include <map>
#include <stdexcept>

namespace pmqa::cli {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters; keep tabs and newlines.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') out += '?';
        else out += ch;
    }
  }
  return out;
}

std::ofstream open_or_throw(const std::filesystem::path& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + path.string());
  return f;
}

}  // namespace

void write_junit(const std::filesystem::path& path, const std::string& name, const std::vector<Result>& results) {
  std::map<std::string, std::vector<const Result*>> suites;
  for (const auto& r : results) suites[r.suite].push_back(&r);
  auto f = open_or_throw(path);
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" << xml_escape(name) << "\">\n";
  for (const auto& [suite, list] : suites) {
    int failures = 0, errors = 0, skipped = 0;
    double seconds = 0;
    for (const auto* r : list) {
      failures += !r->passed && !r->skipped && !r->error;
      errors += r->error;
      skipped += r->skipped;
      seconds += r->seconds;
    }
    f << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << list.size() << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << seconds << "\">\n";
    for (const auto* r : list) {
      f << "    <testcase classname=\"" << xml_escape(suite) << "\" name=\"" << xml_escape(r->name) << "\" time=\""
        << r->seconds << "\"";
      if (r->passed && !r->skipped) {
        f << "/>\n";
        continue;
      }
      f << ">\n";
      if (r->skipped) f << "      <skipped message=\"" << xml_escape(r->message) << "\"/>\n";
      else if (r->error) f << "      <error message=\"" << xml_escape(r->message) << "\">" << xml_escape(r->details) << "</error>\n";
      else f << "      <failure message=\"" << xml_escape(r->message) << "\">" << xml_escape(r->details) << "</failure>\n";
      f << "    </testcase>\n";
    }
    f << "  </testsuite>\n";
  }
  f << "</testsuites>\n";
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
  }
  j["summary"] = {{"passed", passed}, {"failed", failed}, {"errors", errors}, {"skipped", skipped}};
  open_or_throw(path) << j.dump(2) << "\n";
}

}  // namespace pmqa::cli
