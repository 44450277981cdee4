#include "pmqa/cases/byte_floor.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace pmqa::cases {

std::string FloorBytes::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%.2f MB (q %lld, kv %lld, weights %lld, block table %lld, lengths %lld, output %lld bytes)",
                static_cast<double>(total()) / 1e6, static_cast<long long>(q), static_cast<long long>(kv),
                static_cast<long long>(weights), static_cast<long long>(block_table),
                static_cast<long long>(context_lens), static_cast<long long>(output));
  return buf;
}

FloorBytes floor_bytes(const Case& c, Contract contract) {
  FloorBytes fb;
  const std::int64_t b = c.batch, n = c.next_n, bs = c.block_size;
  std::unordered_set<std::int32_t> pages;  // physical blocks read, each once however many sequences share it
  std::int64_t blocks_total = 0, valid_cells = 0;
  for (std::int64_t seq = 0; seq < b; ++seq) {
    std::int64_t longest = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t e = std::max<std::int64_t>(c.valid_keys(seq * n + k), 0);
      longest = std::max(longest, e);
      valid_cells += std::min(e, c.max_model_len);
    }
    // The logical blocks of the longest row: the others read a prefix of them. A table narrower
    // than that (an invalid case) counts the entries it has, as numpy's slice in floor.py did.
    const std::int64_t blocks = bs > 0 ? (longest + bs - 1) / bs : 0;
    blocks_total += blocks;
    for (std::int64_t l = 0; l < std::min(blocks, c.max_blocks_per_seq); ++l) pages.insert(c.physical_block(seq, l));
  }
  // e2m1: half a byte a value, and q's scale words too (fp8 folds q's scale into the weights).
  fb.q = b * n * c.heads * (c.token_value_bytes() + (is_fp4(c.format) ? kScaleWordBytes : 0));
  fb.kv = static_cast<std::int64_t>(pages.size()) * bs * (c.token_value_bytes() + kScaleWordBytes);
  fb.weights = b * n * c.heads * 4;
  fb.block_table = blocks_total * 4;
  fb.context_lens = static_cast<std::int64_t>(c.context_lens.size()) * 4;
  fb.output = (contract == Contract::clean ? b * n * c.max_model_len : valid_cells) * 4;
  return fb;
}

double floor_ms(std::int64_t total_bytes, double bytes_per_s) noexcept {
  return static_cast<double>(total_bytes) / bytes_per_s * 1e3;
}

}  // namespace pmqa::cases
