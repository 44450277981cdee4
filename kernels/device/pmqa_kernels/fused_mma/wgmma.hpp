// fused-mma on Hopper's native fp8 instruction (wgmma m64n64k32 e4m3, arch/nv_wgmma.hpp): the kernel
// fused-mma launches on sm_90 when the build has sm_90a code and the case is OCP (wgmma takes OCP
// e4m3 only; FNUZ cases keep the mma.sync kernel, whose f16 decode handles both formats). Same
// output contract, same work split, same stage layout family as fused_mma/mma_sync.hpp; the host executor
// runs it with the instruction emulated.
//
// Structure (measured choices: fused_mma/tuning.hpp, bench/results/notes.md):
// - A persistent grid of single-warpgroup CTAs (5 per SM, 3 for 128 rows): every warpgroup takes
//   a contiguous share of the launch's live chunks (schedule/chunk_work.hpp: equal in chunks plus
//   Config::kSwitchWeight per sequence switch) and streams them
//   through its own 4-stage ring, three chunks in flight while it computes on a fourth (at the
//   start one, then three once it has landed: the launch's first wave stays short). A stage
//   is filled by one tensor-map copy (TMA, arch/nv_tma.hpp) issued by thread 0 where the launch has a
//   key map (the plain layout, block_size a multiple of 64), else by cp.async from all 128
//   threads; either way the stage's mbarrier says when it has landed. The tensor-map copies mark
//   their lines evict-first in L2: the 69 MB of keys at the decode shape are read once and would
//   otherwise push out of L2 what every CTA rereads (block table, context lengths, q rows,
//   weights), turning its read-ahead block numbers and sequence switches into DRAM round trips
//   behind the key stream (Config::kEvictFirst).
// - Keys are M, query rows are N: one chunk is 4 wgmma k-steps (two N halves for 128 rows), the
//   keys read by the tensor cores straight from the stage (128-byte swizzle), q from a shared tile
//   loaded once per sequence. No operand passes through registers and nothing is converted.
// - The epilogue folds w[h] * relu(s * S) along each accumulator row (a key), 2 shuffles finish a
//   row group, and one lane of 4 writes it; weights, valid lengths and output rows are read once
//   per sequence. When a warp's 16 key scales are > 0 they move out of the relu. The -inf tails
//   past the live chunks are written up front (fill_dead_tails).
//
// One launch scores the rows of next_n values [mma_n_begin, mma_n_begin + mma_n_count), kRows =
// 32, 64 or 128 query rows (32: the instruction's upper 32 columns run on zeros and are ignored).
#pragma once

#include "pmqa_kernels/arch/nv_tma.hpp"
#include "pmqa_kernels/fused_mma/chunk_copy.hpp"
#include "pmqa_kernels/fused_mma/tuning.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kWgThreads = WgmmaFp8::kThreads;  // one warpgroup per CTA
inline constexpr int kWgStages = 4;
// CTAs per SM: 5 (88 registers a thread, 44 KB of shared memory each); 3 with 128 query rows,
// whose two accumulator halves would spill below 168 registers. Measured at the decode shape:
// 4 stages x 5 CTAs beat 3 x 6 and 7 x 3: copies in flight and warps both count.
template <int kRows>
inline constexpr int kWgCtasPerSm = kRows == 128 ? 3 : 5;

// One CTA's shared memory; every tile starts at a multiple of 1024 bytes (the swizzle's period).
// The q tile has 64 rows at least (the instruction's N; 32-row launches leave the rest zero).
template <int kRows>
struct WgShared {
  static constexpr int kQRows = kRows < 64 ? 64 : kRows;
  std::uint8_t keys[kWgStages][kChunkKeys * kChunkRowBytes];  // the ring: 8 KB per stage
  std::uint8_t q[kQRows * kChunkRowBytes];                    // the sequence's query rows
  float scales[kWgStages][kChunkKeys];
  Mbarrier full[kWgStages];  // stage s holds its chunk: one phase per use of the stage
  ChunkShare share;          // the CTA's share, found by warp 0
};
// What the kernel asks for: WgShared plus room to align it to 1024 bytes.
template <int kRows>
struct WgSharedSpace {
  Bytes16 raw[(sizeof(WgShared<kRows>) + 1024) / 16];
};

