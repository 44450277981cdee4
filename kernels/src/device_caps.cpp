#include "pmqa/kernels/device_caps.hpp"

namespace pmqa::kernels {

DeviceCaps caps_from_arch(const dispatch::ArchInfo& arch, bool runs_sm90a_code) {
  DeviceCaps d;
  d.target = arch.target;
  d.wave_size = arch.wave_size;
  if (!arch.fp8 || arch.fp8_matrix == MatrixKind::none) return d;
  if (arch.vendor == dispatch::Vendor::nvidia) {
    // Every NVIDIA fp8 matrix generation keeps mma.sync beside its newer instruction; wgmma needs
    // the sm_90a code the device must be able to run.
    d.matrix.push_back(MatrixKind::mma_sync);
    if (arch.fp8_matrix != MatrixKind::mma_sync && (arch.fp8_matrix != MatrixKind::wgmma || runs_sm90a_code))
      d.matrix.push_back(arch.fp8_matrix);
  } else {
    d.matrix.push_back(arch.fp8_matrix);
  }
  // An arch's matrix instructions read its own fp8 format.
  d.matrix_fp8.push_back(*arch.fp8);
  return d;
}

DeviceCaps host_caps(int warp_size) {
  DeviceCaps d;
  d.target = "host";
  d.wave_size = warp_size;
  if (warp_size == 32) {
    d.matrix = {MatrixKind::mma_sync, MatrixKind::wgmma};
    d.matrix_fp8 = {Fp8Format::e4m3fn};
  }
  return d;
}

DeviceCaps host_caps_for(KernelId kernel, int warp_size) {
  const MatrixKind kind = kernel_info(kernel).matrix;
  DeviceCaps d;
  d.target = "host";
  d.wave_size = kind == MatrixKind::none ? warp_size : wave_size_of(kind);
  if (kind != MatrixKind::none) {
    d.matrix = {kind};
    d.matrix_fp8 = {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz};
  }
  return d;
}

}  // namespace pmqa::kernels
