// The fused path on NVIDIA tensor cores (fp8 mma.sync m16n8k32, fp32 accumulate): variant
// "fused-mma". Same output contract as the portable fused kernel; the host executor runs it with
// the instruction emulated (mma_nv.hpp) at wave size 32.
//
// One CTA = 4 warps scores one chunk of 64 keys of one sequence against all N*H query rows:
//   S[m][key] = sum_d q[m][d] * k[key][d],  m = n*H + h,  M = N*H = 64 * kMT rows,
// warp w owning rows [w*16*kMT, (w+1)*16*kMT) (kMT m-tiles of 16, all of one n because
// H % (16*kMT) == 0). The chunk's key bytes go to shared memory once (16-byte copies: the host API
// requires block_stride % 16 == 0), each warp keeps its q rows as A fragments in registers, and
// for each of the 8 key tiles of 8 it runs 4 k-steps of D = 128. The epilogue applies
// w[h] * relu(s * S) per accumulator, sums a lane's two rows, then the 8 row groups of the warp
// with __shfl_xor, and the warps of one n through shared memory in a fixed order (deterministic:
// no atomics), and writes the chunk's N x 64 logits, -inf past E_r.
#pragma once

#include "pmqa_kernels/fnuz_to_ocp.hpp"
#include "pmqa_kernels/hooks.hpp"
#include "pmqa_kernels/mma_nv.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = kMmaWarps * NvMma::kWarp;  // 128
inline constexpr int kMmaKeys = 64;                            // keys per CTA
inline constexpr int kMmaD = 128;                              // head_dim this variant takes
inline constexpr int kMmaRowBytes = kMmaD + 16;                // padded: the 8 keys a B fragment reads hit 8 different banks

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

template <class Hooks, bool kFnuz, int kMT>
__global__ void __launch_bounds__(kMmaThreads) fused_mma_kernel(LogitsParams p) {
  constexpr int kRowsPerWarp = 16 * kMT;
  constexpr int kKSteps = kMmaD / NvMma::kK;  // 4
  constexpr int kKeyTiles = kMmaKeys / NvMma::kN;  // 8
  __shared__ Bytes16 key_storage[kMmaKeys * kMmaRowBytes / 16];
  std::uint8_t* const keys = key_storage[0].b;
  __shared__ float scales[kMmaKeys];
  __shared__ float partial[kMmaWarps][kMmaKeys];

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / NvMma::kWarp, lane = tid % NvMma::kWarp;
  const std::int64_t b = blockIdx.y;
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kMmaKeys;

  std::int64_t seq_keys = 0;
  for (std::int64_t n = 0; n < p.next_n; ++n) {
    const std::int64_t e = Hooks::valid_keys(p, b, n);
    seq_keys = e > seq_keys ? e : seq_keys;
  }
  const std::int64_t chunk_end = j0 + kMmaKeys < p.max_model_len ? j0 + kMmaKeys : p.max_model_len;

  if (j0 >= seq_keys) {  // no key of this chunk exists for any row: -inf only (uniform per CTA)
    for (std::int64_t i = tid; i < p.next_n * kMmaKeys; i += kMmaThreads) {
      const std::int64_t n = i / kMmaKeys, j = j0 + i % kMmaKeys;
      if (j < chunk_end) p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = minus_infinity();
    }
    return;
  }

  // Key bytes and scales of the chunk into shared memory; keys that do not exist read as zero
  // (their pages may not exist either: block_table entries past a sequence are never read).
  for (int i = tid; i < kMmaKeys * (kMmaD / 16); i += kMmaThreads) {
    const int key = i / (kMmaD / 16), seg = i % (kMmaD / 16);
    std::uint8_t* dst = keys + key * kMmaRowBytes + seg * 16;
    const std::int64_t j = j0 + key;
    if (j < seq_keys) {
      const std::int64_t page = p.block_table[b * p.max_blocks_per_seq + j / p.block_size];
      const std::uint8_t* block = p.kv + Hooks::block_offset(page, p.block_stride);
      copy16(dst, block + Hooks::template value_offset<kMmaD>(p.shuffle != 0, j % p.block_size, seg * 16));
    } else {
      for (int e = 0; e < 16; ++e) dst[e] = 0;
    }
  }
  for (int key = tid; key < kMmaKeys; key += kMmaThreads) {
    const std::int64_t j = j0 + key;
    float s = 0.0f;
    if (j < seq_keys) {
      const std::int64_t page = p.block_table[b * p.max_blocks_per_seq + j / p.block_size];
      s = load_f32_unaligned(p.kv + Hooks::block_offset(page, p.block_stride) + scale_offset<kMmaD>(p.block_size, j % p.block_size));
    }
    // FNUZ bytes enter the tensor cores doubled (fnuz_to_ocp.hpp): 1/2 per operand.
    scales[key] = kFnuz ? s * 0.25f : s;
  }

  // This warp's query rows as A fragments (OCP bytes; FNUZ converted with its correction part),
  // and the weight of each row the lane's accumulators hold.
  std::uint32_t qa[kMT][kKSteps][4], qc[kMT][kKSteps][4];
  float wrow[kMT][2];
  const std::int64_t row0 = static_cast<std::int64_t>(warp) * kRowsPerWarp;
  const std::int64_t n_of_warp = row0 / p.heads;
  for (int mt = 0; mt < kMT; ++mt) {
    for (int ks = 0; ks < kKSteps; ++ks)
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
    for (int half = 0; half < 2; ++half) {
      const std::int64_t h = row0 + mt * 16 + NvMma::c_row(lane, 2 * half) - n_of_warp * p.heads;
      wrow[mt][half] = p.weights[(b * p.next_n + n_of_warp) * p.heads + h];
    }
  }
  Hooks::barrier();

  for (int kt = 0; kt < kKeyTiles; ++kt) {
    float acc[kMT][4];
    for (int mt = 0; mt < kMT; ++mt)
      for (int i = 0; i < 4; ++i) acc[mt][i] = 0.0f;
    const std::uint8_t* key_row = keys + (kt * NvMma::kN + NvMma::b_col(lane)) * kMmaRowBytes;
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
    for (int mt = 0; mt < kMT; ++mt)
      for (int i = 0; i < 4; ++i) {
        const int key = kt * NvMma::kN + NvMma::c_col(lane, i);
        col_sum[i & 1] += wrow[mt][i >> 1] * Hooks::relu(scales[key] * acc[mt][i]);
      }
    for (int c = 0; c < 2; ++c) {
      float v = Hooks::lane_partial(col_sum[c], static_cast<unsigned>(tid));
      for (int m = 4; m < NvMma::kWarp; m <<= 1) v += __shfl_xor(v, m, NvMma::kWarp);  // over the 8 row groups
      if (lane < 4) partial[warp][kt * NvMma::kN + NvMma::c_col(lane, c)] = v;
    }
  }
  Hooks::barrier();

  // Sum the warps of each n in warp order, write the chunk.
  const int warps_per_n = static_cast<int>(p.heads / kRowsPerWarp);
  for (std::int64_t i = tid; i < p.next_n * kMmaKeys; i += kMmaThreads) {
    const std::int64_t n = i / kMmaKeys;
    const int key = static_cast<int>(i % kMmaKeys);
    const std::int64_t j = j0 + key;
    if (j >= chunk_end) continue;
    float sum = 0.0f;
    for (int w = 0; w < warps_per_n; ++w) sum += partial[n * warps_per_n + w][key];
    p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? sum : minus_infinity();
  }
}

PMQA_KDEV_END
