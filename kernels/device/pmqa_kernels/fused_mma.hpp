// The fused path on NVIDIA tensor cores (fp8 mma.sync m16n8k32, fp32 accumulate): variant
// "fused-mma". Same output contract as the portable fused kernel; the host executor runs it with
// the instruction emulated (mma_nv.hpp) at wave size 32.
//
// One CTA = 4 warps scores a range of 8 chunks of 64 keys of one sequence against all N*H query
// rows, streaming the chunks through a 3-stage cp.async pipeline (two in flight while it computes):
//   S[m][key] = sum_d q[m][d] * k[key][d],  m = n*H + h,  M = N*H = 64 * kMT rows,
// warp w owning rows [w*16*kMT, (w+1)*16*kMT) (kMT m-tiles of 16, all of one n because
// H % (16*kMT) == 0). A chunk's key bytes go to shared memory once (16-byte copies: the host API
// requires block_stride % 16 == 0), each warp keeps its q rows as A fragments in registers, and
// for each of the 8 key tiles of 8 it runs 4 k-steps of D = 128. The epilogue applies
// w[h] * relu(s * S) per accumulator, sums a lane's two rows, then the 8 row groups of the warp
// with __shfl_xor, and the warps of one n through shared memory in a fixed order (deterministic:
// no atomics), and writes the chunk's N x 64 logits, -inf past E_r.
#pragma once

#include "pmqa_kernels/async_copy.hpp"
#include "pmqa_kernels/fnuz_to_ocp.hpp"
#include "pmqa_kernels/hooks.hpp"
#include "pmqa_kernels/mma_nv.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = kMmaWarps * NvMma::kWarp;  // 128
inline constexpr int kMmaKeys = 64;                            // keys per CTA
inline constexpr int kMmaD = 128;                              // head_dim this variant takes
inline constexpr int kMmaRowBytes = kMmaD + 16;                // padded: the 8 keys a B fragment reads hit 8 different banks
inline constexpr int kMmaChunksPerCta = 8;                     // a CTA streams 8 chunks of one sequence ...
inline constexpr int kMmaKeysPerCta = kMmaKeys * kMmaChunksPerCta;
inline constexpr int kMmaStages = 3;                           // ... with 2 chunks in flight while it computes on one
// Register cap for ptxas, per m-tile count: resident CTAs are what hides the memory latency. 7 CTAs
// of 29.4 KB fill the 228 KB of shared memory; kMT 1 fits 7 in 72 registers (uncapped it took 120
// and held 4); kMT 2 spills below 128 registers, so it holds 4.
template <int kMT>
inline constexpr int kMmaMinCtasPerSm = kMT == 1 ? 7 : kMT == 2 ? 4 : 3;

// Shared memory in 16-byte aligned units (alignas on a __shared__ declaration is not portable).
struct alignas(16) Bytes16 {
  std::uint8_t b[16];
};

// 16 bytes from global to shared memory (both 16-byte aligned).
PMQA_DEV void copy16(std::uint8_t* dst, const std::uint8_t* src) {
#if defined(PMQA_DEVICE_BUILD)
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

PMQA_DEV std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  return *reinterpret_cast<const std::uint32_t*>(p);
#else
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

// Issues the asynchronous copies of chunk `chunk` (keys j0 + 64*chunk ..) into one stage: each
// key's 128 value bytes as 8 x 16 bytes, its scale as 4 bytes; keys that do not exist read as
// zero (their pages may not exist either: block_table entries past a sequence are never read).
template <class Hooks>
PMQA_DEV void issue_chunk(const LogitsParams& p, std::int64_t b, std::int64_t j, std::int64_t seq_keys,
                          std::uint8_t* stage_keys, float* stage_scales) {
  const int tid = static_cast<int>(threadIdx.x);
  for (int i = tid; i < kMmaKeys * (kMmaD / 16); i += kMmaThreads) {
    const int key = i / (kMmaD / 16), seg = i % (kMmaD / 16);
    const std::int64_t jk = j + key;
    const bool exists = jk < seq_keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const std::int64_t page = p.block_table[b * p.max_blocks_per_seq + jk / p.block_size];
      src = p.kv + Hooks::block_offset(page, p.block_stride) +
            Hooks::template value_offset<kMmaD>(p.shuffle != 0, jk % p.block_size, seg * 16);
    }
    async_copy<16>(stage_keys + key * kMmaRowBytes + seg * 16, src, exists);
  }
  for (int key = tid; key < kMmaKeys; key += kMmaThreads) {
    const std::int64_t jk = j + key;
    const bool exists = jk < seq_keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const std::int64_t page = p.block_table[b * p.max_blocks_per_seq + jk / p.block_size];
      src = p.kv + Hooks::block_offset(page, p.block_stride) + scale_offset<kMmaD>(p.block_size, jk % p.block_size);
    }
    async_copy<4>(stage_scales + key, src, exists);
  }
}

