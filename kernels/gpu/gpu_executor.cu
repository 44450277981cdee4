// The GPU executor: the same run_path as the host executor, over the HIP runtime. Built by nvcc
// through HIP's NVIDIA headers (or by hipcc on ROCm). Keep Eigen out of this translation unit.
#include <hip/hip_runtime.h>

#include <string>

#include "pmqa/kernels/detail/run_path.hpp"
#include "pmqa/kernels/detail/hip_backend.hpp"
#include "pmqa/kernels/toolchain/hip_check.hpp"

namespace pmqa::kernels {
namespace {

// "sm_90" on NVIDIA (gcnArchName is empty there), the gcnArchName string on AMD.
std::string arch_of(const hipDeviceProp_t& prop) {
#if defined(__HIP_PLATFORM_NVIDIA__)
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#else
  return prop.gcnArchName;
#endif
}

// NVIDIA sm_89 and later have fp8 mma.sync (the AMD matrix-core variant is not built here).
bool has_fp8_mma(const GpuInfo& info) {
#if defined(__HIP_PLATFORM_NVIDIA__)
  return info.cc_major * 10 + info.cc_minor >= 89;
#else
  static_cast<void>(info);
  return false;
#endif
}

// The fp8 format AMD's MFMA takes natively on this device, if it has fp8 MFMA (not in NVIDIA builds).
std::optional<Fp8Format> mfma_format(const GpuInfo& info) {
#if defined(__HIP_PLATFORM_AMD__)
  const std::string target = info.arch.substr(0, info.arch.find(':'));
  if (target == "gfx940" || target == "gfx941" || target == "gfx942") return Fp8Format::e4m3fnuz;
  if (target == "gfx950") return Fp8Format::e4m3fn;
#endif
  static_cast<void>(info);
  return std::nullopt;
}

class GpuExecutor final : public Executor {
 public:
  explicit GpuExecutor(GpuInfo info) : info_(std::move(info)) {}
  std::string name() const override {
    return "gpu" + std::to_string(info_.device) + " " + info_.name + " (" + info_.arch + ")";
  }
  std::string arch() const override { return info_.arch; }
  int warp_size() const override { return info_.warp_size; }
  RunResult run(Path path, const Case& c, const RunOptions& o) override {
    try {
      detail::HipBackend be(info_.device, info_.multiprocessors, has_fp8_mma(info_), has_wgmma());
      be.set_mfma_format(mfma_format(info_));
      return detail::run_path<detail::HipBackend>(be, path, c, o);
    } catch (const CaseError&) {
      throw;
    } catch (const KernelError&) {
      throw;
    } catch (const std::runtime_error& e) {  // PMQA_HIP_CHECK: names the call that failed
      throw KernelError(e.what());
    }
  }

 private:
  // sm_90 with sm_90a code in this binary (asked of the device once per executor).
  bool has_wgmma() {
    if (!wgmma_) {
      PMQA_HIP_CHECK(hipSetDevice(info_.device));
      wgmma_ = detail::device_runs_wgmma(info_.cc_major, info_.cc_minor);
    }
    return *wgmma_;
  }

  GpuInfo info_;
  std::optional<bool> wgmma_;
};

}  // namespace

bool gpu_support_built() noexcept { return true; }

std::optional<GpuInfo> find_gpu(int device) {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || device < 0 || device >= count) {
    static_cast<void>(hipGetLastError());  // clear the sticky "no driver" error
    return std::nullopt;
  }
  hipDeviceProp_t prop{};
  if (hipGetDeviceProperties(&prop, device) != hipSuccess) return std::nullopt;
  GpuInfo info;
  info.device = device;
  info.name = prop.name;
  info.arch = arch_of(prop);
  info.warp_size = prop.warpSize;
  info.multiprocessors = prop.multiProcessorCount;
  info.memory_bytes = prop.totalGlobalMem;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  return info;
}

std::unique_ptr<Executor> make_gpu_executor(int device) {
  auto info = find_gpu(device);
  if (!info) throw KernelError("no GPU " + std::to_string(device) + " found (hipGetDeviceCount found none, or no driver)");
  return std::make_unique<GpuExecutor>(std::move(*info));
}

}  // namespace pmqa::kernels
