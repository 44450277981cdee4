// The fused-mma kernels' tunables, and the seam a measurement probe plugs into. The defaults are
// what ships; bench/probes/ defines the probes (the timeline) and tests define other tunables.
// Faithful (common/faults.hpp) holds faults only: what a mutant may change.
#pragma once

#include <cstdint>

#include "pmqa_kernels/common/params.hpp"

PMQA_KDEV_BEGIN

// A probe watches a kernel: it changes no result, so the shipped kernel holds no branch that
// would (production's probe watches nothing).
struct NoProbe {
  // The wgmma kernel passes each of its WgMark points (fused_mma/wgmma.hpp) through here.
  static PMQA_DEV void mark(int /*point*/) {}
};

// The wgmma kernel's tunables as shipped (measured on an H200 at the DeepSeek-V3.2 decode shape;
// bench/results/notes.md has the runs).
struct WgmmaShipped {
  // Shares are equal in chunks plus this many per sequence switch (schedule/chunk_work.hpp, find_share): a
  // CTA whose part starts a new sequence reloads its q tile and rows, about 2 us or 2.7 chunks, and
  // each such CTA added 0.5-0.8 us to its SM's mean end. 3 was the best of 0-3 timed in one binary:
  // -1.0 % / -1.7 % against 0 at next_n 1 / 2.
  static constexpr std::uint32_t kSwitchWeight = 3;
  // The tensor-map key copies mark their lines evict-first in L2: the keys (69 MB at the decode
  // shape) are read once and would otherwise push out of L2 what every CTA rereads (block table,
  // context lengths, q rows, weights): -6 to -12 % at the decode shape (the H200 ablations,
  // bench/results/notes.md).
  static constexpr bool kEvictFirst = true;
  using Probe = NoProbe;
};

// The mma.sync kernel's: equal shares (switch weights were measured for the wgmma kernel only).
struct MmaSyncShipped {
  static constexpr std::uint32_t kSwitchWeight = 0;
  using Probe = NoProbe;
};

// The tunables a run launches with: both fused-mma kernels', as shipped.
struct Shipped {
  using Wgmma = WgmmaShipped;
  using MmaSync = MmaSyncShipped;
};

PMQA_KDEV_END
