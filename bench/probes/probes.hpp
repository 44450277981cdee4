// The measurement probes of the fused-mma wgmma kernel (fused_mma/tuning.hpp's Probe seam): ablations that
// leave one stage out to time what it costs (the output is then wrong by design), and the tunings
// a probe runs the kernel under. Production runs kdev::Shipped, whose probe does nothing.
#pragma once

#include <cstdint>

#include "pmqa_kernels/fused_mma/tuning.hpp"

namespace pmqa::probes {

struct SkipKeyLoads : kdev::NoProbe { static constexpr bool kSkipKeyLoads = true; };
struct SkipMma : kdev::NoProbe { static constexpr bool kSkipMma = true; };
struct SkipEpilogue : kdev::NoProbe { static constexpr bool kSkipEpilogue = true; };
// Both: the launch's data movement, schedule and sequence switches with nothing computed.
struct SkipCompute : kdev::NoProbe { static constexpr bool kSkipMma = true, kSkipEpilogue = true; };

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
