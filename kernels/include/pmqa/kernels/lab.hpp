// The kernels' lab API: what a benchmark, a probe or a detection test builds on to run pmqa's real
// kernels its own way. executor.hpp is the user API; this is the layer under it, and using it is a
// decision (it changes with the kernels):
//
//   Backend      memory, copies, launches and the device's capabilities (the host executor's in
//                lab_host.hpp, the HIP runtime's in lab_hip.hpp); the concept below names what
//                run_path asks of one
//   PreparedRun  one case's buffers on a backend with its kernel chosen; launch() alone, for timing
//   run_path     a path run start to end, with the fault Hooks (pmqa_kernels/common/faults.hpp:
//                Faithful in production, a planted bug in the gauntlet) and the fused-mma tunables
//                (pmqa_kernels/fused_mma/tuning.hpp: Shipped, or a probe's) as template parameters
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "pmqa/kernels/detail/run_path.hpp"

namespace pmqa::kernels::lab {

// What run_path asks of a backend besides its launch templates (launch(name, kernel, grid, block,
// args...) and launch_shared(name, kernel, grid, block, shared_bytes, args...)).
template <class B>
concept Backend = requires(B& b, const B& cb, void* p, const void* q, std::size_t n, const kdev::KeyMapFields& keys) {
  { b.allocate(n) } -> std::same_as<void*>;
  b.release(p);
  b.copy_to_device(p, q, n);
  b.copy_to_host(p, q, n);
  b.synchronize();
  { cb.caps() } -> std::convertible_to<DeviceCaps>;
  { cb.resident_blocks() } -> std::convertible_to<std::int64_t>;
  { cb.persistent_blocks(1) } -> std::convertible_to<std::int64_t>;
  cb.key_map(keys);
};

using detail::PreparedRun;
using detail::run_path;
using Faithful = kdev::Faithful;  // production's fault hooks
using Shipped = kdev::Shipped;    // fused-mma's tunables as shipped

}  // namespace pmqa::kernels::lab
