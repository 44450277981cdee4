// Every row of fixtures/arch_matrix.json against the default policy: one test per row (so a CI log
// names the row), and one table test that lists every failure at once.
#include <cctype>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch_matrix_support.hpp"
#include "pmqa/checks/checks.hpp"

namespace pd = pmqa::dispatch;
using namespace pmqa::arch_matrix_test;

namespace {

// Row indices for the parameterised test; an unparsable matrix gives none (MatrixFile.Parses fails).
std::vector<std::size_t> row_indices() {
  std::vector<std::size_t> out;
  try {
    for (const auto& r : pd::ArchMatrix::builtin().rows) out.push_back(r.index);
  } catch (const std::exception&) {
  }
  return out;
}

std::string test_name(const testing::TestParamInfo<std::size_t>& info) {
  const auto& r = pd::ArchMatrix::builtin().rows.at(info.param);
  std::string arch;
  for (char c : r.arch) arch += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (arch.empty()) arch = "empty";
  std::string name = "row" + std::to_string(r.index) + "_" + arch + (r.context.kernels_present ? "_kernels" : "_nokernels") +
                     "_bs" + std::to_string(r.context.block_size) + "_nn" + std::to_string(r.context.next_n);
  if (r.context.heads != 64) name += "_h" + std::to_string(r.context.heads);
  return name;
}

class MatrixRowTest : public testing::TestWithParam<std::size_t> {};

}  // namespace

TEST(MatrixFile, Parses) { EXPECT_NO_THROW((void)pd::ArchMatrix::builtin()); }

TEST_P(MatrixRowTest, MatchesDefaultPolicy) {
  const auto& row = pd::ArchMatrix::builtin().rows.at(GetParam());
  const auto result = pd::check_row(row, pd::default_policy());
  EXPECT_TRUE(result.pass) << result.message;
  if (!row.note.empty()) RecordProperty("note", row.note);
}

INSTANTIATE_TEST_SUITE_P(ArchMatrix, MatrixRowTest, testing::ValuesIn(row_indices()), test_name);

// checks::arch_matrix, the check the gauntlet runs on its dispatch mutants.
TEST(ArchMatrix, EveryRowMatchesTheDefaultPolicy) {
  const pmqa::checks::Finding f = pmqa::checks::arch_matrix(pd::default_policy());
  EXPECT_FALSE(f.caught) << f.evidence;
  EXPECT_GE(f.cases_run, 13 * 2 * 3 * 2);
}

// The matrix covers the full grid for every arch of the table: a target added to the table without
// expected rows fails here.
TEST(ArchMatrix, CoversEveryTableArchOnTheFullGrid) {
  const auto missing = pd::missing_grid_rows(pd::ArchMatrix::builtin());
  std::string text;
  for (const auto& m : missing) text += "  " + m + "\n";
  EXPECT_TRUE(missing.empty()) << "rows missing from fixtures/arch_matrix.json:\n" << text;
}

// The matrix has the negative rows the issue asks for.
TEST(ArchMatrix, HasNegativeRows) {
  const auto& m = pd::ArchMatrix::builtin();
  EXPECT_FALSE(rows_where(m, [](const pd::MatrixRow& r) { return r.arch == "gfx90a" && r.path == pmqa::Path::unsupported; }).empty());
  EXPECT_FALSE(rows_where(m, [](const pd::MatrixRow& r) {
                 return r.arch == "gfx1300" && r.error == pd::ExpectedError::unknown_arch;
               }).empty());
  EXPECT_GE(rows_where(m, [](const pd::MatrixRow& r) { return r.error == pd::ExpectedError::malformed_arch; }).size(), 5u);
  EXPECT_FALSE(rows_where(m, [](const pd::MatrixRow& r) {
                 return r.arch.find(':') != std::string::npos && r.error == pd::ExpectedError::none;
               }).empty())
      << "rows with feature flags";
}

// The two reviewed data files agree: a runnable row's fp8 format is its arch's format in the table,
// and every row expecting unknown-arch names a target the table lacks.
TEST(ArchMatrix, AgreesWithTheArchTable) {
  const auto& table = pd::ArchTable::builtin();
  for (const auto& r : pd::ArchMatrix::builtin().rows) {
    const std::string target = target_of(r);
    if (r.error == pd::ExpectedError::unknown_arch) {
      EXPECT_FALSE(target.empty()) << "row " << r.index << " expects unknown-arch but does not parse";
      EXPECT_EQ(table.find(target), nullptr) << "row " << r.index << " expects unknown-arch for a known target";
      continue;
    }
    if (r.error == pd::ExpectedError::malformed_arch) {
      EXPECT_TRUE(target.empty()) << "row " << r.index << " expects malformed-arch but \"" << r.arch << "\" parses";
      continue;
    }
    const pd::ArchInfo* info = table.find(target);
    ASSERT_NE(info, nullptr) << "row " << r.index << ": " << r.arch << " is not in the table";
    if (r.fp8) {
      EXPECT_EQ(r.fp8, info->fp8) << "row " << r.index << " (" << r.arch << ")";
    }
    if (!info->fp8) {
      EXPECT_EQ(r.path, pmqa::Path::unsupported) << "row " << r.index;
    }
  }
}

// The gfx1250 observation stays visible: the table says AITER ships a fused kernel there, the spec's
// policy (and so the matrix) does not use it. If vLLM widens its guard, this test and the gfx1250
// rows change together, on purpose.
TEST(ArchMatrix, Gfx1250ObservationIsRecorded) {
  const auto& m = pd::ArchMatrix::builtin();
  const auto gfx1250_present = rows_where(m, [](const pd::MatrixRow& r) {
    return r.arch == "gfx1250" && r.context.kernels_present;
  });
  ASSERT_EQ(gfx1250_present.size(), 6u);
  for (auto i : gfx1250_present) {
    EXPECT_EQ(m.rows[i].path, pmqa::Path::two_stage);
    EXPECT_NE(m.rows[i].note.find("OBSERVATION"), std::string::npos) << m.rows[i].note;
  }
  const auto unused = pd::unused_fused_kernels(pd::default_policy());
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0].rfind("gfx1250", 0), 0u) << unused[0];
}
