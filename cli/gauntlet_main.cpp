// pmqa-gauntlet: every planted mutant of spec §6 through pmqa's ordinary checks (pmqa::checks, the
// functions the unit tests and pmqa check call), and the same checks on unmutated pmqa (no false
// alarms). Prints the table: class, mutant, the check that caught it, cases to first detection.
//   pmqa-gauntlet [--json] [--mutant NAME]... [--cases N] [--seed S] [--no-gigabytes] [--no-baseline]
//                 [--profile NAME|all] [--by-kernel] [--list] [-v]
// Exit 0 when every mutant is caught and the baseline passes, 1 when a mutant survives or a check
// fires on unmutated pmqa, 2 on bad usage. A program of its own beside pmqa: it needs RapidCheck
// and the mutant kernels, which pmqa check has no use for.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "pmqa/gauntlet/gauntlet.hpp"
#include "progress.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace {

namespace pg = pmqa::gauntlet;

struct GauntletCliOptions {
  std::vector<std::string> only;
  int cases = pg::GauntletOptions{}.property_cases;
  std::uint64_t seed = pg::GauntletOptions{}.seed;
  bool json = false;
  bool no_gigabytes = false;
  bool no_baseline = false;
  bool list = false;
  bool verbose = false;
  std::string profile;  // empty: each check's own; a name, or "all"
  bool by_kernel = false;  // also the kernel mutants by kernel: the cases each kernel's configurations needed
};

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += pad;
  }
  return out;
}

int list_mutants() {
  for (const auto& m : pg::mutants())
    std::printf("%-3d %-34s %-8s %s\n     planted: %s\n     seen in: %s\n", m.bug_class, m.name.c_str(),
                std::string(pg::to_string(m.kind)).c_str(), m.bug.c_str(), m.planted.c_str(), m.seen_in.c_str());
  return kExitPass;
}

// --profile all: the whole gauntlet once per profile, then one line per mutant saying which
// profiles it was caught under.
int run_profiles(const GauntletCliOptions& o, const std::vector<const pg::Mutant*>& chosen, pg::GauntletOptions options,
                 const std::vector<std::string>& profiles) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<pg::MutantResult>> results(profiles.size());
  std::vector<int> false_alarms(profiles.size(), 0);
  Progress progress(profiles.size() * (chosen.size() + (o.no_baseline ? 0 : 1)));
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    options.tolerance = Tolerance::named(profiles[p]);
    for (const pg::Mutant* m : chosen) {
      progress.step(m->name + " under " + profiles[p]);
      results[p].push_back(pg::run_mutant(*m, options));
    }
    if (!o.no_baseline) {
      progress.step("baseline under " + profiles[p]);
      for (const auto& f : pg::run_baseline(options)) false_alarms[p] += f.caught ? 1 : 0;
    }
  }
  progress.clear();
  int survivors = 0;
  if (o.json) {
    nlohmann::json j;
    for (std::size_t p = 0; p < profiles.size(); ++p) {
      options.tolerance = Tolerance::named(profiles[p]);
      j["profiles"][profiles[p]] = pg::to_json(results[p], {}, options);
      j["profiles"][profiles[p]]["false_alarms"] = false_alarms[p];
      for (const auto& r : results[p]) survivors += r.survived() ? 1 : 0;
    }
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << j.dump(2) << "\n";
    const int alarms = std::accumulate(false_alarms.begin(), false_alarms.end(), 0);
    return survivors == 0 && alarms == 0 ? kExitPass : kExitMismatch;
  }
  std::printf("%-5s %-34s", "class", "mutant");
  for (const auto& p : profiles) std::printf(" %-18s", p.c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    std::printf("%-5d %-34s", chosen[i]->bug_class, chosen[i]->name.c_str());
    for (std::size_t p = 0; p < profiles.size(); ++p) {
      const pg::MutantResult& r = results[p][i];
      const pg::Finding* f = r.first_catch();
      survivors += r.survived() ? 1 : 0;
      const std::string cell = r.not_run ? "not run" : f ? "caught (" + std::to_string(f->first_detection) + ")" : "SURVIVED";
      std::printf(" %-18s", cell.c_str());
    }
    std::printf("\n");
  }
  if (o.by_kernel)
    for (std::size_t p = 0; p < profiles.size(); ++p)
      std::printf("\nby kernel, under %s (the fewest cases a check needed to fail one the kernel ran; -: none did; n/a: not planted in its code):\n%s", profiles[p].c_str(),
                  pg::kernel_table_text(results[p]).c_str());
  int alarms = 0;
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    alarms += false_alarms[p];
    if (!o.no_baseline)
      std::printf("baseline under %s: %s\n", profiles[p].c_str(),
                  false_alarms[p] == 0 ? "no false alarm" : (std::to_string(false_alarms[p]) + " check(s) FIRED").c_str());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("(caught (N): the first check that caught it needed N cases)\n%s: %zu mutants x %zu profiles, %d survived (%.1f s)\n",
              survivors == 0 && alarms == 0 ? "PASS" : "FAIL", chosen.size(), profiles.size(), survivors, seconds);
  return survivors == 0 && alarms == 0 ? kExitPass : kExitMismatch;
}

