// Test support for case files: small valid cases built from a seed or from fixed formulas, field-by-
// field comparison, and helpers that edit a file's JSON header while keeping its data section.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/reference/fp8.hpp"

namespace pmqa::testing {

struct TestShape {
  std::int64_t batch = 2;
  std::int64_t next_n = 2;
  std::int64_t heads = 2;
  std::int64_t head_dim = 16;
  std::int64_t block_size = 16;
  std::int64_t num_blocks = 4;
  std::int64_t stride_pad = 0;  // bytes of padding after each block
  std::int64_t max_blocks = 3;
  std::int64_t max_model_len = 48;
  bool ctx2d = false;
  ValueFormat format = ValueFormat::e4m3fn;
  KvLayout layout = KvLayout::normal;
  bool logits = true;
};

inline void put_f32(std::vector<std::uint8_t>& buf, std::size_t at, float v) { std::memcpy(buf.data() + at, &v, 4); }

// A valid case (it passes validate()) drawn from `seed`: random non-NaN codes, positive scales,
// context lengths that never need more blocks than exist, unread block_table entries -1 or garbage.
inline cases::CaseFile make_case_file(const TestShape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  cases::CaseFile f;
  Case& c = f.c;
  c.name = "test-" + std::to_string(seed);
  c.suite = "case-file-unit";
  c.seed = seed;
  c.format = s.format;
  c.layout = s.layout;
  c.batch = s.batch;
  c.next_n = s.next_n;
  c.heads = s.heads;
  c.head_dim = s.head_dim;
  c.block_size = s.block_size;
  c.num_blocks = s.num_blocks;
  c.block_stride = s.block_size * (s.head_dim + 4) + s.stride_pad;
  c.max_blocks_per_seq = s.max_blocks;
  c.max_model_len = s.max_model_len;
  c.context_lens_2d = s.ctx2d;
  auto code = [&] {
    auto b = static_cast<std::uint8_t>(rng());
    return is_fp8_nan(*fp8_of(s.format), b) ? static_cast<std::uint8_t>(b ^ 1u) : b;
  };
  const std::int64_t rows = s.batch * s.next_n;
  c.q.resize(static_cast<std::size_t>(rows * s.heads * s.head_dim));
  for (auto& b : c.q) b = code();
  c.kv_cache.resize(static_cast<std::size_t>(s.num_blocks * c.block_stride));
  for (std::int64_t p = 0; p < s.num_blocks; ++p) {
    const auto base = static_cast<std::size_t>(p * c.block_stride);
    for (std::int64_t k = 0; k < s.block_size * s.head_dim; ++k) c.kv_cache[base + static_cast<std::size_t>(k)] = code();
    for (std::int64_t t = 0; t < s.block_size; ++t) {
      const float scale = std::ldexp(1.0f + static_cast<float>(below(8)) / 8.0f, static_cast<int>(below(16)) - 12);
      put_f32(c.kv_cache, base + static_cast<std::size_t>(s.block_size * s.head_dim + 4 * t), scale);
    }
    for (std::int64_t k = s.block_size * (s.head_dim + 4); k < c.block_stride; ++k)
      c.kv_cache[base + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(rng());
  }
  c.weights.resize(static_cast<std::size_t>(rows * s.heads));
  for (auto& w : c.weights) w = (static_cast<float>(below(2001)) - 1000.0f) / 256.0f;

  // Context lengths: never more keys than max_model_len or the block table can address.
  const std::int64_t limit = s.num_blocks == 0 ? 0 : std::min(s.max_model_len, s.max_blocks * s.block_size);
  auto length = [&]() -> std::int32_t {
    switch (below(5)) {
      case 0: return 0;
      case 1: return static_cast<std::int32_t>(limit);
      default: return static_cast<std::int32_t>(below(static_cast<std::uint64_t>(limit) + 1));
    }
  };
  c.context_lens.resize(static_cast<std::size_t>(s.ctx2d ? rows : s.batch));
  for (auto& l : c.context_lens) l = length();
  c.block_table.resize(static_cast<std::size_t>(s.batch * s.max_blocks));
  for (std::int64_t b = 0; b < s.batch; ++b) {
    std::int64_t needed = 0;
    for (std::int64_t n = 0; n < s.next_n; ++n) needed = std::max(needed, c.blocks_read(b * s.next_n + n));
    for (std::int64_t i = 0; i < s.max_blocks; ++i) {
      auto& e = c.block_table[static_cast<std::size_t>(b * s.max_blocks + i)];
      if (i < needed)
        e = static_cast<std::int32_t>(below(static_cast<std::uint64_t>(s.num_blocks)));
      else
        e = below(2) ? -1 : static_cast<std::int32_t>(rng());  // never read: may hold anything
    }
  }
  if (s.logits) {
    f.logits.emplace(static_cast<std::size_t>(rows * s.max_model_len));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < s.max_model_len; ++j)
        (*f.logits)[static_cast<std::size_t>(r * s.max_model_len + j)] =
            j < c.valid_keys(r) ? static_cast<float>(static_cast<std::int64_t>(below(1 << 20)) - (1 << 19)) / 1024.0f
                                : -std::numeric_limits<float>::infinity();
  }
  f.contract = (seed & 1) ? Contract::valid_only : Contract::clean;
  f.producer = "case_file_test_support";
  f.extra["bench_ms"] = std::to_string(seed % 1000) + ".5";
  return f;
}

// The interop sample: every value from a formula, so python/tests/case_file_sample.py builds the very
// same file. Keep the two in step.
inline cases::CaseFile sample_case_file() {
  cases::CaseFile f;
  Case& c = f.c;
  c.name = "interop-sample";
  c.suite = "interop";
  c.seed = 12345678901234567890ull;
  c.format = ValueFormat::e4m3fnuz;
  c.layout = KvLayout::shuffle;
  c.batch = 2;
  c.next_n = 2;
  c.heads = 3;
  c.head_dim = 16;
  c.block_size = 16;
  c.num_blocks = 5;
  c.block_stride = 16 * (16 + 4) + 12;
  c.max_blocks_per_seq = 3;
  c.max_model_len = 40;
  c.context_lens_2d = false;
  const std::int64_t rows = c.batch * c.next_n;
  c.q.resize(static_cast<std::size_t>(rows * c.heads * c.head_dim));
  for (std::size_t i = 0; i < c.q.size(); ++i) c.q[i] = static_cast<std::uint8_t>((i * 29 + 3) % 127);
  c.kv_cache.assign(static_cast<std::size_t>(c.num_blocks * c.block_stride), 0xA5);
  for (std::int64_t p = 0; p < c.num_blocks; ++p) {
    const auto base = static_cast<std::size_t>(p * c.block_stride);
    for (std::int64_t k = 0; k < c.block_size * c.head_dim; ++k)
      c.kv_cache[base + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>((p * 31 + k * 7 + 1) % 127);
    for (std::int64_t t = 0; t < c.block_size; ++t)
      put_f32(c.kv_cache, base + static_cast<std::size_t>(c.block_size * c.head_dim + 4 * t),
              1.0f + 0.25f * static_cast<float>(t) + static_cast<float>(p));
  }
  c.weights.resize(static_cast<std::size_t>(rows * c.heads));
  for (std::size_t i = 0; i < c.weights.size(); ++i) c.weights[i] = static_cast<float>(i) * 0.125f - 1.0f;
  c.context_lens = {33, 7};
  c.block_table = {4, 1, 3, 2, -1, -1};
  f.logits.emplace(static_cast<std::size_t>(rows * c.max_model_len));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < c.max_model_len; ++j)
      (*f.logits)[static_cast<std::size_t>(r * c.max_model_len + j)] =
          j < c.valid_keys(r) ? static_cast<float>(r * c.max_model_len + j) * 0.5f - 3.0f
                              : -std::numeric_limits<float>::infinity();
  (*f.logits)[1 * 40 + 5] = std::bit_cast<float>(0x7FC00000u);
  f.contract = Contract::valid_only;
  f.producer = "interop-sample";
  f.extra["bench_ms"] = "1.25";
  f.extra["note"] = "h\xC3\xA9llo \xE2\x9C\x93";
  return f;
}

// Field-by-field equality (floats compared by their bits, so NaN payloads and -0 count).
// On a difference, `why` names the first differing field.
inline bool same_case_file(const cases::CaseFile& a, const cases::CaseFile& b, std::string* why = nullptr) {
  auto differ = [&](const std::string& field) {
    if (why) *why = field;
    return false;
  };
  auto bytes_equal = [](const auto& x, const auto& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  const Case& x = a.c;
  const Case& y = b.c;
  if (x.name != y.name) return differ("name");
  if (x.suite != y.suite) return differ("suite");
  if (x.seed != y.seed) return differ("seed");
  if (x.format != y.format) return differ("format");
  if (x.layout != y.layout) return differ("layout");
  if (x.batch != y.batch) return differ("batch");
  if (x.next_n != y.next_n) return differ("next_n");
  if (x.heads != y.heads) return differ("heads");
  if (x.head_dim != y.head_dim) return differ("head_dim");
  if (x.block_size != y.block_size) return differ("block_size");
  if (x.num_blocks != y.num_blocks) return differ("num_blocks");
  if (x.block_stride != y.block_stride) return differ("block_stride");
  if (x.max_blocks_per_seq != y.max_blocks_per_seq) return differ("max_blocks_per_seq");
  if (x.max_model_len != y.max_model_len) return differ("max_model_len");
  if (x.context_lens_2d != y.context_lens_2d) return differ("context_lens_2d");
  if (!bytes_equal(x.q, y.q)) return differ("q");
  if (!bytes_equal(x.kv_cache, y.kv_cache)) return differ("kv_cache");
  if (!bytes_equal(x.weights, y.weights)) return differ("weights");
  if (!bytes_equal(x.context_lens, y.context_lens)) return differ("context_lens");
  if (!bytes_equal(x.block_table, y.block_table)) return differ("block_table");
  if (a.logits.has_value() != b.logits.has_value()) return differ("logits (presence)");
  if (a.logits && !bytes_equal(*a.logits, *b.logits)) return differ("logits");
  if (a.contract != b.contract) return differ("contract");
  if (a.producer != b.producer) return differ("producer");
  if (a.extra != b.extra) return differ("extra");
  return true;
}

// A file's parts: the JSON header and the data section.
struct FileParts {
  nlohmann::json header;
  std::vector<std::uint8_t> data;
};

inline std::uint64_t header_length(const std::vector<std::uint8_t>& file) {
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | file[static_cast<std::size_t>(i)];
  return len;
}

inline FileParts split_file(const std::vector<std::uint8_t>& file) {
  const std::uint64_t len = header_length(file);
  FileParts p;
  p.header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(len));
  p.data.assign(file.begin() + 8 + static_cast<std::ptrdiff_t>(len), file.end());
  return p;
}

inline std::vector<std::uint8_t> join_file(const std::string& header_text, const std::vector<std::uint8_t>& data,
                                           std::uint64_t claimed_length) {
  std::vector<std::uint8_t> out(8 + header_text.size() + data.size());
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(claimed_length >> (8 * i));
  std::copy(header_text.begin(), header_text.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(header_text.size()));
  return out;
}

inline std::vector<std::uint8_t> join_file(const std::string& header_text, const std::vector<std::uint8_t>& data) {
  return join_file(header_text, data, header_text.size());
}

// The file with its header edited by `edit` (the data section unchanged).
inline std::vector<std::uint8_t> edit_header(const std::vector<std::uint8_t>& file,
                                             const std::function<void(nlohmann::json&)>& edit) {
  FileParts p = split_file(file);
  edit(p.header);
  return join_file(p.header.dump(), p.data);
}

}  // namespace pmqa::testing
