// pmqa's own kernels, in one table: each kernel's id, name, family, instruction, path and the fp8
// matrix instruction it is built on. Everything else reads the table: the names the CLI and files
// use, the families dispatch's arch table names (dispatch/data/arch_table.json's pmqa_fused_kernel,
// checked against these), the device the checks emulate to run a kernel (checks::kernel_configs).
// kernels/ runs them (each describes its fit and launch beside its code,
// kernels/device/pmqa_kernels/<kernel>/spec.hpp, and kernel_list.hpp holds them in priority order).
// A new kernel is an enumerator, a row here, a folder and an entry in the kernel list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/model/matrix_kind.hpp"
#include "pmqa/model/path.hpp"

namespace pmqa {

enum class KernelId : std::uint8_t {
  fused_wgmma,
  fused_mma_sync,
  fused_mfma,
  fused_scalar,
  two_stage,
};

struct KernelInfo {
  KernelId id;
  std::string_view name;         // how files, flags and reports spell it
  std::string_view family;       // what the arch table names; several kernels may share one
  std::string_view instruction;  // the kernel within its family ("" for a family of one)
  Path path;
  MatrixKind matrix;             // the fp8 matrix instruction it computes with (none: fp32 FMAs)
};

inline constexpr KernelInfo kKernelTable[] = {
    // Hopper's fp8 wgmma (sm_90a), OCP only.
    {KernelId::fused_wgmma, "fused-mma/wgmma", "fused-mma", "wgmma", Path::fused, MatrixKind::wgmma},
    // NVIDIA mma.sync on fp8 decoded exactly to f16 (sm_89+), either format.
    {KernelId::fused_mma_sync, "fused-mma/mma.sync", "fused-mma", "mma.sync", Path::fused, MatrixKind::mma_sync},
    // AMD fp8 MFMA in the arch's format (gfx942 FNUZ, gfx950 OCP).
    {KernelId::fused_mfma, "fused-mfma", "fused-mfma", "", Path::fused, MatrixKind::mfma},
    // Portable fp32 FMAs, any arch.
    {KernelId::fused_scalar, "fused-scalar", "fused-scalar", "", Path::fused, MatrixKind::none},
    // Fill -inf, stage 1 per head, head sum.
    {KernelId::two_stage, "two-stage", "two-stage", "", Path::two_stage, MatrixKind::none},
};

inline constexpr std::array<KernelId, std::size(kKernelTable)> kAllKernels = [] {
  std::array<KernelId, std::size(kKernelTable)> ids{};
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = kKernelTable[i].id;
  return ids;
}();

// The table is indexed by id: a row out of order would give one kernel another's name.
static_assert([] {
  for (std::size_t i = 0; i < std::size(kKernelTable); ++i)
    if (static_cast<std::size_t>(kKernelTable[i].id) != i) return false;
  return true;
}());

constexpr const KernelInfo& kernel_info(KernelId id) noexcept { return kKernelTable[static_cast<std::size_t>(id)]; }
constexpr std::string_view to_string(KernelId id) noexcept { return kernel_info(id).name; }
constexpr std::string_view family_name(KernelId id) noexcept { return kernel_info(id).family; }
constexpr std::string_view instruction_name(KernelId id) noexcept { return kernel_info(id).instruction; }
constexpr Path path_of(KernelId id) noexcept { return kernel_info(id).path; }

// The shapes a kernel takes beyond those every kernel does (its spec's shapes(); the checks draw
// its property cases inside them). Empty lists take any value.
struct KernelShapes {
  std::vector<std::int64_t> head_dims;
  std::vector<std::int64_t> heads;
  std::int64_t block_stride_multiple = 1;
};

// A kernel's name (as to_string writes it); throws std::invalid_argument listing the names.
KernelId parse_kernel_id(std::string_view text);
// One of the families serving `path` ("fused-mma", "fused-mfma", "fused-scalar" for fused).
bool is_kernel_family(std::string_view text, Path path) noexcept;
// Those families, for messages: "fused-mma, fused-mfma, fused-scalar".
std::string kernel_family_names(Path path);

}  // namespace pmqa
