// Classes 5 and 6: addressing.
#include "kernel_mutants.hpp"

namespace pmqa::gauntlet::detail {
namespace {

namespace kd = pmqa::kdev;

// Class 5: the output offset formed as a 32-bit byte offset (as AMD buffer instructions take it):
// past 2^31 bytes it turns negative and the store lands up to 2 GiB before the buffer (on a GPU: a
// dropped store or someone else's memory), so rows there are never written. Identical to the real
// offset below 2^31 bytes, which is why only a case that large can show it.
struct OutputOffset32 : kd::Faithful {
  static PMQA_DEV std::int64_t out_offset(std::int64_t r, std::int64_t row_stride, std::int64_t j) {
    const auto bytes = static_cast<std::uint32_t>(static_cast<std::uint64_t>(r * row_stride + j) * 4u);
    return static_cast<std::int32_t>(bytes) / 4;
  }
};

// Class 6: every token of a block reads token 0's values (the in-block offset dropped from the
// address; the scale is still the token's own).
struct OnlyToken0 : kd::Faithful {
  template <int kD>
  static PMQA_DEV std::int64_t value_offset(bool shuffle, std::int64_t, int d) {
    return kd::Faithful::value_offset<kD>(shuffle, 0, d);
  }
  template <int kD>
  static PMQA_DEV std::int64_t scale_offset(std::int64_t block_size, std::int64_t) {
    return kd::Faithful::scale_offset<kD>(block_size, 0);
  }
};

// Class 6: q's batch offset taken with the head stride (D) instead of the batch stride (N*H*D),
// the stride(0)/stride(1) confusion of AITER 1815 on the tensor the hooks index: every sequence
// b > 0 reads another sequence's queries, shifted.
struct QBatchStrideIsHeadStride : kd::Faithful {
  static PMQA_DEV std::int64_t q_offset(const kd::LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h, int d) {
    return b * p.head_dim + (n * p.heads + h) * p.head_dim + d;
  }
};

// Class 6: a SHUFFLE (preshuffled 16x16 tiles) cache read with NORMAL indexing.
struct ShuffleReadAsNormal : kd::Faithful {
  template <int kD>
  static PMQA_DEV std::int64_t value_offset(bool, std::int64_t t, int d) {
    return kd::Faithful::value_offset<kD>(false, t, d);
  }
};

}  // namespace

void add_layout_mutants(std::vector<Mutant>& out) {
  Mutant wrap = kernel_mutant(5, "output-offset-32bit",
                              "output offsets formed as 32-bit byte offsets: rows past 2^31 bytes are never written",
                              "spec §6 class 5: AITER 4244, 4774", "Hooks::out_offset wraps at 2^31 bytes",
                              factory<OutputOffset32>("output-offset-32bit"));
  wrap.needs_gigabytes = true;
  out.push_back(std::move(wrap));
  out.push_back(kernel_mutant(6, "only-token-0", "only token 0 of each KV block is read: every token gets token 0's values",
                              "AITER 5591 (token 0 of each 64-token block)", "Hooks::value_offset and scale_offset (t -> 0)", factory<OnlyToken0>("only-token-0")));
  out.push_back(kernel_mutant(6, "q-batch-stride-is-head-stride",
                              "q's batch offset uses the head stride D instead of N*H*D",
                              "AITER 1815 (stride(0) passed for stride(1))", "Hooks::q_offset", factory<QBatchStrideIsHeadStride>("q-batch-stride-is-head-stride")));
  out.push_back(kernel_mutant(6, "shuffle-read-as-normal", "a SHUFFLE cache read with NORMAL indexing", "spec §6 class 6: AITER 5591, 1815; vLLM 50455",
                              "Hooks::value_offset ignores the layout", factory<ShuffleReadAsNormal>("shuffle-read-as-normal")));
}

}  // namespace pmqa::gauntlet::detail
