// A kernel's output buffer with guard cells, poisoned before each run (spec §1.3, §5).
//
//   [ guard | row 0 (cols) | row pad | row 1 | row pad | ... | row rows-1 | row pad | guard ]
//
// Every cell starts as the sentinel NaN. After the run: a valid cell still holding the sentinel
// was never written; a pad or guard cell not holding it was written outside its row.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace pmqa {

inline constexpr std::uint32_t kSentinelBits = 0x7FF0CAFEu;  // a quiet NaN no arithmetic produces

inline bool is_sentinel(float v) noexcept { return std::bit_cast<std::uint32_t>(v) == kSentinelBits; }
inline float sentinel() noexcept { return std::bit_cast<float>(kSentinelBits); }

class OutputBuffer {
 public:
  OutputBuffer() = default;
  // row_pad: guard cells after each row (the row stride is cols + row_pad); guard: cells before
  // the first and after the last row.
  OutputBuffer(std::int64_t rows, std::int64_t cols, std::int64_t row_pad = 16, std::int64_t guard = 64);

  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t row_stride() const noexcept { return cols_ + row_pad_; }
  std::int64_t row_pad() const noexcept { return row_pad_; }
  std::int64_t guard() const noexcept { return guard_; }

  // The whole allocation, guards included (what a device copy moves).
  std::vector<float>& storage() noexcept { return storage_; }
  const std::vector<float>& storage() const noexcept { return storage_; }

  float* data() noexcept { return storage_.data() + guard_; }  // cell (0, 0)
  const float* data() const noexcept { return storage_.data() + guard_; }
  float at(std::int64_t r, std::int64_t j) const noexcept { return data()[r * row_stride() + j]; }
  float& at(std::int64_t r, std::int64_t j) noexcept { return data()[r * row_stride() + j]; }

  void poison() noexcept;

  // Cells outside every row's [0, cols) that no longer hold the sentinel.
  std::int64_t count_guard_violations() const noexcept;
  // The first such cell as an index into storage(), or -1.
  std::int64_t first_guard_violation() const noexcept;

 private:
  std::int64_t rows_ = 0, cols_ = 0, row_pad_ = 0, guard_ = 0;
  std::vector<float> storage_;
};

}  // namespace pmqa
