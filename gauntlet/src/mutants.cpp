// The registry: kernel mutants from the kernel_mutants_*.cpp units, and here the dispatch mutants
// (classes 1, 2), the checker mutants and the CI job on the wrong device (class 11).
#include <algorithm>
#include <cmath>
#include <string>

#include "kernel_mutants.hpp"
#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa::gauntlet {

std::string_view to_string(MutantKind kind) noexcept {
  switch (kind) {
    case MutantKind::kernel: return "kernel";
    case MutantKind::dispatch: return "dispatch";
    case MutantKind::checker: return "checker";
    case MutantKind::ci: return "ci";
  }
  return "?";
}

namespace detail {
namespace {

namespace pd = pmqa::dispatch;

// Class 1 (vLLM PR 42062): the fused guard names only gfx942, so gfx950 (MI355X) runs two-stage.
const pd::Policy& pre_fix_guard() {
  static const pd::DefaultPolicy p(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}}, pd::ArchTable::builtin(),
                                   "fused guard names only gfx942");
  return p;
}

// Class 1: an arch the table does not know silently falls back to the reference (AITER's dtype
// table falls back to uint8 for unknown archs).
const pd::Policy& unknown_arch_fallback() {
  static const pd::FunctionPolicy p("unknown arch falls back silently", [](const pd::Arch& arch, const pd::Context& ctx) {
    try {
      return pd::default_policy().select(arch, ctx);
    } catch (const pd::UnknownArchError&) {
      pd::Decision d;
      d.path = pmqa::Path::reference_fallback;
      d.fp8 = Fp8Format::e4m3fn;
      d.layout = KvLayout::normal;
      d.reason = "unknown arch " + arch.text + ": using the reference";
      return d;
    }
  });
  return p;
}

