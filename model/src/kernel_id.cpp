#include "pmqa/model/kernel_id.hpp"

#include <stdexcept>
#include <string>

namespace pmqa {

std::string_view to_string(KernelId id) noexcept {
  switch (id) {
    case KernelId::fused_wgmma: return "fused-mma/wgmma";
    case KernelId::fused_mma_sync: return "fused-mma/mma.sync";
    case KernelId::fused_mfma: return "fused-mfma";
    case KernelId::fused_scalar: return "fused-scalar";
    case KernelId::two_stage: return "two-stage";
  }
  return "?";
}

std::string_view family_name(KernelId id) noexcept {
  return id == KernelId::fused_wgmma || id == KernelId::fused_mma_sync ? "fused-mma" : to_string(id);
}

std::string_view instruction_name(KernelId id) noexcept {
  return id == KernelId::fused_wgmma ? "wgmma" : id == KernelId::fused_mma_sync ? "mma.sync" : "";
}

KernelId parse_kernel_id(std::string_view text) {
  std::string names;
  for (const KernelId id : kAllKernels) {
    if (text == to_string(id)) return id;
    names += (names.empty() ? "" : ", ") + std::string(to_string(id));
  }
  throw std::invalid_argument("unknown kernel '" + std::string(text) + "' (expected " + names + ")");
}

Path path_of(KernelId id) noexcept { return id == KernelId::two_stage ? Path::two_stage : Path::fused; }

bool is_kernel_family(std::string_view text, Path path) noexcept {
  for (const KernelId id : kAllKernels)
    if (path_of(id) == path && text == family_name(id)) return true;
  return false;
}

std::string kernel_family_names(Path path) {
  std::string names;
  for (const KernelId id : kAllKernels) {
    const std::string family(family_name(id));
    if (path_of(id) == path && names.find(family) == std::string::npos) names += (names.empty() ? "" : ", ") + family;
  }
  return names;
}

}  // namespace pmqa
