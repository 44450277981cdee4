// The pictures: pmqa verify --map (an SVG per judged file), the text map under a failing report
// and in the JUnit failure, pmqa matrix's arch grid, and progress lines when stderr is not a
// terminal (every test here runs pmqa through a pipe).
#include <cstdlib>
#include <regex>

#include <gtest/gtest.h>

#include "cli_test_support.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;

std::string text_of(const fs::path& p) {
  const auto bytes = read_bytes(p);
  return {bytes.begin(), bytes.end()};
}

class VerifyPictures : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(cases_ / "a");
    fs::create_directories(cases_ / "b");
    cases::CaseFile f = reference_case_file("edge-lengths-1d");
    cases::write_case_file(cases_ / "a" / "x.safetensors", f);
    (*f.logits)[cell(f.c, 15, 37)] *= 2.0f;  // row 15, logical block 2 (block_size 16)
    cases::write_case_file(cases_ / "b" / "x.safetensors", f);
  }

  TempDir tmp_;
  fs::path cases_ = tmp_ / "cases";
};

TEST_F(VerifyPictures, OneFileOneSvgWithTheWrongBlockInRed) {
  const fs::path svg = tmp_ / "map.svg";
  const auto r = run_pmqa("verify " + q(cases_ / "b" / "x.safetensors") + " --map " + q(svg));
  EXPECT_EQ(r.status, 1) << r.output;
  const std::string s = text_of(svg);
  EXPECT_EQ(s.rfind("<svg ", 0), 0u) << s;
  EXPECT_NE(s.find("FAIL (element"), std::string::npos) << "the verdict in the title";
  EXPECT_NE(s.find("edge-lengths-1d"), std::string::npos);
  // 16 rows x 3 blocks: 24-pixel cells from the grid's corner; row 15, block 2 is over the element limit.
  std::smatch corner;
  ASSERT_TRUE(std::regex_search(s, corner, std::regex("<rect x=\"64\" y=\"([0-9]+)\" width=\"72\" height=\"384\" fill=\"#fafafa\"")))
      << s;
  const int top = std::stoi(corner[1]);
  EXPECT_TRUE(std::regex_search(s, std::regex("<rect x=\"112\" y=\"" + std::to_string(top + 15 * 24) +
                                              "\" width=\"24\" height=\"24\" fill=\"#d7191c\"")))
      << s;
  EXPECT_NE(s.find("width=\"640\" height="), std::string::npos) << "a 3-block map is as wide as its legend, not its title";
  const std::string cells = s.substr(s.find("<g id=\"cells\">"), s.find("<g id=\"rows\">") - s.find("<g id=\"cells\">"));
  EXPECT_EQ(cells.find("#d7191c"), cells.rfind("#d7191c")) << "one red block\n" << cells;
}

TEST_F(VerifyPictures, SeveralFilesAFolderMirroringTheirPaths) {
  const fs::path maps = tmp_ / "maps";
  const auto r = run_pmqa("verify " + q(cases_ / "a") + " " + q(cases_ / "b") + " --map " + q(maps));
  EXPECT_EQ(r.status, 1) << r.output;
  const fs::path a = maps / cases_.relative_path() / "a" / "x.svg", b = maps / cases_.relative_path() / "b" / "x.svg";
  ASSERT_TRUE(fs::exists(a) && fs::exists(b)) << r.output;
  EXPECT_NE(text_of(a).find("PASS"), std::string::npos);
  const std::string pass = text_of(a);
  EXPECT_EQ(pass.substr(0, pass.find("<g id=\"legend\">")).find("#d7191c"), std::string::npos) << "nothing red";
  EXPECT_NE(text_of(b).find("FAIL"), std::string::npos);
}

TEST_F(VerifyPictures, TheTextMapUnderTheReportAndInTheJUnitFailure) {
  const fs::path junit = tmp_ / "out.xml";
  const auto r = run_pmqa("verify " + q(cases_ / "a") + " " + q(cases_ / "b") + " --junit " + q(junit));
  EXPECT_EQ(r.status, 1) << r.output;
  const std::string row15 = "      15\t|..X|";
  EXPECT_NE(r.output.find("error map, rows x logical blocks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(row15), std::string::npos) << r.output;
  const std::string xml = text_of(junit);
  const auto failure = xml.find("<failure ");
  ASSERT_NE(failure, std::string::npos) << xml;
  EXPECT_NE(xml.find("error map, rows x logical blocks", failure), std::string::npos) << xml;
  EXPECT_NE(xml.find(row15, failure), std::string::npos) << xml;
  EXPECT_EQ(xml.find("error map"), xml.find("error map", failure)) << "a passing file carries no map";
}

TEST(MatrixGrid, OneLinePerArchAndAMarkWhereThePolicyDiffers) {
  auto r = run_pmqa("matrix --grid");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("arch x (kernel library, block_size, next_n)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n\"gfx950\" +F +F ")) ) << r.output;
  EXPECT_FALSE(std::regex_search(r.output, std::regex("\n\"[^\n]*!"))) << "no arch line has a mismatch\n" << r.output;
  // The guard before vLLM PR 42062 (gfx942 only): gfx950's line turns to two-stage, marked.
  r = run_pmqa("matrix --grid --rocm-fused gfx942");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n\"gfx950\" +2! +2! "))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n\"gfx942\" +F +F "))) << r.output;
  r = run_pmqa("matrix");
  EXPECT_NE(r.output.find("arch x (kernel library, block_size, next_n)"), std::string::npos)
      << "the full listing ends with the grid";
}

// PMQA_PROGRESS_SECONDS for the pmqa runs of one scope.
class ProgressInterval {
 public:
  explicit ProgressInterval(const char* seconds) { setenv("PMQA_PROGRESS_SECONDS", seconds, 1); }
  ~ProgressInterval() { unsetenv("PMQA_PROGRESS_SECONDS"); }
};

TEST(Progress, LinesWhenNotATerminal) {
  TempDir tmp;
  auto r = run_pmqa("gen --suite quick --out " + q(tmp / "a"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("[1/"), std::string::npos) << "a run under 10 s prints no progress line\n" << r.output;
  {
    ProgressInterval every_step("0");
    r = run_pmqa("gen --suite quick --out " + q(tmp / "b"));
  }
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\\[1/32\\] edge-lengths-1d \\([0-9]+ s\\)\n"))) << r.output;
  EXPECT_NE(r.output.find("[32/32] "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << "no terminal control characters in a log";
  {
    ProgressInterval never("-1");
    r = run_pmqa("gen --suite quick --out " + q(tmp / "c"));
  }
  EXPECT_EQ(r.output.find("[1/"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace pmqa::clitest
