#include "pmqa/model/case.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace pmqa {

std::string_view to_string(KvLayout layout) noexcept {
  switch (layout) {
    case KvLayout::normal: return "normal";
    case KvLayout::shuffle: return "shuffle";
    case KvLayout::interleaved: return "interleaved";
  }
  return "?";
}

std::string_view message_name(KvLayout layout) noexcept {
  switch (layout) {
    case KvLayout::normal: return "NORMAL";
    case KvLayout::shuffle: return "SHUFFLE";
    case KvLayout::interleaved: return "INTERLEAVED";
  }
  return "?";
}

std::string_view to_string(Contract contract) noexcept { return contract == Contract::clean ? "clean" : "valid-only"; }

KvLayout parse_kv_layout(std::string_view text) {
  for (const KvLayout l : {KvLayout::normal, KvLayout::shuffle, KvLayout::interleaved})
    if (text == to_string(l) || text == message_name(l)) return l;
  throw std::invalid_argument("unknown KV layout \"" + std::string(text) + "\" (expected normal, shuffle or interleaved)");
}

Contract parse_contract(std::string_view text) {
  if (text == "clean") return Contract::clean;
  if (text == "valid-only" || text == "valid_only") return Contract::valid_only;
  throw std::invalid_argument("unknown output contract '" + std::string(text) + "' (expected clean or valid-only)");
}

std::vector<std::string> contract_names() {
  std::vector<std::string> names;
  for (const Contract c : {Contract::clean, Contract::valid_only}) names.emplace_back(to_string(c));
  return names;
}

std::vector<std::string> kv_layout_names() {
  std::vector<std::string> names;
  for (const KvLayout l : {KvLayout::normal, KvLayout::shuffle, KvLayout::interleaved}) names.emplace_back(to_string(l));
  return names;
}

std::string layout_problem(KvLayout layout, ValueFormat format, std::int64_t block_size, std::int64_t head_dim) {
  const std::string shape = "(block_size = " + std::to_string(block_size) + ", head_dim = " + std::to_string(head_dim) + ")";
  if (!is_fp4(format)) {
    if (layout == KvLayout::interleaved) return "layout interleaved is an e2m1 layout (FlashInfer's scale order)";
    if (layout == KvLayout::shuffle && (block_size % 16 != 0 || head_dim % 16 != 0))
      return "layout shuffle needs block_size and head_dim multiples of 16 " + shape;
    return "";
  }
  if (layout == KvLayout::shuffle && (block_size != 64 || head_dim != 128))
    return "e2m1 layout shuffle is AITER's 64-token page of 128 values a token " + shape;
  if (layout == KvLayout::interleaved && block_size != 128)
    return "e2m1 layout interleaved is FlashInfer's scale order at block_size 128 " + shape;
  return "";
}

std::int64_t Case::valid_keys(std::int64_t row) const noexcept {
  const std::int64_t b = row / next_n;
  const std::int64_t n = row % next_n;
  if (context_lens_2d) return context_lens[static_cast<std::size_t>(row)];
  return static_cast<std::int64_t>(context_lens[static_cast<std::size_t>(b)]) - next_n + n + 1;
}

std::int64_t Case::blocks_read(std::int64_t row) const noexcept {
  const std::int64_t e = valid_keys(row);
  return e <= 0 ? 0 : (e + block_size - 1) / block_size;
}

