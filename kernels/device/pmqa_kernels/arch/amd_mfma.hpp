// AMD's fp8 matrix instruction v_mfma_f32_16x16x32_fp8_fp8 (CDNA3 gfx940-942: FNUZ bytes; CDNA4
// gfx950: OCP bytes) and its register fragments, for a wave of 64. On a gfx942/gfx950 device with
// data in that arch's own format it is the instruction (__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8);
// everywhere else -- the host executor, or data in the other format -- a portable emulation gathers
// the operands with wave shuffles and computes the same products exactly, so the fragment indexing
// runs, and is checked, in CI. The emulation decodes A (the keys) and B (the queries) through the
// kernel's Hooks (common/faults.hpp), as the instruction decodes its operands: production's hooks
// decode exactly as the instruction does, and a planted decode (a kernel feeding bytes to the
// variant of the other format, a scale constant folded into the keys) reaches the matrix-unit
// kernel as it reaches the portable ones.
//
//   lane l = 16*g + c (g = l/16, c = l%16), 8 bytes per operand:
//   A 16x32: byte e -> A[c][8g + e]      B 32x16: byte e -> B[8g + e][c]
//   C 16x16 f32, 4 values: i -> C[4g + i][c]
#pragma once

#include "pmqa_kernels/common/fp8.hpp"

PMQA_KDEV_BEGIN

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define PMQA_MFMA_NATIVE_FNUZ 1
#elif defined(__gfx950__)  // clang-19 does not know gfx950: this branch needs ROCm 7's compiler
#define PMQA_MFMA_NATIVE_OCP 1
#endif

struct AmdMfma {
  static constexpr int kWarp = 64;
  static constexpr int kM = 16, kN = 16, kK = 32;

  static PMQA_DEV int a_row(int lane) { return lane % 16; }
  static PMQA_DEV int a_col(int lane) { return 8 * (lane / 16); }  // + byte
  static PMQA_DEV int b_row(int lane) { return 8 * (lane / 16); }  // + byte (k)
  static PMQA_DEV int b_col(int lane) { return lane % 16; }
  static PMQA_DEV int c_row(int lane, int i) { return 4 * (lane / 16) + i; }
  static PMQA_DEV int c_col(int lane) { return lane % 16; }

  // c += A * B with fp8 operands in format kFnuz.
  template <class Hooks, bool kFnuz>
  static PMQA_DEV void mfma(float (&c)[4], std::uint64_t a, std::uint64_t b) {
#if defined(PMQA_MFMA_NATIVE_FNUZ) || defined(PMQA_MFMA_NATIVE_OCP)
#if defined(PMQA_MFMA_NATIVE_FNUZ)
    constexpr bool kNative = kFnuz;
#else
    constexpr bool kNative = !kFnuz;
#endif
    if constexpr (kNative) {
      typedef float float4_t __attribute__((ext_vector_type(4)));
      float4_t acc = {c[0], c[1], c[2], c[3]};
      acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(static_cast<long>(a), static_cast<long>(b), acc, 0, 0, 0);
      for (int i = 0; i < 4; ++i) c[i] = acc[i];
      return;
    }
#endif
    emulate<Hooks, kFnuz>(c, a, b);
  }

  // The same contraction from shuffled operands (products exact in fp32; the k-sum order differs
  // from the hardware's, which is the tolerance model's business).
  template <class Hooks, bool kFnuz>
  static PMQA_DEV void emulate(float (&c)[4], std::uint64_t a, std::uint64_t b) {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
    const int g = lane / 16, col = lane % 16;
    // A rows 4g..4g+3 live in lanes 16*kg + row (kg = k/8); B column `col` in lanes 16*kg + col.
    unsigned long long arow[4][4], bcol[4];
    for (int kg = 0; kg < 4; ++kg) {
      for (int i = 0; i < 4; ++i) arow[i][kg] = __shfl(static_cast<unsigned long long>(a), 16 * kg + 4 * g + i, kWarp);
      bcol[kg] = __shfl(static_cast<unsigned long long>(b), 16 * kg + col, kWarp);
    }
    for (int i = 0; i < 4; ++i) {
      float sum = c[i];
      for (int k = 0; k < kK; ++k) {
        const int shift = 8 * (k % 8);
        sum += Hooks::template decode_k<kFnuz>(static_cast<std::uint8_t>(arow[i][k / 8] >> shift)) *
               Hooks::template decode_q<kFnuz>(static_cast<std::uint8_t>(bcol[k / 8] >> shift));
      }
      c[i] = sum;
    }
  }
};

PMQA_KDEV_END
