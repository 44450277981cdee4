// Judging one output: pmqa's comparison (compare() against the fp64 oracle) or a Checker passed in
// its place. judge_case is the one per-case step of pmqa check's table, of the quick suite and of
// the gauntlet's kernel checks.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "pmqa/checks/subject.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa::checks {

// A comparison's verdict on one output. pmqa's carries compare()'s report.
struct Verdict {
  bool pass = false;
  std::string text;
  std::optional<Report> report;
};

// Judges an output against the oracle under the given options (their Judging: contract, tolerance, NaN rule).
using Checker = std::function<Verdict(const Case&, const Reference&, const OutputBuffer&, const CompareOptions&)>;
// compare(c, ref, out, options).passed(): what every suite and pmqa check use.
Checker pmqa_checker();

struct JudgeOptions {
  std::optional<Tolerance> tolerance;  // judge under this profile instead of the subject's own (its contract and NaN rule stay)
  Checker checker;                     // empty: pmqa_checker()
};

struct CaseJudgement {
  SubjectOutput produced;
  Verdict verdict;
  double seconds = 0;  // the subject's run and the judging
};

// Runs the subject on the case and judges its output against the oracle (fp64 reference of the
// case). Whatever the subject throws propagates.
CaseJudgement judge_case(const Subject& subject, const Case& c, const Reference& oracle, const JudgeOptions& options = {});

}  // namespace pmqa::checks
