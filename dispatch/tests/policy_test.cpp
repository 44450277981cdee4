#include <string>

#include <gtest/gtest.h>

#include "pmqa/dispatch/policy.hpp"
#include "pmqa/dispatch/trace.hpp"

namespace pd = pmqa::dispatch;
using pmqa::Fp8Format;
using pmqa::KvLayout;

namespace {

pd::Context ctx(bool present, std::int64_t bs, std::int64_t nn = 1, std::int64_t heads = 64) {
  return pd::Context{present, bs, nn, heads};
}

void expect_decision(const pd::Decision& d, pmqa::Path path, std::optional<Fp8Format> fmt, std::optional<KvLayout> layout,
                     const std::string& reason_part = "") {
  EXPECT_EQ(d.path, path) << d.summary() << " / " << d.reason;
  EXPECT_EQ(d.fp8, fmt) << d.summary();
  EXPECT_EQ(d.layout, layout) << d.summary();
  EXPECT_FALSE(d.reason.empty());
  if (!reason_part.empty()) {
    EXPECT_NE(d.reason.find(reason_part), std::string::npos) << d.reason;
  }
}

}  // namespace

TEST(DefaultPolicy, FusedOnGfx942AndGfx950WithTheirFormats) {
  expect_decision(pd::select("gfx942", ctx(true, 64)), pmqa::Path::fused, Fp8Format::e4m3fnuz, KvLayout::shuffle,
                  "SHUFFLE because block_size 64 > 1");
  expect_decision(pd::select("gfx942", ctx(true, 1)), pmqa::Path::fused, Fp8Format::e4m3fnuz, KvLayout::normal,
                  "block_size is 1");
  expect_decision(pd::select("gfx950", ctx(true, 16)), pmqa::Path::fused, Fp8Format::e4m3fn, KvLayout::shuffle);
  expect_decision(pd::select("gfx950:sramecc+:xnack-", ctx(true, 64, 2)), pmqa::Path::fused, Fp8Format::e4m3fn,
                  KvLayout::shuffle);
}

TEST(DefaultPolicy, ShuffleNeedsBlockSizeMultipleOf16) {
  expect_decision(pd::select("gfx942", ctx(true, 8)), pmqa::Path::unsupported, std::nullopt, std::nullopt,
                  "block_size % 16 == 0, got block_size 8");
  expect_decision(pd::select("gfx950", ctx(true, 32)), pmqa::Path::fused, Fp8Format::e4m3fn, KvLayout::shuffle);
}

TEST(DefaultPolicy, OtherRocmArchsWithFp8TakeTwoStageNormal) {
  for (const char* a : {"gfx940", "gfx941", "gfx1200", "gfx1201", "gfx1250"})
    for (std::int64_t bs : {1, 16, 64})
      expect_decision(pd::select(a, ctx(true, bs)), pmqa::Path::two_stage, pd::ArchTable::builtin().at(a).fp8,
                      KvLayout::normal, "not in the fused guard");
}

TEST(DefaultPolicy, Gfx1250ReasonRecordsTheUnusedAiterKernel) {
  const auto d = pd::select("gfx1250", ctx(true, 64));
  EXPECT_NE(d.reason.find("AITER itself ships a fused kernel for gfx1250"), std::string::npos) << d.reason;
  const auto d2 = pd::select("gfx1201", ctx(true, 64));
  EXPECT_EQ(d2.reason.find("ships a fused kernel"), std::string::npos) << d2.reason;
}

TEST(DefaultPolicy, AiterAbsentFallsBackToTheReference) {
  for (const char* a : {"gfx940", "gfx942", "gfx950", "gfx1201", "gfx1250"})
    expect_decision(pd::select(a, ctx(false, 64)), pmqa::Path::reference_fallback, pd::ArchTable::builtin().at(a).fp8,
                    KvLayout::normal, "AITER is absent");
}

TEST(DefaultPolicy, ArchsWithoutFp8AreUnsupported) {
  for (const char* a : {"gfx90a", "gfx90a:xnack+", "gfx1100", "gfx1101"})
    for (bool present : {true, false})
      expect_decision(pd::select(a, ctx(present, 64)), pmqa::Path::unsupported, std::nullopt, std::nullopt, "no fp8");
}

