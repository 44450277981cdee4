// run_path's backend over the HIP runtime (device memory, hipMemcpy, hipLaunchKernelGGL), shared
// by the GPU executor and the GPU benchmark. GPU translation units only (nvcc or hipcc).
#pragma once

#include <hip/hip_runtime.h>

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "pmqa/kernels/executor.hpp"
#include "pmqa/kernels/toolchain/hip_check.hpp"
#include "pmqa/kernels/detail/key_map_nv.hpp"
#include "pmqa_kernels/arch/nv_tma.hpp"

namespace pmqa::kernels::detail {

// Writes 1 when the code the device runs was built with wgmma (sm_90a), else 0. A template, so
// every GPU translation unit including this header may define it.
template <int = 0>
__global__ void wgmma_built_probe(int* out) {
#if defined(PMQA_WGMMA)
  *out = 1;
#else
  *out = 0;
#endif
}

// Whether the current device (compute capability major.minor) has wgmma and runs sm_90a code from
// this binary: an sm_90 device, asked itself which code it runs, so a build for "90" (no wgmma) or
// a fat binary picking another arch's code answers no. Always no on AMD.
inline bool device_runs_wgmma(int cc_major, int cc_minor) {
#if defined(__HIP_PLATFORM_NVIDIA__)
  if (cc_major != 9 || cc_minor != 0) return false;
  int* flag = nullptr;
  int host = 0;
  PMQA_HIP_CHECK(hipMalloc(&flag, sizeof(int)));
  hipLaunchKernelGGL(wgmma_built_probe<>, dim3(1), dim3(1), 0, 0, flag);
  const hipError_t launched = hipGetLastError();
  const hipError_t copied = hipMemcpy(&host, flag, sizeof(int), hipMemcpyDeviceToHost);
  static_cast<void>(hipFree(flag));
  return launched == hipSuccess && copied == hipSuccess && host == 1;
#else
  static_cast<void>(cc_major);
  static_cast<void>(cc_minor);
  return false;
#endif
}

class HipBackend {
 public:
  HipBackend(int device, int multiprocessors, DeviceCaps caps) : multiprocessors_(multiprocessors), caps_(std::move(caps)) {
    PMQA_HIP_CHECK(hipSetDevice(device));
  }
  // What the device offers the kernels (the GPU executor's caps: its arch table row and probe).
  const DeviceCaps& caps() const noexcept { return caps_; }
  // The wgmma kernel's tensor map of the keys (NVIDIA only).
  std::optional<kdev::KeyMap> key_map(const kdev::KeyMapFields& f) const { return encode_key_map(f); }
  void* allocate(std::size_t bytes) {
    void* p = nullptr;
    PMQA_HIP_CHECK(hipMalloc(&p, bytes));
    return p;
  }
  void release(void* p) noexcept { static_cast<void>(hipFree(p)); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) {
    PMQA_HIP_CHECK(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice));
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) {
    PMQA_HIP_CHECK(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost));
  }
  void synchronize() { PMQA_HIP_CHECK(hipDeviceSynchronize()); }
  // Grid-stride kernels: enough blocks to fill every multiprocessor, read from the device.
  std::int64_t resident_blocks() const noexcept { return 8 * static_cast<std::int64_t>(multiprocessors_); }

  // Persistent kernels: `per_multiprocessor` blocks on every multiprocessor, one wave.
  std::int64_t persistent_blocks(int per_multiprocessor) const noexcept {
    return static_cast<std::int64_t>(per_multiprocessor) * multiprocessors_;
  }

  template <class... P, class... A>
  void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, A&&... args) {
    launch_shared(name, kernel, grid, block, 0, std::forward<A>(args)...);
  }

  // A launch with `shared_bytes` of dynamic shared memory (PMQA_SHARED_OBJECT); past the 48 KB
  // default the kernel's limit is raised once, before its first launch, so timed launches do not
  // pay for it.
  template <class... P, class... A>
  void launch_shared(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, std::size_t shared_bytes, A&&... args) {
    if (shared_bytes > 48 * 1024 && raised_.insert(reinterpret_cast<const void*>(kernel)).second) {
      PMQA_HIP_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared_bytes)));
    }
    hipLaunchKernelGGL(kernel, grid, block, static_cast<unsigned>(shared_bytes), 0, std::forward<A>(args)...);
    const hipError_t status = hipGetLastError();
    if (status != hipSuccess)
      throw KernelError(std::string("launch of ") + name + " (grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) +
                        ", block " + std::to_string(block.x) + ") failed: " + hipGetErrorName(status) + ": " +
                        hipGetErrorString(status));
  }

 private:
  int multiprocessors_;
  DeviceCaps caps_;
  std::set<const void*> raised_;  // kernels whose dynamic shared memory limit was raised
};

}  // namespace pmqa::kernels::detail
