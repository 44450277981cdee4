// fused-mma's work split: every warp of a persistent grid takes an equal share of the launch's
// live chunks (64 keys of one sequence holding at least one key some row reads), numbered
// sequence by sequence. A warp's share is contiguous, so it usually stays on one sequence (its q
// stays in registers) and crosses into the next at most a few times; a sequence's chunks spread
// over as many warps as the grid has, so one long sequence does not leave the GPU idle and many
// short ones do not pay a per-sequence launch tail. Warp-level only: no CTA barrier anywhere.
#pragma once

#include "pmqa_kernels/hooks.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kChunkKeys = 64;
inline constexpr int kChunkWarp = 32;  // fused-mma's warps (NVIDIA)

// Keys of sequence b that exist for the launch's rows (the longest E_r, at most max_model_len).
template <class Hooks>
PMQA_DEV std::int64_t live_keys(const LogitsParams& p, std::int64_t b) {
  const std::int64_t keys = longest_row<Hooks>(p, b, p.mma_n_begin, p.mma_n_begin + p.mma_n_count);
  return keys < p.max_model_len ? keys : p.max_model_len;
}

PMQA_DEV std::int64_t chunks_of(std::int64_t keys) { return keys > 0 ? (keys + kChunkKeys - 1) / kChunkKeys : 0; }

// Chunk c of sequence b, which has `chunks` live chunks (`keys` live keys).
struct ChunkCursor {
  std::int64_t b = 0, c = 0, chunks = 0, keys = 0;
};

// The launch's live chunks, over all sequences (every lane gets the total).
template <class Hooks>
PMQA_DEV std::int64_t total_live_chunks(const LogitsParams& p) {
  const int lane = static_cast<int>(threadIdx.x) % kChunkWarp;
  // Four sequences per lane per round, their context-length loads in flight together: the first
  // memory round trip of every persistent warp, one per 128 sequences instead of per 32.
  constexpr int kPerLane = 4;
  long long total = 0;
  for (std::int64_t b0 = 0; b0 < p.batch; b0 += kChunkWarp * kPerLane) {
    PMQA_UNROLL
    for (int u = 0; u < kPerLane; ++u) {
      const std::int64_t b = b0 + kChunkWarp * u + lane;
      if (b < p.batch) total += chunks_of(live_keys<Hooks>(p, b));
    }
  }
  for (int m = kChunkWarp / 2; m > 0; m /= 2) total += __shfl_xor(total, m, kChunkWarp);
  return total;
}

// The cursor at live chunk `index` (0-based over all sequences); b == batch past the last.
template <class Hooks>
PMQA_DEV ChunkCursor seek_chunk(const LogitsParams& p, std::int64_t index) {
  const int lane = static_cast<int>(threadIdx.x) % kChunkWarp;
  long long before = 0;  // live chunks of the sequences before b0
  for (std::int64_t b0 = 0; b0 < p.batch; b0 += kChunkWarp) {
    const long long keys = b0 + lane < p.batch ? live_keys<Hooks>(p, b0 + lane) : 0;
    const long long mine = chunks_of(keys);
    long long incl = mine;  // inclusive scan over the 32 sequences
    for (int d = 1; d < kChunkWarp; d *= 2) {
      const long long v = __shfl_up(incl, static_cast<unsigned>(d), kChunkWarp);
      if (lane >= d) incl += v;
    }
    const long long here = __shfl(incl, kChunkWarp - 1, kChunkWarp);
    if (before + here > index) {
      int first = before + incl > index ? lane : kChunkWarp;  // the sequence holding the chunk
      for (int m = kChunkWarp / 2; m > 0; m /= 2) {
        const int o = __shfl_xor(first, m, kChunkWarp);
        first = o < first ? o : first;
      }
      ChunkCursor k;
      k.b = b0 + first;
      k.chunks = __shfl(mine, first, kChunkWarp);
      k.keys = __shfl(keys, first, kChunkWarp);
      k.c = index - (before + __shfl(incl, first, kChunkWarp) - k.chunks);
      return k;
    }
    before += here;
  }
  ChunkCursor end;
  end.b = p.batch;
  return end;
}

// The next live chunk (sequences without live keys are skipped).
template <class Hooks>
PMQA_DEV void next_chunk(const LogitsParams& p, ChunkCursor& k) {
  if (++k.c < k.chunks) return;
  k.c = 0;
  k.chunks = 0;
  while (k.chunks == 0 && ++k.b < p.batch) {
    k.keys = live_keys<Hooks>(p, k.b);
    k.chunks = chunks_of(k.keys);
  }
}

// The -inf part of the output no live chunk covers, as contiguous row tails: each launch row's
// cells from its sequence's last live chunk to max_model_len, cut into pieces of kTailPiece
// cells, one piece per `unit` of `units` (strided: a warp of fused-mma's mma.sync kernel, a
// warpgroup of its wgmma kernel), `threads` threads of a unit storing consecutive cells. The wgmma
// kernel runs it before its main loop, where the stores overlap the first copies.
inline constexpr int kTailPiece = 1024;
template <class Hooks>
PMQA_DEV void fill_dead_tails(const LogitsParams& p, std::int64_t unit, std::int64_t units, int thread, int threads) {
  const std::int64_t pieces = (p.max_model_len + kTailPiece - 1) / kTailPiece;
  const std::int64_t rows = p.batch * p.mma_n_count;
  if (pieces == 0 || unit >= rows * pieces) return;
  // (row, piece) of item unit + k * units, advanced without a 64-bit division per item; a row's
  // (sequence, next_n) split in 32 bits (rows <= 65535 * 128).
  std::int64_t row = unit / pieces, piece = unit % pieces;
  const std::int64_t step_row = units / pieces, step_piece = units % pieces;
  const auto count = static_cast<std::uint32_t>(p.mma_n_count);
  while (row < rows) {
    const std::int64_t b = static_cast<std::uint32_t>(row) / count;
    const std::int64_t n = p.mma_n_begin + static_cast<std::uint32_t>(row) % count;
    const std::int64_t dead = chunks_of(live_keys<Hooks>(p, b)) * kChunkKeys;
    const std::int64_t end = (piece + 1) * kTailPiece < p.max_model_len ? (piece + 1) * kTailPiece : p.max_model_len;
    for (std::int64_t j = (piece * kTailPiece > dead ? piece * kTailPiece : dead) + thread; j < end; j += threads)
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = minus_infinity();
    row += step_row;
    piece += step_piece;
    if (piece >= pieces) {
      piece -= pieces;
      ++row;
    }
  }
}

PMQA_KDEV_END
