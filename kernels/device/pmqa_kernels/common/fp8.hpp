// The kernels' own fp8 E4M3 decode. It assembles the fp32 bit pattern directly (exponent rebias,
// mantissa shift) instead of evaluating the spec's formula as the reference does, so a bug in one
// cannot hide in the other; a test compares the two on all 256 codes of each format.
// On gfx942 (FNUZ) and gfx950 (OCP) the hardware conversion is used for the arch's own format.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"

PMQA_KDEV_BEGIN

template <bool kFnuz>
PMQA_DEV float fp8_to_float(std::uint8_t code) {
#if defined(__gfx942__)
  if constexpr (kFnuz) return __builtin_amdgcn_cvt_f32_fp8(static_cast<int>(code), 0);
#elif defined(__gfx950__)
  if constexpr (!kFnuz) return __builtin_amdgcn_cvt_f32_fp8(static_cast<int>(code), 0);
#endif
  // FN: bias 7, NaN = S.1111.111; FNUZ: bias 8, NaN = 1.0000.000 (its only NaN, and no -0).
  constexpr std::uint32_t kRebias = kFnuz ? 127 - 8 : 127 - 7;
  const std::uint32_t sign = static_cast<std::uint32_t>(code & 0x80u) << 24;
  const std::uint32_t em = code & 0x7Fu;
  if (kFnuz ? code == 0x80u : em == 0x7Fu) return quiet_nan();
  const std::uint32_t exponent = em >> 3;
  const std::uint32_t mantissa = em & 7u;
  if (exponent != 0) return bits_to_float(sign | ((exponent + kRebias) << 23) | (mantissa << 20));
  // Subnormal: m * 2^(1 - bias - 3), an exact product; the sign is applied to the bits so that
  // FN's 0x80 comes out as -0.
  const float magnitude = static_cast<float>(mantissa) * (kFnuz ? 0x1p-10f : 0x1p-9f);
  return sign ? -magnitude : magnitude;
}

PMQA_KDEV_END
