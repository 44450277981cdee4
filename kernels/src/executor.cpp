#include "pmqa/kernels/executor.hpp"

#include "pmqa/kernels/detail/host_backend.hpp"

namespace pmqa::kernels {

Tolerance tolerance_for(KernelId kernel) { return detail::kernel_tolerance(kernel); }

std::vector<KernelFit> kernel_fits(Path path, const Case& c, const DeviceCaps& device) {
  return detail::fits_of(path, c, device);
}

std::unique_ptr<Executor> make_host_executor(const HostExecutorOptions& options) {
  return std::make_unique<detail::HostExecutor<>>(options);
}

}  // namespace pmqa::kernels
