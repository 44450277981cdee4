// NVIDIA's tensor-core instruction as fused-mma issues it, for a warp of 32. On sm_80 and later it
// is the instruction; everywhere else (the host executor) a portable emulation gathers the
// operands with warp shuffles and computes the same products exactly, so the kernel's fragment
// indexing runs, and is checked, in CI.
#pragma once

#include "pmqa_kernels/arch/fp8_to_f16.hpp"

PMQA_KDEV_BEGIN

// The f16 tensor-core instruction mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (sm_80+), the
// one fused-mma issues (arch/fp8_to_f16.hpp says why). Fragments, with lane = 4g + t:
//   A 16x16 (row-major), 4 x f16x2: reg r, half e -> A[g + 8*(r&1)][2t + e + 8*(r>>1)]
//   B 16x8  (col-major), 2 x f16x2: reg r, half e -> B[2t + e + 8r][g]
//   C 16x8  f32, 4 values:                       i -> C[g + 8*(i>>1)][2t + (i&1)]
// The host emulates it from shuffled operands; products of f16 values are exact in fp32.
struct NvMmaF16 {
  static constexpr int kWarp = 32;
  static constexpr int kM = 16, kN = 8, kK = 16;

  static PMQA_DEV void mma(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    emulate(c, a, b);
#endif
  }

  static PMQA_DEV void emulate(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const int g = lane >> 2, t = lane & 3;
    // Rows g and g+8 of A live in lanes 4g..4g+3; columns 2t and 2t+1 of B in lanes 8t.. and 8t+4..
    std::uint32_t arow[4][4], bcol[2][4][2];
    for (int src = 0; src < 4; ++src)
      for (int r = 0; r < 4; ++r) arow[src][r] = __shfl(a[r], 4 * g + src, kWarp);
    for (int col = 0; col < 2; ++col)
      for (int src = 0; src < 4; ++src)
        for (int r = 0; r < 2; ++r) bcol[col][src][r] = __shfl(b[r], 4 * (2 * t + col) + src, kWarp);
    for (int i = 0; i < 4; ++i) {
      const int row_hi = i >> 1, col = i & 1;
      float sum = c[i];
      for (int k = 0; k < kK; ++k) {
        // A[g + 8*row_hi][k]: lane 4g + (k%8)/2, reg row_hi + 2*(k/8), half k%2
        const std::uint32_t aw = arow[(k & 7) >> 1][row_hi + 2 * (k >> 3)];
        // B[k][2t + col]: lane 4*(2t+col) + (k%8)/2, reg k/8, half k%2
        const std::uint32_t bw = bcol[col][(k & 7) >> 1][k >> 3];
        const int shift = 16 * (k & 1);
        sum += f16_bits_to_float((aw >> shift) & 0xFFFFu) * f16_bits_to_float((bw >> shift) & 0xFFFFu);
      }
      c[i] = sum;
    }
  }
};

PMQA_KDEV_END
