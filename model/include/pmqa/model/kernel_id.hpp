// pmqa's own kernels, by one spelling each. kernels/ runs them (each describes itself beside its
// code, kernels/device/pmqa_kernels/<kernel>/spec.hpp); dispatch's arch table names the family that
// serves an arch's fused path (dispatch/data/arch_table.json's pmqa_fused_kernel) and is checked
// against these names.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "pmqa/model/path.hpp"

namespace pmqa {

enum class KernelId : std::uint8_t {
  fused_wgmma,     // "fused-mma/wgmma": Hopper's fp8 wgmma (sm_90a), OCP only
  fused_mma_sync,  // "fused-mma/mma.sync": NVIDIA mma.sync on fp8 decoded exactly to f16 (sm_89+)
  fused_mfma,      // "fused-mfma": AMD fp8 MFMA in the arch's format (gfx942 FNUZ, gfx950 OCP)
  fused_scalar,    // "fused-scalar": portable fp32 FMAs, any arch
  two_stage,       // "two-stage": fill -inf, stage 1 per head, head sum
};

inline constexpr std::array<KernelId, 5> kAllKernels = {KernelId::fused_wgmma, KernelId::fused_mma_sync,
                                                        KernelId::fused_mfma, KernelId::fused_scalar, KernelId::two_stage};

std::string_view to_string(KernelId id) noexcept;  // the names above
// The kernel family: "fused-mma" for both fused-mma instructions, else the kernel's own name.
std::string_view family_name(KernelId id) noexcept;
// The instruction within a family ("wgmma", "mma.sync"), else "".
std::string_view instruction_name(KernelId id) noexcept;
// A kernel's name (as to_string writes it); throws std::invalid_argument listing the names.
KernelId parse_kernel_id(std::string_view text);
// The path a kernel serves.
Path path_of(KernelId id) noexcept;
// One of the families serving `path` ("fused-mma", "fused-mfma", "fused-scalar" for fused).
bool is_kernel_family(std::string_view text, Path path) noexcept;
// Those families, for messages: "fused-mma, fused-mfma, fused-scalar".
std::string kernel_family_names(Path path);

}  // namespace pmqa
