// The tensor cores' 128-byte swizzle for K-major operands in shared memory (what wgmma reads and
// what a tensor-map copy with CU_TENSOR_MAP_SWIZZLE_128B writes): rows of 128 bytes, row r's
// 16-byte segment s stored at segment s ^ (r & 7), so the 8 rows of a 1024-byte period spread
// each segment column over every bank group. A layout fact of the instruction, not of a kernel.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"

PMQA_KDEV_BEGIN

struct Swizzle128 {
  static constexpr int kRowBytes = 128;
  static PMQA_DEV int segment(int r, int s) { return r * kRowBytes + 16 * (s ^ (r & 7)); }
};

PMQA_KDEV_END
