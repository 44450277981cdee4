// fused-mma's work split reads context lengths in groups of 128 sequences (schedule/chunk_work.hpp): one
// group stays in registers, more are read twice. 300 sequences (three groups, the last partial),
// every seventh with no valid key, lengths from 1 key to 5 chunks: split over the host's few
// CTAs, shares start in every group, on sequence switches and inside sequences.
#pragma once

#include "pmqa/fixtures/generate.hpp"

namespace pmqa::test {

inline Case many_sequences(int block_size) {
  fixtures::CaseSpec s;
  s.batch = 300;
  s.heads = 32;
  s.head_dim = 128;
  s.block_size = block_size;
  s.max_model_len = 320;
  for (int b = 0; b < s.batch; ++b) s.context_lens.push_back(b % 7 == 3 ? 0 : 1 + (b * 37) % 320);
  return fixtures::make_case(s);
}

}  // namespace pmqa::test
