#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/dispatch/matrix.hpp"

namespace pd = pmqa::dispatch;
using nlohmann::json;

namespace {

std::string matrix_text(const json& rows) {
  return json{{"schema", "pmqa-arch-matrix/1"}, {"description", "test"}, {"rows", rows}}.dump();
}

std::string parse_error(const json& rows) {
  try {
    (void)pd::ArchMatrix::parse(matrix_text(rows), "m.json");
  } catch (const pd::MatrixError& e) {
    return e.what();
  }
  return "";
}

json row(const std::string& arch, const std::string& kernels = "present", int bs = 64, int nn = 1) {
  return json{{"arch", arch}, {"kernels", kernels}, {"block_size", bs}, {"next_n", nn}};
}

json with(json r, const json& extra) {
  r.update(extra);
  return r;
}

}  // namespace

TEST(MatrixFile, BuiltinParses) {
  const auto& m = pd::ArchMatrix::builtin();
  EXPECT_EQ(m.source, "fixtures/arch_matrix.json");
  EXPECT_GE(m.rows.size(), 156u);
  EXPECT_FALSE(m.description.empty());
}

TEST(MatrixFile, RowsParse) {
  const auto m = pd::ArchMatrix::parse(
      matrix_text(json::array({with(row("gfx950"), {{"path", "fused"}, {"fp8", "e4m3fn"}, {"layout", "shuffle"}}),
                               with(row("gfx90a", "absent", 16, 2), {{"path", "unsupported"}, {"heads", 32},
                                                                     {"reason_contains", "no fp8"}, {"note", "n"}}),
                               with(row("gfx1300"), {{"error", "unknown-arch"}})})),
      "m.json");
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].path, pmqa::Path::fused);
  EXPECT_EQ(m.rows[0].layout, pmqa::KvLayout::shuffle);
  EXPECT_EQ(m.rows[1].context, (pd::Context{false, 16, 2, 32}));
  EXPECT_EQ(m.rows[1].reason_contains, "no fp8");
  EXPECT_EQ(m.rows[2].error, pd::ExpectedError::unknown_arch);
  EXPECT_EQ(m.rows[0].describe(), "gfx950 (MI350X/MI355X), AITER present, block_size 64, next_n 1");
  EXPECT_EQ(m.rows[1].describe(), "gfx90a (MI210/MI250/MI250X), AITER absent, block_size 16, next_n 2, heads 32");
  EXPECT_EQ(m.rows[2].describe(), "gfx1300 (not in the arch table), AITER present, block_size 64, next_n 1");
  EXPECT_EQ(m.rows[0].expected_text(), "fused, e4m3fn, SHUFFLE");
  EXPECT_EQ(m.rows[2].expected_text(), "error unknown-arch");
}

// A reviewed data file must not pass a typo silently.
TEST(MatrixFile, MalformedRowsAreErrorsNamingTheRowAndField) {
  struct Case {
    const char* what;
    json rows;
    std::string part;
  };
  const json fused = {{"path", "fused"}, {"fp8", "e4m3fn"}, {"layout", "shuffle"}};
  const std::vector<Case> cases = {
      {"typo in field", json::array({with(row("gfx950"), {{"path", "fused"}, {"fp8", "e4m3fn"}, {"layuot", "shuffle"}})}),
       "row 0 (\"gfx950\"): field \"layout\" is missing"},
      {"unknown field", json::array({with(with(row("gfx950"), fused), {{"expected", 1}})}), "unknown field \"expected\""},
      {"bad path", json::array({with(row("gfx950"), {{"path", "fast"}})}), "field \"path\""},
      {"bad kernels", json::array({with(with(row("gfx950", "yes"), fused), json::object())}), "field \"kernels\""},
      {"runnable without fp8", json::array({with(row("gfx950"), {{"path", "fused"}, {"layout", "normal"}})}),
       "field \"fp8\" is missing"},
      {"unsupported with layout", json::array({with(row("gfx90a"), {{"path", "unsupported"}, {"layout", "normal"}})}),
       "cannot be given for an unsupported path"},
      {"error with path", json::array({with(row("gfx1300"), {{"error", "unknown-arch"}, {"path", "fused"}})}),
       "cannot be given with \"error\""},
      {"bad error", json::array({with(row("gfx1300"), {{"error", "unknown"}})}), "field \"error\""},
      {"zero block", json::array({with(row("gfx950", "present", 0), fused)}), "\"block_size\" must be >= 1"},
      {"duplicate", json::array({with(row("gfx950"), fused), with(row("gfx950"), fused)}), "repeats the arch and context of row 0"},
      {"empty", json::array(), "\"rows\""},
      {"not an object", json::array({7}), "row 0: must be a JSON object"},
  };
  for (const auto& c : cases) {
    const std::string message = parse_error(c.rows);
    ASSERT_FALSE(message.empty()) << c.what << ": accepted";
    EXPECT_NE(message.find(c.part), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find("m.json"), std::string::npos) << message;
  }
  EXPECT_THROW((void)pd::ArchMatrix::load("/nonexistent/arch_matrix.json"), pd::MatrixError);
  EXPECT_THROW((void)pd::ArchMatrix::parse("[", "x"), pd::MatrixError);
}

