// pmqa verify's files for CI: JUnit XML with one testcase per input (failure for a mismatch,
// error for an invalid input) and JSON that parses, with the structured report inside.
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class VerifyReports : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(cases_);
    cases::CaseFile f = reference_case_file("edge-lengths-1d");
    cases::write_case_file(cases_ / "a-pass.safetensors", f);
    (*f.logits)[cell(f.c, 15, 37)] *= 2.0f;
    cases::write_case_file(cases_ / "b-fail.safetensors", f);
    f.logits.reset();
    cases::write_case_file(cases_ / "c-invalid.safetensors", f);
  }

  TempDir tmp_;
  fs::path cases_ = tmp_ / "cases";
};

TEST_F(VerifyReports, JUnitHasATestcasePerFileWithFailureAndError) {
  const fs::path junit = tmp_ / "out.xml";
  const auto r = run_pmqa("verify " + q(cases_) + " --junit " + q(junit));
  EXPECT_EQ(r.status, 2) << r.output;
  const std::string xml = [&] {
    const auto bytes = read_bytes(junit);
    return std::string(bytes.begin(), bytes.end());
  }();
  EXPECT_EQ(xml.rfind("<?xml", 0), 0u) << xml;
  EXPECT_EQ(count(xml, "<testsuites"), 1u) << xml;
  EXPECT_EQ(count(xml, "</testsuites>"), 1u) << xml;
  EXPECT_EQ(count(xml, "<testsuite "), 1u) << xml;
  EXPECT_EQ(count(xml, "</testsuite>"), 1u) << xml;
  EXPECT_EQ(count(xml, "<testcase "), 3u) << xml;
  EXPECT_TRUE(std::regex_search(xml, std::regex("tests=\"3\" failures=\"1\" errors=\"1\""))) << xml;
  // One shape with pmqa-run's: classname the case's suite, name the case's name, the file beside it.
  EXPECT_TRUE(std::regex_search(xml, std::regex("<testsuite name=\"pmqa verify\"")));
  EXPECT_TRUE(std::regex_search(
      xml, std::regex("classname=\"quick\" name=\"edge-lengths-1d\"[^>]*file=\"[^\"]*b-fail.safetensors\">\\s*<failure "
                      "message=\"1 failing cell")))
      << xml;
  EXPECT_TRUE(std::regex_search(
      xml, std::regex("classname=\"pmqa\" name=\"c-invalid\"[^>]*>\\s*<error message=\"[^\"]*tensor logits: missing")))
      << xml;
  EXPECT_NE(xml.find("row 15 (b=7, n=1, E_r=48) col 37"), std::string::npos) << "the report is the failure's text";
}

TEST_F(VerifyReports, JsonParsesAndCarriesTheReports) {
  const fs::path out = tmp_ / "out.json";
  const auto r = run_pmqa("verify " + q(cases_) + " --json " + q(out));
  EXPECT_EQ(r.status, 2) << r.output;
  const auto bytes = read_bytes(out);
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end());  // throws (fails the test) if malformed
  EXPECT_EQ(j.at("summary").at("passed"), 1);
  EXPECT_EQ(j.at("summary").at("failed"), 1);
  EXPECT_EQ(j.at("summary").at("errors"), 1);
  const auto& results = j.at("results");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].at("passed"), true);
  EXPECT_EQ(results[1].at("passed"), false);
  const auto& report = results[1].at("report");
  EXPECT_EQ(report.at("value_mismatches"), 1);
  EXPECT_EQ(report.at("first_mismatches").at(0).at("row"), 15);
  EXPECT_EQ(report.at("first_mismatches").at(0).at("col"), 37);
  EXPECT_NE(report.at("reproduce").get<std::string>().find("pmqa verify "), std::string::npos);
  EXPECT_EQ(results[2].at("error"), true);
  EXPECT_NE(results[2].at("message").get<std::string>().find("tensor logits: missing"), std::string::npos);
}

}  // namespace
}  // namespace pmqa::clitest
