// The arch half of `pmqa check --expect-arch gfx950 --expect-path fused` on a GPU runner: the device
// must be the arch the CI job claims (a gfx950 job that landed on gfx942 hardware fails loudly), then
// the policy's decision for it must be the expected path. Pure: the caller reads the device's arch
// (HIP gcnArchName, or sm_XY from the compute capability) and passes nullopt when there is no GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/policy.hpp"

namespace pmqa::dispatch {

enum class ArchVerdict : unsigned char {
  pass,        // the device is the expected arch and the policy decides the expected path
  wrong_arch,  // the device is another arch than the job claims
  wrong_path,  // right arch, but the policy decides another path
  no_gpu,      // no device to check
  invalid,     // the expectation itself is unusable (malformed or unknown arch, bad context)
};
std::string_view to_string(ArchVerdict verdict) noexcept;  // "pass", "wrong-arch", ...

struct ArchCheckResult {
  ArchVerdict verdict = ArchVerdict::invalid;
  std::string message;             // one line for the job log
  std::optional<Arch> device;      // parsed device arch, when it parsed
  std::optional<Decision> decision;

  // pmqa's exit statuses: 0 pass, 1 wrong arch / wrong path, 2 no GPU / invalid.
  int exit_code() const noexcept;
};

// Compares targets (feature flags of the device are ignored unless `expected_arch` names some,
// then each named flag must match). When the device matches, the policy decides for the device's
// arch in `ctx`; with expected_path set the decision's path must equal it.
ArchCheckResult check_device_arch(std::optional<std::string_view> device_arch, std::string_view expected_arch,
                                  std::optional<Path> expected_path, const Context& ctx = {},
                                  const Policy& policy = default_policy());

}  // namespace pmqa::dispatch
