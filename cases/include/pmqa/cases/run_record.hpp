// A pmqa-run's record of its --out folder, OUT/pmqa-run.json (schema "pmqa-run-record/1"): the run
// (run_id, producer, op, convention, the settings it ran with), every case it set out to run with its
// outcome ("pending" until the case finishes, then ok, failed, unsupported or invalid, the message,
// and for a written result file its name and SHA-256), and whether the run is complete or why it
// stopped. pmqa-run writes it through this writer (python/src/pmqa/run/record.py binds it) after every
// case; pmqa verify judges a folder against it (a file the latest run did not write is stale and never
// passes silently); pmqa-run --resume finishes a run from it. One reader serves both, so a record one
// refuses the other refuses too.
//
// The reader is strict: every key the tools read must be there with its type, and every result name
// must be a plain file name inside the folder (result_name_problem), so a forged record cannot make
// pmqa verify judge, or pmqa-run --resume remove, a file outside the folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::cases {

inline constexpr const char* kRunRecordName = "pmqa-run.json";
inline constexpr const char* kRunLockName = "pmqa-run.lock";
inline constexpr const char* kRunRecordSchema = "pmqa-run-record/1";

// A record that cannot be read, is not one, or breaks a rule; the message names the file and the key.
class RunRecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RecordedCase {
  std::string file;              // the input case file (absolute path)
  std::string name;              // the case's name (its file name without .safetensors when unreadable)
  std::string suite;             // the case file's suite
  std::string result;            // the result file's name in the folder (the input's file name)
  std::string status = "pending";  // pending, then ok, failed, unsupported or invalid; not-written: the
                                   // system refused its file (a full disk): --resume runs it again
  std::string message;
  bool written = false;          // the run wrote `result`, with this sha256
  std::string sha256;
  double seconds = 0;
  std::string shape, limit, bench_ms, floor_ratio, kernel_path;
  std::uint64_t work = 0;        // the case's shard_work (model/shard.hpp); 0: unknown
  std::string device;            // --devices: the device whose worker ran it

  bool finished() const noexcept;
};

struct RunRecord {
  std::filesystem::path folder;  // where it lives (not stored in it)
  std::string run_id, producer, op, convention;
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();  // the run's options, in their order
  std::vector<RecordedCase> cases;
  std::string started, updated;
  bool complete = false;
  std::string stopped;               // why the run stopped before its end ("" while running, or complete)
  std::vector<std::string> resumed;  // when --resume went on with it
  std::string shard;                 // --shard K/N ("" for all)
  std::int64_t shard_of = 0;         // --shard: how many cases the whole split was over
  std::int64_t pid = 0;              // the process that last wrote it, and its host
  std::string host;
  bool still_running = false;        // read_run_record: a pmqa-run holds the folder's lock now (not stored)

  std::filesystem::path path() const { return folder / kRunRecordName; }
  // "run R (producer P)": how messages name the run.
  std::string describe() const;
};

// Why `name` cannot be a result file's name in a folder ("" when it can): it must be a plain name,
// not empty, not "." or "..", without '/', and printable (printable.hpp: no control character, C0,
// DEL or C1, and valid UTF-8).
std::string result_name_problem(std::string_view name);

// The record in `text` (read from `where`, which messages name). Strict (header comment).
RunRecord parse_run_record(std::string_view text, const std::filesystem::path& where);

// The folder's record; nullopt when it has none. One that cannot be read, is not a regular file or
// breaks a rule throws RunRecordError saying why (pmqa verify reports it as invalid input).
std::optional<RunRecord> read_run_record(const std::filesystem::path& folder);
// The same, a missing record being a RunRecordError too (pmqa-run --resume, and a new run's look at
// what the folder held).
RunRecord load_run_record(const std::filesystem::path& folder);

// The record as JSON text, byte for byte what pmqa-run's Python writer wrote before this writer
// served it (json.dumps(indent=1, ensure_ascii=True) and a newline): keys in their order, ASCII only.
// A result name that breaks the rule, or a non-finite number in the settings, is a RunRecordError.
std::string run_record_json(const RunRecord& record);

// Writes record.path() atomically (atomic_file.hpp), recording this process (pid, host) as its
// writer; std::system_error carrying errno when the folder takes no more writes.
void write_run_record(RunRecord record);

}  // namespace pmqa::cases
