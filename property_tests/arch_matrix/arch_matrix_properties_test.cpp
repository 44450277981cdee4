// RapidCheck properties of the parser and the policy. Each property is a function of the policy, so
// the same property is also run against a planted bug and shown to fail.
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "arch_matrix_support.hpp"

namespace pd = pmqa::dispatch;
using namespace pmqa::arch_matrix_test;

namespace pmqa::dispatch {
// How RapidCheck prints a generated context in a counterexample.
void showValue(const Context& ctx, std::ostream& os) { os << describe(ctx, Vendor::amd); }
}  // namespace pmqa::dispatch

namespace {

std::vector<std::string> targets_of(pd::Vendor vendor) {
  std::vector<std::string> out;
  for (const auto& e : pd::ArchTable::builtin().entries())
    if (e.vendor == vendor) out.push_back(e.target);
  return out;
}

rc::Gen<std::string> gen_feature_name() {
  return rc::gen::oneOf(
      rc::gen::element<std::string>("sramecc", "xnack", "cumode", "wavefrontsize64", "tgsplit"),
      rc::gen::map(rc::gen::pair(rc::gen::inRange('a', static_cast<char>('z' + 1)),
                                 rc::gen::container<std::string>(rc::gen::element('a', 'k', 'z', '0', '7', '_'))),
                   [](const std::pair<char, std::string>& p) { return std::string(1, p.first) + p.second; }));
}

// Weighted towards the contexts where a decision can be fused (kernels present, block sizes a
// fused kernel reads), so a planted bug that only shows there is found within the default 100 runs.
rc::Gen<pd::Context> gen_context() {
  return rc::gen::build<pd::Context>(
      rc::gen::set(&pd::Context::kernels_present, rc::gen::weightedElement<bool>({{3, true}, {1, false}})),
      rc::gen::set(&pd::Context::block_size,
                   rc::gen::weightedOneOf<std::int64_t>({{3, rc::gen::element<std::int64_t>(1, 16, 32, 64, 128)},
                                                         {1, rc::gen::element<std::int64_t>(8, 24)},
                                                         {1, rc::gen::inRange<std::int64_t>(1, 300)}})),
      rc::gen::set(&pd::Context::next_n, rc::gen::inRange<std::int64_t>(1, 6)),
      rc::gen::set(&pd::Context::heads, rc::gen::element<std::int64_t>(1, 16, 32, 64, 128)));
}

// Known AMD targets, half the time one whose kernel library ships a fused kernel (the targets a
// guard decides about).
rc::Gen<std::string> gen_amd_target() {
  std::vector<std::string> fused;
  for (const auto& e : pd::ArchTable::builtin().entries())
    if (e.vendor == pd::Vendor::amd && e.fused_kernel_library) fused.push_back(e.target);
  return rc::gen::weightedOneOf<std::string>(
      {{1, rc::gen::elementOf(fused)}, {1, rc::gen::elementOf(targets_of(pd::Vendor::amd))}});
}

// Random "+/-" flags on a known AMD target never change the decision (nor its reason).
void flags_never_change_the_decision(const pd::Policy& policy) {
  const auto target = *gen_amd_target();
  const auto names = *rc::gen::resize(6, rc::gen::unique<std::vector<std::string>>(gen_feature_name()));
  std::string name = target;
  for (const auto& n : names) name += ":" + n + (*rc::gen::arbitrary<bool>() ? "+" : "-");
  const auto ctx = *gen_context();
  RC_TAG(names.empty() ? "no flags" : "flags");
  RC_LOG() << "arch name: \"" << name << "\"\n";
  const auto bare = policy.select(pd::parse_arch(target), ctx);
  const auto flagged = policy.select(pd::parse_arch(name), ctx);
  RC_ASSERT(pd::same_choice(bare, flagged));
  RC_ASSERT(bare.reason == flagged.reason);
}

// A well-formed target the table does not know is always an error: UnknownArchError naming it.
void unknown_targets_always_throw(const pd::Policy& policy) {
  const bool amd = *rc::gen::arbitrary<bool>();
  std::string target;
  if (amd) {
    target = "gfx" + std::to_string(*rc::gen::inRange(1, 20000));
    if (*rc::gen::arbitrary<bool>()) target += *rc::gen::element('a', 'c', 'f', 'x');
  } else {
    target = "sm_" + std::to_string(*rc::gen::inRange(1, 13)) + std::to_string(*rc::gen::inRange(0, 10));
  }
  // (A bool, not the pointer comparison: RapidCheck's expression capture cannot show a nullptr_t.)
  const bool known = pd::ArchTable::builtin().find(target) != nullptr;
  RC_PRE(!known);
  std::string name = target;
  if (amd && *rc::gen::arbitrary<bool>()) name += ":xnack-";
  const auto ctx = *gen_context();
  RC_LOG() << "arch name: \"" << name << "\"\n";
  try {
    const auto d = policy.select(pd::parse_arch(name), ctx);
    RC_FAIL("unknown arch \"" + name + "\" got a decision: " + d.summary() + " (" + d.reason + ")");
  } catch (const pd::UnknownArchError& e) {
    RC_ASSERT(std::string(e.what()).find("\"" + name + "\"") != std::string::npos);
  }
}

// Any string: a parse error, an unknown-arch error, or a decision for a target the table knows.
// Never another exception, never a decision for an unknown target.
void any_name_is_decided_or_refused(const pd::Policy& policy) {
  // Biased towards names that parse: junk alone would only ever exercise the parser's refusals.
  const auto junk = rc::gen::container<std::string>(
      rc::gen::element('0', '1', '2', '4', '5', '9', 'a', 'x', 'f', 's', 'm', '_', ':', '+', '-', 'G', ' '));
  const auto flags = rc::gen::map(rc::gen::resize(5, rc::gen::unique<std::vector<std::string>>(gen_feature_name())),
                                  [](const std::vector<std::string>& ns) {
                                    std::string s;
                                    for (std::size_t i = 0; i < ns.size(); ++i) s += ":" + ns[i] + (i % 2 ? "+" : "-");
                                    return s;
                                  });
  const auto known = rc::gen::elementOf(pd::ArchTable::builtin().targets());
  const int shape = *rc::gen::element(0, 1, 2, 3, 4);
  std::string name;
  switch (shape) {
    case 0: name = *rc::gen::element<std::string>("", "gfx", "gfx9", "gfx94", "sm_", "sm_9") + *junk; break;
    case 1: name = *known + *junk; break;
    case 2: {
      name = *known;
      if (name.starts_with("gfx")) name += *flags;
      break;
    }
    case 3: name = "gfx" + std::to_string(*rc::gen::inRange(1, 2000)) + *flags; break;
    default: name = "sm_" + std::to_string(*rc::gen::inRange(10, 130)); break;
  }
  RC_LOG() << "arch name: \"" << name << "\"\n";
  try {
    const auto arch = pd::parse_arch(name);
    const bool is_known = pd::ArchTable::builtin().find(arch.target) != nullptr;
    try {
      const auto d = policy.select(arch, pd::Context{});
      RC_TAG("decided");
      RC_ASSERT(is_known);
      (void)d;
    } catch (const pd::UnknownArchError&) {
      RC_TAG("unknown");
      RC_ASSERT(!is_known);
    }
  } catch (const pd::ArchParseError& e) {
    RC_TAG("malformed");
    RC_ASSERT(e.text() == name);
  }
}

// Breaking a valid name in any of these ways makes it malformed.
void mutated_names_are_malformed() {
  const auto target = *rc::gen::elementOf(targets_of(pd::Vendor::amd));
  const auto names = *rc::gen::resize(4, rc::gen::unique<std::vector<std::string>>(gen_feature_name()));
  std::vector<std::string> flags;
  for (const auto& n : names) flags.push_back(n + (*rc::gen::arbitrary<bool>() ? "+" : "-"));
  auto join = [&](const std::vector<std::string>& fs) {
    std::string s = target;
    for (const auto& f : fs) s += ":" + f;
    return s;
  };
  const int kind = *rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7);
  std::string bad;
  switch (kind) {
    case 0: bad = join(flags) + ":"; break;                                   // trailing ':'
    case 1: bad = target + "::" + (flags.empty() ? "xnack-" : flags[0]); break;  // empty feature
    case 2: {                                                                 // a flag without its sign
      auto fs = flags;
      if (fs.empty()) fs.push_back("xnack-");
      const auto i = *rc::gen::inRange<std::size_t>(0, fs.size());
      fs[i].pop_back();
      bad = join(fs);
      break;
    }
    case 3: {                                                                 // a flag given twice
      auto fs = flags;
      if (fs.empty()) fs.push_back("sramecc+");
      fs.push_back(fs[*rc::gen::inRange<std::size_t>(0, fs.size())]);
      bad = join(fs);
      break;
    }
    case 4: {                                                                 // an uppercase letter
      bad = join(flags);
      std::vector<std::size_t> letters;
      for (std::size_t i = 0; i < bad.size(); ++i)
        if (bad[i] >= 'a' && bad[i] <= 'z') letters.push_back(i);
      const auto i = *rc::gen::elementOf(letters);
      bad[i] = static_cast<char>(bad[i] - 'a' + 'A');
      break;
    }
    case 5: {                                                                 // whitespace somewhere
      bad = join(flags);
      bad.insert(*rc::gen::inRange<std::size_t>(0, bad.size() + 1), 1, *rc::gen::element(' ', '\t', '\n'));
      break;
    }
    case 6: bad = "gfx" + join(flags).substr(target.size()); break;            // no processor id
    default: bad = "sm_" + std::to_string(*rc::gen::inRange(0, 10)); break;    // one cc digit
  }
  static const char* const kinds[] = {"trailing ':'", "empty feature", "flag without sign", "flag given twice",
                                      "uppercase",     "whitespace",    "no processor id",   "one cc digit"};
  RC_TAG(kinds[kind]);
  RC_LOG() << "mutated name: \"" << bad << "\"\n";
  RC_ASSERT_THROWS_AS(pd::parse_arch(bad), pd::ArchParseError);
}

}  // namespace

