// The lab API's HIP backend (lab.hpp): device memory, hipMemcpy and hipLaunchKernelGGL, for GPU
// translation units (nvcc through HIP's NVIDIA headers, or hipcc). The GPU benchmark and the probes
// build on it:
//
//   lab::HipBackend be(gpu.device, gpu.multiprocessors, make_gpu_executor(gpu.device)->caps());
//   lab::PreparedRun<lab::HipBackend> run(be, Path::fused, c, {});
//   run.poison(); run.launch(); run.download();
#pragma once

#include "pmqa/kernels/detail/hip_backend.hpp"
#include "pmqa/kernels/lab.hpp"

namespace pmqa::kernels::lab {

using detail::device_runs_wgmma;
using detail::HipBackend;

static_assert(Backend<HipBackend>);

}  // namespace pmqa::kernels::lab
