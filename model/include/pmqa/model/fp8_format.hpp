// The fp8 formats and overflow behaviours, by one spelling each. Only the names live here: the
// codec that gives their bytes a value is the oracle's (pmqa/reference/fp8.hpp), and the kernels
// carry their own device-side decode, so neither can borrow the other's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

std::string_view to_string(Fp8Format format) noexcept;  // "e4m3fn" / "e4m3fnuz": files, messages, JSON
std::string_view short_name(Fp8Format format) noexcept;  // "fn" / "fnuz": narrow table columns
std::string_view to_string(Fp8Overflow overflow) noexcept;  // "saturate" / "nan"
// Accepts "e4m3fn" and "e4m3fnuz"; throws std::invalid_argument otherwise.
Fp8Format parse_fp8_format(std::string_view text);
std::vector<std::string> fp8_format_names();  // every format as to_string spells it, in enumerator order

}  // namespace pmqa
