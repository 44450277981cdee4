// Spec §1.1 with Eigen: per sequence, chunks of logical blocks are decoded into a [keys, D]
// matrix and multiplied by the sequence's decoded queries [N*H, D] in one GEMM; the scale, relu
// and weighted head sum follow as a [1, H] x [H, keys] product per query row. Work items
// (sequence, chunk) run on a few threads and write disjoint cells.
#include "pmqa/reference/reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <atomic>
#include <limits>
#include <span>
#include <thread>
#include <type_traits>

#include <Eigen/Dense>

#include "pmqa/reference/fp4.hpp"
#include "pmqa/reference/fp8.hpp"
#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {
namespace {

constexpr std::int64_t kChunkKeys = 512;  // keys per GEMM: large enough for Eigen's blocking to pay

struct WorkItem {
  std::int64_t b;
  std::int64_t first_block;
  std::int64_t end_block;
};

// relu that lets NaN through: x < 0 is false for NaN, so NaN is returned as is. (std::max(x, 0)
// or a SIMD max would turn it into 0 and hide corrupt data, the very thing a check must see.)
template <class S>
S relu_keep_nan(S x) {
  return x < S(0) ? S(0) : x;
}

// relu as max(x, 0) computes it on the tensor-core kernels (spec §1.1, relu-clamp): NaN gives 0.
template <class S>
S relu_clamp(S x) {
  return x > S(0) ? x : S(0);
}

template <class S>
S nan_to_zero(S x) {
  return x == x ? x : S(0);
}

template <class S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class S>
using RowVec = Eigen::Matrix<S, 1, Eigen::Dynamic>;

template <class S>
class SequenceChunk {
 public:
  SequenceChunk(const Case& c, const std::array<S, 256>& lut, bool with_noise, std::atomic<bool>& any_nan)
      : c_(c), lut_(lut), noise_(with_noise), any_nan_(any_nan), kv_(c), fp4_(is_fp4(c.format)) {}

  void run(const WorkItem& item, Reference& ref) {
    const std::int64_t N = c_.next_n, H = c_.heads, D = c_.head_dim, bs = c_.block_size;
    const std::int64_t j0 = item.first_block * bs;
    const std::int64_t keys = (item.end_block - item.first_block) * bs;

    q_.resize(N * H, D);
    if (fp4_) {
      load_fp4_queries(item.b);
    } else {
      const std::uint8_t* qb = c_.q.data() + item.b * N * H * D;
      for (std::int64_t i = 0; i < N * H * D; ++i) q_.data()[i] = lut_[qb[i]];
    }

    k_.resize(keys, D);
    scale_.resize(keys);
    if (fp4_) k_exp_.assign(static_cast<std::size_t>(keys * (D / kScaleGroup)), std::uint8_t{127});
    for (std::int64_t i = item.first_block; i < item.end_block; ++i) {
      const std::int64_t p = c_.physical_block(item.b, i);
      const std::int64_t row0 = (i - item.first_block) * bs;
      // Blocks no row of this chunk reaches may lie past the table's valid entries: skip them.
      if (p < 0 || p >= c_.num_blocks) {
        k_.middleRows(row0, bs).setZero();
        scale_.segment(row0, bs).setZero();
        continue;
      }
      for (std::int64_t t = 0; t < bs; ++t) {
        if (fp4_) {
          load_fp4_key(p, t, row0 + t);
          continue;
        }
        for (std::int64_t d = 0; d < D; ++d) k_(row0 + t, d) = lut_[kv_.value_code(p, t, d)];
        scale_(row0 + t) = static_cast<S>(kv_.scale(p, t));
      }
    }

    if (fp4_ && !prescaled()) {
      fp4_grouped_dots(keys);
    } else {
      s_.noalias() = q_ * k_.transpose();  // [N*H, keys]: every head's dot with every key
    }
    if (noise_) sq_.noalias() = q_.array().square().matrix() * k_.array().square().matrix().transpose();  // |q_h o k|^2

    for (std::int64_t n = 0; n < N; ++n) {
      const std::int64_t r = item.b * N + n;
      const std::int64_t valid = std::clamp<std::int64_t>(c_.valid_keys(r) - j0, 0, keys);
      if (valid == 0) continue;
      const auto w = Eigen::Map<const RowVec<float>>(c_.weights.data() + r * H, H).template cast<S>();
      const auto sc = scale_.head(valid).transpose().array();
      const auto dots = s_.block(n * H, 0, H, valid);
      const Mat<S> x = (dots.array().rowwise() * sc).matrix();  // s * dot_h, [H, valid]
      const RowVec<S> logits = w * x.unaryExpr(&relu_keep_nan<S>);
      const std::size_t at = static_cast<std::size_t>(ref.row_begin[r] + j0);
      for (std::int64_t j = 0; j < valid; ++j) ref.values[at + j] = static_cast<double>(logits(j));

      const bool nan_terms = x.hasNaN();
      if (nan_terms) any_nan_.store(true, std::memory_order_relaxed);
      if (!nan_terms && !noise_) {
        for (std::int64_t j = 0; j < valid; ++j) ref.clamped[at + j] = ref.values[at + j];
        continue;
      }
      const Mat<S> clamped = x.unaryExpr(&relu_clamp<S>);
      const RowVec<S> logits_clamped = nan_terms ? RowVec<S>(w * clamped) : logits;
      for (std::int64_t j = 0; j < valid; ++j) ref.clamped[at + j] = static_cast<double>(logits_clamped(j));
      if (!noise_) continue;

      // tolerance.hpp's scales, with relu-clamp's terms (a NaN head term counts 0; under the
      // propagate rule such a cell is NaN and not measured against noise).
      const RowVec<S> w2 = w.array().square().matrix();
      const Mat<S> partial_d = (S(0.5) * sq_.block(n * H, 0, H, valid).array() + dots.array().square() / S(3))
                                   .unaryExpr(&nan_to_zero<S>)
                                   .matrix();
      const RowVec<S> over_d2 = (w2 * partial_d).array() * sc.square();
      const RowVec<S> terms2 = w2 * clamped.array().square().matrix();
      for (std::int64_t j = 0; j < valid; ++j) {
        const double t2 = static_cast<double>(terms2(j));
        const double logit = static_cast<double>(logits_clamped(j));
        ref.noise_d[at + j] = static_cast<float>(std::sqrt(static_cast<double>(over_d2(j))));
        ref.noise_h[at + j] = static_cast<float>(std::sqrt(0.5 * t2 + logit * logit / 3.0));
        ref.noise_t[at + j] = static_cast<float>(std::sqrt(t2));
      }
    }
  }

