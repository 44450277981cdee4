// The bug-class gauntlet (issue 6): for every class of spec §6 a planted mutant that reproduces a
// bug seen in the wild, run through pmqa's ordinary checks, the functions of pmqa::checks that the
// unit tests and pmqa check call (the kernel-vs-reference property, the quick suite, the relaunch
// check, the host run past 2^31 bytes, the arch matrix, the planted-defect corpus, the device-arch
// check). A mutant no ordinary check reports has survived: a check is missing.
//
//   for (const Mutant& m : mutants()) {
//     const MutantResult r = run_mutant(m, {});
//     if (r.survived()) ...;  // the gauntlet fails
//   }
//
// Kernel mutants are the real kernels run by the real run_path on the host executor with one Hooks
// function replaced (pmqa_kernels/common/faults.hpp); dispatch mutants are policies injected through
// pmqa::dispatch::Policy; checker mutants replace the comparison; the CI mutant is a job whose
// device is not the arch it claims.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pmqa/checks/checks.hpp"
#include "pmqa/dispatch/policy.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa::gauntlet {

// The subjects and outcomes of the ordinary checks (pmqa/checks).
using checks::Checker;
using checks::CiJob;
using checks::Finding;
using checks::KernelFactory;
using checks::Verdict;

enum class MutantKind : std::uint8_t {
  kernel,    // the kernels with one Hooks function replaced
  dispatch,  // a path-selection policy with a bug
  checker,   // a comparison that lies
  ci,        // a CI job on the wrong device
};
std::string_view to_string(MutantKind kind) noexcept;

struct Mutant {
  int bug_class = 0;        // spec §6
  std::string name;         // "only-token-0"
  MutantKind kind = MutantKind::kernel;
  std::string bug;          // what is wrong, in one sentence
  std::string seen_in;      // the bug in the wild it reproduces
  std::string planted;      // how it is injected
  KernelFactory kernel;                               // kind == kernel
  std::function<const dispatch::Policy&()> policy;    // kind == dispatch
  Checker checker;                                    // kind == checker
  CiJob ci;                                           // kind == ci
  bool needs_gigabytes = false;  // only a case past 2^31 bytes of output shows the bug
  // Kernels with no code the replaced function runs in (the bug cannot be planted there): every
  // other kernel the checks run must fail a case it ran (gauntlet_test.cpp).
  std::vector<KernelId> not_planted_in;
};

// Every planted mutant, by class. The names are unique.
const std::vector<Mutant>& mutants();
const Mutant* find_mutant(std::string_view name);  // nullptr when there is none

struct GauntletOptions {
  std::uint64_t seed = 0x6761756e746c6574;  // the property's RapidCheck seed (fixed: counts reproduce)
  int property_cases = 100;  // per executor and path, as the ordinary property (RapidCheck's default)
  bool gigabyte_checks = true;  // run the ~4.2 GiB host check where a mutant needs it
  // Every comparison of every check under this profile instead of the one it uses (each kernel's
  // own, fp32 for the planted corpus): a mutant must be caught whichever profile a user judges with.
  std::optional<Tolerance> tolerance;
  // The judge of every kernel check (empty: pmqa's compare()). Another one is how a test shows that
  // weakening an ordinary check lets mutants through.
  Checker judge;
};

struct MutantResult {
  const Mutant* mutant = nullptr;
  std::vector<Finding> findings;
  double seconds = 0;

  // The one check that can show it was switched off (--no-gigabytes): neither caught nor survived.
  bool not_run = false;
  bool survived() const noexcept;  // no ordinary check caught it (and it was run)
  // The ordinary check that caught it in the fewest cases (the earlier check on a tie), or nullptr.
  const Finding* first_catch() const noexcept;
};

MutantResult run_mutant(const Mutant& m, const GauntletOptions& options = {});

// The same checks on unmutated pmqa (host executor, default policy, compare(), an honest CI job):
// every finding must be a pass, or the checks raise false alarms.
std::vector<Finding> run_baseline(const GauntletOptions& options = {});

// The fewest cases to first detection among the checks whose first failing case `kernel` ran;
// nullopt when no check caught the mutant on a case that kernel ran.
std::optional<std::int64_t> cases_to_catch_on(const MutantResult& r, KernelId kernel);

// The table the README shows: class, mutant, the check that caught it, cases to first detection.
std::string table_text(const std::vector<MutantResult>& results);
// The kernel mutants by kernel (pmqa-gauntlet --by-kernel): class, mutant, then for each kernel of
// the kernel table the fewest cases a check needed to fail one that kernel ran ("-": none did).
std::string kernel_table_text(const std::vector<MutantResult>& results);
nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const MutantResult& r);
nlohmann::json to_json(const std::vector<MutantResult>& results, const std::vector<Finding>& baseline,
                       const GauntletOptions& options);

}  // namespace pmqa::gauntlet
