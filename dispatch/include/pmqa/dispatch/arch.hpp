// Arch names as the runtimes report them (spec §4): HIP's gcnArchName ("gfx942:sramecc+:xnack-":
// the target, then feature flags) and NVIDIA's sm_<major><minor> / compute capability.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pmqa::dispatch {

enum class Vendor : unsigned char { amd, nvidia };

std::string_view to_string(Vendor vendor) noexcept;  // "amd" / "nvidia"

// One "+name" / "-name" suffix of a gcnArchName ("sramecc+" -> {"sramecc", true}).
struct FeatureFlag {
  std::string name;
  bool enabled = false;
  friend bool operator==(const FeatureFlag&, const FeatureFlag&) = default;
};

// A parsed arch name. `target` is the key the arch table uses: "gfx942", "sm_90".
struct Arch {
  std::string text;    // the name exactly as given
  Vendor vendor = Vendor::amd;
  std::string target;  // "gfx942" (before the first ':'), or "sm_90"
  std::vector<FeatureFlag> features;  // AMD only, in the order given; names unique
  int cc_major = 0;    // NVIDIA only: compute capability, sm_90 -> 9.0, sm_100 -> 10.0
  int cc_minor = 0;

  // The feature's state, or nullopt when the name does not mention it.
  std::optional<bool> feature(std::string_view name) const;
};

// A name that is not a well-formed arch. what() names the text and the problem, e.g.
//   malformed arch name "gfx942:sramecc": feature "sramecc" has no '+' or '-' suffix
class ArchParseError : public std::invalid_argument {
 public:
  ArchParseError(std::string text, std::string problem);
  const std::string& text() const noexcept { return text_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string text_;
  std::string problem_;
};

// Parses "gfx<id>[:<feature>(+|-)]..." or "sm_<major><minor>". Strict: lowercase only, no
// whitespace, no empty or repeated features, no "sm_90a"-style compile-target suffixes (a device
// reports sm_90). Whether the target is known is the arch table's business, not the parser's.
// Throws ArchParseError.
Arch parse_arch(std::string_view text);

// The arch of an NVIDIA device with compute capability major.minor ("sm_90" for 9, 0).
// Throws ArchParseError for a negative major/minor, a major of 0, or a minor above 9.
Arch arch_from_compute_capability(int major, int minor);

}  // namespace pmqa::dispatch
