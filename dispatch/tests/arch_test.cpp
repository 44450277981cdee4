#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/dispatch/arch.hpp"

namespace pd = pmqa::dispatch;

TEST(ParseArch, BareAmdTargets) {
  for (const char* name : {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200", "gfx1201",
                           "gfx1250", "gfx908", "gfx1300", "gfx9-4-generic"}) {
    const pd::Arch a = pd::parse_arch(name);
    EXPECT_EQ(a.vendor, pd::Vendor::amd) << name;
    EXPECT_EQ(a.target, name);
    EXPECT_EQ(a.text, name);
    EXPECT_TRUE(a.features.empty()) << name;
  }
}

TEST(ParseArch, GcnArchNameWithFeatureFlags) {
  const pd::Arch a = pd::parse_arch("gfx942:sramecc+:xnack-");
  EXPECT_EQ(a.target, "gfx942");
  EXPECT_EQ(a.text, "gfx942:sramecc+:xnack-");
  ASSERT_EQ(a.features.size(), 2u);
  EXPECT_EQ(a.features[0], (pd::FeatureFlag{"sramecc", true}));
  EXPECT_EQ(a.features[1], (pd::FeatureFlag{"xnack", false}));
  EXPECT_EQ(a.feature("sramecc"), true);
  EXPECT_EQ(a.feature("xnack"), false);
  EXPECT_EQ(a.feature("cumode"), std::nullopt);

  const pd::Arch b = pd::parse_arch("gfx90a:xnack+");
  EXPECT_EQ(b.target, "gfx90a");
  EXPECT_EQ(b.feature("xnack"), true);
}

TEST(ParseArch, NvidiaSmNames) {
  struct Case {
    const char* name;
    int major, minor;
  };
  for (const Case c : {Case{"sm_89", 8, 9}, Case{"sm_90", 9, 0}, Case{"sm_100", 10, 0}, Case{"sm_120", 12, 0}}) {
    const pd::Arch a = pd::parse_arch(c.name);
    EXPECT_EQ(a.vendor, pd::Vendor::nvidia) << c.name;
    EXPECT_EQ(a.target, c.name);
    EXPECT_EQ(a.cc_major, c.major) << c.name;
    EXPECT_EQ(a.cc_minor, c.minor) << c.name;
  }
}

TEST(ParseArch, ComputeCapability) {
  EXPECT_EQ(pd::arch_from_compute_capability(9, 0).target, "sm_90");
  EXPECT_EQ(pd::arch_from_compute_capability(10, 0).target, "sm_100");
  EXPECT_EQ(pd::arch_from_compute_capability(8, 9).target, "sm_89");
  EXPECT_EQ(pd::arch_from_compute_capability(9, 0).vendor, pd::Vendor::nvidia);
  EXPECT_THROW(pd::arch_from_compute_capability(0, 0), pd::ArchParseError);
  EXPECT_THROW(pd::arch_from_compute_capability(9, 10), pd::ArchParseError);
  EXPECT_THROW(pd::arch_from_compute_capability(-1, 0), pd::ArchParseError);
}

// Every malformed name throws ArchParseError whose message quotes the name and says what is wrong.
TEST(ParseArch, MalformedNamesNameTheTextAndTheProblem) {
  struct Case {
    std::string name;
    std::string problem;  // a piece of the message
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {"gfx", "not followed by a processor id"},
      {"gfx942:", "trailing ':'"},
      {"gfx942:sramecc", "\"sramecc\" has no '+' or '-' suffix"},
      {"gfx942::xnack-", "\"::\""},
      {"gfx942:+", "sign but no name"},
      {"gfx942:xnack+:xnack-", "given twice"},
      {"gfx942:Xnack+", "lowercase"},
      {"gfx942:9xnack+", "must start with a lowercase letter"},
      {"gfx942:xn.ack+", "holds"},
      {"gfxz42", "must start with a digit"},
      {"gfx94.2", "not allowed in processor id"},
      {"gfx9-", "ends with '-'"},
      {"gfx9--generic", "empty part"},
      {"GFX942", "did you mean \"gfx942\""},
      {" gfx942", "whitespace"},
      {"gfx942\n", "whitespace"},
      {"sm_9", "needs a major and a minor digit"},
      {"sm_", "not followed by a compute capability"},
      {"sm_90a", "compile target"},
      {"sm_100f", "compile target"},
      {"sm_9x", "digits only"},
      {"sm_090", "leading zero"},
      {"sm_1000", "too long"},
      {"cuda", "neither an AMD target"},
      {"942", "neither an AMD target"},
      {"mi300x", "neither an AMD target"},
  };
  for (const auto& c : cases) {
    try {
      (void)pd::parse_arch(c.name);
      ADD_FAILURE() << "\"" << c.name << "\" parsed";
    } catch (const pd::ArchParseError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.problem), std::string::npos) << "message for \"" << c.name << "\": " << what;
      EXPECT_EQ(e.text(), c.name);
      EXPECT_FALSE(e.problem().empty());
      if (c.name.find_first_of(" \n") == std::string::npos) {
        EXPECT_NE(what.find("\"" + c.name + "\""), std::string::npos) << what;
      }
    }
  }
}

TEST(ParseArch, ParseErrorIsAnInvalidArgument) {
  EXPECT_THROW(pd::parse_arch("gfx"), std::invalid_argument);
}