// The gfx number of an AMD target ("gfx1250" -> 1250), or -1.
int gfx_number(const std::string& target) {
  if (target.rfind("gfx", 0) != 0) return -1;
  try {
    std::size_t used = 0;
    const int n = std::stoi(target.substr(3), &used, 10);
    return used == target.size() - 3 ? n : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// Class 2 (AITER 3604, 2323: a hard-coded CDNA version): gfx1250 enabled by rewriting the guard as
// a version test, "every fp8 target from gfx950 on". It admits gfx950 and gfx1250 as meant, drops
// gfx942 (942 < 950) to the slow path, and sends RDNA4 (gfx1200/1201) to a fused kernel AITER
// does not ship for them.
const pd::Policy& version_guard() {
  static const pd::DefaultPolicy p = [] {
    pd::DefaultPolicyOptions o;
    o.rocm_fused_targets.clear();
    for (const auto& info : pd::ArchTable::builtin().entries())
      if (info.vendor == pd::Vendor::amd && info.has_fp8() && gfx_number(info.target) >= 950)
        o.rocm_fused_targets.push_back(info.target);
    return pd::DefaultPolicy(o, pd::ArchTable::builtin(), "fused guard: gfx number >= 950");
  }();
  return p;
}

// Class 11: a comparison that only warns. It runs compare() and reports what it found, but the
// verdict is a pass whatever it found.
Verdict warn_only(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& options) {
  const Report rep = compare(c, ref, out, options);
  return Verdict{true, rep.passed() ? std::string() : "warning (not a failure): " + rep.to_text(), std::nullopt};
}

// Class 11: a metric that passes degenerate outputs. Cosine similarity of the kernel's output with
// the reference over the cells the kernel wrote as finite numbers, failing only when it is below
// 0.999: an all-zero output gives 0/0 = NaN, an all-masked one compares nothing (NaN again), and
// `NaN < 0.999` is false, so both pass. (It is also blind to scale: a factor of 2 passes.)
Verdict cosine_gate(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions&) {
  double xy = 0, xx = 0, yy = 0;
  for (std::int64_t r = 0; r < c.rows(); ++r)
    for (std::int64_t j = 0; j < c.max_model_len; ++j) {
      const double x = out.at(r, j);
      if (!std::isfinite(x)) continue;
      const double y = ref.at(r, j);
      xy += x * y;
      xx += x * x;
      yy += y * y;
    }
  const double similarity = xy / std::sqrt(xx * yy);
  if (similarity < 0.999) return Verdict{false, "cosine similarity " + std::to_string(similarity) + " < 0.999", std::nullopt};
  return Verdict{true, "cosine similarity " + std::to_string(similarity), std::nullopt};
}

Mutant other(int bug_class, std::string name, MutantKind kind, std::string bug, std::string seen_in, std::string planted) {
  Mutant m;
  m.bug_class = bug_class;
  m.name = std::move(name);
  m.kind = kind;
  m.bug = std::move(bug);
  m.seen_in = std::move(seen_in);
  m.planted = std::move(planted);
  return m;
}

}  // namespace

void add_other_mutants(std::vector<Mutant>& out) {
  Mutant m = other(1, "gfx950-sent-to-two-stage", MutantKind::dispatch,
                   "fused guard names only gfx942: gfx950 (MI355X) silently takes the two-stage path",
                   "spec §6 class 1: vLLM PR 42062", "DefaultPolicyOptions::rocm_fused_targets = {gfx942}");
  m.policy = pre_fix_guard;
  out.push_back(std::move(m));

  m = other(1, "unknown-arch-falls-back", MutantKind::dispatch,
            "an arch the table does not know silently falls back to the reference instead of an error",
            "spec §4: AITER's dtype table", "FunctionPolicy catching UnknownArchError");
  m.policy = unknown_arch_fallback;
  out.push_back(std::move(m));

  m = other(2, "gfx1250-enabled-by-version-test", MutantKind::dispatch,
            "gfx1250 enabled by a version test (gfx >= 950): gfx942 drops to two-stage, RDNA4 gets a fused kernel",
            "spec §6 class 2: AITER 3604, 2323", "DefaultPolicyOptions::rocm_fused_targets from a version test");
  m.policy = version_guard;
  out.push_back(std::move(m));

  m = other(11, "comparison-only-warns", MutantKind::checker,
            "the comparison prints its findings but passes whatever it found", "spec §6 class 11",
            "checker: compare() with the verdict forced to pass");
  m.checker = warn_only;
  out.push_back(std::move(m));

  m = other(11, "metric-passes-degenerate-output", MutantKind::checker,
            "cosine-similarity gate over the kernel's finite cells: all-zero and all-masked outputs give NaN, which passes",
            "spec §6 class 11", "checker: cosine similarity, fails only when < 0.999");
  m.checker = cosine_gate;
  out.push_back(std::move(m));

  m = other(11, "ci-claims-gfx950-on-gfx942", MutantKind::ci,
            "a CI job that claims gfx950 (MI355X) runs on a gfx942 (MI300X) device", "spec §6 class 11",
            "CI job: --expect-arch gfx950 --expect-path fused, device gfx942:sramecc+:xnack-");
  m.ci = CiJob{"gfx950", pmqa::Path::fused, "gfx942:sramecc+:xnack-"};
  out.push_back(std::move(m));
}

}  // namespace detail

const std::vector<Mutant>& mutants() {
  static const std::vector<Mutant> all = [] {
    std::vector<Mutant> v;
    detail::add_other_mutants(v);
    detail::add_codec_mutants(v);
    detail::add_layout_mutants(v);
    detail::add_length_mutants(v);
    detail::add_schedule_mutants(v);
    std::stable_sort(v.begin(), v.end(), [](const Mutant& a, const Mutant& b) { return a.bug_class < b.bug_class; });
    return v;
  }();
  return all;
}

const Mutant* find_mutant(std::string_view name) {
  for (const auto& m : mutants())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace pmqa::gauntlet
