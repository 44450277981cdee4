// The GPU executor: the same run_path as the host executor, over the HIP runtime. Built by nvcc
// through HIP's NVIDIA headers (or by hipcc on ROCm). Keep Eigen out of this translation unit.
#include <hip/hip_runtime.h>

#include <string>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/arch_table.hpp"
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

// The device's capabilities: its arch table row, and whether it runs this binary's sm_90a code (the
// one fact only the device can answer). A target the table does not know gets the portable
// kernels only, and says so.
DeviceCaps caps_of(const GpuInfo& info) {
  PMQA_HIP_CHECK(hipSetDevice(info.device));
  const std::string target = dispatch::parse_arch(info.arch).target;
  const dispatch::ArchInfo* row = dispatch::ArchTable::builtin().find(target);
  if (!row) {
    DeviceCaps d;
    d.target = target + " (not in the arch table: portable kernels only)";
    d.wave_size = info.warp_size;
    return d;
  }
  return caps_from_arch(*row, detail::device_runs_wgmma(info.cc_major, info.cc_minor));
}

class GpuExecutor final : public Executor {
 public:
  explicit GpuExecutor(GpuInfo info) : info_(std::move(info)) {}
  std::string name() const override {
    return "gpu" + std::to_string(info_.device) + " " + info_.name + " (" + info_.arch + ")";
  }
  std::string arch() const override { return info_.arch; }
  int warp_size() const override { return info_.warp_size; }
  DeviceCaps caps() const override { return caps_; }
  RunResult run(Path path, const Case& c, const RunOptions& o) override {
    try {
      detail::HipBackend be(info_.device, info_.multiprocessors, caps_);
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
  GpuInfo info_;
  DeviceCaps caps_ = caps_of(info_);
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