TEST(DefaultPolicy, NvidiaDeepGemmWithinItsLimits) {
  for (const char* a : {"sm_90", "sm_100"})
    for (std::int64_t nn : {1, 2})
      for (std::int64_t heads : {32, 64})
        expect_decision(pd::select(a, ctx(true, 64, nn, heads)), pmqa::Path::fused, Fp8Format::e4m3fn, KvLayout::normal,
                        "DeepGEMM present");
  expect_decision(pd::select(pd::arch_from_compute_capability(9, 0), ctx(true, 64)), pmqa::Path::fused,
                  Fp8Format::e4m3fn, KvLayout::normal);
}

TEST(DefaultPolicy, NvidiaOutsideDeepGemmLimitsIsUnsupportedNamingTheLimit) {
  expect_decision(pd::select("sm_90", ctx(true, 16)), pmqa::Path::unsupported, std::nullopt, std::nullopt,
                  "block_size 64 only (got 16)");
  expect_decision(pd::select("sm_90", ctx(true, 64, 3)), pmqa::Path::unsupported, std::nullopt, std::nullopt,
                  "next_n 1 or 2 only (got 3)");
  expect_decision(pd::select("sm_100", ctx(true, 64, 1, 128)), pmqa::Path::unsupported, std::nullopt, std::nullopt,
                  "heads 32 or 64 only (got 128)");
  const auto all = pd::select("sm_100", ctx(true, 1, 4, 16));
  for (const char* part : {"block_size 64", "next_n 1 or 2", "heads 32 or 64"})
    EXPECT_NE(all.reason.find(part), std::string::npos) << all.reason;
}

TEST(DefaultPolicy, NvidiaWithoutDeepGemmOrOnSm89FallsBack) {
  expect_decision(pd::select("sm_90", ctx(false, 64)), pmqa::Path::reference_fallback, Fp8Format::e4m3fn,
                  KvLayout::normal, "DeepGEMM is absent");
  expect_decision(pd::select("sm_89", ctx(true, 64)), pmqa::Path::reference_fallback, Fp8Format::e4m3fn,
                  KvLayout::normal, "sm_90, sm_100 only");
  expect_decision(pd::select("sm_89", ctx(true, 16, 3)), pmqa::Path::reference_fallback, Fp8Format::e4m3fn,
                  KvLayout::normal);
}

TEST(DefaultPolicy, UnknownArchIsAnErrorNeverAFallback) {
  for (const char* a : {"gfx1300", "gfx908", "sm_80", "sm_120", "gfx942-generic"})
    for (bool present : {true, false}) EXPECT_THROW(pd::select(a, ctx(present, 64)), pd::UnknownArchError) << a;
  EXPECT_THROW(pd::select("gfx942:", ctx(true, 64)), pd::ArchParseError);
}

