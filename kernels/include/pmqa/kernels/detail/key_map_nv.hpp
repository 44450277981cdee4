// The wgmma kernel's tensor map of the keys (pmqa_kernels/arch/nv_tma.hpp) as the NVIDIA driver encodes
// it. HIP has no tensor maps: on NVIDIA, HIP is CUDA underneath, and the driver's encoder is
// reached through the runtime's entry-point query, so nothing links libcuda directly. GPU
// translation units only; elsewhere there is no map (the kernel then copies with cp.async).
#pragma once

#include <optional>

#include "pmqa_kernels/arch/nv_tma.hpp"

#if defined(__HIP_PLATFORM_NVIDIA__)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace pmqa::kernels::detail {

// The map of f's cache: (d 128 bytes, token block_size, block) with strides (1, 128,
// block_stride), copied in boxes of 128 x box_rows x 1, 128-byte swizzled. nullopt where the driver has
// no encoder or refuses the geometry.
inline std::optional<kdev::KeyMap> encode_key_map(const kdev::KeyMapFields& f) {
#if defined(__HIP_PLATFORM_NVIDIA__)
  static const auto encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    return status == cudaSuccess && found == cudaDriverEntryPointSuccess ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)
                                                                          : nullptr;
  }();
  if (encode == nullptr) return std::nullopt;
  static_assert(sizeof(CUtensorMap) == sizeof(kdev::KeyMap) && alignof(kdev::KeyMap) >= alignof(CUtensorMap));
  constexpr auto kRow = static_cast<cuuint64_t>(kdev::Swizzle128::kRowBytes);
  const cuuint64_t dims[3] = {kRow, static_cast<cuuint64_t>(f.block_size), static_cast<cuuint64_t>(f.blocks)};
  const cuuint64_t strides[2] = {kRow, static_cast<cuuint64_t>(f.block_stride)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kRow), static_cast<cuuint32_t>(f.box_rows), 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  kdev::KeyMap map;
  const CUresult r = encode(reinterpret_cast<CUtensorMap*>(&map), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3,
                            const_cast<std::uint8_t*>(f.base), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return std::nullopt;
  return map;
#else
  static_cast<void>(f);
  return std::nullopt;
#endif
}

}  // namespace pmqa::kernels::detail
