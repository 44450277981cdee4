// The oracle's MXFP4 codec and the producers' quantizers (fp4.hpp).
#include "pmqa/reference/fp4.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace pmqa {
namespace {

constexpr std::array<float, 8> kMagnitudes = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

// The bf16 nearest to x, ties to even (what a cast to torch.bfloat16 gives).
float round_to_bf16(float x) noexcept {
  if (std::isnan(x)) return x;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xFFFF0000u);
}

std::uint8_t magnitude_code(float a, E2m1Rounding rounding) noexcept {
  if (!(a > 0.0f)) return 0;  // 0 and NaN
  if (a >= kMagnitudes[7]) return 7;
  std::uint8_t hi = 1;
  while (kMagnitudes[hi] < a) ++hi;  // kMagnitudes[hi - 1] < a <= kMagnitudes[hi]
  const float lo_value = kMagnitudes[hi - 1], hi_value = kMagnitudes[hi];
  const float to_lo = a - lo_value, to_hi = hi_value - a;
  if (to_lo < to_hi) return static_cast<std::uint8_t>(hi - 1);
  if (to_hi < to_lo) return hi;
  // A tie: each producer breaks it its own way.
  switch (rounding) {
    case E2m1Rounding::toward_zero:
      return static_cast<std::uint8_t>(hi - 1);
    case E2m1Rounding::toward_minus_inf:
      return static_cast<std::uint8_t>(hi - 1);  // positive: the lower magnitude (the sign flips it below)
    case E2m1Rounding::to_even:
      return (hi & 1u) == 0 ? hi : static_cast<std::uint8_t>(hi - 1);
  }
  return static_cast<std::uint8_t>(hi - 1);
}

}  // namespace

float decode_e2m1(std::uint8_t nibble) noexcept {
  const float m = kMagnitudes[nibble & 7u];
  return (nibble & 8u) ? -m : m;  // 0x8 gives -0.0f, which equals 0
}

std::uint8_t e2m1_nibble(std::span<const std::uint8_t> packed, std::int64_t i) noexcept {
  const std::uint8_t byte = packed[static_cast<std::size_t>(i / 2)];
  return (i % 2 == 0) ? (byte & 0x0Fu) : static_cast<std::uint8_t>(byte >> 4);
}

double decode_ue8m0(std::uint8_t e) noexcept {
  if (e == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(e) - 127);
}

std::string_view to_string(E2m1Rounding rounding) noexcept {
  switch (rounding) {
    case E2m1Rounding::toward_zero: return "toward-zero";
    case E2m1Rounding::toward_minus_inf: return "toward-minus-inf";
    case E2m1Rounding::to_even: return "to-even";
  }
  return "?";
}

const std::vector<Fp4Quantizer>& fp4_quantizers() {
  static const std::vector<Fp4Quantizer> all = {
      {.name = "deepgemm", .rounding = E2m1Rounding::toward_zero, .amax_floor = 1e-4f, .min_exponent_byte = 1,
       .max_exponent_byte = 254, .bf16_input = false},
      {.name = "aiter", .rounding = E2m1Rounding::toward_minus_inf, .amax_floor = 1e-8f, .min_exponent_byte = 0,
       .max_exponent_byte = 254, .bf16_input = false},
      {.name = "vllm", .rounding = E2m1Rounding::to_even, .amax_floor = std::ldexp(6.0f, -126), .min_exponent_byte = 0,
       .max_exponent_byte = 254, .bf16_input = true},
  };
  return all;
}

const Fp4Quantizer& fp4_quantizer(std::string_view name) {
  std::string known;
  for (const auto& q : fp4_quantizers()) {
    if (q.name == name) return q;
    known += (known.empty() ? "" : ", ") + std::string(q.name);
  }
  throw std::invalid_argument("unknown fp4 quantizer '" + std::string(name) + "' (expected " + known + ")");
}

std::uint8_t encode_e2m1(float x, E2m1Rounding rounding) noexcept {
  const bool negative = std::signbit(x) && x != 0.0f;
  const float a = std::fabs(x);
  std::uint8_t code = magnitude_code(a, rounding);
  // Toward -inf: a negative tie goes to the larger magnitude (the lower value).
  if (negative && rounding == E2m1Rounding::toward_minus_inf && code < 7 && a < kMagnitudes[7]) {
    const float lo = kMagnitudes[code], hi = kMagnitudes[code + 1];
    if (a - lo == hi - a) code = static_cast<std::uint8_t>(code + 1);
  }
  if (code == 0) return 0;  // no producer writes the negative zero
  return static_cast<std::uint8_t>(negative ? (code | 8u) : code);
}

void quantize_fp4_row(std::span<const float> x, std::span<std::uint8_t> packed, std::span<std::uint8_t> scales,
                      const Fp4Quantizer& qz) {
  const std::size_t groups = (x.size() + kFp4GroupSize - 1) / kFp4GroupSize;
  if (packed.size() * 2 != x.size() || scales.size() < groups)
    throw std::invalid_argument("quantize_fp4_row: buffers do not fit the row");
  std::fill(packed.begin(), packed.end(), std::uint8_t{0});
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t begin = g * kFp4GroupSize, end = std::min(x.size(), begin + kFp4GroupSize);
    float amax = 0.0f;
    for (std::size_t i = begin; i < end; ++i) {
      const float v = qz.bf16_input ? round_to_bf16(x[i]) : x[i];
      amax = std::max(amax, std::fabs(v));
    }
    amax = std::max(amax, qz.amax_floor);
    // 2^ceil(log2(amax / 6)) from the float's bits: the exponent, one more when the mantissa is not 0.
    int exponent = 0;
    const float mantissa = std::frexp(amax / 6.0f, &exponent);  // amax/6 = mantissa * 2^exponent, mantissa in [0.5, 1)
    const int power = mantissa == 0.5f ? exponent - 1 : exponent;
    const int byte = std::clamp(power + 127, qz.min_exponent_byte, qz.max_exponent_byte);
    scales[g] = static_cast<std::uint8_t>(byte);
    const float inverse = static_cast<float>(std::ldexp(1.0, 127 - byte));
    for (std::size_t i = begin; i < end; ++i) {
      const float v = qz.bf16_input ? round_to_bf16(x[i]) : x[i];
      const std::uint8_t code = encode_e2m1(v * inverse, qz.rounding);
      packed[i / 2] |= static_cast<std::uint8_t>((i % 2 == 0) ? code : code << 4);
    }
  }
}

}  // namespace pmqa
