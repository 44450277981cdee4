// The wgmma kernel's dynamic shares (chunk_claims.hpp) on the host executor: every live chunk is
// folded exactly once per launch (a claim must neither lose a chunk nor hand one out twice, and a
// duplicate would not show in the output: it writes the same values again), CTAs really do take
// chunks of other shares, and the counters are ready again for every relaunch.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/detail/host_backend.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa {
namespace {

namespace kd = pmqa::kdev;
using kernels::detail::HostBackend;

// What the kernel's thread 0 reported: per (sequence, chunk) how often it was folded, per CTA how
// many chunks it folded. Blocks may run on several OS threads.
struct Folds {
  std::mutex m;
  std::map<std::pair<int, int>, int> per_chunk;
  std::map<unsigned, int> per_cta;
};
Folds g_folds;

struct CountFolds : kd::Faithful {
  static void chunk_folded(std::int32_t b, std::int32_t c) {
    const std::lock_guard lock(g_folds.m);
    ++g_folds.per_chunk[{b, c}];
    ++g_folds.per_cta[blockIdx.x];
  }
};

// Sequences of 0 to ~20 chunks (every fifth empty), one row each, block 64: the tensor-map
// kernel, whose shares are claimable.
Case claims_case(std::int64_t batch, std::int64_t heads) {
  fixtures::CaseSpec s;
  s.batch = batch;
  s.heads = heads;
  s.head_dim = 128;
  s.block_size = 64;
  s.max_model_len = 1280;
  for (std::int64_t b = 0; b < batch; ++b)
    s.context_lens.push_back(b % 5 == 2 ? 0 : static_cast<std::int32_t>(1 + (b * 389) % 1280));
  return fixtures::make_case(s);
}

struct Outcome {
  kernels::RunResult run;
  std::map<std::pair<int, int>, int> per_chunk;
  std::map<unsigned, int> per_cta;
};
Outcome run_counted(const Case& c, const kernels::HostExecutorOptions& o, int launches) {
  {
    const std::lock_guard lock(g_folds.m);
    g_folds.per_chunk.clear();
    g_folds.per_cta.clear();
  }
  HostBackend be(o);
  Outcome out;
  out.run = kernels::detail::run_path<HostBackend, CountFolds>(
      be, kernels::Path::fused, c,
      {.variant = kernels::FusedVariant::mma, .mma_instruction = kernels::MmaInstruction::wgmma, .launches = launches});
  out.per_chunk = g_folds.per_chunk;
  out.per_cta = g_folds.per_cta;
  return out;
}

// "(b, c): got x, want y" for the first few chunks folded a wrong number of times; "" if none.
std::string fold_mismatches(const std::map<std::pair<int, int>, int>& got, const std::map<std::pair<int, int>, int>& want) {
  std::map<std::pair<int, int>, std::pair<int, int>> all;
  for (const auto& [k, n] : got) all[k].first = n;
  for (const auto& [k, n] : want) all[k].second = n;
  std::string text;
  int wrong = 0;
  for (const auto& [k, n] : all) {
    if (n.first == n.second) continue;
    if (++wrong <= 8)
      text += "  chunk " + std::to_string(k.second) + " of sequence " + std::to_string(k.first) + ": folded " +
              std::to_string(n.first) + " times, want " + std::to_string(n.second) + "\n";
  }
  return wrong == 0 ? "" : std::to_string(wrong) + " chunks folded a wrong number of times:\n" + text;
}

// Every live chunk (64 keys of a sequence below its context length) `times` times, nothing else.
void expect_each_chunk(const Case& c, const Outcome& got, int times, const std::string& what) {
  std::map<std::pair<int, int>, int> want;
  for (std::int64_t b = 0; b < c.batch; ++b)
    for (std::int64_t ch = 0; ch * 64 < c.context_lens[b]; ++ch) want[{static_cast<int>(b), static_cast<int>(ch)}] = times;
  EXPECT_EQ(fold_mismatches(got.per_chunk, want), "") << what;
  EXPECT_EQ(got.run.kernel, "fused-mma") << what;
  EXPECT_EQ(got.run.key_copies, "tensor-map") << what;
  const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), got.run.out);
  EXPECT_TRUE(rep.passed()) << what << "\n" << rep.to_text();
  EXPECT_EQ(got.run.differing_cells, 0) << what;
}

// Blocks in order on one OS thread: CTA 0 runs alone first, so it claims its own claimable half
// and then the next three shares' before their owners start: it folds more chunks than any
// static share has, and the owners still find every chunk they did not lose.
TEST(ChunkClaims, EveryChunkOnceAndTheFirstCtaTakesFromTheNext) {
  const Case c = claims_case(40, 32);
  const Outcome got = run_counted(c, {.warp_size = 32, .os_threads = 1}, 1);
  expect_each_chunk(c, got, 1, "blocks in order");
  std::int64_t total = 0;
  for (const auto& [chunk, n] : got.per_chunk) total += n;
  const std::int64_t units = kernels::detail::share_units(HostBackend({.warp_size = 32, .os_threads = 1}).persistent_blocks(5), 1);
  const std::int64_t largest_share = (total + units - 1) / units;
  ASSERT_FALSE(got.per_cta.empty());
  EXPECT_GT(got.per_cta.at(0), largest_share) << "CTA 0 took no chunk of another share (" << units << " CTAs, " << total
                                              << " chunks)";
}

// Shuffled block orders on two OS threads (claims race for real), and relaunches: each launch
// claims from the set the one before zeroed.
TEST(ChunkClaims, EveryChunkOncePerLaunchUnderShuffledSchedules) {
  for (const std::uint64_t seed : {1u, 7u, 23u}) {
    const Case c = claims_case(33 + static_cast<std::int64_t>(seed), 64);
    const Outcome got = run_counted(c, {.warp_size = 32, .os_threads = 2, .schedule_seed = seed}, 3);
    expect_each_chunk(c, got, 3, "seed " + std::to_string(seed) + ", 3 launches");
  }
}

// Rows past 128 query rows take two launches of one run (next_n 3 at 64 heads: 128 + 64 rows);
// they alternate the counter sets too.
TEST(ChunkClaims, EveryChunkOncePerLaunchWhenRowsTakeTwoLaunches) {
  fixtures::CaseSpec s;
  s.batch = 12;
  s.next_n = 3;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 64;
  s.max_model_len = 1024;
  for (std::int64_t b = 0; b < s.batch; ++b) s.context_lens.push_back(static_cast<std::int32_t>(3 + (b * 211) % 1000));
  const Case c = fixtures::make_case(s);
  const Outcome got = run_counted(c, {.warp_size = 32, .os_threads = 1, .schedule_seed = 5}, 2);
  // Two launches per run (the 128-row and the 64-row piece), two runs: 4 folds of each chunk live
  // in both pieces. Row n of sequence b has E = L - 3 + n + 1 keys, so the 64-row piece (n = 2)
  // reads the longest: the chunks of the 128-row piece (n = 0, 1) are those below L - 1.
  std::map<std::pair<int, int>, int> want;
  for (std::int64_t b = 0; b < c.batch; ++b) {
    const std::int64_t len = c.context_lens[b];
    for (std::int64_t ch = 0; ch * 64 < len; ++ch) want[{static_cast<int>(b), static_cast<int>(ch)}] = ch * 64 < len - 1 ? 4 : 2;
  }
  EXPECT_EQ(fold_mismatches(got.per_chunk, want), "");
  const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), got.run.out);
  EXPECT_TRUE(rep.passed()) << rep.to_text();
  EXPECT_EQ(got.run.differing_cells, 0);
}

}  // namespace
}  // namespace pmqa
