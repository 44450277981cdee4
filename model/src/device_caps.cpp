#include "pmqa/model/device_caps.hpp"

namespace pmqa {

std::string DeviceCaps::describe() const {
  std::string units;
  for (const MatrixKind k : matrix) units += (units.empty() ? "" : ", ") + std::string(to_string(k));
  std::string formats;
  for (const Fp8Format f : matrix_fp8) formats += (formats.empty() ? "" : ", ") + std::string(to_string(f));
  if (!units.empty() && !formats.empty()) units += " (" + formats + ")";
  return target + ", wave " + std::to_string(wave_size) + ": " + (units.empty() ? "no fp8 matrix units" : units);
}

}  // namespace pmqa
