// The bug-class gauntlet (issue 6): for every class of spec §6 a planted mutant that reproduces a
// bug seen in the wild, run through pmqa's ordinary checks (the kernel-vs-reference property, the
// quick suite, the relaunch check, the arch matrix, the comparison's planted-defect corpus, the
// device-arch check). A mutant no ordinary check reports has survived: a check is missing.
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

#include "pmqa/dispatch/policy.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa::gauntlet {

enum class MutantKind : std::uint8_t {
  kernel,    // the kernels with one Hooks function replaced
  dispatch,  // a path-selection policy with a bug
  checker,   // a comparison that lies
  ci,        // a CI job on the wrong device
};
std::string_view to_string(MutantKind kind) noexcept;

// Makes the executor a kernel check runs on, from the host executor's options (warp size, schedule
// seed): what the ordinary suites get from make_host_executor, with the mutant's Hooks.
using KernelFactory = std::function<std::unique_ptr<kernels::Executor>(const kernels::HostExecutorOptions&)>;

// A comparison's verdict on one output. pmqa's is compare(...).passed().
struct Verdict {
  bool pass = false;
  std::string text;
};
using Checker = std::function<Verdict(const Case&, const Reference&, const OutputBuffer&)>;
// What every suite uses: compare() under the clean contract and the given profile (fp32 by default).
Checker pmqa_checker(const Tolerance& tolerance = Tolerance::fp32());

// A CI job: the arch (and path) it claims to test, and the gcnArchName / sm_XY its device reports.
struct CiJob {
  std::string claimed_arch;
  std::optional<dispatch::Path> claimed_path;
  std::string device_arch;
};

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
};

// Every planted mutant, by class. The names are unique.
const std::vector<Mutant>& mutants();
const Mutant* find_mutant(std::string_view name);  // nullptr when there is none

// One check's outcome on one subject.
struct Finding {
  std::string check;     // "kernel-vs-reference property"
  std::string source;    // the ordinary suite it runs, as the repository has it
  std::string config;    // "host-w64 fused"; empty where the check has one configuration
  bool ordinary = true;  // false: a check pmqa's ordinary suites lack (proposed; never counts)
  bool caught = false;
  std::int64_t cases_run = 0;
  std::int64_t first_detection = 0;  // 1-based index of the first failing case; 0: none failed
  std::string unit;      // what a case is: "generated cases", "suite cases", "matrix rows", ...
  std::string evidence;  // the first failure, a few lines
  double seconds = 0;
};

struct GauntletOptions {
  std::uint64_t seed = 0x6761756e746c6574;  // the property's RapidCheck seed (fixed: counts reproduce)
  int property_cases = 100;  // per executor and path, as the ordinary property (RapidCheck's default)
  bool gigabyte_checks = true;  // run the ~4.2 GiB host check where a mutant needs it
  // Every comparison of every check under this profile instead of the one it uses (each kernel's
  // own, fp32 for the planted corpus): a mutant must be caught whichever profile a user judges with.
  std::optional<Tolerance> tolerance;
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

// The table the README shows: class, mutant, the check that caught it, cases to first detection.
std::string table_text(const std::vector<MutantResult>& results);
nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const MutantResult& r);
nlohmann::json to_json(const std::vector<MutantResult>& results, const std::vector<Finding>& baseline,
                       const GauntletOptions& options);

}  // namespace pmqa::gauntlet
