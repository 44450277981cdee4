#include "pmqa/checks/judge.hpp"

#include "support.hpp"

namespace pmqa::checks {

Checker pmqa_checker() {
  return [](const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& options) {
    Report rep = compare(c, ref, out, options);
    Verdict v{rep.passed(), rep.passed() ? std::string() : rep.to_text(), std::nullopt};
    v.report = std::move(rep);
    return v;
  };
}

CaseJudgement judge_case(const Subject& subject, const Case& c, const Reference& oracle, const JudgeOptions& options) {
  const auto t0 = detail::Clock::now();
  CaseJudgement j;
  j.produced = subject.run(c);
  // The subject's own Judging (its NaN rule included); the gauntlet may force the profile only.
  CompareOptions compare_options{.judging = j.produced.judging};
  if (options.tolerance) compare_options.judging.tolerance = *options.tolerance;
  static const Checker pmqa = pmqa_checker();
  j.verdict = (options.checker ? options.checker : pmqa)(c, oracle, j.produced.out, compare_options);
  j.seconds = detail::seconds_since(t0);
  return j;
}

}  // namespace pmqa::checks
