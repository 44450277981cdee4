#include "pmqa/kernels/device_caps.hpp"

namespace pmqa::kernels {

std::string DeviceCaps::describe() const {
  std::string units;
  auto add = [&](const char* unit) { units += (units.empty() ? "" : ", ") + std::string(unit); };
  if (fp8_mma_sync) add("fp8 mma.sync");
  if (wgmma) add("wgmma");
  if (mfma_fnuz) add("fp8 MFMA (FNUZ)");
  if (mfma_ocp) add("fp8 MFMA (OCP)");
  return target + ", wave " + std::to_string(wave_size) + ": " + (units.empty() ? "no fp8 matrix units pmqa uses" : units);
}

DeviceCaps caps_from_arch(const dispatch::ArchInfo& arch, bool runs_sm90a_code) {
  using dispatch::MatrixKind;
  DeviceCaps d;
  d.target = arch.target;
  d.wave_size = arch.wave_size;
  if (!arch.fp8) return d;
  if (arch.vendor == dispatch::Vendor::nvidia) {
    // Every NVIDIA fp8 matrix generation keeps mma.sync beside its newer instruction.
    d.fp8_mma_sync = arch.fp8_matrix != MatrixKind::none;
    d.wgmma = arch.fp8_matrix == MatrixKind::wgmma && runs_sm90a_code;
  } else if (arch.fp8_matrix == MatrixKind::mfma) {
    // CDNA's MFMA takes the arch's own fp8 format only.
    d.mfma_fnuz = *arch.fp8 == Fp8Format::e4m3fnuz;
    d.mfma_ocp = *arch.fp8 == Fp8Format::e4m3fn;
  }
  return d;
}

DeviceCaps host_caps(int warp_size) {
  DeviceCaps d;
  d.target = "host";
  d.wave_size = warp_size;
  d.fp8_mma_sync = d.wgmma = warp_size == 32;
  return d;
}

}  // namespace pmqa::kernels
