// The oracle's own MXFP4 codec: e2m1 values with UE8M0 scales, one per 32 values along head_dim
// (the OCP microscaling format the FP4 indexer kernels read). Written from the format's definition
// and sharing nothing with the kernels' device-side decode, as fp8.hpp.
//
//   e2m1 nibble: bit 3 the sign, bits 0..2 index the magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}; the
//   negative zero 0x8 is 0. Element 2i sits in the low nibble of byte i, element 2i+1 in the high.
//   UE8M0 byte e: 2^(e - 127); 0xFF is NaN in the OCP format. Four of them pack into one little-
//   endian int32 per (token, head) at D = 128, byte g covering elements [32g, 32g + 32); at D = 64
//   bytes 2 and 3 are padding no reader may use.
//
// Every decoded value is exact in float; so is a product of two and a 32-term sum of such products
// (|sum| <= 1152 in steps of 1/4), and scaling by a power of two. The quantizers below are the
// producers' (fp4-indexer-facts.md §1.3): they differ at ties and in their amax floor, which is why
// cases name the one that made them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace pmqa {

inline constexpr int kFp4GroupSize = 32;  // values per UE8M0 scale

float decode_e2m1(std::uint8_t nibble) noexcept;             // the low 4 bits; 0x8 gives 0
std::uint8_t e2m1_nibble(std::span<const std::uint8_t> packed, std::int64_t i) noexcept;  // element i
double decode_ue8m0(std::uint8_t e) noexcept;                // 2^(e - 127); NaN for 0xFF

// How a producer rounds x / scale to an e2m1 magnitude (values past 6 saturate to 6 in every one).
enum class E2m1Rounding : std::uint8_t {
  toward_zero,  // DeepGEMM's and FlashInfer's test quantizers: the code counts the thresholds below |x|
  toward_minus_inf,  // AITER's test quantizer: the nearest grid value, ties to the lower one
  to_even,           // vLLM's PTX cvt.rn.satfinite.e2m1x2 (after rounding the input to bf16)
};
std::string_view to_string(E2m1Rounding rounding) noexcept;

// One producer's quantizer: its rounding, its amax floor and how it clamps the scale's exponent.
struct Fp4Quantizer {
  std::string_view name;       // "deepgemm", "aiter", "vllm"
  E2m1Rounding rounding = E2m1Rounding::toward_zero;
  float amax_floor = 1e-4f;    // amax = max(amax, floor) before the scale is taken
  int min_exponent_byte = 1;   // the biased exponent is clamped to [min, max]
  int max_exponent_byte = 254;
  bool bf16_input = false;     // the input is rounded to bf16 first (vLLM)
};
const std::vector<Fp4Quantizer>& fp4_quantizers();  // deepgemm, aiter, vllm
const Fp4Quantizer& fp4_quantizer(std::string_view name);  // throws std::invalid_argument naming the known ones

std::uint8_t encode_e2m1(float x, E2m1Rounding rounding) noexcept;  // x already divided by the scale

// Quantizes one row of `x` (a multiple of 32 values, or 64 with the last group padded) into packed
// nibbles (x.size() / 2 bytes) and one UE8M0 byte per group: scale = 2^ceil(log2(amax / 6)) from the
// float's bits (amax floored), clamped; code = encode_e2m1(x / scale).
void quantize_fp4_row(std::span<const float> x, std::span<std::uint8_t> packed, std::span<std::uint8_t> scales,
                      const Fp4Quantizer& quantizer);

}  // namespace pmqa
