// Shards: every case in exactly one shard for every N, the split independent of the listing order,
// the work balanced as the greedy split promises, and K/N read strictly.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/model/shard.hpp"

namespace pmqa {
namespace {

std::vector<ShardItem> random_suite(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<ShardItem> items;
  for (int i = 0; i < n; ++i) {
    // Works spanning decades, as a suite's do (a tiny edge case next to a decode shape), some equal.
    const std::uint64_t work = 1 + (rng() % 4 == 0 ? 4096 : (std::uint64_t{1} << (rng() % 30)) + rng() % 1000);
    items.push_back({"case-" + std::to_string(rng() % 100000), work});
  }
  return items;
}

TEST(Shard, EveryCaseOnceForEveryCount) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const auto items = random_suite(seed, 1 + static_cast<int>(seed * 7 % 60));
    for (int n = 1; n <= 8; ++n) {
      const auto shard = assign_shards(items, n);
      ASSERT_EQ(shard.size(), items.size());
      std::vector<int> per(static_cast<std::size_t>(n) + 1, 0);
      for (const int s : shard) {
        ASSERT_GE(s, 1);
        ASSERT_LE(s, n);
        ++per[static_cast<std::size_t>(s)];
      }
      // Selecting shard K for K = 1..N takes every item exactly once: the sum of the shards' sizes.
      int total = 0;
      for (int k = 1; k <= n; ++k) total += per[static_cast<std::size_t>(k)];
      EXPECT_EQ(total, static_cast<int>(items.size())) << "seed " << seed << " N " << n;
    }
  }
}

TEST(Shard, TheSplitDoesNotDependOnTheListingOrder) {
  auto items = random_suite(7, 40);
  std::map<std::pair<std::string, std::uint64_t>, int> first;
  const auto shard = assign_shards(items, 5);
  for (std::size_t i = 0; i < items.size(); ++i) first[{items[i].name, items[i].work}] = shard[i];
  std::mt19937 rng(3);
  for (int round = 0; round < 10; ++round) {
    std::shuffle(items.begin(), items.end(), rng);
    const auto again = assign_shards(items, 5);
    for (std::size_t i = 0; i < items.size(); ++i) {
      // Items equal in name and work are interchangeable; the others keep their shard.
      const auto key = std::make_pair(items[i].name, items[i].work);
      const auto same = std::count_if(items.begin(), items.end(), [&](const ShardItem& x) {
        return x.name == key.first && x.work == key.second;
      });
      if (same == 1) {
        EXPECT_EQ(again[i], first[key]) << items[i].name;
      }
    }
  }
}

TEST(Shard, TheWorkIsBalanced) {
  // The greedy split's bound: no shard holds more than the least loaded one plus the largest item.
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const auto items = random_suite(seed, 50);
    const std::uint64_t largest = std::max_element(items.begin(), items.end(), [](auto& a, auto& b) {
                                    return a.work < b.work;
                                  })->work;
    for (int n = 2; n <= 8; ++n) {
      const auto shard = assign_shards(items, n);
      std::vector<std::uint64_t> load(static_cast<std::size_t>(n), 0);
      for (std::size_t i = 0; i < items.size(); ++i) load[static_cast<std::size_t>(shard[i] - 1)] += items[i].work;
      const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
      EXPECT_LE(*hi, *lo + largest) << "seed " << seed << " N " << n;
    }
  }
}

TEST(Shard, KOfNIsReadStrictly) {
  EXPECT_EQ(parse_shard("2/8").index, 2);
  EXPECT_EQ(parse_shard("2/8").count, 8);
  EXPECT_EQ(to_string(parse_shard("1/1")), "1/1");
  for (const char* bad : {"", "3", "0/4", "5/4", "1/0", "a/b", "1/2/3", "-1/4", "1 /4", "1/5000"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
  try {
    parse_shard("0/4");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("numbered from 1"), std::string::npos) << e.what();
  }
}

TEST(Shard, WorkFollowsTheShape) {
  EXPECT_EQ(shard_work(64, 2, 64, 128, 16384), 64ull * 2 * 64 * 128 * 16384 + 1);
  EXPECT_EQ(shard_work(0, 2, 64, 128, 16384), 1u) << "an empty batch still counts as a case";
}

}  // namespace
}  // namespace pmqa
