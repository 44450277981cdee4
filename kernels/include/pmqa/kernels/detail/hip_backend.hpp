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
  HipBackend(int device, int multiprocessors, bool fp8_mma = false, bool wgmma = false)
      : multiprocessors_(multiprocessors), fp8_mma_(fp8_mma), wgmma_(wgmma) {
    PMQA_HIP_CHECK(hipSetDevice(device));
  }
  // fp8 mma.sync exists on NVIDIA sm_89 and later (the kernels are built for the arch they run on);
  // fp8 MFMA on gfx942 (FNUZ) and gfx950 (OCP), each for its own format only.
  bool has_fp8_mma() const noexcept { return fp8_mma_; }
  // wgmma: sm_90 running sm_90a code (gpu_executor.cu decides).
  bool has_wgmma() const noexcept { return wgmma_; }
  bool has_fp8_mfma(Fp8Format f) const noexcept { return mfma_format_ && *mfma_format_ == f; }
  // The wgmma kernel's tensor map of the keys (NVIDIA only).
  std::optional<kdev::KeyMap> key_map(const kdev::KeyMapFields& f) const { return encode_key_map(f); }
  FusedVariant automatic_variant(const Case& c) const noexcept {
    if (fp8_mma_) return FusedVariant::mma;
    if (has_fp8_mfma(c.fp8)) return FusedVariant::mfma;
    return FusedVariant::scalar;
  }
  void set_mfma_format(std::optional<Fp8Format> f) noexcept { mfma_format_ = f; }
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
  bool fp8_mma_;
  bool wgmma_;
  std::optional<Fp8Format> mfma_format_;
  std::set<const void*> raised_;  // kernels whose dynamic shared memory limit was raised
};

}  // namespace pmqa::kernels::detail