int run_gauntlet(const GauntletCliOptions& o) {
  if (o.list) return list_mutants();
  if (o.cases < 1) throw UsageError("--cases must be >= 1, got " + std::to_string(o.cases));
  std::vector<const pg::Mutant*> chosen;
  for (const auto& name : o.only) {
    const pg::Mutant* m = pg::find_mutant(name);
    if (!m) throw UsageError("no mutant named '" + name + "' (pmqa-gauntlet --list names them)");
    chosen.push_back(m);
  }
  if (chosen.empty())
    for (const auto& m : pg::mutants()) chosen.push_back(&m);

  pg::GauntletOptions options;
  options.seed = o.seed;
  options.property_cases = o.cases;
  options.gigabyte_checks = !o.no_gigabytes;
  std::vector<std::string> profiles;  // "" stands for each check's own
  if (o.profile == "all") {
    profiles = Tolerance::names();
  } else {
    if (!o.profile.empty()) {
      try {
        (void)Tolerance::named(o.profile);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--profile: ") + e.what() + " or all");
      }
    }
    profiles.push_back(o.profile);
  }
  if (profiles.size() > 1) return run_profiles(o, chosen, options, profiles);
  if (!o.profile.empty()) options.tolerance = Tolerance::named(o.profile);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<pg::MutantResult> results;
  Progress progress(chosen.size() + (o.no_baseline ? 0 : 1));
  for (const pg::Mutant* m : chosen) {
    progress.step(m->name);
    results.push_back(pg::run_mutant(*m, options));
  }
  std::vector<pg::Finding> baseline;
  if (!o.no_baseline) {
    progress.step("baseline (unmutated pmqa)");
    baseline = pg::run_baseline(options);
  }
  progress.clear();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  int survivors = 0, false_alarms = 0, not_run = 0;
  for (const auto& r : results) {
    survivors += r.survived() ? 1 : 0;
    not_run += r.not_run ? 1 : 0;
  }
  for (const auto& f : baseline) false_alarms += f.caught ? 1 : 0;

  if (o.json) {
    nlohmann::json j = pg::to_json(results, baseline, options);
    j["seconds"] = seconds;
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s", pg::table_text(results).c_str());
    if (o.by_kernel)
      std::printf("\nby kernel (the fewest cases a check needed to fail one the kernel ran; -: none did; n/a: not planted in its code):\n%s", pg::kernel_table_text(results).c_str());
    if (o.verbose || survivors > 0) {
      std::printf("\n");
      for (const auto& r : results) {
        if (!o.verbose && !r.survived()) continue;
        std::printf("%s (class %d, %.1f s): %s\n", r.mutant->name.c_str(), r.mutant->bug_class, r.seconds,
                    r.mutant->bug.c_str());
        for (const auto& f : r.findings) {
          std::printf("  %-8s %s%s%s: %lld case(s) run%s\n", f.caught ? "CAUGHT" : "passed", f.ordinary ? "" : "(proposed) ",
                      f.check.c_str(), f.config.empty() ? "" : (" [" + f.config + "]").c_str(),
                      static_cast<long long>(f.cases_run),
                      f.caught ? (", first failure at " + std::to_string(f.first_detection)).c_str() : "");
          if (f.caught && !f.evidence.empty()) std::printf("%s\n", indent(f.evidence, "           ").c_str());
        }
      }
    }
    std::printf("\nproperty: %d generated cases per executor and path, RapidCheck seed %llu; comparisons under %s\n",
                options.property_cases, static_cast<unsigned long long>(options.seed),
                options.tolerance ? ("the " + options.tolerance->name + " profile").c_str() : "each check's own profile");
    if (!o.no_baseline) {
      if (false_alarms == 0) {
        std::printf("baseline: the same checks on unmutated pmqa: no false alarm (%zu checks)\n", baseline.size());
      } else {
        std::printf("baseline: %d check(s) FIRED on unmutated pmqa (false alarms):\n", false_alarms);
        for (const auto& f : baseline)
          if (f.caught) std::printf("  %s [%s]\n%s\n", f.check.c_str(), f.config.c_str(), indent(f.evidence, "    ").c_str());
      }
    }
    std::printf("%s: %zu mutants, %d caught, %d survived, %d not run (%.1f s)\n",
                survivors == 0 && false_alarms == 0 ? "PASS" : "FAIL", results.size(),
                static_cast<int>(results.size()) - survivors - not_run, survivors, not_run, seconds);
  }
  return survivors == 0 && false_alarms == 0 ? kExitPass : kExitMismatch;
}

void add_options(CLI::App& app, GauntletCliOptions& o) {
  app.add_option("--mutant", o.only, "only this mutant (repeatable; --list names them)");
  app.add_option("--cases", o.cases, "generated cases per executor and path in the kernel property")->capture_default_str();
  app.add_option("--seed", o.seed, "RapidCheck seed of the kernel property")->capture_default_str();
  app.add_flag("--json", o.json, "print the results as JSON");
  app.add_flag("--no-gigabytes", o.no_gigabytes, "skip the ~4.2 GiB host run past 2^31 bytes of output");
  app.add_flag("--no-baseline", o.no_baseline, "skip the unmutated run (no-false-alarm check)");
  app.add_option("--profile", o.profile,
                 "compare under this tolerance profile instead of each check's own (" + joined(Tolerance::names(), ", ") +
                     "), or all: the gauntlet once per profile");
  app.add_flag("--by-kernel", o.by_kernel,
               "also print the kernel mutants by kernel: the fewest cases a check needed to fail one each kernel ran");
  app.add_flag("--list", o.list, "list the mutants and exit");
  app.add_flag("-v,--verbose", o.verbose, "print every check's outcome and evidence");
}

}  // namespace
}  // namespace pmqa::cli

int main(int argc, char** argv) {
  using namespace pmqa::cli;
  CLI::App app{"pmqa-gauntlet: plant a mutant per bug class of spec §6 and show pmqa's ordinary checks catch each "
               "(exit 1 if one survives)"};
  GauntletCliOptions o;
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitInvalid;
  }
  try {
    return run_gauntlet(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa-gauntlet: error: %s\n", e.what());
    return kExitInvalid;
  }
}
