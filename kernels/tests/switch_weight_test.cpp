// fused-mma's work split at other switch weights than its kernels' own (fused_mma/tuning.hpp: the wgmma
// kernel's 3, the mma.sync kernel's 0): the shares are equal in chunks plus W per sequence switch,
// so a unit whose part starts a new sequence takes fewer chunks. However the weights fall, the parts must still cover every live chunk: a chunk no part
// takes leaves its cells poisoned, and the compare fails there (a planted gap, one unit's part a
// chunk short, failed all ten runs below). The real kernels on the host executor, both
// instructions; every other test runs each kernel at its own weight.
#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/lab_host.hpp"
#include "pmqa/reference/compare.hpp"
#include "many_sequences_case.hpp"

namespace pmqa {
namespace {

// Both fused-mma kernels' shares at weight kW (fused_mma/tuning.hpp's Shipped otherwise).
template <std::uint32_t kW>
struct SwitchWeight : kdev::Shipped {
  struct Wgmma : kdev::WgmmaShipped {
    static constexpr std::uint32_t kSwitchWeight = kW;
  };
  struct MmaSync : kdev::MmaSyncShipped {
    static constexpr std::uint32_t kSwitchWeight = kW;
  };
};

// Two long sequences and a short one over next_n 2 (the 128-row wgmma kernel): few switches, many
// units per sequence.
Case few_sequences() {
  fixtures::CaseSpec s;
  s.batch = 3;
  s.next_n = 2;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 64;
  s.max_model_len = 2048;
  s.context_lens = {2048, 1500, 70};
  return fixtures::make_case(s);
}

template <std::uint32_t kW>
void expect_every_chunk_once(const Case& c, KernelId kernel, const std::string& what) {
  kernels::lab::HostBackend be({.warp_size = 32});
  const auto run = kernels::lab::run_path<kernels::lab::HostBackend, kdev::Faithful, SwitchWeight<kW>>(
      be, Path::fused, c, {.kernel = kernel});
  ASSERT_EQ(run.kernel, kernel) << what;
  const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out);
  EXPECT_TRUE(rep.passed()) << what << ", W " << kW << " (" << to_string(run.kernel) << ", " << run.key_copies << ")\n"
                            << rep.to_text();
}

TEST(SwitchWeightedShares, CoverEveryLiveChunkOnce) {
  for (const KernelId kernel : {KernelId::fused_wgmma, KernelId::fused_mma_sync}) {
    for (const int block_size : {64, 16}) {
      const Case c = test::many_sequences(block_size);
      const std::string what = "300 sequences, block_size " + std::to_string(block_size);
      expect_every_chunk_once<0>(c, kernel, what);
      expect_every_chunk_once<1>(c, kernel, what);
      expect_every_chunk_once<3>(c, kernel, what);
    }
    expect_every_chunk_once<0>(few_sequences(), kernel, "3 sequences, next_n 2");
    expect_every_chunk_once<3>(few_sequences(), kernel, "3 sequences, next_n 2");
  }
}

}  // namespace
}  // namespace pmqa
