// One test per planted mutant and tolerance profile: pmqa's ordinary checks, comparing under that
// profile, must report it (a user may judge with any of them, and the loosest must still catch
// every bug class). A mutant that survives is a failing test, and means a check is missing (add
// the check, not a special case). The number of cases each check needed is printed and recorded
// (RecordProperty: JUnit's <property>).
// The mutants only a gigabyte case shows run in gauntlet_slow_test.cpp.
#include <algorithm>
#include <cstdio>

#include <gtest/gtest.h>

#include "pmqa/gauntlet/gauntlet.hpp"

namespace pmqa::gauntlet {
namespace {

std::string test_name(const std::string& mutant) {
  std::string s = mutant;
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

std::vector<std::string> small_mutants() {
  std::vector<std::string> names;
  for (const auto& m : mutants())
    if (!m.needs_gigabytes) names.push_back(m.name);
  return names;
}

std::string findings_text(const MutantResult& r) {
  std::string out;
  for (const auto& f : r.findings) {
    out += (f.caught ? "  CAUGHT " : "  passed ") + f.check + (f.config.empty() ? "" : " [" + f.config + "]") +
           (f.caught_on.empty() ? "" : " (failed on " + f.caught_on + ")") + ": " +
           std::to_string(f.cases_run) + " " + f.unit + " run";
    if (f.caught) out += ", first failure at " + std::to_string(f.first_detection) + "\n    " + f.evidence;
    out += "\n";
  }
  return out;
}

class Mutants : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Mutants, OrdinaryChecksReportIt) {
  const auto& [name, profile] = GetParam();
  const Mutant* m = find_mutant(name);
  ASSERT_NE(m, nullptr);
  GauntletOptions o;
  o.tolerance = Tolerance::named(profile);
  const MutantResult r = run_mutant(*m, o);
  const Finding* f = r.first_catch();
  ASSERT_FALSE(r.survived()) << m->name << " (class " << m->bug_class << ": " << m->bug
                             << ") SURVIVED every ordinary check under " << profile << ": a check is missing.\n"
                             << findings_text(r);
  ASSERT_NE(f, nullptr);
  std::printf("class %d %s under %s: caught by %s%s after %lld %s (%.2f s)\n", m->bug_class, m->name.c_str(),
              profile.c_str(), f->check.c_str(),
              f->config.empty() ? "" : (" [" + f->config + "]").c_str(), static_cast<long long>(f->first_detection),
              f->unit.c_str(), r.seconds);
  // fused-mfma, the kernel gfx942 and gfx950 take, must fail a case it ran under every kernel mutant
  // planted in its code: a bug class the checks catch only on the portable kernels is not caught
  // where AMD's fused path runs.
  if (m->kind == MutantKind::kernel) {
    const auto& skip = m->not_planted_in;
    if (std::find(skip.begin(), skip.end(), KernelId::fused_mfma) == skip.end())
      EXPECT_TRUE(cases_to_catch_on(r, KernelId::fused_mfma).has_value())
          << m->name << " under " << profile << ": no check failed a case fused-mfma ran\n" << findings_text(r);
    for (const KernelInfo& k : kKernelTable) {
      const auto n = cases_to_catch_on(r, k.id);
      RecordProperty("cases_on_" + std::string(k.family) + std::string(k.instruction.empty() ? "" : "_") +
                         std::string(k.instruction),
                     n ? std::to_string(*n) : "-");
    }
  }
  RecordProperty("caught_by", f->check + (f->config.empty() ? "" : " [" + f->config + "]"));
  RecordProperty("cases_to_first_detection", static_cast<int>(f->first_detection));
  RecordProperty("unit", f->unit);
  for (const auto& g : r.findings)
    if (g.caught && &g != f) {
      std::printf("  also %s%s: %lld %s\n", g.check.c_str(), g.config.empty() ? "" : (" [" + g.config + "]").c_str(),
                  static_cast<long long>(g.first_detection), g.unit.c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(Gauntlet, Mutants,
                         ::testing::Combine(::testing::ValuesIn(small_mutants()), ::testing::ValuesIn(Tolerance::names())),
                         [](const auto& p) {
                           return test_name(std::get<0>(p.param)) + "__" + test_name(std::get<1>(p.param));
                         });

// The same checks on unmutated pmqa raise nothing under any profile that is at least as loose as
// each kernel's own (the gigabyte check and 10,000 generated cases are in gauntlet_slow_test.cpp).
class Baseline : public ::testing::TestWithParam<std::string> {};

TEST_P(Baseline, OrdinaryChecksPassUnmutatedPmqa) {
  GauntletOptions o;
  o.gigabyte_checks = false;
  o.tolerance = Tolerance::named(GetParam());
  for (const auto& f : run_baseline(o))
    EXPECT_FALSE(f.caught) << "false alarm under " << GetParam() << ": " << f.check << " [" << f.config << "]\n"
                           << f.evidence;
}

INSTANTIATE_TEST_SUITE_P(Gauntlet, Baseline, ::testing::ValuesIn(Tolerance::names()),
                         [](const auto& p) { return test_name(p.param); });

}  // namespace
}  // namespace pmqa::gauntlet
