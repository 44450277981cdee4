#include "pmqa/reference/tolerance.hpp"

#include <stdexcept>

namespace pmqa {

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
  t.unit_out = 0x1p-8;  // bf16 keeps 8 significant bits: half an ulp is 2^-8 relative
  return t;
}

std::vector<std::string> Tolerance::names() { return {"fp32", "matrix-unit", "bf16-output"}; }

Tolerance Tolerance::named(std::string_view name) {
  if (name == "fp32") return fp32();
  if (name == "matrix-unit") return matrix_unit();
  if (name == "bf16-output") return bf16_output();
  throw std::invalid_argument("unknown tolerance profile '" + std::string(name) +
                              "' (expected fp32, matrix-unit or bf16-output)");
}

double Tolerance::bound(double magnitude, double abs_ref, long head_dim, long heads, double ref_unit) const noexcept {
  const double d = static_cast<double>(head_dim);
  const double h = static_cast<double>(heads);
  const double kernel = (d * unit_d + (h + 2.0) * unit_h) * magnitude + unit_out * abs_ref;
  const double reference = (d + h + 2.0) * ref_unit * magnitude;
  return safety * (kernel + reference);
}

}  // namespace pmqa
