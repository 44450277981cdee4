#include "pmqa/dispatch/device_check.hpp"

#include <string>

#include "pmqa/dispatch/arch_table.hpp"

namespace pmqa::dispatch {
namespace {

std::string label(const Arch& arch) {
  if (const ArchInfo* info = ArchTable::builtin().find(arch.target)) return arch.text + " (" + info->products_text() + ")";
  return arch.text + " (not in the arch table)";
}

ArchCheckResult result(ArchVerdict verdict, std::string message) {
  ArchCheckResult r;
  r.verdict = verdict;
  r.message = std::move(message);
  return r;
}

}  // namespace

std::string_view to_string(ArchVerdict verdict) noexcept {
  switch (verdict) {
    case ArchVerdict::pass: return "pass";
    case ArchVerdict::wrong_arch: return "wrong-arch";
    case ArchVerdict::wrong_path: return "wrong-path";
    case ArchVerdict::no_gpu: return "no-gpu";
    case ArchVerdict::invalid: return "invalid";
  }
  return "?";
}

int ArchCheckResult::exit_code() const noexcept {
  switch (verdict) {
    case ArchVerdict::pass: return 0;
    case ArchVerdict::wrong_arch:
    case ArchVerdict::wrong_path: return 1;
    case ArchVerdict::no_gpu:
    case ArchVerdict::invalid: return 2;
  }
  return 2;
}

ArchCheckResult check_device_arch(std::optional<std::string_view> device_arch, std::string_view expected_arch,
                                  std::optional<Path> expected_path, const Context& ctx, const Policy& policy) {
  Arch expected;
  try {
    expected = parse_arch(expected_arch);
  } catch (const ArchParseError& e) {
    return result(ArchVerdict::invalid, std::string("--expect-arch: ") + e.what());
  }
  try {
    (void)ArchTable::builtin().at(expected);
  } catch (const UnknownArchError& e) {
    return result(ArchVerdict::invalid, std::string("--expect-arch: ") + e.what());
  }
  const std::string expected_label = label(expected);

  if (!device_arch)
    return result(ArchVerdict::no_gpu, "no GPU found: cannot check that this runner is " + expected_label +
                                           " as the job expects (--expect-arch " + expected.text + ")");

  Arch device;
  try {
    device = parse_arch(*device_arch);
  } catch (const ArchParseError& e) {
    return result(ArchVerdict::invalid, std::string("the device reports an arch that does not parse: ") + e.what());
  }

  ArchCheckResult r;
  r.device = device;
  if (device.target != expected.target) {
    r.verdict = ArchVerdict::wrong_arch;
    r.message = "WRONG GPU: the job expects " + expected_label + " but this runner's device is " + label(device) +
                "; its results would not cover " + expected.target;
    return r;
  }
  for (const auto& flag : expected.features) {
    const auto state = device.feature(flag.name);
    if (state != flag.enabled) {
      r.verdict = ArchVerdict::wrong_arch;
      r.message = "WRONG GPU MODE: the job expects " + expected.text + " but the device reports " + device.text +
                  " (" + flag.name + (flag.enabled ? "+" : "-") + " expected, " +
                  (state ? flag.name + (*state ? "+" : "-") : "no " + flag.name + " flag") + " found)";
      return r;
    }
  }

  try {
    r.decision = policy.select(device, ctx);
  } catch (const std::exception& e) {
    r.verdict = ArchVerdict::invalid;
    r.message = "device " + label(device) + " is the expected arch, but policy \"" + policy.name() +
                "\" cannot decide for it: " + e.what();
    return r;
  }
  const Decision& d = *r.decision;
  const std::string context_text = describe(ctx, device.vendor);
  if (expected_path && d.path != *expected_path) {
    r.verdict = ArchVerdict::wrong_path;
    r.message = "WRONG PATH on " + label(device) + " [" + context_text + "]: the job expects " +
                std::string(to_string(*expected_path)) + ", policy \"" + policy.name() + "\" decides " + d.summary() +
                " (reason: " + d.reason + ")";
    return r;
  }
  r.verdict = ArchVerdict::pass;
  r.message = "device " + label(device) + " is the expected " + expected.target + "; [" + context_text +
              "] policy \"" + policy.name() + "\" decides " + d.summary() + (expected_path ? " as expected" : "") +
              " (reason: " + d.reason + ")";
  return r;
}

}  // namespace pmqa::dispatch
