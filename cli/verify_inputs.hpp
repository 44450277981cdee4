// pmqa verify's command-line inputs turned into the list of things to report: a file stands for
// itself, a directory for its *.safetensors entries in sorted order (so a run is reproducible and
// CI shards see the same order on every machine).
//
// An entry that is not a regular file (a FIFO, a socket, a dangling link) is reported, never
// skipped and never opened. A folder holding a pmqa-run record (pmqa-run.json) is judged as that
// run's output: its files must be the ones the run wrote (same SHA-256), any other *.safetensors
// there is stale; every case the run set out to run is accounted for (its file, or what the run
// recorded: the op failed, the case was refused, unsupported, or never run because the run stopped).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pmqa::cli {

struct VerifyInput {
  enum class Kind {
    judge,    // read the file and judge its logits
    invalid,  // not judged: `error` says why (exit 2)
    failed,   // not judged: the run recorded a failure and wrote no file (exit 1)
    skipped,  // not judged: the run recorded the case as unsupported
  };
  std::filesystem::path path;
  Kind kind = Kind::judge;
  std::string error{};          // why, for every kind but judge
  std::string suite{}, name{};  // JUnit's classname and name when no file is read (from the run record)
  // --shard: the case's name and work as the folder's run record states them ("" and 0: read from the file).
  std::string record_name{};
  std::uint64_t record_work = 0;
};

struct VerifyInputs {
  std::vector<VerifyInput> inputs;
  std::vector<std::string> notes;  // said before the verdicts (an incomplete or running run)
};

VerifyInputs expand_verify_inputs(const std::vector<std::string>& args);

}  // namespace pmqa::cli