 private:
  // e2m1 (fp4.hpp): a value is its nibble's magnitude times its group's 2^(e - 127). The fp64 oracle
  // scales each value first (exact in double, at any exponent), so the GEMM, the noise scales and the
  // rest are the fp8 path's with per-token scale 1. The fp32 reference does what an fp32 kernel does:
  // each group's dots from unscaled values (exact: |sum| <= 1152 in quarters), times the group pair's
  // combined scale 2^(eq + ek - 254) as one float, summed over the groups.
  static constexpr bool prescaled() { return std::is_same_v<S, double>; }

  S group_value(std::uint8_t nibble, std::uint8_t scale) const {
    const double v = decode_e2m1(nibble);
    return static_cast<S>(prescaled() ? v * decode_ue8m0(scale) : v);
  }

  void load_fp4_queries(std::int64_t b) {
    const std::int64_t NH = c_.next_n * c_.heads, D = c_.head_dim, G = D / kScaleGroup;
    const std::size_t first = static_cast<std::size_t>(b * NH);
    const std::span<const std::uint8_t> packed(c_.q);
    q_exp_.resize(static_cast<std::size_t>(NH * G));
    for (std::int64_t i = 0; i < NH; ++i)
      for (std::int64_t g = 0; g < G; ++g) {
        const std::uint8_t e = c_.q_scales[(first + static_cast<std::size_t>(i)) * kScaleWordBytes + static_cast<std::size_t>(g)];
        q_exp_[static_cast<std::size_t>(i * G + g)] = e;
        for (std::int64_t d = g * kScaleGroup; d < (g + 1) * kScaleGroup; ++d)
          q_(i, d) = group_value(e2m1_nibble(packed, (static_cast<std::int64_t>(first) + i) * D + d), e);
      }
  }

  void load_fp4_key(std::int64_t p, std::int64_t t, std::int64_t row) {
    const std::int64_t G = c_.head_dim / kScaleGroup;
    for (std::int64_t g = 0; g < G; ++g) {
      const std::uint8_t e = kv_.fp4_scale_byte(p, t, g);
      k_exp_[static_cast<std::size_t>(row * G + g)] = e;
      for (std::int64_t d = g * kScaleGroup; d < (g + 1) * kScaleGroup; ++d) k_(row, d) = group_value(kv_.fp4_nibble(p, t, d), e);
    }
    scale_(row) = S(1);
  }

  void fp4_grouped_dots(std::int64_t keys) {
    const std::int64_t NH = q_.rows(), G = c_.head_dim / kScaleGroup;
    s_.setZero(NH, keys);
    for (std::int64_t g = 0; g < G; ++g) {
      part_.noalias() = q_.middleCols(g * kScaleGroup, kScaleGroup) * k_.middleCols(g * kScaleGroup, kScaleGroup).transpose();
      for (std::int64_t i = 0; i < NH; ++i) {
        const int eq = q_exp_[static_cast<std::size_t>(i * G + g)];
        for (std::int64_t j = 0; j < keys; ++j) {
          const int ek = k_exp_[static_cast<std::size_t>(j * G + g)];
          s_(i, j) += part_(i, j) * static_cast<S>(std::ldexp(1.0, eq + ek - 254));
        }
      }
    }
  }

