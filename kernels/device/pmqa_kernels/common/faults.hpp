// The places a kernel of this operation can go wrong, as one struct of static functions. The
// kernels call these and nothing else for indexing, decoding, masking and the relu; production
// instantiates them with Faithful. Test code derives a mutant from Faithful that shadows one
// function (only token 0 of each block read, a 32-bit output offset, FNUZ decoded as FN, ...)
// and runs the real kernels with it, so every mutant is the real kernel with one bug injected.
#pragma once

#include "pmqa_kernels/common/fp4.hpp"
#include "pmqa_kernels/common/fp8.hpp"
#include "pmqa_kernels/common/kv_index.hpp"
#include "pmqa_kernels/common/params.hpp"

PMQA_KDEV_BEGIN

struct Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode_q(std::uint8_t code) { return fp8_to_float<kFnuz>(code); }
  template <bool kFnuz>
  static PMQA_DEV float decode_k(std::uint8_t code) { return fp8_to_float<kFnuz>(code); }

  // e2m1 (common/fp4.hpp). q and keys pick their nibbles apart: a reader that swapped both alike
  // would give the same dots, so only one that treats them differently is a bug a logit can show.
  static PMQA_DEV std::uint32_t q_nibble(std::uint8_t byte, int d) { return e2m1_nibble(byte, d); }
  static PMQA_DEV std::uint32_t k_nibble(std::uint8_t byte, int d) { return e2m1_nibble(byte, d); }
  static PMQA_DEV float decode_e2m1(std::uint32_t nibble) { return e2m1_to_float(nibble); }
  // The scale of 32-value group g (its UE8M0 byte given), of q and of a key.
  static PMQA_DEV float q_group_scale(std::uint8_t byte, int /*g*/) { return ue8m0_to_float(byte); }
  static PMQA_DEV float k_group_scale(std::uint8_t byte, int /*g*/) { return ue8m0_to_float(byte); }
  // Byte offsets within a block of key value (t, d) and of token t's scale byte of group g.
  template <int kD>
  static PMQA_DEV std::int64_t e2m1_value_offset(const LogitsParams& p, std::int64_t t, int d) { return kdev::e2m1_value_offset<kD>(p, t, d); }
  template <int kD>
  static PMQA_DEV std::int64_t e2m1_scale_offset(const LogitsParams& p, std::int64_t t, int g) { return kdev::e2m1_scale_offset<kD>(p, t, g); }
  // Byte offset of q[b][n][h]'s scale byte of group g in [B, N, H, 4].
  static PMQA_DEV std::int64_t q_scale_offset(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h, int g) {
    return ((b * p.next_n + n) * p.heads + h) * 4 + g;
  }

  template <int kD>
  static PMQA_DEV std::int64_t value_offset(bool shuffle, std::int64_t t, int d) { return kdev::value_offset<kD>(shuffle, t, d); }
  // The physical block of logical block `logical` of sequence b, from the block table (the portable
  // kernels' lookup; the matrix-unit kernels read the table in their copy loops).
  static PMQA_DEV std::int64_t page(const LogitsParams& p, std::int64_t b, std::int64_t logical) {
    return p.block_table[b * p.max_blocks_per_seq + logical];
  }
  // Byte offset of a physical block in the cache.
  static PMQA_DEV std::int64_t block_offset(std::int64_t page, std::int64_t block_stride) { return page * block_stride; }
  // Byte offset of token t's scale within a block.
  template <int kD>
  static PMQA_DEV std::int64_t scale_offset(std::int64_t block_size, std::int64_t t) { return kdev::scale_offset<kD>(block_size, t); }
  // Element offset of output cell (r, j).
  static PMQA_DEV std::int64_t out_offset(std::int64_t r, std::int64_t row_stride, std::int64_t j) { return r * row_stride + j; }
  // Element offset of stage 1's per-head cell (h, r, j) in [H, B*N, max_model_len].
  static PMQA_DEV std::int64_t per_head_offset(const LogitsParams& p, std::int64_t h, std::int64_t r, std::int64_t j) {
    return (h * (p.batch * p.next_n) + r) * p.max_model_len + j;
  }
  // The stride of a grid-stride loop: every thread of the launched grid, once.
  static PMQA_DEV std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }
  // Element offset of q[b][n][h][d].
  static PMQA_DEV std::int64_t q_offset(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h, int d) {
    return ((b * p.next_n + n) * p.heads + h) * p.head_dim + d;
  }
  // E_r of row (b, n), spec §1.2.
  static PMQA_DEV std::int64_t valid_keys(const LogitsParams& p, std::int64_t b, std::int64_t n) {
    if (p.context_lens_2d) return p.context_lens[b * p.next_n + n];
    return static_cast<std::int64_t>(p.context_lens[b]) - p.next_n + n + 1;
  }
  // relu that keeps NaN (x < 0 is false for NaN): fmaxf(x, 0) would hide corrupt data. NVIDIA
  // sm_80+ has the NaN-propagating max as one instruction (a compare and a select otherwise, 12 %
  // of the mma.sync kernel's instructions when measured); it maps -0 to +0, which no sum can tell
  // apart.
  static PMQA_DEV float relu(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float r;
    asm("max.NaN.f32 %0, %1, 0f00000000;\n" : "=f"(r) : "f"(x));
    return r;
#else
    return x < 0.0f ? 0.0f : x;
#endif
  }
  // The value a lane contributes to the head reduction (a hook for "garbage in one lane").
  static PMQA_DEV float lane_partial(float acc, unsigned /*thread*/) { return acc; }
  static PMQA_DEV void barrier() { __syncthreads(); }
  // fused-mma's per-warp pipelines order a warp's copies and reads with this alone.
  static PMQA_DEV void warp_barrier() { warp_sync(); }

};

// The longest E_r over rows n in [n_begin, n_end) of sequence b: which keys exist at all.
template <class Hooks>
PMQA_DEV std::int64_t longest_row(const LogitsParams& p, std::int64_t b, std::int64_t n_begin, std::int64_t n_end) {
  std::int64_t longest = 0;
  for (std::int64_t n = n_begin; n < n_end; ++n) {
    const std::int64_t e = Hooks::valid_keys(p, b, n);
    longest = e > longest ? e : longest;
  }
  return longest;
}

PMQA_KDEV_END
