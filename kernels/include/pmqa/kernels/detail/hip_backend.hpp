// run_path's backend over the HIP runtime (device memory, hipMemcpy, hipLaunchKernelGGL), shared
// by the GPU executor and the GPU benchmark. GPU translation units only (nvcc or hipcc).
#pragma once

#include <hip/hip_runtime.h>

#include <optional>
#include <string>
#include <utility>

#include "pmqa/kernels/executor.hpp"
#include "pmqa/kernels/toolchain/hip_check.hpp"

namespace pmqa::kernels::detail {

class HipBackend {
 public:
  HipBackend(int device, int multiprocessors, bool fp8_mma = false)
      : multiprocessors_(multiprocessors), fp8_mma_(fp8_mma) {
    PMQA_HIP_CHECK(hipSetDevice(device));
  }
  // fp8 mma.sync exists on NVIDIA sm_89 and later (the kernels are built for the arch they run on);
  // fp8 MFMA on gfx942 (FNUZ) and gfx950 (OCP), each for its own format only.
  bool has_fp8_mma() const noexcept { return fp8_mma_; }
  bool has_fp8_mfma(Fp8Format f) const noexcept { return mfma_format_ && *mfma_format_ == f; }
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

  template <class... P, class... A>
  void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, A&&... args) {
    hipLaunchKernelGGL(kernel, grid, block, 0, 0, std::forward<A>(args)...);
    const hipError_t status = hipGetLastError();
    if (status != hipSuccess)
      throw KernelError(std::string("launch of ") + name + " (grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) +
                        ", block " + std::to_string(block.x) + ") failed: " + hipGetErrorName(status) + ": " +
                        hipGetErrorString(status));
  }

 private:
  int multiprocessors_;
  bool fp8_mma_;
  std::optional<Fp8Format> mfma_format_;
};

}  // namespace pmqa::kernels::detail
