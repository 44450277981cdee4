// What the kernels' specs (kernels/device/pmqa_kernels/<kernel>/spec.hpp) share: the arguments a
// launch gets, the shapes the kernels are instantiated for, and grid arithmetic. It speaks the model
// (the case, the device's capabilities, the tolerance profiles), never the host API: the executors
// include the specs, not the other way round.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>

#include "pmqa/model/case.hpp"
#include "pmqa/model/device_caps.hpp"
#include "pmqa/model/kernel_id.hpp"
#include "pmqa/model/tolerance.hpp"
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

// The head dims every kernel is instantiated for (with_instance).
inline constexpr int kInstantiatedHeadDims[] = {32, 64, 128};

// Why a case is outside the shapes every kernel takes, or "" when it is inside (the host API
// refuses such a case before choosing a kernel).
inline std::string unsupported_shape(const Case& c) {
  if (std::find(std::begin(kInstantiatedHeadDims), std::end(kInstantiatedHeadDims), c.head_dim) == std::end(kInstantiatedHeadDims))
    return "head_dim = " + std::to_string(c.head_dim) + " is not supported by the kernels (32, 64 or 128)";
  if (c.batch > 65535) return "batch = " + std::to_string(c.batch) + " exceeds the grid's y limit 65535";
  // 2^36 output cells (256 GiB of fp32) is past any GPU's memory; below it the kernels number a
  // launch's chunks and -inf pieces in 32 bits (schedule/chunk_work.hpp).
  if (c.max_model_len > 0 && c.rows() > ((std::int64_t{1} << 36) - 1) / c.max_model_len)  // rows * cells >= 2^36
    return "B*N x max_model_len = " + std::to_string(c.rows()) + " x " + std::to_string(c.max_model_len) +
           " output cells exceed the kernels' limit of 2^36";
  return "";
}

// Calls f.template operator()<kD, kFnuz>() for an fp8 case's head_dim and format (one of
// kInstantiatedHeadDims: the host API has refused the others).
template <class F>
void with_instance(const Case& c, F&& f) {
  const bool fnuz = c.format == ValueFormat::e4m3fnuz;
  switch (c.head_dim) {
    case 32: fnuz ? f.template operator()<32, true>() : f.template operator()<32, false>(); break;
    case 64: fnuz ? f.template operator()<64, true>() : f.template operator()<64, false>(); break;
    case 128: fnuz ? f.template operator()<128, true>() : f.template operator()<128, false>(); break;
    default: throw std::logic_error("with_instance: " + unsupported_shape(c));
  }
}

// Calls f.template operator()<kD>() for an e2m1 case's head_dim (64 or 128: validate() refuses
// the others, one scale word holding four 32-value groups).
template <class F>
void with_e2m1_instance(const Case& c, F&& f) {
  switch (c.head_dim) {
    case 64: f.template operator()<64>(); break;
    case 128: f.template operator()<128>(); break;
    default: throw std::logic_error("with_e2m1_instance: head_dim " + std::to_string(c.head_dim) + " with e2m1 values");
  }
}

// Why a matrix-unit kernel refuses e2m1 values: its matrix instructions take fp8 operands, and
// the block-scaled fp4 ones (tcgen05 MXF4 on sm_100, MFMA scaled on gfx950) are not written here.
inline std::string e2m1_unfit(const Case& c, const char* kernel_kind) {
  if (!is_fp4(c.format)) return "";
  return std::string("e2m1 values: ") + kernel_kind + " multiplies fp8 operands, and pmqa has no block-scaled fp4 variant of it";
}

// The matrix-unit kernels' shapes (fused-mma, fused-mfma): D 128 in 64-key chunks, 32 to 128
// query rows of whole heads a launch, keys copied in 4- or 16-byte segments.
inline KernelShapes matrix_shapes() { return {.head_dims = {128}, .heads = {32, 64, 128}, .block_stride_multiple = 4}; }

// Why a case is outside a kernel's shapes, or "" when it is inside.
inline std::string shape_unfit(const KernelShapes& s, const Case& c) {
  auto list = [](const std::vector<std::int64_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + std::to_string(v[i]);
    return out;
  };
  auto takes = [](const std::vector<std::int64_t>& v, std::int64_t x) { return v.empty() || std::find(v.begin(), v.end(), x) != v.end(); };
  if (!takes(s.head_dims, c.head_dim)) return "it takes head_dim " + list(s.head_dims) + " (got " + std::to_string(c.head_dim) + ")";
  if (!takes(s.heads, c.heads)) return "it takes heads " + list(s.heads) + " (got " + std::to_string(c.heads) + ")";
  if (c.block_stride % s.block_stride_multiple != 0)
    return "it copies " + std::to_string(s.block_stride_multiple) + "-byte or wider segments: block_stride must be a multiple of " +
           std::to_string(s.block_stride_multiple) + " (got " + std::to_string(c.block_stride) + ")";
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
