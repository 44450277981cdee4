// pmqa's own kernels judged as real kernels are (reference/tests/realworld_corpus_test.cpp): each
// output must pass under the kernel's own tolerance profile with headroom, and its planted mutants
// (fixtures/output_mutants.hpp) must fail. Shared by the host test and the GPU test.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "pmqa/fixtures/output_mutants.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa::testing_support {

// One kernel's outputs over some cases: the worst gate ratios and the mutant tallies summed.
struct OwnOutputs {
  std::string kernel;   // "fused-mma/wgmma" or "two-stage"
  std::string profile;  // its tolerance profile
  int outputs = 0, passed = 0;
  double worst[5] = {0, 0, 0, 0, 0};  // element, block, row, global, bias, over the passing outputs
  // The whole output's signed means of err / sigma (offset) and err / sigma x sign(ref) (scale),
  // their extremes over the passing outputs: a matrix unit that truncates shows a negative scale.
  double offset_lo = 0, offset_hi = 0, scale_lo = 0, scale_hi = 0;
  std::vector<fixtures::MutantTally> tallies;
  std::vector<std::string> failures;  // a report per output that did not pass
};

inline std::string kernel_label(const kernels::RunResult& run) { return std::string(to_string(run.kernel)); }

// Judges one run's output against the oracle (fp64, with noise) and folds it into `into`.
inline void judge_own_output(const std::string& case_name, const Case& c, const Reference& oracle,
                             const kernels::RunResult& run, std::map<std::string, OwnOutputs>& into,
                             const fixtures::StudyOptions& study = {}) {
  const Tolerance t = kernels::tolerance_for(run);
  OwnOutputs& row = into[kernel_label(run)];
  row.kernel = kernel_label(run);
  row.profile = t.name;
  ++row.outputs;
  const CompareOptions options{.judging = {.tolerance = t}};
  const Report rep = compare(c, oracle, run.out, options);
  if (!rep.passed()) {
    row.failures.push_back(case_name + ": " + rep.to_text());
    return;
  }
  ++row.passed;
  const double w[5] = {rep.worst_bound_ratio, rep.block.worst, rep.row.worst, rep.global.worst, rep.bias.worst};
  for (int i = 0; i < 5; ++i) row.worst[i] = std::max(row.worst[i], w[i]);
  row.offset_lo = std::min(row.offset_lo, rep.means.offset);
  row.offset_hi = std::max(row.offset_hi, rep.means.offset);
  row.scale_lo = std::min(row.scale_lo, rep.means.scale);
  row.scale_hi = std::max(row.scale_hi, rep.means.scale);
  for (const auto& m : fixtures::study_output_mutants(c, oracle, run.out, options, study)) {
    auto it = std::find_if(row.tallies.begin(), row.tallies.end(), [&](const auto& x) { return x.name == m.name; });
    if (it == row.tallies.end()) {
      row.tallies.push_back(m);
    } else {
      it->caught += m.caught;
      it->tried += m.tried;
    }
  }
}

inline void print_own_outputs(const char* title, const std::map<std::string, OwnOutputs>& rows) {
  std::printf("\n%s\n%-22s %-12s %9s  %-44s %-30s", title, "kernel", "profile", "passed",
              "worst over limit (el/block/row/global/bias)", "mean err/sigma: offset, scale");
  std::vector<std::string> mutants;
  for (const auto& [_, row] : rows)
    for (const auto& t : row.tallies)
      if (std::find(mutants.begin(), mutants.end(), t.name) == mutants.end()) mutants.push_back(t.name);
  for (const auto& m : mutants) std::printf(" %22s", m.c_str());
  std::printf("\n");
  for (const auto& [_, row] : rows) {
    char worst[96], means[64];
    std::snprintf(worst, sizeof worst, "%.3g / %.3g / %.3g / %.3g / %.3g", row.worst[0], row.worst[1], row.worst[2],
                  row.worst[3], row.worst[4]);
    std::snprintf(means, sizeof means, "%+.2g..%+.2g, %+.2g..%+.2g", row.offset_lo, row.offset_hi, row.scale_lo,
                  row.scale_hi);
    std::printf("%-22s %-12s %4d/%-4d  %-44s %-30s", row.kernel.c_str(), row.profile.c_str(), row.passed, row.outputs,
                worst, means);
    for (const auto& m : mutants) {
      auto it = std::find_if(row.tallies.begin(), row.tallies.end(), [&](const auto& x) { return x.name == m; });
      char cell[48] = "-";
      if (it != row.tallies.end())
        std::snprintf(cell, sizeof cell, "%lld/%lld", static_cast<long long>(it->caught),
                      static_cast<long long>(it->tried));
      std::printf(" %22s", cell);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace pmqa::testing_support
