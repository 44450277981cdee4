#include "verify_inputs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "pmqa/cases/logits_file.hpp"
#include "pmqa/cases/printable.hpp"
#include "pmqa/cases/run_record.hpp"

namespace pmqa::cli {
namespace fs = std::filesystem;
namespace {

using cases::printable;
using cases::RecordedCase;
using cases::RunRecord;

// "" for a regular file (links followed); otherwise what it is, in words.
std::string not_regular(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    if (errno == ELOOP) return "is a symbolic link loop";  // ln -s a b; ln -s b a
    struct stat link {};
    if (::lstat(p.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return "is a symbolic link to nothing (it dangles)";
    return "does not exist";
  }
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a case file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file (never opened: it would block)";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

std::string shown(const fs::path& p) { return printable(p.string(), false); }

VerifyInput invalid(fs::path p, std::string why, std::string suite = "", std::string name = "") {
  VerifyInput in;
  in.path = std::move(p);
  in.kind = VerifyInput::Kind::invalid;
  in.error = std::move(why);
  in.suite = std::move(suite);
  in.name = std::move(name);
  return in;
}

// A file the folder's run record must account for: judged when the run wrote it as it is now.
VerifyInput attributed(const fs::path& file, const RunRecord& run) {
  const std::string name = file.filename().string();
  const auto it = std::find_if(run.cases.begin(), run.cases.end(), [&](const RecordedCase& c) { return c.result == name; });
  if (it == run.cases.end() || !it->written)
    return invalid(file, shown(file) + ": stale: the latest run into this folder, " + run.describe() + " (" +
                             shown(run.path()) + "), did not write it; it is left from an earlier run or another program");
  const std::string now = cases::sha256_file(file);
  VerifyInput in{.path = file};
  if (now != it->sha256)
    in = invalid(file, shown(file) + ": changed since " + run.describe() + " wrote it (sha256 " + it->sha256 +
                           ", now " + now + ")",
                 it->suite, it->name);
  in.record_name = it->name;
  in.record_work = it->work;
  return in;
}

// What the record says of a case whose file is not in the folder.
VerifyInput unaccounted(const fs::path& folder, const RecordedCase& c, const RunRecord& run) {
  VerifyInput in;
  in.path = folder / c.result;
  in.suite = c.suite;
  in.name = c.name;
  in.record_name = c.name;
  in.record_work = c.work;
  const std::string who = shown(in.path) + ": ";
  if (c.written) {
    in.kind = VerifyInput::Kind::invalid;
    in.error = who + "missing: " + run.describe() + " wrote it, and it is gone";
  } else if (c.status == "failed") {
    in.kind = VerifyInput::Kind::failed;
    in.error = who + "no result: the op failed in pmqa-run: " + printable(c.message);
  } else if (c.status == "unsupported") {
    in.kind = VerifyInput::Kind::skipped;
    in.error = "unsupported: " + printable(c.message, false);
  } else if (c.status == "invalid") {
    in.kind = VerifyInput::Kind::invalid;
    in.error = who + "pmqa-run refused the case: " + printable(c.message);
  } else if (c.status == "not-written") {
    // The system refused the result file (a full disk, a quota, a read-only file system): not the
    // op's failure; `pmqa-run --resume` runs the case again. The message names the cause and the path.
    in.kind = VerifyInput::Kind::invalid;
    in.error = who + (c.message.empty() ? "not written: " + run.describe() + " could not store it; `pmqa-run --resume "
                                                                               "--out " + shown(folder) + "` runs it again"
                                        : printable(c.message));
  } else {
    in.kind = VerifyInput::Kind::invalid;
    in.error = who + "not run: " + run.describe() + " " +
               (run.still_running ? std::string("is still running")
                : run.stopped.empty() ? std::string("was interrupted or killed before this case")
                                      : "stopped before this case: " + printable(run.stopped, false)) +
               "; `pmqa-run --resume --out " + shown(folder) + "` finishes it";
  }
  return in;
}

void expand_folder(const fs::path& p, const std::string& arg, VerifyInputs& out) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".safetensors") found.push_back(it->path());
  if (ec) {
    out.inputs.push_back(invalid(p, printable(arg, false) + ": directory: cannot list: " + ec.message()));
    return;
  }
  std::sort(found.begin(), found.end());
  std::optional<RunRecord> run;
  try {
    run = cases::read_run_record(p);
  } catch (const std::exception& e) {
    out.inputs.push_back(invalid(p / cases::kRunRecordName, printable(e.what(), false)));
  }
  // A directory with nothing to verify must not read as a pass (a CI job pointed at the wrong
  // folder would otherwise go green).
  if (found.empty() && !run) {
    out.inputs.push_back(invalid(p, printable(arg, false) + ": directory: holds no *.safetensors files"));
    return;
  }
  std::map<std::string, VerifyInput> by_name;  // sorted by file name: files and the record's cases together
  for (const auto& f : found) {
    const std::string why = not_regular(f);
    if (!why.empty()) by_name.emplace(f.filename().string(), invalid(f, shown(f) + ": file: " + why));
    else if (run) by_name.emplace(f.filename().string(), attributed(f, *run));
    else by_name.emplace(f.filename().string(), VerifyInput{.path = f});
  }
  if (run) {
    for (const auto& c : run->cases)
      if (!by_name.count(c.result)) by_name.emplace(c.result, unaccounted(p, c, *run));
    const auto pending = std::count_if(run->cases.begin(), run->cases.end(),
                                       [](const RecordedCase& c) { return c.status == "pending"; });
    const auto not_written = std::count_if(run->cases.begin(), run->cases.end(),
                                           [](const RecordedCase& c) { return c.status == "not-written"; });
    if (!run->complete)
      out.notes.push_back("pmqa verify: " + shown(p) + ": " + run->describe() + " is " +
                          (run->still_running ? "still running" : "incomplete") + ": " + std::to_string(pending) +
                          " of " + std::to_string(run->cases.size()) + " case(s) not run" +
                          (not_written ? ", " + std::to_string(not_written) + " not written" : "") +
                          (run->stopped.empty() ? "" : " (stopped: " + printable(run->stopped, false) + ")"));
  }
  if (by_name.empty()) {
    out.inputs.push_back(invalid(p, printable(arg, false) + ": directory: holds no *.safetensors files, and its run "
                                                            "record lists no case"));
    return;
  }
  for (auto& [name, in] : by_name) out.inputs.push_back(std::move(in));
}

}  // namespace

VerifyInputs expand_verify_inputs(const std::vector<std::string>& args) {
  VerifyInputs out;
  for (const auto& arg : args) {
    const fs::path p(arg);
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (fs::is_directory(status)) {
      expand_folder(p, arg, out);
      continue;
    }
    if (const std::string why = not_regular(p); !why.empty()) {
      out.inputs.push_back(invalid(p, printable(arg, false) + ": file: " + why));
      continue;
    }
    // A file named on its own is still judged against its folder's run record, if it has one.
    std::optional<RunRecord> run;
    try {
      run = cases::read_run_record(p.parent_path().empty() ? fs::path(".") : p.parent_path());
    } catch (const std::exception& e) {
      out.inputs.push_back(invalid(p, printable(arg, false) + ": " + printable(e.what(), false)));
      continue;
    }
    out.inputs.push_back(run ? attributed(p, *run) : VerifyInput{.path = p});
  }
  return out;
}

}  // namespace pmqa::cli