namespace {

[[noreturn]] void fail(const std::string& message) { throw CaseError(message); }

template <class... T>
std::string cat(const T&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

// a * b, failing with the field's name if it overflows int64 (hostile case files).
std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail(cat(what, ": size ", a, " x ", b, " overflows 64 bits"));
  return r;
}

void expect_size(const char* field, std::size_t actual, std::int64_t expected, const char* shape) {
  if (static_cast<std::int64_t>(actual) != expected)
    fail(cat(field, " has ", actual, " elements, expected ", expected, " for shape ", shape));
}

void check_dims(const Case& c) {
  auto at_least = [](const char* field, std::int64_t v, std::int64_t lo) {
    if (v < lo) fail(cat(field, " = ", v, " is below ", lo));
  };
  at_least("batch", c.batch, 0);
  at_least("next_n", c.next_n, 1);
  at_least("heads", c.heads, 1);
  at_least("head_dim", c.head_dim, 1);
  at_least("block_size", c.block_size, 1);
  at_least("num_blocks", c.num_blocks, 0);
  at_least("max_blocks_per_seq", c.max_blocks_per_seq, 0);
  at_least("max_model_len", c.max_model_len, 0);
  if (c.head_dim > (std::int64_t{1} << 40)) fail(cat("head_dim = ", c.head_dim, " is implausibly large"));
  if (is_fp4(c.format) && c.head_dim != 64 && c.head_dim != 128)
    fail(cat("head_dim = ", c.head_dim, " with e2m1 values: one scale word holds 4 groups of 32, so head_dim is 64 or 128"));
  const std::int64_t min_stride = mul(c.block_size, c.token_value_bytes() + kScaleWordBytes, "block_size*(value bytes+4)");
  if (c.block_stride < min_stride)
    fail(cat("block_stride = ", c.block_stride, " is below block_size*(", is_fp4(c.format) ? "head_dim/2" : "head_dim",
             "+4) = ", min_stride));
  if (const std::string why = layout_problem(c.layout, c.format, c.block_size, c.head_dim); !why.empty()) fail(why);
}

void check_buffer_sizes(const Case& c) {
  const std::int64_t rows = mul(c.batch, c.next_n, "rows");
  expect_size("q", c.q.size(), mul(mul(rows, c.heads, "q"), c.token_value_bytes(), "q"),
              is_fp4(c.format) ? "[B, N, H, D/2]" : "[B, N, H, D]");
  expect_size("q_scales", c.q_scales.size(), is_fp4(c.format) ? mul(mul(rows, c.heads, "q_scales"), kScaleWordBytes, "q_scales") : 0,
              is_fp4(c.format) ? "[B, N, H, 4]" : "[] (fp8 folds q's scale into the weights)");
  expect_size("kv_cache", c.kv_cache.size(), mul(c.num_blocks, c.block_stride, "kv_cache"), "[num_blocks, block_stride]");
  expect_size("weights", c.weights.size(), mul(rows, c.heads, "weights"), "[B*N, H]");
  expect_size("context_lens", c.context_lens.size(), c.context_lens_2d ? rows : c.batch,
              c.context_lens_2d ? "[B, N]" : "[B]");
  expect_size("block_table", c.block_table.size(), mul(c.batch, c.max_blocks_per_seq, "block_table"),
              "[B, max_blocks_per_seq]");
}

// Token t's fp32 scale in physical block `block` (spec §2: the scales follow the block's values,
// never shuffled). Validation reads it here rather than through the oracle's KV reader, so the
// model the kernels link holds no oracle code.
float read_scale(const Case& c, std::int64_t block, std::int64_t t) {
  float s;
  std::memcpy(&s, c.kv_cache.data() + block * c.block_stride + c.block_size * c.head_dim + 4 * t, 4);
  return s;
}

// e2m1: the byte of scale group g of token t in physical block `block`, per the layout (case.hpp).
std::uint8_t read_group_scale(const Case& c, std::int64_t block, std::int64_t t, std::int64_t g) {
  const std::int64_t region = block * c.block_stride + c.value_bytes_per_block();
  switch (c.layout) {
    case KvLayout::normal: return c.kv_cache[static_cast<std::size_t>(region + 4 * t + g)];
    case KvLayout::interleaved: return c.kv_cache[static_cast<std::size_t>(region + 4 * ((t % 32) * 4 + t / 32) + g)];
    case KvLayout::shuffle: return c.kv_cache[static_cast<std::size_t>(region + g * 64 + (t % 16) * 4 + t / 16)];
  }
  return 0xFF;
}

constexpr std::uint8_t kUe8m0Nan = 0xFF;

}  // namespace