template <int kRows>
PMQA_DEV WgShared<kRows>& align_shared(WgSharedSpace<kRows>& space) {
  std::uint8_t* raw = space.raw[0].b;
#if defined(PMQA_DEVICE_BUILD)
  const auto at = static_cast<unsigned>(__cvta_generic_to_shared(raw));  // the swizzle runs on shared addresses
#else
  const auto at = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(raw));
#endif
  return *reinterpret_cast<WgShared<kRows>*>(raw + ((1024u - (at & 1023u)) & 1023u));
}

// The points of the kernel a timeline stamps (Probe::mark; bench/probes/timeline.cu): per CTA, its
// entry, its share known, its first copies issued, the loop's start, then for its first kChunks
// chunks the moment the chunk has landed and the moment its epilogue is done, and its end.
struct WgMark {
  static constexpr int kEntry = 0, kShare = 1, kFirstIssue = 2, kLoop = 3, kEnd = 4, kChunk0 = 5;
  static constexpr int kChunks = 32;
  static constexpr int kPoints = kChunk0 + 2 * kChunks;
  __host__ __device__ static constexpr int landed(std::int64_t i) { return kChunk0 + 2 * static_cast<int>(i); }
  __host__ __device__ static constexpr int folded(std::int64_t i) { return kChunk0 + 2 * static_cast<int>(i) + 1; }
};

// What the epilogue needs of the current sequence, read once when the warpgroup reaches it: the
// thread's weights (w[tile][e] for column 8*tile + 2t + e), and per output row of the launch
// (kRows / H of them, H >= 32) its valid keys and its output row's first cell; and the cells a
// row has. 32-bit: keys of a row are below 2^31 (32-bit context lengths), so the epilogue's
// compares and offsets are one instruction each.
template <int kRows>
struct SequenceRows {
  static constexpr int kOut = kRows / 32;
  float w[kRows / 8][2];
  std::int32_t valid[kOut];  // E_r clamped to [0, cells]: the same cells read as valid
  float* out[kOut];
  std::int32_t cells;  // min(max_model_len, 2^31 - 1): cells j < cells exist
};

// log2(H) for H in {32, 64, 128} (the host API's heads for fused-mma).
PMQA_DEV int heads_shift(const LogitsParams& p) { return p.heads == 32 ? 5 : p.heads == 64 ? 6 : 7; }

// Sequence b's query rows, in two steps so a caller can put work between the loads and their use:
// fetch_q_rows loads the thread's 16-byte pieces of the tile into registers (rows past kRows up
// to 64 as zeros), store_q_rows writes them swizzled into the shared tile.
template <int kRows>
struct QRowPieces {
  static constexpr int kPieces = WgShared<kRows>::kQRows * 8 / kWgThreads;  // 16-byte pieces a thread holds
  std::uint32_t v[kPieces][4];
};
template <class Hooks, int kRows>
PMQA_DEV QRowPieces<kRows> fetch_q_rows(const LogitsParams& p, std::int32_t b) {
  const int tid = static_cast<int>(threadIdx.x);
  const int hs = heads_shift(p), hmask = (1 << hs) - 1;
  QRowPieces<kRows> q{};
  PMQA_UNROLL
  for (int k = 0; k < QRowPieces<kRows>::kPieces; ++k) {
    const int i = tid + k * kWgThreads, m = i >> 3, s = i & 7;
    if (m < kRows) load_words4(q.v[k], p.q + Hooks::q_offset(p, b, p.mma_n_begin + (m >> hs), m & hmask, 16 * s));
  }
  return q;
}
template <int kRows>
PMQA_DEV void store_q_rows(const QRowPieces<kRows>& q, WgShared<kRows>& sh) {
  const int tid = static_cast<int>(threadIdx.x);
  PMQA_UNROLL
  for (int k = 0; k < QRowPieces<kRows>::kPieces; ++k) {
    const int i = tid + k * kWgThreads, m = i >> 3, s = i & 7;
    auto* dst = reinterpret_cast<std::uint32_t*>(sh.q + Swizzle128::segment(m, s));
    PMQA_UNROLL
    for (int e = 0; e < 4; ++e) dst[e] = q.v[k][e];
  }
}