  const Case& c_;
  const std::array<S, 256>& lut_;
  bool noise_;
  std::atomic<bool>& any_nan_;
  KvReader kv_;
  bool fp4_;
  Mat<S> q_, k_, s_, sq_, part_;
  Eigen::Matrix<S, Eigen::Dynamic, 1> scale_;
  std::vector<std::uint8_t> q_exp_, k_exp_;  // e2m1: the UE8M0 byte of each (row, group)
};

std::vector<WorkItem> plan(const Case& c) {
  std::vector<WorkItem> items;
  const std::int64_t chunk_blocks = std::max<std::int64_t>(1, kChunkKeys / c.block_size);
  for (std::int64_t b = 0; b < c.batch; ++b) {
    std::int64_t blocks = 0;
    for (std::int64_t n = 0; n < c.next_n; ++n) blocks = std::max(blocks, c.blocks_read(b * c.next_n + n));
    for (std::int64_t i = 0; i < blocks; i += chunk_blocks) items.push_back({b, i, std::min(blocks, i + chunk_blocks)});
  }
  return items;
}

template <class S>
bool run_items(const Case& c, const std::vector<WorkItem>& items, Reference& ref, const ReferenceOptions& o) {
  std::array<S, 256> lut{};
  if (const auto fp8 = fp8_of(c.format))  // e2m1 decodes nibble by nibble (SequenceChunk)
    for (int i = 0; i < 256; ++i) lut[static_cast<std::size_t>(i)] = static_cast<S>(decode_fp8(*fp8, static_cast<std::uint8_t>(i)));

  double work = 0;
  for (const auto& it : items) work += static_cast<double>((it.end_block - it.first_block) * c.block_size);
  work *= static_cast<double>(c.next_n * c.heads * c.head_dim);
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (work < 4e6) threads = 1;  // thread start-up would cost more than the work
  threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(1, items.size())));

  std::atomic<std::size_t> next{0};
  std::atomic<bool> any_nan{false};
  auto worker = [&] {
    SequenceChunk<S> chunk(c, lut, o.with_noise, any_nan);
    for (std::size_t i; (i = next.fetch_add(1)) < items.size();) chunk.run(items[i], ref);
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  }
  return any_nan.load();
}

}  // namespace

Reference compute_reference(const Case& c, const ReferenceOptions& options) {
  validate(c);
  Reference ref;
  ref.precision = options.precision;
  ref.rows = c.rows();
  ref.cols = c.max_model_len;
  ref.row_begin.resize(static_cast<std::size_t>(ref.rows + 1));
  ref.row_begin[0] = 0;
  for (std::int64_t r = 0; r < ref.rows; ++r)
    ref.row_begin[r + 1] = ref.row_begin[r] + std::max<std::int64_t>(0, c.valid_keys(r));
  const auto cells = static_cast<std::size_t>(ref.row_begin.back());
  ref.values.assign(cells, std::numeric_limits<double>::quiet_NaN());
  ref.clamped.assign(cells, std::numeric_limits<double>::quiet_NaN());
  if (options.with_noise) {
    ref.noise_d.assign(cells, 0.0f);
    ref.noise_h.assign(cells, 0.0f);
    ref.noise_t.assign(cells, 0.0f);
  }

  const auto items = plan(c);
  const bool nan_terms = options.precision == Precision::fp32 ? run_items<float>(c, items, ref, options)
                                                              : run_items<double>(c, items, ref, options);
  if (!nan_terms) ref.clamped = {};  // both rules give the same logits
  return ref;
}

std::vector<float> dense_logits(const Reference& ref) {
  std::vector<float> out(static_cast<std::size_t>(ref.rows * ref.cols), -std::numeric_limits<float>::infinity());
  for (std::int64_t r = 0; r < ref.rows; ++r)
    for (std::int64_t j = 0; j < ref.valid(r); ++j)
      out[static_cast<std::size_t>(r * ref.cols + j)] = static_cast<float>(ref.at(r, j));
  return out;
}

OutputBuffer as_output(const Reference& ref, NanRule rule) {
  OutputBuffer out(ref.rows, ref.cols);
  for (std::int64_t r = 0; r < ref.rows; ++r)
    for (std::int64_t j = 0; j < ref.cols; ++j) out.at(r, j) = static_cast<float>(ref.at(r, j, rule));
  return out;
}

OutputBuffer reference_output(const Case& c, NanRule rule) {
  return as_output(compute_reference(c, {.precision = Precision::fp32, .with_noise = false}), rule);
}

}  // namespace pmqa