void validate(const Case& c) {
  check_dims(c);
  check_buffer_sizes(c);

  for (std::size_t i = 0; i < c.context_lens.size(); ++i) {
    if (c.context_lens[i] < 0) {
      if (c.context_lens_2d)
        fail(cat("context_lens[", i / c.next_n, "][", i % c.next_n, "] = ", c.context_lens[i], " is negative"));
      fail(cat("context_lens[", i, "] = ", c.context_lens[i], " is negative"));
    }
  }
  for (std::size_t i = 0; i < c.weights.size(); ++i)
    if (!std::isfinite(c.weights[i]))
      fail(cat("weights[", i / c.heads, "][", i % c.heads, "] = ", c.weights[i], " is not finite"));

  // Lengths first (the root cause when a long row also runs off its table) ...
  for (std::int64_t r = 0; r < c.rows(); ++r) {
    const std::int64_t e = c.valid_keys(r);
    if (e > c.max_model_len)
      fail(cat("row ", r, " (b = ", r / c.next_n, ", n = ", r % c.next_n, ") has E_r = ", e,
               " valid keys, above max_model_len = ", c.max_model_len,
               c.context_lens_2d ? " (context_lens is 2-D)" : " (from context_lens[b])"));
  }
  // ... then every block a row reads must exist ...
  for (std::int64_t r = 0; r < c.rows(); ++r) {
    const std::int64_t b = r / c.next_n;
    const std::int64_t e = c.valid_keys(r);
    const std::int64_t nblocks = c.blocks_read(r);
    if (nblocks > c.max_blocks_per_seq)
      fail(cat("row ", r, " reads ", nblocks, " logical blocks (E_r = ", e, ", block_size = ", c.block_size,
               ") but block_table has ", c.max_blocks_per_seq, " columns"));
    for (std::int64_t i = 0; i < nblocks; ++i) {
      const std::int32_t p = c.physical_block(b, i);
      if (p < 0 || p >= c.num_blocks)
        fail(cat("block_table[", b, "][", i, "] = ", p, " is outside [0, ", c.num_blocks, ") (read by row ", r,
                 ", E_r = ", e, ")"));
    }
  }
  // ... and every token a row reads must have a usable scale: per sequence, its longest row's
  // prefix, once (the rows of a sequence read prefixes of the same keys; linear in the case size).
  for (std::int64_t b = 0; b < c.batch; ++b) {
    std::int64_t longest = 0, row = b * c.next_n;
    for (std::int64_t n = 0; n < c.next_n; ++n)
      if (c.valid_keys(b * c.next_n + n) > longest) {
        longest = c.valid_keys(b * c.next_n + n);
        row = b * c.next_n + n;
      }
    for (std::int64_t j = 0; j < longest; ++j) {
      const std::int32_t p = c.physical_block(b, j / c.block_size);
      const std::int64_t t = j % c.block_size;
      if (is_fp4(c.format)) {
        for (std::int64_t g = 0; g < c.head_dim / kScaleGroup; ++g)
          if (read_group_scale(c, p, t, g) == kUe8m0Nan)
            fail(cat("kv_cache scale byte ", g, " of physical block ", p, ", token ", t,
                     " is 0xFF, the UE8M0 NaN (read by row ", row, ", key ", j, ")"));
        continue;
      }
      const float s = read_scale(c, p, t);
      if (!(std::isfinite(s) && s > 0))
        fail(cat("kv_cache scale of physical block ", p, ", token ", t, " = ", s, " is not finite and > 0 (read by row ",
                 row, ", key ", j, ")"));
    }
  }
  // e2m1: q's scale bytes of the groups head_dim has (D = 64 leaves bytes 2 and 3 unread).
  if (is_fp4(c.format))
    for (std::int64_t i = 0; i < c.rows() * c.heads; ++i)
      for (std::int64_t g = 0; g < c.head_dim / kScaleGroup; ++g)
        if (c.q_scales[static_cast<std::size_t>(i * kScaleWordBytes + g)] == kUe8m0Nan)
          fail(cat("q_scales[", i / c.heads / c.next_n, "][", i / c.heads % c.next_n, "][", i % c.heads, "][", g,
                   "] is 0xFF, the UE8M0 NaN"));
}

std::string describe(const Case& c) {
  std::ostringstream s;
  if (!c.name.empty()) s << c.name << ": ";
  s << "B=" << c.batch << " N=" << c.next_n << " H=" << c.heads << " D=" << c.head_dim << " block_size=" << c.block_size
    << " blocks=" << c.num_blocks << " stride=" << c.block_stride << " max_model_len=" << c.max_model_len
    << (is_fp4(c.format) ? " format=" : " fp8=") << to_string(c.format) << " layout=" << to_string(c.layout)
    << " context_lens=" << (c.context_lens_2d ? "2-D" : "1-D") << " seed=" << c.seed;
  return s.str();
}

}  // namespace pmqa
