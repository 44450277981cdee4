// The oracle's own fp8 E4M3 codec (spec §3). It is written from the spec's formulas and shares
// nothing with the kernels' device-side decode, so a bug in one cannot hide in the other. The
// formats' names are the model's (pmqa/model/fp8_format.hpp).
#pragma once

#include <cstdint>

#include "pmqa/model/fp8_format.hpp"

namespace pmqa {

// Exact decode of one byte: every fp8 value is exactly representable in float.
float decode_fp8(Fp8Format format, std::uint8_t code) noexcept;

// Round-to-nearest-even encode. NaN in gives the format's NaN; on FNUZ a negative value that
// rounds to zero gives 0x00 (FNUZ has no -0; 0x80 is its NaN).
std::uint8_t encode_fp8(Fp8Format format, float value, Fp8Overflow overflow) noexcept;

float fp8_max_finite(Fp8Format format) noexcept;  // 448 or 240
bool is_fp8_nan(Fp8Format format, std::uint8_t code) noexcept;

}  // namespace pmqa
