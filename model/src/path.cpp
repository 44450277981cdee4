#include "pmqa/model/path.hpp"

#include <stdexcept>
#include <string>

namespace pmqa {

std::string_view to_string(Path path) noexcept {
  switch (path) {
    case Path::fused: return "fused";
    case Path::two_stage: return "two-stage";
    case Path::reference_fallback: return "reference-fallback";
    case Path::unsupported: return "unsupported";
  }
  return "?";
}

Path parse_path(std::string_view text) {
  if (text == "fused") return Path::fused;
  if (text == "two-stage" || text == "two_stage") return Path::two_stage;
  if (text == "reference-fallback" || text == "reference_fallback" || text == "reference") return Path::reference_fallback;
  if (text == "unsupported") return Path::unsupported;
  throw std::invalid_argument("unknown path \"" + std::string(text) +
                              "\" (expected fused, two-stage, reference-fallback or unsupported)");
}

}  // namespace pmqa