// "engine_rows": an engine's own decisions, validated as strictly as "rows" but never checked against
// pmqa's policy.
TEST(MatrixFile, EngineRowsParse) {
  const json base = json::array({with(row("gfx942", "present", 8), {{"path", "unsupported"}, {"reason_contains", "16"}})});
  const json engine = json::array(
      {{{"engine", "vllm"}, {"arch", "gfx942"}, {"kernels", "present"}, {"kernels_enabled", false}, {"block_size", 64},
        {"next_n", 1}, {"path", "reference-fallback"}, {"fp8", "e4m3fnuz"}, {"layout", "normal"}, {"reason", "switch off"}},
       {{"engine", "vllm"}, {"arch", "gfx950"}, {"kernels", "absent"}, {"block_size", 64}, {"next_n", 2},
        {"entry_kwargs", {{"compress_ratio", 4}}}, {"path", "fused"}, {"fp8", "e4m3fn"}, {"layout", "normal"},
        {"entry", "vllm-triton"}, {"reason", "C4A"}, {"note", "n"}},
       {{"engine", "vllm"}, {"arch", "gfx942"}, {"kernels", "present"}, {"block_size", 8}, {"next_n", 1},
        {"path", "fused"}, {"fp8", "e4m3fnuz"}, {"layout", "shuffle"}, {"replaces_policy_row", true}, {"reason", "r"}}});
  const auto m = pd::ArchMatrix::parse(
      json{{"schema", "pmqa-arch-matrix/1"}, {"rows", base}, {"engine_rows", engine}}.dump(), "m.json");
  ASSERT_EQ(m.rows.size(), 1u);
  ASSERT_EQ(m.engine_rows.size(), 3u);
  const auto& off = m.engine_rows[0];
  EXPECT_EQ(off.engine, "vllm");
  EXPECT_FALSE(off.kernels_enabled);
  EXPECT_EQ(off.path, pmqa::Path::reference_fallback);
  EXPECT_EQ(off.describe(), "vllm: gfx942 (MI300X/MI300A/MI325X), AITER present, switched off, block_size 64, next_n 1");
  const auto& c4a = m.engine_rows[1];
  EXPECT_EQ(c4a.entry_kwargs.at("compress_ratio"), "4");
  EXPECT_EQ(c4a.entry, "vllm-triton");
  EXPECT_EQ(c4a.context, (pd::Context{false, 64, 2, 64}));
  EXPECT_EQ(c4a.describe(), "vllm: gfx950 (MI350X/MI355X), AITER absent, block_size 64, next_n 2, compress_ratio=4");
  EXPECT_TRUE(m.engine_rows[2].replaces_policy_row);
  // pmqa's own check sees only "rows".
  EXPECT_EQ(pd::check_matrix(m, pd::default_policy()).results.size(), 1u);
}

