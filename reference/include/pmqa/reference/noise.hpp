// The oracle's half of the tolerance model (pmqa/model/tolerance.hpp describes it): the noise
// scales of a cell, its sigma under a profile, and the gates' limits. Kept out of the model so
// that the kernels, which link the model, cannot compute their own bounds from the oracle's code.
#pragma once

#include <cstdint>
#include <string_view>

#include "pmqa/model/tolerance.hpp"

namespace pmqa {

// The scales one cell's rounding errors grow with (S_D, S_H, S_T), from the reference.
struct NoiseScales {
  double over_d = 0;  // S_D
  double over_h = 0;  // S_H
  double terms = 0;   // S_T
};

// The gates' limits, as the report prints them.
enum class Gate : std::uint8_t { element, block, row, global, bias };
std::string_view to_string(Gate gate) noexcept;

// The bias gate's two signed means (tolerance.hpp): of err / sigma (offset) and of
// err / sigma x sign(ref) (scale).
enum class BiasKind : std::uint8_t { offset, scale };
std::string_view to_string(BiasKind kind) noexcept;
// What a signed mean of that kind says about the output: "magnitude too large" / "magnitude too
// small" (scale), "above the reference" / "below the reference" (offset).
std::string_view bias_sign(BiasKind kind, double mean) noexcept;

// One cell's sigma under `tolerance`. ref_unit is the reference's own per-add error (2^-24 for the
// fp32 reference, 2^-53 for fp64), entering with the same shape as the kernel's fp32 terms.
double cell_sigma(const Tolerance& tolerance, const NoiseScales& noise, double abs_logit, long head_dim, long heads,
                  double ref_unit) noexcept;
inline double element_limit(const Tolerance& tolerance, double sigma) noexcept { return tolerance.z_element * sigma; }
// The limit on rms(err / sigma) over a region of `cells` compared cells.
double region_limit(const Tolerance& tolerance, std::int64_t cells) noexcept;
// The limit on |mean err / sigma| (either kind) over a region of `cells` compared cells.
double bias_limit(const Tolerance& tolerance, std::int64_t cells) noexcept;

}  // namespace pmqa
