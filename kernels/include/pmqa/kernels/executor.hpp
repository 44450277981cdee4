// Running the kernels: an Executor runs one path on one case and hands back the output buffer
// (poisoned before every launch, guard cells around and after every row), checked against the
// reference by pmqa::compare. Executors: the host executor (the kernel sources run on the CPU,
// wave size 32 or 64) and the GPU (HIP on AMD, or nvcc through HIP's NVIDIA headers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/kernels/device_caps.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/model/kernel_id.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/path.hpp"
#include "pmqa/model/tolerance.hpp"

namespace pmqa::kernels {

// A case the kernels do not take (e.g. head_dim 96), or a failed launch / HIP call: the message
// names the field or the call that failed.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunOptions {
  // The kernel to run (it must serve the path and fit the case and the device); absent: the first
  // of the path's kernels that fits (kernel_fits).
  std::optional<KernelId> kernel{};
  std::int64_t row_pad = 16;  // guard cells after each row (the output row stride is max_model_len + row_pad)
  std::int64_t guard = 64;    // guard cells before and after the buffer
  int launches = 1;           // > 1: relaunch on a re-poisoned buffer, compare every launch bitwise with the first
};

struct RunResult {
  OutputBuffer out;                      // the first launch's output, guards included
  int launches = 0;
  std::int64_t differing_cells = 0;      // cells (guards included) whose bits changed in a later launch
  std::int64_t first_differing = -1;     // index into out.storage(), or -1
  KernelId kernel = KernelId::fused_scalar;  // what ran
  std::string kernel_reason;             // why that kernel (the ones before it that do not fit, and why)
  std::string key_copies;                // the wgmma kernel's key copies ("tensor-map" or "cp.async"), else ""
  bool deterministic() const noexcept { return differing_cells == 0; }
};

// A kernel's tolerance profile (spec §5: accumulator precision is a property of the kernel, which
// says it in its spec): matrix-unit for fused-mma and fused-mfma, fp32 for the portable kernels.
Tolerance tolerance_for(KernelId kernel);
inline Tolerance tolerance_for(const RunResult& run) { return tolerance_for(run.kernel); }

// One kernel of a path and whether it fits a case on a device.
struct KernelFit {
  KernelId kernel;
  std::string unfit;  // why not, or "" when it fits
  bool fits() const noexcept { return unfit.empty(); }
};
// The kernels serving `path` in priority order (a run takes the first that fits), each with its fit.
std::vector<KernelFit> kernel_fits(Path path, const Case& c, const DeviceCaps& device);

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;  // "host-w64", "gpu0 NVIDIA H200 (sm_90)"
  virtual std::string arch() const = 0;  // "host", "sm_90", "gfx942", ...
  virtual int warp_size() const = 0;
  virtual DeviceCaps caps() const = 0;   // what the device offers the kernels
  // Validates the case (CaseError), runs the path, returns the output. Throws KernelError.
  virtual RunResult run(Path path, const Case& c, const RunOptions& options = {}) = 0;
};

// The host executor runs the kernel sources on the CPU as the device it emulates: by default
// host_caps(warp_size), or a table arch's caps_from_arch(arch, true) (its wave size is then the
// executor's). Every kernel's host emulation runs the same source as the device.
struct HostExecutorOptions {
  int warp_size = 64;            // 64 as on AMD CDNA, 32 as on NVIDIA / RDNA
  std::optional<DeviceCaps> emulate{};  // the device emulated; absent: host_caps(warp_size)
  int os_threads = 0;            // 0: std::thread::hardware_concurrency()
  std::uint64_t schedule_seed = 0;  // non-zero: seeded shuffled block and fiber order (exposes races)
};
std::unique_ptr<Executor> make_host_executor(const HostExecutorOptions& options = {});

struct GpuInfo {
  int device = 0;
  std::string name;   // "NVIDIA H200"
  std::string arch;   // "sm_90" on NVIDIA; the gcnArchName target ("gfx942:sramecc+:xnack-") on AMD
  int warp_size = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;  // NVIDIA compute capability (0 on AMD)
};
bool gpu_support_built() noexcept;          // this build has a GPU executor (nvcc or ROCm found)
std::optional<GpuInfo> find_gpu(int device = 0);  // nullopt: not built, no driver, or no device
std::unique_ptr<Executor> make_gpu_executor(int device = 0);  // throws KernelError when unavailable

// The head dims the kernels are instantiated for.
inline constexpr int kSupportedHeadDims[] = {32, 64, 128};

// The shapes a kernel takes beyond those every kernel does (the matrix-unit kernels: D 128, heads
// 32, 64 or 128, block strides a multiple of 4): the checks draw its cases inside them.
KernelShapes kernel_shapes(KernelId kernel);

}  // namespace pmqa::kernels