RC_GTEST_PROP(ArchProperties, FeatureFlagsNeverChangeADecision, ()) { flags_never_change_the_decision(pd::default_policy()); }

RC_GTEST_PROP(ArchProperties, UnknownTargetsAlwaysThrow, ()) { unknown_targets_always_throw(pd::default_policy()); }

RC_GTEST_PROP(ArchProperties, AnyNameIsDecidedOrRefused, ()) { any_name_is_decided_or_refused(pd::default_policy()); }

RC_GTEST_PROP(ArchProperties, MutatedNamesAreMalformed, ()) { mutated_names_are_malformed(); }

// The same properties against planted bugs: each must find a counterexample.
TEST(ArchPropertiesPlanted, FlagsPropertyCatchesAGuardOnTheFullName) {
  EXPECT_FALSE(rc::check("flags never change the decision (planted: guard on the full gcnArchName)",
                         [] { flags_never_change_the_decision(full_name_guard_policy()); }));
}

TEST(ArchPropertiesPlanted, UnknownTargetPropertyCatchesASilentFallback) {
  EXPECT_FALSE(rc::check("unknown targets always throw (planted: silent fallback)",
                         [] { unknown_targets_always_throw(unknown_arch_fallback_policy()); }));
}

TEST(ArchPropertiesPlanted, AnyNamePropertyCatchesASilentFallback) {
  EXPECT_FALSE(rc::check("any name is decided or refused (planted: silent fallback)",
                         [] { any_name_is_decided_or_refused(unknown_arch_fallback_policy()); }));
}
