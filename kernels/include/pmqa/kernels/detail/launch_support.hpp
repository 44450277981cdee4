// What the kernels' specs (kernels/device/pmqa_kernels/<kernel>/spec.hpp) share: the arguments a
// launch gets, the shapes the host API takes, and grid arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "pmqa/kernels/device_caps.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa_kernels/arch/nv_tma.hpp"
#include "pmqa_kernels/common/params.hpp"
#include "pmqa_kernels/common/scalar_heads.hpp"
#include "pmqa_kernels/schedule/chunk_work.hpp"

namespace pmqa::kernels::detail {

// One launch's inputs: the case, its device parameters, and the key map when p.key_tma is set.
struct LaunchArgs {
  const Case& c;
  const kdev::LogitsParams& p;
  const kdev::KeyMap& key_map;
};

// The shapes every kernel takes (the host API refuses the rest before choosing one).
inline void check_supported(const Case& c) {
  if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), c.head_dim) == std::end(kSupportedHeadDims))
    throw KernelError("head_dim = " + std::to_string(c.head_dim) + " is not supported by the kernels (32, 64 or 128)");
  if (c.batch > 65535) throw KernelError("batch = " + std::to_string(c.batch) + " exceeds the grid's y limit 65535");
  // 2^36 output cells (256 GiB of fp32) is past any GPU's memory; below it the kernels number a
  // launch's chunks and -inf pieces in 32 bits (schedule/chunk_work.hpp).
  if (c.max_model_len > 0 && c.rows() > ((std::int64_t{1} << 36) - 1) / c.max_model_len)  // rows * cells >= 2^36
    throw KernelError("B*N x max_model_len = " + std::to_string(c.rows()) + " x " + std::to_string(c.max_model_len) +
                      " output cells exceed the kernels' limit of 2^36");
}

// Calls f.template operator()<kD, kFnuz>() for the case's head_dim and fp8 format.
template <class F>
void with_instance(const Case& c, F&& f) {
  const bool fnuz = c.fp8 == Fp8Format::e4m3fnuz;
  switch (c.head_dim) {
    case 32: fnuz ? f.template operator()<32, true>() : f.template operator()<32, false>(); break;
    case 64: fnuz ? f.template operator()<64, true>() : f.template operator()<64, false>(); break;
    case 128: fnuz ? f.template operator()<128, true>() : f.template operator()<128, false>(); break;
    default: check_supported(c);
  }
}

// Why a case cannot take the matrix-unit kernels' shapes (fused-mma, fused-mfma: D 128 in 64-key
// chunks, 32 to 128 query rows of whole heads a launch), or "" when it can.
inline std::string matrix_shape_unfit(const Case& c) {
  if (c.head_dim != 128) return "it takes head_dim 128 (got " + std::to_string(c.head_dim) + ")";
  if (c.heads != 32 && c.heads != 64 && c.heads != 128) return "it takes heads 32, 64 or 128 (got " + std::to_string(c.heads) + ")";
  if (c.block_stride % 4 != 0)
    return "it copies 4- or 16-byte segments: block_stride must be a multiple of 4 (got " + std::to_string(c.block_stride) + ")";
  return "";
}

// The query rows of a matrix-unit launch go in pieces of 128, 64 or 32 rows (whole next_n values,
// the largest that fit; H in {32, 64, 128} makes every N*H a sum of them): f(piece_params, rows).
template <class F>
void for_each_row_piece(const Case& c, const kdev::LogitsParams& p, F&& f) {
  for (std::int64_t n0 = 0; n0 < c.next_n;) {
    const std::int64_t left = (c.next_n - n0) * c.heads;
    const int piece = left >= 128 ? 128 : left >= 64 ? 64 : 32;
    kdev::LogitsParams q = p;
    q.mma_n_begin = n0;
    q.mma_n_count = piece / c.heads;
    n0 += q.mma_n_count;
    f(q, piece);
  }
}

// Calls launch(k32, k64 or k128) for a piece of `rows` query rows.
template <class L, class K32, class K64, class K128>
void by_rows(int rows, L&& launch, K32 k32, K64 k64, K128 k128) {
  if (rows == 128) launch(k128);
  else if (rows == 64) launch(k64);
  else launch(k32);
}

// A persistent grid of `blocks` CTAs of `units_per_block` share units (schedule/chunk_work.hpp)
// each, capped so the units' 32-bit share arithmetic stays exact.
inline std::int64_t share_units(std::int64_t blocks, std::int64_t units_per_block) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, kdev::kMaxShareUnits / units_per_block));
}

// Blocks for a grid-stride kernel over `count` items: enough to fill the device, never more
// than the items need (the kernel loops over the rest).
inline std::int64_t flat_blocks(std::int64_t count, std::int64_t resident_blocks, int threads) {
  const std::int64_t needed = (count + threads - 1) / threads;
  return std::max<std::int64_t>(1, std::min(needed, resident_blocks));
}

}  // namespace pmqa::kernels::detail