TEST(MatrixFile, MalformedEngineRowsAreErrorsNamingTheRowAndField) {
  const json ok = {{"engine", "vllm"}, {"arch", "gfx950"}, {"kernels", "present"}, {"block_size", 64}, {"next_n", 1},
                   {"entry_kwargs", {{"compress_ratio", 4}}}, {"path", "fused"}, {"fp8", "e4m3fn"},
                   {"layout", "normal"}, {"reason", "C4A"}};
  const json base = json::array({with(row("gfx950"), {{"path", "fused"}, {"fp8", "e4m3fn"}, {"layout", "shuffle"}})});
  auto error_of = [&](const json& engine_rows) -> std::string {
    try {
      (void)pd::ArchMatrix::parse(json{{"schema", "pmqa-arch-matrix/1"}, {"rows", base}, {"engine_rows", engine_rows}}.dump(),
                                  "m.json");
    } catch (const pd::MatrixError& e) {
      return e.what();
    }
    return "";
  };
  auto without = [](json r, const char* key) {
    r.erase(key);
    return r;
  };
  struct Case {
    const char* what;
    json rows;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"no reason", json::array({without(ok, "reason")}), "engine row 0 (\"gfx950\"): field \"reason\" is missing"},
      {"empty reason", json::array({with(ok, {{"reason", ""}})}), "field \"reason\" is empty"},
      {"no engine", json::array({without(ok, "engine")}), "field \"engine\" is missing"},
      {"engine name", json::array({with(ok, {{"engine", "vLLM"}})}), "lowercase adapter name"},
      {"unknown field", json::array({with(ok, {{"compress_ratio", 4}})}), "unknown field \"compress_ratio\""},
      {"kwarg value", json::array({with(ok, {{"entry_kwargs", {{"compress_ratio", 4.5}}}})}), "value of \"compress_ratio\""},
      {"empty kwargs", json::array({with(ok, {{"entry_kwargs", json::object()}})}), "non-empty object"},
      {"switch off, absent", json::array({with(ok, {{"kernels", "absent"}, {"kernels_enabled", false}})}),
       "can be false only when the kernels are present"},
      {"error row", json::array({with(ok, {{"error", "unknown-arch"}})}), "is not for engine rows"},
      {"unsupported with fp8", json::array({with(ok, {{"path", "unsupported"}})}), "cannot be given for an unsupported path"},
      {"duplicate", json::array({ok, ok}), "repeats the engine, arch and context of engine row 0"},
      {"silent override", json::array({without(ok, "entry_kwargs")}),
       "has the arch and context of row 0: set \"replaces_policy_row\""},
      {"override of nothing", json::array({with(ok, {{"replaces_policy_row", true}})}),
       "\"replaces_policy_row\" is set but no row of \"rows\" has this arch and context"},
      {"empty section", json::array(), "\"engine_rows\" must be a non-empty array"},
  };
  EXPECT_EQ(error_of(json::array({ok})), "");
  for (const auto& c : cases) {
    const std::string message = error_of(c.rows);
    ASSERT_FALSE(message.empty()) << c.what << ": accepted";
    EXPECT_NE(message.find(c.part), std::string::npos) << c.what << ": " << message;
  }
}

TEST(MatrixCheck, MessagesAReviewerReadsAtAGlance) {
  const auto m = pd::ArchMatrix::parse(
      matrix_text(json::array({with(row("gfx950"), {{"path", "fused"}, {"fp8", "e4m3fn"}, {"layout", "shuffle"}}),
                               with(row("gfx1300"), {{"error", "unknown-arch"}}),
                               with(row("sm_90", "present", 16), {{"path", "unsupported"}, {"reason_contains", "block_size 64"}}),
                               with(row("sm_90", "present", 64, 3), {{"path", "unsupported"}, {"reason_contains", "heads"}})})),
      "m.json");
  const pd::DefaultPolicy pre_fix(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}}, pd::ArchTable::builtin(),
                                  "pre-fix");
  const auto report = pd::check_matrix(m, pre_fix);
  ASSERT_EQ(report.results.size(), 4u);
  EXPECT_FALSE(report.results[0].pass);
  EXPECT_EQ(report.results[0].message.rfind(
                "gfx950 (MI350X/MI355X), AITER present, block_size 64, next_n 1: expected fused, e4m3fn, SHUFFLE, "
                "got two-stage, e4m3fn, NORMAL (reason: AITER present but gfx950 is not in the fused guard",
                0),
            0u)
      << report.results[0].message;
  EXPECT_TRUE(report.results[1].pass) << report.results[1].message;
  EXPECT_EQ(report.results[1].actual_error, pd::ExpectedError::unknown_arch);
  EXPECT_TRUE(report.results[2].pass) << report.results[2].message;
  EXPECT_FALSE(report.results[3].pass) << "the reason names next_n, not heads";
  EXPECT_NE(report.results[3].message.find("with a reason naming \"heads\""), std::string::npos)
      << report.results[3].message;
  EXPECT_EQ(report.failures(), 2u);
  EXPECT_EQ(report.summary(), "arch matrix m.json against policy \"pre-fix\": 4 rows, 2 failed");
  EXPECT_NE(report.failure_text().find("gfx950"), std::string::npos);
}

