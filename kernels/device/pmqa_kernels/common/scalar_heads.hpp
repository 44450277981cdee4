// What the portable kernels (fused-scalar and the two-stage path's stage 1) share: their geometry,
// the key a thread decodes into registers, the queries and weights staged in shared memory a chunk
// of heads at a time, and the loop over a row's heads that scores that key.
//
// Grid (ceil(max_model_len / kKeysPerBlock), B); kFusedThreads threads. Thread t serves key
// j = blockIdx.x*kKeysPerBlock + t/kHeadGroups and heads h = t%kHeadGroups (mod kHeadGroups).
//
// Values is Fp8Values<kFnuz> or E2m1Values. Both decode to float; they differ in their scale
// groups. fp8: one fp32 scale per token over all kD values (q's folded into the weights), applied
// to the whole dot. e2m1: one UE8M0 scale per 32 values for q and for the key; a group's 32
// products and their sum are exact in float, and the group's q scale times its key scale is a power
// of two, so the only rounding before the weights is the fp32 sum of the kD/32 scaled partials.
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

template <bool kFnuz_>
struct Fp8Values {
  static constexpr bool kE2m1 = false;
  static constexpr bool kFnuz = kFnuz_;
};
struct E2m1Values {
  static constexpr bool kE2m1 = true;
};

// Scale groups of kD values: fp8 one (the token's), e2m1 one per 32 values.
template <class Values, int kD>
inline constexpr int kScaleGroups = Values::kE2m1 ? kD / kE2m1Group : 1;

template <class Hooks, int kD, class Values>
struct KeyRegisters {
  float k[kD];
  float scale[kScaleGroups<Values, kD>];
};

// Decodes key j of sequence b (page from the table, token within the block) into registers.
template <class Hooks, int kD, class Values>
PMQA_DEV void load_key(const LogitsParams& p, std::int64_t b, std::int64_t j, KeyRegisters<Hooks, kD, Values>& key) {
  const KeySlot slot = key_slot(p, j);
  const std::int64_t page = Hooks::page(p, b, slot.logical);
  const std::int64_t t = slot.token;
  const std::uint8_t* block = p.kv + Hooks::block_offset(page, p.block_stride);
  if constexpr (Values::kE2m1) {
PMQA_UNROLL
    for (int d = 0; d < kD; ++d)
      key.k[d] = Hooks::decode_e2m1(Hooks::k_nibble(block[Hooks::template e2m1_value_offset<kD>(p, t, d)], d));
PMQA_UNROLL
    for (int g = 0; g < kScaleGroups<Values, kD>; ++g)
      key.scale[g] = Hooks::k_group_scale(block[Hooks::template e2m1_scale_offset<kD>(p, t, g)], g);
  } else {
    constexpr bool kFnuz = Values::kFnuz;
PMQA_UNROLL
    for (int d = 0; d < kD; ++d) key.k[d] = Hooks::template decode_k<kFnuz>(block[Hooks::template value_offset<kD>(p.shuffle != 0, t, d)]);
    key.scale[0] = load_f32_unaligned(block + Hooks::template scale_offset<kD>(p.block_size, t));
  }
}

// Thread t's key of its block: j = blockIdx.x*kKeysPerBlock + t/kHeadGroups of sequence blockIdx.y.
PMQA_DEV std::int64_t thread_key_index(unsigned tid) {
  return static_cast<std::int64_t>(blockIdx.x) * kKeysPerBlock + tid / kHeadGroups;
}

// Decodes key j of sequence b into registers if the sequence has it, and says whether it did: the
// sequence's longest row bounds which keys exist (shorter rows mask theirs to -inf), and nothing
// exists at or past max_model_len.
template <class Hooks, int kD, class Values>
PMQA_DEV bool load_live_key(const LogitsParams& p, std::int64_t b, std::int64_t j, KeyRegisters<Hooks, kD, Values>& key) {
  const std::int64_t seq_keys = longest_row<Hooks>(p, b, 0, p.next_n);
  const bool live = j < seq_keys && j < p.max_model_len;
PMQA_UNROLL
  for (int g = 0; g < kScaleGroups<Values, kD>; ++g) key.scale[g] = 0.0f;  // read only when live; set so no path reads them unset
  if (live) load_key<Hooks, kD, Values>(p, b, j, key);
  return live;
}

