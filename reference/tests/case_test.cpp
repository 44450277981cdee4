// Case validation: every invariant a kernel relies on, each error naming field, index and value.
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {
namespace {

fixtures::CaseSpec base_spec() {
  fixtures::CaseSpec s;
  s.name = "validation";
  s.seed = 7;
  s.batch = 3;
  s.next_n = 2;
  s.heads = 4;
  s.head_dim = 32;
  s.block_size = 16;
  s.max_model_len = 80;
  s.context_lens = {40, 17, 80};
  return s;
}

// Expects validate() to throw a CaseError whose message contains every fragment.
void expect_invalid(const Case& c, std::initializer_list<std::string> fragments) {
  try {
    validate(c);
    ADD_FAILURE() << "validate() accepted an invalid case";
  } catch (const CaseError& e) {
    for (const auto& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what() << "\n  missing: " << f;
  }
}

TEST(CaseValidation, GeneratedCaseIsValid) { EXPECT_NO_THROW(validate(fixtures::make_case(base_spec()))); }

TEST(CaseValidation, ValidKeysFollowSpecRule) {
  const Case c = fixtures::make_case(base_spec());
  // 1-D: E_r = L - N + n + 1.
  EXPECT_EQ(c.valid_keys(0), 39);
  EXPECT_EQ(c.valid_keys(1), 40);
  EXPECT_EQ(c.valid_keys(2), 16);
  EXPECT_EQ(c.valid_keys(5), 80);
  EXPECT_EQ(c.blocks_read(5), 5);
}

TEST(CaseValidation, BlockTableEntryOutOfRangeForAReadBlock) {
  Case c = fixtures::make_case(base_spec());
  c.block_table[static_cast<std::size_t>(2 * c.max_blocks_per_seq + 4)] = static_cast<std::int32_t>(c.num_blocks);
  expect_invalid(c, {"block_table[2][4]", std::to_string(c.num_blocks), "outside"});
  c.block_table[static_cast<std::size_t>(2 * c.max_blocks_per_seq + 4)] = -1;
  expect_invalid(c, {"block_table[2][4] = -1"});
}

TEST(CaseValidation, UnreadEntriesMayHoldAnything) {
  Case c = fixtures::make_case(base_spec());
  // Sequence 1 (L = 17) reads 2 blocks; columns 2.. are never read.
  for (std::int64_t i = 2; i < c.max_blocks_per_seq; ++i) c.block_table[static_cast<std::size_t>(c.max_blocks_per_seq + i)] = -1;
  c.block_table[static_cast<std::size_t>(c.max_blocks_per_seq + 3)] = 1 << 30;
  EXPECT_NO_THROW(validate(c));
}

TEST(CaseValidation, ContextPastMaxModelLen) {
  Case c = fixtures::make_case(base_spec());
  c.context_lens[1] = 81;
  expect_invalid(c, {"E_r = 81", "max_model_len = 80"});
}

TEST(CaseValidation, NegativeLength) {
  Case c = fixtures::make_case(base_spec());
  c.context_lens[2] = -3;
  expect_invalid(c, {"context_lens[2] = -3", "negative"});
}

TEST(CaseValidation, BufferSizes) {
  const Case good = fixtures::make_case(base_spec());
  Case c = good;
  c.q.pop_back();
  expect_invalid(c, {"q has", "[B, N, H, D]"});
  c = good;
  c.weights.push_back(1.0f);
  expect_invalid(c, {"weights has"});
  c = good;
  c.kv_cache.resize(c.kv_cache.size() - 1);
  expect_invalid(c, {"kv_cache has"});
  c = good;
  c.context_lens.push_back(1);
  expect_invalid(c, {"context_lens has", "[B]"});
  c = good;
  c.block_table.pop_back();
  expect_invalid(c, {"block_table has"});
}

TEST(CaseValidation, ShuffleNeedsMultiplesOf16) {
  auto s = base_spec();
  s.block_size = 8;
  Case c = fixtures::make_case(s);
  c.layout = KvLayout::shuffle;
  expect_invalid(c, {"shuffle", "block_size = 8"});
}

TEST(CaseValidation, StrideBelowMinimum) {
  Case c = fixtures::make_case(base_spec());
  c.block_stride = c.block_size * (c.head_dim + 4) - 1;
  c.kv_cache.resize(static_cast<std::size_t>(c.num_blocks * c.block_stride));
  expect_invalid(c, {"block_stride = 575", "block_size*(head_dim+4) = 576"});
}

TEST(CaseValidation, ScalesAndWeights) {
  const Case good = fixtures::make_case(base_spec());
  Case c = good;
  const float zero = 0.0f;
  const std::int64_t p = c.physical_block(0, 1);
  std::memcpy(c.kv_cache.data() + p * c.block_stride + kv_scale_offset(c.block_size, c.head_dim, 3), &zero, 4);
  expect_invalid(c, {"scale of physical block " + std::to_string(p), "token 3"});
  c = good;
  c.weights[5] = std::numeric_limits<float>::infinity();
  expect_invalid(c, {"weights[1][1]", "not finite"});
}

TEST(CaseValidation, TwoDimensionalLengths) {
  auto s = base_spec();
  s.context_lens_2d = true;
  s.context_lens = {0, 80, 3, 1, 17, 16};
  const Case c = fixtures::make_case(s);
  EXPECT_EQ(c.valid_keys(0), 0);
  EXPECT_EQ(c.valid_keys(1), 80);
  EXPECT_EQ(c.valid_keys(4), 17);
  Case bad = c;
  bad.context_lens[3] = 99;
  expect_invalid(bad, {"row 3", "E_r = 99"});
}

TEST(CaseValidation, EmptyBatchIsValid) {
  auto s = base_spec();
  s.batch = 0;
  s.context_lens = {};
  EXPECT_NO_THROW(validate(fixtures::make_case(s)));
}

TEST(CaseValidation, HostileSizesDoNotOverflow) {
  Case c = fixtures::make_case(base_spec());
  c.num_blocks = std::int64_t{1} << 62;
  expect_invalid(c, {"overflows"});
}

}  // namespace
}  // namespace pmqa
