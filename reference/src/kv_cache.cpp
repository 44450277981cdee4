#include "pmqa/reference/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace pmqa {

std::int64_t kv_value_offset(KvLayout layout, std::int64_t t, std::int64_t d, std::int64_t head_dim) noexcept {
  if (layout == KvLayout::normal) return t * head_dim + d;
  // 16-token x 16-byte tiles: tile row (t/16) holds D/16 tiles of 256 bytes each.
  return (t / 16) * 16 * head_dim + (d / 16) * 256 + (t % 16) * 16 + (d % 16);
}

std::int64_t kv_fp4_value_offset(KvLayout layout, std::int64_t t, std::int64_t d, std::int64_t head_dim) noexcept {
  if (layout != KvLayout::shuffle) return t * (head_dim / 2) + d / 2;
  // AITER's page: 32-value chunks, each token's 16 bytes of a chunk side by side, chunk after chunk.
  return ((d / 32) * 64 + t) * 16 + (d % 32) / 2;
}

std::int64_t kv_fp4_scale_offset(KvLayout layout, std::int64_t block_size, std::int64_t head_dim, std::int64_t t,
                                 std::int64_t g) noexcept {
  const std::int64_t region = block_size * (head_dim / 2);
  switch (layout) {
    case KvLayout::normal: return region + 4 * t + g;
    case KvLayout::interleaved: return region + 4 * ((t % 32) * 4 + t / 32) + g;  // slot k holds token (k%4)*32 + k/4
    case KvLayout::shuffle: return region + g * 64 + (t % 16) * 4 + t / 16;       // token t at s = (t%16)*4 + t/16
  }
  return region;
}

std::uint8_t KvReader::fp4_nibble(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept {
  const std::uint8_t byte =
      c_.kv_cache[static_cast<std::size_t>(block * c_.block_stride + kv_fp4_value_offset(c_.layout, t, d, c_.head_dim))];
  return d % 2 == 0 ? (byte & 0x0Fu) : static_cast<std::uint8_t>(byte >> 4);
}

std::uint8_t KvReader::fp4_scale_byte(std::int64_t block, std::int64_t t, std::int64_t g) const noexcept {
  return c_.kv_cache[static_cast<std::size_t>(block * c_.block_stride +
                                              kv_fp4_scale_offset(c_.layout, c_.block_size, c_.head_dim, t, g))];
}

std::uint8_t KvReader::value_code(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept {
  return c_.kv_cache[static_cast<std::size_t>(block * c_.block_stride + kv_value_offset(c_.layout, t, d, c_.head_dim))];
}

float KvReader::value(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept {
  return decode_fp8(*fp8_of(c_.format), value_code(block, t, d));
}

float KvReader::scale(std::int64_t block, std::int64_t t) const noexcept {
  float s;
  std::memcpy(&s, c_.kv_cache.data() + block * c_.block_stride + kv_scale_offset(c_.block_size, c_.head_dim, t), 4);
  return s;
}

void KvReader::decode_token(std::int64_t block, std::int64_t t, std::span<float> out) const noexcept {
  for (std::int64_t d = 0; d < c_.head_dim; ++d) out[static_cast<std::size_t>(d)] = value(block, t, d);
}

float quantize_row(std::span<const float> x, std::span<std::uint8_t> codes, const QuantConfig& cfg) {
  float amax = 0.0f;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  float scale = std::max(amax, 1e-4f) / cfg.fp8_max;
  if (cfg.power_of_two_scale) {
    // Round up to 2^k with frexp (exact on every libm, unlike log2/exp2): scale = m * 2^e, m in [0.5, 1).
    int e = 0;
    const float m = std::frexp(scale, &e);
    scale = std::ldexp(1.0f, m == 0.5f ? e - 1 : e);
  }
  for (std::size_t i = 0; i < x.size(); ++i) codes[i] = encode_fp8(cfg.format, x[i] / scale, cfg.overflow);
  return scale;
}

void write_token_codes(Case& c, std::int64_t block, std::int64_t t, std::span<const std::uint8_t> codes, float scale) {
  std::uint8_t* base = c.kv_cache.data() + block * c.block_stride;
  for (std::int64_t d = 0; d < c.head_dim; ++d)
    base[kv_value_offset(c.layout, t, d, c.head_dim)] = codes[static_cast<std::size_t>(d)];
  std::memcpy(base + kv_scale_offset(c.block_size, c.head_dim, t), &scale, 4);
}

void write_token(Case& c, std::int64_t block, std::int64_t t, std::span<const float> x, const QuantConfig& cfg) {
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(c.head_dim));
  const float scale = quantize_row(x, codes, cfg);
  write_token_codes(c, block, t, codes, scale);
}

void write_fp4_token_codes(Case& c, std::int64_t block, std::int64_t t, std::span<const std::uint8_t> packed,
                           std::span<const std::uint8_t> scales) {
  std::uint8_t* base = c.kv_cache.data() + block * c.block_stride;
  for (std::int64_t d = 0; d < c.head_dim; d += 2)
    base[kv_fp4_value_offset(c.layout, t, d, c.head_dim)] = packed[static_cast<std::size_t>(d / 2)];
  for (std::int64_t g = 0; g < kScaleWordBytes; ++g)
    base[kv_fp4_scale_offset(c.layout, c.block_size, c.head_dim, t, g)] = scales[static_cast<std::size_t>(g)];
}

void write_fp4_token(Case& c, std::int64_t block, std::int64_t t, std::span<const float> x, const Fp4Quantizer& q) {
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(c.head_dim / 2));
  std::vector<std::uint8_t> scales(static_cast<std::size_t>(kScaleWordBytes), 127);  // D = 64: 2 and 3 stay 1.0
  quantize_fp4_row(x, packed, scales, q);
  write_fp4_token_codes(c, block, t, packed, scales);
}

Case with_layout(const Case& c, KvLayout layout) {
  Case out = c;
  out.layout = layout;
  if (layout == c.layout) return out;
  if (is_fp4(c.format)) {
    const KvReader from(c);
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(c.head_dim / 2)), scales(kScaleWordBytes);
    for (std::int64_t p = 0; p < c.num_blocks; ++p)
      for (std::int64_t t = 0; t < c.block_size; ++t) {
        for (std::int64_t d = 0; d < c.head_dim; d += 2)
          packed[static_cast<std::size_t>(d / 2)] =
              static_cast<std::uint8_t>(from.fp4_nibble(p, t, d) | (from.fp4_nibble(p, t, d + 1) << 4));
        for (std::int64_t g = 0; g < kScaleWordBytes; ++g)
          scales[static_cast<std::size_t>(g)] = c.kv_cache[static_cast<std::size_t>(
              p * c.block_stride + kv_fp4_scale_offset(c.layout, c.block_size, c.head_dim, t, g))];
        write_fp4_token_codes(out, p, t, packed, scales);
      }
    return out;
  }
  const std::int64_t value_bytes = c.block_size * c.head_dim;
  for (std::int64_t p = 0; p < c.num_blocks; ++p) {
    const std::uint8_t* src = c.kv_cache.data() + p * c.block_stride;
    std::uint8_t* dst = out.kv_cache.data() + p * c.block_stride;
    std::fill(dst, dst + value_bytes, std::uint8_t{0});
    for (std::int64_t t = 0; t < c.block_size; ++t)
      for (std::int64_t d = 0; d < c.head_dim; ++d)
        dst[kv_value_offset(layout, t, d, c.head_dim)] = src[kv_value_offset(c.layout, t, d, c.head_dim)];
  }
  return out;
}

}  // namespace pmqa
