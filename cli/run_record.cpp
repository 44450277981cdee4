#include "run_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace pmqa::cli {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

constexpr const char* kSchema = "pmqa-run-record/1";

std::string text_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string())
    throw std::runtime_error(where + ": \"" + key + "\" is missing or not a string");
  return j.at(key).get<std::string>();
}

bool bool_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_boolean())
    throw std::runtime_error(where + ": \"" + key + "\" is missing or not a boolean");
  return j.at(key).get<bool>();
}

// Whether a process holds the folder's lock (a pmqa-run that is still going): asked with F_GETLK,
// which takes no lock, so a pmqa-run starting at this moment is never refused because of us.
bool lock_held(const fs::path& folder) {
  const int fd = ::open((folder / kRunLockName).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct flock query {};
  query.l_type = F_WRLCK;
  query.l_whence = SEEK_SET;
  const bool held = ::fcntl(fd, F_GETLK, &query) == 0 && query.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

}  // namespace

std::string RunRecordView::describe() const { return "run " + run_id + " (producer " + producer + ")"; }

std::optional<RunRecordView> read_run_record(const fs::path& folder) {
  RunRecordView r;
  r.path = folder / kRunRecordName;
  std::error_code ec;
  const auto status = fs::symlink_status(r.path, ec);
  if (ec || !fs::exists(status)) return std::nullopt;
  const std::string where = r.path.string();
  if (!fs::is_regular_file(fs::status(r.path, ec)))
    throw std::runtime_error(where + ": the run record is not a regular file");
  std::ifstream in(r.path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw std::runtime_error(where + ": cannot read the run record");
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) throw std::runtime_error(where + ": the run record is not a JSON object");
  if (!doc.contains("schema") || doc.at("schema") != kSchema)
    throw std::runtime_error(where + ": not a run record of schema " + kSchema);
  r.run_id = text_field(doc, "run_id", where);
  r.producer = text_field(doc, "producer", where);
  r.stopped = text_field(doc, "stopped", where);
  r.complete = bool_field(doc, "complete", where);
  if (!doc.contains("cases") || !doc.at("cases").is_array()) throw std::runtime_error(where + ": \"cases\" is not a list");
  for (const json& c : doc.at("cases")) {
    if (!c.is_object()) throw std::runtime_error(where + ": a case is not an object");
    RecordedCase rc;
    rc.name = text_field(c, "name", where);
    rc.suite = text_field(c, "suite", where);
    rc.result = text_field(c, "result", where);
    rc.status = text_field(c, "status", where);
    rc.message = text_field(c, "message", where);
    rc.written = bool_field(c, "written", where);
    rc.sha256 = text_field(c, "sha256", where);
    // "work" (pmqa-run since --shard): optional, so records of earlier runs still read.
    if (c.contains("work") && c.at("work").is_number_unsigned()) rc.work = c.at("work").get<std::uint64_t>();
    if (rc.result.empty() || rc.result.find('/') != std::string::npos)
      throw std::runtime_error(where + ": a case's result \"" + rc.result + "\" is not a file name");
    r.cases.push_back(std::move(rc));
  }
  r.still_running = !r.complete && lock_held(folder);
  return r;
}

}  // namespace pmqa::cli
