#include "pmqa/model/kernel_id.hpp"

#include <stdexcept>
#include <string>

namespace pmqa {

KernelId parse_kernel_id(std::string_view text) {
  std::string names;
  for (const KernelInfo& k : kKernelTable) {
    if (text == k.name) return k.id;
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  throw std::invalid_argument("unknown kernel '" + std::string(text) + "' (expected " + names + ")");
}

bool is_kernel_family(std::string_view text, Path path) noexcept {
  for (const KernelInfo& k : kKernelTable)
    if (k.path == path && text == k.family) return true;
  return false;
}

std::string kernel_family_names(Path path) {
  std::string names;
  for (const KernelInfo& k : kKernelTable) {
    const std::string family(k.family);
    if (k.path == path && names.find(family) == std::string::npos) names += (names.empty() ? "" : ", ") + family;
  }
  return names;
}

}  // namespace pmqa
