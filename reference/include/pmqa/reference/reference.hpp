// The reference: spec §1.1 computed with Eigen on the CPU, clean contract (§1.3).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "pmqa/model/case.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/tolerance.hpp"
#include "pmqa/reference/noise.hpp"

namespace pmqa {

enum class Precision : std::uint8_t { fp32, fp64 };

struct ReferenceOptions {
  Precision precision = Precision::fp32;
  bool with_noise = true;  // also the per-cell noise scales (tolerance.hpp), needed by the comparison
  int threads = 0;             // 0: std::thread::hardware_concurrency()
};

// Logits of the valid cells only: row r holds E_r values; every column at or past E_r is -inf.
// Ragged storage keeps huge max_model_len cases (rows past 2^31 bytes) cheap. Both NaN rules of
// spec §1.1 are kept: they differ only in cells with a NaN head term.
struct Reference {
  Precision precision = Precision::fp32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;                // max_model_len
  std::vector<std::int64_t> row_begin;  // rows + 1 prefix offsets into values
  std::vector<double> values;           // the logits, NaN propagating (fp32 results stored exactly in double)
  std::vector<double> clamped;          // the logits with relu = max(x, 0); empty when no cell has a NaN term
  std::vector<float> noise_d, noise_h, noise_t;  // NoiseScales per valid cell (relu-clamp terms); empty if not asked

  std::int64_t valid(std::int64_t r) const noexcept { return row_begin[r + 1] - row_begin[r]; }
  double at(std::int64_t r, std::int64_t j, NanRule rule = NanRule::propagate) const noexcept {
    if (j >= valid(r)) return -std::numeric_limits<double>::infinity();
    const auto i = static_cast<std::size_t>(row_begin[r] + j);
    return rule == NanRule::relu_clamp && !clamped.empty() ? clamped[i] : values[i];
  }
  // Some cell holds a NaN head term: the two NaN rules give different logits there.
  bool has_nan_terms() const noexcept { return !clamped.empty(); }
  bool has_noise() const noexcept { return noise_d.size() == values.size(); }
  NoiseScales noise_at(std::int64_t r, std::int64_t j) const noexcept {
    if (j >= valid(r)) return {};
    const auto i = static_cast<std::size_t>(row_begin[r] + j);
    return {noise_d[i], noise_h[i], noise_t[i]};
  }
};

// Validates the case, then computes. Page-chunked GEMMs per sequence, threads over work items.
Reference compute_reference(const Case& c, const ReferenceOptions& options = {});

// Dense [rows, max_model_len] float copy of the reference (row stride = max_model_len), the
// clean-contract output a correct kernel writes. For tests and for writing expected files.
std::vector<float> dense_logits(const Reference& ref);

// The reference as a kernel's output buffer (row_pad 16, guard 64 cells, as OutputBuffer's
// defaults), each logit rounded to fp32: what a correct kernel under the rule writes.
OutputBuffer as_output(const Reference& ref, NanRule rule = NanRule::propagate);

// What a correct kernel writes for the case: as_output of its fp32 reference.
OutputBuffer reference_output(const Case& c, NanRule rule = NanRule::propagate);

}  // namespace pmqa
