// Byte-level helpers the matrix-unit kernels share: 16-byte aligned shared-memory units and
// aligned word loads that are plain loads on GPUs and memcpy on the host.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"

#if !defined(PMQA_DEVICE_BUILD)
#include <cstring>
#endif

PMQA_KDEV_BEGIN

// Shared memory in 16-byte aligned units (alignas on a __shared__ declaration is not portable).
struct alignas(16) Bytes16 {
  std::uint8_t b[16];
};

// Aligned 4- and 8-byte loads (any alignment on the host, where memcpy is the portable form).
PMQA_DEV std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  return *reinterpret_cast<const std::uint32_t*>(p);
#else
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

PMQA_DEV std::uint64_t load_u64(const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  return *reinterpret_cast<const std::uint64_t*>(p);
#else
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
#endif
}

// 16 aligned bytes as four little-endian words: one 128-bit load (LDS.128 / LDG.128) on GPUs.
PMQA_DEV void load_words4(std::uint32_t (&w)[4], const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  std::memcpy(w, p, 16);
#endif
}

PMQA_KDEV_END