TEST(MatrixCheck, ErrorRowsFailWhenAPolicyDecidesInstead) {
  const auto m = pd::ArchMatrix::parse(matrix_text(json::array({with(row("gfx1300"), {{"error", "unknown-arch"}})})), "m");
  const pd::FunctionPolicy fallback("silent fallback", [](const pd::Arch&, const pd::Context&) {
    return pd::Decision{pmqa::Path::reference_fallback, pmqa::Fp8Format::e4m3fn, pmqa::KvLayout::normal, "fallback", 0, ""};
  });
  const auto r = pd::check_matrix(m, fallback).results.at(0);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.message.find("expected error unknown-arch, got reference-fallback, e4m3fn, NORMAL (reason: fallback)"),
            std::string::npos)
      << r.message;
}

TEST(MatrixCheck, NumericHookRunsForRunnableDecisionsOnly) {
  const auto& m = pd::ArchMatrix::builtin();
  std::size_t calls = 0, runnable_rows = 0;
  for (const auto& r : pd::check_matrix(m, pd::default_policy()).results)
    if (r.actual && r.actual->runnable()) ++runnable_rows;
  const auto report = pd::check_matrix(m, pd::default_policy(), pd::ArchTable::builtin(),
                                       [&](const pd::MatrixRow& row, const pd::Decision& d) {
                                         ++calls;
                                         EXPECT_TRUE(d.runnable());
                                         EXPECT_EQ(d.path, row.path);
                                         return pd::NumericResult{true, "matched the reference"};
                                       });
  EXPECT_TRUE(report.passed()) << report.failure_text();
  EXPECT_EQ(calls, runnable_rows);
  EXPECT_GT(calls, 0u);

  // A failing or throwing numeric half fails the row, with its message.
  const auto failing = pd::check_matrix(m, pd::default_policy(), pd::ArchTable::builtin(),
                                        [](const pd::MatrixRow& row, const pd::Decision&) -> pd::NumericResult {
                                          if (row.arch == "gfx950") return {false, "row 3 column 17 differs"};
                                          if (row.arch == "sm_90") throw std::runtime_error("launch failed");
                                          return {true, ""};
                                        });
  EXPECT_FALSE(failing.passed());
  for (const auto* r : failing.failed()) {
    EXPECT_TRUE(r->row.arch == "gfx950" || r->row.arch == "sm_90") << r->message;
    EXPECT_TRUE(r->message.find("numeric check of") != std::string::npos) << r->message;
  }
  EXPECT_NE(failing.failure_text().find("launch failed"), std::string::npos);
  EXPECT_NE(failing.failure_text().find("row 3 column 17 differs"), std::string::npos);
}

TEST(MatrixCheck, MissingGridRowsShowATargetWithoutExpectations) {
  EXPECT_TRUE(pd::missing_grid_rows(pd::ArchMatrix::builtin()).empty());
  auto m = pd::ArchMatrix::builtin();
  std::erase_if(m.rows, [](const pd::MatrixRow& r) {
    return r.arch == "gfx1250" && !r.context.kernels_present && r.context.block_size == 16;
  });
  const auto missing = pd::missing_grid_rows(m);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0], "gfx1250, AITER absent, block_size 16, next_n 1");
}

TEST(MatrixCheck, UnusedFusedKernelsIsTheGfx1250Observation) {
  const auto unused = pd::unused_fused_kernels(pd::default_policy());
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0].rfind("gfx1250", 0), 0u) << unused[0];
  const pd::DefaultPolicy pre_fix(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}});
  EXPECT_EQ(pd::unused_fused_kernels(pre_fix).size(), 2u) << "pre-fix: gfx950 too";
}
