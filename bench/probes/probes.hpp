// The measurement probes of the fused-mma wgmma kernel (fused_mma/tuning.hpp's Probe seam) and the
// tunings a probe runs the kernel under. Production runs kdev::Shipped, whose probe does nothing.
#pragma once

#include <cstdint>

#include "pmqa_kernels/fused_mma/tuning.hpp"

namespace pmqa::probes {

// The shipped tunables with the wgmma kernel watched by Probe.
template <class P>
struct Probed : kdev::Shipped {
  struct Wgmma : kdev::WgmmaShipped {
    using Probe = P;
  };
};

// The same, with the key copies under L2's default policy instead of evict-first.
template <class P = kdev::NoProbe>
struct NoEvictFirst : kdev::Shipped {
  struct Wgmma : kdev::WgmmaShipped {
    static constexpr bool kEvictFirst = false;
    using Probe = P;
  };
};

}  // namespace pmqa::probes
