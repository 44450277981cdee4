// The reference: spec §1.1 computed with Eigen on the CPU, clean contract (§1.3).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "pmqa/reference/case.hpp"

namespace pmqa {

enum class Precision : std::uint8_t { fp32, fp64 };

struct ReferenceOptions {
  Precision precision = Precision::fp32;
  bool with_magnitude = true;  // also compute A[r][j] (spec §5), needed by the comparison
  int threads = 0;             // 0: std::thread::hardware_concurrency()
};

// Logits of the valid cells only: row r holds E_r values; every column at or past E_r is -inf.
// Ragged storage keeps huge max_model_len cases (rows past 2^31 bytes) cheap.
struct Reference {
  Precision precision = Precision::fp32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;                // max_model_len
  std::vector<std::int64_t> row_begin;  // rows + 1 prefix offsets into values
  std::vector<double> values;           // the logits (fp32 results stored exactly in double)
  std::vector<double> magnitude;        // A[r][j] = sum_h |w| * s * sum_d |q k|; empty if not asked

  std::int64_t valid(std::int64_t r) const noexcept { return row_begin[r + 1] - row_begin[r]; }
  double at(std::int64_t r, std::int64_t j) const noexcept {
    return j < valid(r) ? values[static_cast<std::size_t>(row_begin[r] + j)]
                        : -std::numeric_limits<double>::infinity();
  }
  double magnitude_at(std::int64_t r, std::int64_t j) const noexcept {
    return j < valid(r) ? magnitude[static_cast<std::size_t>(row_begin[r] + j)] : 0.0;
  }
};

// Validates the case, then computes. Page-chunked GEMMs per sequence, threads over work items.
Reference compute_reference(const Case& c, const ReferenceOptions& options = {});

// Dense [rows, max_model_len] float copy of the reference (row stride = max_model_len), the
// clean-contract output a correct kernel writes. For tests and for writing expected files.
std::vector<float> dense_logits(const Reference& ref);

}  // namespace pmqa
