// The kernels' own MXFP4 decode and addressing: e2m1 values (two a byte) with UE8M0 scales, one
// per 32 values along head_dim (model/value_format.hpp names the format, case.hpp the layouts).
// Like fp8.hpp it assembles fp32 bit patterns and indexes with shifts and masks, where the oracle
// (reference/fp4.cpp, kv_cache.cpp) uses a magnitude table and divisions: the two share no code,
// so a bug in one cannot hide in the other.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"
#include "pmqa_kernels/common/params.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kE2m1Group = 32;  // values per UE8M0 scale

// An e2m1 nibble (bits 0..2 used, bit 3 the sign): exponent e = bits 1..2 (bias 1), mantissa bit 0.
// e = 0 is the subnormal 0 or 0.5. The negative zero 0x8 comes out as -0.0f, which adds nothing to
// any sum (the producers' decoders give +0; no logit can tell them apart).
PMQA_DEV float e2m1_to_float(std::uint32_t nibble) {
  const std::uint32_t sign = (nibble & 8u) << 28;
  const std::uint32_t e = (nibble >> 1) & 3u;
  const std::uint32_t m = nibble & 1u;
  if (e == 0) return bits_to_float(sign | (m != 0 ? 0x3F000000u : 0u));  // +-0.5 or +-0
  return bits_to_float(sign | ((e + 126u) << 23) | (m << 22));        // 2^(e-1) * (1 + m/2)
}

// A UE8M0 byte: 2^(e - 127), the byte placed in fp32's exponent field. 0 is 2^-127, fp32's one
// subnormal power of two in reach; 0xFF is the format's NaN (no valid case holds it where read).
PMQA_DEV float ue8m0_to_float(std::uint32_t e) {
  if (e == 0xFFu) return quiet_nan();
  if (e == 0) return bits_to_float(0x00400000u);
  return bits_to_float(e << 23);
}

// Element d of a packed pair: element 2i in the low nibble of byte i, 2i+1 in the high one.
PMQA_DEV std::uint32_t e2m1_nibble(std::uint8_t byte, int d) { return (d & 1) != 0 ? byte >> 4 : byte & 0x0Fu; }

// Byte offset of value (t, d) within a block of kD-value tokens. normal and interleaved: token-major
// rows of kD/2 bytes. shuffle (AITER, 64-token pages): the 16 bytes of token t's 32-value chunk c
// sit at (c*64 + t)*16.
template <int kD>
PMQA_DEV std::int64_t e2m1_value_offset(const LogitsParams& p, std::int64_t t, int d) {
  if (p.shuffle == 0) return t * (kD / 2) + (d >> 1);
  return ((static_cast<std::int64_t>(d >> 5) * 64 + t) << 4) + ((d & 31) >> 1);
}

// Byte offset of token t's scale byte of group g within a block, after its block_size*kD/2 value
// bytes. normal: one 4-byte word per token in token order. interleaved (FlashInfer, block 128):
// word slot k holds token (k % 4)*32 + k/4, so token t is in slot (t % 32)*4 + t/32. shuffle
// (AITER): group g's 64 bytes, token t at (t % 16)*4 + t/16.
template <int kD>
PMQA_DEV std::int64_t e2m1_scale_offset(const LogitsParams& p, std::int64_t t, int g) {
  const std::int64_t region = p.block_size * (kD / 2);
  if (p.shuffle != 0) return region + g * 64 + ((t & 15) << 2) + (t >> 4);
  const std::int64_t slot = p.interleaved != 0 ? ((t & 31) << 2) + (t >> 5) : t;
  return region + (slot << 2) + g;
}

PMQA_KDEV_END