// The queries of a chunk of heads in shared memory: decoded values (rows padded by 4 floats), the
// weights, and for e2m1 each head's group scales.
template <int kD, class Values>
struct StagedQueries {
  float (&qs)[kHeadChunk][kD + 4];
  float (&ws)[kHeadChunk];
  float (&scales)[kHeadChunk][kScaleGroups<Values, kD>];  // e2m1 only
};

// Stages q[b][n][h0 .. h0+count) (decoded) and the matching weights into shared memory.
template <class Hooks, int kD, class Values>
PMQA_DEV void stage_queries(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h0, int count,
                            const StagedQueries<kD, Values>& s) {
  for (int i = static_cast<int>(threadIdx.x); i < count * kD; i += static_cast<int>(blockDim.x)) {
    const int h = i / kD, d = i % kD;
    if constexpr (Values::kE2m1)  // q_offset counts values; a byte holds two
      s.qs[h][d] = Hooks::decode_e2m1(Hooks::q_nibble(p.q[Hooks::q_offset(p, b, n, h0 + h, d) >> 1], d));
    else
      s.qs[h][d] = Hooks::template decode_q<Values::kFnuz>(p.q[Hooks::q_offset(p, b, n, h0 + h, d)]);
  }
  if constexpr (Values::kE2m1) {
    constexpr int kGroups = kScaleGroups<Values, kD>;
    for (int i = static_cast<int>(threadIdx.x); i < count * kGroups; i += static_cast<int>(blockDim.x)) {
      const int h = i / kGroups, g = i % kGroups;
      s.scales[h][g] = Hooks::q_group_scale(p.q_scales[Hooks::q_scale_offset(p, b, n, h0 + h, g)], g);
    }
  }
  for (int i = static_cast<int>(threadIdx.x); i < count; i += static_cast<int>(blockDim.x))
    s.ws[i] = p.weights[(b * p.next_n + n) * p.heads + h0 + i];
}

// Row (b, n)'s head terms w[h] * relu(s * q_h.k) of this thread's key (e2m1: w[h] * relu of the sum
// of the scaled group dots), for its heads: term(h, v) for each. Every thread of the block stages the queries (the barriers need them all); only those
// with `scored` compute. qs rows are padded by 4 floats: the kHeadGroups lanes of a key read rows
// h, h+1, .. at the same d, which then fall in different banks.
template <class Hooks, int kD, class Values, class Term>
PMQA_DEV void for_each_head_term(const LogitsParams& p, std::int64_t b, std::int64_t n, const KeyRegisters<Hooks, kD, Values>& key,
                                 bool scored, const StagedQueries<kD, Values>& s, Term&& term) {
  constexpr int kGroups = kScaleGroups<Values, kD>;
  constexpr int kGroupSize = kD / kGroups;
  const int group = static_cast<int>(threadIdx.x % kHeadGroups);
  for (std::int64_t h0 = 0; h0 < p.heads; h0 += kHeadChunk) {
    const int count = static_cast<int>(p.heads - h0 < kHeadChunk ? p.heads - h0 : kHeadChunk);
    Hooks::barrier();  // the previous chunk's readers are done with qs
    stage_queries<Hooks, kD, Values>(p, b, n, h0, count, s);
    Hooks::barrier();
    if (!scored) continue;
    for (int h = group; h < count; h += kHeadGroups) {
      float dot = 0.0f;
PMQA_UNROLL
      for (int g = 0; g < kGroups; ++g) {
        float part = 0.0f;
PMQA_UNROLL
        for (int i = g * kGroupSize; i < (g + 1) * kGroupSize; ++i) part += s.qs[h][i] * key.k[i];
        // e2m1: the two scales multiplied first, so a q scale near 2^127 over a key scale near
        // 2^-126 (fixtures' fp4_scale_shift) stays exact where part * q scale would overflow.
        if constexpr (Values::kE2m1) dot += part * (s.scales[h][g] * key.scale[g]);
        else dot = key.scale[0] * part;  // one group: the fp8 token scale over the whole dot
      }
      term(h0 + h, s.ws[h] * Hooks::relu(dot));
    }
  }
}

PMQA_KDEV_END