TEST(DefaultPolicy, InvalidContextNamesTheField) {
  try {
    (void)pd::select("gfx942", ctx(true, 0));
    FAIL();
  } catch (const pd::ContextError& e) {
    EXPECT_NE(std::string(e.what()).find("block_size must be >= 1, got 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pd::select("gfx942", ctx(true, 64, 0)), pd::ContextError);
  EXPECT_THROW(pd::select("gfx942", ctx(true, 64, 1, -1)), pd::ContextError);
}

TEST(DefaultPolicy, GuardOptionsModelOtherGuards) {
  // The guard before vLLM PR 42062 named only gfx942.
  const pd::DefaultPolicy pre_fix(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}}, pd::ArchTable::builtin(),
                                  "pre-fix");
  expect_decision(pre_fix.select(pd::parse_arch("gfx950"), ctx(true, 64)), pmqa::Path::two_stage, Fp8Format::e4m3fn,
                  KvLayout::normal, "AITER itself ships a fused kernel for gfx950");
  expect_decision(pre_fix.select(pd::parse_arch("gfx942"), ctx(true, 64)), pmqa::Path::fused, Fp8Format::e4m3fnuz,
                  KvLayout::shuffle);
  // Options naming a target the table lacks, of the wrong vendor, or without fp8 are refused.
  EXPECT_THROW(pd::DefaultPolicy(pd::DefaultPolicyOptions{{"gfx1300"}, {}}), pd::ArchTableError);
  EXPECT_THROW(pd::DefaultPolicy(pd::DefaultPolicyOptions{{"sm_90"}, {}}), pd::ArchTableError);
  EXPECT_THROW(pd::DefaultPolicy(pd::DefaultPolicyOptions{{"gfx90a"}, {}}), pd::ArchTableError);
  EXPECT_THROW(pd::DefaultPolicy(pd::DefaultPolicyOptions{{}, {"gfx942"}}), pd::ArchTableError);
}

// Planted faults in an injected policy's decisions are caught by Policy::select, not passed on.
TEST(PolicyInterface, MalformedDecisionsAreRefused) {
  auto returning = [](pd::Decision d) {
    return pd::FunctionPolicy("planted", [d](const pd::Arch&, const pd::Context&) { return d; });
  };
  const auto arch = pd::parse_arch("gfx942");
  EXPECT_THROW(returning(pd::Decision{pmqa::Path::fused, Fp8Format::e4m3fnuz, KvLayout::normal, "", 0, ""}).select(arch, {}),
               pd::PolicyError)
      << "empty reason";
  EXPECT_THROW(returning(pd::Decision{pmqa::Path::fused, std::nullopt, KvLayout::normal, "r", 0, ""}).select(arch, {}),
               pd::PolicyError)
      << "runnable without a format";
  EXPECT_THROW(returning(pd::Decision{pmqa::Path::two_stage, Fp8Format::e4m3fn, std::nullopt, "r", 0, ""}).select(arch, {}),
               pd::PolicyError)
      << "runnable without a layout";
  EXPECT_THROW(returning(pd::Decision{pmqa::Path::unsupported, Fp8Format::e4m3fn, std::nullopt, "r", 0, ""}).select(arch, {}),
               pd::PolicyError)
      << "unsupported with a format";
  const auto ok = returning(pd::Decision{pmqa::Path::two_stage, Fp8Format::e4m3fn, KvLayout::normal, "r", 0, ""});
  EXPECT_EQ(ok.select(arch, {}).path, pmqa::Path::two_stage);
  EXPECT_THROW(pd::FunctionPolicy("empty", nullptr), std::invalid_argument);
}

TEST(PolicyInterface, InjectedPolicyIsUsedAndTraced) {
  const pd::FunctionPolicy always_two_stage("always two-stage", [](const pd::Arch& a, const pd::Context&) {
    return pd::Decision{pmqa::Path::two_stage, Fp8Format::e4m3fn, KvLayout::normal, "test policy for " + a.target, 0, ""};
  });
  pd::ScopedTraceRecorder rec;
  const auto d = pd::select("gfx950", ctx(true, 64), always_two_stage);
  EXPECT_EQ(d.path, pmqa::Path::two_stage);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec.entries()[0].policy, "always two-stage");
  EXPECT_EQ(rec.entries()[0].decision.reason, "test policy for gfx950");
}

TEST(LayoutCheck, ReadableOnlyWithTheLayoutThePathReads) {
  const auto fused = pd::select("gfx942", ctx(true, 64));
  EXPECT_TRUE(pd::can_read(fused, KvLayout::shuffle));
  EXPECT_FALSE(pd::can_read(fused, KvLayout::normal));
  EXPECT_NO_THROW(pd::require_readable(fused, KvLayout::shuffle));
  try {
    pd::require_readable(fused, KvLayout::normal);
    FAIL() << "fused (SHUFFLE) accepted a NORMAL cache";
  } catch (const pd::LayoutMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("path fused reads SHUFFLE, the cache is NORMAL"), std::string::npos)
        << e.what();
  }
  const auto two_stage = pd::select("gfx1201", ctx(true, 64));
  try {
    pd::require_readable(two_stage, KvLayout::shuffle);
    FAIL() << "two-stage (NORMAL) accepted a SHUFFLE cache";
  } catch (const pd::LayoutMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("path two-stage reads NORMAL, the cache is SHUFFLE"), std::string::npos)
        << e.what();
  }
  const auto none = pd::select("gfx90a", ctx(true, 64));
  EXPECT_FALSE(pd::can_read(none, KvLayout::normal));
  EXPECT_THROW(pd::require_readable(none, KvLayout::normal), pd::LayoutMismatchError);
}

TEST(Names, PathsRoundTrip) {
  for (auto p : {pmqa::Path::fused, pmqa::Path::two_stage, pmqa::Path::reference_fallback, pmqa::Path::unsupported})
    EXPECT_EQ(pmqa::parse_path(pd::to_string(p)), p);
  EXPECT_EQ(pmqa::parse_path("two_stage"), pmqa::Path::two_stage);
  EXPECT_THROW(pmqa::parse_path("fast"), std::invalid_argument);
  EXPECT_EQ(pd::describe(ctx(false, 16, 2, 32), pd::Vendor::amd), "AITER absent, block_size 16, next_n 2, heads 32");
  EXPECT_EQ(pd::describe(ctx(true, 64), pd::Vendor::nvidia), "DeepGEMM present, block_size 64, next_n 1, heads 64");
}
