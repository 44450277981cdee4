#include "pmqa/reference/noise.hpp"

#include <algorithm>
#include <cmath>

namespace pmqa {

std::string_view to_string(Gate gate) noexcept {
  switch (gate) {
    case Gate::element: return "element";
    case Gate::block: return "block";
    case Gate::row: return "row";
    case Gate::global: return "global";
    case Gate::bias: return "bias";
  }
  return "?";
}

std::string_view to_string(BiasKind kind) noexcept {
  switch (kind) {
    case BiasKind::offset: return "offset";
    case BiasKind::scale: return "scale";
  }
  return "?";
}

std::string_view bias_sign(BiasKind kind, double mean) noexcept {
  if (kind == BiasKind::scale) return mean > 0 ? "magnitude too large" : "magnitude too small";
  return mean > 0 ? "above the reference" : "below the reference";
}

double cell_sigma(const Tolerance& t, const NoiseScales& n, double abs_logit, long head_dim, long heads,
                  double ref_unit) noexcept {
  const double sd = std::sqrt(static_cast<double>(head_dim)) * n.over_d;
  const double sh = std::sqrt(static_cast<double>(heads) + 2.0) * n.over_h;
  const double kernel = t.unit_d * sd + t.unit_h * sh + t.unit_terms * n.terms + t.unit_out * abs_logit;
  const double reference = ref_unit * (sd + sh + abs_logit);
  return kernel + reference;
}

double region_limit(const Tolerance& t, std::int64_t cells) noexcept {
  if (cells <= 0) return t.z_region;
  return std::max(t.z_region, t.z_element / std::sqrt(static_cast<double>(cells)));
}

double bias_limit(const Tolerance& t, std::int64_t cells) noexcept {
  if (cells <= 0) return t.bias_allowed + t.z_bias;
  const double n = static_cast<double>(cells);
  return std::max(t.bias_allowed + t.z_bias / std::sqrt(n), t.z_element / n);
}

}  // namespace pmqa
