// The fused path (spec §1.4): one kernel writes [B*N, max_model_len], reducing over heads inside.
//
// Grid (ceil(max_model_len / kKeysPerBlock), B); 256 threads. Thread t serves key
// j = blockIdx.x*kKeysPerBlock + t/kHeadGroups and heads h = t%kHeadGroups (mod kHeadGroups): it
// decodes its key once into registers, then for every row n of the sequence sums
// w[h] * relu(s * q_h.k) over its heads, with q and w staged in shared memory kHeadChunk heads at
// a time. The kHeadGroups partial sums of a key (adjacent lanes) are combined with __shfl_xor of
// width kHeadGroups, which divides every wave size (32 and 64): nothing here assumes warpSize.
// Columns at or past E_r get -inf (clean contract); nothing is written at or past max_model_len.
#pragma once

#include "pmqa_kernels/hooks.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kFusedThreads = 256;
inline constexpr int kHeadGroups = 4;
inline constexpr int kKeysPerBlock = kFusedThreads / kHeadGroups;  // 64
inline constexpr int kHeadChunk = 16;

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

template <class Hooks, int kD, bool kFnuz>
__global__ void __launch_bounds__(kFusedThreads) fused_logits_kernel(LogitsParams p) {
  // Rows padded by 4 floats: the kHeadGroups lanes of a key read rows h, h+1, .. at the same d,
  // which then fall in different banks.
  PMQA_SHARED(float, qs, [kHeadChunk][kD + 4]);
  PMQA_SHARED(float, ws, [kHeadChunk]);

  const unsigned tid = threadIdx.x;
  const int group = static_cast<int>(tid % kHeadGroups);
  const std::int64_t b = blockIdx.y;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kKeysPerBlock + tid / kHeadGroups;

  // The sequence's longest row bounds which keys exist; shorter rows mask theirs to -inf.
  const std::int64_t seq_keys = longest_row<Hooks>(p, b, 0, p.next_n);
  const bool have_key = j < seq_keys && j < p.max_model_len;
  KeyRegisters<Hooks, kD> key;
  key.scale = 0.0f;  // read only when have_key; set here so no path reads it unset
  if (have_key) load_key<Hooks, kD, kFnuz>(p, b, j, key);

  for (std::int64_t n = 0; n < p.next_n; ++n) {
    float acc = 0.0f;
    for (std::int64_t h0 = 0; h0 < p.heads; h0 += kHeadChunk) {
      const int count = static_cast<int>(p.heads - h0 < kHeadChunk ? p.heads - h0 : kHeadChunk);
      Hooks::barrier();  // the previous chunk's readers are done with qs
      stage_queries<Hooks, kD, kFnuz>(p, b, n, h0, count, qs, ws);
      Hooks::barrier();
      if (have_key) {
        for (int h = group; h < count; h += kHeadGroups) {
          float dot = 0.0f;
PMQA_UNROLL
          for (int d = 0; d < kD; ++d) dot += qs[h][d] * key.k[d];
          acc += ws[h] * Hooks::relu(key.scale * dot);
        }
      }
    }
    acc = Hooks::lane_partial(acc, tid);
    for (int m = 1; m < kHeadGroups; m <<= 1) acc += __shfl_xor(acc, m, kHeadGroups);
    if (group == 0 && j < p.max_model_len) {
      const std::int64_t r = b * p.next_n + n;
      p.out[Hooks::out_offset(r, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? acc : minus_infinity();
    }
  }
}

PMQA_KDEV_END
