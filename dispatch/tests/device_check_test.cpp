#include <string>

#include <gtest/gtest.h>

#include "pmqa/dispatch/device_check.hpp"

namespace pd = pmqa::dispatch;

namespace {
bool mentions(const pd::ArchCheckResult& r, const std::string& part) { return r.message.find(part) != std::string::npos; }
}  // namespace

TEST(DeviceCheck, RightArchAndPathPasses) {
  const auto r = pd::check_device_arch("gfx950:sramecc+:xnack-", "gfx950", pmqa::Path::fused);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::pass) << r.message;
  EXPECT_EQ(r.exit_code(), 0);
  ASSERT_TRUE(r.decision.has_value());
  EXPECT_EQ(r.decision->path, pmqa::Path::fused);
  EXPECT_TRUE(mentions(r, "fused, e4m3fn, SHUFFLE")) << r.message;
}

// The failure this exists for: a gfx950 job that landed on gfx942 hardware.
TEST(DeviceCheck, Gfx950JobOnGfx942HardwareFailsLoudly) {
  const auto r = pd::check_device_arch("gfx942:sramecc+:xnack-", "gfx950", pmqa::Path::fused);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::wrong_arch) << r.message;
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_TRUE(mentions(r, "WRONG GPU")) << r.message;
  EXPECT_TRUE(mentions(r, "gfx950 (MI350X/MI355X)")) << r.message;
  EXPECT_TRUE(mentions(r, "gfx942:sramecc+:xnack- (MI300X/MI300A/MI325X)")) << r.message;
  EXPECT_FALSE(r.decision.has_value()) << "no decision is checked on the wrong hardware";
}

TEST(DeviceCheck, NoGpuSaysSoAndExits2) {
  const auto r = pd::check_device_arch(std::nullopt, "gfx950", pmqa::Path::fused);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::no_gpu);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_TRUE(mentions(r, "no GPU")) << r.message;
}

TEST(DeviceCheck, WrongPathFromTheRightDevice) {
  const pd::DefaultPolicy pre_fix(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}}, pd::ArchTable::builtin(),
                                  "pre-fix");
  const auto r = pd::check_device_arch("gfx950", "gfx950", pmqa::Path::fused, {}, pre_fix);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::wrong_path) << r.message;
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_TRUE(mentions(r, "the job expects fused, policy \"pre-fix\" decides two-stage")) << r.message;
}

TEST(DeviceCheck, WithoutExpectedPathOnlyTheArchIsChecked) {
  const auto r = pd::check_device_arch("gfx1201", "gfx1201", std::nullopt);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::pass) << r.message;
  EXPECT_EQ(r.decision->path, pmqa::Path::two_stage);
}

TEST(DeviceCheck, ExpectedFlagsMustMatch) {
  const auto r = pd::check_device_arch("gfx942:sramecc+:xnack+", "gfx942:xnack-", std::nullopt);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::wrong_arch) << r.message;
  EXPECT_TRUE(mentions(r, "xnack- expected, xnack+ found")) << r.message;
  EXPECT_EQ(pd::check_device_arch("gfx942", "gfx942:xnack-", std::nullopt).verdict, pd::ArchVerdict::wrong_arch);
  EXPECT_EQ(pd::check_device_arch("gfx942:sramecc+:xnack-", "gfx942:xnack-", std::nullopt).verdict,
            pd::ArchVerdict::pass);
}

TEST(DeviceCheck, NvidiaFromComputeCapability) {
  const auto arch = pd::arch_from_compute_capability(9, 0);
  const auto r = pd::check_device_arch(arch.text, "sm_90", pmqa::Path::fused);
  EXPECT_EQ(r.verdict, pd::ArchVerdict::pass) << r.message;
  const auto wrong = pd::check_device_arch("sm_90", "sm_100", pmqa::Path::fused);
  EXPECT_EQ(wrong.verdict, pd::ArchVerdict::wrong_arch) << wrong.message;
}

TEST(DeviceCheck, UnusableExpectationsAreInvalid) {
  EXPECT_EQ(pd::check_device_arch("gfx942", "gfx942:", std::nullopt).verdict, pd::ArchVerdict::invalid);
  const auto unknown = pd::check_device_arch("gfx942", "gfx1300", std::nullopt);
  EXPECT_EQ(unknown.verdict, pd::ArchVerdict::invalid);
  EXPECT_EQ(unknown.exit_code(), 2);
  EXPECT_TRUE(mentions(unknown, "unknown arch \"gfx1300\"")) << unknown.message;
  EXPECT_EQ(pd::check_device_arch("", "gfx942", std::nullopt).verdict, pd::ArchVerdict::invalid)
      << "an empty gcnArchName (NVIDIA) must be turned into sm_XY by the caller";
  EXPECT_EQ(pd::check_device_arch("gfx942", "gfx942", std::nullopt, pd::Context{true, 0, 1, 64}).verdict,
            pd::ArchVerdict::invalid);
  // Unknown device, known expectation: the device is simply not what the job claims.
  EXPECT_EQ(pd::check_device_arch("gfx1300", "gfx950", pmqa::Path::fused).verdict, pd::ArchVerdict::wrong_arch);
}
