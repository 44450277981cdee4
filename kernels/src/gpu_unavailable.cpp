// Built when no GPU toolchain was found: the GPU executor's entry points say so.
#include "pmqa/kernels/executor.hpp"

namespace pmqa::kernels {

bool gpu_support_built() noexcept { return false; }
std::optional<GpuInfo> find_gpu(int) { return std::nullopt; }
std::unique_ptr<Executor> make_gpu_executor(int) {
  throw KernelError("this pmqa was built without a GPU executor (no nvcc or ROCm compiler was found at configure time)");
}

}  // namespace pmqa::kernels
