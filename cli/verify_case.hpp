// Verifies one case file: reads it, computes the fp64 oracle, compares the file's logits under its
// contract and tolerance (or the ones the command line forces), re-applies the gates the run that
// wrote it recorded (pmqa/cases/run_gates.hpp: a file whose run failed a gate fails here too), and
// says so in one line.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "pmqa/model/judging.hpp"
#include "pmqa/cases/results.hpp"

namespace pmqa::cli {

using cases::Result;

struct VerifyOptions {
  // --contract, --tolerance, --nan, parsed once by the command; each absent one comes from the
  // file's own contract, its "tolerance" / "nan" metadata, else fp32 / propagate.
  JudgingOverrides judging;
  std::optional<std::filesystem::path> map;  // --map: write this file's error map here (SVG)
  std::optional<std::filesystem::path> cases;  // --cases: where logits-only result files find their inputs
  int reference_threads = 0;  // the fp64 oracle's threads (0: every core)
};

struct Verdict {
  int status = 0;      // kExitPass, kExitMismatch or kExitInvalid
  std::string line;    // PASS/FAIL/ERROR, name, shape, worst error/bound, calc_diff, kernel time, failed gates
  std::string report;  // Report::to_text() when the comparison failed, the failed gates' lines; else empty
  Result result;       // for --junit / --json
  bool judged = false;        // a result file was read and judged (the summary's "written")
  bool judge_failed = false;  // its numbers failed the oracle's comparison
  bool gate_failed = false;   // a gate its run recorded failed (a file can fail both)
};

Verdict verify_case_file(const std::filesystem::path& file, const VerifyOptions& options);

// The verdict for an input that could not even be opened as a file (message: "<file>: <field>: <problem>"),
// or that its folder's run record says is not the run's (stale, changed, missing, not run). suite and
// name are JUnit's classname and name when known ("pmqa" and the file's stem otherwise).
Verdict invalid_input(const std::filesystem::path& file, const std::string& message, const std::string& suite = "",
                      const std::string& name = "");

// A case the folder's run record says failed in pmqa-run without a result file (exit 1), and one
// it says was unsupported (skipped, exit 0).
Verdict recorded_failure(const std::filesystem::path& file, const std::string& message, const std::string& suite,
                         const std::string& name);
Verdict recorded_skip(const std::filesystem::path& file, const std::string& message, const std::string& suite,
                      const std::string& name);

// The argument as a POSIX shell word, so a printed reproduce command can be pasted as it is.
std::string shell_quote(const std::string& word);

}  // namespace pmqa::cli
