// --shard K/N of pmqa gen, check and verify: the stable split of model/shard.hpp applied to what a
// command takes, and the words its summary line uses. The split is over the items the command
// would take without --shard (gen: the cases it writes; check: the suite's cases; verify: its
// inputs, named and weighed by each file's case name and shape), so N jobs that each run shard
// K/N together take every item exactly once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/fixtures/suites.hpp"
#include "pmqa/model/shard.hpp"

namespace pmqa::cli {

// "--shard K/N" read strictly; a bad value is a UsageError naming the command ("gen: --shard 5/4:
// K must be 1 to N ..."). Empty text: no shard.
std::optional<Shard> shard_option(const std::string& text, const std::string& command);

// Which of the items shard K takes (all of them without a shard).
std::vector<bool> in_shard(const std::vector<ShardItem>& items, const std::optional<Shard>& shard);

// The split of a suite's cases that pmqa gen --shard writes and gen --list --shard lists: over the
// cases gen writes (the large ones only with include_large), so a large case left out is in no
// shard. Without a shard every case gen writes is taken.
struct SuiteShard {
  std::vector<bool> taken;         // per case of the suite: written by this shard
  std::size_t total = 0;           // the cases the split is over
  std::size_t large_left_out = 0;  // large cases in no shard (no --include-large)
};
SuiteShard suite_shard(const std::vector<fixtures::SuiteCase>& cases, bool include_large,
                       const std::optional<Shard>& shard);

// "shard 2/8: 5 of 40 case(s)" (what = "case(s)", "file(s)"); "" without a shard.
std::string shard_words(const std::optional<Shard>& shard, std::size_t taken, std::size_t total, const char* what);

// The case name and work (shard_work of its shape) a result or case file's header states, read
// without loading the file: name from "name" (the file's stem when absent), shape from "batch",
// "next_n", "heads", "head_dim", "max_model_len". A logits-only result file has no heads or
// head_dim: they come from its input case file ("input_file") in `cases` when given. What cannot
// be read weighs 1 (the file is still in exactly one shard, where verify reports it).
ShardItem shard_item_of_file(const std::filesystem::path& file, const std::optional<std::filesystem::path>& cases);

// The cores this process may run on (its CPU affinity; hardware_concurrency where that is unknown), at least 1.
int available_cores();

}  // namespace pmqa::cli
