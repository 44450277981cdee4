// The lab API's host backend (lab.hpp): the host executor's memory and fiber launches, for
// translation units built by the host compiler. The gauntlet and the detection tests run the real
// kernels with a planted fault on it:
//
//   lab::HostBackend be({.warp_size = 32});
//   const auto run = lab::run_path<lab::HostBackend, MyFault>(be, Path::fused, c, {});
#pragma once

#include "pmqa/kernels/detail/host_backend.hpp"
#include "pmqa/kernels/lab.hpp"

namespace pmqa::kernels::lab {

using detail::emulated_caps;  // the device a HostExecutorOptions asks the host to emulate
using detail::HostBackend;

static_assert(Backend<HostBackend>);

}  // namespace pmqa::kernels::lab
