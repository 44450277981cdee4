// Shards: a stable split of a suite's cases into N parts so that N CI jobs (`--shard K/N` of
// pmqa gen, check, verify and pmqa-run, `--pmqa-shard K/N` of the pytest plugin) together cover it
// exactly once, each with about 1/N of the work.
//
// The split depends only on each case's name and its work (shard_work: the oracle's multiply-adds
// at most, a function of the case's shape), never on the order the cases are listed in or on the
// tool that splits: cases sorted by work (descending), then by name, each goes to the shard with the
// least work so far (the lowest index on a tie). Python's pmqa.cases.shard is this one, through
// pmqa._core.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pmqa {

struct Shard {
  int index = 1;  // K, 1-based
  int count = 1;  // N
};

// "K/N" with 1 <= K <= N <= 4096. Throws std::invalid_argument naming the text and what is wrong.
Shard parse_shard(std::string_view text);
std::string to_string(const Shard& shard);  // "K/N"

// What balances the shards: B*N*H*D*max_model_len + 1 (an upper bound of the reference's multiply-
// adds, and of the bytes a case's logits and keys take up to a constant), from the case's shape.
std::uint64_t shard_work(std::int64_t batch, std::int64_t next_n, std::int64_t heads, std::int64_t head_dim,
                         std::int64_t max_model_len);

struct ShardItem {
  std::string name;
  std::uint64_t work = 1;
};

// The shard (1-based) of each item, in the items' order. Items with equal names and works are told
// apart by their position, so duplicates are split too.
std::vector<int> assign_shards(const std::vector<ShardItem>& items, int count);

}  // namespace pmqa
