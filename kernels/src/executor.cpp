#include "pmqa/kernels/executor.hpp"

#include <algorithm>
#include <iterator>

#include "pmqa/kernels/detail/host_backend.hpp"

namespace pmqa::kernels {

// The API's promise and what the kernels are instantiated for are one list.
static_assert(std::equal(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), std::begin(detail::kInstantiatedHeadDims),
                         std::end(detail::kInstantiatedHeadDims)));

Tolerance tolerance_for(KernelId kernel) { return detail::kernel_tolerance(kernel); }

KernelShapes kernel_shapes(KernelId kernel) { return detail::kernel_shapes(kernel); }

std::vector<KernelFit> kernel_fits(Path path, const Case& c, const DeviceCaps& device) {
  return detail::fits_of(path, c, device);
}

std::unique_ptr<Executor> make_host_executor(const HostExecutorOptions& options) {
  return std::make_unique<detail::HostExecutor<>>(options);
}

}  // namespace pmqa::kernels
