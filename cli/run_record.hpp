// What pmqa verify reads of a pmqa-run's record (OUT/pmqa-run.json, written by python/src/pmqa/run/
// record.py): which result files the latest run into a folder wrote, with their SHA-256, what became
// of every case it set out to run, and whether the run finished. A folder's files are judged
// against it: a file the latest run did not write is stale and never passes silently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pmqa::cli {

inline constexpr const char* kRunRecordName = "pmqa-run.json";
inline constexpr const char* kRunLockName = "pmqa-run.lock";

struct RecordedCase {
  std::string name, suite;  // the case's
  std::string result;       // the result file's name in the folder
  std::string status;       // pending, ok, failed, unsupported, invalid
  std::string message;
  bool written = false;     // the run wrote `result`, with this sha256
  std::string sha256;
  std::uint64_t work = 0;   // the case's shard_work (model/shard.hpp), 0 when the record does not say
};

struct RunRecordView {
  std::filesystem::path path;
  std::string run_id, producer, stopped;
  bool complete = false;
  bool still_running = false;  // a pmqa-run holds the folder's lock now
  std::vector<RecordedCase> cases;

  // "run R (producer P)": how messages name the run.
  std::string describe() const;
};

// The folder's run record; nullopt when it has none. A record that cannot be read or is not one
// throws std::runtime_error saying why (pmqa verify reports it as invalid input).
std::optional<RunRecordView> read_run_record(const std::filesystem::path& folder);

}  // namespace pmqa::cli
