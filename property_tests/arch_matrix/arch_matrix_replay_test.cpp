// Regression replays: inject a policy with a known bug and show the matrix check fails on exactly
// the rows that bug affects, with messages that name the rows.
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "arch_matrix_support.hpp"

namespace pd = pmqa::dispatch;
using namespace pmqa::arch_matrix_test;

namespace {

const pd::ArchMatrix& matrix() { return pd::ArchMatrix::builtin(); }

std::string show(const pd::MatrixReport& r) { return r.summary() + "\n" + r.failure_text(); }

}  // namespace

// Bug class 1 (vLLM PR 42062): the guard names only gfx942, so MI355X runs the slow two-stage path.
TEST(RegressionReplay, PreFixGuardFailsTheGfx950RowsAndOnlyThose) {
  const auto report = pd::check_matrix(matrix(), pre_fix_policy());
  const auto expected = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return target_of(r) == "gfx950" && r.context.kernels_present && r.error == pd::ExpectedError::none;
  });
  ASSERT_GE(expected.size(), 6u);
  EXPECT_EQ(failed_rows(report), expected) << show(report);
  for (const auto* r : report.failed()) {
    EXPECT_NE(r->message.find("gfx950"), std::string::npos) << r->message;
    EXPECT_NE(r->message.find("MI355X"), std::string::npos) << r->message;
    EXPECT_NE(r->message.find("got two-stage"), std::string::npos) << r->message;
  }
  std::cout << show(report);
}

// "An unknown arch must be an explicit error, never a silent fallback."
TEST(RegressionReplay, UnknownArchSilentFallbackFailsTheUnknownArchRows) {
  const auto report = pd::check_matrix(matrix(), unknown_arch_fallback_policy());
  const auto expected =
      rows_where(matrix(), [](const pd::MatrixRow& r) { return r.error == pd::ExpectedError::unknown_arch; });
  ASSERT_GE(expected.size(), 2u);
  EXPECT_EQ(failed_rows(report), expected) << show(report);
  for (const auto* r : report.failed())
    EXPECT_NE(r->message.find("expected error unknown-arch, got reference-fallback"), std::string::npos) << r->message;
}

// Bug class 6: SHUFFLE vs NORMAL confusion, a silent wrong answer.
TEST(RegressionReplay, NormalOnAShuffleCacheFailsEveryShuffleRow) {
  const auto report = pd::check_matrix(matrix(), normal_on_shuffle_policy());
  const auto expected = rows_where(matrix(), [](const pd::MatrixRow& r) { return r.layout == pmqa::KvLayout::shuffle; });
  ASSERT_GE(expected.size(), 8u);
  EXPECT_EQ(failed_rows(report), expected) << show(report);
  for (const auto* r : report.failed())
    EXPECT_NE(r->message.find("SHUFFLE, got fused"), std::string::npos) << r->message;

  // And the layout check refuses to run such a decision on the cache vLLM's ROCm writer produced.
  const auto d = normal_on_shuffle_policy().select(pd::parse_arch("gfx942"), pd::Context{true, 64, 1, 64});
  try {
    pd::require_readable(d, pmqa::KvLayout::shuffle);
    FAIL() << "NORMAL decision accepted a SHUFFLE cache";
  } catch (const pd::LayoutMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("path fused reads NORMAL, the cache is SHUFFLE"), std::string::npos) << e.what();
  }
}

// Bug class 2 (AITER 3604, 2323): enabling a new arch breaks an old one. The gfx1250 guard edit
// dropped gfx942: every gfx942 row with AITER present fails (and the gfx1250 rows, which the
// reviewed matrix still expects on two-stage: a deliberate policy change must edit the matrix too).
TEST(RegressionReplay, NewArchEditThatDropsGfx942FromTheGuardFails) {
  const auto report = pd::check_matrix(matrix(), gfx1250_edit_drops_gfx942_policy());
  const auto gfx942_present = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return target_of(r) == "gfx942" && r.context.kernels_present && r.error == pd::ExpectedError::none;
  });
  const auto gfx1250_present = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return target_of(r) == "gfx1250" && r.context.kernels_present;
  });
  std::set<std::size_t> expected = gfx942_present;
  expected.insert(gfx1250_present.begin(), gfx1250_present.end());
  EXPECT_EQ(failed_rows(report), expected) << show(report);
  std::size_t gfx942_messages = 0;
  for (const auto* r : report.failed())
    if (r->message.rfind("gfx942", 0) == 0) ++gfx942_messages;
  EXPECT_EQ(gfx942_messages, gfx942_present.size());
}

// Bug class 2 + 3: a table edit for gfx1250 that flips gfx942's fp8 format to OCP. Every runnable
// gfx942 row fails (AITER present or not: the format is wrong everywhere), plus the gfx1250 rows.
TEST(RegressionReplay, NewArchEditThatFlipsGfx942FormatFails) {
  const auto report = pd::check_matrix(matrix(), gfx1250_edit_flips_gfx942_format_policy());
  std::set<std::size_t> expected = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return (target_of(r) == "gfx942" && r.fp8.has_value()) || (target_of(r) == "gfx1250" && r.context.kernels_present);
  });
  EXPECT_EQ(failed_rows(report), expected) << show(report);
  bool saw = false;
  for (const auto* r : report.failed())
    if (r->message.find("expected fused, e4m3fnuz, SHUFFLE, got fused, e4m3fn, SHUFFLE") != std::string::npos) saw = true;
  EXPECT_TRUE(saw) << show(report);
}

// Feature flags must not matter: a guard comparing the whole gcnArchName misses "gfx942:sramecc+:xnack-".
TEST(RegressionReplay, GuardOnTheFullArchNameFailsTheFlaggedRows) {
  const auto report = pd::check_matrix(matrix(), full_name_guard_policy());
  const auto expected = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return r.arch.find(':') != std::string::npos && r.path == pmqa::Path::fused;
  });
  ASSERT_GE(expected.size(), 3u);
  EXPECT_EQ(failed_rows(report), expected) << show(report);
}

// A check that cannot fail is a test that lies (bug class 11): a policy that throws everywhere fails
// every row that expects a decision, and the right policy fails none.
TEST(RegressionReplay, ABrokenPolicyFailsEveryDecisionRow) {
  const pd::FunctionPolicy broken("throws", [](const pd::Arch&, const pd::Context&) -> pd::Decision {
    throw std::runtime_error("kernel library import failed");
  });
  const auto report = pd::check_matrix(matrix(), broken);
  const auto expected = rows_where(matrix(), [](const pd::MatrixRow& r) {
    return r.error != pd::ExpectedError::malformed_arch;
  });
  EXPECT_EQ(failed_rows(report), expected);
  EXPECT_NE(report.failure_text().find("got error other: kernel library import failed"), std::string::npos)
      << show(report);
  EXPECT_TRUE(pd::check_matrix(matrix(), pd::default_policy()).passed());
}
