// Kernel arguments: one plain struct passed by value (the same bytes on every executor).
#pragma once

#include <cstdint>

#include "pmqa_kernels/common/hip_compat.hpp"

PMQA_KDEV_BEGIN

struct LogitsParams {
  const std::uint8_t* q = nullptr;          // [B, N, H, D] fp8, or [B, N, H, D/2] e2m1 pairs
  const std::uint8_t* q_scales = nullptr;   // e2m1: [B, N, H, 4] UE8M0 bytes
  const std::uint8_t* kv = nullptr;         // [num_blocks, block_stride] bytes
  const float* weights = nullptr;           // [B*N, H]
  const std::int32_t* context_lens = nullptr;  // [B] or [B, N]
  const std::int32_t* block_table = nullptr;   // [B, max_blocks_per_seq]
  float* out = nullptr;                     // fused, stage 2: cell (r, j) at out[r*out_row_stride + j]
  std::int64_t out_row_stride = 0;
  float* per_head = nullptr;                // stage 1: cell (h, r, j) at per_head[(h*rows + r)*max_model_len + j]

  std::int64_t batch = 0, next_n = 1, heads = 0, head_dim = 0;
  std::int64_t block_size = 0, block_stride = 0, max_blocks_per_seq = 0, max_model_len = 0;
  int block_shift = -1;  // log2(block_size) when it is a power of two: keys split with a shift, not a 64-bit division
  int context_lens_2d = 0;
  int shuffle = 0;
  int interleaved = 0;  // e2m1: the scale words in FlashInfer's interleaved slot order (block_size 128)
  // fused-mma scores the rows of next_n values [mma_n_begin, mma_n_begin + mma_n_count) per launch
  // (its shared memory holds 128 query rows at most; larger N*H takes several launches).
  std::int64_t mma_n_begin = 0, mma_n_count = 0;
  // fused-mma's wgmma kernel: 1 when the launch passes a KeyMap (arch/nv_tma.hpp) of the cache and its
  // chunks are copied through it.
  int key_tma = 0;
};

PMQA_KDEV_END
