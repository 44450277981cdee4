// What a device offers pmqa's kernels: the facts each kernel's fit is decided from. A GPU's come
// from its row of the arch table (dispatch/data/arch_table.json: wave size, fp8 format, fp8 matrix
// instructions) plus the one thing only the device can answer (whether it runs this binary's sm_90a
// code); the host executor's describe the device it emulates. A new arch is one row of the table.
#pragma once

#include <string>

#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/model/fp8_format.hpp"

namespace pmqa::kernels {

struct DeviceCaps {
  std::string target = "host";  // "host", "sm_90", "gfx942"
  int wave_size = 64;
  bool fp8_mma_sync = false;  // NVIDIA fp8 mma.sync (sm_89 and later)
  bool wgmma = false;         // Hopper's wgmma, in sm_90a code this device runs
  bool mfma_fnuz = false;     // AMD fp8 MFMA on E4M3FNUZ (gfx940/941/942)
  bool mfma_ocp = false;      // AMD fp8 MFMA on E4M3FN (gfx950)

  bool mfma(Fp8Format f) const noexcept { return f == Fp8Format::e4m3fnuz ? mfma_fnuz : mfma_ocp; }
  // "sm_90, wave 32: fp8 mma.sync, wgmma"
  std::string describe() const;
  friend bool operator==(const DeviceCaps&, const DeviceCaps&) = default;
};

// A GPU's capabilities from its arch table row. runs_sm90a_code: the device runs this binary's
// sm_90a code (asked of the device: without it a Hopper has no wgmma to run).
DeviceCaps caps_from_arch(const dispatch::ArchInfo& arch, bool runs_sm90a_code);

// The device the host executor emulates by default at a wave size: at 32 a Hopper's matrix units
// (mma.sync and wgmma, so fused-mma runs and is checked in CI), at 64 none (the portable kernels,
// which the host's mutation tests exercise). caps_from_arch(arch, true) emulates a table arch.
DeviceCaps host_caps(int warp_size);

}  // namespace pmqa::kernels
