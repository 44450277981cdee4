// The fp8 matrix instructions a GPU can offer, by one spelling each: the arch table names the one
// a target has (dispatch/data/arch_table.json's fp8_matrix), a device's capabilities hold the ones
// it runs (device_caps.hpp), and the kernel table names the one each kernel is built on.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pmqa {

enum class MatrixKind : std::uint8_t {
  none,      // no fp8 matrix unit
  mfma,      // AMD CDNA: v_mfma_*_fp8_fp8 / f8f6f4
  wmma,      // AMD RDNA4 / gfx12.5: v_wmma_*_fp8_fp8
  mma_sync,  // NVIDIA sm_89+: mma.sync ... e4m3
  wgmma,     // NVIDIA sm_90: wgmma.mma_async ... e4m3
  tcgen05,   // NVIDIA sm_100: tcgen05.mma kind::f8f6f4
};

// "none", "MFMA", "WMMA", "mma.sync", "wgmma", "tcgen05": messages and tables.
std::string_view to_string(MatrixKind kind) noexcept;
// The arch table's spelling: "none", "mfma", "wmma", "mma.sync", "wgmma", "tcgen05"; nullopt otherwise.
std::optional<MatrixKind> parse_matrix_kind(std::string_view text) noexcept;
// The instructions' names as parse_matrix_kind takes them, for messages: "none, mfma, wmma, ...".
std::string_view matrix_kind_names() noexcept;
// The wave size the instruction runs at (NVIDIA's at 32, CDNA's MFMA at 64, RDNA's WMMA at 32); 0 for none.
int wave_size_of(MatrixKind kind) noexcept;

}  // namespace pmqa