// Sequence b's weights, valid lengths and output rows (SequenceRows).
template <class Hooks, int kRows>
PMQA_DEV void load_sequence_rows(const LogitsParams& p, std::int32_t b, SequenceRows<kRows>& seq) {
  const int t = static_cast<int>(threadIdx.x) & 3;
  // The launch's weights are contiguous: column c is row mma_n_begin + c / H, head c % H.
  const float* w = p.weights + (b * p.next_n + p.mma_n_begin) * p.heads + 2 * t;
  PMQA_UNROLL
  for (int tile = 0; tile < kRows / 8; ++tile) {
    PMQA_UNROLL
    for (int e = 0; e < 2; ++e) seq.w[tile][e] = w[8 * tile + e];
  }
  constexpr std::int64_t kCellsMax = 0x7FFFFFFF;
  seq.cells = static_cast<std::int32_t>(p.max_model_len < kCellsMax ? p.max_model_len : kCellsMax);
  PMQA_UNROLL
  for (int k = 0; k < SequenceRows<kRows>::kOut; ++k) {
    const std::int64_t n = p.mma_n_begin + (k < p.mma_n_count ? k : 0);
    const std::int64_t valid = Hooks::valid_keys(p, b, n);
    seq.valid[k] = static_cast<std::int32_t>(valid < 0 ? 0 : valid < seq.cells ? valid : seq.cells);
    seq.out[k] = p.out + Hooks::out_offset(b * p.next_n + n, p.out_row_stride, 0);
  }
}

// Sequence b's query rows into the shared tile and its SequenceRows (a sequence switch).
template <class Hooks, int kRows>
PMQA_DEV void load_sequence(const LogitsParams& p, std::int32_t b, WgShared<kRows>& sh, SequenceRows<kRows>& seq) {
  store_q_rows(fetch_q_rows<Hooks, kRows>(p, b), sh);
  load_sequence_rows<Hooks, kRows>(p, b, seq);
}

// a[k] for a runtime k < kN, without an indexed (local-memory) register array.
template <class T, int kN>
PMQA_DEV T select(const T (&a)[kN], int k) {
  T v = a[0];
  PMQA_UNROLL
  for (int i = 1; i < kN; ++i) v = k == i ? a[i] : v;
  return v;
}

// Writes output row k's logits for the thread's keys (rows g and g+8 of its warp's 16): the
// partial sums over the thread's columns, finished across the 4 lanes of the row group; lane t = 0
// writes key g, t = 1 key g+8.
template <class Hooks, int kRows>
PMQA_DEV void flush_wg_rows(const SequenceRows<kRows>& seq, int k, std::int32_t key0, float (&part)[2],
                            const float (&scale)[2]) {
  const int tid = static_cast<int>(threadIdx.x), t = tid & 3;
  const std::int32_t valid = select(seq.valid, k);
  float* const row = select(seq.out, k);
  PMQA_UNROLL
  for (int half = 0; half < 2; ++half) {
    float v = Hooks::lane_partial(part[half], threadIdx.x);
    v += __shfl_xor(v, 1, 32);
    v += __shfl_xor(v, 2, 32);
    const std::int32_t j = key0 + 16 * (tid / 32) + ((tid % 32) >> 2) + 8 * half;
    if (t == half && j < seq.cells) row[j] = j < valid ? v * scale[half] : minus_infinity();
    part[half] = 0.0f;
  }
}

// The epilogue of one chunk: acc[half] holds keys x query columns [64 half, 64 half + 64).
// kPositive: the warp's key scales are all > 0, so relu(s * x) = s * relu(x) and the scale
// is applied once per row at the end.
template <class Hooks, int kRows, bool kPositive>
PMQA_DEV void fold_chunk(const LogitsParams& p, const ChunkCursor& k, float (&acc)[kRows == 128 ? 2 : 1][WgmmaFp8::kAcc],
                         const SequenceRows<kRows>& seq, float s_lo, float s_hi) {
  // Tiles (8 columns) per output row: H/8 = 4, 8 or 16.
  const int row_shift = heads_shift(p) - 3;
  const int row_mask = (1 << row_shift) - 1;
  const float scale[2] = {kPositive ? s_lo : 1.0f, kPositive ? s_hi : 1.0f};
  const float in_lo = kPositive ? 1.0f : s_lo, in_hi = kPositive ? 1.0f : s_hi;
  float part[2] = {0.0f, 0.0f};
  PMQA_UNROLL
  for (int tile = 0; tile < kRows / 8; ++tile) {
    const float* a = &acc[tile >> 3][4 * (tile & 7)];  // keys (g | g+8) x columns (2t, 2t+1)
    part[0] = fmaf(seq.w[tile][0], Hooks::relu(in_lo * a[0]), part[0]);
    part[0] = fmaf(seq.w[tile][1], Hooks::relu(in_lo * a[1]), part[0]);
    part[1] = fmaf(seq.w[tile][0], Hooks::relu(in_hi * a[2]), part[1]);
    part[1] = fmaf(seq.w[tile][1], Hooks::relu(in_hi * a[3]), part[1]);
    if (((tile + 1) & row_mask) == 0)  // output row tile >> row_shift done
      flush_wg_rows<Hooks, kRows>(seq, tile >> row_shift, k.c * kChunkKeys, part, scale);
  }
}

