// The gauntlet's pieces: the registry covers every class, the sandboxed executor runs unmutated
// kernels exactly like the host executor (so a detection is the mutant's doing), the ordinary
// checks pass unmutated pmqa, and the table / JSON say what happened.
#include <sys/mman.h>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/fixtures/suites.hpp"
#include "pmqa/checks/property.hpp"
#include "pmqa/gauntlet/gauntlet.hpp"
#include "pmqa/gauntlet/sandbox.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa::gauntlet {
namespace {

TEST(Registry, EveryBugClassOfSpecSection6HasAMutant) {
  std::set<int> classes;
  std::set<std::string> names;
  for (const auto& m : mutants()) {
    classes.insert(m.bug_class);
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate mutant " << m.name;
    EXPECT_FALSE(m.bug.empty()) << m.name;
    EXPECT_FALSE(m.planted.empty()) << m.name;
    EXPECT_FALSE(m.seen_in.empty()) << m.name;
    switch (m.kind) {
      case MutantKind::kernel: EXPECT_TRUE(m.kernel) << m.name; break;
      case MutantKind::dispatch: EXPECT_TRUE(m.policy) << m.name; break;
      case MutantKind::checker: EXPECT_TRUE(m.checker) << m.name; break;
      case MutantKind::ci: EXPECT_FALSE(m.ci.device_arch.empty()) << m.name; break;
    }
    EXPECT_EQ(find_mutant(m.name), &m);
  }
  for (int c = 1; c <= 11; ++c) EXPECT_TRUE(classes.count(c)) << "no mutant for class " << c;
  EXPECT_EQ(find_mutant("no-such-mutant"), nullptr);
}

TEST(Sandbox, AccessesOutsideABufferLandInMappedSlack) {
  SandboxBackend be({.warp_size = 64});
  auto* p = static_cast<float*>(be.allocate(1024));
  p[0] = 1.0f;
  p[255] = 2.0f;
  // What a wrapped offset or a -1 table entry reaches: mapped zero pages, harmless to write.
  EXPECT_EQ(p[-1000], 0.0f);
  EXPECT_EQ(p[(1 << 20) / 4], 0.0f);
  p[-1000] = 3.0f;
  EXPECT_EQ(p[-1000], 3.0f);
  be.release(p);
  be.release(nullptr);  // unknown pointers are ignored
}

KernelFactory faithful_in_sandbox() { return make_sandboxed_executor; }

// The executor mutants run on, with production Hooks: the quick suite passes and every output is
// bit-identical to the host executor's, so whatever a mutant changes is the mutant's doing.
TEST(Sandbox, UnmutatedKernelsMatchTheHostExecutorBitForBit) {
  for (const auto& f : checks::quick_suite(faithful_in_sandbox())) EXPECT_FALSE(f.caught) << f.config << ": " << f.evidence;
  EXPECT_FALSE(checks::relaunch(faithful_in_sandbox()).caught);
  for (const checks::KernelConfig& k : checks::quick_suite_configs()) {
    const auto sandbox = faithful_in_sandbox()(k.executor_options());
    const auto host = kernels::make_host_executor(k.executor_options());
    for (const auto& sc : fixtures::suite("quick")) {
      if (sc.large) continue;
      const Case c = fixtures::make_case(sc.spec);
      const auto a = sandbox->run(k.path(), c).out.storage();
      const auto b = host->run(k.path(), c).out.storage();
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << sc.name << " " << checks::config_name(k);
    }
  }
}

// Every mutant meets every kernel: the gauntlet's kernel checks (the same run_baseline runs on
// unmutated pmqa) run each kernel of the kernel table, each configuration its own kernel.
TEST(Checks, TheGauntletsKernelChecksRunEveryKernel) {
  GauntletOptions o;
  o.property_cases = 5;
  o.gigabyte_checks = false;
  std::set<std::string> ran;
  for (const Finding& f : run_baseline(o)) {
    ran.insert(f.kernels.begin(), f.kernels.end());
    if (f.first_choice)
      EXPECT_TRUE(std::find(f.kernels.begin(), f.kernels.end(), std::string(to_string(*f.first_choice))) != f.kernels.end())
          << f.check << " [" << f.config << "] never ran " << to_string(*f.first_choice);
  }
  for (const KernelId id : kAllKernels) EXPECT_TRUE(ran.contains(std::string(to_string(id)))) << "the gauntlet never ran " << to_string(id);
}

TEST(Checks, UnmutatedPmqaPassesTheNonKernelChecks) {
  const Finding matrix = checks::arch_matrix(dispatch::default_policy());
  EXPECT_FALSE(matrix.caught) << matrix.evidence;
  EXPECT_GT(matrix.cases_run, 100);
  const Finding corpus = checks::planted_corpus(checks::pmqa_checker());
  EXPECT_FALSE(corpus.caught) << corpus.evidence;
  EXPECT_EQ(corpus.cases_run, 12);
  const Finding honest = checks::device_arch(CiJob{"gfx950", Path::fused, "gfx950:sramecc+:xnack-"});
  EXPECT_FALSE(honest.caught) << honest.evidence;
}

TEST(Checks, ACheckerThatFailsEverythingIsAlsoCaught) {
  // A correct output must pass: a checker that rejects everything is as useless as one that warns.
  const Finding f = checks::planted_corpus(
      [](const Case&, const Reference&, const OutputBuffer&, const CompareOptions&) { return Verdict{false, "no", std::nullopt}; });
  EXPECT_TRUE(f.caught);
  EXPECT_EQ(f.first_detection, 1);
  EXPECT_NE(f.evidence.find("correct output"), std::string::npos) << f.evidence;
}

TEST(Checks, PropertyCountsCasesToTheFirstFailureReproducibly) {
  checks::PropertyOptions o;
  o.cases = 20;
  o.configs = {checks::KernelConfig{KernelId::fused_scalar, 64, 0x5EED64}};
  const auto pass = checks::kernel_property(checks::host_factory(), o);
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_FALSE(pass[0].caught) << pass[0].evidence;
  EXPECT_EQ(pass[0].cases_run, 20);
  const Mutant* m = find_mutant("fnuz-decoded-as-fn");
  ASSERT_NE(m, nullptr);
  const auto a = checks::kernel_property(m->kernel, o);
  const auto b = checks::kernel_property(m->kernel, o);
  ASSERT_TRUE(a[0].caught);
  EXPECT_EQ(a[0].first_detection, b[0].first_detection);  // fixed seed: the count is a fact, not luck
  EXPECT_EQ(a[0].cases_run, a[0].first_detection);
  EXPECT_NE(a[0].evidence.find("fp8=e4m3fnuz"), std::string::npos) << a[0].evidence;
}

TEST(Report, TableAndJsonSayWhatCaughtWhatAndWhatSurvived) {
  Mutant caught_m;
  caught_m.bug_class = 6;
  caught_m.name = "planted";
  Mutant survivor_m;
  survivor_m.bug_class = 5;
  survivor_m.name = "survivor";
  MutantResult caught{&caught_m, {}, 0.1};
  Finding f;
  f.check = "quick suite";
  f.config = "host-w64 fused";
  f.caught = true;
  f.first_detection = 1;
  f.cases_run = 1;
  f.unit = "suite cases";
  caught.findings.push_back(f);
  f.check = "relaunch determinism";
  f.config = "";
  caught.findings.push_back(f);
  MutantResult survived{&survivor_m, {}, 0.1};
  Finding proposed = f;
  proposed.ordinary = false;
  proposed.check = "output rows past 2^31 bytes (host)";
  proposed.unit = "large cases";
  survived.findings.push_back(proposed);
  EXPECT_FALSE(caught.survived());
  EXPECT_TRUE(survived.survived());  // a proposed check does not count

  const std::string table = table_text({caught, survived});
  EXPECT_NE(table.find("class"), std::string::npos);
  EXPECT_NE(table.find("quick suite [host-w64 fused]"), std::string::npos) << table;
  EXPECT_NE(table.find("1 suite case "), std::string::npos) << table;
  EXPECT_NE(table.find("relaunch determinism (1 suite case)"), std::string::npos) << table;
  EXPECT_NE(table.find("SURVIVED"), std::string::npos) << table;
  EXPECT_NE(table.find("(proposed check output rows past 2^31 bytes (host): 1 large case)"), std::string::npos) << table;

  const auto j = to_json({caught, survived}, {}, GauntletOptions{});
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_EQ(j["survivors"], nlohmann::json::array({"survivor"}));
  EXPECT_EQ(j["mutants"][0]["caught_by"], "quick suite [host-w64 fused]");
  EXPECT_EQ(j["mutants"][0]["cases_to_first_detection"], 1);
  EXPECT_TRUE(j["mutants"][1]["caught_by"].is_null());
}

}  // namespace
}  // namespace pmqa::gauntlet
