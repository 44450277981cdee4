#include "pmqa/reference/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pmqa {

std::string_view to_string(NanRule rule) noexcept {
  switch (rule) {
    case NanRule::propagate: return "propagate";
    case NanRule::relu_clamp: return "relu-clamp";
  }
  return "?";
}

NanRule parse_nan_rule(std::string_view text) {
  if (text == "propagate") return NanRule::propagate;
  if (text == "relu-clamp") return NanRule::relu_clamp;
  throw std::invalid_argument("unknown NaN rule '" + std::string(text) + "' (expected propagate or relu-clamp)");
}

std::string_view to_string(Gate gate) noexcept {
  switch (gate) {
    case Gate::element: return "element";
    case Gate::block: return "block";
    case Gate::row: return "row";
    case Gate::global: return "global";
  }
  return "?";
}

Tolerance Tolerance::fp32() { return {}; }

Tolerance Tolerance::matrix_unit() {
  Tolerance t;
  t.name = "matrix-unit";
  t.unit_d = 0x1p-13;  // ~14 significant bits kept inside the matrix unit's accumulation
  return t;
}

Tolerance Tolerance::bf16_output() {
  Tolerance t;
  t.name = "bf16-output";
  t.unit_terms = 0x1p-8;  // bf16 keeps 8 significant bits: round to nearest errs by at most 2^-8
  t.unit_out = 0x1p-8;
  return t;
}

Tolerance Tolerance::matrix_unit_bf16() {
  Tolerance t = bf16_output();
  t.name = "matrix-unit-bf16";
  t.unit_d = matrix_unit().unit_d;
  return t;
}

std::vector<std::string> Tolerance::names() { return {"fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16"}; }

Tolerance Tolerance::named(std::string_view name) {
  if (name == "fp32") return fp32();
  if (name == "matrix-unit") return matrix_unit();
  if (name == "bf16-output") return bf16_output();
  if (name == "matrix-unit-bf16") return matrix_unit_bf16();
  throw std::invalid_argument("unknown tolerance profile '" + std::string(name) +
                              "' (expected fp32, matrix-unit, bf16-output or matrix-unit-bf16)");
}

double Tolerance::sigma(const NoiseScales& n, double abs_logit, long head_dim, long heads, double ref_unit) const noexcept {
  const double sd = std::sqrt(static_cast<double>(head_dim)) * n.over_d;
  const double sh = std::sqrt(static_cast<double>(heads) + 2.0) * n.over_h;
  const double kernel = unit_d * sd + unit_h * sh + unit_terms * n.terms + unit_out * abs_logit;
  const double reference = ref_unit * (sd + sh + abs_logit);
  return kernel + reference;
}

double Tolerance::region_limit(std::int64_t cells) const noexcept {
  if (cells <= 0) return z_region;
  return std::max(z_region, z_element / std::sqrt(static_cast<double>(cells)));
}

}  // namespace pmqa
