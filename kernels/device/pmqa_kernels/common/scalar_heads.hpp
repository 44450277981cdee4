// What the portable kernels (fused-scalar and the two-stage path's stage 1) share: their geometry,
// the key a thread decodes into registers, the queries and weights staged in shared memory a chunk
// of heads at a time, and the loop over a row's heads that scores that key.
//
// Grid (ceil(max_model_len / kKeysPerBlock), B); kFusedThreads threads. Thread t serves key
// j = blockIdx.x*kKeysPerBlock + t/kHeadGroups and heads h = t%kHeadGroups (mod kHeadGroups).
#pragma once

#include "pmqa_kernels/common/faults.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kFusedThreads = 256;
inline constexpr int kHeadGroups = 4;
inline constexpr int kKeysPerBlock = kFusedThreads / kHeadGroups;  // 64
inline constexpr int kHeadChunk = 16;

// The portable kernels' grid for max_model_len columns of `batch` sequences.
inline dim3 scalar_grid(std::int64_t max_model_len, std::int64_t batch) {
  return dim3(static_cast<unsigned>((max_model_len + kKeysPerBlock - 1) / kKeysPerBlock), static_cast<unsigned>(batch));
}

template <class Hooks, int kD>
struct KeyRegisters {
  float k[kD];
  float scale;
};

// Decodes key j of sequence b (page from the table, token within the block) into registers.
template <class Hooks, int kD, bool kFnuz>
PMQA_DEV void load_key(const LogitsParams& p, std::int64_t b, std::int64_t j, KeyRegisters<Hooks, kD>& key) {
  const KeySlot slot = key_slot(p, j);
  const std::int64_t page = p.block_table[b * p.max_blocks_per_seq + slot.logical];
  const std::int64_t t = slot.token;
  const std::uint8_t* block = p.kv + Hooks::block_offset(page, p.block_stride);
PMQA_UNROLL
  for (int d = 0; d < kD; ++d) key.k[d] = Hooks::template decode_k<kFnuz>(block[Hooks::template value_offset<kD>(p.shuffle != 0, t, d)]);
  key.scale = load_f32_unaligned(block + Hooks::template scale_offset<kD>(p.block_size, t));
}

// Thread t's key of its block: j = blockIdx.x*kKeysPerBlock + t/kHeadGroups of sequence blockIdx.y.
PMQA_DEV std::int64_t thread_key_index(unsigned tid) {
  return static_cast<std::int64_t>(blockIdx.x) * kKeysPerBlock + tid / kHeadGroups;
}

// Decodes key j of sequence b into registers if the sequence has it, and says whether it did: the
// sequence's longest row bounds which keys exist (shorter rows mask theirs to -inf), and nothing
// exists at or past max_model_len.
template <class Hooks, int kD, bool kFnuz>
PMQA_DEV bool load_live_key(const LogitsParams& p, std::int64_t b, std::int64_t j, KeyRegisters<Hooks, kD>& key) {
  const std::int64_t seq_keys = longest_row<Hooks>(p, b, 0, p.next_n);
  const bool live = j < seq_keys && j < p.max_model_len;
  key.scale = 0.0f;  // read only when live; set here so no path reads it unset
  if (live) load_key<Hooks, kD, kFnuz>(p, b, j, key);
  return live;
}

// Stages q[b][n][h0 .. h0+count) (decoded) and the matching weights into shared memory.
template <class Hooks, int kD, bool kFnuz>
PMQA_DEV void stage_queries(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h0, int count,
                            float (&qs)[kHeadChunk][kD + 4], float (&ws)[kHeadChunk]) {
  for (int i = static_cast<int>(threadIdx.x); i < count * kD; i += static_cast<int>(blockDim.x)) {
    const int h = i / kD, d = i % kD;
    qs[h][d] = Hooks::template decode_q<kFnuz>(p.q[Hooks::q_offset(p, b, n, h0 + h, d)]);
  }
  for (int i = static_cast<int>(threadIdx.x); i < count; i += static_cast<int>(blockDim.x))
    ws[i] = p.weights[(b * p.next_n + n) * p.heads + h0 + i];
}

// Row (b, n)'s head terms w[h] * relu(s * q_h.k) of this thread's key, for its heads: term(h, v)
// for each. Every thread of the block stages the queries (the barriers need them all); only those
// with `scored` compute. qs rows are padded by 4 floats: the kHeadGroups lanes of a key read rows
// h, h+1, .. at the same d, which then fall in different banks.
template <class Hooks, int kD, bool kFnuz, class Term>
PMQA_DEV void for_each_head_term(const LogitsParams& p, std::int64_t b, std::int64_t n, const KeyRegisters<Hooks, kD>& key,
                                 bool scored, float (&qs)[kHeadChunk][kD + 4], float (&ws)[kHeadChunk], Term&& term) {
  const int group = static_cast<int>(threadIdx.x % kHeadGroups);
  for (std::int64_t h0 = 0; h0 < p.heads; h0 += kHeadChunk) {
    const int count = static_cast<int>(p.heads - h0 < kHeadChunk ? p.heads - h0 : kHeadChunk);
    Hooks::barrier();  // the previous chunk's readers are done with qs
    stage_queries<Hooks, kD, kFnuz>(p, b, n, h0, count, qs, ws);
    Hooks::barrier();
    if (!scored) continue;
    for (int h = group; h < count; h += kHeadGroups) {
      float dot = 0.0f;
PMQA_UNROLL
      for (int d = 0; d < kD; ++d) dot += qs[h][d] * key.k[d];
      term(h0 + h, ws[h] * Hooks::relu(key.scale * dot));
    }
  }
}

PMQA_KDEV_END
