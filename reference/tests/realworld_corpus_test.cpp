// The judge against the world (../shared/realworld): real kernels' outputs on the standard suite
// (AITER's Triton fused and stage-1, vLLM's eager op, DeepGEMM with fp32 and bf16 logits), each
// with the verdict a correct judge must reach. Every file is judged as `pmqa verify` judges it
// (its recorded contract and tolerance, the default NaN rule); no file is treated apart from the
// others: a failing file must fail for the reason its class gives, through the rules below.
//
// Then every correct output is mutated as real bugs mutate outputs (fixtures/output_mutants.hpp)
// and judged under every tolerance profile: the mutants must fail.
//
// Run the binary directly to see the false-alarm and detection tables it prints.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/verdict.hpp"
#include "pmqa/fixtures/output_mutants.hpp"

namespace pmqa {
namespace {
namespace fs = std::filesystem;

struct Entry {
  std::string peer, file, case_name, verdict, klass, why;
  cases::CaseFile f;
  std::shared_ptr<const Reference> oracle;
};

// PMQA_REALWORLD_DIR holds expected.json; PMQA_REALWORLD_OUTPUTS the unpacked outputs/ folder
// (CTest unpacks outputs.tar.xz there before this test runs). The build's defaults stand in for
// either when unset.
const char* setting(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Corpus {
  std::string missing;  // why there is no corpus, if there is none
  std::vector<Entry> entries;
};

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus out;
    const char* dir = setting("PMQA_REALWORLD_DIR", PMQA_REALWORLD_DIR_DEFAULT);
    const char* outputs = setting("PMQA_REALWORLD_OUTPUTS", PMQA_REALWORLD_OUTPUTS_DEFAULT);
    if (!fs::exists(fs::path(dir) / "expected.json") || !fs::is_directory(outputs)) {
      out.missing = std::string("the real-world corpus was not found (expected.json in ") + dir + ", its outputs in " +
                    outputs + "; CI has it in ../shared/realworld beside the clone)";
      return out;
    }
    std::ifstream in(fs::path(dir) / "expected.json");
    const auto j = nlohmann::json::parse(in);
    for (const auto& e : j.at("files")) {
      Entry x{e.at("peer"), e.at("file"), e.at("case"), e.at("verdict"), e.at("class"), e.at("why"), {}, nullptr};
      const fs::path path = fs::path(outputs).parent_path() / x.file;  // "outputs/<peer>/<case>.safetensors"
      x.f = cases::read_case_file(path);
      x.oracle = std::make_shared<const Reference>(
          compute_reference(x.f.c, {.precision = Precision::fp64, .with_noise = true}));
      out.entries.push_back(std::move(x));
    }
    return out;
  }();
  return c;
}

#define PMQA_NEED_CORPUS()                                    \
  do {                                                        \
    if (!corpus().missing.empty()) GTEST_SKIP() << corpus().missing; \
  } while (0)

Report judge(const Entry& e, const cases::JudgeOverrides& o = {}, int max_listed = 10) {
  CompareOptions options = cases::file_compare_options(e.f, e.file, o);
  options.max_listed = max_listed;
  return compare(e.f.c, *e.oracle, cases::file_output(e.f, e.file), options);
}

double worst_gate(const Report& r) {
  return std::max({r.worst_bound_ratio, r.block.worst, r.row.worst, r.global.worst});
}

// Where a correct output's signed means sit (tolerance.hpp, the bias gate): the extremes over a
// peer's files of the whole output's offset and scale means, in sigmas.
struct MeanRange {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::string text() const {
    if (lo > hi) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.3f..%+.3f", lo, hi);
    return buf;
  }
};

// Why a `fail` file fails, as a rule on the report: each reason class of the corpus (its "why"),
// never a file. A failing file whose reason has no rule is a test failure: add the rule.
struct FailureRule {
  const char* why_contains;
  // "" when the report shows the stated failure, else what it shows instead.
  std::function<std::string(const Case&, const Report&)> shows;
};

// "" when every failing cell is explained by the reason (`fits`) and at least one shows it, else
// the first cell that does not fit. A cell with a NaN head term that failed as NaN is explained by
// the NaN rule (a tensor-core kernel clamps it; the file is judged under propagate), not by the
// reason: a file can show both.
std::string explained(const Report& r, const std::function<bool(const Mismatch&)>& fits, const char* want) {
  bool shown = false;
  for (const auto& m : r.first) {
    if (fits(m)) {
      shown = true;
      continue;
    }
    if (m.kind == MismatchKind::nan && std::isnan(m.expected)) continue;
    return "row " + std::to_string(m.row) + " col " + std::to_string(m.col) + " failed as " +
           std::string(to_string(m.kind)) + ", not " + want;
  }
  return shown ? "" : std::string("no failing cell shows ") + want;
}

const std::vector<FailureRule>& failure_rules() {
  static const std::vector<FailureRule> rules = {
      // A store of whole 256-column chunks past max_model_len lands in the next row of the
      // [H, B*N, max_model_len] buffer (the next head's row 0 after the last row) as -inf, the
      // chunk's masked keys: -inf where valid logits are due, in a row's first 255 columns.
      {"store is unmasked",
       [](const Case&, const Report& r) {
         return explained(r, [](const Mismatch& m) {
           return m.kind == MismatchKind::inf_pattern && m.got == -INFINITY && m.col < 255;
         }, "-inf in a row's first 255 columns");
       }},
      // The values and scales of a block read as if each token were D+4 contiguous bytes: wrong
      // numbers, so the element gate breaks; only a block_size > 1, next_n > 1 case can show it.
      {"splits each token's D+4 bytes",
       [](const Case& c, const Report& r) -> std::string {
         if (c.next_n < 2 || c.block_size < 2) return "the case is not one the reason applies to";
         if (r.value_mismatches == 0) return "no element-gate failure (broke: " + r.broken() + ")";
         return "";
       }},
      // DeepGEMM computes row (b, n) only up to context_lens[b][N-1]: the failing cells are the
      // ones past it (never written), in a case whose 2-D lengths fall with n.
      {"2-D context_lens fall with n",
       [](const Case& c, const Report& r) -> std::string {
         if (!c.context_lens_2d) return "the case has 1-D lengths";
         return explained(r, [&c](const Mismatch& m) {
           return m.col >= c.context_lens[static_cast<std::size_t>(m.b * c.next_n + c.next_n - 1)];
         }, "a cell past the last row's length");
       }},
  };
  return rules;
}

TEST(RealWorldCorpus, EveryFileGetsItsExpectedVerdict) {
  PMQA_NEED_CORPUS();
  struct PeerRow {
    int files = 0, right = 0;
    double worst[5] = {0, 0, 0, 0, 0};  // element, block, row, global, bias over the correct files
    MeanRange offset, scale;            // the whole output's signed means over the correct files
    std::string profile;
  };
  std::map<std::string, PeerRow> table;
  for (const auto& e : corpus().entries) {
    PeerRow& row = table[e.peer];
    ++row.files;
    row.profile = cases::file_compare_options(e.f, e.file).judging.tolerance.name;
    const Report r = judge(e, {}, 1 << 20);
    bool right = false;
    if (e.verdict == "pass") {
      right = r.passed();
      EXPECT_TRUE(r.passed()) << e.file << ": a false alarm\n" << r.to_text();
      const double w[5] = {r.worst_bound_ratio, r.block.worst, r.row.worst, r.global.worst, r.bias.worst};
      for (int i = 0; i < 5; ++i) row.worst[i] = std::max(row.worst[i], w[i]);
      if (r.means.cells > 0) {
        row.offset.add(r.means.offset);
        row.scale.add(r.means.scale);
      }
      EXPECT_LE(worst_gate(r), 0.1) << e.file << ": a correct output sits within 10x of a gate";
      // A mean's chance term shrinks only as 1/sqrt(cells): the bias gate keeps 6.7x on correct files.
      EXPECT_LE(r.bias.worst, 0.15) << e.file << ": a correct output sits within 6.7x of the bias gate";
    } else if (e.verdict == "nan-clamped") {
      // Wrong under propagate (the default) only where a NaN term sits, right under relu-clamp.
      const bool only_nan = !r.passed() && r.broken() == "NaN" && r.nan_seen.describe() == "relu-clamp";
      const Report clamp = judge(e, {.judging = {.nan = NanRule::relu_clamp}});
      right = only_nan && clamp.passed();
      EXPECT_TRUE(only_nan) << e.file << ": should fail only on NaN cells, showing relu-clamp\n" << r.to_text();
      EXPECT_TRUE(clamp.passed()) << e.file << ": should pass under --nan relu-clamp\n" << clamp.to_text();
    } else {
      ASSERT_EQ(e.verdict, "fail") << e.file;
      const FailureRule* rule = nullptr;
      for (const auto& candidate : failure_rules())
        if (e.why.find(candidate.why_contains) != std::string::npos) rule = &candidate;
      ASSERT_NE(rule, nullptr) << e.file << ": no rule for the reason \"" << e.why << "\"";
      const std::string shows = r.passed() ? "it passed" : rule->shows(e.f.c, r);
      right = shows.empty();
      EXPECT_TRUE(right) << e.file << ": should fail because " << e.why << "; instead " << shows << "\n"
                         << r.to_text().substr(0, 4000);
    }
    row.right += right ? 1 : 0;
  }
  std::printf("\nfalse-alarm table: every file of ../shared/realworld judged as pmqa verify judges it\n");
  std::printf("%-20s %-12s %6s %14s   %-46s %s\n", "peer", "profile", "files", "judged right",
              "worst over limit (element/block/row/global/bias)", "whole-output mean err/sigma: offset, x sign(ref)");
  for (const auto& [peer, row] : table) {
    char worst[96];
    std::snprintf(worst, sizeof worst, "%.3g / %.3g / %.3g / %.3g / %.3g", row.worst[0], row.worst[1], row.worst[2],
                  row.worst[3], row.worst[4]);
    std::printf("%-20s %-12s %6d %8d/%-5d   %-46s %s, %s\n", peer.c_str(), row.profile.c_str(), row.files, row.right,
                row.files, worst, row.offset.text().c_str(), row.scale.text().c_str());
  }
}

// A small error of one sign: the whole valid output scaled by a factor close to 1 (a wrong scale
// constant, a missing factor near 1), judged under the profile the file records. x1.01 and x0.99
// must fail every correct file (the bf16 ones too, whose every cell keeps it inside its noise),
// x1.003 every matrix-unit and fp32 one; the report must name the sign. Under the bf16 profiles
// only the bias gate can see it: the judge without it (bias_allowed infinite) passes them, which
// is what this test would catch if the gate broke.
TEST(RealWorldCorpus, UniformScalesFailUnderTheRecordedProfile) {
  PMQA_NEED_CORPUS();
  struct Row {
    std::string profile;
    int outputs = 0;
    std::map<std::string, int> caught, by_bias_only, pass_without_bias;
    std::map<std::string, double> least_over;  // the smallest bias.worst (over its limit) of a mutant
  };
  const std::vector<std::pair<std::string, float>> scales = {{"x1.01", 1.01f}, {"x0.99", 0.99f}, {"x1.003", 1.003f}};
  std::map<std::string, Row> table;
  for (const auto& e : corpus().entries) {
    if (e.verdict != "pass") continue;
    const CompareOptions options = cases::file_compare_options(e.f, e.file);
    const OutputBuffer out = cases::file_output(e.f, e.file);
    bool signal = false;
    for (std::int64_t r = 0; r < e.f.c.rows() && !signal; ++r)
      for (std::int64_t j = 0; j < e.oracle->valid(r) && !signal; ++j)
        signal = std::isfinite(out.at(r, j)) && out.at(r, j) != 0.0f && std::isfinite(e.oracle->at(r, j, options.judging.nan));
    if (!signal) continue;  // nothing a scale can change (all rows empty)
    Row& row = table[e.peer];
    row.profile = options.judging.tolerance.name;
    ++row.outputs;
    const bool bf16 = options.judging.tolerance.unit_out > 0x1p-24;
    for (const auto& [name, factor] : scales) {
      OutputBuffer m = out;
      for (std::int64_t r = 0; r < e.f.c.rows(); ++r)
        for (std::int64_t j = 0; j < e.oracle->valid(r); ++j)
          if (std::isfinite(m.at(r, j))) m.at(r, j) *= factor;
      const Report rep = compare(e.f.c, *e.oracle, m, options);
      const bool required = name != "x1.003" || !bf16;
      if (!rep.passed()) ++row.caught[name];
      if (required) EXPECT_FALSE(rep.passed()) << e.file << " x" << factor << " under " << row.profile << " passed\n"
                                               << rep.to_text();
      if (!rep.passed()) {
        const std::string sign = factor > 1 ? "magnitude too large" : "magnitude too small";
        EXPECT_NE(rep.broken().find("bias (" + sign + ")"), std::string::npos)
            << e.file << " " << name << ": the report should name the bias and its sign: " << rep.broken();
      }
      if (rep.broken().rfind("bias", 0) == 0) ++row.by_bias_only[name];
      row.least_over[name] = row.least_over.count(name) ? std::min(row.least_over[name], rep.bias.worst) : rep.bias.worst;
      CompareOptions without = options;
      without.judging.tolerance.bias_allowed = INFINITY;
      if (compare(e.f.c, *e.oracle, m, without).passed()) ++row.pass_without_bias[name];
    }
    if (bf16) EXPECT_GT(row.pass_without_bias["x1.01"], 0) << "the rms gates alone should miss x1.01 under bf16";
  }
  std::printf("\nuniform scales of the correct outputs, each under its recorded profile: caught / outputs "
              "(by the bias gate alone; passed by the judge without it) [least bias over its limit]\n%-20s %-12s",
              "peer", "profile");
  for (const auto& [name, _] : scales) std::printf(" %30s", name.c_str());
  std::printf("\n");
  for (auto& [peer, row] : table) {
    std::printf("%-20s %-12s", peer.c_str(), row.profile.c_str());
    for (const auto& [name, _] : scales) {
      char cell[96];
      std::snprintf(cell, sizeof cell, "%d/%d (%d; %d) [%.3g]", row.caught[name], row.outputs, row.by_bias_only[name],
                    row.pass_without_bias[name], row.least_over[name]);
      std::printf(" %30s", cell);
    }
    std::printf("\n");
  }
  EXPECT_EQ(table.size(), 5u) << "every peer has a correct output with a signal";
}

TEST(RealWorldCorpus, MutantsOfCorrectOutputsFailUnderEveryProfile) {
  PMQA_NEED_CORPUS();
  // (profile, mutant) -> tally over every correct file with a finite non-zero valid cell.
  std::map<std::string, std::map<std::string, fixtures::MutantTally>> table;
  std::vector<std::string> order;
  std::map<std::string, int> outputs;  // correct outputs studied per profile
  for (const auto& e : corpus().entries) {
    if (e.verdict != "pass") continue;
    for (const auto& name : Tolerance::names()) {
      const Tolerance t = Tolerance::named(name);
      const CompareOptions options = cases::file_compare_options(e.f, e.file, {.judging = {.tolerance = t}});
      const OutputBuffer out = cases::file_output(e.f, e.file);
      // A profile tighter than the kernel's own (fp32 for a matrix-unit kernel) is not one its
      // output is correct under: only outputs that pass a profile measure what it catches.
      if (!compare(e.f.c, *e.oracle, out, options).passed()) continue;
      ++outputs[name];
      for (const auto& m : fixtures::study_output_mutants(e.f.c, *e.oracle, out, options)) {
        if (std::find(order.begin(), order.end(), m.name) == order.end()) order.push_back(m.name);
        auto& total = table[name][m.name];
        total.name = m.name;
        total.caught += m.caught;
        total.tried += m.tried;
        if (m.tried == 1 && !m.near_one) {  // the one-of-a-kind mutants must all fail; the rest are rates
          EXPECT_TRUE(m.whole()) << e.file << " under " << name << ": " << m.name << " passed in "
                                 << m.tried - m.caught << " of " << m.tried;
        }
      }
    }
  }
  std::printf("\ndetection table: mutants of the correct outputs of ../shared/realworld, caught / tried\n%-22s",
              "mutant");
  for (const auto& name : Tolerance::names()) std::printf(" %20s", name.c_str());
  std::printf("\n%-22s", "(correct outputs)");
  for (const auto& name : Tolerance::names()) std::printf(" %20d", outputs[name]);
  std::printf("\n");
  for (const auto& m : order) {
    std::printf("%-22s", m.c_str());
    for (const auto& name : Tolerance::names()) {
      const auto& t = table[name][m];
      char cell[64];
      std::snprintf(cell, sizeof cell, "%lld/%lld %.4f", static_cast<long long>(t.caught),
                    static_cast<long long>(t.tried), t.rate());
      std::printf(" %20s", cell);
    }
    std::printf("\n");
  }
  for (const auto& name : Tolerance::names()) {
    EXPECT_GT(outputs[name], 0) << "no correct output passes " << name;
    for (const char* m : {"cell x2", "cell x0.5"})
      EXPECT_GE(table[name][m].rate(), 0.95) << m << " under " << name;
  }
}

}  // namespace
}  // namespace pmqa
