// The gauntlet runs pmqa's ordinary checks themselves (pmqa::checks), not copies of them: weaken
// one, and the mutants only it would catch survive. Here the kernel checks' judge (compare(), the
// one the unit tests and pmqa check use) is replaced by one that passes every output: the
// deterministic kernel mutants then survive, while with pmqa's judge they are caught. A racing
// mutant is still caught, by the checks that compare launches rather than judge values.
#include <string>

#include <gtest/gtest.h>

#include "pmqa/gauntlet/gauntlet.hpp"

namespace pmqa::gauntlet {
namespace {

Verdict pass_everything(const Case&, const Reference&, const OutputBuffer&, const CompareOptions&) {
  return Verdict{true, "", std::nullopt};
}

GauntletOptions cheap() {
  GauntletOptions o;
  o.property_cases = 10;
  o.gigabyte_checks = false;
  return o;
}

std::string caught_by(const MutantResult& r) {
  const Finding* f = r.first_catch();
  return f ? f->check + " [" + f->config + "]" : "nothing";
}

TEST(WeakenedOrdinaryCheck, AJudgeThatPassesEverythingLetsKernelMutantsSurvive) {
  GauntletOptions weak = cheap();
  weak.judge = pass_everything;
  for (const std::string name : {"only-token-0", "q-decoded-as-fnuz", "fnuz-decoded-as-fn"}) {
    const Mutant* m = find_mutant(name);
    ASSERT_NE(m, nullptr) << name;
    const MutantResult real = run_mutant(*m, cheap());
    EXPECT_FALSE(real.survived()) << name << " survived the real checks";
    const MutantResult weakened = run_mutant(*m, weak);
    EXPECT_TRUE(weakened.survived()) << name << " was still caught by " << caught_by(weakened)
                                     << ": the gauntlet does not run the checks it was given";
    std::printf("%s: caught by %s with pmqa's judge; %s with a judge that passes everything\n", name.c_str(),
                caught_by(real).c_str(), weakened.survived() ? "SURVIVES" : "caught");
  }
}

TEST(WeakenedOrdinaryCheck, ARaceIsStillCaughtByTheLaunchComparison) {
  GauntletOptions weak = cheap();
  weak.judge = pass_everything;
  const Mutant* m = find_mutant("missing-barrier");
  ASSERT_NE(m, nullptr);
  const MutantResult r = run_mutant(*m, weak);
  ASSERT_FALSE(r.survived()) << "missing-barrier survived once values were not judged";
  const std::string by = r.first_catch()->check;
  EXPECT_TRUE(by == "relaunch determinism" || by == "kernel-vs-reference property") << by;
  std::printf("missing-barrier with a judge that passes everything: caught by %s\n", caught_by(r).c_str());
}

}  // namespace
}  // namespace pmqa::gauntlet
