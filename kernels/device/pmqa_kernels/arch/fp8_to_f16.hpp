// fp8 E4M3 -> f16, for fused-mma's f16 tensor-core path. Every value of either fp8 format is exact
// in f16 (largest 448, smallest subnormal 2^-10 against f16's 2^-24), NaN stays NaN, and products
// of two f16 values are exact in fp32: decoding to f16 loses nothing.
//
// Why f16 and not fp8 mma.sync: on sm_90 ptxas lowers mma.sync.m16n8k32 with e4m3 operands to
// F2FP conversions of both operands plus two HMMA.16816 and four FADDs per call (the SASS of
// fused-mma's kernel when it issued fp8 mma.sync: 128 HMMA, 0 QMMA, 320 F2FP); fused-mma reuses
// q across every chunk, so decoding it to f16 once and issuing HMMA directly removes most of that
// work.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"

PMQA_KDEV_BEGIN

// The f16 bit pattern of one fp8 code's value, assembled from its fields (integer only).
template <bool kFnuz>
PMQA_DEV std::uint32_t fp8_to_f16_bits(std::uint32_t code) {
  const std::uint32_t sign = (code & 0x80u) << 8;
  if (kFnuz ? code == 0x80u : (code & 0x7Fu) == 0x7Fu) return sign | 0x7E00u;  // NaN
  int exponent = static_cast<int>((code >> 3) & 15u);
  std::uint32_t mantissa = code & 7u;
  if (exponent == 0) {
    if (mantissa == 0) return sign;  // +-0 (FNUZ's 0x80 is its NaN, above)
    exponent = 1;                    // subnormal: normalise (f16 holds it as a normal number)
    while ((mantissa & 8u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 7u;
  }
  const int f16_exponent = exponent - (kFnuz ? 8 : 7) + 15;  // >= 5 for every code
  return sign | (static_cast<std::uint32_t>(f16_exponent) << 10) | (mantissa << 7);
}

// Bytes 2*kHalf and 2*kHalf+1 of `word` as an f16 pair (low byte -> low half). OCP on sm_89+ is one
// hardware conversion; everything else (FNUZ, the host) assembles the bits.
template <bool kFnuz, int kHalf>
PMQA_DEV std::uint32_t fp8x2_to_f16x2(std::uint32_t word) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (!kFnuz) {
    const unsigned short pair = static_cast<unsigned short>(word >> (16 * kHalf));
    std::uint32_t out;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(out) : "h"(pair));
    return out;
  }
#endif
  const std::uint32_t lo = (word >> (16 * kHalf)) & 0xFFu, hi = (word >> (16 * kHalf + 8)) & 0xFFu;
  return fp8_to_f16_bits<kFnuz>(lo) | (fp8_to_f16_bits<kFnuz>(hi) << 16);
}

// An f16 bit pattern's value (the host's emulation of the f16 tensor-core instruction).
PMQA_DEV float f16_bits_to_float(std::uint32_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  if (exponent == 31) return bits_to_float(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // subnormal, exact
  return sign ? -magnitude : magnitude;
}

PMQA_KDEV_END
