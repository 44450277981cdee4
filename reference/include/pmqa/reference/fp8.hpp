// The oracle's own fp8 E4M3 codec (spec §3). It is written from the spec's formulas and shares
// nothing with the kernels' device-side decode, so a bug in one cannot hide in the other.
#pragma once

#include <cstdint>
#include <string_view>

namespace pmqa {

// The two E4M3 encodings in use. Both: 1 sign, 4 exponent, 3 mantissa bits, no infinities.
enum class Fp8Format : std::uint8_t {
  e4m3fn,    // OCP: bias 7, max 448 (0x7E), NaN 0x7F/0xFF, -0 is 0x80 (NVIDIA sm_89+, gfx950, gfx12xx)
  e4m3fnuz,  // bias 8, max 240 (0x7F), NaN only 0x80, no -0 (gfx940/941/942)
};

// What encode does with a value whose rounded magnitude is past the largest finite.
enum class Fp8Overflow : std::uint8_t {
  saturate,  // clamp to +-largest finite (quantisers that clamp first)
  nan,       // become NaN (the IEEE-style cast)
};

// Exact decode of one byte: every fp8 value is exactly representable in float.
float decode_fp8(Fp8Format format, std::uint8_t code) noexcept;

// Round-to-nearest-even encode. NaN in gives the format's NaN; on FNUZ a negative value that
// rounds to zero gives 0x00 (FNUZ has no -0; 0x80 is its NaN).
std::uint8_t encode_fp8(Fp8Format format, float value, Fp8Overflow overflow) noexcept;

float fp8_max_finite(Fp8Format format) noexcept;  // 448 or 240
bool is_fp8_nan(Fp8Format format, std::uint8_t code) noexcept;

std::string_view to_string(Fp8Format format) noexcept;  // "e4m3fn" / "e4m3fnuz"
std::string_view to_string(Fp8Overflow overflow) noexcept;
// Accepts "e4m3fn" ("fn", "ocp") and "e4m3fnuz" ("fnuz"); throws std::invalid_argument otherwise.
Fp8Format parse_fp8_format(std::string_view text);

}  // namespace pmqa
