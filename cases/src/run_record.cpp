#include "pmqa/cases/run_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <iterator>

#include "pmqa/cases/atomic_file.hpp"
#include "pmqa/cases/printable.hpp"
#include "pmqa/cases/run_lock.hpp"
#include "python_json.hpp"

namespace pmqa::cases {
namespace fs = std::filesystem;
namespace {

using nlohmann::ordered_json;

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw RunRecordError(where_ + ": " + problem); }

  std::string text(const ordered_json& j, const char* key) const {
    if (!j.contains(key) || !j.at(key).is_string()) fail(std::string("\"") + key + "\" is missing or not a string");
    return j.at(key).get<std::string>();
  }
  bool flag(const ordered_json& j, const char* key) const {
    if (!j.contains(key) || !j.at(key).is_boolean()) fail(std::string("\"") + key + "\" is missing or not a boolean");
    return j.at(key).get<bool>();
  }
  // Keys a record of an earlier pmqa-run may lack: absent reads as `fallback`, present must have the type.
  std::string text_or(const ordered_json& j, const char* key, std::string fallback = "") const {
    return j.contains(key) ? text(j, key) : fallback;
  }
  std::uint64_t count_or(const ordered_json& j, const char* key) const {
    if (!j.contains(key)) return 0;
    if (!j.at(key).is_number_unsigned() && !(j.at(key).is_number_integer() && j.at(key).get<std::int64_t>() >= 0))
      fail(std::string("\"") + key + "\" is not a whole number >= 0");
    return j.at(key).get<std::uint64_t>();
  }
  double seconds_or(const ordered_json& j, const char* key) const {
    if (!j.contains(key)) return 0;
    if (!j.at(key).is_number()) fail(std::string("\"") + key + "\" is not a number");
    return j.at(key).get<double>();
  }

 private:
  std::string where_;
};

RecordedCase read_case(const ordered_json& c, const Reader& r) {
  if (!c.is_object()) r.fail("a case is not an object");
  RecordedCase rc;
  rc.file = r.text(c, "file");
  rc.name = r.text(c, "name");
  rc.suite = r.text(c, "suite");
  rc.result = r.text(c, "result");
  rc.status = r.text(c, "status");
  rc.message = r.text(c, "message");
  rc.written = r.flag(c, "written");
  rc.sha256 = r.text(c, "sha256");
  // What the run reported beside the outcome; records of earlier runs may lack a key.
  rc.seconds = r.seconds_or(c, "seconds");
  rc.shape = r.text_or(c, "shape");
  rc.limit = r.text_or(c, "limit");
  rc.bench_ms = r.text_or(c, "bench_ms");
  rc.floor_ratio = r.text_or(c, "floor_ratio");
  rc.kernel_path = r.text_or(c, "kernel_path");
  rc.work = r.count_or(c, "work");  // since --shard
  rc.device = r.text_or(c, "device");  // since --devices
  static constexpr std::array<std::string_view, 6> kStatuses{"pending", "ok", "failed", "unsupported", "invalid",
                                                             "not-written"};
  if (std::find(kStatuses.begin(), kStatuses.end(), rc.status) == kStatuses.end())
    r.fail("a case's status \"" + printable(rc.status, false) +
           "\" is not pending, ok, failed, unsupported, invalid or not-written");
  if (const std::string why = result_name_problem(rc.result); !why.empty())
    r.fail("a case's result \"" + printable(rc.result, false) + "\" is not a file name in the folder: " + why);
  return rc;
}

ordered_json case_json(const RecordedCase& c) {
  // The keys in the order pmqa-run's RecordedCase declares them (dataclasses.asdict).
  return ordered_json{{"file", c.file},          {"name", c.name},         {"suite", c.suite},
                      {"result", c.result},      {"status", c.status},     {"message", c.message},
                      {"written", c.written},    {"sha256", c.sha256},     {"seconds", c.seconds},
                      {"shape", c.shape},        {"limit", c.limit},       {"bench_ms", c.bench_ms},
                      {"floor_ratio", c.floor_ratio}, {"kernel_path", c.kernel_path}, {"work", c.work},
                      {"device", c.device}};
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

bool RecordedCase::finished() const noexcept {
  return status == "ok" || status == "failed" || status == "unsupported" || status == "invalid";
}

std::string RunRecord::describe() const { return "run " + run_id + " (producer " + producer + ")"; }

std::string result_name_problem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name == "." || name == "..") return "it names a folder (\".\" or \"..\"), not a file in it";
  if (name.find('/') != std::string_view::npos) return "it holds a '/' (a result is a plain name inside the folder)";
  // The terminal's and XML's rule (printable.hpp): no control character (C0, DEL, C1), UTF-8 only.
  if (printable(name, /*keep_newlines=*/false) != name) return "it holds a control character or bytes that are not UTF-8";
  return "";
}

