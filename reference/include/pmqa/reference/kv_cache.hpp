// The oracle's own KV-cache indexing (spec §2): where token t's values and scale sit inside one
// physical block, for both value layouts, and a reader/writer over a Case's kv_cache bytes.
#pragma once

#include <cstdint>
#include <span>

#include "pmqa/model/case.hpp"
#include "pmqa/reference/fp4.hpp"
#include "pmqa/reference/fp8.hpp"

namespace pmqa {

// Byte offset of value (t, d) inside a block's value region.
std::int64_t kv_value_offset(KvLayout layout, std::int64_t t, std::int64_t d, std::int64_t head_dim) noexcept;

// Byte offset of token t's little-endian fp32 scale inside a block.
inline std::int64_t kv_scale_offset(std::int64_t block_size, std::int64_t head_dim, std::int64_t t) noexcept {
  return block_size * head_dim + 4 * t;
}

// e2m1 (case.hpp's layouts): the byte holding value d of token t (its low nibble when d is even),
// and the byte of token t's scale for values [32g, 32g + 32), inside a block.
std::int64_t kv_fp4_value_offset(KvLayout layout, std::int64_t t, std::int64_t d, std::int64_t head_dim) noexcept;
std::int64_t kv_fp4_scale_offset(KvLayout layout, std::int64_t block_size, std::int64_t head_dim, std::int64_t t,
                                 std::int64_t g) noexcept;

// Reads decoded keys and scales of a case's cache (no validation beyond what validate() did).
class KvReader {
 public:
  explicit KvReader(const Case& c) noexcept : c_(c) {}
  std::uint8_t value_code(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept;
  float value(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept;
  float scale(std::int64_t block, std::int64_t t) const noexcept;
  // Decodes token t of `block` into out[0..D) (fp8 cases).
  void decode_token(std::int64_t block, std::int64_t t, std::span<float> out) const noexcept;
  // e2m1 cases: value d's nibble, and the UE8M0 byte of its group g.
  std::uint8_t fp4_nibble(std::int64_t block, std::int64_t t, std::int64_t d) const noexcept;
  std::uint8_t fp4_scale_byte(std::int64_t block, std::int64_t t, std::int64_t g) const noexcept;

 private:
  const Case& c_;
};

// How fp32 data becomes fp8 codes plus one fp32 scale per token (or per (token, head) for q).
struct QuantConfig {
  Fp8Format format = Fp8Format::e4m3fn;
  float fp8_max = 448.0f;       // 448 (OCP), 224 (vLLM on FNUZ) or 240 (AITER tests on FNUZ)
  bool power_of_two_scale = false;  // "ue8m0": scale rounded up to a power of two
  Fp8Overflow overflow = Fp8Overflow::saturate;
};

// scale = max(amax, 1e-4) / fp8_max (rounded up to 2^k if asked); codes[i] = encode(x[i] / scale).
// Returns the scale.
float quantize_row(std::span<const float> x, std::span<std::uint8_t> codes, const QuantConfig& cfg);

// Quantises one token's D values into physical block `block`, slot t, of the case's cache,
// honouring the case's layout and block stride.
void write_token(Case& c, std::int64_t block, std::int64_t t, std::span<const float> x, const QuantConfig& cfg);

// Writes raw codes and a raw scale for token t (used to plant special codes).
void write_token_codes(Case& c, std::int64_t block, std::int64_t t, std::span<const std::uint8_t> codes, float scale);

// e2m1: quantizes one token's D values with a producer's quantizer into block `block`, slot t,
// honouring the case's layout (head_dim 64 pads the scale word with 127, as DeepGEMM's quantizer);
// and writes raw nibbles (D/2 packed bytes) and raw scale bytes (4) for token t.
void write_fp4_token(Case& c, std::int64_t block, std::int64_t t, std::span<const float> x, const Fp4Quantizer& q);
void write_fp4_token_codes(Case& c, std::int64_t block, std::int64_t t, std::span<const std::uint8_t> packed,
                           std::span<const std::uint8_t> scales);

// Rewrites a case's cache into another value layout (the same keys, bytes moved).
Case with_layout(const Case& c, KvLayout layout);

}  // namespace pmqa
