#include "pmqa/model/output.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pmqa {

OutputBuffer::OutputBuffer(std::int64_t rows, std::int64_t cols, std::int64_t row_pad, std::int64_t guard)
    : rows_(rows), cols_(cols), row_pad_(row_pad), guard_(guard) {
  if (rows < 0 || cols < 0 || row_pad < 0 || guard < 0)
    throw std::invalid_argument("OutputBuffer: negative size (rows " + std::to_string(rows) + ", cols " +
                                std::to_string(cols) + ")");
  storage_.resize(static_cast<std::size_t>(2 * guard + rows * (cols + row_pad)));
  poison();
}

void OutputBuffer::poison() noexcept { std::fill(storage_.begin(), storage_.end(), sentinel()); }

namespace {

// Calls f(index into storage) for every cell outside the rows' [0, cols) ranges.
template <class F>
bool for_each_guard_cell(std::int64_t rows, std::int64_t cols, std::int64_t pad, std::int64_t guard, F&& f) {
  const std::int64_t stride = cols + pad;
  for (std::int64_t i = 0; i < guard; ++i)
    if (!f(i)) return false;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < pad; ++k)
      if (!f(guard + r * stride + cols + k)) return false;
  const std::int64_t tail = guard + rows * stride;
  for (std::int64_t i = 0; i < guard; ++i)
    if (!f(tail + i)) return false;
  return true;
}

}  // namespace

std::int64_t OutputBuffer::count_guard_violations() const noexcept {
  std::int64_t n = 0;
  for_each_guard_cell(rows_, cols_, row_pad_, guard_, [&](std::int64_t i) {
    n += !is_sentinel(storage_[static_cast<std::size_t>(i)]);
    return true;
  });
  return n;
}

std::int64_t OutputBuffer::first_guard_violation() const noexcept {
  std::int64_t first = -1;
  for_each_guard_cell(rows_, cols_, row_pad_, guard_, [&](std::int64_t i) {
    if (is_sentinel(storage_[static_cast<std::size_t>(i)])) return true;
    first = i;
    return false;
  });
  return first;
}

}  // namespace pmqa
