// What a device offers pmqa's kernels: the facts each kernel's fit is decided from (its spec's
// unfit()). A GPU's come from its row of the arch table (kernels/device_caps.hpp: caps_from_arch),
// the host executor's describe the device it emulates. The matrix instructions are a set of the
// arch table's own kinds, so every row of the table maps to what it has.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "pmqa/model/fp8_format.hpp"
#include "pmqa/model/matrix_kind.hpp"

namespace pmqa {

struct DeviceCaps {
  std::string target = "host";  // "host", "sm_90", "gfx942"
  int wave_size = 64;
  std::vector<MatrixKind> matrix;  // the fp8 matrix instructions the device runs (never none)
  // The fp8 formats its matrix instructions read natively (an MFMA reads the arch's own format
  // only: FNUZ on gfx942, OCP on gfx950; NVIDIA's read OCP).
  std::vector<Fp8Format> matrix_fp8;

  bool has(MatrixKind kind) const noexcept { return std::find(matrix.begin(), matrix.end(), kind) != matrix.end(); }
  // The device runs `kind` on data in `format`.
  bool runs(MatrixKind kind, Fp8Format format) const noexcept {
    return has(kind) && std::find(matrix_fp8.begin(), matrix_fp8.end(), format) != matrix_fp8.end();
  }
  // "sm_90, wave 32: mma.sync, wgmma (e4m3fn)"
  std::string describe() const;
  friend bool operator==(const DeviceCaps&, const DeviceCaps&) = default;
};

}  // namespace pmqa
