#include "pmqa/reference/fp8.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace pmqa {
namespace {

// Spec §3, table: bias 7 (FN) or 8 (FNUZ); subnormal m * 2^(1 - bias - 3).
struct FormatTraits {
  int bias;
  std::uint8_t max_code;  // largest finite positive code
};

constexpr FormatTraits traits(Fp8Format f) noexcept {
  return f == Fp8Format::e4m3fn ? FormatTraits{7, 0x7E} : FormatTraits{8, 0x7F};
}

// Value of a positive code (sign bit clear, not NaN), straight from the formula.
float positive_value(int bias, std::uint8_t code) noexcept {
  const int e = (code >> 3) & 0xF;
  const int m = code & 0x7;
  if (e == 0) return std::ldexp(static_cast<float>(m), 1 - bias - 3);
  return std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - bias);
}

}  // namespace

bool is_fp8_nan(Fp8Format format, std::uint8_t code) noexcept {
  if (format == Fp8Format::e4m3fn) return (code & 0x7F) == 0x7F;
  return code == 0x80;
}

float decode_fp8(Fp8Format format, std::uint8_t code) noexcept {
  if (is_fp8_nan(format, code)) return std::numeric_limits<float>::quiet_NaN();
  const float v = positive_value(traits(format).bias, code & 0x7F);
  return (code & 0x80) ? -v : v;
}

float fp8_max_finite(Fp8Format format) noexcept {
  const auto t = traits(format);
  return positive_value(t.bias, t.max_code);
}

std::uint8_t encode_fp8(Fp8Format format, float value, Fp8Overflow overflow) noexcept {
  const auto t = traits(format);
  const std::uint8_t nan_code = format == Fp8Format::e4m3fn ? 0x7F : 0x80;
  if (std::isnan(value)) return nan_code;
  const bool negative = std::signbit(value);
  const double a = std::fabs(static_cast<double>(value));

  // Positive codes 0..max_code are increasing in value. Find the neighbours lo <= a < hi and
  // round to nearest, ties to the even code (the code's LSB is the mantissa's LSB). Past the
  // largest finite the upper neighbour is the virtual code max_code + 1 (one more quantum), so
  // the IEEE-style cast rounds exactly as if the exponent range went on.
  std::uint8_t code;
  const double max_v = positive_value(t.bias, t.max_code);
  const double quantum_top = max_v - positive_value(t.bias, static_cast<std::uint8_t>(t.max_code - 1));
  if (a >= max_v) {
    const double next = max_v + quantum_top;
    const bool max_is_even = (t.max_code & 1) == 0;
    const bool rounds_to_max = a < (max_v + next) / 2 || (a == (max_v + next) / 2 && max_is_even);
    if (rounds_to_max || overflow == Fp8Overflow::saturate) {
      code = t.max_code;
    } else {
      return nan_code;
    }
  } else {
    std::uint8_t lo = 0;
    std::uint8_t hi = t.max_code;
    while (hi - lo > 1) {  // invariant: value(lo) <= a < value(hi)
      const auto mid = static_cast<std::uint8_t>((lo + hi) / 2);
      if (positive_value(t.bias, mid) <= a) lo = mid; else hi = mid;
    }
    const double vlo = positive_value(t.bias, lo);
    const double vhi = positive_value(t.bias, hi);
    const double mid = (vlo + vhi) / 2;  // exact in double
    if (a < mid) code = lo;
    else if (a > mid) code = hi;
    else code = (lo & 1) == 0 ? lo : hi;
  }
  if (!negative) return code;
  if (code == 0) return format == Fp8Format::e4m3fnuz ? 0x00 : 0x80;  // FNUZ has no -0
  return static_cast<std::uint8_t>(code | 0x80);
}

}  // namespace pmqa
