// The capabilities (model/device_caps.hpp) of the devices pmqa's kernels run on: a GPU's from its
// row of the arch table (dispatch/data/arch_table.json: wave size, fp8 format, fp8 matrix
// instruction) plus the one thing only the device can answer (whether it runs this binary's sm_90a
// code); the host executor's describe the device it emulates. A new arch is one row of the table.
#pragma once

#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/model/device_caps.hpp"
#include "pmqa/model/kernel_id.hpp"

namespace pmqa::kernels {

// A GPU's capabilities from its arch table row. runs_sm90a_code: the device runs this binary's
// sm_90a code (asked of the device: without it a Hopper has no wgmma to run).
DeviceCaps caps_from_arch(const dispatch::ArchInfo& arch, bool runs_sm90a_code);

// The device the host executor emulates by default at a wave size: at 32 a Hopper's matrix units
// (mma.sync and wgmma, so fused-mma runs and is checked in CI), at 64 none (the portable kernels).
// caps_from_arch(arch, true) emulates a table arch.
DeviceCaps host_caps(int warp_size);

// A host device on which `kernel` is the first choice of its path wherever it fits: its matrix
// instruction alone, reading both fp8 formats, at that instruction's wave size (`warp_size` for a
// kernel without one). The checks run every kernel on these (checks::kernel_configs).
DeviceCaps host_caps_for(KernelId kernel, int warp_size = 64);

}  // namespace pmqa::kernels
