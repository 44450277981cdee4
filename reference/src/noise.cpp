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
  }
  return "?";
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

}  // namespace pmqa