// Stage s's copies of chunk k (its first key in physical block `page`), completing on the stage's
// barrier: by thread 0 alone through the tensor map (kTma), else by every thread of the warpgroup
// with cp.async (other layouts and block sizes).
template <class Hooks, class Config, int kRows, bool kTma>
PMQA_DEV void issue_stage(const LogitsParams& p, const KeyMap& key_map, std::uint64_t policy, const ChunkCursor& k,
                          std::int32_t page, WgShared<kRows>& sh, int s, int tid) {
  if constexpr (!kTma) {
    copy_chunk<Hooks, kWgThreads, Swizzle128>(p, k, page, sh.keys[s], sh.scales[s], tid);
    mbar_arrive_on_copies(sh.full[s]);
  } else {
    const std::int64_t t0 = key_slot(p, k.c * kChunkKeys).token;
    // The chunk's first row in the block's value region, through the same indexing hook as every
    // other key address (t0 itself; a mutant's wrong offset moves the box with it).
    const auto row = static_cast<std::int32_t>(Hooks::template value_offset<kChunkRowBytes>(false, t0, 0) / kChunkRowBytes);
    const std::uint8_t* block = p.kv + Hooks::block_offset(page, p.block_stride);
    mbar_arrive_expect(sh.full[s], kChunkKeyBytes + kChunkScaleBytes);
    constexpr bool kHint = Config::kEvictFirst;
    tma_load_keys<kHint>(key_map, page, row, sh.keys[s], sh.full[s], policy);
    bulk_load<kHint>(sh.scales[s], block + Hooks::template scale_offset<kChunkRowBytes>(p.block_size, t0), kChunkScaleBytes,
                     sh.full[s], policy);
  }
}

// Every launch input a CTA reads besides the keys (block table, q rows, weights: 0.6 MB at the
// decode shape) into L2 at entry, one 128-byte line per thread of the grid (thread t of CTA c
// takes line t * CTAs + c; inputs past one line per thread are left alone). Read only later, they
// queue in DRAM behind every CTA's first key copies (16.7 MB at the decode shape).
PMQA_DEV void prefetch_small_inputs(const LogitsParams& p, int tid) {
  constexpr std::int64_t kLine = 128;
  const std::int64_t line = static_cast<std::int64_t>(tid) * gridDim.x + blockIdx.x;
  const std::int64_t rows = p.batch * p.next_n;
  const std::int64_t table = (p.batch * p.max_blocks_per_seq * 4 + kLine - 1) / kLine;
  const std::int64_t q = (rows * p.heads * p.head_dim + kLine - 1) / kLine;
  const std::int64_t w = (rows * p.heads * 4 + kLine - 1) / kLine;
  if (line < table) prefetch_l2(reinterpret_cast<const std::uint8_t*>(p.block_table) + line * kLine);
  else if (line < table + q) prefetch_l2(p.q + (line - table) * kLine);
  else if (line < table + q + w) prefetch_l2(reinterpret_cast<const std::uint8_t*>(p.weights) + (line - table - q) * kLine);
}