template <class Hooks, bool kFnuz, int kMT>
__global__ void __launch_bounds__(kMmaThreads, kMmaMinCtasPerSm<kMT>) fused_mma_kernel(LogitsParams p) {
  constexpr int kRowsPerWarp = 16 * kMT;
  constexpr int kKSteps = kMmaD / NvMma::kK;       // 4
  constexpr int kKeyTiles = kMmaKeys / NvMma::kN;  // 8
  __shared__ Bytes16 key_storage[kMmaStages][kMmaKeys * kMmaRowBytes / 16];
  __shared__ float scale_storage[kMmaStages][kMmaKeys];
  __shared__ float partial[kMmaWarps][kMmaKeys];

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / NvMma::kWarp, lane = tid % NvMma::kWarp;
  const std::int64_t b = blockIdx.y;
  const std::int64_t j_begin = static_cast<std::int64_t>(blockIdx.x) * kMmaKeysPerCta;
  const std::int64_t j_end = j_begin + kMmaKeysPerCta < p.max_model_len ? j_begin + kMmaKeysPerCta : p.max_model_len;

  std::int64_t seq_keys = 0;
  for (std::int64_t n = 0; n < p.next_n; ++n) {
    const std::int64_t e = Hooks::valid_keys(p, b, n);
    seq_keys = e > seq_keys ? e : seq_keys;
  }
  // Chunks of 64 keys holding at least one existing key; the rest of the range is -inf only.
  const std::int64_t live_end = seq_keys < j_end ? seq_keys : j_end;
  const int chunks = live_end > j_begin ? static_cast<int>((live_end - j_begin + kMmaKeys - 1) / kMmaKeys) : 0;
  for (std::int64_t i = tid; i < p.next_n * kMmaKeysPerCta; i += kMmaThreads) {
    const std::int64_t n = i / kMmaKeysPerCta, j = j_begin + static_cast<std::int64_t>(chunks) * kMmaKeys + i % kMmaKeysPerCta;
    if (j < j_end) p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = minus_infinity();
  }
  if (chunks == 0) return;  // uniform per CTA

  // Start fetching the first chunks, then build the query fragments while they fly.
  for (int c = 0; c < kMmaStages - 1; ++c) {
    if (c < chunks)
      issue_chunk<Hooks>(p, b, j_begin + c * kMmaKeys, seq_keys, key_storage[c][0].b, scale_storage[c]);
    async_commit();
  }

  // This warp's query rows as A fragments (OCP bytes; FNUZ converted with its correction part),
  // and the weight of each row the lane's accumulators hold.
  std::uint32_t qa[kMT][kKSteps][4], qc[kMT][kKSteps][4];
  float wrow[kMT][2];
  const std::int64_t row0 = static_cast<std::int64_t>(warp) * kRowsPerWarp;
  const std::int64_t n_of_warp = row0 / p.heads;
  PMQA_UNROLL
  for (int mt = 0; mt < kMT; ++mt) {
    PMQA_UNROLL
    for (int ks = 0; ks < kKSteps; ++ks)
      PMQA_UNROLL
      for (int r = 0; r < 4; ++r) {
        const std::int64_t h = row0 + mt * 16 + NvMma::a_row(lane, r) - n_of_warp * p.heads;
        const int d = ks * NvMma::kK + NvMma::a_col(lane, r);
        // 4 bytes at d..d+3 (d % 4 == 0, D = 128: the word is 4-byte aligned).
        const std::uint32_t word = load_u32(p.q + Hooks::q_offset(p, b, n_of_warp, h, d));
        if constexpr (kFnuz) {
          const OcpPair pair = fnuz_to_ocp4(word);
          qa[mt][ks][r] = pair.main;
          qc[mt][ks][r] = pair.corr;
        } else {
          qa[mt][ks][r] = word;
          qc[mt][ks][r] = 0;
        }
      }
    PMQA_UNROLL
    for (int half = 0; half < 2; ++half) {
      const std::int64_t h = row0 + mt * 16 + NvMma::c_row(lane, 2 * half) - n_of_warp * p.heads;
      wrow[mt][half] = p.weights[(b * p.next_n + n_of_warp) * p.heads + h];
    }
  }
  // FNUZ bytes enter the tensor cores doubled (fnuz_to_ocp.hpp): 1/2 per operand.
  const float scale_factor = kFnuz ? 0.25f : 1.0f;
  const int warps_per_n = static_cast<int>(p.heads / kRowsPerWarp);

  for (int c = 0; c < chunks; ++c) {
    // Refill the stage chunk c-1 used (every thread passed the barrier after computing on it).
    const int ahead = c + kMmaStages - 1;
    if (ahead < chunks)
      issue_chunk<Hooks>(p, b, j_begin + ahead * kMmaKeys, seq_keys, key_storage[ahead % kMmaStages][0].b,
                         scale_storage[ahead % kMmaStages]);
    async_commit();
    async_wait<kMmaStages - 1>();  // chunk c has landed (this thread's part)
    Hooks::barrier();               // ... and every thread's

    const std::uint8_t* keys = key_storage[c % kMmaStages][0].b;
    const float* scales = scale_storage[c % kMmaStages];
    // Not unrolled: an unrolled key-tile loop hoists loads and doubles the registers, halving the
    // CTAs an SM holds (measured: 119 vs 56 registers at kMT 1), and the CTAs are the latency hiding.
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
    for (int kt = 0; kt < kKeyTiles; ++kt) {
      float acc[kMT][4];
      PMQA_UNROLL
      for (int mt = 0; mt < kMT; ++mt)
        PMQA_UNROLL
        for (int i = 0; i < 4; ++i) acc[mt][i] = 0.0f;
      const std::uint8_t* key_row = keys + (kt * NvMma::kN + NvMma::b_col(lane)) * kMmaRowBytes;
      PMQA_UNROLL
      for (int ks = 0; ks < kKSteps; ++ks) {
        std::uint32_t kb[2] = {load_u32(key_row + ks * NvMma::kK + NvMma::b_row(lane, 0)),
                               load_u32(key_row + ks * NvMma::kK + NvMma::b_row(lane, 1))};
        std::uint32_t kbc[2] = {0, 0};
        if constexpr (kFnuz) {
          for (int r = 0; r < 2; ++r) {
            const OcpPair pair = fnuz_to_ocp4(kb[r]);
            kb[r] = pair.main;
            kbc[r] = pair.corr;
          }
        }
        PMQA_UNROLL
        for (int mt = 0; mt < kMT; ++mt) {
          NvMma::mma(acc[mt], qa[mt][ks], kb);
          if constexpr (kFnuz) {  // the exact remainder of the +-240 codes
            NvMma::mma(acc[mt], qa[mt][ks], kbc);
            NvMma::mma(acc[mt], qc[mt][ks], kb);
            NvMma::mma(acc[mt], qc[mt][ks], kbc);
          }
        }
      }
      // Epilogue of this key tile: the lane's columns 2t and 2t+1, summed over its rows.
      float col_sum[2] = {0.0f, 0.0f};
      PMQA_UNROLL
      for (int mt = 0; mt < kMT; ++mt)
        PMQA_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int key = kt * NvMma::kN + NvMma::c_col(lane, i);
          col_sum[i & 1] += wrow[mt][i >> 1] * Hooks::relu(scales[key] * scale_factor * acc[mt][i]);
        }
      PMQA_UNROLL
      for (int cc = 0; cc < 2; ++cc) {
        float v = Hooks::lane_partial(col_sum[cc], static_cast<unsigned>(tid));
        for (int m = 4; m < NvMma::kWarp; m <<= 1) v += __shfl_xor(v, m, NvMma::kWarp);  // over the 8 row groups
        if (lane < 4) partial[warp][kt * NvMma::kN + NvMma::c_col(lane, cc)] = v;
      }
    }
    Hooks::barrier();

    // Sum the warps of each n in warp order (deterministic), write the chunk.
    const std::int64_t j0 = j_begin + static_cast<std::int64_t>(c) * kMmaKeys;
    for (std::int64_t i = tid; i < p.next_n * kMmaKeys; i += kMmaThreads) {
      const std::int64_t n = i / kMmaKeys;
      const int key = static_cast<int>(i % kMmaKeys);
      const std::int64_t j = j0 + key;
      if (j >= j_end) continue;
      float sum = 0.0f;
      for (int w = 0; w < warps_per_n; ++w) sum += partial[n * warps_per_n + w][key];
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? sum : minus_infinity();
    }
  }
  async_wait<0>();  // no copy may outlive the CTA's shared memory
}

PMQA_KDEV_END
