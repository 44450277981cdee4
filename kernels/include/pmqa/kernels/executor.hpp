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

#include "pmqa/model/case.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/path.hpp"
#include "pmqa/model/tolerance.hpp"

namespace pmqa::kernels {

// The model's Path: the kernels run fused and two-stage (is_kernel_path) and refuse the others.
using pmqa::Path;
using pmqa::parse_path;
using pmqa::to_string;

// A case the kernels do not take (e.g. head_dim 96), or a failed launch / HIP call: the message
// names the field or the call that failed.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which kernel serves the fused path (issue 7). `automatic`: the matrix-unit variant where the
// executor has one and the case fits it (fused-mma on NVIDIA sm_89+), else the portable one.
enum class FusedVariant : std::uint8_t {
  automatic,
  scalar,  // "fused-scalar": portable fp32 FMAs, any arch, any supported shape
  mma,     // "fused-mma": NVIDIA tensor cores, sm_89+ (see MmaInstruction; emulated on the host executor at wave 32)
  mfma,    // "fused-mfma": fp8 MFMA 16x16x32 (gfx942 FNUZ, gfx950 OCP; emulated on the host executor at wave 64)
};
std::string_view to_string(FusedVariant v) noexcept;
FusedVariant parse_fused_variant(std::string_view text);  // "auto" | "scalar" | "mma" | "mfma"

// The instruction fused-mma issues. `automatic`: wgmma where the executor has it (sm_90 with
// sm_90a code in the build; the host executor at wave 32) and the case is OCP e4m3, else mma.sync.
enum class MmaInstruction : std::uint8_t {
  automatic,
  mma_sync,  // mma.sync m16n8k16 on fp8 decoded exactly to f16 (sm_89+, either fp8 format)
  wgmma,     // wgmma m64n64k32 e4m3 from shared memory (sm_90a; OCP only: wgmma has no FNUZ)
};
std::string_view to_string(MmaInstruction m) noexcept;
MmaInstruction parse_mma_instruction(std::string_view text);  // "auto" | "mma.sync" | "wgmma"

struct RunOptions {
  FusedVariant variant = FusedVariant::automatic;
  MmaInstruction mma_instruction = MmaInstruction::automatic;  // fused-mma only
  std::int64_t row_pad = 16;  // guard cells after each row (the output row stride is max_model_len + row_pad)
  std::int64_t guard = 64;    // guard cells before and after the buffer
  int launches = 1;           // > 1: relaunch on a re-poisoned buffer, compare every launch bitwise with the first
};

struct RunResult {
  OutputBuffer out;                      // the first launch's output, guards included
  int launches = 0;
  std::int64_t differing_cells = 0;      // cells (guards included) whose bits changed in a later launch
  std::int64_t first_differing = -1;     // index into out.storage(), or -1
  std::string kernel;                    // what ran: "fused-scalar", "fused-mma", "fused-mfma" or "two-stage"
  std::string kernel_reason;             // why that kernel (e.g. why not the matrix-unit variant)
  std::string instruction;               // fused-mma's instruction ("wgmma" or "mma.sync"), else ""
  std::string key_copies;                // fused-mma's key copies ("tensor-map" or "cp.async"), else ""
  bool deterministic() const noexcept { return differing_cells == 0; }
};

// The tolerance profile of the kernel that ran (spec §5: accumulator precision is a property of
// the kernel): matrix-unit for fused-mma and fused-mfma, fp32 for the portable kernels.
Tolerance tolerance_for(const RunResult& run);

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;  // "host-w64", "gpu0 NVIDIA H200 (sm_90)"
  virtual std::string arch() const = 0;  // "host", "sm_90", "gfx942", ...
  virtual int warp_size() const = 0;
  // Validates the case (CaseError), runs the path, returns the output. Throws KernelError.
  virtual RunResult run(Path path, const Case& c, const RunOptions& options = {}) = 0;
};

struct HostExecutorOptions {
  int warp_size = 64;            // 64 as on AMD CDNA, 32 as on NVIDIA / RDNA
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

}  // namespace pmqa::kernels