// kTma: the launch passes a KeyMap of the cache (p.key_tma) and its chunks are copied through it;
// two kernels rather than a runtime branch, so each carries only its own copy path (the cp.async
// one is ~1,500 instructions per inlined copy, fetched cold into the instruction cache).
// Config: the tunables and the probe (fused_mma/tuning.hpp; WgmmaShipped in production).
template <class Hooks, class Config, int kRows, bool kTma>
__global__ void __launch_bounds__(kWgThreads, kWgCtasPerSm<kRows>)
    fused_wgmma_kernel(LogitsParams p, const PMQA_GRID_CONSTANT KeyMap key_map) {
  static_assert(kRows == 32 || kRows == 64 || kRows == 128, "fused-mma scores 32, 64 or 128 query rows per launch");
  constexpr int kHalves = kRows == 128 ? 2 : 1;  // n64 instructions per k-step
  constexpr int kAhead = kWgStages - 1;          // chunks in flight while one is computed
  PMQA_SHARED_OBJECT(WgSharedSpace<kRows>, space);
  WgShared<kRows>& sh = align_shared(space);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  // Who issues copies: thread 0 with the tensor map, every thread with cp.async.
  const bool producer = !kTma || tid == 0;
  using Probe = typename Config::Probe;
  const std::uint64_t policy = stream_once_policy();  // the key copies' L2 policy (evict first)
  Probe::mark(WgMark::kEntry);
  prefetch_small_inputs(p, tid);
  if (tid == 0) {
    PMQA_UNROLL
    for (int s = 0; s < kWgStages; ++s) mbar_init(sh.full[s], kTma ? 1 : kWgThreads);
    if constexpr (kTma) prefetch_key_map(key_map);
  }
  mbar_init_fence();
  Hooks::barrier();

  // Warp 0 finds the CTA's share of the live chunks while warps 1-3 write the -inf tails; the
  // share's cursors go to everyone through shared memory (one warp per CTA reading the context
  // lengths, not four: every CTA reads the same lines at once).
  ChunkCursor issue;      // the next chunk to copy (producers only)
  std::int32_t page = 0;  // its first block, read one chunk ahead of its copies
  if (warp == 0) {
    const ChunkShare mine = find_share<Hooks, Config::kSwitchWeight>(p, blockIdx.x, gridDim.x);
    Probe::mark(WgMark::kShare);
    if (tid == 0) sh.share = mine;
  } else {
    fill_dead_tails<Hooks>(p, blockIdx.x, gridDim.x, tid - 32, kWgThreads - 32);
  }
  Hooks::barrier();
  const auto count = static_cast<std::int32_t>(sh.share.count);  // < 2^31 (schedule/chunk_work.hpp)
  ChunkCursor compute = sh.share.first;
  issue = compute;

  // The first sequence's q rows are read before the first key copies are issued, and the first
  // chunks' blocks while they are in flight: read after the copies, the rows waited ~4 us behind
  // every CTA's first copies (16.7 MB in the DRAM queues) although prefetched into L2.
  SequenceRows<kRows> seq{};  // zeroed: compilers cannot see it is loaded before use
  std::int32_t q_b = -1;      // the sequence the q tile and seq hold
  QRowPieces<kRows> first_q{};
  // The tensor-map path issues one chunk per CTA first, the other two once it has landed: with
  // all 660 CTAs asking for three chunks at once (16.7 MB), each CTA's first chunk waited behind
  // the others' second and third.
  constexpr int kWave = kTma ? 1 : kAhead;
  // Tensor-map bytes are written by the async proxy the tensor cores read through: only the q
  // tile (stored by threads) needs the proxy fence, so no chunk does (cp.async: every chunk).
  constexpr bool kChunkFence = !kTma;
  // With 128 rows (8 wgmma a chunk) thread 0 refills a stage after issuing the chunk's wgmma, so
  // the other warps do not wait for its copies at the first wgmma; with 64 that measured no better.
  constexpr bool kRefillAfterMma = kTma && kHalves == 2;
  if (count > 0) first_q = fetch_q_rows<Hooks, kRows>(p, compute.b);
  // The first kAhead chunks' blocks as independent loads (one memory round trip, not kAhead),
  // then the first wave's copies.
  ChunkCursor ahead[kAhead];
  std::int32_t pages[kAhead] = {};
  if (producer && count > 0) {
    PMQA_UNROLL
    for (int j = 0; j < kAhead; ++j) {
      ahead[j] = issue;
      if (j < count) pages[j] = first_page<Hooks>(p, issue);
      next_chunk<Hooks>(p, issue);
    }
    if (kAhead < count) page = first_page<Hooks>(p, issue);
    PMQA_UNROLL
    for (int j = 0; j < kWave; ++j)
      if (j < count) issue_stage<Hooks, Config, kRows, kTma>(p, key_map, policy, ahead[j], pages[j], sh, j, tid);
  }
  Probe::mark(WgMark::kFirstIssue);
  if (count > 0) {  // the loop's first barrier (and fence) publish the tile
    store_q_rows(first_q, sh);
    load_sequence_rows<Hooks, kRows>(p, compute.b, seq);
    if constexpr (!kChunkFence) WgmmaFp8::fence_shared_for_tensor_cores();
    q_b = compute.b;
  }
  // The rest of the first chunks once chunk 0 has landed, by thread 0 (the only producer here),
  // after the tile and the sequence's rows: those loads fly while chunk 0 does.
  if constexpr (kWave < kAhead) {
    if (producer && count > 0) {
      mbar_wait(sh.full[0], 0);
      PMQA_UNROLL
      for (int j = kWave; j < kAhead; ++j)
        if (j < count) issue_stage<Hooks, Config, kRows, kTma>(p, key_map, policy, ahead[j], pages[j], sh, j, tid);
    }
  }
  // Copies of chunk i go to stage i % kWgStages.
  auto issue_next = [&](std::int32_t i) {
    if (producer && i < count) {
      issue_stage<Hooks, Config, kRows, kTma>(p, key_map, policy, issue, page, sh, static_cast<int>(i % kWgStages), tid);
      next_chunk<Hooks>(p, issue);
      if (i + 1 < count) page = first_page<Hooks>(p, issue);
    }
  };
  // Every thread's first copies are issued before anyone waits for them. A GPU thread would just
  // wait at the stage's barrier; the host executor's cannot block there (its emulated wait traps
  // on an open phase), and the loop's own barrier comes after the first wait. One barrier per CTA.
  // (Thread 0's wait for chunk 0 above is on a copy it issued itself, a tensor-map copy the host
  // emulation completes at issue.)
  Hooks::barrier();
  const WgmmaFp8::Tile keys0 = WgmmaFp8::tile(sh.keys[0]), q0 = WgmmaFp8::tile(sh.q);
  float acc[kHalves][WgmmaFp8::kAcc] = {};
  Probe::mark(WgMark::kLoop);
  for (std::int32_t i = 0; i < count; ++i) {
    const int s = static_cast<int>(i % kWgStages);
    mbar_wait(sh.full[s], static_cast<int>((i / kWgStages) & 1));  // chunk i's copies landed ...
    if (i < WgMark::kChunks) Probe::mark(WgMark::landed(i));
    if constexpr (kChunkFence)
      WgmmaFp8::fence_shared_for_tensor_cores();  // ... visible to the tensor cores (cp.async, the q tile)
    Hooks::barrier();                             // every thread is past chunk i-1 and its stage
    if constexpr (!kRefillAfterMma) issue_next(i + kAhead);  // into the stage chunk i-1 used
    if (compute.b != q_b) {  // a new sequence (the same branch in every thread)
      load_sequence<Hooks, kRows>(p, compute.b, sh, seq);
      WgmmaFp8::fence_shared_for_tensor_cores();
      Hooks::barrier();
      q_b = compute.b;
    }
    WgmmaFp8::fence();
    PMQA_UNROLL
    for (int ks = 0; ks < kChunkRowBytes / WgmmaFp8::kK; ++ks) {
      PMQA_UNROLL
      for (int h = 0; h < kHalves; ++h)
        WgmmaFp8::mma(acc[h], WgmmaFp8::advance(keys0, s * kChunkKeys * kChunkRowBytes),
                      WgmmaFp8::advance(q0, h * 64 * kChunkRowBytes), ks, ks > 0);
    }
    WgmmaFp8::commit();
    if constexpr (kRefillAfterMma) issue_next(i + kAhead);
    WgmmaFp8::wait_all();
    PMQA_UNROLL
    for (int h = 0; h < kHalves; ++h) WgmmaFp8::settle(acc[h]);
    const int g = (tid % 32) >> 2;
    const float s_lo = sh.scales[s][16 * warp + g], s_hi = sh.scales[s][16 * warp + g + 8];
    // The fast epilogue when all 16 of the warp's keys have scales > 0 (a warp-uniform choice:
    // the row sums shuffle within the warp).
    if (warp32_all(s_lo > 0.0f && s_hi > 0.0f)) fold_chunk<Hooks, kRows, true>(p, compute, acc, seq, s_lo, s_hi);
    else fold_chunk<Hooks, kRows, false>(p, compute, acc, seq, s_lo, s_hi);
    if (i < WgMark::kChunks) Probe::mark(WgMark::folded(i));
    next_chunk<Hooks>(p, compute);
  }
  Probe::mark(WgMark::kEnd);
  // Every copy issued was waited for: none outlives the CTA's shared memory.
}

PMQA_KDEV_END
