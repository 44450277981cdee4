// Is there a GPU to run on? The rule of design.md: a GPU test on a machine without one is skipped
// with a message (exit code 77, CTest SKIP_RETURN_CODE), never passed; a machine that has a GPU
// but cannot use it is a failure.
//
//   const auto gpu = pmqa::kernels::toolchain::probe_gpus();
//   if (gpu.state != pmqa::kernels::toolchain::GpuState::present) {
//     std::printf("%s\n", gpu.message.c_str());
//     return gpu.exit_code();   // 77 (skip) or 1 (fail)
//   }
//
// absent : hipGetDeviceCount finds no device, or there is no NVIDIA driver at all (cudart then says
//          "insufficient driver") -> skip, unless PMQA_REQUIRE_GPU is set to a non-empty value other
//          than 0 (for runners that are meant to have a GPU) -> fail.
// broken : any other error, or "insufficient driver" while /dev/nvidia0 or
//          /proc/driver/nvidia/version exists (a GPU whose driver is older than this CUDA) -> fail.
#pragma once

#include <hip/hip_runtime_api.h>

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace pmqa::kernels::toolchain {

enum class GpuState { present, absent, broken };

struct GpuProbe {
  GpuState state = GpuState::absent;
  int count = 0;
  std::string message;  // "no GPU found: skipped (...)" or "FAILED: ..." or "devices: N"
  int exit_code() const { return state == GpuState::absent ? 77 : (state == GpuState::present ? 0 : 1); }
};

inline bool gpu_required() {
  const char* v = std::getenv("PMQA_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

inline GpuProbe probe_gpus() {
  GpuProbe p;
  const hipError_t status = hipGetDeviceCount(&p.count);
  const std::string what = std::string("hipGetDeviceCount: ") + hipGetErrorString(status);
  auto absent = [&](const std::string& why) {
    if (gpu_required()) {
      p.state = GpuState::broken;
      p.message = "FAILED: no GPU (" + why + "), and PMQA_REQUIRE_GPU is set";
    } else {
      p.state = GpuState::absent;
      p.message = "no GPU found: skipped (" + why + ")";
    }
    return p;
  };
  if (status == hipErrorNoDevice) {
    return absent(what);
  }
#if defined(__HIP_PLATFORM_NVIDIA__)
  if (status == hipErrorInsufficientDriver) {
    struct stat st;
    if (stat("/dev/nvidia0", &st) == 0 || stat("/proc/driver/nvidia/version", &st) == 0) {
      p.state = GpuState::broken;
      p.message = "FAILED: " + what + ", but an NVIDIA GPU is present: its driver is older than the CUDA " +
                  std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
                  " runtime this binary was built with";
      return p;
    }
    return absent("no NVIDIA driver: " + what);
  }
#endif
  if (status != hipSuccess) {
    p.state = GpuState::broken;
    p.message = "FAILED: " + what;
    return p;
  }
  if (p.count == 0) {
    return absent("hipGetDeviceCount found 0 devices");
  }
  p.state = GpuState::present;
  p.message = "devices: " + std::to_string(p.count);
  return p;
}

}  // namespace pmqa::kernels::toolchain