RunRecord parse_run_record(std::string_view text, const fs::path& where) {
  const Reader r(where.string());
  const ordered_json doc = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) r.fail("the run record is not a JSON object");
  if (!doc.contains("schema") || doc.at("schema") != kRunRecordSchema)
    r.fail(std::string("not a run record of schema ") + kRunRecordSchema);
  RunRecord rec;
  rec.folder = where.parent_path();
  rec.run_id = r.text(doc, "run_id");
  rec.producer = r.text(doc, "producer");
  rec.op = r.text(doc, "op");
  rec.convention = r.text(doc, "convention");
  rec.started = r.text(doc, "started");
  rec.complete = r.flag(doc, "complete");
  rec.stopped = r.text(doc, "stopped");
  if (!doc.contains("settings") || !doc.at("settings").is_object()) r.fail("\"settings\" is missing or not an object");
  rec.settings = doc.at("settings");
  // Keys later pmqa-runs added (--resume, --shard), and the writer's own: absent in earlier records.
  rec.updated = r.text_or(doc, "updated");
  if (doc.contains("resumed")) {
    if (!doc.at("resumed").is_array()) r.fail("\"resumed\" is not a list");
    for (const auto& t : doc.at("resumed")) {
      if (!t.is_string()) r.fail("\"resumed\" holds something other than a time");
      rec.resumed.push_back(t.get<std::string>());
    }
  }
  rec.shard = r.text_or(doc, "shard");
  rec.shard_of = static_cast<std::int64_t>(r.count_or(doc, "shard_of"));
  rec.pid = static_cast<std::int64_t>(r.count_or(doc, "pid"));
  rec.host = r.text_or(doc, "host");
  if (!doc.contains("cases") || !doc.at("cases").is_array()) r.fail("\"cases\" is not a list");
  for (const ordered_json& c : doc.at("cases")) rec.cases.push_back(read_case(c, r));
  return rec;
}

std::optional<RunRecord> read_run_record(const fs::path& folder) {
  const fs::path path = folder / kRunRecordName;
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) return std::nullopt;
  const std::string where = path.string();
  // Never opened unless regular: a FIFO planted under the record's name would block the reader.
  if (!fs::is_regular_file(fs::status(path, ec))) throw RunRecordError(where + ": the run record is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunRecordError(where + ": cannot read the run record");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw RunRecordError(where + ": cannot read the run record");
  RunRecord rec = parse_run_record(text, path);
  rec.folder = folder;
  rec.still_running = !rec.complete && run_lock_held(folder);
  return rec;
}

RunRecord load_run_record(const fs::path& folder) {
  auto rec = read_run_record(folder);
  if (!rec)
    throw RunRecordError((folder / kRunRecordName).string() + ": no run record (was --out the folder of a pmqa-run?)");
  return std::move(*rec);
}

std::string run_record_json(const RunRecord& rec) {
  ordered_json cases = ordered_json::array();
  for (const auto& c : rec.cases) {
    if (const std::string why = result_name_problem(c.result); !why.empty())
      throw RunRecordError(rec.path().string() + ": case " + printable(c.name, false) + ": result \"" +
                           printable(c.result, false) + "\" is not a file name in the folder: " + why);
    cases.push_back(case_json(c));
  }
  // The keys in the order pmqa-run's Python writer wrote them.
  const ordered_json doc{{"schema", kRunRecordSchema}, {"run_id", rec.run_id},     {"producer", rec.producer},
                         {"op", rec.op},               {"convention", rec.convention}, {"started", rec.started},
                         {"updated", rec.updated},     {"resumed", rec.resumed},   {"complete", rec.complete},
                         {"stopped", rec.stopped},     {"shard", rec.shard},       {"shard_of", rec.shard_of},
                         {"pid", rec.pid},             {"host", rec.host},         {"settings", rec.settings},
                         {"cases", std::move(cases)}};
  try {
    return python_json_dump(doc) + "\n";
  } catch (const std::invalid_argument& e) {
    throw RunRecordError(rec.path().string() + ": " + e.what());
  }
}

void write_run_record(RunRecord record) {
  record.pid = ::getpid();
  record.host = host_name();
  write_file_atomically(record.path(), run_record_json(record));
}

}  // namespace pmqa::cases
